// Clusters of nodes: hypothetical ones from a node list, copies of one node,
// and the inter-node fabric from `--fabric` or a registry's network probe.
module;
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.plan;

namespace hwaccel {
namespace {

// One small message between two nodes through the NIC, end to end, as
// NCCL's point-to-point tests report them (docs/planning.md cites them).
double latency_of(std::string_view kind) {
  if (kind == "infiniband") return 5.0;
  if (kind == "roce") return 7.0;
  if (kind == "efa") return 15.0;
  return 30.0;  // TCP sockets over Ethernet
}

std::string_view kind_name(std::string_view kind) {
  if (kind == "infiniband") return "InfiniBand";
  if (kind == "roce") return "RoCE";
  if (kind == "efa") return "EFA";
  return "Ethernet";
}

std::optional<std::string_view> canonical_kind(std::string_view word) {
  if (text::iequals(word, "ib") || text::iequals(word, "infiniband")) return "infiniband";
  if (text::iequals(word, "roce")) return "roce";
  if (text::iequals(word, "ethernet") || text::iequals(word, "eth")) return "ethernet";
  if (text::iequals(word, "efa")) return "efa";
  return std::nullopt;
}

}  // namespace

std::string Fabric::describe() const {
  std::string rate = text::cat(std::round(port_gbps * 10) / 10, " Gb/s");
  return ports_per_node > 1 ? text::cat(kind_name(kind), " ", ports_per_node, " x ", rate)
                            : text::cat(kind_name(kind), " ", rate);
}

Result<Fabric> parse_fabric(std::string_view input) {
  const std::string_view s = text::trim(input);
  const auto usage = [&](std::string_view why) {
    return fail(ErrorKind::invalid_input,
                text::cat("--fabric '", text::excerpt(s), "': ", why,
                          " (KIND-RATEg or KIND-PORTSxRATEg, KIND one of ib, roce, ethernet, efa: e.g. ib-400g, "
                          "ib-8x400g, roce-200g, ethernet-100g, efa-32x100g)"));
  };
  const auto dash = s.find('-');
  if (dash == std::string_view::npos) return usage("no rate");
  const auto kind = canonical_kind(s.substr(0, dash));
  if (!kind) return usage(text::cat("unknown kind '", text::excerpt(s.substr(0, dash)), "'"));
  std::string_view rate = s.substr(dash + 1);
  if (rate.empty() || (rate.back() != 'g' && rate.back() != 'G')) return usage("the rate must end in g (Gb/s)");
  rate.remove_suffix(1);
  std::uint64_t ports = 1;
  if (const auto x = rate.find_first_of("xX"); x != std::string_view::npos) {
    const auto n = text::parse_u64(rate.substr(0, x));
    if (!n || *n == 0 || *n > 64) return usage("ports must be 1..64");
    ports = *n;
    rate = rate.substr(x + 1);
  }
  const auto gbps = text::parse_double(rate);
  if (!gbps || !(*gbps > 0)) return usage("the rate must be a positive number of Gb/s");
  if (*gbps > 1600) return usage("a port's rate must be at most 1600 Gb/s");
  Fabric f;
  f.kind = std::string(*kind);
  f.port_gbps = *gbps;
  f.ports_per_node = static_cast<std::uint32_t>(ports);
  f.latency_us = latency_of(f.kind);
  f.source = text::cat("--fabric ", s);
  return f;
}

std::optional<Fabric> fabric_of(const AcceleratorRegistry& registry) {
  // Ports by kind; the most common kind wins (a node's compute fabric is its
  // many identical ports, not its one management port).
  std::map<std::string, std::pair<std::uint32_t, double>> by_kind;  // kind -> ports, slowest rate
  for (const auto& port : registry.system().network) {
    if (!port.rate_gbps || !(*port.rate_gbps > 0)) continue;
    if (port.state && *port.state != "ACTIVE") continue;
    std::string kind = port.kind == "infiniband" ? "infiniband"
                       : port.kind.starts_with("roce") ? "roce"
                       : port.kind == "efa"            ? "efa"
                                                       : "ethernet";
    auto& [count, slowest] = by_kind.try_emplace(std::move(kind), 0u, *port.rate_gbps).first->second;
    ++count;
    slowest = std::min(slowest, *port.rate_gbps);
  }
  if (by_kind.empty()) return std::nullopt;
  const auto best = std::max_element(by_kind.begin(), by_kind.end(), [](const auto& a, const auto& b) {
    // Most ports, then the faster ports: a node's compute fabric.
    return a.second.first != b.second.first ? a.second.first < b.second.first : a.second.second < b.second.second;
  });
  Fabric f;
  f.kind = best->first;
  f.ports_per_node = best->second.first;
  f.port_gbps = best->second.second;
  f.latency_us = latency_of(f.kind);
  f.source = text::cat("network probe of ", registry.system().host.value_or("the node"), " (", f.ports_per_node, " active ",
                       kind_name(f.kind), " port(s), the slowest at ", f.port_gbps, " Gb/s)");
  return f;
}

Result<Cluster> Cluster::replicate(const AcceleratorRegistry& node, std::uint32_t count) {
  if (count == 0 || count > max_cluster_nodes)
    return fail(ErrorKind::invalid_input, text::cat("nodes must be 1..", max_cluster_nodes, ", got ", count));
  if (static_cast<std::uint64_t>(count) * std::max<std::size_t>(node.devices().size(), 1) > max_cluster_devices)
    return fail(ErrorKind::invalid_input, text::cat(count, " copies of a node of ", node.devices().size(),
                                                    " devices are more than ", max_cluster_devices, " devices"));
  Cluster c;
  c.nodes.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) c.nodes.push_back(ClusterNode{text::cat("node", i), node});
  return c;
}

std::size_t Cluster::accelerator_count() const {
  std::size_t n = 0;
  for (const auto& node : nodes)
    for (const auto& d : node.registry.devices()) n += d.family != Family::cpu;
  return n;
}

std::optional<Fabric> Cluster::effective_fabric() const {
  if (fabric) return fabric;
  std::optional<Fabric> slowest;
  std::map<std::string, bool> seen;  // nodes replicated from one registry report one fabric
  for (const auto& node : nodes) {
    auto f = fabric_of(node.registry);
    if (!f) return std::nullopt;  // a node without a known fabric: the cluster's is unknown
    if (!slowest || f->port_gbps * f->ports_per_node < slowest->port_gbps * slowest->ports_per_node) slowest = std::move(f);
  }
  return slowest;
}

namespace {

struct NodeGroup {
  std::uint64_t count = 1;
  std::string_view devices;
};

// "2x(8xH100)+(4xA100)+8xL4" -> groups; a group without parentheses is one node.
Result<std::vector<NodeGroup>> split_node_groups(std::string_view s) {
  std::vector<NodeGroup> groups;
  std::size_t i = 0;
  while (i <= s.size()) {
    // One top-level item: up to the next '+' outside parentheses.
    std::size_t depth = 0, end = i;
    for (; end < s.size(); ++end) {
      if (s[end] == '(') ++depth;
      else if (s[end] == ')') {
        if (depth == 0) return fail(ErrorKind::invalid_input, text::cat("unbalanced ')' in '", text::excerpt(s), "'"));
        --depth;
      } else if (s[end] == '+' && depth == 0) {
        break;
      }
    }
    if (depth != 0) return fail(ErrorKind::invalid_input, text::cat("unbalanced '(' in '", text::excerpt(s), "'"));
    const std::string_view item = text::trim(s.substr(i, end - i));
    if (item.empty()) return fail(ErrorKind::invalid_input, "empty entry in --devices");
    NodeGroup g;
    const auto open = item.find('(');
    if (open == std::string_view::npos) {
      g.devices = item;
    } else {
      if (item.back() != ')')
        return fail(ErrorKind::invalid_input, text::cat("'", text::excerpt(item), "' must read NODESx(DEVICES), e.g. 2x(8xH100-SXM-80GB)"));
      std::string_view count = text::trim(item.substr(0, open));
      if (!count.empty()) {
        if (count.back() != 'x' && count.back() != 'X' && count.back() != '*')
          return fail(ErrorKind::invalid_input, text::cat("'", text::excerpt(item), "' must read NODESx(DEVICES), e.g. 2x(8xH100-SXM-80GB)"));
        count.remove_suffix(1);
        const auto n = text::parse_u64(text::trim(count));
        if (!n || *n == 0 || *n > max_cluster_nodes)
          return fail(ErrorKind::invalid_input, text::cat("node count in '", text::excerpt(item), "' must be 1..", max_cluster_nodes));
        g.count = *n;
      }
      g.devices = item.substr(open + 1, item.size() - open - 2);
      if (g.devices.find_first_of("()") != std::string_view::npos)
        return fail(ErrorKind::invalid_input, text::cat("nested parentheses in '", text::excerpt(item), "'"));
    }
    groups.push_back(g);
    i = end + 1;
  }
  return groups;
}

}  // namespace

Result<Cluster> hypothetical_cluster(std::string_view text) { return hypothetical_cluster(text, DeviceSpecSet()); }

Result<Cluster> hypothetical_cluster(std::string_view text_in, const DeviceSpecSet& extra) {
  const std::string_view s = text::trim(text_in);
  if (s.empty()) return fail(ErrorKind::invalid_input, "no devices given (e.g. --devices 2x(8xH100-SXM-80GB))");
  Cluster cluster;
  if (s.find_first_of("()") == std::string_view::npos) {
    auto r = hypothetical_registry(s, extra);
    if (!r) return fail(r.error());
    cluster.nodes.push_back(ClusterNode{"node0", std::move(*r)});
    return cluster;
  }
  auto groups = split_node_groups(s);
  if (!groups) return fail(groups.error());
  std::uint64_t nodes = 0, devices = 0;
  for (const auto& g : *groups) {
    auto r = hypothetical_registry(g.devices, extra);
    if (!r) return fail(r.error());
    nodes += g.count;
    devices += g.count * r->devices().size();
    if (nodes > max_cluster_nodes) return fail(ErrorKind::invalid_input, text::cat("more than ", max_cluster_nodes, " nodes"));
    if (devices > max_cluster_devices)
      return fail(ErrorKind::invalid_input, text::cat("more than ", max_cluster_devices, " devices"));
    const auto first_node = static_cast<std::uint32_t>(cluster.nodes.size());
    // Products whose fabric spans more devices than a node holds (NVL72)
    // share domains across consecutive nodes of the group.
    std::map<std::string, std::vector<std::string>> by_spec;  // spec id -> device ids on one node
    for (const auto& d : r->devices())
      if (d.spec_id) by_spec[*d.spec_id].push_back(d.id);
    for (std::uint64_t n = 0; n < g.count; ++n)
      cluster.nodes.push_back(ClusterNode{text::cat("node", cluster.nodes.size()), *r});
    for (const auto& [spec_id, ids] : by_spec) {
      const DeviceSpec* spec = find_spec(spec_id, extra);
      if (!spec || !spec->fabric || spec->fabric->domain_size <= ids.size()) continue;
      const std::uint64_t nodes_per_domain = spec->fabric->domain_size / ids.size();
      if (nodes_per_domain < 2) continue;
      for (std::uint64_t start = 0; start + 1 < g.count; start += nodes_per_domain) {
        SharedDomain shared;
        shared.bandwidth_gbps = spec->fabric->bandwidth_gbps;
        for (std::uint64_t n = start; n < g.count && n < start + nodes_per_domain; ++n)
          for (const auto& id : ids)
            shared.members.push_back(SharedDomain::Member{static_cast<std::uint32_t>(first_node + n), id});
        cluster.shared_domains.push_back(std::move(shared));
      }
    }
  }
  return cluster;
}

}  // namespace hwaccel
