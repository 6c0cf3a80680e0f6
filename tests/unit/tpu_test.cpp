// TPU backend: PCI ids, tpu-info tables, chips from sysfs, slice topology.
#include <gtest/gtest.h>

#include <algorithm>
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

AcceleratorRegistry detect(FixtureBuilder& f) { return hwaccel::testing::detect_backend(f, Backend::tpu); }

// A v5e/v5p/v6e chip as a TPU VM shows it: bound to vfio-pci, node named
// after its IOMMU group.
void vfio_chip(FixtureBuilder& f, const std::string& bdf, const std::string& device, unsigned group, bool node = true) {
  PciFunctionSpec s;
  s.bdf = bdf;
  s.vendor = "0x1ae0";
  s.device = device;
  s.class_code = "0x120000";
  s.driver = "vfio-pci";
  add_pci_function(f, s);
  f.link(hwaccel::testing::pci_device_dir(bdf) + "/iommu_group", "../../../kernel/iommu_groups/" + std::to_string(group));
  f.file("/sys/kernel/iommu_groups/" + std::to_string(group) + "/type", "DMA\n");
  if (node) f.file("/dev/vfio/" + std::to_string(group), "");
}

// tpu-info 0.2-style output while a JAX process holds the chips.
const std::string tpu_info_v5p_busy = R"(Libtpu version: 0.0.39
Accelerator type: v5p

TPU Chips
┏━━━━━━━━━━━━━┳━━━━━━━━━━━━━━┳━━━━━━━━━┳━━━━━━━━┓
┃ Chip        ┃ Type         ┃ Devices ┃ PID    ┃
┡━━━━━━━━━━━━━╇━━━━━━━━━━━━━━╇━━━━━━━━━╇━━━━━━━━┩
│ /dev/vfio/0 │ TPU v5p chip │ 1       │ 529279 │
│ /dev/vfio/1 │ TPU v5p chip │ 1       │ 529279 │
└─────────────┴──────────────┴─────────┴────────┘
TPU Runtime Utilization
┏━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━┓
┃ Chip ┃ HBM Usage (GiB)      ┃ Duty cycle ┃
┡━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━┩
│ 0    │ 1.26 GiB / 95.74 GiB │ 71.11%     │
│ 1    │ 2.50 GiB / 95.74 GiB │ 70.00%     │
└──────┴──────────────────────┴────────────┘
TensorCore Utilization
┏━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━┓
┃ Core ID ┃ TensorCore Utilization ┃
┡━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━┩
│ 0       │ 93.48%                 │
│ 1       │ 93.46%                 │
└─────────┴────────────────────────┘
)";

const std::string tpu_info_v6e_idle = R"(TPU Chips
┏━━━━━━━━━━━━━┳━━━━━━━━━━━━━━┳━━━━━━━━━┳━━━━━━┓
┃ Chip        ┃ Type         ┃ Devices ┃ PID  ┃
┡━━━━━━━━━━━━━╇━━━━━━━━━━━━━━╇━━━━━━━━━╇━━━━━━┩
│ /dev/vfio/0 │ TPU v6e chip │ 1       │ None │
│ /dev/vfio/1 │ TPU v6e chip │ 1       │ None │
│ /dev/vfio/2 │ TPU v6e chip │ 1       │ None │
│ /dev/vfio/3 │ TPU v6e chip │ 1       │ None │
└─────────────┴──────────────┴─────────┴──────┘
╭───────────────────────── Runtime Utilization Status ─────────────────────────╮
│ WARNING: Libtpu metrics unavailable. Is there a framework using the TPU? See │
│ tpu_info docs for more information.                                          │
╰──────────────────────────────────────────────────────────────────────────────╯
TPU Runtime Utilization
┏━━━━━━┳━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━┓
┃ Chip ┃ HBM Usage (GiB) ┃ Duty cycle ┃
┡━━━━━━╇━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━┩
│ 0    │ N/A             │ N/A        │
│ 1    │ N/A             │ N/A        │
│ 2    │ N/A             │ N/A        │
│ 3    │ N/A             │ N/A        │
└──────┴─────────────────┴────────────┘
)";

TEST(TpuParsers, VersionsFromPciIds) {
  EXPECT_EQ(parsers::tpu_version(0x0063, std::nullopt)->name, "v5e");
  EXPECT_EQ(parsers::tpu_version(0x0062, std::nullopt)->name, "v5p");
  EXPECT_EQ(parsers::tpu_version(0x006f, std::nullopt)->name, "v6e");
  EXPECT_EQ(parsers::tpu_version(0x005e, std::nullopt)->name, "v4");
  // v2 and v3 share a device id; the subsystem id tells them apart.
  EXPECT_EQ(parsers::tpu_version(0x0027, 0x004e)->name, "v2");
  EXPECT_EQ(parsers::tpu_version(0x0027, 0x004f)->name, "v3");
  EXPECT_EQ(parsers::tpu_version(0x0027, 0x004f)->runtime_devices_per_chip, 2u);
  EXPECT_FALSE(parsers::tpu_version(0x0027, std::nullopt));
  EXPECT_FALSE(parsers::tpu_version(0x0042, std::nullopt));  // gVNIC, not a TPU
}

TEST(TpuParsers, AcceleratorTypes) {
  EXPECT_EQ(parsers::tpu_version_of_accelerator_type("v5litepod-16"), "v5e");
  EXPECT_EQ(parsers::tpu_version_of_accelerator_type("v4-256"), "v4");
  EXPECT_EQ(parsers::tpu_version_of_accelerator_type("v6e-8"), "v6e");
  EXPECT_EQ(parsers::tpu_version_of_accelerator_type("v5p-128"), "v5p");
  EXPECT_EQ(parsers::tpu_version_of_accelerator_type("tpu7x-32"), "v7");
  EXPECT_FALSE(parsers::tpu_version_of_accelerator_type("a100-80"));
  EXPECT_FALSE(parsers::tpu_version_of_accelerator_type(""));
}

TEST(TpuParsers, TpuInfoRichTables) {
  const auto busy = parsers::parse_tpu_info(tpu_info_v5p_busy);
  EXPECT_EQ(busy.accelerator_type, "v5p");
  EXPECT_EQ(busy.libtpu_version, "0.0.39");
  EXPECT_FALSE(busy.metrics_unavailable);
  ASSERT_EQ(busy.chips.size(), 2u);
  EXPECT_EQ(busy.chips[1].device_node, "/dev/vfio/1");
  EXPECT_EQ(busy.chips[1].type, "TPU v5p chip");
  EXPECT_EQ(busy.chips[1].devices, 1u);
  EXPECT_EQ(busy.chips[1].pid, "529279");
  ASSERT_EQ(busy.usage.size(), 2u);  // the TensorCore table is not memory usage
  EXPECT_EQ(busy.usage[1].device, 1u);
  EXPECT_EQ(busy.usage[1].used_bytes, static_cast<std::uint64_t>(2.50 * (1ull << 30) + 0.5));
  EXPECT_EQ(busy.usage[1].total_bytes, static_cast<std::uint64_t>(95.74 * (1ull << 30) + 0.5));
  EXPECT_DOUBLE_EQ(*busy.usage[0].duty_cycle_percent, 71.11);

  const auto idle = parsers::parse_tpu_info(tpu_info_v6e_idle);
  EXPECT_TRUE(idle.metrics_unavailable);
  EXPECT_EQ(idle.chips.size(), 4u);
  ASSERT_EQ(idle.usage.size(), 4u);
  EXPECT_FALSE(idle.usage[0].total_bytes);
  EXPECT_FALSE(idle.usage[0].duty_cycle_percent);
}

TEST(TpuParsers, TpuInfoMarkdownTablesAndGarbage) {
  const auto md = parsers::parse_tpu_info(
      "TPU Chips\n\n| Chip | Type | Devices | PID |\n|------|------|---------|-----|\n| /dev/vfio/0 | TPU v6e chip | 1 | None |\n\n"
      "TPU HBM Usage\n\n| Device | HBM Usage (GiB) |\n|--------|-----------------|\n| 0 | 3.00 GiB / 31.25 GiB |\n");
  ASSERT_EQ(md.chips.size(), 1u);
  ASSERT_EQ(md.usage.size(), 1u);
  EXPECT_EQ(md.usage[0].total_bytes, static_cast<std::uint64_t>(31.25 * (1ull << 30)));
  const auto junk = parsers::parse_tpu_info("Traceback (most recent call last):\n  File \"x\" | line 3 |\n\x01\x02|||\n");
  EXPECT_TRUE(junk.chips.empty());
  EXPECT_TRUE(junk.usage.empty());
}

TEST(TpuDetection, V5pHostWithTpuInfoAndSliceEnvironment) {
  FixtureBuilder f;
  vfio_chip(f, "0000:00:05.0", "0x0062", 0);
  vfio_chip(f, "0000:00:06.0", "0x0062", 1);
  f.command({"tpu-info"}, tpu_info_v5p_busy)
      .env("TPU_ACCELERATOR_TYPE", "v5p-16")
      .env("TPU_TOPOLOGY", "2x2x2")
      .env("TPU_WORKER_ID", "1");
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 2u);
  const DeviceProfile& d = r.devices()[1];
  EXPECT_EQ(d.id, "tpu:1");
  EXPECT_EQ(d.family, Family::tpu);
  EXPECT_EQ(d.name, "Google TPU v5p");
  EXPECT_EQ(d.compute_capability, "v5p");
  EXPECT_EQ(d.pci_bus_id, "0000:00:06.0");
  EXPECT_EQ(d.properties.at("device_node"), "/dev/vfio/1");
  EXPECT_EQ(d.properties.at("driver"), "vfio-pci");
  EXPECT_EQ(d.properties.at("owner_pid"), "529279");
  EXPECT_EQ(d.properties.at("accelerator_type"), "v5p-16");
  EXPECT_EQ(d.properties.at("topology"), "2x2x2");
  EXPECT_EQ(d.properties.at("worker_id"), "1");
  EXPECT_EQ(d.memory_bytes, static_cast<std::uint64_t>(95.74 * (1ull << 30) + 0.5));
  EXPECT_EQ(d.memory_used_bytes, static_cast<std::uint64_t>(2.50 * (1ull << 30) + 0.5));
  EXPECT_DOUBLE_EQ(*d.utilization_percent, 70.0);
  ASSERT_EQ(r.interconnects().size(), 1u);
  const Interconnect& ici = r.interconnects()[0];
  EXPECT_EQ(ici.kind, "ici");
  EXPECT_EQ(ici.name, "TPU v5p slice 2x2x2 (v5p-16)");
  EXPECT_EQ(ici.device_ids, (std::vector<std::string>{"tpu:0", "tpu:1"}));
  EXPECT_FALSE(ici.bandwidth_gbps);  // no measured figure
  EXPECT_TRUE(r.warnings().empty());
}

TEST(TpuDetection, IdleV6eHasNoMemoryAndSaysWhy) {
  FixtureBuilder f;
  for (unsigned i = 0; i < 4; ++i) vfio_chip(f, "0000:00:0" + std::to_string(4 + i) + ".0", "0x006f", i);
  f.command({"tpu-info"}, tpu_info_v6e_idle);
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 4u);
  for (const auto& d : r.devices()) {
    EXPECT_EQ(d.name, "Google TPU v6e");
    EXPECT_FALSE(d.memory_bytes);  // the published 32 GiB is a spec, not a measurement
  }
  EXPECT_TRUE(r.interconnects().empty());  // no environment, no invented topology
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::degraded);
}

TEST(TpuDetection, ToolMissingFailingOrGarbage) {
  const auto chips = [](FixtureBuilder& f) { vfio_chip(f, "0000:00:04.0", "0x0063", 0); };
  {
    FixtureBuilder f;
    chips(f);
    const auto r = detect(f);
    ASSERT_EQ(r.devices().size(), 1u);
    EXPECT_EQ(r.devices()[0].name, "Google TPU v5e");
    ASSERT_EQ(r.warnings().size(), 1u);
    EXPECT_EQ(r.warnings()[0].kind, WarningKind::tool_missing);
  }
  {
    FixtureBuilder f;
    chips(f);
    f.command({"tpu-info"}, "", 1, "ModuleNotFoundError: No module named 'grpc'\n");
    const auto r = detect(f);
    ASSERT_EQ(r.devices().size(), 1u);
    ASSERT_EQ(r.warnings().size(), 1u);
    EXPECT_EQ(r.warnings()[0].kind, WarningKind::tool_failed);
    EXPECT_NE(r.warnings()[0].message.find("No module named 'grpc'"), std::string::npos);
  }
  {
    FixtureBuilder f;
    chips(f);
    f.command({"tpu-info"}, "\xff\xfe garbage \x01|\x02|\n");
    const auto r = detect(f);
    ASSERT_EQ(r.devices().size(), 1u);
    ASSERT_EQ(r.warnings().size(), 1u);
    EXPECT_EQ(r.warnings()[0].kind, WarningKind::parse_error);
  }
}

TEST(TpuDetection, UnknownIdIsUnknownNeverADefault) {
  FixtureBuilder f;
  vfio_chip(f, "0000:00:04.0", "0x0099", 7);
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_EQ(r.devices()[0].name, "Google TPU (unknown version)");
  EXPECT_FALSE(r.devices()[0].compute_capability);
  ASSERT_EQ(r.warnings().size(), 2u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::unsupported);
  EXPECT_NE(r.warnings()[0].message.find("1ae0:0099"), std::string::npos);
  EXPECT_EQ(r.warnings()[1].kind, WarningKind::tool_missing);
}

TEST(TpuDetection, V4ChipsUseGooglesAccelClassDriver) {
  FixtureBuilder f;
  for (unsigned i = 0; i < 2; ++i) {
    PciFunctionSpec s;
    s.bdf = "0000:00:0" + std::to_string(4 + i) + ".0";
    s.vendor = "0x1ae0";
    s.device = "0x005e";
    s.driver = "tpu_v4";
    s.accel_minor = i;
    s.dev_node = false;
    add_pci_function(f, s);
    f.file("/dev/accel" + std::to_string(i), "");  // Google's driver: no accel/ folder
  }
  f.env("TPU_ACCELERATOR_TYPE", "v5litepod-8");  // disagrees with the chips
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 2u);
  EXPECT_EQ(r.devices()[0].name, "Google TPU v4");
  EXPECT_EQ(r.devices()[0].properties.at("device_node"), "/dev/accel0");
  EXPECT_EQ(r.devices()[1].properties.at("device_node"), "/dev/accel1");
  ASSERT_EQ(r.interconnects().size(), 1u);
  EXPECT_EQ(r.interconnects()[0].name, "TPU v5e slice (v5litepod-8)");
  std::size_t inconsistent = 0;
  for (const auto& w : r.warnings()) inconsistent += w.kind == WarningKind::inconsistent;
  EXPECT_EQ(inconsistent, 2u);
}

TEST(TpuDetection, VfioBoundGoogleNicIsNotATpuAndMissingNodeIsUnavailable) {
  FixtureBuilder f;
  PciFunctionSpec nic;
  nic.bdf = "0000:00:03.0";
  nic.vendor = "0x1ae0";
  nic.device = "0x0042";
  nic.class_code = "0x020000";
  nic.driver = "vfio-pci";  // bound for DPDK
  add_pci_function(f, nic);
  vfio_chip(f, "0000:00:04.0", "0x0063", 3, /*node=*/false);
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_EQ(r.devices()[0].pci_bus_id, "0000:00:04.0");
  EXPECT_FALSE(r.devices()[0].available);
  ASSERT_GE(r.warnings().size(), 1u);
  EXPECT_NE(r.warnings()[0].message.find("/dev/vfio/3 does not exist"), std::string::npos);
}

TEST(TpuDetection, ContainerWithoutSysfsUsesTpuInfo) {
  FixtureBuilder f;
  f.command({"tpu-info"}, tpu_info_v6e_idle);
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 4u);
  EXPECT_EQ(r.devices()[3].name, "Google TPU v6e");
  EXPECT_EQ(r.devices()[3].properties.at("device_node"), "/dev/vfio/3");
  EXPECT_FALSE(r.devices()[3].pci_bus_id);
}

TEST(TpuDetection, ChipListedTwiceIsOneDevice) {
  std::string table = tpu_info_v6e_idle;
  const std::string row = "│ /dev/vfio/1 │ TPU v6e chip │ 1       │ None │\n";
  table.insert(table.find(row) + row.size(), row);
  FixtureBuilder f;
  f.command({"tpu-info"}, table);
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 4u);
  EXPECT_EQ(r.devices()[2].properties.at("device_node"), "/dev/vfio/2");
  const auto repeated = std::find_if(r.warnings().begin(), r.warnings().end(),
                                     [](const auto& w) { return w.kind == WarningKind::inconsistent; });
  ASSERT_NE(repeated, r.warnings().end());
  EXPECT_EQ(repeated->message, "tpu-info lists the chip at /dev/vfio/1 twice; the first row is kept");
}

TEST(TpuDetection, NothingThereMeansNothing) {
  FixtureBuilder f;
  f.file("/dev/accel/accel0", "");  // an NPU's node is no TPU
  const auto r = detect(f);
  EXPECT_TRUE(r.devices().empty());
  EXPECT_TRUE(r.warnings().empty());
}

}  // namespace
