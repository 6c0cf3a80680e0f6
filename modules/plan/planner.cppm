// Plans: which quantization, how the model is split over the devices
// (tensor / pipeline / data parallel, CPU offload), what each device holds,
// how fast it decodes and prefills, and how to launch it.
module;
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
export module hwaccel.plan:planner;
import hwaccel.hardware;
import hwaccel.registry;
import :model;
import :memory;

export namespace hwaccel {

/// What a plan optimises when several fit.
enum class PlanObjective : std::uint8_t {
  throughput,  ///< fewest devices per replica, as many data-parallel replicas as fit
  latency,     ///< the widest tensor-parallel group a high-bandwidth domain allows
};

std::string_view to_string(PlanObjective objective) noexcept;

/// What to plan for.
struct InferenceSettings {
  /// Empty: the highest-quality level that fits (a GGUF file's own level
  /// when the model was read from one).
  std::optional<QuantizationLevel> quantization;
  /// Which kind of levels a suggestion picks from; empty: by device
  /// (floating/integer for datacenter accelerators, GGUF for CPUs, Apple and
  /// Vulkan GPUs).
  std::optional<QuantizationFamily> quantization_family;
  /// Empty: the 16-bit type the weights compute in (default_kv_cache_type).
  std::optional<QuantizationLevel> kv_cache_type;
  std::uint64_t context = 4096;    ///< tokens per sequence, prompt and output together
  std::uint32_t batch = 1;         ///< concurrent sequences per replica
  double reserve_fraction = 0.10;  ///< share of each device's memory left unused (vLLM: 1 - gpu_memory_utilization)
  PlanObjective objective = PlanObjective::throughput;
  bool allow_cpu_offload = true;   ///< put layers in host memory when the accelerators cannot hold them

  /// Limits: context 1..16,777,216 (and at most the model's own maximum
  /// when its architecture is its own), batch 1..65,536, reserve in [0, 0.95].
  Result<void> validate(const ModelDescription& model) const;
};

/// Degrees of parallelism of a plan.
struct ParallelStrategy {
  std::uint32_t tensor_parallel = 1;
  std::uint32_t pipeline_parallel = 1;
  std::uint32_t data_parallel = 1;
  std::uint32_t cpu_offload_layers = 0;  ///< layers held in host memory (llama.cpp -ngl leaves them on the CPU)

  /// "none", "tensor parallel (8)", "pipeline parallel (2) x tensor parallel (4) x data parallel (16)",
  /// "pipeline parallel (3) + CPU offload of 20 layers".
  std::string name() const;
  friend bool operator==(const ParallelStrategy&, const ParallelStrategy&) = default;
};

/// What one device holds.
struct Shard {
  std::string device;       ///< registry id, "cuda:3"
  std::string device_name;
  std::optional<std::string> spec_id;
  std::uint32_t replica = 0;
  std::uint32_t stage = 0;    ///< pipeline stage
  std::uint32_t tp_rank = 0;  ///< rank in the stage's tensor-parallel group
  std::uint32_t first_layer = 0;
  std::uint32_t layer_count = 0;  ///< layers [first_layer, first_layer + layer_count); real indices
  bool embedding = false;         ///< holds (its share of) the token embedding
  bool head = false;              ///< holds (its share of) the output head
  bool cpu_offload = false;
  std::uint64_t weights_bytes = 0;
  std::uint64_t kv_cache_bytes = 0;
  std::uint64_t activation_bytes = 0;
  std::uint64_t overhead_bytes = 0;
  std::uint64_t total_bytes = 0;
  std::uint64_t capacity_bytes = 0;  ///< the device's memory less the reserve

  friend bool operator==(const Shard&, const Shard&) = default;
};

/// Speed estimates. Decode reads every active weight and the KV cache once
/// per token: step time = bytes per device / (bandwidth x 0.8) or FLOPs /
/// (dense peak x 0.5), whichever is larger, plus two tensor-parallel
/// all-reduces per layer; pipeline stages run in sequence for one token.
struct ThroughputEstimate {
  std::optional<double> decode_tokens_per_s;        ///< one sequence, KV cache at the full context
  std::optional<double> decode_tokens_per_s_total;  ///< every sequence of every replica
  /// One sequence at 100 % of peak memory bandwidth with no communication:
  /// an upper bound decode_tokens_per_s never exceeds.
  std::optional<double> decode_ceiling_tokens_per_s;
  std::optional<double> prefill_tokens_per_s;       ///< one replica, `batch` prompts of `context` tokens
  std::string decode_bottleneck;   ///< "memory_bandwidth", "compute", "interconnect", "host_memory_bandwidth", "unknown"
  std::string prefill_bottleneck;  ///< "compute", "memory_bandwidth", "interconnect", "unknown"
  std::string bandwidth_source;    ///< "reported by the device", "published spec", or both

  friend bool operator==(const ThroughputEstimate&, const ThroughputEstimate&) = default;
};

/// How to start the plan with common runtimes; empty where one does not apply.
struct LaunchHints {
  std::string visible_devices;  ///< "CUDA_VISIBLE_DEVICES=0,1,2,3"
  std::string vllm;             ///< a `vllm serve` command line
  std::string llama_cpp;        ///< a `llama-server` command line

  friend bool operator==(const LaunchHints&, const LaunchHints&) = default;
};

/// A plan for running one model on a set of devices.
struct Plan {
  std::string model_name;
  ModelSource model_source = ModelSource::parameter_count;
  std::uint64_t parameters = 0;
  std::uint64_t active_parameters = 0;
  std::uint32_t layers = 0;
  bool architecture_assumed = false;
  QuantizationLevel quantization = QuantizationLevel::bf16;
  bool quantization_suggested = false;
  double weight_bits_per_parameter = 0;  ///< weights_bytes x 8 / parameters: the level's real cost here
  QuantizationLevel kv_cache_type = QuantizationLevel::bf16;
  std::uint64_t context = 0;
  std::uint32_t batch = 0;
  double reserve_fraction = 0;
  /// One replica's memory summed over its devices (replicated KV heads and
  /// per-device overheads counted on each device).
  MemoryEstimate memory;
  ParallelStrategy strategy;
  std::vector<Shard> shards;  ///< every device used, replica by replica, stage by stage
  ThroughputEstimate throughput;
  /// Every shard fits its device's capacity.
  bool fits = false;
  std::vector<std::string> assumptions;
  LaunchHints launch;
  /// Time to read the model's bytes (its files' own size when read from
  /// files, else the weights at this level) from the storage in the
  /// registry's system.storage: the device holding the model file's mount,
  /// or the fastest local one for a catalogue model. Empty when the registry
  /// knows no storage or its bandwidth is unknown (an assumption says why).
  std::optional<LoadTimeEstimate> load_time;
  std::uint64_t load_bytes = 0;  ///< bytes the estimate reads; 0 without one

  friend bool operator==(const Plan&, const Plan&) = default;
};

/// Plans `model` on the registry's available, visible devices.
/// Tensor parallelism stays inside a high-bandwidth domain (NVLink/NVSwitch,
/// xGMI, ICI, NeuronLink, Gaudi RoCE, from the registry's links and
/// interconnects) with a degree that divides the attention heads, the FFN
/// width and the KV heads (or is a multiple of them); pipeline stages span
/// domains with layers split in proportion to each stage's free memory;
/// the devices left over become data-parallel replicas; layers go to host
/// memory when the accelerators cannot hold the model. Costs grow as
/// O(devices log devices + layers x stages).
Result<Plan> plan_inference(const AcceleratorRegistry& registry, const ModelDescription& model,
                            const InferenceSettings& settings = {});

/// The highest-quality level that fits the registry's devices (all of them
/// together, as plan_inference would place it) and that every device used
/// runs natively or weight-only. An unsupported error when none fits.
Result<QuantizationLevel> suggest_quantization(const AcceleratorRegistry& registry, const ModelDescription& model,
                                               const InferenceSettings& settings = {});
/// The seed's entry point: a model known by its parameter count, 4096 tokens, batch 1.
Result<QuantizationLevel> suggest_quantization(const AcceleratorRegistry& registry, std::uint64_t parameters);
/// The seed's entry point: a plan for a parameter count at a level.
Result<Plan> plan_sharding(const AcceleratorRegistry& registry, std::uint64_t parameters, QuantizationLevel level);

/// A registry of hypothetical devices from the spec table, for planning
/// hardware one does not have: "8xH100-SXM-80GB", "2xRTX-4090+1xRTX-3090",
/// "4x M2-Ultra-192GB" (unified-memory parts take a configuration size).
/// Devices of a product with a fabric are joined into interconnects of its
/// domain size (8 per HGX board, 256 per TPU v5e pod...). An MI250X counts
/// as its two GCDs. Unknown names are an invalid_input error that points to
/// `hwaccel specs`.
Result<AcceleratorRegistry> hypothetical_registry(std::string_view devices);

/// Canonical JSON of a plan: model, quantization, kv_cache, memory
/// (weights_bytes, kv_cache_bytes, activation_bytes, overhead_bytes,
/// total_bytes), strategy (tp, pp, dp), shards (device, layers, bytes),
/// throughput (decode_tokens_per_s, prefill_tokens_per_s, bottleneck), fits,
/// launch, assumptions.
std::string to_json(const Plan& plan, bool pretty = false);

}  // namespace hwaccel
