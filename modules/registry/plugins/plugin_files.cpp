// Where plugins are found and which may be loaded: the folders, the checks of
// ownership and permissions, the host program, the descriptor's rules.
module;
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hwaccel_install_paths.h"
module hwaccel.registry;

namespace hwaccel {

namespace plugin_detail {

OwnedFd& OwnedFd::operator=(OwnedFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

OwnedFd::~OwnedFd() {
  if (fd_ >= 0) ::close(fd_);
}

namespace {

// Writable by someone other than its owner and root: by all, or by a group
// other than root's. Owned by someone other than root and this user: that
// owner could change it.
std::optional<std::string> unsafe_because(const struct stat& st, std::string_view what, std::string_view path) {
  if (st.st_mode & S_IWOTH) return text::cat(what, " ", path, " is writable by every user");
  if ((st.st_mode & S_IWGRP) && st.st_gid != 0)
    return text::cat(what, " ", path, " is writable by group ", st.st_gid);
  if (st.st_uid != 0 && st.st_uid != ::geteuid())
    return text::cat(what, " ", path, " is owned by user ", st.st_uid, ", neither root nor this user");
  return std::nullopt;
}

std::string folder_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? std::string("/") : path.substr(0, slash);
}

std::optional<std::string> unsafe_folder(const std::string& folder) {
  struct stat st{};
  if (::stat(folder.c_str(), &st) != 0) return text::cat("plugin folder ", folder, " cannot be read: ", std::strerror(errno));
  return unsafe_because(st, "plugin folder", folder);
}

}  // namespace

Result<OwnedFd> open_plugin_file(const std::string& path) {
  if (auto why = unsafe_folder(folder_of(path))) return fail(ErrorKind::permission_denied, std::move(*why));
  OwnedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return fail(ErrorKind::io_error, text::cat("plugin ", path, " cannot be opened: ", std::strerror(errno)));
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0) return fail(ErrorKind::io_error, text::cat("plugin ", path, " cannot be read"));
  if (!S_ISREG(st.st_mode)) return fail(ErrorKind::not_regular_file, text::cat("plugin ", path, " is not a regular file"));
  if (auto why = unsafe_because(st, "plugin", path)) return fail(ErrorKind::permission_denied, std::move(*why));
  return fd;
}

}  // namespace plugin_detail

std::string_view system_plugin_folder() noexcept { return HWACCEL_SYSTEM_PLUGIN_FOLDER; }

std::string_view plugin_host_installed_path() noexcept { return HWACCEL_PLUGIN_HOST_INSTALLED; }

std::optional<std::string> find_plugin_host(const PluginSettings& settings) {
  const auto runnable = [](const std::string& path) { return ::access(path.c_str(), X_OK) == 0; };
  if (!settings.host.empty()) return runnable(settings.host) ? std::optional(settings.host) : std::nullopt;
  // Beside the running program: the build tree, a relocated install, a wheel.
  std::string self(4096, '\0');
  const ssize_t n = ::readlink("/proc/self/exe", self.data(), self.size() - 1);
  if (n > 0) {
    self.resize(static_cast<std::size_t>(n));
    const std::string folder = plugin_detail::folder_of(self);
    for (const auto* place : {"/hwaccel-plugin-host", "/plugin-host/hwaccel-plugin-host"}) {  // an install; the build tree
      const std::string beside = folder + place;
      if (runnable(beside)) return beside;
    }
  }
  const std::string installed(plugin_host_installed_path());
  if (runnable(installed)) return installed;
  return std::nullopt;
}

std::vector<PluginFile> find_plugins(const PluginSettings& settings) {
  std::vector<std::pair<std::string, std::string>> folders;  // folder, origin
  for (const auto folder : text::split_trimmed(settings.path, ':'))
    if (!folder.empty()) folders.emplace_back(std::string(folder), "HWACCEL_PLUGIN_PATH");
  if (settings.system_folder) folders.emplace_back(std::string(system_plugin_folder()), "system folder");

  std::vector<PluginFile> found;
  for (const auto& [folder, origin] : folders) {
    DIR* dir = ::opendir(folder.c_str());
    if (!dir) continue;  // a folder that does not exist holds no plugin
    std::vector<std::string> names;
    while (const dirent* entry = ::readdir(dir)) {
      const std::string_view name = entry->d_name;
      if (name.size() > 3 && name.ends_with(".so") && name.front() != '.') names.emplace_back(name);
    }
    ::closedir(dir);
    std::sort(names.begin(), names.end());
    const auto folder_problem = plugin_detail::unsafe_folder(folder);
    for (const auto& name : names) {
      PluginFile file{folder + "/" + name, origin, folder_problem};
      if (!file.refused) {
        auto fd = plugin_detail::open_plugin_file(file.path);
        if (!fd) file.refused = fd.error().message;
      }
      found.push_back(std::move(file));
    }
  }
  return found;
}

}  // namespace hwaccel
