// MediaTek APU backend: the APUsys node and the SoC from the device tree.
#include <gtest/gtest.h>

#include <string>

#include "backend_fixture.hpp"

import hwaccel;

#include "fixture_detection.hpp"

namespace {

using namespace hwaccel;
using hwaccel::testing::FixtureBuilder;

AcceleratorRegistry detect(FixtureBuilder& f, Backend b) { return hwaccel::testing::detect_backend(f, b); }

TEST(MediatekApu, ApusysNodeAndSoc) {
  FixtureBuilder f;
  f.file("/dev/apusys", "");
  f.file("/proc/device-tree/compatible", std::string("mediatek,mt6983\0", 16));
  const auto r = detect(f, Backend::mediatek_apu);
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_EQ(r.devices()[0].name, "MediaTek APU (mt6983)");
  EXPECT_TRUE(r.devices()[0].available);
  EXPECT_EQ(r.devices()[0].memory_kind, MemoryKind::unified);
  EXPECT_TRUE(r.warnings().empty());
}

TEST(MediatekApu, DriverWithoutNodeIsUnavailable) {
  FixtureBuilder f;
  f.file("/sys/class/misc/apusys/dev", "10:120\n");
  const auto r = detect(f, Backend::mediatek_apu);
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_FALSE(r.devices()[0].available);
  EXPECT_EQ(r.devices()[0].name, "MediaTek APU");
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::unsupported);
  FixtureBuilder none;
  none.file("/dev/mtk_mdla0", "");
  EXPECT_TRUE(detect(none, Backend::mediatek_apu).devices().empty());
}

}  // namespace
