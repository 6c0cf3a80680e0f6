// The planner's per-level cost model: bytes per layer, per token of KV cache
// and of activations, and the fixed costs of a stage.
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

Result<CostModel> cost_model(const ModelDescription& model, QuantizationLevel level, QuantizationLevel kv_type,
                             std::uint64_t context, std::uint64_t batch) {
  auto layout = weight_layout(model, level);
  if (!layout) return fail(layout.error());
  CostModel c{model, model.architecture, level, kv_type, context, batch, std::move(*layout), {}, {}, {}, 0, {}, false, nullptr, nullptr, {}, {}, {}, false};
  const auto& a = model.architecture;
  const std::uint64_t n = c.layout.layer_bytes.size();
  c.weight_prefix.assign(n + 1, 0);
  c.active_weight_prefix.assign(n + 1, 0);
  c.active_param_prefix.assign(n + 1, 0);
  c.moe_layer_prefix.assign(n + 1, 0);
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
    c.moe_layer_prefix[l + 1] = c.moe_layer_prefix[l] + (l < a.layers && a.is_moe_layer(static_cast<std::uint32_t>(l)) ? 1 : 0);
  }
  // KV tokens per sequence by layer: min(context, window) for sliding-window
  // and chunked layers. A bare parameter count's borrowed shape has none.
  c.kv_token_prefix.assign(n + 1, 0);
  for (std::uint64_t l = 0; l < n; ++l)
    c.kv_token_prefix[l + 1] =
        c.kv_token_prefix[l] + (l < a.layers ? a.kv_tokens(static_cast<std::uint32_t>(l), context) : context);
  c.head_params = static_cast<double>(a.vocab_size) * static_cast<double>(a.hidden_size) * params_scale;
  return c;
}

Result<CostModel> reshaped(const CostModel& c, std::uint64_t context, std::uint64_t batch) {
  auto out = cost_model(c.model, c.level, c.kv_type, context, batch);
  if (!out) return out;
  out->expert_parallel = c.expert_parallel;
  out->full_kv_every_layer = c.full_kv_every_layer;
  out->flash_attention = c.flash_attention;
  out->profile = c.profile;
  out->host_profile = c.host_profile;
  return out;
}

}  // namespace hwaccel::planner_detail
