// What the telemetry module's implementation units share: the readers of each
// source, behind collect_telemetry(). Module-internal (not exported).
module;
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.telemetry:internals;
import hwaccel.telemetry;
import hwaccel.detectors;

namespace hwaccel::telemetry_detail {

struct NvidiaRun {
  std::vector<NvidiaTelemetryRow> rows;
  std::vector<std::string> problems;
  std::optional<Error> failure;
};
/// The telemetry query, retried without the fields an older driver rejects.
NvidiaRun run_nvidia_query(const System& system, std::chrono::milliseconds timeout);

/// `nvidia-smi -q` (what the detector runs; slow, so through
/// options.slow_tools when set): the GPUs with their MIG devices' memory.
[[nodiscard]] Result<parsers::NvidiaGpuTable> run_mig_query(const System& system, const TelemetryOptions& options);

/// A report of every GPU, read when the telemetry query fails: `nvidia-smi
/// -q -x` (what monitoring agents record), else `-q`, each within the slow
/// tools' timeout but never from their cache (the values are the sample's),
/// parsed by the detector's readers; a timeout ends the walk. The error is
/// not_captured when no view was recorded, timeout after a hang, else tool_failed.
struct NvidiaReport {
  std::string view;  ///< the command that answered ("nvidia-smi -q -x")
  parsers::NvidiaGpuTable table;
};
[[nodiscard]] Result<NvidiaReport> run_nvidia_report(const System& system, const TelemetryOptions& options);

/// The telemetry a report's GPUs carry (utilization, memory, GPU temperature,
/// power and its limit, the current PCIe link), by bus id and UUID, with
/// `source` the report's command. A value the report lacks stays absent.
std::vector<NvidiaTelemetryRow> telemetry_rows(const parsers::NvidiaGpuTable& table, std::string_view source);

/// `nvidia-smi nvlink -e`; not_captured (a fixture without it) is no data, not an error.
[[nodiscard]] Result<std::vector<NvlinkErrorBlock>> run_nvlink_errors(const System& system, std::chrono::milliseconds timeout,
                                                        std::vector<std::string>& problems);

/// amdgpu's sysfs and hwmon files of one device (by its PCI address).
DeviceTelemetry read_amd(const DeviceProfile& device, const System& system, std::vector<std::string>& problems);

/// xe/i915 hwmon and GT frequency of one device (by its PCI address).
DeviceTelemetry read_intel(const DeviceProfile& device, const System& system, std::vector<std::string>& problems);

/// The Neuron driver's sysfs counters of one device (by its index).
DeviceTelemetry read_neuron(const DeviceProfile& device, const System& system, std::vector<std::string>& problems);

/// One tool-backed source's result: telemetry by registry position, what
/// could not be read, and whether the source failed outright.
struct ToolSourceRun {
  std::vector<std::pair<std::size_t, DeviceTelemetry>> found;
  std::vector<std::string> problems;
  std::vector<Warning> warnings;
  bool failed = false;
};

/// hl-smi's CSV query (with ECC counters), else the detector's query, else
/// the default table, for the registry's Gaudi devices at `positions`.
ToolSourceRun read_gaudi(const AcceleratorRegistry& registry, const std::vector<std::size_t>& positions,
                         const System& system, const TelemetryOptions& options);

/// tpu-info's usage table (through options.slow_tools when set).
ToolSourceRun read_tpu(const AcceleratorRegistry& registry, const std::vector<std::size_t>& positions,
                       const System& system, const TelemetryOptions& options);

/// The bare `xpu-smi` table for Intel GPUs: busy ratio, memory in use,
/// temperature, power draw and cap, which the xe/i915 hwmon lacks in part.
ToolSourceRun read_xpu_smi(const AcceleratorRegistry& registry, const std::vector<std::size_t>& positions,
                           const System& system, const TelemetryOptions& options);

/// `rocm-smi -a --json` for AMD GPUs whose sysfs gave no value at all.
ToolSourceRun read_rocm_smi(const AcceleratorRegistry& registry, const std::vector<std::size_t>& positions,
                            const System& system, const TelemetryOptions& options);

/// The processes of a report's GPUs (`-q`, `-q -x`), attributed to MIG
/// instances by their instance ids; `view` names the report.
std::vector<DeviceProcess> nvidia_processes(const AcceleratorRegistry& registry, const parsers::NvidiaGpuTable& report,
                                            std::string_view view);

/// `nvidia-smi --query-compute-apps` for every GPU (no MIG attribution: the
/// query names only the GPU). Rows it could not read go to `problems`.
[[nodiscard]] Result<std::vector<DeviceProcess>> run_nvidia_compute_apps(const AcceleratorRegistry& registry, const System& system,
                                                           std::chrono::milliseconds timeout, std::vector<std::string>& problems);

/// The DRM clients of the registry's non-NVIDIA PCI devices, from every
/// readable /proc/PID/fd that links to /dev/dri or /dev/accel and its fdinfo.
std::vector<DeviceProcess> drm_processes(const AcceleratorRegistry& registry, const System& system,
                                         std::vector<Warning>& warnings);

/// Fills in each process's PID in our namespace, user, command line,
/// container PID and PID namespace from /proc and /etc/passwd.
void describe_processes(std::vector<DeviceProcess>& processes, const System& system, std::vector<Warning>& warnings);

/// By device in registry order, then by memory held, most first, then PID.
void order_processes(const AcceleratorRegistry& registry, std::vector<DeviceProcess>& processes);

/// /proc/loadavg and /proc/meminfo.
HostTelemetry read_host(const System& system);

}  // namespace hwaccel::telemetry_detail
