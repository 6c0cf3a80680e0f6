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
Result<Plan> plan_inference(const AcceleratorRegistry& registry, const ModelDescription& model,
                            const InferenceSettings& settings = {});

/// llama.cpp's row split over every accelerator of `registry`, the first
/// being the main device, as llama.cpp runs over every visible GPU. The
/// runtime comes from the settings (default: llama.cpp on the first
/// device's backend); an error when it has no row split, when fewer than
/// two accelerators can run the level, or when the model is unknown to it.
Result<RowSplitEstimate> llama_row_split(const AcceleratorRegistry& registry, const ModelDescription& model,
                                         const InferenceSettings& settings = {});

/// Plans `model` over the nodes of a cluster (several nodes are planned as
/// one pool of devices): tensor parallelism stays inside one node's
/// high-bandwidth domain (or a domain the cluster shares across hosts),
/// pipeline stages go to further domains of the same node first, then to the
/// next nodes, and data-parallel replicas take what is left. A pipeline hop
/// between nodes costs the fabric's latency plus the activations over one
/// port. Host memory is never used for offload across nodes. A cluster of
/// one node gives the same plan as its registry.
Result<Plan> plan_inference(const Cluster& cluster, const ModelDescription& model,
                            const InferenceSettings& settings = {});

/// The fewest copies of one node that hold a model.
struct NodeCount {
  std::optional<std::uint32_t> nodes;  ///< empty: even max_nodes copies do not hold it
  Plan plan;                           ///< on that many copies, or on max_nodes copies (not fitting)
};

/// The fewest n in 1..max_nodes for which plan_inference over n copies of
/// `node` (joined by `fabric`) fits: doubling, then halving the gap, since
/// fitting only gets easier with more nodes; O(log max_nodes) plans.
Result<NodeCount> fewest_nodes(const AcceleratorRegistry& node, const ModelDescription& model,
                               const InferenceSettings& settings, std::uint32_t max_nodes,
                               const std::optional<Fabric>& fabric = {});

/// The highest-quality level that fits the registry's devices (all of them
/// together, as plan_inference would place it) and that every device used
/// runs natively or weight-only. An unsupported error when none fits.
Result<QuantizationLevel> suggest_quantization(const AcceleratorRegistry& registry, const ModelDescription& model,
                                               const InferenceSettings& settings = {});
/// The highest-quality level that fits the cluster (see plan_inference).
Result<QuantizationLevel> suggest_quantization(const Cluster& cluster, const ModelDescription& model,
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
/// hypothetical_registry with the entries of a user device-spec file as well
/// as the table's (plan with InferenceSettings::device_specs = &extra, so the
/// planner finds their figures).
Result<AcceleratorRegistry> hypothetical_registry(std::string_view devices, const DeviceSpecSet& extra);

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

// Module-internal: what the planner's implementation units share. planner.cpp
// assembles a plan from the devices and their domains (planner_devices.cpp),
// the per-level cost model (planner_cost.cpp), the layout search
// (planner_layout.cpp), shards and throughput (planner_shards.cpp) and launch
// hints (planner_launch.cpp).
namespace hwaccel::planner_detail {

inline constexpr double allreduce_latency_s = 10e-6;
// NCCL's all-reduce of a few bytes over 8 GPUs that only PCIe joins: 42 us on
// RTX 4090s (NVIDIA/nccl#1530), 54 us on RTX 3090s (NVIDIA/nccl#1439).
inline constexpr double pcie_allreduce_latency_s = 40e-6;
inline constexpr double pipeline_hop_latency_s = 20e-6;
inline constexpr double apple_gpu_share = 0.75;  // Metal's recommended working set on Apple silicon
inline constexpr std::uint64_t max_plan_context = 1ull << 24;
inline constexpr std::uint32_t max_plan_batch = 65536;

inline std::uint64_t sat_add(std::uint64_t a, std::uint64_t b) {
  return b > std::numeric_limits<std::uint64_t>::max() - a ? std::numeric_limits<std::uint64_t>::max() : a + b;
}

inline std::uint64_t sat_mul(std::uint64_t a, std::uint64_t b) {
  return a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a ? std::numeric_limits<std::uint64_t>::max() : a * b;
}

inline std::uint64_t div_up(std::uint64_t a, std::uint64_t b) { return b == 0 ? a : a / b + (a % b != 0 ? 1 : 0); }

// Extra reads of the KV cache per token under `p`: with flash attention off,
// ggml's products broadcast a grouped-query KV head over its query heads.
inline double kv_rereads(const ModelArchitecture& a, const RuntimeProfile& p, bool flash_attention) {
  return p.kv_read_per_query_head && !flash_attention && !a.mla && a.kv_heads > 0 ? static_cast<double>(a.attention_heads) / a.kv_heads - 1.0
                                                              : 0.0;
}

inline std::string gib(std::uint64_t bytes) {
  const double g = static_cast<double>(bytes) / (1024.0 * 1024 * 1024);
  return text::cat(std::round(g * 10) / 10, " GiB");
}

struct Device {
  const DeviceProfile* profile = nullptr;
  const DeviceSpec* spec = nullptr;
  std::uint64_t memory = 0;
  std::uint64_t capacity = 0;  // memory less the reserve (and Apple's working-set share)
  std::optional<double> bandwidth_gbps;
  bool bandwidth_reported = false;
  bool bandwidth_derived = false;  // estimated from the architecture's spec rows (derive_spec)
  std::optional<double> peak_tflops;
  std::optional<double> vector_tflops;  // non-tensor FP32: what unpacking quantized weights runs at
  std::uint32_t domain = 0;
  std::uint32_t node = 0;  // index into Fleet::node_names
};

struct Domain {
  std::vector<std::uint32_t> members;  // device indices, registry order
  std::optional<double> link_gbps;     // per device, per direction
  bool pcie = false;                   // joined by PCIe alone (join_pcie_domains)
};

// Reasons devices were left out, counted, so 10 000 devices give one line each.
struct SkipLog {
  std::map<std::string, std::vector<std::string>> by_reason;
  inline void add(const DeviceProfile& d, std::string reason) { by_reason[std::move(reason)].push_back(d.id); }
  inline void report(std::vector<std::string>& out) const {
    for (const auto& [reason, ids] : by_reason) {
      std::string list;
      for (std::size_t i = 0; i < ids.size() && i < 4; ++i) list += (i ? ", " : "") + ids[i];
      if (ids.size() > 4) list += text::cat(" and ", ids.size() - 4, " more");
      out.push_back(text::cat(list, " not used: ", reason));
    }
  }
};

// What a plan is made over: one registry, or the nodes of a cluster.
struct Machines {
  std::vector<const AcceleratorRegistry*> registries;
  std::vector<std::string_view> names;         // empty names: one machine
  std::optional<Fabric> fabric;
  const std::vector<SharedDomain>* shared = nullptr;
  bool named_hosts = false;

  inline bool several() const noexcept { return registries.size() > 1; }
};

Machines machines_of(const AcceleratorRegistry& registry);
Machines machines_of(const Cluster& cluster);

struct Fleet {
  std::vector<Device> accelerators;
  std::vector<std::uint32_t> indices;  // 0..accelerators-1, for single-device groups
  std::vector<Domain> domains;
  std::optional<Device> host;  // the CPU, for offload or CPU-only plans
  bool unified_memory = false;
  SkipLog skipped;
  std::map<std::string, std::vector<std::string>> derived;  // how figures were derived -> device ids
  std::vector<std::string_view> node_names;  // several nodes: one per node; empty on one machine
  std::optional<Fabric> fabric;
  bool named_hosts = false;

  inline bool several_nodes() const noexcept { return node_names.size() > 1; }
  // Seconds to move `bytes` from a device of node a to one of node b: 0 on one node.
  inline double hop_s(std::uint32_t a, std::uint32_t b, double bytes) const {
    if (a == b || !fabric) return 0.0;
    return fabric->latency_us * 1e-6 + bytes / (fabric->port_gb_per_s() * 1e9);
  }
};

// Members are `inline` explicitly: in a module interface an in-class
// definition is not, and the layout search calls them in its inner loops.
struct CostModel {
  const ModelDescription& model;
  const ModelArchitecture& arch;
  QuantizationLevel level;
  QuantizationLevel kv_type;
  std::uint64_t context;
  std::uint64_t batch;
  WeightLayout layout;
  std::vector<std::uint64_t> weight_prefix;  // prefix sums of layer bytes
  std::vector<std::uint64_t> active_weight_prefix;  // prefix sums of the bytes a decode step reads
  std::vector<double> active_param_prefix;          // prefix sums of parameters a token passes through
  double head_params = 0;
  std::vector<std::uint32_t> moe_layer_prefix;  // prefix counts of MoE layers
  bool expert_parallel = false;                 // InferenceSettings::expert_parallel
  const RuntimeProfile* profile = nullptr;      // the accelerators' runtime; never null once planning

  inline std::uint64_t layers() const { return layout.layer_bytes.size(); }
  // Quantized weights are unpacked in the kernels on every read: the integer
  // and GGUF block formats, and MXFP4 among the floating ones.
  inline bool weights_unpacked() const {
    return info(level).family != QuantizationFamily::floating || level == QuantizationLevel::mxfp4;
  }
  inline bool embedding_on_host() const { return profile && profile->token_embedding_on_host; }
  inline bool collective_buffers() const { return !profile || profile->collective_buffers; }
  // The token embedding the first device stage holds.
  inline std::uint64_t stage_embedding_bytes() const { return embedding_on_host() ? 0 : layout.embedding_bytes; }
  // What the last device stage holds beside its layers: the head, the final
  // norm and the other global tensors; with the embedding on the host, a
  // tied embedding is loaded a second time there as the output layer.
  inline std::uint64_t stage_head_bytes() const {
    const std::uint64_t tied = embedding_on_host() && arch.tied_embeddings ? layout.embedding_bytes : 0;
    return sat_add(sat_add(layout.head_bytes, layout.other_bytes), tied);
  }
  // Head bytes a decode step reads: a tied embedding is the head's matrix.
  inline std::uint64_t head_read_bytes() const {
    return arch.tied_embeddings ? sat_add(layout.head_bytes, layout.embedding_bytes) : layout.head_bytes;
  }
  inline std::uint64_t layer_weights(std::uint64_t first, std::uint64_t count) const {
    return weight_prefix[first + count] - weight_prefix[first];
  }
  // KV cache of one layer on one device of a tensor-parallel group of t.
  inline std::uint64_t kv_per_layer(std::uint32_t t) const {
    if (t < kv_by_degree.size() && kv_by_degree[t] != 0) return kv_by_degree[t];
    const std::uint64_t bytes = compute_kv_per_layer(t);
    if (t < kv_by_degree.size()) kv_by_degree[t] = bytes;
    return bytes;
  }
  // Memo of kv_per_layer by degree (a cost model lives for one planning call).
  mutable std::array<std::uint64_t, 65> kv_by_degree{};
  // KV cache of layers [first, first + count) on one device of a
  // tensor-parallel group of t: sliding-window and chunked layers hold
  // min(context, window) tokens (kv_token_prefix), the others the context.
  // With full_kv_every_layer, every layer at the full context.
  inline std::uint64_t kv_layers(std::uint32_t t, std::uint64_t first, std::uint64_t count) const {
    return full_kv_every_layer ? sat_mul(kv_per_layer(t), count) : kv_read(t, first, count);
  }
  // KV bytes a decode step reads in those layers: a windowed layer attends
  // to (and reads) at most its window, however much is allocated.
  inline std::uint64_t kv_read(std::uint32_t t, std::uint64_t first, std::uint64_t count) const {
    const std::uint64_t tokens = kv_tokens(first, count);
    if (tokens == count * context) return sat_mul(kv_per_layer(t), count);  // all full-attention layers
    auto per_token = kv_cache_bytes_per_token_per_layer(arch, kv_type, t);
    if (!per_token) return 0;
    return sat_mul(sat_mul(tokens, batch), *per_token);
  }
  // KV tokens one sequence keeps in layers [first, first + count).
  inline std::uint64_t kv_tokens(std::uint64_t first, std::uint64_t count) const {
    if (first + count >= kv_token_prefix.size()) return count * context;
    return kv_token_prefix[first + count] - kv_token_prefix[first];
  }
  // Causal (query, key) pairs one sequence's prefill computes in layers
  // [first, first + count): n^2/2 for a full layer, n w - w^2/2 for one
  // sliding within w tokens, n c/2 for one chunked into c-token chunks.
  inline double attention_pairs(std::uint64_t first, std::uint64_t count) const {
    const double n = static_cast<double>(context);
    double pairs = 0;
    for (std::uint64_t l = first; l < first + count; ++l) {
      const auto layer = static_cast<std::uint32_t>(l);
      const double w = l < arch.layers ? static_cast<double>(arch.kv_tokens(layer, context)) : n;
      if (w >= n) pairs += n * n / 2;
      else if (arch.layer_attention(layer) == LayerAttention::chunked) pairs += n * w / 2;
      else pairs += n * w - w * w / 2;
    }
    return pairs;
  }
  inline std::uint64_t compute_kv_per_layer(std::uint32_t t) const {
    auto per_token = kv_cache_bytes_per_token_per_layer(arch, kv_type, t);
    if (!per_token) return 0;
    const auto tokens = text::checked_mul(context, batch);
    const auto bytes = tokens ? text::checked_mul(*tokens, *per_token) : std::nullopt;
    return bytes.value_or(std::numeric_limits<std::uint64_t>::max() / 4);
  }
  // Activations of one device of a tensor-parallel group of t, for the
  // runtime's prefill chunk. The memo assumes the profile is set before the
  // first call (it is, before any layout is searched).
  inline std::uint64_t activation(std::uint32_t t) const {
    if (t < activation_by_degree.size() && activation_by_degree[t] != 0) return activation_by_degree[t];
    const std::uint64_t bytes =
        activation_bytes(arch, context, batch, t, profile ? profile->prefill_chunk_tokens : prefill_chunk_tokens);
    if (t < activation_by_degree.size()) activation_by_degree[t] = bytes;
    return bytes;
  }
  mutable std::array<std::uint64_t, 65> activation_by_degree{};
  // Prefix sums over layers of the KV tokens each keeps per sequence.
  std::vector<std::uint64_t> kv_token_prefix;
  bool full_kv_every_layer = false;  // InferenceSettings::full_kv_every_layer
  bool flash_attention = false;      // InferenceSettings::flash_attention
};

// A tensor-parallel group: t consecutive members of one domain (views into
// the fleet's own index lists, so forming thousands of groups allocates once).
struct Group {
  std::span<const std::uint32_t> members;  // accelerator indices (t of them)
  std::uint64_t capacity = 0;              // per device: the smallest member's
};

struct Stage {
  const Group* group = nullptr;  // null: the host CPU
  std::uint64_t first_layer = 0;
  std::uint64_t layer_count = 0;
  bool embedding = false;
  bool head = false;
};

struct Replica {
  std::vector<Stage> stages;
  std::uint32_t tp = 1;
};

// Bytes one device of a stage holds apart from its layers.
struct StageFixed {
  std::uint64_t overhead = 0;
  std::uint64_t activation = 0;
  std::uint64_t embedding = 0;
  std::uint64_t head = 0;
  std::uint64_t total() const { return sat_add(sat_add(overhead, activation), sat_add(embedding, head)); }
};

struct Layout {
  std::vector<Group> groups;  // owns the groups the replicas point into
  std::vector<Replica> replicas;
  std::uint32_t tp = 1;
  bool fits = false;
  // Every replica alike: only the first is stored; replica r's stage j runs
  // on order[r x stages + j], and one throughput estimate serves all.
  bool uniform = false;
  std::size_t replica_count = 0;
  std::vector<const Group*> order;
  std::uint64_t idle_devices = 0;

  inline std::size_t replica_total() const noexcept { return uniform ? replica_count : replicas.size(); }
  // Stage `stage` of replica `replica`.
  inline Stage stage(std::size_t replica, std::size_t stage) const {
    if (!uniform) return replicas[replica].stages[stage];
    Stage st = replicas.front().stages[stage];
    if (replica > 0) st.group = order[replica * replicas.front().stages.size() + stage];
    return st;
  }
  inline const Replica& shape(std::size_t replica) const { return uniform ? replicas.front() : replicas[replica]; }
};

struct StageSpeed {
  std::optional<double> bandwidth_gbps;  // slowest member
  std::optional<double> peak_tflops;     // slowest member
  std::optional<double> vector_tflops;   // slowest member
  bool host = false;
};

struct DecodeTime {
  std::optional<double> step_s;
  std::optional<double> ceiling_step_s;
  DecodeTerms terms;  // the step before the profile's parameters
  std::string bottleneck = "unknown";
};

struct PrefillTime {
  std::optional<double> seconds;
  std::string bottleneck = "unknown";
};

Fleet gather(const AcceleratorRegistry& registry, QuantizationLevel level, double reserve,
             const DeviceSpecSet* extra = nullptr);
Fleet gather(const Machines& machines, QuantizationLevel level, double reserve, const DeviceSpecSet* extra = nullptr);
// For a runtime with tensor parallelism over PCIe: identical accelerators of
// one node that no high-bandwidth link joins become one PCIe domain,
// at the slowest member's host link. Nothing changes for other runtimes.
void join_pcie_domains(Fleet& f, const RuntimeProfile& runtime);
std::uint32_t node_of(const Fleet& f, const Stage& st);
Result<CostModel> cost_model(const ModelDescription& model, QuantizationLevel level, QuantizationLevel kv_type, std::uint64_t context, std::uint64_t batch);
StageFixed fixed_for(const CostModel& c, Backend backend, std::uint32_t t, bool communicates, bool embedding, bool head);
Backend backend_of(const Fleet& f, const Group& g);
StageSpeed speed_of(const Fleet& f, const Stage& st);
// The domain a stage's group is in; null for a stage in host memory.
const Domain* domain_of(const Fleet& f, const Stage& st);
DecodeTime decode_time(const Fleet& f, const CostModel& c, const Replica& r);
// Tensor-parallel (and expert-parallel) communication of one stage for
// `tokens` tokens in flight; pipeline hops of a replica, inter-node ones
// over the fabric.
double tensor_parallel_s(const Fleet& f, const CostModel& c, const Stage& st, std::uint32_t t, double tokens);
double pipeline_hops_s(const Fleet& f, const CostModel& c, const Replica& r, double tokens);
// llama.cpp's row split over `devices` (the first is the main one); nullopt
// when the runtime has none or a device lacks a bandwidth.
std::optional<RowSplitEstimate> row_split_estimate(const CostModel& c, std::span<const Device* const> devices);
Layout place(const Fleet& f, const CostModel& c, const InferenceSettings& s);
void emit_shards(const Fleet& f, const CostModel& c, const Layout& l, Plan& plan);
PrefillTime prefill_time(const Fleet& f, const CostModel& c, const Replica& r);
LaunchHints launch_hints(const Fleet& f, const CostModel& c, const Layout& l, const InferenceSettings& s, const ModelDescription& m, const Plan& plan);

}  // namespace hwaccel::planner_detail
