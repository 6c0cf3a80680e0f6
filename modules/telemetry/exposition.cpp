// The Prometheus text exposition format (0.0.4) and OpenMetrics 1.0 of a
// registry and a telemetry sample. Metric names and units follow the
// Prometheus conventions (base units: bytes, seconds, hertz, celsius, watts,
// joules; ratios 0..1; counters end in _total); docs/metrics.md lists them.
module;
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.telemetry;

namespace hwaccel {
namespace {

using Labels = std::vector<std::pair<std::string_view, std::string>>;

void append_escaped(std::string& out, std::string_view value) {
  for (const char c : value) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
}

std::string number_text(double v) {
  char buffer[64];
  const auto r = std::to_chars(buffer, buffer + sizeof buffer, v);
  return std::string(buffer, r.ptr);
}

class Exposition {
 public:
  explicit Exposition(MetricsFormat format) : format_(format) {}

  /// Declares a family (in output order); `name` is the sample name, ending
  /// in _total for counters.
  void family(std::string_view name, std::string_view type, std::string_view help) {
    families_.push_back(Family{std::string(name), std::string(type), std::string(help), {}});
  }

  void sample(std::string_view name, const Labels& labels, double value) { add(name, labels, number_text(value)); }
  void sample(std::string_view name, const Labels& labels, std::uint64_t value) { add(name, labels, std::to_string(value)); }

  std::string text() const {
    std::string out;
    out.reserve(16384);
    for (const auto& f : families_) {
      if (f.samples.empty()) continue;
      // OpenMetrics names a counter family without its _total suffix.
      std::string_view family_name = f.name;
      if (format_ == MetricsFormat::openmetrics && f.type == "counter" && family_name.ends_with("_total"))
        family_name.remove_suffix(6);
      out += text::cat("# HELP ", family_name, " ", f.help, "\n# TYPE ", family_name, " ", f.type, "\n");
      for (const auto& s : f.samples) out += s;
    }
    if (format_ == MetricsFormat::openmetrics) out += "# EOF\n";
    return out;
  }

 private:
  struct Family {
    std::string name;
    std::string type;
    std::string help;
    std::vector<std::string> samples;
  };

  void add(std::string_view name, const Labels& labels, const std::string& value) {
    for (auto& f : families_) {
      if (f.name != name) continue;
      std::string line(name);
      bool first = true;
      for (const auto& [key, v] : labels) {
        if (v.empty()) continue;  // an empty label is the same as none
        line += first ? "{" : ",";
        first = false;
        line += key;
        line += "=\"";
        append_escaped(line, v);
        line += '"';
      }
      if (!first) line += '}';
      line += ' ';
      line += value;
      line += '\n';
      f.samples.push_back(std::move(line));
      return;
    }
  }

  MetricsFormat format_;
  std::vector<Family> families_;
};

Labels device_labels(const DeviceProfile& d) {
  return {{"device", d.id},
          {"backend", std::string(to_string(d.backend))},
          {"model", d.name},
          {"pci_bus_id", d.pci_bus_id.value_or("")},
          {"uuid", d.uuid.value_or("")},
          {"spec_id", d.spec_id.value_or("")}};
}

Labels with(Labels labels, std::string_view key, std::string value) {
  labels.emplace_back(key, std::move(value));
  return labels;
}

void declare_families(Exposition& e) {
  e.family("hwaccel_build_info", "gauge", "The hwaccel version serving these metrics (always 1).");
  e.family("hwaccel_device_info", "gauge", "A detected device and its static facts (always 1).");
  e.family("hwaccel_device_available", "gauge", "1 when the device is usable and visible to this process, else 0.");
  e.family("hwaccel_device_memory_total_bytes", "gauge", "Device memory size.");
  e.family("hwaccel_device_memory_used_bytes", "gauge", "Device memory in use.");
  e.family("hwaccel_device_memory_free_bytes", "gauge", "Device memory free.");
  e.family("hwaccel_device_utilization_ratio", "gauge", "Share of time the device's main engine was busy (0-1).");
  e.family("hwaccel_device_engine_utilization_ratio", "gauge", "Share of time an engine was busy (0-1): memory, encoder, decoder.");
  e.family("hwaccel_device_temperature_celsius", "gauge", "Temperature by sensor (gpu, memory, edge, junction, mem).");
  e.family("hwaccel_device_temperature_slowdown_celsius", "gauge",
           "Temperature at which the driver slows the clocks, by sensor (nvidia-smi's slowdown temperature, hwmon temp*_crit).");
  e.family("hwaccel_device_thermal_headroom_celsius", "gauge",
           "Degrees left before the device slows its clocks for heat: the least over its sensors of slowdown less reading.");
  e.family("hwaccel_device_power_watts", "gauge", "Power draw.");
  e.family("hwaccel_device_power_limit_watts", "gauge", "Enforced power cap.");
  e.family("hwaccel_device_power_utilization_ratio", "gauge",
           "Power draw as a share of the device's maximum (0-1), where the driver reports only that (AWS Neuron).");
  e.family("hwaccel_device_energy_joules_total", "counter", "Energy consumed since the driver loaded.");
  e.family("hwaccel_device_clock_hertz", "gauge", "Current clock by domain (graphics, sm, memory, video, fabric, soc).");
  e.family("hwaccel_device_fan_speed_ratio", "gauge", "Fan speed as a share of its maximum (0-1).");
  e.family("hwaccel_device_pcie_link_generation", "gauge", "Current PCIe link generation.");
  e.family("hwaccel_device_pcie_link_width", "gauge", "Current PCIe link width (lanes).");
  e.family("hwaccel_device_ecc_errors_total", "counter",
           "ECC errors by type (corrected, uncorrected), scope (volatile: since the driver loaded; aggregate: lifetime) and block.");
  e.family("hwaccel_partition_memory_total_bytes", "gauge", "Memory of a device partition (MIG instance).");
  e.family("hwaccel_partition_memory_used_bytes", "gauge", "Memory of a device partition (MIG instance) in use.");
  e.family("hwaccel_partition_memory_free_bytes", "gauge", "Memory of a device partition (MIG instance) free.");
  e.family("hwaccel_device_link_errors_total", "counter",
           "Interconnect link errors since the driver loaded, summed over the device's links, by link kind (nvlink) and type (replay, recovery, crc).");
  e.family("hwaccel_device_retired_pages_total", "counter", "Memory pages retired, by cause (single_bit, double_bit).");
  e.family("hwaccel_device_remapped_rows_total", "counter", "Memory rows remapped, by type (correctable, uncorrectable).");
  e.family("hwaccel_device_remapped_rows_pending", "gauge", "1 when a row remapping waits for a GPU reset.");
  e.family("hwaccel_device_remapped_rows_failure", "gauge", "1 when a row remapping failed.");
  e.family("hwaccel_device_clock_event_reason_active", "gauge",
           "1 when a clock-event (throttle) reason is active, 0 when supported and inactive.");
  e.family("hwaccel_host_load_average", "gauge", "Host load average over 1, 5 and 15 minutes.");
  e.family("hwaccel_host_memory_total_bytes", "gauge", "Host memory size.");
  e.family("hwaccel_host_memory_available_bytes", "gauge", "Host memory available.");
  e.family("hwaccel_telemetry_sample_duration_seconds", "gauge", "Time the last telemetry sample took.");
  e.family("hwaccel_telemetry_warnings", "gauge", "Problems of the last telemetry sample, by backend.");
  e.family("hwaccel_scrapes_total", "counter", "Scrapes served.");
  e.family("hwaccel_scrape_errors_total", "counter", "Scrapes where a telemetry source failed, by source backend.");
  e.family("hwaccel_device_thermal_slowdown_eta_seconds", "gauge",
           "Predicted time until the device's temperature trend reaches its slowdown threshold, while within the "
           "exporter's horizon (default 5 minutes).");
  e.family("hwaccel_accelerators", "gauge", "Accelerators in the inventory that are usable and visible to this process.");
  e.family("hwaccel_baseline_accelerators", "gauge",
           "Accelerators the node's baseline has (hwaccel serve --baseline: a file hwaccel fleet check takes).");
  e.family("hwaccel_health_events_total", "counter",
           "Health reports from the kernel log (NVIDIA Xid, amdgpu RAS) and the thermal trend, by device, source, code "
           "and severity.");
  e.family("hwaccel_thermal_warnings_total", "counter",
           "Thermal-trend warnings raised: a device's trend came within the horizon of its slowdown threshold.");
}

}  // namespace

std::string_view content_type(MetricsFormat format) noexcept {
  return format == MetricsFormat::openmetrics ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                                              : "text/plain; version=0.0.4; charset=utf-8";
}

std::string metrics_text(const AcceleratorRegistry& registry, const TelemetrySample& sample,
                         const ExporterCounters& counters, MetricsFormat format) {
  Exposition e(format);
  declare_families(e);
  e.sample("hwaccel_build_info", {{"version", std::string(library_version())}}, std::uint64_t{1});

  std::map<std::string_view, const DeviceTelemetry*> telemetry;
  for (const auto& t : sample.devices) telemetry.emplace(t.device_id, &t);

  for (const DeviceProfile& d : registry.devices()) {
    const Labels labels = device_labels(d);
    Labels info = labels;
    info.emplace_back("family", std::string(to_string(d.family)));
    info.emplace_back("vendor", d.vendor.value_or(""));
    info.emplace_back("driver_version", d.driver_version.value_or(""));
    info.emplace_back("firmware_version", d.firmware_version.value_or(""));
    info.emplace_back("compute_capability", d.compute_capability.value_or(""));
    info.emplace_back("architecture", d.architecture.value_or(""));
    e.sample("hwaccel_device_info", info, std::uint64_t{1});
    e.sample("hwaccel_device_available", labels, std::uint64_t{d.available && d.visible ? 1u : 0u});

    const auto found = telemetry.find(d.id);
    const DeviceTelemetry* t = found == telemetry.end() ? nullptr : found->second;
    const auto total = t && t->memory_total_bytes ? t->memory_total_bytes : d.memory_bytes;
    if (total) e.sample("hwaccel_device_memory_total_bytes", labels, *total);
    if (!t) continue;
    if (t->memory_used_bytes) e.sample("hwaccel_device_memory_used_bytes", labels, *t->memory_used_bytes);
    if (t->memory_free_bytes) e.sample("hwaccel_device_memory_free_bytes", labels, *t->memory_free_bytes);
    if (t->utilization) e.sample("hwaccel_device_utilization_ratio", labels, *t->utilization);
    for (const auto& [engine, ratio] : t->engine_utilization)
      e.sample("hwaccel_device_engine_utilization_ratio", with(labels, "engine", engine), ratio);
    for (const auto& reading : t->temperatures) {
      e.sample("hwaccel_device_temperature_celsius", with(labels, "sensor", reading.sensor), reading.celsius);
      if (reading.slowdown_celsius)
        e.sample("hwaccel_device_temperature_slowdown_celsius", with(labels, "sensor", reading.sensor),
                 *reading.slowdown_celsius);
    }
    if (const auto headroom = thermal_headroom_celsius(*t))
      e.sample("hwaccel_device_thermal_headroom_celsius", labels, *headroom);
    for (const ThermalWarning& w : counters.thermal_approaching)
      if (w.device_id == t->device_id)
        e.sample("hwaccel_device_thermal_slowdown_eta_seconds", labels, static_cast<double>(w.eta.count()));
    if (t->power_watts) e.sample("hwaccel_device_power_watts", labels, *t->power_watts);
    if (t->power_limit_watts) e.sample("hwaccel_device_power_limit_watts", labels, *t->power_limit_watts);
    if (t->power_utilization) e.sample("hwaccel_device_power_utilization_ratio", labels, *t->power_utilization);
    if (t->energy_joules) e.sample("hwaccel_device_energy_joules_total", labels, *t->energy_joules);
    for (const auto& [clock, mhz] : t->clocks_mhz)
      e.sample("hwaccel_device_clock_hertz", with(labels, "clock", clock), mhz * 1e6);
    if (t->fan_speed_ratio) e.sample("hwaccel_device_fan_speed_ratio", labels, *t->fan_speed_ratio);
    if (t->pcie_generation) e.sample("hwaccel_device_pcie_link_generation", labels, std::uint64_t{*t->pcie_generation});
    if (t->pcie_width) e.sample("hwaccel_device_pcie_link_width", labels, std::uint64_t{*t->pcie_width});
    for (const auto& ecc : t->ecc_errors)
      e.sample("hwaccel_device_ecc_errors_total",
               with(with(with(labels, "type", ecc.type), "scope", ecc.scope), "block", ecc.block), ecc.count);
    for (const auto& part : t->partitions) {
      const auto profile = std::find_if(d.partitions.begin(), d.partitions.end(),
                                        [&](const DevicePartition& p) { return p.id == part.partition_id; });
      Labels partition_labels = with(labels, "partition", part.partition_id);
      if (profile != d.partitions.end() && !profile->profile.empty())
        partition_labels = with(std::move(partition_labels), "profile", profile->profile);
      if (part.memory_total_bytes) e.sample("hwaccel_partition_memory_total_bytes", partition_labels, *part.memory_total_bytes);
      if (part.memory_used_bytes) e.sample("hwaccel_partition_memory_used_bytes", partition_labels, *part.memory_used_bytes);
      if (part.memory_free_bytes) e.sample("hwaccel_partition_memory_free_bytes", partition_labels, *part.memory_free_bytes);
    }
    // Summed over the device's links, as dcgm-exporter does: 18 links x 3 types per
    // GPU would be 432 series on an 8-GPU node. The JSON keeps each link.
    std::map<std::string, std::uint64_t> link_errors_by_type;
    for (const auto& link : t->link_errors) link_errors_by_type[link.type] += link.count;
    for (const auto& [type, count] : link_errors_by_type)
      e.sample("hwaccel_device_link_errors_total", with(with(labels, "link_kind", "nvlink"), "type", type), count);
    if (t->retired_pages_single_bit)
      e.sample("hwaccel_device_retired_pages_total", with(labels, "cause", "single_bit"), *t->retired_pages_single_bit);
    if (t->retired_pages_double_bit)
      e.sample("hwaccel_device_retired_pages_total", with(labels, "cause", "double_bit"), *t->retired_pages_double_bit);
    if (t->remapped_rows_correctable)
      e.sample("hwaccel_device_remapped_rows_total", with(labels, "type", "correctable"), *t->remapped_rows_correctable);
    if (t->remapped_rows_uncorrectable)
      e.sample("hwaccel_device_remapped_rows_total", with(labels, "type", "uncorrectable"), *t->remapped_rows_uncorrectable);
    if (t->remapped_rows_pending)
      e.sample("hwaccel_device_remapped_rows_pending", labels, std::uint64_t{*t->remapped_rows_pending ? 1u : 0u});
    if (t->remapped_rows_failure)
      e.sample("hwaccel_device_remapped_rows_failure", labels, std::uint64_t{*t->remapped_rows_failure ? 1u : 0u});
    for (const auto& [reason, active] : t->clock_event_reasons)
      e.sample("hwaccel_device_clock_event_reason_active", with(labels, "reason", reason), std::uint64_t{active ? 1u : 0u});
  }

  const HostTelemetry& h = sample.host;
  for (const auto& [period, value] : {std::pair{"1m", h.load1}, std::pair{"5m", h.load5}, std::pair{"15m", h.load15}})
    if (value) e.sample("hwaccel_host_load_average", {{"period", period}}, *value);
  if (h.memory_total_bytes) e.sample("hwaccel_host_memory_total_bytes", {}, *h.memory_total_bytes);
  if (h.memory_available_bytes) e.sample("hwaccel_host_memory_available_bytes", {}, *h.memory_available_bytes);
  e.sample("hwaccel_telemetry_sample_duration_seconds", {}, static_cast<double>(sample.elapsed.count()) / 1e6);
  std::map<std::string, std::uint64_t> warnings;
  for (const auto& w : sample.warnings) ++warnings[w.backend];
  for (const auto& [backend, n] : warnings) e.sample("hwaccel_telemetry_warnings", {{"backend", backend}}, n);
  e.sample("hwaccel_scrapes_total", {}, counters.scrapes);
  for (const auto& [source, n] : counters.scrape_errors) e.sample("hwaccel_scrape_errors_total", {{"source", source}}, n);
  e.sample("hwaccel_thermal_warnings_total", {}, counters.thermal_warnings);
  std::uint64_t accelerators = 0;
  for (const auto& d : registry.devices()) accelerators += d.family != Family::cpu && d.available && d.visible;
  e.sample("hwaccel_accelerators", {}, accelerators);
  if (counters.baseline_accelerators)
    e.sample("hwaccel_baseline_accelerators", {}, std::uint64_t{*counters.baseline_accelerators});
  for (const auto& [key, n] : counters.health_events)
    e.sample("hwaccel_health_events_total",
             {{"device", key.device}, {"source", key.source}, {"code", key.code}, {"severity", key.severity}}, n);
  return e.text();
}

}  // namespace hwaccel
