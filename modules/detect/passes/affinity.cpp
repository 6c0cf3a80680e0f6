// NIC <-> accelerator affinity as NCCL sees it: which accelerators share a
// PCIe switch, a host bridge or a NUMA node with each RDMA port's NIC.
module;
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>
module hwaccel.detect;

namespace hwaccel {
namespace {

// Lower is nearer; the order NCCL prefers paths in (PIX/PXB < PHB < NODE).
int rank_of(LinkKind kind) noexcept {
  switch (kind) {
    case LinkKind::pcie_switch: return 0;
    case LinkKind::host_bridge: return 1;
    case LinkKind::numa_node: return 2;
    default: return 3;
  }
}

struct Placement {
  std::optional<PciPath> path;
  std::optional<std::int32_t> numa_node;
};

class PlacementCache {
 public:
  explicit PlacementCache(const System& system) : system_(system) {}

  // Where the PCI function `bus_id` sits; `known_numa` is what its detector
  // reported, read from sysfs when absent.
  const Placement& get(const std::string& bus_id, std::optional<std::int32_t> known_numa) {
    auto [it, inserted] = cache_.try_emplace(bus_id);
    if (inserted) {
      if (const auto address = PciAddress::parse(bus_id)) {
        it->second.path = pci_path_of(system_, *address);
        const auto numa = read_i64(system_, "/sys/bus/pci/devices/" + address->to_string() + "/numa_node");
        if (numa && *numa >= 0 && *numa < 65536) it->second.numa_node = static_cast<std::int32_t>(*numa);
      }
    }
    if (known_numa) it->second.numa_node = known_numa;
    return it->second;
  }

 private:
  const System& system_;
  std::map<std::string, Placement> cache_;
};

std::optional<LinkKind> relation(const Placement& nic, const Placement& device) {
  if (nic.path && device.path)
    if (const auto near = pci_proximity(*nic.path, *device.path)) return near;
  if (nic.numa_node && device.numa_node && *nic.numa_node == *device.numa_node) return LinkKind::numa_node;
  return std::nullopt;
}

}  // namespace

void assign_network_affinity(Inventory& inventory, const System& system) {
  if (inventory.system.network.empty()) return;
  PlacementCache placements(system);
  for (NetworkPort& port : inventory.system.network) {
    port.near_devices.clear();
    port.affinity.reset();
    Placement nic;
    if (port.pci_bus_id) nic = placements.get(*port.pci_bus_id, port.numa_node);
    else nic.numa_node = port.numa_node;

    int best = rank_of(LinkKind::system);
    std::vector<std::pair<int, const std::string*>> ranked;
    for (const DeviceProfile& device : inventory.devices) {
      // NCCL only sees the accelerators this process may use.
      if (device.family == Family::cpu || !device.visible) continue;
      Placement where;
      if (device.pci_bus_id) where = placements.get(*device.pci_bus_id, device.numa_node);
      else where.numa_node = device.numa_node;
      const auto near = relation(nic, where);
      if (!near) continue;
      const int rank = rank_of(*near);
      ranked.emplace_back(rank, &device.id);
      if (rank < best) {
        best = rank;
        port.affinity = *near;
      }
    }
    for (const auto& [rank, id] : ranked)
      if (rank == best) port.near_devices.push_back(*id);
  }
}

}  // namespace hwaccel
