// What the lease module's implementation units share: lock files and lease
// records, the usage database. Module-internal (not exported).
module;
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.lease:internals;
import hwaccel.lease;

namespace hwaccel::lease_detail {

/// An open lease file holding its exclusive lock; closing it drops the lock.
class LockFile {
 public:
  LockFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  LockFile(LockFile&& other) noexcept : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}
  LockFile& operator=(LockFile&&) = delete;
  LockFile(const LockFile&) = delete;
  ~LockFile();
  int fd() const noexcept { return fd_; }
  const std::string& path() const noexcept { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

/// `asked`, else $HWACCEL_LEASE_DIR, else default_lease_dir.
std::string lease_directory(std::string_view asked);
/// Refuses a symbolic link, a non-directory and a world-writable folder
/// without the sticky bit; with `create`, makes a missing one (mode 1777).
[[nodiscard]] Result<void> check_lease_directory(const std::string& dir, bool create);
/// The lock of one device identity; timeout when another process holds it.
[[nodiscard]] Result<LockFile> lock_device(const std::string& dir, std::string_view identity);
[[nodiscard]] Result<void> write_record(const LockFile& lock, const LeaseHolder& holder);
std::optional<LeaseHolder> parse_record(std::string_view text);
/// The record of the lease file open at `fd`, when it is one.
std::optional<LeaseHolder> read_record(int fd);
/// The record in the lease file of `identity`, whether or not its lock is held.
std::optional<LeaseHolder> holder_of(const std::string& dir, std::string_view identity);
/// This process as the holder of a device.
LeaseHolder this_process(std::string_view device_id, std::string_view identity, std::string_view command);
std::string user_name(std::uint32_t uid);

/// The usage database of one lease: its records opened at the start, closed
/// at the end; what cannot be written waits in a journal beside the lease
/// files (usage-pending.UID.jsonl) and goes in at the next successful open.
class UsageLog {
 public:
  /// Opens (creating) the database and writes the start records; a failure
  /// is a warning and the records go to the journal.
  UsageLog(std::string db_path, std::string journal_path, const std::vector<LeaseHolder>& holders,
           std::vector<std::string>& warnings);
  ~UsageLog();
  UsageLog(const UsageLog&) = delete;
  UsageLog& operator=(const UsageLog&) = delete;
  /// Closes the records (at most once).
  void finish(std::vector<std::string>& warnings) noexcept;

  struct State;

 private:
  std::unique_ptr<State> state_;
};

/// Device-hours a user has used in the quota's period (their own and, for
/// each group they are in, the group's members'), checked against the quota:
/// the refusal's message, or nullopt when the lease may be taken.
std::optional<std::string> quota_refusal(const Quota& quota, const std::string& db_path, std::uint32_t uid,
                                         const std::string& user, std::size_t devices, std::int64_t now);

}  // namespace hwaccel::lease_detail
