// Loading a model by file or name: a GGUF or safetensors file, a model folder,
// a config.json, a Hugging Face repository (cache or download), or a catalogue id.
module;
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "posix_compat.hpp"

#include <simdjson.h>
#include "json_input.hpp"
module hwaccel.plan;

#include "model_file_support.hpp"

namespace hwaccel {

namespace {

// A model folder: safetensors (an index or a single file, with config.json
// beside it when there is one), a config.json alone, or a single .gguf.
Result<ModelDescription> read_model_folder(const std::filesystem::path& path) {
  const auto exists = [&](const char* name) { return path_kind((path / name).string()) != PathKind::missing; };
  for (const char* index : {"model.safetensors.index.json", "model.safetensors"})
    if (exists(index)) return read_safetensors(path / index);
  if (exists("config.json")) return read_config_json(path / "config.json");
  std::vector<std::filesystem::path> ggufs;
  // A folder that cannot be listed holds no .gguf file to read.
  constexpr std::size_t most_entries = 1'000'000;
  for (const auto& name : folder_entries(path.string(), most_entries).value_or(std::vector<std::string>{}))
    if (name.ends_with(".gguf") && name.size() > 5) ggufs.push_back(path / name);
  if (ggufs.size() == 1) return read_gguf(ggufs.front());
  if (ggufs.size() > 1) {
    std::string names;
    for (std::size_t i = 0; i < ggufs.size() && i < 8; ++i) names += text::cat(i ? ", " : "", ggufs[i].filename().string());
    if (ggufs.size() > 8) names += text::cat(" and ", ggufs.size() - 8, " more");
    return fail(ErrorKind::invalid_input, text::cat(path.string(), ": the folder holds ", ggufs.size(),
                                                    " .gguf files (", names, "): pass the one to plan for as a file"));
  }
  return fail(ErrorKind::invalid_input,
              text::cat(path.string(), ": a model folder needs config.json, model.safetensors(.index.json) or a "
                                       "single .gguf file"));
}

// Whether a name that is not a file means a Hugging Face repo: one '/'
// before any '@revision', and not written as a path (absolute, ./, ../ or
// ~). Several '/' read as a missing file's path, as before.
bool meant_as_hf_repo(std::string_view name) {
  const std::string_view repo = name.substr(0, name.find('@'));
  if (std::count(repo.begin(), repo.end(), '/') != 1) return false;
  return !(name.starts_with('/') || name.starts_with('.') || name.starts_with('~'));
}

// A name that is not a file or folder: a catalogue id, else a repo in the
// local Hugging Face cache. A repo in the cache is read from its files even
// when the catalogue knows it (they are the model itself: its exact tensors
// and dtypes); the catalogue answers when the cache does not have it.
Result<ModelDescription> load_named_model(std::string_view name) {
  const CatalogueEntry* entry = find_catalogue_model(name);
  if (!meant_as_hf_repo(name)) {
    if (entry) return catalogue_model(name);
    auto r = catalogue_model(name);
    return fail(ErrorKind::not_found,
                text::cat("'", text::excerpt(name), "' is neither a file nor a catalogue model; ", r.error().message));
  }
  auto repo = parse_hf_repo_id(text::trim(name));
  if (!repo) {
    if (entry) return catalogue_model(name);
    return fail(ErrorKind::invalid_input, text::cat("no file or folder named '", text::excerpt(name),
                                                    "', and it is not a catalogue model; ", repo.error().message));
  }
  const auto root = hf_hub_cache_root();
  if (!root) {
    if (entry && !repo->revision_given) return catalogue_model(name);
    return fail(ErrorKind::not_found,
                text::cat("'", text::excerpt(name), "' is not a file or a catalogue model, and no Hugging Face cache to look "
                          "in: none of HF_HUB_CACHE, HF_HOME, XDG_CACHE_HOME and HOME is set"));
  }
  const auto snapshot = find_hf_snapshot(*repo, root->path);
  const auto from_cache = [&](const std::filesystem::path& folder) -> Result<ModelDescription> {
    auto d = read_model_folder(folder);
    if (!d) return d;
    d->name = repo->revision_given ? text::cat(repo->repo(), "@", repo->revision) : repo->repo();
    d->notes.insert(d->notes.begin(), text::cat("read from the local Hugging Face cache: ", folder.string()));
    return d;
  };
  if (snapshot) {
    auto d = from_cache(*snapshot);
    if (d || !entry || repo->revision_given) return d;
    // A catalogue model whose cached copy cannot be read: the catalogue's
    // architecture, saying why the local files were not used.
    auto c = catalogue_model(name);
    if (c) c->notes.push_back(text::cat("the local Hugging Face cache copy was not used: ", d.error().message));
    return c;
  }
  if (entry && !repo->revision_given) {
    if (snapshot.error().kind == ErrorKind::not_found) return catalogue_model(name);
    auto c = catalogue_model(name);
    if (c) c->notes.push_back(text::cat("the local Hugging Face cache copy was not used: ", snapshot.error().message));
    return c;
  }
  return fail(Error{snapshot.error().kind,
                    snapshot.error().kind == ErrorKind::not_found
                        ? text::cat("'", text::excerpt(name), "' is not a file or a catalogue model: ", snapshot.error().message,
                                    " (the cache root comes from ", root->from, ")")
                        : snapshot.error().message});
}

}  // namespace

Result<ModelDescription> load_model(std::string_view file_or_name) {
  if (text::trim(file_or_name).empty()) return fail(ErrorKind::invalid_input, "no model given");
  const std::filesystem::path path{std::string(file_or_name)};
  const PathKind kind = path_kind(path.string());
  if (kind == PathKind::missing) return load_named_model(file_or_name);
  if (kind == PathKind::directory) return read_model_folder(path);
  const std::string name = path.filename().string();
  if (name.ends_with(".gguf")) return read_gguf(path);
  if (name.ends_with(".safetensors") || name.ends_with(".safetensors.index.json")) return read_safetensors(path);
  if (name.ends_with(".json")) return read_config_json(path);
  // No telling extension: look at the first bytes.
  auto file = model_files::BinaryFile::open(path);
  if (!file) return fail(file.error());
  char magic[4] = {};
  if (file->size() >= 4 && file->read_at(0, magic, 4) && std::string_view(magic, 4) == "GGUF") return read_gguf(path);
  return fail(ErrorKind::invalid_input,
              text::cat(path.string(), ": not a recognised model file (.gguf, .safetensors, *.index.json or config.json)"));
}

}  // namespace hwaccel
