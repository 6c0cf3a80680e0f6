// What every System's file answers mean, on every platform.
module;
#include <algorithm>
#include <cstdint>
#include <string_view>
module hwaccel.detect;

namespace hwaccel {

bool may_read_write(const FileStatus& status, const ProcessIdentity& identity) noexcept {
  if (identity.uid == 0) return true;
  std::uint32_t bits = status.mode & 07;  // others
  if (status.uid == identity.uid) {
    bits = (status.mode >> 6) & 07;
  } else if (status.gid == identity.gid ||
             std::find(identity.groups.begin(), identity.groups.end(), status.gid) != identity.groups.end()) {
    bits = (status.mode >> 3) & 07;
  }
  return (bits & 06) == 06;
}

std::string_view to_string(FileType type) noexcept {
  switch (type) {
    case FileType::regular: return "regular file";
    case FileType::directory: return "directory";
    case FileType::symlink: return "symbolic link";
    case FileType::char_device: return "character device";
    case FileType::block_device: return "block device";
    case FileType::fifo: return "FIFO";
    case FileType::socket: return "socket";
    case FileType::unknown: break;
  }
  return "file of unknown type";
}

}  // namespace hwaccel
