// The published device-spec table and the matcher from detected devices.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "../test_support.hpp"

import hwaccel;

namespace {

using namespace hwaccel;

using hwaccel::testing::MiB;
using hwaccel::testing::GiB;

TEST(Spec, TableIsWellFormed) {
  std::set<std::string> ids, names;
  for (const auto& s : device_specs()) {
    EXPECT_TRUE(ids.insert(std::string(s.id)).second) << "duplicate id " << s.id;
    EXPECT_TRUE(names.insert(text::lower(s.name)).second) << "duplicate name " << s.name;
    EXPECT_GT(s.memory_bytes, 0u) << s.id;
    EXPECT_GT(s.memory_bandwidth_gbps, 0) << s.id;
    EXPECT_FALSE(s.source.empty()) << s.id;
    EXPECT_FALSE(s.match.empty()) << s.id;
    EXPECT_GE(s.devices_per_package, 1u);
    if (s.fabric) EXPECT_GE(s.fabric->domain_size, 2u) << s.id;
    // Dense figures only: fp8 is at most twice bf16, never the 4x of a sparse figure
    // (Trainium3's dense MXFP8 runs at 3.75x its BF16, as AWS documents).
    if (s.fp8_tflops && s.bf16_tflops && s.id != "trainium3-144gb")
      EXPECT_LE(*s.fp8_tflops, 2.05 * *s.bf16_tflops) << s.id;
    EXPECT_EQ(find_spec(s.id), &s);
    EXPECT_EQ(find_spec(s.name), &s);
  }
  EXPECT_GE(device_specs().size(), 45u);
}

TEST(Spec, DatasheetFigures) {
  const auto* h100 = find_spec("H100-SXM-80GB");
  ASSERT_TRUE(h100);
  EXPECT_EQ(h100->id, "h100-sxm5-80gb");
  EXPECT_EQ(h100->memory_bytes, 80 * GiB);
  EXPECT_EQ(h100->memory_bandwidth_gbps, 3350);
  EXPECT_DOUBLE_EQ(*h100->peak_tflops(ComputeType::bf16), 989.4);  // 1979 with sparsity
  EXPECT_DOUBLE_EQ(*h100->peak_tflops(ComputeType::fp8), 1978.9);
  ASSERT_TRUE(h100->fabric);
  EXPECT_EQ(h100->fabric->kind, "nvlink");
  EXPECT_EQ(*h100->fabric->bandwidth_gbps, 450);
  EXPECT_EQ(h100->fabric->domain_size, 8u);
  EXPECT_NEAR(*h100->host_link_gbps(), 63.0, 0.1);  // PCIe 5.0 x16
  const auto* t4 = find_spec("t4-16gb");
  ASSERT_TRUE(t4);
  EXPECT_FALSE(t4->peak_tflops(ComputeType::bf16));
  EXPECT_EQ(*t4->peak_tflops(ComputeType::fp16), 65);
  EXPECT_EQ(find_spec("mi300x_192gb"), find_spec("MI300X-192GB"));
  EXPECT_EQ(find_spec("MI250X")->devices_per_package, 2u);
  EXPECT_EQ(find_spec("nonexistent"), nullptr);
  EXPECT_EQ(find_spec(""), nullptr);
}

DeviceProfile gpu(Backend b, std::string name, std::optional<std::uint64_t> memory) {
  DeviceProfile d;
  d.backend = b;
  d.family = default_family(b);
  d.name = std::move(name);
  d.memory_bytes = memory;
  return d;
}

std::string_view matched(const DeviceProfile& d) {
  const auto* s = match_spec(d);
  return s ? s->id : std::string_view{"(none)"};
}

// Names as nvidia-smi, rocm-smi and hl-smi print them; memory as they report it.
TEST(Spec, MatchesDetectedDevicesByNameAndMemory) {
  EXPECT_EQ(matched(gpu(Backend::cuda, "NVIDIA H100 80GB HBM3", 81559 * MiB)), "h100-sxm5-80gb");
  EXPECT_EQ(matched(gpu(Backend::cuda, "NVIDIA H100 PCIe", 81559 * MiB)), "h100-pcie-80gb");
  EXPECT_EQ(matched(gpu(Backend::cuda, "NVIDIA H100 NVL", 95830 * MiB)), "h100-nvl-94gb");
  EXPECT_EQ(matched(gpu(Backend::cuda, "NVIDIA H200", 143771 * MiB)), "h200-sxm-141gb");
  EXPECT_EQ(matched(gpu(Backend::cuda, "NVIDIA A100-SXM4-40GB", 40960 * MiB)), "a100-sxm4-40gb");
  EXPECT_EQ(matched(gpu(Backend::cuda, "NVIDIA A100-SXM4-80GB", 81920 * MiB)), "a100-sxm4-80gb");
  EXPECT_EQ(matched(gpu(Backend::cuda, "NVIDIA A100 80GB PCIe", 81920 * MiB)), "a100-pcie-80gb");
  EXPECT_EQ(matched(gpu(Backend::cuda, "NVIDIA A100-PCIE-40GB", 40960 * MiB)), "a100-pcie-40gb");
  EXPECT_EQ(matched(gpu(Backend::cuda, "Tesla T4", 15360 * MiB)), "t4-16gb");
  EXPECT_EQ(matched(gpu(Backend::cuda, "Tesla V100-SXM2-16GB", 16160 * MiB)), "v100-sxm2-16gb");
  EXPECT_EQ(matched(gpu(Backend::cuda, "Tesla V100-SXM2-32GB", 32510 * MiB)), "v100-sxm2-32gb");
  EXPECT_EQ(matched(gpu(Backend::cuda, "NVIDIA GeForce RTX 4090", 24564 * MiB)), "rtx-4090-24gb");
  EXPECT_EQ(matched(gpu(Backend::cuda, "NVIDIA GeForce RTX 3090", 24576 * MiB)), "rtx-3090-24gb");
  EXPECT_EQ(matched(gpu(Backend::cuda, "NVIDIA GeForce RTX 5090", 32607 * MiB)), "rtx-5090-32gb");
  EXPECT_EQ(matched(gpu(Backend::cuda, "NVIDIA GeForce RTX 4080", 16376 * MiB)), "rtx-4080-16gb");
  EXPECT_EQ(matched(gpu(Backend::cuda, "NVIDIA GeForce RTX 3060", 12288 * MiB)), "rtx-3060-12gb");
  EXPECT_EQ(matched(gpu(Backend::cuda, "NVIDIA RTX A6000", 49140 * MiB)), "rtx-a6000-48gb");
  EXPECT_EQ(matched(gpu(Backend::cuda, "NVIDIA RTX 6000 Ada Generation", 49140 * MiB)), "rtx-6000-ada-48gb");
  EXPECT_EQ(matched(gpu(Backend::cuda, "NVIDIA L4", 23034 * MiB)), "l4-24gb");
  EXPECT_EQ(matched(gpu(Backend::cuda, "NVIDIA L40S", 46068 * MiB)), "l40s-48gb");
  EXPECT_EQ(matched(gpu(Backend::cuda, "NVIDIA A10G", 23028 * MiB)), "a10g-24gb");
  EXPECT_EQ(matched(gpu(Backend::rocm, "AMD Instinct MI300X", 196592 * MiB)), "mi300x-192gb");
  EXPECT_EQ(matched(gpu(Backend::rocm, "AMD Instinct MI250X", 65520 * MiB)), "mi250x-gcd-64gb");
  EXPECT_EQ(matched(gpu(Backend::gaudi, "HL-225", 98304 * MiB)), "gaudi2-96gb");
  EXPECT_EQ(matched(gpu(Backend::apple, "Apple M2 Max", 64 * GiB)), "apple-m2-max");
  EXPECT_EQ(matched(gpu(Backend::apple, "Apple M2", 16 * GiB)), "apple-m2");
  // The same GPU seen through Vulkan.
  EXPECT_EQ(matched(gpu(Backend::vulkan, "NVIDIA GeForce RTX 4090", 24564 * MiB)), "rtx-4090-24gb");
}

TEST(Spec, NeverConfusesOrGuesses) {
  // An A100 40 GB must not match an 80 GB entry, and the other way round.
  EXPECT_NE(matched(gpu(Backend::cuda, "NVIDIA A100-SXM4-80GB", 40960 * MiB)), "a100-sxm4-80gb");
  // Without memory, entries that differ only in memory are ambiguous.
  EXPECT_EQ(matched(gpu(Backend::cuda, "NVIDIA A100-SXM4", std::nullopt)), "(none)");
  // Memory far from any entry of that name.
  EXPECT_EQ(matched(gpu(Backend::cuda, "NVIDIA H100 80GB HBM3", 40 * GiB)), "(none)");
  // Unknown products, a GH200 (its own entry, not an H200), a 4090 D, wrong backend, CPUs.
  EXPECT_EQ(matched(gpu(Backend::cuda, "NVIDIA GeForce GTX 1080", 8 * GiB)), "(none)");
  EXPECT_EQ(matched(gpu(Backend::cuda, "NVIDIA GH200 480GB", 97871 * MiB)), "gh200-96gb");
  EXPECT_EQ(matched(gpu(Backend::cuda, "NVIDIA GeForce RTX 4090 D", 24564 * MiB)), "(none)");
  // Other products of those names are their own entries (the 4080 SUPER, the 3060 Ti
  // and 8 GB), or none (the 5090 D).
  EXPECT_EQ(matched(gpu(Backend::cuda, "NVIDIA GeForce RTX 4080 SUPER", 16376 * MiB)), "rtx-4080-super-16gb");
  EXPECT_EQ(matched(gpu(Backend::cuda, "NVIDIA GeForce RTX 3060 Ti", 8192 * MiB)), "rtx-3060-ti-8gb");
  EXPECT_EQ(matched(gpu(Backend::cuda, "NVIDIA GeForce RTX 3060", 8192 * MiB)), "rtx-3060-8gb");
  EXPECT_EQ(matched(gpu(Backend::cuda, "NVIDIA GeForce RTX 5090 D", 32607 * MiB)), "(none)");
  EXPECT_EQ(matched(gpu(Backend::cuda, "NVIDIA RTX 6000 Ada Generation", 49140 * MiB)), "rtx-6000-ada-48gb");
  EXPECT_EQ(matched(gpu(Backend::rocm, "NVIDIA H100 80GB HBM3", 80 * GiB)), "(none)");
  EXPECT_EQ(matched(gpu(Backend::cpu, "Intel(R) Xeon(R) Platinum 8480+", 2048 * GiB)), "(none)");
}

TEST(Spec, PciIdNarrowsFirst) {
  auto d = gpu(Backend::cuda, "NVIDIA Graphics Device", 81559 * MiB);
  d.properties["pci_vendor_id"] = "0x10de";
  d.properties["pci_device_id"] = "0x2330";
  EXPECT_EQ(matched(d), "h100-sxm5-80gb");
  d.properties["pci_device_id"] = "0x20b0";  // A100 40GB id, 80 GiB memory: implausible
  EXPECT_EQ(matched(d), "(none)");
  SpecQuery q;
  q.backend = Backend::cuda;
  q.name = "NVIDIA A100";
  q.memory_bytes = 40960 * MiB;
  q.pci_vendor_id = 0x10de;
  q.pci_device_id = 0x20f1;
  ASSERT_TRUE(match_spec(q));
  EXPECT_EQ(match_spec(q)->id, "a100-pcie-40gb");
}

// Only the ids of a PCI function: its attributes, else its uevent file.
TEST(Spec, PciIdsComeFromTheAttributesOrTheUevent) {
  hwaccel::testing::FixtureBuilder fixture;
  fixture.file("/sys/bus/pci/devices/0000:17:00.0/vendor", "0x10de\n")
      .file("/sys/bus/pci/devices/0000:17:00.0/device", "0x2330\n")
      .file("/sys/bus/pci/devices/0000:17:00.0/uevent", "DRIVER=nvidia\nPCI_ID=1002:73BF\n")
      .file("/sys/bus/pci/devices/0000:31:00.0/vendor", "0x10de\n")
      .file("/sys/bus/pci/devices/0000:31:00.0/uevent", "DRIVER=nvidia\nPCI_ID=10DE:20B0\n")
      .file("/sys/bus/pci/devices/0000:4b:00.0/device", "0x99999\n");
  auto system = FixtureSystem::open(fixture.write());
  ASSERT_TRUE(system);
  const auto both = read_pci_ids(**system, *PciAddress::parse("0000:17:00.0"));
  EXPECT_EQ(both.vendor_id, 0x10de);
  EXPECT_EQ(both.device_id, 0x2330);  // the attributes win over the uevent
  EXPECT_FALSE(both.class_code);
  const auto from_uevent = read_pci_ids(**system, *PciAddress::parse("0000:31:00.0"));
  EXPECT_EQ(from_uevent.vendor_id, 0x10de);
  EXPECT_EQ(from_uevent.device_id, 0x20b0);
  const auto bad = read_pci_ids(**system, *PciAddress::parse("0000:4b:00.0"));  // over 16 bits, no uevent
  EXPECT_FALSE(bad.vendor_id);
  EXPECT_FALSE(bad.device_id);
  // The same ids as the full read gives.
  const auto full = read_pci_function(**system, *PciAddress::parse("0000:31:00.0"));
  EXPECT_EQ(full.vendor_id, from_uevent.vendor_id);
  EXPECT_EQ(full.device_id, from_uevent.device_id);
}

// The finalize pass: PCI ids from sysfs, names and memory from the detector.
TEST(Spec, FinalizePassSetsSpecIds) {
  hwaccel::testing::FixtureBuilder fixture;
  fixture.file("/sys/bus/pci/devices/0000:17:00.0/vendor", "0x10de\n")
      .file("/sys/bus/pci/devices/0000:17:00.0/device", "0x2330\n")
      .file("/sys/bus/pci/devices/0000:31:00.0/uevent", "DRIVER=nvidia\nPCI_ID=10DE:20B0\n");
  auto system = FixtureSystem::open(fixture.write());
  ASSERT_TRUE(system);
  Inventory inv;
  auto h100 = gpu(Backend::cuda, "NVIDIA Graphics Device", 81559 * MiB);  // name alone would not tell
  h100.pci_bus_id = "0000:17:00.0";
  auto a100 = gpu(Backend::cuda, "NVIDIA A100-SXM4-40GB", 40960 * MiB);
  a100.pci_bus_id = "0000:31:00.0";
  auto t4 = gpu(Backend::cuda, "Tesla T4", 15360 * MiB);  // no sysfs entry: the name decides
  t4.pci_bus_id = "0000:99:00.0";
  auto unknown = gpu(Backend::cuda, "NVIDIA GeForce GTX 1080", 8 * GiB);
  auto preset = gpu(Backend::cuda, "Tesla T4", 15360 * MiB);
  preset.spec_id = "kept-as-is";
  auto cpu = gpu(Backend::cpu, "Intel(R) Xeon(R) Platinum 8480+", 2048 * GiB);
  inv.devices = {h100, a100, t4, unknown, preset, cpu};
  match_device_specs(inv, **system);
  EXPECT_EQ(inv.devices[0].spec_id, "h100-sxm5-80gb");
  EXPECT_EQ(inv.devices[1].spec_id, "a100-sxm4-40gb");
  EXPECT_EQ(inv.devices[2].spec_id, "t4-16gb");
  EXPECT_FALSE(inv.devices[3].spec_id);
  EXPECT_EQ(inv.devices[4].spec_id, "kept-as-is");
  EXPECT_FALSE(inv.devices[5].spec_id);
  // Everything else of the devices is untouched.
  inv.devices[0].spec_id.reset();
  EXPECT_EQ(inv.devices[0], h100);
}

}  // namespace
