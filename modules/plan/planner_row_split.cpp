// llama.cpp's row split (--split-mode row) over several devices: what each
// device holds and how fast one sequence decodes.
module;
#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>
module hwaccel.plan;
import :internals;

namespace hwaccel::planner_detail {

namespace {

bool routed_expert(TensorRole role) {
  return role == TensorRole::expert_gate || role == TensorRole::expert_up || role == TensorRole::expert_down;
}

// Split matrix products one token runs: each layer's matrices apart from the
// routed experts (which row split leaves whole on the main device), and the
// output head. Layers of one kind (dense or MoE) have the same count.
double split_products(const ModelArchitecture& a) {
  std::optional<double> dense, moe;
  double total = 1;  // the head
  for (std::uint32_t l = 0; l < a.layers; ++l) {
    auto& cached = a.is_moe_layer(l) ? moe : dense;
    if (!cached) {
      double n = 0;
      for (const auto& g : layer_tensors(a, l))
        if (is_block_matrix(g.role) && !routed_expert(g.role)) n += static_cast<double>(g.count);
      cached = n;
    }
    total += *cached;
  }
  return total;
}

}  // namespace

std::optional<RowSplitEstimate> row_split_estimate(const CostModel& c, std::span<const Device* const> devices) {
  const RuntimeProfile& p = *c.profile;
  if (p.row_split_sync_us <= 0 || devices.size() < 2) return std::nullopt;
  for (const Device* d : devices)
    if (!d->bandwidth_gbps || d->capacity == 0 || d->node != devices.front()->node) return std::nullopt;
  const std::uint64_t layers = c.layers();
  std::uint64_t expert_bytes = 0;
  for (auto e : c.layout.layer_expert_bytes) expert_bytes = sat_add(expert_bytes, e);
  const std::uint64_t layer_bytes = c.layer_weights(0, layers);
  const std::uint64_t dense_bytes = layer_bytes - std::min(layer_bytes, expert_bytes);
  const std::uint64_t split_bytes = sat_add(dense_bytes, c.stage_head_bytes());
  // --tensor-split's default: in proportion to each device's free memory.
  double capacity = 0;
  for (const Device* d : devices) capacity += static_cast<double>(d->capacity);

  RowSplitEstimate out;
  out.devices = static_cast<std::uint32_t>(devices.size());
  out.fits = true;
  const std::uint64_t kv = c.kv_layers(1, 0, layers);
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const Device& d = *devices[i];
    const double share = static_cast<double>(d.capacity) / capacity;
    std::uint64_t need = static_cast<std::uint64_t>(share * static_cast<double>(split_bytes));
    need = sat_add(need, runtime_overhead(d.profile->backend, false).bytes);
    // The main device keeps the KV cache, the unsplit experts and embedding,
    // and the intermediate results.
    if (i == 0) {
      need = sat_add(sat_add(need, expert_bytes), sat_add(c.stage_embedding_bytes(), sat_add(kv, c.activation(1))));
      out.main_device_bytes = need;
    }
    out.fits &= need <= d.capacity;
  }

  // One token: every device reads its rows at once; the main device reads
  // the routed experts a token uses and the KV cache before and after.
  const auto& a = c.arch;
  const double active_layers = static_cast<double>(c.active_weight_prefix[layers]);
  const double active_experts = std::max(0.0, active_layers - static_cast<double>(dense_bytes));
  const double kv_read = static_cast<double>(c.kv_read(1, 0, layers)) * (1.0 + kv_rereads(a, p, c.flash_attention));
  const double split_read = static_cast<double>(dense_bytes) + static_cast<double>(c.head_read_bytes());
  const double params = c.active_param_prefix[layers] + c.head_params;
  const double split_params = params * (split_read / std::max(1.0, split_read + active_experts));
  const bool quantized = c.weights_unpacked();
  double rows_s = 0, dequant_s = 0;
  for (const Device* d : devices) {
    const double share = static_cast<double>(d->capacity) / capacity;
    rows_s = std::max(rows_s, share * split_read / (*d->bandwidth_gbps * 1e9));
    if (quantized && d->vector_tflops)
      dequant_s = std::max(dequant_s, share * split_params / (*d->vector_tflops * 1e12));
  }
  const Device& main = *devices.front();
  const double main_s = (active_experts + kv_read) / (*main.bandwidth_gbps * 1e9);
  if (quantized && main.vector_tflops) dequant_s += (params - split_params) / (*main.vector_tflops * 1e12);
  const double ceiling = rows_s + main_s;
  const double sync = split_products(a) * static_cast<double>(devices.size() - 1) * p.row_split_sync_us * 1e-6;
  const double step = ceiling / p.bandwidth_efficiency + dequant_s * p.dequant_ops_per_weight +
                      static_cast<double>(layers) * p.layer_overhead_us * 1e-6 + sync;
  if (!(step > 0) || !(ceiling > 0)) return out;
  out.decode_tokens_per_s = 1.0 / std::max(step, ceiling);
  out.decode_ceiling_tokens_per_s = 1.0 / ceiling;
  out.decode_tokens_per_s_low = std::min(*out.decode_tokens_per_s * p.interval_low, *out.decode_ceiling_tokens_per_s);
  out.decode_tokens_per_s_high = std::min(*out.decode_tokens_per_s * p.interval_high, *out.decode_ceiling_tokens_per_s);
  out.sync_s_per_token = sync;
  return out;
}

}  // namespace hwaccel::planner_detail
