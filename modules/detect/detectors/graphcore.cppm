// Graphcore IPU backend: gc-info's device list and device attributes, PCI
// functions of vendor 0x1d95 when gc-info is absent.
module;
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
export module hwaccel.detectors:graphcore;
import hwaccel.detect;

export namespace hwaccel::parsers {

/// One top-level entry of `gc-info -l`:
///   "-+- Id: [0], target: [Fabric], IPU-M host: [172.31.100.130], IPU#: [3]"
///   "-+- Id:  [0], type:      [PCIe], PCI Domain: [0000:1a:00.0]"
/// Multi-IPU groups ("target: [Multi IPU]") are marked; their member lines
/// (" |--- Id: ...") are not entries.
struct GcInfoListEntry {
  std::uint32_t id = 0;
  std::map<std::string, std::string, std::less<>> fields;  ///< "target" -> "Fabric"
  bool multi_ipu = false;
};

/// Parses `gc-info -l`. Output with no "-+- Id:" entry and no "device listing"
/// header is a parse_error; a listing with no entry is an empty list.
[[nodiscard]] Result<std::vector<GcInfoListEntry>> parse_gc_info_list(std::string_view text);

/// Parses `gc-info -i -d N` ("Device Info:" then "  key: value" lines) into its
/// attributes, keys as printed ("board type", "ipu architecture", "pci id").
/// No attribute at all is a parse_error.
[[nodiscard]] Result<std::map<std::string, std::string, std::less<>>> parse_gc_info_device(std::string_view text);

/// Published in-processor memory of an IPU architecture as gc-info names it
/// ("ipu1", "ipu2", "ipu21"): tiles times per-tile SRAM, from Graphcore's
/// documentation. Never a measurement.
struct IpuArchitecture {
  std::string_view name;  ///< "Mk2 (GC200)"
  std::uint32_t tiles = 0;
  std::uint64_t sram_bytes_per_tile = 0;
};
std::optional<IpuArchitecture> ipu_architecture(std::string_view gc_info_name) noexcept;

}  // namespace hwaccel::parsers

export namespace hwaccel {
extern const Detector graphcore_detector;
}
