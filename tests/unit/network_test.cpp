// RDMA network probe: sysfs parsers, every port of every device, bad input,
// symlink resolution, PCI paths and NIC <-> accelerator affinity.
#include <gtest/gtest.h>

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

TEST(NetworkParsers, Rate) {
  EXPECT_EQ(parsers::parse_ib_rate("400 Gb/sec (4X NDR)\n"), 400.0);
  EXPECT_EQ(parsers::parse_ib_rate("100 Gb/sec (2X HDR)"), 100.0);
  EXPECT_EQ(parsers::parse_ib_rate("2.5 Gb/sec (1X SDR)"), 2.5);
  EXPECT_EQ(parsers::parse_ib_rate("56 Gb/sec (4X FDR)"), 56.0);
  EXPECT_EQ(parsers::parse_ib_rate("10 Gb/sec (4X)"), 10.0);  // old kernels print no speed name
  for (const char* bad : {"", "fast", "400 Mb/sec (4X)", "-5 Gb/sec (1X)", "0 Gb/sec (4X SDR)", "1e9 Gb/sec",
                          "999999999 Gb/sec (4X)", "Gb/sec", "\x01\x02"})
    EXPECT_EQ(parsers::parse_ib_rate(bad), std::nullopt) << bad;
}

TEST(NetworkParsers, NumberedValue) {
  const auto active = parsers::parse_numbered_value("4: ACTIVE\n");
  ASSERT_TRUE(active);
  EXPECT_EQ(active->code, 4u);
  EXPECT_EQ(active->name, "ACTIVE");
  const auto phy = parsers::parse_numbered_value("7: Phy Test");
  ASSERT_TRUE(phy);
  EXPECT_EQ(phy->name, "Phy Test");
  EXPECT_EQ(parsers::parse_numbered_value("ACTIVE"), std::nullopt);
  EXPECT_EQ(parsers::parse_numbered_value(": ACTIVE"), std::nullopt);
  EXPECT_EQ(parsers::parse_numbered_value("99999999999: X"), std::nullopt);
  EXPECT_EQ(parsers::parse_numbered_value("x4: ACTIVE"), std::nullopt);
}

NetworkPort port(std::string device, std::uint32_t number, std::string kind, std::string state,
                 std::optional<double> rate, std::string layer, std::string pci, std::int32_t numa, std::string netdev,
                 std::string phys, std::string driver) {
  NetworkPort p;
  p.device = std::move(device);
  p.port = number;
  p.kind = std::move(kind);
  p.state = std::move(state);
  p.rate_gbps = rate;
  p.link_layer = std::move(layer);
  p.pci_bus_id = std::move(pci);
  p.numa_node = numa;
  p.netdev = std::move(netdev);
  p.phys_state = std::move(phys);
  p.driver = std::move(driver);
  return p;
}

TEST(NetworkProbe, EveryPortOfTheFixtureMachine) {
  auto system = FixtureSystem::open((hwaccel::testing::fixtures_root() / "machines" / "xeon-ib-roce-nvme-nfs").string());
  ASSERT_TRUE(system) << system.error().message;
  const Inventory inv = probe(**system);
  const std::vector<NetworkPort> expected = {
      port("mlx4_0", 1, "roce_v1", "ACTIVE", 40.0, "Ethernet", "0000:b1:00.0", 1, "enp177s0", "LinkUp", "mlx4_core"),
      // Port 2 of the same function: down, so no rate; no GID type readable, so the RoCE version is unknown;
      // its netdev found by dev_port (mlx4 names the second port "...d1").
      port("mlx4_0", 2, "roce", "DOWN", std::nullopt, "Ethernet", "0000:b1:00.0", 1, "enp177s0d1", "Disabled",
           "mlx4_core"),
      port("mlx5_0", 1, "infiniband", "ACTIVE", 400.0, "InfiniBand", "0000:19:00.0", 0, "ib0", "LinkUp", "mlx5_core"),
      port("mlx5_1", 1, "infiniband", "DOWN", std::nullopt, "InfiniBand", "0000:98:00.0", 1, "ib1", "Disabled",
           "mlx5_core"),
      port("mlx5_2", 1, "roce_v2", "ACTIVE", 100.0, "Ethernet", "0000:31:00.0", 0, "ens3f0np0", "LinkUp", "mlx5_core"),
  };
  EXPECT_EQ(inv.system.network, expected);
  EXPECT_TRUE(warnings_of(inv, "network").empty());
}

TEST(NetworkProbe, NoRdmaStackIsSilent) {
  FixtureBuilder f;
  f.file("/proc/meminfo", "MemTotal: 1024 kB\n");
  auto system = open_fixture(f);
  const Inventory inv = probe(*system);
  EXPECT_TRUE(inv.system.network.empty());
  EXPECT_TRUE(warnings_of(inv, "network").empty());
}

TEST(NetworkProbe, IwarpEfaAndSoftwareDevices) {
  FixtureBuilder f;
  // Intel E810 in iWARP mode: node type RNIC, Ethernet link layer.
  const std::string e810 = "/sys/devices/pci0000:4a/0000:4a:02.0/0000:4b:00.0";
  f.file(e810 + "/numa_node", "0\n")
      .link(e810 + "/driver", "../../../../bus/pci/drivers/ice")
      .link("/sys/bus/pci/devices/0000:4b:00.0", "../../../devices/pci0000:4a/0000:4a:02.0/0000:4b:00.0")
      .file(e810 + "/infiniband/iwp75s0f0/node_type", "4: RNIC\n")
      .file(e810 + "/infiniband/iwp75s0f0/ports/1/state", "4: ACTIVE\n")
      .file(e810 + "/infiniband/iwp75s0f0/ports/1/phys_state", "5: LinkUp\n")
      .file(e810 + "/infiniband/iwp75s0f0/ports/1/rate", "100 Gb/sec (4X EDR)\n")
      .file(e810 + "/infiniband/iwp75s0f0/ports/1/link_layer", "Ethernet\n")
      .link(e810 + "/infiniband/iwp75s0f0/device", "../../../0000:4b:00.0")
      .file(e810 + "/net/ens1f0/dev_port", "0\n")
      .file(e810 + "/net/ens1f1/dev_port", "1\n")
      .link("/sys/class/infiniband/iwp75s0f0", "../../devices/pci0000:4a/0000:4a:02.0/0000:4b:00.0/infiniband/iwp75s0f0");
  // AWS EFA: recognised by its driver; link layer "Unknown".
  const std::string efa = "/sys/devices/pci0000:00/0000:00:06.0";
  f.file(efa + "/numa_node", "-1\n")
      .link(efa + "/driver", "../../../bus/pci/drivers/efa")
      .link("/sys/bus/pci/devices/0000:00:06.0", "../../../devices/pci0000:00/0000:00:06.0")
      .file(efa + "/infiniband/rdmap0s6/node_type", "7: unspecified\n")
      .file(efa + "/infiniband/rdmap0s6/ports/1/state", "4: ACTIVE\n")
      .file(efa + "/infiniband/rdmap0s6/ports/1/phys_state", "5: LinkUp\n")
      .file(efa + "/infiniband/rdmap0s6/ports/1/rate", "100 Gb/sec (4X EDR)\n")
      .file(efa + "/infiniband/rdmap0s6/ports/1/link_layer", "Unknown\n")
      .link("/sys/class/infiniband/rdmap0s6", "../../devices/pci0000:00/0000:00:06.0/infiniband/rdmap0s6");
  // Soft-RoCE over a virtual netdev: no PCI function behind it.
  f.file("/sys/devices/virtual/infiniband/rxe0/node_type", "1: CA\n")
      .file("/sys/devices/virtual/infiniband/rxe0/ports/1/state", "4: ACTIVE\n")
      .file("/sys/devices/virtual/infiniband/rxe0/ports/1/phys_state", "5: LinkUp\n")
      .file("/sys/devices/virtual/infiniband/rxe0/ports/1/rate", "10 Gb/sec (1X QDR)\n")
      .file("/sys/devices/virtual/infiniband/rxe0/ports/1/link_layer", "Ethernet\n")
      .file("/sys/devices/virtual/infiniband/rxe0/ports/1/gid_attrs/types/0", "IB/RoCE v1\n")
      .file("/sys/devices/virtual/infiniband/rxe0/ports/1/gid_attrs/types/1", "RoCE v2\n")
      .file("/sys/devices/virtual/infiniband/rxe0/ports/1/gid_attrs/ndevs/1", "eth0\n")
      .link("/sys/class/infiniband/rxe0", "../../devices/virtual/infiniband/rxe0");
  auto system = open_fixture(f);
  const Inventory inv = probe(*system);
  ASSERT_EQ(inv.system.network.size(), 3u);
  const NetworkPort& iwarp = inv.system.network[0];
  EXPECT_EQ(iwarp.device, "iwp75s0f0");
  EXPECT_EQ(iwarp.kind, "iwarp");
  EXPECT_EQ(iwarp.pci_bus_id, "0000:4b:00.0");
  EXPECT_EQ(iwarp.driver, "ice");
  EXPECT_EQ(iwarp.netdev, "ens1f0");
  const NetworkPort& efa_port = inv.system.network[1];
  EXPECT_EQ(efa_port.device, "rdmap0s6");
  EXPECT_EQ(efa_port.kind, "efa");
  EXPECT_EQ(efa_port.numa_node, std::nullopt);  // sysfs says -1
  EXPECT_EQ(efa_port.rate_gbps, 100.0);
  const NetworkPort& soft = inv.system.network[2];
  EXPECT_EQ(soft.device, "rxe0");
  EXPECT_EQ(soft.kind, "roce_v2");
  EXPECT_EQ(soft.pci_bus_id, std::nullopt);
  EXPECT_EQ(soft.driver, std::nullopt);
  EXPECT_EQ(soft.netdev, "eth0");
  EXPECT_TRUE(warnings_of(inv, "network").empty());
}

TEST(NetworkProbe, BadFilesBecomeWarningsAndTheRestIsReported) {
  FixtureBuilder f;
  const std::string good = "/sys/devices/virtual/infiniband/good0";
  f.file(good + "/node_type", "1: CA\n")
      .file(good + "/ports/1/state", "4: ACTIVE\n")
      .file(good + "/ports/1/phys_state", "5: LinkUp\n")
      .file(good + "/ports/1/rate", "fast\n")
      .file(good + "/ports/1/link_layer", "InfiniBand\n")
      .file(good + "/ports/2/state", "garbage\n")
      .file(good + "/ports/2/phys_state", "?\n")
      .file(good + "/ports/2/link_layer", "InfiniBand\n")
      .file(good + "/ports/3/phys_state", "5: LinkUp\n")
      .file(good + "/ports/3/link_layer", "InfiniBand\n")
      .file(good + "/ports/bogus", "")
      .link("/sys/class/infiniband/good0", "../../devices/virtual/infiniband/good0");
  f.file("/sys/devices/virtual/infiniband/noports0/node_type", "CA\n")
      .link("/sys/class/infiniband/noports0", "../../devices/virtual/infiniband/noports0");
  f.file("/sys/devices/virtual/infiniband/empty0/ports/readme", "")
      .link("/sys/class/infiniband/empty0", "../../devices/virtual/infiniband/empty0");
  auto system = open_fixture(f);
  const Inventory inv = probe(*system);

  ASSERT_EQ(inv.system.network.size(), 3u);
  EXPECT_EQ(inv.system.network[0].port, 1u);
  EXPECT_EQ(inv.system.network[0].state, "ACTIVE");
  EXPECT_EQ(inv.system.network[0].rate_gbps, std::nullopt);
  EXPECT_EQ(inv.system.network[0].kind, "infiniband");
  EXPECT_EQ(inv.system.network[1].port, 2u);
  EXPECT_EQ(inv.system.network[1].state, std::nullopt);
  EXPECT_EQ(inv.system.network[1].phys_state, std::nullopt);
  EXPECT_EQ(inv.system.network[2].port, 3u);
  EXPECT_EQ(inv.system.network[2].state, std::nullopt);

  const auto w = warnings_of(inv, "network");
  std::vector<std::pair<WarningKind, std::string>> got;
  for (const auto& x : w) got.emplace_back(x.kind, x.message);
  ASSERT_EQ(got.size(), 8u) << ::testing::PrintToString(got);
  EXPECT_EQ(got[0].first, WarningKind::parse_error);  // empty0: no numbered port
  EXPECT_NE(got[0].second.find("empty0/ports lists no numbered port"), std::string::npos);
  EXPECT_EQ(got[1].first, WarningKind::parse_error);  // good0 port 1 rate
  EXPECT_NE(got[1].second.find("ports/1/rate"), std::string::npos);
  EXPECT_NE(got[1].second.find("\"fast\""), std::string::npos);
  EXPECT_EQ(got[2].first, WarningKind::parse_error);  // port 2 state
  EXPECT_NE(got[2].second.find("ports/2/state"), std::string::npos);
  EXPECT_EQ(got[3].first, WarningKind::parse_error);  // port 2 phys_state
  EXPECT_NE(got[3].second.find("ports/2/phys_state"), std::string::npos);
  EXPECT_EQ(got[4].first, WarningKind::io_error);     // port 3: no state file
  EXPECT_NE(got[4].second.find("ports/3/state"), std::string::npos);
  EXPECT_EQ(got[5].first, WarningKind::io_error);     // port 3: link up but no rate file
  EXPECT_NE(got[5].second.find("ports/3/rate"), std::string::npos);
  EXPECT_EQ(got[6].first, WarningKind::parse_error);  // noports0 node_type
  EXPECT_NE(got[6].second.find("noports0/node_type"), std::string::npos);
  EXPECT_EQ(got[7].first, WarningKind::io_error);     // noports0 has no ports/
  EXPECT_NE(got[7].second.find("noports0/ports"), std::string::npos);
}

// --- symlinks and PCI paths ---------------------------------------------------

TEST(Topology, ResolvesLinksThroughTheSystem) {
  FixtureBuilder f;
  f.file("/sys/devices/pci0000:16/0000:16:02.0/0000:17:00.0/infiniband/mlx5_0/node_type", "1: CA\n")
      .link("/sys/class/infiniband/mlx5_0", "../../devices/pci0000:16/0000:16:02.0/0000:17:00.0/infiniband/mlx5_0")
      .link("/sys/devices/pci0000:16/0000:16:02.0/0000:17:00.0/infiniband/mlx5_0/device", "../../../0000:17:00.0")
      .link("/loop/a", "b")
      .link("/loop/b", "a")
      .link("/sys/up", "../../../..")
      .link("/abs", "/sys/devices/pci0000:16")
      .link("/chain1", "chain2")
      .link("/chain2", "/abs/0000:16:02.0/");
  auto system = open_fixture(f);
  EXPECT_EQ(resolve_path(*system, "/").value_or("?"), "/");
  EXPECT_EQ(resolve_path(*system, "//sys///devices/").value_or("?"), "/sys/devices");
  EXPECT_EQ(resolve_path(*system, "/abs/0000:16:02.0").value_or("?"), "/sys/devices/pci0000:16/0000:16:02.0");
  EXPECT_EQ(resolve_path(*system, "/chain1/0000:17:00.0/infiniband").value_or("?"),
            "/sys/devices/pci0000:16/0000:16:02.0/0000:17:00.0/infiniband");
  EXPECT_EQ(resolve_path(*system, "/chain1/..").value_or("?"), "/sys/devices/pci0000:16");
  EXPECT_EQ(resolve_path(*system, "/sys/class/infiniband/mlx5_0").value_or("?"),
            "/sys/devices/pci0000:16/0000:16:02.0/0000:17:00.0/infiniband/mlx5_0");
  EXPECT_EQ(resolve_path(*system, "/sys/class/infiniband/mlx5_0/device/./infiniband/../").value_or("?"),
            "/sys/devices/pci0000:16/0000:16:02.0/0000:17:00.0");
  EXPECT_EQ(resolve_path(*system, "/loop/a").error().kind, ErrorKind::symlink_loop);
  EXPECT_EQ(resolve_path(*system, "/sys/up").error().kind, ErrorKind::escapes_root);
  EXPECT_EQ(resolve_path(*system, "/sys/missing").error().kind, ErrorKind::not_found);
  EXPECT_EQ(resolve_path(*system, "sys/class").error().kind, ErrorKind::invalid_input);
}

TEST(Topology, PciPathOfAResolvedPath) {
  const auto nic = pci_path_of("/sys/devices/pci0000:16/0000:16:02.0/0000:17:00.0/0000:18:00.0/0000:19:00.0/infiniband/mlx5_0");
  ASSERT_TRUE(nic);
  EXPECT_EQ(nic->host_bridge, "pci0000:16");
  ASSERT_EQ(nic->chain.size(), 4u);
  EXPECT_EQ(nic->chain.back().to_string(), "0000:19:00.0");
  // SCSI addresses and device names on the path are not PCI functions.
  const auto disk = pci_path_of("/sys/devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sda");
  ASSERT_TRUE(disk);
  ASSERT_EQ(disk->chain.size(), 1u);
  EXPECT_EQ(disk->chain[0].to_string(), "0000:00:17.0");
  EXPECT_FALSE(pci_path_of("/sys/devices/virtual/block/md127"));
  EXPECT_FALSE(pci_path_of("/sys/devices/platform/soc/1c00000.nvme"));
  EXPECT_FALSE(pci_path_of("/sys/class/net/eth0"));
  EXPECT_FALSE(pci_path_of("/sys/devices/pci0000:00/"));
}

PciPath path(std::string bridge, std::initializer_list<const char*> chain) {
  PciPath p;
  p.host_bridge = std::move(bridge);
  for (const char* a : chain) p.chain.push_back(*PciAddress::parse(a));
  return p;
}

TEST(Topology, ProximityRanksPathsAsNcclDoes) {
  const auto nic = path("pci0000:16", {"0000:16:02.0", "0000:17:00.0", "0000:18:00.0", "0000:19:00.0"});
  const auto same_switch = path("pci0000:16", {"0000:16:02.0", "0000:17:00.0", "0000:18:02.0", "0000:1b:00.0"});
  const auto same_bridge = path("pci0000:16", {"0000:16:03.0", "0000:1c:00.0"});
  const auto other_bridge = path("pci0000:30", {"0000:30:01.0", "0000:31:00.0"});
  const auto root_complex_device = path("pci0000:16", {"0000:16:05.0"});
  EXPECT_EQ(pci_proximity(nic, same_switch), LinkKind::pcie_switch);
  EXPECT_EQ(pci_proximity(same_switch, nic), LinkKind::pcie_switch);
  EXPECT_EQ(pci_proximity(nic, same_bridge), LinkKind::host_bridge);
  EXPECT_EQ(pci_proximity(nic, root_complex_device), LinkKind::host_bridge);
  EXPECT_EQ(pci_proximity(nic, other_bridge), std::nullopt);
}

// --- affinity -----------------------------------------------------------------

class Affinity : public ::testing::Test {
 protected:
  void SetUp() override {
    // Socket 0: host bridge 16 with a switch (NIC 19:00.0 and a GPU slot
    // 1b:00.0 below it) and a second root port (1c:00.0); host bridge 30
    // (GPU 31:00.0, NIC 32:00.0). Socket 1: host bridge 97 (NIC 98:00.0).
    function("/sys/devices/pci0000:16/0000:16:02.0/0000:17:00.0/0000:18:00.0/0000:19:00.0", "0");
    function("/sys/devices/pci0000:16/0000:16:02.0/0000:17:00.0/0000:18:02.0/0000:1b:00.0", "0");
    function("/sys/devices/pci0000:16/0000:16:02.0/0000:17:00.0/0000:18:03.0/0000:1d:00.0", "0");
    function("/sys/devices/pci0000:16/0000:16:03.0/0000:1c:00.0", "0");
    function("/sys/devices/pci0000:30/0000:30:01.0/0000:31:00.0", "0");
    function("/sys/devices/pci0000:30/0000:30:02.0/0000:32:00.0", "0");
    function("/sys/devices/pci0000:97/0000:97:02.0/0000:98:00.0", "1");
    system_ = open_fixture(builder_);
  }

  void function(const std::string& dir, const char* numa) {
    builder_.file(dir + "/numa_node", std::string(numa) + "\n");
    const std::string address = dir.substr(dir.rfind('/') + 1);
    builder_.link("/sys/bus/pci/devices/" + address, "../../.." + dir.substr(4));
  }

  static DeviceProfile gpu(Backend backend, std::uint32_t index, std::optional<std::string> pci,
                           std::optional<std::int32_t> numa = std::nullopt) {
    DeviceProfile d;
    d.backend = backend;
    d.family = Family::gpu;
    d.index = index;
    d.id = device_id(backend, index);
    d.pci_bus_id = std::move(pci);
    d.numa_node = numa;
    return d;
  }

  static NetworkPort nic(std::string name, std::optional<std::string> pci, std::optional<std::int32_t> numa) {
    NetworkPort p;
    p.device = std::move(name);
    p.kind = "infiniband";
    p.pci_bus_id = std::move(pci);
    p.numa_node = numa;
    return p;
  }

  FixtureBuilder builder_;
  std::unique_ptr<FixtureSystem> system_;
};

TEST_F(Affinity, NearestRuleWinsPerNic) {
  Inventory inv;
  DeviceProfile cpu;
  cpu.id = "cpu:0";
  cpu.family = Family::cpu;
  cpu.numa_node = 0;
  inv.devices.push_back(cpu);
  inv.devices.push_back(gpu(Backend::cuda, 0, "0000:1b:00.0"));       // same switch as mlx5_0
  inv.devices.push_back(gpu(Backend::cuda, 1, "0000:1c:00.0"));       // same host bridge only
  inv.devices.push_back(gpu(Backend::cuda, 2, "0000:31:00.0"));       // host bridge 30
  DeviceProfile hidden = gpu(Backend::cuda, 3, "0000:1d:00.0");       // same switch, but not visible
  hidden.visible = false;
  inv.devices.push_back(hidden);
  inv.devices.push_back(gpu(Backend::rocm, 0, std::nullopt, 1));      // no PCI address, NUMA 1
  inv.system.network = {nic("mlx5_0", "0000:19:00.0", 0), nic("mlx5_1", "0000:32:00.0", 0),
                        nic("mlx5_2", "0000:98:00.0", 1), nic("rxe0", std::nullopt, 7)};
  assign_network_affinity(inv, *system_);

  const auto& ports = inv.system.network;
  EXPECT_EQ(ports[0].near_devices, std::vector<std::string>{"cuda:0"});
  EXPECT_EQ(ports[0].affinity, LinkKind::pcie_switch);
  EXPECT_EQ(ports[1].near_devices, std::vector<std::string>{"cuda:2"});
  EXPECT_EQ(ports[1].affinity, LinkKind::host_bridge);
  EXPECT_EQ(ports[2].near_devices, std::vector<std::string>{"rocm:0"});
  EXPECT_EQ(ports[2].affinity, LinkKind::numa_node);
  EXPECT_TRUE(ports[3].near_devices.empty());
  EXPECT_EQ(ports[3].affinity, std::nullopt);

  // Idempotent: finalize may run more than once (lazy detection). The first
  // run also resolves visibility from the (empty) environment, which shows
  // cuda:3 again; a second run must change nothing more.
  finalize_inventory(inv, *system_, DetectOptions{});
  const auto before = inv;
  finalize_inventory(inv, *system_, DetectOptions{});
  EXPECT_EQ(inv, before);
}

TEST_F(Affinity, NumaFromSysfsWhenTheDetectorDidNotSayAndSeveralAtOneTier) {
  Inventory inv;
  inv.devices.push_back(gpu(Backend::cuda, 0, "0000:31:00.0"));  // NUMA 0 read from sysfs
  inv.devices.push_back(gpu(Backend::cuda, 1, "0000:1c:00.0"));  // NUMA 0 read from sysfs
  inv.devices.push_back(gpu(Backend::cuda, 2, "0000:98:00.0"));  // NUMA 1
  inv.system.network = {nic("ext0", "0000:ff:00.0", 0)};         // a NIC sysfs does not know
  assign_network_affinity(inv, *system_);
  EXPECT_EQ(inv.system.network[0].near_devices, (std::vector<std::string>{"cuda:0", "cuda:1"}));
  EXPECT_EQ(inv.system.network[0].affinity, LinkKind::numa_node);
}

}  // namespace
