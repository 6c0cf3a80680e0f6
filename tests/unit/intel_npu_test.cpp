// Intel NPU backend: generation table and detection through accel-class trees.
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

AcceleratorRegistry detect_intel_npu(FixtureBuilder& f) { return hwaccel::testing::detect_backend(f, Backend::intel_npu); }

PciFunctionSpec npu(std::string bdf, std::string device, unsigned minor) {
  PciFunctionSpec s;
  s.bdf = std::move(bdf);
  s.vendor = "0x8086";
  s.device = std::move(device);
  s.revision = "0x04";
  s.driver = "intel_vpu";
  s.accel_minor = minor;
  return s;
}

TEST(IntelNpuParsers, GenerationsFromPciIds) {
  const auto mtl = parsers::intel_npu_generation(0x7d1d);
  ASSERT_TRUE(mtl);
  EXPECT_EQ(mtl->platform, "Meteor Lake");
  EXPECT_EQ(mtl->ip, "NPU 37xx");
  EXPECT_EQ(parsers::intel_npu_generation(0xad1d)->platform, "Arrow Lake");
  EXPECT_EQ(parsers::intel_npu_generation(0x643e)->platform, "Lunar Lake");
  EXPECT_EQ(parsers::intel_npu_generation(0x643e)->ip, "NPU 40xx");
  EXPECT_EQ(parsers::intel_npu_generation(0xb03e)->ip, "NPU 50xx");
  EXPECT_FALSE(parsers::intel_npu_generation(0x1234));
}

TEST(IntelNpuDetection, LunarLakeWithDriverAttributesAndDebugfs) {
  FixtureBuilder f;
  add_pci_function(f, npu("0000:00:0b.0", "0x643e", 0));
  const std::string dir = hwaccel::testing::pci_device_dir("0000:00:0b.0");
  f.file(dir + "/sched_mode", "HW\n")
      .file(dir + "/npu_max_frequency_mhz", "1950\n")
      .file(dir + "/npu_memory_utilization", "73400320\n")
      .file("/sys/kernel/debug/accel/0/fw_version", "20250115*LNL*NPU40xx*1.0\n")
      .file("/sys/kernel/debug/accel/0/fw_name", "intel/vpu/vpu_40xx_v1.bin\n");
  const auto r = detect_intel_npu(f);
  ASSERT_EQ(r.devices().size(), 1u);
  const DeviceProfile& d = r.devices()[0];
  EXPECT_EQ(d.id, "intel_npu:0");
  EXPECT_EQ(d.family, Family::npu);
  EXPECT_EQ(d.name, "Intel NPU (Lunar Lake)");
  EXPECT_EQ(d.architecture, "NPU 40xx");
  EXPECT_EQ(d.vendor, "Intel");
  EXPECT_EQ(d.pci_bus_id, "0000:00:0b.0");
  EXPECT_EQ(d.memory_kind, MemoryKind::unified);
  EXPECT_FALSE(d.memory_bytes);
  EXPECT_EQ(d.memory_used_bytes, 73400320u);
  EXPECT_EQ(d.firmware_version, "20250115*LNL*NPU40xx*1.0");
  EXPECT_TRUE(d.integrated);
  EXPECT_TRUE(d.available);
  EXPECT_EQ(d.properties.at("pci_id"), "8086:643e");
  EXPECT_EQ(d.properties.at("driver"), "intel_vpu");
  EXPECT_EQ(d.properties.at("device_node"), "/dev/accel/accel0");
  EXPECT_EQ(d.properties.at("scheduling_mode"), "HW");
  EXPECT_EQ(d.properties.at("max_frequency_mhz"), "1950");
  EXPECT_EQ(d.properties.at("firmware_file"), "intel/vpu/vpu_40xx_v1.bin");
  EXPECT_TRUE(r.warnings().empty());
}

TEST(IntelNpuDetection, OtherAccelDriversAndCameraIpusAreNotNpus) {
  FixtureBuilder f;
  PciFunctionSpec xdna = npu("0000:c2:00.1", "0x1502", 0);
  xdna.vendor = "0x1022";
  xdna.driver = "amdxdna";
  add_pci_function(f, xdna);
  // Intel's camera image processing unit: /dev/ipu* nodes, driver intel-ipu6.
  PciFunctionSpec ipu = npu("0000:00:05.0", "0x7d19", 1);
  ipu.driver = "intel-ipu6";
  ipu.accel_minor.reset();
  add_pci_function(f, ipu);
  f.file("/dev/ipu-psys0", "").file("/dev/ipu6-isys", "");
  const auto r = detect_intel_npu(f);
  EXPECT_TRUE(r.devices().empty());
  EXPECT_TRUE(r.warnings().empty());
}

TEST(IntelNpuDetection, BoundWithoutAccelNodeIsUnavailable) {
  FixtureBuilder f;
  PciFunctionSpec s = npu("0000:00:0b.0", "0x7d1d", 0);
  s.accel_minor.reset();  // probe failed: bound, no node
  add_pci_function(f, s);
  const auto r = detect_intel_npu(f);
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_FALSE(r.devices()[0].available);
  EXPECT_EQ(r.devices()[0].name, "Intel NPU (Meteor Lake)");
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::unsupported);
  EXPECT_NE(r.warnings()[0].message.find("no /sys/class/accel node"), std::string::npos);
}

TEST(IntelNpuDetection, MissingDevNodeAndUnknownIdAndGarbageAttributes) {
  FixtureBuilder f;
  PciFunctionSpec s = npu("0000:00:0b.0", "0xfe00", 3);
  s.dev_node = false;  // sysfs visible, /dev/accel/accel3 not passed into the container
  add_pci_function(f, s);
  const std::string dir = hwaccel::testing::pci_device_dir("0000:00:0b.0");
  f.file(dir + "/npu_max_frequency_mhz", "fast\n").file(dir + "/npu_memory_utilization", "\x01\x02\n");
  const auto r = detect_intel_npu(f);
  ASSERT_EQ(r.devices().size(), 1u);
  const DeviceProfile& d = r.devices()[0];
  EXPECT_EQ(d.name, "Intel NPU (unknown generation)");
  EXPECT_FALSE(d.architecture);
  EXPECT_FALSE(d.available);
  EXPECT_FALSE(d.properties.contains("device_node"));
  EXPECT_FALSE(d.properties.contains("max_frequency_mhz"));
  EXPECT_FALSE(d.memory_used_bytes);
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::unsupported);
  EXPECT_NE(r.warnings()[0].message.find("/dev/accel/accel3 does not exist"), std::string::npos);
}

TEST(IntelNpuDetection, NothingThereMeansNothingReported) {
  FixtureBuilder f;
  f.file("/proc/meminfo", "MemTotal: 1024 kB\n");
  const auto r = detect_intel_npu(f);
  EXPECT_TRUE(r.devices().empty());
  EXPECT_TRUE(r.warnings().empty());
}

}  // namespace
