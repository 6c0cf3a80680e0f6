// What a model is: its architecture, its tensors, its exact parameter count,
// and the readers that get all of that from a model's own files.
module;
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
export module hwaccel.plan:model;
import hwaccel.hardware;

export namespace hwaccel {

/// How attention keeps its key/value cache.
enum class AttentionKind : std::uint8_t {
  multi_head,         ///< one KV head per query head (Llama 2 7B)
  grouped_query,      ///< groups of query heads share a KV head (Llama 3, Mistral)
  multi_query,        ///< a single KV head
  multi_head_latent,  ///< DeepSeek MLA: one compressed latent per token and layer
};

std::string_view to_string(AttentionKind kind) noexcept;

/// What one layer's attention spans, and so how many tokens its KV cache holds.
enum class LayerAttention : std::uint8_t {
  full,     ///< every earlier token: the cache grows with the context
  sliding,  ///< the last `sliding_window` tokens (Mistral 7B v0.1, Gemma 2/3 local layers, gpt-oss)
  chunked,  ///< the tokens of the current `attention_chunk`-token chunk (Llama 4)
};

std::string_view to_string(LayerAttention kind) noexcept;

/// Mixture-of-experts layout of the feed-forward blocks; all zero for a dense model.
struct MoeLayout {
  std::uint32_t experts = 0;                   ///< routed experts per MoE layer
  std::uint32_t experts_per_token = 0;         ///< routed experts each token uses
  std::uint32_t shared_experts = 0;            ///< experts every token uses (DeepSeek)
  std::uint64_t expert_intermediate_size = 0;  ///< FFN width of one expert
  std::uint32_t first_dense_layers = 0;        ///< leading layers with a dense FFN (first_k_dense_replace)
  bool router_bias = false;                    ///< per-expert score-correction bias (DeepSeek V3)
  /// After the leading dense layers, only every `layer_step`-th layer is MoE
  /// (layers step-1, 2*step-1, ...; Llama 4 interleave_moe_layer_step), the
  /// others dense; 0 or 1: every one.
  std::uint32_t layer_step = 0;

  bool is_moe() const noexcept { return experts > 0; }
  friend bool operator==(const MoeLayout&, const MoeLayout&) = default;
};

/// DeepSeek multi-head latent attention dimensions.
struct LatentAttention {
  std::uint32_t q_lora_rank = 0;  ///< 0: queries are projected directly
  std::uint32_t kv_lora_rank = 0;
  std::uint32_t qk_nope_head_dim = 0;
  std::uint32_t qk_rope_head_dim = 0;
  std::uint32_t v_head_dim = 0;

  friend bool operator==(const LatentAttention&, const LatentAttention&) = default;
};

/// The shape of a decoder-only transformer: everything memory, FLOPs and
/// sharding depend on. Field names follow Hugging Face config.json.
struct ModelArchitecture {
  std::string family;                   ///< config.json model_type: "llama", "qwen2", "gemma2", "deepseek_v3"
  std::uint32_t layers = 0;             ///< num_hidden_layers
  std::uint64_t hidden_size = 0;
  std::uint32_t attention_heads = 0;    ///< num_attention_heads
  std::uint32_t kv_heads = 0;           ///< num_key_value_heads
  std::uint32_t head_dim = 0;           ///< per query/key head; MLA: qk_nope + qk_rope
  std::uint64_t intermediate_size = 0;  ///< dense FFN width
  std::uint64_t vocab_size = 0;
  bool tied_embeddings = false;         ///< tie_word_embeddings: the output head reuses the embedding
  bool gated_ffn = true;                ///< SwiGLU/GeGLU (gate, up, down) rather than a two-matrix MLP
  bool qkv_bias = false;                ///< biases on q, k and v (Qwen2)
  std::uint32_t norms_per_layer = 2;    ///< Gemma 2 has 4
  bool norm_bias = false;               ///< LayerNorm with a bias rather than RMSNorm
  std::uint32_t max_context = 0;        ///< max_position_embeddings; 0 when unknown
  /// Sliding-window attention: a windowed layer attends to (and a runtime
  /// keeps the KV of) only the last `sliding_window` tokens.
  std::optional<std::uint32_t> sliding_window;
  /// Which layers slide: with N > 1, every N-th layer (layers N-1, 2N-1, ...)
  /// attends to the whole context and the others within the window (Gemma 3:
  /// 6, five local to one global; Gemma 2 and gpt-oss: 2, alternating); 0 or
  /// 1 with a window: every layer slides (Mistral 7B v0.1). Without a window,
  /// ignored.
  std::uint32_t sliding_window_pattern = 0;
  /// Chunked local attention (Llama 4 attention_chunk_size): a chunked layer
  /// attends only within its chunk of `attention_chunk` tokens.
  std::optional<std::uint32_t> attention_chunk;
  /// Which layers are chunked, as sliding_window_pattern: with N > 1 every
  /// N-th layer is global (Llama 4: 4, its NoPE layers); 0 or 1: all chunked.
  std::uint32_t attention_chunk_pattern = 0;
  MoeLayout moe;
  std::optional<LatentAttention> mla;

  AttentionKind attention_kind() const noexcept;
  /// Width of the query projection: heads x head_dim.
  std::uint64_t q_width() const noexcept;
  /// Width of the key (and value) projection: kv_heads x head_dim.
  std::uint64_t kv_width() const noexcept;
  /// Whether layer `layer` has a routed-expert FFN.
  bool is_moe_layer(std::uint32_t layer) const noexcept;
  /// How many layers have a routed-expert FFN (0 for a dense model).
  std::uint32_t moe_layer_count() const noexcept;
  /// The first layer with a routed-expert FFN; `layers` when there is none.
  std::uint32_t first_moe_layer() const noexcept;
  /// Whether any layer has a dense FFN (of intermediate_size).
  bool has_dense_layers() const noexcept { return moe_layer_count() < layers; }
  /// Elements of KV cache one token needs in one layer: 2 x kv_heads x
  /// head_dim, or kv_lora_rank + qk_rope_head_dim for MLA.
  std::uint64_t kv_elements_per_token_per_layer() const noexcept;
  /// What layer `layer` attends to (chunked before sliding when a config has both).
  LayerAttention layer_attention(std::uint32_t layer) const noexcept;
  /// Tokens of KV cache layer `layer` keeps for a sequence of `context`
  /// tokens: min(context, window or chunk) for a windowed or chunked layer,
  /// `context` for a full-attention one.
  std::uint64_t kv_tokens(std::uint32_t layer, std::uint64_t context) const noexcept;
  /// kv_tokens summed over every layer (saturating).
  std::uint64_t kv_tokens_all_layers(std::uint64_t context) const noexcept;
  /// How many layers are sliding-window or chunked.
  std::uint32_t windowed_layer_count() const noexcept;
  /// Checks the fields are present and consistent (heads divide by KV heads,
  /// sizes non-zero, experts_per_token <= experts...): an invalid_input error
  /// naming the field.
  [[nodiscard]] Result<void> validate() const;

  friend bool operator==(const ModelArchitecture&, const ModelArchitecture&) = default;
};

/// What a tensor does, for per-tensor quantization recipes and for LoRA targets.
enum class TensorRole : std::uint8_t {
  token_embedding,
  output_norm,
  output_head,
  norm,         ///< a per-layer norm weight (or bias) vector
  attn_q,
  attn_k,
  attn_v,
  attn_output,
  attn_bias,    ///< q/k/v bias vectors
  attn_q_a,     ///< MLA query down-projection
  attn_q_b,     ///< MLA query up-projection
  attn_kv_a,    ///< MLA KV down-projection (with the shared rope key)
  attn_kv_b,    ///< MLA KV up-projection
  ffn_gate,
  ffn_up,
  ffn_down,
  expert_gate,
  expert_up,
  expert_down,
  shared_gate,
  shared_up,
  shared_down,
  router,
  router_bias,
};

std::string_view to_string(TensorRole role) noexcept;

/// The linear-layer matrices of a transformer block (attention, MLA, dense
/// and expert FFN projections): the tensors weight quantization and LoRA
/// apply to. Embeddings, the head, norms and routers are not.
constexpr bool is_block_matrix(TensorRole role) noexcept {
  switch (role) {
    case TensorRole::attn_q:
    case TensorRole::attn_k:
    case TensorRole::attn_v:
    case TensorRole::attn_output:
    case TensorRole::attn_q_a:
    case TensorRole::attn_q_b:
    case TensorRole::attn_kv_a:
    case TensorRole::attn_kv_b:
    case TensorRole::ffn_gate:
    case TensorRole::ffn_up:
    case TensorRole::ffn_down:
    case TensorRole::expert_gate:
    case TensorRole::expert_up:
    case TensorRole::expert_down:
    case TensorRole::shared_gate:
    case TensorRole::shared_up:
    case TensorRole::shared_down: return true;
    default: return false;
  }
}

/// The routed experts' FFN matrices: per token, only the chosen experts' are read.
constexpr bool is_routed_expert(TensorRole role) noexcept {
  return role == TensorRole::expert_gate || role == TensorRole::expert_up || role == TensorRole::expert_down;
}

/// `count` tensors of `rows` x `cols` with the same role (count > 1 for
/// experts). `cols` is the input dimension: the one quantization blocks run
/// along (ggml ne[0]). Vectors have rows == 1.
struct TensorGroup {
  TensorRole role = TensorRole::norm;
  std::uint64_t rows = 1;
  std::uint64_t cols = 0;
  std::uint64_t count = 1;

  std::uint64_t parameters() const noexcept { return rows * cols * count; }
  bool is_matrix() const noexcept { return rows > 1; }
  friend bool operator==(const TensorGroup&, const TensorGroup&) = default;
};

/// The tensors of layer `layer` (dense or MoE as the architecture says).
std::vector<TensorGroup> layer_tensors(const ModelArchitecture& architecture, std::uint32_t layer);
/// The tensors outside the layers: token embedding, final norm and, unless
/// the embeddings are tied, the output head.
std::vector<TensorGroup> global_tensors(const ModelArchitecture& architecture);

/// Parameter counts of an architecture.
struct ParameterCount {
  std::uint64_t total = 0;
  /// Parameters one token passes through: shared and `experts_per_token`
  /// routed experts instead of all of them (= total for a dense model).
  std::uint64_t active = 0;
  /// Token embedding plus an untied output head.
  std::uint64_t embedding = 0;

  friend bool operator==(const ParameterCount&, const ParameterCount&) = default;
};

/// Exact counts from the architecture (validated first; overflow is an error).
[[nodiscard]] Result<ParameterCount> count_parameters(const ModelArchitecture& architecture);

/// Where a description came from.
enum class ModelSource : std::uint8_t {
  parameter_count,  ///< only a parameter count was given
  catalogue,        ///< the built-in catalogue
  hf_config,        ///< a Hugging Face config.json
  gguf,             ///< a GGUF file header
  safetensors,      ///< safetensors header(s)
};

std::string_view to_string(ModelSource source) noexcept;

/// Parameters and bytes of one stored element type in a model file.
struct DtypeCount {
  std::string dtype;  ///< "BF16", "Q4_K", "F32"
  std::uint64_t tensors = 0;
  std::uint64_t parameters = 0;
  std::uint64_t bytes = 0;

  friend bool operator==(const DtypeCount&, const DtypeCount&) = default;
};

/// The weights as a model file stores them, split by layer (tensors named
/// "blk.N." in GGUF, "model.layers.N." in safetensors).
struct StoredWeights {
  /// The level the file holds, when it is one this library models (a GGUF
  /// file type, or one dtype across a safetensors checkpoint).
  std::optional<QuantizationLevel> level;
  std::vector<std::uint64_t> layer_bytes;  ///< index = layer
  std::uint64_t embedding_bytes = 0;       ///< token embedding
  std::uint64_t head_bytes = 0;            ///< output head and final norm
  std::uint64_t other_bytes = 0;           ///< anything else (vision tower, extra prediction layers)
  std::vector<DtypeCount> by_dtype;        ///< sorted by dtype name

  std::uint64_t total_bytes() const noexcept;
  friend bool operator==(const StoredWeights&, const StoredWeights&) = default;
};

/// A model to plan for.
struct ModelDescription {
  std::string name;    ///< "llama-3.1-70b", a file name, or "7000000000 parameters"
  ModelSource source = ModelSource::parameter_count;
  std::string origin;  ///< the file read or the catalogue id; empty for a bare count
  ModelArchitecture architecture;
  /// True when the architecture is not the model's own: a bare parameter
  /// count borrows the shape of the nearest dense catalogue model (`notes`
  /// says which) for its layers, heads and KV cache.
  bool architecture_assumed = false;
  std::uint64_t parameters = 0;         ///< total
  std::uint64_t active_parameters = 0;  ///< per token (MoE)
  /// Whether `parameters` is exact (counted from an architecture or file) or
  /// as stated by the caller.
  bool exact_parameters = false;
  /// Present when the description was read from weight files.
  std::optional<StoredWeights> stored;
  /// The level the model is published in when it is not a plain 16-bit
  /// checkpoint (gpt-oss: MXFP4 experts; config.json quantization_config
  /// quant_method "mxfp4"): what a plan without --quant tries first.
  std::optional<QuantizationLevel> native_level;
  /// What a reader should know: assumptions made, tensors not understood.
  std::vector<std::string> notes;

  /// A model known only by its parameter count (must be > 0). The
  /// architecture is that of the nearest dense catalogue model, marked assumed.
  [[nodiscard]] static Result<ModelDescription> from_parameter_count(std::uint64_t parameters);
  /// A model from an architecture: validated and counted exactly.
  [[nodiscard]] static Result<ModelDescription> from_architecture(std::string name, ModelArchitecture architecture);

  friend bool operator==(const ModelDescription&, const ModelDescription&) = default;
};

/// Limits of the file readers. Input beyond them is refused with a clear
/// error, never read whole.
inline constexpr std::uint64_t max_config_json_bytes = 16ull << 20;
/// The safetensors format's own cap on its JSON header (100 MB).
inline constexpr std::uint64_t max_safetensors_header_bytes = 100'000'000;
inline constexpr std::uint64_t max_safetensors_index_bytes = 64ull << 20;
inline constexpr std::uint32_t max_safetensors_shards = 4096;
/// GGUF metadata and tensor-info sections together (a 256k-token vocabulary
/// with merges is about 10 MB).
inline constexpr std::uint64_t max_gguf_header_bytes = 256ull << 20;
inline constexpr std::uint64_t max_gguf_string_bytes = 1ull << 20;
inline constexpr std::uint32_t max_gguf_dims = 4;

/// Reads a Hugging Face config.json (llama, mistral, mixtral, qwen2,
/// qwen2_moe, gemma/gemma2, phi3, deepseek_v2/v3 field names). Missing
/// required fields are a parse_error naming the field.
[[nodiscard]] Result<ModelDescription> model_from_config_json(std::string_view json, std::string_view name = "config.json");
[[nodiscard]] Result<ModelDescription> read_config_json(const std::filesystem::path& path);
/// Reads a GGUF header (versions 2 and 3): architecture from the metadata,
/// exact parameter count and bytes per type from the tensor infos.
[[nodiscard]] Result<ModelDescription> read_gguf(const std::filesystem::path& path);
/// Reads a .safetensors file or a sharded checkpoint's
/// model.safetensors.index.json (every shard's header); takes the
/// architecture from a config.json in the same folder, or infers layers and
/// sizes from the tensor names and shapes when there is none.
[[nodiscard]] Result<ModelDescription> read_safetensors(const std::filesystem::path& path);
/// A catalogue model by id ("llama-3.1-70b"), or a file or folder: a folder
/// with config.json (and weights beside it), a config.json, a .gguf, a
/// .safetensors or a *.safetensors.index.json.
[[nodiscard]] Result<ModelDescription> load_model(std::string_view file_or_name);

/// A parameter count as people write it: "7000000000", "7e9", "7B", "70b",
/// "1.5T", "350M" (K, M, B, T are powers of 1000). nullopt for anything
/// else, zero, or more than 2^64.
std::optional<std::uint64_t> parse_parameter_count(std::string_view text) noexcept;

}  // namespace hwaccel
