// The local Hugging Face hub cache: `--model org/name` resolved to the files
// `hf download` (or `huggingface-cli download`, or any huggingface_hub call)
// left on this machine. Nothing here uses the network.
module;
#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
export module hwaccel.plan:hf_cache;
import hwaccel.hardware;

export namespace hwaccel {

/// A Hugging Face model repository as `org/name` or `org/name@revision`.
struct HfRepoId {
  std::string org;       ///< "meta-llama"
  std::string name;      ///< "Llama-3.1-8B"
  std::string revision;  ///< a ref (branch or tag) or a commit hash; "main" when none was given
  bool revision_given = false;

  std::string repo() const { return org + "/" + name; }
  /// The repository's folder in the cache: "models--{org}--{name}".
  std::string cache_folder() const { return "models--" + org + "--" + name; }

  friend bool operator==(const HfRepoId&, const HfRepoId&) = default;
};

/// Limits of a repo id (the Hub's own: a name is at most 96 characters).
inline constexpr std::size_t max_hf_repo_part = 96;
inline constexpr std::size_t max_hf_revision = 128;

/// Parses and validates `org/name[@revision]`: exactly one '/', each part
/// 1 to 96 characters of [A-Za-z0-9._-] that starts and ends with a letter,
/// digit or '_' and holds no "--" or ".." (the Hub's rules; "--" would make
/// the cache folder name ambiguous). A revision is 1 to 128 of the same
/// characters, no "..", not starting with '.' or '-' (so refs/pr/N, which
/// holds '/', is not accepted). Anything else, including absolute paths and
/// backslashes, is an invalid_input error saying what is wrong. Never touches
/// the file system.
[[nodiscard]] Result<HfRepoId> parse_hf_repo_id(std::string_view text);

/// The hub cache root and the variable it came from.
struct HfCacheRoot {
  std::filesystem::path path;
  std::string from;  ///< "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME" or "HOME"
};

/// Looks an environment variable up: its value, or nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(std::string_view)>;

/// huggingface_hub's order: $HF_HUB_CACHE; else the legacy
/// $HUGGINGFACE_HUB_CACHE; else $HF_HOME/hub; else
/// $XDG_CACHE_HOME/huggingface/hub; else $HOME/.cache/huggingface/hub. Empty
/// values count as unset; a leading "~/" is expanded with $HOME. nullopt when
/// none of them is set.
std::optional<HfCacheRoot> hf_hub_cache_root(const EnvLookup& env);
/// The same from this process's environment (read only, never modified).
std::optional<HfCacheRoot> hf_hub_cache_root();

/// The snapshot folder of `repo` under the cache root `root`:
/// root/models--{org}--{name}/snapshots/{commit}, the commit from
/// refs/{revision} (default "main"), or `revision` itself when it names a
/// snapshot (a full commit hash, or an unambiguous prefix of at least 7 hex
/// digits). With no revision given and no refs/main, the only snapshot, if
/// there is one. Errors: not_found when the repo, the ref or the snapshot is
/// not in the cache (naming the root and how to download it);
/// invalid_input when several snapshots and no ref leave the choice open
/// (listing them); escapes_root when the snapshot folder, or a link in it,
/// resolves outside the repo's folder; parse_error for a malformed ref file.
[[nodiscard]] Result<std::filesystem::path> find_hf_snapshot(const HfRepoId& repo, const std::filesystem::path& root);

}  // namespace hwaccel
