// ReadCache: one detection's reads of the machine, each asked of the wrapped
// System once and then answered from memory.
module;
#include <algorithm>
#include <functional>
#include <memory>
#include "threads.hpp"
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>
module hwaccel.detect;

namespace hwaccel {
namespace {

struct PathHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view path) const noexcept { return std::hash<std::string_view>{}(path); }
};

template <class T>
using PathMap = std::unordered_map<std::string, T, PathHash, std::equal_to<>>;

// Looks `path` up in `map`; on a miss asks `fetch` without holding the lock
// (a read may be slow, and other detectors' reads should not wait on it) and
// keeps its answer. When two threads miss at once both ask; the first answer
// kept is the one served afterwards.
template <class T, class Fetch>
T cached(Mutex& mutex, PathMap<T>& map, std::string_view path, Fetch fetch) {
  {
    std::lock_guard lock(mutex);
    if (const auto it = map.find(path); it != map.end()) return it->second;
  }
  T value = fetch();
  std::lock_guard lock(mutex);
  return map.try_emplace(std::string(path), std::move(value)).first->second;
}

}  // namespace

struct ReadCache::State {
  // A file's content as read with `cap`: it answers any read with a cap no
  // larger, or any read at all when the file was shorter than `cap`.
  struct File {
    Result<FileContent> content;
    std::size_t cap = 0;
  };

  Mutex mutex;
  PathMap<File> files;
  PathMap<Result<std::vector<DirEntry>>> dirs;
  PathMap<Result<std::string>> links;
  PathMap<Result<FileStatus>> followed;      // status(path, true)
  PathMap<Result<FileStatus>> not_followed;  // status(path, false)
};

ReadCache::ReadCache(const System& inner) : inner_(inner), state_(std::make_unique<State>()) {}
ReadCache::~ReadCache() = default;

Result<FileContent> ReadCache::read_file(std::string_view path, std::size_t max_bytes) const {
  {
    std::lock_guard lock(state_->mutex);
    if (const auto it = state_->files.find(path); it != state_->files.end()) {
      const State::File& file = it->second;
      if (!file.content) return fail(file.content.error());
      if (!file.content->truncated || max_bytes <= file.cap) {
        FileContent prefix;
        prefix.data.assign(file.content->data, 0, std::min(max_bytes, file.content->data.size()));
        prefix.truncated = file.content->truncated || file.content->data.size() > max_bytes;
        return prefix;
      }
    }
  }
  // Not read yet, or read with a smaller cap than this caller wants.
  auto content = inner_.read_file(path, max_bytes);
  std::lock_guard lock(state_->mutex);
  state_->files.insert_or_assign(std::string(path), State::File{content, max_bytes});
  return content;
}

Result<std::vector<DirEntry>> ReadCache::list_dir(std::string_view path) const {
  return cached(state_->mutex, state_->dirs, path, [&] { return inner_.list_dir(path); });
}

Result<std::string> ReadCache::read_link(std::string_view path) const {
  return cached(state_->mutex, state_->links, path, [&] { return inner_.read_link(path); });
}

Result<FileStatus> ReadCache::status(std::string_view path, bool follow_symlinks) const {
  return cached(state_->mutex, follow_symlinks ? state_->followed : state_->not_followed, path,
                [&] { return inner_.status(path, follow_symlinks); });
}

std::optional<std::string> ReadCache::env(std::string_view name) const { return inner_.env(name); }

std::optional<std::string> ReadCache::find_tool(std::string_view name) const { return inner_.find_tool(name); }

Result<ToolResult> ReadCache::run(const ToolRequest& request) const { return inner_.run(request); }

bool ReadCache::runs_instantly() const noexcept { return inner_.runs_instantly(); }

}  // namespace hwaccel
