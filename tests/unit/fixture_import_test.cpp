// `capture --import`: transcripts and import manifests become fixtures that
// replay, and bad input of every kind is a clear error.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <string_view>

#include "../test_support.hpp"

import hwaccel;

namespace {

namespace fs = std::filesystem;
using namespace hwaccel;
using hwaccel::testing::TempDir;
using hwaccel::testing::write_file;

TEST(CaptureTranscript, CommandsOutputsAndWhatIsLeftOut) {
  const auto c = parse_capture_transcript(
      "Here is what I see:\n"
      "$ nvidia-smi -L\n"
      "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-513536b6)\n"
      "$ nvidia-smi -q | grep Memory\n"
      "    FB Memory Usage\n"
      "$ sudo /usr/bin/hl-smi -Q 'index, name' \"--format=csv\"\n"
      "index, name\n"
      "$ cat /proc/driver/nvidia/version\n"
      "NVRM version: 535.104.05\n"
      "$ nvidia-smi -L\n"
      "a second copy\n",
      "report.txt");
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_EQ(c->commands.size(), 2u);
  EXPECT_EQ(c->commands[0].argv, (std::vector<std::string>{"nvidia-smi", "-L"}));
  EXPECT_EQ(c->commands[0].out, "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-513536b6)\n");
  // sudo dropped, the folder of the tool dropped, quotes removed.
  EXPECT_EQ(c->commands[1].argv, (std::vector<std::string>{"hl-smi", "-Q", "index, name", "--format=csv"}));
  ASSERT_EQ(c->contents.size(), 1u);
  EXPECT_EQ(c->contents.at("/proc/driver/nvidia/version"), "NVRM version: 535.104.05\n");
  // The pipeline and the repeated command are named in notes.
  ASSERT_EQ(c->notes.size(), 2u);
  EXPECT_NE(c->notes[0].find("report.txt:4"), std::string::npos) << c->notes[0];
  EXPECT_NE(c->notes[0].find("pipeline"), std::string::npos);
  EXPECT_NE(c->notes[1].find("twice"), std::string::npos) << c->notes[1];
}

TEST(CaptureTranscript, TextWithoutACommandIsAParseError) {
  const auto c = parse_capture_transcript("GPU 0: NVIDIA A100 (UUID: GPU-1)\n", "paste.txt");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().kind, ErrorKind::parse_error);
  EXPECT_NE(c.error().message.find("\"$ \""), std::string::npos) << c.error().message;
  EXPECT_FALSE(parse_capture_transcript("", "empty.txt"));
  // Only left-out lines: nothing to replay.
  const auto only_pipes = parse_capture_transcript("$ dmesg | grep nvidia\nNVRM: loaded\n", "p.txt");
  ASSERT_FALSE(only_pipes);
  EXPECT_EQ(only_pipes.error().kind, ErrorKind::invalid_input);
}

// Fuzz finding: "$ dir/" names a folder, not a tool; it is left out with a note, never an empty tool name.
TEST(CaptureTranscript, ACommandWithoutAToolNameIsLeftOut) {
  const auto c = parse_capture_transcript("$ nvidia-smi -L\nGPU 0: X (UUID: GPU-1)\n$ sver/nvidv/\nN\n", "t.txt");
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_EQ(c->commands.size(), 1u);
  ASSERT_EQ(c->notes.size(), 1u);
  EXPECT_NE(c->notes[0].find("names no tool"), std::string::npos) << c->notes[0];
}

TEST(CaptureImport, ManifestReplaysThroughTheDetector) {
  TempDir dir;
  write_file(dir.path() / "in/L.txt", "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)\nGPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-2)\n");
  write_file(dir.path() / "in/topo.err", "ERROR: Option -m is missing its value\n");
  write_file(dir.path() / "in/copied/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14\n");
  fs::create_symlink("version", dir.path() / "in/copied/alias");
  write_file(dir.path() / "in/import.json", R"({
    "machine": "two H100 from a report",
    "env": {"CUDA_VISIBLE_DEVICES": "1"},
    "commands": [
      {"argv": "nvidia-smi -L", "stdout": "L.txt"},
      {"argv": ["nvidia-smi", "topo", "-m"], "stdout": "topo.err", "exit": 255}
    ],
    "files": [{"path": "/proc/driver/nvidia", "from": "copied"}]
  })");
  const auto summary = import_capture((dir.path() / "in").string(), (dir.path() / "out").string());
  ASSERT_TRUE(summary) << summary.error().message;
  EXPECT_EQ(summary->commands, 2u);
  EXPECT_EQ(summary->files, 1u);
  EXPECT_TRUE(fs::is_symlink(dir.path() / "out/root/proc/driver/nvidia/alias"));
  auto system = FixtureSystem::open((dir.path() / "out").string());
  ASSERT_TRUE(system) << system.error().message;
  EXPECT_EQ((*system)->manifest().machine, "two H100 from a report");
  EXPECT_FALSE((*system)->manifest().synthetic);
  EXPECT_EQ((*system)->env("CUDA_VISIBLE_DEVICES"), "1");
  const auto r = DetectBuilder::none().with(Backend::cuda).system_probes(false).detect(**system);
  ASSERT_EQ(r.devices().size(), 2u);
  EXPECT_EQ(r.devices()[1].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(r.devices()[1].compute_capability, "9.0");
  EXPECT_FALSE(r.devices()[1].memory_bytes);  // `-L` says nothing of memory
}

TEST(CaptureImport, BadManifestsAreClearErrors) {
  TempDir dir;
  write_file(dir.path() / "out.txt", "x\n");
  struct Case {
    std::string_view manifest;
    ErrorKind kind;
    std::string_view says;
  };
  const Case cases[] = {
      {"{", ErrorKind::parse_error, "not valid JSON"},
      {"[]", ErrorKind::parse_error, "JSON object"},
      {"{}", ErrorKind::invalid_input, "nothing to import"},
      {R"({"commands": [{"argv": [], "stdout": "out.txt"}]})", ErrorKind::invalid_input, "empty command"},
      {R"({"commands": [{"argv": "nvidia-smi 'open", "stdout": "out.txt"}]})", ErrorKind::parse_error, "unclosed quote"},
      {R"({"commands": [{"argv": ["a"]}]})", ErrorKind::parse_error, "stdout"},
      {R"({"commands": [{"argv": ["a"], "stdout": "missing.txt"}]})", ErrorKind::not_found, "missing.txt"},
      {R"({"commands": [{"argv": ["a"], "stdout": "out.txt", "exit": 300}]})", ErrorKind::parse_error, "exit"},
      {R"({"files": [{"path": "relative", "from": "out.txt"}]})", ErrorKind::invalid_input, "absolute"},
      {R"({"files": [{"path": "/proc/../../etc", "from": "out.txt"}]})", ErrorKind::invalid_input, "absolute"},
      {R"({"env": {"A": 1}, "files": [{"path": "/x", "from": "out.txt"}]})", ErrorKind::parse_error, "env"},
  };
  int n = 0;
  for (const auto& c : cases) {
    const fs::path manifest = dir.path() / ("m" + std::to_string(n) + ".json");
    write_file(manifest, c.manifest);
    const auto r = import_capture(manifest.string(), (dir.path() / ("out" + std::to_string(n++))).string());
    ASSERT_FALSE(r) << c.manifest;
    EXPECT_EQ(r.error().kind, c.kind) << c.manifest << ": " << r.error().message;
    EXPECT_NE(r.error().message.find(c.says), std::string::npos) << r.error().message;
  }
}

TEST(CaptureImport, NeverWritesIntoAFolderThatHoldsSomething) {
  TempDir dir;
  write_file(dir.path() / "t.txt", "$ nvidia-smi -L\nGPU 0: X (UUID: GPU-1)\n");
  write_file(dir.path() / "busy/keep.txt", "mine");
  const auto r = import_capture((dir.path() / "t.txt").string(), (dir.path() / "busy").string());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::invalid_input);
  EXPECT_TRUE(fs::exists(dir.path() / "busy/keep.txt"));
  EXPECT_FALSE(import_capture((dir.path() / "nothing-here").string(), (dir.path() / "o").string()));
}

}  // namespace
