// Shared PCI and device-tree readers of the detect module.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backend_fixture.hpp"

import hwaccel;

namespace {

using namespace hwaccel;
using hwaccel::testing::add_pci;
using hwaccel::testing::FixtureBuilder;
using hwaccel::testing::PciSpec;
using hwaccel::testing::proc_pci_line;

TEST(PciSupport, ProcBusPciDevicesLines) {
  const auto e = parse_proc_pci_devices(proc_pci_line(0x9a, 0x1f, 7, 0x1da3, 0x1020, "habanalabs") +
                                        proc_pci_line(0, 0, 0, 0x8086, 0x1234, "") + "junk\n0000\t1\n\n");
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].bus, 0x9a);
  EXPECT_EQ(e[0].device, 0x1f);
  EXPECT_EQ(e[0].function, 7);
  EXPECT_EQ(e[0].vendor_id, 0x1da3);
  EXPECT_EQ(e[0].device_id, 0x1020);
  EXPECT_EQ(e[0].driver, "habanalabs");
  EXPECT_FALSE(e[1].driver);
  EXPECT_TRUE(parse_proc_pci_devices(std::string(3000, '\t')).empty());
}

TEST(PciSupport, VendorFunctionsTakeTheirDomainFromSysfs) {
  FixtureBuilder f;
  f.file("/proc/bus/pci/devices", proc_pci_line(0x3b, 0, 0, 0x1de0, 0, "groq") + proc_pci_line(0x3b, 0, 0, 0x8086, 1, ""));
  // Two PCI domains reuse bus 0x3b: the ids tell them apart.
  add_pci(f, PciSpec("0000:3b:00.0", 0x8086, 0x0001), "pci0000:00");
  add_pci(f, PciSpec("0001:3b:00.0", 0x1de0, 0x0000).bound("groq").numa(1), "pci0001:00");
  auto sys = FixtureSystem::open(f.write());
  ASSERT_TRUE(sys);
  const auto groq = pci_functions_of_vendor(**sys, 0x1de0);
  ASSERT_EQ(groq.size(), 1u);
  EXPECT_EQ(groq[0].address.to_string(), "0001:3b:00.0");
  EXPECT_EQ(groq[0].numa_node, 1);
  EXPECT_TRUE(pci_functions_of_vendor(**sys, 0x10de).empty());
}

TEST(PciSupport, UpstreamBridgesNearestFirst) {
  FixtureBuilder f;
  add_pci(f, PciSpec("0000:03:00.0", 0x8086, 0xe20b), "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0");
  auto sys = FixtureSystem::open(f.write());
  ASSERT_TRUE(sys);
  const auto bridges = pci_upstream_bridges(**sys, *PciAddress::parse("0000:03:00.0"));
  ASSERT_EQ(bridges.size(), 3u);
  EXPECT_EQ(bridges[0].to_string(), "0000:02:01.0");
  EXPECT_EQ(bridges[2].to_string(), "0000:00:01.0");
  EXPECT_TRUE(pci_upstream_bridges(**sys, *PciAddress::parse("0000:04:00.0")).empty());
}

TEST(PciSupport, DeviceTreeCompatibleEntries) {
  const std::string c("samsung,r0s\0samsung,s5e9925\0", 29);
  EXPECT_EQ(compatible_entry(c, "samsung,s5e"), "s5e9925");
  EXPECT_EQ(compatible_entry(c, "samsung,"), "r0s");
  EXPECT_FALSE(compatible_entry(c, "mediatek,"));
  EXPECT_FALSE(compatible_entry("", "samsung,"));
}

}  // namespace
