// Vulkan backend: vulkaninfo summary and full-report parsing, detection, and
// the pass that folds a Vulkan device into its native backend's twin.
#include <gtest/gtest.h>

#include <string>

#include "../test_support.hpp"
#include "pci_tree.hpp"

import hwaccel;
import hwaccel.detectors;

#include "fixture_detection.hpp"

namespace {

using namespace hwaccel;
using hwaccel::testing::FixtureBuilder;

AcceleratorRegistry detect_vulkan(FixtureBuilder& f) { return hwaccel::testing::detect_backend(f, Backend::vulkan); }

struct GpuText {
  unsigned index;
  std::string name, type, vendor, device, uuid, driver_id, driver_name, driver_info;
  std::optional<unsigned> pci_bus;
  std::string heaps;  // memoryHeaps section body
};

std::string summary_gpu(const GpuText& g) {
  return "GPU" + std::to_string(g.index) + ":\n\tapiVersion         = 1.3.289\n\tdriverVersion      = 24.2.3\n" +
         "\tvendorID           = " + g.vendor + "\n\tdeviceID           = " + g.device +
         "\n\tdeviceType         = PHYSICAL_DEVICE_TYPE_" + g.type + "\n\tdeviceName         = " + g.name +
         "\n\tdriverID           = " + g.driver_id + "\n\tdriverName         = " + g.driver_name +
         "\n\tdriverInfo         = " + g.driver_info + "\n\tconformanceVersion = 1.3.7.3\n\tdeviceUUID         = " + g.uuid +
         "\n\tdriverUUID         = 414d442d-4d45-5341-2d44-525600000000\n";
}

std::string summary(const std::vector<GpuText>& gpus, std::string_view before = "") {
  std::string s(before);
  s += "==========\nVULKANINFO\n==========\n\nVulkan Instance Version: 1.3.290\n\n\nInstance Extensions: count = 2\n"
       "-------------------------------\nVK_KHR_surface : extension revision 25\nVK_KHR_display : extension revision 23\n\n"
       "Devices:\n========\n";
  for (const auto& g : gpus) s += summary_gpu(g);
  return s;
}

std::string heap(unsigned i, std::string_view size, bool local) {
  return "\tmemoryHeaps[" + std::to_string(i) + "]:\n\t\tsize   = " + std::string(size) +
         "\n\t\tbudget = 1 (0x1) (1.00 B)\n\t\tusage  = 0 (0x00000000) (0.00 B)\n" +
         (local ? "\t\tflags: count = 1\n\t\t\tMEMORY_HEAP_DEVICE_LOCAL_BIT\n" : "\t\tflags:\n\t\t\tNone\n");
}

std::string full_gpu(const GpuText& g) {
  std::string s = "GPU" + std::to_string(g.index) + ":\nVkPhysicalDeviceProperties:\n---------------------------\n" +
                  "\tapiVersion        = 1.3.289 (4206881)\n\tdriverVersion     = 24.2.3 (100671491)\n\tvendorID          = " +
                  g.vendor + "\n\tdeviceID          = " + g.device + "\n\tdeviceType        = PHYSICAL_DEVICE_TYPE_" + g.type +
                  "\n\tdeviceName        = " + g.name + "\n\tpipelineCacheUUID = 2c77318f-6a87-ebd6-4094-57268628c3b2\n\n" +
                  "VkPhysicalDeviceLimits:\n-----------------------\n\tmaxImageDimension1D = 16384\n\n" +
                  // A layered implementation's identity must not overwrite the device's.
                  "VkPhysicalDeviceLayeredApiPropertiesListKHR:\n--------------------------------------------\n"
                  "\tlayeredApiCount = 1\n\tpLayeredApis: count = 1\n\t\tvendorID   = 0x9999\n\t\tdeviceName = Layered\n\n";
  if (g.pci_bus)
    s += "VkPhysicalDevicePCIBusInfoPropertiesEXT:\n----------------------------------------\n\tpciDomain   = 0\n\tpciBus      = " +
         std::to_string(*g.pci_bus) + "\n\tpciDevice   = 0\n\tpciFunction = 0\n\n";
  s += "VkPhysicalDeviceVulkan11Properties:\n-----------------------------------\n\tdeviceUUID                        = " + g.uuid +
       "\n\tsubgroupSize                      = 64\n\n";
  s += "VkPhysicalDeviceVulkan12Properties:\n-----------------------------------\n\tdriverID                                             = " +
       g.driver_id + "\n\tdriverName                                           = " + g.driver_name +
       "\n\tdriverInfo                                           = " + g.driver_info + "\n\n";
  s += "Device Extensions: count = 2\n---------------------------\n\tVK_EXT_pci_bus_info : extension revision 2\n\n";
  s += "VkPhysicalDeviceMemoryProperties:\n=================================\n" + g.heaps +
       "memoryTypes: count = 1\n\tmemoryTypes[0]:\n\t\theapIndex     = 0\n\t\tpropertyFlags = 0x0001: count = 1\n"
       "\t\t\tMEMORY_PROPERTY_DEVICE_LOCAL_BIT\n\n";
  s += "VkPhysicalDeviceFeatures:\n=========================\n\trobustBufferAccess = true\n\n";
  return s;
}

std::string full(const std::vector<GpuText>& gpus) {
  std::string s = "==========\nVULKANINFO\n==========\n\nVulkan Instance Version: 1.3.290\n\n\nLayers: count = 1\n=========\n"
                  "VK_LAYER_MESA_device_select (Linux device selection layer) Vulkan version 1.3.211, layer version 1:\n"
                  "\tLayer Extensions: count = 0\n\tDevices: count = " + std::to_string(gpus.size()) + "\n";
  for (const auto& g : gpus) s += "\t\tGPU id = " + std::to_string(g.index) + " (" + g.name + ")\n\t\tLayer-Device Extensions: count = 0\n\n";
  s += "Presentable Surfaces:\n=====================\n";
  for (const auto& g : gpus) s += "GPU id : " + std::to_string(g.index) + " (" + g.name + "):\n\tSurface types: count = 1\n\n";
  s += "Device Properties and Extensions:\n=================================\n";
  for (const auto& g : gpus) s += full_gpu(g);
  return s;
}

const GpuText rtx = {0, "NVIDIA GeForce RTX 4090", "DISCRETE_GPU", "0x10de", "0x2684",
                     "5b3c6a2e-9f1d-4e7c-8a2b-1c3d5e7f9a0b", "DRIVER_ID_NVIDIA_PROPRIETARY", "NVIDIA", "550.54.14", 1,
                     heap(0, "25757220864 (0x5ff400000) (23.99 GiB)", true) +
                         heap(1, "67108864000 (0xfa0000000) (62.50 GiB)", false) +
                         heap(2, "257949696 (0xf600000) (246.00 MiB)", true)};
const GpuText igpu = {1, "AMD Radeon Graphics (RADV RAPHAEL_MENDOCINO)", "INTEGRATED_GPU", "0x1002", "0x164e",
                      "00000000-1200-0000-0000-000000000000", "DRIVER_ID_MESA_RADV", "radv", "Mesa 24.2.3", 18,
                      heap(0, "33554432000 (0x7d0000000) (31.25 GiB)", false) +
                          heap(1, "536870912 (0x20000000) (512.00 MiB)", true)};
const GpuText llvmpipe = {2, "llvmpipe (LLVM 19.1.0, 256 bits)", "CPU", "0x10005", "0x0000",
                          "6d657361-3234-2e32-2e33-000000000000", "DRIVER_ID_MESA_LLVMPIPE", "llvmpipe",
                          "Mesa 24.2.3 (LLVM 19.1.0)", std::nullopt, heap(0, "67108864000 (0xfa0000000) (62.50 GiB)", true)};

TEST(VulkanParsers, SummaryAfterValidationNoise) {
  const std::string noise =
      "WARNING: [Validation] Code 0 : vkCreateDevice(): Warning that validation is adjusting settings:\n"
      "\tForcing shaderInt64 to VK_TRUE\n\tdeviceName = not a device\n\n"
      "Validation Warning: [ WARNING-Setting-Limit-Adjusted ] | MessageID = 0x86fe6721\n";
  const auto info = parsers::parse_vulkaninfo_summary(summary({rtx, igpu, llvmpipe}, noise));
  EXPECT_TRUE(info.has_devices);
  EXPECT_EQ(info.instance_version, "1.3.290");
  ASSERT_EQ(info.devices.size(), 3u);
  EXPECT_EQ(info.devices[0].name, "NVIDIA GeForce RTX 4090");
  EXPECT_EQ(info.devices[0].device_type, "DISCRETE_GPU");
  EXPECT_EQ(info.devices[0].vendor_id, 0x10deu);
  EXPECT_EQ(info.devices[0].device_id, 0x2684u);
  EXPECT_EQ(info.devices[0].api_version, "1.3.289");
  EXPECT_EQ(info.devices[1].driver_name, "radv");
  EXPECT_EQ(info.devices[2].vendor_id, 0x10005u);
  EXPECT_TRUE(parsers::is_software_renderer(info.devices[2]));
  EXPECT_FALSE(parsers::is_software_renderer(info.devices[1]));
  EXPECT_FALSE(parsers::parse_vulkaninfo_summary("Cannot create Vulkan instance.\n").has_devices);
  // Windows builds indent with spaces.
  std::string spaced;
  for (char c : summary({rtx})) spaced += c == '\t' ? std::string("    ") : std::string(1, c);
  const auto windows = parsers::parse_vulkaninfo_summary(spaced);
  ASSERT_EQ(windows.devices.size(), 1u);
  EXPECT_EQ(windows.devices[0].device_uuid, rtx.uuid);
}

TEST(VulkanDetection, VirtualGpusAreKeptSoftwareRenderersAreNot) {
  const GpuText venus = {0, "Virtio-GPU Venus (NVIDIA L4)", "VIRTUAL_GPU", "0x10de", "0x27b8",
                         "8c1a6f2e-0000-4000-8000-000000000001", "DRIVER_ID_MESA_VENUS", "venus", "Mesa 24.2.3", std::nullopt, ""};
  GpuText swiftshader = llvmpipe;
  swiftshader.index = 1;
  swiftshader.name = "SwiftShader Device (Subzero) (0x0000C0DE)";
  swiftshader.driver_id = "DRIVER_ID_GOOGLE_SWIFTSHADER";
  FixtureBuilder f;
  f.command({"vulkaninfo", "--summary"}, summary({venus, swiftshader})).command({"vulkaninfo"}, full({venus, swiftshader}));
  const auto r = detect_vulkan(f);
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_EQ(r.devices()[0].properties.at("vulkan_device_type"), "virtual_gpu");
  EXPECT_FALSE(r.devices()[0].integrated);
  EXPECT_FALSE(r.devices()[0].memory_bytes);  // no heaps listed for it
  EXPECT_TRUE(r.warnings().empty());
}

TEST(VulkanParsers, FullReportHeapsPciAndDriver) {
  const auto info = parsers::parse_vulkaninfo(full({rtx, igpu, llvmpipe}));
  EXPECT_TRUE(info.has_devices);
  ASSERT_EQ(info.devices.size(), 3u);  // not the layer or surface sections' repeats
  const auto& g = info.devices[0];
  EXPECT_EQ(g.name, "NVIDIA GeForce RTX 4090");
  EXPECT_EQ(g.vendor_id, 0x10deu);  // not the layered API's 0x9999
  ASSERT_TRUE(g.pci_address);
  EXPECT_EQ(g.pci_address->to_string(), "0000:01:00.0");
  EXPECT_EQ(g.driver_name, "NVIDIA");
  EXPECT_EQ(g.driver_version, "24.2.3");
  ASSERT_EQ(g.heaps.size(), 3u);
  EXPECT_EQ(g.heaps[0].size_bytes, 25757220864u);
  EXPECT_TRUE(g.heaps[0].device_local);
  EXPECT_FALSE(g.heaps[1].device_local);
  EXPECT_TRUE(g.heaps[2].device_local);
  // The integrated GPU's device-local heap is heap 1.
  ASSERT_EQ(info.devices[1].heaps.size(), 2u);
  EXPECT_FALSE(info.devices[1].heaps[0].device_local);
  EXPECT_TRUE(info.devices[1].heaps[1].device_local);
  EXPECT_EQ(info.devices[1].pci_address->to_string(), "0000:12:00.0");
  EXPECT_FALSE(info.devices[2].pci_address);
}

TEST(VulkanParsers, WindowsIndentationAndOlderVersionFormat) {
  std::string text = full({rtx});
  std::string spaced;
  for (char c : text) spaced += c == '\t' ? std::string("    ") : std::string(1, c);
  // vulkaninfo 1.1 printed "4198490 (1.1.90)".
  const auto pos = spaced.find("1.3.289 (4206881)");
  spaced.replace(pos, 17, "4198490 (1.1.90)");
  const auto info = parsers::parse_vulkaninfo(spaced);
  ASSERT_EQ(info.devices.size(), 1u);
  EXPECT_EQ(info.devices[0].api_version, "1.1.90");
  EXPECT_EQ(info.devices[0].heaps.size(), 3u);
  EXPECT_EQ(info.devices[0].pci_address->to_string(), "0000:01:00.0");
}

TEST(VulkanDetection, SummaryJoinedWithFullReportByUuid) {
  FixtureBuilder f;
  // The full report lists the GPUs in another order: the join is by UUID.
  GpuText rtx_late = rtx;
  rtx_late.index = 1;
  GpuText igpu_early = igpu;
  igpu_early.index = 0;
  f.command({"vulkaninfo", "--summary"}, summary({rtx, igpu, llvmpipe}))
      .command({"vulkaninfo"}, full({igpu_early, rtx_late, llvmpipe}));
  const auto r = detect_vulkan(f);
  ASSERT_EQ(r.devices().size(), 2u);  // llvmpipe is not an accelerator
  const DeviceProfile& d = r.devices()[0];
  EXPECT_EQ(d.id, "vulkan:0");
  EXPECT_EQ(d.name, "NVIDIA GeForce RTX 4090");
  EXPECT_EQ(d.vendor, "NVIDIA");
  EXPECT_EQ(d.runtime_index, 0u);
  EXPECT_EQ(d.pci_bus_id, "0000:01:00.0");
  // Two DEVICE_LOCAL heaps: the card's memory and the BAR window onto it; the larger is the card's.
  EXPECT_EQ(d.memory_bytes, 25757220864u);
  EXPECT_EQ(d.memory_kind, MemoryKind::dedicated);
  EXPECT_EQ(d.uuid, "5b3c6a2e-9f1d-4e7c-8a2b-1c3d5e7f9a0b");
  EXPECT_EQ(d.properties.at("vulkan_device_type"), "discrete_gpu");
  EXPECT_EQ(d.properties.at("vulkan_vendor_id"), "0x10de");
  EXPECT_EQ(d.properties.at("vulkan_device_id"), "0x2684");
  const DeviceProfile& i = r.devices()[1];
  EXPECT_TRUE(i.integrated);
  EXPECT_EQ(i.memory_kind, MemoryKind::unified);
  EXPECT_EQ(i.memory_bytes, 536870912u);
  EXPECT_EQ(i.pci_bus_id, "0000:12:00.0");
  EXPECT_EQ(i.properties.at("vulkan_memory_heaps"), "0: 33554432000 B; 1: 536870912 B device-local");
  EXPECT_TRUE(r.warnings().empty());
}

TEST(VulkanDetection, FullReportFailingKeepsSummaryDevices) {
  FixtureBuilder f;
  f.command({"vulkaninfo", "--summary"}, summary({rtx}))
      .command({"vulkaninfo"}, "", 0, "", /*hang=*/true);
  const auto r = detect_vulkan(f);
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_FALSE(r.devices()[0].memory_bytes);
  EXPECT_FALSE(r.devices()[0].pci_bus_id);
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::timeout);
}

TEST(VulkanDetection, SummaryFailingFallsBackToFullReport) {
  FixtureBuilder f;
  f.command({"vulkaninfo", "--summary"}, "", 0, "", true).command({"vulkaninfo"}, full({igpu, llvmpipe}));
  const auto r = detect_vulkan(f);
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_EQ(r.devices()[0].memory_bytes, 536870912u);
  EXPECT_EQ(r.devices()[0].runtime_index, 1u);
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::timeout);
}

TEST(VulkanDetection, NoDriverGarbageAndCrash) {
  {
    FixtureBuilder f;
    const std::string err = "ERROR: [Loader Message] Code 0 : vkCreateInstance: Found no drivers!\nCannot create Vulkan instance.\n";
    f.command({"vulkaninfo", "--summary"}, "", 1, err).command({"vulkaninfo"}, "", 1, err);
    const auto r = detect_vulkan(f);
    EXPECT_TRUE(r.devices().empty());
    ASSERT_EQ(r.warnings().size(), 1u);  // the full report failing the same way says nothing new
    EXPECT_EQ(r.warnings()[0].kind, WarningKind::tool_failed);
    EXPECT_NE(r.warnings()[0].message.find("Found no drivers"), std::string::npos);
  }
  {
    FixtureBuilder f;
    f.command({"vulkaninfo", "--summary"}, "\x01\x02garbage\nGPU0:\n\tdeviceName = fake\n")
        .command({"vulkaninfo"}, "\x7f" "ELF");
    const auto r = detect_vulkan(f);
    EXPECT_TRUE(r.devices().empty());
    ASSERT_EQ(r.warnings().size(), 1u);
    EXPECT_EQ(r.warnings()[0].kind, WarningKind::parse_error);
  }
}

TEST(VulkanDetection, WithoutVulkaninfo) {
  {
    FixtureBuilder f;  // a server with no GPU
    const auto r = detect_vulkan(f);
    EXPECT_TRUE(r.devices().empty());
    EXPECT_TRUE(r.warnings().empty());
  }
  {
    // A render node whose GPU no backend reports (a vendor without a native
    // backend): only Vulkan would have seen it.
    FixtureBuilder f;
    f.file("/dev/dri/card0", "").file("/dev/dri/renderD128", "");
    hwaccel::testing::PciFunctionSpec gpu;
    gpu.bdf = "0000:03:00.0";
    gpu.vendor = "0x1ed5";
    gpu.device = "0x0200";
    gpu.class_code = "0x030000";
    gpu.driver = "mtgpu";
    add_pci_function(f, gpu);
    f.link("/sys/class/drm/renderD128", "../../devices/pci0000:00/0000:03:00.0/drm/renderD128")
        .link(hwaccel::testing::pci_device_dir("0000:03:00.0") + "/drm/renderD128/device", "../../../0000:03:00.0");
    const auto r = detect_vulkan(f);
    EXPECT_TRUE(r.devices().empty());
    ASSERT_EQ(r.warnings().size(), 1u);
    EXPECT_EQ(r.warnings()[0].kind, WarningKind::tool_missing);
    EXPECT_NE(r.warnings()[0].message.find("0000:03:00.0"), std::string::npos) << r.warnings()[0].message;
  }
  {
    // A render node with nothing saying which GPU it belongs to: no grounds for a warning.
    FixtureBuilder f;
    f.file("/dev/dri/card0", "").file("/dev/dri/renderD128", "");
    const auto r = detect_vulkan(f);
    EXPECT_TRUE(r.devices().empty());
    EXPECT_TRUE(r.warnings().empty());
  }
}

TEST(VulkanDetection, WithoutVulkaninfoAGpuReportedByItsOwnBackendIsNoConcern) {
  FixtureBuilder f;
  f.file("/dev/dri/renderD128", "");
  hwaccel::testing::PciFunctionSpec gpu;
  gpu.bdf = "0000:c3:00.0";
  gpu.vendor = "0x1002";
  gpu.device = "0x744c";
  gpu.class_code = "0x030000";
  gpu.driver = "amdgpu";
  add_pci_function(f, gpu);
  f.link("/sys/class/drm/renderD128", "../../devices/pci0000:00/0000:c3:00.0/drm/renderD128")
      .link(hwaccel::testing::pci_device_dir("0000:c3:00.0") + "/drm/renderD128/device", "../../../0000:c3:00.0")
      .link("/sys/class/drm/card0", "../../devices/pci0000:00/0000:c3:00.0/drm/card0")
      .link(hwaccel::testing::pci_device_dir("0000:c3:00.0") + "/drm/card0/device", "../../../0000:c3:00.0");
  auto system = FixtureSystem::open(f.write());
  ASSERT_TRUE(system);
  const auto r = DetectBuilder::none().with(Backend::vulkan).with(Backend::rocm).system_probes(false).detect(**system);
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_EQ(r.devices()[0].backend, Backend::rocm);
  for (const auto& w : r.warnings()) EXPECT_NE(w.backend, "vulkan") << w.message;
}

// --- the merge pass ---------------------------------------------------------

DeviceProfile native(Backend backend, std::uint32_t index, std::string name, std::optional<std::string> bus) {
  DeviceProfile d;
  d.backend = backend;
  d.family = Family::gpu;
  d.index = index;
  d.id = device_id(backend, index);
  d.name = std::move(name);
  d.pci_bus_id = std::move(bus);
  return d;
}

DeviceProfile vulkan(std::uint32_t index, std::string name, std::optional<std::string> bus, std::string vendor,
                     std::string device, std::optional<std::string> uuid = std::nullopt) {
  DeviceProfile d = native(Backend::vulkan, index, std::move(name), std::move(bus));
  d.runtime_index = index;
  d.uuid = std::move(uuid);
  d.properties = {{"vulkan_vendor_id", vendor}, {"vulkan_device_id", device}, {"vulkan_api_version", "1.3.289"},
                  {"vulkan_driver_name", "radv"}, {"vulkan_driver_info", "Mesa 24.2.3"}};
  return d;
}

std::unique_ptr<FixtureSystem> empty_system(FixtureBuilder& f) {
  auto s = FixtureSystem::open(f.write());
  EXPECT_TRUE(s);
  return std::move(*s);
}

TEST(VulkanMerge, SamePciFunctionMergesOtherGpusStay) {
  FixtureBuilder f;
  const auto sys = empty_system(f);
  Inventory inv;
  inv.devices = {native(Backend::rocm, 0, "AMD Radeon RX 7800 XT", "0000:0d:00.0"),
                 vulkan(0, "AMD Radeon RX 7800 XT (RADV NAVI32)", "0000:0d:00.0", "0x1002", "0x747e"),
                 vulkan(1, "Intel(R) Arc(tm) A380 Graphics (DG2)", "0000:05:00.0", "0x8086", "0x56a5")};
  merge_vulkan_devices(inv, *sys);
  ASSERT_EQ(inv.devices.size(), 2u);
  const DeviceProfile& rocm = inv.devices[0];
  EXPECT_EQ(rocm.properties.at("vulkan_api_version"), "1.3.289");
  EXPECT_EQ(rocm.properties.at("vulkan_driver"), "radv Mesa 24.2.3");
  EXPECT_EQ(rocm.properties.at("vulkan_device_index"), "0");
  EXPECT_EQ(rocm.properties.at("vulkan_device_name"), "AMD Radeon RX 7800 XT (RADV NAVI32)");
  // The Arc GPU has no native twin here: it stays, renumbered.
  EXPECT_EQ(inv.devices[1].id, "vulkan:0");
  EXPECT_EQ(inv.devices[1].index, 0u);
  EXPECT_EQ(inv.devices[1].runtime_index, 1u);
}

TEST(VulkanMerge, UniqueVendorAndDeviceIdsThenUuid) {
  FixtureBuilder f;
  hwaccel::testing::PciFunctionSpec gpu;
  gpu.bdf = "0000:17:00.0";
  gpu.vendor = "0x10de";
  gpu.device = "0x2330";
  gpu.class_code = "0x030200";
  gpu.driver = "nvidia";
  hwaccel::testing::add_pci_function(f, gpu);
  const auto sys = empty_system(f);
  Inventory inv;
  inv.devices = {native(Backend::cuda, 0, "NVIDIA H100 80GB HBM3", "0000:17:00.0"),
                 native(Backend::cuda, 1, "NVIDIA L4", std::nullopt),
                 // No PCI bus info from this driver: ids read from sysfs for cuda:0.
                 vulkan(0, "NVIDIA H100 80GB HBM3", std::nullopt, "0x10de", "0x2330"),
                 vulkan(1, "NVIDIA L4", std::nullopt, "0x10de", "0x27b8", "27B8A1C4-5D6E-4F70-8192-A3B4C5D6E7F8")};
  inv.devices[1].uuid = "GPU-27b8a1c4-5d6e-4f70-8192-a3b4c5d6e7f8";
  merge_vulkan_devices(inv, *sys);
  ASSERT_EQ(inv.devices.size(), 2u);
  EXPECT_EQ(inv.devices[0].properties.at("vulkan_device_index"), "0");
  EXPECT_EQ(inv.devices[1].properties.at("vulkan_device_index"), "1");
}

TEST(VulkanMerge, TwoIdenticalGpusWithoutBusIdsAreNotGuessed) {
  FixtureBuilder f;
  const auto sys = empty_system(f);
  Inventory inv;
  inv.devices = {native(Backend::cuda, 0, "NVIDIA L4", std::nullopt), native(Backend::cuda, 1, "NVIDIA L4", std::nullopt),
                 vulkan(0, "NVIDIA L4", std::nullopt, "0x10de", "0x27b8"), vulkan(1, "NVIDIA L4", std::nullopt, "0x10de", "0x27b8")};
  inv.devices[0].properties.emplace("pci_id", "10de:27b8");
  inv.devices[1].properties.emplace("pci_id", "10de:27b8");
  merge_vulkan_devices(inv, *sys);
  EXPECT_EQ(inv.devices.size(), 4u);
}

TEST(VulkanMerge, MoltenVkAppleGpuIsTheAppleBackendsGpu) {
  FixtureBuilder f;
  const auto sys = empty_system(f);
  Inventory inv;
  DeviceProfile ane = native(Backend::apple, 1, "Apple M3 Max Neural Engine", std::nullopt);
  ane.family = Family::npu;
  inv.devices = {native(Backend::apple, 0, "Apple M3 Max GPU", std::nullopt), ane,
                 vulkan(0, "Apple M3 Max", std::nullopt, "0x106b", "0x1a030209")};
  merge_vulkan_devices(inv, *sys);
  ASSERT_EQ(inv.devices.size(), 2u);
  EXPECT_EQ(inv.devices[0].properties.at("vulkan_device_name"), "Apple M3 Max");
}

TEST(VulkanMerge, DifferentBusIdIsADifferentGpu) {
  FixtureBuilder f;
  const auto sys = empty_system(f);
  Inventory inv;
  inv.devices = {native(Backend::rocm, 0, "AMD Instinct MI210", "0000:c1:00.0"),
                 vulkan(0, "AMD Instinct MI210", "0000:c2:00.0", "0x1002", "0x740f")};
  inv.devices[0].properties.emplace("pci_id", "1002:740f");
  merge_vulkan_devices(inv, *sys);
  EXPECT_EQ(inv.devices.size(), 2u);
}

}  // namespace
