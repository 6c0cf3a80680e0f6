// A fleet as a cluster to plan on: busy devices, node kinds, the nodes chosen.
module;
#include <simdjson.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.place;

#include "json_input.hpp"

namespace hwaccel {
namespace {

Result<void> add_busy(BusyDevices& busy, std::string_view item) {
  const auto slash = item.find('/');
  const std::string_view host = item.substr(0, slash);
  if (const auto problem = host_name_problem(host))
    return fail(ErrorKind::invalid_input, text::cat("--busy: '", text::excerpt(item), "': ", *problem));
  auto& devices = busy.by_host[std::string(host)];
  if (slash == std::string_view::npos) {
    devices.clear();
    devices.emplace_back();  // the whole node: one empty id, so "whole node" survives a later device of it
    return {};
  }
  const std::string_view device = item.substr(slash + 1);
  if (device.empty() || device.size() > 128)
    return fail(ErrorKind::invalid_input, text::cat("--busy: '", text::excerpt(item), "' names no device"));
  if (!(devices.size() == 1 && devices.front().empty())) devices.emplace_back(device);
  return {};
}

Result<BusyDevices> busy_from_placement(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (const auto err = json_input::parse(parser, json).get(doc); err != simdjson::SUCCESS)
    return fail(ErrorKind::invalid_input, text::cat("--busy: not valid JSON: ", simdjson::error_message(err)));
  simdjson::dom::array placed;
  if (doc["placed"].get_array().get(placed) != simdjson::SUCCESS)
    return fail(ErrorKind::invalid_input, "--busy: a JSON document must be a placement result with \"placed\"");
  BusyDevices busy;
  std::size_t index = 0;
  for (simdjson::dom::element replica : placed) {
    simdjson::dom::array devices;
    if (replica["devices"].get_array().get(devices) != simdjson::SUCCESS)
      return fail(ErrorKind::invalid_input, text::cat("--busy: placed[", index, "] has no \"devices\" list"));
    for (simdjson::dom::element device : devices) {
      std::string_view id;
      if (device.get_string().get(id) != simdjson::SUCCESS || id.find('/') == std::string_view::npos)
        return fail(ErrorKind::invalid_input, text::cat("--busy: placed[", index, "].devices holds a non-\"HOST/DEVICE\" entry"));
      if (auto ok = add_busy(busy, id); !ok) return fail(ok.error());
    }
    ++index;
  }
  return busy;
}

// The spec table's --devices name for a device, else its own name.
std::string device_label(const DeviceProfile& d) {
  if (d.spec_id)
    if (const DeviceSpec* spec = find_spec(*d.spec_id)) return std::string(spec->name);
  return d.name;
}

}  // namespace

bool BusyDevices::node_busy(std::string_view host) const {
  const auto it = by_host.find(host);
  return it != by_host.end() && it->second.size() == 1 && it->second.front().empty();
}

bool BusyDevices::device_busy(std::string_view host, std::string_view device) const {
  const auto it = by_host.find(host);
  if (it == by_host.end()) return false;
  if (it->second.size() == 1 && it->second.front().empty()) return true;
  return std::find(it->second.begin(), it->second.end(), device) != it->second.end();
}

Result<BusyDevices> parse_busy(std::string_view input) {
  const std::string_view s = text::trim(input);
  if (!s.empty() && s.front() == '{') return busy_from_placement(s);
  BusyDevices busy;
  std::size_t start = 0;
  while (start < s.size()) {
    const std::size_t end = std::min(s.find_first_of(", \t\r\n", start), s.size());
    if (end > start)
      if (auto ok = add_busy(busy, s.substr(start, end - start)); !ok) return fail(ok.error());
    start = end + 1;
  }
  return busy;
}

std::string node_kind(const AcceleratorRegistry& registry) {
  std::map<std::string, std::uint32_t> counts;
  for (const auto& d : registry.devices())
    if (d.family != Family::cpu && d.available && d.visible) ++counts[device_label(d)];
  if (counts.empty()) return "no accelerators";
  std::vector<std::pair<std::string, std::uint32_t>> sorted(counts.begin(), counts.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  std::string out;
  for (const auto& [label, n] : sorted) out += text::cat(out.empty() ? "" : "+", n, "x", label);
  return out;
}

Result<Cluster> cluster_from_fleet(const Fleet& fleet, const BusyDevices& busy, std::span<const std::string> hosts,
                                   std::optional<Fabric> fabric) {
  Cluster cluster;
  cluster.named_hosts = true;
  cluster.fabric = std::move(fabric);
  const auto take = [&](const FleetNode& node) {
    if (busy.node_busy(node.host)) return;
    AcceleratorRegistry registry = node.registry->what_if_remove_if(
        [&](const DeviceProfile& d) { return d.family != Family::cpu && busy.device_busy(node.host, d.id); });
    cluster.nodes.push_back(ClusterNode{node.host, std::move(registry)});
  };
  if (hosts.empty()) {
    for (const auto& node : fleet.nodes)
      if (node.registry) take(node);
  } else {
    for (const auto& host : hosts) {
      const FleetNode* node = fleet.find(host);
      if (!node) return fail(ErrorKind::not_found, text::cat("host '", text::excerpt(host), "' is not in the fleet"));
      if (!node->registry)
        return fail(ErrorKind::unsupported, text::cat("host '", host, "' has no registry in the fleet (",
                                                      node->error ? node->error->message : std::string("no answer"), ")"));
      take(*node);
    }
  }
  if (cluster.nodes.empty())
    return fail(ErrorKind::unsupported, fleet.nodes.empty() ? std::string("the fleet has no nodes")
                                                            : std::string("no node of the fleet is answered and free"));
  return cluster;
}

}  // namespace hwaccel
