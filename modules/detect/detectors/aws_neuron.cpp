// AWS Neuron backend: neuron-ls (newer `--output-format json`, older
// `--json-output`, the default table), then /dev/neuron* with the driver's
// sysfs. NeuronLink neighbours become device links.
module;
#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <simdjson.h>
#include "json_input.hpp"
module hwaccel.detectors;

namespace hwaccel {
namespace parsers {
namespace {

constexpr std::uint32_t max_devices = 4096;

bool neuron_not_available(std::string_view v) noexcept {
  v = text::trim(v);
  return v.empty() || v == "NA" || v == "N/A" || v == "-";
}

std::optional<std::uint32_t> small_uint(std::string_view v, std::uint32_t max = 1'000'000) noexcept {
  const auto n = text::parse_u64(v);
  if (!n || *n > max) return std::nullopt;
  return static_cast<std::uint32_t>(*n);
}

// neuron-ls prints the NUMA node as a string ("1"); "-1" means none.
std::optional<std::int32_t> numa_value(std::string_view v) noexcept {
  const auto n = text::parse_i64(v);
  if (!n || *n < 0 || *n > 65535) return std::nullopt;
  return static_cast<std::int32_t>(*n);
}

// [0,1,2,3] -> "0-3"; a non-contiguous list stays a comma list.
std::string core_id_list(const std::vector<std::uint64_t>& ids) {
  if (ids.empty()) return {};
  bool contiguous = true;
  for (std::size_t i = 1; i < ids.size(); ++i)
    if (ids[i] != ids[i - 1] + 1) contiguous = false;
  if (contiguous) return ids.size() == 1 ? std::to_string(ids[0]) : text::cat(ids.front(), "-", ids.back());
  std::string s;
  for (auto id : ids) s += (s.empty() ? "" : ",") + std::to_string(id);
  return s;
}

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

std::optional<std::string> json_string(object o, std::string_view key) {
  std::string_view v;
  if (o[key].get_string().get(v) != simdjson::SUCCESS) return std::nullopt;
  return std::string(v);
}

std::optional<std::uint64_t> json_uint(object o, std::string_view key) {
  element e;
  if (o[key].get(e) != simdjson::SUCCESS) return std::nullopt;
  std::uint64_t v = 0;
  if (e.get_uint64().get(v) == simdjson::SUCCESS) return v;
  std::string_view s;
  if (e.get_string().get(s) == simdjson::SUCCESS) return text::parse_u64(s);
  return std::nullopt;
}

bool is_device_entry(element e) {
  object o;
  element unused;
  return e.get_object().get(o) == simdjson::SUCCESS && o["neuron_device"].get(unused) == simdjson::SUCCESS;
}

void read_instance_fields(object o, NeuronLsReport& report) {
  // Per device in `--json-output` of recent releases, top level in `--output-format json`.
  for (std::string_view key : {"instance_type", "instance-type"})
    if (!report.instance_type) report.instance_type = json_string(o, key);
  for (std::string_view key : {"instance_id", "instance-id"})
    if (!report.instance_id) report.instance_id = json_string(o, key);
  if (!report.logical_neuroncore_config)
    if (const auto v = json_uint(o, "logical_neuroncore_config"); v && *v > 0 && *v <= 64)
      report.logical_neuroncore_config = static_cast<std::uint32_t>(*v);
}

void read_device_entry(object o, std::size_t position, NeuronLsReport& report) {
  NeuronLsDevice d;
  const auto index = json_uint(o, "neuron_device");
  if (!index || *index >= max_devices) {
    report.problems.push_back(text::cat("neuron-ls JSON entry ", position, ": neuron_device is not a device number"));
    return;
  }
  d.index = static_cast<std::uint32_t>(*index);
  if (const auto bdf = json_string(o, "bdf")) {
    d.bus_id = PciAddress::parse(*bdf);
    if (!d.bus_id)
      report.problems.push_back(
          text::cat("neuron-ls JSON device ", d.index, ": bdf '", text::excerpt(*bdf, 30), "' is not a PCI address"));
  }
  d.cpu_affinity = json_string(o, "cpu_affinity");
  if (d.cpu_affinity && neuron_not_available(*d.cpu_affinity)) d.cpu_affinity.reset();
  {
    element numa;
    if (o["numa_node"].get(numa) == simdjson::SUCCESS) {
      std::string_view s;
      std::int64_t n = 0;
      if (numa.get_string().get(s) == simdjson::SUCCESS) d.numa_node = numa_value(s);
      else if (numa.get_int64().get(n) == simdjson::SUCCESS && n >= 0 && n < 65536) d.numa_node = static_cast<std::int32_t>(n);
    }
  }
  {
    array peers;  // null on single-device instances
    if (o["connected_to"].get_array().get(peers) == simdjson::SUCCESS)
      for (element peer : peers) {
        std::uint64_t v = 0;
        if (peer.get_uint64().get(v) == simdjson::SUCCESS && v < max_devices) d.connected_to.push_back(static_cast<std::uint32_t>(v));
      }
  }
  if (const auto nc = json_uint(o, "nc_count"); nc && *nc <= 1024) d.neuroncores = static_cast<std::uint32_t>(*nc);
  if (const auto lnc = json_uint(o, "logical_neuroncore_config"); lnc && *lnc > 0 && *lnc <= 64)
    d.logical_neuroncore_config = static_cast<std::uint32_t>(*lnc);
  if (const auto mem = json_uint(o, "memory_size")) {
    if (*mem <= max_plausible_device_memory) d.memory_bytes = *mem;
    else report.problems.push_back(text::cat("neuron-ls JSON device ", d.index, ": memory_size ", *mem, " is implausible"));
  }
  {
    array ids;
    if (o["neuroncore_ids"].get_array().get(ids) == simdjson::SUCCESS) {
      std::vector<std::uint64_t> v;
      for (element id : ids) {
        std::uint64_t n = 0;
        if (id.get_uint64().get(n) == simdjson::SUCCESS) v.push_back(n);
      }
      if (!v.empty()) d.neuroncore_ids = core_id_list(v);
    }
  }
  {
    array procs;
    if (o["neuron_processes"].get_array().get(procs) == simdjson::SUCCESS)
      d.process_count = static_cast<std::uint32_t>(std::min<std::size_t>(procs.size(), 1'000'000));
  }
  read_instance_fields(o, report);
  report.devices.push_back(std::move(d));
}

// The newer object form keeps the device entries in a member array; its name is not
// relied on: any array of entries that carry neuron_device is the device list.
bool collect_device_arrays(element e, int depth, NeuronLsReport& report) {
  if (depth > 4) return false;
  array a;
  if (e.get_array().get(a) == simdjson::SUCCESS) {
    bool found = false;
    std::size_t position = 0;
    for (element item : a) {
      if (is_device_entry(item)) {
        object o;
        (void)item.get_object().get(o);
        read_device_entry(o, position, report);
        found = true;
      } else if (collect_device_arrays(item, depth + 1, report)) {
        found = true;
      }
      ++position;
    }
    return found;
  }
  object o;
  if (e.get_object().get(o) != simdjson::SUCCESS) return false;
  if (is_device_entry(e)) {
    read_device_entry(o, 0, report);
    return true;
  }
  read_instance_fields(o, report);
  bool found = false;
  for (auto field : o)
    if (collect_device_arrays(field.value, depth + 1, report)) found = true;
  return found;
}

}  // namespace

Result<NeuronLsReport> parse_neuron_ls_json(std::string_view json) {
  simdjson::dom::parser parser;
  element doc;
  if (const auto err = json_input::parse(parser, json).get(doc); err != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat("neuron-ls JSON is not valid JSON: ", simdjson::error_message(err)));
  NeuronLsReport report;
  array top;
  const bool is_array = doc.get_array().get(top) == simdjson::SUCCESS;
  const bool found = collect_device_arrays(doc, 0, report);
  if (!found && !(is_array && top.size() == 0))
    return fail(ErrorKind::parse_error, "neuron-ls JSON has no device entry (no object with neuron_device)");
  std::sort(report.devices.begin(), report.devices.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
  return report;
}

namespace {

std::vector<std::string_view> row_cells(std::string_view line) {
  line = text::trim(line);
  if (line.size() < 2 || line.front() != '|') return {};
  line.remove_prefix(1);
  if (!line.empty() && line.back() == '|') line.remove_suffix(1);
  return text::split_trimmed(line, '|');
}

std::string normalized_name(std::string_view a, std::string_view b) {
  std::string name;
  for (std::string_view part : {a, b})
    for (std::string_view w : text::words(part)) {
      if (!name.empty()) name += ' ';
      for (char c : w) name += (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
    }
  return name;
}

}  // namespace

Result<NeuronLsReport> parse_neuron_ls_table(std::string_view text_in) {
  NeuronLsReport report;
  enum class State { before, header, body, after } state = State::before;
  std::vector<std::vector<std::string_view>> header_rows;
  std::vector<std::string> columns;
  const auto column = [&](std::string_view name) -> std::optional<std::size_t> {
    for (std::size_t i = 0; i < columns.size(); ++i)
      if (columns[i] == name) return i;
    return std::nullopt;
  };
  std::optional<std::size_t> c_device, c_cores, c_logical, c_ids, c_memory, c_connected, c_bdf, c_cpu, c_numa, c_pid;
  std::size_t line_no = 0;
  std::string_view rest = text_in;
  while (!rest.empty() && state != State::after) {
    const std::string_view raw = text::next_line(rest);
    const std::string_view line = text::trim(raw);
    ++line_no;
    const bool separator = line.starts_with("+-");
    if (state == State::before) {
      if (separator) {
        state = State::header;
        continue;
      }
      // Newer releases print "instance-type: trn2n.48xlarge" lines first; older ones
      // may print warnings. Anything else before the table is ignored.
      const auto colon = line.find(':');
      if (colon == std::string_view::npos) continue;
      const std::string_view key = text::trim(line.substr(0, colon)), value = text::trim(line.substr(colon + 1));
      if (key == "instance-type" && !value.empty()) report.instance_type = std::string(value);
      else if (key == "instance-id" && !value.empty()) report.instance_id = std::string(value);
      else if (key == "logical-neuroncore-config") {
        if (const auto v = small_uint(value, 64); v && *v > 0) report.logical_neuroncore_config = v;
      }
      continue;
    }
    if (state == State::header) {
      if (separator) {
        // Column names are split over the header rows: "NEURON" / "DEVICE".
        const std::size_t n = header_rows.empty() ? 0 : header_rows[0].size();
        for (std::size_t i = 0; i < n; ++i)
          columns.push_back(normalized_name(header_rows[0][i], header_rows.size() > 1 && i < header_rows[1].size()
                                                                    ? header_rows[1][i]
                                                                    : std::string_view{}));
        c_device = column("NEURON DEVICE");
        c_cores = column("NEURON CORES");
        c_logical = column("LOGICAL NC");
        c_ids = column("NEURON CORE IDS");
        c_memory = column("NEURON MEMORY");
        c_connected = column("CONNECTED DEVICES");
        c_bdf = column("PCI BDF");
        c_cpu = column("CPU AFFINITY");
        c_numa = column("NUMA NODE");
        c_pid = column("PID");
        if (!c_device) return fail(ErrorKind::parse_error, "the neuron-ls table has no NEURON DEVICE column");
        state = State::body;
        continue;
      }
      auto cells = row_cells(line);
      if (cells.empty()) return fail(ErrorKind::parse_error, text::cat("neuron-ls table header line ", line_no, " is not a row"));
      header_rows.push_back(std::move(cells));
      continue;
    }
    // body
    if (separator) continue;
    if (!line.starts_with("|")) {
      state = State::after;  // the topology drawing or a trailing message
      continue;
    }
    const auto cells = row_cells(line);
    if (cells.size() != columns.size()) {
      report.problems.push_back(text::cat("neuron-ls table line ", line_no, " has ", cells.size(), " cells where the header has ",
                                          columns.size()));
      continue;
    }
    const auto cell = [&](const std::optional<std::size_t>& i) { return i ? cells[*i] : std::string_view{}; };
    if (cell(c_device).empty()) {
      // A further process of the device above.
      if (!report.devices.empty() && !neuron_not_available(cell(c_pid))) ++report.devices.back().process_count;
      continue;
    }
    NeuronLsDevice d;
    const auto index = small_uint(cell(c_device), max_devices - 1);
    if (!index) {
      report.problems.push_back(
          text::cat("neuron-ls table line ", line_no, ": device '", text::excerpt(cell(c_device), 20), "' is not a number"));
      continue;
    }
    d.index = *index;
    const auto cores = small_uint(cell(c_cores), 1024);
    if (c_logical) {
      // v2.21-era tables: NEURON CORES is physical, LOGICAL NC what the runtime uses.
      d.physical_neuroncores = cores;
      d.neuroncores = small_uint(cell(c_logical), 1024);
    } else {
      d.neuroncores = cores;
    }
    if (!neuron_not_available(cell(c_ids))) d.neuroncore_ids = std::string(cell(c_ids));
    // "96 GB": the tool's GB are binary (the JSON of the same run says 103079215104).
    if (!neuron_not_available(cell(c_memory))) {
      d.memory_bytes = text::parse_memory_size(cell(c_memory));
      if (!d.memory_bytes || *d.memory_bytes > max_plausible_device_memory) {
        d.memory_bytes.reset();
        report.problems.push_back(text::cat("neuron-ls table device ", d.index, ": memory '", text::excerpt(cell(c_memory), 30),
                                            "' is not a size"));
      }
    }
    for (std::string_view peer : text::split_trimmed(cell(c_connected), ','))
      if (const auto p = small_uint(peer, max_devices - 1)) d.connected_to.push_back(*p);
    if (!neuron_not_available(cell(c_bdf))) {
      d.bus_id = PciAddress::parse(cell(c_bdf));
      if (!d.bus_id)
        report.problems.push_back(
            text::cat("neuron-ls table device ", d.index, ": PCI BDF '", text::excerpt(cell(c_bdf), 30), "' is not an address"));
    }
    if (!neuron_not_available(cell(c_cpu))) d.cpu_affinity = std::string(cell(c_cpu));
    d.numa_node = numa_value(cell(c_numa));
    if (!neuron_not_available(cell(c_pid))) d.process_count = 1;
    d.logical_neuroncore_config = report.logical_neuroncore_config;
    report.devices.push_back(std::move(d));
  }
  if (state == State::before) return fail(ErrorKind::parse_error, "neuron-ls printed no table");
  if (columns.empty()) return fail(ErrorKind::parse_error, "the neuron-ls table has no header");
  std::sort(report.devices.begin(), report.devices.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
  return report;
}

namespace {

// AWS Neuron documentation (Inf1/Inf2/Trn1/Trn2 architecture pages): NeuronCores and
// device memory per chip. Trainium3's figures are not filled in.
constexpr NeuronChip inferentia{"Inferentia", "NeuronCore-v1", "inf1", 4, 8 * text::bytes_per_gib, {}};
constexpr NeuronChip inferentia2{"Inferentia2", "NeuronCore-v2", "inf2", 2, 32 * text::bytes_per_gib, {}};
constexpr NeuronChip trainium{"Trainium", "NeuronCore-v2", "trn1", 2, 32 * text::bytes_per_gib, {}};
constexpr NeuronChip trainium2{"Trainium2", "NeuronCore-v3", "trn2", 8, 96 * text::bytes_per_gib,
                               "with logical-neuroncore-config 2 (the default) the runtime sees 4 logical cores"};
constexpr NeuronChip trainium3{"Trainium3", "", "trn3", std::nullopt, std::nullopt, {}};

}  // namespace

std::optional<NeuronChip> neuron_chip_from_instance_type(std::string_view t) noexcept {
  t = text::trim(t);
  const auto dot = t.find('.');
  const std::string_view family = t.substr(0, dot);
  if (text::iequals(family, "inf1")) return inferentia;
  if (text::iequals(family, "inf2")) return inferentia2;
  if (text::iequals(family, "trn1") || text::iequals(family, "trn1n")) return trainium;
  if (text::iequals(family, "trn2") || text::iequals(family, "trn2n") || text::iequals(family, "trn2u")) return trainium2;
  if (text::iequals(family, "trn3") || text::iequals(family, "trn3u")) return trainium3;
  return std::nullopt;
}

std::optional<NeuronChip> neuron_chip_from_pci(std::uint16_t device_id) noexcept {
  // aws-neuron-driver neuron_device.h: INF1_DEVICE_ID0..3, TRN1_DEVICE_ID0,
  // INF2_DEVICE_ID0, TRN2_DEVICE_ID0, TRN3_DEVICE_ID0/1.
  switch (device_id) {
    case 0x7064:
    case 0x7065:
    case 0x7066:
    case 0x7067: return inferentia;
    case 0x7164: return trainium;
    case 0x7264: return inferentia2;
    case 0x7364: return trainium2;
    case 0x7564:
    case 0x7565: return trainium3;
    default: return std::nullopt;
  }
}

std::optional<NeuronChip> neuron_chip_from_name(std::string_view name) noexcept {
  if (text::icontains(name, "inferentia2")) return inferentia2;
  if (text::icontains(name, "inferentia")) return inferentia;
  if (text::icontains(name, "trainium2")) return trainium2;
  if (text::icontains(name, "trainium3")) return trainium3;
  if (text::icontains(name, "trainium")) return trainium;
  return std::nullopt;
}

}  // namespace parsers

namespace {

// neuron-ls views, newest first: Neuron 2.34 replaced `--json-output` with
// `--output-format json`; releases before JSON existed only print the table.
std::optional<parsers::NeuronLsReport> run_neuron_ls(const DetectContext& ctx, DetectorOutput& out) {
  const std::array<std::vector<std::string>, 3> forms = {{
      {"neuron-ls", "--output-format", "json"},
      {"neuron-ls", "--json-output"},
      {"neuron-ls"},
  }};
  ToolViewWalk walk(ctx, out);
  for (std::size_t i = 0; i < forms.size(); ++i) {
    auto report = i + 1 < forms.size() ? walk.read(forms[i], parsers::parse_neuron_ls_json)
                                       : walk.read(forms[i], parsers::parse_neuron_ls_table);
    if (!report) continue;
    walk.finish(&forms[i]);
    for (auto& p : report->problems) ctx.warn(out, WarningKind::parse_error, std::move(p));
    report->problems.clear();
    return report;
  }
  walk.finish(nullptr);
  return std::nullopt;
}

void set_chip(DeviceProfile& p, const std::optional<parsers::NeuronChip>& chip, bool memory_measured) {
  p.name = chip ? text::cat("AWS ", chip->name) : std::string("AWS Neuron device");
  if (!chip) return;
  if (!chip->neuroncore.empty()) p.architecture = std::string(chip->neuroncore);
  p.compute_capability = std::string(chip->instance_family);
  if (memory_measured) return;
  // Known only from the product documentation: labelled, never memory_bytes.
  if (chip->published_memory_bytes) {
    p.properties["published_memory_bytes"] = std::to_string(*chip->published_memory_bytes);
    std::string spec = text::cat("AWS ", chip->name, ": ", *chip->published_memory_bytes / text::bytes_per_gib, " GiB device memory");
    if (chip->published_neuroncores) spec += text::cat(", ", *chip->published_neuroncores, " ", chip->neuroncore);
    spec += " per chip (AWS documentation, not read from the device)";
    if (!chip->published_note.empty()) spec += text::cat("; ", chip->published_note);
    p.properties["published_spec"] = spec;
  }
  if (chip->published_neuroncores) p.properties["published_neuroncores"] = std::to_string(*chip->published_neuroncores);
}

DeviceProfile neuron_profile(std::uint32_t index) {
  DeviceProfile p;
  p.backend = Backend::aws_neuron;
  p.family = Family::asic;
  p.vendor = "AWS";
  p.index = index;
  p.id = device_id(Backend::aws_neuron, index);
  p.runtime_index = index;
  p.memory_kind = MemoryKind::dedicated;
  return p;
}

void add_links(DetectorOutput& out, const std::vector<std::pair<std::uint32_t, std::vector<std::uint32_t>>>& peers,
               std::string_view source) {
  std::set<std::uint32_t> present;
  for (const auto& [index, _] : peers) present.insert(index);
  std::set<std::pair<std::uint32_t, std::uint32_t>> pairs;
  for (const auto& [index, list] : peers)
    for (auto peer : list)
      // A container sees a subset of the devices: neighbours outside it are not linked.
      if (peer != index && present.contains(peer)) pairs.emplace(std::min(index, peer), std::max(index, peer));
  if (pairs.empty()) return;
  std::set<std::uint32_t> members;
  for (const auto& [a, b] : pairs) {
    DeviceLink link;
    link.a = device_id(Backend::aws_neuron, a);
    link.b = device_id(Backend::aws_neuron, b);
    link.kind = LinkKind::neuronlink;
    link.source = std::string(source);
    out.links.push_back(std::move(link));
    members.insert(a);
    members.insert(b);
  }
  Interconnect fabric;
  fabric.kind = "neuronlink";
  fabric.name = "NeuronLink";
  for (auto m : members) fabric.device_ids.push_back(device_id(Backend::aws_neuron, m));
  fabric.source = std::string(source);
  out.interconnects.push_back(std::move(fabric));
}

std::vector<std::uint32_t> dev_node_indexes(const System& sys) {
  std::vector<std::uint32_t> out;
  for (const auto& name : list_names(sys, "/dev")) {
    if (!name.starts_with("neuron")) continue;
    if (const auto n = text::parse_name_number(std::string_view(name).substr(6)); n && *n < 4096) out.push_back(*n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void from_report(const DetectContext& ctx, parsers::NeuronLsReport& report, DetectorOutput& out) {
  const System& sys = ctx.system();
  std::optional<parsers::NeuronChip> instance_chip;
  if (report.instance_type) instance_chip = parsers::neuron_chip_from_instance_type(*report.instance_type);
  std::vector<std::pair<std::uint32_t, std::vector<std::uint32_t>>> peers;
  std::set<std::uint32_t> seen;
  std::set<PciAddress> seen_buses;
  for (auto& d : report.devices) {
    if (!seen.insert(d.index).second) {
      ctx.warn(out, WarningKind::inconsistent, text::cat("neuron-ls lists device ", d.index, " twice; kept the first"));
      continue;
    }
    if (d.bus_id && !seen_buses.insert(*d.bus_id).second) {
      ctx.warn(out, WarningKind::inconsistent,
               text::cat("neuron-ls gives device ", d.index, " the bus id ", d.bus_id->to_string(),
                         " of an earlier device; kept the first"));
      continue;
    }
    DeviceProfile p = neuron_profile(d.index);
    std::optional<PciFunction> pci;
    if (d.bus_id) {
      p.pci_bus_id = d.bus_id->to_string();
      PciFunction f = read_pci_function(sys, *d.bus_id);
      if (f.vendor_id) pci = std::move(f);
    }
    auto chip = instance_chip;
    if (!chip && pci && pci->device_id) chip = parsers::neuron_chip_from_pci(*pci->device_id);
    p.memory_bytes = d.memory_bytes;
    set_chip(p, chip, d.memory_bytes.has_value());
    p.compute_units = d.neuroncores;
    const auto lnc = d.logical_neuroncore_config ? d.logical_neuroncore_config : report.logical_neuroncore_config;
    if (lnc) p.properties["logical_neuroncore_config"] = std::to_string(*lnc);
    if (d.physical_neuroncores) p.properties["physical_neuroncores"] = std::to_string(*d.physical_neuroncores);
    else if (d.neuroncores && lnc) p.properties["physical_neuroncores"] = std::to_string(*d.neuroncores * *lnc);
    if (d.neuroncore_ids) p.properties["neuroncore_ids"] = *d.neuroncore_ids;
    if (report.instance_type) p.properties["instance_type"] = *report.instance_type;
    p.numa_node = d.numa_node;
    p.cpu_affinity = d.cpu_affinity;
    if (pci) {
      if (!p.numa_node) p.numa_node = pci->numa_node;
      if (!p.cpu_affinity) p.cpu_affinity = pci->local_cpulist;
      if (pci->link.current_speed_gts || pci->link.max_speed_gts) p.pcie = pci->link;
    }
    peers.emplace_back(d.index, d.connected_to);
    out.devices.push_back(std::move(p));
  }
  add_links(out, peers, "neuron-ls");
}

void from_driver(const DetectContext& ctx, const std::vector<std::uint32_t>& nodes, DetectorOutput& out) {
  const System& sys = ctx.system();
  // The neuron PCI functions (vendor 0x1d0f also makes ENA, EFA and NVMe functions).
  std::optional<parsers::NeuronChip> pci_chip;
  bool pci_uniform = true;
  for (const auto& f : pci_functions_of_vendor(sys, 0x1d0f)) {
    const auto chip = f.device_id ? parsers::neuron_chip_from_pci(*f.device_id) : std::nullopt;
    if (!chip) continue;
    if (pci_chip && pci_chip->name != chip->name) pci_uniform = false;
    pci_chip = chip;
  }
  std::vector<std::pair<std::uint32_t, std::vector<std::uint32_t>>> peers;
  for (const auto index : nodes) {
    DeviceProfile p = neuron_profile(index);
    p.properties["device_node"] = text::cat("/dev/neuron", index);
    // Neuron sysfs user guide: /sys/devices/virtual/neuron_device/neuronN/.
    const std::string dir = text::cat("/sys/devices/virtual/neuron_device/neuron", index);
    std::optional<parsers::NeuronChip> chip;
    for (std::string_view attr : {"/info/architecture/device_name", "/info/architecture/device_type"})
      if (!chip)
        if (const auto name = read_text(sys, dir + std::string(attr))) chip = parsers::neuron_chip_from_name(*name);
    if (const auto type = read_text(sys, dir + "/info/architecture/instance_type")) {
      if (!chip) chip = parsers::neuron_chip_from_instance_type(*type);
      p.properties["instance_type"] = *type;
    }
    if (!chip && pci_chip && pci_uniform) chip = pci_chip;
    set_chip(p, chip, false);
    if (const auto arch = read_text(sys, dir + "/info/architecture/arch_type")) p.properties["arch_type"] = *arch;
    if (const auto serial = read_text(sys, dir + "/info/serial_number")) p.properties["serial"] = *serial;
    // What the driver itself counts.
    if (const auto cores = read_u64(sys, dir + "/core_count"); cores && *cores > 0 && *cores <= 1024)
      p.compute_units = static_cast<std::uint32_t>(*cores);
    std::vector<std::uint32_t> connected;
    if (const auto list = read_text(sys, dir + "/connected_devices"))
      for (std::string_view peer : text::split_trimmed(*list, ','))
        if (const auto n = text::parse_u64(peer); n && *n < 4096) connected.push_back(static_cast<std::uint32_t>(*n));
    peers.emplace_back(index, std::move(connected));
    out.devices.push_back(std::move(p));
  }
  add_links(out, peers, "neuron driver sysfs connected_devices");
}

DetectorOutput detect_aws_neuron(const DetectContext& ctx) {
  DetectorOutput out;
  const System& sys = ctx.system();
  const bool have_tool = sys.find_tool("neuron-ls").has_value();
  // The driver's class devices (/dev/neuronN's sysfs side) exist whenever it is loaded:
  // without them and without neuron-ls there is nothing to look for, and /dev, which
  // can hold hundreds of entries, is not listed.
  if (!have_tool && !sys.exists("/sys/devices/virtual/neuron_device")) return out;
  const auto nodes = dev_node_indexes(sys);
  if (!have_tool && nodes.empty()) return out;
  if (have_tool) {
    if (auto report = run_neuron_ls(ctx, out)) {
      if (!report->devices.empty() || nodes.empty()) {
        from_report(ctx, *report, out);
        return out;
      }
      ctx.warn(out, WarningKind::inconsistent,
               text::cat("neuron-ls lists no device but /dev has ", nodes.size(), " neuron node(s); reported those"));
    }
  } else {
    ctx.warn(out, WarningKind::tool_missing,
             text::cat("neuron-ls is not on PATH: ", nodes.size(),
                       " Neuron device(s) reported from /dev/neuron* and the driver's sysfs, without measured memory"));
  }
  from_driver(ctx, nodes, out);
  return out;
}

constexpr std::array<std::string_view, 1> neuron_tools = {"neuron-ls"};

}  // namespace

constexpr std::string_view neuron_drivers[] = {"neuron"};
// Amazon's vendor id; its network and storage functions are not accelerators.
constexpr PciKind neuron_pci[] = {{0x1d0f, 0, {}}};
constexpr std::string_view neuron_nodes[] = {"neuron"};
constexpr VisibilityVariable neuron_visibility[] = {
    {"NEURON_RT_VISIBLE_CORES", VisibilityVariable::Role::cores},
    {"NEURON_RT_NUM_CORES", VisibilityVariable::Role::other},
};
constexpr std::string_view neuron_runtimes[] = {"vllm", "optimum-neuron"};

const Detector aws_neuron_detector{
    .name = "aws_neuron",
    .backend = Backend::aws_neuron,
    .tools = neuron_tools,
    .detect = &detect_aws_neuron,
    .facts = {.drivers = neuron_drivers,
              .pci = neuron_pci,
              .device_nodes = neuron_nodes,
              .vendor = "AWS",
              .visibility_variables = neuron_visibility,
              .runtimes = neuron_runtimes,
              .telemetry = "the Neuron driver's sysfs counters"},
};

}  // namespace hwaccel
