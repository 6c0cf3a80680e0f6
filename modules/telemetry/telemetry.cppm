// hwaccel.telemetry: what the devices are doing now (utilization, memory in
// use, temperatures, power, clocks, error counters), read fresh through the
// System seam, apart from the static inventory; and its Prometheus form
// (docs/metrics.md).
module;
#include <chrono>
#include <compare>
#include <condition_variable>
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
export module hwaccel.telemetry;
export import hwaccel.hardware;
export import hwaccel.detect;
export import hwaccel.registry;

export namespace hwaccel {

/// A temperature sensor's reading.
struct TemperatureReading {
  std::string sensor;  ///< "gpu", "memory", "edge", "junction", "mem" (the driver's label)
  double celsius = 0;
  /// Where the driver slows the clocks for this sensor (nvidia-smi's slowdown
  /// temperature, hwmon `temp*_crit`), and where it shuts the device down
  /// (nvidia-smi's shutdown temperature, hwmon `temp*_emergency`).
  std::optional<double> slowdown_celsius;
  std::optional<double> shutdown_celsius;
  friend bool operator==(const TemperatureReading&, const TemperatureReading&) = default;
};

/// One device's telemetry. Every value is optional: what the driver did not
/// report stays absent, nothing is estimated.
struct DeviceTelemetry {
  std::string device_id;  ///< the registry's id ("cuda:0")
  std::string source;     ///< where the values came from ("nvidia-smi --query-gpu", "amdgpu sysfs")

  std::optional<double> utilization;  ///< 0..1, the main engine (GPU busy)
  /// Other engines where the driver splits them: "memory" (memory controller
  /// busy), "encoder", "decoder"; 0..1.
  std::map<std::string, double> engine_utilization;

  std::optional<std::uint64_t> memory_total_bytes;
  std::optional<std::uint64_t> memory_used_bytes;
  std::optional<std::uint64_t> memory_free_bytes;

  std::vector<TemperatureReading> temperatures;
  std::optional<double> power_watts;        ///< current draw (averaged where the driver averages)
  std::optional<double> power_limit_watts;  ///< the enforced cap
  /// Draw as a share (0..1) of the device's maximum power, where the driver
  /// reports only that (the Neuron driver's per-minute average).
  std::optional<double> power_utilization;
  std::optional<double> energy_joules;      ///< consumed since the driver loaded (a counter)

  std::map<std::string, double> clocks_mhz;  ///< "graphics", "sm", "memory", "video", "fabric", "soc"
  std::optional<double> fan_speed_ratio;     ///< 0..1 of the fan's maximum

  std::optional<std::uint32_t> pcie_generation;  ///< current link generation
  std::optional<std::uint32_t> pcie_width;       ///< current link width

  /// ECC error counts by (type, scope): type "corrected"/"uncorrected",
  /// scope "volatile" (since the driver loaded) or "aggregate" (lifetime),
  /// or by RAS block for AMD ("umc", "gfx", ...; scope "volatile").
  struct EccCount {
    std::string type;
    std::string scope;
    std::string block;  ///< "total" or the RAS block
    std::uint64_t count = 0;
    friend bool operator==(const EccCount&, const EccCount&) = default;
  };
  std::vector<EccCount> ecc_errors;
  std::optional<std::uint64_t> retired_pages_single_bit;
  std::optional<std::uint64_t> retired_pages_double_bit;
  std::optional<std::uint64_t> remapped_rows_correctable;
  std::optional<std::uint64_t> remapped_rows_uncorrectable;
  std::optional<bool> remapped_rows_pending;
  std::optional<bool> remapped_rows_failure;

  /// Error counters of the device's NVLink links, by link number and type
  /// ("replay", "recovery", "crc", and where a driver splits CRC errors,
  /// "crc_flit", "crc_data"), counted since the driver loaded.
  struct LinkErrorCount {
    std::uint32_t link = 0;
    std::string type;
    std::uint64_t count = 0;
    friend bool operator==(const LinkErrorCount&, const LinkErrorCount&) = default;
  };
  std::vector<LinkErrorCount> link_errors;

  /// The device's partitions (MIG instances) where the driver reports values
  /// of their own; by the registry's partition id.
  struct PartitionTelemetry {
    std::string partition_id;  ///< "cuda:0/mig:1"
    std::optional<std::uint64_t> memory_total_bytes;
    std::optional<std::uint64_t> memory_used_bytes;
    std::optional<std::uint64_t> memory_free_bytes;
    friend bool operator==(const PartitionTelemetry&, const PartitionTelemetry&) = default;
  };
  std::vector<PartitionTelemetry> partitions;

  /// Active clock-event (throttle) reasons by name: "sw_power_cap",
  /// "hw_slowdown", "hw_thermal_slowdown", "sw_thermal_slowdown",
  /// "hw_power_brake_slowdown", "gpu_idle", "applications_clocks_setting",
  /// "sync_boost", "display_clock_setting"; every supported reason is
  /// listed, true when active.
  std::map<std::string, bool> clock_event_reasons;

  friend bool operator==(const DeviceTelemetry&, const DeviceTelemetry&) = default;
};

/// An engine's busy counter of one DRM client, cumulative since it opened the
/// device (`drm-engine-<name>` in nanoseconds, or `drm-cycles-<name>` with
/// `drm-total-cycles-<name>` where the driver counts GPU cycles, as xe does).
/// Use over an interval is the difference of two samples: engine_use().
struct EngineCounter {
  std::uint64_t busy = 0;                ///< busy nanoseconds, or busy cycles
  std::optional<std::uint64_t> total;    ///< total cycles in the same time (cycle counters only)
  std::uint32_t capacity = 1;            ///< engines of the class (`drm-engine-capacity-<name>`)
  friend bool operator==(const EngineCounter&, const EngineCounter&) = default;
};

/// A process using a device, from the driver's list (nvidia-smi) or the
/// process's own DRM file descriptors (amdgpu, xe, i915), with who runs it
/// from /proc. PIDs are in hwaccel's PID namespace where they could be
/// translated; nvidia-smi reports the host's, which a process inside a
/// container cannot see (`pid` is then absent and a warning says so).
struct DeviceProcess {
  std::string device_id;     ///< the registry's device ("cuda:0")
  std::string partition_id;  ///< its MIG instance where the driver says so ("cuda:0/mig:1"), else empty
  std::optional<std::uint32_t> pid;            ///< in hwaccel's PID namespace: what kill(2) takes here
  std::optional<std::uint32_t> driver_pid;     ///< as the tool reported it (nvidia-smi: the host's)
  std::optional<std::uint32_t> container_pid;  ///< in the process's own PID namespace, when nested below ours (NSpid)
  std::optional<std::uint64_t> pid_namespace;  ///< inode of its PID namespace, where /proc lets us read it
  std::optional<std::uint32_t> uid;            ///< real user id
  std::string user;                            ///< its name from /etc/passwd, else the number
  std::string command;                         ///< the command line (NULs as spaces), else the tool's name for it
  /// "compute", "graphics", "compute+graphics", "mps" (nvidia-smi's type),
  /// or "drm" (a DRM client, which may do either).
  std::string kind;
  std::optional<std::uint64_t> memory_bytes;     ///< device memory it holds
  std::map<std::string, EngineCounter> engines;  ///< DRM clients' engine counters by engine ("gfx", "compute", "rcs")
  std::string source;                            ///< "nvidia-smi --query-compute-apps", "nvidia-smi -q -x", "DRM fdinfo"
  friend bool operator==(const DeviceProcess&, const DeviceProcess&) = default;
};

/// Each engine's use (0..1 of its capacity) between two samples of the same
/// process, `elapsed` apart; engines missing from either, counters that went
/// backwards (a reopened device) and a zero interval give no value.
std::map<std::string, double> engine_use(const DeviceProcess& before, const DeviceProcess& after,
                                         std::chrono::nanoseconds elapsed);

/// The host's load and memory.
struct HostTelemetry {
  std::optional<double> load1, load5, load15;
  std::optional<std::uint64_t> memory_total_bytes;
  std::optional<std::uint64_t> memory_available_bytes;
  friend bool operator==(const HostTelemetry&, const HostTelemetry&) = default;
};

/// A telemetry sample of a registry's devices.
struct TelemetrySample {
  std::vector<DeviceTelemetry> devices;  ///< in registry order; devices with no reader are left out
  HostTelemetry host;
  /// What could not be read (a tool that hung, garbage in sysfs), per backend.
  std::vector<Warning> warnings;
  /// Backends whose source failed outright in this sample (a scrape error each).
  std::vector<std::string> failed_sources;
  /// The devices' processes (TelemetryOptions::processes), by device in
  /// registry order, then by memory held, most first.
  std::vector<DeviceProcess> processes;
  std::chrono::system_clock::time_point taken_at{};
  std::chrono::microseconds elapsed{0};
  friend bool operator==(const TelemetrySample&, const TelemetrySample&) = default;
};

/// Keeps what slow tools printed across samples, so that a scrape does not
/// run them every time: tpu-info connects to the TPU runtime and takes a
/// second or more. A kept result (failures included) is reused until it is
/// max_age old. Thread-safe.
class SlowToolCache {
 public:
  explicit SlowToolCache(std::chrono::milliseconds max_age = std::chrono::seconds(30)) : max_age_(max_age) {}
  /// The kept result of this command line when it is young enough, else
  /// runs it through `system` and keeps what it gave.
  [[nodiscard]] Result<ToolResult> run(const System& system, const ToolRequest& request);
  std::chrono::milliseconds max_age() const noexcept { return max_age_; }

 private:
  struct Kept {
    std::chrono::steady_clock::time_point at;
    Result<ToolResult> result;
  };
  std::chrono::milliseconds max_age_;
  std::mutex mutex_;
  std::map<std::vector<std::string>, Kept> kept_;
};

struct TelemetryOptions {
  /// The deadline of each tool run (nvidia-smi, hl-smi, tpu-info; rocm-smi
  /// where amdgpu's sysfs has no values). Backends are read one after
  /// another, so a sample takes at most about this long per backend that
  /// runs a tool.
  std::chrono::milliseconds tool_timeout{2000};
  /// The deadline of slow tools (tpu-info, rocm-smi -a) when longer than
  /// tool_timeout: tpu-info needs two seconds or more to reach the runtime.
  /// With slow_tools set they run at most once per its max_age.
  std::chrono::milliseconds slow_tool_timeout{5000};
  /// The clock the sample's time comes from (system_clock::now when empty).
  std::function<std::chrono::system_clock::time_point()> clock;
  /// Where slow tools' output is kept between samples (the collector keeps
  /// one); without it they run on every sample.
  std::shared_ptr<SlowToolCache> slow_tools;
  /// Also list the processes on each device (nvidia-smi's compute apps, DRM
  /// fdinfo under /proc), with their users and command lines. Off by
  /// default: walking /proc costs more than the rest of a sample on a busy host.
  bool processes = false;
};

/// Degrees left before the device slows its clocks for heat: the least, over
/// its sensors with a slowdown threshold, of threshold less reading; empty
/// when no sensor has one.
std::optional<double> thermal_headroom_celsius(const DeviceTelemetry& t) noexcept;

/// A device warming towards its slowdown temperature, as ThermalTrend sees it.
struct ThermalWarning {
  std::string device_id;
  std::string sensor;              ///< the reading with the least headroom
  double celsius = 0;              ///< its latest value
  double slowdown_celsius = 0;
  double degrees_per_minute = 0;   ///< the trend over the window
  std::chrono::seconds eta{0};     ///< predicted time until the threshold (0: reached)
  friend bool operator==(const ThermalWarning&, const ThermalWarning&) = default;
};

/// Follows each device's thermal headroom over recent samples and warns when
/// its trend (a least-squares line over the window) reaches the slowdown
/// threshold within the horizon, before the driver throttles. A device warns
/// once per approach: again only after its prediction has left the horizon.
class ThermalTrend {
 public:
  explicit ThermalTrend(std::chrono::seconds horizon = std::chrono::minutes(5),
                        std::chrono::seconds window = std::chrono::minutes(2))
      : horizon_(horizon), window_(window) {}
  /// Adds a sample (its taken_at orders them; an older one than the last is
  /// ignored) and returns the devices that now warn.
  std::vector<ThermalWarning> add(const TelemetrySample& sample);
  /// Every device whose latest prediction is within the horizon, warned or
  /// not, by device id.
  std::vector<ThermalWarning> approaching() const;

 private:
  struct Point {
    std::chrono::system_clock::time_point at;
    double headroom = 0;
  };
  struct Track {
    std::vector<Point> points;
    std::optional<ThermalWarning> latest;  ///< the prediction, while within the horizon
  };
  std::chrono::seconds horizon_;
  std::chrono::seconds window_;
  std::map<std::string, Track> tracks_;
};

/// The backends whose devices have telemetry, in the order it is read: those
/// whose detector rows name a source (BackendFacts::telemetry).
std::span<const Backend> telemetry_backends() noexcept;

/// Reads the telemetry of the registry's devices through `system` (the
/// machine the registry was detected on, or a fixture). Never throws and
/// never fails as a whole: what cannot be read is a warning and, for a
/// source that failed, an entry of failed_sources.
TelemetrySample sample_telemetry(const AcceleratorRegistry& registry, const System& system,
                                 const TelemetryOptions& options = {});

/// The sample as JSON (`hwaccel metrics --json`, hwaccel.telemetry() in
/// Python; docs/metrics.md): taken_at (Unix seconds), elapsed_us, devices
/// with the fields of DeviceTelemetry (absent values left out), host,
/// warnings and failed_sources.
std::string to_json(const TelemetrySample& sample, bool pretty = false);

/// Reads a sample back from to_json's JSON (another node's `hwaccel serve`
/// at /telemetry). Keys it does not know are passed over; a value of the
/// wrong type or out of range is left out with a warning (kind
/// invalid_value, backend "telemetry") among the sample's warnings.
/// parse_error when the text is not JSON or not a sample (no "devices").
[[nodiscard]] Result<TelemetrySample> telemetry_from_json(std::string_view json);

/// The nvidia-smi command a sample runs (one call for every GPU).
std::vector<std::string> nvidia_telemetry_argv();

/// Reads `nvidia-smi --query-gpu=<telemetry fields> --format=csv,nounits`
/// output; rows are matched to the registry's devices by PCI bus id, then
/// UUID. Exposed for tests and fuzzing.
struct NvidiaTelemetryRow {
  std::string pci_bus_id;  ///< canonical form
  std::string uuid;
  DeviceTelemetry telemetry;
};
[[nodiscard]] Result<std::vector<NvidiaTelemetryRow>> parse_nvidia_telemetry(std::string_view csv,
                                                               std::vector<std::string>* problems = nullptr);

/// The nvidia-smi command that lists the processes on every GPU.
std::vector<std::string> nvidia_compute_apps_argv();

/// A row of `nvidia-smi --query-compute-apps=gpu_bus_id,gpu_uuid,pid,process_name,used_gpu_memory
/// --format=csv,nounits` (columns found by name; units in the header or the cells).
struct NvidiaComputeApp {
  std::string pci_bus_id;  ///< canonical form, empty when not given
  std::string uuid;
  std::uint32_t pid = 0;
  std::string name;
  std::optional<std::uint64_t> memory_used_bytes;
  friend bool operator==(const NvidiaComputeApp&, const NvidiaComputeApp&) = default;
};
/// Reads the compute-apps CSV. A header without rows (no process) is an empty
/// list; rows without a valid PID are problems. parse_error when there is no
/// header naming a pid column.
[[nodiscard]] Result<std::vector<NvidiaComputeApp>> parse_nvidia_compute_apps(std::string_view csv,
                                                                              std::vector<std::string>* problems = nullptr);

/// What one DRM file descriptor's /proc/PID/fdinfo/FD says about its client
/// (the kernel's drm-usage-stats keys).
struct DrmClient {
  std::string driver;                       ///< drm-driver: "amdgpu", "xe", "i915"
  std::string pdev;                         ///< drm-pdev: the PCI address, canonical form; empty when not given
  std::optional<std::uint64_t> client_id;   ///< drm-client-id: fds of one client share it
  /// Memory by region ("vram", "gtt", "vram0", "local0", "system0"): resident
  /// bytes (drm-resident-*, or the older drm-memory-*), else drm-total-*.
  std::map<std::string, std::uint64_t> memory_bytes;
  std::map<std::string, EngineCounter> engines;
  friend bool operator==(const DrmClient&, const DrmClient&) = default;
};
/// Reads an fdinfo file. parse_error when it has no drm-driver line (not a
/// DRM file descriptor); values that are not numbers are problems.
[[nodiscard]] Result<DrmClient> parse_drm_fdinfo(std::string_view text, std::vector<std::string>* problems = nullptr);

/// The device memory a DRM client holds: its "vram*" and "local*" regions
/// (system memory and GTT are host memory); nullopt when it names neither.
std::optional<std::uint64_t> device_memory_of(const DrmClient& client) noexcept;

/// What /proc/PID/status says about a process that its users need.
struct ProcessStatus {
  std::string name;                       ///< Name: (the kernel's comm, at most 15 bytes)
  std::optional<std::uint32_t> uid;       ///< Uid: the real user id
  std::vector<std::uint32_t> namespace_pids;  ///< NSpid: from the reader's PID namespace inwards
};
/// Reads /proc/PID/status. parse_error when it names no Pid or NSpid.
[[nodiscard]] Result<ProcessStatus> parse_proc_status(std::string_view text);

/// One GPU's block of `nvidia-smi nvlink -e`: "GPU 0: NAME (UUID: GPU-...)"
/// then "Link N: Replay Errors: 0" lines.
struct NvlinkErrorBlock {
  std::uint32_t gpu_index = 0;  ///< nvidia-smi's index
  std::string uuid;             ///< empty where the header names none
  std::vector<DeviceTelemetry::LinkErrorCount> counts;
};
/// Reads `nvidia-smi nvlink -e`. Lines that are not a GPU header or a
/// counter are problems (at most 8 kept), not guesses; no GPU header at all
/// is a parse_error (an empty output, for GPUs without NVLink, is none).
[[nodiscard]] Result<std::vector<NvlinkErrorBlock>> parse_nvlink_errors(std::string_view text,
                                                          std::vector<std::string>* problems = nullptr);

// --- Prometheus ----------------------------------------------------------------

enum class MetricsFormat : std::uint8_t {
  prometheus_text,  ///< text/plain; version=0.0.4
  openmetrics,      ///< application/openmetrics-text; version=1.0.0 (ends with "# EOF")
};

/// The Content-Type header of a format.
std::string_view content_type(MetricsFormat format) noexcept;

/// Counters the exporter keeps across scrapes.
struct ExporterCounters {
  std::uint64_t scrapes = 0;
  std::map<std::string, std::uint64_t> scrape_errors;  ///< by source backend
  /// Devices warming towards their slowdown temperature (ThermalTrend over
  /// the collector's samples), and how many warnings were raised in all.
  std::vector<ThermalWarning> thermal_approaching;
  std::uint64_t thermal_warnings = 0;
  /// The accelerators a baseline says the node has (`serve --baseline`, the
  /// files `fleet check` takes); empty: no baseline.
  std::optional<std::uint32_t> baseline_accelerators;
  /// Health reports the exporter's watcher saw, by device and kind.
  struct HealthKey {
    std::string device;    ///< registry id ("cuda:7"), or the PCI address of a device it does not know
    std::string source;    ///< "nvidia_xid", "amdgpu_ras", "thermal_trend"
    std::string code;      ///< the Xid number, else empty
    std::string severity;  ///< "info", "warning", "critical"
    auto operator<=>(const HealthKey&) const = default;
  };
  std::map<HealthKey, std::uint64_t> health_events;
};

/// The registry's static facts (hwaccel_device_info, memory size, spec) and
/// the sample's values as metrics (docs/metrics.md lists them), with labels
/// device, backend, model, pci_bus_id, uuid, spec_id. Label values are
/// escaped; metric names follow the Prometheus conventions.
std::string metrics_text(const AcceleratorRegistry& registry, const TelemetrySample& sample,
                         const ExporterCounters& counters, MetricsFormat format = MetricsFormat::prometheus_text);

// --- a collector for long-running exporters -----------------------------------

struct CollectorOptions {
  /// How often the inventory is re-detected (the registry is cached between).
  std::chrono::milliseconds inventory_ttl = std::chrono::seconds(60);
  /// Samples younger than this are shared by concurrent scrapes.
  std::chrono::milliseconds sample_max_age = std::chrono::milliseconds(500);
  DetectOptions detect;
  TelemetryOptions telemetry;
  /// ThermalTrend's horizon over the collector's samples; zero: no trend.
  std::chrono::seconds thermal_horizon = std::chrono::minutes(5);
  /// Called (on the sampling thread, outside the collector's lock) for each
  /// new thermal warning: a long-running exporter logs it.
  std::function<void(const ThermalWarning&)> on_thermal_warning;
  /// ExporterCounters::baseline_accelerators.
  std::optional<std::uint32_t> baseline_accelerators;
};

/// Keeps the inventory cached and coalesces concurrent samples: callers
/// arriving while a sample is taken wait for it and share it (single flight).
/// Thread-safe. Reads the machine through `system`, which must outlive it.
class TelemetryCollector {
 public:
  TelemetryCollector(const System& system, CollectorOptions options = {});
  ~TelemetryCollector();
  TelemetryCollector(const TelemetryCollector&) = delete;
  TelemetryCollector& operator=(const TelemetryCollector&) = delete;

  struct Snapshot {
    std::shared_ptr<const AcceleratorRegistry> registry;
    std::shared_ptr<const TelemetrySample> sample;
  };
  /// The inventory and a sample at most sample_max_age old.
  Snapshot collect();
  /// collect() as metrics; counts the scrape and its source errors.
  std::string scrape(MetricsFormat format);
  /// Counts a health report for hwaccel_health_events_total.
  void count_health_event(ExporterCounters::HealthKey key);
  /// The cached inventory (detected on first use).
  std::shared_ptr<const AcceleratorRegistry> registry();
  /// The cache behind registry(): a Watcher attached to it makes the next
  /// scrape see a hot-plug at once instead of after inventory_ttl.
  CachedRegistry& inventory_cache() noexcept;
  ExporterCounters counters() const;

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace hwaccel
