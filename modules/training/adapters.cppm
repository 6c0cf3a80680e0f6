// What one tensor-parallel rank holds of a model, what LoRA and prefix
// tuning add to it, and how a frozen model's weights are stored (NF4 with
// its block scales, LLM.int8, fp8, 16-bit).
module;
#include <cstdint>
#include <optional>
#include <string>
#include <vector>
export module hwaccel.training:adapters;
import hwaccel.hardware;
import hwaccel.plan;
import :settings;

export namespace hwaccel {

/// How Megatron-style tensor parallelism splits a tensor.
enum class TensorSplit : std::uint8_t {
  replicated,  ///< every rank holds it whole (norms, MoE routers, MLA down-projections)
  columns,     ///< output rows split: q, k, v, gate, up, vocabulary of embedding and head
  rows,        ///< input columns split: attention output and FFN down projections
};

TensorSplit tensor_split(TensorRole role) noexcept;

/// Checks that a tensor-parallel degree fits the architecture: it divides
/// the attention heads and the FFN widths, and the KV heads divide by it or
/// it by them (KV heads are then replicated). An invalid_input error says
/// which does not.
[[nodiscard]] Result<void> check_tensor_parallel(const ModelArchitecture& architecture, std::uint32_t tensor_parallel);

/// The tensors of layer `layer` as one rank of a tensor-parallel group of
/// `tensor_parallel` holds them (local rows and columns).
std::vector<TensorGroup> rank_layer_tensors(const ModelArchitecture& architecture, std::uint32_t layer,
                                            std::uint32_t tensor_parallel);
/// The token embedding, final norm and (untied) output head on one rank.
std::vector<TensorGroup> rank_global_tensors(const ModelArchitecture& architecture, std::uint32_t tensor_parallel);

/// Whether LoRA targets adapt a tensor role. MLA models: q adapts the query
/// down- and up-projections, k or v the fused KV projections. Routed and
/// shared experts are adapted with their gate/up/down names (PEFT matches
/// module names; Mixtral names its experts w1/w2/w3, which "gate,up,down"
/// would not match in PEFT).
bool lora_adapts(LoraTargets targets, TensorRole role) noexcept;

/// LoRA adds A (r x d_in) and B (d_out x r) to each adapted matrix:
/// r x (d_in + d_out) parameters, per expert for experts.
std::uint64_t lora_parameters(const TensorGroup& group, std::uint32_t rank) noexcept;

/// Trainable LoRA parameters of a whole model, from its real shapes (GQA's
/// narrower k and v, every expert, MLA projections).
struct LoraCount {
  std::uint64_t parameters = 0;
  std::uint64_t adapted_matrices = 0;  ///< matrices (experts counted singly) over all layers

  friend bool operator==(const LoraCount&, const LoraCount&) = default;
};

[[nodiscard]] Result<LoraCount> count_lora_parameters(const ModelArchitecture& architecture, std::uint32_t rank, LoraTargets targets);

/// Prefix tuning's trainable parameters (PEFT PrefixTuningConfig).
struct PrefixCount {
  /// length x layers x 2 (key and value) x kv width (= hidden for
  /// multi-head attention): the prefixes themselves, or without a
  /// projection the whole trainable set.
  std::uint64_t prefixes = 0;
  /// With prefix_projection: the embedding (length x hidden) and the MLP
  /// hidden -> width -> layers x 2 x kv width with biases. Only this trains;
  /// the prefixes are its output.
  std::uint64_t projection = 0;

  std::uint64_t trainable() const noexcept { return projection > 0 ? projection : prefixes; }
  friend bool operator==(const PrefixCount&, const PrefixCount&) = default;
};

PrefixCount count_prefix_parameters(const ModelArchitecture& architecture, std::uint32_t length,
                                    std::uint32_t projection_width);

/// Bytes of one tensor of `elements` weights in bitsandbytes NF4
/// (quantize_4bit, blocks of 64): packed nibbles plus one absmax per block,
/// fp32 (0.5 extra bits per weight) or, with double quantization, 8-bit
/// with one fp32 constant per 256 blocks (0.127 extra bits). Per-tensor
/// constants of a few bytes (the quantization maps) are left out.
std::uint64_t nf4_tensor_bytes(std::uint64_t elements, bool double_quantization) noexcept;

/// Bytes of a frozen tensor group stored at `level`: block linear layers in
/// the level's format (NF4 as above; int8 = LLM.int8 with one fp32 scale per
/// output row; fp8 with one fp32 scale per tensor), every other tensor (and
/// every tensor of a floating level) in `level` if it is fp32/bf16/fp16, or
/// else in `dense`. nullopt on overflow.
std::optional<std::uint64_t> frozen_tensor_bytes(const TensorGroup& group, QuantizationLevel level, bool double_quantization,
                                                 QuantizationLevel dense) noexcept;

}  // namespace hwaccel
