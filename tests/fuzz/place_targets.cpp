// Fuzz targets for what multi-node planning reads from users: the cluster
// syntax of --devices with a --fabric, workload files and busy lists.
#include <set>
#include <string>
#include <string_view>

#include "fuzz_support.hpp"

import hwaccel;

namespace hwaccel::fuzz {

// Line 1: a cluster ("2x(8xH100-SXM-80GB)"), line 2: a fabric ("ib-8x400g").
void cluster_spec(std::string_view, std::string_view input, Findings& findings) {
  const auto newline = input.find('\n');
  const std::string_view devices = input.substr(0, newline);
  const std::string_view fabric_text = newline == std::string_view::npos ? std::string_view{} : input.substr(newline + 1);
  const auto fabric = parse_fabric(fabric_text);
  if (fabric) {
    findings.check(fabric->port_gbps > 0 && fabric->port_gbps <= 1600, "fabric: a rate out of range was accepted");
    findings.check(fabric->ports_per_node >= 1 && fabric->ports_per_node <= 64, "fabric: a port count out of range");
  }
  auto cluster = hypothetical_cluster(devices);
  if (!cluster) return;
  findings.check(!cluster->nodes.empty() && cluster->nodes.size() <= max_cluster_nodes, "cluster: a node count out of range");
  for (const auto& shared : cluster->shared_domains)
    for (const auto& m : shared.members) findings.check(m.node < cluster->nodes.size(), "cluster: a shared domain names no node");
  // Plan small clusters: every shard within its device, tensor-parallel groups inside a node unless a domain is shared.
  if (cluster->nodes.size() > 16 || cluster->accelerator_count() > 256) return;
  if (fabric) cluster->fabric = *fabric;
  const auto model = catalogue_model("llama-3.1-8b");
  if (!model) return;
  const auto plan = plan_inference(*cluster, *model);
  if (!plan) return;
  if (plan->fits)
    for (const auto& s : plan->shards) findings.check(s.total_bytes <= s.capacity_bytes, "plan: a shard over its device");
  findings.check(plan->nodes.size() <= cluster->nodes.size(), "plan: more nodes used than given");
}

void place_inputs(std::string_view, std::string_view input, Findings& findings) {
  if (const auto workloads = parse_workloads(input)) {
    std::set<std::string> names;
    for (const auto& w : *workloads) {
      findings.check(!w.model.empty(), "workloads: a workload without a model");
      findings.check(w.replicas >= 1 && w.replicas <= 10'000, "workloads: replicas out of range");
      findings.check(names.insert(w.name).second, "workloads: a name given twice");
    }
  }
  if (const auto busy = parse_busy(input))
    for (const auto& [host, devices] : busy->by_host) findings.check(!host_name_problem(host), "busy: a bad host name");
}

}  // namespace hwaccel::fuzz
