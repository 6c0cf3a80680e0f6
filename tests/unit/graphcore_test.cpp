// Graphcore backend: gc-info parsers, published IPU memory, detection through
// gc-info or PCI, and no match on Intel camera IPU nodes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backend_fixture.hpp"

import hwaccel;
import hwaccel.detectors;

namespace {

using namespace hwaccel;
using hwaccel::testing::add_pci;
using hwaccel::testing::FixtureBuilder;
using hwaccel::testing::PciSpec;
using hwaccel::testing::proc_pci_line;

constexpr const char* fabric_listing =
    "Graphcore device listing:\n"
    "Partition: pod16 [active]\n"
    "-+- Id: [0], target: [Fabric], IPU-M host: [10.1.5.1], IPU#: [3]\n"
    "-+- Id: [1], target: [Fabric], IPU-M host: [10.1.5.1], IPU#: [2]\n"
    "-+- Id: [2], target: [Multi IPU]\n"
    " |--- Id: [0], DNC Id: [0], IPU-M host: [10.1.5.1], IPU#: [3]\n"
    " |--- Id: [1], DNC Id: [1], IPU-M host: [10.1.5.1], IPU#: [2]\n";

constexpr const char* pcie_listing =
    "Graphcore device listing:\n"
    "\n"
    "-+- Id:  [0], type:      [PCIe], PCI Domain: [0000:1a:00.0]\n"
    "-+- Id:  [1], type:      [PCIe], PCI Domain: [0000:1b:00.0]\n";

std::string device_info(int id, std::string_view board, std::string_view arch, std::string_view pci) {
  std::string s = "Device Info:\n  id: " + std::to_string(id) + "\n  target: PCIe\n";
  s += "  average die temp: 33.4 C\n  board serial number: 0340.0004.91906" + std::to_string(id) + "\n";
  s += "  board type: " + std::string(board) + "\n  clock: 1300MHz\n  driver version: 1.0.56\n";
  s += "  firmware version: 1.4.14\n  hexoatt total size (bytes): 17045651456\n";
  s += "  ipu architecture: " + std::string(arch) + "\n  ipu error state: no errors\n  ipu utilisation: 12.50%\n";
  s += "  link speed: 8 GT/s\n  link width: 8\n  numa node: 1\n  pci id: " + std::string(pci) + "\n";
  s += "  total board power: 99.5 W\n";
  return s;
}

TEST(GraphcoreParsers, ListingSkipsGroupsAndTheirMembers) {
  const auto r = parsers::parse_gc_info_list(fabric_listing);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0].id, 0u);
  EXPECT_EQ((*r)[0].fields.at("target"), "Fabric");
  EXPECT_EQ((*r)[0].fields.at("IPU-M host"), "10.1.5.1");
  EXPECT_EQ((*r)[0].fields.at("IPU#"), "3");
  EXPECT_FALSE((*r)[0].multi_ipu);
  EXPECT_TRUE((*r)[2].multi_ipu);
  const auto p = parsers::parse_gc_info_list(pcie_listing);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->size(), 2u);
  EXPECT_EQ((*p)[1].fields.at("PCI Domain"), "0000:1b:00.0");
  EXPECT_EQ((*p)[1].fields.at("type"), "PCIe");
}

TEST(GraphcoreParsers, ListingErrors) {
  EXPECT_EQ(parsers::parse_gc_info_list("").error().kind, ErrorKind::parse_error);
  EXPECT_EQ(parsers::parse_gc_info_list("Error: could not connect\n").error().kind, ErrorKind::parse_error);
  EXPECT_EQ(parsers::parse_gc_info_list("-+- Id: [x], target: [PCIe]\n").error().kind, ErrorKind::parse_error);
  EXPECT_EQ(parsers::parse_gc_info_list("-+- garbage\n").error().kind, ErrorKind::parse_error);
  const auto empty = parsers::parse_gc_info_list("Graphcore device listing:\n\n");
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->empty());
}

TEST(GraphcoreParsers, DeviceAttributes) {
  const auto r = parsers::parse_gc_info_device(device_info(0, "C2", "ipu1", "0000:1a:00.0"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->at("board type"), "C2");
  EXPECT_EQ(r->at("ipu architecture"), "ipu1");
  EXPECT_EQ(r->at("pci id"), "0000:1a:00.0");
  EXPECT_EQ(r->at("link speed"), "8 GT/s");
  EXPECT_EQ(parsers::parse_gc_info_device("\n\n").error().kind, ErrorKind::parse_error);
}

TEST(GraphcoreParsers, PublishedIpuMemory) {
  EXPECT_EQ(parsers::ipu_architecture("ipu1")->tiles, 1216u);
  EXPECT_EQ(parsers::ipu_architecture("ipu1")->sram_bytes_per_tile, 256u * 1024);
  EXPECT_EQ(parsers::ipu_architecture("ipu2")->tiles, 1472u);
  EXPECT_EQ(parsers::ipu_architecture("ipu21")->sram_bytes_per_tile, 624u * 1024);
  EXPECT_FALSE(parsers::ipu_architecture("ipu9"));
}

class GraphcoreDetection : public ::testing::Test {
 protected:
  FixtureBuilder f_;
  AcceleratorRegistry detect() {
    auto sys = FixtureSystem::open(f_.write());
    EXPECT_TRUE(sys) << sys.error().message;
    return DetectBuilder::none().with(Backend::graphcore).system_probes(false).detect(**sys);
  }
};

TEST_F(GraphcoreDetection, PcieCardsThroughGcInfo) {
  f_.command({"gc-info", "-l"}, pcie_listing);
  f_.command({"gc-info", "-i", "-d", "0"}, device_info(0, "C2", "ipu1", "0000:1a:00.0"));
  f_.command({"gc-info", "-i", "-d", "1"}, device_info(1, "C2", "ipu1", "0000:1b:00.0"));
  const auto r = detect();
  EXPECT_TRUE(r.warnings().empty());
  ASSERT_EQ(r.devices().size(), 2u);
  const DeviceProfile& d = r.devices()[1];
  EXPECT_EQ(d.id, "graphcore:1");
  EXPECT_EQ(d.name, "Graphcore C2 IPU");
  EXPECT_EQ(d.architecture, "ipu1");
  EXPECT_EQ(d.pci_bus_id, "0000:1b:00.0");
  EXPECT_EQ(d.numa_node, 1);
  ASSERT_TRUE(d.pcie);
  EXPECT_EQ(d.pcie->current_generation(), 3u);
  EXPECT_EQ(d.driver_version, "1.0.56");
  EXPECT_EQ(d.firmware_version, "1.4.14");
  EXPECT_EQ(d.temperature_c, 33.4);
  EXPECT_EQ(d.utilization_percent, 12.5);
  EXPECT_FALSE(d.memory_bytes) << "hexoatt size is not IPU memory";
  EXPECT_EQ(d.properties.at("published_memory_bytes"), std::to_string(1216ull * 256 * 1024));
  EXPECT_TRUE(d.available);
}

TEST_F(GraphcoreDetection, IpuListedTwiceIsOneDevice) {
  f_.command({"gc-info", "-l"}, std::string(pcie_listing) + "-+- Id:  [0], type:      [PCIe], PCI Domain: [0000:1c:00.0]\n");
  f_.command({"gc-info", "-i", "-d", "0"}, device_info(0, "C2", "ipu1", "0000:1a:00.0"));
  f_.command({"gc-info", "-i", "-d", "1"}, device_info(1, "C2", "ipu1", "0000:1b:00.0"));
  const auto r = detect();
  ASSERT_EQ(r.devices().size(), 2u);
  EXPECT_EQ(r.devices()[0].runtime_index, 0u);
  EXPECT_EQ(r.devices()[0].pci_bus_id, "0000:1a:00.0") << "the first entry is kept";
  EXPECT_EQ(r.devices()[1].runtime_index, 1u);
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::inconsistent);
  EXPECT_EQ(r.warnings()[0].message, "gc-info -l lists IPU 0 twice; the first entry is kept");
}

TEST_F(GraphcoreDetection, FabricIpusWithAFailingDetail) {
  f_.command({"gc-info", "-l"}, fabric_listing);
  f_.command({"gc-info", "-i", "-d", "0"}, device_info(0, "M2000", "ipu2", "N/A"));
  f_.command({"gc-info", "-i", "-d", "1"}, "", 1, "Error: device 1 is in use\n");
  const auto r = detect();
  ASSERT_EQ(r.devices().size(), 2u) << "the Multi IPU group is not a device";
  EXPECT_EQ(r.devices()[0].name, "Graphcore M2000 IPU");
  EXPECT_FALSE(r.devices()[0].pci_bus_id);
  EXPECT_EQ(r.devices()[0].properties.at("ipum_host"), "10.1.5.1");
  EXPECT_EQ(r.devices()[1].name, "Graphcore IPU");
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::tool_failed);
}

TEST_F(GraphcoreDetection, PciFunctionsWithoutGcInfo) {
  f_.file("/proc/bus/pci/devices", proc_pci_line(0x1a, 0, 0, 0x1d95, 0x0001, "ipu") +
                                       proc_pci_line(0x1b, 0, 0, 0x1d95, 0x0001, "ipu") +
                                       proc_pci_line(0, 0x14, 3, 0x8086, 0xa75d, "intel-ipu6"));
  add_pci(f_, PciSpec("0000:1a:00.0", 0x1d95, 0x0001).bound("ipu").numa(0));
  const auto r = detect();
  ASSERT_EQ(r.devices().size(), 2u);
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::tool_missing);
  EXPECT_EQ(r.devices()[0].name, "Graphcore Colossus GC2 IPU");
  EXPECT_EQ(r.devices()[0].numa_node, 0);
  EXPECT_EQ(r.devices()[1].pci_bus_id, "0000:1b:00.0");
  EXPECT_EQ(r.devices()[1].properties.at("driver"), "ipu");
}

TEST_F(GraphcoreDetection, GarbageOrFailureFallsBackToPci) {
  f_.command({"gc-info", "-l"}, "\x01\x02\x03");
  f_.file("/proc/bus/pci/devices", proc_pci_line(0x1a, 0, 0, 0x1d95, 0x0001, "ipu"));
  const auto r = detect();
  ASSERT_EQ(r.devices().size(), 1u);
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::parse_error);
}

TEST_F(GraphcoreDetection, IntelCameraIpuIsNotAGraphcoreIpu) {
  f_.file("/dev/ipu-psys0", "");
  f_.file("/dev/ipu6-psys0", "");
  f_.file("/proc/bus/pci/devices", proc_pci_line(0, 0x05, 0, 0x8086, 0xa75d, "intel-ipu6"));
  const auto r = detect();
  EXPECT_TRUE(r.devices().empty());
  EXPECT_TRUE(r.warnings().empty());
}

TEST_F(GraphcoreDetection, IpuOverFabricWithoutGcInfoIsNamed) {
  f_.env("IPUOF_CONFIG_PATH", "/etc/ipuof.conf.d/pod16.conf");
  const auto r = detect();
  EXPECT_TRUE(r.devices().empty());
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::tool_missing);
}

}  // namespace
