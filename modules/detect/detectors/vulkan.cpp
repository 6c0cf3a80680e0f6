// Vulkan backend. `vulkaninfo --summary` lists the devices; the full report
// (100 KB to 1 MB, read in one pass) adds memory heaps, PCI location and the
// driver; both run at once. CPU implementations are not reported.
module;
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

bool is_gpu_header(std::string_view t) noexcept {
  // "GPU0:"; not the layer section's "GPU id = 0 (...)" nor the surface section's "GPU id : 0 (...):".
  if (!t.starts_with("GPU") || !t.ends_with(':') || t.size() < 5) return false;
  const std::string_view digits = t.substr(3, t.size() - 4);
  return digits.find_first_not_of("0123456789") == std::string_view::npos && digits.size() < 6;
}

struct KeyValue {
  std::string_view key;
  std::string_view value;
};

// "\tdeviceName        = AMD Radeon RX 7800 XT (RADV NAVI32)", indented with
// tabs (Linux) or spaces (Windows builds).
std::optional<KeyValue> key_value(std::string_view t) noexcept {
  const auto eq = t.find('=');
  if (eq == std::string_view::npos || eq == 0) return std::nullopt;
  const std::string_view key = text::trim(t.substr(0, eq));
  if (key.empty() || key.find_first_of(" \t:") != std::string_view::npos) return std::nullopt;
  return KeyValue{key, text::trim(t.substr(eq + 1))};
}

// "1.3.289 (4206881)" -> "1.3.289"; older releases print "4198490 (1.1.90)".
std::string_view version_text(std::string_view v) noexcept {
  const auto paren = v.find(" (");
  if (paren == std::string_view::npos) return v;
  const std::string_view head = v.substr(0, paren);
  if (head.find_first_not_of("0123456789") == std::string_view::npos && v.ends_with(')'))
    return v.substr(paren + 2, v.size() - paren - 3);
  return head;
}

// "0x1002", "4098 (0x1002)", "5554348032 (0x14b10a000) (5.17 GiB)": the first token.
std::optional<std::uint64_t> number(std::string_view v) noexcept {
  v = text::trim(v);
  const std::string_view token = v.substr(0, v.find(' '));
  if (token.starts_with("0x") || token.starts_with("0X")) return text::parse_hex(token);
  return text::parse_u64(token);
}

std::optional<std::uint32_t> number32(std::string_view v) noexcept {
  const auto n = number(v);
  if (!n || *n > 0xffffffffu) return std::nullopt;
  return static_cast<std::uint32_t>(*n);
}

std::optional<std::string> owned_unless_empty(std::string_view v) {
  if (v.empty()) return std::nullopt;
  return std::string(v);
}

// Identity keys, the same in the summary and in VkPhysicalDeviceProperties.
bool set_identity(VulkanDevice& d, const KeyValue& kv) {
  if (kv.key == "deviceName") d.name = std::string(kv.value);
  else if (kv.key == "deviceType") {
    std::string_view type = kv.value;
    if (type.starts_with("PHYSICAL_DEVICE_TYPE_")) type.remove_prefix(21);
    d.device_type = std::string(type);
  } else if (kv.key == "vendorID") d.vendor_id = number32(kv.value);
  else if (kv.key == "deviceID") d.device_id = number32(kv.value);
  else if (kv.key == "apiVersion") d.api_version = owned_unless_empty(version_text(kv.value));
  else if (kv.key == "driverVersion") d.driver_version = owned_unless_empty(version_text(kv.value));
  else return false;
  return true;
}

bool set_driver(VulkanDevice& d, const KeyValue& kv) {
  if (kv.key == "driverID") d.driver_id = owned_unless_empty(kv.value);
  else if (kv.key == "driverName") d.driver_name = owned_unless_empty(kv.value);
  else if (kv.key == "driverInfo") d.driver_info = owned_unless_empty(kv.value);
  else return false;
  return true;
}

// "Vulkan Instance Version: 1.4.335"
void instance_version(VulkanInfo& info, std::string_view t) {
  constexpr std::string_view prefix = "Vulkan Instance Version:";
  if (t.starts_with(prefix)) info.instance_version = owned_unless_empty(text::trim(t.substr(prefix.size())));
}

enum class Section : std::uint8_t { other, properties, pci, id, driver, memory };

Section classify(std::string_view header) noexcept {
  if (header == "VkPhysicalDeviceProperties:") return Section::properties;
  if (header.starts_with("VkPhysicalDevicePCIBusInfoProperties")) return Section::pci;
  if (header.starts_with("VkPhysicalDeviceIDProperties") || header.starts_with("VkPhysicalDeviceVulkan11Properties"))
    return Section::id;
  if (header.starts_with("VkPhysicalDeviceDriverProperties") || header.starts_with("VkPhysicalDeviceVulkan12Properties"))
    return Section::driver;
  if (header.starts_with("VkPhysicalDeviceMemoryProperties")) return Section::memory;
  return Section::other;
}

struct PciParts {
  std::optional<std::uint64_t> domain, bus, device, function;
};

// deviceLUID, and deviceLUIDValid = false (zeros, or a stale value) after it.
void set_luid(VulkanDevice& d, const KeyValue& kv) {
  if (kv.key == "deviceLUID") d.device_luid = parse_vulkan_luid(kv.value);
  else if (kv.key == "deviceLUIDValid" && kv.value == "false") d.device_luid.reset();
}

}  // namespace

VulkanInfo parse_vulkaninfo_summary(std::string_view text) {
  VulkanInfo info;
  bool saw_devices_line = false;
  VulkanDevice* current = nullptr;
  while (!text.empty()) {
    const std::string_view t = text::trim(text::next_line(text));
    if (!info.has_devices) {
      instance_version(info, t);
      // "Devices:" underlined with "========"; validation warnings before the
      // banner may contain anything, but not that pair.
      if (saw_devices_line && t.starts_with("====")) info.has_devices = true;
      saw_devices_line = t == "Devices:";
      continue;
    }
    if (t.empty()) continue;
    if (is_gpu_header(t)) {
      VulkanDevice d;
      d.index = static_cast<std::uint32_t>(text::parse_u64(t.substr(3, t.size() - 4)).value_or(0));
      info.devices.push_back(std::move(d));
      current = &info.devices.back();
      continue;
    }
    if (!current) continue;
    const auto kv = key_value(t);
    if (!kv) continue;
    if (set_identity(*current, *kv) || set_driver(*current, *kv)) continue;
    if (kv->key == "deviceUUID") current->device_uuid = owned_unless_empty(kv->value);
    set_luid(*current, *kv);
  }
  return info;
}

std::optional<std::uint64_t> parse_vulkan_luid(std::string_view text) noexcept {
  std::uint8_t bytes[8] = {};
  std::size_t n = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '-' && n == 4) continue;
    const auto high = text::parse_hex(text.substr(i, 1));
    const auto low = i + 1 < text.size() ? text::parse_hex(text.substr(i + 1, 1)) : std::nullopt;
    if (!high || !low || n == 8) return std::nullopt;
    bytes[n++] = static_cast<std::uint8_t>(*high << 4 | *low);
    ++i;
  }
  if (n != 8) return std::nullopt;
  std::uint64_t low_part = 0, high_part = 0;
  for (int b = 3; b >= 0; --b) {
    low_part = low_part << 8 | bytes[b];
    high_part = high_part << 8 | bytes[b + 4];
  }
  const std::uint64_t luid = high_part << 32 | low_part;
  return luid ? std::optional<std::uint64_t>(luid) : std::nullopt;
}

VulkanInfo parse_vulkaninfo(std::string_view text) {
  VulkanInfo info;
  VulkanDevice* current = nullptr;
  Section section = Section::other;
  bool in_heaps = false;
  PciParts pci;
  const auto finish_pci = [&] {
    if (current && pci.domain && pci.bus && pci.device && pci.function && *pci.domain <= 0xffffffffu && *pci.bus <= 0xff &&
        *pci.device <= 0x1f && *pci.function <= 7)
      current->pci_address = PciAddress{static_cast<std::uint32_t>(*pci.domain), static_cast<std::uint8_t>(*pci.bus),
                                        static_cast<std::uint8_t>(*pci.device), static_cast<std::uint8_t>(*pci.function)};
    pci = PciParts{};
  };
  while (!text.empty()) {
    const std::string_view t = text::trim(text::next_line(text));
    if (!info.has_devices) {
      instance_version(info, t);
      info.has_devices = t == "Device Properties and Extensions:";
      continue;
    }
    if (t.empty()) continue;
    if (is_gpu_header(t)) {
      finish_pci();
      VulkanDevice d;
      d.index = static_cast<std::uint32_t>(text::parse_u64(t.substr(3, t.size() - 4)).value_or(0));
      info.devices.push_back(std::move(d));
      current = &info.devices.back();
      section = Section::other;
      in_heaps = false;
      continue;
    }
    if (!current) continue;
    if (t.starts_with("Vk") && t.ends_with(':')) {
      if (section == Section::pci) finish_pci();
      section = classify(t);
      in_heaps = false;
      if (section == Section::pci) pci.domain = 0;  // older drivers leave pciDomain out
      continue;
    }
    switch (section) {
      case Section::properties:
        if (const auto kv = key_value(t)) set_identity(*current, *kv);
        break;
      case Section::pci:
        if (const auto kv = key_value(t)) {
          if (kv->key == "pciDomain") pci.domain = number(kv->value);
          else if (kv->key == "pciBus") pci.bus = number(kv->value);
          else if (kv->key == "pciDevice") pci.device = number(kv->value);
          else if (kv->key == "pciFunction") pci.function = number(kv->value);
        }
        break;
      case Section::id:
        if (const auto kv = key_value(t)) {
          if (kv->key == "deviceUUID") current->device_uuid = owned_unless_empty(kv->value);
          set_luid(*current, *kv);
        }
        break;
      case Section::driver:
        if (const auto kv = key_value(t)) set_driver(*current, *kv);
        break;
      case Section::memory:
        // memoryHeaps[i]: size, budget, usage, flags: (then the flag names);
        // the DEVICE_LOCAL heap is not always heap 0.
        if (t.starts_with("memoryHeaps[")) {
          current->heaps.emplace_back();
          in_heaps = true;
        } else if (t.starts_with("memoryTypes")) {
          in_heaps = false;
        } else if (in_heaps) {
          if (const auto kv = key_value(t); kv && kv->key == "size") {
            if (const auto size = number(kv->value)) current->heaps.back().size_bytes = *size;
          } else if (t.find("MEMORY_HEAP_DEVICE_LOCAL_BIT") != std::string_view::npos) {
            current->heaps.back().device_local = true;
          }
        }
        break;
      case Section::other:
        break;
    }
  }
  if (section == Section::pci) finish_pci();
  return info;
}

bool is_software_renderer(const VulkanDevice& d) noexcept {
  if (d.device_type == "CPU") return true;
  if (d.driver_id && (*d.driver_id == "DRIVER_ID_MESA_LLVMPIPE" || *d.driver_id == "DRIVER_ID_GOOGLE_SWIFTSHADER"))
    return true;
  const std::string_view name = d.name;
  return name.starts_with("llvmpipe") || name.starts_with("SwiftShader") || name.starts_with("lavapipe");
}

}  // namespace parsers

namespace {

constexpr std::array<std::string_view, 1> vulkan_tools = {"vulkaninfo"};

std::string hex_id(std::uint32_t v) { return "0x" + text::hex_at_least(v, 4); }

std::string lower_type(std::string_view type) { return text::lower(type); }

std::string vulkaninfo_failure(std::string_view command, const ToolResult& r) {
  const std::string_view detail = text::trim(r.err.empty() ? r.out : r.err);
  return text::cat(command, " ", r.signal ? text::cat("was killed by signal ", *r.signal) : text::cat("exited with code ", r.exit_code),
                   ": ", text::excerpt(detail.substr(detail.size() > 160 ? detail.size() - 160 : 0), 160));
}

// The report of a finished run, or nothing with a warning (unless quiet).
std::optional<std::string_view> output_of(const DetectContext& ctx, DetectorOutput& out, const Result<ToolResult>& r,
                                          std::string_view command, bool quiet) {
  if (!r) {
    if (!quiet) ctx.warn(out, r.error());
    return std::nullopt;
  }
  if (!r->succeeded()) {
    if (!quiet) ctx.warn(out, WarningKind::tool_failed, vulkaninfo_failure(command, *r));
    return std::nullopt;
  }
  if (r->out_truncated)
    ctx.warn(out, WarningKind::truncated, text::cat(command, " printed more than the output cap; the rest was dropped"));
  return std::string_view(r->out);
}

// The full report's entry for a summary device: same UUID, or failing that
// the one device with the same ids and name. Never by position.
const parsers::VulkanDevice* find_full(const parsers::VulkanDevice& s, const std::vector<parsers::VulkanDevice>& full) {
  const parsers::VulkanDevice* found = nullptr;
  if (s.device_uuid) {
    for (const auto& f : full)
      if (f.device_uuid == s.device_uuid) {
        if (found) return nullptr;
        found = &f;
      }
    if (found) return found;
  }
  for (const auto& f : full)
    if (f.vendor_id == s.vendor_id && f.device_id == s.device_id && f.name == s.name) {
      if (found) return nullptr;
      found = &f;
    }
  return found;
}

DeviceProfile profile_of(const parsers::VulkanDevice& s, const parsers::VulkanDevice* f, std::uint32_t index) {
  DeviceProfile d;
  d.backend = Backend::vulkan;
  d.family = Family::gpu;
  d.index = index;
  d.id = device_id(d.backend, index);
  d.name = s.name;
  d.runtime_index = s.index;
  d.integrated = s.device_type == "INTEGRATED_GPU";
  d.memory_kind = d.integrated ? MemoryKind::unified : MemoryKind::dedicated;
  if (s.vendor_id) {
    if (const auto vendor = gpu_vendor_name(*s.vendor_id); !vendor.empty()) d.vendor = std::string(vendor);
    d.properties.emplace("vulkan_vendor_id", hex_id(*s.vendor_id));
  }
  if (s.device_id) d.properties.emplace("vulkan_device_id", hex_id(*s.device_id));
  d.properties.emplace("vulkan_device_type", lower_type(s.device_type.empty() ? "unknown" : s.device_type));
  d.uuid = s.device_uuid ? s.device_uuid : f ? f->device_uuid : std::nullopt;
  if (const auto luid = s.device_luid ? s.device_luid : f ? f->device_luid : std::nullopt)
    d.properties.emplace("vulkan_luid", dxgi_luid_text(*luid));
  d.driver_version = s.driver_version ? s.driver_version : f ? f->driver_version : std::nullopt;
  const auto api = s.api_version ? s.api_version : f ? f->api_version : std::nullopt;
  if (api) d.properties.emplace("vulkan_api_version", *api);
  const auto driver_name = s.driver_name ? s.driver_name : f ? f->driver_name : std::nullopt;
  const auto driver_info = s.driver_info ? s.driver_info : f ? f->driver_info : std::nullopt;
  if (driver_name) d.properties.emplace("vulkan_driver_name", *driver_name);
  if (driver_info) d.properties.emplace("vulkan_driver_info", *driver_info);
  if (!f) return d;
  if (f->pci_address) d.pci_bus_id = f->pci_address->to_string();
  if (!f->heaps.empty()) {
    // The largest DEVICE_LOCAL heap is what one allocator can use: some
    // drivers list the CPU-visible BAR window as a second DEVICE_LOCAL heap
    // over the same memory, so a sum would exceed the card.
    std::uint64_t largest = 0;
    std::size_t local_heaps = 0;
    std::string heaps;
    for (std::size_t i = 0; i < f->heaps.size(); ++i) {
      const auto& h = f->heaps[i];
      if (!heaps.empty()) heaps += "; ";
      heaps += text::cat(i, ": ", h.size_bytes, " B", h.device_local ? " device-local" : "");
      if (h.device_local) {
        ++local_heaps;
        largest = std::max(largest, h.size_bytes);
      }
    }
    d.properties.emplace("vulkan_memory_heaps", std::move(heaps));
    if (local_heaps > 0) {
      d.memory_bytes = largest;
      std::string why = local_heaps == 1 ? "memory_bytes is the DEVICE_LOCAL Vulkan memory heap"
                                         : "memory_bytes is the largest of the DEVICE_LOCAL Vulkan memory heaps (the "
                                           "others may be windows onto the same memory)";
      if (d.integrated) why += "; on an integrated GPU it is system memory";
      d.properties.emplace("memory", std::move(why));
    }
  }
  return d;
}

DetectorOutput detect_vulkan(const DetectContext& ctx) {
  DetectorOutput out;
  // Without the tool there is nothing to enumerate; whether that hides a GPU
  // is known only once every backend has reported (warn_unreported_render_nodes).
  if (!ctx.system().find_tool("vulkaninfo")) return out;
  const std::array<ToolRequest, 2> requests = {ctx.request({"vulkaninfo", "--summary"}), ctx.request({"vulkaninfo"})};
  const auto results = ctx.run_concurrently(requests);

  std::optional<parsers::VulkanInfo> summary;
  if (const auto text = output_of(ctx, out, results[0], "vulkaninfo --summary", false)) {
    summary = parsers::parse_vulkaninfo_summary(*text);
    if (!summary->has_devices) {
      ctx.warn(out, WarningKind::parse_error,
               text::cat("vulkaninfo --summary printed no \"Devices:\" section (", text::excerpt(text::trim(*text), 80), ")"));
      summary.reset();
    }
  }
  // When the summary failed, the full report failing too says nothing new.
  std::optional<parsers::VulkanInfo> full;
  if (const auto text = output_of(ctx, out, results[1], "vulkaninfo", !summary)) {
    full = parsers::parse_vulkaninfo(*text);
    if (!full->has_devices) {
      if (summary)
        ctx.warn(out, WarningKind::parse_error,
                 text::cat("vulkaninfo printed no \"Device Properties and Extensions:\" section (",
                           text::excerpt(text::trim(*text), 80), "); memory heaps and PCI location are unknown"));
      full.reset();
    }
  }
  if (!summary && !full) return out;

  const std::vector<parsers::VulkanDevice>& listed = summary ? summary->devices : full->devices;
  std::uint32_t index = 0;
  for (const auto& s : listed) {
    if (parsers::is_software_renderer(s)) continue;
    const parsers::VulkanDevice* f = nullptr;
    if (!summary) {
      f = &s;
    } else if (full) {
      f = find_full(s, full->devices);
      if (!f)
        ctx.warn(out, WarningKind::inconsistent,
                 text::cat("vulkaninfo: GPU", s.index, " (", text::excerpt(s.name, 60), ") of the summary has no single ",
                           "match in the full report; its memory heaps and PCI location are unknown"));
    }
    out.devices.push_back(profile_of(s, f, index++));
  }
  return out;
}

}  // namespace

// Every Linux GPU with a Vulkan driver has a DRM render node; NVIDIA's
// driver without nvidia-drm has only its own nodes.
constexpr std::string_view vulkan_nodes[] = {"dri", "nvidia"};
constexpr std::string_view vulkan_runtimes[] = {"llama.cpp"};

const Detector vulkan_detector{
    .name = "vulkan",
    .backend = Backend::vulkan,
    .tools = vulkan_tools,
    .detect = &detect_vulkan,
    .facts = {.device_nodes = vulkan_nodes, .runtimes = vulkan_runtimes},
};

}  // namespace hwaccel
