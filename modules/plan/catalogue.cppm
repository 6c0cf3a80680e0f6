// The built-in catalogue of widely used open models, with their published
// architectures, so a plan needs no model file.
module;
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
export module hwaccel.plan:catalogue;
import hwaccel.hardware;
import :model;

export namespace hwaccel {

/// One catalogue model: the architecture of its published config.json.
/// Kept in code rather than a data file: these are facts that do not change
/// with a release, the table is checked by the compiler and the tests, and
/// nothing can go missing at install time. Other models come in through
/// their own config.json, GGUF or safetensors files.
struct CatalogueEntry {
  std::string_view id;            ///< "llama-3.1-70b"
  std::string_view display_name;  ///< "Llama 3.1 70B"
  std::string_view hf_repo;       ///< "meta-llama/Llama-3.1-70B"
  std::string_view family;        ///< config.json model_type
  std::uint32_t layers = 0;
  std::uint64_t hidden_size = 0;
  std::uint32_t attention_heads = 0;
  std::uint32_t kv_heads = 0;
  std::uint32_t head_dim = 0;
  std::uint64_t intermediate_size = 0;
  std::uint64_t vocab_size = 0;
  bool tied_embeddings = false;
  bool qkv_bias = false;
  bool gated_ffn = true;   ///< false: a two-matrix MLP (Falcon)
  bool norm_bias = false;  ///< LayerNorm with a bias (Falcon)
  std::uint32_t norms_per_layer = 2;
  std::uint32_t max_context = 0;
  std::uint32_t sliding_window = 0;  ///< 0: none
  /// Every N-th layer global, the others sliding (Gemma 3: 6); 0: all slide.
  std::uint32_t sliding_window_pattern = 0;
  std::uint32_t attention_chunk = 0;  ///< Llama 4 attention_chunk_size; 0: none
  std::uint32_t attention_chunk_pattern = 0;  ///< every N-th layer global (Llama 4: 4)
  MoeLayout moe{};
  std::optional<LatentAttention> mla{};
  /// The level the published checkpoint stores (gpt-oss: MXFP4); empty: 16-bit.
  std::optional<QuantizationLevel> native_quantization{};
  std::string_view aliases;  ///< other accepted ids, '|'-separated
  std::string_view source;   ///< where the config comes from

  ModelArchitecture architecture() const;
};

/// Every catalogue model, in a stable order.
std::span<const CatalogueEntry> model_catalogue() noexcept;
/// Every catalogue model as a JSON array (`hwaccel models --json`,
/// hwaccel.models() in Python): id, name, hf_repo, family, parameter counts,
/// architecture, experts for MoE models, attention kind, sliding-window and
/// chunked-attention layers (sliding_window, sliding_window_pattern,
/// attention_chunk_size, attention_chunk_pattern), native_quantization and
/// source.
std::string model_catalogue_json();
/// The entry with this id or alias, case-insensitively ("Llama-3.1-70B",
/// "meta-llama/Llama-3.1-70B" also work); nullptr when unknown.
const CatalogueEntry* find_catalogue_model(std::string_view name) noexcept;
/// A description of a catalogue model; an invalid_input error listing the
/// ids when the name is unknown.
[[nodiscard]] Result<ModelDescription> catalogue_model(std::string_view name);
/// The dense catalogue model whose parameter count is nearest (in ratio) to
/// `parameters`; what a bare parameter count borrows its shape from.
const CatalogueEntry& nearest_dense_model(std::uint64_t parameters) noexcept;

}  // namespace hwaccel
