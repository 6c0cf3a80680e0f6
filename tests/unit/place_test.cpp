// Placement of many models' replicas onto a fleet (hwaccel place): optimal
// node counts on small fleets, tensor-parallel groups inside one domain of
// one node, every device within its usable memory, busy devices left alone,
// and clear reasons for what cannot be placed. The packing core's exactness
// against brute force is in packing_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "../test_support.hpp"

import hwaccel;

#include "module_helpers.hpp"

namespace {

using namespace hwaccel;
using hwaccel::testing::hypothetical_fleet;

Workload workload(std::string name, std::string model, std::uint32_t replicas, std::optional<QuantizationLevel> q) {
  Workload w;
  w.name = std::move(name);
  w.model = std::move(model);
  w.replicas = replicas;
  w.quantization = q;
  return w;
}

// Each placed replica: devices distinct across replicas, on the nodes it
// names, a device group of one node inside one high-bandwidth domain, and a
// plan on exactly those devices that fits.
void check_placement(const Fleet& fleet, const std::vector<Workload>& workloads, const PlacementResult& r) {
  std::set<std::string> used;
  for (const auto& p : r.placed) {
    ASSERT_FALSE(p.devices.empty());
    std::map<std::string, std::vector<std::string>> by_node;
    for (const auto& d : p.devices) {
      EXPECT_TRUE(used.insert(d).second) << d << " given twice";
      const auto slash = d.find('/');
      by_node[d.substr(0, slash)].push_back(d.substr(slash + 1));
    }
    EXPECT_EQ(by_node.size(), p.nodes.size());
    const Workload* w = nullptr;
    for (const auto& x : workloads)
      if (x.name == p.workload) w = &x;
    ASSERT_NE(w, nullptr);
    if (by_node.size() == 1) {
      const auto& [host, ids] = *by_node.begin();
      const FleetNode* node = fleet.find(host);
      ASSERT_NE(node, nullptr) << host;
      const AcceleratorRegistry& registry = *node->registry;
      // One domain holds them all.
      bool one_domain = false;
      for (const auto& dom : high_bandwidth_domains(registry))
        one_domain |= std::all_of(ids.begin(), ids.end(), [&](const std::string& id) {
          return std::find(dom.begin(), dom.end(), id) != dom.end();
        });
      EXPECT_TRUE(one_domain || p.pipeline_parallel > 1) << p.workload << " replica " << p.replica;
      // Those devices alone hold the replica.
      const AcceleratorRegistry group = registry.what_if_remove_if([&](const DeviceProfile& d) {
        return d.family != Family::cpu && std::find(ids.begin(), ids.end(), d.id) == ids.end();
      });
      InferenceSettings s;
      s.quantization = p.quantization;
      s.context = w->context;
      s.batch = w->batch;
      s.allow_cpu_offload = false;
      const Plan plan = plan_inference(group, load_model(w->model).value(), s).value();
      EXPECT_TRUE(plan.fits) << p.workload << " replica " << p.replica;
      for (const auto& sh : plan.shards) EXPECT_LE(sh.total_bytes, sh.capacity_bytes);
    }
  }
}

TEST(Place, FiveTwoGpuReplicasTakeTwoNodes) {
  // 70B at BF16 (141 GB) fits two H100s (144 GB less the reserve and overheads: 131.5 of 143 GiB).
  const Fleet fleet = hypothetical_fleet({{"gpu-a", "8xH100-SXM-80GB"}, {"gpu-b", "8xH100-SXM-80GB"}, {"gpu-c", "8xH100-SXM-80GB"}});
  const std::vector<Workload> w = {workload("chat", "llama-3.1-70b", 5, QuantizationLevel::bf16)};
  const PlacementResult r = place_workloads(fleet, w).value();
  ASSERT_EQ(r.placed.size(), 5u);
  EXPECT_TRUE(r.unplaced.empty());
  EXPECT_EQ(r.nodes_used, 2u);
  EXPECT_EQ(r.lower_bound, 2u);
  EXPECT_EQ(r.method, "exact");
  EXPECT_TRUE(r.search_complete);
  for (const auto& p : r.placed) {
    EXPECT_EQ(p.devices.size(), 2u);
    EXPECT_EQ(p.tensor_parallel, 2u);
  }
  check_placement(fleet, w, r);
}

TEST(Place, PowerBudgetsTakeBackTheLastReplicas) {
  const Fleet fleet = hypothetical_fleet({{"gpu-a", "8xH100-SXM-80GB"}, {"gpu-b", "8xH100-SXM-80GB"}, {"gpu-c", "8xH100-SXM-80GB"}});
  const std::vector<Workload> w = {workload("chat", "llama-3.1-70b", 5, QuantizationLevel::bf16)};
  const PlacementResult open = place_workloads(fleet, w).value();
  ASSERT_EQ(open.placed.size(), 5u);
  ASSERT_TRUE(open.placed.front().watts.has_value());
  const double each = *open.placed.front().watts;
  EXPECT_GT(each, 2 * 0.104 * 700);  // two GPUs, above idle
  EXPECT_LE(each, 2 * 700.0);
  // A fleet budget for three replicas and a little more.
  PlacementOptions options;
  options.power_budget_kw = each * 3.5 / 1e3;
  const PlacementResult fleet_budget = place_workloads(fleet, w, options).value();
  EXPECT_EQ(fleet_budget.placed.size(), 3u);
  ASSERT_EQ(fleet_budget.unplaced.size(), 2u);
  for (const auto& u : fleet_budget.unplaced) EXPECT_TRUE(u.reason.starts_with("power budget: the fleet's")) << u.reason;
  EXPECT_FALSE(fleet_budget.search_complete);
  check_placement(fleet, w, fleet_budget);
  // A node budget for one replica per node.
  PlacementOptions per_node;
  per_node.node_power_budget_kw = each * 1.5 / 1e3;
  const PlacementResult node_budget = place_workloads(fleet, w, per_node).value();
  std::map<std::string, int> on_node;
  for (const auto& p : node_budget.placed) ++on_node[p.nodes.front()];
  for (const auto& [node, count] : on_node) EXPECT_EQ(count, 1) << node;
  EXPECT_FALSE(node_budget.unplaced.empty());
  for (const auto& u : node_budget.unplaced) EXPECT_TRUE(u.reason.starts_with("power budget: node ")) << u.reason;
}

// A runtime-profile file reaches each replica's plan: the built-in profiles
// given as a file place the same, and runtimes half as efficient change what
// each replica draws.
TEST(Place, RuntimeProfilesReachEachReplicasPlan) {
  const Fleet fleet = hypothetical_fleet({{"gpu-a", "8xH100-SXM-80GB"}});
  const std::vector<Workload> w = {workload("chat", "llama-3.1-8b", 2, QuantizationLevel::bf16)};
  const PlacementResult builtin = place_workloads(fleet, w).value();
  ASSERT_EQ(builtin.placed.size(), 2u);
  ASSERT_TRUE(builtin.placed.front().watts.has_value());

  const std::vector<RuntimeProfile> same(runtime_profiles().begin(), runtime_profiles().end());
  PlacementOptions options;
  options.runtime_profiles = same;
  EXPECT_EQ(place_workloads(fleet, w, options).value(), builtin);

  std::vector<RuntimeProfile> slower = same;
  for (auto& profile : slower) {
    profile.bandwidth_efficiency /= 2;
    profile.compute_efficiency /= 2;
  }
  options.runtime_profiles = slower;
  const PlacementResult slow = place_workloads(fleet, w, options).value();
  ASSERT_EQ(slow.placed.size(), 2u);
  ASSERT_TRUE(slow.placed.front().watts.has_value());
  EXPECT_NE(*slow.placed.front().watts, *builtin.placed.front().watts);
  check_placement(fleet, w, slow);
}

TEST(Place, MixedWorkloadsAndAWholeNodeReplica) {
  // 405B at BF16 needs both H100 nodes (TP 8 x PP 2); the 8B replicas go to the A100 node.
  const Fleet fleet = hypothetical_fleet({{"a", "8xH100-SXM-80GB"}, {"b", "8xH100-SXM-80GB"}, {"c", "8xA100-SXM-80GB"}});
  const std::vector<Workload> w = {workload("big", "llama-3.1-405b", 1, QuantizationLevel::bf16),
                                   workload("small", "llama-3.1-8b", 4, QuantizationLevel::bf16)};
  const PlacementResult r = place_workloads(fleet, w).value();
  ASSERT_EQ(r.placed.size(), 5u);
  EXPECT_EQ(r.nodes_used, 3u);
  EXPECT_TRUE(r.search_complete);
  for (const auto& p : r.placed) {
    if (p.workload == "big") {
      EXPECT_EQ(p.nodes, (std::vector<std::string>{"a", "b"}));
      EXPECT_EQ(p.devices.size(), 16u);
      EXPECT_EQ(p.pipeline_parallel, 2u);
    } else {
      EXPECT_EQ(p.nodes, (std::vector<std::string>{"c"}));
      EXPECT_EQ(p.devices.size(), 1u);
    }
  }
  check_placement(fleet, w, r);
}

TEST(Place, WhatDoesNotFitSaysWhy) {
  const Fleet fleet = hypothetical_fleet({{"l4-1", "1xL4-24GB"}, {"l4-2", "1xL4-24GB"}});
  const std::vector<Workload> w = {workload("huge", "llama-3.1-405b", 2, QuantizationLevel::bf16),
                                   workload("tiny", "llama-3.1-8b", 3, QuantizationLevel::q4_k_m)};
  const PlacementResult r = place_workloads(fleet, w).value();
  EXPECT_EQ(r.placed.size(), 2u);  // one 8B replica per L4
  ASSERT_EQ(r.unplaced.size(), 3u);
  std::size_t huge = 0, tiny = 0;
  for (const auto& u : r.unplaced) {
    if (u.workload == "huge") {
      ++huge;
      EXPECT_NE(u.reason.find("cannot hold it at BF16"), std::string::npos) << u.reason;
    } else {
      ++tiny;
      EXPECT_NE(u.reason.find("no free devices left"), std::string::npos) << u.reason;
    }
  }
  EXPECT_EQ(huge, 2u);
  EXPECT_EQ(tiny, 1u);
  check_placement(fleet, w, r);
}

TEST(Place, BusyDevicesAndAnEarlierPlacementAreLeftAlone) {
  const Fleet fleet = hypothetical_fleet({{"a", "8xH100-SXM-80GB"}, {"b", "8xH100-SXM-80GB"}});
  const std::vector<Workload> w = {workload("chat", "llama-3.1-70b", 2, QuantizationLevel::bf16)};
  PlacementOptions options;
  options.busy = parse_busy("a/cuda:0").value();
  const PlacementResult first = place_workloads(fleet, w, options).value();
  ASSERT_EQ(first.placed.size(), 2u);
  for (const auto& p : first.placed)
    for (const auto& d : p.devices) EXPECT_NE(d, "a/cuda:0");
  check_placement(fleet, w, first);
  // Feeding the first result back as busy: the second round gets the rest.
  options.busy = parse_busy(to_json(first)).value();
  const PlacementResult second = place_workloads(fleet, w, options).value();
  std::set<std::string> taken;
  for (const auto& p : first.placed) taken.insert(p.devices.begin(), p.devices.end());
  std::size_t placed_devices = 0;
  for (const auto& p : second.placed)
    for (const auto& d : p.devices) {
      EXPECT_FALSE(taken.count(d)) << d;
      ++placed_devices;
    }
  EXPECT_EQ(second.placed.size() + second.unplaced.size(), 2u);
  EXPECT_EQ(placed_devices, 4u);  // 15 free devices left: two more 2-GPU replicas
}

TEST(Place, PcieNodeHostsAReplicaOverPcie) {
  // No peer links: vLLM (the default runtime at bf16) still shards a 70B
  // replica's layers over the node's PCIe, as it does on such nodes.
  const Fleet fleet = hypothetical_fleet({{"pcie", "8xL40S-48GB"}});
  const std::vector<Workload> w = {workload("chat", "llama-3.1-70b", 1, QuantizationLevel::bf16)};
  const PlacementResult r = place_workloads(fleet, w).value();
  ASSERT_EQ(r.placed.size(), 1u);
  // 141 GB of weights need at least four 48 GB cards.
  EXPECT_GE(r.placed.front().tensor_parallel * r.placed.front().pipeline_parallel, 4u);
  EXPECT_GT(r.placed.front().tensor_parallel, 1u);
  EXPECT_EQ(r.nodes_used, 1u);
}

TEST(Place, SuggestedLevelPerNodeKind) {
  // No quantization given: the best level that fits one whole node of the kind.
  const Fleet fleet = hypothetical_fleet({{"a", "8xH100-SXM-80GB"}});
  const std::vector<Workload> w = {workload("chat", "llama-3.1-70b", 1, std::nullopt)};
  const PlacementResult r = place_workloads(fleet, w).value();
  ASSERT_EQ(r.placed.size(), 1u);
  EXPECT_EQ(r.placed.front().quantization, QuantizationLevel::bf16);
}

TEST(Place, BadInputsAreClearErrors) {
  const Fleet fleet = hypothetical_fleet({{"a", "8xH100-SXM-80GB"}});
  const std::vector<Workload> unknown = {workload("x", "no-such-model-anywhere", 1, std::nullopt)};
  EXPECT_FALSE(place_workloads(fleet, unknown).has_value());
  Workload zero_context = workload("y", "llama-3.1-8b", 1, std::nullopt);
  zero_context.context = 0;
  const std::vector<Workload> bad = {zero_context};
  EXPECT_EQ(place_workloads(fleet, bad).error().kind, ErrorKind::invalid_input);
  Fleet empty;
  FleetNode n;
  n.host = "login";
  n.registry = AcceleratorRegistry(Inventory{});
  empty.nodes.push_back(n);
  EXPECT_EQ(place_workloads(empty, unknown).error().kind, ErrorKind::unsupported);
}

TEST(Place, WorkloadFiles) {
  const auto w = parse_workloads(R"({"workloads": [
      {"name": "chat", "model": "llama-3.1-70b", "replicas": 4, "quantization": "fp8", "context": 8192, "batch": 16},
      {"model": "llama-3.1-8b"}]})")
                     .value();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].replicas, 4u);
  EXPECT_EQ(w[0].quantization, QuantizationLevel::fp8_e4m3);
  EXPECT_EQ(w[0].context, 8192u);
  EXPECT_EQ(w[0].batch, 16u);
  EXPECT_EQ(w[1].name, "llama-3.1-8b");
  EXPECT_EQ(w[1].replicas, 1u);
  for (const char* bad : {
           "", "[]", R"({"workloads": []})", R"({"workloads": [3]})", R"({"workloads": [{"name": "a"}]})",
           R"({"workloads": [{"model": "m", "replicas": 0}]})", R"({"workloads": [{"model": "m", "replicas": 10001}]})",
           R"({"workloads": [{"model": "m", "quantization": "q9"}]})", R"({"workloads": [{"model": "m", "colour": 1}]})",
           R"({"workloads": [{"model": "m"}, {"model": "m"}]})", R"({"workloads": [{"model": "m", "batch": -1}]})",
           "{\"workloads\": [{\"name\": \"w0\", \"model\": \"m\", \"replicas\": 10000}, {\"name\": \"w1\", \"model\": \"m\", \"replicas\": 10000}, {\"name\": \"w2\", \"model\": \"m\", \"replicas\": 10000}, {\"name\": \"w3\", \"model\": \"m\", \"replicas\": 10000}, {\"name\": \"w4\", \"model\": \"m\", \"replicas\": 10000}, {\"name\": \"w5\", \"model\": \"m\", \"replicas\": 10000}, {\"name\": \"w6\", \"model\": \"m\", \"replicas\": 10000}, {\"name\": \"w7\", \"model\": \"m\", \"replicas\": 10000}, {\"name\": \"w8\", \"model\": \"m\", \"replicas\": 10000}, {\"name\": \"w9\", \"model\": \"m\", \"replicas\": 10000}, {\"name\": \"w10\", \"model\": \"m\", \"replicas\": 10000}]}"}) {
    const auto r = parse_workloads(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().kind, ErrorKind::invalid_input) << bad;
  }
}

TEST(Place, LargeFleetUsesTheHeuristicAndStaysValid) {
  Fleet fleet;
  for (int i = 0; i < 40; ++i) {
    FleetNode n;
    n.host = (i < 10 ? "node-0" : "node-") + std::to_string(i);  // a fleet keeps its nodes sorted by host
    n.registry = hypothetical_registry(i % 4 == 3 ? "8xA100-SXM-80GB" : "8xH100-SXM-80GB").value();
    fleet.nodes.push_back(std::move(n));
  }
  const std::vector<Workload> w = {workload("70b", "llama-3.1-70b", 20, QuantizationLevel::bf16),
                                   workload("8b", "llama-3.1-8b", 30, QuantizationLevel::bf16),
                                   workload("405b", "llama-3.1-405b", 2, QuantizationLevel::bf16)};
  const PlacementResult r = place_workloads(fleet, w).value();
  EXPECT_EQ(r.method, "first-fit decreasing");
  EXPECT_EQ(r.placed.size(), 52u);
  EXPECT_GE(r.nodes_used, r.lower_bound);
  EXPECT_LE(r.nodes_used, 40u);
  check_placement(fleet, w, r);
}

}  // namespace
