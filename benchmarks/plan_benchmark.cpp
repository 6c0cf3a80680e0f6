// The planner's cost as the device count grows: 8 GPUs (one board), 128
// (16 boards), 1 024 (128 boards) and 10 000 (1250 boards), for a model
// that needs tensor parallelism (Llama 3.1 70B in bf16) and one that needs
// pipelines across boards (Llama 3.1 405B in bf16), the parameter-count entry
// points, plus a heterogeneous PCIe machine; plans over clusters of 8-GPU
// nodes (64 of them: the multi-node target, <= 5 ms), capacity searches, and
// the placement of 100 workloads over 1 000 nodes (target <= 1 s).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

import hwaccel;

namespace {

using namespace hwaccel;

void plan_for(benchmark::State& state, std::string_view model_id, QuantizationLevel level) {
  const auto registry = hypothetical_registry(std::to_string(state.range(0)) + "xH100-SXM-80GB").value();
  const auto model = catalogue_model(model_id).value();
  InferenceSettings settings;
  settings.quantization = level;
  for (auto _ : state) {
    auto plan = plan_inference(registry, model, settings);
    benchmark::DoNotOptimize(plan);
  }
  state.counters["devices"] = static_cast<double>(state.range(0));
}

void BM_Plan70B(benchmark::State& state) { plan_for(state, "llama-3.1-70b", QuantizationLevel::bf16); }
void BM_Plan405B(benchmark::State& state) { plan_for(state, "llama-3.1-405b", QuantizationLevel::bf16); }

void BM_PlanToJson(benchmark::State& state) {
  const auto registry = hypothetical_registry(std::to_string(state.range(0)) + "xH100-SXM-80GB").value();
  const auto plan = plan_inference(registry, catalogue_model("llama-3.1-70b").value()).value();
  for (auto _ : state) benchmark::DoNotOptimize(to_json(plan));
}

void BM_SuggestQuantization(benchmark::State& state) {
  const auto registry = hypothetical_registry(std::to_string(state.range(0)) + "xH100-SXM-80GB").value();
  const auto model = catalogue_model("llama-3.1-405b").value();
  for (auto _ : state) benchmark::DoNotOptimize(suggest_quantization(registry, model));
}

// The parameter-count entry points: a 70B model at bf16, and the level
// suggested for it.
void BM_PlanSharding(benchmark::State& state) {
  const auto registry = hypothetical_registry(std::to_string(state.range(0)) + "xH100-SXM-80GB").value();
  for (auto _ : state) benchmark::DoNotOptimize(plan_sharding(registry, 70'000'000'000, QuantizationLevel::bf16));
}

void BM_SuggestQuantizationByParameters(benchmark::State& state) {
  const auto registry = hypothetical_registry(std::to_string(state.range(0)) + "xH100-SXM-80GB").value();
  for (auto _ : state) benchmark::DoNotOptimize(suggest_quantization(registry, std::uint64_t{405'000'000'000}));
}

void BM_PlanHeterogeneous(benchmark::State& state) {
  const auto registry = hypothetical_registry("2xRTX-4090+1xRTX-3090+1xT4-16GB").value();
  const auto model = catalogue_model("qwen2.5-32b").value();
  InferenceSettings settings;
  settings.quantization = QuantizationLevel::q8_0;
  for (auto _ : state) benchmark::DoNotOptimize(plan_inference(registry, model, settings));
}

void BM_WeightLayoutGguf(benchmark::State& state) {
  const auto model = catalogue_model("llama-3.1-405b").value();
  for (auto _ : state) benchmark::DoNotOptimize(weight_layout(model, QuantizationLevel::q4_k_m));
}

// Nodes of 8 H100 on NVSwitch as a cluster: the planner sees each node's
// domain and the fabric between them.
void cluster_plan_for(benchmark::State& state, std::string_view model_id, QuantizationLevel level) {
  auto cluster = hypothetical_cluster(std::to_string(state.range(0)) + "x(8xH100-SXM-80GB)").value();
  cluster.fabric = parse_fabric("ib-8x400g").value();
  const auto model = catalogue_model(model_id).value();
  InferenceSettings settings;
  settings.quantization = level;
  for (auto _ : state) {
    auto plan = plan_inference(cluster, model, settings);
    benchmark::DoNotOptimize(plan);
  }
  state.counters["nodes"] = static_cast<double>(state.range(0));
}

void BM_ClusterPlan70B(benchmark::State& state) { cluster_plan_for(state, "llama-3.1-70b", QuantizationLevel::bf16); }
void BM_ClusterPlan405B(benchmark::State& state) { cluster_plan_for(state, "llama-3.1-405b", QuantizationLevel::bf16); }

Fleet h100_fleet(int nodes) {
  Fleet fleet;
  const auto node = hypothetical_registry("8xH100-SXM-80GB").value();
  const auto a100 = hypothetical_registry("8xA100-SXM-80GB").value();
  for (int i = 0; i < nodes; ++i) {
    FleetNode n;
    std::string number = std::to_string(i);
    n.host = "node-" + std::string(4 - number.size(), '0') + number;  // a fleet keeps its nodes sorted by host
    n.registry = i % 5 == 4 ? a100 : node;
    fleet.nodes.push_back(std::move(n));
  }
  return fleet;
}

void BM_WhatIsMissing405B(benchmark::State& state) {
  const Fleet fleet = h100_fleet(static_cast<int>(state.range(0)));
  const auto model = catalogue_model("llama-3.1-405b").value();
  InferenceSettings settings;
  settings.quantization = QuantizationLevel::bf16;
  CapacityOptions options;
  options.node_kind = "8xH100-SXM-80GB";
  for (auto _ : state) benchmark::DoNotOptimize(what_is_missing(fleet, model, settings, options));
}

// 100 workloads (five models, three levels, 1 to 40 replicas) over 1 000 nodes of two kinds.
void BM_Place100Workloads(benchmark::State& state) {
  const Fleet fleet = h100_fleet(static_cast<int>(state.range(0)));
  const char* models[] = {"llama-3.1-8b", "llama-3.1-70b", "mixtral-8x7b", "qwen3-32b", "llama-3.1-405b"};
  const QuantizationLevel levels[] = {QuantizationLevel::bf16, QuantizationLevel::fp8_e4m3, QuantizationLevel::int4};
  std::vector<Workload> workloads;
  for (int i = 0; i < 100; ++i) {
    Workload w;
    w.name = "w" + std::to_string(i);
    w.model = models[i % 5];
    w.quantization = levels[i % 3];
    w.replicas = static_cast<std::uint32_t>(1 + (i * 7) % 40);
    workloads.push_back(std::move(w));
  }
  std::size_t placed = 0;
  for (auto _ : state) {
    auto result = place_workloads(fleet, workloads).value();
    placed = result.placed.size();
    benchmark::DoNotOptimize(result);
  }
  state.counters["replicas_placed"] = static_cast<double>(placed);
}

BENCHMARK(BM_Plan70B)->Arg(8)->Arg(128)->Arg(1024)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Plan405B)->Arg(8)->Arg(128)->Arg(1024)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PlanToJson)->Arg(128)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SuggestQuantization)->Arg(8)->Arg(128)->Arg(1024)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PlanSharding)->Arg(8)->Arg(128)->Arg(1024)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SuggestQuantizationByParameters)->Arg(8)->Arg(128)->Arg(1024)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PlanHeterogeneous)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_WeightLayoutGguf)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ClusterPlan70B)->Arg(2)->Arg(64)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ClusterPlan405B)->Arg(2)->Arg(64)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_WhatIsMissing405B)->Arg(1000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Place100Workloads)->Arg(1000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
