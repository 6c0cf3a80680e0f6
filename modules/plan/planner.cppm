// Plans: which quantization, how the model is split over the devices
// (tensor / pipeline / data parallel, CPU offload), what each device holds,
// how fast it decodes and prefills, and how to launch it.
module;
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
export module hwaccel.plan:planner;
import hwaccel.hardware;
import hwaccel.registry;
import :model;
import :memory;
import :cluster;
import :runtime;

export namespace hwaccel {

/// What a plan optimises when several fit.
enum class PlanObjective : std::uint8_t {
  throughput,  ///< fewest devices per replica, as many data-parallel replicas as fit
  latency,     ///< the widest tensor-parallel group a high-bandwidth domain allows
  /// The least energy per output token among the layouts whose decode rate
  /// (every replica together) reaches InferenceSettings::min_tokens_per_s.
  energy,
};

std::string_view to_string(PlanObjective objective) noexcept;

/// The longest context a plan is made for, in tokens (InferenceSettings::validate).
inline constexpr std::uint64_t max_plan_context = std::uint64_t{1} << 24;
/// The most sequences a plan runs at once per replica.
inline constexpr std::uint32_t max_plan_batch = 65536;
/// The largest power cap a plan takes, per device, in watts.
inline constexpr double max_power_cap_watts = 100000;

/// The power model's parameters (docs/planning.md, "Power and energy"). A
/// device draws idle + (limit - idle) x min(1, activity), where activity =
/// busy_weight x (share of the step its stage runs) + memory_weight x (bytes
/// read / peak bandwidth, per second of the step) + compute_weight x (FLOPs
/// / dense peak, per second) x clock^2; under a cap the clocks fall until it
/// draws no more than the cap.
struct PowerModel {
  double idle_share = 0;      ///< idle draw as a share of the board's limit
  double busy_weight = 0;     ///< a running kernel's clocks and leakage
  double memory_weight = 0;   ///< moving bytes at full bandwidth
  double compute_weight = 0;  ///< FLOPs at full dense peak
  /// The 80 % interval of watts (measured / predicted) over the calibration
  /// rows; energy's is it divided by the runtime profile's speed interval.
  double watts_interval_low = 1;
  double watts_interval_high = 1;
  friend bool operator==(const PowerModel&, const PowerModel&) = default;
};

/// The built-in power model, fitted on tests/data/energy/'s calibration rows.
const PowerModel& default_power_model() noexcept;

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
  /// MoE models: each tensor-parallel group holds whole experts (expert
  /// parallelism, vLLM's --enable-expert-parallel) rather than a slice of
  /// every expert; tokens reach their experts by two all-to-alls per MoE layer.
  bool expert_parallel = false;
  /// The runtime whose profile the speeds assume; empty: default_runtime()
  /// for the first stage's backend and the level.
  std::optional<Runtime> runtime;
  /// A profile of one's own (fit_decode_profile on one's measurements); wins
  /// over `runtime`. Its string_views must outlive the plan call.
  std::optional<RuntimeProfile> profile;
  /// Serving: when output_tokens > 0, `batch` requests of input_tokens
  /// prompt and output_tokens generated tokens run together on each replica
  /// (ThroughputEstimate::serving); the memory plan holds one sequence of
  /// input + output tokens, and the memory left is KV cache, which caps the
  /// batch as vLLM's scheduler does.
  std::uint64_t input_tokens = 0;
  std::uint64_t output_tokens = 0;
  /// Size sliding-window and chunked layers' KV cache at the full context,
  /// as llama.cpp --swa-full and vLLM --disable-hybrid-kv-cache-manager
  /// allocate it; false: at min(context, window), as both do by default.
  bool full_kv_every_layer = false;
  /// llama.cpp's flash attention (-fa): on, attention reads each KV head
  /// once; off, ggml broadcasts a grouped-query KV head over its query heads
  /// and reads it once per query head. Empty: off, as the llama.cpp
  /// profiles' calibration runs were (recent builds' `-fa auto` turns it on
  /// where the backend supports it). Other runtimes read each KV head once.
  std::optional<bool> flash_attention;
  /// Device specs from a user file (read_device_specs), consulted after the
  /// built-in table for devices it does not match; must outlive the call. Null: the table alone.
  const DeviceSpecSet* device_specs = nullptr;
  /// Runtime profiles from a user file (read_runtime_profiles), in place of
  /// the built-in ones; must outlive the call. Empty: the built-in profiles.
  std::span<const RuntimeProfile> runtime_profiles;
  /// Each device's power cap in watts (nvidia-smi -pl); empty: the cap the
  /// registry reports the device enforcing, else its spec's TDP. A cap below
  /// the board's limit lowers the clocks of work that would draw more, and
  /// with them its speed (docs/planning.md, "Power and energy").
  std::optional<double> power_cap_watts;
  /// The energy objective's floor: decode tokens per second of every replica
  /// together (serving: output tokens per second). Empty: no floor.
  std::optional<double> min_tokens_per_s;
  /// A power model of one's own (fitted on one's measurements); empty: default_power_model().
  std::optional<PowerModel> power_model;

  /// Limits: context 1..16,777,216 (and at most the model's own maximum
  /// when its architecture is its own), batch 1..65,536, reserve in [0, 0.95].
  [[nodiscard]] Result<void> validate(const ModelDescription& model) const;
};

/// Degrees of parallelism of a plan.
struct ParallelStrategy {
  std::uint32_t tensor_parallel = 1;
  std::uint32_t pipeline_parallel = 1;
  std::uint32_t data_parallel = 1;
  std::uint32_t cpu_offload_layers = 0;  ///< layers held in host memory (llama.cpp -ngl leaves them on the CPU)
  /// Devices one MoE layer's experts are spread over (the tensor-parallel
  /// group, when InferenceSettings::expert_parallel applies); 1 otherwise.
  std::uint32_t expert_parallel = 1;
  std::uint32_t nodes = 1;  ///< nodes one replica spans

  /// "none", "tensor parallel (8)", "pipeline parallel (2) x tensor parallel (4) x data parallel (16)",
  /// "pipeline parallel (3) + CPU offload of 20 layers", "pipeline parallel (2) x tensor parallel (8), 2 nodes
  /// per replica", "tensor parallel (8) with expert parallel (8)".
  std::string name() const;
  friend bool operator==(const ParallelStrategy&, const ParallelStrategy&) = default;
};

/// What one device holds.
struct Shard {
  std::string node;         ///< the node's name in a plan over several nodes; empty on one machine
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

/// llama.cpp's row split (--split-mode row) over several GPUs of one node:
/// every weight matrix is split by rows in proportion to the devices' free
/// memory (--tensor-split's default) and each device reads its rows at the
/// same time; the main (first) device keeps the KV cache, the routed experts
/// of a MoE model (row split leaves them whole) and the intermediate
/// results, and gathers the others' rows after every split matrix product.
/// For llama.cpp on CUDA and ROCm, whose builds have it.
struct RowSplitEstimate {
  std::uint32_t devices = 0;
  /// Every device holds its rows; the main one also what it keeps.
  bool fits = false;
  std::uint64_t main_device_bytes = 0;
  std::optional<double> decode_tokens_per_s;  ///< one sequence
  std::optional<double> decode_tokens_per_s_low;
  std::optional<double> decode_tokens_per_s_high;
  std::optional<double> decode_ceiling_tokens_per_s;
  double sync_s_per_token = 0;  ///< the hand-overs and gathers of one token

  friend bool operator==(const RowSplitEstimate&, const RowSplitEstimate&) = default;
};

/// A whole server's speed for a batch of requests of one shape, as vLLM's
/// serving benchmark and trtllm-bench report it.
struct ServingEstimate {
  std::uint32_t requested_batch = 0;  ///< concurrent requests per replica asked for
  std::uint32_t batch = 0;            ///< what the KV cache holds: min(requested, kv_capacity_sequences)
  std::uint64_t kv_capacity_sequences = 0;  ///< per replica, at input + output tokens each
  std::uint64_t input_tokens = 0;
  std::uint64_t output_tokens = 0;
  std::uint32_t replicas = 0;
  double output_tokens_per_s = 0;  ///< every replica together
  double output_tokens_per_s_low = 0;   ///< 80 % interval from the runtime profile's residuals
  double output_tokens_per_s_high = 0;
  double time_to_first_token_s = 0;     ///< prefill of one wave of `batch` prompts
  double time_per_output_token_s = 0;   ///< mean decode step with `batch` sequences in flight
  std::string decode_bottleneck;        ///< "memory_bandwidth", "compute", "interconnect"

  friend bool operator==(const ServingEstimate&, const ServingEstimate&) = default;
};

/// Speed estimates under a runtime profile (RuntimeProfile). Decode reads
/// every active weight and the KV cache once per token: step time = bytes
/// per device / (bandwidth x the profile's efficiency) + dequantization +
/// the profile's per-layer overhead, or FLOPs / (dense peak x its compute
/// efficiency) when larger, plus two tensor-parallel all-reduces per layer;
/// pipeline stages run in sequence for one token. Never above the ceiling.
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
  std::string runtime;             ///< the runtime profile the speeds assume ("llama.cpp-cuda")
  bool runtime_calibrated = false;  ///< its parameters were fitted on measurements
  /// The 80 % interval around decode_tokens_per_s, from the profile's
  /// calibration residuals, capped at the ceiling.
  std::optional<double> decode_tokens_per_s_low;
  std::optional<double> decode_tokens_per_s_high;
  std::optional<ServingEstimate> serving;  ///< when InferenceSettings::output_tokens > 0
  /// llama.cpp plans whose replica spans 2 or more GPUs of one node: the same
  /// GPUs under --split-mode row instead of the layer split.
  std::optional<RowSplitEstimate> llama_row_split;

  friend bool operator==(const ThroughputEstimate&, const ThroughputEstimate&) = default;
};

/// One device's power in a plan (docs/planning.md, "Power and energy").
struct DevicePower {
  std::string node;    ///< the node's name in a plan over several nodes; empty on one machine
  std::string device;  ///< registry id
  double idle_watts = 0;
  double limit_watts = 0;    ///< what it may draw: limit_source's figure
  std::string limit_source;  ///< "power cap" (the settings'), "enforced cap" (the registry's), "spec TDP"
  double decode_watts = 0;   ///< while decoding the plan's batch (serving: the wave's)
  std::optional<double> prefill_watts;  ///< while prefilling a wave (serving)
  /// Clocks under the cap relative to the board's own limit, decoding and
  /// prefilling; 1 when the cap does not bind.
  double decode_clock_ratio = 1;
  double prefill_clock_ratio = 1;

  friend bool operator==(const DevicePower&, const DevicePower&) = default;
};

/// The power a plan draws and the energy of its output, every replica
/// together, with 80 % intervals: watts from the power model's calibration
/// residuals, energy from those and the runtime profile's speed interval. Devices of the plan only: idle devices it leaves unused and the
/// host (CPU, memory, fans) are not counted.
struct PowerEstimate {
  std::vector<DevicePower> devices;  ///< replica 0's devices
  double watts = 0;                  ///< all replicas' devices, averaged over the work
  double watts_low = 0;
  double watts_high = 0;
  double energy_per_output_token_j = 0;
  double energy_per_output_token_j_low = 0;
  double energy_per_output_token_j_high = 0;
  double tokens_per_joule = 0;
  /// Serving: one request's prefill and its share of the decode.
  std::optional<double> energy_per_request_j;
  std::optional<double> energy_per_request_j_low;
  std::optional<double> energy_per_request_j_high;
  std::string basis;          ///< "decode of 8 sequences per replica", "serving: ..."
  bool power_capped = false;  ///< some device runs below its clocks because of its cap

  friend bool operator==(const PowerEstimate&, const PowerEstimate&) = default;
};

/// How to start the plan with common runtimes; empty where one does not
/// apply. The flags follow the releases docs/planning.md names. Commands for
/// several nodes name the first node of a replica `$HEAD_ADDR` unless the
/// plan's nodes are real hosts, and `$NODE_RANK` where each node differs.
struct LaunchHints {
  std::string visible_devices;  ///< "CUDA_VISIBLE_DEVICES=0,1,2,3"
  std::string vllm;             ///< a `vllm serve` command line (several nodes: run on the head, over Ray)
  std::string llama_cpp;        ///< a `llama-server` command line
  std::string sglang;           ///< `python3 -m sglang.launch_server`, for every node (with --node-rank)
  std::string trtllm;           ///< `trtllm-serve` (several nodes: under mpirun with trtllm-llmapi-launch)
  std::string torchrun;         ///< `torchrun` for a script of one's own, for every node (with --node-rank)
  /// Several nodes with vLLM: the Ray cluster, `ray start --head` on the head
  /// node, then `ray start --address` on each other node.
  std::vector<std::string> ray;
  std::string slurm;       ///< several nodes: an sbatch script that starts the Ray cluster and vLLM
  std::string kubernetes;  ///< several nodes: a LeaderWorkerSet manifest (YAML) running vLLM over Ray
  /// Several nodes where a replica uses part of a node: "HOST: CUDA_VISIBLE_DEVICES=1,2,3,4" for each node.
  std::vector<std::string> node_devices;

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
  /// Several nodes: the nodes the plan uses, in order (replica 0's first);
  /// empty for a plan on one machine.
  std::vector<std::string> nodes;
  /// Several nodes: the fabric between them, when known.
  std::optional<Fabric> fabric;
  /// Watts and joules; empty when a device of the plan has no power figure
  /// (no TDP in its spec and no enforced cap) or the speed is unknown (an
  /// assumption says which).
  std::optional<PowerEstimate> power;

  friend bool operator==(const Plan&, const Plan&) = default;
};

/// Plans `model` on the registry's available, visible devices.
/// Tensor parallelism stays inside a high-bandwidth domain (NVLink/NVSwitch,
/// xGMI, ICI, NeuronLink, Gaudi RoCE, from the registry's links and
/// interconnects; under a runtime with RuntimeProfile::tensor_parallel_over_pcie
/// also the identical GPUs of a node that only PCIe joins) with a degree that
/// divides the attention heads, the FFN width and the KV heads (or is a
/// multiple of them); pipeline stages span
/// domains with layers split in proportion to each stage's free memory;
/// the devices left over become data-parallel replicas; layers go to host
/// memory when the accelerators cannot hold the model. Costs grow as
/// O(devices log devices + layers x stages).
[[nodiscard]] Result<Plan> plan_inference(const AcceleratorRegistry& registry, const ModelDescription& model,
                            const InferenceSettings& settings = {});

/// llama.cpp's row split over every accelerator of `registry`, the first
/// being the main device, as llama.cpp runs over every visible GPU. The
/// runtime comes from the settings (default: llama.cpp on the first
/// device's backend); an error when it has no row split, when fewer than
/// two accelerators can run the level, or when the model is unknown to it.
[[nodiscard]] Result<RowSplitEstimate> llama_row_split(const AcceleratorRegistry& registry, const ModelDescription& model,
                                         const InferenceSettings& settings = {});

/// Plans `model` over the nodes of a cluster (several nodes are planned as
/// one pool of devices): tensor parallelism stays inside one node's
/// high-bandwidth domain (or a domain the cluster shares across hosts),
/// pipeline stages go to further domains of the same node first, then to the
/// next nodes, and data-parallel replicas take what is left. A pipeline hop
/// between nodes costs the fabric's latency plus the activations over one
/// port. Host memory is never used for offload across nodes. A cluster of
/// one node gives the same plan as its registry.
[[nodiscard]] Result<Plan> plan_inference(const Cluster& cluster, const ModelDescription& model,
                            const InferenceSettings& settings = {});

/// The fewest copies of one node that hold a model.
struct NodeCount {
  std::optional<std::uint32_t> nodes;  ///< empty: even max_nodes copies do not hold it
  Plan plan;                           ///< on that many copies, or on max_nodes copies (not fitting)
};

/// The fewest n in 1..max_nodes for which plan_inference over n copies of
/// `node` (joined by `fabric`) fits: doubling, then halving the gap, since
/// fitting only gets easier with more nodes; O(log max_nodes) plans.
[[nodiscard]] Result<NodeCount> fewest_nodes(const AcceleratorRegistry& node, const ModelDescription& model,
                               const InferenceSettings& settings, std::uint32_t max_nodes,
                               const std::optional<Fabric>& fabric = {});

/// The highest-quality level that fits the registry's devices (all of them
/// together, as plan_inference would place it) and that every device used
/// runs natively or weight-only. An unsupported error when none fits.
[[nodiscard]] Result<QuantizationLevel> suggest_quantization(const AcceleratorRegistry& registry, const ModelDescription& model,
                                               const InferenceSettings& settings = {});
/// The highest-quality level that fits the cluster (see plan_inference).
[[nodiscard]] Result<QuantizationLevel> suggest_quantization(const Cluster& cluster, const ModelDescription& model,
                                               const InferenceSettings& settings = {});
/// The seed's entry point: a model known by its parameter count, 4096 tokens, batch 1.
[[nodiscard]] Result<QuantizationLevel> suggest_quantization(const AcceleratorRegistry& registry, std::uint64_t parameters);
/// The seed's entry point: a plan for a parameter count at a level.
[[nodiscard]] Result<Plan> plan_sharding(const AcceleratorRegistry& registry, std::uint64_t parameters, QuantizationLevel level);

/// A registry of hypothetical devices from the spec table, for planning
/// hardware one does not have: "8xH100-SXM-80GB", "2xRTX-4090+1xRTX-3090",
/// "4x M2-Ultra-192GB" (unified-memory parts take a configuration size).
/// Devices of a product with a fabric are joined into interconnects of its
/// domain size (8 per HGX board, 256 per TPU v5e pod...). An MI250X counts
/// as its two GCDs. Unknown names are an invalid_input error that points to
/// `hwaccel specs`.
[[nodiscard]] Result<AcceleratorRegistry> hypothetical_registry(std::string_view devices);
/// hypothetical_registry with the entries of a user device-spec file as well
/// as the table's (plan with InferenceSettings::device_specs = &extra, so the
/// planner finds their figures).
[[nodiscard]] Result<AcceleratorRegistry> hypothetical_registry(std::string_view devices, const DeviceSpecSet& extra);

/// The device ids of each high-bandwidth domain the planner sees on a node,
/// in registry order: an NVLink/NVSwitch, xGMI, ICI or NeuronLink island, or
/// an available accelerator alone. CPUs are not listed.
std::vector<std::vector<std::string>> high_bandwidth_domains(const AcceleratorRegistry& registry);
/// The same, with a user device-spec file's entries for devices the table
/// does not know (a device of unknown memory that an entry matches counts).
std::vector<std::vector<std::string>> high_bandwidth_domains(const AcceleratorRegistry& registry,
                                                             const DeviceSpecSet& extra);

/// Canonical JSON of a plan: model, quantization, kv_cache, memory
/// (weights_bytes, kv_cache_bytes, activation_bytes, overhead_bytes,
/// total_bytes), strategy (tp, pp, dp), shards (device, layers, bytes),
/// throughput (decode_tokens_per_s, prefill_tokens_per_s, bottleneck), fits,
/// launch, assumptions.
std::string to_json(const Plan& plan, bool pretty = false);
/// The same, as a value inside a document being written.
void write_json(json::Writer& out, const Plan& plan);

}  // namespace hwaccel
