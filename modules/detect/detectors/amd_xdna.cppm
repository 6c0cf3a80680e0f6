// AMD XDNA backend: the amdxdna accel driver (Ryzen AI NPUs).
module;
#include <cstdint>
#include <optional>
#include <string_view>
export module hwaccel.detectors:amd_xdna;
import hwaccel.detect;

export namespace hwaccel::parsers {

/// An XDNA NPU generation as the amdxdna driver tells them apart.
struct XdnaGeneration {
  std::string_view npu;           ///< the driver's name for it, "NPU4"
  std::string_view architecture;  ///< "XDNA", "XDNA 2"
  /// The processor families that carry it. The PCI id alone cannot tell
  /// Strix Point from Krackan Point or Strix Halo: the driver asks the
  /// firmware for that.
  std::string_view platforms;
};

/// The generation of an AMD NPU from its PCI device id and revision (both
/// are needed: 0x17f0 covers three generations); nullopt when unknown.
std::optional<XdnaGeneration> xdna_generation(std::uint16_t device_id, std::optional<std::uint8_t> revision) noexcept;

}  // namespace hwaccel::parsers

export namespace hwaccel {
extern const Detector amd_xdna_detector;
}
