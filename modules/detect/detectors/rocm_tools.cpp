// AMD GPUs from rocm-smi and rocminfo: the views of last resort, read when
// DRM sysfs and the KFD topology show no AMD GPU (a container without /sys,
// pasted outputs). rocm-smi gives names, bus ids, memory and unique ids;
// rocminfo adds the gfx target, compute units and device memory; the two are
// joined by PCI address.
module;
#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <simdjson.h>

#include "json_input.hpp"
module hwaccel.detectors;

namespace hwaccel::parsers {

namespace {

constexpr std::size_t max_rocm_gpus = 1024;

bool is_placeholder(std::string_view v) noexcept {
  return v.empty() || text::iequals(v, "N/A") || text::icontains(v, "not supported");
}

RocmSmiGpu& gpu_at(RocmSmiReport& report, std::uint32_t index) {
  const auto it = std::lower_bound(report.gpus.begin(), report.gpus.end(), index,
                                   [](const RocmSmiGpu& g, std::uint32_t i) { return g.index < i; });
  if (it != report.gpus.end() && it->index == index) return *it;
  return *report.gpus.insert(it, RocmSmiGpu{index, {}});
}

void put(RocmSmiGpu& gpu, std::string_view key, std::string_view value) {
  key = text::trim(key);
  value = text::trim(value);
  if (key.empty() || is_placeholder(value)) return;
  gpu.fields.emplace(std::string(key), std::string(value));  // the first value of a key is kept
}

// "GPU[12]" at the start of a line -> 12.
std::optional<std::uint32_t> gpu_prefix(std::string_view line, std::string_view& rest) {
  if (!line.starts_with("GPU[")) return std::nullopt;
  const auto close = line.find(']');
  if (close == std::string_view::npos) return std::nullopt;
  const auto index = text::parse_name_number(line.substr(4, close - 4));
  if (!index || *index >= max_rocm_gpus) return std::nullopt;
  rest = line.substr(close + 1);
  return index;
}

// The GPUn columns of a --showtopo matrix header ("       GPU0   GPU1 ...").
std::vector<std::uint32_t> matrix_columns(std::string_view line) {
  std::vector<std::uint32_t> columns;
  for (std::string_view word : text::words(line)) {
    if (!word.starts_with("GPU")) return {};
    const auto n = text::parse_name_number(word.substr(3));
    if (!n || *n >= max_rocm_gpus) return {};
    columns.push_back(*n);
  }
  return columns;
}

}  // namespace

std::optional<std::string_view> RocmSmiGpu::get(std::string_view key) const {
  const auto it = fields.find(key);
  if (it == fields.end()) return std::nullopt;
  return std::string_view(it->second);
}

Result<RocmSmiReport> parse_rocm_smi_json(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (const auto err = json_input::parse(parser, json).get(doc); err != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat("rocm-smi JSON is not valid JSON: ", simdjson::error_message(err)));
  simdjson::dom::object root;
  if (doc.get_object().get(root) != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, "rocm-smi JSON is not an object of cards");
  RocmSmiReport report;
  for (auto [key, value] : root) {
    simdjson::dom::object fields;
    if (value.get_object().get(fields) != simdjson::SUCCESS) continue;
    if (key == "system") {
      std::string_view driver;
      if (fields["Driver version"].get_string().get(driver) == simdjson::SUCCESS && !is_placeholder(driver))
        report.driver_version = std::string(text::trim(driver));
      continue;
    }
    if (!key.starts_with("card")) continue;
    const auto index = text::parse_name_number(key.substr(4));
    if (!index || *index >= max_rocm_gpus || report.gpus.size() >= max_rocm_gpus) continue;
    RocmSmiGpu& gpu = gpu_at(report, *index);
    for (auto [k, v] : fields) {
      std::string_view s;
      if (v.get_string().get(s) == simdjson::SUCCESS) put(gpu, k, s);
    }
  }
  if (report.gpus.empty()) return fail(ErrorKind::parse_error, "rocm-smi JSON names no card");
  return report;
}

Result<RocmSmiReport> parse_rocm_smi_text(std::string_view text) {
  RocmSmiReport report;
  RocmSmiGpu* concise = nullptr;  // the row whose name line comes next
  std::size_t lines = 0;
  while (!text.empty() && ++lines <= 1'000'000) {
    const std::string_view raw = text::next_line(text);
    const std::string_view line = text::trim(raw);
    std::string_view rest;
    if (const auto index = gpu_prefix(line, rest)) {
      // "GPU[0]\t\t: Card series: \t\tAMD Instinct MI300X OAM"
      concise = nullptr;
      rest = text::trim(rest);
      if (!rest.starts_with(':')) continue;
      rest = text::trim(rest.substr(1));
      const auto colon = rest.find(": ");
      RocmSmiGpu& gpu = gpu_at(report, *index);
      if (colon != std::string_view::npos) put(gpu, rest.substr(0, colon), rest.substr(colon + 2));
      continue;
    }
    if (line.starts_with("Driver version:")) {
      if (const auto v = text::trim(line.substr(15)); !is_placeholder(v)) report.driver_version = std::string(v);
      continue;
    }
    if (const auto columns = matrix_columns(line); !columns.empty()) {
      for (const auto c : columns) gpu_at(report, c);
      concise = nullptr;
      continue;
    }
    // The concise table: "0       [0x74a1 : 0x00]       35.0°C ..." then,
    // indented, "        AMD Instinct MI300X".
    if (!line.empty() && line.front() >= '0' && line.front() <= '9' && raw.front() != ' ') {
      std::string_view cells = line;
      const auto index = text::parse_name_number(text::next_token(cells, ' '));
      const auto open = cells.find('['), close = cells.find(']');
      if (!index || *index >= max_rocm_gpus || open == std::string_view::npos || close == std::string_view::npos || close < open) {
        concise = nullptr;
        continue;
      }
      std::string_view model = cells.substr(open + 1, close - open - 1);
      RocmSmiGpu& gpu = gpu_at(report, *index);
      put(gpu, "Device ID", text::next_token(model, ':'));
      put(gpu, "Device Rev", model);
      concise = &gpu;
      continue;
    }
    if (concise && !line.empty() && !line.starts_with("=") && raw.front() == ' ') put(*concise, "Name", line);
    concise = nullptr;
  }
  if (report.gpus.empty())
    return fail(ErrorKind::parse_error, text::cat("rocm-smi printed no GPU (it starts with \"",
                                                  text::excerpt(text::trim(text), 60), "\")"));
  return report;
}

Result<std::vector<RocminfoAgent>> parse_rocminfo(std::string_view text) {
  std::vector<RocminfoAgent> gpus;
  bool any_agent = false;
  std::optional<RocminfoAgent> agent;
  bool is_gpu = false;
  bool coarse_global = false;  // the last pool's segment was GLOBAL; COARSE GRAINED
  auto close = [&] {
    if (agent && is_gpu && gpus.size() < max_rocm_gpus) gpus.push_back(std::move(*agent));
    agent.reset();
    is_gpu = false;
  };
  std::size_t lines = 0;
  while (!text.empty() && ++lines <= 1'000'000) {
    const std::string_view raw = text::next_line(text);
    const std::string_view line = text::trim(raw);
    if (raw.starts_with("Agent ") && text::parse_name_number(text::trim(raw.substr(6)))) {
      close();
      agent.emplace();
      any_agent = true;
      continue;
    }
    if (!agent) continue;
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = line.substr(0, colon), value = text::trim(line.substr(colon + 1));
    const std::size_t indent = raw.find_first_not_of(" \t");
    if (indent == 2) {
      // The agent's own fields; the ISA's "Name:" is indented further.
      if (key == "Name") agent->gfx_target = std::string(value);
      else if (key == "Marketing Name") agent->marketing_name = std::string(value);
      else if (key == "Device Type") is_gpu = text::iequals(value, "GPU");
      else if (key == "BDFID") {
        if (const auto id = text::parse_u64(value); id && *id <= 0xffff)
          agent->pci_address = PciAddress{0, static_cast<std::uint8_t>(*id >> 8), static_cast<std::uint8_t>((*id >> 3) & 0x1f),
                                          static_cast<std::uint8_t>(*id & 7)};
      } else if (key == "Compute Unit") {
        if (const auto n = text::parse_u64(value); n && *n > 0 && *n < (1u << 20)) agent->compute_units = static_cast<std::uint32_t>(*n);
      }
    } else if (key == "Segment") {
      coarse_global = value.starts_with("GLOBAL") && text::icontains(value, "COARSE GRAINED");
    } else if (key == "Size" && coarse_global && !agent->memory_bytes) {
      // "201310208(0xbffc000) KB"
      std::string_view v = value;
      const auto kb = text::parse_u64(text::next_token(v, '('));
      if (kb && text::icontains(v, "KB")) agent->memory_bytes = text::checked_mul(*kb, 1024);
      coarse_global = false;
    }
  }
  close();
  if (!any_agent) return fail(ErrorKind::parse_error, "rocminfo printed no agent");
  return gpus;
}

}  // namespace hwaccel::parsers

namespace hwaccel {

namespace {

std::optional<std::uint16_t> hex_id(std::optional<std::string_view> v) {
  if (!v) return std::nullopt;
  const auto n = text::parse_hex(*v);
  if (!n || *n > 0xffff) return std::nullopt;
  return static_cast<std::uint16_t>(*n);
}

// rocm-smi's views, richest first; each answers or moves the walk on.
std::optional<parsers::RocmSmiReport> read_rocm_smi(ToolViewWalk& walk, const std::vector<std::string>*& used) {
  static const std::vector<std::vector<std::string>> views = {
      {"rocm-smi", "-a", "--json"}, {"rocm-smi", "-a"}, {"rocm-smi"}, {"rocm-smi", "--showtopo"}};
  for (const auto& argv : views) {
    auto report = argv.back() == "--json" ? walk.read(argv, parsers::parse_rocm_smi_json)
                                          : walk.read(argv, parsers::parse_rocm_smi_text);
    if (report) {
      used = &argv;
      return report;
    }
  }
  return std::nullopt;
}

}  // namespace

void detect_rocm_from_tools(const DetectContext& ctx, DetectorOutput& out) {
  const System& sys = ctx.system();
  const bool smi = sys.find_tool("rocm-smi").has_value();
  const bool info = sys.find_tool("rocminfo").has_value();
  if (!smi && !info) return;

  std::optional<parsers::RocmSmiReport> report;
  const std::vector<std::string>* used = nullptr;
  if (smi) {
    ToolViewWalk walk(ctx, out);
    report = read_rocm_smi(walk, used);
    walk.finish(report ? used : nullptr);
  }
  std::vector<parsers::RocminfoAgent> agents;
  const std::vector<std::string> rocminfo = {"rocminfo"};
  if (info) {
    ToolViewWalk walk(ctx, out);
    if (auto a = walk.read(rocminfo, parsers::parse_rocminfo)) agents = std::move(*a);
    walk.finish(agents.empty() ? nullptr : &rocminfo);
  }

  std::vector<bool> joined(agents.size(), false);
  auto agent_at = [&](const std::optional<PciAddress>& address) -> const parsers::RocminfoAgent* {
    if (!address) return nullptr;
    for (std::size_t i = 0; i < agents.size(); ++i)
      if (!joined[i] && agents[i].pci_address && agents[i].pci_address->bus == address->bus &&
          agents[i].pci_address->device == address->device && agents[i].pci_address->function == address->function) {
        joined[i] = true;
        return &agents[i];
      }
    return nullptr;
  };

  std::vector<DeviceProfile> devices;
  auto base = [&](std::uint32_t index, std::string_view source) {
    DeviceProfile d;
    d.backend = Backend::rocm;
    d.family = Family::gpu;
    d.index = index;
    d.id = device_id(Backend::rocm, index);
    d.vendor = "AMD";
    d.name = "AMD GPU";
    d.memory_kind = MemoryKind::dedicated;
    d.properties.emplace("source", std::string(source));
    return d;
  };
  auto apply_agent = [](DeviceProfile& d, const parsers::RocminfoAgent& a) {
    if (d.name == "AMD GPU" && !a.marketing_name.empty()) d.name = a.marketing_name;
    if (!a.gfx_target.empty()) d.compute_capability = a.gfx_target;
    if (!d.compute_units) d.compute_units = a.compute_units;
    if (!d.memory_bytes) d.memory_bytes = a.memory_bytes;
    if (!d.pci_bus_id && a.pci_address) d.pci_bus_id = a.pci_address->to_string();
  };

  if (report) {
    const std::string view = join_argv(*used);
    for (const auto& g : report->gpus) {
      DeviceProfile d = base(static_cast<std::uint32_t>(devices.size()), view);
      d.runtime_index = g.index;
      for (const char* key : {"Card series", "Name", "Card SKU"})
        if (const auto v = g.get(key)) {
          d.name = std::string(*v);
          break;
        }
      // "Card model" is the board's subsystem id on some releases: the device id comes from the others.
      auto id_text = g.get("Device ID");
      if (!hex_id(id_text)) id_text = g.get("GPU ID");
      if (const auto id = hex_id(id_text)) {
        d.properties.emplace("pci_id", pci_id_text(0x1002, *id));
        if (const auto* product = parsers::amd_product(*id, std::nullopt)) d.architecture = std::string(product->architecture);
      }
      if (const auto bus = g.get("PCI Bus"))
        if (const auto a = PciAddress::parse(*bus)) d.pci_bus_id = a->to_string();
      if (const auto vram = g.get("VRAM Total Memory (B)")) d.memory_bytes = text::parse_u64(*vram);
      if (const auto used_vram = g.get("VRAM Total Used Memory (B)")) d.memory_used_bytes = text::parse_u64(*used_vram);
      if (const auto uid = g.get("Unique ID"))
        if (const auto n = text::parse_hex(*uid); n && *n != 0) d.uuid = amd_runtime_uuid(*n);
      if (const auto vbios = g.get("VBIOS version")) d.firmware_version = std::string(*vbios);
      d.driver_version = report->driver_version;
      if (const auto* a = agent_at(d.pci_bus_id ? PciAddress::parse(*d.pci_bus_id) : std::nullopt)) apply_agent(d, *a);
      devices.push_back(std::move(d));
    }
  }
  // rocminfo alone: a GPU agent rocm-smi did not name.
  if (!report)
    for (std::size_t i = 0; i < agents.size(); ++i) {
      DeviceProfile d = base(static_cast<std::uint32_t>(devices.size()), "rocminfo");
      d.runtime_index = static_cast<std::uint32_t>(i);
      apply_agent(d, agents[i]);
      devices.push_back(std::move(d));
    }
  if (devices.empty()) return;
  std::size_t without_memory = 0;
  for (const auto& d : devices) without_memory += d.memory_bytes ? 0 : 1;
  ctx.warn(out, WarningKind::degraded,
           text::cat("no AMD GPU in DRM sysfs or the KFD topology; ", devices.size(), " GPU(s) are reported from ",
                     report ? join_argv(*used) : std::string("rocminfo"), report && !agents.empty() ? " and rocminfo" : "",
                     without_memory > 0 ? text::cat(" (", without_memory, " without a memory size)") : std::string(),
                     ", without sensors, PCIe link or topology"));
  for (auto& d : devices) out.devices.push_back(std::move(d));
}

}  // namespace hwaccel
