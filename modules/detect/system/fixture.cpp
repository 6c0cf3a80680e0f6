// Fixture replay: a captured machine served from a folder (docs/fixtures.md).
// The root/ tree is indexed once; symlinks resolve inside it and a link that
// would leave it is an error. No path outside the fixture is ever opened.
module;
#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <chrono>
#include <cstring>
#include <deque>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include "threads.hpp"
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "posix_compat.hpp"

module hwaccel.detect;

#include "not_captured.hpp"
#include "posix_file.hpp"

namespace hwaccel {

namespace {

// Folder entries are looked up by name on every path component of every
// read: a hash of the name, not a walk of string compares down a tree.
struct NameHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view name) const noexcept { return std::hash<std::string_view>{}(name); }
};

struct Node {
  FileType type = FileType::unknown;
  std::uint64_t size = 0;
  std::uint32_t mode = 0;
  std::string link;                // symlink target
  std::string disk_path;           // regular file: its path below root/ ("sys/class/...")
  std::uint16_t layer = 0;         // regular file: which folder's root/ holds it (0: the fixture's own)
  std::optional<std::string> data; // preloaded content (whole file, or the first preload bytes)
  bool data_complete = false;
  bool unreadable = false;         // a directory that could not be listed (permissions)
  std::unordered_map<std::string, std::unique_ptr<Node>, NameHash, std::equal_to<>> children;  // directory
};

std::vector<std::string_view> components(std::string_view path) {
  std::vector<std::string_view> out;
  while (!path.empty()) {
    const std::string_view c = text::next_token(path, '/');
    if (!c.empty() && c != ".") out.push_back(c);
  }
  return out;
}

using posix::FileDescriptor;
using posix::file_type_of;

// O_NOFOLLOW makes a symbolic link fail with ELOOP: in the fixture's own
// folders (indexed without links) that is a link planted since.
Error open_error(int err, std::string_view shown) {
  return Error{err == EACCES || err == EPERM ? ErrorKind::permission_denied
               : err == ELOOP                ? ErrorKind::not_regular_file
                                             : ErrorKind::io_error,
               text::cat("cannot open ", shown, " in the fixture: ",
                         err == ELOOP ? "a symbolic link is on its way, and none is followed" : std::strerror(err))};
}

// Reads at most `cap` bytes of the regular file open on `fd`; `truncated`
// when more is there. The type is checked on the descriptor, so a FIFO or
// device node is never read.
Result<FileContent> read_open_file(const FileDescriptor& fd, std::size_t cap, std::string_view shown) {
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
    return fail(ErrorKind::not_regular_file, text::cat("refusing to read ", shown, ": not a regular file"));
  cap = std::min<std::size_t>(cap, std::numeric_limits<std::size_t>::max() - 1);
  FileContent content;
  const std::size_t want = std::min<std::uint64_t>(cap, static_cast<std::uint64_t>(st.st_size)) + 1;
  content.data.resize(std::min<std::size_t>(want, 1 << 16));
  std::size_t got = 0;
  while (got < cap + 1) {
    if (got == content.data.size()) content.data.resize(std::min<std::size_t>(content.data.size() * 2, cap + 1));
    const ssize_t n = ::read(fd.get(), content.data.data() + got, content.data.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(ErrorKind::io_error, text::cat("cannot read ", shown, " in the fixture: ", std::strerror(errno)));
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  content.data.resize(got);
  if (content.data.size() > cap) {
    content.data.resize(cap);
    content.truncated = true;
  }
  return content;
}

constexpr int file_open_flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;

// Reads a file by path, refusing a symbolic link as its last component and
// never blocking on a FIFO (O_NONBLOCK).
Result<FileContent> read_disk_file(const std::string& disk_path, std::size_t cap, std::string_view shown) {
  FileDescriptor fd(::open(disk_path.c_str(), file_open_flags));
  if (fd.get() < 0) return fail(open_error(errno, shown));
  return read_open_file(fd, cap, shown);
}

#if defined(_WIN32)
// UTF-8 names to and from the paths Windows spells in UTF-16.
std::filesystem::path path_of(std::string_view utf8) {
  return std::filesystem::path(std::u8string(utf8.begin(), utf8.end()));
}
std::string utf8_of(const std::filesystem::path& path) {
  const std::u8string text = path.generic_u8string();
  return std::string(text.begin(), text.end());
}

// Windows has no openat: `relative` is read by its whole path, after
// checking that no component on the way is a link (a reparse point), so a
// link planted in the fixture after it was indexed cannot lead a read outside.
Result<FileContent> read_file_beneath(const std::string& base, std::string_view relative, std::size_t cap,
                                      std::string_view shown) {
  const std::vector<std::string_view> parts = components(relative);
  if (parts.empty()) return fail(ErrorKind::io_error, text::cat("cannot read ", shown, ": it is a directory"));
  std::filesystem::path path = path_of(base);
  for (const auto part : parts) {
    path /= path_of(part);
    std::error_code error;
    if (std::filesystem::is_symlink(std::filesystem::symlink_status(path, error)))
      return fail(ErrorKind::io_error, text::cat("cannot read ", shown, ": a link on the way is not followed"));
  }
  return read_disk_file(path.string(), cap, shown);
}
#else
// Reads `relative` below the directory `base`, one component at a time with
// O_NOFOLLOW: no symbolic link is followed on the way, so a link planted in
// the fixture after it was indexed cannot lead a read outside it.
Result<FileContent> read_file_beneath(const std::string& base, std::string_view relative, std::size_t cap,
                                      std::string_view shown) {
  FileDescriptor dir(::open(base.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  if (dir.get() < 0) return fail(open_error(errno, shown));
  const std::vector<std::string_view> parts = components(relative);
  if (parts.empty()) return fail(ErrorKind::io_error, text::cat("cannot read ", shown, ": it is a directory"));
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    const std::string name(parts[i]);
    FileDescriptor next(::openat(dir.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
    if (next.get() < 0) return fail(open_error(errno, shown));
    dir = std::move(next);
  }
  const std::string last(parts.back());
  FileDescriptor fd(::openat(dir.get(), last.c_str(), file_open_flags));
  if (fd.get() < 0) return fail(open_error(errno, shown));
  return read_open_file(fd, cap, shown);
}
#endif


struct Indexer {
  const FixtureOptions& options;
  std::size_t entries = 0;
  std::size_t preloaded = 0;
  std::uint16_t layer = 0;

  // Indexes the open directory `dir_fd` (below root/ at `relative`) into
  // `node`. Everything is opened relative to its parent's descriptor with
  // O_NOFOLLOW, and links are recorded as text, never followed, so nothing
  // outside the fixture is touched even if the tree changes meanwhile. A
  // folder that cannot be listed is kept, marked unreadable.
#if defined(_WIN32)
  // Windows: the folder is listed by path; links (reparse points) are
  // recorded as text, never followed.
  Result<void> index(const std::filesystem::path& dir_path, const std::string& relative, Node& node, int depth) {
    if (depth > 256) return fail(ErrorKind::invalid_input, text::cat("fixture tree too deep at root/", relative));
    std::error_code error;
    std::filesystem::directory_iterator it(dir_path, error);
    if (error) return fail(ErrorKind::io_error, text::cat("cannot list fixture folder root/", relative, ": ", error.message()));
    std::vector<std::filesystem::directory_entry> entries_here(it, std::filesystem::directory_iterator());
    for (const auto& e : entries_here) {
      const std::string name = utf8_of(e.path().filename());
      if (++entries > options.max_entries)
        return fail(ErrorKind::invalid_input, text::cat("fixture root has more than ", options.max_entries, " entries"));
      const std::string child_relative = relative.empty() ? name : relative + "/" + name;
      const auto status = e.symlink_status(error);
      if (error) continue;
      auto child = std::make_unique<Node>();
      child->mode = 0644;
      if (std::filesystem::is_symlink(status)) {
        child->type = FileType::symlink;
        const auto target = std::filesystem::read_symlink(e.path(), error);
        if (error) continue;
        child->link = utf8_of(target);
      } else if (std::filesystem::is_directory(status)) {
        child->type = FileType::directory;
        child->mode = 0755;
        if (auto r = index(e.path(), child_relative, *child, depth + 1); !r) {
          if (r.error().kind != ErrorKind::io_error) return r;
          child->unreadable = true;
        }
      } else if (std::filesystem::is_regular_file(status)) {
        child->type = FileType::regular;
        child->size = static_cast<std::uint64_t>(e.file_size(error));
        child->disk_path = child_relative;
        child->layer = layer;
        if (child->size <= options.preload_file_bytes && preloaded + child->size <= options.preload_total_bytes)
          if (auto content = read_disk_file(e.path().string(), options.preload_file_bytes, child_relative)) {
            preloaded += content->data.size();
            child->data_complete = !content->truncated;
            child->data = std::move(content->data);
          }
      } else {
        child->type = FileType::unknown;
      }
      node.children.emplace(name, std::move(child));
    }
    return {};
  }
#else
  Result<void> index(FileDescriptor dir_fd, const std::string& relative, Node& node, int depth) {
    if (depth > 256) return fail(ErrorKind::invalid_input, text::cat("fixture tree too deep at root/", relative));
    std::unique_ptr<DIR, int (*)(DIR*)> dir(::fdopendir(dir_fd.get()), &::closedir);
    if (!dir) return fail(ErrorKind::io_error, text::cat("cannot list fixture folder root/", relative, ": ", std::strerror(errno)));
    dir_fd.release();
    const int fd = ::dirfd(dir.get());
    while (const dirent* e = ::readdir(dir.get())) {
      const std::string_view name(e->d_name);
      if (name == "." || name == "..") continue;
      if (++entries > options.max_entries)
        return fail(ErrorKind::invalid_input, text::cat("fixture root has more than ", options.max_entries, " entries"));
      const std::string child_relative = relative.empty() ? std::string(name) : relative + "/" + std::string(name);
      struct stat st{};
      if (::fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      auto child = std::make_unique<Node>();
      child->type = file_type_of(st.st_mode);
      child->size = static_cast<std::uint64_t>(st.st_size);
      child->mode = static_cast<std::uint32_t>(st.st_mode & 07777);
      if (child->type == FileType::directory) {
        FileDescriptor sub(::openat(fd, e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
        if (sub.get() < 0) {
          if (errno != EACCES && errno != EPERM) continue;
          child->unreadable = true;
        } else if (auto r = index(std::move(sub), child_relative, *child, depth + 1); !r) {
          if (r.error().kind != ErrorKind::permission_denied) return r;
          child->unreadable = true;
        }
      } else if (child->type == FileType::symlink) {
        std::string target(4096, '\0');
        const ssize_t n = ::readlinkat(fd, e->d_name, target.data(), target.size());
        if (n < 0 || static_cast<std::size_t>(n) >= target.size()) continue;
        target.resize(static_cast<std::size_t>(n));
        child->link = std::move(target);
      } else if (child->type == FileType::regular) {
        child->disk_path = child_relative;
        child->layer = layer;
        if (child->size <= options.preload_file_bytes && preloaded + child->size <= options.preload_total_bytes) {
          FileDescriptor file(::openat(fd, e->d_name, file_open_flags));
          if (file.get() >= 0) {
            if (auto content = read_open_file(file, options.preload_file_bytes, child_relative)) {
              preloaded += content->data.size();
              child->data_complete = !content->truncated;
              child->data = std::move(content->data);
            }
          }
        }
      }
      node.children.emplace(std::string(name), std::move(child));
    }
    return {};
  }
#endif
};

// Lays `over` onto `under`: folders merge, anything else replaces.
void lay_over(Node& under, Node&& over) {
  for (auto& [name, child] : over.children) {
    const auto it = under.children.find(name);
    if (it != under.children.end() && it->second->type == FileType::directory && child->type == FileType::directory &&
        !child->unreadable) {
      lay_over(*it->second, std::move(*child));
      continue;
    }
    under.children.insert_or_assign(name, std::move(child));
  }
}

// Removes the entry at `path` (no link followed on the way) with everything
// below it; an error when there is none, since a timeline removing what is
// not there is a mistake in the timeline.
Result<void> remove_path(Node& root, std::string_view path) {
  const std::vector<std::string_view> parts = components(path);
  if (parts.empty() || path.front() != '/')
    return fail(ErrorKind::invalid_input, text::cat("cannot remove \"", text::excerpt(path), "\": not an absolute path below /"));
  Node* dir = &root;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    if (parts[i] == "..") return fail(ErrorKind::escapes_root, text::cat("cannot remove ", text::excerpt(path), ": it has \"..\""));
    const auto it = dir->children.find(parts[i]);
    if (it == dir->children.end() || it->second->type != FileType::directory)
      return fail(ErrorKind::not_found, text::cat("cannot remove ", text::excerpt(path), ": the previous state has no such folder"));
    dir = it->second.get();
  }
  const auto it = dir->children.find(parts.back());
  if (it == dir->children.end())
    return fail(ErrorKind::not_found, text::cat("cannot remove ", text::excerpt(path), ": the previous state has no such path"));
  dir->children.erase(it);
  return {};
}

}  // namespace

struct FixtureSystem::State {
  // What a captured command printed, loaded when the fixture is opened.
  struct Outputs {
    std::string out;
    std::optional<std::string> err;
  };

  std::string dir;
  std::string commands_dir;
  std::vector<std::string> roots;  // root/ of the fixture, then of each layer (Node::layer)
  FixtureOptions options;
  FixtureManifest manifest;
  Node root;
  // By command, like manifest.commands; empty where an output was too large to
  // preload or could not be read (run() then reads it and reports the problem).
  std::vector<std::optional<Outputs>> outputs;

  // A captured output file must really be inside commands/: a symlinked
  // folder on the way could point anywhere.
  bool inside_commands(const std::string& rel) const {
    const auto resolved = real_path(commands_dir + "/" + rel);
    if (!resolved) return true;  // the read reports the missing file
    const std::string_view r(*resolved);
    return r.starts_with(commands_dir) && r.size() > commands_dir.size() && r[commands_dir.size()] == '/';
  }

  // Loads the captured outputs that fit the preload limits, so that replay
  // touches no disk; `preloaded` is what root/ already took of the budget.
  void preload_outputs(std::size_t preloaded) {
    auto load = [&](const std::string& rel) -> std::optional<std::string> {
      if (!inside_commands(rel)) return std::nullopt;
      auto content = read_disk_file(commands_dir + "/" + rel, options.preload_file_bytes, rel);
      if (!content || content->truncated || preloaded + content->data.size() > options.preload_total_bytes)
        return std::nullopt;
      preloaded += content->data.size();
      return std::move(content->data);
    };
    outputs.reserve(manifest.commands.size());
    for (const CommandRecord& c : manifest.commands) {
      std::optional<Outputs> loaded;
      if (auto out = load(c.stdout_path)) {
        std::optional<std::string> err;
        if (c.stderr_path) err = load(*c.stderr_path);
        if (!c.stderr_path || err) loaded = Outputs{std::move(*out), std::move(err)};
      }
      outputs.push_back(std::move(loaded));
    }
  }

  // Folders already resolved, by the path they were asked by: a detector reads
  // many attributes of one sysfs folder (a PCI function's reached through the
  // /sys/bus/pci/devices link), and the tree does not change once opened, so
  // each such folder is walked once. Only folders that resolved are kept, so
  // every failure is reported by the walk, with its own message.
  mutable Mutex folders_mutex;
  mutable std::unordered_map<std::string, const Node*, NameHash, std::equal_to<>> folders;

  // `path` as walk() resolves it, through the folder cache where the last
  // component is a plain name that needs no link followed.
  Result<const Node*> resolve(std::string_view path, bool follow_last) const {
    const auto slash = path.rfind('/');
    if (slash == std::string_view::npos || slash == 0) return walk(path, follow_last);
    const std::string_view parent = path.substr(0, slash), name = path.substr(slash + 1);
    if (name.empty() || name == "." || name == "..") return walk(path, follow_last);
    const Node* folder = nullptr;
    {
      std::lock_guard lock(folders_mutex);
      if (const auto it = folders.find(parent); it != folders.end()) folder = it->second;
    }
    if (!folder) {
      const auto walked = walk(parent, true);
      if (!walked || (*walked)->type != FileType::directory || (*walked)->unreadable) return walk(path, follow_last);
      folder = *walked;
      std::lock_guard lock(folders_mutex);
      folders.emplace(std::string(parent), folder);
    }
    const auto it = folder->children.find(name);
    if (it == folder->children.end()) return fail(ErrorKind::not_found, text::cat(path, ": no such file or directory"));
    const Node* child = it->second.get();
    if (child->type == FileType::symlink && follow_last) return walk(path, follow_last);
    return child;
  }

  // Walks `path` through the indexed tree without allocating: the remaining
  // text of the path and of each link being followed are kept as views.
  // Links are followed (the last one only when `follow_last`); absolute
  // targets restart at the fixture root, and ".." above the root is an
  // escape, reported rather than clamped.
  Result<const Node*> walk(std::string_view path, bool follow_last) const {
    if (path.empty() || path.front() != '/')
      return fail(ErrorKind::invalid_input, text::cat("path \"", text::excerpt(path), "\" is not absolute"));
    constexpr std::size_t max_depth = 128;
    std::array<const Node*, max_depth> dirs;
    std::size_t depth = 0;
    dirs[depth++] = &root;
    std::array<std::string_view, max_symlink_hops + 1> pending;
    std::size_t npending = 0;
    pending[npending++] = path;
    int hops = 0;
    while (npending > 0) {
      std::string_view& rest = pending[npending - 1];
      while (!rest.empty() && rest.front() == '/') rest.remove_prefix(1);
      if (rest.empty()) {
        --npending;
        continue;
      }
      const std::string_view comp = text::next_token(rest, '/');
      if (comp == ".") continue;
      if (comp == "..") {
        if (depth == 1)
          return fail(ErrorKind::escapes_root, text::cat(path, " leads outside the fixture root"));
        --depth;
        continue;
      }
      const Node* dir = dirs[depth - 1];
      if (dir->type != FileType::directory)
        return fail(ErrorKind::not_found, text::cat(path, ": a component is not a directory"));
      if (dir->unreadable)
        return fail(ErrorKind::permission_denied, text::cat(path, ": a folder on the way could not be read"));
      const auto it = dir->children.find(comp);
      if (it == dir->children.end()) return fail(ErrorKind::not_found, text::cat(path, ": no such file or directory"));
      const Node* child = it->second.get();
      bool last = true;
      for (std::size_t i = npending; i-- > 0;) {
        if (pending[i].find_first_not_of('/') != std::string_view::npos) {
          last = false;
          break;
        }
      }
      if (child->type == FileType::symlink && (!last || follow_last)) {
        if (++hops > max_symlink_hops)
          return fail(ErrorKind::symlink_loop, text::cat(path, ": too many levels of symbolic links"));
        if (!child->link.empty() && child->link.front() == '/') depth = 1;
        pending[npending++] = child->link;
        continue;
      }
      if (depth == max_depth) return fail(ErrorKind::invalid_input, text::cat(path, ": path too deep"));
      dirs[depth++] = child;
    }
    return dirs[depth - 1];
  }
};

Result<FileContent> read_fixture_file(const std::string& path, std::size_t cap, std::string_view shown) {
  return read_disk_file(path, cap, shown);
}

FixtureSystem::FixtureSystem(std::unique_ptr<State> state) : state_(std::move(state)) {}
FixtureSystem::~FixtureSystem() = default;

namespace {

Result<std::string> resolved_folder(std::string_view dir) {
  std::string d(dir);
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  auto resolved = real_path(d);
  if (!resolved) return fail(resolved.error().kind, text::cat("fixture folder ", dir, ": ", resolved.error().message));
  return resolved;
}

// fixture.json of `folder`; nullopt when it has none and `required` is false.
Result<std::optional<FixtureManifest>> load_manifest(const std::string& folder, std::string_view shown, bool required) {
  auto text_read = read_disk_file(folder + "/fixture.json", 16 << 20, text::cat(shown, "/fixture.json"));
  if (!text_read) {
    if (::access((folder + "/fixture.json").c_str(), F_OK) != 0) {
      if (!required) return std::optional<FixtureManifest>{};
      return fail(ErrorKind::not_found, text::cat(shown, " has no fixture.json: not a fixture folder"));
    }
    return fail(text_read.error());
  }
  if (text_read->truncated) return fail(ErrorKind::invalid_input, text::cat(shown, "/fixture.json is larger than 16 MiB"));
  auto manifest = parse_fixture_manifest(text_read->data);
  if (!manifest) return fail(Error{manifest.error().kind, text::cat(shown, ": ", manifest.error().message)});
  return std::optional<FixtureManifest>(std::move(*manifest));
}

// Indexes `folder`/root/ (when there is one) into `into`.
#if defined(_WIN32)
Result<void> index_root(const std::string& folder, std::string_view shown, Indexer& indexer, Node& into) {
  into.type = FileType::directory;
  const auto root_dir = path_of(folder + "/root");
  std::error_code error;
  const auto status = std::filesystem::symlink_status(root_dir, error);
  if (error || !std::filesystem::exists(status)) return {};
  if (!std::filesystem::is_directory(status)) return fail(ErrorKind::invalid_input, text::cat(shown, "/root is not a directory"));
  return indexer.index(root_dir, "", into, 0);
}
#else
Result<void> index_root(const std::string& folder, std::string_view shown, Indexer& indexer, Node& into) {
  into.type = FileType::directory;
  const std::string root_dir = folder + "/root";
  struct stat st{};
  if (::lstat(root_dir.c_str(), &st) != 0) return {};
  if (!S_ISDIR(st.st_mode)) return fail(ErrorKind::invalid_input, text::cat(shown, "/root is not a directory"));
  FileDescriptor root_fd(::open(root_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  if (root_fd.get() < 0) {
    if (errno != EACCES && errno != EPERM)
      return fail(ErrorKind::io_error, text::cat("cannot list ", shown, "/root: ", std::strerror(errno)));
    into.unreadable = true;
    return {};
  }
  return indexer.index(std::move(root_fd), "", into, 0);
}
#endif

}  // namespace

Result<std::unique_ptr<FixtureSystem>> FixtureSystem::open(std::string_view dir, FixtureOptions options) {
  return open_layered(dir, {}, options);
}

Result<std::unique_ptr<FixtureSystem>> FixtureSystem::open_layered(std::string_view dir, std::span<const Layer> layers,
                                                                   FixtureOptions options) {
  if (layers.size() >= std::numeric_limits<std::uint16_t>::max())
    return fail(ErrorKind::invalid_input, text::cat("a fixture takes at most 65534 layers, not ", layers.size()));
  auto state = std::make_unique<State>();
  state->options = options;
  auto resolved = resolved_folder(dir);
  if (!resolved) return fail(resolved.error());
  state->dir = std::move(*resolved);
  state->commands_dir = state->dir + "/commands";
  auto manifest = load_manifest(state->dir, dir, true);
  if (!manifest) return fail(manifest.error());
  state->manifest = std::move(**manifest);

  Indexer indexer{state->options};
  state->roots.push_back(state->dir + "/root");
  if (auto r = index_root(state->dir, dir, indexer, state->root); !r) return fail(r.error());
  for (const Layer& layer : layers) {
    for (const std::string& path : layer.removed)
      if (auto r = remove_path(state->root, path); !r)
        return fail(Error{r.error().kind, text::cat(layer.dir.empty() ? std::string_view(dir) : std::string_view(layer.dir),
                                                    ": ", r.error().message)});
    if (layer.dir.empty()) continue;  // a layer that only removes
    auto resolved_layer = resolved_folder(layer.dir);
    if (!resolved_layer) return fail(resolved_layer.error());
    const std::string& folder = *resolved_layer;
    auto layer_manifest = load_manifest(folder, layer.dir, false);
    if (!layer_manifest) return fail(layer_manifest.error());
    if (*layer_manifest) {
      state->manifest = std::move(**layer_manifest);
      state->commands_dir = folder + "/commands";
    }
    indexer.layer = static_cast<std::uint16_t>(state->roots.size());
    state->roots.push_back(folder + "/root");
    Node over;
    if (auto r = index_root(folder, layer.dir, indexer, over); !r) return fail(r.error());
    if (over.unreadable) return fail(ErrorKind::permission_denied, text::cat("cannot list ", layer.dir, "/root"));
    lay_over(state->root, std::move(over));
  }
  state->preload_outputs(indexer.preloaded);
  return std::unique_ptr<FixtureSystem>(new FixtureSystem(std::move(state)));
}

const FixtureManifest& FixtureSystem::manifest() const noexcept { return state_->manifest; }

Result<FileContent> FixtureSystem::read_file(std::string_view path, std::size_t max_bytes) const {
  auto r = state_->resolve(path, true);
  if (!r) return fail(r.error());
  const Node& n = **r;
  if (n.type == FileType::directory) return fail(ErrorKind::io_error, text::cat("cannot read ", path, ": it is a directory"));
  if (n.type != FileType::regular)
    return fail(ErrorKind::not_regular_file,
                text::cat("refusing to read ", path, ": it is a ", to_string(n.type), ", not a regular file"));
  if (n.data && (n.data_complete || n.data->size() > max_bytes)) {
    FileContent c;
    c.truncated = n.data->size() > max_bytes;
    c.data.assign(*n.data, 0, std::min(max_bytes, n.data->size()));
    return c;
  }
  return read_file_beneath(state_->roots[n.layer], n.disk_path, max_bytes, path);
}

Result<std::vector<DirEntry>> FixtureSystem::list_dir(std::string_view path) const {
  auto r = state_->resolve(path, true);
  if (!r) return fail(r.error());
  const Node& n = **r;
  if (n.type != FileType::directory) return fail(ErrorKind::not_found, text::cat("cannot list ", path, ": not a directory"));
  if (n.unreadable) return fail(ErrorKind::permission_denied, text::cat("cannot list ", path, ": permission denied in the fixture"));
  std::vector<DirEntry> out;
  out.reserve(n.children.size());
  for (const auto& [name, child] : n.children) out.push_back(DirEntry{name, child->type});
  std::sort(out.begin(), out.end(), [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
  return out;
}

Result<std::string> FixtureSystem::read_link(std::string_view path) const {
  auto r = state_->resolve(path, false);
  if (!r) return fail(r.error());
  if ((*r)->type != FileType::symlink)
    return fail(ErrorKind::invalid_input, text::cat("cannot read link ", path, ": not a symbolic link"));
  return (*r)->link;
}

Result<FileStatus> FixtureSystem::status(std::string_view path, bool follow) const {
  auto r = state_->resolve(path, follow);
  if (!r) return fail(r.error());
  FileStatus st{(*r)->type, (*r)->size, (*r)->mode};
  if (const auto it = state_->manifest.permissions.find(path); it != state_->manifest.permissions.end()) {
    st.mode = it->second.mode;
    st.uid = it->second.uid;
    st.gid = it->second.gid;
  }
  return st;
}

ProcessIdentity FixtureSystem::identity() const { return state_->manifest.identity.value_or(ProcessIdentity{}); }

std::optional<std::string> FixtureSystem::env(std::string_view name) const {
  const auto it = state_->manifest.env.find(name);
  if (it == state_->manifest.env.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> FixtureSystem::find_tool(std::string_view name) const {
  const auto& tools = state_->manifest.tools;
  if (std::find(tools.begin(), tools.end(), name) == tools.end()) return std::nullopt;
  // A path names the program itself; a bare name was found on PATH.
  if (name.find('/') != std::string_view::npos) return std::string(name);
  return text::cat("/usr/bin/", name);
}

Result<ToolResult> FixtureSystem::run(const ToolRequest& request) const {
  if (request.argv.empty()) return fail(ErrorKind::invalid_input, "empty command line");
  auto command = [&] { return text::excerpt(join_argv(request.argv), 200); };
  if (!find_tool(request.argv[0]))
    return fail(ErrorKind::tool_not_found, text::cat(request.argv[0], ": not found on PATH (or not executable)"));
  const auto& commands = state_->manifest.commands;
  const auto it = std::find_if(commands.begin(), commands.end(),
                               [&](const CommandRecord& c) { return c.argv == request.argv; });
  if (it == commands.end())
    return replayed::not_captured(request.argv);
  const auto sleep_for = [&](std::chrono::milliseconds d) {
#if HWACCEL_HAS_THREADS
    if (state_->options.simulate_durations) std::this_thread::sleep_for(std::min(d, request.timeout));
#else
    (void)d;  // latency benchmarks run natively only
#endif
  };
  if (it->hang || (it->duration_ms && std::chrono::milliseconds(*it->duration_ms) > request.timeout)) {
    sleep_for(request.timeout);
    return fail(ErrorKind::timeout, text::cat(command(), ": no answer within ", request.timeout.count(),
                                              " ms; its process group was killed"));
  }
  if (it->duration_ms) sleep_for(std::chrono::milliseconds(*it->duration_ms));
  ToolResult result;
  result.exit_code = it->exit;
  result.signal = it->signal;
  result.elapsed = std::chrono::milliseconds(it->duration_ms.value_or(0));
  if (const auto& loaded = state_->outputs[static_cast<std::size_t>(it - commands.begin())]) {
    auto capped = [&](const std::string& data, std::string& into, bool& truncated) {
      into.assign(data, 0, std::min(data.size(), request.max_output_bytes));
      truncated = data.size() > request.max_output_bytes;
    };
    capped(loaded->out, result.out, result.out_truncated);
    if (loaded->err) capped(*loaded->err, result.err, result.err_truncated);
    return result;
  }
  for (const std::string* rel : {&it->stdout_path, it->stderr_path ? &*it->stderr_path : nullptr}) {
    if (rel && !state_->inside_commands(*rel))
      return fail(ErrorKind::escapes_root, text::cat("commands/", text::excerpt(*rel), " leads outside the fixture folder"));
  }
  auto out = read_disk_file(state_->commands_dir + "/" + it->stdout_path, request.max_output_bytes,
                            text::cat("commands/", it->stdout_path));
  if (!out) return fail(out.error());
  result.out = std::move(out->data);
  result.out_truncated = out->truncated;
  if (it->stderr_path) {
    auto err = read_disk_file(state_->commands_dir + "/" + *it->stderr_path, request.max_output_bytes,
                              text::cat("commands/", *it->stderr_path));
    if (!err) return fail(err.error());
    result.err = std::move(err->data);
    result.err_truncated = err->truncated;
  }
  return result;
}

bool FixtureSystem::runs_instantly() const noexcept { return !state_->options.simulate_durations; }

}  // namespace hwaccel
