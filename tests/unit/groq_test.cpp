// Groq backend: GroqChip PCI functions, board names, published SRAM.
#include <gtest/gtest.h>

#include <string>

#include "backend_fixture.hpp"

import hwaccel;
import hwaccel.detectors;

#include "fixture_detection.hpp"

namespace {

using namespace hwaccel;
using hwaccel::testing::add_pci;
using hwaccel::testing::FixtureBuilder;
using hwaccel::testing::PciSpec;
using hwaccel::testing::proc_pci_line;

AcceleratorRegistry detect(FixtureBuilder& f) { return hwaccel::testing::detect_backend(f, Backend::groq); }

TEST(GroqParsers, BoardsFromSubsystemIds) {
  EXPECT_EQ(parsers::groq_board(0x1de0, 0xc005), "GroqCard GC1-010B");
  EXPECT_EQ(parsers::groq_board(0x1de0, 0x0000), "GroqCard GC1-010X-ES");
  EXPECT_FALSE(parsers::groq_board(0x1de0, 0x1234));
  EXPECT_FALSE(parsers::groq_board(0x8086, 0xc005));
}

TEST(GroqDetection, EveryGroqChipFunctionIsADevice) {
  FixtureBuilder f;
  std::string proc;
  for (unsigned bus : {0x8au, 0x0au})
    proc += proc_pci_line(bus, 0, 0, 0x1de0, 0x0000, "groq");
  proc += proc_pci_line(0, 0x1f, 6, 0x8086, 0x0dc8, "e1000e");
  f.file("/proc/bus/pci/devices", proc);
  add_pci(f, PciSpec("0000:0a:00.0", 0x1de0, 0x0000).bound("groq").subsystem(0x1de0, 0xc005).numa(0).link("16.0 GT/s PCIe", 16));
  const auto r = detect(f);
  EXPECT_TRUE(r.warnings().empty());
  ASSERT_EQ(r.devices().size(), 2u);
  const DeviceProfile& d = r.devices()[0];
  EXPECT_EQ(d.id, "groq:0");
  EXPECT_EQ(d.pci_bus_id, "0000:0a:00.0") << "sorted by address";
  EXPECT_EQ(d.name, "Groq GroqChip (GroqCard GC1-010B)");
  EXPECT_EQ(d.numa_node, 0);
  EXPECT_EQ(d.pcie->current_generation(), 4u);
  EXPECT_FALSE(d.memory_bytes);
  EXPECT_EQ(d.properties.at("published_memory_bytes"), "230000000");
  EXPECT_EQ(r.devices()[1].name, "Groq GroqChip");
  EXPECT_EQ(r.devices()[1].pci_bus_id, "0000:8a:00.0");
}

TEST(GroqDetection, UnboundChipIsNotAvailable) {
  FixtureBuilder f;
  f.file("/proc/bus/pci/devices", proc_pci_line(0x3b, 0, 0, 0x1de0, 0x0000, ""));
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_FALSE(r.devices()[0].available);
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::unsupported);
}

TEST(GroqDetection, NoGroqFunctionMeansNothing) {
  FixtureBuilder f;
  f.file("/proc/bus/pci/devices", proc_pci_line(0, 0x1f, 6, 0x8086, 0x0dc8, "e1000e") + "garbage line\n\n");
  const auto r = detect(f);
  EXPECT_TRUE(r.devices().empty());
  EXPECT_TRUE(r.warnings().empty());
}

}  // namespace
