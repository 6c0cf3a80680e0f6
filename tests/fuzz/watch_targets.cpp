// Fuzz targets for what watching reads from outside: kernel uevent messages,
// kernel log records, and fixture timelines (timeline.json).
#include <string>
#include <string_view>

#include "fuzz_support.hpp"

import hwaccel;

namespace hwaccel::fuzz {

void uevent_message(std::string_view, std::string_view input, Findings& findings) {
  const auto parsed = parse_uevent(input);
  if (!parsed) return;
  findings.check(!parsed->action.empty() && parsed->devpath.starts_with('/'), "uevent: accepted without action or path");
  const std::string again = format_uevent(*parsed);
  const auto reread = parse_uevent(again);
  if (!findings.check(reread.has_value(), "uevent: what format_uevent wrote does not parse")) return;
  findings.check(*reread == *parsed, "uevent: a round trip changed it");
}

void kernel_log_record(std::string_view, std::string_view input, Findings& findings) {
  const auto report = parse_kernel_log_record(input);
  if (!report) return;
  findings.check(report->message.size() <= 520, "kernel log: an unbounded message was kept");
  findings.check(report->source == "nvidia_xid" || report->source == "amdgpu_ras", "kernel log: unknown source");
  if (report->pci_bus_id) findings.check(PciAddress::parse(*report->pci_bus_id).has_value(), "kernel log: a bad PCI address");
}

void timeline_json(std::string_view, std::string_view input, Findings& findings) {
  const auto timeline = parse_timeline(input);
  if (!timeline) return;
  for (const auto& step : timeline->steps) {
    if (step.state) {
      findings.check(!step.state->starts_with('/'), "timeline: an absolute state was accepted");
      std::string_view rest = *step.state;
      while (!rest.empty()) {
        const std::string_view part = text::next_token(rest, '/');
        findings.check(part != "..", "timeline: a state leaving the fixture was accepted");
      }
    }
    for (const auto& path : step.removed) findings.check(path.starts_with('/'), "timeline: a relative removal");
  }
  const std::string once = write_timeline(*timeline);
  const auto reread = parse_timeline(once);
  if (!findings.check(reread.has_value(), "timeline: what write_timeline wrote does not read back")) return;
  findings.check(write_timeline(*reread) == once, "timeline: a second round trip differs");
}

}  // namespace hwaccel::fuzz
