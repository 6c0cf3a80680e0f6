// Qualcomm backend: qaic-util parsing and detection from the qaic accel driver.
#include <gtest/gtest.h>

#include <string>

#include "../test_support.hpp"
#include "pci_tree.hpp"

import hwaccel;
import hwaccel.detectors;

#include "fixture_detection.hpp"

namespace {

using namespace hwaccel;
using hwaccel::testing::add_pci_function;
using hwaccel::testing::FixtureBuilder;
using hwaccel::testing::PciFunctionSpec;

AcceleratorRegistry detect(FixtureBuilder& f) { return hwaccel::testing::detect_backend(f, Backend::qualcomm); }

PciFunctionSpec soc(std::string bdf, unsigned minor) {
  PciFunctionSpec s;
  s.bdf = std::move(bdf);
  s.vendor = "0x17cb";
  s.device = "0xa100";
  s.class_code = "0xff0000";
  s.driver = "qaic";
  s.accel_minor = minor;
  return s;
}

// The shape of `qaic-util -q` (Platform SDK 1.x): a runtime log line, a
// header, then per-SoC blocks of Key:Value lines without a space.
std::string qaic_block(unsigned qid, std::string_view bdf, std::string_view status, std::string_view dram_total,
                       std::string_view dram_free, unsigned nsp_free) {
  std::string b = "QID " + std::to_string(qid) + "\n\tStatus:" + std::string(status) + "\n";
  b += "\tPCI Address:" + std::string(bdf) + "\n\tPCI Info:Unassigned class [ff00] Qualcomm Device a100\n";
  if (status != "Ready") return b;
  b += "\tHW Version:0.2.0.0\n\tHW Serial:0x2b36e75d\n\tFW Version:1.12.2\n\tFW QC_IMAGE_VERSION:QSM.AIC.1.12.2\n";
  b += "\tFW OEM_IMAGE_VERSION:\n\tCompiler Version:0\n\tDram Total:" + std::string(dram_total) + "\n";
  b += "\tDram Free:" + std::string(dram_free) + "\n\tDram Fragmentation:0.00%\n\tVc Total:16\n\tVc Free:16\n";
  b += "\tNsp Total:16\n\tNsp Free:" + std::to_string(nsp_free) + "\n\tBoard serial:\n";
  return b;
}

const std::string two_socs = "LRT QC_IMAGE_VERSION: LRT.AIC.6.7.1.6.52\nLRT IMAGE_VARIANT: LRT.AIC.REL\nNumber of devices: 2\n" +
                             qaic_block(0, "0000:81:00.0", "Ready", "33554432 KB", "33554432 KB", 16) +
                             qaic_block(1, "0000:82:00.0", "Ready", "33554432 KB", "29360128 KB", 8);

TEST(QaicParsers, BlocksKeysAndUnits) {
  const auto report = parsers::parse_qaic_util(two_socs);
  EXPECT_EQ(report.device_count, 2u);
  ASSERT_EQ(report.devices.size(), 2u);
  const auto& q = report.devices[1];
  EXPECT_EQ(q.qid, 1u);
  EXPECT_EQ(q.status, "Ready");
  ASSERT_TRUE(q.pci_address);
  EXPECT_EQ(q.pci_address->to_string(), "0000:82:00.0");
  EXPECT_EQ(q.dram_total_bytes, 32ull << 30);
  EXPECT_EQ(q.dram_free_bytes, 28ull << 30);
  EXPECT_EQ(q.nsp_total, 16u);
  EXPECT_EQ(q.nsp_free, 8u);
  EXPECT_EQ(q.fw_version, "1.12.2");
  // AEDK boards print MB.
  EXPECT_EQ(parsers::parse_qaic_util("QID 0\n\tDram Total:8116 MB\n").devices.at(0).dram_total_bytes, 8116ull << 20);
}

TEST(QaicParsers, LogLinesBeforeBlocksAndErrorDevices) {
  const std::string text =
      "[2024-03-01 10:00:00.123][error] Failed to open device 1: Device in error state\n"
      "[2024-03-01 10:00:00.124][info] Runtime version 1.12\n" +
      qaic_block(0, "0000:81:00.0", "Ready", "33554432 KB", "33554432 KB", 16) +
      qaic_block(1, "0000:82:00.0", "Error", "", "", 0);
  const auto report = parsers::parse_qaic_util(text);
  ASSERT_EQ(report.errors.size(), 1u);
  EXPECT_NE(report.errors[0].find("Device in error state"), std::string::npos);
  ASSERT_EQ(report.devices.size(), 2u);
  EXPECT_EQ(report.devices[1].status, "Error");
  EXPECT_FALSE(report.devices[1].dram_total_bytes);
  EXPECT_TRUE(parsers::parse_qaic_util("\x7f" "ELF garbage\n\x01:\x02").devices.empty());
  EXPECT_TRUE(parsers::parse_qaic_util("QID zero\n\tStatus:Ready\n").devices.empty());
}

TEST(QualcommDetection, OneDevicePerSocJoinedByPciAddress) {
  FixtureBuilder f;
  add_pci_function(f, soc("0000:82:00.0", 1));
  add_pci_function(f, soc("0000:81:00.0", 0));
  f.command({"qaic-util", "-q"}, two_socs);
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 2u);
  const DeviceProfile& a = r.devices()[0];
  EXPECT_EQ(a.id, "qualcomm:0");
  EXPECT_EQ(a.name, "Qualcomm Cloud AI 100");
  EXPECT_EQ(a.pci_bus_id, "0000:81:00.0");
  EXPECT_EQ(a.memory_bytes, 32ull << 30);
  EXPECT_EQ(a.memory_free_bytes, 32ull << 30);
  EXPECT_EQ(a.compute_units, 16u);
  EXPECT_EQ(a.runtime_index, 0u);
  EXPECT_EQ(a.firmware_version, "1.12.2");
  EXPECT_EQ(a.properties.at("status"), "Ready");
  EXPECT_EQ(a.properties.at("device_node"), "/dev/accel/accel0");
  const DeviceProfile& b = r.devices()[1];
  EXPECT_EQ(b.pci_bus_id, "0000:82:00.0");
  EXPECT_EQ(b.memory_used_bytes, 4ull << 30);
  EXPECT_EQ(b.properties.at("nsp_free"), "8");
  EXPECT_TRUE(r.warnings().empty());
}

TEST(QualcommDetection, ToolMissingKeepsSysfsDevices) {
  FixtureBuilder f;
  add_pci_function(f, soc("0000:81:00.0", 0));
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_FALSE(r.devices()[0].memory_bytes);
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::tool_missing);
}

TEST(QualcommDetection, ToolFailsOrPrintsGarbage) {
  {
    FixtureBuilder f;
    add_pci_function(f, soc("0000:81:00.0", 0));
    f.command({"qaic-util", "-q"}, "", 1, "qaic-util: cannot open /dev/accel/accel0: Permission denied\n");
    const auto r = detect(f);
    ASSERT_EQ(r.devices().size(), 1u);
    ASSERT_EQ(r.warnings().size(), 1u);
    EXPECT_EQ(r.warnings()[0].kind, WarningKind::tool_failed);
    EXPECT_NE(r.warnings()[0].message.find("Permission denied"), std::string::npos);
  }
  {
    FixtureBuilder f;
    add_pci_function(f, soc("0000:81:00.0", 0));
    f.command({"qaic-util", "-q"}, std::string("\x89PNG\r\n\x1a\n\0\0", 10));
    const auto r = detect(f);
    ASSERT_EQ(r.devices().size(), 1u);
    ASSERT_EQ(r.warnings().size(), 1u);
    EXPECT_EQ(r.warnings()[0].kind, WarningKind::parse_error);
  }
  {
    FixtureBuilder f;
    add_pci_function(f, soc("0000:81:00.0", 0));
    f.command({"qaic-util", "-q"}, "", 0, "", /*hang=*/true);
    const auto r = detect(f);
    ASSERT_EQ(r.devices().size(), 1u);
    ASSERT_EQ(r.warnings().size(), 1u);
    EXPECT_EQ(r.warnings()[0].kind, WarningKind::timeout);
  }
}

TEST(QualcommDetection, DeviceInErrorIsUnavailable) {
  FixtureBuilder f;
  add_pci_function(f, soc("0000:81:00.0", 0));
  add_pci_function(f, soc("0000:82:00.0", 1));
  f.command({"qaic-util", "-q"},
            "[2024-03-01 10:00:00.123][error] Failed to query device 1\n" +
                qaic_block(0, "0000:81:00.0", "Ready", "33554432 KB", "33554432 KB", 16) +
                qaic_block(1, "0000:82:00.0", "Error", "", "", 0));
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 2u);
  EXPECT_TRUE(r.devices()[0].available);
  EXPECT_FALSE(r.devices()[1].available);
  EXPECT_FALSE(r.devices()[1].memory_bytes);
  ASSERT_EQ(r.warnings().size(), 2u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::tool_failed);
  EXPECT_EQ(r.warnings()[1].kind, WarningKind::unsupported);
  EXPECT_NE(r.warnings()[1].message.find("QID 1 (0000:82:00.0) reports Status:Error"), std::string::npos);
}

TEST(QualcommDetection, BlocksWithoutAddressesAreNotGuessedOntoCards) {
  FixtureBuilder f;
  add_pci_function(f, soc("0000:81:00.0", 0));
  add_pci_function(f, soc("0000:82:00.0", 1));
  f.command({"qaic-util", "-q"}, "QID 0\n\tStatus:Ready\n\tDram Total:33554432 KB\nQID 1\n\tStatus:Ready\n\tDram Total:33554432 KB\n");
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 2u);
  EXPECT_FALSE(r.devices()[0].memory_bytes);
  EXPECT_FALSE(r.devices()[1].memory_bytes);
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::inconsistent);
}

TEST(QualcommDetection, RepeatedBlocksAreOneDevice) {
  FixtureBuilder f;
  // No sysfs view: the blocks are the devices. QID 0 twice, then QID 2 at QID 1's address.
  f.command({"qaic-util", "-q"}, two_socs + qaic_block(0, "0000:83:00.0", "Ready", "1 KB", "1 KB", 1) +
                                     qaic_block(2, "0000:82:00.0", "Ready", "1 KB", "1 KB", 1));
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 2u);
  EXPECT_EQ(r.devices()[0].pci_bus_id, "0000:81:00.0");
  EXPECT_EQ(r.devices()[1].pci_bus_id, "0000:82:00.0");
  EXPECT_EQ(r.devices()[1].memory_bytes, 32ull << 30) << "the later block does not overwrite the first";
  ASSERT_EQ(r.warnings().size(), 2u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::inconsistent);
  EXPECT_EQ(r.warnings()[0].message, "qaic-util -q lists QID 0 twice; the first block is kept");
  EXPECT_EQ(r.warnings()[1].message,
            "qaic-util -q gives QID 2 the PCI address 0000:82:00.0 of an earlier block; the first is kept");
}

TEST(QualcommDetection, NoCardsAndNoToolIsSilent) {
  FixtureBuilder f;
  f.file("/dev/ipu6-psys0", "");
  const auto r = detect(f);
  EXPECT_TRUE(r.devices().empty());
  EXPECT_TRUE(r.warnings().empty());
}

// Found by fuzzing (tests/fuzz/regressions/sysfs_readers/two-class-nodes-one-function):
// two /sys/class/accel entries whose parent is the same PCI function made two
// devices of one card.
TEST(QualcommDetection, TwoClassNodesOfOneFunctionAreOneDevice) {
  FixtureBuilder f;
  add_pci_function(f, soc("0000:41:00.0", 0));
  f.link("/sys/class/accel/accel7", "../../devices/pci0000:00/0000:41:00.0/accel/accel0");
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_EQ(r.devices()[0].pci_bus_id, "0000:41:00.0");
  EXPECT_EQ(r.devices()[0].properties.at("device_node"), "/dev/accel/accel0");
  const auto functions = accel_functions_of_driver(*FixtureSystem::open(f.write()).value(), "qaic");
  ASSERT_EQ(functions.size(), 1u);
  ASSERT_TRUE(functions[0].node);
  EXPECT_EQ(functions[0].node->name, "accel0");
}

}  // namespace
