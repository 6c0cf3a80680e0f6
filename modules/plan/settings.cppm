// The plan module's settings by name: the tables the CLI (plan, recommend),
// the C API (hwaccel_plan_json) and the Python package (plan, recommend)
// read InferenceSettings, PlanningInputs and RecommendOptions through
// (read_settings, hwaccel.base).
module;
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>
export module hwaccel.plan:settings;
import hwaccel.hardware;
import hwaccel.registry;
import :model;
import :cluster;
import :planner;
import :cloud;

export namespace hwaccel {

/// The keys of InferenceSettings (defaults and bounds as the struct's):
///   quant            choice: the quantization level; default: the best that fits
///   kv-dtype         choice: the KV cache's type; default: the weights' compute type
///   context          whole number 1..max_plan_context, default 4096
///   batch            whole number 1..max_plan_batch, default 1
///   reserve          number 0..0.95, default 0.1
///   objective        choice throughput|latency|energy, default throughput
///   formats          choice hf|gguf: the levels a suggestion picks from
///   offload          boolean, default true: layers may go to host memory
///   flash-attention  boolean: llama.cpp's -fa; default off
///   runtime          choice: the runtime whose speed profile applies
///   input-len        whole number 1..max_plan_context: serving, prompt tokens
///   output-len       whole number 1..max_plan_context: serving, generated tokens
///   expert-parallel  boolean, default false
///   power-cap        number 1..max_power_cap_watts: each device's cap in watts
///   min-tokens-per-s number: the energy objective's floor
std::span<const SettingKey<InferenceSettings>> inference_setting_keys() noexcept;

/// Reads inference settings (read_settings over inference_setting_keys()).
/// input-len and output-len come together; with them and no context, the
/// context is their sum.
[[nodiscard]] Result<InferenceSettings> read_inference_settings(std::span<const Setting> values);

/// What a planning request names besides its settings: the model, the
/// devices, and the device-spec file (planning_input_keys()).
struct PlanningInputs {
  std::string model;                    ///< "model": a catalogue id, or a model file or folder
  std::optional<std::uint64_t> params;  ///< "params": a parameter count instead of a model
  /// "devices": hypothetical devices ("8xH100-SXM-80GB"), or nodes of them ("2x(8xH100-SXM-80GB)").
  std::string devices;
  std::string device_specs;      ///< "device-specs" ($HWACCEL_DEVICE_SPECS): a device-spec file
  std::string runtime_profiles;  ///< "runtime-profiles" ($HWACCEL_RUNTIME_PROFILES): a runtime-profile file
  std::uint32_t nodes = 1;       ///< "nodes": copies of the one node planned on
  std::optional<Fabric> fabric;  ///< "fabric": between nodes; empty: the nodes' own RDMA ports

  /// The model: `model` loaded, or a model of `params` parameters. Exactly
  /// one of them must be given (invalid_input otherwise); a load error keeps
  /// its kind, its message prefixed "model: ".
  [[nodiscard]] Result<ModelDescription> load_model() const;
  /// The entries of the device-spec file; an empty set (the built-in table
  /// alone) without one. Errors are read_device_specs', prefixed "device-specs: ".
  [[nodiscard]] Result<DeviceSpecSet> load_device_specs() const;
  /// The profiles of the runtime-profile file, for
  /// InferenceSettings::runtime_profiles; empty (the built-in profiles)
  /// without one. Errors are read_runtime_profiles', prefixed "runtime-profiles: ".
  [[nodiscard]] Result<std::vector<RuntimeProfile>> load_runtime_profiles() const;
  /// The nodes to plan on: `devices` naming nodes; else `nodes` copies of
  /// the registry of `devices` (names of the table or of `extra`), or of
  /// `given` (the caller's registry: this machine, a fixture). Giving both
  /// `given` and `devices`, or neither, `nodes` with devices that name
  /// nodes, or a bad `devices` list is an invalid_input error naming the key.
  [[nodiscard]] Result<Cluster> cluster(const AcceleratorRegistry* given, const DeviceSpecSet& extra) const;
};

/// The keys of PlanningInputs:
///   model         text: catalogue id (`hwaccel models`) or model file or folder
///   params        text: a parameter count (7000000000, 7e9, 70B)
///   devices       text: hypothetical devices or nodes of them (`hwaccel specs`)
///   device-specs  text, $HWACCEL_DEVICE_SPECS: a device-spec file
///   runtime-profiles text, $HWACCEL_RUNTIME_PROFILES: a runtime-profile file
///   nodes         whole number 1..max_cluster_nodes, default 1
///   fabric        text: ib-400g, ib-8x400g, roce-200g, ethernet-100g, efa-32x100g
std::span<const SettingKey<PlanningInputs>> planning_input_keys() noexcept;

/// Reads planning inputs (read_settings over planning_input_keys(); a bad
/// $HWACCEL_DEVICE_SPECS cannot be: it is a path, read by load_device_specs).
[[nodiscard]] Result<PlanningInputs> read_planning_inputs(std::span<const Setting> values,
                                                          const EnvironmentLookup& environment = process_environment());

/// Most instances of one type a recommendation may span.
inline constexpr std::uint32_t max_recommend_instances = 4096;

/// The keys of RecommendOptions besides its inference settings:
///   provider       text: a comma list of aws, gcp, azure; default all
///   max-instances  whole number 1..max_recommend_instances, default 1
///   power-budget   number (kW): the most one recommendation's accelerators may draw
///   catalogue      text, $HWACCEL_INSTANCE_CATALOGUE: an instance catalogue file; default the built-in one
std::span<const SettingKey<RecommendOptions>> recommend_setting_keys() noexcept;

/// Reads RecommendOptions: its own keys and the inference settings'.
[[nodiscard]] Result<RecommendOptions> read_recommend_options(std::span<const Setting> values,
                                                              const EnvironmentLookup& environment = process_environment());

}  // namespace hwaccel
