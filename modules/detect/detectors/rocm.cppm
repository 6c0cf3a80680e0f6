// ROCm backend: AMD GPUs from the amdgpu DRM sysfs and the KFD topology,
// and from rocm-smi and rocminfo where sysfs shows none.
module;
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
export module hwaccel.detectors:rocm;
import hwaccel.detect;

export namespace hwaccel::parsers {

/// The fields of a KFD topology node's `properties` file
/// (/sys/class/kfd/kfd/topology/nodes/N/properties: "key value" lines,
/// decimal integers). Fields the file lacks stay empty.
struct KfdNodeProperties {
  std::optional<std::uint64_t> cpu_cores_count;
  std::optional<std::uint64_t> simd_count;
  std::optional<std::uint64_t> mem_banks_count;
  std::optional<std::uint64_t> array_count;
  std::optional<std::uint64_t> simd_arrays_per_engine;
  std::optional<std::uint64_t> cu_per_simd_array;
  std::optional<std::uint64_t> simd_per_cu;
  std::optional<std::uint64_t> wave_front_size;
  std::optional<std::uint64_t> gfx_target_version;  ///< 90402 for gfx942
  std::optional<std::uint64_t> vendor_id;           ///< decimal: 4098 = 0x1002
  std::optional<std::uint64_t> device_id;           ///< decimal: 29857 = 0x74a1
  std::optional<std::uint64_t> location_id;         ///< bus << 8 | device << 3 | function
  std::optional<std::uint64_t> domain;              ///< PCI domain; absent on old kernels
  std::optional<std::uint64_t> drm_render_minor;
  std::optional<std::uint64_t> hive_id;             ///< xGMI hive; 0 when not in one
  std::optional<std::uint64_t> unique_id;           ///< shared by the partitions of one board
  std::optional<std::uint64_t> num_xcc;             ///< compute dies (XCDs) of this node
  std::optional<std::uint64_t> local_mem_size;
  std::optional<std::uint64_t> max_engine_clk_fcompute;  ///< MHz
  /// Known keys whose value was not a decimal integer.
  std::vector<std::string> invalid_keys;

  /// A GPU node: CPU nodes have no SIMDs.
  bool is_gpu() const noexcept { return simd_count.value_or(0) > 0; }
};

KfdNodeProperties parse_kfd_node_properties(std::string_view text);

/// KFD io_link types (kfd_crat.h, CRAT_IOLINK_TYPE_*).
inline constexpr std::uint64_t kfd_link_type_pcie = 2;
inline constexpr std::uint64_t kfd_link_type_xgmi = 11;

/// One io_links/N/properties or p2p_links/N/properties file.
struct KfdLink {
  std::optional<std::uint64_t> type;
  std::optional<std::uint64_t> node_from;
  std::optional<std::uint64_t> node_to;
  std::optional<std::uint64_t> weight;
  std::optional<std::uint64_t> min_bandwidth_mbps;  ///< MB/s
  std::optional<std::uint64_t> max_bandwidth_mbps;  ///< MB/s; 0 when the driver does not know
};

KfdLink parse_kfd_link(std::string_view text);

/// One mem_banks/N/properties file.
struct KfdMemBank {
  std::optional<std::uint64_t> heap_type;  ///< 0 system, 1 frame buffer public, 2 private
  std::optional<std::uint64_t> size_in_bytes;
  std::optional<std::uint64_t> width_bits;
  std::optional<std::uint64_t> mem_clk_max_mhz;
};

KfdMemBank parse_kfd_mem_bank(std::string_view text);

/// The LLVM target of a KFD gfx_target_version: 90402 -> "gfx942",
/// 90010 -> "gfx90a", 110003 -> "gfx1103". Minor and stepping are single
/// hexadecimal digits; anything else (or 0) is nullopt.
std::optional<std::string> gfx_target_name(std::uint64_t gfx_target_version);

/// The GPU architecture of a gfx target ("gfx942" -> "CDNA3",
/// "gfx1100" -> "RDNA3"); empty when unknown.
std::string_view gfx_architecture(std::string_view gfx_target) noexcept;

/// The PCI address KFD gives a node: `domain` plus `location_id`
/// (bus << 8 | device << 3 | function). Partitions of one board OR their
/// partition number into the function bits. nullopt when location_id is
/// missing or out of range.
std::optional<PciAddress> kfd_pci_address(std::optional<std::uint64_t> domain,
                                          std::optional<std::uint64_t> location_id) noexcept;

/// xGMI hop count of a KFD io_link weight. The kernel writes 15 per hop for
/// links between boards (KFD_CRAT_XGMI_WEIGHT), 13 between partitions of
/// one package (KFD_CRAT_INTRA_SOCKET_WEIGHT, 0 hops) and 2*13 + 15 per hop
/// from a partition to a partition of another board. nullopt for any other
/// weight.
std::optional<std::uint32_t> xgmi_hops_from_weight(std::uint64_t weight) noexcept;

/// How an AMD product's memory relates to the host's.
enum class AmdMemory : std::uint8_t {
  dedicated,  ///< VRAM on the board (HBM, GDDR)
  carve_out,  ///< APU: a firmware-reserved slice of system RAM plus GTT
  unified,    ///< MI300A: the HBM is the system memory of the CPU and GPU
};

/// What the product table knows about a PCI device id.
struct AmdProduct {
  std::uint16_t device_id = 0;
  /// Revisions this row is for ("c8 cc"), empty for any revision.
  std::string_view revisions;
  std::string_view name;
  std::string_view architecture;
  AmdMemory memory = AmdMemory::dedicated;
  /// Accelerator complex dies of an MI300-class part (compute partitions in
  /// CPX mode); 0 when the part cannot be partitioned.
  std::uint32_t xcd_count = 0;

  bool integrated() const noexcept { return memory != AmdMemory::dedicated; }
};

/// The product row of an AMD PCI device id and revision: the row for that
/// revision first, then the row for any revision; nullptr when unknown.
/// Names follow the amdgpu marketing-name table (libdrm amdgpu.ids).
const AmdProduct* amd_product(std::uint16_t device_id, std::optional<std::uint8_t> revision) noexcept;

/// Compute partition modes of MI300-class GPUs, as current_compute_partition
/// prints them, and the number of partitions each makes of a part with
/// `xcd_count` dies (CPX: one per die). nullopt for an unknown mode or an
/// unknown die count in CPX.
std::optional<std::uint32_t> partitions_in_mode(std::string_view mode, std::uint32_t xcd_count) noexcept;

/// One node of the KFD topology.
struct KfdNode {
  std::uint32_t id = 0;  ///< the folder name under topology/nodes
  KfdNodeProperties properties;
  std::optional<PciAddress> address;
  std::optional<std::uint32_t> gpu_id;
  std::vector<KfdLink> io_links;
  std::vector<KfdLink> p2p_links;
  std::vector<KfdMemBank> mem_banks;

  /// Sum of the node's frame-buffer memory banks (heap types 1 and 2);
  /// nullopt when the node lists none.
  std::optional<std::uint64_t> frame_buffer_bytes() const noexcept;
  /// Sum of all its memory banks, whatever their heap type.
  std::optional<std::uint64_t> bank_bytes() const noexcept;
};

/// The KFD topology as sysfs shows it.
struct KfdTopology {
  bool present = false;        ///< topology/nodes could be listed
  std::vector<KfdNode> nodes;  ///< sorted by node id, CPU nodes included
};

/// Reads /sys/class/kfd/kfd/topology/nodes. Unreadable or malformed nodes
/// become warnings of `ctx` in `out`; an absent topology is not a problem
/// (amdgpu without ROCm compute, or no AMD GPU at all).
KfdTopology read_kfd_topology(const DetectContext& ctx, DetectorOutput& out);

/// One GPU as rocm-smi reports it: its index ("GPU[N]", "cardN") and the
/// values under the keys rocm-smi prints ("Card series", "PCI Bus",
/// "Unique ID", "VRAM Total Memory (B)"; the concise table's "Device ID" and
/// "Name"), placeholders ("N/A", "Not supported") left out.
struct RocmSmiGpu {
  std::uint32_t index = 0;
  std::map<std::string, std::string, std::less<>> fields;

  std::optional<std::string_view> get(std::string_view key) const;
};

struct RocmSmiReport {
  std::vector<RocmSmiGpu> gpus;  ///< by index
  std::optional<std::string> driver_version;
};

/// `rocm-smi ... --json`: {"card0": {key: value}, ..., "system": {"Driver
/// version": ...}}. parse_error when it is not JSON or names no card.
[[nodiscard]] Result<RocmSmiReport> parse_rocm_smi_json(std::string_view json);

/// rocm-smi's text: the `GPU[N]\t\t: key: value` lines of `-a` and the
/// --show* options, the default concise table (each GPU on two lines: index,
/// "[0x74a1 : 0x00]", then the name), or the --showtopo matrices (the GPU
/// count only). parse_error when no form names a GPU.
[[nodiscard]] Result<RocmSmiReport> parse_rocm_smi_text(std::string_view text);

/// A GPU agent of `rocminfo` (CPU agents are left out).
struct RocminfoAgent {
  std::string gfx_target;      ///< "gfx942" (the agent's Name)
  std::string marketing_name;  ///< "AMD Instinct MI300X"
  std::optional<PciAddress> pci_address;  ///< from BDFID (bus << 8 | device << 3 | function), domain 0
  std::optional<std::uint32_t> compute_units;
  std::optional<std::uint64_t> memory_bytes;  ///< its first GLOBAL COARSE GRAINED pool (device memory)

  friend bool operator==(const RocminfoAgent&, const RocminfoAgent&) = default;
};

/// Parses rocminfo's "Agent N" sections. parse_error when there is no agent
/// at all (not rocminfo output); no GPU agent is an empty list.
[[nodiscard]] Result<std::vector<RocminfoAgent>> parse_rocminfo(std::string_view text);

}  // namespace hwaccel::parsers

export namespace hwaccel {
extern const Detector rocm_detector;
}

namespace hwaccel {
/// The last views of AMD GPUs, for when DRM sysfs and KFD show none (a
/// restricted container, a paste): rocm-smi (`-a --json`, `-a`, the concise
/// table, `--showtopo`), joined by PCI address with rocminfo, or rocminfo
/// alone. Runs only where rocm-smi or rocminfo is on PATH.
void detect_rocm_from_tools(const DetectContext& ctx, DetectorOutput& out);
/// "GPU-8d1457e2c20f59d2": the UUID the ROCm runtime gives a GPU of this unique id.
std::string amd_runtime_uuid(std::uint64_t unique_id);
}
