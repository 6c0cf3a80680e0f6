// The local Hugging Face hub cache: repo ids, the cache root from the
// environment, and a repo's snapshot folder. The layout is huggingface_hub's
// (https://huggingface.co/docs/huggingface_hub/guides/manage-cache):
//   <root>/models--{org}--{name}/refs/{revision}       a commit hash
//   <root>/models--{org}--{name}/snapshots/{commit}/   links into ../../blobs/
//   <root>/models--{org}--{name}/blobs/{hash}
// A cache is read as untrusted input: every name built into a path is
// validated first, and links that resolve outside the repo's folder are refused.
module;
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>
module hwaccel.plan;


namespace hwaccel {
namespace {

namespace fs = std::filesystem;

// More entries than this in a snapshot or snapshots/ folder is not a cache.
[[maybe_unused]] constexpr std::size_t max_folder_entries = 65536;
[[maybe_unused]] constexpr std::uint64_t max_ref_file_bytes = 256;

bool word_char(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
bool repo_char(char c) noexcept { return word_char(c) || c == '.' || c == '-'; }
bool hex_digit(char c) noexcept { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }
[[maybe_unused]] bool all_hex(std::string_view s) noexcept { return !s.empty() && std::all_of(s.begin(), s.end(), hex_digit); }

// Why `part` is not a valid org or repo name; empty when it is.
std::string part_problem(std::string_view part, std::string_view what) {
  if (part.empty()) return text::cat("the ", what, " is empty");
  if (part.size() > max_hf_repo_part) return text::cat("the ", what, " is longer than ", max_hf_repo_part, " characters");
  for (char c : part)
    if (!repo_char(c))
      return text::cat("the ", what, " holds '", text::excerpt(std::string_view(&c, 1)),
                       "'; only letters, digits, '.', '_' and '-' are allowed");
  if (!word_char(part.front()) || !word_char(part.back()))
    return text::cat("the ", what, " must start and end with a letter, a digit or '_'");
  if (part.find("--") != std::string_view::npos || part.find("..") != std::string_view::npos)
    return text::cat("the ", what, " holds \"--\" or \"..\"");
  return {};
}

std::string revision_problem(std::string_view rev) {
  if (rev.empty()) return "the revision after '@' is empty";
  if (rev.size() > max_hf_revision) return text::cat("the revision is longer than ", max_hf_revision, " characters");
  for (char c : rev)
    if (!repo_char(c))
      return c == '/' ? std::string("the revision holds '/' (refs/pr/N and other nested refs are not supported: give the commit hash)")
                      : text::cat("the revision holds '", text::excerpt(std::string_view(&c, 1)),
                                  "'; only letters, digits, '.', '_' and '-' are allowed");
  if (rev.front() == '.' || rev.front() == '-') return "the revision must not start with '.' or '-'";
  if (rev.find("..") != std::string_view::npos) return "the revision holds \"..\"";
  return {};
}

#if !defined(__wasi__)  // the Hugging Face cache is a folder of links: no realpath in WebAssembly
// Whether `child` (canonical) is `parent` (canonical) or below it.
bool inside(const fs::path& child, const fs::path& parent) {
  const fs::path rel = child.lexically_relative(parent);
  return !rel.empty() && *rel.begin() != "..";
}

std::string download_hint(const HfRepoId& repo) {
  const std::string rev = repo.revision_given ? text::cat(" --revision ", repo.revision) : std::string();
  return text::cat("hwaccel reads only local files and never uses the network: fetch the model first with `hf download ",
                   repo.repo(), rev, "` (or `huggingface-cli download ", repo.repo(), rev,
                   "`), point HF_HUB_CACHE or HF_HOME at the cache that holds it, or pass the model's folder");
}

// Snapshot folder names, sorted.
Result<std::vector<std::string>> list_snapshots(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return names;
  fs::directory_iterator it(dir, ec), end;
  if (ec) return fail(ErrorKind::io_error, text::cat("cannot list ", dir.string(), ": ", ec.message()));
  for (; it != end; it.increment(ec)) {
    if (names.size() >= max_folder_entries)
      return fail(ErrorKind::invalid_input, text::cat(dir.string(), " holds more than ", max_folder_entries, " entries"));
    std::error_code type_ec;
    if (it->is_directory(type_ec)) names.push_back(it->path().filename().string());
  }
  if (ec) return fail(ErrorKind::io_error, text::cat("cannot list ", dir.string(), ": ", ec.message()));
  std::sort(names.begin(), names.end());
  return names;
}

std::string joined(const std::vector<std::string>& names, std::size_t most = 10) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < most; ++i) out += text::cat(i ? ", " : "", text::excerpt(names[i]));
  if (names.size() > most) out += text::cat(" and ", names.size() - most, " more");
  return out.empty() ? std::string("none") : out;
}

// The commit a ref file holds; nullopt when there is no such ref.
Result<std::optional<std::string>> read_ref(const fs::path& repo_dir, std::string_view revision) {
  const fs::path file = repo_dir / "refs" / std::string(revision);
  std::error_code ec;
  const auto st = fs::symlink_status(file, ec);
  if (ec || !fs::exists(st)) return std::optional<std::string>{};
  if (!fs::is_regular_file(st))
    return fail(ErrorKind::not_regular_file, text::cat(file.string(), " is not a regular file (a ref holds a commit hash)"));
  auto content = read_small_file(file.string(), max_ref_file_bytes, "a ref file");
  if (!content) return fail(content.error());
  const std::string commit(text::trim(*content));
  if (!all_hex(commit) || (commit.size() != 40 && commit.size() != 64))
    return fail(ErrorKind::parse_error, text::cat(file.string(), " does not hold a commit hash (40 or 64 hex digits): '",
                                                  text::excerpt(commit), "'"));
  return std::optional<std::string>{commit};
}

// Every link at the top of the snapshot (the files load_model reads) must
// resolve inside the repo's folder; a link to a missing blob among the model
// files is an interrupted download.
Result<void> check_snapshot(const fs::path& snapshot, const fs::path& repo_real) {
  std::error_code ec;
  const fs::path real = fs::canonical(snapshot, ec);
  if (ec) return fail(ErrorKind::io_error, text::cat("cannot resolve ", snapshot.string(), ": ", ec.message()));
  if (!inside(real, repo_real))
    return fail(ErrorKind::escapes_root, text::cat(snapshot.string(), " resolves to ", real.string(),
                                                   ", outside its repository folder ", repo_real.string(), "; refused"));
  fs::directory_iterator it(snapshot, ec), end;
  if (ec) return fail(ErrorKind::io_error, text::cat("cannot list ", snapshot.string(), ": ", ec.message()));
  std::size_t count = 0;
  for (; it != end; it.increment(ec)) {
    if (++count > max_folder_entries)
      return fail(ErrorKind::invalid_input, text::cat(snapshot.string(), " holds more than ", max_folder_entries, " entries"));
    std::error_code link_ec;
    if (!it->is_symlink(link_ec)) continue;
    const fs::path target = fs::weakly_canonical(it->path(), link_ec);
    if (link_ec) return fail(ErrorKind::io_error, text::cat("cannot resolve ", it->path().string(), ": ", link_ec.message()));
    if (!inside(target, repo_real))
      return fail(ErrorKind::escapes_root, text::cat(it->path().string(), " links to ", target.string(),
                                                     ", outside its repository folder ", repo_real.string(),
                                                     "; a hub cache links only into its blobs/: refused"));
    const std::string name = it->path().filename().string();
    const bool model_file = name == "config.json" || name.ends_with(".safetensors") || name.ends_with(".index.json") ||
                            name.ends_with(".gguf");
    if (model_file && !fs::exists(target, link_ec))
      return fail(ErrorKind::not_found, text::cat(it->path().string(), " links to ", target.string(),
                                                  ", which is missing (an interrupted download?)"));
  }
  if (ec) return fail(ErrorKind::io_error, text::cat("cannot list ", snapshot.string(), ": ", ec.message()));
  return {};
}
#endif

std::optional<std::string> process_env(std::string_view name) {
  const std::string n(name);
  const char* v = std::getenv(n.c_str());  // read only: getenv is safe beside other readers
  if (!v) return std::nullopt;
  return std::string(v);
}

}  // namespace

Result<HfRepoId> parse_hf_repo_id(std::string_view input) {
  const auto bad = [&](std::string_view why) {
    return fail(ErrorKind::invalid_input, text::cat("'", text::excerpt(input), "' is not a Hugging Face repo id (org/name or ",
                                                    "org/name@revision): ", why));
  };
  if (input.size() > 2 * max_hf_repo_part + 2 + max_hf_revision) return bad("it is too long");
  if (input.find('\\') != std::string_view::npos) return bad("it holds a backslash");
  if (input.starts_with('/')) return bad("it is an absolute path");
  std::string_view repo = input;
  HfRepoId id;
  id.revision = "main";
  if (const auto at = input.find('@'); at != std::string_view::npos) {
    repo = input.substr(0, at);
    const std::string_view rev = input.substr(at + 1);
    if (const auto why = revision_problem(rev); !why.empty()) return bad(why);
    id.revision = std::string(rev);
    id.revision_given = true;
  }
  const auto slash = repo.find('/');
  if (slash == std::string_view::npos) return bad("it has no '/' between the organisation and the name");
  if (repo.find('/', slash + 1) != std::string_view::npos) return bad("it has more than one '/'");
  const std::string_view org = repo.substr(0, slash), name = repo.substr(slash + 1);
  if (const auto why = part_problem(org, "organisation"); !why.empty()) return bad(why);
  if (const auto why = part_problem(name, "name"); !why.empty()) return bad(why);
  id.org = std::string(org);
  id.name = std::string(name);
  return id;
}

std::optional<HfCacheRoot> hf_hub_cache_root(const EnvLookup& env) {
  const auto get = [&](std::string_view name) -> std::optional<std::string> {
    if (!env) return std::nullopt;
    auto v = env(name);
    if (!v || v->empty()) return std::nullopt;
    return v;
  };
  const auto home = get("HOME");
  const auto expand = [&](std::string value) -> fs::path {
    if (home && (value == "~" || value.starts_with("~/"))) return fs::path(*home) / value.substr(std::min<std::size_t>(2, value.size()));
    return fs::path(value);
  };
  if (auto v = get("HF_HUB_CACHE")) return HfCacheRoot{expand(*v), "HF_HUB_CACHE"};
  if (auto v = get("HUGGINGFACE_HUB_CACHE")) return HfCacheRoot{expand(*v), "HUGGINGFACE_HUB_CACHE"};
  if (auto v = get("HF_HOME")) return HfCacheRoot{expand(*v) / "hub", "HF_HOME"};
  if (auto v = get("XDG_CACHE_HOME")) return HfCacheRoot{expand(*v) / "huggingface" / "hub", "XDG_CACHE_HOME"};
  if (home) return HfCacheRoot{fs::path(*home) / ".cache" / "huggingface" / "hub", "HOME"};
  return std::nullopt;
}

std::optional<HfCacheRoot> hf_hub_cache_root() { return hf_hub_cache_root(process_env); }

Result<fs::path> find_hf_snapshot(const HfRepoId& repo, const fs::path& root) {
#if defined(__wasi__)
  (void)root;
  return fail(ErrorKind::unsupported, text::cat(repo.repo(), ": WebAssembly has no Hugging Face cache to read; ",
                                                 "give the model's config.json or its weight files' headers"));
#else
  // Validated again: a HfRepoId built by hand must not steer the path either.
  auto checked = parse_hf_repo_id(text::cat(repo.repo(), "@", repo.revision));
  if (!checked) return fail(checked.error());
  const fs::path repo_dir = root / repo.cache_folder();
  std::error_code ec;
  if (!fs::is_directory(repo_dir, ec))
    return fail(ErrorKind::not_found, text::cat("no Hugging Face model ", repo.repo(), " in the local cache ", root.string(),
                                                " (no folder ", repo.cache_folder(), " there); ", download_hint(repo)));
  const fs::path repo_real = fs::canonical(repo_dir, ec);
  if (ec) return fail(ErrorKind::io_error, text::cat("cannot resolve ", repo_dir.string(), ": ", ec.message()));
  const fs::path snapshots_dir = repo_dir / "snapshots";
  auto snapshots = list_snapshots(snapshots_dir);
  if (!snapshots) return fail(snapshots.error());
  const auto use = [&](const std::string& commit, std::string_view how) -> Result<fs::path> {
    const fs::path snapshot = snapshots_dir / commit;
    if (!std::binary_search(snapshots->begin(), snapshots->end(), commit))
      return fail(ErrorKind::not_found, text::cat(how, " ", commit, ", which has no snapshot folder in ", snapshots_dir.string(),
                                                  " (an interrupted download?); ", download_hint(repo)));
    if (auto r = check_snapshot(snapshot, repo_real); !r) return fail(r.error());
    return snapshot;
  };

  auto ref = read_ref(repo_dir, repo.revision);
  if (!ref) return fail(ref.error());
  if (*ref) return use(**ref, text::cat((repo_dir / "refs" / repo.revision).string(), " points at"));
  if (repo.revision_given) {
    if (std::binary_search(snapshots->begin(), snapshots->end(), repo.revision)) return use(repo.revision, "revision");
    if (all_hex(repo.revision) && repo.revision.size() >= 7) {
      std::vector<std::string> matches;
      for (const auto& s : *snapshots)
        if (s.starts_with(repo.revision)) matches.push_back(s);
      if (matches.size() == 1) return use(matches.front(), "revision");
      if (matches.size() > 1)
        return fail(ErrorKind::invalid_input, text::cat("revision ", repo.revision, " of ", repo.repo(),
                                                        " is a prefix of several snapshots: ", joined(matches)));
    }
    return fail(ErrorKind::not_found,
                text::cat("no ref or snapshot '", repo.revision, "' of ", repo.repo(), " in the local cache ", repo_dir.string(),
                          " (snapshots: ", joined(*snapshots), "); ", download_hint(repo)));
  }
  if (snapshots->size() == 1) return use(snapshots->front(), "the only snapshot,");
  if (snapshots->empty())
    return fail(ErrorKind::not_found, text::cat("the local cache folder ", repo_dir.string(), " holds no snapshot of ",
                                                repo.repo(), "; ", download_hint(repo)));
  return fail(ErrorKind::invalid_input,
              text::cat(repo_dir.string(), " has no refs/main and ", snapshots->size(), " snapshots: ", joined(*snapshots),
                        "; choose one with ", repo.repo(), "@<commit>"));
#endif
}

}  // namespace hwaccel
