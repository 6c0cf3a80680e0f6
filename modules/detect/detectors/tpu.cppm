// Google TPU backend: TPU chips as PCI functions of vendor 0x1ae0 (accel
// class on v2-v4, vfio-pci on v5e and later), `tpu-info` for HBM, and the
// slice topology the TPU VM's environment describes.
module;
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
export module hwaccel.detectors:tpu;
import hwaccel.detect;

export namespace hwaccel::parsers {

/// A TPU generation as its PCI ids tell it.
struct TpuVersion {
  std::string_view name;  ///< "v5e"
  /// Devices the TPU runtime shows per chip (two TensorCores on v2/v3).
  std::optional<std::uint32_t> runtime_devices_per_chip;
};

/// The TPU generation of a Google PCI function (vendor 0x1ae0); v2 and v3
/// share device 0x0027 and differ by subsystem id. nullopt when unknown.
std::optional<TpuVersion> tpu_version(std::uint16_t device_id, std::optional<std::uint16_t> subsystem_device_id) noexcept;

/// The generation named by a Cloud TPU accelerator type: "v5litepod-16" ->
/// "v5e", "v4-256" -> "v4", "v6e-8" -> "v6e", "tpu7x-32" -> "v7".
std::optional<std::string_view> tpu_version_of_accelerator_type(std::string_view accelerator_type) noexcept;

/// A row of tpu-info's "TPU Chips" table.
struct TpuInfoChip {
  std::string device_node;  ///< "/dev/vfio/0", "/dev/accel0"
  std::string type;         ///< "TPU v6e chip"
  std::optional<std::uint32_t> devices;
  std::optional<std::string> pid;  ///< owning process, "None" when free
};

/// A row of tpu-info's utilization table (per runtime device).
struct TpuInfoUsage {
  std::uint32_t device = 0;
  std::optional<std::uint64_t> used_bytes;
  std::optional<std::uint64_t> total_bytes;
  std::optional<double> duty_cycle_percent;
};

/// What `tpu-info` printed.
struct TpuInfoReport {
  std::vector<TpuInfoChip> chips;
  std::vector<TpuInfoUsage> usage;
  bool metrics_unavailable = false;  ///< "Libtpu metrics unavailable": no framework holds the TPU
  std::optional<std::string> accelerator_type;  ///< "Accelerator type: v5p" (newer releases)
  std::optional<std::string> libtpu_version;
};

/// Parses tpu-info's tables, drawn with rich's box characters (┃ │) or as
/// Markdown pipes by newer releases, with status lines and panels between
/// them. Memory cells read "2.94 GiB / 31.25 GiB" or "N/A".
TpuInfoReport parse_tpu_info(std::string_view text);

}  // namespace hwaccel::parsers

export namespace hwaccel {
extern const Detector tpu_detector;
}
