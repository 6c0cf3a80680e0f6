// Third-party backends: plugins found in plugin folders, checked, and run in
// a child process (or, when asked, in this one) through a C view of the
// System seam (include/hwaccel/plugin.h, docs/plugins.md).
module;
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
export module hwaccel.registry:plugins;
import hwaccel.hardware;
import hwaccel.detect;

export namespace hwaccel {

/// The plugin ABI this library speaks (HWACCEL_PLUGIN_ABI_VERSION).
inline constexpr std::uint32_t plugin_abi_version = 1;

/// Where plugins are looked for and how they run: the detection settings
/// plugin-path ($HWACCEL_PLUGIN_PATH), plugins-in-process and plugin-host
/// ($HWACCEL_PLUGIN_HOST).
struct PluginSettings {
  /// Folders searched first, separated by ':'.
  std::string path;
  /// Also search system_plugin_folder().
  bool system_folder = true;
  /// Load plugins into this process instead of a hwaccel-plugin-host child:
  /// faster, but a plugin's crash or hang is then hwaccel's.
  bool in_process = false;
  /// The hwaccel-plugin-host program; empty: find_plugin_host() finds it.
  std::string host;

  friend bool operator==(const PluginSettings&, const PluginSettings&) = default;
};

/// The folder this build looks in after the path: $libdir/hwaccel/plugins.
std::string_view system_plugin_folder() noexcept;
/// Where an install puts hwaccel-plugin-host: $libexecdir/hwaccel.
std::string_view plugin_host_installed_path() noexcept;

/// The hwaccel-plugin-host program `settings` names, else the one beside the
/// running program, else the one installed in $libexecdir/hwaccel; nullopt
/// when none is there.
std::optional<std::string> find_plugin_host(const PluginSettings& settings);

/// A shared object found in a plugin folder.
struct PluginFile {
  std::string path;
  /// "HWACCEL_PLUGIN_PATH" (or the plugin-path setting) or "system folder".
  std::string origin;
  /// Why it will not be loaded: its folder or file is writable by others
  /// than its owner and root, or owned by another user; empty when loadable.
  std::optional<std::string> refused;
};

/// The `*.so` files of the folders `settings` names, in folder order and by
/// name within a folder; folders that do not exist are skipped. Each file
/// and folder is checked as loading checks it.
std::vector<PluginFile> find_plugins(const PluginSettings& settings);

/// What a plugin's descriptor says, copied out of it.
struct PluginDescriptor {
  std::uint32_t abi_version = 0;
  std::string name;
  std::string version;
  std::string description;
  std::string vendor;
  Family family = Family::asic;
  std::vector<std::string> drivers;
  std::vector<std::string> kernel_modules;
  /// vendor << 16 | device (device 0: any of the vendor's)
  std::vector<std::uint32_t> pci_ids;
  std::vector<std::string> device_nodes;
  std::string visibility_variable;
  std::vector<std::string> tools;

  friend bool operator==(const PluginDescriptor&, const PluginDescriptor&) = default;
};

/// Whether a descriptor may be used: the ABI version is this library's, the
/// name is 1-32 of [a-z0-9_] starting with a letter and no built-in
/// backend's, the family one of gpu, npu, tpu, asic. The error names the
/// plugin (`path`) and, for a version, both versions.
[[nodiscard]] Result<void> check_descriptor(const PluginDescriptor& descriptor, std::string_view path);

/// One plugin as `hwaccel backends` lists it.
struct PluginDescription {
  PluginFile file;
  std::optional<PluginDescriptor> descriptor;
  /// Why it cannot be used (refused, failed to load, a bad descriptor).
  std::optional<std::string> problem;
};

/// Loads each plugin of find_plugins() as detection would (isolated unless
/// settings.in_process) and reads its descriptor; nothing is detected.
std::vector<PluginDescription> describe_plugins(const PluginSettings& settings,
                                                std::chrono::milliseconds timeout = default_tool_timeout);

/// The runner detection hands the plugin backend (DetectOptions::plugins):
/// the plugins of find_plugins(settings), run each time a detection runs,
/// with the detection's tool deadline and output cap. Plugins are run one
/// after another; each one's devices, or the warning of why there are none,
/// go into the detection.
std::shared_ptr<const PluginRunner> plugin_runner(const PluginSettings& settings);

/// The most devices one plugin may report.
inline constexpr std::size_t max_plugin_devices = 4096;

/// Reads what a plugin emitted: {"devices": [...], "warnings": [...]} in the
/// registry's JSON form. Each device must be the plugin's: "backend"
/// "plugin", an id "NAME:N" (N its index) unique in the document, a family
/// other than cpu; one that is not is dropped with a warning. Warnings are
/// filed under the plugin's name. Devices get properties["plugin"] = NAME.
/// parse_error when the document is not such an object.
[[nodiscard]] Result<DetectorOutput> read_plugin_document(std::string_view json, const PluginDescriptor& descriptor);

}  // namespace hwaccel

// --- inside the registry module: how plugins run -------------------------

namespace hwaccel::plugin_detail {

/// A file descriptor closed when it goes.
class OwnedFd {
 public:
  OwnedFd() noexcept = default;
  explicit OwnedFd(int fd) noexcept : fd_(fd) {}
  OwnedFd(OwnedFd&& other) noexcept : fd_(other.release()) {}
  OwnedFd& operator=(OwnedFd&& other) noexcept;
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
  ~OwnedFd();
  int get() const noexcept { return fd_; }
  int release() noexcept {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

/// Opens a plugin file for loading after checking it and its folder (the
/// rules of PluginFile::refused); the descriptor is what gets loaded, so the
/// file checked is the file run.
[[nodiscard]] Result<OwnedFd> open_plugin_file(const std::string& path);

/// What running one plugin gave.
struct PluginRun {
  std::optional<PluginDescriptor> descriptor;
  std::string document;   ///< what it emitted
  int detect_result = 0;  ///< detect()'s return value
  bool detected = false;  ///< detect() ran and returned
  bool too_large = false; ///< the document passed the output cap
  /// Why there is nothing to read: it could not be loaded, crashed, hung,
  /// flooded or broke the protocol.
  std::optional<Warning> failure;
};

/// The limits a plugin runs under: the detection's tool deadline and output
/// cap. The deadline is the plugin's own time: tool runs it asks for have
/// deadlines of their own and extend it by what they took.
struct PluginLimits {
  std::chrono::milliseconds timeout = default_tool_timeout;
  std::size_t output_cap = default_output_cap;
};

/// Answers a plugin's system calls from a detection's System, with the
/// detection's caps: what the in-process C callbacks and the isolated host's
/// requests share. Each call returns a hwaccel_plugin_status and, on
/// failure, leaves the reason in error().
class PluginCalls {
 public:
  PluginCalls(const DetectContext& ctx, std::string plugin) noexcept : ctx_(ctx), plugin_(std::move(plugin)) {}

  int read_file(std::string_view path, std::uint64_t max_bytes, FileContent& content);
  int list_dir(std::string_view path, std::vector<DirEntry>& entries);
  int read_link(std::string_view path, std::string& target);
  int status(std::string_view path, bool follow_symlinks, FileStatus& status);
  int env(std::string_view name, std::string& value);
  int run(std::vector<std::string> argv, std::uint32_t timeout_ms, ToolResult& result);

  const std::string& error() const noexcept { return error_; }
  /// Time spent in tool runs so far (extends the plugin's deadline).
  std::chrono::microseconds tool_time() const noexcept { return tool_time_; }

 private:
  int failed(const Error& error);
  bool valid_path(std::string_view path);

  const DetectContext& ctx_;
  std::string plugin_;
  std::string error_;
  std::chrono::microseconds tool_time_{0};
};

/// The hwaccel_plugin_status for a System error.
int plugin_status_of(ErrorKind kind) noexcept;
/// The FileType as the ABI numbers it (hwaccel_plugin_file_type).
std::uint8_t plugin_file_type(FileType type) noexcept;

/// Runs one plugin in a hwaccel-plugin-host child (`host`). With a context,
/// its detect function; without, only its descriptor is read.
PluginRun run_isolated(const PluginFile& file, const std::string& host, const DetectContext* ctx,
                       const PluginLimits& limits);
/// Runs one plugin in this process.
PluginRun run_in_process(const PluginFile& file, const DetectContext* ctx, const PluginLimits& limits);

/// How messages name a plugin: "plugin 'NAME' (PATH)", or "plugin PATH"
/// before its descriptor is known.
std::string plugin_label(const PluginFile& file, const std::optional<PluginDescriptor>& descriptor);

/// Takes a descriptor read from a plugin (in process or from its host):
/// sets its family from the descriptor's text ("" is asic) and checks it
/// (check_descriptor). The warning that refuses it, or nothing.
std::optional<Warning> accept_descriptor(PluginDescriptor& descriptor, std::string_view family, const PluginFile& file);

/// Reads an Inventory object of the registry's JSON form ("devices",
/// "warnings", ...) without the registry's schema_version: what a plugin
/// emits. `what` names the document in errors.
[[nodiscard]] Result<Inventory> read_inventory_object(std::string_view json, std::string_view what);

}  // namespace hwaccel::plugin_detail
