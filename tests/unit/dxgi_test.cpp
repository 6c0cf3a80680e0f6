// DXGI backend: the Windows System's documents (adapters, processor and
// memory), the devices made of adapters, and the pass that joins an adapter
// to the vendor backend's device of the same GPU.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "backend_fixture.hpp"

import hwaccel;
import hwaccel.detectors;

#include "fixture_detection.hpp"

namespace dxgi_test {

using namespace hwaccel;
using hwaccel::testing::FixtureBuilder;

DxgiAdapter rtx_4090() {
  DxgiAdapter a;
  a.index = 0;
  a.description = "NVIDIA GeForce RTX 4090";
  a.vendor_id = 0x10de;
  a.device_id = 0x2684;
  a.subsystem_id = 0x16f310de;
  a.revision = 0xa1;
  a.dedicated_video_memory = 25386352640;
  a.shared_system_memory = 34286878720;
  a.luid = 0x1037b;
  a.driver_version = "32.0.15.8157";
  a.local_budget = 24180359168;
  a.local_usage = 0;
  return a;
}

DxgiAdapter basic_render_driver() {
  DxgiAdapter a;
  a.index = 1;
  a.description = "Microsoft Basic Render Driver";
  a.vendor_id = 0x1414;
  a.device_id = 0x8c;
  a.software = true;
  return a;
}

TEST(DxgiDocument, WritesWhatItReads) {
  const DxgiAdapter warp = basic_render_driver();
  const std::vector<DxgiAdapter> adapters{rtx_4090(), warp};
  const auto read = parse_dxgi_adapters(format_dxgi_adapters(adapters));
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(*read, adapters);
  EXPECT_EQ(dxgi_luid_text(0x1037b), "00000000:0001037b");
}

// DXGI's ids are UINTs: a value wider than 16 bits (found by the
// dxgi_adapters fuzz target) is written whole, not cut to its low digits.
TEST(DxgiDocument, WritesIdsWiderThanPciWhole) {
  DxgiAdapter wide = rtx_4090();
  wide.vendor_id = 0x10010;
  wide.device_id = 0x052f1854;
  wide.revision = 0x1a1;
  const std::vector<DxgiAdapter> adapters{wide};
  const std::string text = format_dxgi_adapters(adapters);
  EXPECT_NE(text.find("\"0x52f1854\""), std::string::npos) << text;
  const auto read = parse_dxgi_adapters(text);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(*read, adapters);

  // Such an adapter has no PCI id, and without a description its name shows the ids whole.
  wide.description.clear();
  const DeviceProfile d = parsers::dxgi_device(wide, 0);
  EXPECT_EQ(d.name, "GPU [10010:52f1854]");
  EXPECT_EQ(d.properties.count("pci_id"), 0u);
}

TEST(DxgiDocument, RefusesWhatIsWrong) {
  const auto error_of = [](std::string_view adapters) {
    const auto r = parse_dxgi_adapters(
        std::string(R"({"format": "hwaccel-dxgi-adapters", "version": 1, "adapters": [)") + std::string(adapters) + "]}");
    return r ? std::string() : r.error().message;
  };
  EXPECT_EQ(error_of(R"({"index": 0, "description": "GPU", "vendor_id": 4318, "device_id": 1, "dedicated_video_memory": 1})"), "");
  EXPECT_NE(error_of(R"({"index": 0, "description": "GPU", "vendor_id": 4318, "device_id": 1})"), "");  // no memory
  EXPECT_NE(error_of(R"({"index": 0, "description": "GPU", "vendor_id": 4318, "device_id": 1, "dedicated_video_memory": 1e18})"), "");
  EXPECT_NE(error_of(R"({"index": 0, "description": "GPU", "vendor_id": 4318, "device_id": 1, "dedicated_video_memory": 1, "luid": "1037b"})"), "");
  EXPECT_NE(error_of(R"({"index": 0, "description": "A", "vendor_id": 1, "device_id": 1, "dedicated_video_memory": 1},
                        {"index": 0, "description": "B", "vendor_id": 1, "device_id": 1, "dedicated_video_memory": 1})"),
            "");  // one index twice
  EXPECT_NE(error_of(R"({"index": 0, "description": "GPU", "vendor_id": 1, "device_id": 1, "dedicated_video_memory": 1, "colour": 1})"), "");
  EXPECT_FALSE(parse_dxgi_adapters(R"({"format": "hwaccel-models", "version": 1, "adapters": []})"));
  EXPECT_FALSE(parse_dxgi_adapters("{\"format\": \"hwaccel-dxgi-adapters\", \"version\": 1, \"adapters\": [{\"index\""));
}

TEST(WindowsSystemDocument, WritesWhatItReads) {
  WindowsSystemFacts f;
  f.processor_name = "AMD Ryzen 9 7950X 16-Core Processor";
  f.processor_vendor = "AuthenticAMD";
  f.architecture = "x86_64";
  f.logical_processors = 32;
  f.physical_cores = 16;
  f.sockets = 1;
  f.memory_bytes = 68572913664;
  f.memory_available_bytes = 51539607552;
  f.isa_features = {"avx", "avx2", "avx512f"};
  f.os_version = "10.0.26100";
  const auto read = parse_windows_system(format_windows_system(f));
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(*read, f);
  f.memory_available_bytes = *f.memory_bytes + 1;
  EXPECT_FALSE(parse_windows_system(format_windows_system(f)));
}

TEST(DxgiDevice, DiscreteIntegratedAndSoftware) {
  const DeviceProfile gpu = parsers::dxgi_device(rtx_4090(), 0);
  EXPECT_EQ(gpu.id, "dxgi:0");
  EXPECT_EQ(gpu.vendor, "NVIDIA");
  EXPECT_EQ(gpu.memory_bytes, 25386352640u);
  EXPECT_EQ(gpu.memory_kind, MemoryKind::dedicated);
  EXPECT_FALSE(gpu.integrated);
  EXPECT_EQ(gpu.shared_memory_bytes, 34286878720u);
  EXPECT_EQ(gpu.properties.at("pci_id"), "10de:2684");
  EXPECT_EQ(gpu.properties.at("dxgi_luid"), "00000000:0001037b");
  EXPECT_EQ(gpu.driver_version, "32.0.15.8157");

  DxgiAdapter igpu;
  igpu.description = "Intel(R) Arc(TM) Graphics";
  igpu.vendor_id = 0x8086;
  igpu.device_id = 0x7d55;
  igpu.dedicated_video_memory = 128u << 20;
  igpu.shared_system_memory = 16141ull << 20;
  const DeviceProfile i = parsers::dxgi_device(igpu, 1);
  EXPECT_TRUE(i.integrated);
  EXPECT_EQ(i.memory_kind, MemoryKind::carve_out);
  EXPECT_EQ(i.memory_bytes, 128u << 20);
  EXPECT_EQ(i.shared_memory_bytes, 16141ull << 20);

  DxgiAdapter warp = igpu;
  warp.software = true;
  EXPECT_FALSE(parsers::dxgi_adapter_is_accelerator(warp));
  DxgiAdapter remote = igpu;
  remote.remote = true;
  EXPECT_FALSE(parsers::dxgi_adapter_is_accelerator(remote));
  EXPECT_TRUE(parsers::dxgi_adapter_is_accelerator(igpu));
}

DeviceProfile cuda(std::uint32_t index, std::string ids) {
  DeviceProfile d;
  d.backend = Backend::cuda;
  d.family = Family::gpu;
  d.index = index;
  d.id = device_id(d.backend, index);
  d.name = "NVIDIA GeForce RTX 4090";
  d.memory_bytes = 25757220864;
  d.properties.emplace("pci_id", std::move(ids));
  return d;
}

DeviceProfile dxgi(std::uint32_t index, std::uint32_t device_id_value, std::uint64_t luid) {
  DxgiAdapter a = rtx_4090();
  a.index = index;
  a.device_id = device_id_value;
  a.luid = luid;
  return parsers::dxgi_device(a, index);
}

TEST(DxgiMerge, JoinsTheVendorDeviceOfTheSameGpu) {
  Inventory inv;
  inv.devices = {cuda(0, "10de:2684"), dxgi(0, 0x2684, 0x1037b), dxgi(1, 0x2882, 0x2000)};
  merge_dxgi_devices(inv);
  ASSERT_EQ(inv.devices.size(), 2u);
  const DeviceProfile& joined = inv.devices[0];
  EXPECT_EQ(joined.id, "cuda:0");
  EXPECT_EQ(joined.memory_bytes, 25757220864u);  // nvidia-smi's figure wins
  EXPECT_EQ(joined.properties.at("dxgi_luid"), "00000000:0001037b");
  EXPECT_EQ(joined.properties.at("dxgi_driver_version"), "32.0.15.8157");
  EXPECT_EQ(joined.properties.at("dxgi_joined_by"), "PCI ids");
  EXPECT_EQ(joined.shared_memory_bytes, 34286878720u);
  // The other adapter has no vendor twin: it stays, renumbered.
  EXPECT_EQ(inv.devices[1].id, "dxgi:0");
  EXPECT_EQ(inv.devices[1].properties.at("pci_id"), "10de:2882");
}

TEST(DxgiMerge, IdenticalGpusPairInOrderOnlyWhenTheCountsAgree) {
  Inventory two;
  two.devices = {cuda(0, "10de:2684"), cuda(1, "10de:2684"), dxgi(0, 0x2684, 0x10), dxgi(1, 0x2684, 0x20)};
  merge_dxgi_devices(two);
  ASSERT_EQ(two.devices.size(), 2u);
  EXPECT_EQ(two.devices[0].properties.at("dxgi_luid"), "00000000:00000010");
  EXPECT_EQ(two.devices[1].properties.at("dxgi_luid"), "00000000:00000020");
  EXPECT_EQ(two.devices[1].properties.at("dxgi_joined_by"), "PCI ids, in enumeration order");

  // nvidia-smi saw one of two adapters: which one is unknown, nothing joins.
  Inventory uneven;
  uneven.devices = {cuda(0, "10de:2684"), dxgi(0, 0x2684, 0x10), dxgi(1, 0x2684, 0x20)};
  merge_dxgi_devices(uneven);
  EXPECT_EQ(uneven.devices.size(), 3u);
}

TEST(DxgiMerge, VulkanJoinsTheAdapterNoVendorBackendReported) {
  FixtureBuilder f;
  const auto sys = FixtureSystem::open(f.write());
  ASSERT_TRUE(sys) << sys.error().message;
  DeviceProfile vk;
  vk.backend = Backend::vulkan;
  vk.family = Family::gpu;
  vk.id = "vulkan:0";
  vk.name = "NVIDIA GeForce RTX 4060";
  vk.runtime_index = 0;
  vk.properties = {{"vulkan_vendor_id", "0x10de"}, {"vulkan_device_id", "0x2882"}, {"vulkan_api_version", "1.4.303"}};
  Inventory inv;
  inv.devices = {dxgi(0, 0x2882, 0x10), vk};
  merge_dxgi_devices(inv);
  merge_vulkan_devices(inv, **sys);
  ASSERT_EQ(inv.devices.size(), 1u);
  EXPECT_EQ(inv.devices[0].id, "dxgi:0");
  EXPECT_EQ(inv.devices[0].properties.at("vulkan_api_version"), "1.4.303");
  EXPECT_EQ(inv.devices[0].properties.at("vulkan_device_index"), "0");
}

TEST(DxgiMerge, VulkanFindsIdenticalGpusByTheirLuid) {
  EXPECT_EQ(parsers::parse_vulkan_luid("2f690100-00000000"), 0x1692fu);
  EXPECT_EQ(parsers::parse_vulkan_luid("7b03010000000000"), 0x1037bu);
  EXPECT_EQ(parsers::parse_vulkan_luid("00000000-00000000"), std::nullopt);
  EXPECT_EQ(parsers::parse_vulkan_luid("2f690100-0000000"), std::nullopt);
  EXPECT_EQ(parsers::parse_vulkan_luid("2f690100-0000000g"), std::nullopt);

  FixtureBuilder f;
  const auto sys = FixtureSystem::open(f.write());
  ASSERT_TRUE(sys) << sys.error().message;
  const auto vulkan = [](std::uint32_t index, std::string luid) {
    DeviceProfile vk;
    vk.backend = Backend::vulkan;
    vk.family = Family::gpu;
    vk.index = index;
    vk.id = device_id(vk.backend, index);
    vk.name = "NVIDIA GeForce RTX 4090";
    vk.runtime_index = index;
    vk.properties = {{"vulkan_vendor_id", "0x10de"}, {"vulkan_device_id", "0x2684"}, {"vulkan_luid", std::move(luid)}};
    return vk;
  };
  Inventory inv;
  // The loader lists them in the other order than nvidia-smi and DXGI.
  inv.devices = {cuda(0, "10de:2684"), cuda(1, "10de:2684"), dxgi(0, 0x2684, 0x10), dxgi(1, 0x2684, 0x20),
                 vulkan(0, "00000000:00000020"), vulkan(1, "00000000:00000010")};
  merge_dxgi_devices(inv);
  merge_vulkan_devices(inv, **sys);
  ASSERT_EQ(inv.devices.size(), 2u);
  EXPECT_EQ(inv.devices[0].properties.at("dxgi_luid"), "00000000:00000010");
  EXPECT_EQ(inv.devices[0].properties.at("vulkan_device_index"), "1");
  EXPECT_EQ(inv.devices[1].properties.at("vulkan_device_index"), "0");
}

TEST(DxgiDetector, ReadsTheDocumentAndLeavesLinuxAlone) {
  FixtureBuilder linux_machine;
  EXPECT_TRUE(hwaccel::testing::detect_backend(linux_machine, Backend::dxgi).devices().empty());
  EXPECT_TRUE(hwaccel::testing::detect_backend(linux_machine, Backend::dxgi).warnings().empty());

  FixtureBuilder windows;
  const DxgiAdapter warp = basic_render_driver();
  const std::vector<DxgiAdapter> adapters{rtx_4090(), warp};
  windows.file(std::string(dxgi_adapters_path), format_dxgi_adapters(adapters));
  const auto r = hwaccel::testing::detect_backend(windows, Backend::dxgi);
  ASSERT_EQ(r.devices().size(), 1u);  // WARP is no accelerator
  EXPECT_EQ(r.devices()[0].name, "NVIDIA GeForce RTX 4090");
  EXPECT_EQ(r.devices()[0].spec_id, "rtx-4090-24gb");

  FixtureBuilder garbage;
  garbage.file(std::string(dxgi_adapters_path), "{\"format\": \"hwaccel-dxgi-adapters\", \"version\": 1, \"adapters\": 7}");
  const auto g = hwaccel::testing::detect_backend(garbage, Backend::dxgi);
  EXPECT_TRUE(g.devices().empty());
  ASSERT_EQ(g.warnings().size(), 1u);
  EXPECT_EQ(g.warnings()[0].backend, "dxgi");
}

}  // namespace dxgi_test
