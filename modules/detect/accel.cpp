// Readers of the compute-accelerator class (/sys/class/accel) shared by the
// NPU and ASIC detectors whose drivers register there.
module;
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.detect;

namespace hwaccel {

std::vector<AccelNode> accel_nodes(const System& sys) {
  std::vector<std::string> names = list_names(sys, "/sys/class/accel");
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) { return natural_less(a, b); });
  std::vector<AccelNode> nodes;
  nodes.reserve(names.size());
  for (auto& name : names) {
    AccelNode node;
    const std::string_view view = name;
    if (view.starts_with("accel")) {
      node.minor = text::parse_name_number(view.substr(5));
    }
    const std::string dir = "/sys/class/accel/" + name;
    // device -> "../../../0000:c2:00.1": the parent's sysfs name is its PCI address.
    if (const auto parent = sys.read_link(dir + "/device")) node.pci_address = PciAddress::parse(base_name(*parent));
    if (const auto driver = sys.read_link(dir + "/device/driver")) node.driver = std::string(base_name(*driver));
    node.name = std::move(name);
    nodes.push_back(std::move(node));
  }
  return nodes;
}

std::vector<AccelFunction> accel_functions_of_driver(const System& sys, std::string_view driver) {
  std::vector<AccelFunction> out;
  const auto known = [&out](const PciAddress& address) {
    return std::any_of(out.begin(), out.end(), [&](const AccelFunction& f) { return f.address == address; });
  };
  for (auto& node : accel_nodes(sys)) {
    if (!node.pci_address || !node.driver || *node.driver != driver) continue;
    // Two class entries naming one parent (a damaged or hand-made tree) are
    // one device: the lowest-numbered node stands for it.
    if (known(*node.pci_address)) continue;
    const PciAddress address = *node.pci_address;
    out.push_back(AccelFunction{address, std::move(node)});
  }
  for (const PciAddress& address : pci_functions_of_driver(sys, driver))
    if (!known(address)) out.push_back(AccelFunction{address, std::nullopt});
  std::sort(out.begin(), out.end(), [](const AccelFunction& a, const AccelFunction& b) { return a.address < b.address; });
  return out;
}

std::string pci_id_text(std::uint16_t vendor_id, std::uint16_t device_id) {
  return text::cat(text::hex4(vendor_id), ":", text::hex4(device_id));
}

std::string_view gpu_vendor_name(std::uint32_t vendor_id) noexcept {
  struct VendorName {
    std::uint32_t id;
    std::string_view name;
  };
  static constexpr VendorName names[] = {
      {0x1002, "AMD"},      {0x1022, "AMD"},       {0x10de, "NVIDIA"},   {0x8086, "Intel"},
      {0x106b, "Apple"},    {0x13b5, "ARM"},       {0x5143, "Qualcomm"}, {0x4d4f4351, "Qualcomm"},
      {0x1010, "Imagination"}, {0x14e4, "Broadcom"}, {0x1414, "Microsoft"}, {0x15ad, "VMware"},
      {0x1af4, "Red Hat"},  {0x1ab8, "Parallels"}, {0x10005, "Mesa"},
  };
  for (const auto& v : names)
    if (v.id == vendor_id) return v.name;
  return {};
}

PciFunction describe_accel_function(const DetectContext& ctx, DetectorOutput& out, const AccelFunction& function,
                                    std::string_view driver, DeviceProfile& device) {
  const System& sys = ctx.system();
  PciFunction pci = read_pci_function(sys, function.address);
  const std::string bus_id = function.address.to_string();
  device.pci_bus_id = bus_id;
  device.numa_node = pci.numa_node;
  device.cpu_affinity = pci.local_cpulist;
  if (pci.link.current_speed_gts || pci.link.max_speed_gts || pci.link.current_width || pci.link.max_width)
    device.pcie = pci.link;
  if (pci.vendor_id && pci.device_id) device.properties.emplace("pci_id", pci_id_text(*pci.vendor_id, *pci.device_id));
  device.properties.emplace("driver", std::string(driver));
  if (function.node && function.node->minor) {
    const std::string node = text::cat("/dev/accel/accel", *function.node->minor);
    if (sys.exists(node)) {
      device.properties.emplace("device_node", node);
    } else {
      device.available = false;
      ctx.warn(out, WarningKind::unsupported,
               text::cat(bus_id, ": ", node, " does not exist, so the device cannot be opened from here",
                         " (not passed into this container?)"));
    }
  } else {
    device.available = false;
    ctx.warn(out, WarningKind::unsupported,
             text::cat(bus_id, " is bound to ", driver, " but has no /sys/class/accel node: the driver did not ",
                       "finish initialising it (see the kernel log)"));
  }
  return pci;
}

}  // namespace hwaccel
