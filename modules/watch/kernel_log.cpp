// Device health from the kernel log: NVIDIA Xid lines and amdgpu RAS, ECC
// and reset lines. Severities follow NVIDIA's Xid catalogue and AMD's RAS
// documentation (docs/watch.md cites both).
module;
#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
module hwaccel.watch;

namespace hwaccel {

namespace {

constexpr std::size_t max_message = 512;

struct XidMeaning {
  std::uint32_t code;
  HealthSeverity severity;
  std::string_view summary;
};

// The Xids that say something about the device rather than one program.
constexpr std::array<XidMeaning, 20> xid_table{{
    {13, HealthSeverity::info, "graphics engine exception (usually the application)"},
    {31, HealthSeverity::info, "GPU memory page fault (usually the application)"},
    {43, HealthSeverity::info, "GPU stopped processing (usually the application)"},
    {45, HealthSeverity::info, "preemptive cleanup after an application fault"},
    {48, HealthSeverity::critical, "double-bit ECC error"},
    {61, HealthSeverity::critical, "internal microcontroller breakpoint"},
    {62, HealthSeverity::critical, "internal microcontroller halt"},
    {63, HealthSeverity::warning, "ECC page retirement or row remapping recorded"},
    {64, HealthSeverity::critical, "ECC page retirement or row remapping failure"},
    {69, HealthSeverity::critical, "graphics engine class error"},
    {74, HealthSeverity::critical, "NVLink error"},
    {79, HealthSeverity::critical, "GPU has fallen off the bus"},
    {92, HealthSeverity::warning, "high single-bit ECC error rate"},
    {94, HealthSeverity::warning, "contained ECC error"},
    {95, HealthSeverity::critical, "uncontained ECC error"},
    {119, HealthSeverity::critical, "GSP RPC timeout"},
    {120, HealthSeverity::critical, "GSP error"},
    {121, HealthSeverity::warning, "C2C link corrected error"},
    {140, HealthSeverity::critical, "ECC unrecovered error"},
    {154, HealthSeverity::critical, "GPU recovery action required"},
}};

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// The text of a /dev/kmsg record: after "PRIO,SEQ,USEC,FLAGS;" when there,
// up to the first newline (what follows are the record's key=value lines).
std::string_view record_text(std::string_view record) {
  if (const auto semi = record.find(';'); semi != std::string_view::npos) {
    const std::string_view prefix = record.substr(0, semi);
    const bool kmsg_prefix = !prefix.empty() && std::all_of(prefix.begin(), prefix.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c)) || c == ',' || c == '-' || c == '+' || c == 'c';
    });
    if (kmsg_prefix) record.remove_prefix(semi + 1);
  }
  if (const auto nl = record.find('\n'); nl != std::string_view::npos) record = record.substr(0, nl);
  // dmesg's "[12345.678901] " time stamp.
  if (record.starts_with('[')) {
    if (const auto close = record.find("] "); close != std::string_view::npos && close < 20) record.remove_prefix(close + 2);
  }
  return text::trim(record);
}

std::optional<HealthReport> nvidia_xid(std::string_view line) {
  const auto xid = line.find("Xid (");
  if (xid == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(xid + 5);
  const auto close = rest.find(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view where = rest.substr(0, close);
  if (where.starts_with("PCI:")) where.remove_prefix(4);
  rest.remove_prefix(close + 1);
  if (!rest.starts_with(':')) return std::nullopt;
  rest = text::trim(rest.substr(1));
  std::size_t digits = 0;
  while (digits < rest.size() && digits < 6 && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
  if (digits == 0) return std::nullopt;
  const auto code = text::parse_u64(rest.substr(0, digits), 10);
  if (!code || *code > 0xffffffffu) return std::nullopt;
  HealthReport report;
  report.source = "nvidia_xid";
  report.code = static_cast<std::uint32_t>(*code);
  const std::string address = where.find('.') == std::string_view::npos ? text::cat(where, ".0") : std::string(where);
  if (const auto pci = PciAddress::parse(address)) report.pci_bus_id = pci->to_string();
  const auto known = std::find_if(xid_table.begin(), xid_table.end(), [&](const XidMeaning& m) { return m.code == *code; });
  report.severity = known != xid_table.end() ? known->severity : HealthSeverity::warning;
  report.summary = known != xid_table.end() ? std::string(known->summary) : text::cat("Xid ", *code);
  return report;
}

std::optional<HealthReport> amdgpu_ras(std::string_view line) {
  const auto at = line.find("amdgpu ");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(at + 7);
  const auto colon = rest.find(": ");
  if (colon == std::string_view::npos) return std::nullopt;
  const auto pci = PciAddress::parse(rest.substr(0, colon));
  if (!pci) return std::nullopt;
  const std::string text_lower = lower(rest.substr(colon + 2));
  HealthReport report;
  report.source = "amdgpu_ras";
  report.pci_bus_id = pci->to_string();
  const auto has = [&](std::string_view word) { return text_lower.find(word) != std::string::npos; };
  if (has("uncorrectable") || has("poison") || has("fatal") || has("ras controller interrupt triggered")) {
    report.severity = HealthSeverity::critical;
    report.summary = "uncorrectable hardware error (RAS)";
  } else if (has("correctable") || has("ecc") || has("ras") || has("[hardware error]")) {
    report.severity = HealthSeverity::warning;
    report.summary = "corrected hardware error (RAS/ECC)";
  } else if (has("gpu reset")) {
    report.severity = HealthSeverity::warning;
    report.summary = "GPU reset";
  } else {
    return std::nullopt;
  }
  return report;
}

}  // namespace

std::string_view to_string(HealthSeverity severity) noexcept {
  switch (severity) {
    case HealthSeverity::info: return "info";
    case HealthSeverity::warning: return "warning";
    case HealthSeverity::critical: return "critical";
  }
  return "warning";
}

std::optional<HealthReport> parse_kernel_log_record(std::string_view record) {
  const std::string_view line = record_text(record.substr(0, 8192));
  auto report = nvidia_xid(line);
  if (!report) report = amdgpu_ras(line);
  if (report) report->message = text::excerpt(line, max_message);
  return report;
}

}  // namespace hwaccel
