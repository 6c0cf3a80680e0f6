// Graphcore IPU backend: `gc-info -l` for the IPUs this host can reach (PCIe
// cards, or IPU-Machines over fabric), `gc-info -i -d N` for each one's
// attributes; without gc-info, the PCI functions of vendor 0x1d95. Intel camera
// IPUs (/dev/ipu*, /dev/ipu-psys0) are never looked at.
module;
#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.detectors;

namespace hwaccel {
namespace parsers {

Result<std::vector<GcInfoListEntry>> parse_gc_info_list(std::string_view text_in) {
  std::vector<GcInfoListEntry> entries;
  bool listing_seen = false;
  std::string_view rest = text_in;
  while (!rest.empty()) {
    std::string_view line = text::trim(text::next_line(rest));
    if (line.find("device listing") != std::string_view::npos) listing_seen = true;
    // Members of a multi-IPU group (" |--- Id: ...") repeat single IPUs listed above.
    if (!line.starts_with("-+-")) continue;
    listing_seen = true;
    line.remove_prefix(3);
    GcInfoListEntry e;
    bool have_id = false;
    // "Id:  [0], type:      [PCIe], PCI Domain: [0000:1a:00.0]"
    while (!line.empty()) {
      const auto colon = line.find(':');
      const auto open = line.find('[', colon == std::string_view::npos ? 0 : colon);
      const auto close = open == std::string_view::npos ? open : line.find(']', open);
      if (colon == std::string_view::npos || open == std::string_view::npos || close == std::string_view::npos) break;
      const std::string_view key = text::trim(line.substr(0, colon));
      const std::string_view value = text::trim(line.substr(open + 1, close - open - 1));
      line.remove_prefix(close + 1);
      line = text::trim(line);
      if (line.starts_with(",")) line.remove_prefix(1);
      if (text::iequals(key, "Id")) {
        const auto id = text::parse_u64(value);
        if (!id || *id > 1'000'000)
          return fail(ErrorKind::parse_error, text::cat("gc-info -l: Id '", text::excerpt(value, 20), "' is not a number"));
        e.id = static_cast<std::uint32_t>(*id);
        have_id = true;
        continue;
      }
      if ((text::iequals(key, "target") || text::iequals(key, "type")) && text::icontains(value, "multi")) e.multi_ipu = true;
      e.fields.insert_or_assign(std::string(key), std::string(value));
    }
    if (!have_id) return fail(ErrorKind::parse_error, text::cat("gc-info -l: entry without an Id: '", text::excerpt(line), "'"));
    entries.push_back(std::move(e));
  }
  if (!listing_seen) return fail(ErrorKind::parse_error, "gc-info -l printed no device listing");
  return entries;
}

Result<std::map<std::string, std::string, std::less<>>> parse_gc_info_device(std::string_view text_in) {
  std::map<std::string, std::string, std::less<>> attrs;
  std::string_view rest = text_in;
  while (!rest.empty()) {
    const std::string_view line = text::trim(text::next_line(rest));
    if (line.empty() || line == "Device Info:") continue;
    const auto colon = line.find(": ");
    if (colon == std::string_view::npos) {
      // "clock: 20MHz" always has ": "; a bare "key:" has an empty value.
      if (line.ends_with(":")) attrs.insert_or_assign(std::string(text::trim(line.substr(0, line.size() - 1))), std::string());
      continue;
    }
    attrs.insert_or_assign(std::string(text::trim(line.substr(0, colon))), std::string(text::trim(line.substr(colon + 2))));
  }
  if (attrs.empty()) return fail(ErrorKind::parse_error, "gc-info printed no device attribute");
  return attrs;
}

std::optional<IpuArchitecture> ipu_architecture(std::string_view name) noexcept {
  // Graphcore IPU documentation: Mk1 GC2, 1216 tiles x 256 KiB; Mk2 GC200 (and the
  // Bow/C600 derivative gc-info calls ipu21), 1472 tiles x 624 KiB.
  name = text::trim(name);
  if (text::iequals(name, "ipu1")) return IpuArchitecture{"Mk1 (GC2)", 1216, 256 * 1024};
  if (text::iequals(name, "ipu2")) return IpuArchitecture{"Mk2 (GC200)", 1472, 624 * 1024};
  if (text::iequals(name, "ipu21")) return IpuArchitecture{"Mk2 (C600/Bow)", 1472, 624 * 1024};
  return std::nullopt;
}

}  // namespace parsers

namespace {

constexpr std::uint16_t graphcore_vendor_id = 0x1d95;

std::optional<std::string_view> attr(const std::map<std::string, std::string, std::less<>>& m, std::string_view key) {
  const auto it = m.find(key);
  if (it == m.end()) return std::nullopt;
  const std::string_view v = text::trim(it->second);
  if (v.empty() || v == "N/A") return std::nullopt;
  return v;
}

void set_published_memory(DeviceProfile& p, std::string_view arch_name) {
  const auto arch = parsers::ipu_architecture(arch_name);
  if (!arch) return;
  const std::uint64_t bytes = std::uint64_t{arch->tiles} * arch->sram_bytes_per_tile;
  p.properties["published_memory_bytes"] = std::to_string(bytes);
  p.properties["published_spec"] =
      text::cat("Graphcore ", arch->name, " IPU: ", arch->tiles, " tiles x ", arch->sram_bytes_per_tile / 1024,
                " KiB in-processor memory (product documentation, not read from the device)");
}

DeviceProfile graphcore_profile(std::uint32_t index) {
  DeviceProfile p;
  p.backend = Backend::graphcore;
  p.family = Family::asic;
  p.vendor = "Graphcore";
  p.index = index;
  p.id = device_id(Backend::graphcore, index);
  p.memory_kind = MemoryKind::dedicated;
  return p;
}

std::optional<double> number(std::string_view v, std::string_view unit) {
  const auto n = text::parse_number_with_unit(v);
  if (!n || (!unit.empty() && !n->unit.empty() && !text::iequals(n->unit, unit))) return std::nullopt;
  return n->value;
}

void from_attributes(DeviceProfile& p, const std::map<std::string, std::string, std::less<>>& a) {
  const auto board = attr(a, "board type");
  p.name = board ? text::cat("Graphcore ", *board, " IPU") : std::string("Graphcore IPU");
  if (const auto arch = attr(a, "ipu architecture")) {
    p.architecture = std::string(*arch);
    p.compute_capability = std::string(*arch);
    set_published_memory(p, *arch);
  }
  if (const auto v = attr(a, "pci id")) {
    if (const auto addr = PciAddress::parse(*v)) p.pci_bus_id = addr->to_string();
  }
  if (const auto v = attr(a, "numa node"))
    if (const auto n = text::parse_i64(*v); n && *n >= 0 && *n < 65536) p.numa_node = static_cast<std::int32_t>(*n);
  PcieLink link;
  if (const auto v = attr(a, "link speed")) link.current_speed_gts = parse_link_speed(*v);
  if (const auto v = attr(a, "link width"))
    if (const auto w = text::parse_u64(*v); w && *w > 0 && *w <= 64) link.current_width = static_cast<std::uint32_t>(*w);
  if (link.current_speed_gts || link.current_width) p.pcie = link;
  if (const auto v = attr(a, "driver version")) p.driver_version = std::string(*v);
  if (const auto v = attr(a, "firmware version")) p.firmware_version = std::string(*v);
  if (const auto v = attr(a, "average die temp")) p.temperature_c = number(*v, "C");
  if (const auto v = attr(a, "ipu utilisation")) p.utilization_percent = number(*v, "%");
  if (const auto v = attr(a, "total board power")) p.properties["board_power_watts"] = std::string(*v);
  if (const auto v = attr(a, "board serial number")) p.properties["serial"] = std::string(*v);
  if (const auto v = attr(a, "target")) p.properties["target"] = std::string(*v);
  if (const auto v = attr(a, "ipu error state")) {
    p.properties["ipu_error_state"] = std::string(*v);
    if (!text::icontains(*v, "no errors")) p.available = false;
  }
}

// gc-info: the listing, then each single IPU's attributes in parallel.
bool from_gc_info(const DetectContext& ctx, DetectorOutput& out) {
  const std::vector<std::string> list_argv = {"gc-info", "-l"};
  auto r = ctx.run(list_argv);
  if (!r) {
    ctx.warn(out, r.error());
    return false;
  }
  if (!r->succeeded()) {
    ctx.warn(out, WarningKind::tool_failed, text::cat(join_argv(list_argv), " ", describe_exit(*r)));
    return false;
  }
  auto listed = parsers::parse_gc_info_list(r->out);
  if (!listed) {
    ctx.warn(out, WarningKind::parse_error, text::cat(join_argv(list_argv), ": ", listed.error().message));
    return false;
  }
  std::vector<parsers::GcInfoListEntry> singles;
  std::set<std::uint32_t> ids;
  for (auto& e : *listed) {
    if (e.multi_ipu) continue;
    // A garbled listing that names one IPU twice must not make two devices of it.
    if (!ids.insert(e.id).second) {
      ctx.warn(out, WarningKind::inconsistent, text::cat("gc-info -l lists IPU ", e.id, " twice; the first entry is kept"));
      continue;
    }
    singles.push_back(std::move(e));
  }
  std::sort(singles.begin(), singles.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  std::vector<ToolRequest> requests;
  for (const auto& e : singles) requests.push_back(ctx.request({"gc-info", "-i", "-d", std::to_string(e.id)}));
  const auto details = ctx.run_concurrently(requests);
  for (std::size_t i = 0; i < singles.size(); ++i) {
    const auto& e = singles[i];
    DeviceProfile p = graphcore_profile(static_cast<std::uint32_t>(i));
    p.runtime_index = e.id;
    p.name = "Graphcore IPU";
    for (const auto& [key, value] : e.fields) {
      if (text::iequals(key, "IPU-M host")) p.properties["ipum_host"] = value;
      else if (text::iequals(key, "PCI Domain")) {
        if (const auto addr = PciAddress::parse(value)) p.pci_bus_id = addr->to_string();
      } else if (text::iequals(key, "target") || text::iequals(key, "type")) p.properties["target"] = value;
    }
    const auto& d = details[i];
    const std::string cmd = join_argv(requests[i].argv);
    if (!d) ctx.warn(out, d.error());
    else if (!d->succeeded()) ctx.warn(out, WarningKind::tool_failed, text::cat(cmd, " ", describe_exit(*d)));
    else if (auto attrs = parsers::parse_gc_info_device(d->out)) from_attributes(p, *attrs);
    else ctx.warn(out, WarningKind::parse_error, text::cat(cmd, ": ", attrs.error().message));
    // Memory is never measured here: IPU memory is on-die SRAM gc-info does not report.
    p.properties["memory"] = "in-processor SRAM, not reported by gc-info";
    out.devices.push_back(std::move(p));
  }
  return true;
}

void from_pci(const DetectContext& ctx, const std::vector<PciFunction>& functions, DetectorOutput& out) {
  for (std::size_t i = 0; i < functions.size(); ++i) {
    const PciFunction& f = functions[i];
    DeviceProfile p = graphcore_profile(static_cast<std::uint32_t>(i));
    p.pci_bus_id = f.address.to_string();
    p.numa_node = f.numa_node;
    p.cpu_affinity = f.local_cpulist;
    if (f.link.current_speed_gts || f.link.max_speed_gts) p.pcie = f.link;
    if (f.driver) {
      p.properties["driver"] = *f.driver;
    } else {
      p.available = false;
      ctx.warn(out, WarningKind::unsupported,
               text::cat("Graphcore PCI function ", f.address.to_string(), " is bound to no driver (/proc/bus/pci/devices)"));
    }
    // pci.ids: 1d95:0001 Colossus GC2 (the C2 card's two IPUs), 1d95:0002 Colossus GC1.
    if (f.device_id == 0x0001) {
      p.name = "Graphcore Colossus GC2 IPU";
      p.architecture = "ipu1";
      set_published_memory(p, "ipu1");
    } else if (f.device_id == 0x0002) {
      p.name = "Graphcore Colossus GC1 IPU";
    } else {
      p.name = "Graphcore IPU";
    }
    out.devices.push_back(std::move(p));
  }
}

DetectorOutput detect_graphcore(const DetectContext& ctx) {
  DetectorOutput out;
  const System& sys = ctx.system();
  const bool have_tool = sys.find_tool("gc-info").has_value();
  if (have_tool && from_gc_info(ctx, out)) return out;
  const auto functions = pci_functions_of_vendor(sys, graphcore_vendor_id);
  if (!functions.empty()) {
    if (!have_tool)
      ctx.warn(out, WarningKind::tool_missing,
               text::cat("gc-info is not on PATH: ", functions.size(),
                         " Graphcore PCI function(s) (vendor 0x1d95) reported without their attributes"));
    from_pci(ctx, functions, out);
    return out;
  }
  // IPU-Machines are reached over the network; the IPU-over-fabric configuration
  // is the only local trace of them.
  if (!have_tool && sys.env("IPUOF_CONFIG_PATH"))
    ctx.warn(out, WarningKind::tool_missing,
             "IPUOF_CONFIG_PATH is set (IPUs over fabric) but gc-info is not on PATH: no IPU listed");
  return out;
}

constexpr std::array<std::string_view, 1> graphcore_tools = {"gc-info"};

}  // namespace

constexpr PciKind graphcore_pci[] = {{graphcore_vendor_id, 0, {}}};
constexpr std::string_view graphcore_nodes[] = {"ipu"};
constexpr std::string_view graphcore_runtimes[] = {"poplar"};

const Detector graphcore_detector{
    .name = "graphcore",
    .backend = Backend::graphcore,
    .tools = graphcore_tools,
    .detect = &detect_graphcore,
    .facts = {.pci = graphcore_pci, .device_nodes = graphcore_nodes, .vendor = "Graphcore", .runtimes = graphcore_runtimes},
};

}  // namespace hwaccel
