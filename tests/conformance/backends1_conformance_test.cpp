// Apple, Intel NPU, AMD XDNA, TPU, Qualcomm and Vulkan detection on the real
// captures of ../shared/fixtures/real, checked against each SOURCE.md.
// Captures of tool output are replayed as that tool's output; captures of
// kernel messages are turned into the sysfs entries they state, and nothing
// they do not state.
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "../test_support.hpp"
#include "../unit/pci_tree.hpp"

import hwaccel;
import hwaccel.detectors;

namespace {

namespace fs = std::filesystem;
using namespace hwaccel;
using hwaccel::testing::FixtureBuilder;
using hwaccel::testing::read_file;
using hwaccel::testing::shared_capture;

AcceleratorRegistry detect(FixtureBuilder& f, Backend backend) {
  auto system = FixtureSystem::open(f.write());
  EXPECT_TRUE(system) << system.error().message;
  return DetectBuilder::none().with(backend).system_probes(false).detect(**system);
}

#define CAPTURE_OR_SKIP(var, relative)                                                   \
  const fs::path var = shared_capture(relative);                                         \
  if (var.empty()) GTEST_SKIP() << "shared capture " << (relative) << " not available"

// The word after `marker` in `text` ("... for 0000:02:05.0 on minor 0").
std::string word_after(std::string_view text, std::string_view marker) {
  const auto at = text.find(marker);
  if (at == std::string_view::npos) return {};
  std::string_view rest = text.substr(at + marker.size());
  return std::string(rest.substr(0, rest.find_first_of(" \n")));
}

TEST(Backends1Conformance, AsahiM1DeviceTreeAsPrinted) {
  CAPTURE_OR_SKIP(capture, "apple/issue-ruptime9-m1-mbp13-devicetree");
  // The capture is the file as a terminal showed it: the NUL separators are
  // gone ("apple,j293apple,t8103apple,arm-platform").
  FixtureBuilder f("MacBook Pro 13 M1, Asahi", "ruptime issue 9");
  f.file("/proc/device-tree/compatible", read_file(capture / "devicetree-compatible.as-printed.txt"))
      .file("/proc/device-tree/model", read_file(capture / "devicetree-model.as-printed.txt"));
  const auto r = detect(f, Backend::apple);
  // Ground truth: SoC apple,t8103 = M1, board apple,j293, model string; one
  // Apple SoC accelerator (its GPU and Neural Engine), no PCI GPU.
  ASSERT_EQ(r.devices().size(), 2u);
  const DeviceProfile& gpu = r.devices()[0];
  EXPECT_EQ(gpu.name, "Apple M1 GPU");
  EXPECT_EQ(gpu.family, Family::gpu);
  EXPECT_EQ(gpu.memory_kind, MemoryKind::unified);
  EXPECT_FALSE(gpu.pci_bus_id);
  EXPECT_EQ(gpu.properties.at("soc"), "apple,t8103");
  EXPECT_EQ(gpu.properties.at("board"), "apple,j293");
  EXPECT_EQ(gpu.properties.at("machine_model"), "Apple MacBook Pro (13-inch, M1, 2020)");
  const DeviceProfile& ane = r.devices()[1];
  EXPECT_EQ(ane.name, "Apple M1 Neural Engine");
  EXPECT_EQ(ane.family, Family::npu);
  EXPECT_EQ(ane.properties.at("published_tops"), "11");
  // The capture says nothing of the GPU driver: without /sys/bus/platform/drivers/asahi
  // the GPU is reported unusable, with that reason.
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::unsupported);
  EXPECT_NE(r.warnings()[0].message.find("asahi"), std::string::npos);
}

TEST(Backends1Conformance, MeteorLakeNpuPassedToAVm) {
  CAPTURE_OR_SKIP(capture, "intel/issue-npulib122-mtl-npu-vm");
  const std::string dmesg = read_file(capture / "dmesg-grep-vpu.txt");
  const std::string lspci = read_file(capture / "lspci-s-02-05.0-vvv.head.txt");
  // What the capture states: the driver initialised 0000:02:05.0 on accel
  // minor 0; lspci shows device 7d1d rev 04 of class "Processing
  // accelerators" (0x1200); /dev/accel/accel0 exists. That is the sysfs the
  // detector reads. The firmware version in dmesg is what debugfs would
  // show, but debugfs was not captured, so it is not replayed.
  const std::string bdf = word_after(dmesg, "Initialized intel_vpu 1.0.0 for ");
  const std::string minor = word_after(dmesg, " on minor ");
  ASSERT_EQ(bdf, "0000:02:05.0");
  ASSERT_EQ(minor, "0");
  ASSERT_NE(lspci.find("Processing accelerators: Intel Corporation Device 7d1d (rev 04)"), std::string::npos);
  FixtureBuilder f("Meteor Lake NPU in a VM", "intel-npu-acceleration-library issue 122");
  hwaccel::testing::PciFunctionSpec npu;
  npu.bdf = bdf;
  npu.vendor = "0x8086";
  npu.device = "0x7d1d";
  npu.class_code = "0x120000";
  npu.revision = "0x04";
  npu.driver = "intel_vpu";
  npu.accel_minor = 0;
  hwaccel::testing::add_pci_function(f, npu);
  const auto r = detect(f, Backend::intel_npu);
  // Ground truth: 1 NPU, 8086:7d1d at 0000:02:05.0 (not the native 00:0b.0),
  // intel_vpu, /dev/accel/accel0, NPU 37xx generation (firmware vpu_37xx).
  ASSERT_EQ(r.devices().size(), 1u);
  const DeviceProfile& d = r.devices()[0];
  EXPECT_EQ(d.name, "Intel NPU (Meteor Lake)");
  EXPECT_EQ(d.architecture, "NPU 37xx");
  EXPECT_EQ(d.pci_bus_id, "0000:02:05.0");
  EXPECT_EQ(d.properties.at("pci_id"), "8086:7d1d");
  EXPECT_EQ(d.properties.at("driver"), "intel_vpu");
  EXPECT_EQ(d.properties.at("device_node"), "/dev/accel/accel0");
  EXPECT_TRUE(d.available);
  EXPECT_TRUE(r.warnings().empty());
}

TEST(Backends1Conformance, PhoenixXdnaNpuFromKernelMessages) {
  CAPTURE_OR_SKIP(capture, "amd/issue-amdgputop120-xdna-npu-7840u");
  const std::string dmesg = read_file(capture / "dmesg-grep-xdna.head.txt");
  ASSERT_NE(read_file(capture / "lsmod-grep-amdxdna.txt").find("amdxdna"), std::string::npos);
  const std::string bdf = word_after(dmesg, "Initialized amdxdna_accel_driver 0.0.0 for ");
  ASSERT_EQ(bdf, "0000:c2:00.1");
  ASSERT_EQ(word_after(dmesg, " on minor "), "0");
  // The capture does not show the PCI ids, so the replayed function has no
  // vendor/device attributes: the generation must come out unknown.
  FixtureBuilder f("Ryzen 7 7840U", "amdgpu_top issue 120");
  hwaccel::testing::PciFunctionSpec npu;
  npu.bdf = bdf;
  npu.driver = "amdxdna";
  npu.accel_minor = 0;
  hwaccel::testing::add_pci_function(f, npu);
  const std::string dir = f.path().string() + "/root" + hwaccel::testing::pci_device_dir(bdf);
  fs::remove(dir + "/vendor");
  fs::remove(dir + "/device");
  const auto r = detect(f, Backend::amd_xdna);
  // Ground truth: 1 NPU at 0000:c2:00.1, amdxdna, accel minor 0.
  ASSERT_EQ(r.devices().size(), 1u);
  const DeviceProfile& d = r.devices()[0];
  EXPECT_EQ(d.name, "AMD XDNA NPU");
  EXPECT_FALSE(d.architecture);
  EXPECT_EQ(d.pci_bus_id, "0000:c2:00.1");
  EXPECT_EQ(d.properties.at("driver"), "amdxdna");
  EXPECT_EQ(d.properties.at("device_node"), "/dev/accel/accel0");
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::io_error);
}

TEST(Backends1Conformance, TpuInfoOnAV6eColabRuntime) {
  CAPTURE_OR_SKIP(capture, "tpu/issue-tabpfn424-v6e-tpu-info");
  // Only tpu-info's output was captured (no sysfs): the chips come from its table.
  FixtureBuilder f("Colab TPU v6e", "TabPFN PR 424");
  f.command({"tpu-info"}, read_file(capture / "tpu-info.txt"));
  const auto r = detect(f, Backend::tpu);
  // Ground truth: 1 chip, TPU v6e, /dev/vfio/0, 1 device per chip, HBM
  // 31.25 GiB total with 2.94 GiB used (libtpu was running: a measurement).
  ASSERT_EQ(r.devices().size(), 1u);
  const DeviceProfile& d = r.devices()[0];
  EXPECT_EQ(d.name, "Google TPU v6e");
  EXPECT_EQ(d.compute_capability, "v6e");
  EXPECT_EQ(d.properties.at("device_node"), "/dev/vfio/0");
  EXPECT_EQ(d.properties.at("runtime_devices_per_chip"), "1");
  EXPECT_EQ(d.properties.at("owner_pid"), "4052");
  EXPECT_EQ(d.memory_bytes, static_cast<std::uint64_t>(31.25 * (1ull << 30)));
  EXPECT_EQ(d.memory_used_bytes, static_cast<std::uint64_t>(2.94 * (1ull << 30) + 0.5));
  EXPECT_DOUBLE_EQ(*d.utilization_percent, 0.38);
  EXPECT_TRUE(r.warnings().empty());
}

TEST(Backends1Conformance, QaicUtilTwoSocsFiltered) {
  CAPTURE_OR_SKIP(capture, "qualcomm/cloudaisdk-notebook-2x-ai100-status");
  // The notebook filtered qaic-util -q through grep (no PCI addresses), and
  // no sysfs was captured: the QID blocks are the devices.
  FixtureBuilder f("2x Cloud AI 100", "cloud-ai-sdk notebook");
  f.command({"qaic-util", "-q"}, read_file(capture / "qaic-util-q-grep.txt"));
  const auto r = detect(f, Backend::qualcomm);
  // Ground truth: 2 SoCs, 33554432 KB (32 GiB) DRAM each, both Ready, 8 and 16 NSPs free.
  ASSERT_EQ(r.devices().size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const DeviceProfile& d = r.devices()[i];
    EXPECT_EQ(d.runtime_index, i);
    EXPECT_EQ(d.memory_bytes, 32ull << 30);
    EXPECT_EQ(d.properties.at("status"), "Ready");
    EXPECT_TRUE(d.available);
  }
  EXPECT_EQ(r.devices()[0].properties.at("nsp_free"), "8");
  EXPECT_EQ(r.devices()[1].properties.at("nsp_free"), "16");
  EXPECT_TRUE(r.warnings().empty());
}

TEST(Backends1Conformance, VulkanSummaryRx7800XtWithValidationNoise) {
  CAPTURE_OR_SKIP(capture, "vulkan/spacefish-rx7800xt-summary");
  FixtureBuilder f("RX 7800 XT desktop", "steamvr-compositor-bugreport");
  f.command({"vulkaninfo", "--summary"}, read_file(capture / "vulkaninfo-summary.txt"));
  const auto r = detect(f, Backend::vulkan);
  // Ground truth: GPU0 RX 7800 XT (RADV NAVI32) 1002:747e discrete, radv,
  // Mesa 26.0.8-1ubuntu0.3, API 1.4.335; GPU1 llvmpipe is not an accelerator.
  ASSERT_EQ(r.devices().size(), 1u);
  const DeviceProfile& d = r.devices()[0];
  EXPECT_EQ(d.name, "AMD Radeon RX 7800 XT (RADV NAVI32)");
  EXPECT_EQ(d.vendor, "AMD");
  EXPECT_FALSE(d.integrated);
  EXPECT_EQ(d.runtime_index, 0u);
  EXPECT_EQ(d.properties.at("vulkan_device_type"), "discrete_gpu");
  EXPECT_EQ(d.properties.at("vulkan_vendor_id"), "0x1002");
  EXPECT_EQ(d.properties.at("vulkan_device_id"), "0x747e");
  EXPECT_EQ(d.properties.at("vulkan_driver_name"), "radv");
  EXPECT_EQ(d.properties.at("vulkan_driver_info"), "Mesa 26.0.8-1ubuntu0.3");
  EXPECT_EQ(d.properties.at("vulkan_api_version"), "1.4.335");
  // The full report was not captured, so memory heaps stay unknown and say why.
  EXPECT_FALSE(d.memory_bytes);
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::not_captured);
}

TEST(Backends1Conformance, VulkanFullReportRenoirApu) {
  CAPTURE_OR_SKIP(capture, "vulkan/someaka-renoir-apu-linux");
  const std::string text = read_file(capture / "vulkaninfo.txt");
  const auto info = parsers::parse_vulkaninfo(text);
  // Ground truth: 2 physical devices (not the layer section's repeats).
  ASSERT_EQ(info.devices.size(), 2u);
  EXPECT_EQ(info.devices[1].device_type, "CPU");
  FixtureBuilder f("Renoir APU laptop", "adaptive-attention-tiling-v2");
  f.command({"vulkaninfo"}, text);  // only the full report was captured
  const auto r = detect(f, Backend::vulkan);
  // Ground truth: 1 integrated GPU (RADV RENOIR, Mesa 24.2.3-1ubuntu1);
  // llvmpipe not counted; the DEVICE_LOCAL heap is heap 1, 5554348032 B.
  ASSERT_EQ(r.devices().size(), 1u);
  const DeviceProfile& d = r.devices()[0];
  EXPECT_EQ(d.name, "AMD Radeon Graphics (RADV RENOIR)");
  EXPECT_TRUE(d.integrated);
  EXPECT_EQ(d.memory_bytes, 5554348032u);
  EXPECT_EQ(d.pci_bus_id, "0000:03:00.0");
  EXPECT_EQ(d.properties.at("vulkan_driver_info"), "Mesa 24.2.3-1ubuntu1");
  EXPECT_EQ(d.properties.at("vulkan_device_id"), "0x15e7");
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::not_captured);  // the summary
}

TEST(Backends1Conformance, VulkanFullReportM3MaxMoltenVk) {
  CAPTURE_OR_SKIP(capture, "vulkan/coghex-apple-m3max-moltenvk");
  FixtureBuilder f("MacBook Pro M3 Max", "coghex/synarchy");
  f.command({"vulkaninfo"}, read_file(capture / "vulkaninfo.txt"));
  const auto r = detect(f, Backend::vulkan);
  // Ground truth: 1 device, Apple M3 Max, integrated, MoltenVK 1.2.11, one
  // 68719476736 B heap (unified memory); no PCI bus on macOS.
  ASSERT_EQ(r.devices().size(), 1u);
  const DeviceProfile& d = r.devices()[0];
  EXPECT_EQ(d.name, "Apple M3 Max");
  EXPECT_EQ(d.vendor, "Apple");
  EXPECT_TRUE(d.integrated);
  EXPECT_EQ(d.memory_kind, MemoryKind::unified);
  EXPECT_EQ(d.memory_bytes, 68719476736u);
  EXPECT_FALSE(d.pci_bus_id);
  EXPECT_EQ(d.properties.at("vulkan_driver_name"), "MoltenVK");
  EXPECT_EQ(d.properties.at("vulkan_driver_info"), "1.2.11");
  EXPECT_EQ(d.properties.at("vulkan_device_id"), "0x1a030209");
}

}  // namespace
