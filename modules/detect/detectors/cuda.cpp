// NVIDIA backend: runs nvidia-smi's GPU query, `-L`, `topo -m` and `nvlink -s`
// at once, retries the query without fields an older driver rejects, adds MIG
// partitions, NVLink/PCIe links and NVSwitch fabrics, and joins sysfs (PCIe
// link, NUMA node) by PCI bus id. Without nvidia-smi, GPUs bound to the
// nvidia driver are still reported from sysfs.
module;
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.detectors;

namespace hwaccel {
namespace {

using parsers::NvidiaGpu;
using parsers::NvidiaGpuListing;
using parsers::NvidiaGpuTable;
using parsers::NvidiaNvlinkStatus;
using parsers::NvidiaTopology;

constexpr std::string_view smi = "nvidia-smi";
constexpr std::string_view query_command = "nvidia-smi --query-gpu";

// The query's fields with the tier of driver that introduced them. When a
// driver rejects a field of tier t > 0, every field of tier >= t goes too, so
// one retry suffices (R470 rejects compute_cap).
struct QueryField {
  std::string_view name;
  int tier;
};
constexpr std::array<QueryField, 23> query_fields = {{
    {"index", 0},
    {"uuid", 0},
    {"name", 0},
    {"pci.bus_id", 0},
    {"pci.device_id", 0},
    {"driver_version", 0},
    {"vbios_version", 0},
    {"memory.total", 0},
    {"memory.used", 0},
    {"memory.free", 0},
    {"compute_mode", 0},
    {"ecc.mode.current", 0},
    {"power.draw", 0},
    {"power.limit", 0},
    {"temperature.gpu", 0},
    {"utilization.gpu", 0},
    {"clocks.max.memory", 0},
    {"pcie.link.gen.current", 0},
    {"pcie.link.gen.max", 0},
    {"pcie.link.width.current", 0},
    {"pcie.link.width.max", 0},
    {"mig.mode.current", 1},  // R450
    {"compute_cap", 2},       // R510
}};

// Fields only recent drivers know and only Grace systems need (coherent
// memory evidence). They are asked for in a query of their own, run with
// the others: the common R535 driver rejects them, and a rejection must cost
// neither a retry nor a warning.
constexpr std::array<std::string_view, 3> optional_fields = {"index", "addressing_mode", "c2c.mode"};

std::vector<std::string> query_argv(std::span<const std::string_view> fields) {
  std::string list = "--query-gpu=";
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i) list += ',';
    list += fields[i];
  }
  return {std::string(smi), std::move(list), "--format=csv"};
}

std::vector<std::string_view> fields_up_to(int max_tier) {
  std::vector<std::string_view> fields;
  for (const auto& f : query_fields)
    if (f.tier <= max_tier) fields.push_back(f.name);
  return fields;
}

std::vector<std::string> argv_of(std::initializer_list<std::string_view> args) {
  std::vector<std::string> argv{std::string(smi)};
  for (std::string_view a : args) argv.emplace_back(a);
  return argv;
}

std::string join(std::span<const std::string> items, std::string_view sep = ", ") {
  std::string out;
  for (const auto& s : items) {
    if (!out.empty()) out += sep;
    out += s;
  }
  return out;
}

// "exited with code 2: Field ... is not a valid field" from a failed run.
std::string failure_text(const ToolResult& r) {
  std::string how = r.signal ? text::cat("was killed by signal ", *r.signal) : text::cat("exited with code ", r.exit_code);
  std::string_view said = text::trim(r.err);
  if (said.empty()) said = text::trim(r.out);
  if (!said.empty()) how += text::cat(": ", text::excerpt(text::trim(text::next_line(said)), 200));
  return how;
}

bool says_no_devices(const ToolResult& r) {
  return r.out.find("No devices were found") != std::string::npos ||
         r.err.find("No devices were found") != std::string::npos;
}

// The finished run, or nullptr after filing the System error as a warning.
const ToolResult* finished(const DetectContext& ctx, DetectorOutput& out, const Result<ToolResult>& r,
                           std::string_view command) {
  if (!r) {
    ctx.warn(out, r.error());
    return nullptr;
  }
  if (r->out_truncated)
    ctx.warn(out, WarningKind::truncated,
             text::cat(command, ": output exceeded ", ctx.options().tool_output_cap, " bytes and was cut"));
  return &*r;
}

void warn_problems(const DetectContext& ctx, DetectorOutput& out, std::string_view command,
                   const std::vector<parsers::ParseProblem>& problems) {
  for (const auto& p : problems) ctx.warn(out, p.kind, text::cat(command, ": ", p.message));
}

// --- the GPU query ----------------------------------------------------------

enum class QueryStatus { ok, rejected, failed, no_devices, unreachable };

struct QueryAttempt {
  QueryStatus status = QueryStatus::failed;
  std::optional<NvidiaGpuTable> table;
  std::string rejected_field;
};

QueryAttempt evaluate_query(const DetectContext& ctx, DetectorOutput& out, const Result<ToolResult>& result) {
  QueryAttempt attempt;
  if (!result) {
    ctx.warn(out, result.error());
    // A hung or unstartable nvidia-smi will not answer a second command either.
    attempt.status = result.error().kind == ErrorKind::timeout || result.error().kind == ErrorKind::tool_failed
                         ? QueryStatus::unreachable
                         : QueryStatus::failed;
    return attempt;
  }
  const ToolResult& r = *result;
  if (!r.succeeded()) {
    auto field = parsers::rejected_query_field(r.out);
    if (!field) field = parsers::rejected_query_field(r.err);
    if (field) {
      attempt.status = QueryStatus::rejected;
      attempt.rejected_field = std::move(*field);
      return attempt;
    }
    if (says_no_devices(r)) {
      attempt.status = QueryStatus::no_devices;
      return attempt;
    }
  }
  if (r.out_truncated)
    ctx.warn(out, WarningKind::truncated,
             text::cat(query_command, ": output exceeded ", ctx.options().tool_output_cap, " bytes and was cut"));
  auto table = parsers::parse_query_gpu(r.out);
  const bool rows = table && !table->gpus.empty();
  if (!r.succeeded()) {
    ctx.warn(out, WarningKind::tool_failed,
             text::cat(query_command, " ", failure_text(r),
                       rows ? text::cat("; the ", table->gpus.size(), " GPU row(s) it printed are used") : std::string()));
    if (!rows) return attempt;
  } else if (!table) {
    ctx.warn(out, WarningKind::parse_error, text::cat(query_command, ": ", table.error().message));
    return attempt;
  } else if (!rows) {
    warn_problems(ctx, out, query_command, table->problems);
    ctx.warn(out, WarningKind::parse_error,
             text::cat(query_command, " printed its header but no GPU rows (truncated output?)"));
    return attempt;
  }
  warn_problems(ctx, out, query_command, table->problems);
  table->problems.clear();
  attempt.status = QueryStatus::ok;
  attempt.table = std::move(*table);
  return attempt;
}

// --- sysfs ------------------------------------------------------------------

struct SysfsGpu {
  PciFunction pci;
  parsers::NvidiaProcGpuInfo proc;
};

// GPUs bound to the nvidia driver: /sys/bus/pci/drivers/nvidia and the
// driver's /proc/driver/nvidia/gpus/<bus id> folders. Two directory listings
// when there is no NVIDIA GPU, so this is cheap enough to run on every machine.
std::vector<SysfsGpu> sysfs_gpus(const System& sys) {
  std::vector<PciAddress> addresses = pci_functions_of_driver(sys, "nvidia");
  for (const auto& name : list_names(sys, "/proc/driver/nvidia/gpus"))
    if (const auto a = pci_address_of_name(name)) addresses.push_back(*a);
  std::sort(addresses.begin(), addresses.end());
  addresses.erase(std::unique(addresses.begin(), addresses.end()), addresses.end());
  std::vector<SysfsGpu> gpus;
  for (const auto& a : addresses) {
    SysfsGpu g;
    g.pci = read_pci_function(sys, a);
    // The nvidia driver binds display/3D controllers only (class 0x03); the
    // board's audio function belongs to snd_hda_intel.
    if (g.pci.class_code && (*g.pci.class_code >> 16) != 0x03) continue;
    if (const auto info = read_text(sys, text::cat("/proc/driver/nvidia/gpus/", a.to_string(), "/information")))
      g.proc = parsers::parse_proc_gpu_information(*info);
    gpus.push_back(std::move(g));
  }
  return gpus;
}


constexpr std::array<double, 8> gts_of_generation = {0, 2.5, 5.0, 8.0, 16.0, 32.0, 64.0, 128.0};

// PCIe link: sysfs first; nvidia-smi's generation and width fill the gaps
// (VMs and containers often lack the sysfs attributes).
std::optional<PcieLink> pcie_link(const PcieLink& sysfs, const NvidiaGpu* g) {
  PcieLink link = sysfs;
  if (g) {
    if (!link.current_speed_gts && g->pcie_generation_current && *g->pcie_generation_current < gts_of_generation.size())
      link.current_speed_gts = gts_of_generation[*g->pcie_generation_current];
    if (!link.max_speed_gts && g->pcie_generation_max && *g->pcie_generation_max < gts_of_generation.size())
      link.max_speed_gts = gts_of_generation[*g->pcie_generation_max];
    if (!link.current_width) link.current_width = g->pcie_width_current;
    if (!link.max_width) link.max_width = g->pcie_width_max;
  }
  if (!link.current_speed_gts && !link.max_speed_gts && !link.current_width && !link.max_width) return std::nullopt;
  return link;
}

// --- devices ----------------------------------------------------------------

// GPUs that share a package (or die) with the CPU and have no memory of their
// own: DGX Spark's GB10 and the Jetson modules.
bool is_soc_gpu(std::string_view name) {
  for (std::string_view word : text::words(name)) {
    for (std::string_view soc : {"GB10", "Orin", "Xavier", "Thor", "Tegra", "Jetson"})
      if (text::iequals(word, soc)) return true;
  }
  return false;
}

bool is_grace_superchip(std::string_view name) {
  for (std::string_view word : text::words(name))
    for (std::string_view part : {"GH200", "GB200", "GB300"})
      if (text::iequals(word, part)) return true;
  return false;
}

std::string gbps_text(double v) { return text::cat(std::round(v * 1000.0) / 1000.0); }

DeviceProfile device_from_query(const NvidiaGpu& g, std::uint32_t index) {
  DeviceProfile d;
  d.backend = Backend::cuda;
  d.family = Family::gpu;
  d.index = index;
  d.id = device_id(Backend::cuda, index);
  d.name = g.name.empty() ? std::string("NVIDIA GPU") : g.name;
  d.vendor = "NVIDIA";
  d.uuid = g.uuid;
  if (g.bus_id) d.pci_bus_id = g.bus_id->to_string();
  d.memory_bytes = g.memory_total_bytes;
  d.memory_used_bytes = g.memory_used_bytes;
  d.memory_free_bytes = g.memory_free_bytes;
  d.driver_version = g.driver_version;
  d.firmware_version = g.vbios_version;
  d.compute_capability = g.compute_capability;
  // Drivers before R510 and the -q reports do not print it; the product
  // name decides it (NVIDIA's table of CUDA GPUs).
  if (!d.compute_capability)
    if (const auto cc = parsers::cuda_capability_of_name(g.name); !cc.empty()) {
      d.compute_capability = std::string(cc);
      d.properties.emplace("compute_capability_source", "product name (this nvidia-smi view does not print it)");
    }
  if (g.architecture) d.architecture = g.architecture;
  else if (d.compute_capability)
    if (const auto arch = parsers::cuda_architecture(*d.compute_capability); !arch.empty()) d.architecture = std::string(arch);
  d.power_watts = g.power_draw_watts;
  d.power_limit_watts = g.power_limit_watts;
  d.temperature_c = g.temperature_c;
  d.utilization_percent = g.utilization_percent;
  if (g.compute_mode) {
    d.properties.emplace("compute_mode", *g.compute_mode);
    // No CUDA context can be created on a GPU in Prohibited mode.
    if (text::iequals(*g.compute_mode, "Prohibited")) d.available = false;
  }
  if (g.ecc_enabled) d.properties.emplace("ecc", *g.ecc_enabled ? "enabled" : "disabled");
  if (g.mig_enabled) d.properties.emplace("mig_mode", *g.mig_enabled ? "enabled" : "disabled");
  if (g.max_memory_clock_mhz) d.properties.emplace("max_memory_clock_mhz", text::cat(*g.max_memory_clock_mhz));
  if (g.addressing_mode && !text::iequals(*g.addressing_mode, "None"))
    d.properties.emplace("addressing_mode", *g.addressing_mode);
  if (g.c2c_enabled) d.properties.emplace("c2c_mode", *g.c2c_enabled ? "enabled" : "disabled");
  if (g.pci_device_id) d.properties.emplace("pci_id", text::cat("10de:", text::hex4(*g.pci_device_id)));
  return d;
}

DeviceProfile device_from_sysfs(const SysfsGpu& g, std::uint32_t index, const std::optional<std::string>& driver) {
  DeviceProfile d;
  d.backend = Backend::cuda;
  d.family = Family::gpu;
  d.index = index;
  d.id = device_id(Backend::cuda, index);
  d.name = g.proc.model ? *g.proc.model
                        : text::cat("NVIDIA GPU [10de:", g.pci.device_id ? text::hex4(*g.pci.device_id) : std::string("????"), "]");
  d.vendor = "NVIDIA";
  d.uuid = g.proc.uuid;
  d.pci_bus_id = g.pci.address.to_string();
  d.driver_version = driver;
  d.properties.emplace("source", "sysfs");
  return d;
}

// NUMA node, CPU affinity and PCIe link from /sys/bus/pci/devices/<bus id>.
void join_sysfs(DeviceProfile& d, const PciFunction& f, const NvidiaGpu* g) {
  d.numa_node = f.numa_node;
  if (f.local_cpulist && !f.local_cpulist->empty()) d.cpu_affinity = f.local_cpulist;
  d.pcie = pcie_link(f.link, g);
  if (f.vendor_id && f.device_id && !d.properties.contains("pci_id"))
    d.properties.emplace("pci_id", text::cat(text::hex4(*f.vendor_id), ":", text::hex4(*f.device_id)));
}

// MIG devices from `-L` (UUID, profile), completed from `-q` (instance ids,
// SMs, memory) by MIG device index.
// `detail_view`: the command `detail` came from.
void add_partitions(const DetectContext& ctx, DetectorOutput& out, DeviceProfile& d, const NvidiaGpuListing* listed,
                    const NvidiaGpu* detail, std::string_view detail_view) {
  std::vector<parsers::NvidiaMigDevice> migs;
  if (listed && !listed->mig_devices.empty()) migs = listed->mig_devices;
  else if (detail) migs = detail->mig_devices;
  if (migs.empty()) return;
  std::size_t from_query = 0, from_profile = 0;
  std::set<std::uint32_t> indexes;
  for (auto& m : migs) {
    if (!indexes.insert(m.index).second) {
      // The driver numbers a GPU's MIG devices once each; a repeat is damaged
      // output, and keeping the first keeps partition ids unique.
      ctx.warn(out, WarningKind::inconsistent,
               text::cat("nvidia-smi lists MIG device ", m.index, " of ", d.id, " twice; the second is left out"));
      continue;
    }
    if (detail) {
      const auto it = std::find_if(detail->mig_devices.begin(), detail->mig_devices.end(),
                                   [&](const auto& q) { return q.index == m.index; });
      if (it != detail->mig_devices.end()) {
        if (!m.gpu_instance_id) m.gpu_instance_id = it->gpu_instance_id;
        if (!m.compute_instance_id) m.compute_instance_id = it->compute_instance_id;
        if (!m.multiprocessors) m.multiprocessors = it->multiprocessors;
        if (!m.memory_bytes) m.memory_bytes = it->memory_bytes;
      }
    }
    DevicePartition p;
    p.index = m.index;
    p.id = text::cat(d.id, "/mig:", m.index);
    p.profile = m.profile;
    p.uuid = m.uuid;
    p.gpu_instance_id = m.gpu_instance_id;
    p.compute_instance_id = m.compute_instance_id;
    p.compute_units = m.multiprocessors;
    if (m.memory_bytes) {
      p.memory_bytes = m.memory_bytes;
      ++from_query;
    } else if ((p.memory_bytes = parsers::mig_profile_memory_bytes(m.profile))) {
      ++from_profile;
    }
    d.partitions.push_back(std::move(p));
  }
  std::sort(d.partitions.begin(), d.partitions.end(),
            [](const DevicePartition& a, const DevicePartition& b) { return a.index < b.index; });
  if (from_profile > 0)
    d.properties.emplace("mig_memory_source",
                         from_query > 0 ? text::cat(detail_view, " where listed, else the MIG profile name (nominal GiB, "
                                                    "a few percent above the usable size)")
                                        : std::string("MIG profile names (nominal GiB, a few percent above the usable size)"));
  else if (from_query > 0)
    d.properties.emplace("mig_memory_source", std::string(detail_view));
}

// --- NVSwitch ---------------------------------------------------------------

struct NvSwitchEvidence {
  std::vector<PciAddress> switches;
  std::size_t device_nodes = 0;
  std::vector<std::string> sources;

  std::uint32_t count() const {
    return static_cast<std::uint32_t>(switches.empty() ? device_nodes : switches.size());
  }
};

// NVSwitch chips are PCI functions (class 0x0680) driven by nvidia-nvswitch:
// the driver lists each under /proc/driver/nvidia-nvswitch/devices/<bus id>
// and gets /dev/nvidia-nvswitchN nodes. /dev/nvidia-nvswitchctl alone proves
// nothing: drivers create it on machines without any switch.
NvSwitchEvidence find_nvswitches(const System& sys) {
  NvSwitchEvidence e;
  for (const auto& name : list_names(sys, "/proc/driver/nvidia-nvswitch/devices"))
    if (const auto a = pci_address_of_name(name)) e.switches.push_back(*a);
  if (!e.switches.empty()) e.sources.emplace_back("/proc/driver/nvidia-nvswitch/devices");
  const auto bound = pci_functions_of_driver(sys, "nvidia-nvswitch");
  if (!bound.empty()) e.sources.emplace_back("/sys/bus/pci/drivers/nvidia-nvswitch");
  e.switches.insert(e.switches.end(), bound.begin(), bound.end());
  std::sort(e.switches.begin(), e.switches.end());
  e.switches.erase(std::unique(e.switches.begin(), e.switches.end()), e.switches.end());
  for (const auto& name : list_names(sys, "/dev")) {
    std::string_view n = name;
    if (!n.starts_with("nvidia-nvswitch")) continue;
    n.remove_prefix(15);
    if (!n.empty() && text::parse_u64(n)) ++e.device_nodes;
  }
  if (e.device_nodes > 0) e.sources.emplace_back("/dev/nvidia-nvswitch*");
  return e;
}

// --- assembly ---------------------------------------------------------------

struct Findings {
  std::vector<NvidiaGpuListing> listing;
  std::optional<NvidiaTopology> topology;
  std::vector<NvidiaNvlinkStatus> nvlink;
  std::optional<NvidiaGpuTable> details;  // `-q`
};

template <class T>
const T* match_gpu(const std::vector<T>& items, const DeviceProfile& d) {
  // By UUID when it identifies one GPU (capture tools mask UUIDs to zeros),
  // else by nvidia-smi's index, which every nvidia-smi command shares.
  if (d.uuid) {
    const T* found = nullptr;
    std::size_t hits = 0;
    for (const auto& item : items)
      if (item.uuid && *item.uuid == *d.uuid) {
        found = &item;
        ++hits;
      }
    if (hits == 1) return found;
  }
  for (const auto& item : items) {
    if constexpr (requires { item.gpu_index; }) {
      if (item.gpu_index == d.index) return &item;
    } else {
      if (item.index == d.index) return &item;
    }
  }
  return nullptr;
}

const NvidiaGpu* detail_of(const std::optional<NvidiaGpuTable>& details, const DeviceProfile& d) {
  if (!details || !d.pci_bus_id) return nullptr;
  for (const auto& g : details->gpus)
    if (g.bus_id && g.bus_id->to_string() == *d.pci_bus_id) return &g;
  return nullptr;
}

const parsers::NvidiaTopologyRow* topology_row(const std::optional<NvidiaTopology>& topo, std::uint32_t index) {
  if (!topo) return nullptr;
  const std::string label = text::cat("GPU", index);
  for (const auto& row : topo->rows)
    if (row.label == label) return &row;
  return nullptr;
}

bool single_node(std::string_view v) { return text::parse_u64(v).has_value(); }

void apply_topology_affinity(DeviceProfile& d, const parsers::NvidiaTopologyRow* row) {
  if (!row) return;
  if (row->cpu_affinity && !d.cpu_affinity) d.cpu_affinity = row->cpu_affinity;
  if (row->numa_affinity) {
    if (!single_node(*row->numa_affinity)) d.properties.emplace("numa_affinity", *row->numa_affinity);
    else if (!d.numa_node)
      if (const auto n = text::parse_u64(*row->numa_affinity); n && *n < 65536) d.numa_node = static_cast<std::int32_t>(*n);
  }
  if (row->gpu_numa_id) d.properties.emplace("gpu_numa_node", *row->gpu_numa_id);
}

// Memory the CPU shares: say so, and why; never add host memory to the GPU's.
void apply_memory_kind(DeviceProfile& d, const NvidiaGpu* g, const System& sys) {
  std::vector<std::string> evidence;
  if (g && g->c2c_enabled && *g->c2c_enabled) evidence.emplace_back("c2c.mode Enabled (NVLink-C2C to the CPU)");
  if (g && g->addressing_mode && text::iequals(*g->addressing_mode, "ATS"))
    evidence.emplace_back("addressing_mode ATS (the GPU translates CPU addresses)");
  if (d.properties.contains("gpu_numa_node")) evidence.emplace_back("GPU memory is a NUMA node of the host (topo -m GPU NUMA ID)");
  const bool soc = is_soc_gpu(d.name);
  if (soc) evidence.emplace_back("integrated GPU sharing the CPU's memory");
  // Drivers older than the c2c.mode/addressing_mode fields: a Grace
  // superchip's GPU is still coherent with the CPU's memory.
  if (evidence.empty() && is_grace_superchip(d.name))
    evidence.emplace_back("Grace superchip GPU (by product name; this driver does not report c2c.mode)");
  if (evidence.empty()) return;
  d.memory_kind = MemoryKind::unified;
  d.integrated = soc;
  d.properties.emplace("unified_memory", join(evidence, "; "));
  if (soc && !d.memory_bytes) {
    // nvidia-smi reports no memory for these GPUs ([N/A] on GB10): all of
    // system memory is theirs to share with the CPU.
    if (const auto meminfo = read_text(sys, "/proc/meminfo", 256 * 1024))
      if (const auto total = parsers::parse_meminfo(*meminfo).total_bytes) {
        d.shared_memory_bytes = *total;
        d.properties.emplace("shared_memory",
                             "system memory (/proc/meminfo MemTotal), shared with the CPU; nvidia-smi reports no "
                             "memory size for this GPU");
      }
  }
}

void apply_nvlink(DeviceProfile& d, const NvidiaNvlinkStatus* s) {
  if (!s) return;
  if (s->unsupported_in_mig) d.properties.emplace("nvlink", "not reported in MIG mode");
  if (s->active_links == 0) return;
  d.properties.emplace("nvlink_links", text::cat(s->active_links));
  if (s->link_gbps) d.properties.emplace("nvlink_link_gbps", gbps_text(*s->link_gbps));
  d.properties.emplace("nvlink_gbps", gbps_text(s->total_gbps));
}

// GPU x GPU links of the `topo -m` matrix (each pair once, lower index first).
void add_links(DetectorOutput& out, const std::vector<DeviceProfile>& devices, const NvidiaTopology& topo,
               const std::vector<NvidiaNvlinkStatus>& nvlink) {
  std::map<std::uint32_t, const DeviceProfile*> by_index;
  for (const auto& d : devices) by_index.emplace(d.index, &d);
  auto link_speed = [&](const DeviceProfile& d) -> std::optional<double> {
    const auto* s = match_gpu(nvlink, d);
    return s ? s->link_gbps : std::nullopt;
  };
  for (const auto& row : topo.rows) {
    if (row.label.size() <= 3 || !row.label.starts_with("GPU")) continue;
    const auto a_index = text::parse_u64(std::string_view(row.label).substr(3));
    if (!a_index || !by_index.contains(static_cast<std::uint32_t>(*a_index))) continue;
    const DeviceProfile& a = *by_index.at(static_cast<std::uint32_t>(*a_index));
    for (std::size_t c = 0; c < topo.columns.size() && c < row.cells.size(); ++c) {
      std::string_view column = topo.columns[c];
      if (!row.cells[c] || column.size() <= 3 || !column.starts_with("GPU")) continue;
      const auto b_index = text::parse_u64(column.substr(3));
      if (!b_index || *b_index <= *a_index || !by_index.contains(static_cast<std::uint32_t>(*b_index))) continue;
      const DeviceProfile& b = *by_index.at(static_cast<std::uint32_t>(*b_index));
      DeviceLink link;
      link.a = a.id;
      link.b = b.id;
      link.kind = row.cells[c]->kind;
      link.lanes = row.cells[c]->nvlinks;
      link.source = "nvidia-smi topo -m";
      if (link.lanes) {
        const auto sa = link_speed(a), sb = link_speed(b);
        if (sa || sb) {
          const double per_link = sa && sb ? std::min(*sa, *sb) : sa ? *sa : *sb;
          link.bandwidth_gbps = std::round(*link.lanes * per_link * 1000.0) / 1000.0;
        }
      }
      out.links.push_back(std::move(link));
    }
  }
}

// Per-device NVLink bandwidth of a group: the smallest member's, when every
// member's is known.
std::optional<double> group_bandwidth(const std::vector<const DeviceProfile*>& members,
                                      const std::vector<NvidiaNvlinkStatus>& nvlink) {
  std::optional<double> slowest;
  for (const auto* d : members) {
    const auto* s = match_gpu(nvlink, *d);
    if (!s || s->active_links == 0) return std::nullopt;
    slowest = slowest ? std::min(*slowest, s->total_gbps) : s->total_gbps;
  }
  return slowest;
}

void add_interconnects(DetectorOutput& out, const std::vector<DeviceProfile>& devices, const Findings& f,
                       const NvSwitchEvidence& switches) {
  // NVLink-connected groups from the matrix (union-find over device positions).
  std::vector<std::size_t> parent(devices.size());
  std::iota(parent.begin(), parent.end(), std::size_t{0});
  auto root = [&](std::size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  std::vector<bool> nvlinked(devices.size(), false);
  auto position = [&](std::string_view id) -> std::optional<std::size_t> {
    for (std::size_t i = 0; i < devices.size(); ++i)
      if (devices[i].id == id) return i;
    return std::nullopt;
  };
  for (const auto& link : out.links) {
    if (link.kind != LinkKind::nvlink) continue;
    const auto a = position(link.a), b = position(link.b);
    if (!a || !b) continue;
    nvlinked[*a] = nvlinked[*b] = true;
    parent[root(*a)] = root(*b);
  }

  if (switches.count() > 0) {
    Interconnect ic;
    ic.kind = "nvswitch";
    ic.switch_count = switches.count();
    ic.source = join(switches.sources);
    std::vector<const DeviceProfile*> members;
    for (std::size_t i = 0; i < devices.size(); ++i) {
      const auto* s = match_gpu(f.nvlink, devices[i]);
      if (nvlinked[i] || (s && s->active_links > 0)) members.push_back(&devices[i]);
    }
    for (const auto* d : members) ic.device_ids.push_back(d->id);
    ic.bandwidth_gbps = members.empty() ? std::nullopt : group_bandwidth(members, f.nvlink);
    // Without nvidia-smi nothing says which GPUs the switches join.
    ic.name = text::cat("NVSwitch fabric (", *ic.switch_count, *ic.switch_count == 1 ? " switch" : " switches",
                        members.empty() ? std::string() : text::cat(", ", members.size(), " GPUs"), ")");
    out.interconnects.push_back(std::move(ic));
    return;
  }
  // No switch: GPUs joined directly, by bridges (pairs of boards) or by the
  // baseboard (a mesh of more than two).
  std::map<std::size_t, std::vector<const DeviceProfile*>> groups;
  for (std::size_t i = 0; i < devices.size(); ++i)
    if (nvlinked[i]) groups[root(i)].push_back(&devices[i]);
  for (auto& [r, members] : groups) {
    if (members.size() < 2) continue;
    Interconnect ic;
    ic.kind = members.size() == 2 ? "nvlink_bridge" : "nvlink_mesh";
    for (const auto* d : members) ic.device_ids.push_back(d->id);
    ic.name = members.size() == 2 ? text::cat("NVLink bridge (", ic.device_ids[0], ", ", ic.device_ids[1], ")")
                                  : text::cat("NVLink mesh (", members.size(), " GPUs, no NVSwitch)");
    ic.bandwidth_gbps = group_bandwidth(members, f.nvlink);
    ic.source = "nvidia-smi topo -m";
    out.interconnects.push_back(std::move(ic));
  }
}

void report_from_sysfs(const DetectContext& ctx, DetectorOutput& out, const std::vector<SysfsGpu>& gpus) {
  const System& sys = ctx.system();
  std::optional<std::string> driver;
  if (const auto v = read_text(sys, "/proc/driver/nvidia/version")) driver = parsers::parse_proc_driver_version(*v);
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    DeviceProfile d = device_from_sysfs(gpus[i], static_cast<std::uint32_t>(i), driver);
    join_sysfs(d, gpus[i].pci, nullptr);
    apply_memory_kind(d, nullptr, sys);
    out.devices.push_back(std::move(d));
  }
  const auto switches = find_nvswitches(sys);
  if (switches.count() > 0) {
    Findings none;
    add_interconnects(out, out.devices, none, switches);
  }
}

// addressing_mode and c2c.mode, by GPU index, when this driver knows them.
void merge_optional_fields(NvidiaGpuTable& table, const Result<ToolResult>& result) {
  if (!result || !result->succeeded()) return;
  const auto extra = parsers::parse_query_gpu(result->out);
  if (!extra) return;
  for (const auto& e : extra->gpus) {
    if (!e.index) continue;
    for (auto& g : table.gpus)
      if (g.index == e.index) {
        if (!g.addressing_mode) g.addressing_mode = e.addressing_mode;
        if (!g.c2c_enabled) g.c2c_enabled = e.c2c_enabled;
      }
  }
}

std::vector<parsers::NvidiaGpuListing> read_listing(const DetectContext& ctx, DetectorOutput& out,
                                                    const Result<ToolResult>& result) {
  const ToolResult* r = finished(ctx, out, result, "nvidia-smi -L");
  if (!r) return {};
  if (!r->succeeded()) {
    if (!says_no_devices(*r)) ctx.warn(out, WarningKind::tool_failed, text::cat("nvidia-smi -L ", failure_text(*r)));
    return {};
  }
  return parsers::parse_gpu_list(r->out);
}

std::optional<NvidiaTopology> read_topology(const DetectContext& ctx, DetectorOutput& out,
                                            const Result<ToolResult>& result) {
  constexpr std::string_view command = "nvidia-smi topo -m";
  const ToolResult* r = finished(ctx, out, result, command);
  if (!r) return std::nullopt;
  // Windows drivers refuse `topo -m` ("ERROR: Option -m is missing its value", exit 255).
  if (!r->succeeded()) {
    ctx.warn(out, WarningKind::tool_failed, text::cat(command, " ", failure_text(*r)));
    return std::nullopt;
  }
  auto topo = parsers::parse_topology_matrix(r->out);
  if (!topo) {
    ctx.warn(out, WarningKind::parse_error, text::cat(command, ": ", topo.error().message));
    return std::nullopt;
  }
  warn_problems(ctx, out, command, topo->problems);
  return std::move(*topo);
}

std::vector<NvidiaNvlinkStatus> read_nvlink(const DetectContext& ctx, DetectorOutput& out,
                                            const Result<ToolResult>& result) {
  constexpr std::string_view command = "nvidia-smi nvlink -s";
  const ToolResult* r = finished(ctx, out, result, command);
  if (!r) return {};
  auto status = parsers::parse_nvlink_status(r->out);
  // GPUs without NVLink answer "all links are inActive"; some drivers exit
  // non-zero with it. That is a fact about the GPU, not a failure.
  if (!r->succeeded() && !text::icontains(r->out, "inactive") && !text::icontains(r->err, "inactive") &&
      !text::icontains(r->out, "not supported"))
    ctx.warn(out, WarningKind::tool_failed, text::cat(command, " ", failure_text(*r)));
  return status;
}

std::optional<NvidiaGpuTable> read_details(const DetectContext& ctx, DetectorOutput& out,
                                           const Result<ToolResult>& result) {
  constexpr std::string_view command = "nvidia-smi -q";
  const ToolResult* r = finished(ctx, out, result, command);
  if (!r) return std::nullopt;
  if (!r->succeeded()) {
    ctx.warn(out, WarningKind::tool_failed, text::cat(command, " ", failure_text(*r)));
    return std::nullopt;
  }
  auto table = parsers::parse_query_text(r->out);
  if (!table) {
    ctx.warn(out, WarningKind::parse_error, text::cat(command, ": ", table.error().message));
    return std::nullopt;
  }
  warn_problems(ctx, out, command, table->problems);
  table->problems.clear();
  return std::move(*table);
}

DetectorOutput detect_cuda(const DetectContext& ctx) {
  DetectorOutput out;
  const System& sys = ctx.system();

  if (!sys.find_tool(smi)) {
    const auto gpus = sysfs_gpus(sys);
    if (gpus.empty()) return out;
    report_from_sysfs(ctx, out, gpus);
    ctx.warn(out, WarningKind::tool_missing,
             text::cat("nvidia-smi is not on PATH: ", gpus.size(),
                       " GPU(s) bound to the nvidia driver are reported from sysfs, without memory, compute "
                       "capability, MIG or NVLink topology"));
    return out;
  }

  // One nvidia-smi latency for everything a normal machine needs.
  std::vector<std::string_view> fields = fields_up_to(2);
  const std::array<ToolRequest, 5> first = {
      ctx.request(query_argv(fields)), ctx.request(nvidia_smi_argv::list()), ctx.request(nvidia_smi_argv::topology()),
      ctx.request(nvidia_smi_argv::nvlink()), ctx.request(nvidia_smi_argv::optional_query())};
  auto results = ctx.run_concurrently(first);

  QueryAttempt query = evaluate_query(ctx, out, results[0]);
  Findings found;
  found.listing = read_listing(ctx, out, results[1]);
  const bool mig_listed = std::any_of(found.listing.begin(), found.listing.end(),
                                      [](const auto& g) { return !g.mig_devices.empty(); });
  std::optional<Result<ToolResult>> details_result;

  // Older drivers refuse fields they do not know: drop them and ask again,
  // fetching the MIG details alongside when they are needed.
  std::vector<std::string> rejected, dropped;
  for (int retry = 0; query.status == QueryStatus::rejected && retry < 4; ++retry) {
    const auto known = std::find_if(query_fields.begin(), query_fields.end(),
                                     [&](const QueryField& f) { return f.name == query.rejected_field; });
    const int tier = known == query_fields.end() ? -1 : known->tier;
    const auto before = fields.size();
    std::erase_if(fields, [&](std::string_view name) {
      const auto f = std::find_if(query_fields.begin(), query_fields.end(),
                                  [&](const QueryField& q) { return q.name == name; });
      const bool drop = name == query.rejected_field || (tier > 0 && f != query_fields.end() && f->tier >= tier);
      if (drop) dropped.emplace_back(name);
      return drop;
    });
    rejected.push_back(query.rejected_field);
    if (fields.size() == before || fields.empty()) break;
    std::vector<ToolRequest> requests{ctx.request(query_argv(fields))};
    if (mig_listed && !details_result) requests.push_back(ctx.request(nvidia_smi_argv::details()));
    auto again = ctx.run_concurrently(requests);
    if (again.size() > 1) details_result = std::move(again[1]);
    query = evaluate_query(ctx, out, again[0]);
  }
  if (query.status == QueryStatus::rejected) {
    ctx.warn(out, WarningKind::tool_failed,
             text::cat(query_command, " kept rejecting fields (", join(rejected), "); GPUs are read another way"));
    query.status = QueryStatus::failed;
  }
  if (query.status == QueryStatus::ok && !rejected.empty())
    ctx.warn(out, WarningKind::degraded,
             text::cat(query_command, ": this driver rejects the field", rejected.size() == 1 ? " " : "s ",
                       join(rejected), "; asked again without ", join(dropped), ", so ",
                       dropped.size() == 1 ? "it is" : "they are", " not read from the driver"));

  if (query.status == QueryStatus::no_devices) {
    const auto gpus = sysfs_gpus(sys);
    if (!gpus.empty()) {
      report_from_sysfs(ctx, out, gpus);
      ctx.warn(out, WarningKind::tool_failed,
               text::cat("nvidia-smi found no devices, but ", gpus.size(),
                         " GPU(s) are bound to the nvidia driver; they are reported from sysfs"));
    }
    return out;
  }
  const bool reachable = query.status != QueryStatus::unreachable;
  bool topology_read = false;

  NvidiaGpuTable table;
  bool report_timed_out = false;  // a report hung: plain nvidia-smi would hang too
  std::string table_view;        // the view the GPUs came from when it is not the query
  bool table_is_report = false;  // a `-q`/`-q -x` report: each GPU row is its own MIG detail
  if (query.table) {
    table = std::move(*query.table);
    if (mig_listed && !details_result && reachable) details_result = ctx.run(nvidia_smi_argv::details());
    if (details_result) found.details = read_details(ctx, out, *details_result);
  } else if (reachable) {
    // The reports, richest first: `-q -x` (what monitoring agents and bug
    // reports carry), then `-q`.
    ToolViewWalk walk(ctx, out);
    const auto xml_argv = nvidia_smi_argv::details_xml();
    const auto text_argv = nvidia_smi_argv::details();
    const std::vector<std::string>* used = &xml_argv;
    auto report = walk.read(xml_argv, parsers::parse_query_xml);
    if (!report) {
      used = &text_argv;
      report = walk.read(text_argv, parsers::parse_query_text, std::move(details_result));
    }
    walk.finish(report ? used : nullptr);
    report_timed_out = walk.stopped();
    if (report) {
      table_view = join_argv(*used);
      warn_problems(ctx, out, table_view, report->problems);
      report->problems.clear();
      table = std::move(*report);
      table_is_report = true;
      ctx.warn(out, WarningKind::degraded,
               text::cat(query_command, " failed; ", table.gpus.size(), " GPU(s) were read from ", table_view,
                         " instead (no compute capability: it is derived from the product name)"));
    }
  }

  // The table plain `nvidia-smi` prints: what people paste most, and where
  // the query and the reports fail, still memory and bus ids. Its failure is
  // filed with the query's; this read stays quiet.
  if (table.gpus.empty() && reachable && !report_timed_out)
    if (const auto shown = ctx.run(nvidia_smi_argv::table()); shown && shown->succeeded())
      if (auto parsed = parsers::parse_default_table(shown->out)) {
        table_view = "nvidia-smi";
        warn_problems(ctx, out, table_view, parsed->problems);
        parsed->problems.clear();
        table = std::move(*parsed);
        table_is_report = true;
        // The table cuts long names ("NVIDIA GeForce RTX 2080 ..."); `-L` prints them whole.
        for (auto& g : table.gpus) {
          if (!g.name.ends_with("...") || !g.index) continue;
          const std::string_view prefix = text::trim(std::string_view(g.name).substr(0, g.name.size() - 3));
          for (const auto& l : found.listing)
            if (l.index == *g.index && l.name.starts_with(prefix)) g.name = l.name;
          if (g.name.ends_with("..."))
            ctx.warn(out, WarningKind::truncated,
                     text::cat("nvidia-smi: GPU ", *g.index, ": the table cuts the name short (\"", text::excerpt(g.name, 60),
                               "\"); paste `nvidia-smi -L` with it for the full name"));
        }
        ctx.warn(out, WarningKind::degraded,
                 text::cat(query_command, " failed; ", table.gpus.size(),
                           " GPU(s) were read from nvidia-smi's table instead (it prints no UUID or PCIe link; the "
                           "compute capability is derived from the product name)"));
      }

  if (table.gpus.empty()) {
    const auto gpus = sysfs_gpus(sys);
    if (!gpus.empty()) {
      report_from_sysfs(ctx, out, gpus);
      ctx.warn(out, WarningKind::degraded,
               text::cat("nvidia-smi gave no usable GPU list; ", gpus.size(),
                         " GPU(s) bound to the nvidia driver are reported from sysfs only"));
      return out;
    }
    // Last, the views that only enumerate: `-L` (names, UUIDs, MIG devices),
    // the GPU lines of `nvlink -s` (the same), `topo -m` (count, links, CPU
    // affinity).
    // Their failures were filed with the query's; these reads stay quiet.
    if (found.listing.empty() && results[3] && results[3]->succeeded()) {
      found.listing = parsers::parse_gpu_list(results[3]->out);
      if (!found.listing.empty()) table_view = "nvidia-smi nvlink -s";
    } else if (!found.listing.empty()) {
      table_view = "nvidia-smi -L";
    }
    for (const auto& l : found.listing) {
      NvidiaGpu g;
      g.index = l.index;
      g.name = l.name;
      g.uuid = l.uuid;
      table.gpus.push_back(std::move(g));
    }
    if (table.gpus.empty() && results[2] && results[2]->succeeded())
      if (auto topo = parsers::parse_topology_matrix(results[2]->out)) {
        found.topology = std::move(*topo);
        topology_read = true;
      }
    if (table.gpus.empty() && found.topology) {
      for (const auto& row : found.topology->rows) {
        if (row.label.size() <= 3 || !row.label.starts_with("GPU")) continue;
        const auto n = text::parse_name_number(std::string_view(row.label).substr(3));
        if (!n) continue;
        NvidiaGpu g;
        g.index = *n;
        table.gpus.push_back(std::move(g));
      }
      if (!table.gpus.empty()) table_view = "nvidia-smi topo -m";
    }
    if (table.gpus.empty()) return out;  // each view's failure is filed already
    ctx.warn(out, WarningKind::degraded,
             text::cat(table.gpus.size(), " GPU(s) are known only from ", table_view,
                       table_view == "nvidia-smi topo -m"
                           ? ": their count, links and CPU affinity; no name, memory or bus id"
                           : ": names and UUIDs; no memory, bus id or PCIe link"));
  }

  if (table_view.empty()) merge_optional_fields(table, results[4]);
  if (!topology_read) found.topology = read_topology(ctx, out, results[2]);
  found.nvlink = read_nvlink(ctx, out, results[3]);

  std::vector<std::uint32_t> seen;
  std::vector<PciAddress> seen_buses;
  for (std::size_t row = 0; row < table.gpus.size(); ++row) {
    const NvidiaGpu& g = table.gpus[row];
    const std::uint32_t index = g.index.value_or(static_cast<std::uint32_t>(row));
    if (std::find(seen.begin(), seen.end(), index) != seen.end()) {
      ctx.warn(out, WarningKind::inconsistent,
               text::cat(query_command, " lists GPU index ", index, " twice; the first row is kept"));
      continue;
    }
    if (g.bus_id && std::find(seen_buses.begin(), seen_buses.end(), *g.bus_id) != seen_buses.end()) {
      ctx.warn(out, WarningKind::inconsistent,
               text::cat(query_command, " gives GPU index ", index, " the bus id ", g.bus_id->to_string(),
                         " of an earlier row; the first row is kept"));
      continue;
    }
    seen.push_back(index);
    if (g.bus_id) seen_buses.push_back(*g.bus_id);
    DeviceProfile d = device_from_query(g, index);
    if (!table_view.empty()) d.properties.emplace("source", table_view);
    // NVML reports PCIe gen 1 x1 for the on-package GPU of a GB10 or Jetson,
    // whose path to memory is not PCIe: only sysfs speaks for their link.
    const NvidiaGpu* link_source = is_soc_gpu(d.name) ? nullptr : &g;
    if (g.bus_id) {
      const PciFunction f = read_pci_function(sys, *g.bus_id);
      join_sysfs(d, f, link_source);
    } else {
      d.pcie = pcie_link(PcieLink{}, link_source);
    }
    apply_topology_affinity(d, topology_row(found.topology, index));
    apply_nvlink(d, match_gpu(found.nvlink, d));
    const NvidiaGpuListing* listed = match_gpu(found.listing, d);
    // `-L` always names the UUID, which the visibility pass matches against.
    if (listed && !d.uuid) d.uuid = listed->uuid;

    add_partitions(ctx, out, d, listed, table_is_report ? &g : detail_of(found.details, d),
                   table_is_report ? std::string_view(table_view) : std::string_view("nvidia-smi -q"));
    apply_memory_kind(d, &g, sys);
    out.devices.push_back(std::move(d));
  }

  if (found.topology) add_links(out, out.devices, *found.topology, found.nvlink);
  add_interconnects(out, out.devices, found, find_nvswitches(sys));
  return out;
}

constexpr std::array<std::string_view, 1> cuda_tools = {smi};

}  // namespace

namespace nvidia_smi_argv {
std::vector<std::string> query(int max_tier) { return query_argv(fields_up_to(max_tier)); }
std::vector<std::string> optional_query() { return query_argv(optional_fields); }
std::vector<std::string> list() { return argv_of({"-L"}); }
std::vector<std::string> topology() { return argv_of({"topo", "-m"}); }
std::vector<std::string> nvlink() { return argv_of({"nvlink", "-s"}); }
std::vector<std::string> details() { return argv_of({"-q"}); }
std::vector<std::string> details_xml() { return argv_of({"-q", "-x"}); }
std::vector<std::string> table() { return argv_of({}); }
}  // namespace nvidia_smi_argv

constexpr std::string_view cuda_drivers[] = {"nvidia"};
constexpr std::string_view cuda_modules[] = {"nvidia_uvm", "nvidia_drm", "nvidia_modeset"};
constexpr PciKind cuda_pci[] = {{0x10de, 0x0300, "NVIDIA GPU"}, {0x10de, 0x0302, "NVIDIA GPU"}};
// /dev/dxg: WSL2's paravirtualized GPUs, which CUDA reaches through libdxcore.
constexpr std::string_view cuda_nodes[] = {"nvidia", "dxg"};
constexpr VisibilityVariable cuda_visibility[] = {
    {"CUDA_VISIBLE_DEVICES", VisibilityVariable::Role::selects},
    {"NVIDIA_VISIBLE_DEVICES", VisibilityVariable::Role::container},
    {"CUDA_DEVICE_ORDER", VisibilityVariable::Role::order},
};
constexpr std::string_view cuda_runtimes[] = {"vllm", "sglang", "tensorrt-llm", "llama.cpp"};
constexpr ToolPackage cuda_packages[] = {{"nvidia-smi", "nvidia-utils (the release matching the driver)"}};

// /dev/nvidiactl serves every GPU; the GPU's own node has the minor number
// the driver records for it.
std::vector<std::string> cuda_device_nodes(const System& system, const PciAddress& address) {
  std::vector<std::string> nodes{"/dev/nvidiactl"};
  if (const auto info = read_text(system, text::cat("/proc/driver/nvidia/gpus/", address.to_string(), "/information"))) {
    const auto at = info->find("Device Minor:");
    if (at != std::string::npos) {
      std::string_view rest = std::string_view(*info).substr(at + 13);
      if (const auto minor = text::parse_u64(text::trim(text::next_token(rest, '\n'))))
        nodes.push_back(text::cat("/dev/nvidia", *minor));
    }
  }
  return nodes;
}

const Detector cuda_detector{
    .name = "cuda",
    .backend = Backend::cuda,
    .tools = cuda_tools,
    .detect = &detect_cuda,
    .facts = {.drivers = cuda_drivers,
              .modules = cuda_modules,
              .pci = cuda_pci,
              .device_nodes = cuda_nodes,
              .driver_remedy = "load NVIDIA's kernel driver (sudo modprobe nvidia), or install the driver for this GPU",
              .vendor = "NVIDIA",
              .visibility_variables = cuda_visibility,
              // By UUID: indices change with CUDA_DEVICE_ORDER and other jobs' masks.
              .lease_by_uuid = true,
              .runtimes = cuda_runtimes,
              .container_remedy = "start the container with the GPUs (docker run --gpus all, with the NVIDIA Container "
                                  "Toolkit; in Kubernetes, request nvidia.com/gpu)",
              .missing_node_remedy = "create the nodes (sudo nvidia-modprobe -u -c 0), or check the udev rules of the driver",
              .tool_packages = cuda_packages,
              .device_nodes_of = &cuda_device_nodes,
              .telemetry = "nvidia-smi --query-gpu (-q for MIG instances' memory, nvlink -e for link errors)",
              .merges_with_vulkan = true},
};

}  // namespace hwaccel
