// Cerebras backend: a host sees no local CS system; the cluster client is named.
#include <gtest/gtest.h>

#include <string>

#include "backend_fixture.hpp"

import hwaccel;

namespace {

using namespace hwaccel;
using hwaccel::testing::FixtureBuilder;

AcceleratorRegistry detect(FixtureBuilder& f, Backend b) {
  auto sys = FixtureSystem::open(f.write());
  EXPECT_TRUE(sys) << sys.error().message;
  return DetectBuilder::none().with(b).system_probes(false).detect(**sys);
}

TEST(Cerebras, ClusterClientIsNamedButNoDeviceIsInvented) {
  FixtureBuilder f;
  f.tool("csctl");
  const auto r = detect(f, Backend::cerebras);
  EXPECT_TRUE(r.devices().empty());
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::unsupported);
  EXPECT_NE(r.warnings()[0].message.find("network-attached"), std::string::npos);
  FixtureBuilder none;
  none.file("/dev/cerebras0", "");  // not a node Cerebras ships; never matched
  const auto r2 = detect(none, Backend::cerebras);
  EXPECT_TRUE(r2.devices().empty());
  EXPECT_TRUE(r2.warnings().empty());
}

}  // namespace
