// The training estimator's cost as the device count grows: 8 GPUs (one
// board), 128, 1 024 and 10 000, for Llama 3.1 70B fully trained with ZeRO-3
// over tensor-parallel groups of 8, alone (estimate_training) and against a
// registry of hypothetical H100s (plan_training, which also searches the
// minimum device count).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

import hwaccel;

namespace {

using namespace hwaccel;

// Tensor parallelism inside each 8-GPU board, data parallelism across boards.
TrainingSettings settings_for(std::int64_t devices) {
  TrainingSettings s;
  s.tensor_parallel = 8;
  s.data_parallel = static_cast<std::uint32_t>(devices / 8);
  s.zero_stage = 3;
  s.micro_batch = 1;
  s.sequence = 4096;
  s.recompute = Recompute::full;
  return s;
}

void BM_EstimateTraining(benchmark::State& state) {
  const auto model = catalogue_model("llama-3.1-70b").value();
  const auto settings = settings_for(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(estimate_training(model, settings));
  state.counters["devices"] = static_cast<double>(state.range(0));
}

void BM_PlanTraining(benchmark::State& state) {
  const auto registry = hypothetical_registry(std::to_string(state.range(0)) + "xH100-SXM-80GB").value();
  const auto model = catalogue_model("llama-3.1-70b").value();
  const auto settings = settings_for(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(plan_training(registry, model, settings));
  state.counters["devices"] = static_cast<double>(state.range(0));
}

BENCHMARK(BM_EstimateTraining)->Arg(8)->Arg(128)->Arg(1024)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PlanTraining)->Arg(8)->Arg(128)->Arg(1024)->Arg(10000)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
