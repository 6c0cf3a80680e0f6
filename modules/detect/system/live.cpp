// The live System: bounded, non-blocking file reads and a tool runner that
// spawns without a shell, drains stdout and stderr together, and kills the
// whole process group at the deadline.
module;
#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;
module hwaccel.detect;
import hwaccel.spawn;

#include "posix_file.hpp"

namespace hwaccel {
namespace {

using Clock = std::chrono::steady_clock;

Error errno_error(int err, std::string_view what, std::string_view path) {
  ErrorKind kind = ErrorKind::io_error;
  switch (err) {
    case ENOENT:
    case ENOTDIR: kind = ErrorKind::not_found; break;
    case EACCES:
    case EPERM: kind = ErrorKind::permission_denied; break;
    case ELOOP: kind = ErrorKind::symlink_loop; break;
    default: break;
  }
  // strerrordesc_np: the English text, as the rest of the message is, and
  // without strerror's message-catalogue lookup per missing file.
  const char* description = strerrordesc_np(err);
  return Error{kind, text::cat(what, " ", path, ": ", description ? description : "unknown error")};
}


FileType file_type_of_dirent(unsigned char t) noexcept {
  switch (t) {
    case DT_REG: return FileType::regular;
    case DT_DIR: return FileType::directory;
    case DT_LNK: return FileType::symlink;
    case DT_CHR: return FileType::char_device;
    case DT_BLK: return FileType::block_device;
    case DT_FIFO: return FileType::fifo;
    case DT_SOCK: return FileType::socket;
    default: return FileType::unknown;
  }
}

using posix::FileDescriptor;
using posix::file_type_of;

// Reads until EOF or until `cap` bytes are held; one more byte is attempted
// so that `truncated` is exact. `whole_in_one_read`: a read shorter than asked
// is the end (a sysfs attribute, which the kernel hands over in one read), so
// no second read is spent to see the end of the file.
Result<FileContent> read_fd(int fd, std::size_t cap, std::string_view path, bool whole_in_one_read) {
  const auto read_some = [fd](char* to, std::size_t want) {
    ssize_t n = 0;
    do n = ::read(fd, to, want);
    while (n < 0 && errno == EINTR);
    return n;
  };
  FileContent content;
  // Most files read here (sysfs attributes, small /proc files) are shorter
  // than a page, and sysfs gives a page as the size of each: they are read
  // through the stack, so that the string holds only what was read, not a
  // zero-filled page per file.
  std::array<char, 4096> page;
  bool larger = false;
  while (!larger && content.data.size() <= cap) {
    const std::size_t want = std::min(page.size(), cap + 1 - content.data.size());
    const ssize_t n = read_some(page.data(), want);
    if (n < 0) return fail(errno_error(errno, "cannot read", path));
    if (n == 0) break;
    content.data.append(page.data(), static_cast<std::size_t>(n));
    if (whole_in_one_read && static_cast<std::size_t>(n) < want) break;
    larger = static_cast<std::size_t>(n) == page.size();  // then read in growing chunks below
  }
  std::size_t chunk = std::min<std::size_t>(cap + 1, 4 * page.size());
  while (larger && content.data.size() <= cap) {
    const std::size_t old = content.data.size();
    const std::size_t want = std::min(chunk, cap + 1 - old);
    content.data.resize(old + want);
    const ssize_t n = read_some(content.data.data() + old, want);
    if (n < 0) {
      const int err = errno;
      content.data.resize(old);
      return fail(errno_error(err, "cannot read", path));
    }
    content.data.resize(old + static_cast<std::size_t>(n));
    if (n == 0) break;
    chunk = std::min<std::size_t>(chunk * 2, 1 << 20);
  }
  if (content.data.size() > cap) {
    content.data.resize(cap);
    content.truncated = true;
  }
  return content;
}

// Sorted through an index: /dev and /sys/module hold hundreds of names, and
// swapping the strings themselves was most of a listing's cost.
std::vector<DirEntry> sorted_by_name(std::vector<DirEntry> entries) {
  std::vector<std::uint32_t> order(entries.size());
  std::iota(order.begin(), order.end(), std::uint32_t{0});
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return std::string_view(entries[a].name) < std::string_view(entries[b].name);
  });
  std::vector<DirEntry> sorted;
  sorted.reserve(entries.size());
  for (const std::uint32_t i : order) sorted.push_back(std::move(entries[i]));
  return sorted;
}

// Files of the kernel's own filesystems, whose reads need no fstat first.
// sysfs_attribute: the kernel hands a sysfs attribute over a page at a time,
// so a read shorter than a page is its end (text attributes are at most a
// page; binary ones come in page-sized reads). Other filesystems mounted
// under /sys/fs and /sys/kernel (cgroup, debugfs, tracefs, securityfs) are
// read to EOF, as procfs is. A /proc path through a process's
// root, cwd, exe or descriptors leaves procfs and is read like any file.
enum class KernelFileKind { none, sysfs_attribute, read_to_end };

KernelFileKind kernel_file_kind(std::string_view path) noexcept {
  const bool sys = path.starts_with("/sys/");
  if (!sys && !path.starts_with("/proc/")) return KernelFileKind::none;
  std::string_view rest = path.substr(sys ? 5 : 6);
  while (!rest.empty()) {
    const std::string_view part = text::next_token(rest, '/');
    if (part == ".." || part == ".") return KernelFileKind::none;
    if (!sys && (part == "root" || part == "cwd" || part == "exe" || part == "fd" || part == "map_files" || part == "ns"))
      return KernelFileKind::none;
  }
  if (!sys) return KernelFileKind::read_to_end;
  const bool other_filesystem = path.starts_with("/sys/fs/") || path.starts_with("/sys/kernel/");
  return other_filesystem ? KernelFileKind::read_to_end : KernelFileKind::sysfs_attribute;
}

Error not_regular(std::string_view path, FileType type) {
  return Error{ErrorKind::not_regular_file,
               text::cat("refusing to read ", path, ": it is a ", to_string(type), ", not a regular file")};
}

bool is_directory(int fd) noexcept {
  struct stat st{};
  return ::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
}

std::vector<std::string> split_path_list(std::string_view list) {
  std::vector<std::string> dirs;
  while (!list.empty()) {
    const std::string_view dir = text::next_token(list, ':');
    // An empty entry means the current directory: never search it.
    if (!dir.empty() && dir.front() == '/') dirs.emplace_back(dir);
  }
  return dirs;
}

// The environment for a tool: ours minus injection variables, with the C
// locale so that numbers and messages have one form.
std::vector<std::string> tool_environment(const std::vector<std::string>& stripped) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view var(*e);
    const std::string_view name = var.substr(0, var.find('='));
    if (name == "LC_ALL" || name == "LANG" || name == "LANGUAGE") continue;
    if (std::find(stripped.begin(), stripped.end(), name) != stripped.end()) continue;
    env.emplace_back(var);
  }
  env.emplace_back("LC_ALL=C");
  env.emplace_back("LANG=C");
  return env;
}

int open_pidfd(pid_t pid) noexcept {
#ifdef SYS_pidfd_open
  const long fd = ::syscall(SYS_pidfd_open, pid, 0);
  return fd >= 0 ? static_cast<int>(fd) : -1;
#else
  (void)pid;
  return -1;
#endif
}

// One stream being drained: bytes up to the cap are kept, the rest dropped.
struct Sink {
  FileDescriptor fd;
  std::string* data = nullptr;
  bool* truncated = nullptr;
  std::size_t cap = 0;

  // Returns false at EOF or on error (the stream is then closed).
  bool drain() {
    char buffer[65536];
    while (true) {
      const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
      if (n > 0) {
        const std::size_t keep = std::min<std::size_t>(static_cast<std::size_t>(n), cap - std::min(cap, data->size()));
        data->append(buffer, keep);
        if (keep < static_cast<std::size_t>(n)) *truncated = true;
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      fd.reset();
      return false;
    }
  }
};

class LiveSystem final : public System {
 public:
  explicit LiveSystem(LiveOptions options)
      : options_(std::move(options)), child_env_(tool_environment(options_.stripped_env)) {
    const char* path = std::getenv("PATH");
    // Each folder once, in the order first named: PATH often names one twice.
    auto named = split_path_list(options_.search_path ? *options_.search_path
                                                       : std::string_view(path ? path : "/usr/local/bin:/usr/bin:/bin"));
    named.insert(named.end(), options_.extra_tool_dirs.begin(), options_.extra_tool_dirs.end());
    for (auto& dir : named)
      if (std::find(search_dirs_.begin(), search_dirs_.end(), dir) == search_dirs_.end()) search_dirs_.push_back(std::move(dir));
    for (auto& var : child_env_) child_envp_.push_back(var.data());
    child_envp_.push_back(nullptr);
  }

  Result<FileContent> read_file(std::string_view path, std::size_t max_bytes) const override {
    const std::string p(path);
    // O_NONBLOCK: opening a FIFO must not wait for a writer.
    FileDescriptor fd(::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
    if (!fd) return fail(errno_error(errno, "cannot open", path));
    const KernelFileKind kernel_file = kernel_file_kind(path);
    if (kernel_file == KernelFileKind::none) {
      struct stat st{};
      if (::fstat(fd.get(), &st) != 0) return fail(errno_error(errno, "cannot stat", path));
      if (!S_ISREG(st.st_mode)) return fail(not_regular(path, file_type_of(st.st_mode)));
      return read_fd(fd.get(), max_bytes, path, false);
    }
    // sysfs and procfs hold only folders, links and regular files, so the
    // fstat other files need is not spent on them: a folder shows itself
    // as EISDIR on the first read.
    auto content = read_fd(fd.get(), max_bytes, path, kernel_file == KernelFileKind::sysfs_attribute);
    if (!content && content.error().kind == ErrorKind::io_error && is_directory(fd.get()))
      return fail(not_regular(path, FileType::directory));
    return content;
  }

  Result<std::vector<DirEntry>> list_dir(std::string_view path) const override {
    const std::string p(path);
    std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(p.c_str()), &::closedir);
    if (!dir) return fail(errno_error(errno, "cannot list", path));
    std::vector<DirEntry> entries;
    while (true) {
      errno = 0;
      const dirent* e = ::readdir(dir.get());
      if (!e) {
        if (errno != 0) return fail(errno_error(errno, "cannot list", path));
        break;
      }
      const std::string_view name(e->d_name);
      if (name == "." || name == "..") continue;
      FileType type = file_type_of_dirent(e->d_type);
      if (type == FileType::unknown) {
        struct stat st{};
        if (::fstatat(::dirfd(dir.get()), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) type = file_type_of(st.st_mode);
      }
      entries.push_back(DirEntry{std::string(name), type});
    }
    return sorted_by_name(std::move(entries));
  }

  Result<std::string> read_link(std::string_view path) const override {
    const std::string p(path);
    std::string target(256, '\0');
    while (true) {
      const ssize_t n = ::readlink(p.c_str(), target.data(), target.size());
      if (n < 0) return fail(errno_error(errno, "cannot read link", path));
      if (static_cast<std::size_t>(n) < target.size()) {
        target.resize(static_cast<std::size_t>(n));
        return target;
      }
      if (target.size() >= 65536) return fail(ErrorKind::io_error, text::cat("link target of ", path, " is too long"));
      target.resize(target.size() * 2);
    }
  }

  Result<FileStatus> status(std::string_view path, bool follow) const override {
    const std::string p(path);
    struct stat st{};
    const int rc = follow ? ::stat(p.c_str(), &st) : ::lstat(p.c_str(), &st);
    if (rc != 0) return fail(errno_error(errno, "cannot stat", path));
    return FileStatus{file_type_of(st.st_mode), static_cast<std::uint64_t>(st.st_size),
                      static_cast<std::uint32_t>(st.st_mode & 07777), static_cast<std::uint32_t>(st.st_uid),
                      static_cast<std::uint32_t>(st.st_gid)};
  }

  ProcessIdentity identity() const override {
    ProcessIdentity id{static_cast<std::uint32_t>(::geteuid()), static_cast<std::uint32_t>(::getegid()), {}};
    const int n = ::getgroups(0, nullptr);
    if (n > 0) {
      std::vector<gid_t> groups(static_cast<std::size_t>(n));
      const int got = ::getgroups(n, groups.data());
      for (int i = 0; i < got; ++i) id.groups.push_back(static_cast<std::uint32_t>(groups[static_cast<std::size_t>(i)]));
    }
    return id;
  }

  std::optional<std::string> env(std::string_view name) const override {
    const std::string n(name);
    const char* v = std::getenv(n.c_str());
    if (!v) return std::nullopt;
    return std::string(v);
  }

  Result<std::unique_ptr<EventStream>> open_events(const EventStreamOptions& options) const override {
    return open_live_events(options);
  }

  std::optional<std::string> find_tool(std::string_view name) const override {
    if (name.empty() || name == "." || name == "..") return std::nullopt;
    // A path (a command template's program): that file, or nothing; no search.
    if (name.find('/') != std::string_view::npos) {
      const std::string path(name);
      struct stat st{};
      if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
      if (::faccessat(AT_FDCWD, path.c_str(), X_OK, AT_EACCESS) != 0) return std::nullopt;
      return path;
    }
    {
      std::lock_guard lock(tool_cache_mutex_);
      if (const auto it = tool_cache_.find(name); it != tool_cache_.end()) return it->second;
    }
    std::optional<std::string> found;
    // Each candidate is put together on the stack: most lookups miss in every
    // folder, and a string per folder and tool was most of their cost.
    std::array<char, PATH_MAX> candidate;
    for (const auto& dir : tool_dirs()) {
      const bool slash = dir.back() != '/';
      const std::size_t length = dir.size() + (slash ? 1 : 0) + name.size();
      if (length >= candidate.size()) continue;  // no such file can exist
      char* end = std::copy(dir.begin(), dir.end(), candidate.data());
      if (slash) *end++ = '/';
      end = std::copy(name.begin(), name.end(), end);
      *end = '\0';
      struct stat st{};
      if (::stat(candidate.data(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      if (::faccessat(AT_FDCWD, candidate.data(), X_OK, AT_EACCESS) != 0) continue;
      found.emplace(candidate.data(), length);
      break;
    }
    std::lock_guard lock(tool_cache_mutex_);
    tool_cache_.emplace(std::string(name), found);
    return found;
  }

  Result<ToolResult> run(const ToolRequest& request) const override;

 private:
  // The search folders that exist, each once: /bin and /usr/bin are one
  // folder on merged-/usr systems, PATH often names a folder twice, and the
  // extra tool folders are absent on most machines. Settled on the first
  // lookup, like the lookups themselves (tool_cache_), so that a detection
  // stats each folder once instead of once per tool.
  const std::vector<std::string>& tool_dirs() const {
    std::call_once(tool_dirs_once_, [this] {
      std::vector<std::pair<dev_t, ino_t>> seen;
      for (const auto& dir : search_dirs_) {
        struct stat st{};
        if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
        const std::pair id{st.st_dev, st.st_ino};
        if (std::find(seen.begin(), seen.end(), id) != seen.end()) continue;
        seen.push_back(id);
        tool_dirs_.push_back(dir);
      }
    });
    return tool_dirs_;
  }

  LiveOptions options_;
  std::vector<std::string> search_dirs_;
  std::vector<std::string> child_env_;
  std::vector<char*> child_envp_;
  mutable std::once_flag tool_dirs_once_;
  mutable std::vector<std::string> tool_dirs_;
  mutable std::mutex tool_cache_mutex_;
  mutable std::map<std::string, std::optional<std::string>, std::less<>> tool_cache_;
};

std::string describe_command(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out.push_back(' ');
    out += a;
    if (out.size() > 200) {
      out += " ...";
      break;
    }
  }
  return out;
}

// A killed process leaves only when its current system call returns: one in
// uninterruptible sleep inside a driver (the classic hung nvidia-smi) may not
// for a long time. Waits a moment for it; past that, a detached thread reaps
// it whenever it goes, so that the caller keeps its deadline and no zombie is
// left. Returns whether it was reaped here (its status in `status`).
bool reap_killed(pid_t pid, int pidfd, int& status) {
  constexpr auto grace = std::chrono::milliseconds(1000);
  const auto until = Clock::now() + grace;
  while (true) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return true;
    if (r < 0 && errno != EINTR) return true;  // not ours to wait for any more
    const auto now = Clock::now();
    if (now >= until) break;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count() + 1;
    if (pidfd >= 0) {
      pollfd fd{pidfd, POLLIN, 0};
      ::poll(&fd, 1, static_cast<int>(left));
    } else {
      ::poll(nullptr, 0, static_cast<int>(std::min<long long>(left, 5)));
    }
  }
  std::thread([pid] {
    int ignored = 0;
    while (::waitpid(pid, &ignored, 0) < 0 && errno == EINTR) {
    }
  }).detach();
  return false;
}

Result<ToolResult> LiveSystem::run(const ToolRequest& request) const {
  if (request.argv.empty()) return fail(ErrorKind::invalid_input, "empty command line");
  const std::string command = describe_command(request.argv);
  const auto path = find_tool(request.argv[0]);
  if (!path)
    return fail(ErrorKind::tool_not_found,
                text::cat(request.argv[0], request.argv[0].find('/') == std::string::npos
                                               ? ": not found on PATH (or not executable)"
                                               : ": not an executable file"));

  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return fail(errno_error(errno, "cannot create a pipe for", command));
  FileDescriptor out_read(out_pipe[0]), out_write(out_pipe[1]);
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) return fail(errno_error(errno, "cannot create a pipe for", command));
  FileDescriptor err_read(err_pipe[0]), err_write(err_pipe[1]);

  ChildSpawn spawn;
  spawn.give_null(0, O_RDONLY).give(out_write.get(), 1).give(err_write.get(), 2);
  const auto start = Clock::now();
  const auto deadline = start + request.timeout;
  const auto started = spawn.start(*path, request.argv, child_envp_.data());
  if (!started) return fail(started.error().kind, text::cat("cannot start ", command, ": ", started.error().message));
  const pid_t pid = *started;
  out_write.reset();
  err_write.reset();

  ToolResult result;
  Sink sinks[2] = {{std::move(out_read), &result.out, &result.out_truncated, request.max_output_bytes},
                   {std::move(err_read), &result.err, &result.err_truncated, request.max_output_bytes}};
  for (auto& s : sinks) ::fcntl(s.fd.get(), F_SETFL, ::fcntl(s.fd.get(), F_GETFL) | O_NONBLOCK);
  FileDescriptor pidfd(open_pidfd(pid));

  int wait_status = 0;
  bool reaped = false;
  bool timed_out = false;
  // After the tool exits, a grandchild that escaped its process group may
  // still hold the pipes open: stop waiting for their EOF after this grace.
  std::optional<Clock::time_point> drain_deadline;

  auto reap = [&](bool block) {
    if (reaped) return;
    // Kill what is left of the group while the zombie still holds the group id,
    // so the signal cannot reach a recycled one.
    ::kill(-pid, SIGKILL);
    while (true) {
      const pid_t r = ::waitpid(pid, &wait_status, block ? 0 : WNOHANG);
      if (r == pid) {
        reaped = true;
        return;
      }
      if (r < 0 && errno == EINTR) continue;
      return;
    }
  };

  while (true) {
    const bool pipes_open = sinks[0].fd || sinks[1].fd;
    if (!pipes_open && reaped) break;
    const auto now = Clock::now();
    const auto limit = drain_deadline ? std::min(*drain_deadline, deadline) : deadline;
    if (now >= limit) {
      if (!reaped && !drain_deadline) timed_out = true;
      break;
    }
    pollfd fds[3];
    int nfds = 0;
    int sink_slot[2] = {-1, -1};
    for (int i = 0; i < 2; ++i)
      if (sinks[i].fd) {
        sink_slot[i] = nfds;
        fds[nfds++] = pollfd{sinks[i].fd.get(), POLLIN, 0};
      }
    int pid_slot = -1;
    if (pidfd && !reaped) {
      pid_slot = nfds;
      fds[nfds++] = pollfd{pidfd.get(), POLLIN, 0};
    }
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(limit - now).count() + 1;
    if (pid_slot < 0 && !reaped && !pipes_open) {
      // No pidfd (old kernel or seccomp) and both pipes closed: the tool shut
      // its output but may still run. Check its state in short steps.
      wait = std::min<long long>(wait, 5);
    }
    const int n = ::poll(fds, static_cast<nfds_t>(nfds), static_cast<int>(std::min<long long>(wait, 60'000)));
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i)
      if (sink_slot[i] >= 0 && fds[sink_slot[i]].revents != 0) sinks[i].drain();
    if (pid_slot >= 0 && fds[pid_slot].revents != 0) reap(true);
    if (pid_slot < 0 && !reaped && !(sinks[0].fd || sinks[1].fd)) reap(false);
    if (reaped && !drain_deadline) drain_deadline = Clock::now() + std::chrono::milliseconds(100);
  }

  if (timed_out || !reaped) {
    ::kill(-pid, SIGKILL);
    if (!reap_killed(pid, pidfd.get(), wait_status)) {
      if (timed_out)
        return fail(ErrorKind::timeout,
                    text::cat(command, ": no answer within ", request.timeout.count(),
                              " ms; killed, it has not exited yet (stuck in the kernel?)"));
      return fail(ErrorKind::tool_failed, text::cat(command, ": lost track of it; killed, it has not exited yet"));
    }
    if (timed_out)
      return fail(ErrorKind::timeout,
                  text::cat(command, ": no answer within ", request.timeout.count(), " ms; its process group was killed"));
  }
  result.elapsed = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start);
  if (WIFEXITED(wait_status)) result.exit_code = WEXITSTATUS(wait_status);
  else if (WIFSIGNALED(wait_status)) result.signal = WTERMSIG(wait_status);
  // ENOEXEC/EACCES after a successful vfork surface as exit code 127 from the
  // child; posix_spawn reports them as errors on glibc, handled above.
  return result;
}

}  // namespace


std::unique_ptr<System> make_live_system(LiveOptions options) {
  return std::make_unique<LiveSystem>(std::move(options));
}

}  // namespace hwaccel
