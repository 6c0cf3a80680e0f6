// CPU detection on the real host captures (DGX Spark / GB10 dump from hwloc).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "../test_support.hpp"

import hwaccel;

namespace {

namespace fs = std::filesystem;
using namespace hwaccel;

TEST(CpuConformance, DgxSparkGb10Host) {
  const fs::path capture = hwaccel::testing::shared_capture("other/hwloc-dgx-spark-gb10-host");
  if (capture.empty()) GTEST_SKIP() << "shared capture other/hwloc-dgx-spark-gb10-host not available";
  hwaccel::testing::FixtureBuilder f("DGX Spark host files", "hwloc test dump");
  f.tree(capture / "proc", "/proc").tree(capture / "sys", "/sys");
  auto system = FixtureSystem::open(f.write());
  ASSERT_TRUE(system) << system.error().message;
  const auto registry = DetectBuilder::none().with(Backend::cpu).system_probes(false).detect(**system);
  ASSERT_TRUE(registry.system().cpu);
  const CpuInfo& cpu = *registry.system().cpu;
  // Ground truth (SOURCE.md): 20 Arm CPUs, 10x Cortex-X925 (0xd85) + 10x Cortex-A725
  // (0xd87), MemTotal 125508468 kB, one NUMA node, no `model name` field.
  EXPECT_EQ(cpu.logical_cores, 20u);
  EXPECT_EQ(cpu.architecture, "aarch64");
  EXPECT_EQ(cpu.model_name, "10x Cortex-X925 + 10x Cortex-A725");
  EXPECT_EQ(cpu.memory_total_bytes, 125508468ull * 1024);
  ASSERT_EQ(cpu.numa_nodes.size(), 1u);
  EXPECT_EQ(cpu.numa_nodes[0].id, 0u);
  ASSERT_EQ(registry.devices().size(), 1u);
  EXPECT_EQ(registry.devices()[0].family, Family::cpu);
}

}  // namespace
