// Google TPU backend. A chip is a PCI function of vendor 0x1ae0: v2-v4 VMs
// bind it to Google's accel driver (/sys/class/accel/accelN, /dev/accelN),
// v5e/v5p/v6e VMs to vfio-pci (/dev/vfio/<iommu group>). The version comes
// from the PCI device id; HBM only from tpu-info while libtpu runs (the
// published per-chip HBM is a spec, not a measurement); the slice topology
// from the environment a TPU VM or GKE sets.
module;
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>
module hwaccel.detectors;

namespace hwaccel {
namespace parsers {
namespace {

constexpr std::uint16_t google_vendor_id = 0x1ae0;

struct TpuId {
  std::uint16_t device_id;
  TpuVersion version;
};

// tpu_info/device.py of google/cloud-accelerator-diagnostics (v2-v6e) and
// gVisor's pkg/abi/tpu (v4 lite); 0x0076 (v7) from Google's topology tables.
constexpr std::array<TpuId, 6> tpu_ids = {{
    {0x0056, {"v4lite", 1}},
    {0x005e, {"v4", 1}},
    {0x0062, {"v5p", 1}},
    {0x0063, {"v5e", 1}},
    {0x006f, {"v6e", 1}},
    {0x0076, {"v7", std::nullopt}},
}};

// Cell separators of tpu-info's tables: rich's heavy (header) and light
// (body) verticals, or a Markdown pipe.
constexpr std::string_view heavy_vertical = "\u2503";
constexpr std::string_view light_vertical = "\u2502";

std::size_t separator_at(std::string_view line, std::size_t i) noexcept {
  if (line[i] == '|') return 1;
  const std::string_view rest = line.substr(i);
  if (rest.starts_with(heavy_vertical) || rest.starts_with(light_vertical)) return heavy_vertical.size();
  return 0;
}

// The cells between separators, trimmed; the text before the first and after
// the last separator is not a cell.
std::vector<std::string_view> tpu_table_cells(std::string_view line) {
  std::vector<std::string_view> cells;
  std::optional<std::size_t> start;
  for (std::size_t i = 0; i < line.size();) {
    if (const std::size_t n = separator_at(line, i)) {
      if (start) cells.push_back(text::trim(line.substr(*start, i - *start)));
      i += n;
      start = i;
    } else {
      ++i;
    }
  }
  return cells;
}

bool is_markdown_rule(const std::vector<std::string_view>& cells) {
  return !cells.empty() && std::all_of(cells.begin(), cells.end(), [](std::string_view c) {
    return !c.empty() && c.find_first_not_of("-: ") == std::string_view::npos;
  });
}

std::optional<std::size_t> column(const std::vector<std::string>& header, std::string_view prefix) {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (std::string_view(header[i]).starts_with(prefix)) return i;
  return std::nullopt;
}

// "2.94 GiB / 31.25 GiB" -> used, total.
std::pair<std::optional<std::uint64_t>, std::optional<std::uint64_t>> usage_pair(std::string_view cell) {
  const auto slash = cell.find('/');
  if (slash == std::string_view::npos) return {};
  return {text::parse_memory_size(cell.substr(0, slash)), text::parse_memory_size(cell.substr(slash + 1))};
}

std::optional<double> percent(std::string_view cell) {
  cell = text::trim(cell);
  if (!cell.ends_with('%')) return std::nullopt;
  const auto v = text::parse_double(cell.substr(0, cell.size() - 1));
  if (!v || *v < 0 || *v > 100) return std::nullopt;
  return v;
}

void add_row(TpuInfoReport& report, const std::vector<std::string>& header, const std::vector<std::string_view>& cells) {
  auto cell = [&](std::optional<std::size_t> i) -> std::string_view { return i && *i < cells.size() ? cells[*i] : ""; };
  if (const auto chip = column(header, "Chip"), type = column(header, "Type"); chip && type) {
    TpuInfoChip c;
    c.device_node = std::string(cell(chip));
    c.type = std::string(cell(type));
    if (const auto n = text::parse_u64(cell(column(header, "Devices"))); n && *n < 64) c.devices = static_cast<std::uint32_t>(*n);
    if (const auto pid = cell(column(header, "PID")); !pid.empty()) c.pid = std::string(pid);
    if (c.device_node.starts_with("/dev/")) report.chips.push_back(std::move(c));
    return;
  }
  const auto memory = column(header, "Memory usage") ? column(header, "Memory usage") : column(header, "HBM Usage");
  if (!memory) return;
  const auto id_column = column(header, "Device") ? column(header, "Device") : column(header, "Chip");
  const auto id = text::parse_u64(cell(id_column));
  if (!id || *id > 4096) return;
  TpuInfoUsage u;
  u.device = static_cast<std::uint32_t>(*id);
  std::tie(u.used_bytes, u.total_bytes) = usage_pair(cell(memory));
  u.duty_cycle_percent = percent(cell(column(header, "Duty cycle")));
  report.usage.push_back(u);
}

}  // namespace

std::optional<TpuVersion> tpu_version(std::uint16_t device_id, std::optional<std::uint16_t> subsystem_device_id) noexcept {
  if (device_id == 0x0027) {
    if (subsystem_device_id == 0x004e) return TpuVersion{"v2", 2};
    if (subsystem_device_id == 0x004f) return TpuVersion{"v3", 2};
    return std::nullopt;
  }
  for (const auto& id : tpu_ids)
    if (id.device_id == device_id) return id.version;
  return std::nullopt;
}

std::optional<std::string_view> tpu_version_of_accelerator_type(std::string_view type) noexcept {
  type = text::trim(type);
  const std::string_view family = type.substr(0, type.find('-'));
  if (family == "v2" || family == "v3" || family == "v4" || family == "v5p" || family == "v6e" || family == "v5e")
    return family;
  if (family == "v5litepod") return "v5e";
  if (family == "tpu7x" || family == "v7" || family == "v7x") return "v7";
  return std::nullopt;
}

TpuInfoReport parse_tpu_info(std::string_view text) {
  TpuInfoReport report;
  std::vector<std::string> header;
  while (!text.empty()) {
    const std::string_view line = text::trim(text::next_line(text));
    if (line.find("Libtpu metrics unavailable") != std::string_view::npos) report.metrics_unavailable = true;
    if (line.empty()) {
      header.clear();
      continue;
    }
    if (line.starts_with(heavy_vertical)) {  // a header row of a rich table
      header.clear();
      for (const auto c : tpu_table_cells(line)) header.emplace_back(c);
      continue;
    }
    if (line.starts_with(light_vertical) || line.front() == '|') {
      const auto cells = tpu_table_cells(line);
      if (is_markdown_rule(cells)) continue;
      if (header.empty()) {
        // A Markdown table's first row is its header; a rich panel's rows
        // (after ╭) are prose and start with the light vertical.
        if (line.front() == '|')
          for (const auto c : cells) header.emplace_back(c);
        continue;
      }
      add_row(report, header, cells);
      continue;
    }
    // Box-drawing borders (U+2500 block, lead bytes E2 94/95): the header
    // separator keeps the table open, a top, bottom or panel edge ends it.
    if (line.starts_with("\u2521") || line.starts_with("\u251c")) continue;  // ┡ ├
    header.clear();
    if (const auto colon = line.find(':'); colon != std::string_view::npos) {
      const std::string_view key = line.substr(0, colon);
      const std::string_view value = text::trim(line.substr(colon + 1));
      if (key == "Accelerator type" && !value.empty()) report.accelerator_type = std::string(value);
      else if (key == "Libtpu version" && !value.empty()) report.libtpu_version = std::string(value);
    }
  }
  return report;
}

}  // namespace parsers

namespace {

constexpr std::array<std::string_view, 1> tpu_tools = {"tpu-info"};

struct Chip {
  PciAddress address;
  std::optional<std::string> node;  ///< the /dev path the runtime opens
  bool node_exists = false;
  std::optional<std::string> accel_dir;  ///< /sys/class/accel/accelN of Google's driver
};

// A Google PCI function that may be a TPU: Google's vendor id also covers the
// gVNIC network adapter and Persistent Disk NVMe controllers, which a VM may
// bind to vfio-pci for DPDK or SPDK; their class says what they are.
bool is_google(const System& sys, const PciAddress& address) {
  const std::string dir = text::cat("/sys/bus/pci/devices/", address.to_string());
  if (read_u64(sys, dir + "/vendor", 16) != parsers::google_vendor_id) return false;
  const auto class_code = read_u64(sys, dir + "/class", 16);
  const auto base_class = class_code ? *class_code >> 16 : 0;
  return base_class != 0x01 && base_class != 0x02;  // mass storage, network
}

void add_chip(std::vector<Chip>& chips, Chip chip) {
  if (std::none_of(chips.begin(), chips.end(), [&](const Chip& c) { return c.address == chip.address; }))
    chips.push_back(std::move(chip));
}

std::vector<Chip> find_chips(const System& sys) {
  std::vector<Chip> chips;
  // v2-v4: Google's accel class driver names its nodes /dev/accelN (no
  // accel/ folder, unlike the DRM accel class that shares the class name).
  for (const AccelNode& node : accel_nodes(sys)) {
    if (!node.pci_address || !is_google(sys, *node.pci_address)) continue;
    Chip chip{*node.pci_address, std::nullopt, false, "/sys/class/accel/" + node.name};
    if (node.minor) {
      for (const std::string& path : {text::cat("/dev/accel", *node.minor), text::cat("/dev/accel/accel", *node.minor)})
        if (sys.exists(path)) {
          chip.node = path;
          chip.node_exists = true;
          break;
        }
      if (!chip.node) chip.node = text::cat("/dev/accel", *node.minor);
    }
    add_chip(chips, std::move(chip));
  }
  // v5e, v5p, v6e: the VM hands the chip to userspace through VFIO; its node
  // is named after the function's IOMMU group.
  for (const PciAddress& address : pci_functions_of_driver(sys, "vfio-pci")) {
    if (!is_google(sys, address)) continue;
    Chip chip{address, std::nullopt, false, std::nullopt};
    if (const auto group = sys.read_link(text::cat("/sys/bus/pci/devices/", address.to_string(), "/iommu_group"))) {
      chip.node = text::cat("/dev/vfio/", base_name(*group));
      chip.node_exists = sys.exists(*chip.node);
    }
    add_chip(chips, std::move(chip));
  }
  std::sort(chips.begin(), chips.end(), [](const Chip& a, const Chip& b) { return a.address < b.address; });
  return chips;
}

// Every PCI function of vendor 0x1ae0, bound or not: only looked at on a
// machine that says it is a TPU VM but showed no bound chip.
std::vector<Chip> scan_unbound_chips(const System& sys) {
  std::vector<Chip> chips;
  for (const auto& name : list_names(sys, "/sys/bus/pci/devices"))
    if (const auto address = pci_address_of_name(name); address && is_google(sys, *address))
      chips.push_back(Chip{*address, std::nullopt, false, std::nullopt});
  std::sort(chips.begin(), chips.end(), [](const Chip& a, const Chip& b) { return a.address < b.address; });
  return chips;
}

DeviceProfile new_tpu_device(std::uint32_t index) {
  DeviceProfile d;
  d.backend = Backend::tpu;
  d.family = Family::tpu;
  d.index = index;
  d.id = device_id(d.backend, index);
  d.vendor = "Google";
  d.memory_kind = MemoryKind::dedicated;
  return d;
}

void set_version(DeviceProfile& d, std::optional<std::string_view> version) {
  if (version) {
    d.name = text::cat("Google TPU ", *version);
    d.compute_capability = std::string(*version);
  } else {
    d.name = "Google TPU (unknown version)";
  }
}

void describe_chip(const DetectContext& ctx, DetectorOutput& out, const Chip& chip, DeviceProfile& d) {
  const PciFunction pci = read_pci_function(ctx.system(), chip.address);
  const std::string bus_id = chip.address.to_string();
  d.pci_bus_id = bus_id;
  d.numa_node = pci.numa_node;
  d.cpu_affinity = pci.local_cpulist;
  if (pci.link.current_speed_gts || pci.link.max_speed_gts || pci.link.current_width || pci.link.max_width)
    d.pcie = pci.link;
  std::optional<parsers::TpuVersion> version;
  if (pci.device_id) {
    d.properties.emplace("pci_id", pci_id_text(parsers::google_vendor_id, *pci.device_id));
    version = parsers::tpu_version(*pci.device_id, pci.subsystem_device_id);
    if (!version)
      ctx.warn(out, WarningKind::unsupported,
               text::cat(bus_id, ": Google PCI device ", pci_id_text(parsers::google_vendor_id, *pci.device_id),
                         " is not a TPU generation this version knows; its version is reported as unknown"));
  } else {
    ctx.warn(out, WarningKind::io_error,
             text::cat("/sys/bus/pci/devices/", bus_id, ": no readable PCI device id, so the TPU version is unknown"));
  }
  set_version(d, version ? std::optional<std::string_view>(version->name) : std::nullopt);
  if (version && version->runtime_devices_per_chip)
    d.properties.emplace("runtime_devices_per_chip", text::cat(*version->runtime_devices_per_chip));
  if (pci.driver) d.properties.emplace("driver", *pci.driver);
  if (chip.accel_dir) {
    // Attributes of Google's accel class (drivers/accel/accel.c of the TPU driver).
    const System& sys = ctx.system();
    if (auto fw = read_text(sys, *chip.accel_dir + "/fw_version", 256); fw && !fw->empty() && *fw != "0.0.0.0")
      d.firmware_version = std::move(*fw);
    if (auto state = read_text(sys, *chip.accel_dir + "/state", 256); state && !state->empty())
      d.properties.emplace("driver_state", std::move(*state));
  }
  if (chip.node && chip.node_exists) {
    d.properties.emplace("device_node", *chip.node);
  } else if (!pci.driver) {
    d.available = false;
    ctx.warn(out, WarningKind::unsupported, text::cat(bus_id, ": TPU chip with no driver bound, so no process can use it"));
  } else {
    d.available = false;
    ctx.warn(out, WarningKind::unsupported,
             text::cat(bus_id, ": ", chip.node ? *chip.node : std::string("its device node"),
                       " does not exist, so the chip cannot be opened from here (not passed into this container?)"));
  }
}

// A usage row of device k belongs to the chip tpu-info lists as /dev/vfio/k or
// /dev/accelk: tpu-info names chip k's node after k.
DeviceProfile* device_for_usage(std::vector<DeviceProfile>& devices, std::uint32_t k) {
  const std::string vfio = text::cat("/dev/vfio/", k), accel = text::cat("/dev/accel", k);
  for (auto& d : devices) {
    const auto it = d.properties.find("device_node");
    if (it != d.properties.end() && (it->second == vfio || it->second == accel)) return &d;
  }
  return nullptr;
}

// With two runtime devices per chip (v2, v3) a runtime device's usage is not the chip's.
bool one_runtime_device(const DeviceProfile& d) {
  const auto it = d.properties.find("runtime_devices_per_chip");
  return it == d.properties.end() || it->second == "1";
}

void apply_tpu_info(const DetectContext& ctx, DetectorOutput& out, const parsers::TpuInfoReport& report) {
  if (out.devices.empty()) {
    // No sysfs view of the chips (a container without /sys/bus/pci): tpu-info's table is all there is.
    std::set<std::string_view> nodes;
    for (const auto& c : report.chips) {
      // A garbled table that names one chip twice must not make two devices of it.
      if (!nodes.insert(c.device_node).second) {
        ctx.warn(out, WarningKind::inconsistent,
                 text::cat("tpu-info lists the chip at ", text::excerpt(c.device_node, 60), " twice; the first row is kept"));
        continue;
      }
      DeviceProfile d = new_tpu_device(static_cast<std::uint32_t>(out.devices.size()));
      std::optional<std::string_view> version;
      std::string_view type = c.type;  // "TPU v6e chip"
      if (type.starts_with("TPU ")) type.remove_prefix(4);
      if (type.ends_with(" chip")) type.remove_suffix(5);
      if (parsers::tpu_version_of_accelerator_type(type) == type) version = type;
      set_version(d, version);
      d.properties.emplace("device_node", c.device_node);
      if (c.devices) d.properties.emplace("runtime_devices_per_chip", text::cat(*c.devices));
      out.devices.push_back(std::move(d));
    }
  }
  for (const auto& c : report.chips)
    if (c.pid && *c.pid != "None")
      for (auto& d : out.devices)
        if (const auto it = d.properties.find("device_node"); it != d.properties.end() && it->second == c.device_node)
          d.properties.insert_or_assign("owner_pid", *c.pid);
  bool unmatched = false;
  for (const auto& u : report.usage) {
    if (!u.total_bytes && !u.used_bytes && !u.duty_cycle_percent) continue;
    DeviceProfile* d = device_for_usage(out.devices, u.device);
    if (!d || !one_runtime_device(*d)) {
      unmatched = true;
      continue;
    }
    if (u.total_bytes) {
      d->memory_bytes = u.total_bytes;
      d->properties.insert_or_assign("memory_source", "tpu-info (HBM the running libtpu reports)");
      if (u.used_bytes && *u.used_bytes <= *u.total_bytes) {
        d->memory_used_bytes = u.used_bytes;
        d->memory_free_bytes = *u.total_bytes - *u.used_bytes;
      }
    }
    if (u.duty_cycle_percent) d->utilization_percent = u.duty_cycle_percent;
  }
  if (unmatched)
    ctx.warn(out, WarningKind::inconsistent,
             "tpu-info reported usage for runtime devices that match no single TPU chip here; that usage is not attached");
  if (report.metrics_unavailable && !out.devices.empty())
    ctx.warn(out, WarningKind::degraded,
             "tpu-info: libtpu metrics are unavailable (no framework holds the TPU), so HBM size and use are unknown");
}

void describe_slice(const DetectContext& ctx, DetectorOutput& out) {
  const System& sys = ctx.system();
  const auto type = sys.env("TPU_ACCELERATOR_TYPE");
  const auto topology = sys.env("TPU_TOPOLOGY");
  if ((!type && !topology) || out.devices.empty()) return;
  const auto slice_version = type ? parsers::tpu_version_of_accelerator_type(*type) : std::nullopt;
  const auto worker = sys.env("TPU_WORKER_ID");
  Interconnect ici;
  ici.kind = "ici";
  ici.source = "environment (TPU_ACCELERATOR_TYPE, TPU_TOPOLOGY)";
  ici.name = text::cat("TPU ", slice_version ? *slice_version : std::string_view("slice"), slice_version ? " slice" : "");
  if (topology) ici.name += text::cat(" ", *topology);
  if (type) ici.name += text::cat(" (", *type, ")");
  for (auto& d : out.devices) {
    ici.device_ids.push_back(d.id);
    if (type) d.properties.emplace("accelerator_type", *type);
    if (topology) d.properties.emplace("topology", *topology);
    if (worker) d.properties.emplace("worker_id", *worker);
    if (slice_version && d.compute_capability && *d.compute_capability != *slice_version)
      ctx.warn(out, WarningKind::inconsistent,
               text::cat(d.id, " is a TPU ", *d.compute_capability, " by its PCI id but TPU_ACCELERATOR_TYPE=", *type,
                         " names ", *slice_version, "; the PCI id was kept"));
  }
  out.interconnects.push_back(std::move(ici));
}

DetectorOutput detect_tpu(const DetectContext& ctx) {
  DetectorOutput out;
  const System& sys = ctx.system();
  std::vector<Chip> chips = find_chips(sys);
  if (chips.empty() && (sys.env("TPU_ACCELERATOR_TYPE") || sys.env("TPU_TOPOLOGY"))) chips = scan_unbound_chips(sys);
  for (const Chip& chip : chips) {
    DeviceProfile d = new_tpu_device(static_cast<std::uint32_t>(out.devices.size()));
    describe_chip(ctx, out, chip, d);
    out.devices.push_back(std::move(d));
  }

  if (!sys.find_tool("tpu-info")) {
    if (!out.devices.empty())
      ctx.warn(out, WarningKind::tool_missing,
               "tpu-info is not on PATH (pip install tpu-info): HBM size and use are unknown; it reports them "
               "while a framework holds the TPU");
  } else if (auto result = ctx.run({"tpu-info"}); !result) {
    ctx.warn(out, result.error());
  } else if (!result->succeeded()) {
    ctx.warn(out, WarningKind::tool_failed,
             text::cat("tpu-info ", result->signal ? text::cat("was killed by signal ", *result->signal)
                                                  : text::cat("exited with code ", result->exit_code),
                       ": ", text::excerpt(text::trim(result->err.empty() ? result->out : result->err), 160)));
  } else {
    if (result->out_truncated)
      ctx.warn(out, WarningKind::truncated, "tpu-info printed more than the output cap; the rest was dropped");
    const auto report = parsers::parse_tpu_info(result->out);
    // Output with nothing of tpu-info's in it is worth a warning even where
    // sysfs shows no chip: the tool is there, and what it said is lost.
    const bool recognised = !report.chips.empty() || !report.usage.empty() || report.metrics_unavailable ||
                            report.accelerator_type || report.libtpu_version;
    const bool silent = text::trim(result->out).empty() && text::trim(result->err).empty();
    if (report.chips.empty() && (!out.devices.empty() || (!recognised && !silent)))
      ctx.warn(out, WarningKind::parse_error,
               text::cat("tpu-info printed no TPU Chips table (",
                         text::trim(result->out).empty()
                             ? text::cat("nothing on stdout; stderr: ", text::excerpt(text::trim(result->err), 80))
                             : text::excerpt(text::trim(result->out), 80),
                         ")"));
    apply_tpu_info(ctx, out, report);
  }
  describe_slice(ctx, out);
  return out;
}

}  // namespace

constexpr PciKind tpu_pci[] = {{parsers::google_vendor_id, 0, {}}};
// v4 chips are /dev/accelN; v5e and later are VFIO devices (/dev/vfio/N).
constexpr std::string_view tpu_nodes[] = {"accel", "vfio"};  // names other backends' devices take too
constexpr VisibilityVariable tpu_visibility[] = {
    {"TPU_VISIBLE_CHIPS", VisibilityVariable::Role::selects},
    {"TPU_VISIBLE_DEVICES", VisibilityVariable::Role::other},
};
constexpr std::string_view tpu_runtimes[] = {"vllm"};

const Detector tpu_detector{
    .name = "tpu",
    .backend = Backend::tpu,
    .tools = tpu_tools,
    .detect = &detect_tpu,
    .facts = {.pci = tpu_pci,
              .shared_device_nodes = tpu_nodes,
              .vendor = "Google",
              .visibility_variables = tpu_visibility,
              .runtimes = tpu_runtimes,
              .telemetry = "tpu-info"},
};

}  // namespace hwaccel
