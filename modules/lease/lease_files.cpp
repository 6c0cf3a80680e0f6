// Lease files: the lease directory's safety checks, a lock file per device
// identity (flock: the kernel drops it with the last descriptor, so a killed
// job frees its devices at once), the holder's record inside it, and the
// listing and release of held leases.
module;
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
module hwaccel.lease;
import hwaccel.json_fields;
import :internals;

namespace hwaccel::lease_detail {
namespace {

std::string errno_text() { return std::strerror(errno); }

// The lease file of an identity: its characters kept where a file name allows.
std::string file_name(std::string_view identity) {
  std::string name;
  for (const char c : identity) name += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_') ? c : '_';
  return name + ".lease";
}

Result<void> make_directories(const std::string& dir) {
  std::string path;
  std::size_t at = 0;
  while (at != std::string::npos) {
    at = dir.find('/', at + 1);
    path = dir.substr(0, at);
    if (path.empty()) continue;
    if (::mkdir(path.c_str(), at == std::string::npos ? 01777 : 0755) != 0 && errno != EEXIST)
      return fail(errno == EACCES ? ErrorKind::permission_denied : ErrorKind::io_error,
                  text::cat("cannot create the lease directory ", path, ": ", errno_text()));
  }
  // mkdir's mode passes through the umask; the last folder is shared by every user.
  struct stat st {};
  if (::lstat(dir.c_str(), &st) == 0 && st.st_uid == ::geteuid() && (st.st_mode & 07777) != 01777) ::chmod(dir.c_str(), 01777);
  return {};
}

}  // namespace

std::string lease_directory(std::string_view asked) {
  if (!asked.empty()) return std::string(asked);
  if (const char* env = std::getenv("HWACCEL_LEASE_DIR"); env && *env) return env;
  return std::string(default_lease_dir);
}

Result<void> check_lease_directory(const std::string& dir, bool create) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT || !create)
      return fail(errno == ENOENT ? ErrorKind::not_found : ErrorKind::io_error, text::cat("lease directory ", dir, ": ", errno_text()));
    if (auto made = make_directories(dir); !made) return made;
    if (::lstat(dir.c_str(), &st) != 0) return fail(ErrorKind::io_error, text::cat("lease directory ", dir, ": ", errno_text()));
  }
  if (S_ISLNK(st.st_mode))
    return fail(ErrorKind::unsupported, text::cat("lease directory ", dir, " is a symbolic link: refused (give the folder it names)"));
  if (!S_ISDIR(st.st_mode)) return fail(ErrorKind::unsupported, text::cat("lease directory ", dir, " is not a directory"));
  if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
    return fail(ErrorKind::unsupported, text::cat("lease directory ", dir,
                                                  " is writable by everyone without the sticky bit: anyone could replace "
                                                  "another's lease files (chmod 1777 it)"));
  return {};
}

Result<LockFile> lock_device(const std::string& dir, std::string_view identity) {
  const std::string path = text::cat(dir, "/", file_name(identity));
  // Open first without O_CREAT: in a sticky folder, protected_regular refuses
  // O_CREAT on another user's existing file.
  int fd = ::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) {
    fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0) ::fchmod(fd, 0666);  // every user locks and records in it
    else if (errno == EEXIST) fd = ::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  }
  if (fd < 0) {
    if (errno == ELOOP) return fail(ErrorKind::unsupported, text::cat(path, " is a symbolic link: refused"));
    return fail(errno == EACCES ? ErrorKind::permission_denied : ErrorKind::io_error, text::cat("cannot open ", path, ": ", errno_text()));
  }
  LockFile lock(fd, path);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return fail(ErrorKind::unsupported, text::cat(path, " is not a regular file: refused"));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) return fail(ErrorKind::timeout, text::cat(path, " is held"));
    return fail(ErrorKind::io_error, text::cat("cannot lock ", path, ": ", errno_text()));
  }
  return lock;
}

LockFile::~LockFile() {
  if (fd_ >= 0) ::close(fd_);  // drops the lock
}

std::string record_json(const LeaseHolder& h) {
  json::Writer w(false);
  write_json(w, h);
  return std::string(w.str()) + "\n";
}

Result<void> write_record(const LockFile& lock, const LeaseHolder& holder) {
  const std::string text = record_json(holder);
  if (::ftruncate(lock.fd(), 0) != 0 || ::pwrite(lock.fd(), text.data(), text.size(), 0) != static_cast<ssize_t>(text.size()))
    return fail(ErrorKind::io_error, text::cat("cannot write the lease record ", lock.path(), ": ", errno_text()));
  return {};
}

std::optional<LeaseHolder> read_record(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size >= 65536) return std::nullopt;
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  const ssize_t n = ::pread(fd, text.data(), text.size(), 0);
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return parse_record(text);
}

std::optional<LeaseHolder> holder_of(const std::string& dir, std::string_view identity) {
  const std::string path = text::cat(dir, "/", file_name(identity));
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  auto holder = read_record(fd);
  ::close(fd);
  return holder;
}

std::optional<LeaseHolder> parse_record(std::string_view text) {
  auto doc = json::Document::parse(text, "a lease record");
  if (!doc) return std::nullopt;
  const json::Value r = doc->root();
  LeaseHolder h;
  const auto str = [&](std::string_view key) {
    const auto v = r.member(key);
    return v && v->kind() == json::Value::Kind::string ? std::string(text::excerpt(v->string(), 4096)) : std::string();
  };
  const auto whole = [&](std::string_view key) -> std::optional<std::uint64_t> {
    const auto v = r.member(key);
    return v ? v->whole() : std::nullopt;
  };
  h.device_id = str("device_id");
  h.identity = str("identity");
  h.user = str("user");
  h.command = str("command");
  h.uid = static_cast<std::uint32_t>(whole("uid").value_or(0) & 0xffffffffu);
  h.pid = static_cast<std::uint32_t>(whole("pid").value_or(0) & 0xffffffffu);
  h.pid_namespace = whole("pid_namespace");
  h.start_time = whole("start_time");
  h.since = static_cast<std::int64_t>(whole("since").value_or(0));
  if (h.identity.empty() || h.pid == 0) return std::nullopt;
  return h;
}

std::string user_name(std::uint32_t uid) {
  struct passwd pw {};
  struct passwd* found = nullptr;
  char buffer[4096];
  if (::getpwuid_r(uid, &pw, buffer, sizeof buffer, &found) == 0 && found && found->pw_name) return found->pw_name;
  return text::cat(uid);
}

LeaseHolder this_process(std::string_view device_id, std::string_view identity, std::string_view command) {
  LeaseHolder h;
  h.device_id = std::string(device_id);
  h.identity = std::string(identity);
  h.uid = ::getuid();
  h.user = user_name(h.uid);
  h.pid = static_cast<std::uint32_t>(::getpid());
  char link[128] = {};
  if (const ssize_t n = ::readlink("/proc/self/ns/pid", link, sizeof link - 1); n > 0) {
    const std::string_view v(link, static_cast<std::size_t>(n));
    if (const auto open = v.find(":["); open != std::string_view::npos && v.ends_with(']'))
      h.pid_namespace = text::parse_u64(v.substr(open + 2, v.size() - open - 3));
  }
  // Field 22 of /proc/self/stat, after the parenthesised command name.
  if (const int fd = ::open("/proc/self/stat", O_RDONLY | O_CLOEXEC); fd >= 0) {
    char buf[1024];
    const ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (n > 0) {
      const std::string_view stat(buf, static_cast<std::size_t>(n));
      if (const auto close = stat.rfind(')'); close != std::string_view::npos) {
        std::string_view rest = stat.substr(close + 2);
        for (int field = 3; field < 22 && !rest.empty(); ++field) text::next_token(rest, ' ');
        h.start_time = text::parse_u64(text::next_token(rest, ' '));
      }
    }
  }
  h.command = std::string(text::excerpt(command, 4096));
  h.since = static_cast<std::int64_t>(std::time(nullptr));
  return h;
}

}  // namespace hwaccel::lease_detail

namespace hwaccel {

void write_json(json::Writer& w, const LeaseHolder& h) {
  w.begin_object();
  w.field("device_id", h.device_id).field("identity", h.identity).field("user", h.user).field("uid", h.uid).field("pid", h.pid);
  w.field("pid_namespace", h.pid_namespace).field("start_time", h.start_time).field("command", h.command).field("since", h.since);
  w.end_object();
}

Result<std::vector<LeaseHolder>> held_leases(std::string_view asked) {
  const std::string dir = lease_detail::lease_directory(asked);
  if (auto ok = lease_detail::check_lease_directory(dir, false); !ok) {
    if (ok.error().kind == ErrorKind::not_found) return std::vector<LeaseHolder>{};
    return fail(ok.error());
  }
  DIR* d = ::opendir(dir.c_str());
  if (!d) return fail(ErrorKind::io_error, text::cat("cannot list ", dir, ": ", std::strerror(errno)));
  std::vector<LeaseHolder> held;
  std::size_t seen = 0;
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name = e->d_name;
    if (!name.ends_with(".lease") || ++seen > 65536) continue;
    const std::string path = text::cat(dir, "/", name);
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) continue;
    struct stat st {};
    // A lock we can take is nobody's: the file is a stale one.
    const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    if (regular && ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
      if (auto holder = lease_detail::read_record(fd)) held.push_back(std::move(*holder));
      else {
        LeaseHolder unknown;
        unknown.identity = std::string(name.substr(0, name.size() - 6));
        unknown.command = "(held; its record is unreadable or being written)";
        held.push_back(std::move(unknown));
      }
    }
    ::close(fd);
  }
  ::closedir(d);
  std::sort(held.begin(), held.end(), [](const LeaseHolder& a, const LeaseHolder& b) { return a.identity < b.identity; });
  return held;
}

Result<LeaseHolder> release_lease(std::string_view asked, std::string_view device) {
  auto held = held_leases(asked);
  if (!held) return fail(held.error());
  for (const LeaseHolder& h : *held) {
    if (h.identity != device && h.device_id != device) continue;
    if (h.pid == 0) return fail(ErrorKind::io_error, text::cat(device, " is held, but its record names no process"));
    if (::geteuid() != 0 && ::getuid() != h.uid)
      return fail(ErrorKind::permission_denied,
                  text::cat(device, " is held by ", h.user, " (PID ", h.pid, "): only they or root can release it"));
    if (::kill(static_cast<pid_t>(h.pid), SIGTERM) != 0)
      return fail(errno == EPERM ? ErrorKind::permission_denied : ErrorKind::io_error,
                  text::cat("cannot signal PID ", h.pid, " holding ", device, ": ", std::strerror(errno),
                            errno == ESRCH ? " (it runs in another PID namespace: release it from there)" : ""));
    return h;
  }
  return fail(ErrorKind::not_found, text::cat("no lease holds ", device));
}

}  // namespace hwaccel
