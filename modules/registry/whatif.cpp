// What-if analysis: registries with devices added, removed or replaced,
// derived without reading the machine again.
module;
#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>
module hwaccel.registry;

namespace hwaccel {
namespace {

using IdSet = std::set<std::string, std::less<>>;

std::uint32_t next_index(const Inventory& inv, Backend backend) {
  std::uint32_t next = 0;
  for (const auto& d : inv.devices)
    if (d.backend == backend) next = std::max(next, d.index + 1);
  return next;
}

bool has_device(const Inventory& inv, std::string_view id) {
  return std::any_of(inv.devices.begin(), inv.devices.end(), [&](const DeviceProfile& d) { return d.id == id; });
}

// The canonical order detection produces (finalize.cpp): devices by backend
// and index, links by their ends, each link's ends in order.
void canonicalise(Inventory& inv) {
  stable_sort_by(inv.devices, [](const DeviceProfile& d) { return std::pair(d.backend, d.index); });
  for (auto& l : inv.links)
    if (natural_less(l.b, l.a)) std::swap(l.a, l.b);
  std::sort(inv.links.begin(), inv.links.end(), [](const DeviceLink& x, const DeviceLink& y) {
    if (x.a != y.a) return natural_less(x.a, y.a);
    if (x.b != y.b) return natural_less(x.b, y.b);
    return x.kind < y.kind;
  });
  // A NIC lists its near devices in device order.
  const auto position = [&](const std::string& id) {
    return std::find_if(inv.devices.begin(), inv.devices.end(), [&](const DeviceProfile& d) { return d.id == id; }) -
           inv.devices.begin();
  };
  for (auto& port : inv.system.network) stable_sort_by(port.near_devices, position);
}

// Forgets the links and fabric memberships of `ids`; an interconnect needs
// two members to be one.
void drop_links(Inventory& inv, const IdSet& ids) {
  std::erase_if(inv.links, [&](const DeviceLink& l) { return ids.contains(l.a) || ids.contains(l.b); });
  for (auto& ic : inv.interconnects) std::erase_if(ic.device_ids, [&](const std::string& id) { return ids.contains(id); });
  std::erase_if(inv.interconnects, [](const Interconnect& ic) { return ic.device_ids.size() < 2; });
}

// NICs forget removed accelerators. The remaining near devices are still
// near; finding the next-nearest ones would take the machine.
void drop_nic_references(Inventory& inv, const IdSet& ids) {
  for (auto& port : inv.system.network) {
    std::erase_if(port.near_devices, [&](const std::string& id) { return ids.contains(id); });
    if (port.near_devices.empty()) port.affinity.reset();
  }
}

void rename_links(Inventory& inv, const std::string& from, const std::string& to) {
  for (auto& l : inv.links) {
    if (l.a == from) l.a = to;
    if (l.b == from) l.b = to;
  }
  for (auto& ic : inv.interconnects)
    for (auto& id : ic.device_ids)
      if (id == from) id = to;
}

void rename_nic_references(Inventory& inv, const std::string& from, const std::string& to) {
  for (auto& port : inv.system.network)
    for (auto& id : port.near_devices)
      if (id == from) id = to;
}

}  // namespace

Result<AcceleratorRegistry> AcceleratorRegistry::what_if_add(std::vector<DeviceProfile> devices,
                                                             std::vector<DeviceLink> links) const {
  AcceleratorRegistry out = *this;
  Inventory& inv = out.inventory_;
  for (auto& d : devices) {
    if (d.id.empty()) {
      d.index = next_index(inv, d.backend);
      d.id = device_id(d.backend, d.index);
    } else if (has_device(inv, d.id)) {
      return fail(ErrorKind::invalid_input, text::cat("what-if add: a device with id ", d.id, " already exists"));
    }
    inv.devices.push_back(std::move(d));
  }
  for (auto& l : links) {
    if (l.a == l.b) return fail(ErrorKind::invalid_input, text::cat("what-if add: link from ", l.a, " to itself"));
    for (const std::string* end : {&l.a, &l.b})
      if (!has_device(inv, *end))
        return fail(ErrorKind::invalid_input, text::cat("what-if add: link names unknown device \"", text::excerpt(*end), "\""));
    inv.links.push_back(std::move(l));
  }
  canonicalise(inv);
  return out;
}

Result<AcceleratorRegistry> AcceleratorRegistry::what_if_remove(std::span<const std::string> ids) const {
  for (const auto& id : ids)
    if (!has_device(inventory_, id))
      return fail(ErrorKind::invalid_input, text::cat("what-if remove: no device with id \"", text::excerpt(id), "\""));
  const IdSet gone(ids.begin(), ids.end());
  return what_if_remove_if([&](const DeviceProfile& d) { return gone.contains(d.id); });
}

AcceleratorRegistry AcceleratorRegistry::what_if_remove_if(const std::function<bool(const DeviceProfile&)>& remove) const {
  AcceleratorRegistry out = *this;
  Inventory& inv = out.inventory_;
  IdSet gone;
  for (const auto& d : inv.devices)
    if (remove(d)) gone.insert(d.id);
  std::erase_if(inv.devices, [&](const DeviceProfile& d) { return gone.contains(d.id); });
  drop_links(inv, gone);
  drop_nic_references(inv, gone);
  return out;
}

Result<AcceleratorRegistry> AcceleratorRegistry::what_if_replace(std::string_view id, DeviceProfile replacement,
                                                                 LinkPolicy links) const {
  AcceleratorRegistry out = *this;
  Inventory& inv = out.inventory_;
  const auto it = std::find_if(inv.devices.begin(), inv.devices.end(), [&](const DeviceProfile& d) { return d.id == id; });
  if (it == inv.devices.end())
    return fail(ErrorKind::invalid_input, text::cat("what-if replace: no device with id \"", text::excerpt(id), "\""));
  const std::string old_id = it->id;
  // Same slot: where the old device sat is where the new one sits.
  if (!replacement.pci_bus_id) replacement.pci_bus_id = it->pci_bus_id;
  if (!replacement.numa_node) replacement.numa_node = it->numa_node;
  if (!replacement.cpu_affinity) replacement.cpu_affinity = it->cpu_affinity;
  if (replacement.backend == it->backend) {
    replacement.index = it->index;
    replacement.id = old_id;
  } else {
    replacement.index = next_index(inv, replacement.backend);
    replacement.id = device_id(replacement.backend, replacement.index);
  }
  const std::string new_id = replacement.id;
  *it = std::move(replacement);
  if (links == LinkPolicy::drop) drop_links(inv, IdSet{old_id});
  else rename_links(inv, old_id, new_id);
  rename_nic_references(inv, old_id, new_id);
  canonicalise(inv);
  return out;
}

}  // namespace hwaccel
