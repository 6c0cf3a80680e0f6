// The System seam: the only way detectors read the machine. Live, fixture
// replay and recording implementations.
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
  std::vector<std::string> argv;  ///< argv[0] is the bare tool name, looked up on PATH
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
Result<Uevent> parse_uevent(std::string_view message);
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
  virtual Result<EventBatch> wait(std::chrono::steady_clock::time_point deadline) = 0;
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
  virtual Result<FileContent> read_file(std::string_view path, std::size_t max_bytes = default_read_cap) const = 0;
  /// Entries of a directory, "." and ".." excluded, sorted by name (bytewise).
  virtual Result<std::vector<DirEntry>> list_dir(std::string_view path) const = 0;
  /// Target of a symbolic link, as stored.
  virtual Result<std::string> read_link(std::string_view path) const = 0;
  virtual Result<FileStatus> status(std::string_view path, bool follow_symlinks = true) const = 0;
  /// An environment variable of the detecting process.
  virtual std::optional<std::string> env(std::string_view name) const = 0;
  /// The detecting process's user and groups (root where a System does not
  /// know: a fixture without "identity").
  virtual ProcessIdentity identity() const { return {}; }
  /// Absolute path of an executable tool (regular file with the exec bit),
  /// or nullopt. `name` must be a bare file name.
  virtual std::optional<std::string> find_tool(std::string_view name) const = 0;
  /// Runs a tool found by find_tool(argv[0]). Errors: tool_not_found,
  /// tool_failed (could not start), timeout (process group killed),
  /// not_captured (fixture replay).
  virtual Result<ToolResult> run(const ToolRequest& request) const = 0;
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
  virtual Result<std::unique_ptr<EventStream>> open_events(const EventStreamOptions& options = {}) const;

  bool exists(std::string_view path) const { return status(path).has_value(); }
};

/// Options of the live system.
struct LiveOptions {
  /// Directories searched for tools; PATH of the process when empty.
  std::optional<std::string> search_path;
  /// Vendor folders searched after PATH: tools are often installed there
  /// without being on PATH (ROCm, WSL's nvidia-smi, Neuron, Qualcomm AIC).
  std::vector<std::string> extra_tool_dirs = {"/usr/lib/wsl/lib", "/opt/rocm/bin", "/opt/aws/neuron/bin",
                                              "/opt/qti-aic/tools"};
  /// Variables removed from a tool's environment: they inject code into it.
  std::vector<std::string> stripped_env = {"LD_PRELOAD", "LD_AUDIT", "DYLD_INSERT_LIBRARIES"};
};

/// The machine this process runs on.
std::unique_ptr<System> make_live_system(LiveOptions options = {});

/// One captured tool run of a fixture manifest.
struct CommandRecord {
  std::vector<std::string> argv;
  std::string stdout_path;  ///< relative to commands/
  std::optional<std::string> stderr_path;
  int exit = 0;
  std::optional<int> signal;
  std::optional<std::uint32_t> duration_ms;
  bool hang = false;
};

/// Permission bits and owner of a path, where a fixture says them
/// (device nodes are plain files in a fixture's root/).
struct FilePermissions {
  std::uint32_t mode = 0;
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;

  friend bool operator==(const FilePermissions&, const FilePermissions&) = default;
};

/// fixture.json, format 1 (docs/fixtures.md).
struct FixtureManifest {
  int format = 1;
  std::string machine;
  std::string source;
  bool synthetic = true;
  std::map<std::string, std::string, std::less<>> env;
  std::vector<std::string> tools;
  std::vector<CommandRecord> commands;
  /// The process that was detecting; root when absent.
  std::optional<ProcessIdentity> identity;
  /// Permissions of paths (device nodes), by machine path.
  std::map<std::string, FilePermissions, std::less<>> permissions;
};

/// Parses and validates a fixture manifest.
Result<FixtureManifest> parse_fixture_manifest(std::string_view json);
/// Writes a manifest in canonical form.
std::string write_fixture_manifest(const FixtureManifest& manifest);

struct FixtureOptions {
  /// Sleep for each command's recorded duration_ms, and until the deadline
  /// for a hung one (latency benchmarks). Off: replies come at once.
  bool simulate_durations = false;
  /// File contents up to this size are loaded when the fixture is opened, so
  /// that replay touches no disk; larger files are read on demand.
  std::size_t preload_file_bytes = std::size_t{1} << 20;
  /// Upper bound on everything preloaded.
  std::size_t preload_total_bytes = std::size_t{256} << 20;
  /// Upper bound on entries in root/ (a hostile fixture cannot exhaust memory).
  std::size_t max_entries = 1'000'000;
};

/// A captured machine replayed from a fixture folder.
class FixtureSystem final : public System {
 public:
  /// Opens `dir` (holding fixture.json, root/, commands/). Fails with a clear
  /// error on a malformed manifest or a root that cannot be read.
  static Result<std::unique_ptr<FixtureSystem>> open(std::string_view dir, FixtureOptions options = {});
  /// Opens `dir` with `layers` laid over it in order (see TimelineStep::state):
  /// each layer's `removed` paths go, then the files under its folder's root/
  /// replace or add, and its fixture.json, when present, replaces the
  /// manifest. A layer with an empty `dir` only removes.
  struct Layer {
    std::string dir;
    std::vector<std::string> removed;
  };
  static Result<std::unique_ptr<FixtureSystem>> open_layered(std::string_view dir, std::span<const Layer> layers,
                                                             FixtureOptions options = {});
  ~FixtureSystem() override;

  const FixtureManifest& manifest() const noexcept;

  Result<FileContent> read_file(std::string_view path, std::size_t max_bytes = default_read_cap) const override;
  Result<std::vector<DirEntry>> list_dir(std::string_view path) const override;
  Result<std::string> read_link(std::string_view path) const override;
  Result<FileStatus> status(std::string_view path, bool follow_symlinks = true) const override;
  std::optional<std::string> env(std::string_view name) const override;
  ProcessIdentity identity() const override;
  std::optional<std::string> find_tool(std::string_view name) const override;
  Result<ToolResult> run(const ToolRequest& request) const override;
  bool runs_instantly() const noexcept override;
  bool reads_from_memory() const noexcept override { return true; }

  struct State;

 private:
  explicit FixtureSystem(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

/// One step of a fixture timeline (docs/fixtures.md): what the kernel said,
/// then the machine's state after it.
struct TimelineStep {
  std::string name;                   ///< "gpu-falls-off-bus", for messages
  std::vector<KernelEvent> events;    ///< in the order they arrived
  bool rescan = false;                ///< seen by a periodic re-scan, not an event
  /// The state: a folder (relative to the timeline) laid over the previous
  /// step's state: files under its root/ replace or add, `removed` paths go
  /// with everything below them, and its fixture.json, where it has one,
  /// replaces the manifest (commands then come from its commands/). With
  /// `complete`, the folder is a whole fixture instead (what capture writes).
  std::optional<std::string> state;
  std::vector<std::string> removed;
  bool complete = false;
};

/// timeline.json, format 1.
struct Timeline {
  int format = 1;
  std::vector<TimelineStep> steps;
};

/// Parses and validates a timeline (timeline.json); paths must stay inside
/// the fixture folder.
Result<Timeline> parse_timeline(std::string_view json);
std::string write_timeline(const Timeline& timeline);

/// A fixture with a timeline replayed step by step: reads answer from the
/// state of the current step (the fixture itself before the first), and
/// open_events() returns a stream that delivers one step per wait(), moving
/// the state on as it does, then a quiet (empty) batch, then the next step,
/// and `ended` after the last. Every state is opened up front, so a broken
/// step fails open(), not the replay.
class TimelineSystem final : public System {
 public:
  /// `dir` is a fixture folder holding timeline.json.
  static Result<std::unique_ptr<TimelineSystem>> open(std::string_view dir, FixtureOptions options = {});
  ~TimelineSystem() override;

  const Timeline& timeline() const noexcept;
  /// Steps delivered so far (0 before the first).
  std::size_t position() const noexcept;
  /// The state after `steps` steps (0: the fixture itself).
  const FixtureSystem& state(std::size_t steps) const;

  Result<FileContent> read_file(std::string_view path, std::size_t max_bytes = default_read_cap) const override;
  Result<std::vector<DirEntry>> list_dir(std::string_view path) const override;
  Result<std::string> read_link(std::string_view path) const override;
  Result<FileStatus> status(std::string_view path, bool follow_symlinks = true) const override;
  std::optional<std::string> env(std::string_view name) const override;
  ProcessIdentity identity() const override;
  std::optional<std::string> find_tool(std::string_view name) const override;
  Result<ToolResult> run(const ToolRequest& request) const override;
  bool runs_instantly() const noexcept override;
  bool reads_from_memory() const noexcept override { return true; }
  /// One stream per timeline: a second open while the first lives is refused.
  Result<std::unique_ptr<EventStream>> open_events(const EventStreamOptions& options = {}) const override;

  struct State;

 private:
  explicit TimelineSystem(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

/// A fixture folder as a System: its TimelineSystem where it holds a
/// timeline.json (reads answer from its first state until the timeline is
/// replayed), its FixtureSystem otherwise. What every `--fixture` opens.
Result<std::unique_ptr<System>> open_fixture_folder(std::string_view dir, FixtureOptions options = {});

/// Wraps another System for the span of one detection and answers each
/// repeated question from memory: every file, directory listing, link and
/// status is asked of the wrapped System once (several detectors read
/// /proc/cpuinfo, /proc/self/mountinfo and /proc/bus/pci/devices, and walk
/// the same sysfs links). Environment, PATH lookups and tool runs go
/// straight through. Thread-safe. It takes the machine as unchanging while
/// it lives, so keep it for one detection, never longer.
class ReadCache final : public System {
 public:
  explicit ReadCache(const System& inner);
  ~ReadCache() override;

  Result<FileContent> read_file(std::string_view path, std::size_t max_bytes = default_read_cap) const override;
  Result<std::vector<DirEntry>> list_dir(std::string_view path) const override;
  Result<std::string> read_link(std::string_view path) const override;
  Result<FileStatus> status(std::string_view path, bool follow_symlinks = true) const override;
  std::optional<std::string> env(std::string_view name) const override;
  ProcessIdentity identity() const override { return inner_.identity(); }
  std::optional<std::string> find_tool(std::string_view name) const override;
  Result<ToolResult> run(const ToolRequest& request) const override;
  bool runs_instantly() const noexcept override;
  bool reads_from_memory() const noexcept override { return true; }

  struct State;

 private:
  const System& inner_;
  std::unique_ptr<State> state_;
};

/// Tool outputs and files pasted from a machine, before they become a fixture.
struct ImportedCapture {
  std::string machine;
  std::string source;
  std::map<std::string, std::string, std::less<>> env;
  struct Command {
    std::vector<std::string> argv;  ///< argv[0] a bare tool name
    std::string out;
    std::optional<std::string> err;
    int exit = 0;
  };
  std::vector<Command> commands;  ///< each argv once: a repeat keeps the first output
  struct FileCopy {
    std::string machine_path;  ///< where it lived: "/sys/class/drm/card0"
    std::string from;          ///< where it is now, a file or a folder
  };
  std::vector<FileCopy> copies;
  std::map<std::string, std::string> contents;  ///< machine path -> text (`cat FILE` in a transcript)
  std::vector<std::string> notes;               ///< what was left out, and why
};

/// Reads a terminal transcript: each command on a line of its own starting
/// with "$ ", followed by what it printed. Pipelines and redirections are left
/// out with a note (their output is not one tool's); `sudo` is dropped;
/// `cat /absolute/file` becomes that file. `path` names the transcript in
/// messages. parse_error when no line is a command.
Result<ImportedCapture> parse_capture_transcript(std::string_view text, std::string_view path);

/// What import_capture wrote.
struct ImportSummary {
  std::size_t commands = 0;
  std::size_t files = 0;
  std::vector<std::string> notes;
};

/// Turns pasted tool outputs into a fixture folder at `out_dir` (which must
/// not exist, or be empty) that `FixtureSystem` replays. `source` is an import
/// manifest (a JSON file, or a folder holding import.json: docs/fixtures.md)
/// or a terminal transcript (parse_capture_transcript). `machine`, when not
/// empty, describes the machine in fixture.json. Only what was pasted is in
/// the fixture: every other command answers "not captured".
Result<ImportSummary> import_capture(std::string_view source, std::string_view out_dir, std::string_view machine = {});

/// Wraps another System and records everything read and run through it, so
/// that the same detection can be replayed later from a fixture folder.
class RecordingSystem final : public System {
 public:
  explicit RecordingSystem(const System& inner);
  ~RecordingSystem() override;

  Result<FileContent> read_file(std::string_view path, std::size_t max_bytes = default_read_cap) const override;
  Result<std::vector<DirEntry>> list_dir(std::string_view path) const override;
  Result<std::string> read_link(std::string_view path) const override;
  Result<FileStatus> status(std::string_view path, bool follow_symlinks = true) const override;
  std::optional<std::string> env(std::string_view name) const override;
  ProcessIdentity identity() const override { return inner_.identity(); }
  std::optional<std::string> find_tool(std::string_view name) const override;
  Result<ToolResult> run(const ToolRequest& request) const override;

  /// Writes the fixture folder (fixture.json, root/, commands/) to `dir`,
  /// which must not exist yet or be empty.
  Result<void> write(std::string_view dir, std::string_view machine, std::string_view source) const;

  struct State;

 private:
  const System& inner_;
  std::unique_ptr<State> state_;
};

}  // namespace hwaccel

// Module-internal: the live System's kernel notifications (system_events.cpp),
// and the fixture's bounded read of one of its own files (system_fixture.cpp).
namespace hwaccel {
Result<std::unique_ptr<EventStream>> open_live_events(const EventStreamOptions& options);
/// At most `cap` bytes of the regular file at `path`, refusing a link or a
/// FIFO as its last component; `shown` names it in messages.
Result<FileContent> read_fixture_file(const std::string& path, std::size_t cap, std::string_view shown);
}  // namespace hwaccel
