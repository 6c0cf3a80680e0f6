// What changed between two registries of one machine: the devices added,
// removed or changed, matched by a stable identity, never a list position.
module;
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.registry;

namespace hwaccel {

namespace {

std::string optional_text(const std::optional<std::string>& v) { return v.value_or(""); }
template <class Number>
std::string optional_text(const std::optional<Number>& v) {
  return v ? text::cat(*v) : std::string();
}

std::vector<FieldChange> device_changes(const DeviceProfile& a, const DeviceProfile& b) {
  std::vector<FieldChange> out;
  const auto compare = [&](std::string_view field, std::string before, std::string after) {
    if (before != after) out.push_back(FieldChange{std::string(field), std::move(before), std::move(after)});
  };
  const auto flag = [](bool v) { return std::string(v ? "true" : "false"); };
  compare("name", a.name, b.name);
  compare("memory_bytes", optional_text(a.memory_bytes), optional_text(b.memory_bytes));
  compare("driver_version", optional_text(a.driver_version), optional_text(b.driver_version));
  compare("firmware_version", optional_text(a.firmware_version), optional_text(b.firmware_version));
  compare("spec_id", optional_text(a.spec_id), optional_text(b.spec_id));
  compare("compute_capability", optional_text(a.compute_capability), optional_text(b.compute_capability));
  compare("available", flag(a.available), flag(b.available));
  compare("visible", flag(a.visible), flag(b.visible));
  compare("partitions", partition_layout(a), partition_layout(b));
  compare("numa_node", optional_text(a.numa_node), optional_text(b.numa_node));
  const auto width = [](const DeviceProfile& d, bool current) {
    if (!d.pcie) return std::string();
    return optional_text(current ? d.pcie->current_width : d.pcie->max_width);
  };
  compare("pcie_max_width", width(a, false), width(b, false));
  compare("pcie_current_width", width(a, true), width(b, true));
  return out;
}

std::map<std::string, const DeviceProfile*> by_identity(const AcceleratorRegistry& r) {
  std::map<std::string, const DeviceProfile*> out;
  for (const auto& d : r.devices()) out.emplace(device_identity(d), &d);
  return out;
}

}  // namespace

std::string partition_layout(const DeviceProfile& d) {
  std::string out;
  for (const auto& p : d.partitions) {
    if (!out.empty()) out += ',';
    out += p.profile.empty() ? p.id : p.profile;
  }
  if (const auto mode = d.properties.find("compute_partition"); mode != d.properties.end())
    out = out.empty() ? mode->second : text::cat(mode->second, ":", out);
  return out;
}

std::string to_text(const FieldChange& change) {
  return text::cat(change.field, " ", change.before.empty() ? "(unknown)" : change.before, " -> ",
                   change.after.empty() ? "(unknown)" : change.after);
}

void write_field_changes(json::Writer& out, std::span<const FieldChange> changes) {
  out.begin_array();
  for (const auto& f : changes) {
    out.begin_object();
    out.field("field", f.field);
    out.field("before", f.before);
    out.field("after", f.after);
    out.end_object();
  }
  out.end_array();
}

std::string_view to_string(ChangeKind kind) noexcept {
  switch (kind) {
    case ChangeKind::added: return "added";
    case ChangeKind::removed: return "removed";
    case ChangeKind::changed: return "changed";
  }
  return "changed";
}

std::string device_identity(const DeviceProfile& device) {
  if (device.pci_bus_id) return *device.pci_bus_id;
  if (device.uuid) return *device.uuid;
  return device.id;
}

std::vector<DeviceDifference> compare_registries(const AcceleratorRegistry& before, const AcceleratorRegistry& after) {
  std::vector<DeviceDifference> out;
  const auto old_devices = by_identity(before);
  const auto new_devices = by_identity(after);
  auto i = old_devices.begin();
  auto j = new_devices.begin();
  const auto difference = [](ChangeKind kind, const std::string& identity, const DeviceProfile& d,
                             std::vector<FieldChange> fields) {
    return DeviceDifference{kind, identity, d.id, d.name, d.backend, std::move(fields)};
  };
  while (i != old_devices.end() || j != new_devices.end()) {
    if (j == new_devices.end() || (i != old_devices.end() && i->first < j->first)) {
      out.push_back(difference(ChangeKind::removed, i->first, *i->second, {}));
      ++i;
    } else if (i == old_devices.end() || j->first < i->first) {
      out.push_back(difference(ChangeKind::added, j->first, *j->second, {}));
      ++j;
    } else {
      if (auto fields = device_changes(*i->second, *j->second); !fields.empty())
        out.push_back(difference(ChangeKind::changed, j->first, *j->second, std::move(fields)));
      ++i, ++j;
    }
  }
  return out;
}

}  // namespace hwaccel
