// The kernel's traces of accelerators, and which detectors' tools they make
// worth looking for.
module;
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>
module hwaccel.detect;

namespace hwaccel {
namespace {

bool contains(const std::vector<std::string>& sorted, std::string_view name) {
  return std::binary_search(sorted.begin(), sorted.end(), name, std::less<>{});
}

bool has_prefix(const std::vector<std::string>& sorted, std::string_view prefix) {
  const auto it = std::lower_bound(sorted.begin(), sorted.end(), prefix, std::less<>{});
  return it != sorted.end() && std::string_view(*it).starts_with(prefix);
}

std::vector<std::string> names_in(const System& system, std::string_view dir, bool& readable) {
  auto entries = system.list_dir(dir);
  if (!entries) return {};
  readable = true;
  // Sorted already: System::list_dir gives names in bytewise order.
  std::vector<std::string> names;
  names.reserve(entries->size());
  for (auto& e : *entries) names.push_back(std::move(e.name));
  return names;
}

}  // namespace

KernelTraces read_kernel_traces(const System& system) {
  KernelTraces t;
  t.modules = names_in(system, "/sys/module", t.readable);
  t.dev_entries = names_in(system, "/dev", t.readable);
  if (const auto listing = system.read_file("/proc/bus/pci/devices", 1 << 20)) {
    t.readable = true;
    for (const auto& e : parse_proc_pci_devices(listing->data)) t.pci_vendors.push_back(e.vendor_id);
  } else {
    // No procfs view of PCI (some containers, most fixtures): each function's own file.
    bool listed = false;
    for (const auto& name : names_in(system, "/sys/bus/pci/devices", listed))
      if (const auto vendor = read_u64(system, text::cat("/sys/bus/pci/devices/", name, "/vendor"), 16);
          vendor && *vendor <= 0xffff)
        t.pci_vendors.push_back(static_cast<std::uint16_t>(*vendor));
    t.readable |= listed;
  }
  // Windows has no /sys: the vendors of the adapters DXGI lists are its PCI
  // evidence. A machine whose kernel showed its traces has no such document.
  if (!t.readable)
    if (const auto dxgi = system.read_file(dxgi_adapters_path))
      if (const auto adapters = parse_dxgi_adapters(dxgi->data)) {
        t.readable = true;
        for (const DxgiAdapter& a : *adapters)
          if (!a.software && a.vendor_id <= 0xffff) t.pci_vendors.push_back(static_cast<std::uint16_t>(a.vendor_id));
      }
  std::sort(t.pci_vendors.begin(), t.pci_vendors.end());
  t.pci_vendors.erase(std::unique(t.pci_vendors.begin(), t.pci_vendors.end()), t.pci_vendors.end());
  return t;
}

bool KernelTraces::show(const BackendFacts& facts) const {
  for (const auto m : facts.drivers)
    if (contains(modules, m)) return true;
  for (const auto m : facts.modules)
    if (contains(modules, m)) return true;
  for (const auto prefix : facts.device_nodes)
    if (has_prefix(dev_entries, prefix)) return true;
  for (const auto prefix : facts.shared_device_nodes)
    if (has_prefix(dev_entries, prefix)) return true;
  if (facts.accel_class && contains(dev_entries, "accel")) return true;
  for (const auto& k : facts.pci)
    if (std::binary_search(pci_vendors.begin(), pci_vendors.end(), k.vendor)) return true;
  return false;
}

bool tools_need_evidence(const Detector& detector, const DetectOptions& options) noexcept {
  return !options.all_tools && !detector.tools.empty() && detector.backend && !detector.tools_without_evidence;
}

bool looks_for_tools(const Detector& detector, const KernelTraces& traces, const DetectOptions& options) {
  return !tools_need_evidence(detector, options) || !traces.readable || traces.show(detector.facts);
}

}  // namespace hwaccel
