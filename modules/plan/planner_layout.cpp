// The layout search: tensor-parallel groups inside high-bandwidth domains,
// pipeline stages across them, data-parallel replicas, CPU offload.
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
import :internals;

namespace hwaccel::planner_detail {

StageFixed fixed_for(const CostModel& c, Backend backend, std::uint32_t t, bool communicates, bool embedding, bool head) {
  StageFixed f;
  f.overhead = runtime_overhead(backend, communicates && c.collective_buffers()).bytes;
  f.activation = c.activation(t);
  if (embedding) f.embedding = div_up(c.stage_embedding_bytes(), t);
  if (head) f.head = div_up(c.stage_head_bytes(), t);
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
  // Most plans have no tensor parallelism: skip the division then.
  const auto cost = [&](std::uint64_t first, std::uint64_t count) {
    const std::uint64_t weights = c.layer_weights(first, count);
    return sat_add(t == 1 ? weights : div_up(weights, t), c.kv_layers(t, first, count));
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
      // The stage ends after the last layer whose midpoint is within its
      // share; midpoints only grow, so a binary search finds it.
      const double target = total_cost * cumulative_free / total_free;
      const auto within = [&](std::uint64_t e) {
        return static_cast<double>(cost(0, e + 1)) <= target + 0.5 * static_cast<double>(cost(e, 1));
      };
      std::uint64_t past = n - must_leave;  // the first end that is not within, or the limit
      while (end < past) {
        const std::uint64_t mid = end + (past - end) / 2;
        if (within(mid)) end = mid + 1;
        else past = mid;
      }
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
  const std::uint64_t layer_total = sat_add(div_up(c.layer_weights(0, c.layers()), t), c.kv_layers(t, 0, c.layers()));
  const std::uint64_t need = sat_add(layer_total, div_up(sat_add(c.stage_embedding_bytes(), c.stage_head_bytes()), t));
  std::uint64_t have = 0;
  const std::size_t max_stages = std::min<std::size_t>(groups.size() - start, c.layers());
  for (std::size_t p = 1; p <= max_stages; ++p) {
    const Group& g = *groups[start + p - 1];
    const std::uint64_t fixed = runtime_overhead(backend_of(f, g), c.collective_buffers()).bytes + c.activation(t);
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
    const bool dense_layers = a.has_dense_layers();
    if (dense_layers && a.intermediate_size % t != 0) continue;
    if (a.moe.is_moe() && a.moe.expert_intermediate_size % t != 0) continue;
    out.push_back(t);
  }
  return out;
}

StageSpeed speed_of(const Fleet& f, const Stage& st) {
  StageSpeed s;
  if (!st.group) {
    s.host = true;
    if (f.host) s.bandwidth_gbps = f.host->bandwidth_gbps;
    return s;
  }
  bool all_bw = true, all_peak = true, all_vector = true;
  for (auto m : st.group->members) {
    const Device& d = f.accelerators[m];
    if (d.bandwidth_gbps) s.bandwidth_gbps = s.bandwidth_gbps ? std::min(*s.bandwidth_gbps, *d.bandwidth_gbps) : *d.bandwidth_gbps;
    else all_bw = false;
    if (d.peak_tflops) s.peak_tflops = s.peak_tflops ? std::min(*s.peak_tflops, *d.peak_tflops) : *d.peak_tflops;
    else all_peak = false;
    if (d.vector_tflops) s.vector_tflops = s.vector_tflops ? std::min(*s.vector_tflops, *d.vector_tflops) : *d.vector_tflops;
    else all_vector = false;
  }
  if (!all_bw) s.bandwidth_gbps.reset();
  if (!all_peak) s.peak_tflops.reset();
  if (!all_vector) s.vector_tflops.reset();
  return s;
}

const Domain* domain_of(const Fleet& f, const Stage& st) {
  return st.group ? &f.domains[f.accelerators[st.group->members.front()].domain] : nullptr;
}

double tensor_parallel_s(const Fleet& f, const CostModel& c, const Stage& st, std::uint32_t t, double tokens) {
  if (t < 2) return 0.0;
  const auto& a = c.arch;
  const double message = tokens * static_cast<double>(a.hidden_size) * 2;
  const Domain* domain = domain_of(f, st);
  const std::optional<double> link = domain ? domain->link_gbps : std::nullopt;
  const double bandwidth = link ? *link * 1e9 : 0.0;
  const double latency = domain && domain->pcie ? pcie_allreduce_latency_s : allreduce_latency_s;
  const double allreduce = latency + (link ? 2.0 * (t - 1) / t * message / bandwidth : 0.0);
  const double layers = static_cast<double>(st.layer_count);
  if (!c.expert_parallel || !a.moe.is_moe() || a.moe.experts % t != 0) return 2.0 * layers * allreduce;
  // Expert parallel: attention's all-reduce on every layer, the FFN's on
  // dense layers only; each MoE layer sends every token to its k experts
  // and back, a (t-1)/t share of it to other devices.
  const double moe = c.moe_layer_prefix[st.first_layer + st.layer_count] - c.moe_layer_prefix[st.first_layer];
  const double all_to_all = latency + (link ? static_cast<double>(t - 1) / t * message *
                                                               static_cast<double>(a.moe.experts_per_token) / bandwidth
                                                        : 0.0);
  return (2.0 * layers - moe) * allreduce + 2.0 * moe * all_to_all;
}

double pipeline_hops_s(const Fleet& f, const CostModel& c, const Replica& r, double tokens) {
  const double activations = tokens * static_cast<double>(c.arch.hidden_size) * 2;
  double total = 0;
  for (std::size_t j = 1; j < r.stages.size(); ++j)
    total += pipeline_hop_latency_s + f.hop_s(node_of(f, r.stages[j - 1]), node_of(f, r.stages[j]), activations);
  return total;
}

std::optional<StageLoad> decode_stage(const Fleet& f, const CostModel& c, const Replica& r, const Stage& st) {
  const auto& a = c.arch;
  const double b = static_cast<double>(c.batch);
  const std::uint32_t t = st.group ? r.tp : 1;
  const StageSpeed sp = speed_of(f, st);
  if (!sp.bandwidth_gbps) return std::nullopt;
  const RuntimeProfile& profile = st.group ? *c.profile : c.host();
  const double kv = static_cast<double>(c.kv_read(t, st.first_layer, st.layer_count));
  double bytes = static_cast<double>(c.active_weight_prefix[st.first_layer + st.layer_count] -
                                     c.active_weight_prefix[st.first_layer]) /
                     t +
                 kv;
  double params = c.active_param_prefix[st.first_layer + st.layer_count] - c.active_param_prefix[st.first_layer];
  if (st.head) {
    bytes += static_cast<double>(c.head_read_bytes()) / t;
    params += c.head_params;
  }
  const double rereads = kv_rereads(a, profile, c.flash_attention);
  // Attention over the tokens each layer keeps: windowed layers attend to fewer.
  const double flops = (2.0 * b * params + 4.0 * b * static_cast<double>(c.kv_tokens(st.first_layer, st.layer_count)) *
                                               static_cast<double>(a.q_width())) /
                       t;
  StageLoad out;
  out.host = sp.host;
  out.ceiling_s = bytes / (*sp.bandwidth_gbps * 1e9);
  out.bytes_at_peak_s = (bytes + kv * rereads) / (*sp.bandwidth_gbps * 1e9);
  // Unpacking runs once per weight read, shared by the batch.
  out.dequant_s_per_op =
      c.weights_unpacked() && sp.vector_tflops ? params / t / (*sp.vector_tflops * 1e12) : 0.0;
  out.memory_s = out.bytes_at_peak_s / profile.bandwidth_efficiency +
                 out.dequant_s_per_op * profile.dequant_ops_per_weight +
                 static_cast<double>(st.layer_count) * profile.layer_overhead_us * 1e-6;
  if (sp.peak_tflops) {
    out.flops_at_peak_s = flops / (*sp.peak_tflops * 1e12);
    out.compute_s = flops / (*sp.peak_tflops * 1e12 * profile.compute_efficiency);
  }
  out.comm_s = tensor_parallel_s(f, c, st, t, b);
  return out;
}

DecodeTime decode_time(const Fleet& f, const CostModel& c, const Replica& r) {
  DecodeTime out;
  const double b = static_cast<double>(c.batch);
  double total = 0, ceiling = 0, mem = 0, compute = 0, comm = 0, host = 0;
  for (const auto& st : r.stages) {
    const auto load = decode_stage(f, c, r, st);
    if (!load) return out;
    ceiling += load->ceiling_s;
    out.terms.memory_s_at_peak += load->bytes_at_peak_s;
    out.terms.dequant_s_per_op += load->dequant_s_per_op;
    out.terms.layers += static_cast<double>(st.layer_count);
    out.terms.fixed_s += load->comm_s;
    const double stage = load->seconds();
    total += stage;
    if (load->host && !f.accelerators.empty()) host += stage;
    else if (load->compute_s > load->memory_s) compute += load->compute_s;
    else mem += load->memory_s;
    comm += load->comm_s;
  }
  const double hops = pipeline_hops_s(f, c, r, b);
  total += hops;
  comm += hops;
  out.terms.fixed_s += hops;
  // The ceiling is the bytes at full bandwidth alone: a prediction never beats it.
  out.step_s = std::max(total, ceiling);
  out.ceiling_step_s = ceiling;
  if (ceiling > 0) out.terms.ceiling_tokens_per_s = 1.0 / ceiling;
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
Layout search(const Fleet& f, const CostModel& c, const InferenceSettings& s) {
  const PlanObjective objective = s.objective;
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
    std::optional<double> energy_j;  // per output token, the energy objective
  };
  std::optional<Score> best_score;
  const auto rate = [](const Score& a) { return static_cast<double>(a.replicas) / *a.step_s; };
  const auto better = [&](const Score& a, const Score& b) {
    if (objective == PlanObjective::energy && a.energy_j && b.energy_j) {
      // Layouts that reach the floor first, then the least energy; below
      // the floor, the faster.
      const double floor = s.min_tokens_per_s.value_or(0) / static_cast<double>(c.batch);
      const bool a_meets = rate(a) >= floor, b_meets = rate(b) >= floor;
      if (a_meets != b_meets) return a_meets;
      if (!a_meets) return rate(a) > rate(b);
      if (std::abs(*a.energy_j - *b.energy_j) > 1e-9 * std::max(*a.energy_j, *b.energy_j)) return *a.energy_j < *b.energy_j;
    }
    if (a.step_s && b.step_s) {
      if (objective != PlanObjective::latency) {
        const double ra = rate(a), rb = rate(b);
        if (std::abs(ra - rb) > 1e-9 * std::max(ra, rb)) return ra > rb;
      } else if (std::abs(*a.step_s - *b.step_s) > 1e-12) {
        return *a.step_s < *b.step_s;
      }
    } else if (objective != PlanObjective::latency && a.replicas != b.replicas) {
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
    Score score{t, replicas, candidate.replicas.front().stages.size(), decode_time(f, c, candidate.replicas.front()).step_s,
                std::nullopt};
    if (objective == PlanObjective::energy) {
      // Speed and energy as the devices' caps allow.
      if (auto p = phase_power(f, c, candidate.replicas.front(), false, s)) {
        score.step_s = p->seconds;
        score.energy_j = p->total_watts * p->seconds / static_cast<double>(c.batch);
      }
    }
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
  const std::uint64_t n = c.layers();
  for (const auto& g : out.groups) {
    if (next >= n) break;
    const std::uint64_t fixed = runtime_overhead(backend_of(f, g), c.collective_buffers()).bytes + c.activation(1);
    if (g.capacity <= fixed) continue;
    const std::uint64_t free = g.capacity - fixed;
    std::uint64_t count = 0;
    while (next + count < n && sat_add(c.layer_weights(next, count + 1), c.kv_layers(1, next, count + 1)) <= free) ++count;
    if (count == 0) continue;
    r.stages.push_back(Stage{&g, next, count, false, false});
    next += count;
  }
  Stage host{nullptr, next, n - next, true, true};
  r.stages.push_back(host);
  const std::uint64_t host_need =
      sat_add(sat_add(c.layer_weights(next, n - next), c.kv_layers(1, next, n - next)),
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
  Layout l = search(f, c, s);
  if (l.fits) return l;
  if (f.accelerators.empty() && f.host) {
    // CPU only: everything in host memory.
    Layout cpu;
    Replica r;
    r.stages.push_back(Stage{nullptr, 0, c.layers(), true, true});
    cpu.replicas.push_back(std::move(r));
    const std::uint64_t need = sat_add(sat_add(c.layout.total(), c.kv_layers(1, 0, c.layers())), c.activation(1));
    cpu.fits = need <= f.host->capacity;
    return cpu;
  }
  if (s.allow_cpu_offload && !f.accelerators.empty())
    if (auto o = offload(f, c); o && o->fits) return std::move(*o);
  return best_effort(f, c);
}

}  // namespace hwaccel::planner_detail
