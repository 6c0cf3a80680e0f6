// What-if analysis: registries with devices added, removed or replaced, kept
// consistent (links, interconnects, NIC affinity) without re-detecting.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../test_support.hpp"

import hwaccel;

namespace {

using namespace hwaccel;

using hwaccel::testing::GiB;

DeviceProfile gpu(Backend backend, std::uint32_t index, std::string name, std::uint64_t memory) {
  DeviceProfile d;
  d.backend = backend;
  d.family = Family::gpu;
  d.index = index;
  d.id = device_id(backend, index);
  d.name = std::move(name);
  d.memory_bytes = memory;
  return d;
}

// A 4-GPU NVLink box with an NVSwitch fabric, one NIC near cuda:0 and cuda:1,
// host facts and a detection warning.
AcceleratorRegistry box() {
  Inventory inv;
  DeviceProfile cpu;
  cpu.id = "cpu:0";
  cpu.memory_bytes = 512 * GiB;
  inv.devices.push_back(cpu);
  for (std::uint32_t i = 0; i < 4; ++i) {
    DeviceProfile d = gpu(Backend::cuda, i, "H100", 80 * GiB);
    d.pci_bus_id = "0000:1" + std::to_string(i) + ":00.0";
    d.numa_node = i < 2 ? 0 : 1;
    inv.devices.push_back(d);
  }
  inv.links = {DeviceLink{"cuda:0", "cuda:1", LinkKind::nvlink, 18, std::nullopt, 450.0, "nvidia-smi topo -m"},
               DeviceLink{"cuda:0", "cuda:2", LinkKind::nvlink, 18, std::nullopt, 450.0, "nvidia-smi topo -m"},
               DeviceLink{"cuda:2", "cuda:3", LinkKind::nvlink, 18, std::nullopt, 450.0, "nvidia-smi topo -m"}};
  inv.interconnects = {Interconnect{"nvswitch", "NVSwitch", {"cuda:0", "cuda:1", "cuda:2", "cuda:3"}, 450.0, 4, "sysfs"},
                       Interconnect{"nvlink_bridge", "bridge", {"cuda:2", "cuda:3"}, 112.5, std::nullopt, "topo"}};
  NetworkPort nic;
  nic.device = "mlx5_0";
  nic.kind = "infiniband";
  nic.near_devices = {"cuda:0", "cuda:1"};
  nic.affinity = LinkKind::pcie_switch;
  inv.system.network.push_back(nic);
  CpuInfo info;
  info.model_name = "Xeon";
  inv.system.cpu = info;
  inv.warnings.push_back(Warning{"cuda", WarningKind::degraded, "retried without compute_cap"});
  return AcceleratorRegistry(inv);
}

std::vector<std::string> ids(const AcceleratorRegistry& r) {
  std::vector<std::string> out;
  for (const auto& d : r.devices()) out.push_back(d.id);
  return out;
}

TEST(WhatIf, AddAssignsIdsKeepsOrderAndHostFacts) {
  const auto base = box();
  const auto before = to_json(base);
  DeviceProfile extra = gpu(Backend::cuda, 0, "H200", 141 * GiB);
  extra.id.clear();
  DeviceProfile mi300 = gpu(Backend::rocm, 0, "MI300X", 192 * GiB);
  mi300.id.clear();
  auto r = base.what_if_add({extra, mi300}, {DeviceLink{"cuda:4", "cuda:3", LinkKind::nvlink, 18, std::nullopt, 450.0, "what-if"}});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(ids(*r), (std::vector<std::string>{"cpu:0", "cuda:0", "cuda:1", "cuda:2", "cuda:3", "cuda:4", "rocm:0"}));
  EXPECT_EQ(r->links().back().a, "cuda:3");  // ends put in order
  EXPECT_EQ(r->links().back().b, "cuda:4");
  EXPECT_EQ(r->system(), base.system());
  EXPECT_EQ(r->warnings().size(), 1u);
  EXPECT_EQ(r->total_accelerator_memory(), (4 * 80 + 141 + 192) * GiB);
  EXPECT_EQ(to_json(base), before);  // the original is untouched

  EXPECT_EQ(base.what_if_add({gpu(Backend::cuda, 1, "dup", GiB)}).error().kind, ErrorKind::invalid_input);
  EXPECT_EQ(base.what_if_add({}, {DeviceLink{"cuda:0", "cuda:9", LinkKind::nvlink, {}, {}, {}, ""}}).error().kind,
            ErrorKind::invalid_input);
  EXPECT_EQ(base.what_if_add({}, {DeviceLink{"cuda:0", "cuda:0", LinkKind::nvlink, {}, {}, {}, ""}}).error().kind,
            ErrorKind::invalid_input);
}

TEST(WhatIf, RemoveDropsLinksFabricsAndNicReferences) {
  const auto base = box();
  const std::vector<std::string> gone = {"cuda:0", "cuda:3"};
  auto r = base.what_if_remove(gone);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(ids(*r), (std::vector<std::string>{"cpu:0", "cuda:1", "cuda:2"}));
  EXPECT_TRUE(r->links().empty());  // every link touched cuda:0 or cuda:3
  ASSERT_EQ(r->interconnects().size(), 1u);  // the bridge lost a member and is no fabric any more
  EXPECT_EQ(r->interconnects()[0].device_ids, (std::vector<std::string>{"cuda:1", "cuda:2"}));
  EXPECT_EQ(r->system().network[0].near_devices, std::vector<std::string>{"cuda:1"});
  EXPECT_EQ(r->system().network[0].affinity, LinkKind::pcie_switch);
  EXPECT_EQ(r->system().cpu, base.system().cpu);

  auto none_near = base.what_if_remove_if([](const DeviceProfile& d) { return d.numa_node == 0; });
  EXPECT_EQ(ids(none_near), (std::vector<std::string>{"cpu:0", "cuda:2", "cuda:3"}));
  EXPECT_TRUE(none_near.system().network[0].near_devices.empty());
  EXPECT_EQ(none_near.system().network[0].affinity, std::nullopt);

  // The CPU can go too; nothing is re-detected to put it back.
  auto no_cpu = base.what_if_remove_if([](const DeviceProfile& d) { return d.family == Family::cpu; });
  EXPECT_EQ(no_cpu.devices().size(), 4u);
  EXPECT_EQ(no_cpu.find("cpu:0"), nullptr);

  const std::vector<std::string> unknown = {"cuda:7"};
  EXPECT_EQ(base.what_if_remove(unknown).error().kind, ErrorKind::invalid_input);
}

TEST(WhatIf, ReplaceInTheSameSlot) {
  const auto base = box();
  DeviceProfile h200 = gpu(Backend::cuda, 0, "H200", 141 * GiB);
  h200.pci_bus_id.reset();

  // Default: a different device has different links.
  auto dropped = base.what_if_replace("cuda:0", h200);
  ASSERT_TRUE(dropped) << dropped.error().message;
  EXPECT_EQ(dropped->find("cuda:0")->name, "H200");
  EXPECT_EQ(dropped->find("cuda:0")->pci_bus_id, "0000:10:00.0");  // same slot
  EXPECT_EQ(dropped->find("cuda:0")->numa_node, 0);
  ASSERT_EQ(dropped->links().size(), 1u);
  EXPECT_EQ(dropped->links()[0].a, "cuda:2");
  EXPECT_EQ(dropped->interconnects()[0].device_ids, (std::vector<std::string>{"cuda:1", "cuda:2", "cuda:3"}));
  EXPECT_EQ(dropped->system().network[0].near_devices, (std::vector<std::string>{"cuda:0", "cuda:1"}));

  // Same fabric: keep the links.
  auto kept = base.what_if_replace("cuda:0", h200, AcceleratorRegistry::LinkPolicy::keep);
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->links().size(), 3u);
  EXPECT_EQ(kept->inventory().interconnects, base.inventory().interconnects);

  // Another backend gets its own id and every reference follows it.
  DeviceProfile mi300 = gpu(Backend::rocm, 5, "MI300X", 192 * GiB);
  mi300.family = Family::gpu;
  auto swapped = base.what_if_replace("cuda:1", mi300, AcceleratorRegistry::LinkPolicy::keep);
  ASSERT_TRUE(swapped);
  EXPECT_EQ(ids(*swapped), (std::vector<std::string>{"cpu:0", "cuda:0", "cuda:2", "cuda:3", "rocm:0"}));
  EXPECT_EQ(swapped->find("rocm:0")->pci_bus_id, "0000:11:00.0");
  ASSERT_EQ(swapped->links().size(), 3u);
  EXPECT_EQ(swapped->links()[1].a, "cuda:0");  // cuda:0 - cuda:2 sorts first
  EXPECT_EQ(swapped->links()[1].b, "rocm:0");
  EXPECT_EQ(swapped->interconnects()[0].device_ids,
            (std::vector<std::string>{"cuda:0", "rocm:0", "cuda:2", "cuda:3"}));
  EXPECT_EQ(swapped->system().network[0].near_devices, (std::vector<std::string>{"cuda:0", "rocm:0"}));

  EXPECT_EQ(base.what_if_replace("cuda:9", h200).error().kind, ErrorKind::invalid_input);
}

TEST(WhatIf, ReplanningSeesTheNewDevices) {
  // The planner's inputs change with the what-if registry, not the original.
  const auto base = box();
  const auto r = base.what_if_remove_if([](const DeviceProfile& d) { return d.backend == Backend::cuda; });
  EXPECT_FALSE(r.has_accelerator());
  EXPECT_EQ(r.best_available()->id, "cpu:0");
  EXPECT_TRUE(base.has_accelerator());
  EXPECT_EQ(base.best_available()->id, "cuda:0");
}

}  // namespace
