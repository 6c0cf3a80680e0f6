// Recording System: passes every call to another System and keeps what it
// answered, then writes it out as a fixture folder that replays identically.
module;
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include "threads.hpp"
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "posix_compat.hpp"
#if defined(_WIN32)
#include <filesystem>  // posix_file.hpp's folders
#endif
module hwaccel.detect;

#include "posix_file.hpp"

namespace hwaccel {

namespace {

constexpr std::size_t full_capture_cap = std::size_t{16} << 20;

std::vector<std::string> split_components(std::string_view path) {
  std::vector<std::string> out;
  while (!path.empty()) {
    const std::string_view c = text::next_token(path, '/');
    if (!c.empty() && c != ".") out.emplace_back(c);
  }
  return out;
}

std::string join_path(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += "/" + n;
  return out.empty() ? std::string("/") : out;
}

}  // namespace

struct RecordingSystem::State {
  Mutex mutex;
  // Everything keyed by its resolved path (no symlinks in it).
  std::map<std::string, FileContent> files;
  std::map<std::string, std::string> links;       // link path -> target as stored
  std::map<std::string, FileType> nodes;          // paths that exist, with their type
  std::map<std::string, std::string, std::less<>> env;
  std::set<std::string, std::less<>> tools;
  struct Command {
    CommandRecord record;
    std::string out;
    std::string err;
  };
  std::vector<Command> commands;
  std::map<std::string, FilePermissions, std::less<>> permissions;  // device nodes, by the path asked
};

RecordingSystem::RecordingSystem(const System& inner) : inner_(inner), state_(std::make_unique<State>()) {}
RecordingSystem::~RecordingSystem() = default;

namespace {

// Resolves `path` on `inner` component by component, recording every link
// met on the way, so that the fixture reproduces the link structure (sysfs is
// made of relative links). Returns the resolved path, or nullopt if a
// component does not exist.
std::optional<std::string> trace(const System& inner, RecordingSystem::State& st, std::string_view path, bool follow_last) {
  std::vector<std::string> pending = split_components(path);
  std::reverse(pending.begin(), pending.end());  // back() is the next component
  std::vector<std::string> names;
  int hops = 0;
  while (!pending.empty()) {
    std::string comp = std::move(pending.back());
    pending.pop_back();
    if (comp == "..") {
      if (!names.empty()) names.pop_back();
      continue;
    }
    names.push_back(comp);
    const std::string here = join_path(names);
    const auto status = inner.status(here, false);
    if (!status) return std::nullopt;
    const bool last = pending.empty();
    if (status->type == FileType::symlink && (!last || follow_last)) {
      const auto target = inner.read_link(here);
      if (!target || ++hops > 40) return std::nullopt;
      {
        std::lock_guard lock(st.mutex);
        st.links[here] = *target;
      }
      names.pop_back();
      if (!target->empty() && target->front() == '/') names.clear();
      auto parts = split_components(*target);
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) pending.push_back(std::move(*it));
      continue;
    }
    std::lock_guard lock(st.mutex);
    if (status->type == FileType::symlink) st.links.emplace(here, inner.read_link(here).value_or(""));
    else st.nodes.emplace(here, last ? status->type : FileType::directory);
  }
  return join_path(names);
}

}  // namespace

Result<FileContent> RecordingSystem::read_file(std::string_view path, std::size_t max_bytes) const {
  auto result = inner_.read_file(path, max_bytes);
  if (!result) return result;
  const auto resolved = trace(inner_, *state_, path, true);
  if (!resolved) return result;
  FileContent kept = *result;
  if (kept.truncated) {
    // Keep the whole file so that a replay with any cap truncates the same way.
    if (auto full = inner_.read_file(path, full_capture_cap)) kept = std::move(*full);
  }
  std::lock_guard lock(state_->mutex);
  // The first read is kept: it is what detection saw (a telemetry sample
  // taken afterwards reads /proc/meminfo again, changed), so that the
  // fixture replays to the registry captured with it.
  state_->files.try_emplace(*resolved, std::move(kept));
  state_->nodes[*resolved] = FileType::regular;
  return result;
}

Result<std::vector<DirEntry>> RecordingSystem::list_dir(std::string_view path) const {
  auto result = inner_.list_dir(path);
  if (!result) return result;
  const auto resolved = trace(inner_, *state_, path, true);
  if (!resolved) return result;
  const std::string base = *resolved == "/" ? std::string() : *resolved;
  std::vector<std::pair<std::string, std::string>> new_links;
  for (const auto& e : *result) {
    if (e.type == FileType::symlink) {
      const std::string child = base + "/" + e.name;
      if (auto target = inner_.read_link(child)) new_links.emplace_back(child, std::move(*target));
    }
  }
  std::lock_guard lock(state_->mutex);
  state_->nodes[*resolved] = FileType::directory;
  for (const auto& e : *result) {
    const std::string child = base + "/" + e.name;
    if (e.type != FileType::symlink) state_->nodes.emplace(child, e.type);
  }
  for (auto& [p, t] : new_links) state_->links.emplace(p, std::move(t));
  return result;
}

Result<std::string> RecordingSystem::read_link(std::string_view path) const {
  auto result = inner_.read_link(path);
  if (!result) return result;
  const auto parent = trace(inner_, *state_, path, false);
  if (parent) {
    std::lock_guard lock(state_->mutex);
    state_->links[*parent] = *result;
    state_->nodes.erase(*parent);
  }
  return result;
}

Result<FileStatus> RecordingSystem::status(std::string_view path, bool follow) const {
  auto result = inner_.status(path, follow);
  if (result) {
    trace(inner_, *state_, path, follow);
    // A device node becomes a plain file in the fixture: its permissions
    // and owner go to the manifest (what `hwaccel doctor` checks).
    if (result->type == FileType::char_device || result->type == FileType::block_device) {
      std::lock_guard lock(state_->mutex);
      state_->permissions.insert_or_assign(std::string(path), FilePermissions{result->mode, result->uid, result->gid});
    }
  }
  return result;
}

std::optional<std::string> RecordingSystem::env(std::string_view name) const {
  auto value = inner_.env(name);
  if (value) {
    std::lock_guard lock(state_->mutex);
    state_->env.emplace(std::string(name), *value);
  }
  return value;
}

std::optional<std::string> RecordingSystem::find_tool(std::string_view name) const {
  auto path = inner_.find_tool(name);
  if (path) {
    std::lock_guard lock(state_->mutex);
    state_->tools.emplace(name);
  }
  return path;
}

Result<ToolResult> RecordingSystem::run(const ToolRequest& request) const {
  const auto start = std::chrono::steady_clock::now();
  auto result = inner_.run(request);
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  if (!result && result.error().kind != ErrorKind::timeout) return result;
  std::lock_guard lock(state_->mutex);
  if (!request.argv.empty()) state_->tools.emplace(request.argv[0]);
  const bool seen = std::any_of(state_->commands.begin(), state_->commands.end(),
                                [&](const State::Command& c) { return c.record.argv == request.argv; });
  if (seen) return result;
  State::Command cmd;
  cmd.record.argv = request.argv;
  cmd.record.duration_ms = static_cast<std::uint32_t>(std::min<long long>(elapsed.count(), 3'600'000));
  if (!result) {
    cmd.record.hang = true;
  } else {
    cmd.out = result->out;
    cmd.err = result->err;
    cmd.record.exit = result->exit_code;
    cmd.record.signal = result->signal;
  }
  state_->commands.push_back(std::move(cmd));
  return result;
}

Result<void> RecordingSystem::write(std::string_view dir_text, std::string_view machine, std::string_view source) const {
  std::lock_guard lock(state_->mutex);
  auto fresh = posix::fresh_output_dir(dir_text);
  if (!fresh) return fail(fresh.error());
  const std::string dir = std::move(*fresh);
  if (auto r = posix::make_dirs(dir + "/root"); !r) return r;
  if (auto r = posix::make_dirs(dir + "/commands"); !r) return r;
  const std::string root = dir + "/root";

  // Directories first (parents before children), then links and files.
  for (const auto& [path, type] : state_->nodes) {
    if (type == FileType::directory) {
      if (auto r = posix::make_dirs(root + path); !r) return r;
    }
  }
  for (const auto& [path, target] : state_->links) {
    const auto slash = path.rfind('/');
    if (auto r = posix::make_dirs(root + path.substr(0, slash)); !r) return r;
    if (::symlink(target.c_str(), (root + path).c_str()) != 0 && errno != EEXIST)
      return fail(ErrorKind::io_error, text::cat("cannot create link ", root, path, ": ", std::strerror(errno)));
  }
  for (const auto& [path, type] : state_->nodes) {
    if (type == FileType::directory || state_->links.contains(path)) continue;
    const auto slash = path.rfind('/');
    if (auto r = posix::make_dirs(root + path.substr(0, slash)); !r) return r;
    const auto file = state_->files.find(path);
    // Device nodes, FIFOs and files that were only listed become empty
    // regular files: their existence is what detectors look at.
    if (auto r = posix::write_all(root + path, file == state_->files.end() ? std::string_view{} : file->second.data); !r) return r;
  }

  FixtureManifest manifest;
  manifest.machine = std::string(machine);
  manifest.source = std::string(source);
  manifest.synthetic = false;
  manifest.env.insert(state_->env.begin(), state_->env.end());
  manifest.tools.assign(state_->tools.begin(), state_->tools.end());
  manifest.permissions = state_->permissions;
  if (const auto id = inner_.identity(); id.uid != 0) manifest.identity = id;
  for (std::size_t i = 0; i < state_->commands.size(); ++i) {
    const auto& c = state_->commands[i];
    CommandRecord rec = c.record;
    if (auto r = posix::write_command_outputs(dir, i, rec, c.out, c.err); !r) return r;
    manifest.commands.push_back(std::move(rec));
  }
  return posix::write_all(dir + "/fixture.json", write_fixture_manifest(manifest));
}

}  // namespace hwaccel
