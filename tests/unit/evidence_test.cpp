// Start-up evidence (detect/evidence.cpp): which backends' tools a detection
// looks for, from the kernel's traces in /sys/module, /dev and the PCI list.
#include <gtest/gtest.h>

#include <string>

#include "../test_support.hpp"

import hwaccel;

namespace {

using namespace hwaccel;
using hwaccel::testing::FixtureBuilder;

KernelTraces traces_of(FixtureBuilder& f) {
  auto system = FixtureSystem::open(f.write());
  EXPECT_TRUE(system) << system.error().message;
  return read_kernel_traces(**system);
}

bool looks(Backend b, const KernelTraces& t, bool all_tools = false) {
  DetectOptions options;
  options.all_tools = all_tools;
  return looks_for_tools(detector_for(b), t, options);
}

TEST(KernelTraces, NothingReadableMeansEveryToolIsLookedFor) {
  FixtureBuilder f;
  f.file("/proc/meminfo", "MemTotal: 1024 kB\n");
  const auto t = traces_of(f);
  EXPECT_FALSE(t.readable);
  for (const Backend b : all_backends)
    EXPECT_TRUE(looks(b, t)) << to_string(b) << ": without evidence to read, nothing can be concluded";
}

TEST(KernelTraces, AMachineWithoutAcceleratorsLooksForNoVendorTool) {
  FixtureBuilder f;
  f.file("/dev/null", "").file("/dev/tty", "").file("/sys/module/ext4/uevent", "");
  f.file("/proc/bus/pci/devices", "0000\t80861237\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\n");
  const auto t = traces_of(f);
  ASSERT_TRUE(t.readable);
  EXPECT_EQ(t.pci_vendors, (std::vector<std::uint16_t>{0x8086}));
  for (const Backend b : {Backend::cuda, Backend::rocm, Backend::gaudi, Backend::aws_neuron, Backend::tpu,
                          Backend::qualcomm, Backend::vulkan})
    EXPECT_FALSE(looks(b, t)) << to_string(b);
  // --all-tools looks anyway.
  EXPECT_TRUE(looks(Backend::cuda, t, true));
}

TEST(KernelTraces, ADriverModuleIsEvidence) {
  FixtureBuilder f;
  f.file("/sys/module/nvidia/version", "580.65.06\n").file("/dev/null", "");
  const auto t = traces_of(f);
  EXPECT_TRUE(looks(Backend::cuda, t));
  EXPECT_FALSE(looks(Backend::rocm, t));
}

TEST(KernelTraces, AContainerWithTheDeviceNodeButNoPciIsEvidence) {
  // A container that passes /dev/nvidia0 and hides the PCI device and the
  // kernel's modules: nvidia-smi must still be looked for.
  FixtureBuilder f;
  f.file("/dev/nvidia0", "").file("/dev/nvidiactl", "").file("/dev/null", "");
  const auto t = traces_of(f);
  ASSERT_TRUE(t.readable);
  EXPECT_TRUE(t.pci_vendors.empty());
  EXPECT_TRUE(looks(Backend::cuda, t));
  EXPECT_FALSE(looks(Backend::gaudi, t));
}

TEST(KernelTraces, PciVendorsFromSysfsWhenProcfsHasNone) {
  FixtureBuilder f;
  f.file("/sys/bus/pci/devices/0000:03:00.0/vendor", "0x1002\n");
  f.file("/sys/bus/pci/devices/0000:04:00.0/vendor", "garbage\n");
  f.file("/sys/bus/pci/devices/0000:05:00.0/vendor", "0x123456789\n");
  const auto t = traces_of(f);
  ASSERT_TRUE(t.readable);
  EXPECT_EQ(t.pci_vendors, (std::vector<std::uint16_t>{0x1002}));
  EXPECT_TRUE(looks(Backend::rocm, t));
  EXPECT_FALSE(looks(Backend::cuda, t));
}

TEST(KernelTraces, GarbageInTheProcPciListIsNoEvidence) {
  FixtureBuilder f;
  f.file("/proc/bus/pci/devices", std::string("\x01\xff not a listing\n\n\t\t\n", 22));
  const auto t = traces_of(f);
  EXPECT_TRUE(t.readable);
  EXPECT_TRUE(t.pci_vendors.empty());
  EXPECT_FALSE(looks(Backend::cuda, t));
}

TEST(KernelTraces, ToolsOfABackendWithoutEvidenceAreNotRunEndToEnd) {
  // An nvidia-smi on PATH that answers, on a machine whose kernel shows no
  // NVIDIA device: it is not run, and nothing is reported found.
  FixtureBuilder f;
  f.file("/dev/null", "").command({"nvidia-smi", "-L"}, "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)\n");
  auto system = FixtureSystem::open(f.write());
  ASSERT_TRUE(system) << system.error().message;
  const auto quiet = DetectBuilder::none().with(Backend::cuda).system_probes(false).detect(**system);
  EXPECT_TRUE(quiet.devices().empty());
  const auto all = DetectBuilder::none().with(Backend::cuda).system_probes(false).all_tools(true).detect(**system);
  // With every tool looked for, the fake answers to -L only; the detector
  // then tries its other queries and warns, but it did run the tool.
  EXPECT_FALSE(all.warnings().empty());
}

}  // namespace
