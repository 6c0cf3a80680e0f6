// Storage probe: mountinfo parsing, filesystem and medium classification,
// read bandwidth and its source, bad input, and model load time.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "../test_support.hpp"

import hwaccel;
import hwaccel.detectors;

#include "fixture_detection.hpp"

namespace {

using namespace hwaccel;
using hwaccel::testing::FixtureBuilder;
using hwaccel::testing::open_fixture;
using hwaccel::testing::probe;
using hwaccel::testing::warnings_of;

std::unique_ptr<FixtureSystem> machine() {
  auto system = FixtureSystem::open((hwaccel::testing::fixtures_root() / "machines" / "xeon-ib-roce-nvme-nfs").string());
  EXPECT_TRUE(system) << (system ? "" : system.error().message);
  return system ? std::move(*system) : nullptr;
}

// --- parsers --------------------------------------------------------------------

TEST(StorageParsers, Mountinfo) {
  const auto info = parsers::parse_mountinfo(
      "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n"
      "27 1 253:0 / / rw,relatime shared:1 shared:2 - ext4 /dev/mapper/vg-root rw\n"
      "120 27 0:55 / /mnt/team\\040share rw - cifs //srv/team\\040share rw\n"
      "\n"
      "garbage line\n"
      "1 2 x:y / /a rw - ext4 /dev/x rw\n"
      "1 2 8:1 / /a rw - ext4\n"
      "1 2 8:1 / /a rw ext4 /dev/sda1 rw\n");
  ASSERT_EQ(info.entries.size(), 3u);
  EXPECT_EQ(info.malformed_lines, 4u);
  EXPECT_EQ(info.entries[0], (parsers::MountEntry{98, 0, "/mnt1", "/mnt2", "ext3", "/dev/root"}));
  EXPECT_EQ(info.entries[1], (parsers::MountEntry{253, 0, "/", "/", "ext4", "/dev/mapper/vg-root"}));
  EXPECT_EQ(info.entries[2].mount_point, "/mnt/team share");
  EXPECT_EQ(info.entries[2].source, "//srv/team share");
  EXPECT_TRUE(parsers::parse_mountinfo("").entries.empty());
}

TEST(StorageParsers, Unescape) {
  EXPECT_EQ(parsers::unescape_mount_field("a\\040b\\011c\\012d\\134e"), "a b\tc\nd\\e");
  EXPECT_EQ(parsers::unescape_mount_field("end\\"), "end\\");
  EXPECT_EQ(parsers::unescape_mount_field("\\08x"), "\\08x");   // not octal
  EXPECT_EQ(parsers::unescape_mount_field("\\000"), "\\000");   // NUL is never produced
  EXPECT_EQ(parsers::unescape_mount_field("\\04"), "\\04");     // too short
}

TEST(StorageParsers, NetworkFilesystems) {
  EXPECT_EQ(parsers::network_filesystem("nfs4", "10.0.0.1:/x"), "nfs4");
  EXPECT_EQ(parsers::network_filesystem("lustre", "10.0.0.1@o2ib:/fs"), "lustre");
  EXPECT_EQ(parsers::network_filesystem("ceph", "mon1:6789:/"), "ceph");
  EXPECT_EQ(parsers::network_filesystem("virtiofs", "models"), "virtiofs");
  EXPECT_EQ(parsers::network_filesystem("fuse.s3fs", "s3fs"), "fuse.s3fs");
  EXPECT_EQ(parsers::network_filesystem("fuse.gcsfuse", "bucket"), "fuse.gcsfuse");
  EXPECT_EQ(parsers::network_filesystem("fuse", "mountpoint-s3"), "fuse.mountpoint-s3");
  for (const auto& [fs, source] : std::vector<std::pair<const char*, const char*>>{
           {"fuse.lxcfs", "lxcfs"}, {"fuse.gvfsd-fuse", "gvfsd-fuse"}, {"fuse", "sshfs-but-unknown"},
           {"ext4", "/dev/sda1"}, {"overlay", "overlay"}, {"tmpfs", "tmpfs"}, {"zfs", "tank/models"}, {"", ""}})
    EXPECT_EQ(parsers::network_filesystem(fs, source), std::nullopt) << fs;
}

PcieLink link(double gts, std::uint32_t width) {
  PcieLink l;
  l.current_speed_gts = gts;
  l.current_width = width;
  return l;
}

TEST(StorageParsers, NvmeBandwidthFromTheLink) {
  EXPECT_EQ(parsers::nvme_read_bandwidth_gbps(link(8.0, 4)), 3.7);     // 3.94 GB/s link
  EXPECT_EQ(parsers::nvme_read_bandwidth_gbps(link(16.0, 4)), 7.4);    // 7.88 GB/s link
  EXPECT_EQ(parsers::nvme_read_bandwidth_gbps(link(32.0, 4)), 14.81);  // 15.75 GB/s link
  EXPECT_EQ(parsers::nvme_read_bandwidth_gbps(link(32.0, 8)), 15.0);   // capped: one controller
  EXPECT_EQ(parsers::nvme_read_bandwidth_gbps(PcieLink{}), std::nullopt);
  PcieLink max_only;
  max_only.max_speed_gts = 16.0;
  max_only.max_width = 4;
  EXPECT_EQ(parsers::nvme_read_bandwidth_gbps(max_only), 7.4);
}

TEST(StorageParsers, ClassTable) {
  EXPECT_EQ(parsers::table_read_bandwidth_gbps(StorageKind::nvme), 3.0);
  EXPECT_EQ(parsers::table_read_bandwidth_gbps(StorageKind::ssd), 0.55);
  EXPECT_EQ(parsers::table_read_bandwidth_gbps(StorageKind::hdd), 0.2);
  EXPECT_EQ(parsers::table_read_bandwidth_gbps(StorageKind::virtio), 0.5);
  EXPECT_EQ(parsers::table_read_bandwidth_gbps(StorageKind::network), std::nullopt);
  EXPECT_EQ(parsers::table_read_bandwidth_gbps(StorageKind::unknown), std::nullopt);
}

// --- the probe ------------------------------------------------------------------

StorageDevice disk(std::string name, StorageKind kind, std::uint64_t size, std::string model, std::string pci,
                   std::int32_t numa, double bw, std::string source, std::vector<std::string> mounts) {
  return StorageDevice{std::move(name), kind, size, std::move(model), std::move(pci), numa, bw, std::move(source),
                       std::nullopt, std::move(mounts)};
}

StorageDevice network(std::string name, std::string fs, std::string mount) {
  return StorageDevice{std::move(name), StorageKind::network, std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                       std::nullopt, "", std::move(fs), {std::move(mount)}};
}

TEST(StorageProbe, TheFixtureMachine) {
  const auto system = machine();
  const Inventory inv = probe(*system);
  const std::vector<StorageDevice> expected = {
      // Gen4 x4 (7.88 GB/s) and Gen5 x4 (15.75 GB/s) links; /models is an md RAID0
      // over both, /srv/llama a bind mount of a folder of it. nvme1n1 is a
      // multipath head under nvme-subsystem; its hidden path device is not listed.
      disk("nvme0n1", StorageKind::nvme, 3840755982336ull, "SAMSUNG MZQL23T8HCLS-00A07", "0000:1a:00.0", 0, 7.4,
           "pcie_link", {"/models", "/srv/llama"}),
      disk("nvme1n1", StorageKind::nvme, 3840755982336ull, "KIOXIA KCM7DRUG3T84", "0000:b2:00.0", 1, 14.81,
           "pcie_link", {"/models", "/srv/llama"}),
      // / is LVM on sda3; /boot and /boot/efi partitions.
      disk("sda", StorageKind::ssd, 480103981056ull, "SAMSUNG MZ7L3480", "0000:00:17.0", 0, 0.55, "table",
           {"/", "/boot", "/boot/efi"}),
      disk("sdb", StorageKind::hdd, 16000900661248ull, "ST16000NM001G-2K", "0000:00:17.0", 0, 0.2, "table", {"/data"}),
      network("//fileserver/team share", "cifs", "/mnt/team share"),
      network("10.0.0.10:/export/datasets", "nfs4", "/datasets"),
      network("10.10.0.1@o2ib:/scratch", "lustre", "/lustre"),
      network("s3fs", "fuse.s3fs", "/mnt/s3-models"),
  };
  EXPECT_EQ(inv.system.storage, expected);
  EXPECT_TRUE(warnings_of(inv, "storage").empty());
}

TEST(StorageProbe, VirtualAndCloudDisks) {
  FixtureBuilder f;
  // virtio-blk claims to be rotational; the name says what it is.
  f.file("/sys/devices/pci0000:00/0000:00:02.0/virtio1/block/vda/size", "536870912\n")
      .file("/sys/devices/pci0000:00/0000:00:02.0/virtio1/block/vda/queue/rotational", "1\n")
      .link("/sys/block/vda", "../devices/pci0000:00/0000:00:02.0/virtio1/block/vda");
  // EBS on Nitro looks like NVMe but is network-attached.
  const std::string ebs = "/sys/devices/pci0000:00/0000:00:1f.0/nvme/nvme1";
  f.file(ebs + "/model", "Amazon Elastic Block Store              \n")
      .file(ebs + "/nvme1n1/size", "209715200\n")
      .link(ebs + "/nvme1n1/device", "../../nvme1")
      .file("/sys/devices/pci0000:00/0000:00:1f.0/current_link_speed", "8.0 GT/s PCIe\n")
      .file("/sys/devices/pci0000:00/0000:00:1f.0/current_link_width", "4\n")
      .link("/sys/bus/pci/devices/0000:00:1f.0", "../../../devices/pci0000:00/0000:00:1f.0")
      .link("/sys/block/nvme1n1", "../devices/pci0000:00/0000:00:1f.0/nvme/nvme1/nvme1n1");
  // An emulated SCSI disk of QEMU.
  const std::string qemu = "/sys/devices/pci0000:00/0000:00:05.0/virtio2/host0/target0:0:0/0:0:0:0";
  f.file(qemu + "/model", "QEMU HARDDISK   \n")
      .file(qemu + "/block/sda/size", "20971520\n")
      .file(qemu + "/block/sda/queue/rotational", "1\n")
      .link(qemu + "/block/sda/device", "../../../0:0:0:0")
      .link("/sys/block/sda", "../devices/pci0000:00/0000:00:05.0/virtio2/host0/target0:0:0/0:0:0:0/block/sda");
  // eMMC: no table figure; its boot areas are skipped. An empty card reader is skipped.
  f.file("/sys/devices/platform/soc/mmc0/mmc_host/mmc0/mmc0:0001/block/mmcblk0/size", "61071360\n")
      .link("/sys/block/mmcblk0", "../devices/platform/soc/mmc0/mmc_host/mmc0/mmc0:0001/block/mmcblk0")
      .file("/sys/devices/platform/soc/mmc0/mmc_host/mmc0/mmc0:0001/block/mmcblk0/mmcblk0boot0/size", "8192\n")
      .link("/sys/block/mmcblk0boot0", "../devices/platform/soc/mmc0/mmc_host/mmc0/mmc0:0001/block/mmcblk0/mmcblk0boot0")
      .file("/sys/devices/pci0000:00/0000:00:14.0/usb1/1-1/host6/target6:0:0/6:0:0:0/block/sdb/size", "0\n")
      .link("/sys/block/sdb", "../devices/pci0000:00/0000:00:14.0/usb1/1-1/host6/target6:0:0/6:0:0:0/block/sdb");
  auto system = open_fixture(f);
  const Inventory inv = probe(*system);
  ASSERT_EQ(inv.system.storage.size(), 4u);
  const auto& s = inv.system.storage;
  EXPECT_EQ(s[0].name, "mmcblk0");
  EXPECT_EQ(s[0].kind, StorageKind::unknown);
  EXPECT_EQ(s[0].read_bandwidth_gbps, std::nullopt);
  EXPECT_EQ(s[0].bandwidth_source, "");
  EXPECT_EQ(s[1].name, "nvme1n1");
  EXPECT_EQ(s[1].kind, StorageKind::network);
  EXPECT_EQ(s[1].model, "Amazon Elastic Block Store");
  EXPECT_EQ(s[1].read_bandwidth_gbps, std::nullopt);  // the volume's provisioned rate, not the link
  EXPECT_EQ(s[1].pci_bus_id, "0000:00:1f.0");
  EXPECT_EQ(s[2].name, "sda");
  EXPECT_EQ(s[2].kind, StorageKind::virtio);
  EXPECT_EQ(s[2].read_bandwidth_gbps, 0.5);
  EXPECT_EQ(s[3].name, "vda");
  EXPECT_EQ(s[3].kind, StorageKind::virtio);
  EXPECT_EQ(s[3].size_bytes, 274877906944ull);
  EXPECT_EQ(s[3].pci_bus_id, "0000:00:02.0");
  EXPECT_EQ(s[3].bandwidth_source, "table");
  EXPECT_TRUE(warnings_of(inv, "storage").empty());
}

TEST(StorageProbe, BadInputBecomesWarnings) {
  FixtureBuilder f;
  f.file("/sys/devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sda/size", "lots\n")
      .link("/sys/block/sda", "../devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sda")
      .link("/sys/block/sdc", "sdc")  // a link to itself
      .file("/sys/devices/pci0000:00/0000:00:17.0/ata2/host1/target1:0:0/1:0:0:0/block/sdb/size", "1000\n")
      .link("/sys/block/sdb", "../devices/pci0000:00/0000:00:17.0/ata2/host1/target1:0:0/1:0:0:0/block/sdb")
      .file("/proc/self/mountinfo", "27 1 8:16 / / rw - ext4 /dev/sdb rw\nnot a mount line\n1 2 3\n");
  auto system = open_fixture(f);
  const Inventory inv = probe(*system);
  ASSERT_EQ(inv.system.storage.size(), 1u);
  EXPECT_EQ(inv.system.storage[0].name, "sdb");
  EXPECT_EQ(inv.system.storage[0].kind, StorageKind::unknown);  // no queue/rotational
  EXPECT_EQ(inv.system.storage[0].size_bytes, 512000u);
  // The mount's device number has no /sys/dev/block entry: nothing attached.
  EXPECT_TRUE(inv.system.storage[0].mount_points.empty());
  const auto w = warnings_of(inv, "storage");
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0].kind, WarningKind::parse_error);
  EXPECT_NE(w[0].message.find("2 malformed line(s)"), std::string::npos) << w[0].message;
  EXPECT_EQ(w[1].kind, WarningKind::io_error);
  EXPECT_NE(w[1].message.find("/sys/block/sda/size"), std::string::npos) << w[1].message;
  EXPECT_EQ(w[2].kind, WarningKind::io_error);  // symlink loop
  EXPECT_NE(w[2].message.find("sdc"), std::string::npos) << w[2].message;
}

TEST(StorageProbe, NoBlockFolderOrMountinfoIsSilent) {
  FixtureBuilder f;
  f.file("/proc/meminfo", "MemTotal: 1024 kB\n");
  auto system = open_fixture(f);
  const Inventory inv = probe(*system);
  EXPECT_TRUE(inv.system.storage.empty());
  EXPECT_TRUE(warnings_of(inv, "storage").empty());
}

// --- load time ------------------------------------------------------------------

TEST(LoadTime, FromOneDevice) {
  const StorageDevice nvme = disk("nvme0n1", StorageKind::nvme, 1, "x", "0000:01:00.0", 0, 7.0, "pcie_link", {});
  const auto e = estimate_load_time(nvme, 140'000'000'000ull);
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_DOUBLE_EQ(e->seconds, 20.0);
  EXPECT_EQ(e->read_bandwidth_gbps, 7.0);
  EXPECT_EQ(e->storage, "nvme0n1");
  EXPECT_EQ(e->bandwidth_source, "pcie_link");
  EXPECT_EQ(e->assumption,
            "a cold sequential read of 140 GB from nvme0n1 at 7 GB/s (the ceiling of its PCIe link; the drive itself "
            "may be slower)");
  EXPECT_EQ(estimate_load_time(nvme, 0).error().kind, ErrorKind::invalid_input);
  const auto nfs = estimate_load_time(network("10.0.0.1:/m", "nfs4", "/m"), 1000);
  ASSERT_FALSE(nfs);
  EXPECT_EQ(nfs.error().kind, ErrorKind::unsupported);
}

TEST(LoadTime, FromTheRegistryByPath) {
  const auto system = machine();
  const AcceleratorRegistry registry = DetectBuilder{}.detect(*system);
  const std::uint64_t llama_70b_bf16 = 141'000'000'000ull;

  // /models spans both NVMe drives (RAID0): the slower one is assumed.
  const auto models = estimate_load_time(registry, llama_70b_bf16, "/models/llama-3.1-70b/model.safetensors");
  ASSERT_TRUE(models) << models.error().message;
  EXPECT_EQ(models->storage, "nvme0n1");
  EXPECT_NEAR(models->seconds, 141.0 / 7.4, 1e-9);
  EXPECT_NE(models->assumption.find("/models is a volume over 2 devices (nvme0n1, nvme1n1)"), std::string::npos)
      << models->assumption;

  // A bind mount of a folder of the same volume.
  EXPECT_EQ(estimate_load_time(registry, llama_70b_bf16, "/srv/llama/x")->storage, "nvme0n1");
  // "/modelsX" is not under /models: it is on / (LVM on the SATA SSD).
  const auto root = estimate_load_time(registry, llama_70b_bf16, "/modelsX/weights");
  ASSERT_TRUE(root);
  EXPECT_EQ(root->storage, "sda");
  EXPECT_EQ(root->bandwidth_source, "table");
  EXPECT_NE(root->assumption.find("a class default for ssd storage, not a measurement"), std::string::npos);

  // Without a path: the fastest local device, and the result says so.
  const auto fastest = estimate_load_time(registry, llama_70b_bf16);
  ASSERT_TRUE(fastest);
  EXPECT_EQ(fastest->storage, "nvme1n1");
  EXPECT_NE(fastest->assumption.find("no model path was given"), std::string::npos);

  EXPECT_EQ(estimate_load_time(registry, llama_70b_bf16, "/datasets/llama").error().kind, ErrorKind::unsupported);
  EXPECT_EQ(estimate_load_time(registry, llama_70b_bf16, "models/x").error().kind, ErrorKind::invalid_input);
  EXPECT_EQ(estimate_load_time(registry, 0, "/models/x").error().kind, ErrorKind::invalid_input);
  EXPECT_EQ(estimate_load_time(AcceleratorRegistry{}, 1000).error().kind, ErrorKind::not_found);
}

}  // namespace
