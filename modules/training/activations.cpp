// Per-layer activation terms (Korthikanti et al. 2022, generalised).
module;
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
module hwaccel.training;

namespace hwaccel {
namespace {

// Collects terms with overflow checking.
struct Terms {
  std::vector<ActivationTerm> list;
  bool overflow = false;

  void add(std::string_view name, std::optional<std::uint64_t> bytes, bool tensor_parallel, bool selective = false) {
    if (!bytes) {
      overflow = true;
      return;
    }
    if (*bytes == 0) return;
    list.push_back({name, *bytes, tensor_parallel, selective});
  }
};

std::optional<std::uint64_t> mul(std::uint64_t a, std::uint64_t b, std::uint64_t c = 1, std::uint64_t d = 1) {
  auto ab = text::checked_mul(a, b);
  if (!ab) return std::nullopt;
  auto abc = text::checked_mul(*ab, c);
  if (!abc) return std::nullopt;
  return text::checked_mul(*abc, d);
}

}  // namespace

Result<LayerActivations> layer_activations(const ModelArchitecture& a, std::uint32_t layer, const ActivationSettings& s) {
  if (auto v = a.validate(); !v) return fail(v.error());
  if (auto v = check_tensor_parallel(a, s.tensor_parallel); !v) return fail(v.error());
  if (s.micro_batch == 0 || s.sequence == 0)
    return fail(ErrorKind::invalid_input, "micro-batch and sequence length must be at least 1");
  if (s.element_bytes != 2 && s.element_bytes != 4)
    return fail(ErrorKind::invalid_input, text::cat("activation elements are 2 or 4 bytes, got ", s.element_bytes));
  const std::uint64_t t = s.tensor_parallel;
  if (s.sequence_parallel && s.sequence % t != 0)
    return fail(ErrorKind::invalid_input, text::cat("with sequence parallelism the sequence (", s.sequence,
                                                    ") must divide by the tensor-parallel degree (", t, ")"));
  const auto tokens = text::checked_mul(s.sequence, s.micro_batch);
  if (!tokens) return fail(ErrorKind::invalid_input, "sequence x micro-batch overflows 64 bits");
  // Tokens a rank holds outside the tensor-parallel regions.
  const std::uint64_t sb = *tokens;
  const std::uint64_t sb_rep = s.sequence_parallel ? (s.sequence / t) * s.micro_batch : sb;
  const std::uint64_t e = s.element_bytes;
  const std::uint64_t h = a.hidden_size;
  const std::uint64_t heads = a.attention_heads / t;  // per rank (check_tensor_parallel: divisible)
  const LoraTargets trained = s.trained_linears;
  using T = LoraTarget;

  // Per-rank widths of the attention tensors.
  std::uint64_t q_width = a.q_width() / t;
  std::uint64_t k_width = 0, v_width = 0;
  std::uint64_t latent_width = 0;  // MLA: compressed query and KV, inputs of the up-projections
  if (a.mla) {
    const auto& m = *a.mla;
    q_width = heads * (static_cast<std::uint64_t>(m.qk_nope_head_dim) + m.qk_rope_head_dim);
    k_width = q_width;
    v_width = heads * m.v_head_dim;
    latent_width = static_cast<std::uint64_t>(m.q_lora_rank) + m.kv_lora_rank;
  } else {
    const std::uint64_t kv_heads = std::max<std::uint64_t>(a.kv_heads / t, 1);
    k_width = v_width = kv_heads * a.head_dim;
    if (s.attention == AttentionKernel::standard) k_width = v_width = q_width;  // repeat_kv before the matmuls
  }
  const std::uint64_t o_width = a.mla ? v_width : q_width;  // attention output = o_proj input

  Terms terms;
  // Every norm keeps its input (the paper's 2 x 2sbh for two LayerNorms).
  terms.add("norm_inputs", mul(a.norms_per_layer, sb_rep, h, e), false);

  // Attention block.
  const bool attention_trained = trained.has(T::q) || trained.has(T::k) || trained.has(T::v);
  if (attention_trained) terms.add("attention_input", mul(sb_rep, h, e), false);
  if (a.mla && attention_trained) terms.add("attention_latents", mul(s.sequence_parallel ? sb_rep : sb, latent_width, e), false);
  terms.add("query", mul(sb, q_width, e), true);
  terms.add("key", mul(sb, k_width, e), true);
  terms.add("value", mul(sb, v_width, e), true);
  if (s.attention == AttentionKernel::standard) {
    // softmax output (2as^2b), dropout mask (as^2b) and dropout output (2as^2b).
    const auto scores = mul(heads, s.sequence, sb);
    terms.add("attention_scores", scores ? text::checked_mul(*scores, e) : std::nullopt, true, true);
    if (s.dropout) {
      terms.add("attention_dropout_mask", scores, true, true);
      terms.add("attention_dropout_output", scores ? text::checked_mul(*scores, e) : std::nullopt, true, true);
    }
    if (trained.has(T::o)) terms.add("attention_output", mul(sb, o_width, e), true);
  } else {
    // FlashAttention keeps its output (also o_proj's input) and an fp32 log-sum-exp per head and token.
    terms.add("attention_output", mul(sb, o_width, e), true);
    terms.add("softmax_statistics", mul(heads, sb, 4), true);
  }
  if (s.dropout) terms.add("attention_residual_dropout_mask", mul(sb_rep, h), false);

  // Feed-forward block.
  const bool up_trained = trained.has(T::gate) || trained.has(T::up);
  const auto ffn_terms = [&](std::uint64_t width, std::uint64_t copies) {
    // width: FFN width per rank; copies: tokens per token (experts_per_token for routed experts).
    const auto n = text::checked_mul(sb, copies);
    if (!n) {
      terms.overflow = true;
      return;
    }
    if (a.gated_ffn) {
      terms.add("gate_output", mul(*n, width, e), true);
      terms.add("up_output", mul(*n, width, e), true);
    } else {
      terms.add("activation_input", mul(*n, width, e), true);
    }
    if (trained.has(T::down)) terms.add(a.gated_ffn ? "down_input" : "activation_output", mul(*n, width, e), true);
  };
  if (a.is_moe_layer(layer)) {
    const auto& m = a.moe;
    const std::uint64_t width = m.expert_intermediate_size / t;
    if (up_trained || s.trained_router) terms.add("mlp_input", mul(sb_rep, h, e), false);
    terms.add("router_probabilities", mul(s.sequence_parallel ? sb_rep : sb, m.experts, 4), false);
    if (up_trained) terms.add("dispatched_tokens", mul(s.sequence_parallel ? sb_rep : sb, m.experts_per_token, h, e), false);
    ffn_terms(width, m.experts_per_token);
    if (m.shared_experts > 0) ffn_terms(width * m.shared_experts, 1);
  } else {
    if (up_trained) terms.add("mlp_input", mul(sb_rep, h, e), false);
    ffn_terms(a.intermediate_size / t, 1);
  }
  if (s.dropout) terms.add("mlp_residual_dropout_mask", mul(sb_rep, h), false);

  // LoRA: x A, r wide, per adapted matrix (per routed copy for experts).
  if (s.lora_rank > 0) {
    std::uint64_t adapted = 0;
    for (const auto& g : layer_tensors(a, layer)) {
      if (!g.is_matrix() || !lora_adapts(s.lora_targets, g.role)) continue;
      const bool routed = g.role == TensorRole::expert_gate || g.role == TensorRole::expert_up ||
                          g.role == TensorRole::expert_down;
      adapted += routed ? a.moe.experts_per_token : g.count;
    }
    terms.add("lora_intermediates", mul(sb, adapted, s.lora_rank, e), false);
  }
  if (terms.overflow) return fail(ErrorKind::invalid_input, "activation bytes overflow 64 bits");

  LayerActivations out;
  out.terms = std::move(terms.list);
  for (const auto& term : out.terms) out.without_recompute += term.bytes;
  switch (s.recompute) {
    case Recompute::none: out.stored = out.without_recompute; break;
    case Recompute::selective:
      out.stored = out.without_recompute;
      for (const auto& term : out.terms)
        if (term.selective_recompute) out.stored -= term.bytes;
      break;
    case Recompute::full:
      // Only the layer's input (the residual stream) is kept.
      out.stored = sb_rep * h * e;
      out.recompute_working_set = out.without_recompute > out.stored ? out.without_recompute - out.stored : 0;
      break;
  }
  return out;
}

std::string activation_rule(const ModelArchitecture& a, const ActivationSettings& s) {
  std::string rule = "Korthikanti et al. 2022 per-layer terms (sbh(34 + 5as/h) for a GPT layer) from the real shapes";
  if (s.attention == AttentionKernel::flash)
    rule += "; FlashAttention: no s x s scores, output and fp32 log-sum-exp kept";
  else
    rule += "; attention scores materialised (5as^2b with dropout, 2as^2b without)";
  if (a.gated_ffn) rule += "; gated FFN keeps gate, up and their product";
  if (!a.mla && a.kv_heads < a.attention_heads) rule += "; GQA keys/values at kv_heads x head_dim";
  if (!s.dropout) rule += "; no dropout masks";
  if (s.trained_linears != LoraTargets::all_linear())
    rule += "; frozen unadapted linear layers keep no input";
  if (s.tensor_parallel > 1)
    rule += s.sequence_parallel ? text::cat("; tensor + sequence parallel: every term / ", s.tensor_parallel)
                                : text::cat("; tensor parallel: attention and FFN terms / ", s.tensor_parallel,
                                            ", norm inputs and residual masks replicated");
  switch (s.recompute) {
    case Recompute::none: break;
    case Recompute::selective:
      rule += s.attention == AttentionKernel::flash ? "; selective recomputation drops nothing more under FlashAttention"
                                                    : "; selective recomputation drops the attention scores";
      break;
    case Recompute::full: rule += "; full recomputation keeps each layer's input (2sbh) only"; break;
  }
  return rule;
}

}  // namespace hwaccel
