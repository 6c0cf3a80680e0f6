// Apple backend: chip tables, device tree, system_profiler JSON, detection on
// macOS (Apple silicon and Intel) and Linux (Asahi).
#include <gtest/gtest.h>

#include <string>

#include "../test_support.hpp"

import hwaccel;
import hwaccel.detectors;

#include "fixture_detection.hpp"

namespace {

using namespace hwaccel;
using hwaccel::testing::FixtureBuilder;
using namespace std::string_literals;

AcceleratorRegistry detect_apple(FixtureBuilder& f) { return hwaccel::testing::detect_backend(f, Backend::apple); }

const std::string m2_max_hardware = R"({
  "SPHardwareDataType" : [
    {
      "_name" : "hardware_overview",
      "activation_lock_status" : "activation_lock_disabled",
      "boot_rom_version" : "10151.121.1",
      "chip_type" : "Apple M2 Max",
      "machine_model" : "Mac14,6",
      "machine_name" : "MacBook Pro",
      "model_number" : "MPHG3LL/A",
      "number_processors" : "proc 12:8:4",
      "os_loader_version" : "10151.121.1",
      "physical_memory" : "64 GB",
      "platform_UUID" : "00000000-0000-0000-0000-000000000000",
      "provisioning_UDID" : "00000000-000000000000000E",
      "serial_number" : "XXXXXXXXXX"
    }
  ]
})";

const std::string m2_max_displays = R"({
  "SPDisplaysDataType" : [
    {
      "_name" : "Apple M2 Max",
      "spdisplays_mtlgpufamilysupport" : "spdisplays_metal3",
      "spdisplays_ndrvs" : [
        {
          "_name" : "Color LCD",
          "_spdisplays_display-product-id" : "a050",
          "_spdisplays_pixels" : "3456 x 2234",
          "spdisplays_connection_type" : "spdisplays_internal",
          "spdisplays_main" : "spdisplays_yes",
          "spdisplays_online" : "spdisplays_yes"
        }
      ],
      "spdisplays_vendor" : "sppci_vendor_Apple",
      "sppci_bus" : "spdisplays_builtin",
      "sppci_cores" : "38",
      "sppci_device_type" : "spdisplays_gpu",
      "sppci_model" : "Apple M2 Max"
    }
  ]
})";

const std::string intel_mac_displays = R"({
  "SPDisplaysDataType" : [
    {
      "_name" : "kHW_IntelUHDGraphics630Item",
      "spdisplays_automatic_graphics_switching" : "spdisplays_supported",
      "spdisplays_device-id" : "0x3e9b",
      "spdisplays_gmux-version" : "5.0.0",
      "spdisplays_metalfamily" : "spdisplays_mtlgpufamilymac2",
      "spdisplays_revision-id" : "0x0002",
      "spdisplays_vendor" : "sppci_vendor_intel",
      "spdisplays_vram_shared" : "1536 MB",
      "sppci_bus" : "spdisplays_builtin",
      "sppci_device_type" : "spdisplays_gpu",
      "sppci_model" : "Intel UHD Graphics 630"
    },
    {
      "_name" : "kHW_AMDRadeonPro5500MItem",
      "spdisplays_device-id" : "0x7340",
      "spdisplays_efi-version" : "01.01.190",
      "spdisplays_metalfamily" : "spdisplays_mtlgpufamilymac2",
      "spdisplays_pcie_width" : "x16",
      "spdisplays_revision-id" : "0x0040",
      "spdisplays_rom-revision" : "113-D3220E-190",
      "spdisplays_vbios-version" : "113-D32206U1-019",
      "spdisplays_vendor" : "sppci_vendor_amd",
      "spdisplays_vram" : "8 GB",
      "sppci_bus" : "spdisplays_pcie_device",
      "sppci_device_type" : "spdisplays_gpu",
      "sppci_model" : "AMD Radeon Pro 5500M"
    }
  ]
})";

TEST(AppleParsers, ChipTables) {
  EXPECT_EQ(parsers::apple_chip_by_soc("t8103")->name, "M1");
  EXPECT_EQ(parsers::apple_chip_by_soc("t6002")->name, "M1 Ultra");
  EXPECT_EQ(parsers::apple_chip_by_soc("t6002")->ane_published_cores, 32u);
  EXPECT_EQ(parsers::apple_chip_by_soc("t6034")->name, "M3 Max");
  EXPECT_EQ(parsers::apple_chip_by_soc("t8132")->ane_published_tops, 38.0);
  EXPECT_FALSE(parsers::apple_chip_by_soc("t6032")->ane_published_tops);  // Apple gave cores only
  EXPECT_FALSE(parsers::apple_chip_by_soc("t9999"));
  EXPECT_EQ(parsers::apple_chip_by_name("Apple M2 Max")->soc, "t6021");
  EXPECT_EQ(parsers::apple_chip_by_name("M2 Ultra")->ane_published_tops, 31.6);
  EXPECT_FALSE(parsers::apple_chip_by_name("Apple M9"));
}

TEST(AppleParsers, DeviceTreeCompatible) {
  const auto real = parsers::parse_devicetree_compatible("apple,j293\0apple,t8103\0apple,arm-platform\0"s);
  EXPECT_TRUE(real.apple);
  EXPECT_EQ(real.board, "j293");
  EXPECT_EQ(real.soc, "t8103");
  const auto glued = parsers::parse_devicetree_compatible("apple,j414capple,t6021apple,arm-platform\n");
  EXPECT_EQ(glued.board, "j414c");
  EXPECT_EQ(glued.soc, "t6021");
  const auto pi = parsers::parse_devicetree_compatible("raspberrypi,5-model-b\0brcm,bcm2712\0"s);
  EXPECT_FALSE(pi.apple);
  const auto no_soc = parsers::parse_devicetree_compatible("apple,arm-platform\0"s);
  EXPECT_TRUE(no_soc.apple);
  EXPECT_EQ(no_soc.soc, "");
}

TEST(AppleParsers, SystemProfilerJson) {
  const auto hw = parsers::parse_sp_hardware(m2_max_hardware);
  ASSERT_TRUE(hw) << hw.error().message;
  EXPECT_EQ(hw->chip_type, "Apple M2 Max");
  EXPECT_EQ(hw->machine_model, "Mac14,6");
  EXPECT_EQ(hw->physical_memory_bytes, 64ull << 30);
  const auto gpus = parsers::parse_sp_displays(intel_mac_displays);
  ASSERT_TRUE(gpus);
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_EQ((*gpus)[0].name, "Intel UHD Graphics 630");
  EXPECT_EQ((*gpus)[0].vendor, "Intel");
  EXPECT_EQ((*gpus)[0].vram_shared_bytes, 1536ull << 20);
  EXPECT_TRUE((*gpus)[0].builtin);
  EXPECT_EQ((*gpus)[0].metal, "Metal GPU family Mac 2");
  EXPECT_EQ((*gpus)[1].vendor, "AMD");
  EXPECT_EQ((*gpus)[1].pci_vendor_id, 0x1002);
  EXPECT_EQ((*gpus)[1].pci_device_id, 0x7340);
  EXPECT_EQ((*gpus)[1].vram_bytes, 8ull << 30);
  EXPECT_FALSE(parsers::parse_sp_hardware("not json"));
  EXPECT_EQ(parsers::parse_sp_hardware("{\"SPHardwareDataType\": []}").error().kind, ErrorKind::parse_error);
  EXPECT_EQ(parsers::parse_sp_displays("{\"other\": 1}").error().kind, ErrorKind::parse_error);
}

TEST(AppleParsers, DefaultWiredLimit) {
  EXPECT_EQ(parsers::default_gpu_wired_limit(32ull << 30), (32ull << 30) / 3 * 2);
  EXPECT_EQ(parsers::default_gpu_wired_limit(64ull << 30), 48ull << 30);
}

void mac(FixtureBuilder& f, const std::string& hardware, const std::string& displays, std::string_view memsize,
         std::string_view wired = "0\n") {
  f.command({"system_profiler", "SPHardwareDataType", "-json"}, hardware)
      .command({"system_profiler", "SPDisplaysDataType", "-json"}, displays)
      .command({"sysctl", "-n", "hw.memsize"}, memsize)
      .command({"sysctl", "-n", "iogpu.wired_limit_mb"}, wired);
}

TEST(AppleDetection, AppleSiliconMacGpuAndNeuralEngine) {
  FixtureBuilder f;
  mac(f, m2_max_hardware, m2_max_displays, "68719476736\n");
  const auto r = detect_apple(f);
  ASSERT_EQ(r.devices().size(), 2u);
  const DeviceProfile& gpu = r.devices()[0];
  EXPECT_EQ(gpu.id, "apple:0");
  EXPECT_EQ(gpu.family, Family::gpu);
  EXPECT_EQ(gpu.name, "Apple M2 Max GPU");
  EXPECT_EQ(gpu.compute_units, 38u);
  EXPECT_EQ(gpu.compute_capability, "Metal 3");
  EXPECT_EQ(gpu.memory_kind, MemoryKind::unified);
  EXPECT_EQ(gpu.memory_bytes, 64ull << 30);
  EXPECT_EQ(gpu.shared_memory_bytes, 48ull << 30);
  EXPECT_NE(gpu.properties.at("shared_memory").find("conservative estimate"), std::string::npos);
  EXPECT_EQ(gpu.properties.at("machine_model"), "Mac14,6");
  const DeviceProfile& ane = r.devices()[1];
  EXPECT_EQ(ane.id, "apple:1");
  EXPECT_EQ(ane.family, Family::npu);
  EXPECT_EQ(ane.name, "Apple M2 Max Neural Engine");
  EXPECT_FALSE(ane.memory_bytes);
  EXPECT_EQ(ane.properties.at("published_tops"), "15.8");
  EXPECT_EQ(ane.properties.at("published_neural_engine_cores"), "16");
  EXPECT_FALSE(ane.spec_id);
  EXPECT_TRUE(r.warnings().empty());
}

TEST(AppleDetection, WiredLimitSetByTheAdministrator) {
  FixtureBuilder f;
  mac(f, m2_max_hardware, m2_max_displays, "68719476736\n", "57344\n");
  const auto r = detect_apple(f);
  ASSERT_EQ(r.devices().size(), 2u);
  EXPECT_EQ(r.devices()[0].shared_memory_bytes, 56ull << 30);
  EXPECT_NE(r.devices()[0].properties.at("shared_memory").find("iogpu.wired_limit_mb"), std::string::npos);
}

TEST(AppleDetection, IntelMacReportsItsGpusNotNothing) {
  FixtureBuilder f;
  const std::string hardware = R"({"SPHardwareDataType":[{"_name":"hardware_overview","cpu_type":"6-Core Intel Core i7",
    "current_processor_speed":"2.6 GHz","machine_model":"MacBookPro16,1","number_processors":6,"packages":1,
    "physical_memory":"16 GB"}]})";
  // macOS before 14 has no iogpu sysctl.
  mac(f, hardware, intel_mac_displays, "17179869184\n");
  f.command({"sysctl", "-n", "iogpu.wired_limit_mb"}, "", 1, "sysctl: unknown oid 'iogpu.wired_limit_mb'\n");
  const auto r = detect_apple(f);
  ASSERT_EQ(r.devices().size(), 2u);
  const DeviceProfile& igpu = r.devices()[0];
  EXPECT_EQ(igpu.name, "Intel UHD Graphics 630");
  EXPECT_TRUE(igpu.integrated);
  EXPECT_EQ(igpu.memory_kind, MemoryKind::unified);
  EXPECT_FALSE(igpu.memory_bytes);
  EXPECT_EQ(igpu.shared_memory_bytes, 1536ull << 20);
  EXPECT_EQ(igpu.properties.at("pci_id"), "8086:3e9b");
  const DeviceProfile& dgpu = r.devices()[1];
  EXPECT_EQ(dgpu.name, "AMD Radeon Pro 5500M");
  EXPECT_FALSE(dgpu.integrated);
  EXPECT_EQ(dgpu.memory_kind, MemoryKind::dedicated);
  EXPECT_EQ(dgpu.memory_bytes, 8ull << 30);
  EXPECT_EQ(dgpu.vendor, "AMD");
  EXPECT_EQ(dgpu.properties.at("pci_id"), "1002:7340");
  EXPECT_TRUE(r.warnings().empty());
}

TEST(AppleDetection, ToolFailuresAndGarbage) {
  FixtureBuilder f;
  f.command({"system_profiler", "SPHardwareDataType", "-json"}, "{\"SPHardwareDataType\" : [ {\"chip_type\" : \"Apple M1\"")
      .command({"system_profiler", "SPDisplaysDataType", "-json"}, "", 0, "", /*hang=*/true)
      .command({"sysctl", "-n", "hw.memsize"}, "lots\n")
      .command({"sysctl", "-n", "iogpu.wired_limit_mb"}, "0\n");
  const auto r = detect_apple(f);
  EXPECT_TRUE(r.devices().empty());
  ASSERT_EQ(r.warnings().size(), 3u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::parse_error);
  EXPECT_NE(r.warnings()[0].message.find("system_profiler SPHardwareDataType -json did not print JSON"), std::string::npos);
  EXPECT_EQ(r.warnings()[1].kind, WarningKind::timeout);
  EXPECT_EQ(r.warnings()[2].kind, WarningKind::parse_error);
}

TEST(AppleDetection, AsahiLinuxFromTheDeviceTree) {
  FixtureBuilder f;
  f.file("/proc/device-tree/compatible", "apple,j316s\0apple,t6000\0apple,arm-platform\0"s)
      .file("/proc/device-tree/model", "Apple MacBook Pro (16-inch, M1 Pro, 2021)\0"s)
      .file("/proc/meminfo", "MemTotal:       16183468 kB\nMemAvailable:   12000000 kB\n")
      .file("/sys/bus/platform/drivers/asahi/bind", "");
  const auto r = detect_apple(f);
  ASSERT_EQ(r.devices().size(), 2u);
  const DeviceProfile& gpu = r.devices()[0];
  EXPECT_EQ(gpu.name, "Apple M1 Pro GPU");
  EXPECT_EQ(gpu.memory_bytes, 16183468ull * 1024);
  EXPECT_FALSE(gpu.shared_memory_bytes);
  EXPECT_TRUE(gpu.available);
  EXPECT_EQ(gpu.properties.at("soc"), "apple,t6000");
  EXPECT_EQ(gpu.properties.at("board"), "apple,j316s");
  EXPECT_EQ(gpu.properties.at("machine_model"), "Apple MacBook Pro (16-inch, M1 Pro, 2021)");
  EXPECT_EQ(gpu.properties.at("linux_driver"), "asahi");
  const DeviceProfile& ane = r.devices()[1];
  EXPECT_EQ(ane.name, "Apple M1 Pro Neural Engine");
  EXPECT_FALSE(ane.available);
  EXPECT_EQ(ane.properties.at("published_tops"), "11");
  EXPECT_TRUE(r.warnings().empty());
}

TEST(AppleDetection, AsahiWithoutGpuDriverAndUnknownSoc) {
  FixtureBuilder f;
  f.file("/proc/device-tree/compatible", "apple,j604\0apple,t8142\0apple,arm-platform\0"s)
      .file("/proc/meminfo", "MemTotal: 16000000 kB\n");
  const auto r = detect_apple(f);
  ASSERT_EQ(r.devices().size(), 2u);
  EXPECT_EQ(r.devices()[0].name, "Apple silicon (t8142) GPU");
  EXPECT_FALSE(r.devices()[0].available);
  EXPECT_FALSE(r.devices()[1].properties.contains("published_tops"));
  ASSERT_EQ(r.warnings().size(), 2u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::unsupported);
  EXPECT_NE(r.warnings()[0].message.find("apple,t8142"), std::string::npos);
  EXPECT_EQ(r.warnings()[1].kind, WarningKind::unsupported);
}

TEST(AppleDetection, OtherDeviceTreePlatformsAndPlainLinuxAreNotApple) {
  {
    FixtureBuilder f;
    f.file("/proc/device-tree/compatible", "nvidia,p3768-0000+p3767-0000\0nvidia,tegra234\0"s);
    const auto r = detect_apple(f);
    EXPECT_TRUE(r.devices().empty());
    EXPECT_TRUE(r.warnings().empty());
  }
  {
    FixtureBuilder f;
    f.file("/proc/meminfo", "MemTotal: 1024 kB\n").tool("sysctl");  // procps sysctl on Linux
    const auto r = detect_apple(f);
    EXPECT_TRUE(r.devices().empty());
    EXPECT_TRUE(r.warnings().empty());
  }
}

}  // namespace
