// Architecture arithmetic: tensors of a layer, exact parameter counts, and
// descriptions built from an architecture or a bare parameter count.
module;
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.plan;

namespace hwaccel {

std::string_view to_string(AttentionKind kind) noexcept {
  constexpr std::array<std::string_view, 4> names = {"multi_head", "grouped_query", "multi_query",
                                                     "multi_head_latent"};
  const auto i = static_cast<std::size_t>(kind);
  return i < names.size() ? names[i] : "unknown";
}

std::string_view to_string(LayerAttention kind) noexcept {
  constexpr std::array<std::string_view, 3> names = {"full", "sliding", "chunked"};
  const auto i = static_cast<std::size_t>(kind);
  return i < names.size() ? names[i] : "unknown";
}

std::string_view to_string(TensorRole role) noexcept {
  constexpr std::array<std::string_view, 24> names = {
      "token_embedding", "output_norm", "output_head", "norm",        "attn_q",      "attn_k",
      "attn_v",          "attn_output", "attn_bias",   "attn_q_a",    "attn_q_b",    "attn_kv_a",
      "attn_kv_b",       "ffn_gate",    "ffn_up",      "ffn_down",    "expert_gate", "expert_up",
      "expert_down",     "shared_gate", "shared_up",   "shared_down", "router",      "router_bias"};
  const auto i = static_cast<std::size_t>(role);
  return i < names.size() ? names[i] : "unknown";
}

std::string_view to_string(ModelSource source) noexcept {
  constexpr std::array<std::string_view, 5> names = {"parameter_count", "catalogue", "hf_config", "gguf",
                                                     "safetensors"};
  const auto i = static_cast<std::size_t>(source);
  return i < names.size() ? names[i] : "unknown";
}

AttentionKind ModelArchitecture::attention_kind() const noexcept {
  if (mla) return AttentionKind::multi_head_latent;
  if (kv_heads == 1 && attention_heads > 1) return AttentionKind::multi_query;
  if (kv_heads < attention_heads) return AttentionKind::grouped_query;
  return AttentionKind::multi_head;
}

std::uint64_t ModelArchitecture::q_width() const noexcept {
  return static_cast<std::uint64_t>(attention_heads) * head_dim;
}

std::uint64_t ModelArchitecture::kv_width() const noexcept { return static_cast<std::uint64_t>(kv_heads) * head_dim; }

bool ModelArchitecture::is_moe_layer(std::uint32_t layer) const noexcept {
  if (!moe.is_moe() || layer >= layers || layer < moe.first_dense_layers) return false;
  return moe.layer_step <= 1 || (layer + 1) % moe.layer_step == 0;
}

std::uint32_t ModelArchitecture::first_moe_layer() const noexcept {
  if (!moe.is_moe() || moe.first_dense_layers >= layers) return layers;
  if (moe.layer_step <= 1) return moe.first_dense_layers;
  // The first layer >= first_dense_layers with (layer + 1) a multiple of the step.
  const std::uint64_t step = moe.layer_step;
  const std::uint64_t first = (static_cast<std::uint64_t>(moe.first_dense_layers) + step) / step * step - 1;
  return first < layers ? static_cast<std::uint32_t>(first) : layers;
}

std::uint32_t ModelArchitecture::moe_layer_count() const noexcept {
  const std::uint32_t first = first_moe_layer();
  if (first >= layers) return 0;
  return (layers - 1 - first) / std::max<std::uint32_t>(moe.layer_step, 1) + 1;
}

std::uint64_t ModelArchitecture::kv_elements_per_token_per_layer() const noexcept {
  if (mla) return static_cast<std::uint64_t>(mla->kv_lora_rank) + mla->qk_rope_head_dim;
  return 2 * kv_width();
}

LayerAttention ModelArchitecture::layer_attention(std::uint32_t layer) const noexcept {
  // With a pattern N > 1, layers N-1, 2N-1, ... are the global ones.
  const auto local = [&](std::uint32_t pattern) { return pattern <= 1 || (layer + 1) % pattern != 0; };
  if (attention_chunk && *attention_chunk > 0 && local(attention_chunk_pattern)) return LayerAttention::chunked;
  if (sliding_window && *sliding_window > 0 && local(sliding_window_pattern)) return LayerAttention::sliding;
  return LayerAttention::full;
}

std::uint64_t ModelArchitecture::kv_tokens(std::uint32_t layer, std::uint64_t context) const noexcept {
  switch (layer_attention(layer)) {
    case LayerAttention::sliding: return std::min<std::uint64_t>(context, *sliding_window);
    case LayerAttention::chunked: return std::min<std::uint64_t>(context, *attention_chunk);
    case LayerAttention::full: break;
  }
  return context;
}

std::uint64_t ModelArchitecture::kv_tokens_all_layers(std::uint64_t context) const noexcept {
  std::uint64_t sum = 0;
  for (std::uint32_t l = 0; l < layers; ++l) {
    const std::uint64_t t = kv_tokens(l, context);
    sum = t > std::numeric_limits<std::uint64_t>::max() - sum ? std::numeric_limits<std::uint64_t>::max() : sum + t;
  }
  return sum;
}

std::uint32_t ModelArchitecture::windowed_layer_count() const noexcept {
  std::uint32_t n = 0;
  for (std::uint32_t l = 0; l < layers; ++l) n += layer_attention(l) != LayerAttention::full ? 1 : 0;
  return n;
}

namespace {

// Upper bounds far beyond any published model; they keep every product below
// in 64 bits and turn garbage from a hostile file into a clear error.
constexpr std::uint64_t max_layers = 100'000;
constexpr std::uint64_t max_hidden = 1u << 20;
constexpr std::uint64_t max_heads = 1u << 16;
constexpr std::uint64_t max_head_dim = 1u << 14;
constexpr std::uint64_t max_ffn = 1u << 24;
constexpr std::uint64_t max_vocab = 1u << 24;
constexpr std::uint64_t max_experts = 1u << 16;

Result<void> require(bool ok, std::string_view what) {
  if (!ok) return fail(ErrorKind::invalid_input, std::string(what));
  return {};
}

// Adds a*b*c to sum; false on overflow.
bool add_product(std::uint64_t& sum, std::uint64_t a, std::uint64_t b, std::uint64_t c = 1) {
  const auto ab = text::checked_mul(a, b);
  if (!ab) return false;
  const auto abc = text::checked_mul(*ab, c);
  if (!abc || *abc > std::numeric_limits<std::uint64_t>::max() - sum) return false;
  sum += *abc;
  return true;
}

}  // namespace

Result<void> ModelArchitecture::validate() const {
  const auto in = [](std::uint64_t v, std::uint64_t max) { return v > 0 && v <= max; };
  if (auto r = require(in(layers, max_layers), text::cat("num_hidden_layers must be in 1..", max_layers, ", got ", layers)); !r) return r;
  if (auto r = require(in(hidden_size, max_hidden), text::cat("hidden_size must be in 1..", max_hidden, ", got ", hidden_size)); !r) return r;
  if (auto r = require(in(attention_heads, max_heads), text::cat("num_attention_heads must be in 1..", max_heads, ", got ", attention_heads)); !r) return r;
  if (auto r = require(in(kv_heads, attention_heads),
                       text::cat("num_key_value_heads must be in 1..num_attention_heads (", attention_heads, "), got ", kv_heads));
      !r)
    return r;
  if (!mla) {
    if (auto r = require(attention_heads % kv_heads == 0,
                         text::cat("num_attention_heads (", attention_heads, ") is not a multiple of num_key_value_heads (",
                                   kv_heads, ")"));
        !r)
      return r;
  }
  if (auto r = require(in(head_dim, max_head_dim), text::cat("head_dim must be in 1..", max_head_dim, ", got ", head_dim)); !r) return r;
  if (auto r = require(in(vocab_size, max_vocab), text::cat("vocab_size must be in 1..", max_vocab, ", got ", vocab_size)); !r) return r;
  if (has_dense_layers()) {
    if (auto r = require(in(intermediate_size, max_ffn), text::cat("intermediate_size must be in 1..", max_ffn, ", got ", intermediate_size)); !r) return r;
  }
  if (auto r = require(norms_per_layer <= 8, text::cat("norms per layer must be at most 8, got ", norms_per_layer)); !r) return r;
  if (moe.is_moe()) {
    if (auto r = require(moe.experts <= max_experts, text::cat("number of experts must be at most ", max_experts, ", got ", moe.experts)); !r) return r;
    if (auto r = require(moe.experts_per_token >= 1 && moe.experts_per_token <= moe.experts,
                         text::cat("experts per token must be in 1..", moe.experts, ", got ", moe.experts_per_token));
        !r)
      return r;
    if (auto r = require(in(moe.expert_intermediate_size, max_ffn),
                         text::cat("expert intermediate size must be in 1..", max_ffn, ", got ", moe.expert_intermediate_size));
        !r)
      return r;
    if (auto r = require(moe.first_dense_layers <= layers,
                         text::cat("first_k_dense_replace (", moe.first_dense_layers, ") exceeds the layer count (", layers, ")"));
        !r)
      return r;
    if (auto r = require(moe.shared_experts <= max_experts, "too many shared experts"); !r) return r;
    if (auto r = require(moe.layer_step <= layers,
                         text::cat("interleave_moe_layer_step (", moe.layer_step, ") exceeds the layer count (", layers, ")"));
        !r)
      return r;
  } else if (moe.experts_per_token != 0 || moe.shared_experts != 0) {
    return fail(ErrorKind::invalid_input, "experts per token or shared experts given without routed experts");
  }
  if (auto r = require(!sliding_window || *sliding_window > 0, "sliding_window must be positive"); !r) return r;
  if (auto r = require(!attention_chunk || *attention_chunk > 0, "attention_chunk_size must be positive"); !r) return r;
  if (auto r = require(sliding_window_pattern <= max_layers && attention_chunk_pattern <= max_layers,
                       "a sliding-window or chunked-attention layer pattern is out of range");
      !r)
    return r;
  if (mla) {
    if (auto r = require(in(mla->kv_lora_rank, max_hidden), "kv_lora_rank must be positive"); !r) return r;
    if (auto r = require(mla->q_lora_rank <= max_hidden, "q_lora_rank is out of range"); !r) return r;
    if (auto r = require(in(mla->qk_nope_head_dim, max_head_dim) && in(mla->qk_rope_head_dim, max_head_dim),
                         "qk_nope_head_dim and qk_rope_head_dim must be positive");
        !r)
      return r;
    if (auto r = require(in(mla->v_head_dim, max_head_dim), "v_head_dim must be positive"); !r) return r;
  }
  return {};
}

std::vector<TensorGroup> layer_tensors(const ModelArchitecture& a, std::uint32_t layer) {
  std::vector<TensorGroup> t;
  t.reserve(16);
  const std::uint64_t h = a.hidden_size;
  const std::uint64_t norm_vectors = a.norm_bias ? 2 : 1;
  t.push_back({TensorRole::norm, 1, h, a.norms_per_layer * norm_vectors});
  if (a.mla) {
    const auto& m = *a.mla;
    const std::uint64_t qk_dim = static_cast<std::uint64_t>(m.qk_nope_head_dim) + m.qk_rope_head_dim;
    const std::uint64_t heads = a.attention_heads;
    if (m.q_lora_rank > 0) {
      t.push_back({TensorRole::attn_q_a, m.q_lora_rank, h, 1});
      t.push_back({TensorRole::norm, 1, m.q_lora_rank, 1});
      t.push_back({TensorRole::attn_q_b, heads * qk_dim, m.q_lora_rank, 1});
    } else {
      t.push_back({TensorRole::attn_q, heads * qk_dim, h, 1});
    }
    t.push_back({TensorRole::attn_kv_a, static_cast<std::uint64_t>(m.kv_lora_rank) + m.qk_rope_head_dim, h, 1});
    t.push_back({TensorRole::norm, 1, m.kv_lora_rank, 1});
    t.push_back({TensorRole::attn_kv_b, heads * (static_cast<std::uint64_t>(m.qk_nope_head_dim) + m.v_head_dim),
                 m.kv_lora_rank, 1});
    t.push_back({TensorRole::attn_output, h, heads * m.v_head_dim, 1});
  } else {
    t.push_back({TensorRole::attn_q, a.q_width(), h, 1});
    t.push_back({TensorRole::attn_k, a.kv_width(), h, 1});
    t.push_back({TensorRole::attn_v, a.kv_width(), h, 1});
    if (a.qkv_bias) t.push_back({TensorRole::attn_bias, 1, a.q_width() + 2 * a.kv_width(), 1});
    t.push_back({TensorRole::attn_output, h, a.q_width(), 1});
  }
  if (a.is_moe_layer(layer)) {
    const auto& m = a.moe;
    const std::uint64_t w = m.expert_intermediate_size;
    t.push_back({TensorRole::router, m.experts, h, 1});
    if (m.router_bias) t.push_back({TensorRole::router_bias, 1, m.experts, 1});
    if (a.gated_ffn) t.push_back({TensorRole::expert_gate, w, h, m.experts});
    t.push_back({TensorRole::expert_up, w, h, m.experts});
    t.push_back({TensorRole::expert_down, h, w, m.experts});
    if (m.shared_experts > 0) {
      if (a.gated_ffn) t.push_back({TensorRole::shared_gate, w, h, m.shared_experts});
      t.push_back({TensorRole::shared_up, w, h, m.shared_experts});
      t.push_back({TensorRole::shared_down, h, w, m.shared_experts});
    }
  } else {
    if (a.gated_ffn) t.push_back({TensorRole::ffn_gate, a.intermediate_size, h, 1});
    t.push_back({TensorRole::ffn_up, a.intermediate_size, h, 1});
    t.push_back({TensorRole::ffn_down, h, a.intermediate_size, 1});
  }
  return t;
}

std::vector<TensorGroup> global_tensors(const ModelArchitecture& a) {
  std::vector<TensorGroup> t;
  t.push_back({TensorRole::token_embedding, a.vocab_size, a.hidden_size, 1});
  t.push_back({TensorRole::output_norm, 1, a.hidden_size, a.norm_bias ? 2u : 1u});
  if (!a.tied_embeddings) t.push_back({TensorRole::output_head, a.vocab_size, a.hidden_size, 1});
  return t;
}

namespace {

// Total and active parameters of one layer; false on overflow.
bool layer_parameters(const ModelArchitecture& a, std::uint32_t layer, std::uint64_t& total, std::uint64_t& active) {
  total = 0;
  active = 0;
  for (const auto& g : layer_tensors(a, layer)) {
    if (!add_product(total, g.rows, g.cols, g.count)) return false;
    const std::uint64_t used = is_routed_expert(g.role) ? a.moe.experts_per_token : g.count;
    if (!add_product(active, g.rows, g.cols, used)) return false;
  }
  return true;
}

}  // namespace

Result<ParameterCount> count_parameters(const ModelArchitecture& a) {
  if (auto v = a.validate(); !v) return fail(v.error());
  ParameterCount c;
  for (const auto& g : global_tensors(a)) {
    if (!add_product(c.total, g.rows, g.cols, g.count)) return fail(ErrorKind::invalid_input, "parameter count overflows 64 bits");
    if (g.role == TensorRole::token_embedding || g.role == TensorRole::output_head)
      c.embedding += g.parameters();
  }
  c.active = c.total;
  // Layers come in at most two shapes (dense and MoE): count each once. Layer
  // 0 is dense whenever any layer is.
  const std::uint32_t moe_layers = a.moe_layer_count();
  const std::uint32_t dense_layers = a.layers - moe_layers;
  for (const auto& [first, n] :
       {std::pair<std::uint32_t, std::uint32_t>{0, dense_layers}, {a.first_moe_layer(), moe_layers}}) {
    if (n == 0) continue;
    std::uint64_t total = 0, active = 0;
    if (!layer_parameters(a, first, total, active) || !add_product(c.total, total, n) ||
        !add_product(c.active, active, n))
      return fail(ErrorKind::invalid_input, "parameter count overflows 64 bits");
  }
  return c;
}

std::uint64_t StoredWeights::total_bytes() const noexcept {
  std::uint64_t sum = embedding_bytes + head_bytes + other_bytes;
  for (auto b : layer_bytes) sum += b;
  return sum;
}

Result<ModelDescription> ModelDescription::from_architecture(std::string name, ModelArchitecture architecture) {
  auto count = count_parameters(architecture);
  if (!count) return fail(count.error());
  ModelDescription d;
  d.name = std::move(name);
  d.source = ModelSource::catalogue;
  d.architecture = std::move(architecture);
  d.parameters = count->total;
  d.active_parameters = count->active;
  d.exact_parameters = true;
  return d;
}

Result<ModelDescription> ModelDescription::from_parameter_count(std::uint64_t parameters) {
  if (parameters == 0) return fail(ErrorKind::invalid_input, "a model needs at least one parameter (got 0)");
  // Beyond 100 trillion parameters no byte count of any plan fits in 64 bits
  // once multiplied out per device; such input is a typo.
  if (parameters > 100'000'000'000'000ull)
    return fail(ErrorKind::invalid_input, text::cat("a model of ", parameters, " parameters is beyond any published model (limit 1e14)"));
  const CatalogueEntry& reference = nearest_dense_model(parameters);
  ModelDescription d;
  d.name = text::cat(parameters, " parameters");
  d.source = ModelSource::parameter_count;
  d.architecture = reference.architecture;
  d.architecture_assumed = true;
  d.parameters = parameters;
  d.active_parameters = parameters;
  d.exact_parameters = false;
  d.notes.push_back(text::cat("architecture assumed: the shape of ", reference.id,
                              " (the dense catalogue model nearest in parameter count) gives layers, heads and the KV "
                              "cache; weights are scaled to ",
                              parameters, " parameters"));
  return d;
}

std::optional<std::uint64_t> parse_parameter_count(std::string_view s) noexcept {
  s = text::trim(s);
  double scale = 1;
  if (!s.empty()) {
    switch (text::to_lower(s.back())) {
      case 'k': scale = 1e3; break;
      case 'm': scale = 1e6; break;
      case 'b': scale = 1e9; break;
      case 't': scale = 1e12; break;
      default: break;
    }
    if (scale != 1) s.remove_suffix(1);
  }
  const auto v = text::parse_double(s);
  if (!v || !(*v > 0)) return std::nullopt;
  const double n = std::round(*v * scale);
  if (n < 1 || n > 1.8e19) return std::nullopt;
  return static_cast<std::uint64_t>(n);
}

}  // namespace hwaccel
