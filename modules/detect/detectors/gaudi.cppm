// Intel Gaudi (Habana Labs) backend: hl-smi's CSV query and default table, the
// habanalabs driver's PCI functions.
module;
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
export module hwaccel.detectors:gaudi;
import hwaccel.detect;

export namespace hwaccel::parsers {

/// One accelerator (hl-smi calls it an AIP) as hl-smi reports it. Empty
/// fields were absent or `N/A`.
struct HlSmiDevice {
  std::optional<std::uint32_t> index;
  std::optional<std::uint32_t> module_id;
  std::string name;  ///< the board model, "HL-225"
  std::optional<PciAddress> bus_id;
  std::optional<std::string> uuid;
  std::optional<std::string> serial;
  std::optional<std::string> driver_version;
  std::optional<std::uint64_t> memory_total_bytes;
  std::optional<std::uint64_t> memory_used_bytes;
  std::optional<std::uint64_t> memory_free_bytes;
  std::optional<double> temperature_c;
  std::optional<double> power_watts;
  std::optional<double> power_limit_watts;
  std::optional<double> utilization_percent;
  /// ecc.errors.{corrected,uncorrected}.{volatile,aggregate}.total, where the
  /// query asked for them (telemetry does; detection does not).
  std::optional<std::uint64_t> ecc_corrected_volatile;
  std::optional<std::uint64_t> ecc_uncorrected_volatile;
  std::optional<std::uint64_t> ecc_corrected_aggregate;
  std::optional<std::uint64_t> ecc_uncorrected_aggregate;
};

/// What one hl-smi run said.
struct HlSmiReport {
  std::vector<HlSmiDevice> devices;
  std::optional<std::string> driver_version;  ///< table header "Driver Version:"
  std::optional<std::string> tool_version;    ///< table header "HL-SMI Version:" (hl-<sw>-fw-<fw>)
  /// Rows that could not be read, each naming the row; the other rows still count.
  std::vector<std::string> problems;
};

/// The fields the detector asks `hl-smi --query-aip=` for, in hl-smi's own names.
inline constexpr std::string_view hl_smi_query_fields =
    "index,module_id,name,bus_id,uuid,serial,driver_version,memory.total,memory.used,memory.free,"
    "temperature.aip,power.draw,utilization.aip";

/// Parses `hl-smi --query-aip=... --format=csv[,nounits]` by header name
/// ("memory.total [MiB]" is memory.total in MiB; values may carry units or not).
/// A missing or unusable header is a parse_error.
[[nodiscard]] Result<HlSmiReport> parse_hl_smi_csv(std::string_view csv);

/// Parses the default `hl-smi` box table (two rows per AIP, version lines above).
/// No AIP row at all is a parse_error.
[[nodiscard]] Result<HlSmiReport> parse_hl_smi_table(std::string_view text);

/// A Habana product generation.
struct GaudiModel {
  std::string_view generation;          ///< "Gaudi 2"
  std::string_view compute_capability;  ///< "gaudi2"
  /// Published HBM capacity per device (a product figure, never a measurement).
  std::optional<std::uint64_t> published_memory_bytes;
};

/// Generation from hl-smi's board name: HL-205 Gaudi, HL-225 / HL-288 Gaudi 2,
/// HL-325 / HL-325L / HL-338 / HL-388 Gaudi 3, HL-100 Goya.
std::optional<GaudiModel> gaudi_model_from_name(std::string_view name) noexcept;
/// Generation from the PCI device id under vendor 0x1da3 (habanalabs driver table).
std::optional<GaudiModel> gaudi_model_from_pci(std::uint16_t device_id) noexcept;

}  // namespace hwaccel::parsers

export namespace hwaccel {
extern const Detector gaudi_detector;
}
