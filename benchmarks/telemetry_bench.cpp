// One scrape of the 8-GPU node in-process: the telemetry sample (nvidia-smi's
// query replayed from memory) and its Prometheus text; and each part alone.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <string>

import hwaccel;

namespace {

using namespace hwaccel;

std::filesystem::path machine(const char* name) {
  const char* root = std::getenv("HWACCEL_FIXTURES");
  return std::filesystem::path(root ? root : "fixtures") / "machines" / name;
}

struct Node {
  std::unique_ptr<FixtureSystem> system;
  AcceleratorRegistry registry;
  explicit Node(const char* name) {
    auto f = FixtureSystem::open(machine(name).string());
    if (!f) throw std::runtime_error(f.error().message);
    system = std::move(*f);
    registry = DetectBuilder{}.detect(*system);
  }
};

void scrape(benchmark::State& state, const char* name) {
  const Node node(name);
  ExporterCounters counters;
  for (auto _ : state) {
    const auto sample = sample_telemetry(node.registry, *node.system);
    auto text = metrics_text(node.registry, sample, counters);
    benchmark::DoNotOptimize(text);
  }
}

void sample_only(benchmark::State& state, const char* name) {
  const Node node(name);
  for (auto _ : state) {
    auto sample = sample_telemetry(node.registry, *node.system);
    benchmark::DoNotOptimize(sample);
  }
}

void exposition_only(benchmark::State& state, const char* name) {
  const Node node(name);
  const auto sample = sample_telemetry(node.registry, *node.system);
  for (auto _ : state) {
    auto text = metrics_text(node.registry, sample, {});
    benchmark::DoNotOptimize(text);
  }
}

void collector_scrape(benchmark::State& state, const char* name) {
  const Node node(name);
  CollectorOptions options;
  options.sample_max_age = std::chrono::milliseconds(0);  // a fresh sample every scrape
  TelemetryCollector collector(*node.system, options);
  collector.registry();
  for (auto _ : state) {
    auto text = collector.scrape(MetricsFormat::prometheus_text);
    benchmark::DoNotOptimize(text);
  }
}

}  // namespace

BENCHMARK_CAPTURE(scrape, dgx_h100_8x, "dgx-h100-8x-nvswitch")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(sample_only, dgx_h100_8x, "dgx-h100-8x-nvswitch")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(exposition_only, dgx_h100_8x, "dgx-h100-8x-nvswitch")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(collector_scrape, dgx_h100_8x, "dgx-h100-8x-nvswitch")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(scrape, amd_8x_mi300x, "amd-8x-mi300x-xgmi")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(scrape, gaudi2_8x, "hls2-8x-gaudi2-hl-smi")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(scrape, tpu_v6e_4, "tpu-v6e-4-vm-busy")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(scrape, trn1_neuron_sysfs, "trn1-2xlarge-no-neuron-ls")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(scrape, a100_mig, "a100-40gb-mig-enabled")->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
