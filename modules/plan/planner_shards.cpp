// What each device of a layout holds, and how fast a replica prefills.
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
      const std::uint64_t kv = c.kv_layers(t, st.first_layer, st.layer_count);
      const std::uint64_t total = sat_add(sat_add(weights, kv), sat_add(fixed.activation, fixed.overhead));
      for (std::uint32_t k = 0; k < ranks; ++k) {
        const Device& d = st.group ? f.accelerators[st.group->members[k]] : *f.host;
        Shard& s = plan.shards.emplace_back();  // in place: a 10 000-device plan copies no shard
        if (f.several_nodes() && st.group) s.node = f.node_names[d.node];
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

std::optional<StageLoad> prefill_stage(const Fleet& f, const CostModel& c, const Replica& r, const Stage& st) {
  const auto& a = c.arch;
  const double b = static_cast<double>(c.batch);
  const double n = static_cast<double>(c.context);
  const std::uint32_t t = st.group ? r.tp : 1;
  const StageSpeed sp = speed_of(f, st);
  if (!sp.peak_tflops || !sp.bandwidth_gbps) return std::nullopt;
  double params = c.active_param_prefix[st.first_layer + st.layer_count] - c.active_param_prefix[st.first_layer];
  // Causal attention: QK^T and AV over the (query, key) pairs, 2 FLOPs each;
  // sliding-window and chunked layers have fewer pairs.
  double flops = 2.0 * b * n * params +
                 4.0 * b * c.attention_pairs(st.first_layer, st.layer_count) * static_cast<double>(a.q_width());
  if (st.head) flops += 2.0 * b * c.head_params;  // logits of the last token only
  flops /= t;
  const RuntimeProfile& profile = st.group ? *c.profile : c.host();
  StageLoad out;
  out.host = sp.host;
  out.flops_at_peak_s = flops / (*sp.peak_tflops * 1e12);
  out.compute_s = flops / (*sp.peak_tflops * 1e12 * profile.compute_efficiency);
  const double weights = static_cast<double>(c.layer_weights(st.first_layer, st.layer_count)) / t;
  out.bytes_at_peak_s = weights / (*sp.bandwidth_gbps * 1e9);
  out.memory_s = weights / (*sp.bandwidth_gbps * 1e9 * profile.bandwidth_efficiency) +
                 static_cast<double>(st.layer_count) * profile.layer_overhead_us * 1e-6;
  out.comm_s = tensor_parallel_s(f, c, st, t, b * n);
  return out;
}

PrefillTime prefill_time(const Fleet& f, const CostModel& c, const Replica& r) {
  PrefillTime out;
  const double b = static_cast<double>(c.batch);
  const double n = static_cast<double>(c.context);
  double total = 0, compute = 0, mem = 0, comm = 0;
  for (const auto& st : r.stages) {
    const auto load = prefill_stage(f, c, r, st);
    if (!load) return out;
    total += load->seconds();
    if (load->compute_s >= load->memory_s) compute += load->compute_s;
    else mem += load->memory_s;
    comm += load->comm_s;
  }
  const double hops = pipeline_hops_s(f, c, r, b * n);
  total += hops;
  comm += hops;
  out.seconds = total;
  const double top = std::max({compute, mem, comm});
  out.bottleneck = top == comm && comm > 0 ? "interconnect" : top == compute ? "compute" : "memory_bandwidth";
  return out;
}

}  // namespace hwaccel::planner_detail
