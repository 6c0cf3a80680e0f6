// gres.conf and slurm.conf lines for a node (Slurm's gres.conf(5) and slurm.conf(5)).
module;
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>
module hwaccel.fleet;
import hwaccel.detectors;

namespace hwaccel {

namespace {

// OS CPU id -> Slurm's logical core index, and the shape Slurm counts.
struct CoreMap {
  std::map<std::uint32_t, std::uint32_t> core_of_cpu;
  std::uint32_t sockets = 0;
  std::uint32_t cores = 0;
  std::uint32_t cpus = 0;
  std::string source;
};

struct Pu {
  std::uint32_t cpu = 0;
  std::uint32_t package = 0;
  std::uint32_t core = 0;
};

// Slurm numbers cores as hwloc's logical index does: packages in the order of
// their first CPU, cores within a package in the order of their first CPU.
CoreMap number_cores(std::vector<Pu> pus, std::string source) {
  CoreMap map;
  map.source = std::move(source);
  std::sort(pus.begin(), pus.end(), [](const Pu& a, const Pu& b) { return a.cpu < b.cpu; });
  std::map<std::uint32_t, std::uint32_t> package_first;                         // package -> first cpu
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> core_first;  // (package, core) -> first cpu
  for (const auto& p : pus) {
    package_first.try_emplace(p.package, p.cpu);
    core_first.try_emplace({p.package, p.core}, p.cpu);
  }
  std::vector<std::tuple<std::uint32_t, std::uint32_t, std::pair<std::uint32_t, std::uint32_t>>> order;  // package first, core first, key
  order.reserve(core_first.size());
  for (const auto& [key, first] : core_first) order.emplace_back(package_first[key.first], first, key);
  std::sort(order.begin(), order.end());
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> logical;
  for (std::uint32_t i = 0; i < order.size(); ++i) logical[std::get<2>(order[i])] = i;
  for (const auto& p : pus) map.core_of_cpu[p.cpu] = logical[{p.package, p.core}];
  map.sockets = static_cast<std::uint32_t>(package_first.size());
  map.cores = static_cast<std::uint32_t>(core_first.size());
  map.cpus = static_cast<std::uint32_t>(pus.size());
  return map;
}

// The CPUs a cpulist names; empty when it is malformed or names a CPU past 65535.
std::vector<std::uint32_t> cpulist(std::string_view list) {
  std::vector<std::uint32_t> out;
  const bool ok = text::for_each_cpulist_range(list, [&](std::uint64_t first, std::uint64_t last) {
    if (last > 65535) return false;
    for (auto c = first; c <= last; ++c) out.push_back(static_cast<std::uint32_t>(c));
    return true;
  });
  if (!ok) out.clear();
  return out;
}

std::string ranges(const std::vector<std::uint32_t>& sorted_values) {
  std::string out;
  for (std::size_t i = 0; i < sorted_values.size();) {
    std::size_t j = i;
    while (j + 1 < sorted_values.size() && sorted_values[j + 1] == sorted_values[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? text::cat(sorted_values[i]) : text::cat(sorted_values[i], "-", sorted_values[j]);
    i = j + 1;
  }
  return out;
}

// The kernel's topology files where it has them (every architecture), else
// /proc/cpuinfo's "physical id" and "core id" (x86).
std::optional<CoreMap> read_core_map(const System& sys) {
  const auto online = read_text(sys, "/sys/devices/system/cpu/online");
  if (online && sys.exists("/sys/devices/system/cpu/cpu0/topology/core_id")) {
    std::vector<Pu> pus;
    for (const auto cpu : cpulist(*online)) {
      const auto base = text::cat("/sys/devices/system/cpu/cpu", cpu, "/topology/");
      const auto package = read_u64(sys, text::cat(base, "physical_package_id"));
      const auto core = read_u64(sys, text::cat(base, "core_id"));
      if (!package || !core) return std::nullopt;
      pus.push_back(Pu{cpu, static_cast<std::uint32_t>(*package), static_cast<std::uint32_t>(*core)});
    }
    if (!pus.empty()) return number_cores(std::move(pus), "/sys/devices/system/cpu/cpu*/topology");
  }
  const auto cpuinfo = sys.read_file("/proc/cpuinfo", std::size_t{4} << 20);
  if (!cpuinfo || cpuinfo->truncated) return std::nullopt;
  std::vector<Pu> pus;
  std::optional<std::uint64_t> processor, package, core;
  const auto flush = [&] {
    if (processor && package && core && *processor < 65536)
      pus.push_back(Pu{static_cast<std::uint32_t>(*processor), static_cast<std::uint32_t>(*package),
                       static_cast<std::uint32_t>(*core)});
    processor.reset(), package.reset(), core.reset();
  };
  for (std::string_view line : text::lines(cpuinfo->data)) {
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) {
      if (text::trim(line).empty()) flush();
      continue;
    }
    const auto key = text::trim(line.substr(0, colon));
    const auto value = text::trim(line.substr(colon + 1));
    if (key == "processor") {
      flush();
      processor = text::parse_u64(value);
    } else if (key == "physical id") {
      package = text::parse_u64(value);
    } else if (key == "core id") {
      core = text::parse_u64(value);
    }
  }
  flush();
  if (pus.empty()) return std::nullopt;
  return number_cores(std::move(pus), "/proc/cpuinfo");
}

// A GRES type: the product name in lower case, vendor prefix dropped, other
// characters as '_' ("NVIDIA H100 80GB HBM3" -> "h100_80gb_hbm3"), which is a
// substring of what Slurm's NVML autodetection calls it.
std::string gres_type(const DeviceProfile& d) {
  std::string_view name = d.name;
  if (const auto it = d.properties.find("product_name"); d.backend == Backend::rocm && it != d.properties.end())
    name = it->second;
  for (std::string_view vendor : {"NVIDIA ", "AMD ", "Intel(R) ", "Intel "})
    if (name.size() > vendor.size() && text::iequals(name.substr(0, vendor.size()), vendor)) name.remove_prefix(vendor.size());
  std::string out;
  for (char c : name) {
    const char l = text::to_lower(c);
    const bool keep = (l >= 'a' && l <= 'z') || (l >= '0' && l <= '9') || l == '.' || l == '-';
    if (keep) out.push_back(l);
    else if (!out.empty() && out.back() != '_') out.push_back('_');
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out.empty() ? std::string("gpu") : out;
}

// /proc/driver/nvidia-caps/mig-minors: "gpu<minor>/gi<g>/access <cap minor>".
std::map<std::string, std::uint32_t, std::less<>> mig_cap_minors(const System& sys) {
  std::map<std::string, std::uint32_t, std::less<>> caps;
  if (const auto file = sys.read_file("/proc/driver/nvidia-caps/mig-minors", 1 << 20))
    for (std::string_view line : text::lines(file->data)) {
      const auto words = text::words(line);
      if (words.size() != 2) continue;
      if (const auto minor = text::parse_u64(words[1]); minor && *minor < (1u << 20))
        caps.emplace(std::string(words[0]), static_cast<std::uint32_t>(*minor));
    }
  return caps;
}

std::optional<std::uint32_t> render_minor(const System& sys, const DeviceProfile& d) {
  if (const auto it = d.properties.find("drm_render_minors"); it != d.properties.end()) {
    if (const auto first = text::parse_u64(text::split_trimmed(it->second, ',').front()); first && *first < 1024)
      return static_cast<std::uint32_t>(*first);
  }
  if (d.pci_bus_id)
    for (const auto& name : list_names(sys, text::cat("/sys/bus/pci/devices/", *d.pci_bus_id, "/drm")))
      if (name.starts_with("renderD"))
        if (const auto n = text::parse_u64(std::string_view(name).substr(7)); n && *n < 1024) return static_cast<std::uint32_t>(*n);
  return std::nullopt;
}

struct GresLine {
  std::string sort_key;  // PCI address: Slurm's device order
  std::string type;
  std::string files;     // File= or MultipleFiles= with its value
  std::string comment;
  const DeviceProfile* device = nullptr;  // whole devices only (Links=)
  std::string cores;
};

}  // namespace

SlurmNodeConfig slurm_node_config(const AcceleratorRegistry& registry, const System& system, const SlurmOptions& options) {
  SlurmNodeConfig config;
  config.gres_types = "gpu";
  const auto core_map = read_core_map(system);
  if (!core_map)
    config.warnings.emplace_back("no CPU topology (/sys/devices/system/cpu/cpu*/topology or /proc/cpuinfo core ids): "
                                 "Cores= is left out, so Slurm may place a job's CPUs far from its GPUs");
  const auto cores_of = [&](const DeviceProfile& d) -> std::string {
    if (!core_map || !d.cpu_affinity) return {};
    std::set<std::uint32_t> cores;
    for (const auto cpu : cpulist(*d.cpu_affinity))
      if (const auto it = core_map->core_of_cpu.find(cpu); it != core_map->core_of_cpu.end()) cores.insert(it->second);
    // Every core: no binding to state (gres.conf(5): leave Cores out then).
    if (cores.empty() || cores.size() == core_map->cores) return {};
    return ranges(std::vector<std::uint32_t>(cores.begin(), cores.end()));
  };

  std::vector<GresLine> lines;
  std::optional<std::map<std::string, std::uint32_t, std::less<>>> caps;
  for (const auto& d : registry.devices()) {
    if (d.family != Family::gpu || !d.available) continue;
    if (d.backend != Backend::cuda && d.backend != Backend::rocm && d.backend != Backend::intel_oneapi) continue;
    const std::string type = gres_type(d);
    const std::string cores = cores_of(d);
    const std::string where = d.pci_bus_id ? text::cat(d.id, " ", *d.pci_bus_id) : d.id;
    if (d.backend == Backend::cuda) {
      std::optional<std::uint32_t> minor;
      if (d.pci_bus_id)
        if (const auto info = read_text(system, text::cat("/proc/driver/nvidia/gpus/", *d.pci_bus_id, "/information")))
          minor = parsers::parse_proc_gpu_information(*info).device_minor;
      if (!minor) {
        minor = d.index;
        config.warnings.push_back(text::cat(where, ": device minor unknown (/proc/driver/nvidia/gpus/<bus id>/information); "
                                            "/dev/nvidia", d.index, " assumes it equals the nvidia-smi index"));
      }
      const std::string device_file = text::cat("/dev/nvidia", *minor);
      const bool mig = !d.partitions.empty();
      if (!mig) {
        lines.push_back(GresLine{d.pci_bus_id.value_or(d.id), type, text::cat("File=", device_file), where, &d, cores});
        continue;
      }
      // A MIG GPU is scheduled as its instances: the GPU's node plus the
      // instance's two capability files.
      if (!caps) caps = mig_cap_minors(system);
      for (const auto& p : d.partitions) {
        const std::string pwhere = text::cat(p.id, " ", p.profile, d.pci_bus_id ? text::cat(" on ", *d.pci_bus_id) : std::string());
        if (!p.gpu_instance_id || !p.compute_instance_id) {
          config.warnings.push_back(text::cat(pwhere, ": GPU or compute instance id unknown; left out"));
          continue;
        }
        const auto gi = caps->find(text::cat("gpu", *minor, "/gi", *p.gpu_instance_id, "/access"));
        const auto ci = caps->find(text::cat("gpu", *minor, "/gi", *p.gpu_instance_id, "/ci", *p.compute_instance_id, "/access"));
        if (gi == caps->end() || ci == caps->end()) {
          config.warnings.push_back(text::cat(pwhere, ": not in /proc/driver/nvidia-caps/mig-minors; left out"));
          continue;
        }
        lines.push_back(GresLine{text::cat(d.pci_bus_id.value_or(d.id), "/", p.index), text::cat(type, "_", p.profile),
                                 text::cat("MultipleFiles=", device_file, ",/dev/nvidia-caps/nvidia-cap", gi->second,
                                           ",/dev/nvidia-caps/nvidia-cap", ci->second),
                                 pwhere, nullptr, cores});
      }
      continue;
    }
    // AMD compute partitions are devices of their own, each with its render node.
    if (d.backend == Backend::rocm && d.partitions.size() > 1) {
      const auto it = d.properties.find("drm_render_minors");
      const auto minors = it == d.properties.end() ? std::vector<std::string_view>{} : text::split_trimmed(it->second, ',');
      if (minors.size() != d.partitions.size()) {
        config.warnings.push_back(text::cat(where, ": ", d.partitions.size(), " partitions but ", minors.size(),
                                            " render nodes known; left out"));
        continue;
      }
      for (std::size_t k = 0; k < minors.size(); ++k)
        lines.push_back(GresLine{text::cat(d.pci_bus_id.value_or(d.id), "/", k), type,
                                 text::cat("File=/dev/dri/renderD", minors[k]),
                                 text::cat(d.partitions[k].id, " ", d.partitions[k].profile), nullptr, cores});
      continue;
    }
    const auto minor = render_minor(system, d);
    if (!minor) {
      config.warnings.push_back(text::cat(where, ": render node unknown (no /sys/bus/pci/devices/<bus id>/drm/renderD*); left out"));
      continue;
    }
    lines.push_back(GresLine{d.pci_bus_id.value_or(d.id), type, text::cat("File=/dev/dri/renderD", *minor), where, &d, cores});
  }
  std::sort(lines.begin(), lines.end(), [](const GresLine& a, const GresLine& b) { return a.sort_key < b.sort_key; });

  // Links=: connections to every whole GPU in Slurm's order (sorted by PCI
  // address), -1 for itself; only where a GPU-to-GPU fabric exists.
  std::vector<const DeviceProfile*> order;
  for (const auto& l : lines)
    if (l.device) order.push_back(l.device);
  const auto connections = [&](const DeviceProfile& a, const DeviceProfile& b) -> std::uint32_t {
    std::uint32_t n = 0;
    for (const auto& link : registry.links())
      if ((link.a == a.id && link.b == b.id) || (link.a == b.id && link.b == a.id))
        if (link.kind == LinkKind::nvlink || link.kind == LinkKind::xgmi) n += link.lanes.value_or(1);
    return n;
  };
  bool fabric = false;
  std::map<const DeviceProfile*, std::string> links;
  for (const DeviceProfile* a : order) {
    std::string list;
    for (const DeviceProfile* b : order) {
      if (!list.empty()) list += ',';
      if (a == b) {
        list += "-1";
        continue;
      }
      const auto n = connections(*a, *b);
      fabric = fabric || n > 0;
      list += text::cat(n);
    }
    links[a] = std::move(list);
  }

  const std::string node_name = options.node_name.value_or(registry.system().host.value_or(""));
  std::string& out = config.gres_conf;
  out += "# gres.conf from hwaccel (docs/fleet.md)";
  if (!node_name.empty()) out += text::cat(" for ", node_name);
  out += "\n";
  if (core_map) out += text::cat("# Cores= are Slurm's logical core numbers (socket by socket), from ", core_map->source, "\n");
  std::map<std::string, std::uint64_t> counts;
  for (const auto& l : lines) {
    out += text::cat("# ", l.comment, "\n");
    if (options.node_name_in_gres && !node_name.empty()) out += text::cat("NodeName=", node_name, " ");
    out += text::cat("Name=gpu Type=", l.type, " ", l.files);
    if (!l.cores.empty()) out += text::cat(" Cores=", l.cores);
    if (fabric && l.device) out += text::cat(" Links=", links[l.device]);
    out += "\n";
    ++counts[l.type];
  }

  // slurm.conf: the shape `slurmd -C` prints, plus the GRES.
  std::string& node = config.node_line;
  node = text::cat("NodeName=", node_name.empty() ? std::string("localhost") : node_name);
  if (node_name.empty()) config.warnings.emplace_back("the registry names no host: NodeName=localhost (give --node-name)");
  const auto& cpu = registry.system().cpu;
  std::optional<std::uint32_t> cpus, sockets, cores, threads;
  if (core_map && core_map->sockets > 0 && core_map->cores % core_map->sockets == 0 && core_map->cpus % core_map->cores == 0) {
    cpus = core_map->cpus, sockets = core_map->sockets, cores = core_map->cores / core_map->sockets,
    threads = core_map->cpus / core_map->cores;
  } else if (cpu && cpu->logical_cores && cpu->physical_cores && cpu->sockets && *cpu->sockets > 0 &&
             *cpu->physical_cores % *cpu->sockets == 0 && *cpu->physical_cores > 0 &&
             *cpu->logical_cores % *cpu->physical_cores == 0) {
    cpus = cpu->logical_cores, sockets = cpu->sockets, cores = *cpu->physical_cores / *cpu->sockets,
    threads = *cpu->logical_cores / *cpu->physical_cores;
  }
  if (cpus) node += text::cat(" CPUs=", *cpus, " Boards=1 SocketsPerBoard=", *sockets, " CoresPerSocket=", *cores,
                              " ThreadsPerCore=", *threads);
  else config.warnings.emplace_back("CPU shape unknown: CPUs, sockets, cores and threads are left out of the NodeName line");
  if (cpu && cpu->memory_total_bytes) node += text::cat(" RealMemory=", *cpu->memory_total_bytes >> 20);
  if (!counts.empty()) {
    node += " Gres=";
    bool first = true;
    for (const auto& [type, n] : counts) {
      node += text::cat(first ? "" : ",", "gpu:", type, ":", n);
      first = false;
    }
  }
  return config;
}

}  // namespace hwaccel
