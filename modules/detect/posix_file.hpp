// POSIX file plumbing shared by the System implementations that touch the real
// filesystem (the live one and fixture replay). Included right after
// `module hwaccel.detect;`, because it names the module's FileType; the
// headers it needs (<sys/stat.h>, <unistd.h>, <utility>) come from the
// including unit's global module fragment.
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

}  // namespace hwaccel::posix
