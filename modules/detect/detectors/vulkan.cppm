// Vulkan backend: GPUs as the Vulkan loader enumerates them (`vulkaninfo
// --summary` and the full report), and the pass that folds a Vulkan device
// into the native backend's view of the same GPU.
module;
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
export module hwaccel.detectors:vulkan;
import hwaccel.detect;

export namespace hwaccel::parsers {

/// One VkMemoryHeap.
struct VulkanHeap {
  std::uint64_t size_bytes = 0;
  bool device_local = false;  ///< MEMORY_HEAP_DEVICE_LOCAL_BIT
};

/// One physical device ("GPUn:") of a vulkaninfo report.
struct VulkanDevice {
  std::uint32_t index = 0;  ///< n of "GPUn", the loader's enumeration order
  std::string name;
  std::string device_type;  ///< "DISCRETE_GPU", "INTEGRATED_GPU", "VIRTUAL_GPU", "CPU", "OTHER"
  std::optional<std::uint32_t> vendor_id;  ///< a PCI vendor id, or a Khronos one (0x10005 Mesa)
  std::optional<std::uint32_t> device_id;  ///< 32 bits: Apple's are not PCI ids
  std::optional<std::string> api_version;
  std::optional<std::string> driver_version;
  std::optional<std::string> driver_id;    ///< "DRIVER_ID_MESA_RADV"
  std::optional<std::string> driver_name;  ///< "radv"
  std::optional<std::string> driver_info;  ///< "Mesa 26.0.8-1ubuntu0.3"
  std::optional<std::string> device_uuid;
  /// VkPhysicalDeviceIDProperties::deviceLUID where deviceLUIDValid (Windows):
  /// the adapter's LUID, HighPart << 32 | LowPart, as DXGI gives it.
  std::optional<std::uint64_t> device_luid;
  std::optional<PciAddress> pci_address;   ///< VkPhysicalDevicePCIBusInfoPropertiesEXT
  std::vector<VulkanHeap> heaps;
};

/// A parsed vulkaninfo report.
struct VulkanInfo {
  bool has_devices = false;  ///< the device section was found
  std::optional<std::string> instance_version;
  std::vector<VulkanDevice> devices;
};

/// `vulkaninfo --summary`: the "Devices:" section's GPUn blocks of
/// "key = value" lines. Validation-layer messages may come before the banner.
VulkanInfo parse_vulkaninfo_summary(std::string_view text);

/// The full `vulkaninfo` report, in one pass: identity from
/// VkPhysicalDeviceProperties, PCI location, UUID, driver and memory heaps
/// of each GPUn under "Device Properties and Extensions". The layer and
/// surface sections that repeat device names before it are skipped.
VulkanInfo parse_vulkaninfo(std::string_view text);

/// A deviceLUID as vulkaninfo prints it: its 8 bytes in memory order, in hex
/// ("2f690100-00000000", the dash optional); nullopt for anything else or
/// for all zeros (no LUID).
std::optional<std::uint64_t> parse_vulkan_luid(std::string_view text) noexcept;

/// llvmpipe, lavapipe, SwiftShader and other CPU implementations: Vulkan
/// devices that are not accelerators.
bool is_software_renderer(const VulkanDevice& device) noexcept;

}  // namespace hwaccel::parsers

export namespace hwaccel {

extern const Detector vulkan_detector;


}  // namespace hwaccel
