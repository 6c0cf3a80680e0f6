// Intel Gaudi backend: `hl-smi --query-aip` CSV parsed by header name, the
// default hl-smi table when the query form is refused, and the habanalabs
// driver's PCI functions for NUMA/PCIe facts and for devices hl-smi cannot show.
module;
#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.detectors;

namespace hwaccel {
namespace parsers {
namespace {

// Nothing Habana ships comes near this; a larger value is garbage.

// hl-smi, like nvidia-smi, prints N/A (and older builds [N/A]) for what it cannot read.
bool hl_smi_not_available(std::string_view v) noexcept {
  v = text::trim(v);
  return v.empty() || v == "N/A" || v == "[N/A]" || v == "NA" || v == "-" || text::icontains(v, "not supported");
}

std::optional<std::string> text_value(std::string_view v) {
  if (hl_smi_not_available(v)) return std::nullopt;
  return std::string(text::trim(v));
}

std::optional<std::uint32_t> small_uint(std::string_view v) noexcept {
  const auto n = text::parse_u64(v);
  if (!n || *n > 1'000'000) return std::nullopt;
  return static_cast<std::uint32_t>(*n);
}

// "98304", "98304 MiB", "98304MiB": hl-smi's memory fields are MiB; the CSV header
// says so ("memory.total [MiB]") when the values carry no unit (nounits).
std::optional<std::uint64_t> memory_value(std::string_view v, std::string_view header_unit) {
  if (hl_smi_not_available(v)) return std::nullopt;
  const auto n = text::parse_number_with_unit(v);
  if (!n || n->value < 0) return std::nullopt;
  const std::string_view unit = !n->unit.empty() ? n->unit : !header_unit.empty() ? header_unit : std::string_view("MiB");
  const auto bytes = text::parse_memory_size(text::cat(n->value, " ", unit));
  if (!bytes || *bytes > max_plausible_device_memory) return std::nullopt;
  return bytes;
}

// "22C", "88 W", "0%", "600W": a number whose unit, if present, is the expected one.
std::optional<double> quantity(std::string_view v, std::string_view unit) {
  if (hl_smi_not_available(v)) return std::nullopt;
  const auto n = text::parse_number_with_unit(v);
  if (!n || (!n->unit.empty() && !text::iequals(n->unit, unit))) return std::nullopt;
  if (n->value < -300 || n->value > 1e6) return std::nullopt;
  return n->value;
}

// "memory.total [MiB]" -> ("memory.total", "MiB")
std::pair<std::string_view, std::string_view> split_header(std::string_view cell) noexcept {
  cell = text::trim(cell);
  const auto open = cell.find('[');
  if (open == std::string_view::npos) return {cell, {}};
  const auto close = cell.find(']', open);
  const std::string_view unit = cell.substr(open + 1, close == std::string_view::npos ? std::string_view::npos : close - open - 1);
  return {text::trim(cell.substr(0, open)), text::trim(unit)};
}

}  // namespace

Result<HlSmiReport> parse_hl_smi_csv(std::string_view csv) {
  std::string_view rest = csv;
  std::string_view header;
  while (!rest.empty() && header.empty()) header = text::trim(text::next_line(rest));
  if (header.empty()) return fail(ErrorKind::parse_error, "hl-smi printed no CSV header");

  struct Column {
    std::string_view name;
    std::string_view unit;
  };
  std::vector<Column> columns;
  for (const std::string_view cell : text::split_trimmed(header, ',')) {
    const auto [name, unit] = split_header(cell);
    columns.push_back(Column{name, unit});
  }
  const auto column_of = [&](std::string_view name) -> std::optional<std::size_t> {
    for (std::size_t i = 0; i < columns.size(); ++i)
      if (text::iequals(columns[i].name, name)) return i;
    return std::nullopt;
  };
  const auto index_col = column_of("index"), name_col = column_of("name"), bus_col = column_of("bus_id");
  if (!index_col && !name_col && !bus_col)
    return fail(ErrorKind::parse_error,
                text::cat("hl-smi CSV header has none of index, name, bus_id: '", text::excerpt(header), "'"));

  HlSmiReport report;
  std::size_t row = 0;
  while (!rest.empty()) {
    const std::string_view line = text::trim(text::next_line(rest));
    if (line.empty()) continue;
    ++row;
    const auto cells = text::split_trimmed(line, ',');
    if (cells.size() != columns.size()) {
      report.problems.push_back(text::cat("hl-smi CSV row ", row, " has ", cells.size(), " fields where the header has ",
                                          columns.size(), ": '", text::excerpt(line), "'"));
      continue;
    }
    const auto cell = [&](std::string_view name) -> std::pair<std::string_view, std::string_view> {
      const auto i = column_of(name);
      if (!i) return {};
      return {cells[*i], columns[*i].unit};
    };
    HlSmiDevice d;
    if (index_col) {
      d.index = small_uint(cells[*index_col]);
      if (!d.index) {
        report.problems.push_back(
            text::cat("hl-smi CSV row ", row, ": index '", text::excerpt(cells[*index_col], 20), "' is not a number"));
        continue;
      }
    }
    if (name_col && !hl_smi_not_available(cells[*name_col])) d.name = std::string(cells[*name_col]);
    if (bus_col && !hl_smi_not_available(cells[*bus_col])) {
      d.bus_id = PciAddress::parse(cells[*bus_col]);
      if (!d.bus_id)
        report.problems.push_back(
            text::cat("hl-smi CSV row ", row, ": bus_id '", text::excerpt(cells[*bus_col], 30), "' is not a PCI address"));
    }
    d.module_id = small_uint(cell("module_id").first);
    d.uuid = text_value(cell("uuid").first);
    d.serial = text_value(cell("serial").first);
    d.driver_version = text_value(cell("driver_version").first);
    for (auto [field, slot] : std::array<std::pair<std::string_view, std::optional<std::uint64_t>*>, 3>{
             {{"memory.total", &d.memory_total_bytes}, {"memory.used", &d.memory_used_bytes}, {"memory.free", &d.memory_free_bytes}}}) {
      const auto [value, unit] = cell(field);
      if (value.empty()) continue;
      *slot = memory_value(value, unit);
      if (!*slot && !hl_smi_not_available(value))
        report.problems.push_back(
            text::cat("hl-smi CSV row ", row, ": ", field, " '", text::excerpt(value, 30), "' is not a memory size"));
    }
    d.temperature_c = quantity(cell("temperature.aip").first, "C");
    d.power_watts = quantity(cell("power.draw").first, "W");
    d.utilization_percent = quantity(cell("utilization.aip").first, "%");
    for (auto [field, slot] : std::array<std::pair<std::string_view, std::optional<std::uint64_t>*>, 4>{
             {{"ecc.errors.corrected.volatile.total", &d.ecc_corrected_volatile},
              {"ecc.errors.uncorrected.volatile.total", &d.ecc_uncorrected_volatile},
              {"ecc.errors.corrected.aggregate.total", &d.ecc_corrected_aggregate},
              {"ecc.errors.uncorrected.aggregate.total", &d.ecc_uncorrected_aggregate}}}) {
      const std::string_view value = cell(field).first;
      if (hl_smi_not_available(value)) continue;
      *slot = text::parse_u64(text::trim(value));
      if (!*slot)
        report.problems.push_back(
            text::cat("hl-smi CSV row ", row, ": ", field, " '", text::excerpt(value, 30), "' is not a count"));
    }
    report.devices.push_back(std::move(d));
  }
  return report;
}

namespace {

// A row of the box table split at its '|' borders, outer borders dropped.
std::vector<std::string_view> hl_smi_cells(std::string_view line) {
  std::vector<std::string_view> cells;
  line = text::trim(line);
  if (line.size() < 2 || line.front() != '|') return cells;
  line.remove_prefix(1);
  if (line.back() == '|') line.remove_suffix(1);
  return text::split_trimmed(line, '|');
}

// "| HL-SMI Version:        hl-1.22.1-fw-61.4.2.1    |" -> value after the key.
std::optional<std::string> header_value(std::string_view line, std::string_view key) {
  const auto cells = hl_smi_cells(line);
  if (cells.size() != 1 || !cells[0].starts_with(key)) return std::nullopt;
  return text_value(cells[0].substr(key.size()));
}

}  // namespace

Result<HlSmiReport> parse_hl_smi_table(std::string_view text_in) {
  HlSmiReport report;
  bool header_seen = false, in_devices = false;
  std::optional<HlSmiDevice> pending;  // first row read, second row expected
  std::size_t line_no = 0;
  std::string_view rest = text_in;
  const auto finish_pending = [&] {
    if (pending) report.devices.push_back(std::move(*pending));
    pending.reset();
  };
  while (!rest.empty()) {
    const std::string_view line = text::trim(text::next_line(rest));
    ++line_no;
    if (line.empty()) continue;
    // "Nic Driver Version:" (newer releases) must not be taken for the driver version.
    if (auto v = header_value(line, "HL-SMI Version:")) report.tool_version = std::move(v);
    else if (auto v2 = header_value(line, "Driver Version:")) report.driver_version = std::move(v2);
    if (!header_seen) {
      // "| AIP  Name  Persistence-M| Bus-Id  Disp.A | Volatile Uncor-Events|" (older: "Volatile Uncorr. ECC")
      if (line.find("AIP") != std::string_view::npos && line.find("Bus-Id") != std::string_view::npos) header_seen = true;
      continue;
    }
    if (!in_devices) {
      if (line.starts_with("|=")) in_devices = true;
      continue;
    }
    if (line.find("Compute Processes") != std::string_view::npos) break;
    if (line.starts_with("+") || line.starts_with("|-") || line.starts_with("|=")) continue;
    const auto cells = hl_smi_cells(line);
    if (cells.size() < 3) {
      report.problems.push_back(text::cat("hl-smi table line ", line_no, " is not a device row: '", text::excerpt(line), "'"));
      continue;
    }
    const auto first = text::words(cells[0]);
    const auto bus_words = text::words(cells[1]);
    const auto index = first.empty() ? std::nullopt : small_uint(first[0]);
    const auto bus = bus_words.empty() ? std::nullopt : PciAddress::parse(bus_words[0]);
    if (index && bus) {
      // "|   0  HL-225              N/A  | 0000:33:00.0     N/A |                   2  |"
      if (pending) {
        report.problems.push_back(text::cat("hl-smi table: AIP ", *pending->index, " has no second row"));
        finish_pending();
      }
      HlSmiDevice d;
      d.index = index;
      if (first.size() > 1 && !hl_smi_not_available(first[1])) d.name = std::string(first[1]);
      d.bus_id = bus;
      pending = std::move(d);
      continue;
    }
    if (!pending) {
      report.problems.push_back(text::cat("hl-smi table line ", line_no, " is not a device row: '", text::excerpt(line), "'"));
      continue;
    }
    // "| N/A   22C   P0   88W /  600W  |   768MiB /  98304MiB |     0%            0% |"
    const auto stats = text::words(cells[0]);
    std::vector<double> watts;
    for (std::size_t i = 0; i < stats.size(); ++i) {
      if (stats[i].ends_with("C") && !pending->temperature_c) pending->temperature_c = quantity(stats[i], "C");
      if (stats[i].ends_with("W"))
        if (const auto w = quantity(stats[i], "W")) watts.push_back(*w);
    }
    if (!watts.empty()) pending->power_watts = watts[0];
    if (watts.size() > 1) pending->power_limit_watts = watts[1];
    std::string_view memory = cells[1];
    const auto slash = memory.find('/');
    if (slash != std::string_view::npos) {
      pending->memory_used_bytes = memory_value(memory.substr(0, slash), "MiB");
      pending->memory_total_bytes = memory_value(memory.substr(slash + 1), "MiB");
    }
    if (!pending->memory_total_bytes)
      report.problems.push_back(
          text::cat("hl-smi table: AIP ", *pending->index, " memory '", text::excerpt(memory, 40), "' is not used / total"));
    if (pending->memory_total_bytes && pending->memory_used_bytes && *pending->memory_used_bytes <= *pending->memory_total_bytes)
      pending->memory_free_bytes = *pending->memory_total_bytes - *pending->memory_used_bytes;
    const auto util = text::words(cells[2]);
    if (!util.empty() && util[0].ends_with("%")) pending->utilization_percent = quantity(util[0], "%");
    finish_pending();
  }
  finish_pending();
  if (report.devices.empty())
    return fail(ErrorKind::parse_error, header_seen ? std::string("the hl-smi table lists no AIP row")
                                                    : std::string("hl-smi printed no AIP table header (AIP ... Bus-Id)"));
  return report;
}

std::optional<GaudiModel> gaudi_model_from_name(std::string_view name) noexcept {
  constexpr GaudiModel goya{"Goya", "goya", std::nullopt};
  constexpr GaudiModel gaudi1{"Gaudi", "gaudi", 32 * text::bytes_per_gib};
  constexpr GaudiModel gaudi2{"Gaudi 2", "gaudi2", 96 * text::bytes_per_gib};
  constexpr GaudiModel gaudi3{"Gaudi 3", "gaudi3", 128 * text::bytes_per_gib};
  name = text::trim(name);
  // sysfs device_type: "GAUDI", "GAUDI2", "GAUDI2B", "GAUDI3 HL-338"
  if (text::icontains(name, "gaudi3") || text::icontains(name, "gaudi 3")) return gaudi3;
  if (text::icontains(name, "gaudi2") || text::icontains(name, "gaudi 2")) return gaudi2;
  if (text::icontains(name, "gaudi")) return gaudi1;
  if (text::icontains(name, "goya")) return goya;
  // Board models: HL-100 Goya; HL-200/HL-205 Gaudi; HL-225(B/C/D), HL-288 Gaudi 2;
  // HL-325(L), HL-338, HL-388 Gaudi 3. The first digit is the product line, and
  // in the 2xx line a zero second digit marks the first Gaudi.
  const auto at = name.find("HL-");
  if (at == std::string_view::npos || name.size() < at + 5) return std::nullopt;
  const char line = name[at + 3], second = name[at + 4];
  if (second < '0' || second > '9') return std::nullopt;
  switch (line) {
    case '1': return goya;
    case '2': return second == '0' ? gaudi1 : gaudi2;
    case '3': return gaudi3;
    default: return std::nullopt;
  }
}

std::optional<GaudiModel> gaudi_model_from_pci(std::uint16_t device_id) noexcept {
  // drivers/accel/habanalabs/common/habanalabs_drv.c: PCI_IDS_*.
  switch (device_id) {
    case 0x0001: return gaudi_model_from_name("Goya");
    case 0x1000:  // Gaudi
    case 0x1001:  // Gaudi HL-2000M
    case 0x1010:  // secured
    case 0x1011: return gaudi_model_from_name("Gaudi");
    case 0x1020:  // Gaudi 2
    case 0x1021:  // Gaudi 2 HL-288
    case 0x1030: return gaudi_model_from_name("Gaudi2");
    case 0x1060:  // Gaudi 3
    case 0x1062:  // single die
    case 0x1063: return gaudi_model_from_name("Gaudi3");  // HL-338
    default: return std::nullopt;
  }
}

}  // namespace parsers

namespace {

constexpr std::uint16_t habana_vendor_id = 0x1da3;

// What the habanalabs driver says about one of its PCI functions.
struct DriverDevice {
  PciFunction pci;
  std::optional<std::string> device_type;  // "GAUDI2"
  std::optional<std::string> status;       // "Operational", "Needs reset", ...
  std::optional<std::string> driver_version;
  std::optional<std::string> module_id;
};

std::vector<DriverDevice> driver_devices(const System& sys) {
  std::vector<DriverDevice> out;
  for (const auto& addr : pci_functions_of_driver(sys, "habanalabs")) {
    DriverDevice d;
    d.pci = read_pci_function(sys, addr);
    if (d.pci.vendor_id && *d.pci.vendor_id != habana_vendor_id) continue;
    // Documentation/ABI/testing/sysfs-driver-habanalabs: attributes of the PCI device.
    const std::string dir = "/sys/bus/pci/devices/" + addr.to_string();
    d.device_type = read_text(sys, dir + "/device_type");
    d.status = read_text(sys, dir + "/status");
    d.driver_version = read_text(sys, dir + "/driver_ver");
    d.module_id = read_text(sys, dir + "/module_id");
    out.push_back(std::move(d));
  }
  return out;
}

// hl-smi's views: the CSV query, then the default table every version prints
// (some builds and containers refuse the query form).
std::optional<parsers::HlSmiReport> run_hl_smi(const DetectContext& ctx, DetectorOutput& out) {
  const std::vector<std::string> query = {"hl-smi", text::cat("--query-aip=", parsers::hl_smi_query_fields),
                                          "--format=csv,nounits"};
  const std::vector<std::string> table = {"hl-smi"};
  ToolViewWalk walk(ctx, out);
  const std::vector<std::string>* used = &query;
  auto report = walk.read(query, parsers::parse_hl_smi_csv);
  if (!report) {
    used = &table;
    report = walk.read(table, parsers::parse_hl_smi_table);
  }
  walk.finish(report ? used : nullptr, used == &table ? "no uuid, serial or module id" : "");
  if (!report) return std::nullopt;
  for (auto& p : report->problems) ctx.warn(out, WarningKind::parse_error, std::move(p));
  report->problems.clear();
  return report;
}

void set_published_memory(DeviceProfile& p, const parsers::GaudiModel& model) {
  if (!model.published_memory_bytes) return;
  p.properties["published_memory_bytes"] = std::to_string(*model.published_memory_bytes);
  p.properties["published_spec"] = text::cat("Intel ", model.generation, ": ", *model.published_memory_bytes / text::bytes_per_gib,
                                             " GiB HBM per device (product specification, not read from the device)");
}

// NUMA node, CPU list, PCIe link and the driver's own facts.
void apply_driver_facts(DeviceProfile& p, const DriverDevice& d, DetectorOutput& out, const DetectContext& ctx) {
  p.pci_bus_id = d.pci.address.to_string();
  p.numa_node = d.pci.numa_node;
  p.cpu_affinity = d.pci.local_cpulist;
  if (d.pci.link.current_speed_gts || d.pci.link.max_speed_gts) p.pcie = d.pci.link;
  if (d.device_type) p.properties["device_type"] = *d.device_type;
  if (d.module_id && !p.properties.contains("module_id")) p.properties["module_id"] = *d.module_id;
  if (!p.driver_version && d.driver_version) p.driver_version = d.driver_version;
  if (d.status) {
    p.properties["status"] = *d.status;
    if (!text::icontains(*d.status, "operational")) {
      p.available = false;
      ctx.warn(out, WarningKind::unsupported,
               text::cat("habanalabs reports ", p.pci_bus_id.value_or("?"), " as '", text::excerpt(*d.status, 40),
                         "' (/sys/bus/pci/devices/", p.pci_bus_id.value_or("?"), "/status)"));
    }
  }
}

std::optional<parsers::GaudiModel> model_of(const DriverDevice& d) {
  if (d.device_type)
    if (auto m = parsers::gaudi_model_from_name(*d.device_type)) return m;
  if (d.pci.device_id) return parsers::gaudi_model_from_pci(*d.pci.device_id);
  return std::nullopt;
}

DeviceProfile gaudi_profile() {
  DeviceProfile p;
  p.backend = Backend::gaudi;
  p.family = Family::asic;
  p.vendor = "Intel";
  p.memory_kind = MemoryKind::dedicated;
  return p;
}

void set_model(DeviceProfile& p, const std::optional<parsers::GaudiModel>& model, std::string_view board) {
  if (model) {
    p.name = board.empty() ? text::cat("Intel ", model->generation) : text::cat("Intel ", model->generation, " ", board);
    p.architecture = std::string(model->generation);
    p.compute_capability = std::string(model->compute_capability);
  } else {
    p.name = board.empty() ? std::string("Habana accelerator") : std::string(board);
  }
}

// A garbled listing that names one AIP twice must not count its memory twice.
// Rows are the same AIP when they share a bus id, or, where either has none,
// a UUID or an index; the first row is kept.
void drop_repeated_rows(const DetectContext& ctx, DetectorOutput& out, std::vector<parsers::HlSmiDevice>& devices) {
  const auto same_aip = [](const parsers::HlSmiDevice& a, const parsers::HlSmiDevice& b) {
    if (a.bus_id && b.bus_id) return *a.bus_id == *b.bus_id;
    return (a.uuid && a.uuid == b.uuid) || (a.index && a.index == b.index);
  };
  // Compacted in place: [begin, kept) holds the rows kept so far.
  auto kept = devices.begin();
  for (auto& d : devices) {
    const auto first = std::find_if(devices.begin(), kept, [&](const auto& k) { return same_aip(k, d); });
    if (first == kept) {
      if (&*kept != &d) *kept = std::move(d);
      ++kept;
      continue;
    }
    const std::string what = d.bus_id && first->bus_id ? text::cat("the AIP at ", d.bus_id->to_string())
                             : d.uuid && d.uuid == first->uuid ? text::cat("AIP ", text::excerpt(*d.uuid, 60))
                                                               : text::cat("AIP index ", *d.index);
    ctx.warn(out, WarningKind::inconsistent, text::cat("hl-smi lists ", what, " twice; the first row is kept"));
  }
  devices.erase(kept, devices.end());
}

DetectorOutput detect_gaudi(const DetectContext& ctx) {
  DetectorOutput out;
  const System& sys = ctx.system();
  const bool have_tool = sys.find_tool("hl-smi").has_value();
  std::vector<DriverDevice> bound = driver_devices(sys);
  if (!have_tool && bound.empty()) return out;

  std::optional<parsers::HlSmiReport> report;
  if (have_tool) report = run_hl_smi(ctx, out);

  std::vector<bool> matched(bound.size(), false);
  const auto find_bound = [&](const std::optional<PciAddress>& addr) -> std::optional<std::size_t> {
    if (!addr) return std::nullopt;
    for (std::size_t i = 0; i < bound.size(); ++i)
      if (bound[i].pci.address == *addr) return i;
    return std::nullopt;
  };

  if (report) {
    auto& devices = report->devices;
    // hl-smi lists AIPs by index; the bus ids themselves are not in order.
    std::sort(devices.begin(), devices.end(), [](const auto& a, const auto& b) {
      return std::pair(a.index.value_or(UINT32_MAX), a.bus_id) < std::pair(b.index.value_or(UINT32_MAX), b.bus_id);
    });
    drop_repeated_rows(ctx, out, devices);
    bool indexes_usable = true;
    for (std::size_t i = 0; i < devices.size(); ++i)
      if (!devices[i].index || (i > 0 && devices[i].index == devices[i - 1].index)) indexes_usable = false;
    for (std::size_t i = 0; i < devices.size(); ++i) {
      auto& d = devices[i];
      DeviceProfile p = gaudi_profile();
      p.index = indexes_usable ? *d.index : static_cast<std::uint32_t>(i);
      p.runtime_index = d.index;
      p.id = device_id(Backend::gaudi, p.index);
      const auto b = find_bound(d.bus_id);
      std::optional<parsers::GaudiModel> model = parsers::gaudi_model_from_name(d.name);
      if (!model && b) model = model_of(bound[*b]);
      set_model(p, model, d.name);
      if (d.bus_id) p.pci_bus_id = d.bus_id->to_string();
      p.uuid = d.uuid;
      if (d.serial) p.properties["serial"] = *d.serial;
      if (d.module_id) p.properties["module_id"] = std::to_string(*d.module_id);
      p.memory_bytes = d.memory_total_bytes;
      p.memory_used_bytes = d.memory_used_bytes;
      p.memory_free_bytes = d.memory_free_bytes;
      if (!p.memory_free_bytes && d.memory_total_bytes && d.memory_used_bytes && *d.memory_used_bytes <= *d.memory_total_bytes)
        p.memory_free_bytes = *d.memory_total_bytes - *d.memory_used_bytes;
      p.driver_version = d.driver_version ? d.driver_version : report->driver_version;
      if (report->tool_version) {
        // "hl-1.22.1-fw-61.4.2.1": the software release, then the firmware.
        p.properties["hl_smi_version"] = *report->tool_version;
        if (const auto fw = report->tool_version->find("-fw-"); fw != std::string::npos)
          p.firmware_version = report->tool_version->substr(fw + 4);
      }
      p.temperature_c = d.temperature_c;
      p.power_watts = d.power_watts;
      p.power_limit_watts = d.power_limit_watts;
      p.utilization_percent = d.utilization_percent;
      if (b) {
        matched[*b] = true;
        apply_driver_facts(p, bound[*b], out, ctx);
      }
      out.devices.push_back(std::move(p));
    }
    std::string missing;
    for (std::size_t i = 0; i < bound.size(); ++i)
      if (!matched[i]) missing += (missing.empty() ? "" : ", ") + bound[i].pci.address.to_string();
    if (!missing.empty())
      ctx.warn(out, WarningKind::inconsistent,
               text::cat("hl-smi does not list ", missing, ", bound to the habanalabs driver; kept hl-smi's view"));
    return out;
  }

  // No usable hl-smi: the driver's devices, without memory, temperature or power.
  if (bound.empty()) return out;
  if (!have_tool)
    ctx.warn(out, WarningKind::tool_missing,
             text::cat("hl-smi is not on PATH: ", bound.size(),
                       " Gaudi device(s) bound to habanalabs reported from sysfs, without memory, temperature or power"));
  for (std::size_t i = 0; i < bound.size(); ++i) {
    DeviceProfile p = gaudi_profile();
    p.index = static_cast<std::uint32_t>(i);
    p.id = device_id(Backend::gaudi, p.index);
    const auto model = model_of(bound[i]);
    set_model(p, model, {});
    if (model) set_published_memory(p, *model);
    apply_driver_facts(p, bound[i], out, ctx);
    out.devices.push_back(std::move(p));
  }
  return out;
}

constexpr std::array<std::string_view, 1> gaudi_tools = {"hl-smi"};

}  // namespace

constexpr std::string_view gaudi_drivers[] = {"habanalabs"};
constexpr PciKind gaudi_pci[] = {{habana_vendor_id, 0x1200, "Intel Gaudi accelerator"}};
// Older drivers' /dev/hlN beside the accel class's /dev/accel/accelN.
constexpr std::string_view gaudi_nodes[] = {"hl"};  // and /dev/accel/accelN, as an accel-class backend
constexpr VisibilityVariable gaudi_visibility[] = {
    {"HABANA_VISIBLE_MODULES", VisibilityVariable::Role::selects},
    {"HABANA_VISIBLE_DEVICES", VisibilityVariable::Role::container},
};
constexpr std::string_view gaudi_runtimes[] = {"vllm", "optimum-habana"};
constexpr ToolPackage gaudi_packages[] = {{"hl-smi", "the Gaudi software's habanalabs-firmware-tools"}};

const Detector gaudi_detector{
    .name = "gaudi",
    .backend = Backend::gaudi,
    .tools = gaudi_tools,
    .detect = &detect_gaudi,
    .facts = {.drivers = gaudi_drivers,
              .pci = gaudi_pci,
              .device_nodes = gaudi_nodes,
              .accel_class = true,
              .driver_remedy = "load habanalabs (sudo modprobe habanalabs), or install the Gaudi software's driver",
              .vendor = "Intel",
              .visibility_variables = gaudi_visibility,
              .runtimes = gaudi_runtimes,
              .container_remedy = "start the container with --device /dev/accel",
              .tool_packages = gaudi_packages,
              .device_nodes_of = &accel_nodes_of,
              .telemetry = "hl-smi --query-aip (the table where the query is refused)"},
};

}  // namespace hwaccel
