// Recommending cloud instances: the real planner on each instance's devices,
// judged device by device, cheapest first, with the reason for every rejection.
module;
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.plan;
import :internals;


namespace hwaccel {
namespace {

std::string gib_text(std::uint64_t bytes) {
  return text::cat(std::round(static_cast<double>(bytes) / (1024.0 * 1024 * 1024) * 10) / 10, " GiB");
}

std::string_view registry_interconnect_kind(InstanceInterconnect ic) {
  switch (ic) {
    case InstanceInterconnect::nvswitch: return "nvswitch";
    case InstanceInterconnect::nvlink: return "nvlink";
    case InstanceInterconnect::xgmi: return "xgmi_hive";
    case InstanceInterconnect::ici: return "ici";
    case InstanceInterconnect::neuronlink: return "neuronlink";
    case InstanceInterconnect::pcie: return {};
  }
  return {};
}

// The instance's devices, joined in groups of `group` by an interconnect of
// `kind` (none when empty).
// The built-in table's entry, else a user device-spec file's.
const DeviceSpec* spec_of(std::string_view id, const DeviceSpecSet* extra) {
  return extra ? find_spec(id, *extra) : find_spec(id);
}

Result<AcceleratorRegistry> devices_of(const CloudInstanceType& inst, std::string_view kind, std::uint32_t group,
                                       std::optional<double> bandwidth, std::string_view source,
                                       const DeviceSpecSet* extra = nullptr) {
  const DeviceSpec* spec = spec_of(inst.accelerator, extra);
  if (!spec)
    return fail(ErrorKind::invalid_input,
                text::cat(inst.name, ": unknown accelerator \"", text::excerpt(inst.accelerator), "\""));
  if (inst.count == 0 || inst.count > max_instance_accelerators)
    return fail(ErrorKind::invalid_input, text::cat(inst.name, ": accelerator count must be 1..", max_instance_accelerators));
  Inventory inv;
  const std::uint32_t devices = inst.count * spec->devices_per_package;
  inv.devices.reserve(devices);
  for (std::uint32_t i = 0; i < devices; ++i) {
    inv.devices.push_back(hypothetical::device(*spec, i, inst.memory_per_device_bytes / spec->devices_per_package));
    inv.devices.back().properties.emplace("instance", inst.name);
  }
  if (!kind.empty()) {
    Interconnect fabric;
    fabric.kind = std::string(kind);
    fabric.name = spec->fabric ? std::string(spec->fabric->name) : std::string(kind);
    fabric.bandwidth_gbps = bandwidth;
    fabric.source = std::string(source);
    hypothetical::join_in_domains(inv, 0, devices, group, fabric);
  }
  return AcceleratorRegistry(std::move(inv));
}

bool selected(const RecommendOptions& o, CloudProvider p) {
  return o.providers.empty() || std::find(o.providers.begin(), o.providers.end(), p) != o.providers.end();
}

// The shard furthest over its capacity (the plan does not fit, so there is one).
const Shard* fullest_shard(const Plan& plan) {
  const Shard* worst = nullptr;
  double worst_ratio = 0;
  for (const auto& s : plan.shards) {
    const double ratio = s.capacity_bytes == 0 ? 1e300
                                               : static_cast<double>(s.total_bytes) / static_cast<double>(s.capacity_bytes);
    if (!worst || ratio > worst_ratio) {
      worst = &s;
      worst_ratio = ratio;
    }
  }
  return worst;
}

std::string memory_reason(const InstanceVerdict& v, const Plan& plan, std::uint64_t model_bytes) {
  std::string reason;
  if (const Shard* s = fullest_shard(plan)) {
    reason = text::cat(plan.shards.size() == 1 ? std::string("on one device, ")
                                               : text::cat("split as ", plan.strategy.name(), ", "),
                       s->device, " must hold ", gib_text(s->total_bytes),
                       " (", s->layer_count, " layer(s)", s->embedding ? " and the embedding" : "",
                       s->head ? " and the head" : "", ") but has ", gib_text(s->capacity_bytes), " usable of ",
                       gib_text(v.instance.memory_per_device_bytes));
  } else {
    reason = "no split of the model fits its devices";
  }
  if (v.summed_memory_fits && v.instance.count == 1)
    reason += text::cat("; the model's ", gib_text(model_bytes), " is less than the device's ",
                        gib_text(v.summed_memory_bytes), " but not what is left after the reserve and runtime overhead");
  else if (v.summed_memory_fits)
    reason += text::cat("; its ", v.instance.count, " devices together have ", gib_text(v.summed_memory_bytes),
                        ", more than the model's ", gib_text(model_bytes),
                        ", but a device cannot use its neighbour's memory");
  else if (v.instance.count > 1)
    reason += text::cat("; its ", v.instance.count, " devices together have ", gib_text(v.summed_memory_bytes),
                        " for the model's ", gib_text(model_bytes));
  else
    reason += text::cat(" for the model's ", gib_text(model_bytes));
  return reason;
}

bool cheaper(const InstanceVerdict& a, const InstanceVerdict& b) {
  const double price_a = a.instance.price_usd_per_hour * a.instances, price_b = b.instance.price_usd_per_hour * b.instances;
  if (price_a != price_b) return price_a < price_b;
  if (a.instance.provider != b.instance.provider) return a.instance.provider < b.instance.provider;
  if (a.instance.name != b.instance.name) return a.instance.name < b.instance.name;
  return a.instance.region < b.instance.region;
}

}  // namespace

std::string_view to_string(RejectionKind kind) noexcept {
  switch (kind) {
    case RejectionKind::dtype: return "dtype";
    case RejectionKind::interconnect: return "interconnect";
    case RejectionKind::device_memory: return "device_memory";
    case RejectionKind::planner: return "planner";
    case RejectionKind::power_budget: return "power_budget";
  }
  return "unknown";
}

namespace {

Result<AcceleratorRegistry> instance_registry(const CloudInstanceType& inst, const DeviceSpecSet* extra) {
  const DeviceSpec* spec = spec_of(inst.accelerator, extra);
  std::optional<double> bandwidth;
  if (spec && spec->fabric) bandwidth = spec->fabric->bandwidth_gbps;
  return devices_of(inst, registry_interconnect_kind(inst.interconnect),
                    inst.interconnect_group == 0 ? inst.count : inst.interconnect_group, bandwidth,
                    text::cat("instance catalogue: ", inst.name, " (", to_string(inst.interconnect), ")"), extra);
}

}  // namespace

Result<AcceleratorRegistry> instance_registry(const CloudInstanceType& inst) { return instance_registry(inst, nullptr); }

Result<InstanceRecommendation> recommend_instances(const ModelDescription& model, const RecommendOptions& options,
                                                   const InstanceCatalogue& catalogue) {
  if (!options.settings.quantization)
    return fail(ErrorKind::invalid_input,
                "a recommendation needs a quantization level: prices compare only for one level (e.g. bf16, fp8, int4)");
  InferenceSettings settings = options.settings;
  settings.allow_cpu_offload = false;  // an instance is judged on its accelerators
  if (auto v = settings.validate(model); !v) return fail(v.error());
  const QuantizationLevel level = *settings.quantization;
  const QuantizationLevel kv_type = settings.kv_cache_type.value_or(default_kv_cache_type(level));

  InstanceRecommendation out;
  out.model_name = model.name;
  out.quantization = level;
  out.context = settings.context;
  out.batch = settings.batch;
  out.catalogue_origin = catalogue.origin;
  out.prices = catalogue.prices;

  for (const auto& inst : catalogue.instances) {
    if (!selected(options, inst.provider)) continue;
    InstanceVerdict v;
    v.instance = inst;
    const DeviceSpec* spec = spec_of(inst.accelerator, settings.device_specs);
    if (!spec)
      return fail(ErrorKind::invalid_input,
                  text::cat(catalogue.origin, ": ", inst.name, ": unknown accelerator \"", inst.accelerator, "\""));
    v.summed_memory_bytes = planner_detail::sat_mul(inst.count, inst.memory_per_device_bytes);
    // What the model needs if memory could be pooled: weights, KV cache and
    // one set of activations, no per-device overhead or reserve.
    auto need = estimate_memory(model, level, kv_type, settings.context, settings.batch, spec->backend);
    if (!need) return fail(need.error());
    const std::uint64_t model_bytes = need->weights_bytes + need->kv_cache_bytes + need->activation_bytes;
    v.summed_memory_fits = v.summed_memory_bytes >= model_bytes;

    const QuantizationSupport support = quantization_support(level, traits_of(*spec));
    if (!support.usable()) {
      v.rejection = RejectionKind::dtype;
      v.reason = text::cat(info(level).display_name, " is ", to_string(support.level), " on the ", spec->product,
                           support.reason.empty() ? std::string() : text::cat(" (", support.reason, ")"));
      out.rejected.push_back(std::move(v));
      continue;
    }
    auto registry = instance_registry(inst, settings.device_specs);
    if (!registry) return fail(registry.error());
    auto plan = plan_inference(*registry, model, settings);
    if (!plan) {
      v.rejection = RejectionKind::planner;
      v.reason = plan.error().message;
      out.rejected.push_back(std::move(v));
      continue;
    }
    // Too small alone: the fewest copies of the instance that hold it, when allowed.
    if (!plan->fits && options.max_instances > 1) {
      auto copies = fewest_nodes(*registry, model, settings, options.max_instances);
      if (!copies) return fail(copies.error());
      if (copies->nodes) {
        v.instances = *copies->nodes;
        plan = std::move(copies->plan);
      }
    }
    if (plan->fits && plan->power) {
      std::size_t used = plan->power->devices.size() * plan->strategy.data_parallel;
      const std::size_t owned = static_cast<std::size_t>(inst.count) * v.instances;
      const double idle = plan->power->devices.empty() ? 0.0 : plan->power->devices.front().idle_watts;
      v.accelerator_watts = plan->power->watts + static_cast<double>(owned > used ? owned - used : 0) * idle;
    }
    if (plan->fits && options.power_budget_kw && (!v.accelerator_watts || *v.accelerator_watts > *options.power_budget_kw * 1e3)) {
      v.rejection = RejectionKind::power_budget;
      v.reason = v.accelerator_watts
                     ? text::cat("it fits, but its accelerators draw about ", std::round(*v.accelerator_watts / 10) / 100,
                                 " kW (", plan->power->basis, "), over the ", *options.power_budget_kw, " kW budget")
                     : std::string("it fits, but its accelerators have no power figure (no TDP in the spec table), so "
                                   "the power budget cannot be checked");
      v.plan = std::move(*plan);
      out.rejected.push_back(std::move(v));
      continue;
    }
    if (plan->fits) {
      v.recommended = true;
      if (const auto& rate = plan->throughput.decode_tokens_per_s_total; rate && *rate > 0)
        v.usd_per_million_tokens = inst.price_usd_per_hour * v.instances / (*rate * 3600.0) * 1e6;
      if (v.instances > 1)
        v.reason = text::cat(v.instances, " instances, ", plan->strategy.name(),
                             "; the network between them is not in the catalogue: hops counted like hops inside one");
      v.plan = std::move(*plan);
      out.recommended.push_back(std::move(v));
      continue;
    }
    // Devices that are not all in one high-bandwidth group: would tensor
    // parallelism across them have made it fit?
    const std::uint32_t group = inst.interconnect == InstanceInterconnect::pcie ? 1
                                : inst.interconnect_group == 0               ? inst.count
                                                                             : inst.interconnect_group;
    if (inst.count > 1 && group < inst.count) {
      auto pooled = devices_of(inst, "nvswitch", inst.count, std::nullopt, "counterfactual: one fabric", settings.device_specs);
      if (!pooled) return fail(pooled.error());
      auto joined = plan_inference(*pooled, model, settings);
      if (joined && joined->fits) {
        v.rejection = RejectionKind::interconnect;
        v.reason = text::cat(
            "it would fit with ", joined->strategy.name(), ", but its devices are joined by ",
            inst.interconnect == InstanceInterconnect::pcie ? std::string("PCIe only")
                                                            : text::cat(to_string(inst.interconnect), " in groups of ", group),
            inst.interconnect == InstanceInterconnect::pcie
                ? text::cat(", over which ", plan->throughput.runtime,
                            " runs no tensor parallelism (vLLM, SGLang and TensorRT-LLM do); ")
                : std::string(", which does not carry tensor parallelism; "),
            memory_reason(v, *plan, model_bytes));
        v.plan = std::move(*plan);
        out.rejected.push_back(std::move(v));
        continue;
      }
    }
    v.rejection = RejectionKind::device_memory;
    v.reason = memory_reason(v, *plan, model_bytes);
    v.plan = std::move(*plan);
    out.rejected.push_back(std::move(v));
  }
  std::sort(out.recommended.begin(), out.recommended.end(), cheaper);
  std::sort(out.rejected.begin(), out.rejected.end(), cheaper);
  return out;
}

std::string to_json(const InstanceRecommendation& r, bool pretty) {
  json::Writer w(pretty, 4096 + (r.recommended.size() + r.rejected.size()) * 600);
  const auto verdict = [&](const InstanceVerdict& v) {
    const auto& i = v.instance;
    w.begin_object();
    w.field("provider", to_string(i.provider));
    w.field("name", i.name);
    w.field("region", i.region);
    w.field("accelerator", i.accelerator);
    w.field("count", i.count);
    w.field("memory_per_device_bytes", i.memory_per_device_bytes);
    w.field("interconnect", to_string(i.interconnect));
    w.field("interconnect_group", i.interconnect_group);
    w.field("vcpus", i.vcpus);
    w.field("host_memory_bytes", i.host_memory_bytes);
    w.field("price_usd_per_hour", i.price_usd_per_hour);
    w.field("price_date", i.price_date);
    w.field("price_source", i.price_source);
    w.field("instances", v.instances);
    w.field("price_usd_per_hour_total", i.price_usd_per_hour * v.instances);
    w.field("recommended", v.recommended);
    w.key("rejection");
    if (v.rejection) w.value(to_string(*v.rejection));
    else w.null();
    if (!v.reason.empty()) w.field("reason", v.reason);
    w.field("summed_memory_bytes", v.summed_memory_bytes);
    w.field("summed_memory_fits", v.summed_memory_fits);
    w.key("usd_per_million_tokens");
    if (v.usd_per_million_tokens) w.value(*v.usd_per_million_tokens);
    else w.null();
    w.key("accelerator_watts");
    if (v.accelerator_watts) w.value(*v.accelerator_watts);
    else w.null();
    w.key("plan");
    if (v.plan) {
      const Plan& p = *v.plan;
      std::uint64_t per_device = 0, capacity = 0;
      for (const auto& s : p.shards) {
        per_device = std::max(per_device, s.total_bytes);
        if (capacity == 0 || s.capacity_bytes < capacity) capacity = s.capacity_bytes;
      }
      w.begin_object();
      w.field("fits", p.fits);
      w.key("strategy").begin_object();
      w.field("name", p.strategy.name());
      w.field("tp", p.strategy.tensor_parallel);
      w.field("pp", p.strategy.pipeline_parallel);
      w.field("dp", p.strategy.data_parallel);
      w.end_object();
      w.field("devices_used", static_cast<std::uint64_t>(p.shards.size()));
      w.field("max_device_bytes", per_device);
      w.field("device_capacity_bytes", capacity);
      w.field("replica_bytes", p.memory.total_bytes);
      w.key("decode_tokens_per_s");
      if (p.throughput.decode_tokens_per_s) w.value(*p.throughput.decode_tokens_per_s);
      else w.null();
      w.key("decode_tokens_per_s_total");
      if (p.throughput.decode_tokens_per_s_total) w.value(*p.throughput.decode_tokens_per_s_total);
      else w.null();
      w.field("bottleneck", p.throughput.decode_bottleneck);
      w.key("energy_per_output_token_j");
      if (p.power) w.value(p.power->energy_per_output_token_j);
      else w.null();
      w.end_object();
    } else {
      w.null();
    }
    w.end_object();
  };
  w.begin_object();
  w.field("model", r.model_name);
  w.field("quantization", to_string(r.quantization));
  w.field("context", r.context);
  w.field("batch", r.batch);
  w.key("catalogue").begin_object();
  w.field("origin", r.catalogue_origin);
  w.field("prices", r.prices);
  w.end_object();
  w.key("recommended").begin_array();
  for (const auto& v : r.recommended) verdict(v);
  w.end_array();
  w.key("rejected").begin_array();
  for (const auto& v : r.rejected) verdict(v);
  w.end_array();
  w.end_object();
  return std::move(w).take();
}

}  // namespace hwaccel
