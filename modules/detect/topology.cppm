// Where devices sit in the sysfs device tree: symlink resolution through the
// System, the chain of PCI functions above a device, NIC <-> accelerator affinity.
module;
#include <optional>
#include <string>
#include <string_view>
#include <vector>
export module hwaccel.detect:topology;
import hwaccel.hardware;
import :system;

export namespace hwaccel {

/// Resolves every symbolic link on an absolute path, as realpath(3) would,
/// reading only through `system` (so a fixture's links resolve inside the
/// fixture). Errors: whatever status/read_link report for a component, and
/// symlink_loop after 40 links.
[[nodiscard]] Result<std::string> resolve_path(const System& system, std::string_view path);

/// The position of a device in the PCI hierarchy, from a resolved sysfs path
/// such as /sys/devices/pci0000:16/0000:16:02.0/0000:17:00.0/0000:18:00.0/...
struct PciPath {
  std::string host_bridge;          ///< "pci0000:16": the root complex
  std::vector<PciAddress> chain;    ///< root port first, the device's own function last
};

/// The PCI path of a resolved sysfs path; nullopt when it is not under a PCI
/// host bridge (virtual devices, platform devices, software RDMA).
std::optional<PciPath> pci_path_of(std::string_view resolved_path);

/// Resolves /sys/bus/pci/devices/<address> and returns its PCI path.
std::optional<PciPath> pci_path_of(const System& system, const PciAddress& address);

/// How close two PCI devices are, as NCCL ranks paths: through a common PCIe
/// bridge below the host bridge (PIX/PXB), through the same host bridge
/// (PHB), or neither (nullopt; the caller may still compare NUMA nodes).
std::optional<LinkKind> pci_proximity(const PciPath& a, const PciPath& b) noexcept;

/// Fills NetworkPort::near_devices and NetworkPort::affinity: for each RDMA
/// port, the accelerators (non-CPU devices with a PCI address) nearest to its
/// NIC by the best rule any of them meets: the same PCIe switch, else the same
/// host bridge, else the same NUMA node. Recomputed from scratch on each call.
void assign_network_affinity(Inventory& inventory, const System& system);

}  // namespace hwaccel
