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

std::string device_label(const DeviceProfile& d) {
  return d.pci_bus_id ? text::cat(d.id, " (", *d.pci_bus_id, ")") : d.uuid ? text::cat(d.id, " (", *d.uuid, ")") : d.id;
}

}  // namespace

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
    for (auto& d : compare_registries(*x.registry, *y.registry))
      diff.devices.push_back(DeviceChange{d.kind == ChangeKind::removed ? x.host : y.host, d.kind, std::move(d.identity),
                                          std::move(d.id), std::move(d.name), std::move(d.fields)});
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
