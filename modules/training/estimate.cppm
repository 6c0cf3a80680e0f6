// Training memory per device: model states (parameters, gradients, master
// weights, optimizer states) under ZeRO/FSDP sharding and offload, the
// activations of the trained models, temporary buffers and runtime
// overhead; every part with its bytes and the rule that produced them. Plus
// the fit check against a registry and the smallest device count that fits.
module;
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
export module hwaccel.training:estimate;
import hwaccel.hardware;
import hwaccel.registry;
import hwaccel.plan;
import :settings;
import :adapters;
import :activations;

export namespace hwaccel {

/// The JSON total a component adds to. Master weights count as optimizer
/// memory, as in the ZeRO paper's K = 12 bytes of mixed-precision Adam.
enum class MemoryCategory : std::uint8_t { parameters, gradients, optimizer, activations, other };

std::string_view to_string(MemoryCategory category) noexcept;

enum class MemoryLocation : std::uint8_t { device, host };

std::string_view to_string(MemoryLocation location) noexcept;

/// One part of a device's memory.
struct MemoryComponent {
  /// "weights", "frozen_weights", "adapter_weights", "prefix_parameters",
  /// "gradients", "master_weights", "optimizer_states", "activations",
  /// "logits", "gathered_parameters", "unsharded_gradients",
  /// "reduce_bucket", "recompute_working_set", "dequantized_weight",
  /// "forward_working_set", "rollout_kv_cache", "runtime_overhead".
  std::string name;
  /// Whose memory: "model", "policy", "value", "reference", "reward",
  /// "teacher", "student", or "runtime".
  std::string model;
  MemoryCategory category = MemoryCategory::other;
  MemoryLocation location = MemoryLocation::device;
  std::uint64_t bytes = 0;
  std::string rule;  ///< how the bytes were computed, with the numbers

  friend bool operator==(const MemoryComponent&, const MemoryComponent&) = default;
};

/// What one device (data-parallel rank 0, tensor-parallel rank 0 of a
/// pipeline stage) holds.
struct DeviceMemory {
  std::uint32_t stage = 0;
  std::uint32_t first_layer = 0;  ///< of the trained model
  std::uint32_t layer_count = 0;
  bool embedding = false;
  bool head = false;
  std::uint32_t micro_batches_in_flight = 1;  ///< activations held at once under 1F1B
  std::uint64_t parameters_bytes = 0;
  std::uint64_t gradients_bytes = 0;
  std::uint64_t optimizer_bytes = 0;  ///< optimizer states and master weights
  std::uint64_t activations_bytes = 0;
  std::uint64_t other_bytes = 0;  ///< temporary buffers and runtime overhead
  std::uint64_t total_bytes = 0;  ///< device memory: the sum of the five above
  std::uint64_t host_bytes = 0;   ///< what offload puts in host memory for this device
  std::vector<MemoryComponent> components;

  /// Parameters, gradients and optimizer states (with master weights).
  std::uint64_t model_states_bytes() const noexcept { return parameters_bytes + gradients_bytes + optimizer_bytes; }
  friend bool operator==(const DeviceMemory&, const DeviceMemory&) = default;
};

/// A model the run holds, whole (before any sharding).
struct TrainingModel {
  std::string role;  ///< "model", "policy", "value", "reference", "reward", "teacher", "student"
  std::string name;
  std::uint64_t parameters = 0;
  std::uint64_t trainable_parameters = 0;
  bool architecture_assumed = false;
  std::string storage;  ///< how its weights are held, one phrase

  friend bool operator==(const TrainingModel&, const TrainingModel&) = default;
};

/// Other models a method needs. Missing ones default as stated.
struct AuxiliaryModels {
  /// Distillation's teacher (required for distillation).
  std::optional<ModelDescription> teacher;
  /// RLHF's reward model, whose architecture the value model also takes
  /// (InstructGPT initialises the value model from the reward model).
  /// Empty: the policy's architecture.
  std::optional<ModelDescription> reward;
};

/// Whether the run fits the devices it was checked against.
struct FitCheck {
  std::string device_name;             ///< the device kind used ("H100-SXM-80GB" or a detected name)
  std::optional<std::string> spec_id;
  std::uint64_t devices_needed = 0;    ///< dp x tp x pp
  std::uint64_t devices_available = 0;
  std::uint64_t capacity_bytes = 0;    ///< smallest device used, less the reserve
  bool fits = false;
  /// Host memory for offloaded states; empty when nothing is offloaded or
  /// the registry describes no host.
  std::optional<std::uint64_t> host_capacity_bytes;
  std::optional<bool> host_fits;
  std::string reason;  ///< one sentence
  /// Several nodes (plan_training over a cluster): the nodes the run spans
  /// (devices_needed over the smallest node's accelerators, rounded up), and
  /// a torchrun command for each of them; 1 and empty on one machine.
  std::uint32_t nodes = 1;
  std::uint32_t devices_per_node = 0;
  std::string torchrun;

  friend bool operator==(const FitCheck&, const FitCheck&) = default;
};

/// The fewest devices of one kind that hold the run with its tensor and
/// pipeline degrees, raising the data-parallel degree (and, when the asked
/// ZeRO stage can never fit, the stage).
struct MinimumDevices {
  bool found = false;
  std::string device_name;
  std::optional<std::string> spec_id;
  std::uint64_t capacity_bytes = 0;
  std::uint64_t devices = 0;
  std::uint32_t data_parallel = 0;
  std::uint32_t tensor_parallel = 1;
  std::uint32_t pipeline_parallel = 1;
  std::uint32_t zero_stage = 0;
  OffloadMode offload = OffloadMode::none;
  std::uint64_t per_device_bytes = 0;  ///< at that count
  std::string summary;  ///< "needs 6x H100-SXM-80GB (data parallel 6) with ZeRO-3"

  friend bool operator==(const MinimumDevices&, const MinimumDevices&) = default;
};

/// A training memory estimate.
struct TrainingEstimate {
  std::string model_name;
  ModelSource model_source = ModelSource::parameter_count;
  std::uint64_t parameters = 0;
  std::uint32_t layers = 0;
  bool architecture_assumed = false;
  /// The settings with every default resolved (LoRA rank and targets, prefix
  /// length, micro-batches).
  TrainingSettings settings;
  Backend backend = Backend::cuda;  ///< whose runtime overhead is counted
  std::vector<TrainingModel> models;
  std::uint64_t trainable_parameters = 0;
  std::uint64_t frozen_parameters = 0;
  /// The most loaded device (the pipeline stage with the largest total).
  DeviceMemory per_device;
  /// Every pipeline stage (one entry without pipeline parallelism).
  std::vector<DeviceMemory> stages;
  std::optional<FitCheck> fit;
  std::optional<MinimumDevices> minimum;
  std::vector<std::string> warnings;
  std::vector<std::string> assumptions;

  friend bool operator==(const TrainingEstimate&, const TrainingEstimate&) = default;
};

/// Bytes per parameter of a training method's model states on one device
/// before sharding, for fully trained weights: weights + gradients +
/// master weights + optimizer states (mixed-precision AdamW: 2 + 2 + 4 + 8 =
/// 16; 8-bit AdamW's block constants are per tensor and not included).
double model_state_bytes_per_parameter(TrainingPrecision precision, OptimizerKind optimizer) noexcept;

/// Memory per device of training `model` with `settings`, on devices of
/// `backend` (for the runtime overhead). Errors (invalid_input): settings
/// out of range or inconsistent with the model (tensor parallelism not
/// dividing the heads, more pipeline stages than layers, distillation
/// without a teacher, QLoRA at 16 bits...). Questionable but valid choices
/// (ZeRO with one data-parallel rank and no offload, which shards nothing)
/// are warnings.
[[nodiscard]] Result<TrainingEstimate> estimate_training(const ModelDescription& model, const TrainingSettings& settings,
                                           const AuxiliaryModels& auxiliary = {}, Backend backend = Backend::cuda);

/// estimate_training against a registry's accelerators (available, visible,
/// memory known): the dp x tp x pp largest are used, the run fits when each
/// holds the most loaded stage within its memory less the reserve (Apple
/// GPUs: 75 % of unified memory, Metal's working set) and the host holds
/// what is offloaded; the minimum count of the largest device kind is
/// searched too. Backend-specific precision support (bf16 on pre-Ampere
/// GPUs, NF4 without bitsandbytes) becomes a warning.
[[nodiscard]] Result<TrainingEstimate> plan_training(const AcceleratorRegistry& registry, const ModelDescription& model,
                                       const TrainingSettings& settings, const AuxiliaryModels& auxiliary = {});

/// The same over the nodes of a cluster (one node: as its registry). The
/// data-parallel ranks, and the ZeRO/FSDP shards with them, span nodes;
/// tensor parallelism stays inside a node (a warning says when the degree
/// exceeds a node's high-bandwidth domain); pipeline stages may cross nodes.
/// Each node's host memory holds what its own devices offload.
[[nodiscard]] Result<TrainingEstimate> plan_training(const Cluster& cluster, const ModelDescription& model,
                                       const TrainingSettings& settings, const AuxiliaryModels& auxiliary = {});

/// The fewest devices of capacity `capacity_bytes` (already less any
/// reserve) and `backend` that hold the run.
[[nodiscard]] Result<MinimumDevices> minimum_devices(const ModelDescription& model, const TrainingSettings& settings,
                                       const AuxiliaryModels& auxiliary, std::string device_name,
                                       std::uint64_t capacity_bytes, Backend backend = Backend::cuda);

/// The seed's entry point: a model known by its parameter count (layers
/// and heads borrowed from the nearest catalogue model) trained with
/// `method` under the default settings (bf16 mixed precision, AdamW, one
/// device, micro-batch 1 of 2048 tokens; distillation uses a teacher of the
/// same size).
[[nodiscard]] Result<TrainingEstimate> estimate_training_memory(std::uint64_t parameters, TrainingMethod method);

/// Canonical JSON: model, method, precision, optimizer, parallel, workload,
/// models, trainable_parameters, per_device (parameters_bytes,
/// gradients_bytes, optimizer_bytes, model_states_bytes,
/// activations_bytes, other_bytes, total_bytes, host_bytes, breakdown),
/// stages, fits, fit, minimum_devices, warnings, assumptions.
std::string to_json(const TrainingEstimate& estimate, bool pretty = false);

}  // namespace hwaccel
