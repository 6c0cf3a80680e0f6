// hwaccel.watch: kernel log parsing, which backends an event concerns,
// fixture timelines replayed through the Watcher (a GPU falling off
// the bus, a hot-added GPU, MIG re-partitioning, a driver reload storm, VFIO
// bind and unbind), debouncing, floods, and the cached registry following.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <bitset>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

import hwaccel;

#include "module_helpers.hpp"
#include "timeline_builder.hpp"

namespace hwaccel {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::read_text;
using testing::TimelineBuilder;
using testing::uevent_message;
using testing::write_text;

KernelEvent uevent(std::string_view action, std::string_view devpath,
                   std::vector<std::pair<std::string, std::string>> vars) {
  return KernelEvent{KernelEvent::Source::uevent, uevent_message(action, devpath, std::move(vars))};
}

KernelEvent kmsg(std::string line) { return KernelEvent{KernelEvent::Source::kernel_log, std::move(line)}; }

// Lines of `text` without those containing any of `drop`.
std::string without_lines(const std::string& text, std::vector<std::string> drop) {
  std::istringstream in(text);
  std::string out, line;
  while (std::getline(in, line)) {
    if (std::any_of(drop.begin(), drop.end(), [&](const std::string& d) { return line.find(d) != std::string::npos; }))
      continue;
    out += line + "\n";
  }
  return out;
}

std::string replaced(std::string text, std::string_view from, std::string_view to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

struct Replay {
  std::unique_ptr<TimelineSystem> system;
  std::unique_ptr<Watcher> watcher;
  std::vector<RegistryChange> changes;
  std::vector<WatchEvent> events;
};

// Replays a timeline to its end and collects what the watcher said.
Replay replay(const std::string& dir, WatchOptions options = {}) {
  Replay r;
  auto system = TimelineSystem::open(dir);
  if (!system) throw std::runtime_error(system.error().message);
  r.system = std::move(*system);
  auto changes = std::make_shared<std::vector<RegistryChange>>();
  options.on_change = [changes](const RegistryChange& c) { changes->push_back(c); };
  auto watcher = Watcher::start(*r.system, options);
  if (!watcher) throw std::runtime_error(watcher.error().message);
  r.watcher = std::move(*watcher);
  EXPECT_TRUE(r.watcher->wait_finished(std::chrono::steady_clock::now() + 60s));
  while (auto e = r.watcher->next_event(std::chrono::steady_clock::now())) r.events.push_back(*e);
  r.changes = *changes;
  return r;
}

// The registry a fresh detection of the timeline's final state gives.
AcceleratorRegistry detect_final(const TimelineSystem& system) {
  return DetectBuilder{}.detect(system.state(system.timeline().steps.size()));
}

// What the watcher ended with must be what detecting the final machine gives:
// same devices, links and fabrics (timings and the order of warnings aside).
void expect_same_machine(const AcceleratorRegistry& watched, const AcceleratorRegistry& fresh) {
  if (watched.devices().size() != fresh.devices().size() ||
      !std::equal(watched.devices().begin(), watched.devices().end(), fresh.devices().begin())) {
    // The documents side by side say which field differs.
    const JsonOptions options{.pretty = true, .include_timings = false};
    EXPECT_EQ(to_json(watched, options), to_json(fresh, options));
  }
  ASSERT_EQ(watched.devices().size(), fresh.devices().size());
  for (std::size_t i = 0; i < fresh.devices().size(); ++i) EXPECT_EQ(watched.devices()[i], fresh.devices()[i]) << i;
  EXPECT_EQ(std::vector<DeviceLink>(watched.links().begin(), watched.links().end()),
            std::vector<DeviceLink>(fresh.links().begin(), fresh.links().end()));
  EXPECT_EQ(std::vector<Interconnect>(watched.interconnects().begin(), watched.interconnects().end()),
            std::vector<Interconnect>(fresh.interconnects().begin(), fresh.interconnects().end()));
}

std::vector<std::string> kinds_and_ids(const std::vector<WatchEvent>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) out.push_back(std::string(to_string(e.kind)) + " " + e.identity);
  return out;
}

// ---- parsing --------------------------------------------------------------------

TEST(KernelLog, ReadsNvidiaXidLines) {
  auto r = parse_kernel_log_record(
      "3,1742,917263541,-;NVRM: Xid (PCI:0000:ae:00): 79, pid=0, name=python3, GPU has fallen off the bus.");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->source, "nvidia_xid");
  EXPECT_EQ(r->code, 79u);
  EXPECT_EQ(r->pci_bus_id, "0000:ae:00.0");
  EXPECT_EQ(r->severity, HealthSeverity::critical);
  EXPECT_EQ(r->summary, "GPU has fallen off the bus");
  EXPECT_NE(r->message.find("Xid (PCI:0000:ae:00): 79"), std::string::npos);

  // dmesg form, older driver form without "PCI:", an application Xid, an unknown one.
  auto dmesg = parse_kernel_log_record("[ 1234.567890] NVRM: Xid (0000:3b:00): 48, An uncorrectable double bit error");
  ASSERT_TRUE(dmesg);
  EXPECT_EQ(dmesg->pci_bus_id, "0000:3b:00.0");
  EXPECT_EQ(dmesg->severity, HealthSeverity::critical);
  auto app = parse_kernel_log_record("4,1,2,-;NVRM: Xid (PCI:0000:3b:00): 13, pid=4242, Graphics Exception");
  ASSERT_TRUE(app);
  EXPECT_EQ(app->severity, HealthSeverity::info);
  auto unknown = parse_kernel_log_record("4,1,2,-;NVRM: Xid (PCI:0000:3b:00): 999, something new");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->severity, HealthSeverity::warning);
  EXPECT_EQ(unknown->summary, "Xid 999");
}

TEST(KernelLog, ReadsAmdgpuRasLines) {
  auto r = parse_kernel_log_record(
      "3,2001,88812,-;amdgpu 0000:c1:00.0: amdgpu: 1 uncorrectable hardware errors detected in umc block");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->source, "amdgpu_ras");
  EXPECT_EQ(r->pci_bus_id, "0000:c1:00.0");
  EXPECT_EQ(r->severity, HealthSeverity::critical);
  auto corrected = parse_kernel_log_record("amdgpu 0000:c1:00.0: amdgpu: 3 correctable hardware errors detected in umc block");
  ASSERT_TRUE(corrected);
  EXPECT_EQ(corrected->severity, HealthSeverity::warning);
}

TEST(KernelLog, IgnoresEverythingElseAndSurvivesGarbage) {
  EXPECT_FALSE(parse_kernel_log_record("6,100,200,-;usb 1-1: new high-speed USB device number 2"));
  EXPECT_FALSE(parse_kernel_log_record("amdgpu 0000:c1:00.0: amdgpu: SMU is initialized successfully!"));
  EXPECT_FALSE(parse_kernel_log_record("NVRM: Xid (PCI:0000:3b:00): no number"));
  EXPECT_FALSE(parse_kernel_log_record("NVRM: Xid (unterminated"));
  EXPECT_FALSE(parse_kernel_log_record(""));
  const std::string huge = "NVRM: Xid (PCI:0000:3b:00): 79, " + std::string(100'000, '\xff');
  auto r = parse_kernel_log_record(huge);
  ASSERT_TRUE(r);
  EXPECT_LE(r->message.size(), 520u);
}

// ---- which backends an event concerns ------------------------------------------------

TEST(Concern, MapsDevicesModulesAndNodesToBackends) {
  const auto system = testing::open_machine("h100-nvl-pair-nvlink-bridge");
  const AcceleratorRegistry registry = DetectBuilder{}.detect(*system);
  const auto concern = [&](const KernelEvent& k) {
    auto e = parse_uevent(k.payload);
    EXPECT_TRUE(e);
    return concerned_backends(*e, registry, *system).backends;
  };
  const auto only = [](std::initializer_list<Backend> bs) {
    std::bitset<backend_count> m;
    for (Backend b : bs) m.set(static_cast<std::size_t>(b));
    return m;
  };
  // A GPU leaving: its vendor from the event.
  EXPECT_EQ(concern(uevent("remove", "/devices/pci0000:ad/0000:ad:01.0/0000:ae:00.0",
                           {{"SUBSYSTEM", "pci"}, {"PCI_ID", "10DE:2321"}, {"PCI_CLASS", "30200"}})),
            only({Backend::cuda, Backend::vulkan}));
  // Its vendor from sysfs, through the System, when the event has none.
  EXPECT_EQ(concern(uevent("unbind", "/devices/pci0000:ad/0000:ad:01.0/0000:ae:00.0", {{"SUBSYSTEM", "pci"}})),
            only({Backend::cuda, Backend::vulkan}));
  // A DRM card below the GPU; a monitor plugged into it is not a device change.
  EXPECT_EQ(concern(uevent("add", "/devices/pci0000:ac/0000:ac:01.0/0000:ad:00.0/drm/card1", {{"SUBSYSTEM", "drm"}})),
            only({Backend::cuda, Backend::vulkan}));
  EXPECT_TRUE(concern(uevent("change", "/devices/pci0000:ac/0000:ac:01.0/0000:ad:00.0/drm/card1",
                             {{"SUBSYSTEM", "drm"}, {"HOTPLUG", "1"}}))
                  .none());
  EXPECT_EQ(concern(uevent("add", "/module/nvidia", {{"SUBSYSTEM", "module"}})), only({Backend::cuda}));
  EXPECT_EQ(concern(uevent("remove", "/module/amdgpu", {{"SUBSYSTEM", "module"}})), only({Backend::rocm}));
  EXPECT_EQ(concern(uevent("add", "/devices/virtual/kfd/kfd", {{"SUBSYSTEM", "kfd"}, {"DEVNAME", "kfd"}})),
            only({Backend::rocm}));
  // An Intel USB controller, a USB stick, a network link: nothing.
  EXPECT_TRUE(concern(uevent("add", "/devices/pci0000:00/0000:00:14.0",
                             {{"SUBSYSTEM", "pci"}, {"PCI_ID", "8086:7AE0"}, {"PCI_CLASS", "C0330"}}))
                  .none());
  EXPECT_TRUE(concern(uevent("add", "/devices/pci0000:00/0000:00:14.0/usb1/1-1", {{"SUBSYSTEM", "usb"}})).none());
  EXPECT_TRUE(concern(uevent("change", "/devices/virtual/net/eth0", {{"SUBSYSTEM", "net"}})).none());
  // A GPU handed to VFIO: its bind event names vfio-pci.
  EXPECT_EQ(concern(uevent("bind", "/devices/pci0000:ad/0000:ad:01.0/0000:ae:00.0",
                           {{"SUBSYSTEM", "pci"}, {"DRIVER", "vfio-pci"}, {"PCI_ID", "10DE:2321"}})),
            only({Backend::cuda, Backend::vulkan}));
}

// ---- re-detecting part of a machine ----------------------------------------------

// Re-detecting any one backend of an unchanged machine must give the registry
// a full detection gives: nothing kept from before may go stale or double.
TEST(Redetect, AnyBackendOfEveryMachineGivesTheFullDetection) {
  for (const auto& entry : fs::directory_iterator(testing::fixtures_root() / "machines")) {
    const std::string name = entry.path().filename().string();
    SCOPED_TRACE(name);
    const auto system = testing::open_machine(name);
    const AcceleratorRegistry full = DetectBuilder{}.detect(*system);
    std::bitset<backend_count> present;
    for (const auto& d : full.devices()) present.set(static_cast<std::size_t>(d.backend));
    for (std::size_t b = 0; b < backend_count; ++b) {
      if (!present.test(b)) continue;
      SCOPED_TRACE(std::string(to_string(static_cast<Backend>(b))));
      const AcceleratorRegistry again =
          redetect_backends(full, *system, DetectOptions{}, std::bitset<backend_count>{}.set(b));
      expect_same_machine(again, full);
    }
  }
}

// ---- replayed timelines ----------------------------------------------------------

constexpr std::string_view lost_gpu = "0000:ae:00.0";

std::vector<std::string> lost_gpu_paths() {
  return {"/sys/bus/pci/devices/0000:ae:00.0", "/sys/devices/pci0000:ad/0000:ad:01.0/0000:ae:00.0",
          "/sys/bus/pci/drivers/nvidia/0000:ae:00.0", "/proc/driver/nvidia/gpus/0000:ae:00.0"};
}

// nvidia-smi of the H100 NVL pair with GPU 1 (0000:ae:00.0) gone.
std::map<std::string, std::string> one_gpu_outputs(const TimelineBuilder& b) {
  const std::vector<std::string> drop = {"AE:00.0", "GPU 1:", "GPU-9f8e7d6c"};
  std::string optional = b.command_output("nvidia-smi-query-gpu-optional.out");
  optional = optional.substr(0, optional.find("\n1,"));
  return {
      {"nvidia-smi-query-gpu.out", without_lines(b.command_output("nvidia-smi-query-gpu.out"), drop)},
      {"nvidia-smi-L.out", without_lines(b.command_output("nvidia-smi-L.out"), drop)},
      {"nvidia-smi-query-gpu-optional.out", optional + "\n"},
      {"nvidia-smi-topo-m.out", "\tGPU0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\nGPU0\t X \t32-63,96-127\t1\t\tN/A\n"},
      {"nvidia-smi-nvlink-s.out", "GPU 0: NVIDIA H100 NVL (UUID: GPU-6e21f0a4-3b5c-4d7e-8f90-a1b2c3d4e5f6)\n"},
  };
}

TEST(Watch, GpuFallingOffTheBusIsAHealthEventAndARemoval) {
  TimelineBuilder b("h100-nvl-pair-nvlink-bridge");
  b.step({.name = "xid-79",
          .events = {kmsg("3,1742,917263541,-;NVRM: Xid (PCI:0000:ae:00): 79, pid=0, name=python3, GPU has fallen off "
                          "the bus.")},
          .commands = one_gpu_outputs(b),
          .removed = lost_gpu_paths()});
  Replay r = replay(b.write());
  ASSERT_EQ(r.changes.size(), 1u);
  EXPECT_EQ(r.changes[0].cause, ChangeCause::kernel_log);
  EXPECT_TRUE(r.changes[0].redetected.test(static_cast<std::size_t>(Backend::cuda)));
  EXPECT_FALSE(r.changes[0].redetected.test(static_cast<std::size_t>(Backend::rocm)));
  EXPECT_EQ(kinds_and_ids(r.events), (std::vector<std::string>{"health 0000:ae:00.0", "removed 0000:ae:00.0"}));
  ASSERT_TRUE(r.events[0].health);
  EXPECT_EQ(r.events[0].health->code, 79u);
  EXPECT_EQ(r.events[0].id, "cuda:1");
  EXPECT_EQ(r.events[1].name, "NVIDIA H100 NVL");
  expect_same_machine(*r.watcher->registry(), detect_final(*r.system));
  for (const auto& d : r.watcher->registry()->devices()) EXPECT_NE(d.pci_bus_id, std::string(lost_gpu));
}

TEST(Watch, HotAddedGpuIsAnAddition) {
  // The same machine the other way round: it starts with one GPU, then the
  // second is plugged in (an eGPU, or a GPU back after a reset).
  TimelineBuilder b("h100-nvl-pair-nvlink-bridge");
  const auto full = std::map<std::string, std::string>{
      {"nvidia-smi-query-gpu.out", b.command_output("nvidia-smi-query-gpu.out")},
      {"nvidia-smi-L.out", b.command_output("nvidia-smi-L.out")},
      {"nvidia-smi-query-gpu-optional.out", b.command_output("nvidia-smi-query-gpu-optional.out")},
      {"nvidia-smi-topo-m.out", b.command_output("nvidia-smi-topo-m.out")},
      {"nvidia-smi-nvlink-s.out", b.command_output("nvidia-smi-nvlink-s.out")}};
  // Step 1 takes the GPU away with no event at all (seen only by a re-scan);
  // step 2 brings it back with the kernel's add and bind uevents.
  b.step({.name = "gone", .rescan = true, .commands = one_gpu_outputs(b), .removed = lost_gpu_paths()});
  const fs::path base = testing::fixtures_root() / "machines" / "h100-nvl-pair-nvlink-bridge" / "root";
  TimelineBuilder::Step add{.name = "plugged-in"};
  add.events = {uevent("add", "/devices/pci0000:ad/0000:ad:01.0/0000:ae:00.0",
                       {{"SUBSYSTEM", "pci"}, {"PCI_ID", "10DE:2321"}, {"PCI_CLASS", "30200"},
                        {"PCI_SLOT_NAME", "0000:ae:00.0"}}),
                uevent("bind", "/devices/pci0000:ad/0000:ad:01.0/0000:ae:00.0",
                       {{"SUBSYSTEM", "pci"}, {"DRIVER", "nvidia"}, {"PCI_SLOT_NAME", "0000:ae:00.0"}})};
  add.commands = full;
  b.step(add);
  const std::string dir = b.write();
  // The GPU's sysfs and procfs entries come back as they were, links and all.
  for (const char* path : {"sys/devices/pci0000:ad/0000:ad:01.0/0000:ae:00.0", "proc/driver/nvidia/gpus/0000:ae:00.0",
                           "sys/bus/pci/drivers/nvidia/0000:ae:00.0", "sys/bus/pci/devices/0000:ae:00.0"}) {
    const fs::path to = fs::path(dir) / "steps/2/root" / path;
    fs::create_directories(to.parent_path());
    fs::copy(base / path, to, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  }

  Replay r = replay(dir);
  ASSERT_EQ(r.changes.size(), 2u);
  EXPECT_EQ(r.changes[0].cause, ChangeCause::rescan);
  EXPECT_EQ(r.changes[1].cause, ChangeCause::uevent);
  EXPECT_EQ(r.changes[1].notifications, 2u);
  EXPECT_EQ(kinds_and_ids(r.events), (std::vector<std::string>{"removed 0000:ae:00.0", "added 0000:ae:00.0"}));
  EXPECT_EQ(r.events[0].change, 1u);
  EXPECT_EQ(r.events[1].change, 2u);
  expect_same_machine(*r.watcher->registry(), detect_final(*r.system));
  // Back to where it began.
  expect_same_machine(*r.watcher->registry(), DetectBuilder{}.detect(r.system->state(0)));
}

TEST(Watch, DriverReloadStormIsOneChange) {
  TimelineBuilder b("h100-nvl-pair-nvlink-bridge");
  TimelineBuilder::Step storm{.name = "driver-reload"};
  for (int round = 0; round < 3; ++round) {
    storm.events.push_back(uevent("remove", "/module/nvidia_uvm", {{"SUBSYSTEM", "module"}}));
    storm.events.push_back(uevent("remove", "/module/nvidia", {{"SUBSYSTEM", "module"}}));
    for (const char* gpu : {"/devices/pci0000:ac/0000:ac:01.0/0000:ad:00.0", "/devices/pci0000:ad/0000:ad:01.0/0000:ae:00.0"}) {
      storm.events.push_back(uevent("unbind", gpu, {{"SUBSYSTEM", "pci"}, {"PCI_ID", "10DE:2321"}}));
      storm.events.push_back(uevent("bind", gpu, {{"SUBSYSTEM", "pci"}, {"DRIVER", "nvidia"}, {"PCI_ID", "10DE:2321"}}));
      storm.events.push_back(uevent("change", std::string(gpu) + "/drm/card1", {{"SUBSYSTEM", "drm"}}));
    }
    storm.events.push_back(uevent("add", "/module/nvidia", {{"SUBSYSTEM", "module"}}));
    storm.events.push_back(uevent("add", "/module/nvidia_uvm", {{"SUBSYSTEM", "module"}}));
  }
  // Noise in the same burst that concerns no accelerator.
  storm.events.push_back(uevent("add", "/devices/pci0000:00/0000:00:14.0/usb1/1-1", {{"SUBSYSTEM", "usb"}}));
  storm.commands = {{"nvidia-smi-query-gpu.out", replaced(b.command_output("nvidia-smi-query-gpu.out"), "550.54.14", "550.127.05")}};
  storm.files = {{"/proc/driver/nvidia/version",
                  replaced(read_text(b.path() / "root/proc/driver/nvidia/version"), "550.54.14", "550.127.05")}};
  b.step(storm);
  const auto detections_before = 1u;
  Replay r = replay(b.write());
  ASSERT_EQ(r.changes.size(), 1u);
  EXPECT_EQ(r.changes[0].notifications, 3u * 10u);
  EXPECT_EQ(r.watcher->status().detections, detections_before + 1);
  EXPECT_EQ(r.watcher->status().ignored, 1u);
  ASSERT_EQ(r.events.size(), 2u);
  for (const auto& e : r.events) {
    EXPECT_EQ(e.kind, WatchEventKind::changed);
    ASSERT_FALSE(e.fields.empty());
    EXPECT_EQ(e.fields[0], (FieldChange{"driver_version", "550.54.14", "550.127.05"}));
  }
  expect_same_machine(*r.watcher->registry(), detect_final(*r.system));
}

TEST(Watch, MigEnabledThenRepartitionedIsSeenByTheRescan) {
  TimelineBuilder b("a100-40gb-mig-enabled");
  const std::string with_mig = b.command_output("nvidia-smi-L.out");
  const std::string query = b.command_output("nvidia-smi-query-gpu.out");
  // The machine starts with MIG off: one whole GPU. (No uevent is sent for
  // either change; only the periodic re-scan sees them.)
  const std::string no_mig = without_lines(with_mig, {"MIG "});
  const std::string repartitioned =
      no_mig + "  MIG 2g.10gb     Device  0: (UUID: MIG-11111111-2222-5333-8444-555555555555)\n"
               "  MIG 2g.10gb     Device  1: (UUID: MIG-21111111-2222-5333-8444-555555555555)\n"
               "  MIG 3g.20gb     Device  2: (UUID: MIG-31111111-2222-5333-8444-555555555555)\n";
  // Write the base without MIG over the copied fixture itself. `nvidia-smi -q`
  // answers nothing here, so that the MIG layout comes from `-L` alone.
  write_text(b.path() / "commands" / "nvidia-smi-q.out", "");
  write_text(b.path() / "commands" / "nvidia-smi-L.out", no_mig);
  write_text(b.path() / "commands" / "nvidia-smi-query-gpu.out", replaced(query, "Enabled, 8.0", "Disabled, 8.0"));
  b.step({.name = "mig-enabled", .rescan = true,
          .commands = {{"nvidia-smi-L.out", with_mig}, {"nvidia-smi-query-gpu.out", query}}});
  b.step({.name = "repartitioned", .rescan = true, .commands = {{"nvidia-smi-L.out", repartitioned}}});
  Replay r = replay(b.write());
  ASSERT_EQ(r.changes.size(), 2u) << ::testing::PrintToString(kinds_and_ids(r.events));
  for (const auto& c : r.changes) EXPECT_EQ(c.cause, ChangeCause::rescan);
  ASSERT_EQ(r.events.size(), 2u);
  const auto partitions = [](const WatchEvent& e) {
    for (const auto& f : e.fields)
      if (f.field == "partitions") return f;
    return FieldChange{};
  };
  EXPECT_EQ(partitions(r.events[0]).before, "");
  EXPECT_EQ(partitions(r.events[0]).after, "3g.20gb,3g.20gb");
  EXPECT_EQ(partitions(r.events[1]).before, "3g.20gb,3g.20gb");
  EXPECT_EQ(partitions(r.events[1]).after, "2g.10gb,2g.10gb,3g.20gb");
  EXPECT_EQ(r.events[0].identity, r.events[1].identity);
  expect_same_machine(*r.watcher->registry(), detect_final(*r.system));
}

TEST(Watch, AmdBoardSwitchedFromSpxToCpx) {
  // The MI300X starts in SPX (one KFD node for the whole GPU), then is
  // switched to CPX: eight compute partitions, one KFD node each.
  TimelineBuilder b("amd-mi300x-cpx-vm");
  const fs::path nodes = "sys/devices/virtual/kfd/kfd/topology/nodes";  // /sys/class/kfd/kfd links here
  const fs::path partition_file = "sys/devices/pci0000:00/0000:00:02.0/0000:01:00.0/current_compute_partition";
  const fs::path original = testing::fixtures_root() / "machines" / "amd-mi300x-cpx-vm" / "root";
  for (int node = 2; node <= 8; ++node) fs::remove_all(b.path() / "root" / nodes / std::to_string(node));
  write_text(b.path() / "root" / partition_file, "SPX\n");
  b.step({.name = "switched-to-cpx",
          .events = {uevent("change", "/devices/pci0000:00/0000:00:02.0/0000:01:00.0", {{"SUBSYSTEM", "pci"}}),
                     uevent("change", "/devices/virtual/kfd/kfd", {{"SUBSYSTEM", "kfd"}, {"DEVNAME", "kfd"}})},
          .files = {{"/" + partition_file.string(), "CPX\n"}}});
  const std::string dir = b.write();
  fs::create_directories(fs::path(dir) / "steps/1/root" / nodes);
  for (int node = 2; node <= 8; ++node)
    fs::copy(original / nodes / std::to_string(node), fs::path(dir) / "steps/1/root" / nodes / std::to_string(node),
             fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  Replay r = replay(dir);
  ASSERT_EQ(r.changes.size(), 1u) << ::testing::PrintToString(kinds_and_ids(r.events));
  EXPECT_TRUE(r.changes[0].redetected.test(static_cast<std::size_t>(Backend::rocm)));
  EXPECT_FALSE(r.changes[0].redetected.test(static_cast<std::size_t>(Backend::cuda)));
  ASSERT_EQ(r.events.size(), 1u) << ::testing::PrintToString(kinds_and_ids(r.events));
  EXPECT_EQ(r.events[0].kind, WatchEventKind::changed);
  EXPECT_EQ(r.events[0].identity, "0000:01:00.0");
  const auto partitions = std::find_if(r.events[0].fields.begin(), r.events[0].fields.end(),
                                       [](const FieldChange& f) { return f.field == "partitions"; });
  ASSERT_NE(partitions, r.events[0].fields.end());
  EXPECT_TRUE(partitions->before.starts_with("SPX")) << partitions->before;
  EXPECT_TRUE(partitions->after.starts_with("CPX:")) << partitions->after;
  expect_same_machine(*r.watcher->registry(), detect_final(*r.system));
  expect_same_machine(*r.watcher->registry(), DetectBuilder{}.detect(*testing::open_machine("amd-mi300x-cpx-vm")));
}

TEST(Watch, VfioBindAndUnbind) {
  // GPU 1 is handed to a virtual machine (bound to vfio-pci: nvidia-smi no
  // longer sees it), then given back.
  TimelineBuilder b("h100-nvl-pair-nvlink-bridge");
  const std::string gpu = "/devices/pci0000:ad/0000:ad:01.0/0000:ae:00.0";
  auto to_vfio = one_gpu_outputs(b);
  b.step({.name = "bound-to-vfio",
          .events = {uevent("unbind", gpu, {{"SUBSYSTEM", "pci"}, {"DRIVER", "nvidia"}, {"PCI_ID", "10DE:2321"}}),
                     uevent("bind", gpu, {{"SUBSYSTEM", "pci"}, {"DRIVER", "vfio-pci"}, {"PCI_ID", "10DE:2321"}}),
                     uevent("add", "/devices/virtual/vfio/42", {{"SUBSYSTEM", "vfio"}, {"DEVNAME", "vfio/42"}})},
          .commands = to_vfio,
          .removed = {"/sys/bus/pci/drivers/nvidia/0000:ae:00.0", "/proc/driver/nvidia/gpus/0000:ae:00.0"}});
  b.step({.name = "given-back",
          .events = {uevent("unbind", gpu, {{"SUBSYSTEM", "pci"}, {"DRIVER", "vfio-pci"}, {"PCI_ID", "10DE:2321"}}),
                     uevent("bind", gpu, {{"SUBSYSTEM", "pci"}, {"DRIVER", "nvidia"}, {"PCI_ID", "10DE:2321"}})},
          .commands = {{"nvidia-smi-query-gpu.out", b.command_output("nvidia-smi-query-gpu.out")},
                       {"nvidia-smi-L.out", b.command_output("nvidia-smi-L.out")},
                       {"nvidia-smi-query-gpu-optional.out", b.command_output("nvidia-smi-query-gpu-optional.out")},
                       {"nvidia-smi-topo-m.out", b.command_output("nvidia-smi-topo-m.out")},
                       {"nvidia-smi-nvlink-s.out", b.command_output("nvidia-smi-nvlink-s.out")}},
});
  const std::string dir = b.write();
  // Step 2 restores what step 1 removed.
  const fs::path base = testing::fixtures_root() / "machines" / "h100-nvl-pair-nvlink-bridge" / "root";
  fs::create_directories(fs::path(dir) / "steps/2/root/sys/bus/pci/drivers/nvidia");
  fs::copy(base / "sys/bus/pci/drivers/nvidia/0000:ae:00.0", fs::path(dir) / "steps/2/root/sys/bus/pci/drivers/nvidia/0000:ae:00.0",
           fs::copy_options::copy_symlinks | fs::copy_options::recursive);
  fs::create_directories(fs::path(dir) / "steps/2/root/proc/driver/nvidia/gpus");
  fs::copy(base / "proc/driver/nvidia/gpus/0000:ae:00.0", fs::path(dir) / "steps/2/root/proc/driver/nvidia/gpus/0000:ae:00.0",
           fs::copy_options::recursive);
  Replay r = replay(dir);
  ASSERT_EQ(r.changes.size(), 2u) << ::testing::PrintToString(kinds_and_ids(r.events));
  // The VFIO group node names no PCI device: the bind event carries the change.
  EXPECT_EQ(r.changes[0].notifications, 2u);
  EXPECT_EQ(r.watcher->status().ignored, 1u);
  EXPECT_EQ(r.changes[0].events.front().identity, "0000:ae:00.0");
  EXPECT_NE(r.changes[0].events.front().kind, WatchEventKind::health);
  EXPECT_EQ(kinds_and_ids(r.changes[1].events).back().substr(kinds_and_ids(r.changes[1].events).back().find(' ') + 1),
            "0000:ae:00.0");
  expect_same_machine(*r.watcher->registry(), detect_final(*r.system));
  expect_same_machine(*r.watcher->registry(), DetectBuilder{}.detect(r.system->state(0)));
}

// ---- the watcher's own behaviour, on scripted streams ----------------------------------

// A System whose event stream is a script: batches handed out at given times.
class ScriptedSystem final : public System {
 public:
  struct Timed {
    std::chrono::milliseconds after;
    EventBatch batch;
  };
  ScriptedSystem(const System& inner, std::vector<Timed> script) : inner_(inner), script_(std::move(script)) {}

  Result<FileContent> read_file(std::string_view p, std::size_t m) const override { return inner_.read_file(p, m); }
  Result<std::vector<DirEntry>> list_dir(std::string_view p) const override { return inner_.list_dir(p); }
  Result<std::string> read_link(std::string_view p) const override { return inner_.read_link(p); }
  Result<FileStatus> status(std::string_view p, bool f) const override { return inner_.status(p, f); }
  std::optional<std::string> env(std::string_view n) const override { return inner_.env(n); }
  std::optional<std::string> find_tool(std::string_view n) const override { return inner_.find_tool(n); }
  Result<ToolResult> run(const ToolRequest& r) const override { return inner_.run(r); }
  bool runs_instantly() const noexcept override { return true; }

  Result<std::unique_ptr<EventStream>> open_events(const EventStreamOptions&) const override {
    return std::unique_ptr<EventStream>(std::make_unique<Stream>(script_));
  }

 private:
  class Stream final : public EventStream {
   public:
    explicit Stream(std::vector<Timed> script) : script_(std::move(script)), start_(std::chrono::steady_clock::now()) {}
    Result<EventBatch> wait(std::chrono::steady_clock::time_point deadline) override {
      std::unique_lock lock(mutex_);
      if (next_ < script_.size()) {
        const auto due = start_ + script_[next_].after;
        cv_.wait_until(lock, std::min(due, deadline), [&] { return woken_; });
        woken_ = false;
        if (std::chrono::steady_clock::now() >= due) return script_[next_++].batch;
        return EventBatch{};
      }
      cv_.wait_until(lock, deadline, [&] { return woken_; });
      woken_ = false;
      return EventBatch{};
    }
    void wake() noexcept override {
      std::lock_guard lock(mutex_);
      woken_ = true;
      cv_.notify_all();
    }
    std::vector<std::string> sources() const override { return {"script"}; }
    std::vector<std::string> unavailable() const override { return {}; }

   private:
    std::vector<Timed> script_;
    std::chrono::steady_clock::time_point start_;
    std::size_t next_ = 0;
    std::mutex mutex_;
    std::condition_variable cv_;
    bool woken_ = false;
  };

  const System& inner_;
  std::vector<Timed> script_;
};

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool sanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool sanitized = true;
#else
constexpr bool sanitized = false;
#endif
#else
constexpr bool sanitized = false;
#endif

// A "VmRSS:"/"VmHWM:" line of /proc/self/status, in KiB (0 when absent).
long status_kib(std::string_view key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.starts_with(key) && line.size() > key.size() && line[key.size()] == ':')
      return std::strtol(line.c_str() + key.size() + 1, nullptr, 10);
  return 0;
}

EventBatch batch_of(std::vector<KernelEvent> events) { return EventBatch{std::move(events), false, false}; }

TEST(Watch, BurstsAreDebouncedIntoOneDetection) {
  const auto machine = testing::open_machine("h100-nvl-pair-nvlink-bridge");
  std::vector<ScriptedSystem::Timed> script;
  // Ten module events 20 ms apart: one burst under a 150 ms debounce.
  for (int i = 0; i < 10; ++i)
    script.push_back({std::chrono::milliseconds(20 * i), batch_of({uevent("add", "/module/nvidia", {{"SUBSYSTEM", "module"}})})});
  ScriptedSystem system(*machine, script);
  WatchOptions options;
  options.debounce = 150ms;
  options.rescan_interval = 0ms;
  auto watcher = Watcher::start(system, options);
  ASSERT_TRUE(watcher) << watcher.error().message;
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while ((*watcher)->status().detections < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(10ms);
  std::this_thread::sleep_for(400ms);  // time for a second burst, were there one
  const WatchStatus s = (*watcher)->status();
  EXPECT_EQ(s.detections, 2u);
  EXPECT_EQ(s.notifications, 10u);
  EXPECT_EQ(s.changes, 0u);  // nothing changed on the machine
  (*watcher)->stop();
  EXPECT_TRUE((*watcher)->status().finished);
}

TEST(Watch, AFloodStaysBoundedAndEndsRight) {
  const auto machine = testing::open_machine("h100-nvl-pair-nvlink-bridge");
  // 100 000 events: hostile ones among them (malformed, truncated, oversized,
  // forged udev), the rest a driver reload going on and on.
  std::vector<KernelEvent> flood;
  flood.reserve(100'000);
  const std::string good = uevent_message("bind", "/devices/pci0000:ad/0000:ad:01.0/0000:ae:00.0",
                                          {{"SUBSYSTEM", "pci"}, {"DRIVER", "nvidia"}, {"PCI_ID", "10DE:2321"}});
  for (int i = 0; i < 100'000; ++i) {
    switch (i % 5) {
      case 0: flood.push_back(KernelEvent{KernelEvent::Source::uevent, good}); break;
      case 1: flood.push_back(KernelEvent{KernelEvent::Source::uevent, good.substr(0, static_cast<std::size_t>(i % 40))}); break;
      case 2:
        flood.push_back(KernelEvent{KernelEvent::Source::uevent,
                                    i % 1000 == 2 ? std::string(max_uevent_bytes + 1, 'a') : std::string("\x01garbage")});
        break;
      case 3: flood.push_back(KernelEvent{KernelEvent::Source::uevent, std::string("libudev\0\xfe\xed", 10)}); break;
      case 4: flood.push_back(kmsg("6,1,1,-;NVRM: Xid (PCI:0000:ae:00): 79, GPU has fallen off the bus.")); break;
    }
  }
  std::vector<ScriptedSystem::Timed> script;
  for (std::size_t at = 0; at < flood.size(); at += 4096) {
    std::vector<KernelEvent> part(flood.begin() + static_cast<std::ptrdiff_t>(at),
                                  flood.begin() + static_cast<std::ptrdiff_t>(std::min(flood.size(), at + 4096)));
    script.push_back({0ms, batch_of(std::move(part))});
  }
  flood.clear();
  flood.shrink_to_fit();
  ScriptedSystem system(*machine, std::move(script));
  rusage before{};
  getrusage(RUSAGE_SELF, &before);
  // Peak memory of this process from here on (clear_refs "5" resets VmHWM):
  // earlier tests in the same process must not count.
  std::ofstream("/proc/self/clear_refs") << "5";
  const long rss_before = status_kib("VmRSS");
  WatchOptions options;
  options.debounce = 50ms;
  options.rescan_interval = 0ms;
  auto watcher = Watcher::start(system, options);
  ASSERT_TRUE(watcher);
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while ((*watcher)->status().notifications < 100'000 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  while ((*watcher)->status().detections < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(10ms);
  (*watcher)->stop();
  rusage after{};
  getrusage(RUSAGE_SELF, &after);
  const WatchStatus s = (*watcher)->status();
  EXPECT_EQ(s.notifications, 100'000u);
  // Every oversized, forged and garbage message, and the one-byte cuts of the
  // good one; longer cuts still hold a whole ACTION@DEVPATH and are read (then
  // ignored: they name no PCI device).
  EXPECT_EQ(s.malformed, 20'000u + 20'000u + 2'500u);
  EXPECT_GE(s.detections, 2u);
  // One health report for the one fault said 20 000 times.
  std::size_t health = 0;
  while (auto e = (*watcher)->next_event(std::chrono::steady_clock::now()))
    if (e->kind == WatchEventKind::health) ++health;
  EXPECT_EQ(health, s.detections - 1);
  const auto cpu = [](const rusage& r) {
    return std::chrono::seconds(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
           std::chrono::microseconds(r.ru_utime.tv_usec + r.ru_stime.tv_usec);
  };
  const auto used = std::chrono::duration_cast<std::chrono::milliseconds>(cpu(after) - cpu(before));
  const long grown_mib = (status_kib("VmHWM") - rss_before) / 1024;
  std::printf("flood of 100000 events: %lld ms of CPU, peak memory %ld MiB above where it started\n",
              static_cast<long long>(used.count()), grown_mib);
  // Under 64 MiB and 2 s of CPU. Sanitizers multiply both; there the figures
  // are only printed.
  if (!sanitized) {
    EXPECT_LT(grown_mib, 64);
    EXPECT_LT(used, std::chrono::seconds(2));
  }
  expect_same_machine(*(*watcher)->registry(), DetectBuilder{}.detect(*machine));
}

TEST(Watch, CachedRegistryIsInvalidatedByEvents) {
  TimelineBuilder b("h100-nvl-pair-nvlink-bridge");
  b.step({.name = "xid-79",
          .events = {kmsg("3,1,1,-;NVRM: Xid (PCI:0000:ae:00): 79, GPU has fallen off the bus.")},
          .commands = one_gpu_outputs(b),
          .removed = lost_gpu_paths()});
  auto system = TimelineSystem::open(b.write());
  ASSERT_TRUE(system);
  const TimelineSystem& machine = **system;
  CacheOptions cache_options;
  cache_options.ttl = std::chrono::hours(1);
  cache_options.detect = [&machine] { return DetectBuilder{}.detect(machine); };
  CachedRegistry cache(cache_options);
  EXPECT_EQ(cache.get()->by_backend(Backend::cuda).size(), 2u);
  // Attached from the start, so that the replay cannot run before it.
  std::atomic<bool> seen_removed_in_cache{false};
  WatchOptions options;
  options.caches = {&cache};
  options.on_change = [&](const RegistryChange&) {
    seen_removed_in_cache = cache.get()->by_backend(Backend::cuda).size() == 2;
  };
  auto watcher = Watcher::start(machine, options);
  ASSERT_TRUE(watcher);
  ASSERT_TRUE((*watcher)->wait_finished(std::chrono::steady_clock::now() + 30s));
  EXPECT_EQ(cache.get()->by_backend(Backend::cuda).size(), 1u);
  EXPECT_FALSE(seen_removed_in_cache.load());
  (*watcher)->detach(cache);
}

TEST(Watch, WithoutAnyStreamItRescansOrRefuses) {
  const auto machine = testing::open_machine("h100-nvl-pair-nvlink-bridge");
  WatchOptions none;
  none.rescan_interval = 0ms;
  auto refused = Watcher::start(*machine, none);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::unsupported);
  WatchOptions rescans;
  rescans.rescan_interval = 50ms;
  auto watcher = Watcher::start(*machine, rescans);
  ASSERT_TRUE(watcher);
  const WatchStatus s = (*watcher)->status();
  EXPECT_FALSE(s.unavailable.empty());
  EXPECT_EQ(s.sources, (std::vector<std::string>{"periodic re-scan every 50 ms"}));
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while ((*watcher)->status().detections < 3 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(10ms);
  EXPECT_GE((*watcher)->status().detections, 3u);
  EXPECT_EQ((*watcher)->status().changes, 0u);
  (*watcher)->stop();
}

// The live path: as root, make the kernel send a real uevent by writing
// "change" to a device's uevent file, and expect it on the stream.
TEST(LiveEvents, TheKernelsUeventArrives) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to write a device's uevent file";
  const auto live = make_live_system();
  EventStreamOptions options;
  options.kernel_log = false;
  auto stream = live->open_events(options);
  if (!stream) GTEST_SKIP() << "no uevent socket here: " << stream.error().message;
  const char* device = "/sys/devices/virtual/mem/null/uevent";
  {
    std::ofstream trigger(device);
    if (!trigger) GTEST_SKIP() << "cannot open " << device;
    trigger << "change";
    trigger.flush();
    if (!trigger) GTEST_SKIP() << "the kernel refused the write to " << device;
  }
  const auto deadline = std::chrono::steady_clock::now() + 3s;
  while (std::chrono::steady_clock::now() < deadline) {
    auto batch = (*stream)->wait(deadline);
    ASSERT_TRUE(batch) << batch.error().message;
    for (const auto& e : batch->events) {
      auto parsed = parse_uevent(e.payload);
      if (parsed && parsed->devpath == "/devices/virtual/mem/null") {
        EXPECT_EQ(parsed->action, "change");
        EXPECT_EQ(parsed->get("SUBSYSTEM"), "mem");
        return;
      }
    }
  }
  GTEST_SKIP() << "the kernel delivered no uevent to this network namespace within 3 s (a container without "
                  "uevents): the live path cannot be tested here";
}

TEST(LiveEvents, WakeEndsAWaitAtOnce) {
  const auto live = make_live_system();
  auto stream = live->open_events();
  if (!stream) GTEST_SKIP() << "no kernel notifications here: " << stream.error().message;
  std::thread waker([&] {
    std::this_thread::sleep_for(50ms);
    (*stream)->wake();
  });
  const auto start = std::chrono::steady_clock::now();
  auto batch = (*stream)->wait(start + 30s);
  waker.join();
  ASSERT_TRUE(batch);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
}

TEST(Watch, EventsAsJsonAndText) {
  WatchEvent e;
  e.kind = WatchEventKind::changed;
  e.identity = "0000:ae:00.0";
  e.id = "cuda:1";
  e.name = "NVIDIA H100 NVL";
  e.backend = Backend::cuda;
  e.fields = {FieldChange{"driver_version", "550.54.14", "550.127.05"}};
  e.change = 3;
  e.at = std::chrono::system_clock::time_point(std::chrono::milliseconds(1'795'000'000'123));
  EXPECT_EQ(to_json(e),
            R"({"event":"changed","change":3,"at":"2026-11-18T11:06:40.123Z","identity":"0000:ae:00.0","id":"cuda:1",)"
            R"("name":"NVIDIA H100 NVL","backend":"cuda","fields":[{"field":"driver_version","before":"550.54.14",)"
            R"("after":"550.127.05"}]})");
  EXPECT_EQ(to_text(e), "changed cuda:1 (0000:ae:00.0) NVIDIA H100 NVL: driver_version 550.54.14 -> 550.127.05");
}

}  // namespace
}  // namespace hwaccel
