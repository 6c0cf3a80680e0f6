// Groq backend: GroqChip PCI functions (vendor 0x1de0). Groq publishes no
// Linux tool or device-node layout, so PCI is the evidence read.
module;
#include <cstdint>
#include <optional>
#include <string_view>
export module hwaccel.detectors:groq;
import hwaccel.detect;

export namespace hwaccel::parsers {

/// Board name of a GroqChip function from its PCI subsystem id (pci.ids:
/// 1de0:0000 GC1-010X-ES, 1de0:c005 GC1-010B, both GroqCard); nullopt when unknown.
std::optional<std::string_view> groq_board(std::uint16_t subsystem_vendor, std::uint16_t subsystem_device) noexcept;

}  // namespace hwaccel::parsers

export namespace hwaccel {
extern const Detector groq_detector;
}
