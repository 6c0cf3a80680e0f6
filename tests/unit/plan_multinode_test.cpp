// Plans over several nodes against published multi-node deployments
// (docs/planning.md, "Several nodes", cites each number), the cluster and
// fabric syntax, expert parallelism, launch hints, and clusters from a fleet.
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

using hwaccel::testing::GiB;

Cluster cluster(std::string_view spec) { return hypothetical_cluster(spec).value(); }
using hwaccel::testing::model;

InferenceSettings at(QuantizationLevel q) {
  InferenceSettings s;
  s.quantization = q;
  return s;
}

Plan plan_of(const Cluster& c, std::string_view id, const InferenceSettings& s) {
  auto p = plan_inference(c, model(id), s);
  EXPECT_TRUE(p.has_value()) << (p ? "" : p.error().message);
  return p.value();
}

// Every device of a stage's tensor-parallel group is on one node, every
// shard fits its device, and each layer is held once per rank.
void check_shape(const Plan& p) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::set<std::string>> nodes_of_group;
  for (const auto& s : p.shards) {
    EXPECT_LE(s.total_bytes, s.capacity_bytes) << s.node << "/" << s.device;
    nodes_of_group[{s.replica, s.stage}].insert(s.node);
  }
  for (const auto& [group, nodes] : nodes_of_group)
    EXPECT_EQ(nodes.size(), 1u) << "replica " << group.first << " stage " << group.second << " spans nodes";
}

double max_weights_gib(const Plan& p) {
  std::uint64_t most = 0;
  for (const auto& s : p.shards) most = std::max(most, s.weights_bytes);
  return static_cast<double>(most) / GiB;
}

// Llama 3.1 405B at BF16 (810 GB of weights, the Hugging Face Llama 3.1
// post) does not fit one node of 8 H100 (640 GB); vLLM's LeaderWorkerSet
// example serves it on 2 nodes of 8 with tensor parallel 8 x pipeline 2.
TEST(MultiNode, Llama405BBf16OnTwoH100NodesIsTp8Pp2) {
  const Plan one = plan_of(cluster("1x(8xH100-SXM-80GB)"), "llama-3.1-405b", at(QuantizationLevel::bf16));
  EXPECT_FALSE(one.fits);
  const Plan p = plan_of(cluster("2x(8xH100-SXM-80GB)"), "llama-3.1-405b", at(QuantizationLevel::bf16));
  ASSERT_TRUE(p.fits);
  EXPECT_EQ(p.strategy.tensor_parallel, 8u);
  EXPECT_EQ(p.strategy.pipeline_parallel, 2u);
  EXPECT_EQ(p.strategy.nodes, 2u);
  EXPECT_EQ(p.nodes, (std::vector<std::string>{"node0", "node1"}));
  EXPECT_EQ(p.shards.size(), 16u);
  // 810 GB / 16 devices = 50.6 GB = 47.2 GiB each (embedding and head on the end stages add ~1 GiB / 8).
  EXPECT_NEAR(max_weights_gib(p), 47.2, 1.0);
  check_shape(p);
  // Stage 0 on node0, stage 1 on node1.
  for (const auto& s : p.shards) EXPECT_EQ(s.node, s.stage == 0 ? "node0" : "node1");
}

// The same model at FP8 (405 GB) runs on one node of 8 H100 (vLLM's Llama
// 3.1 announcement; Meta's SKU list: 8 GPUs x 70 GB).
TEST(MultiNode, Llama405BFp8FitsOneH100Node) {
  const Plan p = plan_of(cluster("1x(8xH100-SXM-80GB)"), "llama-3.1-405b", at(QuantizationLevel::fp8_e4m3));
  ASSERT_TRUE(p.fits);
  EXPECT_EQ(p.strategy.tensor_parallel, 8u);
  EXPECT_EQ(p.strategy.pipeline_parallel, 1u);
  EXPECT_TRUE(p.nodes.empty());  // one node: planned as that machine
  EXPECT_NEAR(max_weights_gib(p), 405.0e9 / 8 / GiB, 1.5);
}

// DeepSeek-V3 in its native FP8 (671 B parameters): SGLang serves it on 2
// nodes of 8 H100 and says one node of 8 H200 holds it.
TEST(MultiNode, DeepSeekV3Fp8OnTwoH100NodesAndOneH200Node) {
  InferenceSettings s = at(QuantizationLevel::fp8_e4m3);
  const Plan h100 = plan_of(cluster("2x(8xH100-SXM-80GB)"), "deepseek-v3", s);
  ASSERT_TRUE(h100.fits);
  EXPECT_EQ(h100.strategy.tensor_parallel * h100.strategy.pipeline_parallel, 16u);
  EXPECT_EQ(h100.strategy.nodes, 2u);
  // 671 GB over 16 devices: 42 GB = 39 GiB each, give or take the embedding and head.
  EXPECT_NEAR(max_weights_gib(h100), 671.0e9 / 16 / GiB, 2.5);
  check_shape(h100);
  EXPECT_FALSE(plan_of(cluster("1x(8xH100-SXM-80GB)"), "deepseek-v3", s).fits);
  const Plan h200 = plan_of(cluster("1x(8xH200-SXM-141GB)"), "deepseek-v3", s);
  EXPECT_TRUE(h200.fits);
  EXPECT_EQ(h200.strategy.tensor_parallel, 8u);
}

TEST(MultiNode, OneNodeClusterPlansAsItsRegistry) {
  const auto registry = hypothetical_registry("8xH100-SXM-80GB").value();
  for (const char* id : {"llama-3.1-70b", "mixtral-8x7b", "llama-3.1-405b"}) {
    const auto from_registry = plan_inference(registry, model(id)).value();
    const auto from_cluster = plan_inference(Cluster::replicate(registry, 1).value(), model(id)).value();
    EXPECT_EQ(from_registry, from_cluster) << id;
  }
}

TEST(MultiNode, ReplicasSpreadOverSpareNodes) {
  // 70B at BF16 takes 2 H100: four nodes hold 16 replicas, each on one node.
  const Plan p = plan_of(cluster("4x(8xH100-SXM-80GB)"), "llama-3.1-70b", at(QuantizationLevel::bf16));
  ASSERT_TRUE(p.fits);
  EXPECT_EQ(p.strategy.nodes, 1u);
  EXPECT_EQ(p.strategy.data_parallel, 16u);
  EXPECT_EQ(p.nodes.size(), 4u);
  check_shape(p);
  std::map<std::uint32_t, std::set<std::string>> nodes_of_replica;
  for (const auto& s : p.shards) nodes_of_replica[s.replica].insert(s.node);
  for (const auto& [replica, nodes] : nodes_of_replica) EXPECT_EQ(nodes.size(), 1u) << "replica " << replica;
}

TEST(MultiNode, FabricSlowsPrefillAcrossNodes) {
  auto fast = cluster("2x(8xH100-SXM-80GB)");
  fast.fabric = parse_fabric("ib-400g").value();
  auto slow = fast;
  slow.fabric = parse_fabric("ethernet-10g").value();
  InferenceSettings s = at(QuantizationLevel::bf16);
  s.context = 32768;
  const Plan f = plan_of(fast, "llama-3.1-405b", s);
  const Plan w = plan_of(slow, "llama-3.1-405b", s);
  ASSERT_TRUE(f.throughput.prefill_tokens_per_s && w.throughput.prefill_tokens_per_s);
  EXPECT_GT(*f.throughput.prefill_tokens_per_s, *w.throughput.prefill_tokens_per_s);
  // One 32k-token prompt's activations (32768 x 16384 x 2 bytes = 1.07 GB) over 10 Gb/s take 0.86 s.
  const double prefill_s = 32768.0 / *w.throughput.prefill_tokens_per_s;
  EXPECT_GT(prefill_s, 0.86);
  // Decode sends one token's activations: the fabric's latency, not its bandwidth, is what it costs.
  ASSERT_TRUE(f.throughput.decode_tokens_per_s && w.throughput.decode_tokens_per_s);
  EXPECT_NEAR(*f.throughput.decode_tokens_per_s, *w.throughput.decode_tokens_per_s,
              0.02 * *f.throughput.decode_tokens_per_s);
  ASSERT_TRUE(f.fabric.has_value());
  EXPECT_EQ(f.fabric->kind, "infiniband");
  bool said = false;
  for (const auto& a : f.assumptions) said |= a.find("inter-node fabric: InfiniBand 400 Gb/s") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(MultiNode, UnknownFabricIsSaid) {
  const Plan p = plan_of(cluster("2x(8xH100-SXM-80GB)"), "llama-3.1-405b", at(QuantizationLevel::bf16));
  EXPECT_FALSE(p.fabric.has_value());
  bool said = false;
  for (const auto& a : p.assumptions) said |= a.find("inter-node fabric unknown") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(MultiNode, IciDomainSpansHostsOfATpuSlice) {
  // 16 TPU v6e hosts of 4 chips are one ICI slice of 64 (a v6e pod is 256
  // chips): a tensor-parallel group may then span hosts (and only then).
  const Cluster c = cluster("16x(4xTPU-v6e)");
  ASSERT_EQ(c.nodes.size(), 16u);
  ASSERT_EQ(c.shared_domains.size(), 1u);
  EXPECT_EQ(c.shared_domains.front().members.size(), 64u);
  InferenceSettings s = at(QuantizationLevel::bf16);
  s.objective = PlanObjective::latency;
  const Plan p = plan_of(c, "llama-3.1-405b", s);
  ASSERT_TRUE(p.fits);
  EXPECT_GT(p.strategy.tensor_parallel, 4u);
  std::set<std::string> stage_nodes;
  for (const auto& sh : p.shards)
    if (sh.replica == 0 && sh.stage == 0) stage_nodes.insert(sh.node);
  EXPECT_GT(stage_nodes.size(), 1u);
}

TEST(MultiNode, ExpertParallelForMoeOnly) {
  InferenceSettings s = at(QuantizationLevel::fp8_e4m3);
  s.expert_parallel = true;
  const Plan moe = plan_of(cluster("2x(8xH100-SXM-80GB)"), "deepseek-v3", s);
  EXPECT_EQ(moe.strategy.expert_parallel, moe.strategy.tensor_parallel);
  EXPECT_NE(moe.strategy.name().find("expert parallel (8)"), std::string::npos);
  EXPECT_NE(moe.launch.vllm.find("--enable-expert-parallel"), std::string::npos);
  EXPECT_NE(moe.launch.sglang.find("--ep-size 8"), std::string::npos);
  EXPECT_NE(moe.launch.trtllm.find("--ep_size 8"), std::string::npos);
  // All-to-alls replace the FFN all-reduce: the memory is the same, the time differs.
  s.expert_parallel = false;
  const Plan sliced = plan_of(cluster("2x(8xH100-SXM-80GB)"), "deepseek-v3", s);
  EXPECT_EQ(sliced.memory.total_bytes, moe.memory.total_bytes);
  ASSERT_TRUE(sliced.throughput.decode_tokens_per_s && moe.throughput.decode_tokens_per_s);
  EXPECT_NE(*sliced.throughput.decode_tokens_per_s, *moe.throughput.decode_tokens_per_s);
  // A dense model: said, and not used.
  const Plan dense = plan_of(cluster("2x(8xH100-SXM-80GB)"), "llama-3.1-405b", at(QuantizationLevel::bf16));
  const Plan dense_ep = plan_of(cluster("2x(8xH100-SXM-80GB)"), "llama-3.1-405b", [] {
    auto x = at(QuantizationLevel::bf16);
    x.expert_parallel = true;
    return x;
  }());
  EXPECT_EQ(dense_ep.strategy.expert_parallel, 1u);
  EXPECT_EQ(dense.throughput, dense_ep.throughput);
  bool said = false;
  for (const auto& a : dense_ep.assumptions) said |= a.find("has no experts") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(MultiNode, LaunchHintsForSeveralNodes) {
  const Plan p = plan_of(cluster("2x(8xH100-SXM-80GB)"), "llama-3.1-405b", at(QuantizationLevel::bf16));
  const auto& l = p.launch;
  EXPECT_TRUE(l.visible_devices.empty());
  EXPECT_TRUE(l.llama_cpp.empty());
  ASSERT_EQ(l.ray.size(), 2u);
  EXPECT_EQ(l.ray[0], "ray start --head --port=6379");
  EXPECT_EQ(l.ray[1], "ray start --address=$HEAD_ADDR:6379");
  EXPECT_EQ(l.vllm.rfind("vllm serve meta-llama/Llama-3.1-405B --tensor-parallel-size 8 --pipeline-parallel-size 2 "
                         "--distributed-executor-backend ray",
                         0),
            0u)
      << l.vllm;
  EXPECT_NE(l.sglang.find("--tp 8 --pp-size 2 --nnodes 2 --node-rank $NODE_RANK --dist-init-addr $HEAD_ADDR:20000"),
            std::string::npos)
      << l.sglang;
  EXPECT_EQ(l.trtllm.rfind("mpirun -np 16 --hostfile hostfile trtllm-llmapi-launch trtllm-serve", 0), 0u) << l.trtllm;
  EXPECT_NE(l.torchrun.find("--nnodes 2 --nproc-per-node 8"), std::string::npos);
  EXPECT_NE(l.slurm.find("#SBATCH --nodes=2\n"), std::string::npos);
  EXPECT_NE(l.slurm.find("#SBATCH --gpus-per-node=8\n"), std::string::npos);
  EXPECT_NE(l.kubernetes.find("kind: LeaderWorkerSet\n"), std::string::npos);
  EXPECT_NE(l.kubernetes.find("    size: 2\n"), std::string::npos);
  EXPECT_NE(l.kubernetes.find("nvidia.com/gpu: \"8\""), std::string::npos);
  // One node: no multi-node commands, the single-node ones as before.
  const Plan one = plan_of(cluster("8xH100-SXM-80GB"), "llama-3.1-70b", at(QuantizationLevel::bf16));
  EXPECT_TRUE(one.launch.ray.empty());
  EXPECT_TRUE(one.launch.slurm.empty());
  EXPECT_TRUE(one.launch.kubernetes.empty());
  EXPECT_EQ(one.launch.sglang.find("--nnodes"), std::string::npos);
  EXPECT_NE(one.launch.sglang.find("--tp 2 --dp 4"), std::string::npos) << one.launch.sglang;
  EXPECT_EQ(one.launch.trtllm.rfind("trtllm-serve meta-llama/Llama-3.1-70B --tp_size 2 --pp_size 1", 0), 0u)
      << one.launch.trtllm;
}

TEST(MultiNode, ClusterSyntaxErrors) {
  for (const char* bad : {"2x(8xH100-SXM-80GB", "2x8xH100-SXM-80GB)", "0x(8xH100-SXM-80GB)", "2x()", "2x(8xNOPE)",
                          "2x((8xH100-SXM-80GB))", "2y(8xH100-SXM-80GB)", "2x(8xH100-SXM-80GB)+", "",
                          "100001x(1xH100-SXM-80GB)"}) {
    const auto c = hypothetical_cluster(bad);
    ASSERT_FALSE(c.has_value()) << bad;
    EXPECT_EQ(c.error().kind, ErrorKind::invalid_input) << bad;
    EXPECT_FALSE(c.error().message.empty());
  }
  EXPECT_FALSE(hypothetical_cluster("40000x(8xH100-SXM-80GB)").has_value());  // 320 000 devices
  const auto big_node = hypothetical_registry("64xH100-SXM-80GB").value();
  EXPECT_FALSE(Cluster::replicate(big_node, 5000).has_value());
  EXPECT_FALSE(Cluster::replicate(big_node, 0).has_value());
  EXPECT_TRUE(Cluster::replicate(big_node, 4000).has_value());
  const Cluster mixed = cluster("2x(8xH100-SXM-80GB)+(4xA100-SXM-80GB)+8xL4-24GB");
  ASSERT_EQ(mixed.nodes.size(), 4u);
  EXPECT_EQ(mixed.nodes[2].registry.devices().size(), 4u);
  EXPECT_EQ(mixed.nodes[3].name, "node3");
}

TEST(MultiNode, FabricSyntax) {
  const Fabric ib = parse_fabric("ib-8x400g").value();
  EXPECT_EQ(ib.kind, "infiniband");
  EXPECT_EQ(ib.ports_per_node, 8u);
  EXPECT_DOUBLE_EQ(ib.port_gbps, 400);
  EXPECT_DOUBLE_EQ(ib.port_gb_per_s(), 50);
  EXPECT_EQ(ib.describe(), "InfiniBand 8 x 400 Gb/s");
  EXPECT_EQ(parse_fabric("RoCE-200G").value().kind, "roce");
  EXPECT_EQ(parse_fabric("efa-32x100g").value().ports_per_node, 32u);
  for (const char* bad : {"ib", "ib-", "ib-0g", "ib-400", "ib-0x400g", "ib-65x400g", "myrinet-10g", "ib-2000g",
                          "ib--400g", "ib-nang"}) {
    const auto f = parse_fabric(bad);
    ASSERT_FALSE(f.has_value()) << bad;
    EXPECT_EQ(f.error().kind, ErrorKind::invalid_input);
  }
  // A cluster given a fabric with no bandwidth (built by hand) is refused.
  Cluster c = cluster("2x(8xH100-SXM-80GB)");
  c.fabric = Fabric{};
  const auto p = plan_inference(c, model("llama-3.1-70b"));
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error().kind, ErrorKind::invalid_input);
}

TEST(MultiNode, FabricFromTheNetworkProbe) {
  const auto m = hwaccel::testing::sample_machine("xeon-ib-roce-nvme-nfs");
  const auto f = fabric_of(m.registry);
  ASSERT_TRUE(f.has_value());
  EXPECT_GT(f->port_gbps, 0);
  EXPECT_NE(f->source.find("network probe"), std::string::npos);
  EXPECT_FALSE(fabric_of(hypothetical_registry("8xH100-SXM-80GB").value()).has_value());
}

TEST(MultiNode, ClusterFromFleetNamesHosts) {
  const Fleet fleet = hypothetical_fleet({{"gpu-a", "8xH100-SXM-80GB"}, {"gpu-b", "8xH100-SXM-80GB"}, {"cpu-c", "1xL4-24GB"}});
  const Cluster c = cluster_from_fleet(fleet).value();
  EXPECT_TRUE(c.named_hosts);
  const Plan p = plan_of(c, "llama-3.1-405b", at(QuantizationLevel::bf16));
  ASSERT_TRUE(p.fits);
  EXPECT_EQ(p.nodes, (std::vector<std::string>{"gpu-a", "gpu-b"}));
  EXPECT_NE(p.launch.ray[1].find("--address=gpu-a:6379"), std::string::npos);
  EXPECT_NE(p.launch.trtllm.find("-H gpu-a:8,gpu-b:8"), std::string::npos) << p.launch.trtllm;
  EXPECT_NE(p.launch.slurm.find("#SBATCH --nodelist=gpu-a,gpu-b\n"), std::string::npos);
  // A busy device on gpu-b leaves 7 there: 405B no longer fits as TP 8 x PP 2 on a and b alone.
  const BusyDevices busy = parse_busy("gpu-b/cuda:3").value();
  const Cluster partly = cluster_from_fleet(fleet, busy, std::vector<std::string>{"gpu-a", "gpu-b"}).value();
  EXPECT_EQ(partly.nodes[1].registry.devices().size() + 1, c.nodes[1].registry.devices().size());
  const Plan q = plan_of(partly, "llama-3.1-405b", at(QuantizationLevel::bf16));
  for (const auto& s : q.shards) EXPECT_FALSE(s.node == "gpu-b" && s.device == "cuda:3");
  // Unknown or unanswered hosts, and a fleet with nothing free.
  EXPECT_EQ(cluster_from_fleet(fleet, {}, std::vector<std::string>{"gpu-z"}).error().kind, ErrorKind::not_found);
  EXPECT_FALSE(cluster_from_fleet(fleet, parse_busy("gpu-a gpu-b cpu-c").value()).has_value());
  EXPECT_FALSE(cluster_from_fleet(Fleet{}).has_value());
}

TEST(MultiNode, FleetWithoutAcceleratorsIsAClearError) {
  Fleet fleet;
  for (const char* host : {"login-1", "login-2"}) {
    FleetNode n;
    n.host = host;
    n.registry = AcceleratorRegistry(Inventory{});
    fleet.nodes.push_back(std::move(n));
  }
  const Cluster c = cluster_from_fleet(fleet).value();
  const auto p = plan_inference(c, model("llama-3.1-8b"));
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error().kind, ErrorKind::unsupported);
  EXPECT_NE(p.error().message.find("no accelerator on any of the 2 nodes"), std::string::npos) << p.error().message;
}

TEST(MultiNode, MixedNodesPlanTogether) {
  // One node of H100 and one of A100: the pipeline puts more layers where there is more free memory.
  const Plan p = plan_of(cluster("(8xH100-SXM-80GB)+(8xA100-SXM-40GB)"), "llama-3.1-405b", at(QuantizationLevel::fp8_e4m3));
  check_shape(p);
  EXPECT_TRUE(p.fits);
}

TEST(Capacity, Llama405BBf16NeedsTwoH100Nodes) {
  const Fleet fleet = hypothetical_fleet({{"gpu-a", "8xH100-SXM-80GB"}, {"gpu-b", "8xA100-SXM-80GB"}});
  CapacityOptions options;
  options.node_kind = "8xH100-SXM-80GB";
  const auto r = what_is_missing(fleet, model("llama-3.1-405b"), at(QuantizationLevel::bf16), options).value();
  ASSERT_TRUE(r.nodes_needed.has_value());
  EXPECT_EQ(*r.nodes_needed, 2u);
  EXPECT_EQ(r.nodes_of_kind, 1u);
  EXPECT_EQ(r.nodes_free, 1u);
  EXPECT_EQ(r.nodes_missing, 1u);
  EXPECT_TRUE(r.plan.fits);
  EXPECT_EQ(r.summary, "llama-3.1-405b at BF16 (4096 tokens x 1) needs 2 nodes of 8xH100-SXM-80GB; the fleet has 1 "
                       "free (1 in all): 1 missing");
  // Busy nodes do not count as free; FP8 needs one node.
  options.busy = parse_busy("gpu-a").value();
  const auto busy = what_is_missing(fleet, model("llama-3.1-405b"), at(QuantizationLevel::bf16), options).value();
  EXPECT_EQ(busy.nodes_free, 0u);
  EXPECT_EQ(busy.nodes_missing, 2u);
  const auto fp8 = what_is_missing(fleet, model("llama-3.1-405b"), at(QuantizationLevel::fp8_e4m3), options).value();
  EXPECT_EQ(fp8.nodes_needed, 1u);
  // Nothing fits a node of 1 L4 up to 8 of them.
  options.node_kind = "1xL4-24GB";
  options.max_nodes = 8;
  const auto never = what_is_missing(fleet, model("llama-3.1-405b"), at(QuantizationLevel::bf16), options).value();
  EXPECT_FALSE(never.nodes_needed.has_value());
  EXPECT_NE(never.summary.find("does not fit even 8 nodes"), std::string::npos);
  // An unknown kind is a clear error.
  options.node_kind = "8xWarpDrive";
  EXPECT_EQ(what_is_missing(fleet, model("llama-3.1-8b"), {}, options).error().kind, ErrorKind::invalid_input);
}

TEST(Busy, ListsAndPlacements) {
  const BusyDevices b = parse_busy("gpu-a, gpu-b/cuda:0\ngpu-b/cuda:1").value();
  EXPECT_TRUE(b.node_busy("gpu-a"));
  EXPECT_TRUE(b.device_busy("gpu-a", "cuda:7"));
  EXPECT_FALSE(b.node_busy("gpu-b"));
  EXPECT_TRUE(b.device_busy("gpu-b", "cuda:1"));
  EXPECT_FALSE(b.device_busy("gpu-b", "cuda:2"));
  EXPECT_FALSE(b.device_busy("gpu-c", "cuda:0"));
  const BusyDevices from_json = parse_busy(R"({"placed":[{"devices":["gpu-b/cuda:0","gpu-b/cuda:1"]}]})").value();
  EXPECT_TRUE(from_json.device_busy("gpu-b", "cuda:1"));
  for (const char* bad : {"-rf", "gpu-a/", R"({"placed":3})", R"({"placed":[{"devices":["no-slash"]}]})", "{"}) {
    const auto r = parse_busy(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().kind, ErrorKind::invalid_input) << bad;
  }
}

}  // namespace

namespace {

TrainingSettings zero3(std::uint32_t dp, std::uint32_t tp) {
  TrainingSettings s;
  s.method = TrainingMethod::full;
  s.zero_stage = 3;
  s.data_parallel = dp;
  s.tensor_parallel = tp;
  return s;
}

// Training over several nodes: ZeRO-3 shards across every data-parallel
// rank, on whichever node it runs; tensor parallelism inside a node.
TEST(MultiNodeTraining, ZeroShardsSpanNodesTensorParallelStaysInside) {
  const auto m = model("llama-3.1-70b");
  const auto nodes = plan_training(cluster("4x(8xH100-SXM-80GB)"), m, zero3(4, 8)).value();
  const auto pooled = plan_training(hypothetical_registry("32xH100-SXM-80GB").value(), m, zero3(4, 8)).value();
  ASSERT_TRUE(nodes.fit.has_value());
  EXPECT_TRUE(nodes.fit->fits) << nodes.fit->reason;
  EXPECT_EQ(nodes.per_device, pooled.per_device);  // the same shards, wherever the ranks run
  EXPECT_EQ(nodes.fit->nodes, 4u);
  EXPECT_EQ(nodes.fit->devices_per_node, 8u);
  EXPECT_EQ(nodes.fit->torchrun.rfind("torchrun --nnodes 4 --nproc-per-node 8 --rdzv-backend c10d", 0), 0u);
  for (const auto& w : nodes.warnings) EXPECT_EQ(w.find("high-bandwidth domain"), std::string::npos) << w;
  // Tensor parallel 16 crosses a node's NVSwitch domain of 8: said.
  const auto wide = plan_training(cluster("4x(8xH100-SXM-80GB)"), m, zero3(2, 16)).value();
  bool said = false;
  for (const auto& w : wide.warnings) said |= w.find("wider than a node's high-bandwidth domain (8)") != std::string::npos;
  EXPECT_TRUE(said);
  // More ranks than the cluster holds.
  const auto short_of = plan_training(cluster("2x(8xH100-SXM-80GB)"), m, zero3(4, 8)).value();
  EXPECT_FALSE(short_of.fit->fits);
  EXPECT_NE(short_of.fit->reason.find("needs 32 devices"), std::string::npos) << short_of.fit->reason;
  // One node: exactly the registry's estimate.
  const auto registry = hypothetical_registry("8xH100-SXM-80GB").value();
  EXPECT_EQ(plan_training(Cluster::replicate(registry, 1).value(), m, zero3(1, 8)).value(),
            plan_training(registry, m, zero3(1, 8)).value());
}

}  // namespace
