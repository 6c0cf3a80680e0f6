// Memory a model needs: weights at a quantization level (per tensor), KV
// cache, activations and per-device runtime overhead, each on its own line.
module;
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>
export module hwaccel.plan:memory;
import hwaccel.hardware;
import :model;

export namespace hwaccel {

/// A model's weights at one quantization level, by layer.
///
/// How each tensor is stored:
/// - fp32/bf16/fp16: every tensor, norms included, in that format.
/// - mxfp4: the routed experts of a MoE model (every linear layer of a
///   dense one) in MXFP4 blocks (32 FP4 values and an E8M0 scale, 4.25
///   bits), everything else in bf16, as gpt-oss's checkpoints store them.
/// - fp8, int8, int4, nf4: the linear layers of the blocks (attention,
///   FFN, experts) in the level's encoding; token embedding, output head,
///   norms, biases and MoE routers in bf16, as FP8, GPTQ/AWQ and
///   bitsandbytes checkpoints keep them.
/// - GGUF levels: llama.cpp's quantizer rules per tensor (llama-quant.cpp,
///   llama_tensor_get_type): the output head in Q6_K (Q8_0 when its rows do
///   not divide into blocks), attn_v and ffn_down raised in the layers
///   use_more_bits() picks for the _M mixes, attn_v raised to Q5_K in
///   80-layer models, attn_k/attn_v in Q8_0 and attn_output in Q5_K for
///   8-expert models, block-size fallbacks (Q4_K -> Q5_0, Q6_K -> Q8_0...),
///   1-D tensors and MoE routers in F32. No importance matrix is assumed.
/// - A model read from a file at the level the file holds: the file's own
///   bytes per layer.
/// - A bare parameter count: the layout of the borrowed architecture scaled
///   to the stated parameters.
struct WeightLayout {
  QuantizationLevel level{};
  std::vector<std::uint64_t> layer_bytes;         ///< index = layer
  std::vector<std::uint64_t> layer_expert_bytes;  ///< the routed-expert share of layer_bytes
  std::uint64_t embedding_bytes = 0;              ///< token embedding
  std::uint64_t head_bytes = 0;                   ///< output head and final norm
  std::uint64_t other_bytes = 0;                  ///< tensors outside both (from files)
  std::string basis;                              ///< how the bytes were obtained, one sentence

  std::uint64_t total() const noexcept;
  std::uint64_t layers_total() const noexcept;
};

[[nodiscard]] Result<WeightLayout> weight_layout(const ModelDescription& model, QuantizationLevel level);

/// The KV cache type a runtime uses by default for weights at `level`: the
/// 16-bit (or fp32) type they compute in (vLLM's "auto", llama.cpp's f16).
QuantizationLevel default_kv_cache_type(QuantizationLevel level) noexcept;

/// KV cache bytes one token takes in one layer, on a device holding
/// 1/`tensor_parallel` of the KV heads (heads are replicated when there are
/// fewer than ranks; an MLA latent is replicated on every rank).
[[nodiscard]] Result<std::uint64_t> kv_cache_bytes_per_token_per_layer(const ModelArchitecture& architecture,
                                                         QuantizationLevel kv_type,
                                                         std::uint32_t tensor_parallel = 1);
/// 2 x layers x kv_heads x head_dim x bytes per element, per token
/// (MLA: layers x (kv_lora_rank + qk_rope_head_dim) x bytes): what a token
/// costs while it is inside every layer's window. Past a sliding window or
/// attention chunk only the full-attention layers keep it (kv_cache_bytes).
[[nodiscard]] Result<std::uint64_t> kv_cache_bytes_per_token(const ModelArchitecture& architecture, QuantizationLevel kv_type);
/// The cache for `batch` sequences of `context` tokens: each layer holds
/// min(context, its sliding window or attention chunk) tokens, as vLLM's
/// hybrid KV cache manager (v0.10+) and llama.cpp's SWA cache (without
/// --swa-full) allocate them. Overflow is an error.
[[nodiscard]] Result<std::uint64_t> kv_cache_bytes(const ModelArchitecture& architecture, QuantizationLevel kv_type,
                                     std::uint64_t context, std::uint64_t batch);

/// Tokens of one prefill chunk: what activation memory is sized for
/// unless the runtime says otherwise (vLLM's default max_num_batched_tokens;
/// RuntimeProfile::prefill_chunk_tokens).
inline constexpr std::uint64_t prefill_chunk_tokens = 8192;

/// Activation and workspace memory on one device of a tensor-parallel group
/// of `tensor_parallel`: the live 16-bit tensors of one layer for a prefill
/// chunk of min(context x batch, chunk_tokens) tokens (residual
/// stream and norm output, q/k/v and attention output, gate/up/down of the
/// FFN, split by the rank), plus fp32 logits for the last token of each
/// sequence. Flash attention is assumed: no context x context score matrix.
std::uint64_t activation_bytes(const ModelArchitecture& architecture, std::uint64_t context, std::uint64_t batch,
                               std::uint32_t tensor_parallel = 1,
                               std::uint64_t chunk_tokens = prefill_chunk_tokens);

/// Memory a runtime holds on a device outside weights, KV cache and
/// activations, and why.
struct RuntimeOverhead {
  std::uint64_t bytes = 0;
  std::string_view reason;
};

/// Per-device runtime overhead. CUDA/ROCm: 512 MiB for the driver context
/// and the BLAS/attention libraries' workspaces (a PyTorch process holds
/// 300-600 MiB before allocating a tensor), plus 256 MiB of NCCL/RCCL
/// buffers when the device exchanges activations. TPU, Gaudi, Neuron and
/// other accelerators: 512 MiB for the runtime's compiled programs and
/// scratch (their vendors publish no figure). Apple GPUs: 256 MiB of Metal
/// command buffers and pipelines. CPUs: none beyond the reserve.
RuntimeOverhead runtime_overhead(Backend backend, bool communicates) noexcept;

/// One replica's memory, each part on its own line.
struct MemoryEstimate {
  std::uint64_t weights_bytes = 0;
  std::uint64_t kv_cache_bytes = 0;
  std::uint64_t activation_bytes = 0;
  std::uint64_t overhead_bytes = 0;
  std::uint64_t total_bytes = 0;
  std::uint64_t kv_cache_bytes_per_token = 0;  ///< all layers, one token, one copy

  friend bool operator==(const MemoryEstimate&, const MemoryEstimate&) = default;
};

/// Memory of the model on a single device of `backend` at this level,
/// context and batch (KV cache at `kv_type`).
[[nodiscard]] Result<MemoryEstimate> estimate_memory(const ModelDescription& model, QuantizationLevel level,
                                       QuantizationLevel kv_type, std::uint64_t context, std::uint64_t batch,
                                       Backend backend = Backend::cuda);

}  // namespace hwaccel
