// The fleet scan's settings table: what `hwaccel fleet scan --deadline-ms,
// --concurrency, --max-output-mib` and Python's scan functions set.
module;
#include <array>
#include <chrono>
#include <cstddef>
#include <span>
module hwaccel.fleet;

namespace hwaccel {

namespace {

using ScanKey = SettingKey<ScanOptions>;

constexpr std::array scan_keys = {
    ScanKey{"deadline-ms", SettingType::whole, "60000", 1, static_cast<double>(max_node_deadline.count()), "",
            "Per-node deadline in milliseconds; a node past it is killed and reported",
            [](ScanOptions& o, const SettingValue& v) -> Result<void> {
              o.node_deadline = std::chrono::milliseconds(v.whole);
              return {};
            }},
    ScanKey{"concurrency", SettingType::whole, "32", 1, max_scan_concurrency, "", "Nodes asked at once",
            [](ScanOptions& o, const SettingValue& v) -> Result<void> {
              o.concurrency = static_cast<std::size_t>(v.whole);
              return {};
            }},
    ScanKey{"max-output-mib", SettingType::whole, "16", 1, max_node_output_mib, "", "Per-node output cap, in MiB",
            [](ScanOptions& o, const SettingValue& v) -> Result<void> {
              o.max_output_bytes = static_cast<std::size_t>(v.whole) << 20;
              return {};
            }},
};

}  // namespace

std::span<const SettingKey<ScanOptions>> scan_setting_keys() noexcept { return scan_keys; }

Result<ScanOptions> read_scan_options(std::span<const Setting> values) {
  ScanOptions options;
  if (auto r = read_settings(options, scan_setting_keys(), values); !r) return fail(r.error());
  return options;
}

}  // namespace hwaccel
