// Network probe: RDMA NIC ports (InfiniBand, RoCE, iWARP, EFA) from /sys/class/infiniband.
module;
#include <cstdint>
#include <optional>
#include <string_view>
export module hwaccel.detectors:network;
import hwaccel.detect;

export namespace hwaccel::parsers {

/// A numbered sysfs enumeration value such as a port's `state` ("4: ACTIVE"),
/// `phys_state` ("5: LinkUp") or a device's `node_type` ("1: CA").
struct NumberedValue {
  std::uint32_t code = 0;
  std::string_view name;  ///< trimmed text after the colon; may be empty
};

/// Parses "<number>: <name>"; nullopt when there is no leading number and colon.
std::optional<NumberedValue> parse_numbered_value(std::string_view text) noexcept;

/// Parses a port's `rate` as the kernel prints it ("400 Gb/sec (4X NDR)",
/// "2.5 Gb/sec (1X SDR)", "100 Gb/sec (2X HDR)") to Gb/s; nullopt for
/// anything without the "Gb/sec" unit or outside (0, 100000].
std::optional<double> parse_ib_rate(std::string_view text) noexcept;

}  // namespace hwaccel::parsers

export namespace hwaccel {
extern const Detector network_detector;
}
