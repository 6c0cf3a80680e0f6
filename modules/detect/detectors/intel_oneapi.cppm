// Intel GPU backend (oneAPI / Level Zero devices: Data Center GPU Max and
// Flex, Arc, integrated Xe): xpu-smi discovery where installed, the i915/xe
// DRM sysfs otherwise and for what xpu-smi does not list.
module;
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
export module hwaccel.detectors:intel_oneapi;
import hwaccel.detect;

export namespace hwaccel::parsers {

/// One device of an `xpu-smi discovery` box: its Device ID and every
/// "Key: Value" line of its Device Information cell, keys as printed
/// ("Device Name", "PCI BDF Address", "Memory Physical Size"...). Empty
/// values ("GFX Firmware Version:") are kept empty.
struct XpuSmiDevice {
  std::uint32_t device_id = 0;
  std::map<std::string, std::string, std::less<>> fields;

  /// The value of a key, nullopt when absent, empty or "unknown".
  std::optional<std::string_view> get(std::string_view key) const;
};

/// Parses the box that `xpu-smi discovery` and `xpu-smi discovery -d N` print.
/// Output without a "Device ID | Device Information" box is a parse_error;
/// a box with no device ("No device discovered") is an empty list.
[[nodiscard]] Result<std::vector<XpuSmiDevice>> parse_xpu_smi_discovery(std::string_view text);

/// Parses the table bare `xpu-smi` prints (the nvidia-smi-like box): per
/// device, its id and the discovery keys the table also shows: "Device Name"
/// (as the table prints it, possibly cut), "PCI BDF Address" and "Memory
/// Physical Size" ("12216 MiB", from the Memory-Usage cell); and what the
/// device is doing, as printed: "GPU Memory Used" ("239 MiB"), "GPU
/// Utilization" ("0%"), "GPU Temperature" ("25C"), "GPU Power" and "GPU Power
/// Cap" ("66W"). parse_error when there is no device row under a "GPU  Name" header.
[[nodiscard]] Result<std::vector<XpuSmiDevice>> parse_xpu_smi_table(std::string_view text);

/// Product and architecture of an Intel discrete GPU from its PCI device id
/// (pci.ids and Intel's own device tables); nullopt when the id is not one
/// this table knows.
struct IntelGpuModel {
  std::string_view name;          ///< "Intel Arc B580"
  std::string_view architecture;  ///< "Xe2-HPG (Battlemage)"
};
std::optional<IntelGpuModel> intel_gpu_model(std::uint16_t device_id) noexcept;

/// True for a placeholder name xpu-smi prints when its tables do not know the
/// device ("Intel(R) Graphics [0x020a]").
bool is_placeholder_gpu_name(std::string_view name) noexcept;

}  // namespace hwaccel::parsers

export namespace hwaccel {
extern const Detector intel_oneapi_detector;
}
