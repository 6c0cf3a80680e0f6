// The sharding planner: devices and their high-bandwidth domains, the
// tensor/pipeline/data-parallel search, CPU offload, throughput and launch hints.
module;
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>
module hwaccel.plan;

namespace hwaccel {

std::string_view to_string(PlanObjective objective) noexcept {
  return objective == PlanObjective::latency ? "latency" : "throughput";
}

namespace {

constexpr double bandwidth_efficiency = 0.8;  // decode GEMV kernels reach 70-85 % of peak HBM bandwidth
constexpr double compute_efficiency = 0.5;    // large GEMMs in serving engines reach 40-60 % of dense peak
constexpr double allreduce_latency_s = 10e-6;
constexpr double pipeline_hop_latency_s = 20e-6;
constexpr double apple_gpu_share = 0.75;  // Metal's recommended working set on Apple silicon
constexpr std::uint64_t max_plan_context = 1ull << 24;
constexpr std::uint32_t max_plan_batch = 65536;

std::uint64_t sat_add(std::uint64_t a, std::uint64_t b) {
  return b > std::numeric_limits<std::uint64_t>::max() - a ? std::numeric_limits<std::uint64_t>::max() : a + b;
}

std::uint64_t div_up(std::uint64_t a, std::uint64_t b) { return b == 0 ? a : a / b + (a % b != 0 ? 1 : 0); }

std::string gib(std::uint64_t bytes) {
  const double g = static_cast<double>(bytes) / (1024.0 * 1024 * 1024);
  return text::cat(std::round(g * 10) / 10, " GiB");
}

}  // namespace

Result<void> InferenceSettings::validate(const ModelDescription& model) const {
  if (context == 0 || context > max_plan_context)
    return fail(ErrorKind::invalid_input, text::cat("context must be 1..", max_plan_context, " tokens, got ", context));
  if (!model.architecture_assumed && model.architecture.max_context > 0 && context > model.architecture.max_context)
    return fail(ErrorKind::invalid_input, text::cat("context ", context, " exceeds ", model.name, "'s maximum of ",
                                                    model.architecture.max_context, " tokens"));
  if (batch == 0 || batch > max_plan_batch)
    return fail(ErrorKind::invalid_input, text::cat("batch must be 1..", max_plan_batch, ", got ", batch));
  if (!(reserve_fraction >= 0.0 && reserve_fraction <= 0.95))
    return fail(ErrorKind::invalid_input, text::cat("reserve must be a fraction in [0, 0.95], got ", reserve_fraction));
  if (kv_cache_type) {
    if (auto bits = kv_cache_bits(*kv_cache_type); !bits) return fail(bits.error());
  }
  return {};
}

std::string ParallelStrategy::name() const {
  std::string s;
  const auto part = [&](std::string_view what, std::uint32_t n) {
    if (n <= 1) return;
    if (!s.empty()) s += " x ";
    s += text::cat(what, " (", n, ")");
  };
  part("pipeline parallel", pipeline_parallel);
  part("tensor parallel", tensor_parallel);
  part("data parallel", data_parallel);
  if (s.empty()) s = "none";
  if (cpu_offload_layers > 0) s += text::cat(" + CPU offload of ", cpu_offload_layers, " layers");
  return s;
}

namespace {

// --- devices and domains -------------------------------------------------------

struct Device {
  const DeviceProfile* profile = nullptr;
  const DeviceSpec* spec = nullptr;
  std::uint64_t memory = 0;
  std::uint64_t capacity = 0;  // memory less the reserve (and Apple's working-set share)
  std::optional<double> bandwidth_gbps;
  bool bandwidth_reported = false;
  std::optional<double> peak_tflops;
  std::uint32_t domain = 0;
};

struct Domain {
  std::vector<std::uint32_t> members;  // device indices, registry order
  std::optional<double> link_gbps;     // per device, per direction
};

struct UnionFind {
  std::vector<std::uint32_t> parent;
  explicit UnionFind(std::size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0u); }
  std::uint32_t find(std::uint32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void join(std::uint32_t a, std::uint32_t b) {
    a = find(a);
    b = find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
};

bool high_bandwidth_interconnect(std::string_view kind) {
  for (std::string_view k : {"nvswitch", "nvlink", "nvlink_bridge", "xgmi", "xgmi_hive", "ici", "neuronlink", "roce"})
    if (kind == k) return true;
  return false;
}

bool high_bandwidth_link(LinkKind kind) {
  return kind == LinkKind::nvlink || kind == LinkKind::xgmi || kind == LinkKind::ici || kind == LinkKind::neuronlink;
}

ComputeType compute_type_on(QuantizationLevel level, const DeviceTraits& traits) {
  const QuantizationInfo& q = info(level);
  if (q.compute == ComputeType::fp8 || q.compute == ComputeType::int8) {
    if (quantization_support(level, traits).level == SupportLevel::native) return q.compute;
    return ComputeType::bf16;
  }
  return q.compute;
}

std::optional<double> peak_for(const DeviceSpec* spec, ComputeType type) {
  if (!spec) return std::nullopt;
  if (auto p = spec->peak_tflops(type)) return p;
  // 16-bit work runs at whichever 16-bit rate the datasheet gives.
  if (type == ComputeType::fp16) return spec->peak_tflops(ComputeType::bf16);
  if (type == ComputeType::bf16) return spec->peak_tflops(ComputeType::fp16);
  return std::nullopt;
}

// Reasons devices were left out, counted, so 10 000 devices give one line each.
struct SkipLog {
  std::map<std::string, std::vector<std::string>> by_reason;
  void add(const DeviceProfile& d, std::string reason) { by_reason[std::move(reason)].push_back(d.id); }
  void report(std::vector<std::string>& out) const {
    for (const auto& [reason, ids] : by_reason) {
      std::string list;
      for (std::size_t i = 0; i < ids.size() && i < 4; ++i) list += (i ? ", " : "") + ids[i];
      if (ids.size() > 4) list += text::cat(" and ", ids.size() - 4, " more");
      out.push_back(text::cat(list, " not used: ", reason));
    }
  }
};

struct Fleet {
  std::vector<Device> accelerators;
  std::vector<std::uint32_t> indices;  // 0..accelerators-1, for single-device groups
  std::vector<Domain> domains;
  std::optional<Device> host;  // the CPU, for offload or CPU-only plans
  bool unified_memory = false;
  SkipLog skipped;
};

// What gather() works out once per kind of device: fleets are made of many
// identical devices, and spec lookups and support rules are not free.
struct DeviceKind {
  const DeviceProfile* sample = nullptr;
  const DeviceSpec* spec = nullptr;
  QuantizationSupport support;
  ComputeType compute = ComputeType::bf16;
};

// Devices the support rules cannot tell apart (properties matter for CPUs only: their ISA).
bool same_kind(const DeviceProfile& a, const DeviceProfile& b) {
  return a.backend == b.backend && a.family == b.family && a.memory_bytes == b.memory_bytes &&
         a.spec_id == b.spec_id && a.compute_capability == b.compute_capability && a.name == b.name &&
         a.architecture == b.architecture && (a.family != Family::cpu || a.properties == b.properties);
}

Fleet gather(const AcceleratorRegistry& registry, QuantizationLevel level, double reserve) {
  Fleet f;
  const auto devices = registry.devices();
  // Registry ids are "<backend>:<index>": a table by backend and index finds
  // them without hashing; other ids fall back to a map built on demand.
  std::array<std::vector<std::uint32_t>, backend_count> by_index;
  f.accelerators.reserve(devices.size());
  std::vector<DeviceKind> kinds;
  // NPUs join a plan only on machines without other accelerators: next to a
  // GPU they add little, and on Apple silicon they share its unified memory.
  bool other_accelerators = false;
  for (const auto& d : devices)
    other_accelerators |= d.available && d.visible && d.family != Family::cpu && d.family != Family::npu;
  for (const auto& d : devices) {
    if (!d.available || !d.visible) continue;
    if (d.family == Family::npu && other_accelerators) {
      f.skipped.add(d, "NPUs are not combined with other accelerators in one plan");
      continue;
    }
    const DeviceKind* kind = nullptr;
    for (const auto& k : kinds)
      if (same_kind(*k.sample, d)) kind = &k;
    DeviceKind uncached;
    if (!kind) {
      DeviceKind k;
      k.sample = &d;
      k.spec = d.spec_id ? find_spec(*d.spec_id) : nullptr;
      if (!k.spec) k.spec = match_spec(d);
      DeviceTraits traits = traits_of(d);
      if (traits.compute_capability.empty() && k.spec) traits.compute_capability = k.spec->compute_capability;
      k.support = quantization_support(level, traits);
      k.compute = compute_type_on(level, traits);
      // A registry of thousands of different devices must not make this quadratic.
      if (kinds.size() < 64) {
        kinds.push_back(std::move(k));
        kind = &kinds.back();
      } else {
        uncached = std::move(k);
        kind = &uncached;
      }
    }
    const DeviceSpec* spec = kind->spec;
    if (d.family == Family::cpu) {
      if (f.host) continue;
      Device h;
      h.profile = &d;
      const std::optional<std::uint64_t> mem = d.memory_free_bytes ? d.memory_free_bytes : d.memory_bytes;
      if (!mem) continue;
      h.memory = *mem;
      h.capacity = static_cast<std::uint64_t>(static_cast<double>(*mem) * (1.0 - reserve));
      if (d.memory_bandwidth_gbps) {
        h.bandwidth_gbps = d.memory_bandwidth_gbps;
        h.bandwidth_reported = true;
      }
      f.host = h;
      continue;
    }
    const QuantizationSupport& support = kind->support;
    if (!support.usable()) {
      f.skipped.add(d, text::cat(to_string(level), " is ", to_string(support.level), " there (", support.reason, ")"));
      continue;
    }
    Device x;
    x.profile = &d;
    x.spec = spec;
    if (d.memory_bytes) x.memory = *d.memory_bytes;
    else if (spec) x.memory = spec->memory_bytes;
    if (x.memory == 0) {
      f.skipped.add(d, "memory size unknown and no published spec matches");
      continue;
    }
    double usable = static_cast<double>(x.memory) * (1.0 - reserve);
    if (d.backend == Backend::apple && d.memory_kind == MemoryKind::unified) usable *= apple_gpu_share;
    x.capacity = static_cast<std::uint64_t>(usable);
    if (d.memory_bandwidth_gbps && *d.memory_bandwidth_gbps > 0) {
      x.bandwidth_gbps = d.memory_bandwidth_gbps;
      x.bandwidth_reported = true;
    } else if (spec) {
      x.bandwidth_gbps = spec->memory_bandwidth_gbps;
    }
    x.peak_tflops = peak_for(spec, kind->compute);
    f.unified_memory |= d.memory_kind == MemoryKind::unified;
    if (d.index < (1u << 20)) {
      auto& table = by_index[static_cast<std::size_t>(d.backend)];
      if (table.size() <= d.index) table.resize(d.index + 1, UINT32_MAX);
      table[d.index] = static_cast<std::uint32_t>(f.accelerators.size());
    }
    f.accelerators.push_back(x);
  }
  f.indices.resize(f.accelerators.size());
  std::iota(f.indices.begin(), f.indices.end(), 0u);
  // High-bandwidth domains from the registry's links and interconnects.
  UnionFind uf(f.accelerators.size());
  std::vector<std::pair<std::uint32_t, double>> bandwidths;  // device, link bandwidth
  std::optional<std::unordered_map<std::string_view, std::uint32_t>> by_id;
  std::string_view last_prefix;  // ids come in runs of one backend: parse its name once
  std::optional<Backend> last_backend;
  const auto lookup = [&](std::string_view id) -> std::optional<std::uint32_t> {
    if (const auto colon = id.find(':'); colon != std::string_view::npos) {
      if (id.substr(0, colon) != last_prefix) {
        last_prefix = id.substr(0, colon);
        last_backend = parse_backend(last_prefix);
      }
      const auto backend = last_backend;
      const auto number = text::parse_u64(id.substr(colon + 1));
      if (backend && number) {
        const auto& table = by_index[static_cast<std::size_t>(*backend)];
        if (*number < table.size() && table[*number] != UINT32_MAX &&
            f.accelerators[table[*number]].profile->id == id)
          return table[*number];
      }
    }
    if (!by_id) {
      by_id.emplace();
      for (std::uint32_t i = 0; i < f.accelerators.size(); ++i) by_id->emplace(f.accelerators[i].profile->id, i);
    }
    const auto it = by_id->find(id);
    return it == by_id->end() ? std::nullopt : std::optional<std::uint32_t>(it->second);
  };
  for (const auto& l : registry.links()) {
    if (!high_bandwidth_link(l.kind)) continue;
    const auto a = lookup(l.a), b = lookup(l.b);
    if (!a || !b) continue;
    uf.join(*a, *b);
    if (l.bandwidth_gbps) bandwidths.emplace_back(*a, *l.bandwidth_gbps);
  }
  for (const auto& ic : registry.interconnects()) {
    if (!high_bandwidth_interconnect(ic.kind)) continue;
    std::optional<std::uint32_t> first;
    for (const auto& id : ic.device_ids) {
      const auto i = lookup(id);
      if (!i) continue;
      if (first) uf.join(*first, *i);
      else first = i;
      if (ic.bandwidth_gbps) bandwidths.emplace_back(*i, *ic.bandwidth_gbps);
    }
  }
  std::vector<std::uint32_t> domain_of_root(f.accelerators.size(), UINT32_MAX);
  std::vector<std::uint32_t> domain_sizes;
  for (std::uint32_t i = 0; i < f.accelerators.size(); ++i) {
    auto& domain = domain_of_root[uf.find(i)];
    if (domain == UINT32_MAX) {
      domain = static_cast<std::uint32_t>(domain_sizes.size());
      domain_sizes.push_back(0);
    }
    f.accelerators[i].domain = domain;
    ++domain_sizes[domain];
  }
  f.domains.resize(domain_sizes.size());
  for (std::size_t d = 0; d < domain_sizes.size(); ++d) f.domains[d].members.reserve(domain_sizes[d]);
  for (std::uint32_t i = 0; i < f.accelerators.size(); ++i) f.domains[f.accelerators[i].domain].members.push_back(i);
  for (const auto& [device, bw] : bandwidths) {
    auto& link = f.domains[f.accelerators[device].domain].link_gbps;
    link = link ? std::min(*link, bw) : bw;
  }
  for (auto& dom : f.domains) {
    if (dom.link_gbps || dom.members.size() < 2) continue;
    // No bandwidth in the registry: the products' published fabric, if all have one.
    std::optional<double> bw;
    for (auto m : dom.members) {
      const DeviceSpec* s = f.accelerators[m].spec;
      if (!s || !s->fabric || !s->fabric->bandwidth_gbps) {
        bw.reset();
        break;
      }
      bw = bw ? std::min(*bw, *s->fabric->bandwidth_gbps) : *s->fabric->bandwidth_gbps;
    }
    dom.link_gbps = bw;
  }
  return f;
}

// --- the per-level cost model ----------------------------------------------------

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

  std::uint64_t layers() const { return layout.layer_bytes.size(); }
  std::uint64_t layer_weights(std::uint64_t first, std::uint64_t count) const {
    return weight_prefix[first + count] - weight_prefix[first];
  }
  // KV cache of one layer on one device of a tensor-parallel group of t.
  std::uint64_t kv_per_layer(std::uint32_t t) const {
    if (t < kv_by_degree.size() && kv_by_degree[t] != 0) return kv_by_degree[t];
    const std::uint64_t bytes = compute_kv_per_layer(t);
    if (t < kv_by_degree.size()) kv_by_degree[t] = bytes;
    return bytes;
  }
  // Memo of kv_per_layer by degree (a cost model lives for one planning call).
  mutable std::array<std::uint64_t, 65> kv_by_degree{};
  std::uint64_t compute_kv_per_layer(std::uint32_t t) const {
    auto per_token = kv_cache_bytes_per_token_per_layer(arch, kv_type, t);
    if (!per_token) return 0;
    const auto tokens = text::checked_mul(context, batch);
    const auto bytes = tokens ? text::checked_mul(*tokens, *per_token) : std::nullopt;
    return bytes.value_or(std::numeric_limits<std::uint64_t>::max() / 4);
  }
  std::uint64_t activation(std::uint32_t t) const {
    if (t < activation_by_degree.size() && activation_by_degree[t] != 0) return activation_by_degree[t];
    const std::uint64_t bytes = activation_bytes(arch, context, batch, t);
    if (t < activation_by_degree.size()) activation_by_degree[t] = bytes;
    return bytes;
  }
  mutable std::array<std::uint64_t, 65> activation_by_degree{};
};

Result<CostModel> cost_model(const ModelDescription& model, QuantizationLevel level, QuantizationLevel kv_type,
                             std::uint64_t context, std::uint64_t batch) {
  auto layout = weight_layout(model, level);
  if (!layout) return fail(layout.error());
  CostModel c{model, model.architecture, level, kv_type, context, batch, std::move(*layout), {}, {}, {}, 0, {}, {}};
  const auto& a = model.architecture;
  const std::uint64_t n = c.layout.layer_bytes.size();
  c.weight_prefix.assign(n + 1, 0);
  c.active_weight_prefix.assign(n + 1, 0);
  c.active_param_prefix.assign(n + 1, 0);
  // Experts a batch touches per layer: each of E experts is missed by all B
  // tokens with probability (1 - k/E)^B.
  double expert_share = 1.0;
  if (a.moe.is_moe()) {
    const double e = a.moe.experts, k = a.moe.experts_per_token;
    expert_share = std::min(1.0, (1.0 - std::pow(1.0 - k / e, static_cast<double>(batch))));
  }
  // Parameters a token passes through per layer (dense and MoE layers differ).
  const auto layer_active_params = [&](std::uint32_t l) {
    double p = 0;
    for (const auto& g : layer_tensors(a, l)) {
      const bool routed = g.role == TensorRole::expert_gate || g.role == TensorRole::expert_up ||
                          g.role == TensorRole::expert_down;
      p += static_cast<double>(g.rows) * static_cast<double>(g.cols) *
           static_cast<double>(routed ? a.moe.experts_per_token : g.count);
    }
    return p;
  };
  const double params_scale = model.architecture_assumed && model.parameters > 0
                                  ? static_cast<double>(model.parameters) /
                                        static_cast<double>(count_parameters(a).value_or(ParameterCount{1, 1, 0}).total)
                                  : 1.0;
  std::optional<double> dense_params, moe_params;
  for (std::uint64_t l = 0; l < n; ++l) {
    const std::uint64_t w = c.layout.layer_bytes[l];
    const std::uint64_t e = l < c.layout.layer_expert_bytes.size() ? c.layout.layer_expert_bytes[l] : 0;
    const auto read = static_cast<std::uint64_t>(static_cast<double>(w - std::min(w, e)) + static_cast<double>(e) * expert_share);
    c.weight_prefix[l + 1] = sat_add(c.weight_prefix[l], w);
    c.active_weight_prefix[l + 1] = sat_add(c.active_weight_prefix[l], read);
    double p = 0;
    if (l < a.layers) {
      auto& cached = a.is_moe_layer(static_cast<std::uint32_t>(l)) ? moe_params : dense_params;
      if (!cached) cached = layer_active_params(static_cast<std::uint32_t>(l));
      p = *cached * params_scale;
    }
    c.active_param_prefix[l + 1] = c.active_param_prefix[l] + p;
  }
  c.head_params = static_cast<double>(a.vocab_size) * static_cast<double>(a.hidden_size) * params_scale;
  return c;
}

// --- pipelines -------------------------------------------------------------------

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

StageFixed fixed_for(const CostModel& c, Backend backend, std::uint32_t t, bool communicates, bool embedding, bool head) {
  StageFixed f;
  f.overhead = runtime_overhead(backend, communicates).bytes;
  f.activation = c.activation(t);
  if (embedding) f.embedding = div_up(c.layout.embedding_bytes, t);
  if (head) f.head = div_up(c.layout.head_bytes + c.layout.other_bytes, t);
  return f;
}

Backend backend_of(const Fleet& f, const Group& g) { return f.accelerators[g.members.front()].profile->backend; }

// Splits layers over the stages (contiguous, in order): in proportion to
// each stage's free memory, or, when rounding makes that overflow a stage,
// by filling each stage in turn. Returns false when the layers do not fit.
bool assign_layers(const CostModel& c, std::uint32_t t, std::vector<Stage>& stages,
                   const std::vector<std::uint64_t>& free_bytes) {
  const std::uint64_t n = c.layers();
  const std::size_t p = stages.size();
  if (p == 0 || p > n) return false;
  const std::uint64_t kv = c.kv_per_layer(t);
  const auto cost = [&](std::uint64_t first, std::uint64_t count) {
    return sat_add(div_up(c.layer_weights(first, count), t), kv * count);
  };
  const auto fits_all = [&] {
    for (std::size_t j = 0; j < p; ++j)
      if (cost(stages[j].first_layer, stages[j].layer_count) > free_bytes[j]) return false;
    return true;
  };
  const double total_free = std::accumulate(free_bytes.begin(), free_bytes.end(), 0.0,
                                            [](double s, std::uint64_t b) { return s + static_cast<double>(b); });
  if (total_free <= 0) return false;
  const double total_cost = static_cast<double>(cost(0, n));
  if (total_cost > total_free) return false;
  // Proportional boundaries on the cumulative cost.
  std::uint64_t next = 0;
  double cumulative_free = 0;
  for (std::size_t j = 0; j < p; ++j) {
    cumulative_free += static_cast<double>(free_bytes[j]);
    const std::uint64_t must_leave = p - 1 - j;
    std::uint64_t end = next + 1;
    if (j + 1 == p) {
      end = n;
    } else {
      const double target = total_cost * cumulative_free / total_free;
      while (end < n - must_leave && static_cast<double>(cost(0, end + 1)) <= target + 0.5 * static_cast<double>(cost(end, 1)))
        ++end;
    }
    stages[j].first_layer = next;
    stages[j].layer_count = end - next;
    next = end;
  }
  if (fits_all()) return true;
  // Fill in order.
  next = 0;
  for (std::size_t j = 0; j < p; ++j) {
    const std::uint64_t must_leave = p - 1 - j;
    std::uint64_t count = 0;
    if (j + 1 == p) {
      count = n - next;
    } else {
      while (next + count < n - must_leave && cost(next, count + 1) <= free_bytes[j]) ++count;
      if (count == 0) return false;
    }
    stages[j].first_layer = next;
    stages[j].layer_count = count;
    next += count;
  }
  return fits_all();
}

// A pipeline over `groups` (in order) that holds the model, or nullopt.
std::optional<Replica> fit_pipeline(const Fleet& f, const CostModel& c, std::uint32_t t,
                                    std::span<const Group* const> groups) {
  const std::size_t p = groups.size();
  if (p == 0 || p > c.layers()) return std::nullopt;
  Replica r;
  r.tp = t;
  std::vector<std::uint64_t> free_bytes(p);
  const bool communicates = t > 1 || p > 1;
  for (std::size_t j = 0; j < p; ++j) {
    const StageFixed fixed = fixed_for(c, backend_of(f, *groups[j]), t, communicates, j == 0, j + 1 == p);
    if (fixed.total() >= groups[j]->capacity) return std::nullopt;
    free_bytes[j] = groups[j]->capacity - fixed.total();
    r.stages.push_back(Stage{groups[j], 0, 0, j == 0, j + 1 == p});
  }
  if (!assign_layers(c, t, r.stages, free_bytes)) return std::nullopt;
  return r;
}

// The shortest prefix of `groups` (from `start`) that holds a replica.
std::optional<Replica> first_fit(const Fleet& f, const CostModel& c, std::uint32_t t,
                                 const std::vector<const Group*>& groups, std::size_t start) {
  const std::uint64_t layer_total = sat_add(div_up(c.layer_weights(0, c.layers()), t), c.kv_per_layer(t) * c.layers());
  const std::uint64_t need = sat_add(layer_total, div_up(c.layout.embedding_bytes + c.layout.head_bytes, t));
  std::uint64_t have = 0;
  const std::size_t max_stages = std::min<std::size_t>(groups.size() - start, c.layers());
  for (std::size_t p = 1; p <= max_stages; ++p) {
    const Group& g = *groups[start + p - 1];
    const std::uint64_t fixed = runtime_overhead(backend_of(f, g), true).bytes + c.activation(t);
    have += g.capacity > fixed ? g.capacity - fixed : 0;
    if (have < need) continue;  // cannot hold it yet: skip the exact check
    if (auto r = fit_pipeline(f, c, t, std::span(groups).subspan(start, p))) return r;
  }
  return std::nullopt;
}

std::vector<Group> make_groups(const Fleet& f, std::uint32_t t) {
  std::vector<Group> groups;
  std::size_t count = 0;
  for (const auto& dom : f.domains) count += dom.members.size() / t;
  groups.reserve(count);
  for (const auto& dom : f.domains) {
    for (std::size_t i = 0; i + t <= dom.members.size(); i += t) {
      Group g{std::span<const std::uint32_t>(dom.members).subspan(i, t), std::numeric_limits<std::uint64_t>::max()};
      for (auto m : g.members) g.capacity = std::min(g.capacity, f.accelerators[m].capacity);
      groups.push_back(g);
    }
  }
  return groups;
}

// A group of the single accelerator i.
Group single(const Fleet& f, std::uint32_t i) {
  return Group{std::span<const std::uint32_t>(f.indices).subspan(i, 1), f.accelerators[i].capacity};
}

std::vector<std::uint32_t> tensor_parallel_degrees(const ModelArchitecture& a, std::size_t max_domain) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t t = 1; t <= max_domain && t <= a.attention_heads; ++t) {
    if (a.attention_heads % t != 0) continue;
    if (!a.mla && a.kv_heads % t != 0 && t % a.kv_heads != 0) continue;
    const bool dense_layers = !a.moe.is_moe() || a.moe.first_dense_layers > 0;
    if (dense_layers && a.intermediate_size % t != 0) continue;
    if (a.moe.is_moe() && a.moe.expert_intermediate_size % t != 0) continue;
    out.push_back(t);
  }
  return out;
}

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

  std::size_t replica_total() const noexcept { return uniform ? replica_count : replicas.size(); }
  // Stage `stage` of replica `replica`.
  Stage stage(std::size_t replica, std::size_t stage) const {
    if (!uniform) return replicas[replica].stages[stage];
    Stage st = replicas.front().stages[stage];
    if (replica > 0) st.group = order[replica * replicas.front().stages.size() + stage];
    return st;
  }
  const Replica& shape(std::size_t replica) const { return uniform ? replicas.front() : replicas[replica]; }
};

struct StageSpeed {
  std::optional<double> bandwidth_gbps;  // slowest member
  std::optional<double> peak_tflops;     // slowest member
  bool host = false;
};

StageSpeed speed_of(const Fleet& f, const Stage& st) {
  StageSpeed s;
  if (!st.group) {
    s.host = true;
    if (f.host) s.bandwidth_gbps = f.host->bandwidth_gbps;
    return s;
  }
  bool all_bw = true, all_peak = true;
  for (auto m : st.group->members) {
    const Device& d = f.accelerators[m];
    if (d.bandwidth_gbps) s.bandwidth_gbps = s.bandwidth_gbps ? std::min(*s.bandwidth_gbps, *d.bandwidth_gbps) : *d.bandwidth_gbps;
    else all_bw = false;
    if (d.peak_tflops) s.peak_tflops = s.peak_tflops ? std::min(*s.peak_tflops, *d.peak_tflops) : *d.peak_tflops;
    else all_peak = false;
  }
  if (!all_bw) s.bandwidth_gbps.reset();
  if (!all_peak) s.peak_tflops.reset();
  return s;
}

std::optional<double> link_of(const Fleet& f, const Stage& st) {
  if (!st.group) return std::nullopt;
  return f.domains[f.accelerators[st.group->members.front()].domain].link_gbps;
}

struct DecodeTime {
  std::optional<double> step_s;
  std::optional<double> ceiling_step_s;
  std::string bottleneck = "unknown";
};

DecodeTime decode_time(const Fleet& f, const CostModel& c, const Replica& r) {
  DecodeTime out;
  const auto& a = c.arch;
  const double b = static_cast<double>(c.batch);
  double total = 0, ceiling = 0, mem = 0, compute = 0, comm = 0, host = 0;
  for (const auto& st : r.stages) {
    const std::uint32_t t = st.group ? r.tp : 1;
    const StageSpeed sp = speed_of(f, st);
    if (!sp.bandwidth_gbps) return out;
    double bytes = static_cast<double>(c.active_weight_prefix[st.first_layer + st.layer_count] -
                                       c.active_weight_prefix[st.first_layer]) /
                       t +
                   static_cast<double>(c.kv_per_layer(t)) * static_cast<double>(st.layer_count);
    double params = c.active_param_prefix[st.first_layer + st.layer_count] - c.active_param_prefix[st.first_layer];
    if (st.head) {
      bytes += static_cast<double>(c.layout.head_bytes) / t;
      params += c.head_params;
    }
    const double flops = (2.0 * b * params + 4.0 * b * static_cast<double>(c.context) * static_cast<double>(a.q_width()) *
                                                 static_cast<double>(st.layer_count)) /
                         t;
    const double mem_s = bytes / (*sp.bandwidth_gbps * 1e9 * bandwidth_efficiency);
    const double compute_s = sp.peak_tflops ? flops / (*sp.peak_tflops * 1e12 * compute_efficiency) : 0.0;
    double comm_s = 0;
    if (t > 1) {
      const double message = b * static_cast<double>(a.hidden_size) * 2;
      const auto link = link_of(f, st);
      const double per = allreduce_latency_s + (link ? 2.0 * (t - 1) / t * message / (*link * 1e9) : 0.0);
      comm_s = 2.0 * static_cast<double>(st.layer_count) * per;
    }
    ceiling += bytes / (*sp.bandwidth_gbps * 1e9);
    const double stage = std::max(mem_s, compute_s) + comm_s;
    total += stage;
    if (sp.host && !f.accelerators.empty()) host += stage;
    else if (compute_s > mem_s) compute += compute_s;
    else mem += mem_s;
    comm += comm_s;
  }
  const double hops = static_cast<double>(r.stages.size() - 1) * pipeline_hop_latency_s;
  total += hops;
  comm += hops;
  out.step_s = total;
  out.ceiling_step_s = ceiling;
  const double top = std::max({mem, compute, comm, host});
  out.bottleneck = top == host && host > 0   ? "host_memory_bandwidth"
                   : top == comm && comm > 0 ? "interconnect"
                   : top == compute          ? (compute > 0 ? "compute" : "memory_bandwidth")
                                             : "memory_bandwidth";
  return out;
}

// The best layout of accelerators alone, or an empty one when nothing fits.
// For each tensor-parallel degree: the first replica takes the fewest
// stages that hold the model, the groups left form further data-parallel
// replicas, and the layout is scored by its estimated decode rate: all
// replicas together for the throughput objective, one sequence for latency.
// Without bandwidth figures the score falls back to replicas, then degree.
Layout search(const Fleet& f, const CostModel& c, PlanObjective objective) {
  Layout best;
  if (f.accelerators.empty()) return best;
  std::size_t max_domain = 1;
  for (const auto& d : f.domains) max_domain = std::max(max_domain, d.members.size());
  const auto ordered = [](const std::vector<Group>& groups) {
    std::vector<const Group*> order;
    order.reserve(groups.size());
    bool equal = true;
    for (const auto& g : groups) {
      order.push_back(&g);
      equal &= g.capacity == groups.front().capacity;
    }
    // Largest first; equal capacities keep their order (the groups live in one vector).
    if (!equal)
      std::sort(order.begin(), order.end(), [](const Group* a, const Group* b) {
        return a->capacity != b->capacity ? a->capacity > b->capacity : a < b;
      });
    return order;
  };
  // Groups that are all alike (one product, one capacity) give identical replicas.
  const auto uniform = [&](const std::vector<const Group*>& order) {
    for (const auto* g : order)
      if (g->capacity != order.front()->capacity || backend_of(f, *g) != backend_of(f, *order.front())) return false;
    return true;
  };
  const auto form = [&](Layout& l, const std::vector<const Group*>& order, bool keep) {
    std::size_t used = 0, replicas = 0;
    if (uniform(order)) {
      // Identical groups: every replica is the first one on other groups.
      auto first = first_fit(f, c, l.tp, order, 0);
      if (!first) return std::size_t{0};
      const std::size_t stages = first->stages.size();
      replicas = order.size() / stages;
      l.uniform = true;
      l.replica_count = replicas;
      l.replicas.push_back(std::move(*first));
      if (keep) l.order = order;  // replica r's stage j runs on order[r * stages + j]
      l.idle_devices = f.accelerators.size() - replicas * stages * l.tp;
      return replicas;
    }
    while (used < order.size()) {
      auto next = first_fit(f, c, l.tp, order, used);
      if (!next) break;
      used += next->stages.size();
      ++replicas;
      if (keep || replicas == 1) l.replicas.push_back(std::move(*next));
    }
    l.idle_devices = f.accelerators.size() - used * l.tp;
    return replicas;
  };
  struct Score {
    std::uint32_t t = 0;
    std::size_t replicas = 0;
    std::size_t stages = 0;
    std::optional<double> step_s;
  };
  std::optional<Score> best_score;
  const auto better = [&](const Score& a, const Score& b) {
    if (a.step_s && b.step_s) {
      if (objective == PlanObjective::throughput) {
        const double ra = static_cast<double>(a.replicas) / *a.step_s, rb = static_cast<double>(b.replicas) / *b.step_s;
        if (std::abs(ra - rb) > 1e-9 * std::max(ra, rb)) return ra > rb;
      } else if (std::abs(*a.step_s - *b.step_s) > 1e-12) {
        return *a.step_s < *b.step_s;
      }
    } else if (objective == PlanObjective::throughput && a.replicas != b.replicas) {
      return a.replicas > b.replicas;
    }
    if (a.t != b.t) return a.t > b.t;
    return a.stages < b.stages;
  };
  for (auto t : tensor_parallel_degrees(c.arch, max_domain)) {
    Layout candidate;
    candidate.tp = t;
    candidate.groups = make_groups(f, t);
    if (candidate.groups.empty()) continue;
    const std::size_t replicas = form(candidate, ordered(candidate.groups), true);
    if (replicas == 0) continue;
    Score score{t, replicas, candidate.replicas.front().stages.size(), decode_time(f, c, candidate.replicas.front()).step_s};
    if (best_score && !better(score, *best_score)) continue;
    best_score = score;
    best = std::move(candidate);  // the groups move with their buffer: pointers into them stay valid
  }
  best.fits = best_score.has_value();
  return best;
}

// Accelerators hold what they can of the first layers (llama.cpp -ngl); the
// host keeps the token embedding, the remaining layers and the head.
std::optional<Layout> offload(const Fleet& f, const CostModel& c) {
  if (!f.host || f.unified_memory) return std::nullopt;
  Layout out;
  out.tp = 1;
  for (std::uint32_t i = 0; i < f.accelerators.size(); ++i) out.groups.push_back(single(f, i));
  Replica r;
  std::uint64_t next = 0;
  const std::uint64_t kv = c.kv_per_layer(1);
  const std::uint64_t n = c.layers();
  for (const auto& g : out.groups) {
    if (next >= n) break;
    const std::uint64_t fixed = runtime_overhead(backend_of(f, g), true).bytes + c.activation(1);
    if (g.capacity <= fixed) continue;
    const std::uint64_t free = g.capacity - fixed;
    std::uint64_t count = 0;
    while (next + count < n && sat_add(c.layer_weights(next, count + 1), kv * (count + 1)) <= free) ++count;
    if (count == 0) continue;
    r.stages.push_back(Stage{&g, next, count, false, false});
    next += count;
  }
  Stage host{nullptr, next, n - next, true, true};
  r.stages.push_back(host);
  const std::uint64_t host_need =
      sat_add(sat_add(c.layer_weights(next, n - next), kv * (n - next)),
              sat_add(c.layout.embedding_bytes + c.layout.head_bytes + c.layout.other_bytes, c.activation(1)));
  out.fits = host_need <= f.host->capacity;
  out.replicas.push_back(std::move(r));
  return out;
}

// Whatever the devices can do when nothing fits: every accelerator in one
// pipeline (so the shortfall shows per device), or the host alone.
Layout best_effort(const Fleet& f, const CostModel& c) {
  Layout out;
  out.tp = 1;
  Replica r;
  if (!f.accelerators.empty()) {
    for (std::uint32_t i = 0; i < f.accelerators.size() && i < c.layers(); ++i)
      out.groups.push_back(single(f, i));
    std::vector<std::uint64_t> free_bytes;
    for (std::size_t j = 0; j < out.groups.size(); ++j) {
      r.stages.push_back(Stage{&out.groups[j], 0, 0, j == 0, j + 1 == out.groups.size()});
      free_bytes.push_back(std::max<std::uint64_t>(out.groups[j].capacity, 1));
    }
    // Proportional split even though it overflows: assign_layers' first pass.
    const std::uint64_t n = c.layers();
    const double total = std::accumulate(free_bytes.begin(), free_bytes.end(), 0.0,
                                         [](double s, std::uint64_t b) { return s + static_cast<double>(b); });
    std::uint64_t next = 0;
    double cumulative = 0;
    for (std::size_t j = 0; j < r.stages.size(); ++j) {
      cumulative += static_cast<double>(free_bytes[j]);
      const std::uint64_t remaining_stages = r.stages.size() - 1 - j;
      std::uint64_t end = j + 1 == r.stages.size()
                              ? n
                              : std::clamp<std::uint64_t>(static_cast<std::uint64_t>(std::llround(n * cumulative / total)),
                                                          next + 1, n - remaining_stages);
      r.stages[j].first_layer = next;
      r.stages[j].layer_count = end - next;
      next = end;
    }
  } else {
    r.stages.push_back(Stage{nullptr, 0, c.layers(), true, true});
  }
  out.replicas.push_back(std::move(r));
  return out;
}

Layout place(const Fleet& f, const CostModel& c, const InferenceSettings& s) {
  Layout l = search(f, c, s.objective);
  if (l.fits) return l;
  if (f.accelerators.empty() && f.host) {
    // CPU only: everything in host memory.
    Layout cpu;
    Replica r;
    r.stages.push_back(Stage{nullptr, 0, c.layers(), true, true});
    cpu.replicas.push_back(std::move(r));
    const std::uint64_t need = sat_add(sat_add(c.layout.total(), c.kv_per_layer(1) * c.layers()), c.activation(1));
    cpu.fits = need <= f.host->capacity;
    return cpu;
  }
  if (s.allow_cpu_offload && !f.accelerators.empty())
    if (auto o = offload(f, c); o && o->fits) return std::move(*o);
  return best_effort(f, c);
}

// --- shards, memory, throughput --------------------------------------------------

struct StageDevice {
  const Device* device;
  std::string_view id;
};

void emit_shards(const Fleet& f, const CostModel& c, const Layout& l, Plan& plan) {
  std::size_t count = 0;
  for (std::size_t ri = 0; ri < l.replica_total(); ++ri)
    for (const auto& st : l.shape(ri).stages) count += st.group ? st.group->members.size() : 1;
  plan.shards.reserve(count);
  for (std::uint32_t ri = 0; ri < l.replica_total(); ++ri) {
    const Replica& r = l.shape(ri);
    const bool communicates = r.tp > 1 || r.stages.size() > 1;
    for (std::uint32_t si = 0; si < r.stages.size(); ++si) {
      const Stage st = l.stage(ri, si);
      const std::uint32_t t = st.group ? r.tp : 1;
      const std::uint32_t ranks = st.group ? static_cast<std::uint32_t>(st.group->members.size()) : 1;
      // Every rank of a stage holds the same bytes: work them out once.
      const Backend backend = st.group ? backend_of(f, *st.group) : Backend::cpu;
      const StageFixed fixed = fixed_for(c, backend, t, communicates && st.group, st.embedding, st.head);
      const std::uint64_t weights =
          sat_add(div_up(c.layer_weights(st.first_layer, st.layer_count), t), sat_add(fixed.embedding, fixed.head));
      const std::uint64_t kv = c.kv_per_layer(t) * st.layer_count;
      const std::uint64_t total = sat_add(sat_add(weights, kv), sat_add(fixed.activation, fixed.overhead));
      for (std::uint32_t k = 0; k < ranks; ++k) {
        const Device& d = st.group ? f.accelerators[st.group->members[k]] : *f.host;
        Shard& s = plan.shards.emplace_back();  // in place: a 10 000-device plan copies no shard
        s.device = d.profile->id;
        s.device_name = d.profile->name;
        if (d.spec) s.spec_id.emplace(d.spec->id);
        s.replica = ri;
        s.stage = si;
        s.tp_rank = k;
        s.first_layer = static_cast<std::uint32_t>(st.first_layer);
        s.layer_count = static_cast<std::uint32_t>(st.layer_count);
        s.embedding = st.embedding;
        s.head = st.head;
        s.cpu_offload = st.group == nullptr && !f.accelerators.empty();
        s.weights_bytes = weights;
        s.kv_cache_bytes = kv;
        s.activation_bytes = fixed.activation;
        s.overhead_bytes = fixed.overhead;
        s.total_bytes = total;
        s.capacity_bytes = d.capacity;
      }
    }
  }
}

struct PrefillTime {
  std::optional<double> seconds;
  std::string bottleneck = "unknown";
};

PrefillTime prefill_time(const Fleet& f, const CostModel& c, const Replica& r) {
  PrefillTime out;
  const auto& a = c.arch;
  const double b = static_cast<double>(c.batch);
  const double n = static_cast<double>(c.context);
  double total = 0, compute = 0, mem = 0, comm = 0;
  for (const auto& st : r.stages) {
    const std::uint32_t t = st.group ? r.tp : 1;
    const StageSpeed sp = speed_of(f, st);
    if (!sp.peak_tflops || !sp.bandwidth_gbps) return out;
    double params = c.active_param_prefix[st.first_layer + st.layer_count] - c.active_param_prefix[st.first_layer];
    // Causal attention: QK^T and AV over half the n x n score matrix, 2 FLOPs each.
    double flops = 2.0 * b * n * params + 2.0 * b * n * n * static_cast<double>(a.q_width()) * static_cast<double>(st.layer_count);
    if (st.head) flops += 2.0 * b * c.head_params;  // logits of the last token only
    flops /= t;
    const double compute_s = flops / (*sp.peak_tflops * 1e12 * compute_efficiency);
    const double weights = static_cast<double>(c.layer_weights(st.first_layer, st.layer_count)) / t;
    const double mem_s = weights / (*sp.bandwidth_gbps * 1e9 * bandwidth_efficiency);
    double comm_s = 0;
    if (t > 1) {
      const double message = b * n * static_cast<double>(a.hidden_size) * 2;
      const auto link = link_of(f, st);
      const double per = allreduce_latency_s + (link ? 2.0 * (t - 1) / t * message / (*link * 1e9) : 0.0);
      comm_s = 2.0 * static_cast<double>(st.layer_count) * per;
    }
    total += std::max(compute_s, mem_s) + comm_s;
    if (compute_s >= mem_s) compute += compute_s;
    else mem += mem_s;
    comm += comm_s;
  }
  total += static_cast<double>(r.stages.size() - 1) * pipeline_hop_latency_s;
  out.seconds = total;
  const double top = std::max({compute, mem, comm});
  out.bottleneck = top == comm && comm > 0 ? "interconnect" : top == compute ? "compute" : "memory_bandwidth";
  return out;
}

// --- launch hints ----------------------------------------------------------------

std::string visible_devices_variable(Backend b) {
  switch (b) {
    case Backend::cuda: return "CUDA_VISIBLE_DEVICES";
    case Backend::rocm: return "HIP_VISIBLE_DEVICES";
    case Backend::gaudi: return "HABANA_VISIBLE_MODULES";
    case Backend::tpu: return "TPU_VISIBLE_CHIPS";
    default: return {};
  }
}

bool vllm_backend(Backend b) {
  return b == Backend::cuda || b == Backend::rocm || b == Backend::tpu || b == Backend::gaudi ||
         b == Backend::aws_neuron || b == Backend::intel_oneapi;
}

std::string model_argument(const ModelDescription& m) {
  if (m.source == ModelSource::catalogue)
    if (const auto* e = find_catalogue_model(m.origin)) return std::string(e->hf_repo);
  if (!m.origin.empty()) return m.origin;
  return "<model>";
}

LaunchHints launch_hints(const Fleet& f, const CostModel& c, const Layout& l, const InferenceSettings& s,
                         const ModelDescription& m, const Plan& plan) {
  LaunchHints h;
  if (l.replicas.empty()) return h;
  const Replica& r = l.replicas.front();
  std::vector<const Device*> gpus;
  for (const auto& st : r.stages)
    if (st.group)
      for (auto i : st.group->members) gpus.push_back(&f.accelerators[i]);
  if (!gpus.empty()) {
    const Backend b = gpus.front()->profile->backend;
    const std::string var = visible_devices_variable(b);
    bool same_backend = true;
    for (const auto* d : gpus) same_backend &= d->profile->backend == b;
    if (!var.empty() && same_backend) {
      std::string list;
      for (const auto* d : gpus) {
        if (!list.empty()) list += ',';
        text::append_uint(list, d->profile->runtime_index.value_or(d->profile->index));
      }
      h.visible_devices = var + "=" + list;
    }
    const QuantizationLevel q = plan.quantization;
    if (same_backend && vllm_backend(b) && info(q).family != QuantizationFamily::gguf && plan.strategy.cpu_offload_layers == 0) {
      std::string cmd = text::cat("vllm serve ", model_argument(m), " --tensor-parallel-size ", plan.strategy.tensor_parallel,
                                  " --pipeline-parallel-size ", plan.strategy.pipeline_parallel);
      if (plan.strategy.data_parallel > 1) cmd += text::cat(" --data-parallel-size ", plan.strategy.data_parallel);
      cmd += text::cat(" --max-model-len ", s.context, " --max-num-seqs ", s.batch, " --gpu-memory-utilization ",
                       std::round((1.0 - s.reserve_fraction) * 100) / 100);
      switch (q) {
        case QuantizationLevel::bf16: cmd += " --dtype bfloat16"; break;
        case QuantizationLevel::fp16: cmd += " --dtype float16"; break;
        case QuantizationLevel::fp32: cmd += " --dtype float32"; break;
        case QuantizationLevel::fp8_e4m3:
        case QuantizationLevel::fp8_e5m2: cmd += " --quantization fp8"; break;
        case QuantizationLevel::nf4: cmd += " --quantization bitsandbytes"; break;
        case QuantizationLevel::int4: cmd += "  # an AWQ or GPTQ checkpoint"; break;
        case QuantizationLevel::int8: cmd += "  # a W8A8 (compressed-tensors) checkpoint"; break;
        default: break;
      }
      if (plan.kv_cache_type == QuantizationLevel::fp8_e4m3) cmd += " --kv-cache-dtype fp8_e4m3";
      if (plan.kv_cache_type == QuantizationLevel::fp8_e5m2) cmd += " --kv-cache-dtype fp8_e5m2";
      h.vllm = std::move(cmd);
    }
  }
  const QuantizationLevel q = plan.quantization;
  const bool gguf_format = info(q).family == QuantizationFamily::gguf || q == QuantizationLevel::fp16 ||
                           q == QuantizationLevel::bf16 || q == QuantizationLevel::fp32;
  // llama.cpp runs on CPUs and on CUDA, ROCm, Metal, Vulkan and SYCL GPUs.
  bool llama_cpp_devices = true;
  for (const auto* d : gpus) {
    const Backend b = d->profile->backend;
    llama_cpp_devices &= b == Backend::cuda || b == Backend::rocm || b == Backend::apple || b == Backend::vulkan ||
                         b == Backend::intel_oneapi;
  }
  if (gguf_format && llama_cpp_devices && plan.strategy.tensor_parallel == 1) {
    std::uint64_t gpu_layers = 0;
    std::string split;
    for (const auto& st : r.stages) {
      if (!st.group) continue;
      gpu_layers += st.layer_count;
      if (!split.empty()) split += ',';
      text::append_uint(split, st.layer_count);
    }
    // -ngl counts the output layer too: one more than the blocks offloads everything.
    const bool all_on_gpu = !gpus.empty() && gpu_layers == c.layers();
    std::string cmd = text::cat("llama-server -m ", m.source == ModelSource::gguf ? m.origin : std::string("<model>.gguf"),
                                " -c ", s.context * s.batch, " -np ", s.batch, " -ngl ",
                                all_on_gpu ? gpu_layers + 1 : gpu_layers);
    if (r.stages.size() > 1 && gpus.size() > 1) cmd += " --split-mode layer --tensor-split " + split;
    if (plan.kv_cache_type != QuantizationLevel::fp16 && kv_cache_bits(plan.kv_cache_type) &&
        info(plan.kv_cache_type).family == QuantizationFamily::gguf)
      cmd += text::cat(" --cache-type-k ", to_string(plan.kv_cache_type), " --cache-type-v ", to_string(plan.kv_cache_type));
    h.llama_cpp = std::move(cmd);
  }
  return h;
}

// --- assembling a plan -----------------------------------------------------------

// The levels a suggestion tries, best first, for the registry's accelerators:
// serving-engine formats for datacenter accelerators, llama.cpp GGUF for
// CPUs, Apple and Vulkan GPUs, fp16/int8/int4 for NPUs.
std::vector<QuantizationLevel> ladder(const AcceleratorRegistry& registry, std::optional<QuantizationFamily> family) {
  using Q = QuantizationLevel;
  const std::vector<Q> datacenter = {Q::bf16, Q::fp16, Q::fp8_e4m3, Q::int8, Q::int4};
  const std::vector<Q> gguf = {Q::bf16, Q::fp16, Q::q8_0, Q::q6_k, Q::q5_k_m, Q::q4_k_m, Q::q3_k_m, Q::q2_k};
  const std::vector<Q> npu = {Q::fp16, Q::int8, Q::int4};
  if (family) return *family == QuantizationFamily::gguf ? gguf : datacenter;
  std::size_t datacenter_votes = 0, gguf_votes = 0, npu_votes = 0;
  for (const auto& d : registry.devices()) {
    if (!d.available || !d.visible || d.family == Family::cpu) continue;
    if (d.backend == Backend::apple && d.family == Family::gpu) ++gguf_votes;
    else if (d.backend == Backend::vulkan) ++gguf_votes;
    else if (d.family == Family::npu) ++npu_votes;
    else ++datacenter_votes;
  }
  if (datacenter_votes + gguf_votes + npu_votes == 0) return gguf;
  if (npu_votes > datacenter_votes && npu_votes > gguf_votes) return npu;
  return gguf_votes > datacenter_votes ? gguf : datacenter;
}

Result<Plan> build_plan(const AcceleratorRegistry& registry, const ModelDescription& model, const InferenceSettings& s,
                        QuantizationLevel level, bool suggested) {
  const QuantizationLevel kv_type = s.kv_cache_type.value_or(default_kv_cache_type(level));
  auto cost = cost_model(model, level, kv_type, s.context, s.batch);
  if (!cost) return fail(cost.error());
  const CostModel& c = *cost;
  Fleet f = gather(registry, level, s.reserve_fraction);
  if (f.accelerators.empty() && !f.host)
    return fail(ErrorKind::unsupported,
                text::cat("no available device can run ", to_string(level),
                          f.skipped.by_reason.empty() ? std::string(" (the registry has no usable device)")
                                                      : std::string(" (see the devices' reasons with --json)")));
  const Layout l = place(f, c, s);

  Plan plan;
  plan.model_name = model.name;
  plan.model_source = model.source;
  plan.parameters = model.parameters;
  plan.active_parameters = model.active_parameters;
  plan.layers = model.architecture.layers;
  plan.architecture_assumed = model.architecture_assumed;
  plan.quantization = level;
  plan.quantization_suggested = suggested;
  plan.kv_cache_type = kv_type;
  plan.context = s.context;
  plan.batch = s.batch;
  plan.reserve_fraction = s.reserve_fraction;
  plan.fits = l.fits;
  plan.weight_bits_per_parameter =
      model.parameters ? static_cast<double>(c.layout.total()) * 8.0 / static_cast<double>(model.parameters) : 0.0;

  const Replica& first = l.replicas.front();
  std::uint32_t offloaded = 0, accelerator_stages = 0;
  for (const auto& st : first.stages) {
    if (st.group) ++accelerator_stages;
    else if (!f.accelerators.empty()) offloaded += static_cast<std::uint32_t>(st.layer_count);
  }
  plan.strategy.tensor_parallel = l.tp;
  plan.strategy.pipeline_parallel = std::max<std::uint32_t>(accelerator_stages, 1);
  plan.strategy.data_parallel = static_cast<std::uint32_t>(l.replica_total());
  plan.strategy.cpu_offload_layers = offloaded;

  emit_shards(f, c, l, plan);
  // Replica 0's memory, summed over its devices.
  if (auto per_token = kv_cache_bytes_per_token(model.architecture, kv_type)) plan.memory.kv_cache_bytes_per_token = *per_token;
  for (const auto& sh : plan.shards) {
    if (sh.replica != 0) break;
    plan.memory.weights_bytes = sat_add(plan.memory.weights_bytes, sh.weights_bytes);
    plan.memory.kv_cache_bytes = sat_add(plan.memory.kv_cache_bytes, sh.kv_cache_bytes);
    plan.memory.activation_bytes = sat_add(plan.memory.activation_bytes, sh.activation_bytes);
    plan.memory.overhead_bytes = sat_add(plan.memory.overhead_bytes, sh.overhead_bytes);
  }
  plan.memory.total_bytes = sat_add(sat_add(plan.memory.weights_bytes, plan.memory.kv_cache_bytes),
                                    sat_add(plan.memory.activation_bytes, plan.memory.overhead_bytes));
  for (const auto& sh : plan.shards)
    if (sh.total_bytes > sh.capacity_bytes) plan.fits = false;

  // Throughput.
  const DecodeTime d0 = decode_time(f, c, first);
  ThroughputEstimate& tp = plan.throughput;
  tp.decode_bottleneck = d0.bottleneck;
  if (d0.step_s && *d0.step_s > 0) {
    tp.decode_tokens_per_s = 1.0 / *d0.step_s;
    tp.decode_ceiling_tokens_per_s = 1.0 / *d0.ceiling_step_s;
    double total = 0;
    bool all = true;
    if (l.uniform) {
      total = static_cast<double>(s.batch) * static_cast<double>(l.replica_total()) / *d0.step_s;
    } else {
      for (const auto& r : l.replicas) {
        const DecodeTime d = &r == &first ? d0 : decode_time(f, c, r);
        if (!d.step_s || *d.step_s <= 0) {
          all = false;
          break;
        }
        total += static_cast<double>(s.batch) / *d.step_s;
      }
    }
    if (all) tp.decode_tokens_per_s_total = total;
  }
  const PrefillTime p0 = prefill_time(f, c, first);
  tp.prefill_bottleneck = p0.bottleneck;
  if (p0.seconds && *p0.seconds > 0)
    tp.prefill_tokens_per_s = static_cast<double>(s.batch) * static_cast<double>(s.context) / *p0.seconds;
  {
    bool reported = false, published = false;
    for (const auto& st : first.stages) {
      if (!st.group) {
        reported |= f.host && f.host->bandwidth_reported;
        continue;
      }
      for (auto m : st.group->members) {
        const Device& dv = f.accelerators[m];
        if (!dv.bandwidth_gbps) continue;
        (dv.bandwidth_reported ? reported : published) = true;
      }
    }
    tp.bandwidth_source = reported && published ? "reported by the device and published spec"
                          : reported             ? "reported by the device"
                          : published            ? "published spec"
                                                 : "unknown";
  }

  // Assumptions, in the order a reader needs them.
  auto& as = plan.assumptions;
  for (const auto& n : model.notes) as.push_back(n);
  as.push_back(text::cat("weights: ", c.layout.basis));
  {
    const auto& a = model.architecture;
    std::string kv = text::cat("KV cache: ", to_string(kv_type), ", ", plan.memory.kv_cache_bytes_per_token,
                               " bytes per token (");
    if (a.mla)
      kv += text::cat(a.layers, " layers x (kv_lora_rank ", a.mla->kv_lora_rank, " + rope ", a.mla->qk_rope_head_dim,
                      "): the MLA latent as vLLM/SGLang cache it; a runtime without MLA caches full keys and values)");
    else
      kv += text::cat("2 x ", a.layers, " layers x ", a.kv_heads, " KV heads x ", a.head_dim, " x ",
                      kv_cache_bits(kv_type).value_or(16) / 8, " bytes)");
    kv += text::cat(" for ", s.batch, " sequence(s) of ", s.context, " tokens");
    if (a.sliding_window) kv += text::cat("; sliding-window layers counted at the full context, as runtimes allocate them");
    as.push_back(std::move(kv));
  }
  as.push_back(text::cat("activations: one prefill chunk of up to ", prefill_chunk_tokens,
                         " tokens with flash attention (no context x context scores), plus fp32 logits"));
  {
    std::map<std::string_view, std::string_view> overheads;
    const bool communicates = first.tp > 1 || first.stages.size() > 1;
    for (const auto& st : first.stages) {
      const Backend b = st.group ? backend_of(f, *st.group) : Backend::cpu;
      overheads.emplace(to_string(b), runtime_overhead(b, communicates && st.group).reason);
    }
    for (const auto& [backend, reason] : overheads)
      as.push_back(text::cat("runtime overhead per ", backend, " device: ", reason));
  }
  as.push_back(text::cat("usable memory: each device's memory less a ", std::round(s.reserve_fraction * 1000) / 10,
                         "% reserve", f.unified_memory ? "; Apple GPUs get 75% of unified memory (Metal's working set)" : ""));
  if (f.accelerators.size() > 1) {
    bool any_domain = false;
    for (const auto& dom : f.domains) any_domain |= dom.members.size() > 1;
    if (!any_domain)
      as.push_back("no NVLink/xGMI/ICI links between the devices in the registry: they are treated as PCIe-only "
                   "(pipeline stages, no tensor parallelism)");
  }
  if (model.architecture.moe.is_moe())
    as.push_back(text::cat("decode reads the experts a batch of ", s.batch, " token(s) is expected to touch: ",
                           model.architecture.moe.experts, " x (1 - (1 - ", model.architecture.moe.experts_per_token,
                           "/", model.architecture.moe.experts, ")^", s.batch, ") per MoE layer"));
  as.push_back(text::cat("decode: KV cache read at the full context; bandwidth at ", bandwidth_efficiency * 100,
                         "% of peak, compute at ", compute_efficiency * 100,
                         "% of dense peak; tensor-parallel all-reduce 10 us + 2(t-1)/t x message / link bandwidth, twice "
                         "per layer; 20 us per pipeline hop"));
  as.push_back(text::cat("memory bandwidth: ", tp.bandwidth_source,
                         "; no kernel-launch or scheduling overhead is modelled, so speeds are what a well-tuned "
                         "runtime approaches, not what every runtime reaches"));
  if (!tp.decode_tokens_per_s)
    as.push_back(f.accelerators.empty() || plan.strategy.cpu_offload_layers > 0
                     ? "decode speed unknown: the host's memory bandwidth is neither reported nor published"
                     : "decode speed unknown: a device has neither a reported nor a published memory bandwidth");
  if (!tp.prefill_tokens_per_s) as.push_back("prefill speed unknown: a device has no published dense peak for this arithmetic");
  if (plan.strategy.cpu_offload_layers > 0)
    as.push_back(text::cat("CPU offload: the accelerators hold the first ",
                           plan.layers - plan.strategy.cpu_offload_layers,
                           " layers; host memory keeps the token embedding, the other layers and the head (llama.cpp -ngl)"));
  if (l.idle_devices > 0) {
    std::vector<bool> used(f.accelerators.size(), false);
    std::size_t used_count = 0;
    for (std::size_t ri = 0; ri < l.replica_total(); ++ri)
      for (std::size_t si = 0; si < l.shape(ri).stages.size(); ++si)
        if (const Group* g = l.stage(ri, si).group)
          for (auto m : g->members)
            if (!used[m]) {
              used[m] = true;
              ++used_count;
            }
    std::string idle;
    std::size_t listed = 0;
    for (std::size_t i = 0; i < used.size() && listed < 4; ++i)
      if (!used[i]) idle += text::cat(listed++ ? ", " : "", f.accelerators[i].profile->id);
    const std::size_t unused = used.size() - used_count;
    if (unused > listed) idle += text::cat(" and ", unused - listed, " more");
    as.push_back(text::cat(idle, " left idle: too few for another replica"));
  }
  f.skipped.report(as);
  if (!plan.fits) {
    std::uint64_t capacity = 0;
    for (const auto& sh : plan.shards)
      if (sh.replica == 0) capacity = sat_add(capacity, sh.capacity_bytes);
    as.push_back(text::cat("does not fit: a replica needs ", gib(plan.memory.total_bytes), ", the devices used hold ",
                           gib(capacity), " after the reserve"));
  }
  plan.launch = launch_hints(f, c, l, s, model, plan);
  return plan;
}

}  // namespace

Result<QuantizationLevel> suggest_quantization(const AcceleratorRegistry& registry, const ModelDescription& model,
                                               const InferenceSettings& settings) {
  if (auto v = settings.validate(model); !v) return fail(v.error());
  const bool accelerators = registry.has_accelerator();
  std::optional<QuantizationLevel> with_offload;
  for (const auto level : ladder(registry, settings.quantization_family)) {
    const QuantizationLevel kv_type = settings.kv_cache_type.value_or(default_kv_cache_type(level));
    auto cost = cost_model(model, level, kv_type, settings.context, settings.batch);
    if (!cost) return fail(cost.error());
    const Fleet f = gather(registry, level, settings.reserve_fraction);
    // A level no accelerator runs is no suggestion for a machine that has them.
    if (accelerators ? f.accelerators.empty() : !f.host) continue;
    const Layout l = place(f, *cost, settings);
    if (!l.fits) continue;
    bool offload = false;
    for (const auto& st : l.replicas.front().stages) offload |= st.group == nullptr && !f.accelerators.empty();
    if (!offload) return level;
    if (!with_offload) with_offload = level;
  }
  if (with_offload) return *with_offload;
  return fail(ErrorKind::unsupported,
              text::cat("no quantization level fits ", model.name, " (", model.parameters, " parameters) with ",
                        settings.context, " tokens x ", settings.batch, " sequence(s) on these devices"));
}

namespace {

// The model's load time from the registry's storage, when it knows any.
void attach_load_time(const AcceleratorRegistry& registry, const ModelDescription& model, Plan& plan) {
  if (registry.system().storage.empty()) return;
  const std::uint64_t bytes = model.stored ? model.stored->total_bytes() : plan.memory.weights_bytes;
  if (bytes == 0) return;
  std::string path;
  const bool from_files = model.source == ModelSource::gguf || model.source == ModelSource::safetensors ||
                          model.source == ModelSource::hf_config;
  if (from_files && !model.origin.empty()) {
    std::error_code ec;
    const auto absolute = std::filesystem::absolute(model.origin, ec);
    if (!ec) path = absolute.lexically_normal().string();
  }
  auto estimate = estimate_load_time(registry, bytes, path);
  if (!estimate) {
    plan.assumptions.push_back(text::cat("load time unknown: ", estimate.error().message));
    return;
  }
  plan.assumptions.push_back(text::cat("load time: ", estimate->assumption));
  plan.load_time = std::move(*estimate);
  plan.load_bytes = bytes;
}

Result<Plan> plan_without_load_time(const AcceleratorRegistry& registry, const ModelDescription& model,
                                    const InferenceSettings& settings) {
  if (settings.quantization) return build_plan(registry, model, settings, *settings.quantization, false);
  if (model.source == ModelSource::gguf && model.stored && model.stored->level)
    return build_plan(registry, model, settings, *model.stored->level, false);
  auto level = suggest_quantization(registry, model, settings);
  if (level) return build_plan(registry, model, settings, *level, true);
  // Nothing fits: plan the smallest level of the ladder so the shortfall shows.
  const auto levels = ladder(registry, settings.quantization_family);
  for (auto it = levels.rbegin(); it != levels.rend(); ++it) {
    auto plan = build_plan(registry, model, settings, *it, true);
    if (plan) {
      plan->assumptions.push_back(level.error().message);
      return plan;
    }
  }
  return fail(level.error());
}

}  // namespace

Result<Plan> plan_inference(const AcceleratorRegistry& registry, const ModelDescription& model,
                            const InferenceSettings& settings) {
  if (auto v = settings.validate(model); !v) return fail(v.error());
  auto plan = plan_without_load_time(registry, model, settings);
  if (plan) attach_load_time(registry, model, *plan);
  return plan;
}

Result<QuantizationLevel> suggest_quantization(const AcceleratorRegistry& registry, std::uint64_t parameters) {
  auto model = ModelDescription::from_parameter_count(parameters);
  if (!model) return fail(model.error());
  return suggest_quantization(registry, *model, InferenceSettings{});
}

Result<Plan> plan_sharding(const AcceleratorRegistry& registry, std::uint64_t parameters, QuantizationLevel level) {
  auto model = ModelDescription::from_parameter_count(parameters);
  if (!model) return fail(model.error());
  InferenceSettings s;
  s.quantization = level;
  return plan_inference(registry, *model, s);
}

}  // namespace hwaccel
