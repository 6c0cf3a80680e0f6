// Lazy detection: the family -> backends map, one family at a time, each
// backend once (also under concurrent callers), and the joined registry.
#include <gtest/gtest.h>

#include <algorithm>
#include <bitset>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../test_support.hpp"

import hwaccel;

#include "module_helpers.hpp"

namespace {

using namespace hwaccel;
using hwaccel::testing::CountingSystem;

std::unique_ptr<FixtureSystem> machine() {
  auto system = FixtureSystem::open((hwaccel::testing::fixtures_root() / "machines" / "xeon-ib-roce-nvme-nfs").string());
  EXPECT_TRUE(system) << (system ? "" : system.error().message);
  return system ? std::move(*system) : nullptr;
}

TEST(LazyFamilies, EveryBackendHasAFamilyAndAppleIsBoth) {
  std::bitset<backend_count> covered;
  for (Family f : {Family::cpu, Family::gpu, Family::npu, Family::tpu, Family::asic})
    for (Backend b : backends_of(f)) covered.set(static_cast<std::size_t>(b));
  EXPECT_TRUE(covered.all()) << covered.to_string();
  for (Backend b : all_backends) {
    const auto members = backends_of(default_family(b));
    EXPECT_NE(std::find(members.begin(), members.end(), b), members.end()) << to_string(b);
  }
  const auto gpu = backends_of(Family::gpu);
  const auto npu = backends_of(Family::npu);
  EXPECT_NE(std::find(gpu.begin(), gpu.end(), Backend::apple), gpu.end());
  EXPECT_NE(std::find(npu.begin(), npu.end(), Backend::apple), npu.end());
  EXPECT_NE(std::find(gpu.begin(), gpu.end(), Backend::intel_oneapi), gpu.end());
  const auto asic = backends_of(Family::asic);
  EXPECT_EQ(std::find(asic.begin(), asic.end(), Backend::intel_oneapi), asic.end());
  EXPECT_EQ(backends_of(Family::cpu).size(), 1u);
}

TEST(LazyRegistry, RunsOnlyTheFamilyAskedForAndEachOnce) {
  const auto fixture = machine();
  CountingSystem system(*fixture);
  LazyRegistry lazy(system);

  EXPECT_TRUE(lazy.by_family(Family::gpu).empty());
  EXPECT_EQ(system.reads("/proc/meminfo"), 0) << "the CPU backend must not run for the GPU family";
  EXPECT_EQ(system.reads("/proc/self/mountinfo"), 0) << "host probes must not run for a family";
  std::bitset<backend_count> gpu_backends;
  for (Backend b : backends_of(Family::gpu)) gpu_backends.set(static_cast<std::size_t>(b));
  EXPECT_EQ(lazy.probed(), gpu_backends);

  const auto cpus = lazy.by_family(Family::cpu);
  ASSERT_EQ(cpus.size(), 1u);
  EXPECT_EQ(cpus[0].name, "Intel(R) Xeon(R) Platinum 8480+");
  EXPECT_EQ(lazy.by_family(Family::cpu), cpus);
  EXPECT_EQ(system.reads("/proc/meminfo"), 1);

  const AcceleratorRegistry joined = std::move(lazy).into_registry();
  EXPECT_EQ(system.reads("/proc/meminfo"), 1) << "the CPU backend ran once in all";
  EXPECT_EQ(system.reads("/proc/self/mountinfo"), 1)
      << "the environment and the storage probe share one detection's read";
  // The same registry a full detection makes, host facts included.
  const AcceleratorRegistry full = DetectBuilder{}.detect(*fixture);
  const JsonOptions no_timings{.pretty = true, .include_timings = false};
  EXPECT_EQ(to_json(joined, no_timings), to_json(full, no_timings));
  EXPECT_EQ(joined.system().storage.size(), 8u);
  EXPECT_EQ(joined.system().network.size(), 5u);
  std::vector<std::string> timing_names;
  for (const auto& t : joined.timings()) timing_names.push_back(t.name);
  std::vector<std::string> full_names;
  for (const auto& t : full.timings()) full_names.push_back(t.name);
  EXPECT_EQ(timing_names, full_names);
}

TEST(LazyRegistry, ConcurrentCallersShareOneRun) {
  const auto fixture = machine();
  CountingSystem system(*fixture);
  LazyRegistry lazy(system);
  std::vector<std::vector<DeviceProfile>> results(8);
  {
    std::vector<std::jthread> pool;
    for (std::size_t i = 0; i < results.size(); ++i) pool.emplace_back([&, i] { results[i] = lazy.by_family(Family::cpu); });
  }
  EXPECT_EQ(system.reads("/proc/meminfo"), 1);
  for (const auto& r : results) {
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r, results[0]);
  }
}

TEST(LazyRegistry, KeepsWarningsAndSystemInfoAndHonoursTheBackendSelection) {
  hwaccel::testing::FixtureBuilder f;
  f.file("/proc/meminfo", "MemTotal: 1048576 kB\nMemAvailable: 524288 kB\n")
      .file("/proc/cpuinfo", "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Test CPU\n")
      .file("/proc/self/mountinfo", "broken line\n");
  auto fixture = FixtureSystem::open(f.write());
  ASSERT_TRUE(fixture);

  LazyRegistry lazy(**fixture);
  const AcceleratorRegistry r = lazy.registry();
  ASSERT_TRUE(r.system().cpu);
  EXPECT_EQ(r.system().cpu->memory_total_bytes, 1073741824u);
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].backend, "storage");
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::parse_error);

  DetectOptions none;
  none.backends.reset();
  none.system_probes = false;
  LazyRegistry nothing(**fixture, none);
  EXPECT_TRUE(nothing.by_family(Family::cpu).empty());
  EXPECT_TRUE(nothing.probed().none());
  const AcceleratorRegistry empty = nothing.registry();
  EXPECT_TRUE(empty.devices().empty());
  EXPECT_FALSE(empty.system().cpu);
}

}  // namespace
