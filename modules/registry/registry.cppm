// hwaccel.registry: the detected devices and host facts, queries over them,
// and the registry's JSON form (a public, versioned contract: docs/json.md).
module;
#include <algorithm>
#include <bitset>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
export module hwaccel.registry;
export import hwaccel.hardware;
export import hwaccel.detect;
export import :requirement;
export import :plugins;

export namespace hwaccel {

/// Version of the registry JSON schema this library writes (docs/json.md).
inline constexpr std::uint32_t registry_schema_version = 2;

/// Library version, "major.minor.patch".
std::string_view library_version() noexcept;

class DetectBuilder;

/// The result of a detection: devices, links, host facts, warnings and
/// per-backend timings, with queries over them. A value type: copy it, keep
/// it, compare it.
class AcceleratorRegistry {
 public:
  AcceleratorRegistry() = default;
  explicit AcceleratorRegistry(Inventory inventory) : inventory_(std::move(inventory)) {}

  /// Detects this machine with every backend (or those named in the
  /// HWACCEL_BACKENDS environment variable).
  static AcceleratorRegistry detect();
  /// A builder to choose backends, limits or another System.
  static DetectBuilder builder();

  const Inventory& inventory() const noexcept { return inventory_; }
  Inventory& inventory() noexcept { return inventory_; }
  std::span<const DeviceProfile> devices() const noexcept { return inventory_.devices; }
  std::span<const DeviceLink> links() const noexcept { return inventory_.links; }
  std::span<const Interconnect> interconnects() const noexcept { return inventory_.interconnects; }
  const SystemInfo& system() const noexcept { return inventory_.system; }
  std::span<const Warning> warnings() const noexcept { return inventory_.warnings; }
  std::span<const BackendTiming> timings() const noexcept { return inventory_.timings; }
  /// Schema version the registry was read with (registry_schema_version when detected).
  std::uint32_t schema_version() const noexcept { return schema_version_; }

  /// The device with this id, or nullptr.
  const DeviceProfile* find(std::string_view id) const noexcept;
  /// Devices that are available and visible to this process.
  std::vector<const DeviceProfile*> available() const;
  std::vector<const DeviceProfile*> by_family(Family family) const;
  std::vector<const DeviceProfile*> by_backend(Backend backend) const;
  /// Whether any available, visible non-CPU device exists.
  bool has_accelerator() const noexcept;

  /// Adds a device (for configuration-driven setups and what-if analysis);
  /// an empty id is filled in, a duplicate id is an invalid_input error.
  [[nodiscard]] Result<void> add_device(DeviceProfile device);

  // --- capability queries ---------------------------------------------------

  /// The devices that meet the requirement's per-device conditions (see
  /// AcceleratorRequirement), in registry order; empty when fewer than
  /// `requirement.min_devices` do, since the requirement cannot be met.
  std::vector<const DeviceProfile*> satisfying(const AcceleratorRequirement& requirement) const;
  /// Whether at least `requirement.min_devices` devices meet it.
  bool satisfies(const AcceleratorRequirement& requirement) const { return !satisfying(requirement).empty(); }

  /// The most capable available, visible device, judged on what it can do,
  /// never on its vendor: any accelerator before the CPU (the CPU is the
  /// fallback); among accelerators the most usable memory
  /// (usable_memory_bytes, compared in whole GiB so that an 81559 MiB H100
  /// and an 81920 MiB A100 tie), then the higher memory bandwidth where both
  /// are known, then registry order. A model that does not fit runs nowhere,
  /// so capacity comes first. nullptr when no device is available.
  const DeviceProfile* best_available() const noexcept;

  /// Usable memory (usable_memory_bytes) summed over the available, visible
  /// accelerators. CPU memory is NOT included. Devices of unknown size add 0.
  std::uint64_t total_accelerator_memory() const noexcept;
  /// total_accelerator_memory() plus the host's memory (the CPU device's,
  /// capped by its cgroup limit). Accelerators with unified memory are not
  /// added on top of it: their memory is the host's RAM, already counted
  /// (they are when the registry has no CPU device).
  std::uint64_t total_memory_including_cpu() const noexcept;

  // --- what-if analysis ------------------------------------------------------
  // Each returns a new registry built from this one, for re-planning without
  // re-detecting: nothing is read from the machine. System info, warnings
  // and timings are those of the detection the registry came from; links,
  // interconnects and NIC affinity are kept consistent with the devices.

  /// Adds devices (an empty id becomes "<backend>:<next index>") and,
  /// optionally, links between them and existing devices. A duplicate id or a
  /// link naming an unknown device is an invalid_input error. Added devices
  /// are near no NIC: affinity needs the machine.
  [[nodiscard]] Result<AcceleratorRegistry> what_if_add(std::vector<DeviceProfile> devices, std::vector<DeviceLink> links = {}) const;
  /// Removes devices by id, with every link to them, their membership in
  /// interconnects (an interconnect left with fewer than two devices goes)
  /// and their place in NICs' near_devices. An unknown id is an
  /// invalid_input error. The CPU may be removed too; it is never re-detected.
  [[nodiscard]] Result<AcceleratorRegistry> what_if_remove(std::span<const std::string> ids) const;
  /// Removes the devices for which `remove` returns true (see what_if_remove).
  AcceleratorRegistry what_if_remove_if(const std::function<bool(const DeviceProfile&)>& remove) const;

  /// What happens to the replaced device's links and interconnects.
  enum class LinkPolicy : std::uint8_t {
    drop,  ///< the new device has no links yet (the default: a different device has different links)
    keep,  ///< same slot, same fabric: the new device inherits them
  };
  /// Puts `replacement` in the place of device `id` (same slot): it keeps the
  /// id when its backend is the same, else gets "<backend>:<next index>" and
  /// every reference is renamed; it inherits the old device's PCI address,
  /// NUMA node and CPU affinity when it has none; NIC affinity follows it.
  /// An unknown id is an invalid_input error.
  [[nodiscard]] Result<AcceleratorRegistry> what_if_replace(std::string_view id, DeviceProfile replacement,
                                              LinkPolicy links = LinkPolicy::drop) const;

  friend bool operator==(const AcceleratorRegistry&, const AcceleratorRegistry&) = default;

 private:
  friend Result<AcceleratorRegistry> registry_from_json(std::string_view json);
  Inventory inventory_;
  std::uint32_t schema_version_ = registry_schema_version;
};

/// Chooses what a detection runs: backends (all by default), host probes,
/// tool deadline. `detect()` reads this machine, `detect(system)` any System
/// (a fixture, a recording).
class DetectBuilder {
 public:
  /// Every backend, and the plugins of the system folder.
  DetectBuilder();
  /// A builder with no backend selected.
  static DetectBuilder none();

  DetectBuilder& with(Backend backend);
  DetectBuilder& without(Backend backend);
  DetectBuilder& only(std::bitset<backend_count> backends);
  /// Selects the backends of a comma list ("cuda,rocm"); see parse_backend_list.
  [[nodiscard]] Result<void> select(std::string_view list);
  DetectBuilder& system_probes(bool on);
  DetectBuilder& tool_timeout(std::chrono::milliseconds timeout);
  DetectBuilder& tool_output_cap(std::size_t bytes);
  /// Looks for every selected backend's tools, even those whose devices the
  /// kernel does not show (DetectOptions::all_tools).
  DetectBuilder& all_tools(bool on);
  /// Sends the detection's diagnostic events at `level` and above to `sink`
  /// (called from several threads; it must be thread-safe). An empty sink
  /// turns them off.
  DetectBuilder& diagnostics(DiagnosticSink sink, LogLevel level = LogLevel::info);

  /// Where plugins are found and how they run (default: the system folder
  /// only, in hwaccel-plugin-host); each detection looks for them afresh.
  DetectBuilder& plugins(PluginSettings settings);
  /// Runs no plugin.
  DetectBuilder& without_plugins();

  /// A warning added to every registry this builder detects (a bad
  /// $HWACCEL_BACKENDS that was ignored).
  DetectBuilder& warning(Warning warning);

  const DetectOptions& options() const noexcept { return options_; }

  AcceleratorRegistry detect() const;
  AcceleratorRegistry detect(const System& system) const;

 private:
  DetectOptions options_;
  std::vector<Warning> warnings_;
};

// --- detection settings by name ----------------------------------------------

/// The longest deadline a tool run may be given (ten minutes).
inline constexpr std::chrono::milliseconds max_tool_timeout{600'000};

/// What a detection is asked for by name: the CLI's --backends, --timeout-ms,
/// --no-system-probes and -v, the C API's detect options, Python's
/// detect() keywords (detect_setting_keys()).
struct DetectSettings {
  std::bitset<backend_count> backends = std::bitset<backend_count>{}.set();
  std::chrono::milliseconds tool_timeout = default_tool_timeout;
  bool system_probes = true;
  /// Look for every backend's tools, also where the kernel shows none of its
  /// devices (DetectOptions::all_tools).
  bool all_tools = false;
  /// The diagnostic events wanted, at this level and above; empty: none.
  /// (The front end chooses where they go: stderr, a callback, `logging`.)
  std::optional<LogLevel> log_level;
  /// Plugin folders and isolation (plugin-path, plugins-in-process, plugin-host).
  PluginSettings plugins;
  /// Environment values ignored as bad, each a warning of the detection.
  std::vector<Warning> warnings;

  /// A builder with these backends, probes and deadline, and the warnings;
  /// no diagnostic sink (diagnostics() adds one at log_level).
  DetectBuilder builder() const;
};

/// The keys of DetectSettings:
///   backends       text, default all, $HWACCEL_BACKENDS: a comma list (cpu,cuda; all; none)
///   timeout-ms     whole number 1..600000, default 5000: each tool run's deadline
///   system-probes  boolean, default true: also read environment, storage and network
///   all-tools      boolean, default false: look for tools without kernel evidence too
///   plugin-path    text, $HWACCEL_PLUGIN_PATH: plugin folders searched before the system folder
///   plugins-in-process  boolean, default false: load plugins without a host process
///   plugin-host    text, $HWACCEL_PLUGIN_HOST: the hwaccel-plugin-host program
///   log-level      choice warn|info|debug|trace, $HWACCEL_LOG: diagnostic events wanted
std::span<const SettingKey<DetectSettings>> detect_setting_keys() noexcept;

/// Reads detection settings (read_settings over detect_setting_keys()).
/// With BadEnvironment::ignore, a bad $HWACCEL_BACKENDS or $HWACCEL_LOG is a
/// warning of the detection (in `warnings`), as AcceleratorRegistry::detect()
/// and the C API treat it; the CLI refuses it (BadEnvironment::fail).
[[nodiscard]] Result<DetectSettings> read_detect_settings(std::span<const Setting> values,
                                                          const EnvironmentLookup& environment = process_environment(),
                                                          BadEnvironment bad = BadEnvironment::fail);

/// How the registry is written.
struct JsonOptions {
  bool pretty = false;
  /// Per-backend timings vary run to run: golden files leave them out.
  bool include_timings = true;
};

/// Canonical JSON: fixed field order, devices in registry order, optional
/// fields left out when unknown, no locale, always valid UTF-8.
std::string to_json(const AcceleratorRegistry& registry, const JsonOptions& options = {});
/// Writes the same document as a value into `out` (at its pretty setting), so
/// that documents holding registries (a fleet) nest them without reparsing.
void write_json(json::Writer& out, const AcceleratorRegistry& registry, bool include_timings = true);

/// Version of the summary document (docs/summary.schema.json).
inline constexpr std::uint32_t summary_schema_version = 1;

/// The compact view of a registry (`hwaccel detect --summary`): the library
/// version, the registry's schema version, device counts by family and by
/// backend, the best available device, total and accelerator memory
/// (total_memory_including_cpu, total_accelerator_memory) and warning counts
/// by kind. Canonical like to_json.
std::string summary_json(const AcceleratorRegistry& registry, bool pretty = false);

/// Reads what to_json wrote (any schema version up to ours; newer versions
/// are read as far as this version understands them, with a warning added).
/// Malformed input is a parse_error naming the offending field.
[[nodiscard]] Result<AcceleratorRegistry> registry_from_json(std::string_view json);

/// The devices pasted text describes: `hwaccel detect` JSON (read as
/// registry_from_json reads it), or tool output (capture_from_paste: a
/// transcript, or one tool's output recognised by its shape) detected by the
/// same detectors as a machine, through make_pasted_system. Texts over
/// max_paste_bytes are refused.
[[nodiscard]] Result<AcceleratorRegistry> registry_from_paste(std::string_view text);
inline constexpr std::size_t max_paste_bytes = std::size_t{16} << 20;

// --- model load time ---------------------------------------------------------

/// How long reading a model's files from storage takes, and on what it rests.
struct LoadTimeEstimate {
  double seconds = 0;
  double read_bandwidth_gbps = 0;  ///< GB/s (10^9 bytes per second)
  std::string storage;             ///< name of the storage device assumed
  std::string bandwidth_source;    ///< "pcie_link" or "table" (see StorageDevice)
  std::string assumption;          ///< one sentence: what the figure assumes

  friend bool operator==(const LoadTimeEstimate&, const LoadTimeEstimate&) = default;
};

/// Time to read `model_bytes` sequentially from `device` at its read
/// bandwidth, cold (nothing in the page cache). Errors: invalid_input for 0
/// bytes; unsupported when the device's bandwidth is unknown (network
/// filesystems, cloud volumes: it depends on what is behind them).
[[nodiscard]] Result<LoadTimeEstimate> estimate_load_time(const StorageDevice& device, std::uint64_t model_bytes);

/// The same on the registry's storage. With `model_path`, the device is the
/// one holding the mount the path is under (the longest matching mount
/// point; on a volume over several disks, the slowest of them, since
/// striping is not modelled); without it, the fastest local device, which
/// is an optimistic assumption the result says. Errors: invalid_input for 0
/// bytes or a relative path; not_found when no storage is known or no mount
/// holds the path; unsupported when that storage's bandwidth is unknown.
[[nodiscard]] Result<LoadTimeEstimate> estimate_load_time(const AcceleratorRegistry& registry, std::uint64_t model_bytes,
                                            std::string_view model_path = {});

// --- what changed ------------------------------------------------------------

/// A device's identity across detections: its PCI address, else its UUID,
/// else its registry id. List positions change when a GPU falls off the bus;
/// these do not.
std::string device_identity(const DeviceProfile& device);

struct FieldChange {
  std::string field;  ///< "memory_bytes", "driver_version", "partitions", "visible", "pcie_current_width", ...
  std::string before;  ///< "" when unknown
  std::string after;
  friend bool operator==(const FieldChange&, const FieldChange&) = default;
};

/// "driver_version 550.54.14 -> 550.127.05", "(unknown)" standing for an empty side.
std::string to_text(const FieldChange& change);
/// Writes `changes` as the array fleet diffs and watch events share:
/// [{"field": ..., "before": ..., "after": ...}].
void write_field_changes(json::Writer& out, std::span<const FieldChange> changes);

enum class ChangeKind : std::uint8_t { added, removed, changed };
std::string_view to_string(ChangeKind kind) noexcept;

/// A device's partition layout as one text: the AMD compute partition mode,
/// then the partitions' profiles ("CPX:", "3g.20gb,3g.20gb"); "" for none.
std::string partition_layout(const DeviceProfile& device);

/// One device that differs between two registries of the same machine.
struct DeviceDifference {
  ChangeKind kind = ChangeKind::changed;
  std::string identity;  ///< device_identity()
  std::string id;        ///< the registry id, in the registry it is seen in (the later one unless removed)
  std::string name;
  Backend backend = Backend::cpu;
  std::vector<FieldChange> fields;  ///< for `changed`, in a fixed order
  friend bool operator==(const DeviceDifference&, const DeviceDifference&) = default;
};

/// The devices added, removed or changed from `before` to `after`, matched by
/// device_identity and sorted by it. A change is in what a device is and how
/// it can be used: name, memory size, driver and firmware versions, spec,
/// compute capability, availability, visibility, partition layout (MIG, AMD
/// compute partitions), NUMA node and PCIe link width (the current one: a
/// link that trained down is a fault). Live values (free memory, power,
/// temperature, utilization, PCIe link speed, which idles down) are not.
std::vector<DeviceDifference> compare_registries(const AcceleratorRegistry& before, const AcceleratorRegistry& after);

/// `previous` with the devices of `backends` detected again through `system`
/// and everything else kept: what a hot-plug event needs, without re-running
/// every other vendor's tools. The selection widens where backends see the
/// same devices (Vulkan and the native GPU backends merge, so they run
/// together), is bounded by options.backends, and the result is finalized as
/// one detection would be. Host probes are not run again. With every
/// selected backend in `backends`, it is a plain detection.
AcceleratorRegistry redetect_backends(const AcceleratorRegistry& previous, const System& system,
                                      const DetectOptions& options, std::bitset<backend_count> backends);

// --- caching -----------------------------------------------------------------

/// Produces a fresh registry. Called from whichever thread needs one.
using DetectFunction = std::function<AcceleratorRegistry()>;
using SteadyClock = std::function<std::chrono::steady_clock::time_point()>;
using WallClock = std::function<std::chrono::system_clock::time_point()>;

/// The cache folder: $XDG_CACHE_HOME/hwaccel, else $HOME/.cache/hwaccel, read
/// through `system`'s environment. Relative values are ignored (the XDG spec
/// says so), and there is deliberately no fallback to a shared temporary
/// folder, where another user could plant a file: nullopt instead.
std::optional<std::string> default_cache_directory(const System& system);

/// Where and how registries are cached on disk between processes.
struct DiskCacheOptions {
  /// Folder of the cache files; default_cache_directory() when empty.
  std::string directory;
  /// The options the cached detection runs with. The file name is keyed by
  /// them, the library version and the schema version, so a different
  /// selection or another version never reads this file.
  DetectOptions options;
  /// Time source for the recorded write time and the age check;
  /// std::chrono::system_clock::now when empty.
  WallClock clock;
};

/// A registry cached in a file. Writes are atomic (a unique temporary file
/// in the same folder, then rename), so readers see an old file or a new one,
/// never half of one. Reads check the format, library version, options,
/// ownership and permissions before trusting the content.
class DiskCache {
 public:
  /// Resolves the folder (through `system` when options.directory is empty);
  /// unsupported when there is no usable cache folder.
  [[nodiscard]] static Result<DiskCache> open(DiskCacheOptions options, const System& system);

  /// The cache file.
  const std::string& path() const noexcept { return path_; }

  struct Entry {
    AcceleratorRegistry registry;
    std::chrono::system_clock::time_point written_at;  ///< as recorded in the file
  };
  /// The cached registry, or nullopt when there is no file. A file that is
  /// corrupt (parse_error) or not ours (unsupported: another format,
  /// version or option set, another owner, writable by others) is an error.
  [[nodiscard]] Result<std::optional<Entry>> load() const;
  /// Writes the registry with the current time; the folder is created
  /// (mode 0700) when missing.
  [[nodiscard]] Result<void> store(const AcceleratorRegistry& registry) const;
  /// Deletes the file; no error when it is already gone.
  [[nodiscard]] Result<void> remove() const;
  std::chrono::system_clock::time_point now() const;

 private:
  DiskCache(DiskCacheOptions options, std::string directory, std::string path);
  DiskCacheOptions options_;
  std::string directory_;
  std::string path_;
};

/// How a CachedRegistry refreshes.
struct CacheOptions {
  std::chrono::milliseconds ttl = std::chrono::minutes(5);
  /// How to detect; empty: DetectBuilder{}.detect() (this machine, every backend).
  DetectFunction detect;
  /// Time source for the TTL; std::chrono::steady_clock::now when empty.
  SteadyClock clock;
  /// Also keep the registry on disk for other processes. Its `options` must
  /// describe what `detect` runs. A registry read from disk is as old as the
  /// time recorded in the file, not as its file modification time.
  std::optional<DiskCacheOptions> disk;
};

/// A registry detected at most once per TTL, shared by every thread.
///
/// Refreshes are single-flight: when the cached registry has expired, the
/// first caller detects (without holding the lock) and every caller that
/// arrives meanwhile blocks on a condition variable until that one detection
/// is done, then gets its result. get() never throws: an exception from the
/// detect function becomes a warning in the registry it returns, which is
/// not cached (the next call detects again). Disk problems (a corrupt or
/// foreign file, a failed write) are warnings of the backend "cache" in the
/// registry, which is then detected afresh.
class CachedRegistry {
 public:
  explicit CachedRegistry(CacheOptions options = {});
  ~CachedRegistry();
  CachedRegistry(const CachedRegistry&) = delete;
  CachedRegistry& operator=(const CachedRegistry&) = delete;

  /// The cached registry, detecting (or reading the disk cache) when it has expired.
  std::shared_ptr<const AcceleratorRegistry> get();
  /// Forgets the cached registry (and deletes the disk file): the next get()
  /// detects. A detection already running is still returned to its waiters
  /// but not kept.
  void invalidate();
  std::chrono::milliseconds ttl() const noexcept;
  /// How many times the detect function has run.
  std::uint64_t detections() const noexcept;

  struct State;

 private:
  std::unique_ptr<State> state_;
};

// --- lazy detection ----------------------------------------------------------

/// Detection of one family at a time, on demand: by_family(Family::tpu) runs
/// only the TPU backend, once; a later call for the same family reuses the
/// result. Thread-safe; two threads asking for the same family share one
/// run. Host probes (storage, network...) run only for registry().
class LazyRegistry {
 public:
  /// Detects this machine with `options` (its backend set bounds what runs).
  explicit LazyRegistry(DetectOptions options = {});
  /// Detects through `system`, which must outlive this object.
  explicit LazyRegistry(const System& system, DetectOptions options = {});
  ~LazyRegistry();
  LazyRegistry(const LazyRegistry&) = delete;
  LazyRegistry& operator=(const LazyRegistry&) = delete;

  /// The devices of a family, running that family's backends if not yet run.
  std::vector<DeviceProfile> by_family(Family family);
  /// Backends that have run so far.
  std::bitset<backend_count> probed() const;
  /// Runs every backend not yet run and the host probes, and joins all the
  /// parts into one registry with the warnings, timings and system info of
  /// each part, finalized as one detection would be.
  AcceleratorRegistry registry();
  AcceleratorRegistry into_registry() && { return registry(); }

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace hwaccel

// Module-internal helpers of the registry's implementation units.
namespace hwaccel {

// std::stable_sort warns (get_temporary_buffer is deprecated in this
// libstdc++ under C++20 modules); sorting (key, position) pairs is stable too.
template <class T, class KeyOf>
void stable_sort_by(std::vector<T>& items, KeyOf key_of) {
  std::vector<std::pair<decltype(key_of(items.front())), std::size_t>> order;
  order.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) order.emplace_back(key_of(items[i]), i);
  std::sort(order.begin(), order.end());
  std::vector<T> sorted;
  sorted.reserve(items.size());
  for (const auto& entry : order) sorted.push_back(std::move(items[entry.second]));
  items = std::move(sorted);
}

}  // namespace hwaccel
