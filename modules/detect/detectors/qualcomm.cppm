// Qualcomm backend: Cloud AI 100 / 080 cards through the qaic accel driver
// and `qaic-util -q`.
module;
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
export module hwaccel.detectors:qualcomm;
import hwaccel.detect;

export namespace hwaccel::parsers {

/// One `QID n` block of `qaic-util -q`: one SoC (an AI 100 Ultra card holds
/// four, each its own PCI function).
struct QaicDevice {
  std::uint32_t qid = 0;
  std::optional<std::string> status;  ///< "Ready", "Error"
  std::optional<PciAddress> pci_address;
  std::optional<std::string> pci_info;  ///< "Unassigned class [ff00] Qualcomm Device a100"
  std::optional<std::uint64_t> dram_total_bytes;
  std::optional<std::uint64_t> dram_free_bytes;
  std::optional<std::uint32_t> nsp_total;  ///< neural signal processor cores
  std::optional<std::uint32_t> nsp_free;
  std::optional<std::string> fw_version;
  std::optional<std::string> hw_version;
};

/// What `qaic-util -q` printed.
struct QaicUtilReport {
  std::vector<QaicDevice> devices;
  std::optional<std::uint32_t> device_count;  ///< "Number of devices: N"
  /// Log lines ("[time][error] ...") the runtime prints on stdout before the blocks.
  std::vector<std::string> errors;
};

/// Parses `qaic-util -q`: log lines, then `QID n` blocks of `Key:Value`
/// lines (no space after the colon); memory in "KB" or "MB" (binary units).
QaicUtilReport parse_qaic_util(std::string_view text);

/// "Qualcomm Cloud AI 100" for PCI device 0xa100, "... 080" for 0xa080.
std::optional<std::string_view> qaic_product_name(std::uint16_t pci_device_id) noexcept;

}  // namespace hwaccel::parsers

export namespace hwaccel {
extern const Detector qualcomm_detector;
}
