// Tensor-parallel shards of a model, LoRA and prefix parameter counts, and
// the storage of frozen weights.
module;
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>
module hwaccel.training;

namespace hwaccel {
namespace {

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

}  // namespace

TensorSplit tensor_split(TensorRole role) noexcept {
  switch (role) {
    case TensorRole::attn_q:
    case TensorRole::attn_k:
    case TensorRole::attn_v:
    case TensorRole::attn_bias:
    case TensorRole::attn_q_b:
    case TensorRole::attn_kv_b:
    case TensorRole::ffn_gate:
    case TensorRole::ffn_up:
    case TensorRole::expert_gate:
    case TensorRole::expert_up:
    case TensorRole::shared_gate:
    case TensorRole::shared_up:
    case TensorRole::token_embedding:
    case TensorRole::output_head: return TensorSplit::columns;
    case TensorRole::attn_output:
    case TensorRole::ffn_down:
    case TensorRole::expert_down:
    case TensorRole::shared_down: return TensorSplit::rows;
    default: return TensorSplit::replicated;
  }
}

Result<void> check_tensor_parallel(const ModelArchitecture& a, std::uint32_t t) {
  if (t == 0) return fail(ErrorKind::invalid_input, "tensor-parallel degree must be at least 1");
  if (t == 1) return {};
  if (a.attention_heads % t != 0)
    return fail(ErrorKind::invalid_input, text::cat("tensor-parallel degree ", t, " does not divide the ", a.attention_heads,
                                                    " attention heads of the model"));
  if (!a.mla && a.kv_heads % t != 0 && t % a.kv_heads != 0)
    return fail(ErrorKind::invalid_input, text::cat("tensor-parallel degree ", t, " and the ", a.kv_heads,
                                                    " KV heads do not divide one another"));
  const bool dense_layers = a.has_dense_layers();
  if (dense_layers && a.intermediate_size % t != 0)
    return fail(ErrorKind::invalid_input, text::cat("tensor-parallel degree ", t, " does not divide the FFN width ",
                                                    a.intermediate_size));
  if (a.moe.is_moe() && a.moe.expert_intermediate_size % t != 0)
    return fail(ErrorKind::invalid_input, text::cat("tensor-parallel degree ", t, " does not divide the expert FFN width ",
                                                    a.moe.expert_intermediate_size));
  return {};
}

namespace {

TensorGroup shard(const ModelArchitecture& a, TensorGroup g, std::uint32_t t) {
  if (t <= 1) return g;
  if ((g.role == TensorRole::attn_k || g.role == TensorRole::attn_v) && !a.mla) {
    // Fewer KV heads than ranks: each rank keeps (a replica of) one head.
    g.rows = static_cast<std::uint64_t>(std::max<std::uint32_t>(a.kv_heads / t, 1)) * a.head_dim;
    return g;
  }
  if (g.role == TensorRole::attn_bias && !a.mla) {
    const std::uint64_t kv = static_cast<std::uint64_t>(std::max<std::uint32_t>(a.kv_heads / t, 1)) * a.head_dim;
    g.cols = a.q_width() / t + 2 * kv;
    return g;
  }
  switch (tensor_split(g.role)) {
    case TensorSplit::columns:
      if (g.rows > 1) g.rows = ceil_div(g.rows, t);
      else g.cols = ceil_div(g.cols, t);
      break;
    case TensorSplit::rows: g.cols = ceil_div(g.cols, t); break;
    case TensorSplit::replicated: break;
  }
  return g;
}

}  // namespace

std::vector<TensorGroup> rank_layer_tensors(const ModelArchitecture& a, std::uint32_t layer, std::uint32_t t) {
  auto groups = layer_tensors(a, layer);
  for (auto& g : groups) g = shard(a, g, t);
  return groups;
}

std::vector<TensorGroup> rank_global_tensors(const ModelArchitecture& a, std::uint32_t t) {
  auto groups = global_tensors(a);
  for (auto& g : groups) g = shard(a, g, t);
  return groups;
}

bool lora_adapts(LoraTargets targets, TensorRole role) noexcept {
  using R = TensorRole;
  using T = LoraTarget;
  switch (role) {
    case R::attn_q:
    case R::attn_q_a:
    case R::attn_q_b: return targets.has(T::q);
    case R::attn_k: return targets.has(T::k);
    case R::attn_v: return targets.has(T::v);
    case R::attn_kv_a:
    case R::attn_kv_b: return targets.has(T::k) || targets.has(T::v);
    case R::attn_output: return targets.has(T::o);
    case R::ffn_gate:
    case R::expert_gate:
    case R::shared_gate: return targets.has(T::gate);
    case R::ffn_up:
    case R::expert_up:
    case R::shared_up: return targets.has(T::up);
    case R::ffn_down:
    case R::expert_down:
    case R::shared_down: return targets.has(T::down);
    default: return false;
  }
}

std::uint64_t lora_parameters(const TensorGroup& g, std::uint32_t rank) noexcept {
  return static_cast<std::uint64_t>(rank) * (g.rows + g.cols) * g.count;
}

Result<LoraCount> count_lora_parameters(const ModelArchitecture& a, std::uint32_t rank, LoraTargets targets) {
  if (auto v = a.validate(); !v) return fail(v.error());
  if (rank == 0) return fail(ErrorKind::invalid_input, "LoRA rank must be at least 1");
  if (targets.empty()) return fail(ErrorKind::invalid_input, "LoRA needs at least one target matrix");
  LoraCount c;
  // Layers come in at most two shapes (dense and MoE).
  const std::uint32_t moe_layers = a.moe_layer_count();
  for (const auto& [first, n] :
       {std::pair<std::uint32_t, std::uint32_t>{0, a.layers - moe_layers}, {a.first_moe_layer(), moe_layers}}) {
    if (n == 0) continue;
    for (const auto& g : layer_tensors(a, first)) {
      if (!g.is_matrix() || !lora_adapts(targets, g.role)) continue;
      c.parameters += lora_parameters(g, rank) * n;
      c.adapted_matrices += g.count * n;
    }
  }
  return c;
}

PrefixCount count_prefix_parameters(const ModelArchitecture& a, std::uint32_t length, std::uint32_t projection_width) {
  PrefixCount c;
  const std::uint64_t kv = a.mla ? static_cast<std::uint64_t>(a.attention_heads) * (a.mla->qk_nope_head_dim + a.mla->qk_rope_head_dim)
                                 : a.kv_width();
  const std::uint64_t out = static_cast<std::uint64_t>(a.layers) * 2 * kv;
  c.prefixes = static_cast<std::uint64_t>(length) * out;
  if (projection_width > 0) {
    const std::uint64_t w = projection_width;
    c.projection = static_cast<std::uint64_t>(length) * a.hidden_size  // prefix embedding
                   + a.hidden_size * w + w                               // first linear and bias
                   + w * out + out;                                      // second linear and bias
  }
  return c;
}

std::uint64_t nf4_tensor_bytes(std::uint64_t elements, bool double_quantization) noexcept {
  constexpr std::uint64_t block = 64;         // bitsandbytes' default 4-bit blocksize
  constexpr std::uint64_t nested_block = 256;  // blocks of absmax values per fp32 constant
  const std::uint64_t packed = ceil_div(elements, 2);
  const std::uint64_t blocks = ceil_div(elements, block);
  if (!double_quantization) return packed + 4 * blocks;
  return packed + blocks + 4 * ceil_div(blocks, nested_block);
}

std::optional<std::uint64_t> frozen_tensor_bytes(const TensorGroup& g, QuantizationLevel level, bool double_quantization,
                                                 QuantizationLevel dense) noexcept {
  using Q = QuantizationLevel;
  const auto per_tensor = text::checked_mul(g.rows, g.cols);
  if (!per_tensor) return std::nullopt;
  const auto bytes_of = [&](std::uint64_t per) { return text::checked_mul(per, g.count); };
  const auto floating = [](Q q) { return q == Q::fp32 || q == Q::bf16 || q == Q::fp16; };
  const auto element_bytes = [](Q q) -> std::uint64_t { return q == Q::fp32 ? 4 : 2; };
  if (floating(level)) {
    const auto b = text::checked_mul(*per_tensor, element_bytes(level));
    return b ? bytes_of(*b) : std::nullopt;
  }
  if (!is_block_matrix(g.role)) {
    const auto b = text::checked_mul(*per_tensor, element_bytes(floating(dense) ? dense : Q::bf16));
    return b ? bytes_of(*b) : std::nullopt;
  }
  switch (level) {
    case Q::nf4: return bytes_of(nf4_tensor_bytes(*per_tensor, double_quantization));
    case Q::int8: return bytes_of(*per_tensor + 4 * g.rows);  // int8 codes and an fp32 scale per row
    case Q::fp8_e4m3:
    case Q::fp8_e5m2: return bytes_of(*per_tensor + 4);  // one fp32 scale per tensor
    default: break;
  }
  return std::nullopt;
}

}  // namespace hwaccel
