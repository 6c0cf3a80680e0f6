// Fixture timelines: the format read and written canonically, and the
// layered states a TimelineSystem opens over a fixture.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

import hwaccel;

#include "timeline_builder.hpp"

namespace hwaccel {
namespace {

namespace fs = std::filesystem;
using testing::TimelineBuilder;
using testing::uevent_message;
using testing::write_text;

TEST(Timeline, ParsesAndWritesCanonically) {
  const std::string json = R"({"format": 1, "steps": [
    {"name": "lost", "events": [{"uevent": {"ACTION": "remove", "DEVPATH": "/devices/x", "SUBSYSTEM": "pci"}},
                                {"kernel_log": "3,1,2,-;NVRM: Xid (PCI:0000:ae:00): 79, gone"}],
     "state": "steps/1", "removed": ["/sys/bus/pci/devices/0000:ae:00.0"]},
    {"rescan": true}]})";
  auto t = parse_timeline(json);
  ASSERT_TRUE(t) << t.error().message;
  ASSERT_EQ(t->steps.size(), 2u);
  EXPECT_EQ(t->steps[0].events.size(), 2u);
  EXPECT_EQ(t->steps[0].state, "steps/1");
  EXPECT_TRUE(t->steps[1].rescan);
  auto again = parse_timeline(write_timeline(*t));
  ASSERT_TRUE(again);
  EXPECT_EQ(write_timeline(*again), write_timeline(*t));
  EXPECT_EQ(again->steps[0].events, t->steps[0].events);

  // A message whose variables do not repeat its header is kept raw, so that
  // it reads back as the same message.
  Timeline raw;
  raw.steps.push_back(TimelineStep{});
  raw.steps[0].events.push_back(KernelEvent{KernelEvent::Source::uevent, std::string("add@/devices/x\0SUBSYSTEM=pci\0", 29)});
  auto reread = parse_timeline(write_timeline(raw));
  ASSERT_TRUE(reread) << reread.error().message;
  EXPECT_EQ(reread->steps[0].events, raw.steps[0].events);
}

TEST(Timeline, RefusesStatesOutsideTheFixtureAndMalformedSteps) {
  EXPECT_FALSE(parse_timeline(R"({"format": 1, "steps": [{"state": "../elsewhere"}]})"));
  EXPECT_FALSE(parse_timeline(R"({"format": 1, "steps": [{"state": "/abs"}]})"));
  EXPECT_FALSE(parse_timeline(R"({"format": 1, "steps": [{"complete": true}]})"));
  EXPECT_FALSE(parse_timeline(R"({"format": 1, "steps": [{"events": [{"other": 1}]}]})"));
  EXPECT_FALSE(parse_timeline(R"({"format": 1, "steps": [{"events": [{"uevent": {"SUBSYSTEM": "pci"}}]}]})"));
  EXPECT_FALSE(parse_timeline(R"({"format": 1, "steps": [{"removed": ["relative"]}]})"));
  EXPECT_FALSE(parse_timeline(R"({"format": 2, "steps": []})"));
  EXPECT_FALSE(parse_timeline("not json"));
}

TEST(Timeline, AStepRemovingWhatIsNotThereFailsToOpen) {
  TimelineBuilder b("h100-nvl-pair-nvlink-bridge");
  b.step({.name = "typo", .removed = {"/sys/bus/pci/devices/0000:ff:00.0"}});
  auto opened = TimelineSystem::open(b.write());
  ASSERT_FALSE(opened);
  EXPECT_NE(opened.error().message.find("typo"), std::string::npos) << opened.error().message;
}

TEST(Timeline, AStateLinkedOutsideTheFixtureIsRefused) {
  TimelineBuilder b("h100-nvl-pair-nvlink-bridge");
  testing::TempDir outside;
  write_text(outside.path() / "root" / "etc" / "planted", "secret\n");
  fs::create_symlink(outside.path(), b.path() / "elsewhere");
  write_text(b.path() / "timeline.json", R"({"format": 1, "steps": [{"state": "elsewhere"}]})");
  auto opened = TimelineSystem::open(b.path().string());
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().kind, ErrorKind::escapes_root) << opened.error().message;
}

TEST(Timeline, LayersReplaceAddAndRemoveFiles) {
  TimelineBuilder b("h100-nvl-pair-nvlink-bridge");
  b.step({.name = "edit",
          .files = {{"/proc/driver/nvidia/version", "NVRM version: edited\n"}, {"/etc/added", "new\n"}},
          .removed = {"/sys/bus/pci/devices/0000:ae:00.0"}});
  auto opened = TimelineSystem::open(b.write());
  ASSERT_TRUE(opened) << opened.error().message;
  const TimelineSystem& t = **opened;
  EXPECT_TRUE(t.exists("/sys/bus/pci/devices/0000:ae:00.0"));
  const FixtureSystem& after = t.state(1);
  EXPECT_EQ(after.read_file("/proc/driver/nvidia/version")->data, "NVRM version: edited\n");
  EXPECT_EQ(after.read_file("/etc/added")->data, "new\n");
  EXPECT_FALSE(after.exists("/sys/bus/pci/devices/0000:ae:00.0"));
  EXPECT_TRUE(after.exists("/sys/bus/pci/devices/0000:ad:00.0"));
  // Files the step did not touch still come from the fixture below it.
  EXPECT_EQ(after.read_file("/proc/cpuinfo")->data, t.state(0).read_file("/proc/cpuinfo")->data);
}

}  // namespace
}  // namespace hwaccel
