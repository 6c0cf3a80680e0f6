// Fixture replay: manifest validation, path resolution inside the root,
// hostile trees, and command matching.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "../test_support.hpp"

import hwaccel;

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using hwaccel::ErrorKind;
using hwaccel::testing::TempDir;
using hwaccel::testing::write_file;

constexpr const char* minimal_manifest = R"({"format": 1, "machine": "test box", "source": "hand-written", "synthetic": true})";

class Fixture : public ::testing::Test {
 protected:
  TempDir dir_;
  fs::path root() const { return dir_.path() / "root"; }

  void manifest(const std::string& json) { write_file(dir_.path() / "fixture.json", json); }

  std::unique_ptr<hwaccel::FixtureSystem> open(hwaccel::FixtureOptions options = {}) {
    auto f = hwaccel::FixtureSystem::open(dir_.str(), options);
    EXPECT_TRUE(f) << (f ? "" : f.error().message);
    return f ? std::move(*f) : nullptr;
  }

  hwaccel::Error open_error() {
    auto f = hwaccel::FixtureSystem::open(dir_.str());
    EXPECT_FALSE(f);
    return f ? hwaccel::Error{} : f.error();
  }
};

TEST_F(Fixture, MissingManifestIsAClearError) {
  const auto e = open_error();
  EXPECT_EQ(e.kind, ErrorKind::not_found);
  EXPECT_NE(e.message.find("fixture.json"), std::string::npos) << e.message;
}

TEST_F(Fixture, ManifestFieldsAreValidated) {
  const std::pair<const char*, const char*> cases[] = {
      {"{", "not valid JSON"},
      {"[]", "must be a JSON object"},
      {R"({"machine": "m", "source": "s", "synthetic": true})", "\"format\""},
      {R"({"format": 2, "machine": "m", "source": "s", "synthetic": true})", "unsupported format 2"},
      {R"({"format": 1, "source": "s", "synthetic": true})", "\"machine\""},
      {R"({"format": 1, "machine": "m", "synthetic": true})", "\"source\""},
      {R"({"format": 1, "machine": "m", "source": "s"})", "\"synthetic\""},
      {R"({"format": 1, "machine": "m", "source": "s", "synthetic": "yes"})", "\"synthetic\""},
      {R"({"format": 1, "machine": "m", "source": "s", "synthetic": true, "env": {"A": 1}})", "env \"A\""},
      {R"({"format": 1, "machine": "m", "source": "s", "synthetic": true, "tools": ["/usr/bin/x"]})", "bare tool name"},
      {R"({"format": 1, "machine": "m", "source": "s", "synthetic": true, "commands": [{"stdout": "x", "exit": 0}]})",
       "\"argv\""},
      {R"({"format": 1, "machine": "m", "source": "s", "synthetic": true, "commands": [{"argv": ["t"], "exit": 0}]})",
       "\"stdout\""},
      {R"({"format": 1, "machine": "m", "source": "s", "synthetic": true, "commands": [{"argv": ["t"], "stdout": "o"}]})",
       "\"exit\""},
      {R"({"format": 1, "machine": "m", "source": "s", "synthetic": true, "commands": [{"argv": ["t"], "stdout": "../../etc/passwd", "exit": 0}]})",
       "leaves commands/"},
      {R"({"format": 1, "machine": "m", "source": "s", "synthetic": true, "commands": [{"argv": ["t"], "stdout": "o", "exit": 0, "duration_ms": -5}]})",
       "duration_ms"},
  };
  for (const auto& [json, expected] : cases) {
    manifest(json);
    const auto e = open_error();
    EXPECT_NE(e.message.find(expected), std::string::npos) << "manifest " << json << " gave: " << e.message;
  }
}

TEST_F(Fixture, ServesFilesDirectoriesAndEnvironment) {
  manifest(R"({"format": 1, "machine": "m", "source": "s", "synthetic": true, "env": {"CUDA_VISIBLE_DEVICES": "1,0"}})");
  write_file(root() / "proc/meminfo", "MemTotal: 1024 kB\n");
  write_file(root() / "sys/class/drm/card0/device/vendor", "0x1002\n");
  auto f = open();
  ASSERT_TRUE(f);
  auto r = f->read_file("/proc/meminfo");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->data, "MemTotal: 1024 kB\n");
  auto capped = f->read_file("/proc/meminfo", 4);
  ASSERT_TRUE(capped);
  EXPECT_EQ(capped->data, "MemT");
  EXPECT_TRUE(capped->truncated);
  auto listing = f->list_dir("/sys/class/drm");
  ASSERT_TRUE(listing);
  ASSERT_EQ(listing->size(), 1u);
  EXPECT_EQ((*listing)[0].name, "card0");
  EXPECT_EQ(f->env("CUDA_VISIBLE_DEVICES").value_or(""), "1,0");
  EXPECT_FALSE(f->env("HOME"));
  EXPECT_EQ(f->read_file("/nope").error().kind, ErrorKind::not_found);
  EXPECT_EQ(f->read_file("relative/path").error().kind, ErrorKind::invalid_input);
}

TEST_F(Fixture, SymlinksResolveInsideTheRoot) {
  manifest(minimal_manifest);
  write_file(root() / "sys/devices/pci0000:00/0000:00:01.0/vendor", "0x10de\n");
  fs::create_directories(root() / "sys/bus/pci/devices");
  fs::create_symlink("../../../devices/pci0000:00/0000:00:01.0", root() / "sys/bus/pci/devices/0000:00:01.0");
  // An absolute target means "from the fixture root", never the host's root.
  fs::create_symlink("/sys/devices/pci0000:00/0000:00:01.0/vendor", root() / "abs");
  auto f = open();
  ASSERT_TRUE(f);
  EXPECT_EQ(f->read_file("/sys/bus/pci/devices/0000:00:01.0/vendor").value().data, "0x10de\n");
  EXPECT_EQ(f->read_file("/abs").value().data, "0x10de\n");
  EXPECT_EQ(f->read_link("/sys/bus/pci/devices/0000:00:01.0").value(), "../../../devices/pci0000:00/0000:00:01.0");
  EXPECT_EQ(f->status("/sys/bus/pci/devices/0000:00:01.0", false).value().type, hwaccel::FileType::symlink);
  EXPECT_EQ(f->status("/sys/bus/pci/devices/0000:00:01.0", true).value().type, hwaccel::FileType::directory);
  EXPECT_EQ(f->read_file("/sys/bus/pci/devices/0000:00:01.0/../0000:00:01.0/vendor").value().data, "0x10de\n");
}

TEST_F(Fixture, SymlinkEscapingTheRootIsAnError) {
  manifest(minimal_manifest);
  fs::create_directories(root() / "proc");
  fs::create_symlink("../../../../../../../../etc/passwd", root() / "proc/meminfo");
  auto f = open();
  ASSERT_TRUE(f);
  auto r = f->read_file("/proc/meminfo");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::escapes_root);
  EXPECT_EQ(f->read_file("/../../etc/passwd").error().kind, ErrorKind::escapes_root);
}

TEST_F(Fixture, SymlinkLoopIsAnError) {
  manifest(minimal_manifest);
  fs::create_directories(root() / "sys");
  fs::create_symlink("b", root() / "sys/a");
  fs::create_symlink("a", root() / "sys/b");
  fs::create_symlink(".", root() / "sys/self");
  auto f = open();
  ASSERT_TRUE(f);
  EXPECT_EQ(f->read_file("/sys/a").error().kind, ErrorKind::symlink_loop);
  EXPECT_EQ(f->list_dir("/sys/self/self/self/self").value().size(), 3u);
}

TEST_F(Fixture, FifoAndDeviceNodesAreNeverRead) {
  manifest(minimal_manifest);
  fs::create_directories(root() / "proc");
  ASSERT_EQ(::mkfifo((root() / "proc/meminfo").c_str(), 0644), 0);
  auto f = open();
  ASSERT_TRUE(f);
  const auto start = std::chrono::steady_clock::now();
  auto r = f->read_file("/proc/meminfo");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::not_regular_file);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST_F(Fixture, HugeSparseFileIsReadOnlyUpToTheCap) {
  manifest(minimal_manifest);
  write_file(root() / "proc/cpuinfo", "");
  ASSERT_EQ(::truncate((root() / "proc/cpuinfo").c_str(), off_t{1} << 30), 0);
  auto f = open();
  ASSERT_TRUE(f);
  auto r = f->read_file("/proc/cpuinfo", 65536);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->data.size(), 65536u);
  EXPECT_TRUE(r->truncated);
}

TEST_F(Fixture, CommandsMatchByExactArgv) {
  manifest(R"({"format": 1, "machine": "m", "source": "s", "synthetic": true,
    "tools": ["nvidia-smi", "rocm-smi"],
    "commands": [
      {"argv": ["nvidia-smi", "-L"], "stdout": "L.txt", "stderr": "L.err", "exit": 0, "duration_ms": 30},
      {"argv": ["nvidia-smi", "topo", "-m"], "stdout": "topo.txt", "exit": 255},
      {"argv": ["rocm-smi", "--showtopo"], "stdout": "empty.txt", "exit": 0, "hang": true}
    ]})");
  write_file(dir_.path() / "commands/L.txt", "GPU 0: NVIDIA H100 80GB HBM3\n");
  write_file(dir_.path() / "commands/L.err", "warning\n");
  write_file(dir_.path() / "commands/topo.txt", "ERROR: Option -m is missing its value\n");
  write_file(dir_.path() / "commands/empty.txt", "");
  auto f = open();
  ASSERT_TRUE(f);
  EXPECT_TRUE(f->find_tool("nvidia-smi"));
  EXPECT_FALSE(f->find_tool("hl-smi"));

  hwaccel::ToolRequest req;
  req.argv = {"nvidia-smi", "-L"};
  auto r = f->run(req);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->out, "GPU 0: NVIDIA H100 80GB HBM3\n");
  EXPECT_EQ(r->err, "warning\n");

  req.argv = {"nvidia-smi", "topo", "-m"};
  r = f->run(req);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->exit_code, 255);

  req.argv = {"nvidia-smi", "-q"};
  EXPECT_EQ(f->run(req).error().kind, ErrorKind::not_captured);
  req.argv = {"hl-smi", "-L"};
  EXPECT_EQ(f->run(req).error().kind, ErrorKind::tool_not_found);
  req.argv = {"rocm-smi", "--showtopo"};
  EXPECT_EQ(f->run(req).error().kind, ErrorKind::timeout);
}

TEST_F(Fixture, SimulatedDurationsAndHangsHonourTheDeadline) {
  manifest(R"({"format": 1, "machine": "m", "source": "s", "synthetic": true, "tools": ["slow", "stuck"],
    "commands": [{"argv": ["slow"], "stdout": "o", "exit": 0, "duration_ms": 120},
                 {"argv": ["stuck"], "stdout": "o", "exit": 0, "hang": true}]})");
  write_file(dir_.path() / "commands/o", "x");
  hwaccel::FixtureOptions options;
  options.simulate_durations = true;
  auto f = open(options);
  ASSERT_TRUE(f);
  hwaccel::ToolRequest req;
  req.argv = {"slow"};
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(f->run(req));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 100ms);
  req.argv = {"stuck"};
  req.timeout = 150ms;
  start = std::chrono::steady_clock::now();
  EXPECT_EQ(f->run(req).error().kind, ErrorKind::timeout);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 140ms);
}

TEST_F(Fixture, CapturedOutputCannotPointOutsideTheFixture) {
  manifest(R"({"format": 1, "machine": "m", "source": "s", "synthetic": true, "tools": ["t"],
    "commands": [{"argv": ["t"], "stdout": "sub/out", "exit": 0}]})");
  TempDir outside;
  write_file(outside.path() / "out", "secret");
  fs::create_directories(dir_.path() / "commands");
  fs::create_symlink(outside.path(), dir_.path() / "commands/sub");
  auto f = open();
  ASSERT_TRUE(f);
  hwaccel::ToolRequest req;
  req.argv = {"t"};
  auto r = f->run(req);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::escapes_root);
}

TEST_F(Fixture, ManifestRoundTrips) {
  hwaccel::FixtureManifest m;
  m.machine = "box \"quoted\"";
  m.source = "hand-written";
  m.synthetic = true;
  m.env = {{"A", "1"}};
  m.tools = {"nvidia-smi"};
  hwaccel::CommandRecord c;
  c.argv = {"nvidia-smi", "--query-gpu=index", "--format=csv"};
  c.stdout_path = "00-nvidia-smi.stdout";
  c.exit = 0;
  c.duration_ms = 42;
  m.commands.push_back(c);
  const std::string text = hwaccel::write_fixture_manifest(m);
  auto back = hwaccel::parse_fixture_manifest(text);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->machine, m.machine);
  EXPECT_EQ(back->env, m.env);
  EXPECT_EQ(back->tools, m.tools);
  ASSERT_EQ(back->commands.size(), 1u);
  EXPECT_EQ(back->commands[0].argv, c.argv);
  EXPECT_EQ(back->commands[0].duration_ms, 42u);
}

}  // namespace
