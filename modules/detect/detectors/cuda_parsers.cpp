// Readers of nvidia-smi's GPU outputs: the --query-gpu CSV, `-q` text, `-L`,
// and the driver's /proc files. String-view based; every value is checked.
module;
#include <algorithm>
#include <array>
#include <cmath>
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

bool is_field_char(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_';
}

// "memory.total [MiB]" -> {"memory.total", "MiB"}; nullopt when the text is
// not a query field name (the test that tells a header from anything else).
std::optional<std::pair<std::string_view, std::string_view>> header_field(std::string_view cell) noexcept {
  cell = text::trim(cell);
  std::string_view unit;
  if (const auto open = cell.find(" ["); open != std::string_view::npos && cell.back() == ']') {
    unit = cell.substr(open + 2, cell.size() - open - 3);
    cell = text::trim(cell.substr(0, open));
  }
  if (cell.empty() || !((cell[0] >= 'a' && cell[0] <= 'z') || (cell[0] >= 'A' && cell[0] <= 'Z'))) return std::nullopt;
  if (!std::all_of(cell.begin(), cell.end(), is_field_char)) return std::nullopt;
  return std::pair{cell, unit};
}

// Appends the trimmed comma-separated cells of `line` to `cells`; returns
// how many there were.
std::size_t append_cells(std::string_view line, std::vector<std::string_view>& cells) {
  std::size_t count = 0;
  while (true) {
    const auto comma = line.find(',');
    cells.push_back(text::trim(line.substr(0, comma)));
    ++count;
    if (comma == std::string_view::npos) return count;
    line.remove_prefix(comma + 1);
  }
}

// "9.0", "12.1": digits, one dot, digits.
bool is_compute_capability(std::string_view v) noexcept {
  const auto dot = v.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 >= v.size() || dot > 3 || v.size() - dot > 4) return false;
  for (std::size_t i = 0; i < v.size(); ++i)
    if (i != dot && (v[i] < '0' || v[i] > '9')) return false;
  return true;
}

// Driver 610 appends "[Deprecated; ...]" to the old `-q` keys.
std::string_view without_annotation(std::string_view v) noexcept {
  const auto bracket = v.find(" [");
  return text::trim(bracket == std::string_view::npos ? v : v.substr(0, bracket));
}

}  // namespace

std::optional<std::string_view> nvidia_smi_value(std::string_view cell) noexcept {
  cell = text::trim(cell);
  if (cell.empty()) return std::nullopt;
  // Most cells are numbers, and no placeholder starts with a digit.
  if (cell.front() >= '0' && cell.front() <= '9') return cell;
  // Every bracketed value is a placeholder: [N/A], [Not Supported],
  // [Unknown Error], [Insufficient Permissions], [GPU is lost],
  // [Requested functionality has been deprecated], ...
  if (cell.front() == '[' && cell.back() == ']') return std::nullopt;
  static constexpr std::array<std::string_view, 7> placeholders = {
      "N/A", "Not Supported", "Unknown Error", "Insufficient Permissions", "Not Available",
      "Requested functionality has been deprecated", "GPU is lost"};
  for (std::string_view p : placeholders)
    if (text::iequals(cell, p)) return std::nullopt;
  // Windows: "Not available in WDDM driver model" (a process's GPU memory).
  if (cell.size() > 14 && text::iequals(cell.substr(0, 14), "Not available ")) return std::nullopt;
  return cell;
}

std::optional<std::size_t> NvidiaSmiCsv::column(std::string_view name) const noexcept {
  for (std::size_t i = 0; i < columns.size(); ++i)
    if (columns[i] == name) return i;
  return std::nullopt;
}

Result<NvidiaSmiCsv> parse_nvidia_smi_csv(std::string_view text) {
  if (text::trim(text).empty()) return fail(ErrorKind::parse_error, "printed nothing");
  NvidiaSmiCsv csv;
  std::string_view rest = text;
  // The header is the first line made only of query field names; an error
  // line or two may come first (a GPU the driver lost).
  std::size_t line_no = 0;
  std::vector<std::string_view> header;
  header.reserve(32);
  std::size_t header_length = 0;
  while (!rest.empty() && csv.columns.empty()) {
    const std::string_view line = text::next_line(rest);
    ++line_no;
    if (text::trim(line).empty()) continue;
    header.clear();
    append_cells(line, header);
    std::vector<std::string_view> names, units;
    names.reserve(header.size());
    units.reserve(header.size());
    bool is_header = true;
    for (std::string_view cell : header) {
      const auto field = header_field(cell);
      if (!field) {
        is_header = false;
        break;
      }
      names.push_back(field->first);
      units.push_back(field->second);
    }
    if (is_header) {
      header_length = line.size();
      csv.columns = std::move(names);
      csv.units = std::move(units);
    } else if (line_no >= 8) {
      break;
    }
  }
  if (csv.columns.empty())
    return fail(ErrorKind::parse_error, text::cat("output has no CSV header naming query fields (it starts with \"",
                                                  text::excerpt(text::trim(text), 60), "\")"));
  const std::size_t width = csv.columns.size();
  // A row is about as long as the header line.
  csv.cells.reserve(std::min(rest.size() / std::max<std::size_t>(header_length, 1) + 1, max_gpus) * width);
  while (!rest.empty()) {
    const std::string_view line = text::next_line(rest);
    ++line_no;
    if (text::trim(line).empty()) continue;
    if (line_no > max_lines || csv.row_count() >= max_gpus) {
      csv.problems.push_back(ParseProblem{WarningKind::truncated,
                                          text::cat("output continues beyond line ", line_no - 1, "; the rest was ignored")});
      break;
    }
    const std::size_t row_start = csv.cells.size();
    const std::size_t cells = append_cells(line, csv.cells);
    if (cells != width) {
      csv.cells.resize(row_start);
      add_problem(csv.problems, WarningKind::parse_error,
                  text::cat("line ", line_no, " has ", cells, " fields where the header has ", width, " (\"",
                            text::excerpt(text::trim(line), 60), "\"); skipped"));
    }
  }
  return csv;
}

std::optional<std::string> rejected_query_field(std::string_view output) {
  // `Field "compute_cap" is not a valid field to query.`
  constexpr std::string_view prefix = "Field \"";
  constexpr std::string_view suffix = "\" is not a valid field to query";
  const auto start = output.find(prefix);
  if (start == std::string_view::npos) return std::nullopt;
  const std::string_view from = output.substr(start + prefix.size());
  const auto end = from.find(suffix);
  if (end == std::string_view::npos || end == 0 || end > 100) return std::nullopt;
  return std::string(from.substr(0, end));
}

Result<NvidiaGpuTable> parse_query_gpu(std::string_view text) {
  auto csv = parse_nvidia_smi_csv(text);
  if (!csv) return fail(csv.error());
  NvidiaGpuTable table;
  table.problems = std::move(csv->problems);
  // Columns are looked up once; a field may be requested under either of its names.
  auto col = [&](std::string_view a, std::string_view b = {}) {
    auto c = csv->column(a);
    return c || b.empty() ? c : csv->column(b);
  };
  const auto c_index = col("index"), c_name = col("name", "gpu_name"), c_uuid = col("uuid", "gpu_uuid"),
             c_bus = col("pci.bus_id", "gpu_bus_id"), c_devid = col("pci.device_id"), c_total = col("memory.total"),
             c_used = col("memory.used"), c_free = col("memory.free"), c_cc = col("compute_cap"),
             c_driver = col("driver_version"), c_vbios = col("vbios_version"), c_mig = col("mig.mode.current"),
             c_cmode = col("compute_mode"), c_ecc = col("ecc.mode.current"), c_addr = col("addressing_mode"),
             c_c2c = col("c2c.mode"), c_power = col("power.draw"), c_limit = col("power.limit"),
             c_temp = col("temperature.gpu"), c_util = col("utilization.gpu"), c_clock = col("clocks.max.memory"),
             c_gen_cur = col("pcie.link.gen.current"), c_gen_max = col("pcie.link.gen.max"),
             c_w_cur = col("pcie.link.width.current"), c_w_max = col("pcie.link.width.max");
  auto unit = [&](std::optional<std::size_t> c) { return c ? csv->units[*c] : std::string_view{}; };
  // Every query asks for one of these: a "header" naming none of them is
  // something else that happens to look like field names (a lone word of
  // garbage), and its rows are not GPUs.
  if (!c_index && !c_name && !c_uuid && !c_bus)
    return fail(ErrorKind::parse_error,
                text::cat("output has no CSV header naming index, name, uuid or pci.bus_id (it starts with \"",
                          text::excerpt(text::trim(text), 60), "\")"));

  table.gpus.reserve(csv->row_count());
  for (std::size_t r = 0; r < csv->row_count(); ++r) {
    const auto row = csv->row(r);
    auto get = [&](std::optional<std::size_t> c) -> std::optional<std::string_view> {
      return c ? nvidia_smi_value(row[*c]) : std::nullopt;
    };
    NvidiaGpu g;
    ValueReader read(table.problems, text::cat("GPU row ", r));
    g.index = read.integer("index", get(c_index), 0, max_gpus);
    if (const auto name = get(c_name)) g.name = std::string(*name);
    g.uuid = text::owned(get(c_uuid));
    if (const auto bus = get(c_bus)) {
      g.bus_id = PciAddress::parse(*bus);
      if (!g.bus_id) read.bad("pci.bus_id", *bus);
    }
    g.pci_device_id = device_id_of(get(c_devid));
    g.memory_total_bytes = read.memory("memory.total", get(c_total), unit(c_total));
    g.memory_used_bytes = read.memory("memory.used", get(c_used), unit(c_used));
    g.memory_free_bytes = read.memory("memory.free", get(c_free), unit(c_free));
    if (const auto cc = get(c_cc)) {
      if (is_compute_capability(*cc)) g.compute_capability = std::string(*cc);
      else read.bad("compute_cap", *cc);
    }
    g.driver_version = text::owned(get(c_driver));
    g.vbios_version = text::owned(get(c_vbios));
    g.mig_enabled = enabled_flag(get(c_mig));
    g.compute_mode = text::owned(get(c_cmode));
    g.ecc_enabled = enabled_flag(get(c_ecc));
    g.addressing_mode = text::owned(get(c_addr));
    g.c2c_enabled = enabled_flag(get(c_c2c));
    g.power_draw_watts = read.number("power.draw", get(c_power), 0, 10000, "W");
    g.power_limit_watts = read.number("power.limit", get(c_limit), 0, 10000, "W");
    g.temperature_c = read.number("temperature.gpu", get(c_temp), -100, 250, "C");
    g.utilization_percent = read.number("utilization.gpu", get(c_util), 0, 100, "%");
    g.max_memory_clock_mhz = read.number("clocks.max.memory", get(c_clock), 0, 100000, "MHz");
    g.pcie_generation_current = read.integer("pcie.link.gen.current", get(c_gen_cur), 1, 8);
    g.pcie_generation_max = read.integer("pcie.link.gen.max", get(c_gen_max), 1, 8);
    g.pcie_width_current = read.integer("pcie.link.width.current", get(c_w_cur), 1, 64);
    g.pcie_width_max = read.integer("pcie.link.width.max", get(c_w_max), 1, 64);
    table.gpus.push_back(std::move(g));
  }
  return table;
}

namespace {

// A `-q` line: "    Product Name                 : NVIDIA H100" or a
// section title ("    FB Memory Usage").
struct QueryLine {
  std::size_t indent = 0;
  std::string_view key;
  std::optional<std::string_view> value;  // empty for a section title
};

QueryLine split_query_line(std::string_view line) noexcept {
  QueryLine q;
  while (q.indent < line.size() && (line[q.indent] == ' ' || line[q.indent] == '\t')) ++q.indent;
  line.remove_prefix(q.indent);
  // Keys never contain a colon; values may (bus ids).
  const auto colon = line.find(':');
  if (colon == std::string_view::npos) {
    q.key = text::trim(line);
  } else {
    q.key = text::trim(line.substr(0, colon));
    q.value = text::trim(line.substr(colon + 1));
  }
  return q;
}

// Joins the open section titles and a key into "PCI/GPU Link Info/Link Width/Max".
std::string section_path(const std::vector<std::pair<std::size_t, std::string_view>>& sections, std::size_t from,
                         std::string_view key) {
  std::string path;
  for (std::size_t i = from; i < sections.size(); ++i) {
    path.append(sections[i].second);
    path.push_back('/');
  }
  path.append(key);
  return path;
}

}  // namespace

Result<NvidiaGpuTable> parse_query_text(std::string_view text) {
  NvidiaGpuTable table;
  std::optional<std::string> driver;
  std::vector<std::pair<std::size_t, std::string_view>> sections;  // (indent, title) of the open sections
  NvidiaGpu* gpu = nullptr;
  NvidiaMigDevice* mig = nullptr;
  std::optional<ValueReader> read;
  std::optional<double> power_limit_fallback;
  NvidiaTlimit tlimit;
  std::size_t line_no = 0;
  std::string_view rest = text;

  auto finish_gpu = [&] {
    if (gpu && !gpu->power_limit_watts) gpu->power_limit_watts = power_limit_fallback;
    power_limit_fallback.reset();
    if (gpu) tlimit.apply(*gpu);
    tlimit = {};
  };

  while (!rest.empty()) {
    const std::string_view raw = text::next_line(rest);
    if (++line_no > 64 * max_lines) {
      add_problem(table.problems, WarningKind::truncated, "output is longer than any real `-q`; the rest was ignored");
      break;
    }
    if (text::trim(raw).empty()) continue;
    const QueryLine line = split_query_line(raw);
    // "GPU 00000000:18:00.0" at the left margin opens a GPU.
    if (line.indent == 0 && line.key.starts_with("GPU ") && line.value) {
      if (const auto bus = PciAddress::parse(text::trim(raw.substr(4)))) {
        finish_gpu();
        if (table.gpus.size() >= max_gpus) break;
        table.gpus.emplace_back();
        gpu = &table.gpus.back();
        gpu->index = static_cast<std::uint32_t>(table.gpus.size() - 1);
        gpu->bus_id = bus;
        gpu->driver_version = driver;
        mig = nullptr;
        sections.clear();
        read.emplace(table.problems, text::cat("GPU ", bus->to_string()));
        continue;
      }
    }
    while (!sections.empty() && sections.back().first >= line.indent) sections.pop_back();
    if (!line.value) {
      sections.emplace_back(line.indent, line.key);
      if (gpu && line.key == "MIG Device") {
        gpu->mig_devices.emplace_back();
        mig = &gpu->mig_devices.back();
        mig->index = static_cast<std::uint32_t>(gpu->mig_devices.size() - 1);
      }
      continue;
    }
    if (!gpu) {
      if (line.indent != 0) continue;
      if (line.key == "Driver Version" || (line.key == "KMD Version" && !driver))
        if (const auto v = nvidia_smi_value(without_annotation(*line.value))) driver = std::string(*v);
      continue;
    }
    const auto value = nvidia_smi_value(without_annotation(*line.value));
    // Fields of a MIG device are relative to its "MIG Device" section.
    std::size_t mig_at = sections.size();
    for (std::size_t i = sections.size(); i-- > 0;)
      if (sections[i].second == "MIG Device") {
        mig_at = i;
        break;
      }
    if (mig_at < sections.size() && mig) {
      const std::string path = text::lower(section_path(sections, mig_at + 1, line.key));
      if (path == "index") {
        if (const auto n = read->integer("MIG Index", value, 0, 1024)) mig->index = *n;
      } else if (path == "gpu instance id") {
        mig->gpu_instance_id = read->integer("GPU Instance ID", value, 0, 1u << 20);
      } else if (path == "compute instance id") {
        mig->compute_instance_id = read->integer("Compute Instance ID", value, 0, 1u << 20);
      } else if (path.ends_with("multiprocessor count") && !mig->multiprocessors) {
        mig->multiprocessors = read->integer("Multiprocessor count", value, 0, 1u << 16);
      } else if ((path == "shared fb memory usage/total" || path == "fb memory usage/total") && !mig->memory_bytes) {
        mig->memory_bytes = read->memory("MIG FB Memory Usage Total", value, "MiB");
      } else if ((path == "shared fb memory usage/used" || path == "fb memory usage/used") && !mig->memory_used_bytes) {
        mig->memory_used_bytes = read->memory("MIG FB Memory Usage Used", value, "MiB");
      } else if ((path == "shared fb memory usage/free" || path == "fb memory usage/free") && !mig->memory_free_bytes) {
        mig->memory_free_bytes = read->memory("MIG FB Memory Usage Free", value, "MiB");
      }
      continue;
    }
    // Key case changed over the years ("Ecc Mode"/"ECC Mode", "Gpu"/"GPU").
    const std::string path = text::lower(section_path(sections, 0, line.key));
    NvidiaGpu& g = *gpu;
    // A process's instance ids come before its "Process ID", its type, name
    // and memory after it (indented under it, which is no section: the line
    // has a value).
    if (path.starts_with("processes/")) {
      const std::string_view field = std::string_view(path).substr(10);
      const bool opens = field == "gpu instance id" || (field == "process id" && (g.processes.empty() || g.processes.back().pid != 0));
      if (opens) {
        if (g.processes.size() >= max_processes) continue;
        g.processes.emplace_back();
      }
      if (g.processes.empty()) continue;
      NvidiaProcess& p = g.processes.back();
      if (field == "gpu instance id") p.gpu_instance_id = read->integer("Process GPU instance ID", value, 0, 1u << 20);
      else if (field == "compute instance id") p.compute_instance_id = read->integer("Process Compute instance ID", value, 0, 1u << 20);
      else if (field == "process id") p.pid = read->integer("Process ID", value, 1, 1u << 30).value_or(0);
      else if (field == "type") p.type = std::string(value.value_or(""));
      else if (field == "name") p.name = std::string(value.value_or(""));
      else if (field == "used gpu memory") p.memory_used_bytes = read->memory("Process Used GPU Memory", value, "MiB");
      continue;
    }
    if (path == "product name") g.name = std::string(value.value_or(""));
    else if (path == "product architecture") g.architecture = text::owned(value);
    else if (path == "gpu uuid") g.uuid = text::owned(value);
    else if (path == "vbios version") g.vbios_version = text::owned(value);
    else if (path == "mig mode/current") g.mig_enabled = enabled_flag(value);
    else if (path == "addressing mode") g.addressing_mode = text::owned(value);
    else if (path == "gpu c2c mode") g.c2c_enabled = enabled_flag(value);
    else if (path == "compute mode") g.compute_mode = text::owned(value);
    else if (path == "ecc mode/current") g.ecc_enabled = enabled_flag(value);
    else if (path == "pci/device id") g.pci_device_id = device_id_of(value);
    else if (path == "pci/bus id") {
      if (value && !g.bus_id) g.bus_id = PciAddress::parse(*value);
    } else if (path == "pci/gpu link info/pcie generation/max")
      g.pcie_generation_max = read->integer("PCIe Generation Max", value, 1, 8);
    else if (path == "pci/gpu link info/pcie generation/current")
      g.pcie_generation_current = read->integer("PCIe Generation Current", value, 1, 8);
    else if (path == "pci/gpu link info/link width/max") g.pcie_width_max = read->integer("Link Width Max", value, 1, 64);
    else if (path == "pci/gpu link info/link width/current")
      g.pcie_width_current = read->integer("Link Width Current", value, 1, 64);
    else if (path == "fb memory usage/total") g.memory_total_bytes = read->memory("FB Memory Total", value, "MiB");
    else if (path == "fb memory usage/used") g.memory_used_bytes = read->memory("FB Memory Used", value, "MiB");
    else if (path == "fb memory usage/free") g.memory_free_bytes = read->memory("FB Memory Free", value, "MiB");
    else if (path == "utilization/gpu") g.utilization_percent = read->number("Utilization GPU", value, 0, 100, "%");
    else if (path == "temperature/gpu current temp") g.temperature_c = read->number("GPU Current Temp", value, -100, 250, "C");
    else if (path == "temperature/gpu slowdown temp")
      g.slowdown_temperature_c = read->number("GPU Slowdown Temp", value, -100, 250, "C");
    else if (path == "temperature/gpu shutdown temp")
      g.shutdown_temperature_c = read->number("GPU Shutdown Temp", value, -100, 250, "C");
    else if (path == "temperature/gpu t.limit temp") tlimit.margin = read->number("GPU T.Limit Temp", value, -250, 250, "C");
    else if (path == "temperature/gpu slowdown t.limit temp")
      tlimit.slowdown_offset = read->number("GPU Slowdown T.Limit Temp", value, -250, 250, "C");
    else if (path == "temperature/gpu shutdown t.limit temp")
      tlimit.shutdown_offset = read->number("GPU Shutdown T.Limit Temp", value, -250, 250, "C");
    else if (path == "max clocks/memory") g.max_memory_clock_mhz = read->number("Max Clocks Memory", value, 0, 100000, "MHz");
    // Drivers since ~R530 say "GPU Power Readings" (and add "Module Power
    // Readings", which is the whole module); older ones "Power Readings".
    else if (path == "gpu power readings/power draw" || path == "power readings/power draw")
      g.power_draw_watts = read->number("Power Draw", value, 0, 10000, "W");
    else if (path == "gpu power readings/current power limit" || path == "power readings/power limit")
      g.power_limit_watts = read->number("Power Limit", value, 0, 10000, "W");
    else if (path == "gpu power readings/enforced power limit" || path == "power readings/enforced power limit")
      power_limit_fallback = read->number("Enforced Power Limit", value, 0, 10000, "W");
  }
  finish_gpu();
  // A process whose ID was not a number is no process.
  for (NvidiaGpu& g : table.gpus) std::erase_if(g.processes, [](const NvidiaProcess& p) { return p.pid == 0; });
  if (table.gpus.empty())
    return fail(ErrorKind::parse_error, text::cat("output has no \"GPU <bus id>\" section (it starts with \"",
                                                  text::excerpt(text::trim(text), 60), "\")"));
  return table;
}

std::vector<NvidiaGpuListing> parse_gpu_list(std::string_view text) {
  std::vector<NvidiaGpuListing> gpus;
  std::size_t lines = 0;
  while (!text.empty() && ++lines <= max_lines) {
    const std::string_view line = text::trim(text::next_line(text));
    // "(UUID: GPU-...)" at the end of GPU and MIG lines alike.
    std::optional<std::string> uuid;
    std::string_view head = line;
    if (const auto u = line.rfind("(UUID: "); u != std::string_view::npos && line.back() == ')') {
      uuid = std::string(text::trim(line.substr(u + 7, line.size() - u - 8)));
      head = text::trim(line.substr(0, u));
    }
    if (head.starts_with("GPU ")) {
      // "GPU 0: NVIDIA H100 80GB HBM3" ("GPU (UUID: ...)" has no index: skipped)
      std::string_view rest = head.substr(4);
      const auto colon = rest.find(':');
      if (colon == std::string_view::npos) continue;
      const auto index = text::parse_u64(rest.substr(0, colon));
      if (!index || *index > max_gpus || gpus.size() >= max_gpus) continue;
      NvidiaGpuListing g;
      g.index = static_cast<std::uint32_t>(*index);
      g.name = std::string(text::trim(rest.substr(colon + 1)));
      g.uuid = std::move(uuid);
      gpus.push_back(std::move(g));
    } else if (line.starts_with("MIG ") && !gpus.empty()) {
      // "MIG 3g.40gb     Device  0:" (profile names are padded)
      const auto words = text::words(head);
      if (words.size() < 4 || words[2] != "Device") continue;
      std::string_view number = words[3];
      if (number.ends_with(':')) number.remove_suffix(1);
      const auto index = text::parse_u64(number);
      if (!index || *index > 1024) continue;
      NvidiaMigDevice m;
      m.index = static_cast<std::uint32_t>(*index);
      m.profile = std::string(words[1]);
      // R450-era MIG UUIDs name the instances: "MIG-GPU-<uuid>/<gi>/<ci>".
      if (uuid && uuid->starts_with("MIG-GPU-")) {
        std::string_view ids = *uuid;
        const auto slash = ids.find('/');
        if (slash != std::string_view::npos) {
          ids.remove_prefix(slash + 1);
          const auto second = ids.find('/');
          const auto gi = text::parse_u64(ids.substr(0, second));
          const auto ci = second == std::string_view::npos ? std::nullopt : text::parse_u64(ids.substr(second + 1));
          if (gi && *gi < (1u << 20)) m.gpu_instance_id = static_cast<std::uint32_t>(*gi);
          if (ci && *ci < (1u << 20)) m.compute_instance_id = static_cast<std::uint32_t>(*ci);
        }
      }
      m.uuid = std::move(uuid);
      if (gpus.back().mig_devices.size() < 1024) gpus.back().mig_devices.push_back(std::move(m));
    }
  }
  return gpus;
}

NvidiaProcGpuInfo parse_proc_gpu_information(std::string_view text) {
  // "Model: \t\t NVIDIA H100 80GB HBM3", "GPU UUID: \t GPU-...", "Bus Location: \t 0000:18:00.0"
  NvidiaProcGpuInfo info;
  std::size_t lines = 0;
  while (!text.empty() && ++lines <= 256) {
    const std::string_view line = text::next_line(text);
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = text::trim(line.substr(0, colon));
    const std::string_view value = text::trim(line.substr(colon + 1));
    if (value.empty()) continue;
    if (key == "Model") info.model = std::string(value);
    else if (key == "GPU UUID") info.uuid = std::string(value);
    else if (key == "Bus Location") info.bus_location = PciAddress::parse(value);
    else if (key == "Device Minor") {
      if (const auto n = text::parse_u64(value); n && *n < 1024) info.device_minor = static_cast<std::uint32_t>(*n);
    }
  }
  return info;
}

std::optional<std::string> parse_proc_driver_version(std::string_view text) {
  // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 ..."
  // "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build ..."
  const std::string_view line = text::next_line(text);
  if (!line.starts_with("NVRM version:")) return std::nullopt;
  for (std::string_view word : text::words(line.substr(13))) {
    const bool versionish = word.find('.') != std::string_view::npos && word.front() >= '0' && word.front() <= '9' &&
                            std::all_of(word.begin(), word.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
    if (versionish) return std::string(word);
  }
  return std::nullopt;
}

std::string_view cuda_architecture(std::string_view cc) noexcept {
  const auto dot = cc.find('.');
  if (dot == std::string_view::npos) return {};
  const auto major = text::parse_u64(cc.substr(0, dot));
  const auto minor = text::parse_u64(cc.substr(dot + 1));
  if (!major || !minor) return {};
  switch (*major) {
    case 1: return "Tesla";
    case 2: return "Fermi";
    case 3: return "Kepler";
    case 5: return "Maxwell";
    case 6: return "Pascal";
    case 7: return *minor >= 5 ? "Turing" : "Volta";  // 7.0 V100, 7.2 Xavier; 7.5 Turing
    case 8: return *minor == 9 ? "Ada Lovelace" : "Ampere";  // 8.0 A100, 8.6 GA10x, 8.7 Orin
    case 9: return "Hopper";
    // 10.x data-centre, 11.0 Thor (10.1 before CUDA 13), 12.x RTX 50 / GB10.
    case 10:
    case 11:
    case 12: return "Blackwell";
    default: return {};
  }
}

std::optional<std::uint64_t> mig_profile_memory_bytes(std::string_view profile) noexcept {
  // "1g.10gb", "1g.10gb+me", "1c.3g.71gb", "4g.90gb"
  profile = profile.substr(0, profile.find('+'));
  const auto dot = profile.rfind('.');
  std::string_view last = dot == std::string_view::npos ? profile : profile.substr(dot + 1);
  if (!last.ends_with("gb")) return std::nullopt;
  last.remove_suffix(2);
  const auto gib = text::parse_u64(last);
  if (!gib || *gib == 0 || *gib > 16384) return std::nullopt;
  return *gib << 30;
}

}  // namespace hwaccel::parsers
