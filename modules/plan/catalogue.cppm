// The built-in catalogue of widely used open models, with their published
// architectures, so a plan needs no model file.
module;
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>
export module hwaccel.plan:catalogue;
import hwaccel.hardware;
import :model;

export namespace hwaccel {

/// One catalogue model: the architecture of its published config.json. The
/// catalogue is data (data/models.json, docs/models.schema.json), compiled
/// in; each entry's "config" is read by the reader of a user's config.json.
struct CatalogueEntry {
  std::string id;            ///< "llama-3.1-70b"
  std::string display_name;  ///< "Llama 3.1 70B"
  std::string hf_repo;       ///< "meta-llama/Llama-3.1-70B"
  std::string family;        ///< config.json model_type
  std::vector<std::string> aliases;  ///< other accepted ids
  std::string source;        ///< where the config comes from
  ModelArchitecture architecture;
  /// The level the published checkpoint stores (gpt-oss: MXFP4); empty: 16-bit.
  std::optional<QuantizationLevel> native_quantization;
};

/// Reads a model catalogue (data/models.json's format, docs/models.schema.json):
/// {"format": "hwaccel-models", "version": 1, "models": [{"id", "name",
/// "hf_repo", "aliases", "source", "config": {config.json's fields}}]}. Each
/// config is read as model_from_config_json reads a config.json and must
/// describe a valid model; an id, repository or alias that names two entries
/// is refused. Errors open with `origin` and name the entry.
[[nodiscard]] Result<std::vector<CatalogueEntry>> parse_model_catalogue(std::string_view json, std::string_view origin);
/// The text of the built-in catalogue, data/models.json, compiled in.
std::string_view builtin_model_catalogue_json() noexcept;

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
