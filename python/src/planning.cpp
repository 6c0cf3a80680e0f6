// hwaccel._native's planners: plan(), train() and recommend(), the plans
// over a fleet's nodes, and the spec table and model catalogue they name.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
#include <unistd.h>

import hwaccel;

#include "native_support.hpp"

namespace py = pybind11;

namespace hwaccel::python {
namespace {

/// A model named the Python way: a parameter count (int), or a catalogue id,
/// a path, or a count written as text ("70B", "7e9").
ModelDescription model_argument(std::string_view argument, const py::object& model) {
  if (py::isinstance<py::bool_>(model)) raise_argument(argument, "a model is a catalogue id, a path or a parameter count, not a bool");
  if (py::isinstance<py::int_>(model)) {
    if (PyObject_RichCompareBool(model.ptr(), py::int_(0).ptr(), Py_LE) == 1)
      raise_argument(argument, text::cat(py::str(model).cast<std::string>(), " is not a positive parameter count"));
    std::uint64_t n = 0;
    try {
      n = model.cast<std::uint64_t>();
    } catch (const py::cast_error&) {
      raise_argument(argument, text::cat(py::str(model).cast<std::string>(), " is too large a parameter count"));
    }
    return value_or_raise(ModelDescription::from_parameter_count(n), argument);
  }
  std::string name;
  if (py::isinstance<py::str>(model)) {
    name = model.cast<std::string>();
  } else if (py::hasattr(model, "__fspath__")) {
    name = py::module_::import("os").attr("fspath")(model).cast<std::string>();
  } else {
    raise_argument(argument, "a model is a catalogue id, a path or a parameter count");
  }
  if (name.empty()) raise_argument(argument, "the model name is empty");
  auto loaded = load_model(name);
  if (loaded) return std::move(*loaded);
  // Not a catalogue id or a file: perhaps a count written as text.
  if (::access(name.c_str(), F_OK) != 0)
    if (const auto n = parse_parameter_count(name)) return value_or_raise(ModelDescription::from_parameter_count(*n), argument);
  raise(loaded.error().kind, text::cat(argument, ": ", loaded.error().message));
}

QuantizationLevel quantization_argument(std::string_view argument, const std::string& value, bool for_kv_cache = false) {
  const auto level = parse_quantization(value);
  if (!level) raise_argument(argument, level.error().message);
  if (for_kv_cache)
    if (const auto bits = kv_cache_bits(*level); !bits) raise_argument(argument, bits.error().message);
  return *level;
}

struct SequenceArguments {
  std::optional<std::string> quant;
  std::int64_t context = 4096;
  std::int64_t batch = 1;
  std::optional<std::string> kv_dtype;
  double reserve = 0.10;
};

InferenceSettings inference_settings(const SequenceArguments& a) {
  InferenceSettings s;
  if (a.quant) s.quantization = quantization_argument("quant", *a.quant);
  if (a.context < 1 || a.context > (std::int64_t{1} << 24))
    raise_argument("context", text::cat(a.context, " is outside 1..16777216 tokens"));
  if (a.batch < 1 || a.batch > 65536) raise_argument("batch", text::cat(a.batch, " is outside 1..65536 sequences"));
  if (!(a.reserve >= 0.0 && a.reserve <= 0.95)) raise_argument("reserve", text::cat(a.reserve, " is outside 0..0.95"));
  s.context = static_cast<std::uint64_t>(a.context);
  s.batch = static_cast<std::uint32_t>(a.batch);
  s.reserve_fraction = a.reserve;
  if (a.kv_dtype) s.kv_cache_type = quantization_argument("kv_dtype", *a.kv_dtype, true);
  return s;
}

template <class T>
T parsed_or_raise(std::string_view argument, Result<T> r) {
  if (!r) raise_argument(argument, r.error().message);
  return *r;
}

}  // namespace

void bind_planning(py::module_& m) {
  m.def("plan",
        [](const AcceleratorRegistry* registry, const py::object& model_arg, std::optional<std::string> quant,
           std::int64_t context, std::int64_t batch, std::optional<std::string> kv_dtype, double reserve,
           const std::string& objective, std::optional<std::string> formats, bool offload, bool pretty,
           std::optional<std::string> cluster_spec, std::int64_t nodes, std::optional<std::string> fabric,
           bool expert_parallel, std::optional<std::string> runtime, std::int64_t input_len, std::int64_t output_len,
           std::optional<std::string> device_specs, std::optional<bool> flash_attention) {
          const ModelDescription model = model_argument("model", model_arg);
          InferenceSettings s = inference_settings({std::move(quant), context, batch, std::move(kv_dtype), reserve});
          const DeviceSpecSet specs = device_specs_argument(device_specs);
          if (!specs.empty()) s.device_specs = &specs;
          s.flash_attention = flash_attention;
          if (objective == "throughput") s.objective = PlanObjective::throughput;
          else if (objective == "latency") s.objective = PlanObjective::latency;
          else raise_argument("objective", text::cat("'", objective, "' is not throughput or latency"));
          if (formats) {
            if (*formats == "gguf") s.quantization_family = QuantizationFamily::gguf;
            else if (*formats == "hf") s.quantization_family = QuantizationFamily::floating;
            else raise_argument("formats", text::cat("'", *formats, "' is not hf or gguf"));
          }
          s.allow_cpu_offload = offload;
          s.expert_parallel = expert_parallel;
          if (runtime) s.runtime = value_or_raise(parse_runtime(*runtime), "runtime");
          if ((input_len > 0) != (output_len > 0)) raise_argument("output_len", "give input_len and output_len together");
          if (output_len > 0) {
            s.input_tokens = static_cast<std::uint64_t>(count_argument("input_len", input_len, 1, std::int64_t{1} << 24));
            s.output_tokens = static_cast<std::uint64_t>(count_argument("output_len", output_len, 1, std::int64_t{1} << 24));
            s.context = s.input_tokens + s.output_tokens;
          }
          if (auto v = s.validate(model); !v) raise(v.error());
          // Several nodes: a cluster of hypothetical nodes, or copies of the registry.
          std::optional<Cluster> cluster;
          const auto node_count = static_cast<std::uint32_t>(count_argument("nodes", nodes, 1, max_cluster_nodes));
          if (cluster_spec) {
            if (node_count > 1) raise_argument("nodes", "the devices already name the nodes");
            cluster = value_or_raise(hypothetical_cluster(*cluster_spec, specs), "devices");
          } else if (!registry) {
            raise_argument("registry", "no registry and no cluster to plan on");
          } else if (node_count > 1) {
            cluster = value_or_raise(Cluster::replicate(*registry, node_count), "nodes");
          }
          if (fabric) {
            Fabric parsed = value_or_raise(parse_fabric(*fabric), "fabric");
            if (cluster) cluster->fabric = std::move(parsed);
          }
          const py::gil_scoped_release unlocked;
          return to_json(value_or_raise(cluster ? plan_inference(*cluster, model, s) : plan_inference(*registry, model, s)),
                         pretty);
        },
        py::arg("registry").none(true), py::arg("model"), py::arg("quant"), py::arg("context"), py::arg("batch"),
        py::arg("kv_dtype"), py::arg("reserve"), py::arg("objective"), py::arg("formats"), py::arg("offload"),
        py::arg("pretty") = false, py::arg("cluster") = py::none(), py::arg("nodes") = 1, py::arg("fabric") = py::none(),
        py::arg("expert_parallel") = false, py::arg("runtime") = py::none(), py::arg("input_len") = 0,
        py::arg("output_len") = 0, py::arg("device_specs") = py::none(), py::arg("flash_attention") = py::none());

  m.def("train",
        [](const AcceleratorRegistry& registry, const py::object& model_arg, const py::dict& o) {
          const auto text_of = [&](const char* key) -> std::optional<std::string> {
            if (!o.contains(key) || o[key].is_none()) return std::nullopt;
            return py::str(o[key]).cast<std::string>();
          };
          const auto int_of = [&](const char* key) -> std::optional<std::int64_t> {
            if (!o.contains(key) || o[key].is_none()) return std::nullopt;
            return o[key].cast<std::int64_t>();
          };
          const auto flag = [&](const char* key) { return o.contains(key) && o[key].cast<bool>(); };
          TrainingSettings s;
          const auto method = text_of("method");
          if (!method) raise_argument("method", "required: full, lora, qlora, prefix, dpo, rlhf or distill");
          s.method = parsed_or_raise("method", parse_training_method(*method));
          if (auto v = text_of("adapter")) s.adapter = parsed_or_raise("adapter", parse_training_method(*v));
          s.optimizer = parsed_or_raise("optimizer", parse_optimizer(text_of("optimizer").value_or("adamw")));
          s.precision = parsed_or_raise("precision", parse_training_precision(text_of("precision").value_or("bf16")));
          s.zero_stage = parsed_or_raise("zero", parse_zero_stage(text_of("zero").value_or("0")));
          s.offload = parsed_or_raise("offload", parse_offload(text_of("offload").value_or("none")));
          s.recompute = parsed_or_raise("recompute", parse_recompute(text_of("recompute").value_or("none")));
          s.attention = parsed_or_raise("attention", parse_attention_kernel(text_of("attention").value_or("flash")));
          s.data_parallel = count_argument("dp", int_of("dp").value_or(1));
          s.tensor_parallel = count_argument("tp", int_of("tp").value_or(1));
          s.pipeline_parallel = count_argument("pp", int_of("pp").value_or(1));
          s.sequence_parallel = flag("sequence_parallel");
          s.micro_batch = count_argument("micro_batch", int_of("micro_batch").value_or(1));
          s.sequence = count_argument("seq", int_of("seq").value_or(2048), 1, std::int64_t{1} << 24);
          if (auto v = int_of("micro_batches")) s.micro_batches = count_argument("micro_batches", *v);
          s.dropout = flag("dropout");
          if (auto v = int_of("lora_rank")) s.lora_rank = count_argument("lora_rank", *v, 1, 65536);
          if (auto v = text_of("lora_targets")) s.lora_targets = parsed_or_raise("lora_targets", parse_lora_targets(*v));
          if (auto v = int_of("qlora_bits")) s.qlora_bits = count_argument("qlora_bits", *v, 1, 64);
          s.double_quantization = !o.contains("double_quant") || o["double_quant"].cast<bool>();
          if (auto v = text_of("base_quant")) s.base_quantization = quantization_argument("base_quant", *v);
          if (auto v = text_of("frozen_quant")) s.frozen_quantization = quantization_argument("frozen_quant", *v);
          if (auto v = int_of("prefix_length")) s.prefix_length = count_argument("prefix_length", *v, 1, 1 << 20);
          s.prefix_projection = count_argument("prefix_projection", int_of("prefix_projection").value_or(0), 0, 1 << 20);
          const double reserve = o.contains("reserve") ? o["reserve"].cast<double>() : 0.10;
          if (!(reserve >= 0.0 && reserve <= 0.95)) raise_argument("reserve", text::cat(reserve, " is outside 0..0.95"));
          s.reserve_fraction = reserve;
          if (auto v = s.validate(); !v) raise(v.error());
          const ModelDescription model = model_argument("model", model_arg);
          AuxiliaryModels aux;
          if (o.contains("teacher") && !o["teacher"].is_none()) aux.teacher = model_argument("teacher", o["teacher"]);
          if (o.contains("reward_model") && !o["reward_model"].is_none())
            aux.reward = model_argument("reward_model", o["reward_model"]);
          const bool pretty = flag("pretty");
          const py::gil_scoped_release unlocked;
          return to_json(value_or_raise(plan_training(registry, model, s, aux)), pretty);
        },
        py::arg("registry"), py::arg("model"), py::arg("options"));

  // Plans over a fleet's nodes (docs/planning.md, "Several nodes"): fleets
  // and results cross as JSON, like the other fleet functions.
  m.def("fleet_place",
        [](const std::string& fleet_json, const std::string& workloads_json, std::optional<std::string> busy,
           std::optional<std::string> fabric, std::int64_t exact_max) {
          const Fleet fleet = value_or_raise(fleet_from_json(fleet_json), "fleet");
          const auto workloads = value_or_raise(parse_workloads(workloads_json), "workloads");
          if (exact_max < 0 || exact_max > 64) raise_argument("exact_max", text::cat(exact_max, " is outside 0..64"));
          PlacementOptions options;
          options.exact_max_replicas = options.exact_max_nodes = static_cast<std::size_t>(exact_max);
          if (busy) options.busy = value_or_raise(parse_busy(*busy), "busy");
          if (fabric) options.fabric = value_or_raise(parse_fabric(*fabric), "fabric");
          const py::gil_scoped_release unlocked;
          return to_json(value_or_raise(place_workloads(fleet, workloads, options)));
        },
        py::arg("fleet"), py::arg("workloads"), py::arg("busy"), py::arg("fabric"), py::arg("exact_max"));

  m.def("fleet_what_is_missing",
        [](const std::string& fleet_json, const py::object& model_arg, std::optional<std::string> quant,
           std::int64_t context, std::int64_t batch, std::optional<std::string> kv_dtype, double reserve,
           std::optional<std::string> node_kind, std::optional<std::string> busy, std::optional<std::string> fabric,
           std::int64_t max_nodes) {
          const Fleet fleet = value_or_raise(fleet_from_json(fleet_json), "fleet");
          const ModelDescription model = model_argument("model", model_arg);
          const InferenceSettings s = inference_settings({std::move(quant), context, batch, std::move(kv_dtype), reserve});
          if (auto v = s.validate(model); !v) raise(v.error());
          CapacityOptions options;
          options.node_kind = node_kind.value_or("");
          options.max_nodes = count_argument("max_nodes", max_nodes, 1, max_cluster_nodes);
          if (busy) options.busy = value_or_raise(parse_busy(*busy), "busy");
          if (fabric) options.fabric = value_or_raise(parse_fabric(*fabric), "fabric");
          const py::gil_scoped_release unlocked;
          return to_json(value_or_raise(what_is_missing(fleet, model, s, options)));
        },
        py::arg("fleet"), py::arg("model"), py::arg("quant"), py::arg("context"), py::arg("batch"), py::arg("kv_dtype"),
        py::arg("reserve"), py::arg("node_kind"), py::arg("busy"), py::arg("fabric"), py::arg("max_nodes"));

  m.def("recommend",
        [](const py::object& model_arg, const std::string& quant, std::int64_t context, std::int64_t batch,
           std::optional<std::string> kv_dtype, double reserve, const std::vector<std::string>& providers,
           std::optional<std::string> catalogue_file, bool pretty) {
          RecommendOptions options;
          options.settings = inference_settings({quant, context, batch, std::move(kv_dtype), reserve});
          for (const auto& name : providers) {
            const auto p = parse_cloud_provider(name);
            if (!p) raise_argument("providers", text::cat("unknown provider '", name, "' (aws, gcp, azure)"));
            options.providers.push_back(*p);
          }
          const ModelDescription model = model_argument("model", model_arg);
          if (auto v = options.settings.validate(model); !v) raise(v.error());
          auto catalogue = value_or_raise(catalogue_file ? read_instance_catalogue(*catalogue_file)
                                                         : builtin_instance_catalogue(),
                                          "catalogue");
          const py::gil_scoped_release unlocked;
          return to_json(value_or_raise(recommend_instances(model, options, catalogue)), pretty);
        },
        py::arg("model"), py::arg("quant"), py::arg("context"), py::arg("batch"), py::arg("kv_dtype"),
        py::arg("reserve"), py::arg("providers"), py::arg("catalogue"), py::arg("pretty") = false);


  m.def(
      "specs_json",
      [](const std::optional<std::string>& device_specs) {
        if (!device_specs) return device_specs_json();
        return device_specs_json(value_or_raise(read_device_specs(*device_specs), "device_specs"));
      },
      py::arg("device_specs") = py::none());
  m.def("models_json", [] { return model_catalogue_json(); });

}

}  // namespace hwaccel::python
