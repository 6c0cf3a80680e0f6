// Intel NPU backend: the intel_vpu accel driver (Meteor Lake and later).
module;
#include <cstdint>
#include <optional>
#include <string_view>
export module hwaccel.detectors:intel_npu;
import hwaccel.detect;

export namespace hwaccel::parsers {

/// An Intel NPU generation as the intel_vpu driver tells them apart.
struct IntelNpuGeneration {
  std::string_view platform;  ///< "Meteor Lake"
  std::string_view ip;        ///< the driver's NPU IP generation, "NPU 37xx"
};

/// The generation of an Intel NPU from its PCI device id (vendor 0x8086);
/// nullopt for an id this table does not know.
std::optional<IntelNpuGeneration> intel_npu_generation(std::uint16_t device_id) noexcept;

}  // namespace hwaccel::parsers

export namespace hwaccel {
extern const Detector intel_npu_detector;
}
