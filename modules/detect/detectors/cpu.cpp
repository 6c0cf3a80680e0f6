// CPU backend: model, cores, ISA features relevant to inference, memory and
// NUMA nodes, read from /proc and /sys (sysctl on macOS captures).
module;
#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.detectors;

namespace hwaccel {
namespace parsers {
namespace {

// x86 flags worth reporting for inference kernels, with the name we report.
constexpr std::array<std::pair<std::string_view, std::string_view>, 17> x86_features = {{
    {"sse4_2", "sse4_2"},
    {"avx", "avx"},
    {"avx2", "avx2"},
    {"fma", "fma"},
    {"f16c", "f16c"},
    {"avx_vnni", "avx_vnni"},
    {"avx512f", "avx512f"},
    {"avx512bw", "avx512bw"},
    {"avx512vl", "avx512vl"},
    {"avx512_vnni", "avx512_vnni"},
    {"avx512_bf16", "avx512_bf16"},
    {"avx512_fp16", "avx512_fp16"},
    {"amx_tile", "amx_tile"},
    {"amx_bf16", "amx_bf16"},
    {"amx_int8", "amx_int8"},
    {"amx_fp16", "amx_fp16"},
    {"avx10_1", "avx10_1"},
}};

// Arm hwcaps (the `Features` line) mapped to the names users know.
constexpr std::array<std::pair<std::string_view, std::string_view>, 10> arm_features = {{
    {"asimd", "neon"},
    {"asimddp", "dotprod"},
    {"asimdhp", "fp16"},
    {"fphp", "fp16"},
    {"i8mm", "i8mm"},
    {"bf16", "bf16"},
    {"sve", "sve"},
    {"sve2", "sve2"},
    {"sme", "sme"},
    {"sme2", "sme2"},
}};

struct ArmCore {
  std::uint32_t implementer;
  std::uint32_t part;
  std::string_view name;
};

// MIDR implementer/part pairs of server and laptop-class cores (Arm TRMs,
// Linux arch/arm64/include/asm/cputype.h).
constexpr std::array<ArmCore, 30> arm_cores = {{
    {0x41, 0xd03, "Cortex-A53"},    {0x41, 0xd07, "Cortex-A57"},     {0x41, 0xd08, "Cortex-A72"},
    {0x41, 0xd0b, "Cortex-A76"},    {0x41, 0xd0c, "Neoverse N1"},    {0x41, 0xd0d, "Cortex-A77"},
    {0x41, 0xd40, "Neoverse V1"},   {0x41, 0xd41, "Cortex-A78"},     {0x41, 0xd44, "Cortex-X1"},
    {0x41, 0xd46, "Cortex-A510"},   {0x41, 0xd47, "Cortex-A710"},    {0x41, 0xd48, "Cortex-X2"},
    {0x41, 0xd49, "Neoverse N2"},   {0x41, 0xd4f, "Neoverse V2"},    {0x41, 0xd80, "Cortex-A520"},
    {0x41, 0xd81, "Cortex-A720"},   {0x41, 0xd82, "Cortex-X4"},      {0x41, 0xd84, "Neoverse V3"},
    {0x41, 0xd85, "Cortex-X925"},   {0x41, 0xd87, "Cortex-A725"},    {0x41, 0xd8e, "Neoverse N3"},
    {0x46, 0x001, "A64FX"},         {0x48, 0xd01, "Kunpeng 920"},    {0x4e, 0x004, "Carmel"},
    {0x61, 0x022, "Apple M1 Icestorm"}, {0x61, 0x023, "Apple M1 Firestorm"},
    {0x61, 0x032, "Apple M2 Blizzard"}, {0x61, 0x033, "Apple M2 Avalanche"},
    {0xc0, 0xac3, "AmpereOne"},     {0x51, 0x001, "Oryon"},
}};

std::string_view value_of(std::string_view line) noexcept {
  const auto colon = line.find(':');
  return colon == std::string_view::npos ? std::string_view{} : text::trim(line.substr(colon + 1));
}

std::string_view key_of(std::string_view line) noexcept {
  const auto colon = line.find(':');
  return text::trim(line.substr(0, colon));
}

// The "processor" lines in what follows the first record of an x86
// /proc/cpuinfo: its other records repeat the first one's fields (a
// 224-thread node has 6 000 lines, of which only these are read).
std::uint32_t count_processor_lines(std::string_view text) noexcept {
  std::uint32_t count = 0;
  constexpr std::string_view key = "processor";
  while (!text.empty()) {
    const std::string_view line = text::next_line(text);
    if (line.starts_with(key) && key_of(line) == key) ++count;
  }
  return count;
}

void add_features(std::vector<std::string>& out, std::string_view list, std::span<const std::pair<std::string_view, std::string_view>> known) {
  for (std::string_view flag : text::words(list))
    for (const auto& [raw, name] : known)
      if (flag == raw && std::find(out.begin(), out.end(), name) == out.end()) out.emplace_back(name);
}

}  // namespace

MemInfo parse_meminfo(std::string_view text) {
  MemInfo info;
  while (!text.empty()) {
    const std::string_view line = text::next_line(text);
    const std::string_view key = key_of(line);
    std::optional<std::uint64_t>* slot = nullptr;
    if (key == "MemTotal") slot = &info.total_bytes;
    else if (key == "MemAvailable") slot = &info.available_bytes;
    if (!slot) continue;
    if (const auto bytes = text::parse_memory_size(value_of(line))) *slot = *bytes;
  }
  return info;
}

std::string_view arm_core_name(std::uint32_t implementer, std::uint32_t part) noexcept {
  for (const auto& core : arm_cores)
    if (core.implementer == implementer && core.part == part) return core.name;
  return {};
}

CpuInfoSummary parse_cpuinfo(std::string_view text) {
  CpuInfoSummary s;
  // Arm lists one record per core and may mix core types (big.LITTLE, GB10's
  // X925 + A725): count parts to describe the package.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> arm_parts;
  std::optional<std::uint32_t> implementer;
  std::string power_model;
  bool first_record = true;
  while (!text.empty()) {
    const std::string_view line = text::next_line(text);
    if (text::trim(line).empty()) {
      if (s.processor_records > 0) first_record = false;
      if (!first_record && s.architecture == "x86_64") {
        s.processor_records += count_processor_lines(text);
        break;
      }
      continue;
    }
    const std::string_view key = key_of(line);
    const std::string_view value = value_of(line);
    if (key == "processor") {
      ++s.processor_records;
      continue;
    }
    if (key == "CPU implementer") {
      implementer = static_cast<std::uint32_t>(text::parse_hex(value).value_or(0));
      s.architecture = "aarch64";
    } else if (key == "CPU part") {
      if (const auto part = text::parse_hex(value); part && implementer)
        ++arm_parts[{*implementer, static_cast<std::uint32_t>(*part)}];
    } else if (key == "Features") {
      add_features(s.isa_features, value, arm_features);
    }
    if (!first_record) continue;
    if (key == "model name" && s.model_name.empty()) s.model_name = std::string(value);
    else if (key == "vendor_id") {
      s.vendor = value == "GenuineIntel" ? std::string("Intel") : value == "AuthenticAMD" ? std::string("AMD") : value == "HygonGenuine" ? std::string("Hygon") : std::string(value);
      s.architecture = "x86_64";
    } else if (key == "flags") add_features(s.isa_features, value, x86_features);
    else if (key == "siblings") {
      if (const auto v = text::parse_u64(value); v && *v > 0 && *v < 1'000'000) s.siblings = static_cast<std::uint32_t>(*v);
    } else if (key == "cpu cores") {
      if (const auto v = text::parse_u64(value); v && *v > 0 && *v < 1'000'000)
        s.cores_per_package = static_cast<std::uint32_t>(*v);
    } else if (key == "cpu" && value.starts_with("POWER")) {
      power_model = std::string(value);
      s.architecture = "ppc64le";
    }
  }
  if (s.model_name.empty() && !arm_parts.empty()) {
    // "10x Cortex-X925 + 10x Cortex-A725", or just "Neoverse V2" when uniform.
    std::string name;
    for (const auto& [key, count] : arm_parts) {
      std::string_view core = arm_core_name(key.first, key.second);
      std::string label = core.empty() ? text::cat("Arm core ", key.first, ":", key.second) : std::string(core);
      if (!name.empty()) name += " + ";
      name += arm_parts.size() == 1 ? label : text::cat(count, "x ", label);
    }
    s.model_name = std::move(name);
  }
  if (s.model_name.empty() && !power_model.empty()) s.model_name = power_model;
  if (!s.vendor && implementer) {
    switch (*implementer) {
      case 0x41: s.vendor = "ARM"; break;
      case 0x46: s.vendor = "Fujitsu"; break;
      case 0x48: s.vendor = "HiSilicon"; break;
      case 0x4e: s.vendor = "NVIDIA"; break;
      case 0x51: s.vendor = "Qualcomm"; break;
      case 0x61: s.vendor = "Apple"; break;
      case 0xc0: s.vendor = "Ampere"; break;
      default: break;
    }
  }
  std::sort(s.isa_features.begin(), s.isa_features.end());
  return s;
}

std::optional<std::uint64_t> parse_cgroup_memory_limit(std::string_view content) noexcept {
  content = text::trim(content);
  if (content == "max") return std::nullopt;
  const auto v = text::parse_u64(content);
  // cgroup v1 reports "unlimited" as PAGE_COUNTER_MAX * page size, just under 2^63.
  if (!v || *v >= (std::uint64_t{1} << 62)) return std::nullopt;
  return v;
}

}  // namespace parsers

namespace {

// Whether `text`, the start of /proc/cpuinfo, holds the whole first record of
// an x86 machine (the one record x86 detection reads).
bool has_whole_x86_record(std::string_view text) noexcept {
  const std::string_view first = text.substr(0, text.find("\n\n"));
  return first.size() < text.size() && first.find("\nvendor_id") != std::string_view::npos;
}

std::optional<std::uint64_t> cgroup_memory_limit(const System& sys) {
  const auto self = read_text(sys, "/proc/self/cgroup");
  if (!self) return std::nullopt;
  std::string_view rest = *self;
  std::optional<std::uint64_t> limit;
  while (!rest.empty()) {
    const std::string_view line = text::next_line(rest);
    // "0::/system.slice/x.scope" (v2) or "7:memory:/docker/abc" (v1)
    std::string_view fields = line;
    text::next_token(fields, ':');
    const std::string_view controllers = text::next_token(fields, ':');
    const std::string_view path = fields;
    if (path.find("..") != std::string_view::npos) continue;
    std::string file;
    if (controllers.empty()) file = text::cat("/sys/fs/cgroup", path == "/" ? "" : path, "/memory.max");
    else if (controllers == "memory" || controllers.find("memory") != std::string_view::npos)
      file = text::cat("/sys/fs/cgroup/memory", path == "/" ? "" : path, "/memory.limit_in_bytes");
    else continue;
    if (const auto content = read_text(sys, file))
      if (const auto v = parsers::parse_cgroup_memory_limit(*content)) limit = limit ? std::min(*limit, *v) : *v;
  }
  return limit;
}

std::vector<NumaNode> numa_nodes(const System& sys) {
  std::vector<NumaNode> nodes;
  const auto online = read_text(sys, "/sys/devices/system/node/online");
  if (!online) return nodes;
  std::string_view list = *online;
  while (!list.empty()) {
    const std::string_view item = text::trim(text::next_token(list, ','));
    const auto dash = item.find('-');
    const auto lo = text::parse_u64(item.substr(0, dash));
    const auto hi = dash == std::string_view::npos ? lo : text::parse_u64(item.substr(dash + 1));
    if (!lo || !hi || *hi < *lo || *hi - *lo > 4096) return nodes;
    for (std::uint64_t id = *lo; id <= *hi; ++id) {
      NumaNode node;
      node.id = static_cast<std::uint32_t>(id);
      const std::string dir = text::cat("/sys/devices/system/node/node", id);
      node.cpulist = read_text(sys, dir + "/cpulist").value_or("");
      if (const auto meminfo = read_text(sys, dir + "/meminfo")) {
        // "Node 0 MemTotal:       32594552 kB"
        std::string_view rest = *meminfo;
        while (!rest.empty()) {
          const std::string_view line = text::next_line(rest);
          const auto pos = line.find("MemTotal:");
          if (pos == std::string_view::npos) continue;
          node.memory_bytes = text::parse_memory_size(line.substr(pos + 9));
          break;
        }
      }
      nodes.push_back(std::move(node));
    }
  }
  return nodes;
}

// macOS has no /proc: the capture holds `sysctl -n hw.memsize ...`.
void fill_from_sysctl(const DetectContext& ctx, DetectorOutput& out, CpuInfo& cpu) {
  auto result = ctx.run({"sysctl", "-n", "hw.memsize", "machdep.cpu.brand_string", "hw.physicalcpu", "hw.logicalcpu"});
  if (!result) {
    if (result.error().kind != ErrorKind::tool_not_found) ctx.warn(out, result.error());
    return;
  }
  if (!result->succeeded()) {
    ctx.warn(out, WarningKind::tool_failed,
             text::cat("sysctl -n hw.memsize ... exited with code ", result->exit_code, ": ",
                       text::excerpt(text::trim(result->err))));
    return;
  }
  const auto values = text::lines(result->out);
  if (values.size() < 4) {
    ctx.warn(out, WarningKind::parse_error,
             text::cat("sysctl printed ", values.size(), " lines where 4 were expected"));
    return;
  }
  cpu.memory_total_bytes = text::parse_u64(values[0]);
  cpu.model_name = std::string(text::trim(values[1]));
  if (const auto v = text::parse_u64(values[2])) cpu.physical_cores = static_cast<std::uint32_t>(*v);
  if (const auto v = text::parse_u64(values[3])) cpu.logical_cores = static_cast<std::uint32_t>(*v);
  cpu.architecture = cpu.model_name.starts_with("Apple") ? "arm64" : "x86_64";
  if (cpu.model_name.starts_with("Apple")) {
    cpu.vendor = "Apple";
    cpu.isa_features = {"bf16", "dotprod", "fp16", "i8mm", "neon"};
    // M1 lacks bf16/i8mm (they arrived with the M2 generation's Armv8.6 cores).
    if (cpu.model_name.find("M1") != std::string::npos) cpu.isa_features = {"dotprod", "fp16", "neon"};
  }
}

// Windows: what its System answers at windows_system_path. False when there
// is no such document (not Windows).
bool fill_from_windows(const DetectContext& ctx, DetectorOutput& out, CpuInfo& cpu) {
  const auto file = ctx.system().read_file(windows_system_path);
  if (!file) {
    if (file.error().kind != ErrorKind::not_found) ctx.warn(out, file.error());
    return file.error().kind != ErrorKind::not_found;
  }
  auto facts = parse_windows_system(file->data);
  if (!facts) {
    ctx.warn(out, facts.error());
    return true;
  }
  cpu.model_name = std::move(facts->processor_name);
  if (facts->processor_vendor == "GenuineIntel") cpu.vendor = "Intel";
  else if (facts->processor_vendor == "AuthenticAMD") cpu.vendor = "AMD";
  else if (facts->processor_vendor) cpu.vendor = std::move(facts->processor_vendor);
  cpu.architecture = std::move(facts->architecture);
  cpu.logical_cores = facts->logical_processors;
  cpu.physical_cores = facts->physical_cores;
  cpu.sockets = facts->sockets;
  cpu.memory_total_bytes = facts->memory_bytes;
  cpu.memory_available_bytes = facts->memory_available_bytes;
  cpu.isa_features = std::move(facts->isa_features);
  return true;
}

DetectorOutput detect_cpu(const DetectContext& ctx) {
  DetectorOutput out;
  const System& sys = ctx.system();
  CpuInfo cpu;

  auto meminfo_file = sys.read_file("/proc/meminfo", 256 * 1024);
  if (meminfo_file) {
    const auto mem = parsers::parse_meminfo(meminfo_file->data);
    cpu.memory_total_bytes = mem.total_bytes;
    cpu.memory_available_bytes = mem.available_bytes;
    if (!mem.total_bytes) ctx.warn(out, WarningKind::parse_error, "/proc/meminfo has no MemTotal line");
    if (mem.total_bytes && mem.available_bytes && *mem.available_bytes > *mem.total_bytes) {
      ctx.warn(out, WarningKind::invalid_value,
               text::cat("/proc/meminfo: MemAvailable (", *mem.available_bytes / 1024, " kB) exceeds MemTotal (",
                         *mem.total_bytes / 1024, " kB); available memory is unknown"));
      cpu.memory_available_bytes.reset();
    }
  }

  // The kernel formats /proc/cpuinfo one CPU at a time as it is read, a few
  // microseconds each (3.5 us measured on a KVM guest, more where it asks each
  // CPU for its clock): a 224-thread node's whole file costs most of a ms. x86
  // needs the first record only, with the online list for the count, so a
  // page is read first; all of it (up to 1 MiB, ~200 bytes a core on Arm)
  // only where that is not enough: Arm and POWER describe each core, and
  // without the online list the count comes from the processor records.
  const bool have_proc = meminfo_file.has_value();
  auto cpuinfo = sys.read_file("/proc/cpuinfo", 4096);
  std::optional<std::uint32_t> online_cpus;
  if (cpuinfo) {
    if (const auto online = read_text(sys, "/sys/devices/system/cpu/online")) {
      if (const auto n = text::cpulist_count(*online); n && *n > 0) online_cpus = n;
    }
  }
  if (cpuinfo && cpuinfo->truncated && !(online_cpus && has_whole_x86_record(cpuinfo->data)))
    cpuinfo = sys.read_file("/proc/cpuinfo", 1 << 20);
  if (cpuinfo) {
    auto summary = parsers::parse_cpuinfo(cpuinfo->data);
    cpu.model_name = std::move(summary.model_name);
    cpu.vendor = std::move(summary.vendor);
    cpu.architecture = std::move(summary.architecture);
    cpu.isa_features = std::move(summary.isa_features);
    cpu.logical_cores = online_cpus;
    if (!cpu.logical_cores && !cpuinfo->truncated && summary.processor_records > 0)
      cpu.logical_cores = summary.processor_records;
    if (cpu.logical_cores && summary.siblings && summary.cores_per_package && *summary.siblings >= *summary.cores_per_package) {
      // x86: each package has `siblings` logical CPUs on `cpu cores` cores.
      cpu.physical_cores = static_cast<std::uint32_t>(
          std::uint64_t{*cpu.logical_cores} * *summary.cores_per_package / *summary.siblings);
      cpu.sockets = std::max<std::uint32_t>(1, *cpu.logical_cores / *summary.siblings);
    } else if (cpu.logical_cores) {
      const auto siblings = read_text(sys, "/sys/devices/system/cpu/cpu0/topology/thread_siblings_list");
      const auto threads = siblings ? text::cpulist_count(*siblings) : std::nullopt;
      if (threads && *threads > 0) cpu.physical_cores = *cpu.logical_cores / *threads;
    }
  } else if (have_proc) {
    ctx.warn(out, cpuinfo.error());
  }
  if (cpu.architecture.empty()) {
    if (const auto arch = read_text(sys, "/proc/sys/kernel/arch")) cpu.architecture = *arch;
  }

  if (!have_proc) {
    if (!fill_from_windows(ctx, out, cpu)) {
      if (sys.find_tool("sysctl")) fill_from_sysctl(ctx, out, cpu);
      else ctx.warn(out, meminfo_file.error());
    }
  } else {
    cpu.numa_nodes = numa_nodes(sys);
    cpu.cgroup_memory_limit_bytes = cgroup_memory_limit(sys);
  }

  DeviceProfile device;
  device.backend = Backend::cpu;
  device.family = Family::cpu;
  device.index = 0;
  device.id = device_id(Backend::cpu, 0);
  device.name = cpu.model_name.empty() ? std::string("CPU") : cpu.model_name;
  device.vendor = cpu.vendor;
  device.memory_bytes = cpu.memory_total_bytes;
  device.memory_free_bytes = cpu.memory_available_bytes;
  if (cpu.memory_total_bytes && cpu.memory_available_bytes && *cpu.memory_available_bytes <= *cpu.memory_total_bytes)
    device.memory_used_bytes = *cpu.memory_total_bytes - *cpu.memory_available_bytes;
  device.architecture = cpu.architecture.empty() ? std::nullopt : std::optional<std::string>(cpu.architecture);
  device.compute_units = cpu.physical_cores ? cpu.physical_cores : cpu.logical_cores;
  if (!cpu.isa_features.empty()) {
    std::string isa;
    for (const auto& f : cpu.isa_features) {
      if (!isa.empty()) isa += ',';
      isa += f;
    }
    device.properties.emplace("isa", std::move(isa));
  }
  if (cpu.cgroup_memory_limit_bytes)
    device.properties.emplace("cgroup_memory_limit_bytes", std::to_string(*cpu.cgroup_memory_limit_bytes));
  out.devices.push_back(std::move(device));
  out.cpu = std::move(cpu);
  return out;
}

}  // namespace

constexpr std::string_view cpu_runtimes[] = {"llama.cpp"};

const Detector cpu_detector{
    .name = "cpu",
    .backend = Backend::cpu,
    .tools = {},
    .detect = &detect_cpu,
    .facts = {.runtimes = cpu_runtimes},
};

}  // namespace hwaccel
