// A telemetry sample read back from its JSON (what `hwaccel serve` answers
// at /telemetry): the fleet view of `hwaccel top` reads other nodes with it.
// Lenient about keys (another version of hwaccel may add some), strict
// about types and bounds: a value of the wrong type or out of range is left
// out with a warning, never guessed.
module;
#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.telemetry;
import hwaccel.json_fields;

namespace hwaccel {
namespace {

constexpr std::size_t max_devices = 4096;
constexpr std::size_t max_processes = 16384;
constexpr std::size_t max_list = 4096;
constexpr std::size_t max_text = 4096;

class Reader {
 public:
  explicit Reader(std::vector<Warning>& warnings) : warnings_(warnings) {}

  void bad(std::string_view where, std::string_view key, std::string_view what) {
    if (count_++ < 8)
      warnings_.push_back(Warning{"telemetry", WarningKind::invalid_value, text::cat(where, ": \"", key, "\" ", what, "; left out")});
  }
  std::optional<std::string> text(const json::Value& object, std::string_view key, std::string_view where) {
    const auto v = object.member(key);
    if (!v) return std::nullopt;
    if (v->kind() != json::Value::Kind::string || v->string().size() > max_text) {
      bad(where, key, "is not a string of at most 4096 characters");
      return std::nullopt;
    }
    return std::string(v->string());
  }
  std::optional<double> number(const json::Value& object, std::string_view key, std::string_view where, double lo, double hi) {
    const auto v = object.member(key);
    if (!v) return std::nullopt;
    const auto n = v->number();
    if (!n || !std::isfinite(*n) || *n < lo || *n > hi) {
      bad(where, key, "is not a number in range");
      return std::nullopt;
    }
    return n;
  }
  std::optional<std::uint64_t> whole(const json::Value& object, std::string_view key, std::string_view where,
                                     std::uint64_t hi = std::uint64_t{1} << 62) {
    const auto v = object.member(key);
    if (!v) return std::nullopt;
    const auto n = v->whole();
    if (!n || *n > hi) {
      bad(where, key, "is not a whole number in range");
      return std::nullopt;
    }
    return n;
  }
  std::optional<bool> boolean(const json::Value& object, std::string_view key, std::string_view where) {
    const auto v = object.member(key);
    if (!v) return std::nullopt;
    const auto b = v->boolean();
    if (!b) bad(where, key, "is not true or false");
    return b;
  }
  std::vector<json::Value> list(const json::Value& object, std::string_view key, std::string_view where, std::size_t most) {
    const auto v = object.member(key);
    if (!v) return {};
    if (v->kind() != json::Value::Kind::array) {
      bad(where, key, "is not an array");
      return {};
    }
    auto items = v->elements();
    if (items.size() > most) {
      bad(where, key, text::cat("has more than ", most, " elements"));
      items.resize(most);
    }
    return items;
  }
  // An object of numbers by name ("clocks_mhz": {"sm": 1980}): names are
  // short identifiers, at most 64 of them.
  template <class Put>
  void named_numbers(const json::Value& object, std::string_view key, std::string_view where, double lo, double hi, Put put) {
    const auto v = object.member(key);
    if (!v) return;
    if (v->kind() != json::Value::Kind::object) {
      bad(where, key, "is not an object");
      return;
    }
    std::size_t n = 0;
    for (const auto& [name, value] : v->members()) {
      if (++n > 64 || name.empty() || name.size() > 32) {
        bad(where, key, "has a name that is empty or too long, or too many names");
        return;
      }
      if (const auto x = number(*v, name, text::cat(where, ".", key), lo, hi)) put(name, *x);
    }
  }

 private:
  std::vector<Warning>& warnings_;
  std::size_t count_ = 0;
};

std::uint32_t small(std::optional<std::uint64_t> v) { return static_cast<std::uint32_t>(v.value_or(0)); }

}  // namespace

Result<TelemetrySample> telemetry_from_json(std::string_view text) {
  auto document = json::Document::parse(text, "the telemetry sample");
  if (!document) return fail(document.error());
  const json::Value root = document->root();
  if (root.kind() != json::Value::Kind::object) return fail(ErrorKind::parse_error, "the telemetry sample is not a JSON object");
  if (!root.member("devices")) return fail(ErrorKind::parse_error, "the telemetry sample has no \"devices\": not a sample of hwaccel's");
  TelemetrySample s;
  std::vector<Warning> problems;
  Reader read(problems);
  // Seconds since 1970 that system_clock (nanoseconds in 64 bits) can hold: up to 2255.
  if (const auto t = read.number(root, "taken_at", "sample", 0, 9e9))
    s.taken_at = std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::duration<double>(*t)));
  if (const auto e = read.whole(root, "elapsed_us", "sample")) s.elapsed = std::chrono::microseconds(*e);
  for (const json::Value& d : read.list(root, "devices", "sample", max_devices)) {
    DeviceTelemetry t;
    const auto id = read.text(d, "device_id", "device");
    if (!id || id->empty()) {
      read.bad("device", "device_id", "is missing");
      continue;
    }
    t.device_id = *id;
    const std::string where = "device " + t.device_id;
    t.source = read.text(d, "source", where).value_or("");
    t.utilization = read.number(d, "utilization", where, 0, 1);
    read.named_numbers(d, "engine_utilization", where, 0, 1, [&](std::string_view n, double v) { t.engine_utilization[std::string(n)] = v; });
    t.memory_total_bytes = read.whole(d, "memory_total_bytes", where);
    t.memory_used_bytes = read.whole(d, "memory_used_bytes", where);
    t.memory_free_bytes = read.whole(d, "memory_free_bytes", where);
    for (const json::Value& r : read.list(d, "temperatures", where, 64)) {
      const auto sensor = read.text(r, "sensor", where);
      const auto celsius = read.number(r, "celsius", where, -273, 1000);
      if (sensor && celsius)
        t.temperatures.push_back({*sensor, *celsius, read.number(r, "slowdown_celsius", where, -273, 1000),
                                  read.number(r, "shutdown_celsius", where, -273, 1000)});
    }
    t.power_watts = read.number(d, "power_watts", where, 0, 1e6);
    t.power_limit_watts = read.number(d, "power_limit_watts", where, 0, 1e6);
    t.power_utilization = read.number(d, "power_utilization", where, 0, 1);
    t.energy_joules = read.number(d, "energy_joules", where, 0, 1e18);
    read.named_numbers(d, "clocks_mhz", where, 0, 1e6, [&](std::string_view n, double v) { t.clocks_mhz[std::string(n)] = v; });
    t.fan_speed_ratio = read.number(d, "fan_speed_ratio", where, 0, 1);
    if (const auto g = read.whole(d, "pcie_generation", where, 16)) t.pcie_generation = small(g);
    if (const auto w = read.whole(d, "pcie_width", where, 64)) t.pcie_width = small(w);
    for (const json::Value& e : read.list(d, "ecc_errors", where, 256)) {
      const auto type = read.text(e, "type", where);
      const auto scope = read.text(e, "scope", where);
      const auto block = read.text(e, "block", where);
      const auto count = read.whole(e, "count", where);
      if (type && scope && count) t.ecc_errors.push_back({*type, *scope, block.value_or("total"), *count});
    }
    for (const json::Value& p : read.list(d, "partitions", where, 64)) {
      DeviceTelemetry::PartitionTelemetry pt;
      pt.partition_id = read.text(p, "partition_id", where).value_or("");
      if (pt.partition_id.empty()) continue;
      pt.memory_total_bytes = read.whole(p, "memory_total_bytes", where);
      pt.memory_used_bytes = read.whole(p, "memory_used_bytes", where);
      pt.memory_free_bytes = read.whole(p, "memory_free_bytes", where);
      t.partitions.push_back(std::move(pt));
    }
    for (const json::Value& e : read.list(d, "link_errors", where, max_list)) {
      const auto link = read.whole(e, "link", where, 4096);
      const auto type = read.text(e, "type", where);
      const auto count = read.whole(e, "count", where);
      if (link && type && count) t.link_errors.push_back({small(link), *type, *count});
    }
    t.retired_pages_single_bit = read.whole(d, "retired_pages_single_bit", where);
    t.retired_pages_double_bit = read.whole(d, "retired_pages_double_bit", where);
    t.remapped_rows_correctable = read.whole(d, "remapped_rows_correctable", where);
    t.remapped_rows_uncorrectable = read.whole(d, "remapped_rows_uncorrectable", where);
    t.remapped_rows_pending = read.boolean(d, "remapped_rows_pending", where);
    t.remapped_rows_failure = read.boolean(d, "remapped_rows_failure", where);
    if (const auto reasons = d.member("clock_event_reasons"); reasons && reasons->kind() == json::Value::Kind::object)
      for (const auto& [name, value] : reasons->members())
        if (!name.empty() && name.size() <= 40 && t.clock_event_reasons.size() < 64)
          if (const auto b = read.boolean(*reasons, name, where)) t.clock_event_reasons[std::string(name)] = *b;
    s.devices.push_back(std::move(t));
  }
  if (const auto host = root.member("host"); host && host->kind() == json::Value::Kind::object) {
    s.host.load1 = read.number(*host, "load1", "host", 0, 1e6);
    s.host.load5 = read.number(*host, "load5", "host", 0, 1e6);
    s.host.load15 = read.number(*host, "load15", "host", 0, 1e6);
    s.host.memory_total_bytes = read.whole(*host, "memory_total_bytes", "host");
    s.host.memory_available_bytes = read.whole(*host, "memory_available_bytes", "host");
  }
  for (const json::Value& w : read.list(root, "warnings", "sample", 256)) {
    Warning warning;
    warning.backend = read.text(w, "backend", "warning").value_or("");
    warning.message = read.text(w, "message", "warning").value_or("");
    if (const auto kind = read.text(w, "kind", "warning"))
      if (const auto k = parse_warning_kind(*kind)) warning.kind = *k;
    if (!warning.message.empty()) s.warnings.push_back(std::move(warning));
  }
  for (const json::Value& f : read.list(root, "failed_sources", "sample", 64))
    if (f.kind() == json::Value::Kind::string) s.failed_sources.emplace_back(f.string());
  for (const json::Value& p : read.list(root, "processes", "sample", max_processes)) {
    DeviceProcess process;
    process.device_id = read.text(p, "device_id", "process").value_or("");
    if (process.device_id.empty()) continue;
    const std::string where = "process on " + process.device_id;
    process.partition_id = read.text(p, "partition_id", where).value_or("");
    const auto pid = [&](std::string_view key) -> std::optional<std::uint32_t> {
      if (const auto v = read.whole(p, key, where, 0xffffffffu)) return static_cast<std::uint32_t>(*v);
      return std::nullopt;
    };
    process.pid = pid("pid");
    process.driver_pid = pid("driver_pid");
    process.container_pid = pid("container_pid");
    process.pid_namespace = read.whole(p, "pid_namespace", where, 0xffffffffffffffffull);
    process.uid = pid("uid");
    process.user = read.text(p, "user", where).value_or("");
    process.command = read.text(p, "command", where).value_or("");
    process.kind = read.text(p, "kind", where).value_or("");
    process.memory_bytes = read.whole(p, "memory_bytes", where);
    process.source = read.text(p, "source", where).value_or("");
    if (const auto engines = p.member("engines"); engines && engines->kind() == json::Value::Kind::object) {
      std::size_t n = 0;
      for (const auto& [name, e] : engines->members()) {
        if (++n > 64 || name.empty() || name.size() > 32 || e.kind() != json::Value::Kind::object) {
          read.bad(where, "engines", "has an engine that is not a short name with an object");
          break;
        }
        EngineCounter c;
        c.busy = read.whole(e, "busy", where).value_or(0);
        c.total = read.whole(e, "total", where);
        c.capacity = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, read.whole(e, "capacity", where, 1024).value_or(1)));
        process.engines[std::string(name)] = c;
      }
    }
    if (!process.pid && !process.driver_pid) continue;
    s.processes.push_back(std::move(process));
  }
  for (auto& w : problems) s.warnings.push_back(std::move(w));
  return s;
}

}  // namespace hwaccel
