// Apple backend. On macOS: system_profiler (hardware and graphics, as JSON)
// and sysctl (memory size, GPU wired-memory limit). On Linux (Asahi): the
// device tree names the SoC and /proc/meminfo the unified memory. An Apple
// silicon chip gives a GPU and a Neural Engine, both on unified memory; an
// Intel Mac gives its integrated and discrete GPUs.
module;
#include <simdjson.h>
#include "json_input.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.detectors;

namespace hwaccel {
namespace parsers {
namespace {

// SoC codes from the Linux device-tree bindings (Documentation/devicetree/
// bindings/arm/apple.yaml); Neural Engine figures as Apple published them
// when each chip was announced (M3 Ultra: cores only).
constexpr std::array<AppleChip, 16> apple_chips = {{
    {"t8103", "M1", 11.0, 16},
    {"t6000", "M1 Pro", 11.0, 16},
    {"t6001", "M1 Max", 11.0, 16},
    {"t6002", "M1 Ultra", 22.0, 32},
    {"t8112", "M2", 15.8, 16},
    {"t6020", "M2 Pro", 15.8, 16},
    {"t6021", "M2 Max", 15.8, 16},
    {"t6022", "M2 Ultra", 31.6, 32},
    {"t8122", "M3", 18.0, 16},
    {"t6030", "M3 Pro", 18.0, 16},
    {"t6031", "M3 Max", 18.0, 16},  // 16 CPU cores
    {"t6034", "M3 Max", 18.0, 16},  // 14 CPU cores
    {"t6032", "M3 Ultra", std::nullopt, 32},
    {"t8132", "M4", 38.0, 16},
    {"t6040", "M4 Pro", 38.0, 16},
    {"t6041", "M4 Max", 38.0, 16},
}};

constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

// "apple,t8103" at `pos` of text: the SoC code, or empty.
std::string_view soc_at(std::string_view text, std::size_t pos) noexcept {
  const std::string_view code = text.substr(pos + 6, 5);  // after "apple,"
  if (code.size() == 5 && code[0] == 't' && is_digit(code[1]) && is_digit(code[2]) && is_digit(code[3]) &&
      is_digit(code[4]))
    return code;
  return {};
}

std::optional<std::string_view> string_field(simdjson::dom::object object, std::string_view key) {
  std::string_view value;
  if (object[key].get_string().get(value) != simdjson::SUCCESS) return std::nullopt;
  value = text::trim(value);
  if (value.empty()) return std::nullopt;
  return value;
}


// "spdisplays_metal3" -> "Metal 3"; "spdisplays_mtlgpufamilymac2" -> "Metal GPU
// family Mac 2"; "spdisplays_supported" (older releases' spdisplays_metal) -> "Metal".
std::string metal_name(std::string_view token) {
  if (token.starts_with("spdisplays_")) token.remove_prefix(11);
  if (token.starts_with("metal") && token.size() > 5) return text::cat("Metal ", token.substr(5));
  if (token.starts_with("mtlgpufamilymac")) return text::cat("Metal GPU family Mac ", token.substr(15));
  if (token.starts_with("mtlgpufamily")) return text::cat("Metal GPU family ", token.substr(12));
  if (token == "supported") return "Metal";
  return std::string(token);
}

struct VendorName {
  std::string_view needle;
  std::string_view name;
  std::uint16_t pci_id;
};
constexpr std::array<VendorName, 5> gpu_vendors = {{
    {"apple", "Apple", 0x106b}, {"amd", "AMD", 0x1002}, {"ati", "AMD", 0x1002}, {"intel", "Intel", 0x8086},
    {"nvidia", "NVIDIA", 0x10de},
}};

Result<simdjson::dom::array> top_array(simdjson::dom::parser& parser, std::string_view json, std::string_view key,
                                       std::string_view command) {
  simdjson::dom::element doc;
  if (const auto err = json_input::parse(parser, json).get(doc); err != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat(command, " did not print JSON (", simdjson::error_message(err), "): ",
                                                  text::excerpt(text::trim(json), 60)));
  simdjson::dom::array array;
  if (doc[key].get_array().get(array) != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat(command, " printed JSON without a \"", key, "\" array"));
  return array;
}

}  // namespace

std::optional<AppleChip> apple_chip_by_soc(std::string_view soc) noexcept {
  for (const auto& chip : apple_chips)
    if (chip.soc == soc) return chip;
  return std::nullopt;
}

std::optional<AppleChip> apple_chip_by_name(std::string_view name) noexcept {
  name = text::trim(name);
  if (name.starts_with("Apple ")) name.remove_prefix(6);
  for (const auto& chip : apple_chips)
    if (chip.name == name) return chip;
  return std::nullopt;
}

DeviceTreeCompatible parse_devicetree_compatible(std::string_view text) {
  DeviceTreeCompatible dt;
  dt.apple = text.find("apple,") != std::string_view::npos;
  if (!dt.apple) return dt;
  // The real file separates strings with NULs; a pasted copy may have lost
  // them, so look for the "apple," prefixes wherever they are.
  for (std::size_t pos = text.find("apple,"); pos != std::string_view::npos; pos = text.find("apple,", pos + 6)) {
    if (const auto soc = soc_at(text, pos); !soc.empty() && dt.soc.empty()) {
      dt.soc = std::string(soc);
    } else if (dt.board.empty() && pos + 7 < text.size() && text[pos + 6] == 'j') {
      std::size_t end = pos + 7;
      while (end < text.size() && text[end] != '\0' && text.compare(end, 6, "apple,") != 0 && !text::is_space(text[end]))
        ++end;
      dt.board = std::string(text.substr(pos + 6, end - pos - 6));
    }
  }
  return dt;
}

Result<MacHardware> parse_sp_hardware(std::string_view json) {
  simdjson::dom::parser parser;
  auto array = top_array(parser, json, "SPHardwareDataType", "system_profiler SPHardwareDataType -json");
  if (!array) return fail(array.error());
  simdjson::dom::object overview;
  bool found = false;
  for (simdjson::dom::element item : *array)
    if (item.get_object().get(overview) == simdjson::SUCCESS) {
      found = true;
      break;
    }
  if (!found) return fail(ErrorKind::parse_error, "system_profiler SPHardwareDataType -json printed an empty hardware list");
  MacHardware hw;
  hw.chip_type = text::owned(string_field(overview, "chip_type"));
  hw.cpu_type = text::owned(string_field(overview, "cpu_type"));
  hw.machine_model = text::owned(string_field(overview, "machine_model"));
  hw.machine_name = text::owned(string_field(overview, "machine_name"));
  if (const auto memory = string_field(overview, "physical_memory")) hw.physical_memory_bytes = text::parse_memory_size(*memory);
  return hw;
}

Result<std::vector<MacGpu>> parse_sp_displays(std::string_view json) {
  simdjson::dom::parser parser;
  auto array = top_array(parser, json, "SPDisplaysDataType", "system_profiler SPDisplaysDataType -json");
  if (!array) return fail(array.error());
  std::vector<MacGpu> gpus;
  for (simdjson::dom::element item : *array) {
    simdjson::dom::object o;
    if (item.get_object().get(o) != simdjson::SUCCESS) continue;
    // Entries are graphics processors (sppci_device_type spdisplays_gpu);
    // their displays are nested under spdisplays_ndrvs.
    const auto type = string_field(o, "sppci_device_type");
    if (type && *type != "spdisplays_gpu") continue;
    const auto model = string_field(o, "sppci_model");
    const auto name = model ? model : string_field(o, "_name");
    if (!name) continue;
    MacGpu gpu;
    gpu.name = std::string(*name);
    if (const auto vendor = string_field(o, "spdisplays_vendor")) {
      const std::string lowered = text::lower(*vendor);
      for (const auto& v : gpu_vendors)
        if (lowered.find(v.needle) != std::string::npos) {
          gpu.vendor = std::string(v.name);
          gpu.pci_vendor_id = v.pci_id;
          break;
        }
      if (!gpu.vendor) {
        std::string_view raw = *vendor;
        if (raw.starts_with("sppci_vendor_")) raw.remove_prefix(13);
        gpu.vendor = std::string(raw);
      }
    }
    if (const auto cores = string_field(o, "sppci_cores")) {
      if (const auto n = text::parse_u64(*cores); n && *n > 0 && *n < 100'000) gpu.cores = static_cast<std::uint32_t>(*n);
    } else if (std::int64_t n = 0; o["sppci_cores"].get_int64().get(n) == simdjson::SUCCESS && n > 0 && n < 100'000) {
      gpu.cores = static_cast<std::uint32_t>(n);
    }
    for (const std::string_view key : {"spdisplays_mtlgpufamilysupport", "spdisplays_metalfamily", "spdisplays_metal"})
      if (const auto metal = string_field(o, key)) {
        gpu.metal = metal_name(*metal);
        break;
      }
    if (const auto vram = string_field(o, "spdisplays_vram")) gpu.vram_bytes = text::parse_memory_size(*vram);
    if (const auto shared = string_field(o, "spdisplays_vram_shared")) gpu.vram_shared_bytes = text::parse_memory_size(*shared);
    gpu.builtin = string_field(o, "sppci_bus") == std::optional<std::string_view>("spdisplays_builtin");
    if (const auto id = string_field(o, "spdisplays_device-id")) {
      if (const auto v = text::parse_hex(*id); v && *v <= 0xffff) gpu.pci_device_id = static_cast<std::uint16_t>(*v);
    }
    if (const auto id = string_field(o, "spdisplays_vendor-id")) {
      if (const auto v = text::parse_hex(*id); v && *v <= 0xffff) gpu.pci_vendor_id = static_cast<std::uint16_t>(*v);
    }
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

std::uint64_t default_gpu_wired_limit(std::uint64_t memory_bytes) noexcept {
  // Seen from Metal's recommendedMaxWorkingSetSize: 10922.67 MB of 16 GB and
  // 21845.34 MB of 32 GB (2/3), 48 GiB of 64 GiB (3/4); macOS 26 allows
  // 107.5 GiB of 128 GiB, so 3/4 is a floor on large machines.
  constexpr std::uint64_t threshold = std::uint64_t{36} << 30;
  return memory_bytes <= threshold ? memory_bytes / 3 * 2 : memory_bytes / 4 * 3;
}

}  // namespace parsers

namespace {

// Run alongside system_profiler only (that is, on macOS): on Linux the
// procps sysctl exists too, and must not make this detector wait on a tool.
constexpr std::array<std::string_view, 1> apple_tools = {"system_profiler"};

DeviceProfile new_apple_device(std::uint32_t index, Family family) {
  DeviceProfile d;
  d.backend = Backend::apple;
  d.family = family;
  d.index = index;
  d.id = device_id(d.backend, index);
  d.vendor = "Apple";
  d.integrated = true;
  d.memory_kind = MemoryKind::unified;
  return d;
}

DeviceProfile neural_engine(std::uint32_t index, const std::string& chip_name, const std::optional<parsers::AppleChip>& chip) {
  DeviceProfile ane = new_apple_device(index, Family::npu);
  ane.name = chip_name + " Neural Engine";
  ane.properties.emplace("memory", "shares the chip's unified memory; it has none of its own");
  if (chip) {
    ane.properties.emplace("published_neural_engine_cores", text::cat(chip->ane_published_cores));
    if (chip->ane_published_tops) {
      ane.properties.emplace("published_tops", text::cat(*chip->ane_published_tops));
      ane.properties.emplace("published_tops_note",
                             "Apple's published Neural Engine throughput for this chip (trillion operations per "
                             "second), a specification, not a measurement");
    }
  }
  return ane;
}

void detect_asahi(const DetectContext& ctx, DetectorOutput& out, const parsers::DeviceTreeCompatible& dt) {
  const System& sys = ctx.system();
  const auto chip = parsers::apple_chip_by_soc(dt.soc);
  std::string chip_name = chip ? text::cat("Apple ", chip->name) : std::string("Apple silicon");
  if (!chip) {
    if (dt.soc.empty()) {
      ctx.warn(out, WarningKind::parse_error,
               "/proc/device-tree/compatible names an Apple platform but no Apple SoC (apple,tNNNN); the chip is unknown");
    } else {
      chip_name += text::cat(" (", dt.soc, ")");
      ctx.warn(out, WarningKind::unsupported,
               text::cat("/proc/device-tree/compatible: SoC apple,", dt.soc,
                         " is not a chip this version knows; its name and Neural Engine figures are unknown"));
    }
  }
  DeviceProfile gpu = new_apple_device(0, Family::gpu);
  gpu.name = chip_name + " GPU";
  if (const auto meminfo = sys.read_file("/proc/meminfo", 256 * 1024))
    gpu.memory_bytes = parsers::parse_meminfo(meminfo->data).total_bytes;
  if (!dt.soc.empty()) gpu.properties.emplace("soc", "apple," + dt.soc);
  if (!dt.board.empty()) gpu.properties.emplace("board", "apple," + dt.board);
  if (auto model = read_text(sys, "/proc/device-tree/model", 4096); model && !model->empty())
    gpu.properties.emplace("machine_model", std::move(*model));
  gpu.properties.emplace("memory", "memory_bytes is the unified memory Linux manages (MemTotal), shared with the CPU");
  // The Asahi GPU driver (out of tree) binds the GPU as the platform driver "asahi".
  if (sys.exists("/sys/bus/platform/drivers/asahi")) {
    gpu.properties.emplace("linux_driver", "asahi");
  } else {
    gpu.available = false;
    ctx.warn(out, WarningKind::unsupported,
             text::cat(chip_name, " GPU: the asahi GPU driver is not loaded (/sys/bus/platform/drivers/asahi is missing), "
                                  "so this kernel cannot use the GPU"));
  }
  DeviceProfile ane = neural_engine(1, chip_name, chip);
  ane.available = false;
  ane.properties.emplace("linux_support", "no upstream Linux driver runs the Neural Engine");
  out.devices.push_back(std::move(gpu));
  out.devices.push_back(std::move(ane));
}

std::string profiler_failure(std::string_view command, const ToolResult& r) {
  return text::cat(command, " ", r.signal ? text::cat("was killed by signal ", *r.signal) : text::cat("exited with code ", r.exit_code),
                   ": ", text::excerpt(text::trim(r.err), 160));
}

// The output of a finished tool run, or a warning.
const ToolResult* succeeded(const DetectContext& ctx, DetectorOutput& out, const Result<ToolResult>& r, std::string_view command,
                            bool quiet = false) {
  if (!r) {
    if (!quiet) ctx.warn(out, r.error());
    return nullptr;
  }
  if (!r->succeeded()) {
    if (!quiet) ctx.warn(out, WarningKind::tool_failed, profiler_failure(command, *r));
    return nullptr;
  }
  return &*r;
}

void detect_apple_silicon_mac(const DetectContext& ctx, DetectorOutput& out, const parsers::MacHardware* hw,
                              const std::vector<parsers::MacGpu>* gpus, std::optional<std::uint64_t> memory,
                              std::optional<std::uint64_t> wired_limit_mb) {
  const parsers::MacGpu* apple_gpu = nullptr;
  if (gpus)
    for (const auto& g : *gpus)
      if (g.vendor == "Apple" || std::string_view(g.name).starts_with("Apple ")) {
        apple_gpu = &g;
        break;
      }
  const std::string chip_name = hw && hw->chip_type ? *hw->chip_type : apple_gpu ? apple_gpu->name : std::string("Apple silicon");
  const auto chip = parsers::apple_chip_by_name(chip_name);
  if (!chip)
    ctx.warn(out, WarningKind::unsupported,
             text::cat("\"", text::excerpt(chip_name, 40), "\" is not a chip this version knows; its Neural Engine figures are unknown"));
  if (gpus && !apple_gpu)
    ctx.warn(out, WarningKind::parse_error, "system_profiler SPDisplaysDataType -json lists no Apple GPU; GPU core count unknown");

  DeviceProfile gpu = new_apple_device(0, Family::gpu);
  gpu.name = chip_name + " GPU";
  gpu.properties.emplace("chip", chip_name);
  if (hw && hw->machine_model) gpu.properties.emplace("machine_model", *hw->machine_model);
  if (apple_gpu) {
    gpu.compute_units = apple_gpu->cores;
    if (apple_gpu->metal) {
      gpu.compute_capability = apple_gpu->metal;
      gpu.properties.emplace("metal_support", *apple_gpu->metal);
    }
  }
  gpu.memory_bytes = memory;
  if (memory) {
    if (wired_limit_mb && *wired_limit_mb > 0) {
      gpu.shared_memory_bytes = text::checked_mul(*wired_limit_mb, std::uint64_t{1} << 20);
      gpu.properties.emplace("shared_memory",
                             "GPU-usable share of the unified memory: the limit set with sysctl iogpu.wired_limit_mb");
    } else {
      gpu.shared_memory_bytes = parsers::default_gpu_wired_limit(*memory);
      gpu.properties.emplace("shared_memory",
                             "GPU-usable share of the unified memory: a conservative estimate of macOS's default GPU "
                             "wired-memory limit (2/3 of memory up to 36 GiB, 3/4 above; iogpu.wired_limit_mb is 0). "
                             "Not measured: Metal's recommendedMaxWorkingSetSize is the exact figure");
    }
    gpu.properties.emplace("memory", "memory_bytes is the unified memory (hw.memsize), shared with the CPU");
  }
  out.devices.push_back(std::move(gpu));
  out.devices.push_back(neural_engine(1, chip_name, chip));
}

void detect_intel_mac(DetectorOutput& out, const std::vector<parsers::MacGpu>& gpus) {
  std::uint32_t index = 0;
  for (const auto& g : gpus) {
    DeviceProfile d = new_apple_device(index++, Family::gpu);
    d.name = g.name;
    d.vendor = g.vendor;
    d.integrated = g.builtin || g.vram_shared_bytes.has_value();
    d.memory_kind = MemoryKind::dedicated;
    if (g.vram_bytes && !d.integrated) {
      d.memory_bytes = g.vram_bytes;
    } else if (g.vram_shared_bytes) {
      d.memory_kind = MemoryKind::unified;
      d.shared_memory_bytes = g.vram_shared_bytes;
      d.properties.emplace("shared_memory",
                           "the most system memory macOS lets this integrated GPU use (spdisplays_vram_shared)");
    } else if (g.vram_bytes) {
      d.memory_kind = MemoryKind::carve_out;
      d.memory_bytes = g.vram_bytes;
    }
    if (g.metal) {
      d.compute_capability = g.metal;
      d.properties.emplace("metal_support", *g.metal);
    }
    if (g.pci_vendor_id && g.pci_device_id) d.properties.emplace("pci_id", pci_id_text(*g.pci_vendor_id, *g.pci_device_id));
    out.devices.push_back(std::move(d));
  }
}

void detect_mac(const DetectContext& ctx, DetectorOutput& out) {
  const std::array<ToolRequest, 4> requests = {
      ctx.request({"system_profiler", "SPHardwareDataType", "-json"}),
      ctx.request({"system_profiler", "SPDisplaysDataType", "-json"}),
      ctx.request({"sysctl", "-n", "hw.memsize"}),
      ctx.request({"sysctl", "-n", "iogpu.wired_limit_mb"}),
  };
  const auto results = ctx.run_concurrently(requests);

  std::optional<parsers::MacHardware> hw;
  if (const auto* r = succeeded(ctx, out, results[0], "system_profiler SPHardwareDataType -json")) {
    if (auto parsed = parsers::parse_sp_hardware(r->out)) hw = std::move(*parsed);
    else ctx.warn(out, parsed.error());
  }
  std::optional<std::vector<parsers::MacGpu>> gpus;
  if (const auto* r = succeeded(ctx, out, results[1], "system_profiler SPDisplaysDataType -json")) {
    if (auto parsed = parsers::parse_sp_displays(r->out)) gpus = std::move(*parsed);
    else ctx.warn(out, parsed.error());
  }
  std::optional<std::uint64_t> memory;
  if (const auto* r = succeeded(ctx, out, results[2], "sysctl -n hw.memsize")) {
    memory = text::parse_u64(r->out);
    if (!memory)
      ctx.warn(out, WarningKind::parse_error, text::cat("sysctl -n hw.memsize printed \"", text::excerpt(text::trim(r->out), 40), "\""));
  }
  if (!memory && hw) memory = hw->physical_memory_bytes;
  // iogpu.wired_limit_mb exists from macOS 14 on; older releases have no such
  // sysctl and the default applies, so its failure is no warning.
  std::optional<std::uint64_t> wired_limit_mb;
  if (const auto* r = succeeded(ctx, out, results[3], "sysctl -n iogpu.wired_limit_mb", true))
    wired_limit_mb = text::parse_u64(r->out);

  if (!hw && !gpus) return;
  const bool apple_silicon = hw ? hw->chip_type && hw->chip_type->starts_with("Apple")
                                : std::any_of(gpus->begin(), gpus->end(), [](const parsers::MacGpu& g) { return g.vendor == "Apple"; });
  if (apple_silicon) detect_apple_silicon_mac(ctx, out, hw ? &*hw : nullptr, gpus ? &*gpus : nullptr, memory, wired_limit_mb);
  else if (gpus) detect_intel_mac(out, *gpus);
}

DetectorOutput detect_apple(const DetectContext& ctx) {
  DetectorOutput out;
  const System& sys = ctx.system();
  // Every device-tree platform has this file; only Apple's name "apple,..." in it.
  if (const auto compatible = sys.read_file("/proc/device-tree/compatible", 4096)) {
    const auto dt = parsers::parse_devicetree_compatible(compatible->data);
    if (dt.apple) detect_asahi(ctx, out, dt);
    return out;
  }
  if (sys.find_tool("system_profiler")) detect_mac(ctx, out);
  return out;
}

}  // namespace

constexpr Family apple_other_families[] = {Family::npu};
constexpr std::string_view apple_drivers[] = {"asahi"};
constexpr std::string_view apple_runtimes[] = {"llama.cpp", "mlx"};

const Detector apple_detector{
    .name = "apple",
    .backend = Backend::apple,
    .tools = apple_tools,
    .detect = &detect_apple,
    .facts = {.other_families = apple_other_families,
              .drivers = apple_drivers,
              .vendor = "Apple",
              .runtimes = apple_runtimes,
              .merges_with_vulkan = true},
};

}  // namespace hwaccel
