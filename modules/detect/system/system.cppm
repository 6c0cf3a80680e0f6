// The System seam: the only way detectors read the machine (files, folders,
// links, the environment, tools run with a deadline, kernel notifications).
// Its implementations are the other partitions of system/: live, fixture,
// timeline, read_cache, capture.
module;
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
export module hwaccel.detect:system;
import hwaccel.hardware;

export namespace hwaccel {

enum class FileType : std::uint8_t { regular, directory, symlink, char_device, block_device, fifo, socket, unknown };

std::string_view to_string(FileType type) noexcept;

/// What stat() says about a path.
struct FileStatus {
  FileType type = FileType::unknown;
  std::uint64_t size = 0;
  std::uint32_t mode = 0;  ///< permission bits (07777)
  std::uint32_t uid = 0;   ///< owner
  std::uint32_t gid = 0;   ///< group
};

/// Who the detecting process is: what `hwaccel doctor` checks device nodes'
/// permissions against.
struct ProcessIdentity {
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  std::vector<std::uint32_t> groups;  ///< supplementary groups

  friend bool operator==(const ProcessIdentity&, const ProcessIdentity&) = default;
};

/// Whether `identity` may open a file of `status` for reading and writing,
/// by its permission bits (root may open anything).
bool may_read_write(const FileStatus& status, const ProcessIdentity& identity) noexcept;

/// Bytes read from a file; `truncated` when the file is longer than the cap.
struct FileContent {
  std::string data;
  bool truncated = false;
};

struct DirEntry {
  std::string name;
  FileType type = FileType::unknown;

  friend bool operator==(const DirEntry&, const DirEntry&) = default;
};

/// Reads larger than this must be asked for explicitly: sysfs and procfs
/// values are small, and a multi-gigabyte file must never be slurped.
inline constexpr std::size_t default_read_cap = std::size_t{1} << 20;
/// Per-stream cap on captured tool output; the rest is drained and dropped.
inline constexpr std::size_t default_output_cap = std::size_t{32} << 20;
inline constexpr std::chrono::milliseconds default_tool_timeout{5000};
/// Links followed while resolving one path before giving up (ELOOP), as
/// Linux does (MAXSYMLINKS, fs/namei.c).
inline constexpr int max_symlink_hops = 40;

/// A tool invocation: no shell, argv only.
struct ToolRequest {
  /// argv[0] is the bare tool name, looked up on PATH (what detectors run),
  /// or a path to the program (a command template's; see find_tool).
  std::vector<std::string> argv;
  std::chrono::milliseconds timeout = default_tool_timeout;
  std::size_t max_output_bytes = default_output_cap;
};

/// What a finished tool printed and how it ended. A non-zero exit is a
/// result, not an error: callers decide what it means.
struct ToolResult {
  std::string out;
  std::string err;
  int exit_code = 0;           ///< valid when `signal` is empty
  std::optional<int> signal;   ///< set when the tool was killed by a signal
  bool out_truncated = false;
  bool err_truncated = false;
  std::chrono::microseconds elapsed{0};

  bool succeeded() const noexcept { return !signal && exit_code == 0; }
};

/// A notification from the kernel, as it arrived: what watching the machine
/// (the hwaccel.watch module) reads instead of polling.
struct KernelEvent {
  enum class Source : std::uint8_t {
    uevent,      ///< a NETLINK_KOBJECT_UEVENT message: "ACTION@DEVPATH\0KEY=VALUE\0..."
    kernel_log,  ///< one /dev/kmsg record: "PRIORITY,SEQ,USEC,FLAGS;MESSAGE"
  };
  Source source = Source::uevent;
  std::string payload;

  friend bool operator==(const KernelEvent&, const KernelEvent&) = default;
};

/// A kernel uevent, parsed: the header's action and device path, and every
/// KEY=VALUE that followed in the order sent (ACTION, DEVPATH, SUBSYSTEM,
/// SEQNUM, then the subsystem's own: PCI_ID, PCI_SLOT_NAME, DRIVER, DEVNAME...).
struct Uevent {
  std::string action;   ///< "add", "remove", "change", "bind", "unbind", "move", "online", "offline"
  std::string devpath;  ///< below /sys: "/devices/pci0000:00/0000:00:01.0/0000:01:00.0"
  std::vector<std::pair<std::string, std::string>> variables;

  /// The value of `key`, or "".
  std::string_view get(std::string_view key) const noexcept;
  friend bool operator==(const Uevent&, const Uevent&) = default;
};

/// Longest uevent message read or replayed; the kernel's own buffer is 2 KiB
/// of variables, so anything near this is not from the kernel.
inline constexpr std::size_t max_uevent_bytes = 16384;

/// Parses a NETLINK_KOBJECT_UEVENT message ("ACTION@DEVPATH\0KEY=VALUE\0...").
/// parse_error for an oversized message, a header without '@', a device path
/// not starting with '/', a variable without '=', an empty or non-printable
/// key, or an ACTION/DEVPATH variable that contradicts the header. The
/// trailing NUL is optional. udev's re-broadcasts ("libudev" headers) are
/// refused: only the kernel's messages are read.
[[nodiscard]] Result<Uevent> parse_uevent(std::string_view message);
/// The message parse_uevent reads.
std::string format_uevent(const Uevent& event);

/// What one wait on an EventStream brought.
struct EventBatch {
  std::vector<KernelEvent> events;
  /// Events were lost (the socket's buffer overflowed, kernel log records
  /// were overwritten) or a recorded timeline says a periodic re-scan saw
  /// this step: only a full re-scan knows the machine now.
  bool rescan = false;
  /// A replayed timeline has no more steps; a live stream never ends.
  bool ended = false;
};

/// Which kernel notifications to listen to.
struct EventStreamOptions {
  bool uevents = true;
  bool kernel_log = true;
  /// At most this many events per batch; the rest wait for the next call.
  std::size_t max_batch = 4096;
};

/// A stream of kernel notifications. wait() is called from one thread at a
/// time; wake() from any thread, at any time.
class EventStream {
 public:
  virtual ~EventStream() = default;
  /// Blocks until something arrives, `deadline` passes or wake() is called,
  /// then returns what is there (possibly nothing). Never busy-polls.
  [[nodiscard]] virtual Result<EventBatch> wait(std::chrono::steady_clock::time_point deadline) = 0;
  /// Makes a blocked (or the next) wait() return at once.
  virtual void wake() noexcept = 0;
  /// What the stream listens to ("uevent netlink socket", "/dev/kmsg"), and
  /// what it could not open, with the reason: a container often has neither.
  virtual std::vector<std::string> sources() const = 0;
  virtual std::vector<std::string> unavailable() const = 0;
  /// True for a replayed timeline: each batch is one recorded step, a whole
  /// burst, so the reader need not wait for quiet before acting on it.
  virtual bool replay() const noexcept { return false; }
};

/// Read-only view of a machine. Every method is safe to call from several
/// threads at once. Paths are absolute, as on the real machine ("/sys/...").
class System {
 public:
  virtual ~System() = default;

  /// Reads at most `max_bytes` of a regular file. FIFOs, sockets and device
  /// nodes are refused (ErrorKind::not_regular_file) without being opened
  /// for a blocking read.
  [[nodiscard]] virtual Result<FileContent> read_file(std::string_view path, std::size_t max_bytes = default_read_cap) const = 0;
  /// Entries of a directory, "." and ".." excluded, sorted by name (bytewise).
  [[nodiscard]] virtual Result<std::vector<DirEntry>> list_dir(std::string_view path) const = 0;
  /// Target of a symbolic link, as stored.
  [[nodiscard]] virtual Result<std::string> read_link(std::string_view path) const = 0;
  [[nodiscard]] virtual Result<FileStatus> status(std::string_view path, bool follow_symlinks = true) const = 0;
  /// An environment variable of the detecting process.
  virtual std::optional<std::string> env(std::string_view name) const = 0;
  /// The detecting process's user and groups (root where a System does not
  /// know: a fixture without "identity").
  virtual ProcessIdentity identity() const { return {}; }
  /// Path of an executable tool (regular file with the exec bit), or
  /// nullopt: a bare file name is looked up on the search path (an absolute
  /// path is returned); a name holding a '/' is a path, absolute or relative
  /// to the working folder, taken as it is ("." and ".." are never tools).
  virtual std::optional<std::string> find_tool(std::string_view name) const = 0;
  /// Runs a tool found by find_tool(argv[0]). Errors: tool_not_found,
  /// tool_failed (could not start), timeout (process group killed),
  /// not_captured (fixture replay).
  [[nodiscard]] virtual Result<ToolResult> run(const ToolRequest& request) const = 0;
  /// True when run() answers at once, without a process to wait on (fixture
  /// replay that does not simulate durations): running tools concurrently
  /// then gains nothing, and detection runs them one after another.
  virtual bool runs_instantly() const noexcept { return false; }
  /// True when every read is already answered from memory (an indexed
  /// fixture, a ReadCache): detection then adds no cache of its own.
  virtual bool reads_from_memory() const noexcept { return false; }

  /// Opens a stream of the machine's kernel notifications. unsupported
  /// where the System has none (the default: a plain fixture, a recording);
  /// a live stream that can open neither source is also unsupported, with
  /// both reasons.
  [[nodiscard]] virtual Result<std::unique_ptr<EventStream>> open_events(const EventStreamOptions& options = {}) const;

  bool exists(std::string_view path) const { return status(path).has_value(); }
};

}  // namespace hwaccel
