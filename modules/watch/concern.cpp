// Which backends a uevent concerns: re-detecting only those keeps a driver
// reload of one vendor from re-running every other vendor's tools.
module;
#include <array>
#include <bitset>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
module hwaccel.watch;

namespace hwaccel {

namespace {

using Mask = std::bitset<backend_count>;

// The backends whose PCI kinds (BackendFacts::pci) have this vendor, and
// Vulkan beside any whose GPUs are Vulkan devices too.
Mask backends_of_vendor(std::uint32_t vendor) {
  Mask m;
  bool vulkan_too = false;
  for (const Backend b : all_backends)
    for (const PciKind& k : facts_of(b).pci)
      if (k.vendor == vendor) {
        m.set(static_cast<std::size_t>(b));
        vulkan_too |= facts_of(b).merges_with_vulkan && k.class_prefix >> 8 == 0x03;
      }
  if (vulkan_too) m.set(static_cast<std::size_t>(Backend::vulkan));
  return m;
}

// Display controllers (0x03), processing accelerators (0x12), co-processors
// (0x0b40) and signal processing controllers (0x11: some NPUs).
bool accelerator_class(std::uint32_t class_code) {
  const std::uint32_t base = class_code >> 16;
  return base == 0x03 || base == 0x12 || base == 0x11 || (class_code >> 8) == 0x0b40;
}

// The PCI function an event is about: PCI_SLOT_NAME, else the last path
// component of DEVPATH that is a PCI address (a DRM card below its GPU).
std::optional<PciAddress> pci_address_of(const Uevent& e) {
  if (const auto slot = e.get("PCI_SLOT_NAME"); !slot.empty())
    if (auto a = PciAddress::parse(slot)) return a;
  std::optional<PciAddress> last;
  std::string_view rest = e.devpath;
  while (!rest.empty()) {
    const std::string_view part = text::next_token(rest, '/');
    // "0000:3b:00.0": only full addresses, so that "card0" or "pci0000:00" never match.
    if (part.size() >= 12 && part[4] == ':' && part[7] == ':' && part[10] == '.')
      if (auto a = PciAddress::parse(part)) last = a;
  }
  return last;
}

std::string hex4(std::uint32_t v) {
  char out[16];
  std::snprintf(out, sizeof out, "%04x", v);
  return out;
}

std::optional<std::uint32_t> hex_field(std::string_view text) {
  const auto v = text::parse_hex(text);
  if (!v || *v > 0xffffffu) return std::nullopt;
  return static_cast<std::uint32_t>(*v);
}

}  // namespace

EventConcern concerned_backends(const Uevent& e, const AcceleratorRegistry& current, const System& system) {
  EventConcern concern;
  const std::string_view subsystem = e.get("SUBSYSTEM");
  const std::string_view devname = e.get("DEVNAME");

  if (subsystem == "module") {
    const std::string_view path = e.devpath;
    const std::string_view name = path.substr(path.rfind('/') + 1);
    for (const Backend b : all_backends)
      if (facts_of(b).uses_module(name)) {
        concern.backends.set(static_cast<std::size_t>(b));
        concern.reason = text::cat("module ", name);
      }
    return concern;
  }
  if (subsystem == "drm" && (!e.get("HOTPLUG").empty() || !e.get("CONNECTOR").empty())) return concern;

  if (const auto address = pci_address_of(e);
      address && (subsystem == "pci" || subsystem == "drm" || subsystem == "accel" || subsystem == "vfio" ||
                  subsystem == "misc" || subsystem == "kfd" || subsystem.starts_with("nvidia"))) {
    const std::string bus_id = address->to_string();
    const DeviceProfile* known = nullptr;
    for (const auto& d : current.devices())
      if (d.pci_bus_id == bus_id) known = &d;
    // The class decides only for a device the registry does not know and
    // that is not being handed to VFIO.
    const bool class_matters = !known && !e.get("DRIVER").starts_with("vfio");
    std::optional<std::uint32_t> vendor;
    std::optional<std::uint32_t> class_code;
    if (const auto id = e.get("PCI_ID"); !id.empty()) vendor = hex_field(id.substr(0, id.find(':')));
    if (const auto cls = e.get("PCI_CLASS"); !cls.empty()) class_code = hex_field(cls);
    if (!vendor || (class_matters && !class_code)) {  // still in sysfs unless it was removed
      const PciFunction f = read_pci_function(system, *address);
      if (!vendor && f.vendor_id) vendor = *f.vendor_id;
      if (!class_code && f.class_code) class_code = *f.class_code;
    }
    if (known) concern.backends.set(static_cast<std::size_t>(known->backend));
    if (vendor && (!class_matters || !class_code || accelerator_class(*class_code)))
      concern.backends |= backends_of_vendor(*vendor);
    if (concern.backends.any())
      concern.reason = vendor ? text::cat(subsystem, " ", bus_id, " vendor ", hex4(*vendor))
                              : text::cat(subsystem, " ", bus_id, " (", known->id, ")");
    return concern;
  }

  // A device node of its own (BackendFacts::device_nodes: "kfd", "nvidia0"),
  // or a node of the compute-accelerator class, which several backends use.
  const std::string_view node = devname.empty() ? subsystem : devname;
  for (const Backend b : all_backends) {
    const BackendFacts& facts = facts_of(b);
    if (subsystem == "accel") {
      if (facts.accel_class) concern.backends.set(static_cast<std::size_t>(b));
      continue;
    }
    if (b == Backend::vulkan) continue;  // a GPU's nodes concern Vulkan through its native backend's PCI event
    for (const std::string_view prefix : facts.device_nodes)
      if (node.starts_with(prefix) || subsystem.starts_with(prefix))
        concern.backends.set(static_cast<std::size_t>(b));
  }
  if (concern.backends.any()) concern.reason = text::cat(subsystem.empty() ? std::string_view("device") : subsystem, " ",
                                                       devname.empty() ? std::string_view(e.devpath) : devname);
  return concern;
}

}  // namespace hwaccel
