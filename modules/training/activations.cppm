// Activation memory of one transformer layer in training, term by term, as
// Korthikanti et al., "Reducing Activation Recomputation in Large
// Transformer Models" (2022) count it, generalised to the architectures the
// library describes.
//
// The paper's layer (GPT: LayerNorm, multi-head attention with
// materialised scores, a 4h GeLU MLP, dropout) stores per layer
//   sbh (34 + 5as/h) bytes                without parallelism
//   sbh (10 + 24/t + 5as/(ht))            with tensor parallelism t
//   sbh (34/t + 5as/(ht))                 with tensor and sequence parallelism
//   sbh (10 + 24/t), sbh (34/t)           with selective recomputation
//   2sbh                                  with full recomputation
// for sequence s, micro-batch b, hidden h, heads a (16-bit activations,
// 1-byte dropout masks). The terms below reproduce that exactly for such a
// layer; for other layers each term follows the real shapes:
// - GQA: keys and values are kv_heads x head_dim wide (FlashAttention keeps
//   them that way; materialised attention expands them to every head).
// - FlashAttention keeps no s x s scores: it stores its output and an fp32
//   log-sum-exp per head and token, and recomputes the scores backward, so
//   selective recomputation has nothing left to drop.
// - Gated FFNs (SwiGLU/GeGLU) keep the gate and up outputs and their
//   product (a fused kernel recomputes the activation); a plain MLP keeps
//   the activation's input and output.
// - No dropout (Llama, Mistral, Qwen...) means no masks.
// - A linear layer's input is kept only to compute its weight (or
//   adapter) gradient: frozen, unadapted layers do not keep theirs.
// - MoE layers keep every token's copy for each of its experts_per_token
//   experts and the router's fp32 probabilities.
module;
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>
export module hwaccel.training:activations;
import hwaccel.hardware;
import hwaccel.plan;
import :settings;

export namespace hwaccel {

/// What decides a layer's activations besides its shape.
struct ActivationSettings {
  std::uint64_t micro_batch = 1;  ///< b
  std::uint64_t sequence = 2048;  ///< s
  std::uint32_t tensor_parallel = 1;
  bool sequence_parallel = false;
  Recompute recompute = Recompute::none;
  AttentionKernel attention = AttentionKernel::flash;
  bool dropout = false;
  /// Bytes of one activation element: 2 (bf16/fp16) or 4 (fp32).
  std::uint32_t element_bytes = 2;
  /// Linear layers whose weights or adapters receive gradients, and so keep
  /// their inputs. All of them for full training; none for prefix tuning.
  LoraTargets trained_linears = LoraTargets::all_linear();
  /// Whether MoE routers train (full training).
  bool trained_router = true;
  /// LoRA rank and targets: each adapted matrix keeps its r-wide
  /// intermediate (x A) for B's gradient. Rank 0: no adapters.
  std::uint32_t lora_rank = 0;
  LoraTargets lora_targets;
};

/// One stored tensor (or group of tensors) of a layer.
struct ActivationTerm {
  std::string_view name;     ///< "norm_inputs", "query", "attention_scores", "gate_output"...
  std::uint64_t bytes = 0;   ///< on one tensor-parallel rank
  /// Inside the tensor-parallel region (divided by t), or replicated on
  /// every rank (divided by t only with sequence parallelism).
  bool tensor_parallel = false;
  /// What selective recomputation drops (the attention scores).
  bool selective_recompute = false;

  friend bool operator==(const ActivationTerm&, const ActivationTerm&) = default;
};

/// A layer's activations on one rank.
struct LayerActivations {
  std::vector<ActivationTerm> terms;  ///< everything kept without recomputation
  std::uint64_t without_recompute = 0;  ///< sum of terms
  std::uint64_t stored = 0;  ///< kept between forward and backward under the recomputation setting
  /// Peak live during this layer's backward pass beyond `stored`: a fully
  /// recomputed layer rebuilds its activations (without_recompute - stored);
  /// otherwise 0.
  std::uint64_t recompute_working_set = 0;

  friend bool operator==(const LayerActivations&, const LayerActivations&) = default;
};

/// Activations of layer `layer` (dense or MoE as the architecture says) for
/// one micro-batch on one tensor-parallel rank. invalid_input when the
/// tensor-parallel degree does not fit the architecture or the product
/// overflows.
[[nodiscard]] Result<LayerActivations> layer_activations(const ModelArchitecture& architecture, std::uint32_t layer,
                                           const ActivationSettings& settings);

/// One line naming the accounting applied: the paper's terms and the
/// deviations these settings and this architecture call for.
std::string activation_rule(const ModelArchitecture& architecture, const ActivationSettings& settings);

}  // namespace hwaccel
