// The planner's cost as the device count grows: 8 GPUs (one board), 128
// (16 boards), 1 024 (128 boards) and 10 000 (1250 boards), for a model
// that needs tensor parallelism (Llama 3.1 70B in bf16) and one that needs
// pipelines across boards (Llama 3.1 405B in bf16), the parameter-count entry
// points, plus a heterogeneous PCIe machine.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

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

BENCHMARK(BM_Plan70B)->Arg(8)->Arg(128)->Arg(1024)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Plan405B)->Arg(8)->Arg(128)->Arg(1024)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PlanToJson)->Arg(128)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SuggestQuantization)->Arg(8)->Arg(128)->Arg(1024)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PlanSharding)->Arg(8)->Arg(128)->Arg(1024)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SuggestQuantizationByParameters)->Arg(8)->Arg(128)->Arg(1024)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PlanHeterogeneous)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_WeightLayoutGguf)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
