// What `hwaccel top` shows, as lines: device panels with history, MIG and
// partition rows, the process list (sorted, filtered, with a selection) and
// help. Pure: the same frame is printed by --once and drawn by the terminal
// screen. Include after `import hwaccel;`.
#pragma once

#include "terminal_screen.hpp"

#include <chrono>
#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hwaccel::cli {

/// Text pieces both views share: sizes ("69.6G"), ratios ("87%"), columns
/// cut and padded by display cells (UTF-8).
namespace top_text {
std::string bytes_text(std::optional<std::uint64_t> bytes);
std::size_t cells(std::string_view s);
std::string fit(std::string s, std::size_t width);
std::string pad(std::string s, std::size_t width);
std::string pad_left(std::string s, std::size_t width);
std::string percent(std::optional<double> ratio);
/// Memory in use over the total, from used or from free.
std::optional<double> used_ratio(const DeviceTelemetry& t);
/// The device's main temperature (gpu, edge, junction, package, else the first).
std::optional<double> gpu_temperature(const DeviceTelemetry& t);
}  // namespace top_text

enum class ProcessSort { memory, engine, pid, user, device, command };

class TopView {
 public:
  /// `unicode`: sparklines and bars in block characters, else ASCII.
  TopView(std::shared_ptr<const AcceleratorRegistry> registry, std::string source, bool unicode);

  /// A new sample: kept as the current one, its values added to each device's history.
  void add_sample(TelemetrySample sample);
  /// Another inventory (a re-detection after hot-plug): histories of devices that stayed are kept.
  void set_registry(std::shared_ptr<const AcceleratorRegistry> registry);

  /// The frame at this size; `rows` 0 prints everything (--once).
  std::vector<ScreenLine> frame(int columns, int rows) const;

  /// The processes the list shows, in its order.
  std::vector<const DeviceProcess*> listed_processes() const;
  /// The selected process, if the list has one.
  const DeviceProcess* selected_process() const;

  // What the keys change.
  void select_next(int by);
  void cycle_sort();
  void reverse_sort() { descending_ = !descending_; }
  void set_filter(std::string filter);
  const std::string& filter() const noexcept { return filter_; }
  void toggle_help() { help_ = !help_; }
  bool help() const noexcept { return help_; }
  /// A line shown above the keys until the next one (a prompt, a result).
  void set_message(std::string message, LineStyle style = LineStyle::normal);
  void set_interval(std::chrono::milliseconds interval) { interval_ = interval; }
  /// A line for the events panel (a device added or removed, an Xid); the last few are shown.
  void add_event(std::string line, LineStyle style);
  ProcessSort sort() const noexcept { return sort_; }

  /// Engine use (0..1) of a process of the current sample since the previous one: its busiest engine.
  std::optional<std::pair<std::string, double>> engine_of(const DeviceProcess& process) const;

 private:
  std::vector<ScreenLine> device_panels(int columns) const;
  std::vector<ScreenLine> process_table(int columns, std::size_t max_rows) const;
  std::vector<ScreenLine> help_lines() const;
  void derive_engine_use();

  std::shared_ptr<const AcceleratorRegistry> registry_;
  std::string source_;
  bool unicode_;
  std::optional<TelemetrySample> current_;
  std::optional<TelemetrySample> previous_;
  struct History {
    std::deque<double> utilization;
    std::deque<double> memory;
  };
  std::map<std::string, History> history_;
  ProcessSort sort_ = ProcessSort::memory;
  bool descending_ = true;
  std::string filter_;
  bool help_ = false;
  std::size_t selected_ = 0;
  std::string message_;
  LineStyle message_style_ = LineStyle::normal;
  std::chrono::milliseconds interval_{1000};
  std::deque<ScreenLine> events_;
  std::vector<std::optional<std::pair<std::string, double>>> busiest_engines_;  ///< by position in current_->processes
};

}  // namespace hwaccel::cli
