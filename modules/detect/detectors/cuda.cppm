// NVIDIA backend: GPUs, MIG partitions, NVLink/PCIe topology and NVSwitch
// fabrics from nvidia-smi, joined with sysfs by PCI bus id.
module;
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>
export module hwaccel.detectors:cuda;
import hwaccel.detect;

export namespace hwaccel::parsers {

/// Something a parser skipped or discarded, with the warning kind it deserves.
struct ParseProblem {
  WarningKind kind = WarningKind::parse_error;
  std::string message;

  friend bool operator==(const ParseProblem&, const ParseProblem&) = default;
};

/// A cell of nvidia-smi output with its "no value" placeholders removed:
/// "[N/A]", "N/A", "[Not Supported]", "[Unknown Error]", "[Insufficient
/// Permissions]", "[Requested functionality has been deprecated]", "" and the
/// like give nullopt; anything else comes back trimmed.
std::optional<std::string_view> nvidia_smi_value(std::string_view cell) noexcept;

/// `nvidia-smi --query-gpu=... --format=csv` as views into the text it was
/// parsed from (which must outlive it). Columns are found by name, so any
/// order and any extra column work.
struct NvidiaSmiCsv {
  std::vector<std::string_view> columns;  ///< field names without the unit ("memory.total")
  std::vector<std::string_view> units;    ///< the header's unit per column ("MiB"), or empty
  std::vector<std::string_view> cells;   ///< trimmed cells, row after row, columns.size() per row
  std::vector<ParseProblem> problems;     ///< lines that were not rows of the table

  std::size_t row_count() const noexcept { return columns.empty() ? 0 : cells.size() / columns.size(); }
  /// The cells of row `r` (< row_count()), one per column.
  std::span<const std::string_view> row(std::size_t r) const noexcept {
    return std::span<const std::string_view>(cells).subspan(r * columns.size(), columns.size());
  }
  /// Position of a column by field name, nullopt when absent.
  std::optional<std::size_t> column(std::string_view name) const noexcept;
};

/// Parses the CSV. Errors (parse_error): no output, or no line that looks
/// like a header naming query fields (binary garbage, an error message).
/// A header without rows is not an error: `rows` is empty.
[[nodiscard]] Result<NvidiaSmiCsv> parse_nvidia_smi_csv(std::string_view text);

/// The field an older driver refused, from its message
/// `Field "compute_cap" is not a valid field to query.`; nullopt otherwise.
std::optional<std::string> rejected_query_field(std::string_view output);

/// One MIG device: a GPU instance (or a compute instance inside one).
struct NvidiaMigDevice {
  std::uint32_t index = 0;  ///< MIG device index within its GPU ("Device N" in `nvidia-smi -L`)
  std::string profile;      ///< "3g.40gb", "1c.3g.71gb"; empty when unknown
  std::optional<std::string> uuid;  ///< "MIG-..."
  std::optional<std::uint32_t> gpu_instance_id;
  std::optional<std::uint32_t> compute_instance_id;
  std::optional<std::uint32_t> multiprocessors;
  std::optional<std::uint64_t> memory_bytes;  ///< its share of the GPU memory, as `-q` reports it
  std::optional<std::uint64_t> memory_used_bytes;  ///< of that share, in use (`-q`'s FB Memory Usage Used)
  std::optional<std::uint64_t> memory_free_bytes;

  friend bool operator==(const NvidiaMigDevice&, const NvidiaMigDevice&) = default;
};

/// A process with a context on a GPU, as nvidia-smi lists it (`-q`, `-q -x`,
/// `--query-compute-apps`).
struct NvidiaProcess {
  std::uint32_t pid = 0;  ///< in the driver's PID namespace (the host's, for a container)
  std::string type;       ///< "C" (compute), "G" (graphics), "C+G", "M" (MPS server); empty when not said
  std::string name;       ///< as printed; nvidia-smi leaves it empty inside some VMs
  std::optional<std::uint64_t> memory_used_bytes;
  std::optional<std::uint32_t> gpu_instance_id;      ///< the MIG instance it runs in
  std::optional<std::uint32_t> compute_instance_id;

  friend bool operator==(const NvidiaProcess&, const NvidiaProcess&) = default;
};

/// One GPU as nvidia-smi describes it, from `--query-gpu` CSV or `-q` text.
/// Values nvidia-smi did not give (placeholders, fields the driver lacks)
/// stay empty.
struct NvidiaGpu {
  std::optional<std::uint32_t> index;  ///< nvidia-smi's GPU index
  std::string name;
  std::optional<std::string> uuid;
  std::optional<PciAddress> bus_id;
  std::optional<std::uint16_t> pci_device_id;  ///< from pci.device_id "0x233010DE"
  std::optional<std::uint64_t> memory_total_bytes;
  std::optional<std::uint64_t> memory_used_bytes;
  std::optional<std::uint64_t> memory_free_bytes;
  std::optional<std::string> compute_capability;  ///< "9.0"
  std::optional<std::string> architecture;        ///< `-q` Product Architecture
  std::optional<std::string> driver_version;
  std::optional<std::string> vbios_version;
  std::optional<bool> mig_enabled;                ///< mig.mode.current
  std::optional<std::string> compute_mode;        ///< "Default", "Exclusive_Process", "Prohibited"
  std::optional<bool> ecc_enabled;
  std::optional<std::string> addressing_mode;     ///< "ATS", "HMM", "None"
  std::optional<bool> c2c_enabled;                ///< NVLink-C2C to the CPU (Grace)
  std::optional<double> power_draw_watts;
  std::optional<double> power_limit_watts;
  std::optional<double> temperature_c;
  /// Where the driver starts slowing the clocks, and where it shuts the GPU
  /// down, in degrees (`-q`, `-q -x`): "GPU Slowdown Temp", or on drivers
  /// that print offsets from T.Limit, the current temperature plus the
  /// T.Limit margin less the slowdown (shutdown) T.Limit offset.
  std::optional<double> slowdown_temperature_c;
  std::optional<double> shutdown_temperature_c;
  std::optional<double> utilization_percent;
  std::optional<double> max_memory_clock_mhz;
  std::optional<std::uint32_t> pcie_generation_current;
  std::optional<std::uint32_t> pcie_generation_max;
  std::optional<std::uint32_t> pcie_width_current;
  std::optional<std::uint32_t> pcie_width_max;
  std::vector<NvidiaMigDevice> mig_devices;  ///< `-q` only
  std::vector<NvidiaProcess> processes;      ///< `-q` and `-q -x` only

  friend bool operator==(const NvidiaGpu&, const NvidiaGpu&) = default;
};

/// A report's temperature margins, as drivers since about R525 print them:
/// the margin to the maximum operating temperature ("GPU T.Limit Temp") and
/// each threshold as an offset from it ("GPU Slowdown T.Limit Temp": -2).
struct NvidiaTlimit {
  std::optional<double> margin;
  std::optional<double> slowdown_offset;
  std::optional<double> shutdown_offset;
  /// Fills the GPU's absolute thresholds it lacks from the margins and its current temperature.
  void apply(NvidiaGpu& gpu) const {
    if (!margin || !gpu.temperature_c) return;
    if (!gpu.slowdown_temperature_c && slowdown_offset) gpu.slowdown_temperature_c = *gpu.temperature_c + *margin - *slowdown_offset;
    if (!gpu.shutdown_temperature_c && shutdown_offset) gpu.shutdown_temperature_c = *gpu.temperature_c + *margin - *shutdown_offset;
  }
};

/// GPUs parsed from one nvidia-smi output and what was wrong with it.
struct NvidiaGpuTable {
  std::vector<NvidiaGpu> gpus;
  std::vector<ParseProblem> problems;
};

/// Reads `nvidia-smi --query-gpu=... --format=csv` (with or without
/// `nounits`) by header name. Errors as parse_nvidia_smi_csv.
[[nodiscard]] Result<NvidiaGpuTable> parse_query_gpu(std::string_view csv);

/// Reads `nvidia-smi -q`: the top-level driver version and, per
/// "GPU <bus id>" section, the same facts as the CSV plus MIG device details.
/// GPUs are numbered in the order nvidia-smi prints them (its index order).
/// parse_error when the text has no GPU section.
[[nodiscard]] Result<NvidiaGpuTable> parse_query_text(std::string_view text);

/// Reads `nvidia-smi -q -x`: the XML report monitoring agents and bug
/// reports attach (any schema version: nvsmi_device_v4 to v12). The same
/// facts as the CSV query but the compute capability, plus MIG devices, read
/// by element names; values with units ("40960 MiB", "16x", "66.92 W") and
/// placeholders ("N/A", "[N/A]", "Not Supported", "Requested functionality
/// has been deprecated") as nvidia-smi prints them. GPUs are numbered in the
/// order of their <gpu> elements (nvidia-smi's index order). No DTD is read
/// and no entity but XML's five predefined ones is expanded. parse_error when
/// the text is not XML, has no <nvidia_smi_log> root, or describes no GPU.
[[nodiscard]] Result<NvidiaGpuTable> parse_query_xml(std::string_view xml);

/// Reads the table plain `nvidia-smi` prints (any layout from R450 to R610,
/// Linux or Windows): per GPU its index, name (the table cuts long names
/// short with "...", which is kept as printed), bus
/// id, memory used and total, power draw and cap, temperature, utilization,
/// compute mode and MIG mode; the header's driver version; the "MIG devices"
/// box as MIG devices with their instance ids, memory and SM count. No UUID,
/// PCIe link or free memory: the table does not print them. parse_error when
/// the text has no GPU row.
[[nodiscard]] Result<NvidiaGpuTable> parse_default_table(std::string_view text);

/// One line of `nvidia-smi -L` with its MIG children.
struct NvidiaGpuListing {
  std::uint32_t index = 0;
  std::string name;
  std::optional<std::string> uuid;
  std::vector<NvidiaMigDevice> mig_devices;

  friend bool operator==(const NvidiaGpuListing&, const NvidiaGpuListing&) = default;
};

/// Parses `nvidia-smi -L`. MIG lines ("  MIG 3g.40gb Device 0: (UUID: MIG-...)")
/// attach to the GPU above them; R450-era MIG UUIDs
/// ("MIG-GPU-<uuid>/<gi>/<ci>") also give the instance ids. Other lines are ignored.
std::vector<NvidiaGpuListing> parse_gpu_list(std::string_view text);

/// A cell of the `topo -m` matrix.
struct NvidiaTopologyCell {
  LinkKind kind = LinkKind::system;
  std::optional<std::uint32_t> nvlinks;  ///< NV# bond width

  friend bool operator==(const NvidiaTopologyCell&, const NvidiaTopologyCell&) = default;
};

/// A row of the `topo -m` matrix (a GPU or a NIC).
struct NvidiaTopologyRow {
  std::string label;  ///< "GPU0", "NIC1", "mlx5_0"
  /// One entry per device column; empty for the self cell ("X") and unknown codes.
  std::vector<std::optional<NvidiaTopologyCell>> cells;
  std::optional<std::string> cpu_affinity;   ///< cpulist ("0-19", "6,14,22,30")
  std::optional<std::string> numa_affinity;  ///< node or node list ("0", "0-1")
  std::optional<std::string> gpu_numa_id;    ///< the GPU memory's own NUMA node (coherent systems)

  friend bool operator==(const NvidiaTopologyRow&, const NvidiaTopologyRow&) = default;
};

/// `nvidia-smi topo -m`.
struct NvidiaTopology {
  std::vector<std::string> columns;  ///< device columns of the header ("GPU0", "NIC0")
  std::vector<NvidiaTopologyRow> rows;
  std::map<std::string, std::string, std::less<>> nic_names;  ///< "NIC0" -> "mlx5_0"
  std::vector<ParseProblem> problems;
};

/// Parses the matrix whether TAB separated (as nvidia-smi prints it, with
/// ANSI underline codes around the header) or space aligned (pasted copies),
/// with or without the "GPU NUMA ID" column. parse_error when there is no
/// matrix header (e.g. "ERROR: Option -m is missing its value").
[[nodiscard]] Result<NvidiaTopology> parse_topology_matrix(std::string_view text);

/// NVLink state of one GPU from `nvidia-smi nvlink -s`.
struct NvidiaNvlinkStatus {
  std::uint32_t gpu_index = 0;
  std::optional<std::string> uuid;
  std::uint32_t active_links = 0;
  std::uint32_t inactive_links = 0;
  std::optional<double> link_gbps;   ///< per link and direction (the slowest active link)
  double total_gbps = 0;             ///< sum over the active links, per direction
  bool unsupported_in_mig = false;   ///< "not supported for Devices in MIG mode"

  friend bool operator==(const NvidiaNvlinkStatus&, const NvidiaNvlinkStatus&) = default;
};

/// Parses `nvidia-smi nvlink -s`. Inactive links are counted apart; unknown
/// lines (a user's "......", NVML messages) are ignored.
std::vector<NvidiaNvlinkStatus> parse_nvlink_status(std::string_view text);

/// What /proc/driver/nvidia/gpus/<bus id>/information says.
struct NvidiaProcGpuInfo {
  std::optional<std::string> model;
  std::optional<std::string> uuid;
  std::optional<PciAddress> bus_location;
  std::optional<std::uint32_t> device_minor;

  friend bool operator==(const NvidiaProcGpuInfo&, const NvidiaProcGpuInfo&) = default;
};

NvidiaProcGpuInfo parse_proc_gpu_information(std::string_view text);

/// Kernel module version from /proc/driver/nvidia/version
/// ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  ...").
std::optional<std::string> parse_proc_driver_version(std::string_view text);

/// The CUDA compute capability of an NVIDIA product name, for the views that
/// do not print it (`-q`, `-q -x`): "NVIDIA A100-SXM4-40GB" -> "8.0",
/// "Tesla P100-PCIE-16GB" -> "6.0", "GRID P4-1Q" -> "6.1", "NVIDIA GeForce
/// GTX 1660 Ti" -> "7.5". From NVIDIA's published table of CUDA GPUs
/// (docs/json.md); empty when the name matches no family it knows.
std::string_view cuda_capability_of_name(std::string_view name) noexcept;

/// Architecture of a CUDA compute capability ("8.9" -> "Ada Lovelace");
/// empty when unknown.
std::string_view cuda_architecture(std::string_view compute_capability) noexcept;

/// Nominal memory in a MIG profile name, in bytes: the "<N>gb" part read as
/// GiB ("3g.40gb" -> 40 GiB, "1c.3g.71gb" -> 71 GiB). Profile names round up:
/// the usable size is a few percent smaller.
std::optional<std::uint64_t> mig_profile_memory_bytes(std::string_view profile) noexcept;

}  // namespace hwaccel::parsers

export namespace hwaccel {

/// The argv of the nvidia-smi runs the cuda detector makes, as fixtures
/// record them (argv[0] is "nvidia-smi").
namespace nvidia_smi_argv {
/// The GPU query, `--query-gpu=<fields> --format=csv`. Fields carry the tier
/// of driver that introduced them (0: always, 1: mig.mode.current, 2:
/// compute_cap); after a driver rejects a field of tier t the detector asks
/// again with the fields of tier < t.
std::vector<std::string> query(int max_tier = 2);
/// addressing_mode and c2c.mode, asked apart because older drivers reject them.
std::vector<std::string> optional_query();
std::vector<std::string> list();      ///< `-L`
std::vector<std::string> topology();  ///< `topo -m`
std::vector<std::string> nvlink();    ///< `nvlink -s`
std::vector<std::string> details();   ///< `-q`, for MIG devices or when the query and `-q -x` fail
std::vector<std::string> details_xml();  ///< `-q -x`, when the query fails
std::vector<std::string> table();     ///< plain `nvidia-smi`, when the query and the reports fail
}  // namespace nvidia_smi_argv

extern const Detector cuda_detector;
}
