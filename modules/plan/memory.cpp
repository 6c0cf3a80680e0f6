// Weight layouts per quantization level (llama.cpp's per-tensor rules for
// GGUF), KV cache, activation and runtime-overhead arithmetic.
module;
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
module hwaccel.plan;

namespace hwaccel {

std::uint64_t WeightLayout::layers_total() const noexcept {
  std::uint64_t sum = 0;
  for (auto b : layer_bytes) sum += b;
  return sum;
}

std::uint64_t WeightLayout::total() const noexcept { return layers_total() + embedding_bytes + head_bytes + other_bytes; }

namespace {

using Q = QuantizationLevel;
using G = GgmlType;

constexpr TensorEncoding bf16_encoding{"BF16", 1, 2};

bool is_ffn_down(TensorRole r) {
  return r == TensorRole::ffn_down || r == TensorRole::expert_down || r == TensorRole::shared_down;
}

G base_type(Q level) {
  switch (level) {
    case Q::q8_0: return G::q8_0;
    case Q::q6_k: return G::q6_k;
    case Q::q5_k_m:
    case Q::q5_k_s: return G::q5_k;
    case Q::q5_1: return G::q5_1;
    case Q::q5_0: return G::q5_0;
    case Q::q4_k_m:
    case Q::q4_k_s: return G::q4_k;
    case Q::q4_1: return G::q4_1;
    case Q::q4_0: return G::q4_0;
    case Q::iq4_xs: return G::iq4_xs;
    case Q::iq4_nl: return G::iq4_nl;
    case Q::q3_k_l:
    case Q::q3_k_m:
    case Q::q3_k_s: return G::q3_k;
    case Q::q2_k: return G::q2_k;
    case Q::fp32: return G::f32;
    case Q::fp16: return G::f16;
    default: break;
  }
  return G::bf16;
}

std::uint32_t block_of(G t) { return ggml_encoding(t)->block_weights; }

// llama.cpp's choice of more bits for the first and last eighth of the layers
// and every third layer between them.
bool use_more_bits(std::int64_t i, std::int64_t n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

// The per-tensor rules of llama.cpp's quantizer (llama_tensor_get_type) for
// the file types modelled here.
struct GgufRecipe {
  const ModelArchitecture& a;
  Q level;
  G base;
  std::int64_t n_layers;
  std::int64_t n_ffn_down;  // ffn_down tensors in the model (what llama.cpp divides by for MoE)
  std::uint32_t n_gqa;
  std::uint32_t n_expert;
  bool is_70b;
  bool fused_qkv;

  G type_for(TensorRole role, std::int64_t layer, std::uint64_t cols) const {
    if (role == TensorRole::norm || role == TensorRole::output_norm || role == TensorRole::attn_bias ||
        role == TensorRole::router_bias || role == TensorRole::router)
      return G::f32;  // 1-D tensors and the MoE router (ffn_gate_inp) are not quantized
    G t = base;
    const bool output = role == TensorRole::output_head || (role == TensorRole::token_embedding && a.tied_embeddings);
    if (output) {
      if (cols % block_of(base) != 0) t = G::q8_0;
      else if (t != G::q8_0) t = G::q6_k;
      return fallback(t, cols);
    }
    if (role == TensorRole::token_embedding) return fallback(t, cols);
    if (fused_qkv && (role == TensorRole::attn_q || role == TensorRole::attn_k || role == TensorRole::attn_v)) {
      if (level == Q::q3_k_m || level == Q::q3_k_l) t = G::q4_k;
      else if (level == Q::q4_k_m) t = G::q5_k;
      else if (level == Q::q5_k_m) t = G::q6_k;
      return fallback(t, cols);
    }
    if (role == TensorRole::attn_v) {
      const std::int64_t i = layer;
      if (level == Q::q2_k) t = n_gqa >= 4 ? G::q4_k : G::q3_k;
      else if (level == Q::q3_k_m) t = i < 2 ? G::q5_k : G::q4_k;
      else if (level == Q::q3_k_l) t = G::q5_k;
      else if ((level == Q::iq4_nl || level == Q::iq4_xs) && n_gqa >= 4) t = G::q5_k;
      else if ((level == Q::q4_k_m || level == Q::q5_k_m) && use_more_bits(i, n_layers)) t = G::q6_k;
      else if (level == Q::q4_k_s && i < 4) t = G::q5_k;
      if (is_70b && (t == G::q3_k || t == G::q4_k)) t = G::q5_k;
      if (n_expert == 8) t = G::q8_0;
      return fallback(t, cols);
    }
    if (role == TensorRole::attn_k) {
      if (n_expert == 8) t = G::q8_0;
      return fallback(t, cols);
    }
    if (is_ffn_down(role)) {
      const std::int64_t i = layer;
      const std::int64_t n = n_expert > 1 ? n_ffn_down : n_layers;
      if (level == Q::q2_k) t = G::q3_k;
      else if (level == Q::q3_k_m) t = i < n / 16 ? G::q5_k : G::q4_k;
      else if (level == Q::q3_k_l) t = G::q5_k;
      else if (level == Q::q4_k_m) { if (use_more_bits(i, n)) t = G::q6_k; }
      else if (i < n / 8 && (level == Q::iq4_nl || level == Q::iq4_xs)) t = G::q5_k;
      else if (level == Q::q5_k_m && use_more_bits(i, n)) t = G::q6_k;
      else if (level == Q::q4_k_s && i < n / 8) t = G::q5_k;
      return fallback(t, cols);
    }
    if (role == TensorRole::attn_output) {
      if (n_expert == 8) {
        if (level == Q::q2_k || level == Q::q3_k_s || level == Q::q3_k_m || level == Q::iq4_nl ||
            level == Q::q4_k_s || level == Q::q4_k_m || level == Q::iq4_xs)
          t = G::q5_k;
      } else if (level == Q::q2_k) {
        t = G::q3_k;
      } else if (level == Q::q3_k_m) {
        t = G::q4_k;
      } else if (level == Q::q3_k_l) {
        t = G::q5_k;
      }
      return fallback(t, cols);
    }
    return fallback(t, cols);
  }

  // Rows that do not divide into the type's blocks get llama.cpp's fallback.
  static G fallback(G t, std::uint64_t cols) {
    if (cols % block_of(t) == 0) return t;
    switch (t) {
      case G::q2_k:
      case G::q3_k:
      case G::iq4_xs: t = G::iq4_nl; break;
      case G::q4_k: t = G::q5_0; break;
      case G::q5_k: t = G::q5_1; break;
      case G::q6_k: t = G::q8_0; break;
      default: return G::f16;
    }
    return cols % block_of(t) == 0 ? t : G::f16;
  }
};

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  return b > std::numeric_limits<std::uint64_t>::max() - a ? std::numeric_limits<std::uint64_t>::max() : a + b;
}

// Bytes of a group under the non-GGUF rules.
// MXFP4 quantizes only the routed experts of a MoE model (gpt-oss keeps
// attention, router, embeddings and head in bf16), every linear layer of a
// dense one.
std::optional<std::uint64_t> plain_bytes(const TensorGroup& g, Q level, bool moe) {
  const QuantizationInfo& q = info(level);
  const bool quantized = q.family != QuantizationFamily::floating || level == Q::fp8_e4m3 ||
                         level == Q::fp8_e5m2 || level == Q::mxfp4;
  const bool in_level = is_block_matrix(g.role) && (level != Q::mxfp4 || !moe || is_routed_expert(g.role));
  if (!quantized || !in_level) {
    const TensorEncoding& e = quantized ? bf16_encoding : q.encoding;
    const auto per = e.bytes(g.rows, g.cols);
    return per ? text::checked_mul(*per, g.count) : std::nullopt;
  }
  auto per = q.encoding.bytes(g.rows, g.cols);
  if (!per) return std::nullopt;
  // Scales outside the blocks: one fp32 per output row for int8, one per tensor for fp8.
  if (level == Q::int8) *per += g.rows * 4;
  if (level == Q::fp8_e4m3 || level == Q::fp8_e5m2) *per += 4;
  return text::checked_mul(*per, g.count);
}

Result<WeightLayout> recipe_layout(const ModelArchitecture& a, Q level) {
  WeightLayout w;
  w.level = level;
  const bool gguf = info(level).family == QuantizationFamily::gguf;
  std::int64_t ffn_down_tensors = 0;
  if (gguf) {
    for (std::uint32_t l = 0; l < a.layers; ++l)
      for (const auto& g : layer_tensors(a, l))
        if (is_ffn_down(g.role)) ++ffn_down_tensors;
  }
  const GgufRecipe recipe{a,
                          level,
                          base_type(level),
                          static_cast<std::int64_t>(a.layers),
                          ffn_down_tensors,
                          a.kv_heads ? a.attention_heads / a.kv_heads : 1,
                          a.moe.experts,
                          a.layers == 80,
                          a.family == "phi3"};
  const auto bytes_of = [&](const TensorGroup& g, std::int64_t layer) -> std::optional<std::uint64_t> {
    if (!gguf) return plain_bytes(g, level, a.moe.is_moe());
    const auto per = ggml_encoding(recipe.type_for(g.role, layer, g.cols))->bytes(g.rows, g.cols);
    return per ? text::checked_mul(*per, g.count) : std::nullopt;
  };
  for (const auto& g : global_tensors(a)) {
    const auto b = bytes_of(g, -1);
    if (!b) return fail(ErrorKind::invalid_input, "weight bytes overflow 64 bits");
    if (g.role == TensorRole::token_embedding) w.embedding_bytes = *b;
    else w.head_bytes = saturating_add(w.head_bytes, *b);
  }
  // Layers of the same shape and recipe share their bytes: GGUF recipes vary
  // by layer index, the others only between dense and MoE layers.
  w.layer_bytes.resize(a.layers);
  w.layer_expert_bytes.resize(a.layers);
  std::optional<std::uint32_t> previous;
  for (std::uint32_t l = 0; l < a.layers; ++l) {
    if (!gguf && previous && a.is_moe_layer(l) == a.is_moe_layer(*previous)) {
      w.layer_bytes[l] = w.layer_bytes[*previous];
      w.layer_expert_bytes[l] = w.layer_expert_bytes[*previous];
      continue;
    }
    std::uint64_t total = 0, experts = 0;
    for (const auto& g : layer_tensors(a, l)) {
      const auto b = bytes_of(g, l);
      if (!b) return fail(ErrorKind::invalid_input, "weight bytes overflow 64 bits");
      total = saturating_add(total, *b);
      if (is_routed_expert(g.role)) experts = saturating_add(experts, *b);
    }
    w.layer_bytes[l] = total;
    w.layer_expert_bytes[l] = experts;
    previous = l;
  }
  const QuantizationInfo& q = info(level);
  if (gguf)
    w.basis = text::cat("llama.cpp ", q.display_name, " per-tensor rules (", to_string(base_type(level)),
                        " bulk, output head in Q6_K, 1-D tensors in F32; no importance matrix)");
  else if (level == Q::mxfp4)
    w.basis = text::cat(a.moe.is_moe() ? "routed experts" : "linear layers",
                        " in MXFP4 (blocks of 32 FP4 E2M1 values with an E8M0 scale: 4.25 bits per weight); ",
                        a.moe.is_moe() ? "attention, router, " : "", "embeddings, head and norms in bf16");
  else if (q.family == QuantizationFamily::floating && level != Q::fp8_e4m3 && level != Q::fp8_e5m2)
    w.basis = text::cat("every tensor in ", q.display_name);
  else
    w.basis = text::cat("linear layers in ", q.display_name, " (", q.bits_per_weight(),
                        " bits per weight with scales); embeddings, head, norms and routers in bf16");
  return w;
}

std::uint64_t scale(std::uint64_t v, double f) {
  const double r = std::round(static_cast<double>(v) * f);
  return r >= 1.8e19 ? std::numeric_limits<std::uint64_t>::max() : static_cast<std::uint64_t>(r);
}

}  // namespace

Result<WeightLayout> weight_layout(const ModelDescription& model, QuantizationLevel level) {
  auto w = recipe_layout(model.architecture, level);
  if (!w) return w;
  if (model.architecture_assumed) {
    // A bare parameter count: the borrowed architecture's layout, scaled.
    auto reference = count_parameters(model.architecture);
    if (!reference) return fail(reference.error());
    const double f = static_cast<double>(model.parameters) / static_cast<double>(reference->total);
    for (auto& b : w->layer_bytes) b = scale(b, f);
    for (auto& b : w->layer_expert_bytes) b = scale(b, f);
    w->embedding_bytes = scale(w->embedding_bytes, f);
    w->head_bytes = scale(w->head_bytes, f);
    w->basis += text::cat(", scaled from the borrowed architecture to ", model.parameters, " parameters");
    return w;
  }
  if (model.stored && model.stored->level == level && !model.stored->layer_bytes.empty()) {
    // The file holds this level: its own bytes are exact.
    const StoredWeights& s = *model.stored;
    std::vector<std::uint64_t> expert(s.layer_bytes.size(), 0);
    for (std::size_t l = 0; l < s.layer_bytes.size() && l < w->layer_bytes.size(); ++l)
      if (w->layer_bytes[l] > 0)
        expert[l] = scale(w->layer_expert_bytes[l],
                          static_cast<double>(s.layer_bytes[l]) / static_cast<double>(w->layer_bytes[l]));
    w->layer_bytes = s.layer_bytes;
    w->layer_expert_bytes = std::move(expert);
    w->embedding_bytes = s.embedding_bytes;
    w->head_bytes = s.head_bytes;
    w->other_bytes = s.other_bytes;
    w->basis = text::cat("the model file's own tensors (", s.total_bytes(), " bytes)");
  }
  return w;
}

QuantizationLevel default_kv_cache_type(QuantizationLevel level) noexcept {
  switch (level) {
    case Q::fp32: return Q::fp32;
    case Q::bf16:
    case Q::fp8_e4m3:
    case Q::fp8_e5m2: return Q::bf16;
    default: return Q::fp16;
  }
}

Result<std::uint64_t> kv_cache_bytes_per_token_per_layer(const ModelArchitecture& a, QuantizationLevel kv_type,
                                                         std::uint32_t tensor_parallel) {
  auto bits = kv_cache_bits(kv_type);
  if (!bits) return fail(bits.error());
  if (tensor_parallel == 0) return fail(ErrorKind::invalid_input, "tensor-parallel degree must be at least 1");
  std::uint64_t elements = 0;
  if (a.mla) {
    elements = a.kv_elements_per_token_per_layer();  // the latent is replicated on every rank
  } else {
    const std::uint64_t heads_per_rank = (a.kv_heads + tensor_parallel - 1) / tensor_parallel;
    elements = 2 * heads_per_rank * a.head_dim;
  }
  return static_cast<std::uint64_t>(std::ceil(static_cast<double>(elements) * *bits / 8.0));
}

Result<std::uint64_t> kv_cache_bytes_per_token(const ModelArchitecture& a, QuantizationLevel kv_type) {
  auto per_layer = kv_cache_bytes_per_token_per_layer(a, kv_type, 1);
  if (!per_layer) return per_layer;
  return *per_layer * a.layers;
}

Result<std::uint64_t> kv_cache_bytes(const ModelArchitecture& a, QuantizationLevel kv_type, std::uint64_t context,
                                     std::uint64_t batch) {
  // Each layer keeps min(context, its window or chunk) tokens per sequence.
  auto per_layer = kv_cache_bytes_per_token_per_layer(a, kv_type, 1);
  if (!per_layer) return per_layer;
  const auto tokens = text::checked_mul(a.kv_tokens_all_layers(context), batch);
  const auto bytes = tokens ? text::checked_mul(*tokens, *per_layer) : std::nullopt;
  if (!bytes) return fail(ErrorKind::invalid_input, "KV cache size overflows 64 bits");
  return *bytes;
}

std::uint64_t activation_bytes(const ModelArchitecture& a, std::uint64_t context, std::uint64_t batch,
                               std::uint32_t tensor_parallel, std::uint64_t chunk_tokens) {
  const std::uint64_t t = std::max<std::uint32_t>(tensor_parallel, 1);
  const std::uint64_t chunk = std::max<std::uint64_t>(chunk_tokens, 1);
  const auto all_tokens = text::checked_mul(std::max<std::uint64_t>(context, 1), std::max<std::uint64_t>(batch, 1));
  const std::uint64_t tokens = all_tokens ? std::min(*all_tokens, chunk) : chunk;
  std::uint64_t q = a.q_width();
  std::uint64_t kv = a.kv_width();
  if (a.mla) {
    q = static_cast<std::uint64_t>(a.attention_heads) * (a.mla->qk_nope_head_dim + a.mla->qk_rope_head_dim);
    // Decompressed keys (nope + rope) and values, averaged: 2 x kv below is both.
    kv = static_cast<std::uint64_t>(a.attention_heads) *
         (a.mla->qk_nope_head_dim + a.mla->qk_rope_head_dim + a.mla->v_head_dim) / 2;
  }
  std::uint64_t ffn = a.has_dense_layers() ? a.intermediate_size : 0;
  if (a.moe.is_moe())
    ffn = std::max<std::uint64_t>(ffn, (static_cast<std::uint64_t>(a.moe.experts_per_token) + a.moe.shared_experts) *
                                           a.moe.expert_intermediate_size);
  const std::uint64_t per_token = 2 * a.hidden_size + (2 * q + 2 * kv) / t + 3 * ffn / t;
  return tokens * per_token * 2 + std::max<std::uint64_t>(batch, 1) * a.vocab_size * 4;
}

RuntimeOverhead runtime_overhead(Backend backend, bool communicates) noexcept {
  constexpr std::uint64_t MiB = 1024 * 1024;
  switch (backend) {
    case Backend::cpu: return {0, "no device runtime: the process's own memory is inside the reserve"};
    case Backend::cuda:
    case Backend::rocm:
      if (communicates)
        return {768 * MiB, "512 MiB driver context and BLAS/attention workspaces plus 256 MiB of NCCL/RCCL buffers"};
      return {512 * MiB, "512 MiB driver context and BLAS/attention workspaces"};
    case Backend::apple: return {256 * MiB, "256 MiB of Metal command buffers and compiled pipelines"};
    default: break;
  }
  return {512 * MiB, "512 MiB for the runtime's compiled programs and scratch (no published figure)"};
}

Result<MemoryEstimate> estimate_memory(const ModelDescription& model, QuantizationLevel level, QuantizationLevel kv_type,
                                       std::uint64_t context, std::uint64_t batch, Backend backend) {
  if (context == 0 || batch == 0) return fail(ErrorKind::invalid_input, "context and batch must be at least 1");
  auto weights = weight_layout(model, level);
  if (!weights) return fail(weights.error());
  auto kv = kv_cache_bytes(model.architecture, kv_type, context, batch);
  if (!kv) return fail(kv.error());
  auto per_token = kv_cache_bytes_per_token(model.architecture, kv_type);
  if (!per_token) return fail(per_token.error());
  MemoryEstimate m;
  m.weights_bytes = weights->total();
  m.kv_cache_bytes = *kv;
  m.kv_cache_bytes_per_token = *per_token;
  m.activation_bytes = activation_bytes(model.architecture, context, batch, 1);
  m.overhead_bytes = runtime_overhead(backend, false).bytes;
  m.total_bytes = saturating_add(saturating_add(m.weights_bytes, m.kv_cache_bytes),
                                 saturating_add(m.activation_bytes, m.overhead_bytes));
  return m;
}

}  // namespace hwaccel
