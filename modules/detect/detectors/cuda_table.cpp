// Reader of the table plain `nvidia-smi` prints: what people have on screen
// and paste most. Boxes of `|`-separated cells, one row group per GPU
// between `+---` rules, then optional "MIG devices:" and "Processes:" boxes.
module;
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.detectors;

#include "nvidia_smi_values.hpp"

namespace hwaccel::parsers {

using namespace nvidia_smi;

namespace {

// The cells of a box line, "| a | b | c |" -> {"a", "b", "c"} trimmed;
// empty for rules ("+---+", "|===|") and lines outside a box.
std::vector<std::string_view> box_cells(std::string_view line) {
  line = text::trim(line);
  if (line.size() < 2 || line.front() != '|' || line.back() != '|') return {};
  if (line.find_first_not_of("|=-+ ") == std::string_view::npos) return {};
  return text::split_trimmed(line.substr(1, line.size() - 2), '|');
}

bool is_rule(std::string_view line) noexcept {
  line = text::trim(line);
  return line.size() >= 2 && (line.front() == '+' || line.front() == '|') &&
         line.find_first_not_of("|=-+ ") == std::string_view::npos;
}

// "100W /  700W" -> {"100W", "700W"}; a side without a value is empty. The
// separator has blanks around it: "N/A" holds a slash of its own.
std::pair<std::string_view, std::string_view> around_slash(std::string_view cell) noexcept {
  const auto slash = cell.find(" / ");
  if (slash == std::string_view::npos) return {text::trim(cell), {}};
  return {text::trim(cell.substr(0, slash)), text::trim(cell.substr(slash + 3))};
}

// The table abbreviates the compute mode; the other views spell it out.
std::optional<std::string> compute_mode_of(std::string_view cell) {
  if (cell == "Default") return "Default";
  if (cell == "E. Process") return "Exclusive_Process";
  if (cell == "E. Thread") return "Exclusive_Thread";
  if (cell == "Prohibited") return "Prohibited";
  return std::nullopt;
}

enum class Box { none, gpus, mig, other };

// One GPU's row group: "index name persistence | bus disp | ecc", then
// "fan temp perf draw / cap | used / total | util compute", then the MIG mode.
void read_gpu_rows(const std::vector<std::vector<std::string_view>>& rows, const std::optional<std::string>& driver,
                   NvidiaGpuTable& table) {
  const auto& first = rows.front();
  const auto head = text::words(first[0]);
  if (head.size() < 2) return;
  const auto index = text::parse_u64(head[0]);
  if (!index || *index >= max_gpus) return;
  NvidiaGpu g;
  g.index = static_cast<std::uint32_t>(*index);
  ValueReader read(table.problems, text::cat("GPU ", *index));
  // Between the index and the persistence mode (or Windows' driver model).
  std::string_view name = text::trim(first[0]);
  name = text::trim(name.substr(head[0].size()));
  if (head.size() >= 3) name = text::trim(name.substr(0, name.size() - head.back().size()));
  g.name = std::string(name);  // kept as printed, "..." included: the caller finds the whole name
  if (first.size() >= 2) {
    const auto bus = text::words(first[1]);
    if (!bus.empty()) {
      g.bus_id = PciAddress::parse(bus[0]);
      if (!g.bus_id) read.bad("Bus-Id", bus[0]);
    }
  }
  g.driver_version = driver;
  if (rows.size() >= 2) {
    const auto& second = rows[1];
    const auto [left, cap] = around_slash(second[0]);
    const auto gauges = text::words(left);  // fan, temperature, performance state, power draw
    for (const auto w : gauges)
      if (w.size() >= 2 && w.back() == 'C' && (w[w.size() - 2] >= '0' && w[w.size() - 2] <= '9'))
        g.temperature_c = read.number("Temp", w, -100, 250, "C");
    if (gauges.size() >= 4 && gauges.back().ends_with('W'))
      g.power_draw_watts = read.number("Pwr:Usage", nvidia_smi_value(gauges.back()), 0, 10000, "W");
    g.power_limit_watts = read.number("Pwr:Cap", nvidia_smi_value(cap), 0, 10000, "W");
    if (second.size() >= 2) {
      const auto [used, total] = around_slash(second[1]);
      g.memory_used_bytes = read.memory("Memory-Usage used", nvidia_smi_value(used), "MiB");
      g.memory_total_bytes = read.memory("Memory-Usage total", nvidia_smi_value(total), "MiB");
      // Free stays unknown: the driver's reserve is neither used nor free.
    }
    if (second.size() >= 3) {
      const auto cell = text::words(second[2]);
      if (!cell.empty()) g.utilization_percent = read.number("GPU-Util", nvidia_smi_value(cell[0]), 0, 100, "%");
      const std::string_view util = cell.empty() ? std::string_view{} : cell[0];
      g.compute_mode = compute_mode_of(text::trim(text::trim(second[2]).substr(util.size())));
    }
  }
  if (rows.size() >= 3 && rows[2].size() >= 3) g.mig_enabled = enabled_flag(nvidia_smi_value(rows[2][2]));
  table.gpus.push_back(std::move(g));
}

// One MIG device's rows: "gpu gi ci dev | used / total | sm ecc | engines".
void read_mig_rows(const std::vector<std::vector<std::string_view>>& rows, NvidiaGpuTable& table) {
  const auto& first = rows.front();
  const auto ids = text::words(first[0]);
  if (ids.size() < 4 || first.size() < 2) return;
  std::uint64_t n[4];
  for (std::size_t i = 0; i < 4; ++i) {
    const auto v = text::parse_u64(ids[i]);
    if (!v || *v >= (1u << 20)) return;
    n[i] = *v;
  }
  NvidiaGpu* gpu = nullptr;
  for (auto& g : table.gpus)
    if (g.index == n[0]) gpu = &g;
  if (!gpu || gpu->mig_devices.size() >= 1024) return;
  ValueReader read(table.problems, text::cat("GPU ", n[0], " MIG device ", n[3]));
  NvidiaMigDevice m;
  m.index = static_cast<std::uint32_t>(n[3]);
  m.gpu_instance_id = static_cast<std::uint32_t>(n[1]);
  m.compute_instance_id = static_cast<std::uint32_t>(n[2]);
  const auto [used, total] = around_slash(first[1]);
  m.memory_used_bytes = read.memory("MIG Memory-Usage used", nvidia_smi_value(used), "MiB");
  m.memory_bytes = read.memory("MIG Memory-Usage total", nvidia_smi_value(total), "MiB");
  if (first.size() >= 3) {
    const auto sm = text::words(first[2]);
    if (!sm.empty()) m.multiprocessors = read.integer("MIG SM", nvidia_smi_value(sm[0]), 0, 1u << 16);
  }
  gpu->mig_devices.push_back(std::move(m));
}

}  // namespace

Result<NvidiaGpuTable> parse_default_table(std::string_view text) {
  NvidiaGpuTable table;
  std::optional<std::string> driver;
  Box box = Box::none;
  bool in_body = false;  // below the box's "|===|" rule
  std::vector<std::vector<std::string_view>> group;
  std::size_t line_no = 0;

  auto finish_group = [&] {
    if (!group.empty() && in_body) {
      if (box == Box::gpus && table.gpus.size() < max_gpus) read_gpu_rows(group, driver, table);
      else if (box == Box::mig) read_mig_rows(group, table);
    }
    group.clear();
  };

  std::string_view rest = text;
  while (!rest.empty()) {
    const std::string_view line = text::next_line(rest);
    if (++line_no > 16 * max_lines) {
      add_problem(table.problems, WarningKind::truncated,
                  "output is longer than any real nvidia-smi table; the rest was ignored");
      break;
    }
    const std::string_view trimmed = text::trim(line);
    if (trimmed.empty() || (trimmed.front() != '|' && trimmed.front() != '+')) {
      // Between boxes (the timestamp, blank lines): the next box starts afresh.
      finish_group();
      box = Box::none;
      in_body = false;
      continue;
    }
    if (is_rule(trimmed)) {
      finish_group();
      if (trimmed.find("===") != std::string_view::npos) in_body = true;
      continue;
    }
    const auto cells = box_cells(trimmed);
    if (cells.empty()) continue;
    // A box's title opens it even where the blank line before it was lost
    // in copying.
    if (in_body && (cells[0].starts_with("MIG devices") || cells[0].starts_with("Processes") ||
                    cells[0].starts_with("NVIDIA-SMI"))) {
      finish_group();
      in_body = false;
    }
    if (!in_body) {
      // A box's heading lines name it.
      const std::string_view heading = cells[0];
      if (heading.starts_with("NVIDIA-SMI")) {
        for (const std::string_view key : {"Driver Version:", "KMD Version:"}) {
          const auto at = trimmed.find(key);
          if (at == std::string_view::npos || driver) continue;
          const auto words = text::words(trimmed.substr(at + key.size()));
          if (!words.empty())
            if (const auto v = nvidia_smi_value(words[0])) driver = std::string(*v);
        }
        box = Box::other;
      } else if (heading.starts_with("GPU  Name") || heading.starts_with("GPU Name")) {
        box = Box::gpus;
      } else if (heading.starts_with("MIG devices")) {
        box = Box::mig;
      } else if (heading.starts_with("Processes")) {
        box = Box::other;
      }
      continue;
    }
    if (box == Box::mig && cells.size() < 2) continue;
    group.push_back(cells);
    if (group.size() > 8) group.erase(group.begin() + 3, group.end());  // no real group is this tall
  }
  finish_group();
  if (table.gpus.empty())
    return fail(ErrorKind::parse_error, text::cat("output has no GPU row of nvidia-smi's table (it starts with \"",
                                                  text::excerpt(text::trim(text), 60), "\")"));
  for (const auto& g : table.gpus)
    if (!g.mig_devices.empty() && g.mig_enabled != true)
      add_problem(table.problems, WarningKind::inconsistent,
                  text::cat("GPU ", g.index.value_or(0), " lists MIG devices but its MIG mode is not Enabled"));
  return table;
}

}  // namespace hwaccel::parsers
