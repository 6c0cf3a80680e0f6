// Fixture replay: manifest validation, path resolution inside the root,
// hostile trees, command matching, and the identity and permissions a
// manifest gives.
#include <gtest/gtest.h>

#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

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

// Folders resolved once are kept: asking again, and asking for other names in
// them, gives what walking the whole path gives, errors included.
TEST_F(Fixture, RepeatedLookupsAnswerAsTheFirst) {
  manifest(minimal_manifest);
  write_file(root() / "sys/devices/pci0000:00/0000:00:01.0/vendor", "0x10de\n");
  write_file(root() / "sys/devices/pci0000:00/0000:00:01.0/device", "0x2330\n");
  write_file(root() / "sys/devices/pci0000:00/0000:00:01.0/file", "not a folder\n");
  fs::create_directories(root() / "sys/bus/pci/devices");
  fs::create_symlink("../../../devices/pci0000:00/0000:00:01.0", root() / "sys/bus/pci/devices/0000:00:01.0");
  fs::create_symlink("vendor", root() / "sys/devices/pci0000:00/0000:00:01.0/vendor_link");
  fs::create_symlink("../../../../../../x", root() / "sys/devices/pci0000:00/0000:00:01.0/escape");
  auto f = open();
  ASSERT_TRUE(f);
  const std::string dir = "/sys/bus/pci/devices/0000:00:01.0";
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round);
    EXPECT_EQ(f->read_file(dir + "/vendor").value().data, "0x10de\n");
    EXPECT_EQ(f->read_file(dir + "/device").value().data, "0x2330\n");
    EXPECT_EQ(f->read_file(dir + "/vendor_link").value().data, "0x10de\n");
    EXPECT_EQ(f->status(dir + "/vendor_link", false).value().type, hwaccel::FileType::symlink);
    EXPECT_EQ(f->read_link(dir + "/vendor_link").value(), "vendor");
    const auto missing = f->read_file(dir + "/missing");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().kind, ErrorKind::not_found);
    EXPECT_NE(missing.error().message.find(dir + "/missing: no such file or directory"), std::string::npos)
        << missing.error().message;
    EXPECT_EQ(f->read_file(dir + "/escape").error().kind, ErrorKind::escapes_root);
    EXPECT_EQ(f->read_file(dir + "/file/below").error().kind, ErrorKind::not_found);
    EXPECT_EQ(f->read_file("/sys/bus/pci/devices/0000:00:02.0/vendor").error().kind, ErrorKind::not_found);
    EXPECT_EQ(f->list_dir(dir).value().size(), 5u);
    EXPECT_EQ(f->read_file(dir + "/../0000:00:01.0/vendor").value().data, "0x10de\n");
  }
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

// ---- hostile roots ---------------------------------------------------------
//
// A fixture may come from anyone (docs/threat-model.md): nothing in it may
// make replay read outside the fixture folder, block, or hold unbounded
// memory, and a detection over it gives warnings, never an error.

using hwaccel::testing::FixtureBuilder;

hwaccel::AcceleratorRegistry detect_everything(const hwaccel::System& system) {
  return hwaccel::AcceleratorRegistry::builder().tool_timeout(1000ms).detect(system);
}

// The registry's JSON reads back, which also proves it is valid UTF-8.
void expect_sound_json(const hwaccel::AcceleratorRegistry& registry) {
  const std::string json = hwaccel::to_json(registry);
  const auto back = hwaccel::registry_from_json(json);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(hwaccel::to_json(*back), json);
}

// Runs `body` on a thread without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH
// in its effective set (capabilities are per thread on Linux), so that
// permission bits stop it even when the tests run as root. Returns a reason
// when that cannot be arranged.
std::optional<std::string> run_subject_to_permissions(const std::function<void()>& body) {
  if (::geteuid() != 0) {
    body();
    return std::nullopt;
  }
  std::optional<std::string> problem;
  std::thread worker([&] {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3]{};
    if (::syscall(SYS_capget, &header, data) != 0) {
      problem = std::string("capget: ") + std::strerror(errno);
      return;
    }
    for (const int cap : {CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH}) data[cap / 32].effective &= ~(1u << (cap % 32));
    if (::syscall(SYS_capset, &header, data) != 0) {
      problem = std::string("capset: ") + std::strerror(errno);
      return;
    }
    body();
  });
  worker.join();
  return problem;
}

TEST(HostileFixture, EscapingLinksLoopsAndChainsAreRefused) {
  // fixtures/hostile/escaping-links: every link there leads to ../canary
  // (outside the fixture, where a naive resolver would find plausible
  // meminfo, nvidia-smi output and an Apple device tree), loops, or is longer
  // than the 40-link limit.
  auto f = hwaccel::FixtureSystem::open((hwaccel::testing::fixtures_root() / "hostile" / "escaping-links").string());
  ASSERT_TRUE(f) << f.error().message;
  const auto& system = **f;
  EXPECT_EQ(system.read_file("/proc/meminfo").error().kind, ErrorKind::escapes_root);
  EXPECT_EQ(system.read_file("/etc/os-release").error().kind, ErrorKind::escapes_root);
  EXPECT_EQ(system.read_file("/proc/device-tree/compatible").error().kind, ErrorKind::escapes_root);
  EXPECT_EQ(system.read_file("/proc/self/mountinfo").error().kind, ErrorKind::escapes_root);
  EXPECT_EQ(system.list_dir("/sys/class/drm").error().kind, ErrorKind::escapes_root);
  EXPECT_EQ(system.list_dir("/sys/class/accel/accel0").error().kind, ErrorKind::escapes_root);
  EXPECT_EQ(system.read_file("/dev/nvidia0").error().kind, ErrorKind::escapes_root);
  // An absolute link to itself, two links to each other, a folder linked to ".".
  EXPECT_EQ(system.read_file("/proc/cpuinfo").error().kind, ErrorKind::symlink_loop);
  EXPECT_EQ(system.read_file("/sys/bus/pci/devices/0000:01:00.0/vendor").error().kind, ErrorKind::symlink_loop);
  std::string self_loop = "/sys/class";
  for (int i = 0; i < 41; ++i) self_loop += "/kfd";
  EXPECT_EQ(system.list_dir(self_loop).error().kind, ErrorKind::symlink_loop);
  EXPECT_EQ(system.list_dir("/sys/class/kfd/kfd/topology/nodes").error().kind, ErrorKind::not_found);
  // A chain of 40 links is followed; 41 are a loop.
  EXPECT_EQ(system.read_file("/sys/devices/chain/l2/vendor").value().data, "0x10de\n");
  EXPECT_EQ(system.read_file("/sys/devices/chain/l1/vendor").error().kind, ErrorKind::symlink_loop);
  EXPECT_EQ(system.read_file("/sys/bus/pci/drivers/nvidia/0000:01:00.0/vendor").error().kind, ErrorKind::symlink_loop);
  // Captured outputs linked from outside commands/, as a file and through a folder.
  hwaccel::ToolRequest request;
  request.argv = {"nvidia-smi", "-L"};
  EXPECT_EQ(system.run(request).error().kind, ErrorKind::escapes_root);
  request.argv = hwaccel::nvidia_smi_argv::query();
  EXPECT_EQ(system.run(request).error().kind, ErrorKind::escapes_root);
}

TEST(HostileFixture, DetectionOverEscapingLinksWarnsAndReadsNothingOutside) {
  auto f = hwaccel::FixtureSystem::open((hwaccel::testing::fixtures_root() / "hostile" / "escaping-links").string());
  ASSERT_TRUE(f) << f.error().message;
  const auto registry = detect_everything(**f);
  expect_sound_json(registry);
  const std::string json = hwaccel::to_json(registry);
  EXPECT_EQ(json.find("CANARY"), std::string::npos) << "something outside the fixture was read: " << json;
  EXPECT_EQ(json.find("ca7a4177"), std::string::npos) << json;
  // The CPU without its memory (meminfo leads outside), and the one GPU the
  // nvidia driver's folder lists, from sysfs alone: not the canary GPU.
  ASSERT_EQ(registry.devices().size(), 2u) << json;
  EXPECT_EQ(registry.devices()[0].id, "cpu:0");
  EXPECT_FALSE(registry.devices()[0].memory_bytes);
  EXPECT_EQ(registry.devices()[1].id, "cuda:0");
  EXPECT_EQ(registry.devices()[1].pci_bus_id, "0000:01:00.0");
  EXPECT_FALSE(registry.devices()[1].memory_bytes);
  EXPECT_FALSE(registry.devices()[1].uuid);
  // The refused reads are warnings, naming what was refused.
  bool cuda_warned = false;
  for (const auto& w : registry.warnings())
    if (w.backend == "cuda" && w.message.find("leads outside the fixture") != std::string::npos) cuda_warned = true;
  EXPECT_TRUE(cuda_warned) << json;
}

TEST(HostileFixture, DeviceNodesAreNeverRead) {
  FixtureBuilder f;
  f.file("/proc/cpuinfo", "processor\t: 0\nmodel name\t: Test CPU\n");
  const auto node = [&](std::string_view machine_path, mode_t type, unsigned major, unsigned minor) {
    const auto path = f.path() / "root" / std::string(machine_path.substr(1));
    fs::create_directories(path.parent_path());
    return ::mknod(path.c_str(), type | 0644, makedev(major, minor)) == 0;
  };
  // /dev/zero where meminfo should be, /dev/urandom as a PCI attribute, a loop
  // device as a KFD properties file.
  if (!node("/proc/meminfo", S_IFCHR, 1, 5)) GTEST_SKIP() << "mknod needs CAP_MKNOD (run as root): " << std::strerror(errno);
  ASSERT_TRUE(node("/sys/devices/pci0000:00/0000:01:00.0/vendor", S_IFCHR, 1, 9));
  ASSERT_TRUE(node("/sys/class/kfd/kfd/topology/nodes/0/properties", S_IFBLK, 7, 0));
  f.link("/sys/bus/pci/devices/0000:01:00.0", "../../../devices/pci0000:00/0000:01:00.0");
  auto system = hwaccel::FixtureSystem::open(f.write());
  ASSERT_TRUE(system) << system.error().message;
  for (const char* path : {"/proc/meminfo", "/sys/bus/pci/devices/0000:01:00.0/vendor",
                           "/sys/class/kfd/kfd/topology/nodes/0/properties"}) {
    const auto r = (*system)->read_file(path);
    ASSERT_FALSE(r) << path;
    EXPECT_EQ(r.error().kind, ErrorKind::not_regular_file) << path;
  }
  EXPECT_EQ((*system)->status("/proc/meminfo").value().type, hwaccel::FileType::char_device);
  const auto start = std::chrono::steady_clock::now();
  const auto registry = detect_everything(**system);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  expect_sound_json(registry);
  ASSERT_TRUE(registry.find("cpu:0"));
  EXPECT_FALSE(registry.find("cpu:0")->memory_bytes) << "memory read from a device node";
}

TEST(HostileFixture, UnreadableFilesAndFoldersAreWarningsNotErrors) {
  FixtureBuilder f;
  f.file("/proc/meminfo", "MemTotal: 1024 kB\n")
      .file("/proc/cpuinfo", "processor\t: 0\nmodel name\t: Test CPU\n")
      .file("/sys/class/drm/card0/device/vendor", "0x1002\n")
      .file("/sys/class/kfd/kfd/topology/nodes/0/properties", "simd_count 0\n");
  const fs::path root = f.path() / "root";
  fs::permissions(root / "proc/meminfo", fs::perms::none);
  fs::permissions(root / "sys/class/drm", fs::perms::none);
  fs::permissions(root / "sys/class/kfd/kfd/topology/nodes/0", fs::perms::none);
  const std::string dir = f.write();
  const auto problem = run_subject_to_permissions([&] {
    auto system = hwaccel::FixtureSystem::open(dir);
    ASSERT_TRUE(system) << system.error().message;
    EXPECT_EQ((*system)->read_file("/proc/meminfo").error().kind, ErrorKind::permission_denied);
    EXPECT_EQ((*system)->list_dir("/sys/class/drm").error().kind, ErrorKind::permission_denied);
    EXPECT_EQ((*system)->read_file("/sys/class/drm/card0/device/vendor").error().kind, ErrorKind::permission_denied);
    EXPECT_EQ((*system)->list_dir("/sys/class/kfd/kfd/topology/nodes/0").error().kind, ErrorKind::permission_denied);
    EXPECT_EQ((*system)->read_file("/proc/cpuinfo").value().data, "processor\t: 0\nmodel name\t: Test CPU\n");
    const auto registry = detect_everything(**system);
    expect_sound_json(registry);
    ASSERT_TRUE(registry.find("cpu:0"));
    EXPECT_EQ(registry.find("cpu:0")->name, "Test CPU");
    bool warned = false;
    for (const auto& w : registry.warnings())
      if (w.kind == hwaccel::WarningKind::permission_denied && w.message.find("/proc/meminfo") != std::string::npos) warned = true;
    EXPECT_TRUE(warned) << hwaccel::to_json(registry);
  });
  if (problem) GTEST_SKIP() << "cannot drop CAP_DAC_OVERRIDE to make permission bits bind root: " << *problem;
}

TEST(HostileFixture, SparseGigabyteFilesCostNoMemory) {
  FixtureBuilder f;
  f.command({"qaic-util", "-q"}, "");
  const std::vector<std::string> paths = {"/proc/meminfo", "/proc/cpuinfo", "/proc/self/mountinfo",
                                          "/proc/self/cgroup", "/sys/class/drm/card0/device/vendor",
                                          "/sys/class/kfd/kfd/topology/nodes/0/properties",
                                          "/sys/class/dmi/id/product_name"};
  for (const auto& p : paths) f.file(p, "");
  f.write();
  for (const auto& p : paths) ASSERT_EQ(::truncate((f.path() / "root" / p.substr(1)).c_str(), off_t{1} << 30), 0) << p;
  ASSERT_EQ(::truncate((f.path() / "commands" / "0.out").c_str(), off_t{1} << 30), 0);
  const long before = hwaccel::testing::peak_rss_kib();
  auto system = hwaccel::FixtureSystem::open(f.path().string());
  ASSERT_TRUE(system) << system.error().message;
  const auto start = std::chrono::steady_clock::now();
  const auto registry = detect_everything(**system);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 20s);
  expect_sound_json(registry);
  // Eight files of 1 GiB: reads stop at their caps (the largest, a tool's
  // output, at 32 MiB), so the detection never holds more than a few caps.
  EXPECT_LT(hwaccel::testing::peak_rss_kib() - before, 192 * 1024) << "peak RSS grew by more than 192 MiB";
}

TEST(HostileFixture, FifosWhereFilesAndOutputsShouldBeNeverBlock) {
  FixtureBuilder f;
  f.command({"tpu-info"}, "");
  f.file("/proc/cpuinfo", "processor\t: 0\n");
  f.write();
  for (const char* p : {"root/proc/meminfo", "root/proc/self/mountinfo", "root/sys/class/accel/accel0/dev"}) {
    fs::create_directories((f.path() / p).parent_path());
    ASSERT_EQ(::mkfifo((f.path() / p).c_str(), 0644), 0) << p;
  }
  fs::remove(f.path() / "commands" / "0.out");
  ASSERT_EQ(::mkfifo((f.path() / "commands" / "0.out").c_str(), 0644), 0);
  auto system = hwaccel::FixtureSystem::open(f.path().string());
  ASSERT_TRUE(system) << system.error().message;
  hwaccel::ToolRequest request;
  request.argv = {"tpu-info"};
  EXPECT_EQ((*system)->run(request).error().kind, ErrorKind::not_regular_file);
  const auto start = std::chrono::steady_clock::now();
  const auto registry = detect_everything(**system);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s) << "a read blocked on a FIFO";
  expect_sound_json(registry);
}

TEST(HostileFixture, NonUtf8NamesAreServedAndReportedAsValidUtf8) {
  FixtureBuilder f;
  const std::string bad = "\xff\xfe\xc3";
  f.file("/proc/cpuinfo", "processor\t: 0\nmodel name\t: Test \xff CPU\n")
      .file("/sys/class/drm/card" + bad + "/device/vendor", "0x1002\n")
      .file("/sys/devices/pci0000:00/0000:01:00.0/vendor", "0x10de\n")
      .file("/sys/devices/pci0000:00/0000:01:00.0/accel/accel" + bad + "/dev", "261:0\n")
      .link("/sys/bus/pci/drivers/nvidia/" + bad, "../../../../devices/pci0000:00/0000:01:00.0")
      .link("/sys/class/accel/accel" + bad, "../../devices/pci0000:00/0000:01:00.0/accel/accel" + bad)
      .link("/sys/devices/pci0000:00/0000:01:00.0/driver", "../../../bus/pci/drivers/intel_vpu" + bad)
      .file("/proc/self/mountinfo", "1 0 8:1 / / rw - overlay overlay rw,lowerdir=/var/lib/docker/" + bad + "\n")
      .file("/dev/accel/accel" + bad, "");
  auto system = hwaccel::FixtureSystem::open(f.write());
  ASSERT_TRUE(system) << system.error().message;
  const auto listing = (*system)->list_dir("/sys/class/accel");
  ASSERT_TRUE(listing);
  ASSERT_EQ(listing->size(), 1u);
  EXPECT_EQ((*listing)[0].name, "accel" + bad);
  expect_sound_json(detect_everything(**system));
}

TEST(HostileFixture, EntryCountAndDepthAreBounded) {
  FixtureBuilder wide;
  for (int i = 0; i < 60; ++i) wide.file("/sys/x/" + std::to_string(i), "");
  hwaccel::FixtureOptions options;
  options.max_entries = 50;
  auto w = hwaccel::FixtureSystem::open(wide.write(), options);
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().kind, ErrorKind::invalid_input);
  EXPECT_NE(w.error().message.find("more than 50 entries"), std::string::npos) << w.error().message;

  FixtureBuilder deep;
  std::string path;
  for (int i = 0; i < 300; ++i) path += "/d";
  deep.file(path + "/f", "x");
  auto d = hwaccel::FixtureSystem::open(deep.write());
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().kind, ErrorKind::invalid_input);
  EXPECT_NE(d.error().message.find("too deep"), std::string::npos) << d.error().message;
}

}  // namespace

// The fixture fields doctor's checks rest on: who the process is, and the
// permissions of device nodes.
namespace hwaccel {
namespace {

TEST(MayReadWrite, FollowsOwnerGroupAndOtherBits) {
  const ProcessIdentity alice{1000, 1000, {1000, 44}};
  EXPECT_TRUE(may_read_write(FileStatus{FileType::char_device, 0, 0600, 1000, 0}, alice));
  EXPECT_FALSE(may_read_write(FileStatus{FileType::char_device, 0, 0400, 1000, 0}, alice));
  EXPECT_TRUE(may_read_write(FileStatus{FileType::char_device, 0, 0660, 0, 44}, alice));
  EXPECT_FALSE(may_read_write(FileStatus{FileType::char_device, 0, 0660, 0, 109}, alice));
  EXPECT_TRUE(may_read_write(FileStatus{FileType::char_device, 0, 0666, 0, 109}, alice));
  // The owner's bits decide for the owner, even when others may.
  EXPECT_FALSE(may_read_write(FileStatus{FileType::char_device, 0, 0066, 1000, 0}, alice));
  EXPECT_TRUE(may_read_write(FileStatus{FileType::char_device, 0, 0000, 0, 0}, ProcessIdentity{}));
}

TEST(FixtureManifest, IdentityAndPermissionsReadBack) {
  const std::string json = R"({"format": 1, "machine": "m", "source": "s", "synthetic": true,
    "identity": {"uid": 1000, "gid": 1000, "groups": [1000, 44]},
    "permissions": {"/dev/kfd": {"mode": "0660", "uid": 0, "gid": 109}}})";
  auto m = parse_fixture_manifest(json);
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_TRUE(m->identity);
  EXPECT_EQ(*m->identity, (ProcessIdentity{1000, 1000, {1000, 44}}));
  ASSERT_EQ(m->permissions.count("/dev/kfd"), 1u);
  EXPECT_EQ(m->permissions.at("/dev/kfd"), (FilePermissions{0660, 0, 109}));
  auto again = parse_fixture_manifest(write_fixture_manifest(*m));
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->identity, m->identity);
  EXPECT_EQ(again->permissions, m->permissions);
}

TEST(FixtureManifest, BadIdentityAndPermissionsAreErrors) {
  const auto base = std::string(R"({"format": 1, "machine": "m", "source": "s", "synthetic": true, )");
  for (const std::string bad : {R"("identity": {"uid": -1, "gid": 0}})", R"("identity": {"uid": 1, "gid": 0, "groups": ["a"]}})",
                                R"("identity": [1]})", R"("permissions": {"dev/kfd": {"mode": "0660", "uid": 0, "gid": 0}}})",
                                R"("permissions": {"/dev/kfd": {"mode": "0999", "uid": 0, "gid": 0}}})",
                                R"("permissions": {"/dev/kfd": {"mode": "17777", "uid": 0, "gid": 0}}})",
                                R"("permissions": {"/dev/kfd": {"mode": 660, "uid": 0, "gid": 0}}})"}) {
    auto m = parse_fixture_manifest(base + bad);
    ASSERT_FALSE(m) << bad;
    EXPECT_EQ(m.error().kind, ErrorKind::parse_error) << bad;
  }
}

TEST(FixtureSystem, PermissionsAndIdentityComeFromTheManifest) {
  auto opened = FixtureSystem::open((testing::fixtures_root() / "doctor/amd-kfd-not-readable").string());
  ASSERT_TRUE(opened) << opened.error().message;
  const FixtureSystem& f = **opened;
  const auto st = f.status("/dev/kfd");
  ASSERT_TRUE(st);
  EXPECT_EQ(st->mode, 0660u);
  EXPECT_EQ(st->gid, 109u);
  EXPECT_EQ(f.identity(), (ProcessIdentity{1000, 1000, {1000, 44}}));
}

}  // namespace
}  // namespace hwaccel
