// POSIX file plumbing shared by the System implementations that touch the real
// filesystem (the live one and fixture replay). Included right after
// `module hwaccel.detect;`, because it names the module's FileType; the
// headers it needs (<sys/stat.h>, <unistd.h>, <fcntl.h>, <cerrno>, <cstring>,
// <string>, <utility>) come from the including unit's global module fragment.
#pragma once

// Member functions defined in a class are not implicitly inline in a module's
// purview, so each is marked inline: two units of the module include this.

namespace hwaccel::posix {

/// Owns one file descriptor (-1: none) and closes it when destroyed.
class FileDescriptor {
 public:
  FileDescriptor() = default;
  inline explicit FileDescriptor(int fd) noexcept : fd_(fd) {}
  inline FileDescriptor(FileDescriptor&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  inline FileDescriptor& operator=(FileDescriptor&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  inline ~FileDescriptor() { reset(); }

  inline int get() const noexcept { return fd_; }
  inline explicit operator bool() const noexcept { return fd_ >= 0; }
  inline void reset() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  /// Gives the descriptor up (to fdopendir, which then owns it).
  inline int release() noexcept { return std::exchange(fd_, -1); }

 private:
  int fd_ = -1;
};

/// The FileType of a stat() mode.
inline FileType file_type_of(mode_t mode) noexcept {
  if (S_ISREG(mode)) return FileType::regular;
  if (S_ISDIR(mode)) return FileType::directory;
  if (S_ISLNK(mode)) return FileType::symlink;
  if (S_ISCHR(mode)) return FileType::char_device;
  if (S_ISBLK(mode)) return FileType::block_device;
  if (S_ISFIFO(mode)) return FileType::fifo;
  if (S_ISSOCK(mode)) return FileType::socket;
  return FileType::unknown;
}

/// Creates `path` (an absolute folder) and its missing parents.
inline Result<void> make_dirs(const std::string& path) {
#if defined(_WIN32)
  // "C:\\Users\\..." has a drive and either separator: the library's paths.
  std::error_code error;
  std::filesystem::create_directories(std::filesystem::path(path), error);
  if (error) return fail(ErrorKind::io_error, text::cat("cannot create folder ", path, ": ", error.message()));
  return {};
#endif
  std::string partial;
  std::string_view rest = path;
  while (!rest.empty()) {
    const std::string_view c = text::next_token(rest, '/');
    if (c.empty() || c == ".") continue;
    partial += '/';
    partial += c;
    if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST)
      return fail(ErrorKind::io_error, text::cat("cannot create folder ", partial, ": ", std::strerror(errno)));
  }
  return {};
}

/// Creates (or truncates) the file `path`, never through a symbolic link, and
/// writes `data` to it.
inline Result<void> write_all(const std::string& path, std::string_view data) {
  FileDescriptor fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (!fd) return fail(ErrorKind::io_error, text::cat("cannot create ", path, ": ", std::strerror(errno)));
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd.get(), data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(ErrorKind::io_error, text::cat("cannot write ", path, ": ", std::strerror(errno)));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd.release()) != 0)
    return fail(ErrorKind::io_error, text::cat("cannot write ", path, ": ", std::strerror(errno)));
  return {};
}

/// The absolute path of a folder a fixture is written to, after checking that
/// it does not exist or is empty (an empty one is removed, to be made anew).
inline Result<std::string> fresh_output_dir(std::string_view dir_text) {
  std::string dir(dir_text);
  while (dir.size() > 1 && (dir.back() == '/' || dir.back() == '\\')) dir.pop_back();
  if (dir.empty()) return fail(ErrorKind::invalid_input, "no output folder given");
  struct stat st{};
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) return fail(ErrorKind::invalid_input, text::cat(dir, " exists and is not a folder"));
    if (::rmdir(dir.c_str()) != 0)
      return fail(ErrorKind::invalid_input, text::cat(dir, " is not empty; refusing to write a fixture into it"));
  }
#if defined(_WIN32)
  std::error_code error;
  const auto absolute = std::filesystem::absolute(std::filesystem::path(dir), error);
  if (error) return fail(ErrorKind::invalid_input, text::cat(dir, ": ", error.message()));
  return absolute.lexically_normal().generic_string();
#else
  char cwd[4096];
  if (dir.front() != '/' && ::getcwd(cwd, sizeof cwd)) dir = std::string(cwd) + "/" + dir;
  return dir;
#endif
}

/// Writes one tool run's output into a fixture folder's commands/, named as
/// `hwaccel capture` names them ("03-nvidia-smi.stdout"), and sets the
/// record's paths to the files written (stderr only when there is some).
inline Result<void> write_command_outputs(const std::string& dir, std::size_t index, CommandRecord& record,
                                          std::string_view out, std::string_view err) {
  std::string stem = text::cat(index < 10 ? "0" : "", index, "-");
  for (const char c : record.argv.empty() ? std::string_view("tool") : std::string_view(record.argv[0])) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                       c == '_' || c == '.';
    stem.push_back(plain ? c : '_');
  }
  record.stdout_path = stem + ".stdout";
  if (auto r = write_all(dir + "/commands/" + record.stdout_path, out); !r) return r;
  record.stderr_path.reset();
  if (err.empty()) return {};
  record.stderr_path = stem + ".stderr";
  return write_all(dir + "/commands/" + *record.stderr_path, err);
}

}  // namespace hwaccel::posix
