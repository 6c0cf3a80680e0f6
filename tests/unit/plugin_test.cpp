// Third-party plugins: found, checked, run in hwaccel-plugin-host (and in
// process), replayed from a fixture through the system table; hostile ones
// (tests/plugins/test_plugin.cpp: crash, hang, flood, wrong ABI, nonsense,
// impostor) are warnings or refusals and the other backends' devices stay.
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../test_support.hpp"

import hwaccel;

namespace hwaccel::plugin_test {

namespace fs = std::filesystem;
using testing::TempDir;

fs::path built_plugins() {
  const char* dir = std::getenv("HWACCEL_TEST_PLUGINS");
  return dir ? fs::path(dir) : fs::path();
}

// A plugin folder holding copies of the named test plugins, mode 0755.
class PluginFolder {
 public:
  explicit PluginFolder(std::initializer_list<const char*> kinds) {
    ::chmod(dir_.str().c_str(), 0755);
    for (const char* kind : kinds) fs::copy_file(built_plugins() / (std::string(kind) + ".so"), dir_.path() / (std::string(kind) + ".so"));
    for (const auto& entry : fs::directory_iterator(dir_.path())) ::chmod(entry.path().c_str(), 0755);
  }
  std::string str() const { return dir_.str(); }
  const fs::path& path() const { return dir_.path(); }

 private:
  TempDir dir_;
};

PluginSettings settings_for(const PluginFolder& folder, bool in_process = false) {
  PluginSettings s;
  s.path = folder.str();
  s.system_folder = false;
  s.in_process = in_process;
  if (const char* host = std::getenv("HWACCEL_PLUGIN_HOST")) s.host = host;  // the build's, as the settings reader takes it
  return s;
}

std::unique_ptr<FixtureSystem> open_machine(const fs::path& folder) {
  auto system = FixtureSystem::open(folder.string());
  EXPECT_TRUE(system) << (system ? "" : system.error().message);
  return system ? std::move(*system) : nullptr;
}

fs::path example_fixture() { return fs::path(std::getenv("HWACCEL_SOURCE_DIR")) / "tests" / "plugins" / "fixture"; }

std::vector<const DeviceProfile*> plugin_devices(const AcceleratorRegistry& r) {
  std::vector<const DeviceProfile*> out;
  for (const auto& d : r.devices())
    if (d.backend == Backend::plugin) out.push_back(&d);
  return out;
}

const Warning* warning_of(const AcceleratorRegistry& r, std::string_view text) {
  for (const auto& w : r.warnings())
    if (w.message.find(text) != std::string::npos) return &w;
  return nullptr;
}

class Plugins : public ::testing::Test {
 protected:
  void SetUp() override {
    if (built_plugins().empty() || !fs::exists(built_plugins() / "example.so"))
      GTEST_SKIP() << "HWACCEL_TEST_PLUGINS names no folder of built test plugins";
  }
};

TEST_F(Plugins, ExampleReadsItsFixtureThroughTheSystemTable) {
  PluginFolder folder{"example"};
  auto machine = open_machine(example_fixture());
  ASSERT_TRUE(machine);
  for (const bool in_process : {false, true}) {
    SCOPED_TRACE(in_process ? "in process" : "isolated");
    const auto registry = DetectBuilder{}.plugins(settings_for(folder, in_process)).detect(*machine);
    const auto devices = plugin_devices(registry);
    ASSERT_EQ(devices.size(), 2u);
    EXPECT_EQ(devices[0]->id, "example_accel:0");
    EXPECT_EQ(devices[0]->name, "Example NPU 100");
    EXPECT_EQ(devices[0]->family, Family::npu);
    EXPECT_EQ(devices[0]->memory_bytes, 16 * testing::GiB);
    EXPECT_EQ(devices[0]->driver_version, "3.1.4");  // example-smi --version, a captured command
    EXPECT_EQ(devices[0]->properties.at("plugin"), "example_accel");
    EXPECT_EQ(devices[1]->memory_bytes, 32 * testing::GiB);
    // EXAMPLE_VISIBLE_DEVICES=1 in the fixture's environment: the descriptor's visibility variable.
    EXPECT_FALSE(devices[0]->visible);
    EXPECT_TRUE(devices[1]->visible);
    EXPECT_EQ(devices[1]->runtime_index, 0u);
    EXPECT_TRUE(registry.find("cpu:0"));
    for (const auto& w : registry.warnings()) EXPECT_NE(w.backend, "example_accel") << w.message;
    // The registry with plugin devices reads back as it was written.
    const auto again = registry_from_json(to_json(registry));
    ASSERT_TRUE(again) << again.error().message;
    EXPECT_EQ(again->devices().size(), registry.devices().size());
    EXPECT_EQ(again->find("example_accel:1")->properties.at("plugin"), "example_accel");
  }
}

// What a plugin reads is what a capture records: detected through a
// recording, the written fixture replays the plugin's devices without the
// machine it was recorded on.
TEST_F(Plugins, ACaptureRecordsWhatAPluginRead) {
  PluginFolder folder{"example"};
  auto machine = open_machine(example_fixture());
  ASSERT_TRUE(machine);
  RecordingSystem recorder(*machine);
  const auto recorded = DetectBuilder{}.plugins(settings_for(folder)).detect(recorder);
  ASSERT_EQ(plugin_devices(recorded).size(), 2u);
  TempDir out;
  const auto written = recorder.write((out.path() / "capture").string(), "recorded plugin machine", "plugin_test");
  ASSERT_TRUE(written) << written.error().message;
  EXPECT_TRUE(fs::exists(out.path() / "capture/root/sys/class/example_accel/accel1/memory_bytes"));
  auto replay = open_machine(out.path() / "capture");
  ASSERT_TRUE(replay);
  const auto replayed = DetectBuilder{}.plugins(settings_for(folder)).detect(*replay);
  const auto devices = plugin_devices(replayed);
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[1]->name, "Example NPU 200");
  EXPECT_EQ(devices[1]->driver_version, "3.1.4");  // the tool run, recorded
  EXPECT_TRUE(devices[1]->visible);                 // the environment, recorded
  EXPECT_FALSE(devices[0]->visible);
}

TEST_F(Plugins, DescribedWithoutDetecting) {
  PluginFolder folder{"example", "wrong_abi"};
  const auto described = describe_plugins(settings_for(folder));
  ASSERT_EQ(described.size(), 2u);
  ASSERT_TRUE(described[0].descriptor) << described[0].problem.value_or("");
  EXPECT_FALSE(described[0].problem);
  EXPECT_EQ(described[0].descriptor->name, "example_accel");
  EXPECT_EQ(described[0].descriptor->tools, std::vector<std::string>{"example-smi"});
  EXPECT_EQ(described[0].descriptor->pci_ids, std::vector<std::uint32_t>{0x1e520000u});
  EXPECT_EQ(described[0].descriptor->visibility_variable, "EXAMPLE_VISIBLE_DEVICES");
  ASSERT_TRUE(described[1].problem);
  EXPECT_NE(described[1].problem->find("ABI version 99"), std::string::npos) << *described[1].problem;
  EXPECT_NE(described[1].problem->find("version 1"), std::string::npos) << *described[1].problem;
  EXPECT_NE(described[1].problem->find("wrong_abi"), std::string::npos) << *described[1].problem;
}

// Every hostile plugin at once, on a machine with eight GPUs: each is a
// warning, the GPUs and the CPU are there as without plugins, and detection
// ends within the deadline (the hung plugin's 1 s) plus start-up.
TEST_F(Plugins, HostilePluginsAreWarningsAndTheOtherDevicesStay) {
  PluginFolder folder{"crash", "hang", "flood", "wrong_abi", "garbage", "impostor", "example"};
  auto machine = open_machine(testing::fixtures_root() / "machines" / "dgx-h100-8x-nvswitch");
  ASSERT_TRUE(machine);
  const auto without = DetectBuilder{}.without_plugins().detect(*machine);
  DetectBuilder builder;
  builder.tool_timeout(std::chrono::milliseconds(1000)).plugins(settings_for(folder));
  const auto started = std::chrono::steady_clock::now();
  const auto with = builder.detect(*machine);
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_LT(took, std::chrono::seconds(6)) << "the hung plugin was not stopped at its deadline";

  std::vector<std::string> others_before, others_after;
  for (const auto& d : without.devices()) others_before.push_back(d.id);
  for (const auto& d : with.devices())
    if (d.backend != Backend::plugin) others_after.push_back(d.id);
  EXPECT_EQ(others_after, others_before);
  EXPECT_EQ(std::count_if(with.devices().begin(), with.devices().end(),
                          [](const DeviceProfile& d) { return d.backend == Backend::cuda; }),
            8);

  const Warning* crash = warning_of(with, "plugin 'crash'");
  ASSERT_TRUE(crash);
  EXPECT_NE(crash->message.find("signal 11"), std::string::npos) << crash->message;
  const Warning* hang = warning_of(with, "plugin 'hang'");
  ASSERT_TRUE(hang);
  EXPECT_EQ(hang->kind, WarningKind::timeout);
  EXPECT_NE(hang->message.find("1000 ms"), std::string::npos) << hang->message;
  const Warning* flood = warning_of(with, "plugin 'flood'");
  ASSERT_TRUE(flood);
  EXPECT_EQ(flood->kind, WarningKind::truncated) << flood->message;
  const Warning* abi = warning_of(with, "ABI version 99");
  ASSERT_TRUE(abi);
  EXPECT_EQ(abi->kind, WarningKind::unsupported);
  const Warning* garbage = warning_of(with, "plugin 'garbage'");
  ASSERT_TRUE(garbage);
  EXPECT_EQ(garbage->kind, WarningKind::parse_error);
  EXPECT_TRUE(warning_of(with, "\"cuda:0\" dropped"));
  EXPECT_TRUE(warning_of(with, "cannot be the host CPU"));
  EXPECT_EQ(with.find("cuda:0")->name, without.find("cuda:0")->name);
  // The well-behaved plugin reads this machine, which has no example_accel class.
  EXPECT_TRUE(plugin_devices(with).empty());
}

TEST_F(Plugins, UnsafeFoldersAndFilesAreRefused) {
  PluginFolder folder{"example"};
  ::chmod(folder.str().c_str(), 01777);  // world-writable, even with the sticky bit
  auto found = find_plugins(settings_for(folder));
  ASSERT_EQ(found.size(), 1u);
  ASSERT_TRUE(found[0].refused);
  EXPECT_NE(found[0].refused->find("writable by every user"), std::string::npos) << *found[0].refused;
  auto machine = open_machine(example_fixture());
  ASSERT_TRUE(machine);
  const auto registry = DetectBuilder{}.plugins(settings_for(folder)).detect(*machine);
  EXPECT_TRUE(plugin_devices(registry).empty());
  EXPECT_TRUE(warning_of(registry, "refused"));

  ::chmod(folder.str().c_str(), 0755);
  ::chmod((folder.path() / "example.so").c_str(), 0775);
  found = find_plugins(settings_for(folder));
  ASSERT_EQ(found.size(), 1u);
  if (::getegid() != 0) {
    ASSERT_TRUE(found[0].refused);
    EXPECT_NE(found[0].refused->find("writable by group"), std::string::npos) << *found[0].refused;
  }
  ::chmod((folder.path() / "example.so").c_str(), 0755);
  EXPECT_FALSE(find_plugins(settings_for(folder))[0].refused);
}

TEST_F(Plugins, NoHostIsAWarningNotACrash) {
  PluginFolder folder{"example"};
  auto settings = settings_for(folder);
  settings.host = (folder.path() / "no-such-host").string();
  auto machine = open_machine(example_fixture());
  ASSERT_TRUE(machine);
  const auto registry = DetectBuilder{}.plugins(settings).detect(*machine);
  EXPECT_TRUE(plugin_devices(registry).empty());
  const Warning* w = warning_of(registry, "no hwaccel-plugin-host");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->kind, WarningKind::tool_missing);
}

TEST_F(Plugins, AFolderWithoutPluginsRunsNothing) {
  TempDir empty;
  PluginSettings s;
  s.path = empty.str() + ":/nonexistent/plugins";
  s.system_folder = false;
  EXPECT_TRUE(find_plugins(s).empty());
  EXPECT_TRUE(plugin_runner(s)->empty());
  auto machine = open_machine(example_fixture());
  ASSERT_TRUE(machine);
  const auto registry = DetectBuilder{}.plugins(s).detect(*machine);
  for (const auto& t : registry.timings()) EXPECT_NE(t.name, "plugin");
}

// The document reader, on its own (also fuzzed: fuzz_plugin_document).
TEST(PluginDocument, KeepsThePluginsOwnDevicesOnly) {
  PluginDescriptor d;
  d.abi_version = plugin_abi_version;
  d.name = "tt";
  const auto out = read_plugin_document(
      R"({"devices":[{"id":"tt:0","backend":"plugin","family":"asic","index":0,"name":"A","memory_bytes":99999999999999999},)"
      R"({"id":"tt:0","backend":"plugin","family":"asic","index":0,"name":"dup"},)"
      R"({"id":"other:1","backend":"plugin","family":"asic","index":1,"name":"B"},)"
      R"({"id":"tt:2","backend":"plugin","family":"asic","index":2,"name":""}],)"
      R"("warnings":[{"backend":"cuda","kind":"tool_missing","message":"tt-smi is not on PATH"}]})",
      d);
  ASSERT_TRUE(out) << out.error().message;
  ASSERT_EQ(out->devices.size(), 1u);
  EXPECT_FALSE(out->devices[0].memory_bytes);  // beyond any device's: discarded
  EXPECT_EQ(out->devices[0].properties.at("plugin"), "tt");
  ASSERT_GE(out->warnings.size(), 4u);
  EXPECT_EQ(out->warnings[0].backend, "tt");  // a plugin speaks for itself only
  EXPECT_FALSE(read_plugin_document("[1,2]", d));
  EXPECT_FALSE(read_plugin_document(R"({"devices": 3})", d));
  EXPECT_FALSE(read_plugin_document("", d));
}

TEST(PluginDescriptor, NamesAndVersionsAreChecked) {
  PluginDescriptor d;
  d.abi_version = plugin_abi_version;
  d.name = "tenstorrent";
  EXPECT_TRUE(check_descriptor(d, "/p/tt.so"));
  d.name = "cuda";
  EXPECT_FALSE(check_descriptor(d, "/p/tt.so"));
  d.name = "Bad-Name";
  EXPECT_FALSE(check_descriptor(d, "/p/tt.so"));
  d.name = "";
  EXPECT_FALSE(check_descriptor(d, "/p/tt.so"));
  d.name = "ok";
  d.abi_version = 2;
  const auto r = check_descriptor(d, "/p/tt.so");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("version 2"), std::string::npos);
  EXPECT_NE(r.error().message.find("/p/tt.so"), std::string::npos);
}

}  // namespace hwaccel::plugin_test
