// ROCm detection on the real AMD captures of ../shared/fixtures/real/amd,
// checked against the ground truth in each SOURCE.md.
//
// Replayed: the sysfs and KFD trees (LACT snapshots of a Phoenix APU and an
// RX 6900 XT; the ROCm k8s-device-plugin KFD dumps of 8x MI210 and 8x MI308X
// in CPX mode). Not replayed: gls-4x-mi300x-vm (rocm-smi and rocminfo text),
// telegraf-rocmsmi-6x-mi100-rocm571 (rocm-smi JSON) and
// issue-rocmsmilib108-4gpu-pcie-showtopo (rocm-smi --showtopo text) are tool
// outputs, and the rocm detector reads sysfs only and runs no tool;
// issue-amdgputop120-xdna-npu-7840u is an XDNA NPU (lsmod/dmesg), not a GPU.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "../test_support.hpp"

import hwaccel;

namespace {

namespace fs = std::filesystem;
using namespace hwaccel;
using hwaccel::testing::FixtureBuilder;

constexpr std::uint64_t gib = std::uint64_t{1} << 30;

AcceleratorRegistry detect_rocm(FixtureBuilder& f) {
  auto system = FixtureSystem::open(f.write());
  EXPECT_TRUE(system) << system.error().message;
  if (!system) return {};
  return DetectBuilder::none().with(Backend::rocm).system_probes(false).detect(**system);
}

std::string prop(const DeviceProfile& d, std::string_view key) {
  const auto it = d.properties.find(key);
  return it == d.properties.end() ? std::string() : it->second;
}

TEST(AmdConformance, LactPhoenixApu) {
  const fs::path capture = hwaccel::testing::shared_capture("amd/lact-phoenix-sysfs");
  if (capture.empty()) GTEST_SKIP() << "shared capture amd/lact-phoenix-sysfs not available";
  // The snapshot is /sys/class/drm/card1 with `device` as a folder, and
  // /sys/class/kfd/kfd; the PCI device is that same folder.
  FixtureBuilder f("Phoenix APU (LACT snapshot)", "ilya-zlobintsev/LACT tests/snapshots/amd/phoenix");
  f.tree(capture / "card1", "/sys/class/drm/card1")
      .tree(capture / "kfd", "/sys/class/kfd/kfd")
      .link("/sys/bus/pci/devices/0000:64:00.0", "../../../class/drm/card1/device");
  const auto r = detect_rocm(f);
  ASSERT_EQ(r.devices().size(), 1u);
  const DeviceProfile& d = r.devices()[0];
  EXPECT_EQ(d.name, "AMD Radeon 780M Graphics");  // 1002:15bf rev 0xdd
  EXPECT_TRUE(d.integrated);
  EXPECT_EQ(d.pci_bus_id, "0000:64:00.0");
  EXPECT_EQ(prop(d, "pci_id"), "1002:15bf");
  EXPECT_EQ(prop(d, "pci_revision"), "0xdd");
  EXPECT_EQ(d.compute_capability, "gfx1103");
  EXPECT_EQ(d.architecture, "RDNA3");
  EXPECT_EQ(d.compute_units, 12u);  // simd_count 24 / simd_per_cu 2
  // 4 GiB BIOS carve-out; the KFD bank (31433977856 B) is GTT, system RAM.
  EXPECT_EQ(d.memory_kind, MemoryKind::carve_out);
  EXPECT_EQ(d.memory_bytes, 4294967296ull);
  EXPECT_EQ(d.memory_used_bytes, 1272893440ull);
  EXPECT_EQ(d.shared_memory_bytes, 31433977856ull);
  EXPECT_FALSE(prop(d, "shared_memory").empty());
  EXPECT_FALSE(d.uuid);  // unique_id is empty and KFD's is 0
  EXPECT_FALSE(d.pcie);  // 16 GT/s x16 of the on-die fabric is not a slot link
  EXPECT_FALSE(prop(d, "pcie_link").empty());
  EXPECT_EQ(d.firmware_version, "113-PHXGENERIC-001");
  EXPECT_EQ(prop(d, "kfd_nodes"), "1");
  EXPECT_TRUE(r.warnings().empty()) << r.warnings()[0].message;
}

TEST(AmdConformance, LactRx6900xtNulPadded) {
  const fs::path capture = hwaccel::testing::shared_capture("amd/lact-rx6900xt-sysfs");
  if (capture.empty()) GTEST_SKIP() << "shared capture amd/lact-rx6900xt-sysfs not available";
  FixtureBuilder f("RX 6900 XT (LACT snapshot)", "ilya-zlobintsev/LACT tests/snapshots/amd/rx6900xt");
  f.tree(capture / "card0", "/sys/class/drm/card0")
      .link("/sys/bus/pci/devices/0000:0c:00.0", "../../../class/drm/card0/device");
  const auto r = detect_rocm(f);
  ASSERT_EQ(r.devices().size(), 1u);
  const DeviceProfile& d = r.devices()[0];
  // 1002:73BF only in uevent (no `device` file); revision 0xc0 is the 6900 XT.
  EXPECT_EQ(d.name, "AMD Radeon RX 6900 XT");
  EXPECT_EQ(prop(d, "pci_id"), "1002:73bf");
  EXPECT_EQ(prop(d, "pci_revision"), "0xc0");
  EXPECT_EQ(d.pci_bus_id, "0000:0c:00.0");
  EXPECT_FALSE(d.integrated);
  EXPECT_EQ(d.memory_kind, MemoryKind::dedicated);
  EXPECT_EQ(d.memory_bytes, 17163091968ull);
  EXPECT_EQ(d.memory_used_bytes, 668274688ull);
  EXPECT_EQ(prop(d, "gtt_bytes"), "16786171904");
  EXPECT_FALSE(d.numa_node);  // numa_node -1
  ASSERT_TRUE(d.pcie);
  EXPECT_EQ(d.pcie->current_speed_gts, 16.0);
  EXPECT_EQ(d.pcie->current_width, 16u);
  EXPECT_EQ(d.pcie->max_speed_gts, 16.0);
  EXPECT_EQ(d.firmware_version, "113-D4121EXT-CO1");
  EXPECT_EQ(d.uuid, "GPU-946d7e1ef9b172dd");
  EXPECT_EQ(d.temperature_c, 56.0);
  EXPECT_FALSE(d.driver_version);
  EXPECT_EQ(prop(d, "rocm_compute"), "unavailable: no KFD topology (amdgpu without ROCm compute support)");
  EXPECT_TRUE(r.warnings().empty()) << r.warnings()[0].message;
}

TEST(AmdConformance, K8sDevicePlugin8xMi210TwoHives) {
  const fs::path capture = hwaccel::testing::shared_capture("amd/k8sdp-8x-mi210-xgmi-kfd");
  if (capture.empty()) GTEST_SKIP() << "shared capture amd/k8sdp-8x-mi210-xgmi-kfd not available";
  FixtureBuilder f("8x MI210 KFD nodes", "ROCm/k8s-device-plugin testdata/topo-mi210-xgmi-pcie");
  f.tree(capture / "nodes", "/sys/class/kfd/kfd/topology/nodes");
  const auto r = detect_rocm(f);
  ASSERT_EQ(r.devices().size(), 8u);
  const std::vector<std::string> addresses = {"0000:63:00.0", "0000:43:00.0", "0000:03:00.0", "0000:26:00.0",
                                              "0000:e3:00.0", "0000:c3:00.0", "0000:83:00.0", "0000:a3:00.0"};
  std::set<std::string> uuids;
  for (std::size_t i = 0; i < 8; ++i) {
    const DeviceProfile& d = r.devices()[i];
    EXPECT_EQ(d.id, "rocm:" + std::to_string(i));
    EXPECT_EQ(d.name, "AMD Instinct MI210");
    EXPECT_EQ(d.pci_bus_id, addresses[i]);
    EXPECT_EQ(d.compute_capability, "gfx90a");
    EXPECT_EQ(d.compute_units, 104u);
    EXPECT_FALSE(d.memory_bytes) << "the dump has local_mem_size 0 and no mem_banks: memory is unknown";
    EXPECT_EQ(prop(d, "kfd_nodes"), std::to_string(i + 2));
    if (d.uuid) uuids.insert(*d.uuid);
  }
  EXPECT_EQ(uuids.size(), 8u);
  ASSERT_EQ(r.interconnects().size(), 2u);
  EXPECT_EQ(r.interconnects()[0].name, "xGMI hive 12609507387757274807");
  EXPECT_EQ(r.interconnects()[0].device_ids, (std::vector<std::string>{"rocm:0", "rocm:1", "rocm:2", "rocm:3"}));
  EXPECT_EQ(r.interconnects()[1].name, "xGMI hive 18091350218769748594");
  EXPECT_EQ(r.interconnects()[1].device_ids, (std::vector<std::string>{"rocm:4", "rocm:5", "rocm:6", "rocm:7"}));
  EXPECT_EQ(r.interconnects()[0].bandwidth_gbps, 150.0);  // 3 peers x 50000 MB/s
  std::size_t xgmi = 0, cross = 0;
  for (const auto& l : r.links()) {
    if (l.kind == LinkKind::xgmi) {
      ++xgmi;
      EXPECT_EQ(l.hops, 1u);                // weight 15
      EXPECT_EQ(l.bandwidth_gbps, 50.0);  // max_bandwidth 50000 MB/s
    } else {
      ++cross;
      EXPECT_EQ(l.kind, LinkKind::system);  // the other hive hangs off the other socket
    }
  }
  EXPECT_EQ(xgmi, 12u);
  EXPECT_EQ(cross, 16u);
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::inconsistent);  // no /sys/class/drm in a KFD-only dump
}

TEST(AmdConformance, K8sDevicePlugin8xMi308xCpx) {
  const fs::path capture = hwaccel::testing::shared_capture("amd/k8sdp-8x-mi308x-cpx-kfd");
  if (capture.empty()) GTEST_SKIP() << "shared capture amd/k8sdp-8x-mi308x-cpx-kfd not available";
  FixtureBuilder f("8x MI308X CPX KFD topology", "ROCm/k8s-device-plugin testdata/topology-parsing-mi308");
  f.tree(capture / "topology", "/sys/class/kfd/kfd/topology");
  const auto r = detect_rocm(f);
  // 32 KFD GPU nodes, 8 boards: partitions share unique_id.
  ASSERT_EQ(r.devices().size(), 8u);
  const std::vector<std::string> addresses = {"0000:0a:00.0", "0000:80:00.0", "0000:a4:00.0", "0000:c8:00.0",
                                              "0001:0b:00.0", "0001:81:00.0", "0001:a5:00.0", "0001:c9:00.0"};
  std::size_t partitions = 0;
  for (std::size_t i = 0; i < 8; ++i) {
    const DeviceProfile& d = r.devices()[i];
    EXPECT_EQ(d.name, "AMD Instinct MI308X");
    EXPECT_EQ(d.pci_bus_id, addresses[i]);
    EXPECT_EQ(d.compute_capability, "gfx942");
    EXPECT_EQ(d.compute_units, 80u);
    // local_mem_size is 0; mem_banks say 48 GiB per partition (the last 16 MiB short).
    EXPECT_EQ(d.memory_bytes, 3 * 48 * gib + 51522830336ull);
    EXPECT_EQ(prop(d, "compute_partition"), "CPX");
    ASSERT_EQ(d.partitions.size(), 4u);
    for (std::uint32_t p = 0; p < 4; ++p) {
      EXPECT_EQ(d.partitions[p].index, p);
      EXPECT_EQ(d.partitions[p].profile, "CPX");
      EXPECT_EQ(d.partitions[p].compute_units, 20u);
      EXPECT_EQ(d.partitions[p].memory_bytes, p < 3 ? 48 * gib : 51522830336ull);
    }
    partitions += d.partitions.size();
  }
  EXPECT_EQ(partitions, 32u);
  EXPECT_EQ(prop(r.devices()[0], "kfd_nodes"), "2,3,4,5");
  EXPECT_EQ(prop(r.devices()[1], "drm_render_minors"), "136,137,138,139");  // minors are not dense
  ASSERT_EQ(r.interconnects().size(), 1u);
  EXPECT_EQ(r.interconnects()[0].name, "xGMI hive 2095653680343411291");
  EXPECT_EQ(r.interconnects()[0].device_ids.size(), 8u);
  EXPECT_FALSE(r.interconnects()[0].bandwidth_gbps);  // board-to-board max_bandwidth is 0: unknown
  ASSERT_EQ(r.links().size(), 28u);
  for (const auto& l : r.links()) {
    EXPECT_EQ(l.kind, LinkKind::xgmi);
    EXPECT_EQ(l.hops, 1u);  // weight 41 = 2 x 13 + 15
    EXPECT_FALSE(l.bandwidth_gbps);
  }
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::inconsistent);
}

}  // namespace
