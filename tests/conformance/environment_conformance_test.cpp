// Environment probe on the real host captures (DGX Spark / GB10 dump from hwloc,
// which holds its DMI strings and kernel version).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "../test_support.hpp"

import hwaccel;

namespace {

namespace fs = std::filesystem;
using namespace hwaccel;

TEST(EnvironmentConformance, DgxSparkGb10IsBareMetalAndNoCloud) {
  const fs::path capture = hwaccel::testing::shared_capture("other/hwloc-dgx-spark-gb10-host");
  if (capture.empty()) GTEST_SKIP() << "shared capture other/hwloc-dgx-spark-gb10-host not available";
  hwaccel::testing::FixtureBuilder f("DGX Spark host files", "hwloc test dump");
  f.tree(capture / "proc", "/proc").tree(capture / "sys", "/sys");
  auto system = FixtureSystem::open(f.write());
  ASSERT_TRUE(system) << system.error().message;
  const auto registry = DetectBuilder::none().detect(**system);
  ASSERT_TRUE(registry.system().environment);
  // Ground truth (SOURCE.md): a DGX Spark (DMI sys_vendor NVIDIA, product
  // NVIDIA_DGX_Spark, AMI BIOS), Ubuntu's 6.17 -nvidia kernel on bare metal.
  // Arm has no cpuinfo hypervisor bit and the DMI names no hypervisor or cloud.
  EXPECT_EQ(*registry.system().environment, Environment{});
  EXPECT_TRUE(registry.warnings().empty());
}

}  // namespace
