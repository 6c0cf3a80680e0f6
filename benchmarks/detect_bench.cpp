// Detection latency: every fixture machine replayed in memory and from disk,
// per backend and in total, and the orchestrator's own overhead.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

import hwaccel;

namespace {

namespace fs = std::filesystem;
using namespace hwaccel;

fs::path fixtures_root() {
  const char* v = std::getenv("HWACCEL_FIXTURES");
  return v && *v ? fs::path(v) : fs::path("fixtures");
}

std::vector<fs::path> machines() {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fixtures_root() / "machines", ec))
    if (fs::exists(e.path() / "fixture.json")) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// The backends that report a device on a fixture machine: the ones worth
// timing alone there (the others only look for evidence and return).
std::vector<Backend> backends_with_devices(const fs::path& dir) {
  std::vector<Backend> out;
  auto fixture = FixtureSystem::open(dir.string());
  if (!fixture) return out;
  const auto registry = DetectBuilder{}.system_probes(false).detect(**fixture);
  for (Backend b : all_backends)
    if (!registry.by_backend(b).empty()) out.push_back(b);
  return out;
}

// All backends and probes over a fixture that was indexed and loaded once.
void replay_in_memory(benchmark::State& state, const fs::path& dir) {
  auto fixture = FixtureSystem::open(dir.string());
  if (!fixture) {
    state.SkipWithError(fixture.error().message.c_str());
    return;
  }
  const DetectBuilder builder;
  for (auto _ : state) {
    auto registry = builder.detect(**fixture);
    benchmark::DoNotOptimize(registry);
  }
}

// The same with a diagnostic sink that discards every event at `level`:
// what listening costs (without a sink, detection makes no event at all).
void replay_with_sink(benchmark::State& state, const fs::path& dir, LogLevel level) {
  auto fixture = FixtureSystem::open(dir.string());
  if (!fixture) {
    state.SkipWithError(fixture.error().message.c_str());
    return;
  }
  std::size_t events = 0;
  DetectBuilder builder;
  builder.diagnostics([&events](const DiagnosticEvent&) { ++events; }, level);
  for (auto _ : state) {
    auto registry = builder.detect(**fixture);
    benchmark::DoNotOptimize(registry);
  }
  state.counters["events"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kAvgIterations);
}

// Opening the fixture (indexing root/, reading the manifest) plus detection.
void replay_from_disk(benchmark::State& state, const fs::path& dir) {
  const DetectBuilder builder;
  for (auto _ : state) {
    auto fixture = FixtureSystem::open(dir.string());
    if (!fixture) {
      state.SkipWithError(fixture.error().message.c_str());
      return;
    }
    auto registry = builder.detect(**fixture);
    benchmark::DoNotOptimize(registry);
  }
}

// One backend alone, to see where the time of a full replay goes.
void replay_one_backend(benchmark::State& state, const fs::path& dir, Backend backend) {
  auto fixture = FixtureSystem::open(dir.string());
  if (!fixture) {
    state.SkipWithError(fixture.error().message.c_str());
    return;
  }
  auto builder = DetectBuilder::none().with(backend).system_probes(false);
  for (auto _ : state) {
    auto registry = builder.detect(**fixture);
    benchmark::DoNotOptimize(registry);
  }
}

// No backend and no probe: what the orchestrator itself costs.
void orchestrator_overhead(benchmark::State& state) {
  auto fixture = FixtureSystem::open((fixtures_root() / "machines" / "dual-xeon-8480-no-accel").string());
  if (!fixture) {
    state.SkipWithError(fixture.error().message.c_str());
    return;
  }
  const auto builder = DetectBuilder::none().system_probes(false);
  for (auto _ : state) {
    auto registry = builder.detect(**fixture);
    benchmark::DoNotOptimize(registry);
  }
}

// This machine, live: the number a model server pays at start-up.
void live_detection(benchmark::State& state) {
  const auto system = make_live_system();
  const DetectBuilder builder;
  for (auto _ : state) {
    auto registry = builder.detect(*system);
    benchmark::DoNotOptimize(registry);
  }
}

}  // namespace

int main(int argc, char** argv) {
  for (const auto& dir : machines()) {
    const std::string name = dir.filename().string();
    benchmark::RegisterBenchmark(("replay_in_memory/" + name).c_str(), replay_in_memory, dir)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("replay_from_disk/" + name).c_str(), replay_from_disk, dir)
        ->Unit(benchmark::kMicrosecond);
    for (Backend b : backends_with_devices(dir))
      benchmark::RegisterBenchmark(("replay_backend/" + name + "/" + std::string(to_string(b))).c_str(),
                                   replay_one_backend, dir, b)
          ->Unit(benchmark::kMicrosecond);
  }
  for (const char* name : {"dgx-h100-8x-nvswitch", "dual-xeon-8480-no-accel"})
    for (const auto level : {LogLevel::warn, LogLevel::info, LogLevel::trace})
      benchmark::RegisterBenchmark(
          (std::string("replay_with_sink/") + name + "/" + std::string(to_string(level))).c_str(), replay_with_sink,
          fixtures_root() / "machines" / name, level)
          ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("orchestrator_overhead", orchestrator_overhead)->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("live_detection", live_detection)->Unit(benchmark::kMicrosecond);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
