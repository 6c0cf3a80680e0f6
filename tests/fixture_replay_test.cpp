// Replays every fixtures/machines/* through the real detectors and compares
// the registry with the fixture's expected.json. HWACCEL_UPDATE_GOLDENS=1
// rewrites the goldens instead (review the diff before committing).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "test_support.hpp"

import hwaccel;

namespace {

namespace fs = std::filesystem;
using namespace hwaccel;

bool updating_goldens() {
  const char* v = std::getenv("HWACCEL_UPDATE_GOLDENS");
  return v && std::string(v) == "1";
}

class MachineFixture : public ::testing::TestWithParam<fs::path> {};

TEST_P(MachineFixture, ReplaysToGolden) {
  const fs::path dir = GetParam();
  auto fixture = FixtureSystem::open(dir.string());
  ASSERT_TRUE(fixture) << fixture.error().message;
  const AcceleratorRegistry registry = DetectBuilder{}.detect(**fixture);
  const std::string actual = to_json(registry, JsonOptions{.pretty = true, .include_timings = false});
  const fs::path golden = dir / "expected.json";
  if (updating_goldens()) {
    hwaccel::testing::write_file(golden, actual);
    GTEST_SKIP() << "rewrote " << golden;
  }
  ASSERT_TRUE(fs::exists(golden)) << golden << " is missing; run with HWACCEL_UPDATE_GOLDENS=1 to create it";
  EXPECT_EQ(hwaccel::testing::read_file(golden), actual) << "registry of " << dir.filename() << " differs from its golden";

  // The golden itself must read back into the same registry.
  auto reread = registry_from_json(actual);
  ASSERT_TRUE(reread) << reread.error().message;
  EXPECT_EQ(to_json(*reread, JsonOptions{.pretty = true, .include_timings = false}), actual);
}

TEST_P(MachineFixture, ManifestIsHonest) {
  auto fixture = FixtureSystem::open(GetParam().string());
  ASSERT_TRUE(fixture) << fixture.error().message;
  const auto& m = (*fixture)->manifest();
  EXPECT_FALSE(m.machine.empty());
  EXPECT_FALSE(m.source.empty());
  // Every recorded command names a tool the fixture puts on PATH.
  for (const auto& c : m.commands)
    EXPECT_NE(std::find(m.tools.begin(), m.tools.end(), c.argv[0]), m.tools.end())
        << c.argv[0] << " has captured output but is not listed in tools";
}

std::string fixture_name(const ::testing::TestParamInfo<fs::path>& info) {
  std::string name = info.param.filename().string();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Machines, MachineFixture, ::testing::ValuesIn(hwaccel::testing::machine_fixtures()),
                         fixture_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(MachineFixture);

}  // namespace
