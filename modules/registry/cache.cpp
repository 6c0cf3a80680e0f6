// Registry caching: an in-memory cache with a TTL and single-flight refresh,
// and an optional on-disk cache shared between processes.
//
// The disk file holds two lines: a header object (format, library version,
// schema version, detection options, write time) and the registry JSON as
// to_json writes it, so the registry is read back byte for byte.
module;
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "posix_compat.hpp"

#include <simdjson.h>
#include "json_input.hpp"
module hwaccel.registry;

namespace hwaccel {
namespace {

constexpr std::uint64_t cache_format = 1;
// A registry of thousands of devices is a few MiB; anything larger is not ours.
constexpr std::size_t max_cache_file_bytes = std::size_t{64} << 20;

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) noexcept : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const noexcept { return fd_; }
  int release() noexcept { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

std::string errno_text(int err) { return std::strerror(err); }

// The detection options as one canonical line: part of the file name (hashed)
// and recorded in the header (compared in full, so a hash collision is caught).
std::string options_key(const DetectOptions& o) {
  std::string backends;
  for (Backend b : all_backends)
    if (o.enabled(b)) backends += text::cat(backends.empty() ? "" : ",", to_string(b));
  return text::cat("backends=", backends, ";system_probes=", o.system_probes ? 1 : 0,
                   ";tool_timeout_ms=", static_cast<std::int64_t>(o.tool_timeout.count()),
                   ";tool_output_cap=", static_cast<std::uint64_t>(o.tool_output_cap));
}

// FNV-1a: stable across builds and platforms, unlike std::hash.
std::string fnv1a_hex(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return text::hex_digits(h, 16);
}

Result<void> make_private_directories(const std::string& dir) {
  // Each missing component is created 0700, as the XDG spec asks of the cache base.
  for (std::size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/') continue;
    const std::string part = dir.substr(0, pos);
    if (::mkdir(part.c_str(), 0700) != 0 && errno != EEXIST)
      return fail(ErrorKind::io_error, text::cat("cannot create ", part, ": ", errno_text(errno)));
  }
  struct stat st{};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return fail(ErrorKind::io_error, text::cat(dir, " is not a folder"));
  return {};
}

Result<void> write_all(int fd, std::string_view data, const std::string& shown) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(ErrorKind::io_error, text::cat("cannot write ", shown, ": ", errno_text(errno)));
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

}  // namespace

// --- DiskCache -----------------------------------------------------------------

std::optional<std::string> default_cache_directory(const System& system) {
  if (const auto xdg = system.env("XDG_CACHE_HOME"); xdg && xdg->starts_with('/')) return *xdg + "/hwaccel";
  if (const auto home = system.env("HOME"); home && home->starts_with('/')) return *home + "/.cache/hwaccel";
  return std::nullopt;
}

DiskCache::DiskCache(DiskCacheOptions options, std::string directory, std::string path)
    : options_(std::move(options)), directory_(std::move(directory)), path_(std::move(path)) {}

Result<DiskCache> DiskCache::open(DiskCacheOptions options, const System& system) {
  std::string directory = options.directory;
  if (directory.empty()) {
    auto found = default_cache_directory(system);
    if (!found)
      return fail(ErrorKind::unsupported,
                  "no cache folder: neither XDG_CACHE_HOME nor HOME is an absolute path (no shared temporary folder is used)");
    directory = std::move(*found);
  }
  if (!directory.starts_with('/'))
    return fail(ErrorKind::invalid_input, text::cat("cache folder \"", text::excerpt(directory), "\" is not absolute"));
  while (directory.size() > 1 && directory.back() == '/') directory.pop_back();
  std::string path = text::cat(directory, "/registry-", library_version(), "-schema", registry_schema_version, "-",
                               fnv1a_hex(options_key(options.options)), ".cache");
  return DiskCache(std::move(options), std::move(directory), std::move(path));
}

std::chrono::system_clock::time_point DiskCache::now() const {
  return options_.clock ? options_.clock() : std::chrono::system_clock::now();
}

Result<std::optional<DiskCache::Entry>> DiskCache::load() const {
  FileDescriptor fd(::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY));
  if (fd.get() < 0) {
    const int err = errno;
    if (err == ENOENT) return std::optional<Entry>{};
    if (err == ELOOP) return fail(ErrorKind::unsupported, text::cat(path_, " is a symbolic link"));
    return fail(ErrorKind::io_error, text::cat("cannot open ", path_, ": ", errno_text(err)));
  }
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0) return fail(ErrorKind::io_error, text::cat("cannot stat ", path_, ": ", errno_text(errno)));
  if (!S_ISREG(st.st_mode)) return fail(ErrorKind::unsupported, text::cat(path_, " is not a regular file"));
  // Another user's file, or one others could have written, is not trusted.
  if (st.st_uid != ::geteuid())
    return fail(ErrorKind::unsupported, text::cat(path_, " belongs to uid ", static_cast<std::uint64_t>(st.st_uid)));
  if ((st.st_mode & 022) != 0) return fail(ErrorKind::unsupported, text::cat(path_, " is writable by other users"));
  if (static_cast<std::uint64_t>(st.st_size) > max_cache_file_bytes)
    return fail(ErrorKind::parse_error, text::cat(path_, " is larger than ", max_cache_file_bytes, " bytes"));

  std::string data(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < data.size()) {
    const ssize_t n = ::read(fd.get(), data.data() + got, data.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(ErrorKind::io_error, text::cat("cannot read ", path_, ": ", errno_text(errno)));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  data.resize(got);

  const auto newline = data.find('\n');
  if (newline == std::string::npos) return fail(ErrorKind::parse_error, text::cat(path_, " has no header line"));
  const std::string_view header_text = std::string_view(data).substr(0, newline);
  simdjson::dom::parser parser;
  simdjson::dom::object header;
  if (json_input::parse(parser, header_text).get_object().get(header) != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat(path_, ": the header is not a JSON object"));
  std::uint64_t format = 0, schema = 0;
  std::int64_t written_ms = 0;
  std::string_view version, options;
  if (header["cache_format"].get_uint64().get(format) != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat(path_, ": the header has no \"cache_format\""));
  if (format != cache_format)
    return fail(ErrorKind::unsupported, text::cat(path_, " has cache format ", format, ", not ", cache_format));
  if (header["library_version"].get_string().get(version) != simdjson::SUCCESS ||
      header["schema_version"].get_uint64().get(schema) != simdjson::SUCCESS ||
      header["options"].get_string().get(options) != simdjson::SUCCESS ||
      header["written_at_unix_ms"].get_int64().get(written_ms) != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat(path_, ": the header lacks library_version, schema_version, options or written_at_unix_ms"));
  if (version != library_version())
    return fail(ErrorKind::unsupported, text::cat(path_, " was written by hwaccel ", text::excerpt(version, 40)));
  if (schema != registry_schema_version)
    return fail(ErrorKind::unsupported, text::cat(path_, " holds registry schema ", schema));
  if (options != options_key(options_.options))
    return fail(ErrorKind::unsupported, text::cat(path_, " was written for other detection options (", text::excerpt(options), ")"));

  auto registry = registry_from_json(std::string_view(data).substr(newline + 1));
  if (!registry) return fail(ErrorKind::parse_error, text::cat(path_, ": ", registry.error().message));
  return std::optional<Entry>(Entry{std::move(*registry),
                                    std::chrono::system_clock::time_point(std::chrono::milliseconds(written_ms))});
}

Result<void> DiskCache::store(const AcceleratorRegistry& registry) const {
  if (auto r = make_private_directories(directory_); !r) return r;
  const auto written =
      std::chrono::duration_cast<std::chrono::milliseconds>(now().time_since_epoch()).count();
  json::Writer header;
  header.begin_object()
      .field("cache_format", cache_format)
      .field("library_version", library_version())
      .field("schema_version", registry_schema_version)
      .field("options", options_key(options_.options))
      .field("written_at_unix_ms", static_cast<std::int64_t>(written))
      .end_object();
  std::string content = std::move(header).take();
  content.push_back('\n');
  content += to_json(registry);

  // A unique name in the same folder: concurrent writers never share a
  // temporary file, and rename() replaces the cache file atomically.
  std::string temp = directory_ + "/.registry-XXXXXX";
  FileDescriptor fd(::mkstemp(temp.data()));
  if (fd.get() < 0) return fail(ErrorKind::io_error, text::cat("cannot create a temporary file in ", directory_, ": ", errno_text(errno)));
  auto cleanup = [&] { ::unlink(temp.c_str()); };
  if (auto r = write_all(fd.get(), content, temp); !r) {
    cleanup();
    return r;
  }
  if (::fsync(fd.get()) != 0 || ::close(fd.release()) != 0) {
    const int err = errno;
    cleanup();
    return fail(ErrorKind::io_error, text::cat("cannot flush ", temp, ": ", errno_text(err)));
  }
  if (::rename(temp.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    cleanup();
    return fail(ErrorKind::io_error, text::cat("cannot rename ", temp, " to ", path_, ": ", errno_text(err)));
  }
  return {};
}

Result<void> DiskCache::remove() const {
  if (::unlink(path_.c_str()) != 0 && errno != ENOENT)
    return fail(ErrorKind::io_error, text::cat("cannot delete ", path_, ": ", errno_text(errno)));
  return {};
}

// --- CachedRegistry ------------------------------------------------------------

struct CachedRegistry::State {
  explicit State(CacheOptions o) : options(std::move(o)), empty(std::make_shared<const AcceleratorRegistry>()) {
    if (!options.disk) return;
    // Only its environment is read, for the default cache folder.
    const auto live = make_live_system();
    auto opened = DiskCache::open(*options.disk, *live);
    if (opened) disk = std::move(*opened);
    else disk_warning = Warning{"cache", warning_kind_for(opened.error().kind), "disk cache disabled: " + opened.error().message};
  }

  std::chrono::steady_clock::time_point now() const {
    return options.clock ? options.clock() : std::chrono::steady_clock::now();
  }

  CacheOptions options;
  std::optional<DiskCache> disk;
  std::optional<Warning> disk_warning;
  // Returned if even building a failure registry fails (out of memory).
  const std::shared_ptr<const AcceleratorRegistry> empty;

  std::mutex mutex;
  std::condition_variable refreshed;
  std::shared_ptr<const AcceleratorRegistry> value;  // the cached registry, if any
  std::chrono::steady_clock::time_point fetched{};   // when `value` was detected
  bool refreshing = false;
  std::uint64_t flights = 0;                          // refreshes completed
  std::shared_ptr<const AcceleratorRegistry> flight_result;
  std::uint64_t epoch = 0;                            // bumped by invalidate()
  std::atomic<std::uint64_t> detections{0};
};

namespace {

struct Refreshed {
  std::shared_ptr<const AcceleratorRegistry> registry;
  std::chrono::steady_clock::duration age{0};
  bool cacheable = false;
};

AcceleratorRegistry run_detection(CachedRegistry::State& s, bool& ok) noexcept {
  ok = false;
  try {
    s.detections.fetch_add(1, std::memory_order_relaxed);
    AcceleratorRegistry registry = s.options.detect ? s.options.detect() : DetectBuilder{}.detect();
    ok = true;
    return registry;
  } catch (const std::exception& e) {
    try {
      AcceleratorRegistry failed;
      failed.inventory().warnings.push_back(Warning{"cache", WarningKind::tool_failed, text::cat("detection failed: ", e.what())});
      return failed;
    } catch (...) {
      return AcceleratorRegistry{};
    }
  } catch (...) {
    try {
      AcceleratorRegistry failed;
      failed.inventory().warnings.push_back(Warning{"cache", WarningKind::tool_failed, "detection failed with a non-standard exception"});
      return failed;
    } catch (...) {
      return AcceleratorRegistry{};
    }
  }
}

// Reads the disk cache or detects. Never throws.
Refreshed refresh(CachedRegistry::State& s, std::uint64_t epoch) noexcept {
  try {
    std::vector<Warning> notes;
    if (s.disk) {
      auto loaded = s.disk->load();
      if (loaded && *loaded) {
        const auto age = s.disk->now() - (*loaded)->written_at;
        if (age >= std::chrono::system_clock::duration::zero() && age < s.options.ttl)
          return {std::make_shared<const AcceleratorRegistry>(std::move((*loaded)->registry)),
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(age), true};
        if (age < std::chrono::system_clock::duration::zero())
          notes.push_back(Warning{"cache", WarningKind::invalid_value,
                                  text::cat("disk cache ", s.disk->path(), " was written in the future; detecting again")});
      } else if (!loaded) {
        notes.push_back(Warning{"cache", loaded.error().kind == ErrorKind::parse_error ? WarningKind::parse_error
                                                                                        : warning_kind_for(loaded.error().kind),
                                text::cat("disk cache ignored, detecting again: ", loaded.error().message)});
      }
    }
    bool ok = false;
    AcceleratorRegistry registry = run_detection(s, ok);
    if (ok && s.disk) {
      bool current = false;
      {
        std::lock_guard lock(s.mutex);
        current = s.epoch == epoch;
      }
      // A detection that started before invalidate() is not written back.
      if (current)
        if (auto stored = s.disk->store(registry); !stored)
          notes.push_back(Warning{"cache", warning_kind_for(stored.error().kind),
                                  text::cat("disk cache not written: ", stored.error().message)});
    }
    if (s.disk_warning) registry.inventory().warnings.push_back(*s.disk_warning);
    for (auto& n : notes) registry.inventory().warnings.push_back(std::move(n));
    return {std::make_shared<const AcceleratorRegistry>(std::move(registry)), {}, ok};
  } catch (...) {
    return {s.empty, {}, false};
  }
}

}  // namespace

CachedRegistry::CachedRegistry(CacheOptions options) : state_(std::make_unique<State>(std::move(options))) {}
CachedRegistry::~CachedRegistry() = default;

std::chrono::milliseconds CachedRegistry::ttl() const noexcept { return state_->options.ttl; }

std::uint64_t CachedRegistry::detections() const noexcept { return state_->detections.load(std::memory_order_relaxed); }

std::shared_ptr<const AcceleratorRegistry> CachedRegistry::get() {
  State& s = *state_;
  std::unique_lock lock(s.mutex);
  if (s.value && s.now() - s.fetched < s.options.ttl) return s.value;
  if (s.refreshing) {
    // Someone is detecting: wait (blocked, not spinning) for that one flight.
    const std::uint64_t seen = s.flights;
    s.refreshed.wait(lock, [&] { return s.flights != seen; });
    return s.flight_result;
  }
  s.refreshing = true;
  const std::uint64_t epoch = s.epoch;
  lock.unlock();
  Refreshed fresh = refresh(s, epoch);
  lock.lock();
  s.refreshing = false;
  ++s.flights;
  s.flight_result = fresh.registry;
  if (fresh.cacheable && s.epoch == epoch) {
    s.value = fresh.registry;
    s.fetched = s.now() - fresh.age;
  }
  lock.unlock();
  s.refreshed.notify_all();
  return fresh.registry;
}

void CachedRegistry::invalidate() {
  State& s = *state_;
  {
    std::lock_guard lock(s.mutex);
    s.value.reset();
    ++s.epoch;
  }
  if (s.disk) (void)s.disk->remove();
}

}  // namespace hwaccel
