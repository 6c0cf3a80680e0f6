// Intel GPU backend: xpu-smi discovery parser, product table, and detection
// over xpu-smi and the i915/xe DRM sysfs (local memory, iGPU, Arc switch link).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backend_fixture.hpp"

#include "../test_support.hpp"

import hwaccel;
import hwaccel.detectors;

namespace {

using namespace hwaccel;
using hwaccel::testing::add_pci;
using hwaccel::testing::FixtureBuilder;
using hwaccel::testing::PciSpec;

using hwaccel::testing::MiB;
using hwaccel::testing::GiB;

constexpr const char* list_box =
    "+-----------+--------------------------------------------------------------------------------------+\n"
    "| Device ID | Device Information                                                                   |\n"
    "+-----------+--------------------------------------------------------------------------------------+\n"
    "| 0         | Device Name: Intel(R) Data Center GPU Max 1550                                       |\n"
    "|           | Vendor Name: Intel(R) Corporation                                                    |\n"
    "|           | SOC UUID: 00000000-0000-0029-0000-002f0bd58086                                       |\n"
    "|           | PCI BDF Address: 0000:29:00.0                                                        |\n"
    "|           | DRM Device: /dev/dri/card1                                                           |\n"
    "|           | Function Type: physical                                                              |\n"
    "+-----------+--------------------------------------------------------------------------------------+\n"
    "| 1         | Device Name: Intel(R) Graphics [0x0bd5]                                              |\n"
    "|           | Vendor Name: Intel(R) Corporation                                                    |\n"
    "|           | PCI BDF Address: 0000:3a:00.0                                                        |\n"
    "|           | Function Type: physical                                                              |\n"
    "+-----------+--------------------------------------------------------------------------------------+\n";

std::string detail_box(int id, std::string_view bdf, std::string_view name) {
  std::string s =
      "+-----------+--------------------------------------------------------------------------------------+\n"
      "| Device ID | Device Information                                                                   |\n"
      "+-----------+--------------------------------------------------------------------------------------+\n";
  s += "| " + std::to_string(id) + "         | Device Type: GPU                                                     |\n";
  s += "|           | Device Name: " + std::string(name) + "                                 |\n";
  s += "|           | PCI Device ID: 0x0bd5                                                                |\n"
       "|           | Serial Number: unknown                                                               |\n"
       "|           | Driver Version: I915_23.10.32_PSB_231129.32                                          |\n"
       "|           | GFX Firmware Name: GFX                                                               |\n"
       "|           | GFX Firmware Version:                                                                |\n"
       "|           |                                                                                      |\n";
  s += "|           | PCI BDF Address: " + std::string(bdf) + "                                                        |\n";
  s += "|           | PCIe Generation: 5                                                                   |\n"
       "|           | PCIe Max Link Width: 16                                                              |\n"
       "|           | Memory Physical Size: 131072.00 MiB                                                  |\n"
       "|           | Number of EUs: 1024                                                                  |\n"
       "|           | Number of Tiles: 2                                                                   |\n"
       "+-----------+--------------------------------------------------------------------------------------+\n";
  return s;
}

TEST(OneApiParsers, DiscoveryBoxKeysAndEmptyValues) {
  const auto list = parsers::parse_xpu_smi_discovery(list_box);
  ASSERT_TRUE(list) << list.error().message;
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].device_id, 0u);
  EXPECT_EQ((*list)[0].get("Device Name"), "Intel(R) Data Center GPU Max 1550");
  EXPECT_EQ((*list)[0].get("PCI BDF Address"), "0000:29:00.0");
  EXPECT_EQ((*list)[1].device_id, 1u);
  EXPECT_FALSE((*list)[1].get("SOC UUID"));

  const auto detail = parsers::parse_xpu_smi_discovery(detail_box(0, "0000:29:00.0", "Intel(R) Data Center GPU Max 1550"));
  ASSERT_TRUE(detail);
  ASSERT_EQ(detail->size(), 1u);
  const auto& d = (*detail)[0];
  EXPECT_TRUE(d.fields.contains("GFX Firmware Version"));
  EXPECT_FALSE(d.get("GFX Firmware Version")) << "an empty value is no value";
  EXPECT_FALSE(d.get("Serial Number")) << "'unknown' is no value";
  EXPECT_EQ(d.get("Memory Physical Size"), "131072.00 MiB");
}

TEST(OneApiParsers, DiscoveryErrors) {
  EXPECT_EQ(parsers::parse_xpu_smi_discovery("").error().kind, ErrorKind::parse_error);
  EXPECT_EQ(parsers::parse_xpu_smi_discovery("XPUM service is not running\n").error().kind, ErrorKind::parse_error);
  EXPECT_EQ(parsers::parse_xpu_smi_discovery("| Device ID | Device Information |\n| zero | Device Name: x |\n").error().kind,
            ErrorKind::parse_error);
  const auto none = parsers::parse_xpu_smi_discovery("| Device ID | Device Information |\n+---+\n");
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
}

TEST(OneApiParsers, ProductTableAndPlaceholders) {
  EXPECT_EQ(parsers::intel_gpu_model(0xe20b)->name, "Intel Arc B580");
  EXPECT_EQ(parsers::intel_gpu_model(0x56a0)->name, "Intel Arc A770");
  EXPECT_EQ(parsers::intel_gpu_model(0x0bd5)->name, "Intel Data Center GPU Max 1550");
  EXPECT_EQ(parsers::intel_gpu_model(0x0bda)->name, "Intel Data Center GPU Max 1100");
  EXPECT_EQ(parsers::intel_gpu_model(0x0bda)->architecture, "Xe-HPC (Ponte Vecchio)");
  EXPECT_FALSE(parsers::intel_gpu_model(0xa780)) << "integrated GPUs are not in the discrete table";
  EXPECT_TRUE(parsers::is_placeholder_gpu_name("Intel(R) Graphics [0x020a]"));
  EXPECT_FALSE(parsers::is_placeholder_gpu_name("Intel(R) Arc(TM) B580 Graphics"));
}

class OneApiDetection : public ::testing::Test {
 protected:
  FixtureBuilder f_;
  AcceleratorRegistry detect() {
    auto sys = FixtureSystem::open(f_.write());
    EXPECT_TRUE(sys) << sys.error().message;
    return DetectBuilder::none().with(Backend::intel_oneapi).system_probes(false).detect(**sys);
  }
  // A DRM card whose `device` link points at a PCI function under `parent`.
  void card(const std::string& name, const PciSpec& spec, const std::string& parent = "pci0000:00") {
    add_pci(f_, spec, parent);
    f_.link("/sys/class/drm/" + name + "/device", "../../../devices/" + parent + "/" + spec.address);
  }
  // An Arc card: root port, the card's switch (upstream and downstream ports), the GPU.
  void arc_card(const std::string& name, unsigned device, const std::string& gpu, const std::string& usp,
                const std::string& dsp) {
    const std::string root = "pci0000:00";
    add_pci(f_, PciSpec("0000:00:01.0", 0x8086, 0xa70d).klass(0x060400).link("16.0 GT/s PCIe", 8), root);
    add_pci(f_, PciSpec(usp, 0x8086, 0xe2ff).klass(0x060400).link("16.0 GT/s PCIe", 8), root + "/0000:00:01.0");
    add_pci(f_, PciSpec(dsp, 0x8086, 0xe2f0).klass(0x060400).link("2.5 GT/s PCIe", 1), root + "/0000:00:01.0/" + usp);
    card(name, PciSpec(gpu, 0x8086, device).bound("xe").klass(0x030000).link("2.5 GT/s PCIe", 1).cpus("0-15"),
         root + "/0000:00:01.0/" + usp + "/" + dsp);
  }
  void igpu() {
    card("card0", PciSpec("0000:00:02.0", 0x8086, 0xa780).bound("i915").klass(0x030000).cpus("0-15"));
    f_.link("/sys/class/drm/card0-HDMI-A-1", "../../devices/pci0000:00/0000:00:02.0/drm/card0/card0-HDMI-A-1");
    f_.link("/sys/class/drm/renderD128", "../../devices/pci0000:00/0000:00:02.0/drm/renderD128");
  }
};

TEST_F(OneApiDetection, XpuSmiJoinedWithSysfsAndTheIntegratedGpu) {
  f_.command({"xpu-smi", "discovery"},
             "+-----------+------------------------------+\n| Device ID | Device Information           |\n"
             "+-----------+------------------------------+\n| 0         | Device Name: Intel(R) Arc(TM) B580 Graphics |\n"
             "|           | PCI BDF Address: 0000:03:00.0 |\n+-----------+------------------------------+\n");
  f_.command({"xpu-smi", "discovery", "-d", "0"},
             "| Device ID | Device Information |\n| 0 | Device Name: Intel(R) Arc(TM) B580 Graphics |\n"
             "|   | PCI Device ID: 0xe20b |\n|   | Driver Version: 9FF4708BCC22C0EE6FD801A |\n"
             "|   | PCI BDF Address: 0000:03:00.0 |\n|   | PCIe Generation: 4 |\n|   | PCIe Max Link Width: 8 |\n"
             "|   | Memory Physical Size: 12216.00 MiB |\n|   | Number of EUs: 160 |\n|   | Number of Tiles: 1 |\n");
  igpu();
  arc_card("card1", 0xe20b, "0000:03:00.0", "0000:01:00.0", "0000:02:01.0");
  const auto r = detect();
  EXPECT_TRUE(r.warnings().empty());
  ASSERT_EQ(r.devices().size(), 2u);
  const DeviceProfile& arc = r.devices()[0];
  EXPECT_EQ(arc.id, "intel_oneapi:0");
  EXPECT_EQ(arc.runtime_index, 0u);
  EXPECT_EQ(arc.name, "Intel(R) Arc(TM) B580 Graphics");
  EXPECT_EQ(arc.architecture, "Xe2-HPG (Battlemage)");
  EXPECT_EQ(arc.memory_bytes, 12216 * MiB);
  EXPECT_EQ(arc.driver_version, "9FF4708BCC22C0EE6FD801A");
  EXPECT_EQ(arc.compute_units, 160u);
  EXPECT_FALSE(arc.integrated);
  EXPECT_EQ(arc.memory_kind, MemoryKind::dedicated);
  ASSERT_TRUE(arc.pcie);
  EXPECT_EQ(arc.pcie->current_speed_gts, 16.0) << "the switch's upstream port, not the 2.5 GT/s x1 internal link";
  EXPECT_EQ(arc.pcie->current_width, 8u);
  EXPECT_NE(arc.properties.at("pcie_link").find("0000:01:00.0"), std::string::npos);
  EXPECT_EQ(arc.properties.at("driver"), "xe");
  const DeviceProfile& ig = r.devices()[1];
  EXPECT_EQ(ig.id, "intel_oneapi:1");
  EXPECT_EQ(ig.name, "Intel integrated GPU [8086:a780]");
  EXPECT_TRUE(ig.integrated);
  EXPECT_EQ(ig.memory_kind, MemoryKind::unified);
  EXPECT_FALSE(ig.memory_bytes);
  EXPECT_EQ(ig.pci_bus_id, "0000:00:02.0");
}

TEST_F(OneApiDetection, PlaceholderNamesAndPerDeviceDetails) {
  f_.command({"xpu-smi", "discovery"}, list_box);
  f_.command({"xpu-smi", "discovery", "-d", "0"}, detail_box(0, "0000:29:00.0", "Intel(R) Data Center GPU Max 1550"));
  f_.command({"xpu-smi", "discovery", "-d", "1"}, "", 1, "Error: device 1 is busy\n");
  const auto r = detect();
  ASSERT_EQ(r.devices().size(), 2u);
  const DeviceProfile& d0 = r.devices()[0];
  EXPECT_EQ(d0.memory_bytes, 128 * GiB);
  EXPECT_FALSE(d0.firmware_version);
  EXPECT_EQ(d0.uuid, "00000000-0000-0029-0000-002f0bd58086");
  EXPECT_EQ(d0.properties.at("tiles"), "2");
  ASSERT_TRUE(d0.pcie);
  EXPECT_EQ(d0.pcie->max_generation(), 5u);
  EXPECT_EQ(d0.pcie->max_width, 16u);
  EXPECT_FALSE(d0.pcie->current_speed_gts);
  // Device 1: only its list entry, and a placeholder name left as printed (no PCI id known).
  EXPECT_EQ(r.devices()[1].name, "Intel(R) Graphics [0x0bd5]");
  EXPECT_FALSE(r.devices()[1].memory_bytes);
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::tool_failed);
  EXPECT_NE(r.warnings()[0].message.find("xpu-smi discovery -d 1"), std::string::npos);
}

TEST_F(OneApiDetection, GpuListedTwiceCountsOnce) {
  // Device 0's box twice, then a device 2 at device 0's PCI address.
  const std::string list(list_box);
  const std::string box_of_0 = list.substr(list.find("| 0 "), list.find("| 1 ") - list.find("| 0 "));
  std::string box_of_2 = box_of_0;
  box_of_2.replace(0, 3, "| 2");
  f_.command({"xpu-smi", "discovery"}, list + box_of_0 + box_of_2);
  f_.command({"xpu-smi", "discovery", "-d", "0"}, detail_box(0, "0000:29:00.0", "Intel(R) Data Center GPU Max 1550"));
  f_.command({"xpu-smi", "discovery", "-d", "1"}, detail_box(1, "0000:3a:00.0", "Intel(R) Data Center GPU Max 1550"));
  f_.command({"xpu-smi", "discovery", "-d", "2"}, detail_box(2, "0000:29:00.0", "Intel(R) Data Center GPU Max 1550"));
  const auto r = detect();
  ASSERT_EQ(r.devices().size(), 2u);
  EXPECT_EQ(r.devices()[0].runtime_index, 0u);
  EXPECT_EQ(r.devices()[1].runtime_index, 1u);
  EXPECT_EQ(r.devices()[1].pci_bus_id, "0000:3a:00.0");
  ASSERT_EQ(r.warnings().size(), 2u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::inconsistent);
  EXPECT_EQ(r.warnings()[0].message, "xpu-smi discovery lists device 0 twice; the first entry is kept");
  EXPECT_EQ(r.warnings()[1].kind, WarningKind::inconsistent);
  EXPECT_EQ(r.warnings()[1].message,
            "xpu-smi discovery gives device 2 the PCI address 0000:29:00.0 of an earlier device; the first is kept");
}

TEST_F(OneApiDetection, I915LocalMemoryWithoutXpuSmi) {
  card("card1", PciSpec("0000:4d:00.0", 0x8086, 0x0bda).bound("i915").klass(0x038000).numa(1).link("32.0 GT/s PCIe", 16));
  f_.file("/sys/class/drm/card1/lmem_total_bytes", "51539607552\n");
  f_.file("/sys/class/drm/card1/lmem_avail_bytes", "51000000000\n");
  const auto r = detect();
  EXPECT_TRUE(r.warnings().empty()) << "sysfs is a complete source here";
  ASSERT_EQ(r.devices().size(), 1u);
  const DeviceProfile& d = r.devices()[0];
  EXPECT_EQ(d.name, "Intel Data Center GPU Max 1100");
  EXPECT_EQ(d.memory_bytes, 48 * GiB);
  EXPECT_EQ(d.memory_free_bytes, 51000000000ull);
  EXPECT_EQ(d.numa_node, 1);
  EXPECT_EQ(d.pcie->current_generation(), 5u);
  EXPECT_EQ(d.properties.at("memory_source"), "/sys/class/drm/card1/lmem_total_bytes");
}

TEST_F(OneApiDetection, XeTileVramIsSummed) {
  card("card2", PciSpec("0000:4d:00.0", 0x8086, 0x0bd5).bound("xe").klass(0x038000).link("32.0 GT/s PCIe", 16));
  f_.file("/sys/devices/pci0000:00/0000:4d:00.0/tile0/physical_vram_size_bytes", "68719476736\n");
  f_.file("/sys/devices/pci0000:00/0000:4d:00.0/tile1/physical_vram_size_bytes", "68719476736\n");
  const auto r = detect();
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_EQ(r.devices()[0].memory_bytes, 128 * GiB);
}

TEST_F(OneApiDetection, SwitchInternalLinkIsNotReportedAsTheCardsLink) {
  // A snapshot where `device` is a plain folder: no path to the upstream port.
  f_.file("/sys/class/drm/card1/device/vendor", "0x8086\n");
  f_.file("/sys/class/drm/card1/device/device", "0xe20b\n");
  f_.file("/sys/class/drm/card1/device/class", "0x030000\n");
  f_.file("/sys/class/drm/card1/device/current_link_speed", "2.5 GT/s PCIe\n");
  f_.file("/sys/class/drm/card1/device/max_link_speed", "2.5 GT/s PCIe\n");
  f_.file("/sys/class/drm/card1/device/current_link_width", "1\n");
  f_.file("/sys/class/drm/card1/device/max_link_width", "1\n");
  f_.file("/sys/class/drm/card1/device/uevent", "DRIVER=xe\nPCI_ID=8086:E20B\nPCI_SLOT_NAME=0000:09:00.0\n");
  const auto r = detect();
  ASSERT_EQ(r.devices().size(), 1u);
  const DeviceProfile& d = r.devices()[0];
  EXPECT_EQ(d.name, "Intel Arc B580");
  EXPECT_EQ(d.pci_bus_id, "0000:09:00.0");
  EXPECT_FALSE(d.pcie);
  EXPECT_NE(d.properties.at("pcie_link").find("could not be read"), std::string::npos);
  EXPECT_FALSE(d.memory_bytes) << "xe without a VRAM attribute: unknown, not guessed";
}

TEST_F(OneApiDetection, FailingAndGarbageXpuSmiKeepSysfs) {
  f_.command({"xpu-smi", "discovery"}, "", 1, "Error: XPUM service is not running\n");
  igpu();
  const auto r = detect();
  ASSERT_EQ(r.devices().size(), 1u);
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::tool_failed);

  FixtureBuilder g;
  g.command({"xpu-smi", "discovery"}, "\x1b[31m\xff\xfe garbage\n");
  auto sys = FixtureSystem::open(g.write());
  ASSERT_TRUE(sys);
  const auto r2 = DetectBuilder::none().with(Backend::intel_oneapi).system_probes(false).detect(**sys);
  EXPECT_TRUE(r2.devices().empty());
  ASSERT_EQ(r2.warnings().size(), 1u);
  EXPECT_EQ(r2.warnings()[0].kind, WarningKind::parse_error);
}

TEST_F(OneApiDetection, OtherVendorsAndOtherDriversAreIgnored) {
  card("card0", PciSpec("0000:c1:00.0", 0x1002, 0x744c).bound("amdgpu").klass(0x030000));
  card("card1", PciSpec("0000:00:02.0", 0x8086, 0xa780).bound("vfio-pci").klass(0x030000));
  card("card2", PciSpec("0000:00:04.0", 0x8086, 0x1234).bound("i915").klass(0x118000));
  const auto r = detect();
  EXPECT_TRUE(r.devices().empty());
  EXPECT_TRUE(r.warnings().empty());
}

}  // namespace

namespace {

constexpr const char* bare_table =
    "+----------------------------------------------+----------------------------+------------------------+\n"
    "|            Intel XPU-SMI v2.0    Driver: 9FF4708BCC22C0EE6FD801A    Level Zero: 1.27.0             |\n"
    "+----------------------------------------------+----------------------------+------------------------+\n"
    "| GPU  Name                    Persistence-M   | Bus-Id            Disp.A   |   Volatile Uncorr. ECC |\n"
    "| Fan  Temp  Pwr:Usage/Cap                     | Memory-Usage               |   GPU-Util  Compute M. |\n"
    "+----------------------------------------------+----------------------------+------------------------+\n"
    "|   0  Intel(R) Arc(TM) B580   Off             | 0000:03:00.0      Off      |               Disabled |\n"
    "| N/A    25C  66W / 380W                       | 239MiB / 12216MiB          |      0%        Default |\n"
    "+----------------------------------------------+----------------------------+------------------------+\n";

TEST(XpuSmiTable, DevicesFromTheBareTable) {
  const auto devices = parsers::parse_xpu_smi_table(bare_table);
  ASSERT_TRUE(devices) << devices.error().message;
  ASSERT_EQ(devices->size(), 1u);
  EXPECT_EQ((*devices)[0].device_id, 0u);
  EXPECT_EQ((*devices)[0].get("Device Name"), "Intel(R) Arc(TM) B580");
  EXPECT_EQ((*devices)[0].get("PCI BDF Address"), "0000:03:00.0");
  EXPECT_EQ((*devices)[0].get("Memory Physical Size"), "12216 MiB");
  EXPECT_FALSE(parsers::parse_xpu_smi_table("Segmentation fault\n"));
  EXPECT_FALSE(parsers::parse_xpu_smi_table("| GPU  Name | Bus-Id |\n+---+\n"));
}

// An older xpu-smi without `discovery` (or a paste of the table alone): the
// bare table lists the devices, and `discovery -d N` completes each.
TEST_F(OneApiDetection, BareTableWhenDiscoveryIsRefused) {
  f_.command({"xpu-smi", "discovery"}, "", 1, "Error: unknown command 'discovery'\n");
  f_.command({"xpu-smi"}, bare_table);
  f_.command({"xpu-smi", "discovery", "-d", "0"}, detail_box(0, "0000:03:00.0", "Intel(R) Arc(TM) B580 Graphics"));
  const auto r = detect();
  ASSERT_EQ(r.devices().size(), 1u);
  const auto& d = r.devices()[0];
  EXPECT_EQ(d.name, "Intel(R) Arc(TM) B580 Graphics");  // the details' full name, not the table's cut one
  EXPECT_EQ(d.pci_bus_id, "0000:03:00.0");
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::degraded);
  EXPECT_NE(r.warnings()[0].message.find("xpu-smi discovery exited with code 1"), std::string::npos);
  EXPECT_NE(r.warnings()[0].message.find("read xpu-smi instead"), std::string::npos) << r.warnings()[0].message;
}

}  // namespace
