// A plugin's system calls answered from the detection's System: one set of
// rules (paths, caps, deadlines, error codes) whether the plugin runs in this
// process or in hwaccel-plugin-host.
module;
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hwaccel/plugin.h"
module hwaccel.registry;

namespace hwaccel::plugin_detail {

int plugin_status_of(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::not_found:
    case ErrorKind::tool_not_found: return HWACCEL_PLUGIN_NOT_FOUND;
    case ErrorKind::permission_denied: return HWACCEL_PLUGIN_PERMISSION_DENIED;
    case ErrorKind::io_error:
    case ErrorKind::symlink_loop: return HWACCEL_PLUGIN_IO_ERROR;
    case ErrorKind::timeout: return HWACCEL_PLUGIN_TIMEOUT;
    case ErrorKind::not_captured: return HWACCEL_PLUGIN_NOT_CAPTURED;
    default: return HWACCEL_PLUGIN_FAILED;
  }
}

std::uint8_t plugin_file_type(FileType type) noexcept {
  switch (type) {
    case FileType::regular: return HWACCEL_PLUGIN_FILE_REGULAR;
    case FileType::directory: return HWACCEL_PLUGIN_FILE_DIRECTORY;
    case FileType::symlink: return HWACCEL_PLUGIN_FILE_SYMLINK;
    case FileType::char_device: return HWACCEL_PLUGIN_FILE_CHAR_DEVICE;
    case FileType::block_device: return HWACCEL_PLUGIN_FILE_BLOCK_DEVICE;
    case FileType::fifo: return HWACCEL_PLUGIN_FILE_FIFO;
    case FileType::socket: return HWACCEL_PLUGIN_FILE_SOCKET;
    case FileType::unknown: break;
  }
  return HWACCEL_PLUGIN_FILE_UNKNOWN;
}

int PluginCalls::failed(const Error& error) {
  error_ = error.message;
  return plugin_status_of(error.kind);
}

// Paths are absolute, as detectors' are; a fixture resolves them below its root.
bool PluginCalls::valid_path(std::string_view path) {
  if (!path.empty() && path.front() == '/' && path.size() < 4096 && path.find('\0') == std::string_view::npos) return true;
  error_ = text::cat("not an absolute path: \"", text::excerpt(path, 80), "\"");
  return false;
}

int PluginCalls::read_file(std::string_view path, std::uint64_t max_bytes, FileContent& content) {
  if (!valid_path(path)) return HWACCEL_PLUGIN_FAILED;
  // 0 takes the default; more than a tool's output cap is cut to it.
  const std::size_t cap = max_bytes == 0 ? default_read_cap
                                         : static_cast<std::size_t>(std::min<std::uint64_t>(max_bytes, ctx_.options().tool_output_cap));
  auto r = ctx_.system().read_file(path, cap);
  if (!r) return failed(r.error());
  content = std::move(*r);
  error_.clear();
  return HWACCEL_PLUGIN_OK;
}

int PluginCalls::list_dir(std::string_view path, std::vector<DirEntry>& entries) {
  if (!valid_path(path)) return HWACCEL_PLUGIN_FAILED;
  auto r = ctx_.system().list_dir(path);
  if (!r) return failed(r.error());
  entries = std::move(*r);
  error_.clear();
  return HWACCEL_PLUGIN_OK;
}

int PluginCalls::read_link(std::string_view path, std::string& target) {
  if (!valid_path(path)) return HWACCEL_PLUGIN_FAILED;
  auto r = ctx_.system().read_link(path);
  if (!r) return failed(r.error());
  target = std::move(*r);
  error_.clear();
  return HWACCEL_PLUGIN_OK;
}

int PluginCalls::status(std::string_view path, bool follow_symlinks, FileStatus& status) {
  if (!valid_path(path)) return HWACCEL_PLUGIN_FAILED;
  auto r = ctx_.system().status(path, follow_symlinks);
  if (!r) return failed(r.error());
  status = *r;
  error_.clear();
  return HWACCEL_PLUGIN_OK;
}

int PluginCalls::env(std::string_view name, std::string& value) {
  if (name.empty() || name.size() > 256 || name.find_first_of("=\0", 0, 2) != std::string_view::npos) {
    error_ = "not an environment variable's name";
    return HWACCEL_PLUGIN_FAILED;
  }
  auto v = ctx_.system().env(name);
  if (!v) {
    error_ = text::cat(name, " is not set");
    return HWACCEL_PLUGIN_NOT_FOUND;
  }
  value = std::move(*v);
  error_.clear();
  return HWACCEL_PLUGIN_OK;
}

int PluginCalls::run(std::vector<std::string> argv, std::uint32_t timeout_ms, ToolResult& result) {
  // A bare tool name looked up on PATH, as detectors run theirs: a plugin
  // does not choose a program by path.
  if (argv.empty() || argv.front().empty() || argv.front().find('/') != std::string::npos) {
    error_ = "a tool is run by its bare name, looked up on PATH";
    return HWACCEL_PLUGIN_FAILED;
  }
  ToolRequest request = ctx_.request(std::move(argv));
  if (timeout_ms != 0) request.timeout = std::min(request.timeout, std::chrono::milliseconds(timeout_ms));
  const auto started = std::chrono::steady_clock::now();
  auto r = ctx_.system().run(request);
  tool_time_ += std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started);
  if (!r) return failed(r.error());
  result = std::move(*r);
  error_.clear();
  return HWACCEL_PLUGIN_OK;
}

}  // namespace hwaccel::plugin_detail
