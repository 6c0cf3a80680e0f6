// Whole-file reads of users' documents, bounded before anything is read, and
// what is at a path: POSIX calls, which wasi-libc has too.
module;
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "posix_compat.hpp"
module hwaccel.base;

namespace hwaccel {

namespace {

struct CloseFd {
  int fd;
  ~CloseFd() {
    if (fd >= 0) ::close(fd);
  }
};

struct CloseDir {
  void operator()(DIR* d) const noexcept { ::closedir(d); }
};

// Why a path that is not a regular file has no size, in the words of the
// C library.
const char* not_regular(const struct stat& st) noexcept {
  return std::strerror(S_ISDIR(st.st_mode) ? EISDIR : ENOTSUP);
}

}  // namespace

Result<std::string> read_small_file(std::string_view path_text, std::uint64_t max_bytes, std::string_view what) {
  const std::string path(path_text);
  const CloseFd file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  struct stat st {};
  if (file.fd < 0 || ::fstat(file.fd, &st) != 0)
    return fail(ErrorKind::not_found, text::cat("cannot read ", path, ": ", std::strerror(errno)));
  if (!S_ISREG(st.st_mode)) return fail(ErrorKind::not_found, text::cat("cannot read ", path, ": ", not_regular(st)));
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > max_bytes)
    return fail(ErrorKind::invalid_input, text::cat(path, " is ", size, " bytes; ", what, " is at most ", max_bytes));
  std::string content(static_cast<std::size_t>(size), '\0');
  std::size_t done = 0;
  while (done < content.size()) {
    const auto n = ::read(file.fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail(ErrorKind::io_error, text::cat("short read of ", path));
    done += static_cast<std::size_t>(n);
  }
  return content;
}

PathKind path_kind(std::string_view path) noexcept {
  const std::string p(path);
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return PathKind::missing;
  if (S_ISREG(st.st_mode)) return PathKind::regular;
  if (S_ISDIR(st.st_mode)) return PathKind::directory;
  return PathKind::other;
}

Result<std::uint64_t> regular_file_size(std::string_view path) {
  const std::string p(path);
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return fail(ErrorKind::not_found, text::cat("cannot read ", p, ": ", std::strerror(errno)));
  if (!S_ISREG(st.st_mode)) return fail(ErrorKind::not_found, text::cat("cannot read ", p, ": ", not_regular(st)));
  return static_cast<std::uint64_t>(st.st_size);
}

Result<std::vector<std::string>> folder_entries(std::string_view path, std::size_t most) {
  const std::string p(path);
  const std::unique_ptr<DIR, CloseDir> dir(::opendir(p.c_str()));
  if (!dir) return fail(ErrorKind::io_error, text::cat("cannot list ", p, ": ", std::strerror(errno)));
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(dir.get())) {
    const std::string_view name(e->d_name);
    if (name == "." || name == "..") continue;
    if (names.size() >= most) return fail(ErrorKind::invalid_input, text::cat(p, " holds more than ", most, " entries"));
    names.emplace_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string absolute_path(std::string_view path) {
  std::string full(path);
#if defined(_WIN32)
  if (std::filesystem::path(full).is_absolute()) return std::filesystem::path(full).lexically_normal().generic_string();
#endif
  if (full.empty() || full.front() != '/') {
    char cwd[PATH_MAX];
    if (::getcwd(cwd, sizeof cwd)) full = text::cat(cwd, "/", full);
  }
  return std::filesystem::path(full).lexically_normal().string();
}

Result<std::string> real_path(std::string_view path) {
#if defined(__wasi__)
  (void)path;
  return fail(ErrorKind::unsupported, "links cannot be resolved in WebAssembly (no realpath)");
#else
  const std::string p(path);
  char resolved[PATH_MAX];
  if (!::realpath(p.c_str(), resolved)) return fail(ErrorKind::not_found, std::strerror(errno));
#if defined(_WIN32)
  // One separator, so that paths compare by prefix as on Linux ("Z:/a/b").
  std::string out(resolved);
  std::replace(out.begin(), out.end(), '\\', '/');
  return out;
#else
  return std::string(resolved);
#endif
#endif
}

}  // namespace hwaccel
