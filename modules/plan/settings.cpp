// The plan module's settings tables (plan/settings.cppm): each key's name,
// type, default, bounds, environment variable and store.
module;
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.plan;

namespace hwaccel {

namespace {

using InferenceKey = SettingKey<InferenceSettings>;
using PlanningInputKey = SettingKey<PlanningInputs>;
using RecommendKey = SettingKey<RecommendOptions>;

Result<QuantizationLevel> kv_cache_level(std::string_view name) {
  auto level = parse_quantization(name);
  if (!level) return level;
  if (auto bits = kv_cache_bits(*level); !bits) return fail(bits.error());
  return level;
}

constexpr double max_context_tokens = static_cast<double>(max_plan_context);

constexpr std::array inference_keys = {
    InferenceKey{"quant", SettingType::choice, "", 0, 0, "",
                 "Quantization (bf16, fp16, fp8, int8, int4, nf4, q8_0, q6_k, q5_k_m, q4_k_m, ...); default: the best "
                 "that fits",
                 &store_parsed<&parse_quantization, &InferenceSettings::quantization>},
    InferenceKey{"kv-dtype", SettingType::choice, "", 0, 0, "",
                 "KV cache type (fp16, bf16, fp8_e4m3, fp8_e5m2, int8, q8_0, q4_0, ...); default: the weights' "
                 "compute type",
                 &store_parsed<&kv_cache_level, &InferenceSettings::kv_cache_type>},
    InferenceKey{"context", SettingType::whole, "4096", 1, max_context_tokens, "",
                 "Tokens per sequence, prompt and output together",
                 &store_whole<&InferenceSettings::context>},
    InferenceKey{"batch", SettingType::whole, "1", 1, max_plan_batch, "", "Concurrent sequences per replica",
                 &store_whole<&InferenceSettings::batch>},
    InferenceKey{"reserve", SettingType::fraction, "0.1", 0, 0.95, "",
                 "Fraction of each device's memory kept free (vLLM: 1 - gpu_memory_utilization)",
                 &store_fraction<&InferenceSettings::reserve_fraction>},
    InferenceKey{"objective", SettingType::choice, "throughput", 0, 0, "",
                 "throughput (most replicas), latency (widest tensor parallelism) or energy (least energy per "
                 "output token that meets min-tokens-per-s)",
                 [](InferenceSettings& s, const SettingValue& v) -> Result<void> {
                   if (v.text == "throughput") s.objective = PlanObjective::throughput;
                   else if (v.text == "latency") s.objective = PlanObjective::latency;
                   else if (v.text == "energy") s.objective = PlanObjective::energy;
                   else return fail(ErrorKind::invalid_input, "not throughput, latency or energy");
                   return {};
                 }},
    InferenceKey{"formats", SettingType::choice, "", 0, 0, "",
                 "Levels a suggestion picks from: hf (bf16/fp8/int8/int4) or gguf (llama.cpp)",
                 [](InferenceSettings& s, const SettingValue& v) -> Result<void> {
                   if (v.text == "hf") s.quantization_family = QuantizationFamily::floating;
                   else if (v.text == "gguf") s.quantization_family = QuantizationFamily::gguf;
                   else return fail(ErrorKind::invalid_input, "not hf or gguf");
                   return {};
                 }},
    InferenceKey{"offload", SettingType::boolean, "true", 0, 0, "",
                 "CPU offload: layers in host memory when the accelerators cannot hold them",
                 &store_boolean<&InferenceSettings::allow_cpu_offload>},
    InferenceKey{"flash-attention", SettingType::boolean, "", 0, 0, "",
                 "llama.cpp's -fa: on, each KV head is read once per token; off (the default, as the llama.cpp "
                 "profiles' calibration runs), once per query head",
                 &store_boolean<&InferenceSettings::flash_attention>},
    InferenceKey{"runtime", SettingType::choice, "", 0, 0, "",
                 "Runtime whose speed profile the estimates use: llama.cpp-cuda, llama.cpp-rocm, llama.cpp-metal, "
                 "llama.cpp-vulkan, llama.cpp-cpu, mlx, vllm, sglang, trtllm (default: from the level and the devices)",
                 &store_parsed<&parse_runtime, &InferenceSettings::runtime>},
    InferenceKey{"input-len", SettingType::whole, "", 1, max_context_tokens, "",
                 "Serving: prompt tokens per request (with output-len; batch requests at once)",
                 &store_whole<&InferenceSettings::input_tokens>},
    InferenceKey{"output-len", SettingType::whole, "", 1, max_context_tokens, "",
                 "Serving: generated tokens per request; gives output tok/s, TTFT and TPOT",
                 &store_whole<&InferenceSettings::output_tokens>},
    InferenceKey{"expert-parallel", SettingType::boolean, "false", 0, 0, "",
                 "MoE models: each tensor-parallel group holds whole experts (vLLM --enable-expert-parallel)",
                 &store_boolean<&InferenceSettings::expert_parallel>},
    InferenceKey{"power-cap", SettingType::fraction, "", 1, max_power_cap_watts, "",
                 "Each device's power cap in watts (nvidia-smi -pl); default: the cap the device enforces, else its "
                 "spec's TDP. Work that would draw more runs at lower clocks",
                 &store_fraction<&InferenceSettings::power_cap_watts>},
    InferenceKey{"min-tokens-per-s", SettingType::fraction, "", 0, 1e12, "",
                 "The energy objective's floor: decode (serving: output) tokens per second of every replica together",
                 &store_fraction<&InferenceSettings::min_tokens_per_s>},
};

constexpr std::array planning_keys = {
    PlanningInputKey{"model", SettingType::text, "", 0, 0, "",
                     "Catalogue id (see `hwaccel models`), or a config.json, .gguf, .safetensors, "
                     "*.safetensors.index.json or model folder",
                     [](PlanningInputs& s, const SettingValue& v) -> Result<void> {
                       if (v.text.empty()) return fail(ErrorKind::invalid_input, "the model name is empty");
                       s.model = std::string(v.text);
                       return {};
                     }},
    PlanningInputKey{"params", SettingType::text, "", 0, 0, "",
                     "Parameter count: 7000000000, 7e9, 70B (architecture borrowed from the nearest catalogue model)",
                     [](PlanningInputs& s, const SettingValue& v) -> Result<void> {
                       const auto n = parse_parameter_count(v.text);
                       if (!n) return fail(ErrorKind::invalid_input, "not a positive parameter count (e.g. 7e9, 70B)");
                       s.params = *n;
                       return {};
                     }},
    PlanningInputKey{"devices", SettingType::text, "", 0, 0, "",
                     "Hypothetical devices, e.g. 8xH100-SXM-80GB or 2xRTX-4090+1xRTX-3090 (see `hwaccel specs`), or "
                     "nodes of them: 2x(8xH100-SXM-80GB)",
                     &store_text<&PlanningInputs::devices>},
    PlanningInputKey{"device-specs", SettingType::text, "", 0, 0, "HWACCEL_DEVICE_SPECS",
                     "JSON file of devices the built-in spec table lacks, for devices and for matching detected "
                     "devices (format in docs/planning.md, \"Device specs\")",
                     &store_text<&PlanningInputs::device_specs>},
    PlanningInputKey{"runtime-profiles", SettingType::text, "", 0, 0, "HWACCEL_RUNTIME_PROFILES",
                     "JSON file of runtime profiles in place of the built-in ones (data/runtime-profiles.json's "
                     "format, docs/runtime-profiles.schema.json): the speeds of your own builds",
                     &store_text<&PlanningInputs::runtime_profiles>},
    PlanningInputKey{"nodes", SettingType::whole, "1", 1, max_cluster_nodes, "",
                     "Plan over N nodes like this machine (or the fixture, or the devices)",
                     &store_whole<&PlanningInputs::nodes>},
    PlanningInputKey{"fabric", SettingType::text, "", 0, 0, "",
                     "Fabric between nodes: ib-400g, ib-8x400g, roce-200g, ethernet-100g, efa-32x100g (default: the "
                     "nodes' own RDMA ports)",
                     &store_parsed<&parse_fabric, &PlanningInputs::fabric>},
};

constexpr std::array recommend_keys = {
    RecommendKey{"provider", SettingType::text, "", 0, 0, "", "Comma list of providers: aws, gcp, azure (default: all)",
                 [](RecommendOptions& o, const SettingValue& v) -> Result<void> {
                   std::vector<CloudProvider> providers;
                   for (const std::string_view name : text::split_trimmed(v.text, ',')) {
                     const auto p = parse_cloud_provider(name);
                     if (!p)
                       return fail(ErrorKind::invalid_input,
                                   text::cat("unknown provider '", text::excerpt(name), "' (aws, gcp, azure)"));
                     providers.push_back(*p);
                   }
                   o.providers = std::move(providers);
                   return {};
                 }},
    RecommendKey{"max-instances", SettingType::whole, "1", 1, max_recommend_instances, "",
                 "A model too large for one instance may span up to N of the same type (a multi-node plan)",
                 &store_whole<&RecommendOptions::max_instances>},
    RecommendKey{"power-budget", SettingType::fraction, "", 0.001, 1e6, "",
                 "Kilowatts the accelerators of one recommendation may draw (all its instances); over it, an instance "
                 "is rejected and says what it draws",
                 &store_fraction<&RecommendOptions::power_budget_kw>},
    RecommendKey{"catalogue", SettingType::text, "", 0, 0, "HWACCEL_INSTANCE_CATALOGUE",
                 "Instance catalogue file replacing the built-in one (format in docs/planning.md)",
                 &store_text<&RecommendOptions::catalogue_file>},
};

}  // namespace

std::span<const SettingKey<InferenceSettings>> inference_setting_keys() noexcept { return inference_keys; }
std::span<const SettingKey<PlanningInputs>> planning_input_keys() noexcept { return planning_keys; }
std::span<const SettingKey<RecommendOptions>> recommend_setting_keys() noexcept { return recommend_keys; }

Result<InferenceSettings> read_inference_settings(std::span<const Setting> values) {
  InferenceSettings s;
  if (auto r = read_settings(s, inference_setting_keys(), values); !r) return fail(r.error());
  if ((s.input_tokens > 0) != (s.output_tokens > 0))
    return fail(ErrorKind::invalid_input, "give input-len and output-len together");
  if (s.output_tokens > 0 && !find_setting(values, "context")) s.context = s.input_tokens + s.output_tokens;
  return s;
}

Result<PlanningInputs> read_planning_inputs(std::span<const Setting> values, const EnvironmentLookup& environment) {
  PlanningInputs inputs;
  if (auto r = read_settings(inputs, planning_input_keys(), values, environment); !r) return fail(r.error());
  return inputs;
}

Result<RecommendOptions> read_recommend_options(std::span<const Setting> values, const EnvironmentLookup& environment) {
  RecommendOptions options;
  auto settings = read_inference_settings(values);
  if (!settings) return fail(settings.error());
  options.settings = std::move(*settings);
  if (auto r = read_settings(options, recommend_setting_keys(), values, environment); !r) return fail(r.error());
  return options;
}

Result<ModelDescription> PlanningInputs::load_model() const {
  if (model.empty() == !params.has_value())
    return fail(ErrorKind::invalid_input, "give exactly one of model and params");
  if (params) {
    auto m = ModelDescription::from_parameter_count(*params);
    if (!m) return fail(m.error().kind, text::cat("params: ", m.error().message));
    return m;
  }
  auto m = hwaccel::load_model(model);
  if (!m) return fail(m.error().kind, text::cat("model: ", m.error().message));
  return m;
}

Result<std::vector<RuntimeProfile>> PlanningInputs::load_runtime_profiles() const {
  if (runtime_profiles.empty()) return std::vector<RuntimeProfile>();
  auto profiles = read_runtime_profiles(runtime_profiles);
  if (!profiles) return fail(profiles.error().kind, text::cat("runtime-profiles: ", profiles.error().message));
  return profiles;
}

Result<DeviceSpecSet> PlanningInputs::load_device_specs() const {
  if (device_specs.empty()) return DeviceSpecSet();
  auto set = read_device_specs(device_specs);
  if (!set) return fail(set.error().kind, text::cat("device-specs: ", set.error().message));
  return set;
}

Result<Cluster> PlanningInputs::cluster(const AcceleratorRegistry* given, const DeviceSpecSet& extra) const {
  if (given && !devices.empty()) return fail(ErrorKind::invalid_input, "give a registry or devices, not both");
  Result<Cluster> planned = fail(ErrorKind::invalid_input, "no registry and no devices to plan on");
  if (devices.find('(') != std::string::npos) {
    if (nodes > 1) return fail(ErrorKind::invalid_input, "nodes: copies one node; devices already name the nodes");
    planned = hypothetical_cluster(devices, extra);
    if (!planned) return fail(planned.error().kind, text::cat("devices: ", planned.error().message));
  } else if (!devices.empty()) {
    auto registry = hypothetical_registry(devices, extra);
    if (!registry) return fail(registry.error().kind, text::cat("devices: ", registry.error().message));
    planned = Cluster::replicate(*registry, nodes);
  } else if (given) {
    planned = Cluster::replicate(*given, nodes);
  } else {
    return planned;
  }
  if (!planned) return fail(planned.error().kind, text::cat("nodes: ", planned.error().message));
  if (fabric) planned->fabric = fabric;
  return planned;
}

Result<InstanceCatalogue> RecommendOptions::load_catalogue(const DeviceSpecSet& extra) const {
  if (catalogue_file.empty()) return builtin_instance_catalogue();
  auto catalogue = read_instance_catalogue(catalogue_file, extra);
  if (!catalogue) return fail(catalogue.error().kind, text::cat("catalogue: ", catalogue.error().message));
  return catalogue;
}

}  // namespace hwaccel
