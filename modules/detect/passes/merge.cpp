// The cross-backend pass that keeps one entry per GPU when Vulkan and a
// native backend (CUDA, ROCm, oneAPI, Apple) both report it.
module;
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.detect;

namespace hwaccel {
namespace {

struct Ids {
  std::uint32_t vendor = 0;
  std::uint32_t device = 0;
  friend bool operator==(const Ids&, const Ids&) = default;
};

bool is_native_gpu(const DeviceProfile& d) noexcept {
  return d.family == Family::gpu && facts_of(d.backend).merges_with_vulkan;
}

std::optional<std::uint32_t> hex_property(const DeviceProfile& d, std::string_view key) {
  const auto it = d.properties.find(key);
  if (it == d.properties.end()) return std::nullopt;
  const auto v = text::parse_hex(it->second);
  if (!v || *v > 0xffffffffu) return std::nullopt;
  return static_cast<std::uint32_t>(*v);
}

std::optional<Ids> vulkan_ids(const DeviceProfile& v) {
  const auto vendor = hex_property(v, "vulkan_vendor_id");
  const auto device = hex_property(v, "vulkan_device_id");
  if (!vendor || !device) return std::nullopt;
  return Ids{*vendor, *device};
}

// PCI ids of a native device: its "pci_id" property ("10de:2330"), or sysfs
// at its bus id.
std::optional<Ids> native_ids(const DeviceProfile& d, const System& system) {
  if (const auto ids = pci_id_property(d)) return Ids{ids->vendor, ids->device};
  if (!d.pci_bus_id) return std::nullopt;
  const auto address = PciAddress::parse(*d.pci_bus_id);
  if (!address) return std::nullopt;
  const PciFunction f = read_pci_ids(system, *address);
  if (!f.vendor_id || !f.device_id) return std::nullopt;
  return Ids{*f.vendor_id, *f.device_id};
}

// The 32 hex digits of a UUID however it is written ("GPU-5b3c...",
// "5b3c6a2e-...", upper case), or empty.
std::string uuid_digits(const std::optional<std::string>& uuid) {
  if (!uuid) return {};
  std::string_view u = *uuid;
  if (u.starts_with("GPU-") || u.starts_with("MIG-")) u.remove_prefix(4);
  std::string digits;
  for (const char c : u) {
    if (c == '-') continue;
    if (!std::isxdigit(static_cast<unsigned char>(c))) return {};
    digits.push_back(text::to_lower(c));
  }
  return digits.size() == 32 ? digits : std::string();
}

// "NVIDIA GPU [10de:2684]": the name a native detector gives a GPU it only
// knows by PCI ids (its tool is missing).
bool is_pci_id_placeholder(std::string_view name) noexcept {
  const auto open = name.rfind('[');
  if (open == std::string_view::npos || !name.ends_with(']')) return false;
  std::string_view ids = name.substr(open + 1, name.size() - open - 2);
  const auto colon = ids.find(':');
  return colon == 4 && ids.size() == 9 && text::parse_hex(ids.substr(0, 4)) && text::parse_hex(ids.substr(5));
}

// The native backend's fields win; Vulkan only fills what it left unknown
// (typically when the vendor tool is missing), and says so.
void fill_gaps(DeviceProfile& native, const DeviceProfile& vulkan) {
  if (is_pci_id_placeholder(native.name) && !vulkan.name.empty()) {
    native.name = vulkan.name;
    native.properties.insert_or_assign("name_source", "vulkan");
  }
  if (!native.memory_bytes && vulkan.memory_bytes) {
    native.memory_bytes = vulkan.memory_bytes;
    native.properties.insert_or_assign("memory_source", "vulkan: the largest DEVICE_LOCAL memory heap");
  }
  // NVIDIA's Vulkan deviceUUID is the GPU UUID and its driverVersion the
  // kernel driver's; other vendors' are not (Mesa versions, other UUIDs).
  if (hex_property(vulkan, "vulkan_vendor_id") == 0x10deu) {
    if (!native.uuid) {
      const std::string digits = uuid_digits(vulkan.uuid);
      if (!digits.empty())
        native.uuid = text::cat("GPU-", digits.substr(0, 8), "-", digits.substr(8, 4), "-", digits.substr(12, 4), "-",
                                digits.substr(16, 4), "-", digits.substr(20));
    }
    if (!native.driver_version && vulkan.driver_version) native.driver_version = vulkan.driver_version;
  }
}

void fold_into(DeviceProfile& native, const DeviceProfile& vulkan) {
  fill_gaps(native, vulkan);
  const auto copy = [&](std::string_view from, std::string_view to) {
    if (const auto it = vulkan.properties.find(from); it != vulkan.properties.end())
      native.properties.insert_or_assign(std::string(to), it->second);
  };
  copy("vulkan_api_version", "vulkan_api_version");
  const auto name = vulkan.properties.find("vulkan_driver_name");
  const auto info = vulkan.properties.find("vulkan_driver_info");
  if (name != vulkan.properties.end() || info != vulkan.properties.end()) {
    std::string driver = name != vulkan.properties.end() ? name->second : std::string();
    if (info != vulkan.properties.end()) driver += driver.empty() ? info->second : " " + info->second;
    native.properties.insert_or_assign("vulkan_driver", std::move(driver));
  }
  if (vulkan.runtime_index) native.properties.insert_or_assign("vulkan_device_index", text::cat(*vulkan.runtime_index));
  if (vulkan.name != native.name) native.properties.insert_or_assign("vulkan_device_name", vulkan.name);
}


}  // namespace

void merge_vulkan_devices(Inventory& inventory, const System& system) {
  std::vector<std::size_t> vulkan, native;
  for (std::size_t i = 0; i < inventory.devices.size(); ++i) {
    const DeviceProfile& d = inventory.devices[i];
    if (d.backend == Backend::vulkan) vulkan.push_back(i);
    else if (is_native_gpu(d)) native.push_back(i);
  }
  if (vulkan.empty() || native.empty()) return;

  std::vector<std::optional<Ids>> native_id(native.size());
  for (std::size_t n = 0; n < native.size(); ++n) native_id[n] = native_ids(inventory.devices[native[n]], system);
  std::vector<bool> native_taken(native.size(), false);
  std::vector<bool> merged(inventory.devices.size(), false);

  // The one untaken native device satisfying `same`, if exactly one does.
  const auto unique_native = [&](auto&& same) -> std::optional<std::size_t> {
    std::optional<std::size_t> found;
    for (std::size_t n = 0; n < native.size(); ++n) {
      if (native_taken[n] || !same(n)) continue;
      if (found) return std::nullopt;
      found = n;
    }
    return found;
  };
  const auto vulkan_with = [&](auto&& same) {
    return std::count_if(vulkan.begin(), vulkan.end(), [&](std::size_t i) { return same(inventory.devices[i]); });
  };

  for (const std::size_t vi : vulkan) {
    const DeviceProfile& v = inventory.devices[vi];
    std::optional<std::size_t> match;
    // 0. The same adapter LUID (Windows: Vulkan's deviceLUID is DXGI's).
    if (const auto luid = v.properties.find("vulkan_luid"); luid != v.properties.end())
      match = unique_native([&](std::size_t n) {
        const auto& p = inventory.devices[native[n]].properties;
        const auto it = p.find("dxgi_luid");
        return it != p.end() && it->second == luid->second;
      });
    // 1. The same PCI function.
    if (!match && v.pci_bus_id)
      match = unique_native([&](std::size_t n) { return inventory.devices[native[n]].pci_bus_id == v.pci_bus_id; });
    // 2. The same PCI ids, when that pair names one GPU on each side. A
    //    native device with a different bus id is a different GPU.
    const auto ids = vulkan_ids(v);
    if (!match && ids && vulkan_with([&](const DeviceProfile& o) { return vulkan_ids(o) == ids; }) == 1)
      match = unique_native([&](std::size_t n) {
        const DeviceProfile& d = inventory.devices[native[n]];
        return native_id[n] == ids && !(v.pci_bus_id && d.pci_bus_id);
      });
    // 3. The same UUID (NVIDIA's Vulkan deviceUUID is the GPU UUID).
    const std::string uuid = uuid_digits(v.uuid);
    if (!match && !uuid.empty())
      match = unique_native([&](std::size_t n) { return uuid_digits(inventory.devices[native[n]].uuid) == uuid; });
    // 4. Apple silicon has no PCI ids: MoltenVK's one Apple GPU is the Apple
    //    backend's one GPU.
    if (!match && ids && ids->vendor == 0x106b &&
        vulkan_with([](const DeviceProfile& o) { return hex_property(o, "vulkan_vendor_id") == 0x106bu; }) == 1)
      match = unique_native([&](std::size_t n) {
        const DeviceProfile& d = inventory.devices[native[n]];
        return d.backend == Backend::apple && !native_id[n] &&
               std::count_if(native.begin(), native.end(), [&](std::size_t i) {
                 return inventory.devices[i].backend == Backend::apple;
               }) == 1;
      });
    if (!match) continue;
    native_taken[*match] = true;
    merged[vi] = true;
    fold_into(inventory.devices[native[*match]], v);
  }

  remove_merged(inventory, merged, Backend::vulkan);
}

void remove_merged(Inventory& inventory, const std::vector<bool>& merged, Backend renumbered) {
  std::vector<DeviceProfile> kept;
  kept.reserve(inventory.devices.size());
  for (std::size_t i = 0; i < inventory.devices.size(); ++i)
    if (!merged[i]) kept.push_back(std::move(inventory.devices[i]));
  inventory.devices = std::move(kept);
  std::uint32_t index = 0;
  for (auto& d : inventory.devices)
    if (d.backend == renumbered) {
      d.index = index++;
      d.id = device_id(d.backend, d.index);
    }
}

// Render nodes say a GPU driver is loaded that Vulkan could use (ICD
// manifests are no evidence: Mesa installs them all). Native backends report
// most such GPUs; only the ones nobody reported are worth a warning. PATH is
// searched for vulkaninfo only then: most machines have no unreported node,
// and the search is a failed stat per PATH folder.
void warn_unreported_render_nodes(Inventory& inventory, const System& system) {
  std::vector<std::string> unreported;
  for (const auto& node : list_names(system, "/dev/dri")) {
    if (!node.starts_with("renderD")) continue;
    const auto link = system.read_link(text::cat("/sys/class/drm/", node, "/device"));
    const auto address = link ? PciAddress::parse(base_name(*link)) : std::nullopt;
    if (!address) continue;  // nothing says which GPU it is: no grounds for a warning
    const std::string where = address->to_string();
    const bool reported = std::any_of(inventory.devices.begin(), inventory.devices.end(),
                                      [&](const DeviceProfile& d) { return d.pci_bus_id == where; });
    if (!reported) unreported.push_back(where);
  }
  if (unreported.empty() || system.find_tool("vulkaninfo")) return;
  std::string list;
  for (const auto& u : unreported) list += (list.empty() ? "" : ", ") + u;
  inventory.warnings.push_back(Warning{
      "vulkan", WarningKind::tool_missing,
      text::cat("vulkaninfo is not on PATH (package vulkan-tools) and no other backend reports the GPU(s) behind ",
                "the render node(s) at ", list, ": they are not enumerated")});
}

}  // namespace hwaccel
