// AMD XDNA backend: generation table and detection through accel-class trees.
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
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

AcceleratorRegistry detect(FixtureBuilder& f) { return hwaccel::testing::detect_backend(f, Backend::amd_xdna); }

PciFunctionSpec xdna(std::string bdf, std::string device, std::optional<std::string> revision, unsigned minor) {
  PciFunctionSpec s;
  s.bdf = std::move(bdf);
  s.vendor = "0x1022";
  s.device = std::move(device);
  s.class_code = "0x118000";
  s.revision = std::move(revision);
  s.driver = "amdxdna";
  s.accel_minor = minor;
  return s;
}

TEST(XdnaParsers, GenerationNeedsDeviceAndRevision) {
  const auto phoenix = parsers::xdna_generation(0x1502, 0x00);
  ASSERT_TRUE(phoenix);
  EXPECT_EQ(phoenix->npu, "NPU1");
  EXPECT_EQ(phoenix->architecture, "XDNA");
  EXPECT_EQ(phoenix->platforms, "Phoenix or Hawk Point");
  EXPECT_EQ(parsers::xdna_generation(0x1502, std::nullopt)->npu, "NPU1");
  EXPECT_EQ(parsers::xdna_generation(0x17f0, 0x10)->npu, "NPU4");
  EXPECT_EQ(parsers::xdna_generation(0x17f0, 0x11)->npu, "NPU5");
  EXPECT_EQ(parsers::xdna_generation(0x17f0, 0x20)->npu, "NPU6");
  // 0x17f0 without a revision: the architecture is known, the NPU number is not.
  const auto strix = parsers::xdna_generation(0x17f0, std::nullopt);
  ASSERT_TRUE(strix);
  EXPECT_EQ(strix->architecture, "XDNA 2");
  EXPECT_EQ(strix->npu, "");
  EXPECT_FALSE(parsers::xdna_generation(0x17f0, 0x99));
  EXPECT_FALSE(parsers::xdna_generation(0x1234, 0x00));
}

TEST(XdnaDetection, StrixPointNpuWithFirmwareAndBoardName) {
  FixtureBuilder f;
  add_pci_function(f, xdna("0000:c5:00.1", "0x17f0", "0x10", 0));
  const std::string dir = hwaccel::testing::pci_device_dir("0000:c5:00.1");
  f.file(dir + "/fw_version", "1.5.2.380\n").file(dir + "/vbnv", "RyzenAI-npu4\n").file(dir + "/device_type", "1\n");
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 1u);
  const DeviceProfile& d = r.devices()[0];
  EXPECT_EQ(d.id, "amd_xdna:0");
  EXPECT_EQ(d.family, Family::npu);
  EXPECT_EQ(d.name, "AMD XDNA 2 NPU");
  EXPECT_EQ(d.architecture, "XDNA 2");
  EXPECT_EQ(d.compute_capability, "NPU4");
  EXPECT_EQ(d.firmware_version, "1.5.2.380");
  EXPECT_EQ(d.pci_bus_id, "0000:c5:00.1");
  EXPECT_FALSE(d.memory_bytes);
  EXPECT_EQ(d.memory_kind, MemoryKind::unified);
  EXPECT_EQ(d.properties.at("vbnv"), "RyzenAI-npu4");
  EXPECT_EQ(d.properties.at("pci_id"), "1022:17f0");
  EXPECT_EQ(d.properties.at("pci_revision"), "0x10");
  EXPECT_EQ(d.properties.at("platforms"), "Strix Point, Krackan Point, Strix Halo or Gorgon Point");
  EXPECT_EQ(d.properties.at("device_node"), "/dev/accel/accel0");
  EXPECT_TRUE(r.warnings().empty());
}

TEST(XdnaDetection, SharesTheAccelClassWithAnIntelNpu) {
  // The accel node numbers are shared: the driver link decides the backend.
  FixtureBuilder f;
  add_pci_function(f, xdna("0000:c2:00.1", "0x1502", "0x00", 1));
  PciFunctionSpec vpu = xdna("0000:00:0b.0", "0x7d1d", "0x04", 0);
  vpu.vendor = "0x8086";
  vpu.driver = "intel_vpu";
  add_pci_function(f, vpu);
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_EQ(r.devices()[0].name, "AMD XDNA NPU");
  EXPECT_EQ(r.devices()[0].compute_capability, "NPU1");
  EXPECT_EQ(r.devices()[0].properties.at("device_node"), "/dev/accel/accel1");
  EXPECT_FALSE(r.devices()[0].firmware_version);  // no fw_version attribute on older kernels
}

TEST(XdnaDetection, MissingIdsGiveAnUnknownGenerationAndAWarning) {
  FixtureBuilder f;
  PciFunctionSpec s = xdna("0000:c2:00.1", "0x1502", std::nullopt, 0);
  add_pci_function(f, s);
  // A snapshot without vendor/device attributes and without uevent.
  const auto system_dir = hwaccel::testing::pci_device_dir("0000:c2:00.1");
  std::filesystem::remove(f.path() / ("root" + system_dir + "/vendor"));
  std::filesystem::remove(f.path() / ("root" + system_dir + "/device"));
  f.file(system_dir + "/fw_version", "0.0.0.0\n");
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_EQ(r.devices()[0].name, "AMD XDNA NPU");
  EXPECT_FALSE(r.devices()[0].architecture);
  EXPECT_FALSE(r.devices()[0].firmware_version);  // 0.0.0.0: firmware not loaded
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::io_error);
  EXPECT_NE(r.warnings()[0].message.find("no readable PCI device id"), std::string::npos);
}

TEST(XdnaDetection, TwoNpusAreOrderedByPciAddress) {
  FixtureBuilder f;
  add_pci_function(f, xdna("0000:c5:00.1", "0x17f0", "0x11", 0));
  add_pci_function(f, xdna("0000:05:00.1", "0x17f0", "0x20", 1));
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 2u);
  EXPECT_EQ(r.devices()[0].pci_bus_id, "0000:05:00.1");
  EXPECT_EQ(r.devices()[0].compute_capability, "NPU6");
  EXPECT_EQ(r.devices()[1].id, "amd_xdna:1");
  EXPECT_EQ(r.devices()[1].compute_capability, "NPU5");
}

}  // namespace
