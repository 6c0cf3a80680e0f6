// Visible-device resolution: CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES,
// CUDA_DEVICE_ORDER, ROCR_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES over devices
// built here, and the inputs as read through a fixture.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../test_support.hpp"

import hwaccel;

namespace {

using namespace hwaccel;
using hwaccel::testing::FixtureBuilder;

DeviceProfile gpu(Backend backend, std::uint32_t index, std::string uuid, std::string pci,
                  std::string name = "NVIDIA H100 80GB HBM3", std::string cc = "9.0") {
  DeviceProfile d;
  d.backend = backend;
  d.family = Family::gpu;
  d.index = index;
  d.id = device_id(backend, index);
  d.name = std::move(name);
  if (!uuid.empty()) d.uuid = std::move(uuid);
  if (!pci.empty()) d.pci_bus_id = std::move(pci);
  if (!cc.empty()) d.compute_capability = std::move(cc);
  return d;
}

DeviceProfile cuda(std::uint32_t index, std::string uuid, std::string pci, std::string name = "NVIDIA H100 80GB HBM3",
                   std::string cc = "9.0") {
  return gpu(Backend::cuda, index, std::move(uuid), std::move(pci), std::move(name), std::move(cc));
}

DevicePartition partition(const DeviceProfile& parent, std::uint32_t index, std::string uuid, std::uint32_t gi = 0,
                          std::uint32_t ci = 0, std::string profile = "3g.40gb") {
  DevicePartition p;
  p.id = parent.id + "/mig:" + std::to_string(index);
  p.index = index;
  p.profile = std::move(profile);
  if (!uuid.empty()) p.uuid = std::move(uuid);
  p.gpu_instance_id = gi;
  p.compute_instance_id = ci;
  return p;
}

// Four identical GPUs in PCI order, as nvidia-smi numbers them.
std::vector<DeviceProfile> four_h100() {
  return {cuda(0, "GPU-1a2b3c4d-0000-4000-8000-000000000000", "0000:18:00.0"),
          cuda(1, "GPU-1a2b9999-0000-4000-8000-000000000001", "0000:2a:00.0"),
          cuda(2, "GPU-5e6f7a8b-0000-4000-8000-000000000002", "0000:3a:00.0"),
          cuda(3, "GPU-9c0d1e2f-0000-4000-8000-000000000003", "0000:5d:00.0")};
}

VisibilityInputs vars(std::initializer_list<std::pair<const char*, const char*>> env, bool in_container = false) {
  VisibilityInputs in;
  for (const auto& [k, v] : env) in.env.emplace(k, v);
  in.in_container = in_container;
  return in;
}

// "cuda:0=1" visible with runtime index 1, "cuda:0=v" visible without one,
// "cuda:0=-" hidden; partitions in brackets.
std::string summary(const std::vector<DeviceProfile>& devices) {
  std::string out;
  const auto state = [](bool visible, const std::optional<std::uint32_t>& index) {
    return !visible ? std::string("-") : index ? std::to_string(*index) : std::string("v");
  };
  for (const auto& d : devices) {
    if (!out.empty()) out += ' ';
    out += d.id + "=" + state(d.visible, d.runtime_index);
    if (d.partitions.empty()) continue;
    out += '[';
    for (std::size_t i = 0; i < d.partitions.size(); ++i)
      out += (i ? "," : "") + std::to_string(d.partitions[i].index) + "=" +
             state(d.partitions[i].visible, d.partitions[i].runtime_index);
    out += ']';
  }
  return out;
}

struct Result {
  std::string devices;
  std::vector<Warning> warnings;
};

Result resolve(std::vector<DeviceProfile> devices, const VisibilityInputs& inputs) {
  Result r;
  resolve_visibility(devices, inputs, r.warnings);
  r.devices = summary(devices);
  return r;
}

std::vector<WarningKind> kinds(const std::vector<Warning>& warnings) {
  std::vector<WarningKind> out;
  for (const auto& w : warnings) out.push_back(w.kind);
  return out;
}

// --- CUDA_VISIBLE_DEVICES -----------------------------------------------------------

TEST(CudaVisibility, UnsetMeansEveryGpuInPciOrder) {
  const auto r = resolve(four_h100(), {});
  EXPECT_EQ(r.devices, "cuda:0=0 cuda:1=1 cuda:2=2 cuda:3=3");
  EXPECT_TRUE(r.warnings.empty());
}

TEST(CudaVisibility, ListOrderIsRuntimeOrder) {
  const auto r = resolve(four_h100(), vars({{"CUDA_VISIBLE_DEVICES", "1,0"}}));
  EXPECT_EQ(r.devices, "cuda:0=1 cuda:1=0 cuda:2=- cuda:3=-");
  EXPECT_TRUE(r.warnings.empty());
}

TEST(CudaVisibility, NegativeIndexEndsTheListQuietly) {
  // The CUDA documentation's own example: 0,2,-1,1 exposes 0 and 2.
  const auto r = resolve(four_h100(), vars({{"CUDA_VISIBLE_DEVICES", "0,2,-1,1"}}));
  EXPECT_EQ(r.devices, "cuda:0=0 cuda:1=- cuda:2=1 cuda:3=-");
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_EQ(resolve(four_h100(), vars({{"CUDA_VISIBLE_DEVICES", "-1"}})).devices, "cuda:0=- cuda:1=- cuda:2=- cuda:3=-");
}

TEST(CudaVisibility, EmptyMeansNoGpu) {
  const auto r = resolve(four_h100(), vars({{"CUDA_VISIBLE_DEVICES", ""}}));
  EXPECT_EQ(r.devices, "cuda:0=- cuda:1=- cuda:2=- cuda:3=-");
  EXPECT_TRUE(r.warnings.empty());
}

TEST(CudaVisibility, AllIsNotSpecialToCuda) {
  const auto r = resolve(four_h100(), vars({{"CUDA_VISIBLE_DEVICES", "all"}}));
  EXPECT_EQ(r.devices, "cuda:0=- cuda:1=- cuda:2=- cuda:3=-");
  ASSERT_EQ(kinds(r.warnings), std::vector<WarningKind>{WarningKind::invalid_value});
  EXPECT_EQ(r.warnings[0].backend, "cuda");
  EXPECT_NE(r.warnings[0].message.find("NVIDIA_VISIBLE_DEVICES"), std::string::npos);
}

TEST(CudaVisibility, InvalidEntryEndsTheList) {
  const auto past = resolve(four_h100(), vars({{"CUDA_VISIBLE_DEVICES", "3,7,0"}}));
  EXPECT_EQ(past.devices, "cuda:0=- cuda:1=- cuda:2=- cuda:3=0");
  ASSERT_EQ(kinds(past.warnings), std::vector<WarningKind>{WarningKind::invalid_value});
  EXPECT_NE(past.warnings[0].message.find("entry 2 (\"7\")"), std::string::npos);
  const auto garbage = resolve(four_h100(), vars({{"CUDA_VISIBLE_DEVICES", "1,x,0"}}));
  EXPECT_EQ(garbage.devices, "cuda:0=- cuda:1=0 cuda:2=- cuda:3=-");
  EXPECT_EQ(kinds(garbage.warnings), std::vector<WarningKind>{WarningKind::invalid_value});
  const auto empty_entry = resolve(four_h100(), vars({{"CUDA_VISIBLE_DEVICES", "2,,1"}}));
  EXPECT_EQ(empty_entry.devices, "cuda:0=- cuda:1=- cuda:2=0 cuda:3=-");
}

TEST(CudaVisibility, IndicesAreReadLikeStrtoul) {
  EXPECT_EQ(resolve(four_h100(), vars({{"CUDA_VISIBLE_DEVICES", " 2 , 3gpu"}})).devices, "cuda:0=- cuda:1=- cuda:2=0 cuda:3=1");
  EXPECT_EQ(resolve(four_h100(), vars({{"CUDA_VISIBLE_DEVICES", "+1"}})).devices, "cuda:0=- cuda:1=0 cuda:2=- cuda:3=-");
}

TEST(CudaVisibility, RepeatedDeviceHidesEverything) {
  const auto r = resolve(four_h100(), vars({{"CUDA_VISIBLE_DEVICES", "0,1,0"}}));
  EXPECT_EQ(r.devices, "cuda:0=- cuda:1=- cuda:2=- cuda:3=-");
  EXPECT_EQ(kinds(r.warnings), std::vector<WarningKind>{WarningKind::invalid_value});
}

TEST(CudaVisibility, UuidsAndUniquePrefixes) {
  const auto r = resolve(four_h100(), vars({{"CUDA_VISIBLE_DEVICES", "GPU-9c0d1e2f-0000-4000-8000-000000000003,GPU-5e6f"}}));
  EXPECT_EQ(r.devices, "cuda:0=- cuda:1=- cuda:2=1 cuda:3=0");
  EXPECT_TRUE(r.warnings.empty());
  // "GPU-1a2b" names two GPUs: the list ends there.
  const auto ambiguous = resolve(four_h100(), vars({{"CUDA_VISIBLE_DEVICES", "GPU-5e6f,GPU-1a2b,GPU-9c0d"}}));
  EXPECT_EQ(ambiguous.devices, "cuda:0=- cuda:1=- cuda:2=0 cuda:3=-");
  ASSERT_EQ(kinds(ambiguous.warnings), std::vector<WarningKind>{WarningKind::invalid_value});
  EXPECT_NE(ambiguous.warnings[0].message.find("more than one"), std::string::npos);
  // Unknown UUID, and an index after UUIDs.
  EXPECT_EQ(resolve(four_h100(), vars({{"CUDA_VISIBLE_DEVICES", "GPU-ffff"}})).devices, "cuda:0=- cuda:1=- cuda:2=- cuda:3=-");
  const auto mixed = resolve(four_h100(), vars({{"CUDA_VISIBLE_DEVICES", "GPU-5e6f,0"}}));
  EXPECT_EQ(mixed.devices, "cuda:0=- cuda:1=- cuda:2=0 cuda:3=-");
  EXPECT_EQ(kinds(mixed.warnings), std::vector<WarningKind>{WarningKind::invalid_value});
}

TEST(CudaVisibility, OtherBackendsAreLeftAlone) {
  std::vector<DeviceProfile> devices = four_h100();
  DeviceProfile cpu;
  cpu.id = "cpu:0";
  DeviceProfile vk = gpu(Backend::vulkan, 0, "", "");
  vk.runtime_index = 7;
  devices.push_back(cpu);
  devices.push_back(vk);
  const auto r = resolve(devices, vars({{"CUDA_VISIBLE_DEVICES", ""}}));
  EXPECT_EQ(r.devices, "cuda:0=- cuda:1=- cuda:2=- cuda:3=- cpu:0=v vulkan:0=7");
}

// --- CUDA_DEVICE_ORDER -----------------------------------------------------------

std::vector<DeviceProfile> mixed_workstation() {
  // nvidia-smi order (PCI): a T4 on bus 0x17, an RTX 4090 on bus 0x65.
  return {cuda(0, "GPU-aaaa0000-0000-4000-8000-000000000000", "0000:17:00.0", "Tesla T4", "7.5"),
          cuda(1, "GPU-bbbb0000-0000-4000-8000-000000000000", "0000:65:00.0", "NVIDIA GeForce RTX 4090", "8.9")};
}

TEST(CudaVisibility, PciBusIdOrderIsExact) {
  const auto r = resolve(mixed_workstation(), vars({{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}, {"CUDA_VISIBLE_DEVICES", "1"}}));
  EXPECT_EQ(r.devices, "cuda:0=- cuda:1=0");
  EXPECT_TRUE(r.warnings.empty());
}

TEST(CudaVisibility, PciOrderFollowsBusIdsNotDetectorIndices) {
  std::vector<DeviceProfile> devices = four_h100();
  devices[0].pci_bus_id = "0000:db:00.0";  // index 0 sits on the last bus
  const auto r = resolve(devices, vars({{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}}));
  EXPECT_EQ(r.devices, "cuda:0=3 cuda:1=0 cuda:2=1 cuda:3=2");
}

TEST(CudaVisibility, FastestFirstBetweenDifferentGpusIsAnAssumption) {
  const auto r = resolve(mixed_workstation(), vars({{"CUDA_VISIBLE_DEVICES", "0"}}));
  // Assumed: compute capability first, so the RTX 4090 is CUDA device 0.
  EXPECT_EQ(r.devices, "cuda:0=- cuda:1=0");
  ASSERT_EQ(kinds(r.warnings), std::vector<WarningKind>{WarningKind::degraded});
  EXPECT_NE(r.warnings[0].message.find("CUDA_DEVICE_ORDER=PCI_BUS_ID"), std::string::npos);
}

TEST(CudaVisibility, UnknownDeviceOrderIsTheDefault) {
  const auto r = resolve(four_h100(), vars({{"CUDA_DEVICE_ORDER", "pci"}}));
  EXPECT_EQ(r.devices, "cuda:0=0 cuda:1=1 cuda:2=2 cuda:3=3");
  EXPECT_EQ(kinds(r.warnings), std::vector<WarningKind>{WarningKind::invalid_value});
}

// --- MIG ---------------------------------------------------------------------

// GPU 0 whole; GPU 1 in MIG mode with two MIG devices; GPU 2 in MIG mode with one.
std::vector<DeviceProfile> mig_machine() {
  std::vector<DeviceProfile> d = {cuda(0, "GPU-00000000-0000-4000-8000-000000000000", "0000:07:00.0", "NVIDIA A100-SXM4-80GB", "8.0"),
                                  cuda(1, "GPU-11111111-0000-4000-8000-000000000000", "0000:0b:00.0", "NVIDIA A100-SXM4-80GB", "8.0"),
                                  cuda(2, "GPU-22222222-0000-4000-8000-000000000000", "0000:48:00.0", "NVIDIA A100-SXM4-80GB", "8.0")};
  d[1].partitions = {partition(d[1], 1, "MIG-bbbb1111-0000-5000-8000-000000000001", 2, 0, "3g.40gb"),
                     partition(d[1], 0, "MIG-aaaa1111-0000-5000-8000-000000000000", 1, 0, "3g.40gb")};
  d[2].partitions = {partition(d[2], 0, "MIG-cccc2222-0000-5000-8000-000000000000", 1, 0, "7g.80gb")};
  return d;
}

TEST(CudaVisibility, MigDevicesCountOncePerProcess) {
  // Unset: GPU 0 whole, then GPU 1's first MIG device; GPU 2 has no room left.
  const auto r = resolve(mig_machine(), {});
  EXPECT_EQ(r.devices, "cuda:0=0 cuda:1=v[1=-,0=1] cuda:2=-[0=-]");
  ASSERT_EQ(kinds(r.warnings), std::vector<WarningKind>{WarningKind::unsupported});
  EXPECT_NE(r.warnings[0].message.find("cuda:2"), std::string::npos);
}

TEST(CudaVisibility, MigUuidSelectsThePartition) {
  const auto r = resolve(mig_machine(), vars({{"CUDA_VISIBLE_DEVICES", "MIG-bbbb1111-0000-5000-8000-000000000001,MIG-cccc"}}));
  EXPECT_EQ(r.devices, "cuda:0=- cuda:1=v[1=0,0=-] cuda:2=-[0=-]");
  ASSERT_EQ(kinds(r.warnings), std::vector<WarningKind>{WarningKind::unsupported});
  EXPECT_NE(r.warnings[0].message.find("cuda:2/mig:0"), std::string::npos);
}

TEST(CudaVisibility, LegacyMigNames) {
  const auto r = resolve(mig_machine(), vars({{"CUDA_VISIBLE_DEVICES", "MIG-GPU-11111111-0000-4000-8000-000000000000/2/0"}}));
  EXPECT_EQ(r.devices, "cuda:0=- cuda:1=v[1=0,0=-] cuda:2=-[0=-]");
  EXPECT_TRUE(r.warnings.empty());
  const auto wrong = resolve(mig_machine(), vars({{"CUDA_VISIBLE_DEVICES", "MIG-GPU-11111111-0000-4000-8000-000000000000/9/0"}}));
  EXPECT_EQ(wrong.devices, "cuda:0=- cuda:1=-[1=-,0=-] cuda:2=-[0=-]");
  EXPECT_EQ(kinds(wrong.warnings), std::vector<WarningKind>{WarningKind::invalid_value});
}

TEST(CudaVisibility, GpuIndexOfAMigGpuGivesItsFirstMigDevice) {
  const auto r = resolve(mig_machine(), vars({{"CUDA_VISIBLE_DEVICES", "2,0"}}));
  EXPECT_EQ(r.devices, "cuda:0=1 cuda:1=-[1=-,0=-] cuda:2=v[0=0]");
  EXPECT_TRUE(r.warnings.empty());
}

TEST(CudaVisibility, MigModeWithoutMigDevicesIsUnusable) {
  std::vector<DeviceProfile> devices = four_h100();
  devices[1].properties.emplace("mig_mode", "Enabled");
  const auto r = resolve(devices, {});
  EXPECT_EQ(r.devices, "cuda:0=0 cuda:1=- cuda:2=1 cuda:3=2");
  ASSERT_EQ(kinds(r.warnings), std::vector<WarningKind>{WarningKind::unsupported});
  EXPECT_NE(r.warnings[0].message.find("cuda:1"), std::string::npos);
}

// --- NVIDIA_VISIBLE_DEVICES -----------------------------------------------------

TEST(NvidiaVisibleDevices, IgnoredOutsideAContainer) {
  const auto r = resolve(four_h100(), vars({{"NVIDIA_VISIBLE_DEVICES", "none"}}));
  EXPECT_EQ(r.devices, "cuda:0=0 cuda:1=1 cuda:2=2 cuda:3=3");
}

TEST(NvidiaVisibleDevices, AlreadyAppliedByTheRuntime) {
  // nvidia-smi in the container shows the two GPUs it got, renumbered 0 and 1.
  std::vector<DeviceProfile> inside = {cuda(0, "GPU-5e6f7a8b-0000-4000-8000-000000000002", "0000:3a:00.0"),
                                       cuda(1, "GPU-9c0d1e2f-0000-4000-8000-000000000003", "0000:5d:00.0")};
  const auto r = resolve(inside, vars({{"NVIDIA_VISIBLE_DEVICES", "2,3"}, {"CUDA_VISIBLE_DEVICES", "1"}}, true));
  EXPECT_EQ(r.devices, "cuda:0=- cuda:1=0");
  EXPECT_TRUE(r.warnings.empty());
}

TEST(NvidiaVisibleDevices, HostIndicesWhenTheDetectionSawTheHost) {
  // Detection saw every host GPU (sysfs is not namespaced): the container has 2 and 3.
  const auto r = resolve(four_h100(), vars({{"NVIDIA_VISIBLE_DEVICES", "3,2"}, {"CUDA_VISIBLE_DEVICES", "1"}}, true));
  EXPECT_EQ(r.devices, "cuda:0=- cuda:1=- cuda:2=- cuda:3=0");
  EXPECT_TRUE(r.warnings.empty());
}

TEST(NvidiaVisibleDevices, UuidsSelectTheContainersGpus) {
  const auto r = resolve(four_h100(), vars({{"NVIDIA_VISIBLE_DEVICES", "GPU-1a2b9999-0000-4000-8000-000000000001"}}, true));
  EXPECT_EQ(r.devices, "cuda:0=- cuda:1=0 cuda:2=- cuda:3=-");
}

TEST(NvidiaVisibleDevices, SpecialValues) {
  EXPECT_EQ(resolve(four_h100(), vars({{"NVIDIA_VISIBLE_DEVICES", "none"}}, true)).devices, "cuda:0=- cuda:1=- cuda:2=- cuda:3=-");
  EXPECT_EQ(resolve(four_h100(), vars({{"NVIDIA_VISIBLE_DEVICES", "void"}}, true)).devices, "cuda:0=0 cuda:1=1 cuda:2=2 cuda:3=3");
  EXPECT_EQ(resolve(four_h100(), vars({{"NVIDIA_VISIBLE_DEVICES", "all"}}, true)).devices, "cuda:0=0 cuda:1=1 cuda:2=2 cuda:3=3");
  EXPECT_EQ(resolve(four_h100(), vars({{"NVIDIA_VISIBLE_DEVICES", ""}}, true)).devices, "cuda:0=0 cuda:1=1 cuda:2=2 cuda:3=3");
}

TEST(NvidiaVisibleDevices, MigDevicesOfTheContainer) {
  // The host's MIG GPU 1 with only its MIG device 1 given to the container.
  const auto by_uuid = resolve(mig_machine(), vars({{"NVIDIA_VISIBLE_DEVICES", "MIG-bbbb1111-0000-5000-8000-000000000001"}}, true));
  EXPECT_EQ(by_uuid.devices, "cuda:0=- cuda:1=v[1=0,0=-] cuda:2=-[0=-]");
  const auto by_index = resolve(mig_machine(), vars({{"NVIDIA_VISIBLE_DEVICES", "1:1"}}, true));
  EXPECT_EQ(by_index.devices, "cuda:0=- cuda:1=v[1=0,0=-] cuda:2=-[0=-]");
  EXPECT_TRUE(by_index.warnings.empty());
}

TEST(NvidiaVisibleDevices, BadEntriesAreWarnedAndIgnored) {
  const auto r = resolve(four_h100(), vars({{"NVIDIA_VISIBLE_DEVICES", "banana,2,GPU-ffffffff,9"}}, true));
  EXPECT_EQ(r.devices, "cuda:0=- cuda:1=- cuda:2=0 cuda:3=-");
  EXPECT_EQ(kinds(r.warnings), (std::vector<WarningKind>{WarningKind::invalid_value, WarningKind::invalid_value,
                                                         WarningKind::invalid_value}));
  // A list that names no detected GPU hides nothing.
  EXPECT_EQ(resolve(four_h100(), vars({{"NVIDIA_VISIBLE_DEVICES", "GPU-ffffffff"}}, true)).devices,
            "cuda:0=0 cuda:1=1 cuda:2=2 cuda:3=3");
}

// --- ROCm ----------------------------------------------------------------------

DeviceProfile rocm(std::uint32_t index, std::string uuid, std::string name = "AMD Instinct MI300X") {
  return gpu(Backend::rocm, index, std::move(uuid), "", std::move(name), "gfx942");
}

std::vector<DeviceProfile> four_mi300x() {
  return {rocm(0, "GPU-4b2c1a9f8d3e6f7a"), rocm(1, "GPU-4b2c77aa00112233"), rocm(2, "GPU-a1b2c3d4e5f60718"),
          rocm(3, "GPU-0f1e2d3c4b5a6978")};
}

TEST(RocmVisibility, UnsetMeansEveryAgentInKfdOrder) {
  EXPECT_EQ(resolve(four_mi300x(), {}).devices, "rocm:0=0 rocm:1=1 rocm:2=2 rocm:3=3");
}

TEST(RocmVisibility, RocrFirstThenHipIndexesIntoIt) {
  const auto r = resolve(four_mi300x(), vars({{"ROCR_VISIBLE_DEVICES", "2,3"}, {"HIP_VISIBLE_DEVICES", "1"}}));
  EXPECT_EQ(r.devices, "rocm:0=- rocm:1=- rocm:2=- rocm:3=0");
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_EQ(resolve(four_mi300x(), vars({{"ROCR_VISIBLE_DEVICES", "3,0"}})).devices, "rocm:0=1 rocm:1=- rocm:2=- rocm:3=0");
}

TEST(RocmVisibility, RocrTokens) {
  // Case-insensitive UUID prefixes, strtol base 0 indices.
  EXPECT_EQ(resolve(four_mi300x(), vars({{"ROCR_VISIBLE_DEVICES", "gpu-a1b2, 0x3"}})).devices,
            "rocm:0=- rocm:1=- rocm:2=0 rocm:3=1");
  // "GPU-4b2c" matches two boards; "010" is octal 8, past the end; repeats end the list.
  const auto ambiguous = resolve(four_mi300x(), vars({{"ROCR_VISIBLE_DEVICES", "1,GPU-4b2c,0"}}));
  EXPECT_EQ(ambiguous.devices, "rocm:0=- rocm:1=0 rocm:2=- rocm:3=-");
  EXPECT_EQ(kinds(ambiguous.warnings), std::vector<WarningKind>{WarningKind::invalid_value});
  EXPECT_EQ(resolve(four_mi300x(), vars({{"ROCR_VISIBLE_DEVICES", "010"}})).devices, "rocm:0=- rocm:1=- rocm:2=- rocm:3=-");
  EXPECT_EQ(resolve(four_mi300x(), vars({{"ROCR_VISIBLE_DEVICES", "2,2,1"}})).devices, "rocm:0=- rocm:1=- rocm:2=0 rocm:3=-");
  // Set and empty: no GPU.
  EXPECT_EQ(resolve(four_mi300x(), vars({{"ROCR_VISIBLE_DEVICES", ""}})).devices, "rocm:0=- rocm:1=- rocm:2=- rocm:3=-");
  // Only as many tokens as GPUs are read; a trailing comma adds none.
  const auto extra = resolve({rocm(0, ""), rocm(1, "")}, vars({{"ROCR_VISIBLE_DEVICES", "1,0,7,"}}));
  EXPECT_EQ(extra.devices, "rocm:0=1 rocm:1=0");
  EXPECT_TRUE(extra.warnings.empty());
}

TEST(RocmVisibility, HipTokens) {
  // Exact decimal only: "01" and " 1" end the list; repeats are skipped.
  const auto padded = resolve(four_mi300x(), vars({{"HIP_VISIBLE_DEVICES", "2,01"}}));
  EXPECT_EQ(padded.devices, "rocm:0=- rocm:1=- rocm:2=0 rocm:3=-");
  EXPECT_EQ(kinds(padded.warnings), std::vector<WarningKind>{WarningKind::invalid_value});
  EXPECT_EQ(resolve(four_mi300x(), vars({{"HIP_VISIBLE_DEVICES", "3,3,1"}})).devices, "rocm:0=- rocm:1=1 rocm:2=- rocm:3=0");
  EXPECT_EQ(resolve(four_mi300x(), vars({{"HIP_VISIBLE_DEVICES", "-1"}})).devices, "rocm:0=- rocm:1=- rocm:2=- rocm:3=-");
  // A UUID is looked for, case-sensitively, inside ROCr's lower-case "GPU-<hex>".
  EXPECT_EQ(resolve(four_mi300x(), vars({{"HIP_VISIBLE_DEVICES", "GPU-0f1e,GPU-4b2c"}})).devices,
            "rocm:0=1 rocm:1=- rocm:2=- rocm:3=0");
  const auto upper = resolve(four_mi300x(), vars({{"HIP_VISIBLE_DEVICES", "GPU-0F1E"}}));
  EXPECT_EQ(upper.devices, "rocm:0=- rocm:1=- rocm:2=- rocm:3=-");
  EXPECT_EQ(kinds(upper.warnings), std::vector<WarningKind>{WarningKind::invalid_value});
}

TEST(RocmVisibility, HipFallsBackToCudaVisibleDevices) {
  EXPECT_EQ(resolve(four_mi300x(), vars({{"CUDA_VISIBLE_DEVICES", "3"}})).devices, "rocm:0=- rocm:1=- rocm:2=- rocm:3=0");
  // An empty HIP_VISIBLE_DEVICES counts as unset; an empty list selects everything.
  EXPECT_EQ(resolve(four_mi300x(), vars({{"HIP_VISIBLE_DEVICES", ""}, {"CUDA_VISIBLE_DEVICES", "2"}})).devices,
            "rocm:0=- rocm:1=- rocm:2=0 rocm:3=-");
  EXPECT_EQ(resolve(four_mi300x(), vars({{"CUDA_VISIBLE_DEVICES", ""}})).devices, "rocm:0=0 rocm:1=1 rocm:2=2 rocm:3=3");
  EXPECT_EQ(resolve(four_mi300x(), vars({{"HIP_VISIBLE_DEVICES", "1"}, {"CUDA_VISIBLE_DEVICES", "2"}})).devices,
            "rocm:0=- rocm:1=0 rocm:2=- rocm:3=-");
}

TEST(RocmVisibility, GpuDeviceOrdinalIsOpenClsNotHips) {
  EXPECT_EQ(resolve(four_mi300x(), vars({{"GPU_DEVICE_ORDINAL", "1"}})).devices, "rocm:0=0 rocm:1=1 rocm:2=2 rocm:3=3");
}

TEST(RocmVisibility, PartitionsAreAgents) {
  // An MI300X in CPX mode: four KFD nodes (of eight in reality), one board UUID.
  std::vector<DeviceProfile> devices = {rocm(0, "GPU-1111222233334444"), rocm(1, "GPU-5555666677778888")};
  for (std::uint32_t i = 0; i < 4; ++i) {
    DevicePartition p;
    p.id = "rocm:0/xcp:" + std::to_string(i);
    p.index = i;
    p.profile = "CPX";
    devices[0].partitions.push_back(p);
  }
  EXPECT_EQ(resolve(devices, {}).devices, "rocm:0=v[0=0,1=1,2=2,3=3] rocm:1=4");
  EXPECT_EQ(resolve(devices, vars({{"ROCR_VISIBLE_DEVICES", "4,2"}})).devices, "rocm:0=v[0=-,1=-,2=1,3=-] rocm:1=0");
  // The partitions share the board's UUID: ROCr finds it ambiguous, HIP takes the first.
  const auto rocr = resolve(devices, vars({{"ROCR_VISIBLE_DEVICES", "GPU-1111"}}));
  EXPECT_EQ(rocr.devices, "rocm:0=-[0=-,1=-,2=-,3=-] rocm:1=-");
  EXPECT_EQ(kinds(rocr.warnings), std::vector<WarningKind>{WarningKind::invalid_value});
  EXPECT_EQ(resolve(devices, vars({{"HIP_VISIBLE_DEVICES", "GPU-1111"}})).devices, "rocm:0=v[0=0,1=-,2=-,3=-] rocm:1=-");
}

TEST(Visibility, BothVendorsReadCudaVisibleDevices) {
  std::vector<DeviceProfile> devices = four_h100();
  for (auto& d : four_mi300x()) devices.push_back(d);
  const auto r = resolve(devices, vars({{"CUDA_VISIBLE_DEVICES", "3"}}));
  EXPECT_EQ(r.devices, "cuda:0=- cuda:1=- cuda:2=- cuda:3=0 rocm:0=- rocm:1=- rocm:2=- rocm:3=0");
}

// --- inputs through a fixture ---------------------------------------------------------

TEST(VisibilityInputs, ReadThroughTheSystem) {
  FixtureBuilder f;
  f.env("CUDA_VISIBLE_DEVICES", "1,0").env("HIP_VISIBLE_DEVICES", "").env("PATH", "/usr/bin").file("/.dockerenv", "");
  auto system = FixtureSystem::open(f.write());
  ASSERT_TRUE(system);
  const VisibilityInputs in = visibility_inputs(**system, std::nullopt);
  const std::map<std::string, std::string, std::less<>> expected = {{"CUDA_VISIBLE_DEVICES", "1,0"},
                                                                    {"HIP_VISIBLE_DEVICES", ""}};
  EXPECT_EQ(in.env, expected);
  EXPECT_TRUE(in.in_container);
  Environment host;
  EXPECT_FALSE(visibility_inputs(**system, host).in_container);  // the probe's answer wins
}

TEST(VisibilityInputs, VolumeMountsStrategy) {
  // The device plugin's volume-mounts strategy: the list is a folder's entries.
  FixtureBuilder f;
  f.env("NVIDIA_VISIBLE_DEVICES", "/var/run/nvidia-container-devices")
      .file("/var/run/nvidia-container-devices/GPU-1a2b9999-0000-4000-8000-000000000001", "")
      .file("/var/run/nvidia-container-devices/GPU-9c0d1e2f-0000-4000-8000-000000000003", "");
  auto system = FixtureSystem::open(f.write());
  ASSERT_TRUE(system);
  Environment pod;
  pod.kubernetes = true;
  const VisibilityInputs in = visibility_inputs(**system, pod);
  EXPECT_EQ(in.env.at("NVIDIA_VISIBLE_DEVICES"),
            "GPU-1a2b9999-0000-4000-8000-000000000001,GPU-9c0d1e2f-0000-4000-8000-000000000003");
  EXPECT_EQ(resolve(four_h100(), in).devices, "cuda:0=- cuda:1=0 cuda:2=- cuda:3=1");
}

}  // namespace
