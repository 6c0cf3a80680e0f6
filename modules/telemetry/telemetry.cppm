// hwaccel.telemetry: what the devices are doing now (utilization, memory in
// use, temperatures, power, clocks, error counters), read fresh through the
// System seam, apart from the static inventory; and its Prometheus form
// (docs/metrics.md).
module;
#include <chrono>
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
