// Recording: what a detection read and ran, written as a fixture, replays to
// the same registry. Covers the live round trip (capture this machine).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "../test_support.hpp"

import hwaccel;

namespace {

namespace fs = std::filesystem;
using namespace hwaccel;
using hwaccel::testing::TempDir;
using hwaccel::testing::write_file;

std::string golden_json(const AcceleratorRegistry& r) { return to_json(r, JsonOptions{.pretty = true, .include_timings = false}); }

TEST(Recording, LiveCaptureReplaysToTheSameRegistry) {
  const auto live = make_live_system();
  RecordingSystem recorder(*live);
  const AcceleratorRegistry captured = DetectBuilder{}.detect(recorder);
  TempDir dir;
  const fs::path out = dir.path() / "capture";
  auto written = recorder.write(out.string(), "this machine", "unit test capture");
  ASSERT_TRUE(written) << written.error().message;
  EXPECT_TRUE(fs::exists(out / "fixture.json"));
  EXPECT_TRUE(fs::exists(out / "root/proc/meminfo"));

  auto replay = FixtureSystem::open(out.string());
  ASSERT_TRUE(replay) << replay.error().message;
  EXPECT_FALSE((*replay)->manifest().synthetic);
  const AcceleratorRegistry replayed = DetectBuilder{}.detect(**replay);
  EXPECT_EQ(golden_json(captured), golden_json(replayed));
}

TEST(Recording, KeepsLinkStructureAndCommands) {
  TempDir src;
  write_file(src.path() / "fixture.json", R"({"format": 1, "machine": "m", "source": "s", "synthetic": true,
    "env": {"CUDA_VISIBLE_DEVICES": "0"}, "tools": ["tool"],
    "commands": [{"argv": ["tool", "--x"], "stdout": "x.out", "exit": 3, "duration_ms": 7}]})");
  write_file(src.path() / "commands/x.out", "hello\n");
  write_file(src.path() / "root/sys/devices/pci0000:00/0000:00:02.0/vendor", "0x8086\n");
  fs::create_directories(src.path() / "root/sys/class/drm");
  fs::create_symlink("../../devices/pci0000:00/0000:00:02.0", src.path() / "root/sys/class/drm/card0");
  auto fixture = FixtureSystem::open(src.str());
  ASSERT_TRUE(fixture);

  RecordingSystem recorder(**fixture);
  ASSERT_EQ(recorder.read_file("/sys/class/drm/card0/vendor").value().data, "0x8086\n");
  ASSERT_EQ(recorder.env("CUDA_VISIBLE_DEVICES").value_or(""), "0");
  ToolRequest req;
  req.argv = {"tool", "--x"};
  ASSERT_EQ(recorder.run(req).value().exit_code, 3);

  TempDir dst;
  ASSERT_TRUE(recorder.write((dst.path() / "f").string(), "m", "s"));
  auto again = FixtureSystem::open((dst.path() / "f").string());
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_TRUE(fs::is_symlink(dst.path() / "f/root/sys/class/drm/card0"));
  EXPECT_EQ((*again)->read_file("/sys/class/drm/card0/vendor").value().data, "0x8086\n");
  EXPECT_EQ((*again)->env("CUDA_VISIBLE_DEVICES").value_or(""), "0");
  auto r = (*again)->run(req);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->out, "hello\n");
  EXPECT_EQ(r->exit_code, 3);
}

TEST(Recording, RefusesToOverwriteAFolderWithContent) {
  const auto live = make_live_system();
  RecordingSystem recorder(*live);
  TempDir dir;
  write_file(dir.path() / "keep.txt", "precious");
  auto r = recorder.write(dir.str(), "m", "s");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::invalid_input);
  EXPECT_TRUE(fs::exists(dir.path() / "keep.txt"));
}

}  // namespace
