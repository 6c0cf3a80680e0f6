// End-to-end fuzz targets: the input is a whole machine (machine text: sysfs
// files, links, tool outputs), the real detectors run on it through
// DetectBuilder, and the registry they produce is checked against the
// promises of docs/json.md. These find crashes in the glue between the
// parsers (joins by bus id, merges, visibility), not only in the parsers.
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <simdjson.h>

#include "fuzz_support.hpp"

import hwaccel;

#include "machine_text.hpp"

namespace hwaccel::fuzz {

namespace {

void check_number(std::optional<double> v, std::string_view what, Findings& findings) {
  if (v && !std::isfinite(*v)) findings.add(text::cat(what, " is not finite"));
}

void check_registry(const AcceleratorRegistry& registry, const DetectOptions& options, Findings& findings) {
  const auto devices = registry.devices();
  std::set<std::string, std::less<>> ids;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const DeviceProfile& d = devices[i];
    findings.check(options.enabled(d.backend), "a device of a backend that was not selected");
    findings.check(d.id == device_id(d.backend, d.index), "device id is not <backend>:<index>");
    findings.check(ids.insert(d.id).second, "two devices share an id");
    if (i > 0)
      findings.check(std::tie(devices[i - 1].backend, devices[i - 1].index) < std::tie(d.backend, d.index),
                     "devices are not sorted by backend and index");
    if (d.memory_bytes) {
      if (d.memory_free_bytes) findings.check(*d.memory_free_bytes <= *d.memory_bytes, "memory_free_bytes > memory_bytes");
      if (d.memory_used_bytes) findings.check(*d.memory_used_bytes <= *d.memory_bytes, "memory_used_bytes > memory_bytes");
    }
    if (d.pci_bus_id) {
      const auto address = PciAddress::parse(*d.pci_bus_id);
      findings.check(address && address->to_string() == *d.pci_bus_id, "pci_bus_id is not in canonical form");
    }
    check_number(d.memory_bandwidth_gbps, "memory_bandwidth_gbps", findings);
    check_number(d.power_watts, "power_watts", findings);
    check_number(d.power_limit_watts, "power_limit_watts", findings);
    check_number(d.temperature_c, "temperature_c", findings);
    check_number(d.utilization_percent, "utilization_percent", findings);
    if (d.runtime_index) findings.check(d.visible, "a hidden device has a runtime index");
    std::set<std::string, std::less<>> partition_ids;
    for (const auto& p : d.partitions) {
      findings.check(partition_ids.insert(p.id).second, "two partitions of a device share an id");
      findings.check(p.id.starts_with(d.id + "/"), "a partition id does not start with its device's id");
      ids.insert(p.id);
    }
  }
  for (const auto& link : registry.links()) {
    findings.check(ids.contains(link.a) && ids.contains(link.b), "a link names a device that is not in the registry");
    findings.check(link.a != link.b, "a device linked to itself");
    check_number(link.bandwidth_gbps, "link bandwidth", findings);
  }
  for (const auto& interconnect : registry.interconnects())
    for (const auto& id : interconnect.device_ids)
      findings.check(ids.contains(id), "an interconnect names a device that is not in the registry");
  for (const auto& warning : registry.warnings()) {
    findings.check(!warning.backend.empty() && !warning.message.empty(), "a warning without a source or a message");
    // The orchestrator turns a detector's exception into this warning, so
    // that callers survive; for the fuzzer it is a crash all the same. (The
    // words alone may also be fuzzed tool output that a warning quotes.)
    if (warning.message.starts_with(text::cat(warning.backend, " stopped on an internal error (")))
      findings.add(text::cat("a detector threw: ", warning.message));
  }

  const std::string json_text = to_json(registry);
  findings.check(simdjson::validate_utf8(json_text.data(), json_text.size()), "registry JSON is not valid UTF-8");
  const auto reread = registry_from_json(json_text);
  if (!findings.check(reread.has_value(), "registry JSON does not read back")) return;
  findings.check(to_json(*reread) == json_text, "registry JSON does not round-trip");
}

}  // namespace

void detect_backend(std::string_view param, std::string_view input, Findings& findings) {
  const auto system = MemorySystem::decode(input);
  DetectBuilder builder = DetectBuilder::none();
  if (param == "probes") {
    builder.system_probes(true);
  } else {
    builder.system_probes(false);
    if (!builder.select(param)) {
      findings.add(text::cat("detect_backend: unknown backend list \"", param, "\" in tests/fuzz/meson.build"));
      return;
    }
  }
  const AcceleratorRegistry registry = builder.detect(*system);
  check_registry(registry, builder.options(), findings);
  // The same machine must give the same answer: nothing may depend on
  // thread timing or uninitialised state. Checked on one input in four (by
  // length, so that a finding reproduces): a detection costs the thread
  // starts of its tool runs, which dominate the time of these targets.
  if (input.size() % 4 == 0) {
    JsonOptions stable;
    stable.include_timings = false;
    findings.check(to_json(builder.detect(*system), stable) == to_json(registry, stable),
                   "two detections of the same machine differ");
  }
}

// hwaccel doctor on a whole machine: its checks read sysfs, /dev, /etc/group
// and the detection's own events, all of which the input controls. Its
// report must keep its promises (docs/doctor.md) whatever the machine holds.
void doctor(std::string_view, std::string_view input, Findings& findings) {
  const auto system = MemorySystem::decode(input);
  const DoctorReport report = run_doctor(*system);
  check_registry(report.registry, DetectBuilder().options(), findings);
  bool blocking = false;
  for (const auto& f : report.findings) {
    blocking = blocking || f.blocking;
    findings.check(!f.cause.empty() && !f.remedy.empty(), "a doctor finding without a cause or a remedy");
    findings.check(f.cause.find('\n') == std::string::npos, "a doctor cause is not one line");
  }
  findings.check(report.usable() == !blocking, "doctor's usable() disagrees with its findings");
  const std::string json = doctor_json(report);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  findings.check(parser.parse(json).get(doc) == simdjson::SUCCESS, "doctor JSON does not parse");
  findings.check(!doctor_text(report).empty(), "doctor text is empty");
}

// Telemetry of a whole machine and its exposition: every sample line must be
// NAME{labels} VALUE with a finite value, whatever sysfs and nvidia-smi hold.
void telemetry_machine(std::string_view, std::string_view input, Findings& findings) {
  const auto system = MemorySystem::decode(input);
  const AcceleratorRegistry registry = DetectBuilder().detect(*system);
  TelemetryOptions options;
  options.processes = true;
  const TelemetrySample sample = sample_telemetry(registry, *system, options);
  for (const auto& p : sample.processes) {
    findings.check(registry.find(p.device_id) != nullptr, "a process on a device the registry does not have");
    findings.check(p.pid || p.driver_pid, "a process without any PID");
  }
  for (const auto& d : sample.devices) {
    findings.check(registry.find(d.device_id) != nullptr, "telemetry for a device the registry does not have");
    if (d.utilization) findings.check(*d.utilization >= 0 && *d.utilization <= 1, "utilization outside 0..1");
    if (d.power_utilization)
      findings.check(*d.power_utilization >= 0 && *d.power_utilization <= 1, "power utilization outside 0..1");
    if (d.fan_speed_ratio) findings.check(*d.fan_speed_ratio >= 0 && *d.fan_speed_ratio <= 1, "fan outside 0..1");
  }
  for (const auto format : {MetricsFormat::prometheus_text, MetricsFormat::openmetrics}) {
    const std::string text = metrics_text(registry, sample, {}, format);
    std::string_view rest = text;
    while (!rest.empty()) {
      const std::string_view line = text::next_line(rest);
      if (line.empty() || line.front() == '#') continue;
      const auto space = line.rfind(' ');
      findings.check(space != std::string_view::npos && space > 0, "a metric line without a value");
      if (space == std::string_view::npos) break;
      const auto value = text::parse_double(line.substr(space + 1));
      findings.check(value.has_value(), text::cat("a metric value is not a finite number: ", text::excerpt(line, 120)));
      findings.check(line.find('\n') == std::string_view::npos, "a raw newline inside a metric line");
    }
    if (format == MetricsFormat::openmetrics) findings.check(text.ends_with("# EOF\n"), "OpenMetrics without # EOF");
  }
}

}  // namespace hwaccel::fuzz
