// TopView: the frames of `hwaccel top`.
#include "commands.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

import hwaccel;

#include "top_view.hpp"

namespace hwaccel::cli {
using namespace top_text;
namespace {

// A minute of samples at the default interval.
constexpr std::size_t history_length = 60;

std::string_view sort_name(ProcessSort sort) {
  switch (sort) {
    case ProcessSort::memory: return "memory";
    case ProcessSort::engine: return "engine";
    case ProcessSort::pid: return "pid";
    case ProcessSort::user: return "user";
    case ProcessSort::device: return "device";
    case ProcessSort::command: return "command";
  }
  return "memory";
}

std::string bar(std::optional<double> ratio, std::size_t width, bool unicode) {
  std::string out = "[";
  const double r = std::clamp(ratio.value_or(0.0), 0.0, 1.0);
  const auto full = static_cast<std::size_t>(std::lround(r * static_cast<double>(width)));
  for (std::size_t i = 0; i < width; ++i) {
    if (!ratio) out += ' ';
    else if (i < full) out += unicode ? "\u2588" : "|";
    else out += unicode ? "\u00b7" : " ";
  }
  return out + "]";
}

std::string sparkline(const std::deque<double>& values, std::size_t width, bool unicode) {
  static constexpr std::string_view blocks[] = {"\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586", "\u2587", "\u2588"};
  static constexpr std::string_view ascii = "_.-=+*#@";
  std::string out;
  const std::size_t n = std::min(values.size(), width);
  out.append(width - n, ' ');
  for (std::size_t i = values.size() - n; i < values.size(); ++i) {
    const auto level = static_cast<std::size_t>(std::clamp(values[i], 0.0, 1.0) * 7.0 + 0.5);
    if (unicode) out += blocks[level];
    else out += ascii[level];
  }
  return out;
}




std::string process_pid(const DeviceProcess& p) {
  if (p.pid) return fmt::format("{}", *p.pid);
  if (p.driver_pid) return fmt::format("[{}]", *p.driver_pid);
  return "-";
}

}  // namespace

namespace top_text {

std::string bytes_text(std::optional<std::uint64_t> bytes) {
  if (!bytes) return "-";
  const double v = static_cast<double>(*bytes);
  if (v >= 1024.0 * 1024 * 1024) return fmt::format("{:.1f}G", v / (1024.0 * 1024 * 1024));
  return fmt::format("{:.0f}M", v / (1024.0 * 1024));
}

// Display cells of UTF-8 text (one per code point: the view prints no wide characters).
std::size_t cells(std::string_view s) {
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string fit(std::string s, std::size_t width) {
  if (cells(s) <= width) return s;
  std::size_t used = 0, i = 0;
  for (; i < s.size(); ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && ++used > width) break;
  s.resize(i);
  return s;
}

std::string pad(std::string s, std::size_t width) {
  s = fit(std::move(s), width);
  s.append(width - cells(s), ' ');
  return s;
}

std::string pad_left(std::string s, std::size_t width) {
  s = fit(std::move(s), width);
  return std::string(width - cells(s), ' ') + s;
}

std::string percent(std::optional<double> ratio) {
  return ratio ? fmt::format("{:.0f}%", *ratio * 100) : "-";
}

std::optional<double> used_ratio(const DeviceTelemetry& t) {
  const auto total = t.memory_total_bytes;
  auto used = t.memory_used_bytes;
  if (!used && total && t.memory_free_bytes && *t.memory_free_bytes <= *total) used = *total - *t.memory_free_bytes;
  if (!used || !total || *total == 0) return std::nullopt;
  return static_cast<double>(*used) / static_cast<double>(*total);
}

std::optional<double> gpu_temperature(const DeviceTelemetry& t) {
  for (const auto& reading : t.temperatures)
    if (reading.sensor == "gpu" || reading.sensor == "edge" || reading.sensor == "junction" || reading.sensor == "package")
      return reading.celsius;
  if (!t.temperatures.empty()) return t.temperatures.front().celsius;
  return std::nullopt;
}

}  // namespace top_text

TopView::TopView(std::shared_ptr<const AcceleratorRegistry> registry, std::string source, bool unicode)
    : registry_(std::move(registry)), source_(std::move(source)), unicode_(unicode) {}

void TopView::set_registry(std::shared_ptr<const AcceleratorRegistry> registry) {
  registry_ = std::move(registry);
  std::map<std::string, History> kept;
  for (const DeviceProfile& d : registry_->devices())
    if (const auto it = history_.find(d.id); it != history_.end()) kept.emplace(d.id, std::move(it->second));
  history_ = std::move(kept);
}

void TopView::add_sample(TelemetrySample sample) {
  for (const DeviceTelemetry& t : sample.devices) {
    History& h = history_[t.device_id];
    const auto push = [](std::deque<double>& values, std::optional<double> v) {
      values.push_back(v.value_or(0.0));
      while (values.size() > history_length) values.pop_front();
    };
    push(h.utilization, t.utilization);
    push(h.memory, used_ratio(t));
  }
  previous_ = std::move(current_);
  current_ = std::move(sample);
  derive_engine_use();
  const auto listed = listed_processes();
  if (selected_ >= listed.size()) selected_ = listed.empty() ? 0 : listed.size() - 1;
}

std::optional<std::pair<std::string, double>> TopView::engine_of(const DeviceProcess& process) const {
  if (!current_ || current_->processes.empty()) return std::nullopt;
  const auto* first = current_->processes.data();
  if (&process < first || &process >= first + current_->processes.size()) return std::nullopt;
  return busiest_engines_[static_cast<std::size_t>(&process - first)];
}

// Each process's busiest engine since the previous sample, once per sample:
// sorting by engine asks for it at every comparison.
void TopView::derive_engine_use() {
  busiest_engines_.assign(current_ ? current_->processes.size() : 0, std::nullopt);
  if (!previous_ || !current_) return;
  const auto elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(current_->taken_at - previous_->taken_at);
  std::map<std::tuple<std::string_view, std::optional<std::uint32_t>, std::optional<std::uint32_t>>, const DeviceProcess*> before;
  for (const DeviceProcess& p : previous_->processes)
    if (!p.engines.empty()) before.emplace(std::tuple(std::string_view(p.device_id), p.pid, p.driver_pid), &p);
  for (std::size_t i = 0; i < current_->processes.size(); ++i) {
    const DeviceProcess& p = current_->processes[i];
    const auto it = before.find(std::tuple(std::string_view(p.device_id), p.pid, p.driver_pid));
    if (p.engines.empty() || it == before.end()) continue;
    for (const auto& [engine, use] : engine_use(*it->second, p, elapsed))
      if (!busiest_engines_[i] || use > busiest_engines_[i]->second) busiest_engines_[i] = std::pair(engine, use);
  }
}

std::vector<const DeviceProcess*> TopView::listed_processes() const {
  std::vector<const DeviceProcess*> out;
  if (!current_) return out;
  for (const DeviceProcess& p : current_->processes) {
    if (!filter_.empty()) {
      const std::string haystack = fmt::format("{} {} {} {} {}", p.device_id, p.partition_id, process_pid(p), p.user, p.command);
      if (!text::icontains(haystack, filter_)) continue;
    }
    out.push_back(&p);
  }
  const auto key_less = [&](const DeviceProcess* a, const DeviceProcess* b) {
    switch (sort_) {
      case ProcessSort::memory: return a->memory_bytes.value_or(0) < b->memory_bytes.value_or(0);
      case ProcessSort::engine: {
        const auto ea = engine_of(*a), eb = engine_of(*b);
        return (ea ? ea->second : -1.0) < (eb ? eb->second : -1.0);
      }
      case ProcessSort::pid: return a->pid.value_or(a->driver_pid.value_or(0)) < b->pid.value_or(b->driver_pid.value_or(0));
      case ProcessSort::user: return a->user < b->user;
      case ProcessSort::device: return false;  // the sample's order is the registry's
      case ProcessSort::command: return a->command < b->command;
    }
    return false;
  };
  // Ties keep the sample's order (registry order, then memory): the rows are one vector.
  std::sort(out.begin(), out.end(), [&](const DeviceProcess* a, const DeviceProcess* b) {
    if (descending_ ? key_less(b, a) : key_less(a, b)) return true;
    if (descending_ ? key_less(a, b) : key_less(b, a)) return false;
    return std::less<const DeviceProcess*>()(a, b);
  });
  return out;
}

const DeviceProcess* TopView::selected_process() const {
  const auto listed = listed_processes();
  return selected_ < listed.size() ? listed[selected_] : nullptr;
}

void TopView::select_next(int by) {
  const auto n = static_cast<long>(listed_processes().size());
  if (n == 0) return;
  selected_ = static_cast<std::size_t>(std::clamp(static_cast<long>(selected_) + by, 0L, n - 1));
}

void TopView::cycle_sort() {
  sort_ = static_cast<ProcessSort>((static_cast<int>(sort_) + 1) % 6);
  descending_ = sort_ == ProcessSort::memory || sort_ == ProcessSort::engine;
}

void TopView::set_filter(std::string filter) {
  filter_ = std::move(filter);
  selected_ = 0;
}

void TopView::add_event(std::string line, LineStyle style) {
  events_.push_back({std::move(line), style});
  while (events_.size() > 4) events_.pop_front();
}

void TopView::set_message(std::string message, LineStyle style) {
  message_ = std::move(message);
  message_style_ = style;
}

std::vector<ScreenLine> TopView::device_panels(int columns) const {
  std::vector<ScreenLine> lines;
  const auto width = static_cast<std::size_t>(std::max(columns, 40));
  const std::size_t bar_width = width >= 120 ? 20 : 10;
  const std::size_t spark_width = width >= 120 ? 30 : 12;
  std::size_t shown = 0;
  for (const DeviceProfile& d : registry_->devices()) {
    if (d.backend == Backend::cpu) continue;
    ++shown;
    const DeviceTelemetry* t = nullptr;
    if (current_)
      for (const DeviceTelemetry& x : current_->devices)
        if (x.device_id == d.id) t = &x;
    std::string head = fmt::format("{:<10} {}", d.id, d.name);
    if (d.pci_bus_id) head += fmt::format("  {}", *d.pci_bus_id);
    if (t && t->pcie_generation && t->pcie_width) head += fmt::format("  PCIe {}.0 x{}", *t->pcie_generation, *t->pcie_width);
    lines.push_back({fit(head, width), LineStyle::heading});
    if (!t) {
      lines.push_back({"  no telemetry for this device (see the warnings)", LineStyle::dim});
      continue;
    }
    const History* h = nullptr;
    if (const auto it = history_.find(d.id); it != history_.end()) h = &it->second;
    const auto memory_ratio = used_ratio(*t);
    // History from the second sample on (--once has none).
    const bool history = h && h->utilization.size() > 1;
    std::string usage = fmt::format("  UTIL {} {:>4} {}  MEM {} {:>4} {} / {}", bar(t->utilization, bar_width, unicode_),
                                    percent(t->utilization), history ? sparkline(h->utilization, spark_width, unicode_) + " " : std::string(),
                                    bar(memory_ratio, bar_width, unicode_), percent(memory_ratio),
                                    bytes_text(t->memory_used_bytes), bytes_text(t->memory_total_bytes));
    lines.push_back({fit(usage, width), LineStyle::normal});
    std::string power = t->power_watts ? fmt::format("{:.0f}", *t->power_watts) : "-";
    if (t->power_limit_watts) power += fmt::format(" / {:.0f}", *t->power_limit_watts);
    if (t->power_watts || t->power_limit_watts) power += " W";
    const auto temperature = gpu_temperature(*t);
    std::string clocks;
    for (const char* clock : {"sm", "graphics", "memory"})
      if (const auto it = t->clocks_mhz.find(clock); it != t->clocks_mhz.end())
        clocks += fmt::format("{}{} {:.0f}", clocks.empty() ? "" : "  ", clock, it->second);
    std::uint64_t corrected = 0, uncorrected = 0;
    bool ecc = false;
    for (const auto& e : t->ecc_errors)
      if (e.scope == "volatile") {
        ecc = true;
        (e.type == "corrected" ? corrected : uncorrected) += e.count;
      }
    std::string details = fmt::format("  POWER {:<12} TEMP {:<6}", power, temperature ? fmt::format("{:.0f}C", *temperature) : "-");
    if (!clocks.empty()) details += fmt::format(" CLOCKS {} MHz", clocks);
    if (t->fan_speed_ratio) details += fmt::format("  FAN {:.0f}%", *t->fan_speed_ratio * 100);
    if (ecc) details += fmt::format("  ECC {} corrected, {} uncorrected", corrected, uncorrected);
    while (!details.empty() && details.back() == ' ') details.pop_back();
    lines.push_back({fit(details, width), uncorrected > 0 ? LineStyle::warning : LineStyle::normal});
    std::vector<std::string> throttled;
    for (const auto& [reason, active] : t->clock_event_reasons)
      if (active && reason != "gpu_idle") throttled.push_back(reason);
    if (!throttled.empty())
      lines.push_back({fit("  THROTTLE " + text::join(throttled), width), LineStyle::warning});
    // MIG instances and AMD partitions: a row each.
    for (const DevicePartition& p : d.partitions) {
      const DeviceTelemetry::PartitionTelemetry* pt = nullptr;
      for (const auto& x : t->partitions)
        if (x.partition_id == p.id) pt = &x;
      std::size_t processes = 0;
      if (current_)
        processes = static_cast<std::size_t>(std::count_if(current_->processes.begin(), current_->processes.end(),
                                                           [&](const DeviceProcess& x) { return x.partition_id == p.id; }));
      const auto total = pt && pt->memory_total_bytes ? pt->memory_total_bytes : std::optional<std::uint64_t>(p.memory_bytes);
      std::optional<double> ratio;
      if (pt && pt->memory_used_bytes && total && *total > 0)
        ratio = static_cast<double>(*pt->memory_used_bytes) / static_cast<double>(*total);
      std::string row = fmt::format("  {} {:<16} {:<10} MEM {} {:>4} {} / {}   {} process{}", unicode_ ? "\u2514" : "-", p.id,
                                    p.profile, bar(ratio, bar_width, unicode_), percent(ratio),
                                    bytes_text(pt ? pt->memory_used_bytes : std::nullopt), bytes_text(total), processes,
                                    processes == 1 ? "" : "es");
      lines.push_back({fit(row, width), LineStyle::normal});
    }
  }
  if (shown == 0) lines.push_back({"no accelerators found on this machine", LineStyle::dim});
  return lines;
}

std::vector<ScreenLine> TopView::process_table(int columns, std::size_t max_rows) const {
  std::vector<ScreenLine> lines;
  const auto width = static_cast<std::size_t>(std::max(columns, 40));
  const std::string header = fmt::format("{} {} {} {} {} {} {} {}", pad("DEVICE", 16), pad_left("PID", 8), pad_left("CPID", 7),
                                         pad("USER", 10), pad("KIND", 8), pad_left("MEMORY", 7), pad_left("ENGINE", 10), "COMMAND");
  lines.push_back({fit(header, width), LineStyle::heading});
  const auto listed = listed_processes();
  if (listed.empty()) {
    const bool any = current_ && !current_->processes.empty();
    lines.push_back({any ? fmt::format("no process matches \"{}\"", filter_) : "no processes on the devices", LineStyle::dim});
    return lines;
  }
  // Scrolled so that the selection stays in view.
  std::size_t first = 0;
  if (max_rows > 0 && selected_ >= max_rows) first = selected_ - max_rows + 1;
  for (std::size_t i = first; i < listed.size() && (max_rows == 0 || i < first + max_rows); ++i) {
    const DeviceProcess& p = *listed[i];
    const auto engine = engine_of(p);
    const std::string device = p.partition_id.empty() ? p.device_id : p.partition_id;
    std::string row = fmt::format("{} {} {} {} {} {} {} {}", pad(device, 16), pad_left(process_pid(p), 8),
                                  pad_left(p.container_pid ? fmt::format("{}", *p.container_pid) : "-", 7),
                                  pad(p.user.empty() ? "-" : p.user, 10), pad(p.kind, 8), pad_left(bytes_text(p.memory_bytes), 7),
                                  pad_left(engine ? fmt::format("{} {:.0f}%", engine->first, engine->second * 100) : "-", 10),
                                  p.command.empty() ? "-" : p.command);
    const bool selected = max_rows > 0 && i == selected_;
    lines.push_back({fit(row, width), selected ? LineStyle::selected : LineStyle::normal});
  }
  return lines;
}

std::vector<ScreenLine> TopView::help_lines() const {
  return {
      {"hwaccel top: keys", LineStyle::heading},
      {"  h ?          this help (any key closes it)", LineStyle::normal},
      {"  q            quit", LineStyle::normal},
      {"  up down      select a process; PgUp PgDn Home End move further", LineStyle::normal},
      {"  s            sort by the next column (memory, engine, pid, user, device, command)", LineStyle::normal},
      {"  r            reverse the order", LineStyle::normal},
      {"  /            filter the processes (Enter applies, Esc clears)", LineStyle::normal},
      {"  k            send SIGTERM to the selected process (yours only; asks first)", LineStyle::normal},
      {"", LineStyle::normal},
      {"PID is in this PID namespace; [N] is the driver's (the host's) PID where it could not be translated;", LineStyle::dim},
      {"CPID is the PID inside the process's own namespace (a container). ENGINE is the busiest engine since the", LineStyle::dim},
      {"last refresh, where the driver counts it per process (DRM fdinfo).", LineStyle::dim},
  };
}

std::vector<ScreenLine> TopView::frame(int columns, int rows) const {
  const auto width = static_cast<std::size_t>(std::max(columns, 40));
  std::vector<ScreenLine> lines;
  std::string title = fmt::format("hwaccel top  {}", source_);
  if (rows > 0) title += fmt::format("  every {:.1f}s", static_cast<double>(interval_.count()) / 1000);
  if (current_ && current_->host.load1) title += fmt::format("  load {:.2f}", *current_->host.load1);
  lines.push_back({fit(title, width), LineStyle::title});
  if (help_ && rows > 0) {
    for (auto& l : help_lines()) lines.push_back(std::move(l));
    return lines;
  }
  for (auto& l : device_panels(columns)) lines.push_back(std::move(l));
  if (!events_.empty()) {
    lines.push_back({"", LineStyle::normal});
    lines.push_back({"EVENTS", LineStyle::normal});
    for (const ScreenLine& e : events_) lines.push_back({fit(e.text, width), e.style});
  }
  lines.push_back({"", LineStyle::normal});
  std::string heading = fmt::format("PROCESSES ({} listed, sorted by {}{}", listed_processes().size(), sort_name(sort_),
                                    descending_ ? ", most first" : "");
  if (!filter_.empty()) heading += fmt::format(", filter \"{}\"", filter_);
  heading += ")";
  lines.push_back({fit(heading, width), LineStyle::normal});
  // What is left of the screen goes to the process rows, keeping the footer.
  const std::size_t warnings = current_ ? current_->warnings.size() : 0;
  const std::size_t footer = rows > 0 ? 1 + (message_.empty() ? 0 : 1) + (warnings > 0 ? 1 : 0) : 0;
  std::size_t max_rows = 0;
  if (rows > 0) {
    const std::size_t used = lines.size() + 1 + footer;
    max_rows = static_cast<std::size_t>(rows) > used ? static_cast<std::size_t>(rows) - used : 1;
  }
  for (auto& l : process_table(columns, max_rows)) lines.push_back(std::move(l));
  if (rows == 0) {
    // --once: every warning, after the frame.
    if (current_)
      for (const auto& w : current_->warnings)
        lines.push_back({fmt::format("warning: {}: {}", w.backend, w.message), LineStyle::warning});
    return lines;
  }
  while (lines.size() + footer < static_cast<std::size_t>(rows)) lines.push_back({"", LineStyle::normal});
  if (warnings > 0)
    lines.push_back({fit(fmt::format("{} warning{}: {}", warnings, warnings == 1 ? "" : "s", current_->warnings.front().message), width),
                     LineStyle::warning});
  if (!message_.empty()) lines.push_back({fit(message_, width), message_style_});
  lines.push_back({fit("h help  q quit  s sort  r reverse  / filter  k terminate  arrows select", width), LineStyle::dim});
  return lines;
}

}  // namespace hwaccel::cli
