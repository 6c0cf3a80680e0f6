// Apple backend: Apple silicon GPUs and Neural Engines (macOS through
// system_profiler and sysctl, Linux/Asahi through the device tree), and the
// GPUs of Intel Macs.
module;
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
export module hwaccel.detectors:apple;
import hwaccel.detect;

export namespace hwaccel::parsers {

/// An Apple silicon chip and what Apple publishes about its Neural Engine.
struct AppleChip {
  std::string_view soc;   ///< device-tree SoC code, "t8103"
  std::string_view name;  ///< "M1"
  /// Apple's published Neural Engine throughput in trillions of operations
  /// per second; a specification, not a measurement. Empty where Apple
  /// published none.
  std::optional<double> ane_published_tops;
  std::uint32_t ane_published_cores = 16;
};

/// The chip of a device-tree SoC code ("t6021"); nullopt when unknown.
std::optional<AppleChip> apple_chip_by_soc(std::string_view soc) noexcept;
/// The chip of a marketing name ("Apple M2 Max" or "M2 Max").
std::optional<AppleChip> apple_chip_by_name(std::string_view name) noexcept;

/// What /proc/device-tree/compatible says: "apple,j293\0apple,t8103\0apple,arm-platform".
struct DeviceTreeCompatible {
  bool apple = false;  ///< an Apple platform
  std::string board;   ///< "j293"
  std::string soc;     ///< "t8103"
};

/// Splits the NUL-separated strings; also reads text whose separators were
/// lost ("apple,j293apple,t8103apple,arm-platform", as a terminal shows it).
DeviceTreeCompatible parse_devicetree_compatible(std::string_view text);

/// The fields of `system_profiler SPHardwareDataType -json` used here.
struct MacHardware {
  std::optional<std::string> chip_type;      ///< "Apple M2 Max" (Apple silicon)
  std::optional<std::string> cpu_type;       ///< "6-Core Intel Core i7" (Intel Macs)
  std::optional<std::string> machine_model;  ///< "Mac14,6"
  std::optional<std::string> machine_name;   ///< "MacBook Pro"
  std::optional<std::uint64_t> physical_memory_bytes;  ///< "32 GB"
};

[[nodiscard]] Result<MacHardware> parse_sp_hardware(std::string_view json);

/// One graphics processor of `system_profiler SPDisplaysDataType -json`.
struct MacGpu {
  std::string name;                    ///< sppci_model
  std::optional<std::string> vendor;   ///< "Apple", "AMD", "Intel", "NVIDIA"
  std::optional<std::uint32_t> cores;  ///< sppci_cores (Apple silicon)
  std::optional<std::string> metal;    ///< "Metal 3", "Metal GPU family Mac 2"
  std::optional<std::uint64_t> vram_bytes;         ///< spdisplays_vram (discrete)
  std::optional<std::uint64_t> vram_shared_bytes;  ///< spdisplays_vram_shared (integrated)
  bool builtin = false;                ///< sppci_bus is spdisplays_builtin
  std::optional<std::uint16_t> pci_vendor_id;
  std::optional<std::uint16_t> pci_device_id;  ///< spdisplays_device-id
};

[[nodiscard]] Result<std::vector<MacGpu>> parse_sp_displays(std::string_view json);

/// A conservative estimate of the unified memory macOS lets the GPU wire by
/// default (iogpu.wired_limit_mb = 0): 2/3 of memory up to 36 GiB, 3/4
/// above. Metal's recommendedMaxWorkingSetSize is the exact figure, and
/// recent releases allow more on large machines.
std::uint64_t default_gpu_wired_limit(std::uint64_t memory_bytes) noexcept;

}  // namespace hwaccel::parsers

export namespace hwaccel {
extern const Detector apple_detector;
}
