// A telemetry sample as JSON: the same values as the metrics, for programs
// that read JSON (the Python package, `hwaccel metrics --json`).
module;
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
module hwaccel.telemetry;

namespace hwaccel {

std::string to_json(const TelemetrySample& sample, bool pretty) {
  json::Writer w(pretty);
  w.begin_object();
  w.field("taken_at", std::chrono::duration<double>(sample.taken_at.time_since_epoch()).count());
  w.field("elapsed_us", static_cast<std::int64_t>(sample.elapsed.count()));
  w.key("devices").begin_array();
  for (const auto& d : sample.devices) {
    w.begin_object();
    w.field("device_id", d.device_id).field("source", d.source);
    w.field("utilization", d.utilization);
    if (!d.engine_utilization.empty()) {
      w.key("engine_utilization").begin_object();
      for (const auto& [engine, ratio] : d.engine_utilization) w.field(std::string_view(engine), ratio);
      w.end_object();
    }
    w.field("memory_total_bytes", d.memory_total_bytes).field("memory_used_bytes", d.memory_used_bytes);
    w.field("memory_free_bytes", d.memory_free_bytes);
    if (!d.temperatures.empty()) {
      w.key("temperatures").begin_array();
      for (const auto& t : d.temperatures) {
        w.begin_object().field("sensor", t.sensor).field("celsius", t.celsius);
        if (t.slowdown_celsius) w.field("slowdown_celsius", *t.slowdown_celsius);
        if (t.shutdown_celsius) w.field("shutdown_celsius", *t.shutdown_celsius);
        w.end_object();
      }
      w.end_array();
    }
    if (const auto headroom = thermal_headroom_celsius(d)) w.field("thermal_headroom_celsius", *headroom);
    w.field("power_watts", d.power_watts).field("power_limit_watts", d.power_limit_watts);
    w.field("power_utilization", d.power_utilization);
    w.field("energy_joules", d.energy_joules);
    if (!d.clocks_mhz.empty()) {
      w.key("clocks_mhz").begin_object();
      for (const auto& [clock, mhz] : d.clocks_mhz) w.field(std::string_view(clock), mhz);
      w.end_object();
    }
    w.field("fan_speed_ratio", d.fan_speed_ratio);
    w.field("pcie_generation", d.pcie_generation).field("pcie_width", d.pcie_width);
    if (!d.ecc_errors.empty()) {
      w.key("ecc_errors").begin_array();
      for (const auto& e : d.ecc_errors)
        w.begin_object().field("type", e.type).field("scope", e.scope).field("block", e.block).field("count", e.count).end_object();
      w.end_array();
    }
    if (!d.partitions.empty()) {
      w.key("partitions").begin_array();
      for (const auto& p : d.partitions) {
        w.begin_object().field("partition_id", p.partition_id).field("memory_total_bytes", p.memory_total_bytes);
        w.field("memory_used_bytes", p.memory_used_bytes).field("memory_free_bytes", p.memory_free_bytes).end_object();
      }
      w.end_array();
    }
    if (!d.link_errors.empty()) {
      w.key("link_errors").begin_array();
      for (const auto& e : d.link_errors)
        w.begin_object().field("link", e.link).field("type", e.type).field("count", e.count).end_object();
      w.end_array();
    }
    w.field("retired_pages_single_bit", d.retired_pages_single_bit).field("retired_pages_double_bit", d.retired_pages_double_bit);
    w.field("remapped_rows_correctable", d.remapped_rows_correctable);
    w.field("remapped_rows_uncorrectable", d.remapped_rows_uncorrectable);
    w.field("remapped_rows_pending", d.remapped_rows_pending).field("remapped_rows_failure", d.remapped_rows_failure);
    if (!d.clock_event_reasons.empty()) {
      w.key("clock_event_reasons").begin_object();
      for (const auto& [reason, active] : d.clock_event_reasons) w.field(std::string_view(reason), active);
      w.end_object();
    }
    w.end_object();
  }
  w.end_array();
  w.key("host").begin_object();
  w.field("load1", sample.host.load1).field("load5", sample.host.load5).field("load15", sample.host.load15);
  w.field("memory_total_bytes", sample.host.memory_total_bytes);
  w.field("memory_available_bytes", sample.host.memory_available_bytes);
  w.end_object();
  w.key("warnings").begin_array();
  for (const auto& warning : sample.warnings)
    w.begin_object().field("backend", warning.backend).field("kind", to_string(warning.kind)).field("message", warning.message).end_object();
  w.end_array();
  w.field("failed_sources", sample.failed_sources);
  if (!sample.processes.empty()) {
    w.key("processes").begin_array();
    for (const DeviceProcess& p : sample.processes) {
      w.begin_object().field("device_id", p.device_id);
      if (!p.partition_id.empty()) w.field("partition_id", p.partition_id);
      w.field("pid", p.pid).field("driver_pid", p.driver_pid).field("container_pid", p.container_pid);
      w.field("pid_namespace", p.pid_namespace).field("uid", p.uid);
      if (!p.user.empty()) w.field("user", p.user);
      w.field("command", p.command).field("kind", p.kind).field("memory_bytes", p.memory_bytes);
      if (!p.engines.empty()) {
        w.key("engines").begin_object();
        for (const auto& [engine, c] : p.engines) {
          w.key(engine).begin_object().field("busy", c.busy).field("total", c.total).field("capacity", c.capacity).end_object();
        }
        w.end_object();
      }
      w.field("source", p.source).end_object();
    }
    w.end_array();
  }
  w.end_object();
  return std::string(w.str());
}

}  // namespace hwaccel
