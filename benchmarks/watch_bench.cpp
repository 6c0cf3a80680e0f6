// Watching: what an event costs from the notification to the new registry
// (re-detecting only the backends it concerns, against a full detection),
// parsing a flood of uevents, and what a watcher costs while nothing happens.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <bitset>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

import hwaccel;

namespace {

using namespace hwaccel;

std::filesystem::path machine(const char* name) {
  const char* root = std::getenv("HWACCEL_FIXTURES");
  return std::filesystem::path(root ? root : "fixtures") / "machines" / name;
}

std::unique_ptr<FixtureSystem> open_machine(const char* name) {
  auto f = FixtureSystem::open(machine(name).string());
  if (!f) throw std::runtime_error(f.error().message);
  return std::move(*f);
}

std::bitset<backend_count> cuda_only() {
  std::bitset<backend_count> m;
  m.set(static_cast<std::size_t>(Backend::cuda));
  return m;
}

// An Xid on one GPU of an 8-GPU node: re-detect CUDA (and the GPU backends
// merged with it) and publish the difference.
void BM_EventToRegistry_Dgx8(benchmark::State& state) {
  const auto system = open_machine("dgx-h100-8x-nvswitch");
  const AcceleratorRegistry before = DetectBuilder{}.detect(*system);
  for (auto _ : state) {
    const AcceleratorRegistry after = redetect_backends(before, *system, DetectOptions{}, cuda_only());
    benchmark::DoNotOptimize(compare_registries(before, after));
  }
}
BENCHMARK(BM_EventToRegistry_Dgx8)->Unit(benchmark::kMicrosecond);

// The same machine detected in full, as a periodic re-scan does.
void BM_FullRescan_Dgx8(benchmark::State& state) {
  const auto system = open_machine("dgx-h100-8x-nvswitch");
  const AcceleratorRegistry before = DetectBuilder{}.detect(*system);
  for (auto _ : state) {
    const AcceleratorRegistry after(detect_inventory(*system, DetectOptions{}));
    benchmark::DoNotOptimize(compare_registries(before, after));
  }
}
BENCHMARK(BM_FullRescan_Dgx8)->Unit(benchmark::kMicrosecond);

// Parsing and classifying one uevent, the per-event cost of a flood.
void BM_UeventClassify(benchmark::State& state) {
  const auto system = open_machine("dgx-h100-8x-nvswitch");
  const AcceleratorRegistry registry = DetectBuilder{}.detect(*system);
  Uevent e{"bind", "/devices/pci0000:17/0000:17:01.0/0000:18:00.0", {}};
  e.variables = {{"ACTION", "bind"}, {"DEVPATH", e.devpath}, {"SUBSYSTEM", "pci"}, {"DRIVER", "nvidia"},
                 {"PCI_ID", "10DE:2330"}, {"PCI_SLOT_NAME", "0000:18:00.0"}, {"SEQNUM", "12345"}};
  const std::string message = format_uevent(e);
  for (auto _ : state) {
    auto parsed = parse_uevent(message);
    benchmark::DoNotOptimize(concerned_backends(*parsed, registry, *system));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_UeventClassify);

// A watcher on this machine with nothing happening: the CPU it uses over a
// second, as a share of one core (target: under 0.1 %; it blocks in poll()).
void BM_IdleWatchCpu(benchmark::State& state) {
  const auto live = make_live_system();
  WatchOptions options;
  options.rescan_interval = std::chrono::seconds(30);
  options.detect.backends = std::bitset<backend_count>{}.set(static_cast<std::size_t>(Backend::cpu));
  auto watcher = Watcher::start(*live, options);
  if (!watcher) {
    state.SkipWithError(watcher.error().message.c_str());
    return;
  }
  double share = 0;
  for (auto _ : state) {
    rusage a{}, b{};
    getrusage(RUSAGE_SELF, &a);
    std::this_thread::sleep_for(std::chrono::seconds(1));
    getrusage(RUSAGE_SELF, &b);
    const auto us = [](const rusage& r) {
      return (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1'000'000.0 + r.ru_utime.tv_usec + r.ru_stime.tv_usec;
    };
    share = (us(b) - us(a)) / 1'000'000.0 * 100.0;
  }
  state.counters["cpu_percent_of_a_core"] = share;
  (*watcher)->stop();
}
BENCHMARK(BM_IdleWatchCpu)->Iterations(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
