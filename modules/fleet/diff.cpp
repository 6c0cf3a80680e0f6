// What changed between two scans, and which nodes differ from a baseline.
module;
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.fleet;

namespace hwaccel {

namespace {

std::string optional_text(const std::optional<std::string>& v) { return v.value_or(""); }
std::string optional_text(const std::optional<std::uint64_t>& v) { return v ? text::cat(*v) : std::string(); }
std::string optional_text(const std::optional<std::int32_t>& v) { return v ? text::cat(*v) : std::string(); }

std::string partition_layout(const DeviceProfile& d) {
  std::string out;
  for (const auto& p : d.partitions) {
    if (!out.empty()) out += ',';
    out += p.profile.empty() ? p.id : p.profile;
  }
  return out;
}

// The facts of a device that a scan-to-scan change is about; live values
// (free memory, power, temperature, utilization) are not.
std::vector<FieldChange> device_changes(const DeviceProfile& a, const DeviceProfile& b) {
  std::vector<FieldChange> out;
  const auto compare = [&](std::string_view field, std::string before, std::string after) {
    if (before != after) out.push_back(FieldChange{std::string(field), std::move(before), std::move(after)});
  };
  compare("name", a.name, b.name);
  compare("memory_bytes", optional_text(a.memory_bytes), optional_text(b.memory_bytes));
  compare("driver_version", optional_text(a.driver_version), optional_text(b.driver_version));
  compare("firmware_version", optional_text(a.firmware_version), optional_text(b.firmware_version));
  compare("spec_id", optional_text(a.spec_id), optional_text(b.spec_id));
  compare("compute_capability", optional_text(a.compute_capability), optional_text(b.compute_capability));
  compare("available", a.available ? "true" : "false", b.available ? "true" : "false");
  compare("partitions", partition_layout(a), partition_layout(b));
  compare("numa_node", optional_text(a.numa_node), optional_text(b.numa_node));
  const auto width = [](const DeviceProfile& d) {
    return d.pcie && d.pcie->max_width ? text::cat(*d.pcie->max_width) : std::string();
  };
  compare("pcie_max_width", width(a), width(b));
  return out;
}

// Devices of a registry by identity (an ordered map: changes come out sorted).
std::map<std::string, const DeviceProfile*> by_identity(const AcceleratorRegistry& r) {
  std::map<std::string, const DeviceProfile*> out;
  for (const auto& d : r.devices()) out.emplace(device_identity(d), &d);
  return out;
}

std::string device_label(const DeviceProfile& d) {
  return d.pci_bus_id ? text::cat(d.id, " (", *d.pci_bus_id, ")") : d.uuid ? text::cat(d.id, " (", *d.uuid, ")") : d.id;
}

}  // namespace

std::string device_identity(const DeviceProfile& device) {
  if (device.pci_bus_id) return *device.pci_bus_id;
  if (device.uuid) return *device.uuid;
  return device.id;
}

FleetDiff fleet_diff(const Fleet& before, const Fleet& after) {
  FleetDiff diff;
  // Both node lists are sorted by host: one merge pass.
  auto a = before.nodes.begin();
  auto b = after.nodes.begin();
  while (a != before.nodes.end() || b != after.nodes.end()) {
    if (b == after.nodes.end() || (a != before.nodes.end() && a->host < b->host)) {
      diff.nodes.push_back(NodeChange{a->host, NodeChangeKind::gone, {}});
      ++a;
      continue;
    }
    if (a == before.nodes.end() || b->host < a->host) {
      diff.nodes.push_back(NodeChange{b->host, NodeChangeKind::added, b->error ? b->error->message : std::string()});
      ++b;
      continue;
    }
    const FleetNode& x = *a++;
    const FleetNode& y = *b++;
    if (x.answered() && !y.answered()) {
      diff.nodes.push_back(NodeChange{y.host, NodeChangeKind::stopped_answering, y.error ? y.error->message : std::string()});
      continue;
    }
    if (!x.answered() && y.answered()) diff.nodes.push_back(NodeChange{y.host, NodeChangeKind::answering_again, {}});
    if (!x.answered() || !y.answered()) continue;
    const auto old_devices = by_identity(*x.registry);
    const auto new_devices = by_identity(*y.registry);
    auto i = old_devices.begin();
    auto j = new_devices.begin();
    while (i != old_devices.end() || j != new_devices.end()) {
      if (j == new_devices.end() || (i != old_devices.end() && i->first < j->first)) {
        diff.devices.push_back(DeviceChange{x.host, ChangeKind::removed, i->first, i->second->id, i->second->name, {}});
        ++i;
      } else if (i == old_devices.end() || j->first < i->first) {
        diff.devices.push_back(DeviceChange{y.host, ChangeKind::added, j->first, j->second->id, j->second->name, {}});
        ++j;
      } else {
        auto fields = device_changes(*i->second, *j->second);
        if (!fields.empty())
          diff.devices.push_back(
              DeviceChange{y.host, ChangeKind::changed, j->first, j->second->id, j->second->name, std::move(fields)});
        ++i, ++j;
      }
    }
  }
  return diff;
}

std::string to_text(const FleetDiff& diff) {
  std::string out;
  for (const auto& n : diff.nodes) {
    switch (n.kind) {
      case NodeChangeKind::added: out += text::cat(n.host, ": new node"); break;
      case NodeChangeKind::gone: out += text::cat(n.host, ": gone (not in the later scan)"); break;
      case NodeChangeKind::stopped_answering: out += text::cat(n.host, ": stopped answering"); break;
      case NodeChangeKind::answering_again: out += text::cat(n.host, ": answering again"); break;
    }
    if (!n.detail.empty()) out += text::cat(" (", n.detail, ")");
    out += '\n';
  }
  for (const auto& d : diff.devices) {
    const std::string who = d.identity == d.id ? d.id : text::cat(d.id, " (", d.identity, ")");
    if (d.kind == ChangeKind::changed) {
      for (const auto& f : d.fields)
        out += text::cat(d.host, ": ", who, " ", f.field, ": ", f.before.empty() ? "(unknown)" : f.before, " -> ",
                         f.after.empty() ? "(unknown)" : f.after, "\n");
    } else {
      out += text::cat(d.host, ": ", who, " ", d.name, d.kind == ChangeKind::added ? " added" : " removed", "\n");
    }
  }
  return out;
}

std::vector<CheckFinding> fleet_check(const Fleet& baseline, const Fleet& current, const CheckOptions& options) {
  std::vector<CheckFinding> findings;
  for (const auto& expected : baseline.nodes) {
    if (!expected.answered()) continue;
    const FleetNode* found = current.find(expected.host);
    if (!found) {
      findings.push_back(CheckFinding{expected.host, text::cat(expected.host, ": not in the scan")});
      continue;
    }
    if (!found->answered()) {
      findings.push_back(CheckFinding{
          expected.host, text::cat(expected.host, ": did not answer", found->error ? ": " + found->error->message : "")});
      continue;
    }
    const auto accelerators = [](const AcceleratorRegistry& r) {
      std::map<std::string, const DeviceProfile*> out;
      for (const auto& d : r.devices())
        if (d.backend != Backend::cpu) out.emplace(device_identity(d), &d);
      return out;
    };
    const auto want = accelerators(*expected.registry);
    const auto have = accelerators(*found->registry);
    std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> models;  // name -> expected, found
    for (const auto& [id, d] : want) ++models[d->name].first;
    for (const auto& [id, d] : have) ++models[d->name].second;
    std::vector<std::string> parts;
    for (const auto& [name, counts] : models)
      if (counts.first != counts.second)
        parts.push_back(text::cat("expected ", counts.first, " ", name, ", found ", counts.second));
    for (const auto& [id, d] : want) {
      const auto it = have.find(id);
      if (it == have.end()) {
        parts.push_back(text::cat(device_label(*d), " missing"));
        continue;
      }
      const DeviceProfile& now = *it->second;
      if (now.name != d->name) parts.push_back(text::cat(device_label(now), " is a ", now.name, ", was a ", d->name));
      if (d->available && !now.available) parts.push_back(text::cat(device_label(now), " unavailable"));
      if (d->memory_bytes && now.memory_bytes != d->memory_bytes)
        parts.push_back(text::cat(device_label(now), " memory ", *d->memory_bytes, " -> ",
                                  now.memory_bytes ? text::cat(*now.memory_bytes) : std::string("unknown"), " bytes"));
      if (partition_layout(now) != partition_layout(*d))
        parts.push_back(text::cat(device_label(now), " partitions [", partition_layout(*d), "] -> [",
                                  partition_layout(now), "]"));
      if (options.versions) {
        if (now.driver_version != d->driver_version)
          parts.push_back(text::cat(device_label(now), " driver ", optional_text(d->driver_version), " -> ",
                                    optional_text(now.driver_version)));
        if (now.firmware_version != d->firmware_version)
          parts.push_back(text::cat(device_label(now), " firmware ", optional_text(d->firmware_version), " -> ",
                                    optional_text(now.firmware_version)));
      }
    }
    for (const auto& [id, d] : have)
      if (!want.contains(id)) parts.push_back(text::cat(device_label(*d), " ", d->name, " not in the baseline"));
    if (parts.empty()) continue;
    std::string message = text::cat(expected.host, ": ");
    for (std::size_t i = 0; i < parts.size(); ++i) message += (i ? "; " : "") + parts[i];
    findings.push_back(CheckFinding{expected.host, std::move(message)});
  }
  return findings;
}

}  // namespace hwaccel
