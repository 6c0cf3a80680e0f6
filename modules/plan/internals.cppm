// What the plan module's implementation units share: the planner's pieces,
// the hypothetical devices made from the spec table, and the config.json
// reading the model catalogue shares. Module-internal (not exported, not
// installed).
module;
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.plan:internals;
import hwaccel.plan;
import hwaccel.json_fields;

// The planner's implementation units: planner.cpp
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
  const RuntimeProfile* host_profile = nullptr;  // llama.cpp's CPU backend, for layers in host memory

  // Layers in host memory run under llama.cpp's CPU backend whatever drives
  // the accelerators: the settings' profile of it, else the built-in one.
  inline const RuntimeProfile& host() const { return host_profile ? *host_profile : runtime_profile(Runtime::llama_cpp_cpu); }

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

// One pipeline stage's part of a decode step or a prefill, as the speed
// model costs it; the power model reads the same terms (power.cpp).
struct StageLoad {
  double memory_s = 0;          // bytes at the profile's bandwidth, unpacking, per-layer overhead
  double compute_s = 0;         // FLOPs at the profile's share of dense peak
  double comm_s = 0;            // tensor-parallel collectives
  double bytes_at_peak_s = 0;   // bytes read (KV re-reads too) / peak bandwidth
  double flops_at_peak_s = 0;   // FLOPs / dense peak; 0 without a published peak
  double ceiling_s = 0;         // decode: every byte once at peak bandwidth
  double dequant_s_per_op = 0;  // decode: quantized weights / the FP32 vector rate
  bool host = false;            // layers in host memory
  // The stage's time with the device clocks at `clock` of those the profile
  // was measured at: compute slows with the clock, memory traffic does not.
  inline double seconds(double clock = 1) const { return std::max(memory_s, compute_s / clock) + comm_s; }
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
[[nodiscard]] Result<CostModel> cost_model(const ModelDescription& model, QuantizationLevel level, QuantizationLevel kv_type, std::uint64_t context, std::uint64_t batch);
// `c` at another context and batch, with everything else it was given.
[[nodiscard]] Result<CostModel> reshaped(const CostModel& c, std::uint64_t context, std::uint64_t batch);
StageFixed fixed_for(const CostModel& c, Backend backend, std::uint32_t t, bool communicates, bool embedding, bool head);
Backend backend_of(const Fleet& f, const Group& g);
StageSpeed speed_of(const Fleet& f, const Stage& st);
// The domain a stage's group is in; null for a stage in host memory.
const Domain* domain_of(const Fleet& f, const Stage& st);
// A stage's decode step (c.batch sequences at c.context); empty when a
// device has no bandwidth figure.
std::optional<StageLoad> decode_stage(const Fleet& f, const CostModel& c, const Replica& r, const Stage& st);
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
// A stage's prefill of c.batch prompts of c.context tokens; empty when a
// device has no bandwidth or dense peak figure.
std::optional<StageLoad> prefill_stage(const Fleet& f, const CostModel& c, const Replica& r, const Stage& st);
PrefillTime prefill_time(const Fleet& f, const CostModel& c, const Replica& r);
LaunchHints launch_hints(const Fleet& f, const CostModel& c, const Layout& l, const InferenceSettings& s, const ModelDescription& m, const Plan& plan);

// The power model (power.cpp; docs/planning.md, "Power and energy").
struct DeviceLimit {
  double idle_watts = 0;
  double board_watts = 0;  // the board's own limit: its spec's TDP, else the cap it enforces
  double limit_watts = 0;  // what it may draw in this plan: the settings' cap, else the enforced one, else the TDP
  std::string_view source;  // DevicePower::limit_source
};
// Empty when neither the spec nor the registry gives the device a power figure.
std::optional<DeviceLimit> device_limit(const Device& d, const InferenceSettings& s);

// One phase of a replica (a decode step, or a prefill) with its devices
// held to their limits: the clocks fall together until every device of the
// replica draws at most its limit.
struct PhasePower {
  double seconds = 0;          // the phase's time at `clock`
  double clock = 1;            // relative to the clocks the runtime profile was measured at
  std::vector<double> watts;   // each accelerator of the replica, stage by stage, member by member
  double total_watts = 0;
};
// Empty when a device of the replica has no power figure or a stage no speed.
std::optional<PhasePower> phase_power(const Fleet& f, const CostModel& c, const Replica& r, bool prefill,
                                      const InferenceSettings& s);
// The plan's watts and joules, and its assumptions about them
// (plan.throughput must be filled in); where a cap binds, the speeds it
// lowers.
void settle_power(const Fleet& f, const CostModel& c, const Layout& l, Plan& plan, const InferenceSettings& s);

}  // namespace hwaccel::planner_detail

// Devices made from the published spec table, for planning on machines that
// are not this one (--devices, cloud instances).
namespace hwaccel::hypothetical {

/// Device `index` of its backend, as `spec` describes one, with
/// `memory_bytes` of memory; property "hypothetical" says it was not detected.
inline DeviceProfile device(const DeviceSpec& spec, std::uint32_t index, std::uint64_t memory_bytes) {
  DeviceProfile d;
  d.backend = spec.backend;
  d.family = spec.family;
  d.index = index;
  d.id = device_id(d.backend, d.index);
  d.name = std::string(spec.product);
  d.vendor = std::string(spec.vendor);
  d.memory_bytes = memory_bytes;
  d.memory_kind = spec.memory_kind;
  if (!spec.compute_capability.empty()) d.compute_capability = std::string(spec.compute_capability);
  if (!spec.architecture.empty()) d.architecture = std::string(spec.architecture);
  d.runtime_index = d.index;
  d.spec_id = std::string(spec.id);
  d.properties.emplace("hypothetical", "true");
  return d;
}

/// Joins devices [first, last) of `inv` in domains of `domain` devices, each
/// an interconnect like `fabric` (kind, name, bandwidth, source); a lone
/// device left at the end joins nothing.
inline void join_in_domains(Inventory& inv, std::size_t first, std::size_t last, std::size_t domain,
                            const Interconnect& fabric) {
  if (domain < 2) return;
  for (std::size_t start = first; start + 1 < last; start += domain) {
    Interconnect ic = fabric;
    for (std::size_t i = start; i < last && i < start + domain; ++i) ic.device_ids.push_back(inv.devices[i].id);
    inv.interconnects.push_back(std::move(ic));
  }
}

}  // namespace hwaccel::hypothetical

// The architecture a Hugging Face config.json object describes
// (config_json.cpp): what model_from_config_json reads, and what each entry
// of a model catalogue states in config.json's keys (catalogue.cpp).
namespace hwaccel::config_detail {

struct ConfigArchitecture {
  ModelArchitecture architecture;
  std::optional<QuantizationLevel> native_level;  ///< quantization_config quant_method "mxfp4"
  std::vector<std::string> notes;                 ///< defaults assumed, fields read from elsewhere
};

/// Reads `config` (an object; errors name `where`): the architecture, not yet
/// validated, with the notes a reader should see.
[[nodiscard]] Result<ConfigArchitecture> architecture_of_config(json::Value config, std::string_view where);

}  // namespace hwaccel::config_detail
