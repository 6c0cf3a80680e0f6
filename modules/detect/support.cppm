// What a detector is given and returns, and the sysfs/PCI readers backends share.
module;
#include <bitset>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>
export module hwaccel.detect:support;
import hwaccel.hardware;
import :system;

export namespace hwaccel {

/// How much a diagnostic event tells: trace (every file, folder and link
/// looked at), debug (tools found and run, detectors started and finished),
/// info (what each detector found), warn (the registry's warnings).
enum class LogLevel : std::uint8_t { trace, debug, info, warn };

std::string_view to_string(LogLevel level) noexcept;
/// "trace", "debug", "info", "warn" (also "warning").
[[nodiscard]] Result<LogLevel> parse_log_level(std::string_view text);

/// One thing a detection did or decided, as values. `event` is one of
/// read_file, list_dir, read_link, status, find_tool, run_tool (what was
/// looked at: `subject` is the path, the tool or the command line, `outcome`
/// "ok", the error, "not found" or "exit N"), detector_start, detector_done
/// (`count`: devices found), warning (`detail`: its message; also those of
/// the cross-backend passes), device_merged (a device two backends saw,
/// folded into one) and detection_done (`count`: devices in the registry).
struct DiagnosticEvent {
  LogLevel level = LogLevel::debug;
  std::string_view event;
  std::string_view backend;  ///< the detector it happened in; empty outside any
  std::string subject;
  std::string outcome;
  std::string detail;  ///< a tool's first line of stderr, a warning's message
  std::int64_t count = -1;  ///< devices, entries or bytes; -1 when none applies
  std::chrono::microseconds elapsed{-1};  ///< -1 when not timed
};

/// Receives diagnostic events. Detection calls it from several threads at
/// once, so it must be thread-safe; it must not throw.
using DiagnosticSink = std::function<void(const DiagnosticEvent&)>;

class DetectContext;
struct DetectorOutput;

/// Runs third-party plugins for the `plugin` backend's detector. Declared
/// here, implemented by hwaccel.registry (plugins/), which reads what plugins
/// return in the registry's JSON form.
class PluginRunner {
 public:
  virtual ~PluginRunner() = default;
  /// Runs every loaded plugin against ctx.system(); anything that went wrong
  /// is a warning of the output.
  virtual DetectorOutput detect(const DetectContext& ctx) const = 0;
  /// Whether there is any plugin to run.
  virtual bool empty() const = 0;
};

/// Which backends and probes a detection runs, and its limits.
struct DetectOptions {
  std::bitset<backend_count> backends = std::bitset<backend_count>{}.set();
  /// Host probes that are not accelerators: environment, storage, network.
  bool system_probes = true;
  std::chrono::milliseconds tool_timeout = default_tool_timeout;
  std::size_t tool_output_cap = default_output_cap;
  /// Look for every selected backend's tools, whatever the kernel shows of
  /// its devices (looks_for_tools): for tools that answer for devices the
  /// kernel does not show, such as test doubles on a machine without them.
  bool all_tools = false;
  /// Where diagnostic events go; none when empty (the default: detection then
  /// makes no event at all), and only those at `log_level` or above.
  std::shared_ptr<const DiagnosticSink> sink;
  LogLevel log_level = LogLevel::info;
  /// The plugins the `plugin` backend runs; none when empty.
  std::shared_ptr<const PluginRunner> plugins;

  /// Whether an event at `level` would reach the sink: callers test it
  /// before building an event, so that detection without a sink builds none.
  bool wants(LogLevel level) const noexcept { return sink && level >= log_level; }
  /// Sends `event` to the sink when it wants its level; an exception the
  /// sink throws loses that event, never the detection.
  void report(const DiagnosticEvent& event) const noexcept;

  bool enabled(Backend b) const noexcept { return backends.test(static_cast<std::size_t>(b)); }
};

/// Parses "cuda,rocm" (names as in to_string(Backend)); "all" selects every
/// backend, "none" or "" none. Unknown names are an invalid_input error that
/// lists the valid ones.
[[nodiscard]] Result<std::bitset<backend_count>> parse_backend_list(std::string_view list);

/// What one detector found. Detectors never throw, print or exit: anything
/// that went wrong is a warning here.
struct DetectorOutput {
  std::vector<DeviceProfile> devices;
  std::vector<DeviceLink> links;
  std::vector<Interconnect> interconnects;
  std::vector<Warning> warnings;
  std::optional<CpuInfo> cpu;
  std::optional<Environment> environment;
  std::vector<StorageDevice> storage;
  std::vector<NetworkPort> network;
};

/// The view of the machine handed to a detector.
class DetectContext {
 public:
  DetectContext(const System& system, const DetectOptions& options, std::string_view source) noexcept
      : system_(system), options_(options), source_(source) {}

  const System& system() const noexcept { return system_; }
  const DetectOptions& options() const noexcept { return options_; }
  /// Name warnings are filed under ("cuda", "environment").
  std::string_view source() const noexcept { return source_; }

  /// Adds a warning attributed to this detector.
  void warn(DetectorOutput& out, WarningKind kind, std::string message) const;
  /// Adds a warning for a failed System call, mapping its error kind.
  void warn(DetectorOutput& out, const Error& error) const;

  /// A tool request with this detection's timeout and output cap.
  ToolRequest request(std::vector<std::string> argv) const;
  [[nodiscard]] Result<ToolResult> run(std::vector<std::string> argv) const;
  /// Runs several tools at once and returns their results in request order.
  std::vector<Result<ToolResult>> run_concurrently(std::span<const ToolRequest> requests) const;

 private:
  const System& system_;
  const DetectOptions& options_;
  std::string_view source_;
};

/// "hl-smi -q": an argv joined with spaces, for messages.
std::string join_argv(std::span<const std::string> argv);
/// "exited with code 2: <the last line the tool printed on stderr, else stdout>",
/// or "was killed by signal 9"; tools print their error last, after usage text.
std::string describe_exit(const ToolResult& result);

/// Walks the views a tool gives of the machine, in the order a detector
/// prefers them (the query form, then the plain listing, then the topology):
/// a view that is refused (non-zero exit), cannot start, is not captured in a
/// fixture or does not parse moves the walk on to the next; only a timeout
/// ends it, since the next view would hang the same way. The warnings say
/// what each skipped view answered, once, when the walk is finished.
class ToolViewWalk {
 public:
  ToolViewWalk(const DetectContext& ctx, DetectorOutput& out) noexcept : ctx_(ctx), out_(out) {}

  /// Runs one view. The run when it exited 0 (or, with `keep_failed`, when it
  /// exited non-zero but printed something to read); nullopt after noting why
  /// it was skipped. Nothing runs once a timeout ended the walk.
  std::optional<ToolResult> run(const std::vector<std::string>& argv, bool keep_failed = false);
  /// Takes a result from elsewhere (a run made concurrently with others) as
  /// if run() had made it.
  std::optional<ToolResult> take(const std::vector<std::string>& argv, Result<ToolResult> result,
                                 bool keep_failed = false);
  /// Records that an answered view could not be used (its output did not parse).
  void reject(const std::vector<std::string>& argv, std::string_view why);

  /// Runs a view (or takes its `result` when one is given) and parses its
  /// output with `parse` (text -> Result<T>); nullopt when it did not answer
  /// or did not parse, which is noted as for run() and reject().
  template <class Parse>
  auto read(const std::vector<std::string>& argv, Parse&& parse,
            std::optional<Result<ToolResult>> result = std::nullopt)
      -> std::optional<typename std::invoke_result_t<Parse&, std::string_view>::value_type> {
    const auto r = result ? take(argv, std::move(*result)) : run(argv);
    if (!r) return std::nullopt;
    auto parsed = parse(std::string_view(r->out));
    if (!parsed) {
      reject(argv, parsed.error().message);
      return std::nullopt;
    }
    return std::move(*parsed);
  }
  /// Whether a timeout ended the walk.
  bool stopped() const noexcept { return stopped_; }
  /// Whether any view was skipped so far.
  bool skipped_any() const noexcept { return !skipped_.empty(); }

  /// Files the walk's warnings, one at most. `used`: the view that answered,
  /// and `lost` what it lacks that the preferred view gives ("no UUIDs").
  /// When a later view answered: `degraded` if it lacks something, else
  /// `parse_error` if an earlier view printed what did not parse, else
  /// nothing (an older release refusing a newer form). When none answered:
  /// `parse_error` if some view's output did not parse, `not_captured` when
  /// every view was simply not in the fixture, else `tool_failed`; the
  /// message names each view and what it answered.
  void finish(const std::vector<std::string>* used, std::string_view lost = {});

 private:
  const DetectContext& ctx_;
  DetectorOutput& out_;
  std::vector<std::string> skipped_;
  bool only_not_captured_ = true;
  bool unparsed_ = false;
  bool stopped_ = false;
};

/// The warning kind that describes a failed System call.
WarningKind warning_kind_for(ErrorKind kind) noexcept;

/// A kind of PCI function a backend's driver binds.
struct PciKind {
  std::uint16_t vendor = 0;  ///< PCI-SIG vendor id
  /// Base class and subclass ("0x0302", a 3D controller); 0 for any class.
  std::uint16_t class_prefix = 0;
  /// What such a device is called in messages ("NVIDIA GPU").
  std::string_view what;
};

/// The package that installs a vendor tool.
struct ToolPackage {
  std::string_view tool;
  std::string_view package;
};

/// A variable a backend's runtimes read to choose devices (docs/environment.md).
struct VisibilityVariable {
  enum class Role : std::uint8_t {
    selects,    ///< lists the devices to use, by index or id; empty or -1 leaves none
    container,  ///< read by a container runtime when the container starts, not by the runtime
    order,      ///< how the runtime numbers its devices (CUDA_DEVICE_ORDER)
    cores,      ///< lists cores, not devices (NEURON_RT_VISIBLE_CORES)
    other,      ///< a count, a filter language or a mask of its own
  };
  std::string_view name;
  Role role = Role::other;
};

/// What is known about a backend before anything is detected: the kernel's
/// traces of its devices, how its runtimes choose them, what serves models on
/// them and where their telemetry comes from. A backend's identity (its name
/// and default family) is hwaccel.hardware's; everything about finding and
/// using its devices is here, in its detector's row, and the doctor, the
/// watcher, the merge pass, lazy registries and the planners read it from the
/// table instead of keeping lists of their own (docs/adding-a-backend.md).
struct BackendFacts {
  /// Families its devices can have besides default_family(backend): Apple's
  /// backend reports its Neural Engine (npu) beside its GPU.
  std::span<const Family> other_families;
  /// PCI drivers that bind its devices (the sysfs `driver` link's name).
  std::span<const std::string_view> drivers;
  /// Kernel modules whose load or unload concerns it besides its drivers
  /// (nvidia_uvm, nvidia_drm...).
  std::span<const std::string_view> modules;
  /// PCI functions its drivers bind.
  std::span<const PciKind> pci;
  /// Names (or name prefixes) of the /dev entries of its bound devices:
  /// "nvidia" matches /dev/nvidia0 and /dev/nvidiactl.
  std::span<const std::string_view> device_nodes;
  /// Names of /dev entries its devices use that other backends' devices use
  /// too ("vfio"): a trace of it for start-up, but an event on such a node
  /// concerns it only through its PCI device.
  std::span<const std::string_view> shared_device_nodes;
  /// Its devices register in the compute-accelerator class (/sys/class/accel, /dev/accel/accelN).
  bool accel_class = false;
  /// How to get its driver loaded, for a PCI function bound to none (doctor).
  std::string_view driver_remedy;
  /// Who makes its devices ("NVIDIA"), in messages.
  std::string_view vendor;
  /// The variables its runtimes read to choose devices; the first that
  /// selects devices is the one a launch sets.
  std::span<const VisibilityVariable> visibility_variables;
  /// The variable a lease sets to give a command its devices, when it is not
  /// launch_variable(): the one every runtime on the backend obeys
  /// (ROCR_VISIBLE_DEVICES below HIP's own list; Level Zero's ZE_AFFINITY_MASK).
  std::string_view lease_variable;
  /// Variables a lease clears beside it: lists that would renumber its
  /// devices again (HIP_VISIBLE_DEVICES within ROCR's).
  std::span<const std::string_view> lease_clears;
  /// The lease variable takes device UUIDs (stable across other jobs' masks
  /// and CUDA_DEVICE_ORDER) rather than indices.
  bool lease_by_uuid = false;
  /// Inference runtimes that serve models on its devices: "vllm", "sglang",
  /// "tensorrt-llm", "llama.cpp", "mlx", "optimum-habana", ...
  std::span<const std::string_view> runtimes;
  /// How to give a container its devices, for a device whose /dev node a container lacks (doctor).
  std::string_view container_remedy;
  /// What to do when the driver is bound but a device node is missing (doctor).
  std::string_view missing_node_remedy = "reload the driver, or check its udev rules";
  /// The package to install for each of its tools, for a device read without its tool (doctor).
  std::span<const ToolPackage> tool_packages;
  /// The /dev nodes a PCI function bound to its driver must have, for the
  /// doctor's checks of existence and permissions; null for none.
  std::vector<std::string> (*device_nodes_of)(const System& system, const PciAddress& address) = nullptr;
  /// Where `hwaccel metrics` reads its devices' telemetry; empty for none.
  std::string_view telemetry;
  /// Its GPUs are Vulkan devices too, and the merge pass folds the Vulkan entry into its own.
  bool merges_with_vulkan = false;

  /// Whether its runtimes include `runtime`.
  bool served_by(std::string_view runtime) const noexcept {
    for (const auto r : runtimes)
      if (r == runtime) return true;
    return false;
  }
  /// The variable a launch on its devices sets to their indices; empty when none does.
  std::string_view launch_variable() const noexcept {
    for (const auto& v : visibility_variables)
      if (v.role == VisibilityVariable::Role::selects) return v.name;
    return {};
  }
  /// The variable a lease sets: lease_variable, else launch_variable().
  std::string_view leasing_variable() const noexcept { return lease_variable.empty() ? launch_variable() : lease_variable; }
  /// Whether `name` is one of its drivers or modules.
  bool uses_module(std::string_view name) const noexcept {
    for (const auto m : drivers)
      if (m == name) return true;
    for (const auto m : modules)
      if (m == name) return true;
    return false;
  }
};

/// A detector of the registration table: one row per backend and host probe.
struct Detector {
  std::string_view name;           ///< backend or probe name
  std::optional<Backend> backend;  ///< empty for host probes
  /// Tools the detector may run; a detector whose tools are all absent runs
  /// on the calling thread, one that may wait on a tool gets its own. On
  /// Linux, the tools of a backend whose devices leave no trace in the kernel
  /// (facts: a loaded driver or module, a /dev node, a PCI function of its
  /// vendors) are not looked for (the orchestrator's evidence pass).
  std::span<const std::string_view> tools;
  DetectorOutput (*detect)(const DetectContext&);
  BackendFacts facts = {};
  /// Its tools are looked for whatever the kernel shows: devices it reports
  /// leave no trace in /dev, /sys/module or PCI (Vulkan's software devices,
  /// a remote TPU runtime's).
  bool tools_without_evidence = false;
};

/// What the kernel shows of a machine's accelerators, read once per detection:
/// its modules (/sys/module: loaded and built in), the entries of /dev and
/// the PCI vendors (/proc/bus/pci/devices, else /sys/bus/pci/devices).
struct KernelTraces {
  /// At least one of the places could be read: a Linux machine (or a
  /// capture of one). When none can (macOS, a fixture of tool outputs
  /// alone), nothing can be concluded from a trace's absence.
  bool readable = false;
  std::vector<std::string> modules;      ///< sorted
  std::vector<std::string> dev_entries;  ///< sorted
  std::vector<std::uint16_t> pci_vendors;  ///< sorted, unique

  /// Whether any trace of a backend with these facts is here: one of its
  /// drivers or modules, one of its /dev entries, a function of one of its
  /// PCI vendors, or (for the compute-accelerator class) /dev/accel.
  bool show(const BackendFacts& facts) const;
};

/// Reads the traces through `system`.
KernelTraces read_kernel_traces(const System& system);

/// Whether the kernel's traces decide if `detector`'s tools are looked for:
/// a backend's detector with tools, not marked tools_without_evidence, in a
/// detection that does not look for every tool.
bool tools_need_evidence(const Detector& detector, const DetectOptions& options) noexcept;

/// Whether a detection looks for `detector`'s tools: on a machine whose
/// traces are readable, only where they show its backend (a tool on PATH
/// whose devices the kernel does not know answers nothing, and looking for
/// it costs a stat per PATH folder), unless the row asks otherwise.
bool looks_for_tools(const Detector& detector, const KernelTraces& traces, const DetectOptions& options);

// --- shared readers ---------------------------------------------------------

/// More memory than any device has or will soon have (16 TiB): a tool or
/// file that reports more is wrong, and the value is discarded.
inline constexpr std::uint64_t max_plausible_device_memory = std::uint64_t{16} << 40;

/// Trimmed content of a small text file (sysfs attribute), nullopt on any error.
std::optional<std::string> read_text(const System& system, std::string_view path, std::size_t cap = 64 * 1024);
/// Unsigned integer file; decimal, or hex with base 16 ("0x10de" accepted).
std::optional<std::uint64_t> read_u64(const System& system, std::string_view path, int base = 10);
std::optional<std::int64_t> read_i64(const System& system, std::string_view path);
/// Entry names of a directory, empty on any error.
std::vector<std::string> list_names(const System& system, std::string_view path);
/// Last path component ("../../bus/pci/drivers/amdgpu" -> "amdgpu").
std::string_view base_name(std::string_view path) noexcept;
/// Orders names with embedded numbers numerically: card2 < card10.
bool natural_less(std::string_view a, std::string_view b) noexcept;
/// The PCI function a sysfs or procfs folder is named after, in the kernel's
/// spelling only ("0000:17:00.0"): a padded or shortened name is no second
/// entry for the same function. Nullopt for names that are not PCI functions.
std::optional<PciAddress> pci_address_of_name(std::string_view name);

/// What sysfs knows about one PCI function.
struct PciFunction {
  PciAddress address;
  std::optional<std::uint16_t> vendor_id;
  std::optional<std::uint16_t> device_id;
  std::optional<std::uint16_t> subsystem_vendor_id;
  std::optional<std::uint16_t> subsystem_device_id;
  std::optional<std::uint32_t> class_code;  ///< 24-bit class, e.g. 0x030000
  std::optional<std::uint8_t> revision;     ///< PCI revision id (tells NPU generations apart)
  std::optional<std::string> driver;        ///< bound driver name
  std::optional<std::int32_t> numa_node;    ///< absent when sysfs says -1
  std::optional<std::string> local_cpulist;
  PcieLink link;
};

/// Reads /sys/bus/pci/devices/<address>/. Vendor and device ids fall back to
/// the uevent file (some sysfs snapshots lack the `device` attribute).
PciFunction read_pci_function(const System& system, const PciAddress& address);

/// What placing a device next to a controller needs of its PCI function: the
/// NUMA node and the PCIe link, in five sysfs reads where read_pci_function
/// makes about fourteen. The ids, class, driver and CPU list stay empty.
PciFunction read_pci_placement(const System& system, const PciAddress& address);

/// What recognising a device needs of its PCI function: the vendor and
/// device ids, in two sysfs reads (the uevent file when a snapshot lacks
/// them) where read_pci_function makes about fourteen. Everything else stays
/// empty.
PciFunction read_pci_ids(const System& system, const PciAddress& address);

/// PCI addresses of the functions bound to a driver
/// (/sys/bus/pci/drivers/<driver>/), sorted.
std::vector<PciAddress> pci_functions_of_driver(const System& system, std::string_view driver);

/// Parses a sysfs link speed ("16.0 GT/s PCIe", "2.5 GT/s") to GT/s.
std::optional<double> parse_link_speed(std::string_view text) noexcept;

/// A device of the compute-accelerator class, /sys/class/accel/accelN: the
/// class DRM accel drivers (intel_vpu, amdxdna, qaic, habanalabs) register,
/// and the one Google's out-of-tree TPU driver registers under the same name.
struct AccelNode {
  std::string name;                      ///< "accel0"
  std::optional<std::uint32_t> minor;    ///< N of "accelN"
  std::optional<std::string> driver;     ///< driver bound to the parent device
  std::optional<PciAddress> pci_address; ///< the parent, when it is a PCI function
};

/// The entries of /sys/class/accel in natural order (accel2 < accel10), each
/// resolved with two link reads (device, device/driver). Empty when the class
/// does not exist.
std::vector<AccelNode> accel_nodes(const System& system);

/// A PCI function bound to an accel driver, with its accel node if it has one.
struct AccelFunction {
  PciAddress address;
  std::optional<AccelNode> node;
};

/// The PCI functions a DRM accel driver drives: those of its accel nodes plus
/// those bound to it (/sys/bus/pci/drivers/<driver>) that have no node (a
/// device whose driver failed to initialise it), sorted by address. One
/// listing of each folder; nothing else is read.
std::vector<AccelFunction> accel_functions_of_driver(const System& system, std::string_view driver);

/// "8086:7d1d": a PCI vendor:device pair as lspci -n prints it.
std::string pci_id_text(std::uint16_t vendor_id, std::uint16_t device_id);

/// The GPU vendor a PCI vendor id (or a Khronos vendor id, 0x10000 and up)
/// names, as devices report it ("NVIDIA", "AMD", "Intel"); empty when unknown.
std::string_view gpu_vendor_name(std::uint32_t vendor_id) noexcept;

/// Fills what every device of a DRM accel driver shares from sysfs: PCI bus
/// id, NUMA node, CPU affinity, PCIe link, and the properties "pci_id",
/// "driver" and "device_node" (/dev/accel/accelN). A function without an
/// accel node, or whose /dev node is missing, is marked unavailable with a
/// warning. Returns what sysfs says about the function.
PciFunction describe_accel_function(const DetectContext& ctx, DetectorOutput& out, const AccelFunction& function,
                                    std::string_view driver, DeviceProfile& device);

/// Reads the PCI function whose sysfs folder is `dir`: /sys/bus/pci/devices/<address>,
/// or a DRM card's `device` folder (which some snapshots hold as a plain folder).
PciFunction read_pci_function_at(const System& system, const std::string& dir, const PciAddress& address);

/// The /dev/dri render nodes of a DRM PCI function (from its sysfs drm/ folder).
std::vector<std::string> render_nodes_of(const System& system, const PciAddress& address);
/// The /dev/accel nodes of a compute-accelerator PCI function (from its sysfs accel/ folder).
std::vector<std::string> accel_nodes_of(const System& system, const PciAddress& address);

/// One line of /proc/bus/pci/devices: a PCI function, its ids and its bound driver.
/// The kernel prints no PCI domain there.
struct ProcPciEntry {
  std::uint8_t bus = 0;
  std::uint8_t device = 0;
  std::uint8_t function = 0;
  std::uint16_t vendor_id = 0;
  std::uint16_t device_id = 0;
  std::optional<std::string> driver;

  friend bool operator==(const ProcPciEntry&, const ProcPciEntry&) = default;
};

/// Parses /proc/bus/pci/devices ("BBDF<tab>VVVVDDDD<tab>irq<tab>7 bases<tab>7 sizes<tab>driver");
/// malformed lines are skipped.
std::vector<ProcPciEntry> parse_proc_pci_devices(std::string_view text);

/// The PCI functions of one vendor, sorted by address. One read of /proc/bus/pci/devices
/// lists every function of the machine with its ids, so a detector of rare hardware costs
/// a single small read where that hardware is absent; the PCI domain and the sysfs facts
/// come from /sys/bus/pci/devices only when a function matches.
std::vector<PciFunction> pci_functions_of_vendor(const System& system, std::uint16_t vendor_id);

/// The first entry of a device-tree `compatible` list (NUL-separated strings, the
/// board's entries before the SoC's) that starts with `prefix`, without its
/// "vendor," part: ("samsung,r9s\0samsung,s5e9925\0", "samsung,s5e") -> "s5e9925".
std::optional<std::string> compatible_entry(std::string_view compatible, std::string_view prefix);

/// The PCI bridges above a function, nearest first, from the path its
/// /sys/bus/pci/devices link points to (empty when the link cannot be read).
std::vector<PciAddress> pci_upstream_bridges(const System& system, const PciAddress& address);

}  // namespace hwaccel
