// Samsung Exynos NPU backend: /dev/vertex10 and the SoC from the device tree.
#include <gtest/gtest.h>

#include <string>

#include "backend_fixture.hpp"

import hwaccel;

#include "fixture_detection.hpp"

namespace {

using namespace hwaccel;
using hwaccel::testing::FixtureBuilder;

AcceleratorRegistry detect(FixtureBuilder& f, Backend b) { return hwaccel::testing::detect_backend(f, b); }

TEST(SamsungNpu, VertexTenWithTheSocFromTheDeviceTree) {
  FixtureBuilder f;
  f.file("/dev/vertex10", "");
  f.file("/proc/device-tree/compatible", std::string("samsung,r0s\0samsung,s5e9925\0", 29));
  const auto r = detect(f, Backend::samsung_npu);
  ASSERT_EQ(r.devices().size(), 1u);
  const DeviceProfile& d = r.devices()[0];
  EXPECT_EQ(d.id, "samsung_npu:0");
  EXPECT_EQ(d.family, Family::npu);
  EXPECT_EQ(d.name, "Samsung Exynos NPU (s5e9925)");
  EXPECT_TRUE(d.integrated);
  EXPECT_EQ(d.memory_kind, MemoryKind::unified);
  EXPECT_FALSE(d.memory_bytes);
  EXPECT_EQ(d.properties.at("device_node"), "/dev/vertex10");
  EXPECT_TRUE(r.warnings().empty());
}

TEST(SamsungNpu, OtherVisionNodesAreNotTheNpu) {
  FixtureBuilder f;
  f.file("/dev/vertex0", "");
  f.file("/dev/vertex1", "");
  f.file("/proc/device-tree/compatible", std::string("samsung,exynos2100\0", 19));
  EXPECT_TRUE(detect(f, Backend::samsung_npu).devices().empty());
  FixtureBuilder g;
  g.file("/dev/vertex10", "");
  g.file("/proc/device-tree/compatible", std::string("samsung,o1s\0samsung,exynos2100\0", 32));
  const auto r = detect(g, Backend::samsung_npu);
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_EQ(r.devices()[0].properties.at("soc"), "exynos2100");
}

}  // namespace
