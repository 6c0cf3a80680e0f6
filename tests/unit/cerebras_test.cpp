// Cerebras backend: a host sees no local CS system; the cluster client is named.
#include <gtest/gtest.h>

#include <string>

#include "backend_fixture.hpp"

import hwaccel;

#include "fixture_detection.hpp"

namespace {

using namespace hwaccel;
using hwaccel::testing::FixtureBuilder;

AcceleratorRegistry detect(FixtureBuilder& f, Backend b) { return hwaccel::testing::detect_backend(f, b); }

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
