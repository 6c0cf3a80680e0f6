// ROCm backend: KFD and product-table parsers, and detection over hand-built
// sysfs trees (card order, PCI-address joins, memory, partitions, bad input).
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../test_support.hpp"

import hwaccel;
import hwaccel.detectors;

#include "fixture_detection.hpp"

namespace {

using namespace hwaccel;
using hwaccel::testing::FixtureBuilder;

// --- parsers ------------------------------------------------------------------

// A GPU node of the MI308X CPX capture (ROCm k8s-device-plugin testdata), abridged.
constexpr std::string_view mi308x_partition = R"(cpu_cores_count 0
simd_count 80
mem_banks_count 1
wave_front_size 64
array_count 4
simd_arrays_per_engine 1
cu_per_simd_array 10
simd_per_cu 4
gfx_target_version 90402
vendor_id 4098
device_id 29858
location_id 2563
domain 0
drm_render_minor 131
hive_id 2095653680343411291
local_mem_size 0
unique_id 598046273873802902
num_xcc 1
max_engine_clk_fcompute 1420
)";

TEST(RocmParsers, KfdNodeProperties) {
  const auto p = parsers::parse_kfd_node_properties(mi308x_partition);
  EXPECT_TRUE(p.is_gpu());
  EXPECT_EQ(p.simd_count, 80u);
  EXPECT_EQ(p.simd_per_cu, 4u);
  EXPECT_EQ(p.gfx_target_version, 90402u);
  EXPECT_EQ(p.vendor_id, 4098u);
  EXPECT_EQ(p.device_id, 0x74a2u);
  EXPECT_EQ(p.location_id, 2563u);
  EXPECT_EQ(p.domain, 0u);
  EXPECT_EQ(p.drm_render_minor, 131u);
  EXPECT_EQ(p.hive_id, 2095653680343411291ull);
  EXPECT_EQ(p.unique_id, 598046273873802902ull);
  EXPECT_EQ(p.num_xcc, 1u);
  EXPECT_EQ(p.local_mem_size, 0u);
  EXPECT_EQ(p.max_engine_clk_fcompute, 1420u);
  EXPECT_TRUE(p.invalid_keys.empty());
  EXPECT_FALSE(p.cpu_cores_count.value_or(1) != 0);
}

TEST(RocmParsers, KfdNodePropertiesBadInput) {
  // A CPU node is not a GPU; NUL padding, CRLF and unknown keys are tolerated.
  std::string padded = "cpu_cores_count 64\r\nsimd_count 0\nfuture_key 7\n";
  padded.append(4096 - padded.size(), '\0');
  const auto cpu = parsers::parse_kfd_node_properties(padded);
  EXPECT_FALSE(cpu.is_gpu());
  EXPECT_EQ(cpu.cpu_cores_count, 64u);
  EXPECT_TRUE(cpu.invalid_keys.empty());

  const auto bad = parsers::parse_kfd_node_properties("simd_count lots\nsimd_per_cu -4\nhive_id 0x12\ndomain 1\n");
  EXPECT_FALSE(bad.simd_count);
  EXPECT_FALSE(bad.simd_per_cu);
  EXPECT_FALSE(bad.hive_id);
  EXPECT_EQ(bad.domain, 1u);
  EXPECT_EQ(bad.invalid_keys, (std::vector<std::string>{"simd_count", "simd_per_cu", "hive_id"}));

  const auto garbage = parsers::parse_kfd_node_properties(std::string("\x01\x02\xff simd_count\n\0\0 12", 20));
  EXPECT_FALSE(garbage.is_gpu());
  EXPECT_TRUE(parsers::parse_kfd_node_properties("").invalid_keys.empty());
}

TEST(RocmParsers, KfdLinkAndMemBank) {
  const auto l = parsers::parse_kfd_link(
      "type 11\nversion_major 0\nversion_minor 0\nnode_from 2\nnode_to 3\nweight 15\nmin_latency 0\nmax_latency 0\n"
      "min_bandwidth 50000\nmax_bandwidth 50000\nrecommended_transfer_size 0\nrecommended_sdma_engine_id_mask 28\nflags 1\n");
  EXPECT_EQ(l.type, parsers::kfd_link_type_xgmi);
  EXPECT_EQ(l.node_from, 2u);
  EXPECT_EQ(l.node_to, 3u);
  EXPECT_EQ(l.weight, 15u);
  EXPECT_EQ(l.min_bandwidth_mbps, 50000u);
  EXPECT_EQ(l.max_bandwidth_mbps, 50000u);
  EXPECT_FALSE(parsers::parse_kfd_link("type two\n").type);

  const auto b = parsers::parse_kfd_mem_bank("heap_type 1\nsize_in_bytes 51539607552\nflags 0\nwidth 8192\nmem_clk_max 1300\n");
  EXPECT_EQ(b.heap_type, 1u);
  EXPECT_EQ(b.size_in_bytes, 51539607552ull);
  EXPECT_EQ(b.width_bits, 8192u);
  EXPECT_EQ(b.mem_clk_max_mhz, 1300u);
  EXPECT_FALSE(parsers::parse_kfd_mem_bank("size_in_bytes 1e9\n").size_in_bytes);
}

TEST(RocmParsers, GfxTargets) {
  EXPECT_EQ(parsers::gfx_target_name(90402), "gfx942");
  EXPECT_EQ(parsers::gfx_target_name(90010), "gfx90a");
  EXPECT_EQ(parsers::gfx_target_name(90008), "gfx908");
  EXPECT_EQ(parsers::gfx_target_name(110003), "gfx1103");
  EXPECT_EQ(parsers::gfx_target_name(100300), "gfx1030");
  EXPECT_EQ(parsers::gfx_target_name(110501), "gfx1151");
  EXPECT_EQ(parsers::gfx_target_name(120001), "gfx1201");
  EXPECT_FALSE(parsers::gfx_target_name(0));
  EXPECT_FALSE(parsers::gfx_target_name(91602));  // minor 16 is not one hex digit
  EXPECT_FALSE(parsers::gfx_target_name(90017));
  EXPECT_FALSE(parsers::gfx_target_name(1000000000));

  EXPECT_EQ(parsers::gfx_architecture("gfx942"), "CDNA3");
  EXPECT_EQ(parsers::gfx_architecture("gfx90a"), "CDNA2");
  EXPECT_EQ(parsers::gfx_architecture("gfx908"), "CDNA");
  EXPECT_EQ(parsers::gfx_architecture("gfx950"), "CDNA4");
  EXPECT_EQ(parsers::gfx_architecture("gfx906"), "GCN5.1");
  EXPECT_EQ(parsers::gfx_architecture("gfx1030"), "RDNA2");
  EXPECT_EQ(parsers::gfx_architecture("gfx1100"), "RDNA3");
  EXPECT_EQ(parsers::gfx_architecture("gfx1150"), "RDNA3.5");
  EXPECT_EQ(parsers::gfx_architecture("gfx1201"), "RDNA4");
  EXPECT_EQ(parsers::gfx_architecture("gfx803"), "");
  EXPECT_EQ(parsers::gfx_architecture(""), "");
}

TEST(RocmParsers, KfdPciAddress) {
  EXPECT_EQ(parsers::kfd_pci_address(0u, 25344u)->to_string(), "0000:63:00.0");
  EXPECT_EQ(parsers::kfd_pci_address(1u, 2816u)->to_string(), "0001:0b:00.0");
  EXPECT_EQ(parsers::kfd_pci_address(0u, 2563u)->to_string(), "0000:0a:00.3");  // partition 3
  EXPECT_EQ(parsers::kfd_pci_address(std::nullopt, 0x6300u)->to_string(), "0000:63:00.0");
  EXPECT_FALSE(parsers::kfd_pci_address(0u, std::nullopt));
  EXPECT_FALSE(parsers::kfd_pci_address(0u, 0x10000u));
  EXPECT_FALSE(parsers::kfd_pci_address(0x100000000ull, 0x100u));
}

TEST(RocmParsers, XgmiHopsFromWeight) {
  EXPECT_EQ(parsers::xgmi_hops_from_weight(15), 1u);  // MI210 bridge peers
  EXPECT_EQ(parsers::xgmi_hops_from_weight(30), 2u);
  EXPECT_EQ(parsers::xgmi_hops_from_weight(13), 0u);  // partitions of one package
  EXPECT_EQ(parsers::xgmi_hops_from_weight(41), 1u);  // partition to a partition of another MI300
  EXPECT_EQ(parsers::xgmi_hops_from_weight(56), 2u);
  EXPECT_FALSE(parsers::xgmi_hops_from_weight(20));
  EXPECT_FALSE(parsers::xgmi_hops_from_weight(0));
  EXPECT_FALSE(parsers::xgmi_hops_from_weight(1u << 20));
}

TEST(RocmParsers, ProductTable) {
  // The reference design's ids were wrong: 0x7408 is the MI250X, 0x74a1 the MI300X.
  EXPECT_EQ(parsers::amd_product(0x74a1, std::nullopt)->name, "AMD Instinct MI300X");
  EXPECT_EQ(parsers::amd_product(0x74a1, std::nullopt)->xcd_count, 8u);
  EXPECT_EQ(parsers::amd_product(0x7408, std::nullopt)->name, "AMD Instinct MI250X");
  EXPECT_EQ(parsers::amd_product(0x740f, 0x02)->name, "AMD Instinct MI210");
  EXPECT_EQ(parsers::amd_product(0x74a2, std::nullopt)->xcd_count, 4u);
  EXPECT_EQ(parsers::amd_product(0x74a0, std::nullopt)->memory, parsers::AmdMemory::unified);
  EXPECT_TRUE(parsers::amd_product(0x74a0, std::nullopt)->integrated());
  // One id, several products: the revision decides.
  EXPECT_EQ(parsers::amd_product(0x744c, 0xc8)->name, "AMD Radeon RX 7900 XTX");
  EXPECT_EQ(parsers::amd_product(0x744c, 0xcc)->name, "AMD Radeon RX 7900 XT");
  EXPECT_EQ(parsers::amd_product(0x744c, 0xce)->name, "AMD Radeon RX 7900 GRE");
  EXPECT_EQ(parsers::amd_product(0x744c, 0x01)->name, "AMD Radeon RX 7900 series (Navi 31)");
  EXPECT_EQ(parsers::amd_product(0x744c, std::nullopt)->name, "AMD Radeon RX 7900 series (Navi 31)");
  EXPECT_EQ(parsers::amd_product(0x73bf, 0xc0)->name, "AMD Radeon RX 6900 XT");
  EXPECT_EQ(parsers::amd_product(0x73bf, 0xc1)->name, "AMD Radeon RX 6800 XT");
  EXPECT_EQ(parsers::amd_product(0x73bf, 0xc3)->name, "AMD Radeon RX 6800");
  EXPECT_EQ(parsers::amd_product(0x747e, 0xc8)->name, "AMD Radeon RX 7800 XT");
  EXPECT_EQ(parsers::amd_product(0x7448, 0x00)->name, "AMD Radeon PRO W7900");
  const auto* phoenix = parsers::amd_product(0x15bf, 0xdd);
  ASSERT_NE(phoenix, nullptr);
  EXPECT_EQ(phoenix->name, "AMD Radeon 780M Graphics");
  EXPECT_EQ(phoenix->memory, parsers::AmdMemory::carve_out);
  EXPECT_EQ(parsers::amd_product(0x15bf, 0xc5)->name, "AMD Radeon 740M Graphics");
  EXPECT_EQ(parsers::amd_product(0x150e, 0xc1)->name, "AMD Radeon 890M Graphics");
  EXPECT_EQ(parsers::amd_product(0x1586, 0xc1)->name, "AMD Radeon 8060S Graphics");
  EXPECT_FALSE(parsers::amd_product(0x744c, 0xc8)->integrated());
  EXPECT_EQ(parsers::amd_product(0x1234, std::nullopt), nullptr);
  EXPECT_EQ(parsers::amd_product(0x73ff, 0x00), nullptr);  // only revision rows for this id
}

TEST(RocmParsers, PartitionModes) {
  EXPECT_EQ(parsers::partitions_in_mode("SPX", 8), 1u);
  EXPECT_EQ(parsers::partitions_in_mode("DPX", 8), 2u);
  EXPECT_EQ(parsers::partitions_in_mode("TPX", 6), 3u);
  EXPECT_EQ(parsers::partitions_in_mode("QPX", 8), 4u);
  EXPECT_EQ(parsers::partitions_in_mode("CPX", 8), 8u);
  EXPECT_EQ(parsers::partitions_in_mode("CPX", 4), 4u);
  EXPECT_FALSE(parsers::partitions_in_mode("CPX", 0));
  EXPECT_FALSE(parsers::partitions_in_mode("cpx", 8));
  EXPECT_FALSE(parsers::partitions_in_mode("", 8));
}

// --- detection over built sysfs trees -------------------------------------------

// One amdgpu card: /sys/devices/pci0000:00/<bdf> with its drm card, the
// /sys/bus/pci/devices link and the driver link, as the kernel lays them out.
struct Card {
  int number = 0;
  std::string bdf = "0000:03:00.0";
  std::string device = "0x74a1";
  std::string revision = "0x00";
  std::string driver = "amdgpu";
  std::map<std::string, std::string> files = {};  ///< relative to the device folder
  std::string root = "pci0000:00";           ///< the root complex it hangs off
};

std::string device_dir(const Card& c) { return "/sys/devices/" + c.root + "/" + c.bdf; }

void add_card(FixtureBuilder& f, const Card& c) {
  const std::string dir = device_dir(c);
  f.file(dir + "/vendor", "0x1002\n")
      .file(dir + "/device", c.device + "\n")
      .file(dir + "/revision", c.revision + "\n")
      .file(dir + "/class", "0x030000\n")
      .file(dir + "/numa_node", "-1\n")
      .link(dir + "/driver", "../../../bus/pci/drivers/" + c.driver)
      .file("/sys/bus/pci/drivers/" + c.driver + "/bind", "")
      .link("/sys/bus/pci/devices/" + c.bdf, "../../.." + dir.substr(4))
      .file(dir + "/drm/card" + std::to_string(c.number) + "/dev", "226:" + std::to_string(c.number) + "\n")
      .link(dir + "/drm/card" + std::to_string(c.number) + "/device", "../../../" + c.bdf)
      .link("/sys/class/drm/card" + std::to_string(c.number),
            "../.." + dir.substr(4) + "/drm/card" + std::to_string(c.number));
  for (const auto& [name, content] : c.files) f.file(dir + "/" + name, content);
}

// A KFD topology node; `props` are "key value" lines.
void add_kfd_node(FixtureBuilder& f, int id, std::string_view props, std::vector<std::string> io_links = {},
                  std::vector<std::string> mem_banks = {}) {
  const std::string dir = "/sys/class/kfd/kfd/topology/nodes/" + std::to_string(id);
  f.file(dir + "/properties", props);
  f.file(dir + "/gpu_id", std::to_string(1000 + id) + "\n");
  for (std::size_t i = 0; i < io_links.size(); ++i) f.file(dir + "/io_links/" + std::to_string(i) + "/properties", io_links[i]);
  for (std::size_t i = 0; i < mem_banks.size(); ++i)
    f.file(dir + "/mem_banks/" + std::to_string(i) + "/properties", mem_banks[i]);
}

std::string gpu_props(std::uint32_t location_id, std::uint64_t gfx, std::uint32_t simds, std::uint32_t device_id,
                      std::uint64_t unique_id = 0, std::uint64_t hive = 0, std::uint32_t num_xcc = 1,
                      std::uint32_t render = 128) {
  return "cpu_cores_count 0\nsimd_count " + std::to_string(simds) + "\nwave_front_size 64\nsimd_per_cu 4\n" +
         "gfx_target_version " + std::to_string(gfx) + "\nvendor_id 4098\ndevice_id " + std::to_string(device_id) +
         "\nlocation_id " + std::to_string(location_id) + "\ndomain 0\ndrm_render_minor " + std::to_string(render) +
         "\nhive_id " + std::to_string(hive) + "\nlocal_mem_size 0\nunique_id " + std::to_string(unique_id) +
         "\nnum_xcc " + std::to_string(num_xcc) + "\n";
}

constexpr std::string_view cpu_props = "cpu_cores_count 32\nsimd_count 0\n";

std::string link(std::uint32_t type, std::uint32_t from, std::uint32_t to, std::uint32_t weight, std::uint32_t bw) {
  return "type " + std::to_string(type) + "\nnode_from " + std::to_string(from) + "\nnode_to " + std::to_string(to) +
         "\nweight " + std::to_string(weight) + "\nmin_bandwidth " + std::to_string(bw) + "\nmax_bandwidth " +
         std::to_string(bw) + "\n";
}

std::string bank(std::uint64_t bytes, int heap = 1) {
  return "heap_type " + std::to_string(heap) + "\nsize_in_bytes " + std::to_string(bytes) + "\nflags 0\n";
}

AcceleratorRegistry detect_rocm(FixtureBuilder& f) { return hwaccel::testing::detect_backend(f, Backend::rocm); }

std::vector<std::string> warning_texts(const AcceleratorRegistry& r) {
  std::vector<std::string> out;
  for (const auto& w : r.warnings()) out.push_back(std::string(to_string(w.kind)) + ": " + w.message);
  return out;
}

std::string prop(const DeviceProfile& d, std::string_view key) {
  const auto it = d.properties.find(key);
  return it == d.properties.end() ? std::string() : it->second;
}

constexpr std::uint64_t gib = std::uint64_t{1} << 30;

TEST(RocmDetect, NoAmdGpuCostsNothingAndSaysNothing) {
  FixtureBuilder f;
  add_card(f, Card{.number = 0, .bdf = "0000:17:00.0", .device = "0x2330", .driver = "nvidia"});
  f.file("/sys/class/drm/version", "drm 1.1.0 20060810\n");
  const auto r = detect_rocm(f);
  EXPECT_TRUE(r.devices().empty());
  EXPECT_TRUE(r.warnings().empty()) << warning_texts(r)[0];
  EXPECT_TRUE(r.links().empty());

  FixtureBuilder empty;
  const auto none = detect_rocm(empty);
  EXPECT_TRUE(none.devices().empty());
  EXPECT_TRUE(none.warnings().empty());

  // DRM cards, none of them amdgpu: the KFD topology is not even looked at
  // (every KFD GPU has an amdgpu card), so a stray one reports nothing.
  FixtureBuilder other;
  add_card(other, Card{.number = 0, .bdf = "0000:17:00.0", .device = "0x2330", .driver = "nvidia"});
  add_kfd_node(other, 0, cpu_props);
  add_kfd_node(other, 1, gpu_props(0x0300, 90402, 1216, 0x74a1));
  const auto nvidia = detect_rocm(other);
  EXPECT_TRUE(nvidia.devices().empty());
  EXPECT_TRUE(nvidia.warnings().empty());
}

TEST(RocmDetect, CardsInNumericOrderJoinedToKfdByAddress) {
  FixtureBuilder f;
  // card10 must come after card2, and the KFD nodes are listed in the other
  // order: only the PCI address says which node is which card.
  add_card(f, Card{.number = 10, .bdf = "0000:c1:00.0", .device = "0x740f", .revision = "0x02",
                   .files = {{"mem_info_vram_total", "68702699520\n"}}});
  add_card(f, Card{.number = 2, .bdf = "0000:03:00.0", .device = "0x744c", .revision = "0xc8",
                   .files = {{"mem_info_vram_total", "25753026560\n"}}});
  // Connectors and render nodes sit next to cards and are not cards.
  f.file("/sys/devices/pci0000:00/0000:03:00.0/drm/card2/card2-DP-1/status", "connected\n")
      .link("/sys/class/drm/card2-DP-1", "../../devices/pci0000:00/0000:03:00.0/drm/card2/card2-DP-1")
      .link("/sys/class/drm/renderD128", "../../devices/pci0000:00/0000:03:00.0/drm/card2");
  f.file("/dev/kfd", "");
  add_kfd_node(f, 0, cpu_props);
  add_kfd_node(f, 1, gpu_props(0xc100, 90010, 416, 0x740f, 0x1111));
  add_kfd_node(f, 2, gpu_props(0x0300, 110000, 192, 0x744c, 0x2222));
  const auto r = detect_rocm(f);
  ASSERT_EQ(r.devices().size(), 2u) << ::testing::PrintToString(warning_texts(r));
  const auto& first = r.devices()[0];
  const auto& second = r.devices()[1];
  EXPECT_EQ(first.id, "rocm:0");
  EXPECT_EQ(first.name, "AMD Radeon RX 7900 XTX");
  EXPECT_EQ(first.pci_bus_id, "0000:03:00.0");
  EXPECT_EQ(first.compute_capability, "gfx1100");
  EXPECT_EQ(first.architecture, "RDNA3");
  EXPECT_EQ(first.compute_units, 48u);  // 192 SIMDs / 4 per CU as this node says
  EXPECT_EQ(first.uuid, "GPU-0000000000002222");
  EXPECT_EQ(first.memory_bytes, 25753026560ull);
  EXPECT_EQ(prop(first, "drm_card"), "card2");
  EXPECT_EQ(prop(first, "kfd_nodes"), "2");
  EXPECT_EQ(prop(first, "rocm_compute"), "available");
  EXPECT_EQ(second.id, "rocm:1");
  EXPECT_EQ(second.name, "AMD Instinct MI210");
  EXPECT_EQ(second.pci_bus_id, "0000:c1:00.0");
  EXPECT_EQ(second.compute_capability, "gfx90a");
  EXPECT_EQ(second.compute_units, 104u);
  EXPECT_EQ(prop(second, "drm_card"), "card10");
  EXPECT_EQ(prop(second, "kfd_nodes"), "1");
  EXPECT_EQ(second.family, Family::gpu);
  EXPECT_EQ(second.vendor, "AMD");
  EXPECT_TRUE(r.warnings().empty()) << warning_texts(r)[0];
}

TEST(RocmDetect, MemoryIsNeverInvented) {
  // No mem_info_vram_total, no KFD memory bank: unknown, not a default.
  FixtureBuilder f;
  add_card(f, Card{.number = 0, .device = "0x740f"});
  add_kfd_node(f, 0, cpu_props);
  add_kfd_node(f, 1, gpu_props(0x0300, 90010, 416, 0x740f));
  const auto r = detect_rocm(f);
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_FALSE(r.devices()[0].memory_bytes);
  EXPECT_FALSE(r.devices()[0].memory_free_bytes);
  EXPECT_FALSE(r.devices()[0].shared_memory_bytes);
  EXPECT_TRUE(r.warnings().empty()) << warning_texts(r)[0];
}

TEST(RocmDetect, MemoryFromKfdBanksWhenSysfsLacksIt) {
  FixtureBuilder f;
  add_card(f, Card{.number = 0, .device = "0x74a1"});
  add_kfd_node(f, 0, cpu_props);
  add_kfd_node(f, 1, gpu_props(0x0300, 90402, 1216, 0x74a1), {}, {bank(206141652992ull)});
  const auto r = detect_rocm(f);
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_EQ(r.devices()[0].memory_bytes, 206141652992ull);
  EXPECT_EQ(prop(r.devices()[0], "memory_source"), "kfd mem_banks");
}

TEST(RocmDetect, OnlyTheKernelsSpellingOfANumberNamesANode) {
  // The kernel names KFD nodes and banks with "%u": "01", "1 " and "00" are
  // not second spellings of node 1 or bank 0 (a damaged or hand-made tree;
  // the fuzz regression kfd-node-name-with-nul-padding has NUL padding).
  FixtureBuilder f;
  add_card(f, Card{.number = 0, .device = "0x74a1"});
  add_kfd_node(f, 0, cpu_props);
  const std::string props = gpu_props(0x0300, 90402, 1216, 0x74a1);
  add_kfd_node(f, 1, props, {}, {bank(206141652992ull)});
  const std::string nodes = "/sys/class/kfd/kfd/topology/nodes/";
  f.file(nodes + "01/properties", props);
  f.file(nodes + "1 /properties", props);
  f.file(nodes + "1/mem_banks/00/properties", bank(206141652992ull));
  const auto r = detect_rocm(f);
  ASSERT_EQ(r.devices().size(), 1u);
  const auto& d = r.devices()[0];
  EXPECT_EQ(d.memory_bytes, 206141652992ull);
  EXPECT_TRUE(d.partitions.empty());
  EXPECT_EQ(prop(d, "kfd_nodes"), "1");
  EXPECT_TRUE(r.warnings().empty()) << warning_texts(r)[0];
}

TEST(RocmDetect, MemoryUsedAndFree) {
  FixtureBuilder f;
  add_card(f, Card{.number = 0, .device = "0x744c", .revision = "0xc8",
                   .files = {{"mem_info_vram_total", "25753026560\n"}, {"mem_info_vram_used", "1432674304\n"},
                             {"mem_info_gtt_total", "33226399744\n"}}});
  const auto r = detect_rocm(f);
  ASSERT_EQ(r.devices().size(), 1u);
  const auto& d = r.devices()[0];
  EXPECT_EQ(d.memory_bytes, 25753026560ull);
  EXPECT_EQ(d.memory_used_bytes, 1432674304ull);
  EXPECT_EQ(d.memory_free_bytes, 25753026560ull - 1432674304ull);
  EXPECT_EQ(d.memory_kind, MemoryKind::dedicated);
  EXPECT_FALSE(d.shared_memory_bytes);  // a dGPU's GTT is not memory to plan with
  EXPECT_EQ(prop(d, "gtt_bytes"), "33226399744");
  EXPECT_EQ(prop(d, "rocm_compute"), "unavailable: no KFD topology (amdgpu without ROCm compute support)");
}

TEST(RocmDetect, GarbageAndImpossibleValuesAreWarnings) {
  FixtureBuilder f;
  add_card(f, Card{.number = 0, .device = "0x744c", .revision = "0xc8",
                   .files = {{"mem_info_vram_total", "lots\n"}, {"gpu_busy_percent", "250\n"}}});
  add_card(f, Card{.number = 1, .bdf = "0000:43:00.0", .device = "0x744c", .revision = "0xc8",
                   .files = {{"mem_info_vram_total", "1000\n"}, {"mem_info_vram_used", "2000\n"}}});
  const auto r = detect_rocm(f);
  ASSERT_EQ(r.devices().size(), 2u);
  EXPECT_FALSE(r.devices()[0].memory_bytes);
  EXPECT_FALSE(r.devices()[0].utilization_percent);
  EXPECT_EQ(r.devices()[1].memory_bytes, 1000u);
  EXPECT_FALSE(r.devices()[1].memory_used_bytes);
  EXPECT_FALSE(r.devices()[1].memory_free_bytes);
  const std::vector<std::string> expected = {
      "parse_error: /sys/class/drm/card0/device/mem_info_vram_total: 'lots' is not an integer",
      "invalid_value: /sys/class/drm/card0/device/gpu_busy_percent: 250 is not a percentage; ignored",
      "invalid_value: /sys/class/drm/card1/device/mem_info_vram_used: 2000 exceeds mem_info_vram_total 1000; ignored",
  };
  EXPECT_EQ(warning_texts(r), expected);
}

TEST(RocmDetect, NulPaddedFilesAreRead) {
  // A real snapshot pads every attribute to 4096 bytes with NULs.
  auto padded = [](std::string s) {
    s.append(4096 - s.size(), '\0');
    return s;
  };
  FixtureBuilder f;
  Card c{.number = 0, .device = "0x73bf", .revision = "0xc0"};
  c.files = {{"mem_info_vram_total", padded("17163091968\n")}, {"mem_info_vram_used", padded("668274688\n")},
             {"vbios_version", padded("113-D4121EXT-CO1\n")}, {"current_link_width", padded("16\n")},
             {"current_link_speed", padded("16.0 GT/s PCIe\n")}};
  add_card(f, c);
  f.file(device_dir(c) + "/revision", padded("0xc0\n"));
  const auto r = detect_rocm(f);
  ASSERT_EQ(r.devices().size(), 1u);
  const auto& d = r.devices()[0];
  EXPECT_EQ(d.name, "AMD Radeon RX 6900 XT");
  EXPECT_EQ(d.memory_bytes, 17163091968ull);
  EXPECT_EQ(d.memory_used_bytes, 668274688ull);
  EXPECT_EQ(d.firmware_version, "113-D4121EXT-CO1");
  ASSERT_TRUE(d.pcie);
  EXPECT_EQ(d.pcie->current_width, 16u);
  EXPECT_EQ(d.pcie->current_speed_gts, 16.0);
  EXPECT_TRUE(r.warnings().empty()) << warning_texts(r)[0];
}

TEST(RocmDetect, IdsFromUeventWhenAttributesAreMissing) {
  // This snapshot has no vendor/device files and no driver link: uevent only.
  FixtureBuilder g;
  const std::string dir = "/sys/devices/pci0000:00/0000:64:00.0";
  g.file(dir + "/uevent", "DRIVER=amdgpu\nPCI_CLASS=30000\nPCI_ID=1002:15BF\nPCI_SLOT_NAME=0000:64:00.0\n")
      .file(dir + "/revision", "0xdd\n")
      .file(dir + "/mem_info_vram_total", "4294967296\n")
      .file(dir + "/drm/card1/dev", "226:1\n")
      .link(dir + "/drm/card1/device", "../../../0000:64:00.0")
      .link("/sys/class/drm/card1", "../../devices/pci0000:00/0000:64:00.0/drm/card1")
      .link("/sys/bus/pci/devices/0000:64:00.0", "../../../devices/pci0000:00/0000:64:00.0");
  const auto r = detect_rocm(g);
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_EQ(r.devices()[0].name, "AMD Radeon 780M Graphics");
  EXPECT_EQ(prop(r.devices()[0], "pci_id"), "1002:15bf");
  EXPECT_TRUE(r.devices()[0].integrated);
}

TEST(RocmDetect, ApuCarveOutAndGtt) {
  FixtureBuilder f;
  add_card(f, Card{.number = 1, .bdf = "0000:64:00.0", .device = "0x15bf", .revision = "0xdd",
                   .files = {{"mem_info_vram_total", "4294967296\n"}, {"mem_info_vram_used", "1272893440\n"},
                             {"mem_info_gtt_total", "31433977856\n"}}});
  f.file("/dev/kfd", "");
  add_kfd_node(f, 0, cpu_props);
  add_kfd_node(f, 1, gpu_props(0x6400, 110003, 24, 0x15bf), {}, {bank(31433977856ull)});
  const auto r = detect_rocm(f);
  ASSERT_EQ(r.devices().size(), 1u);
  const auto& d = r.devices()[0];
  EXPECT_TRUE(d.integrated);
  EXPECT_EQ(d.memory_kind, MemoryKind::carve_out);
  EXPECT_EQ(d.memory_bytes, 4294967296ull);  // the carve-out, as the hardware says
  EXPECT_EQ(d.shared_memory_bytes, 31433977856ull);
  EXPECT_EQ(prop(d, "shared_memory"),
            "VRAM is a 4 GiB carve-out of system RAM reserved by the firmware (mem_info_vram_total); the GPU can "
            "also map up to 29.28 GiB of system memory through GTT (mem_info_gtt_total). Both come out of the "
            "host's RAM, which the CPU shares: a workload can use at most carve-out + GTT, bounded by the system "
            "memory left free");
  EXPECT_EQ(d.compute_capability, "gfx1103");
}

TEST(RocmDetect, SuspendedGpuIsNotWoken) {
  FixtureBuilder f;
  add_card(f, Card{.number = 0, .device = "0x73bf", .revision = "0xc0",
                   .files = {{"power/runtime_status", "suspended\n"},
                             {"mem_info_vram_total", "17163091968\n"},
                             {"mem_info_vram_used", "668274688\n"},
                             {"gpu_busy_percent", "3\n"},
                             {"hwmon/hwmon5/temp1_input", "56000\n"},
                             {"hwmon/hwmon5/power1_average", "36000000\n"}}});
  const auto r = detect_rocm(f);
  ASSERT_EQ(r.devices().size(), 1u);
  const auto& d = r.devices()[0];
  EXPECT_EQ(d.memory_bytes, 17163091968ull);
  EXPECT_FALSE(d.memory_used_bytes);
  EXPECT_FALSE(d.utilization_percent);
  EXPECT_FALSE(d.temperature_c);
  EXPECT_FALSE(d.power_watts);
  EXPECT_EQ(prop(d, "runtime_pm"),
            "suspended: memory use, utilization, temperature and power were not read, so as not to wake the GPU");

  FixtureBuilder awake;
  add_card(awake, Card{.number = 0, .device = "0x73bf", .revision = "0xc0",
                       .files = {{"power/runtime_status", "active\n"},
                                 {"gpu_busy_percent", "3\n"},
                                 {"hwmon/hwmon5/temp1_input", "56000\n"},
                                 {"hwmon/hwmon5/temp1_label", "edge\n"},
                                 {"hwmon/hwmon5/temp2_input", "59000\n"},
                                 {"hwmon/hwmon5/temp2_label", "junction\n"},
                                 {"hwmon/hwmon5/power1_average", "36000000\n"},
                                 {"hwmon/hwmon5/power1_cap", "289000000\n"}}});
  const auto a = detect_rocm(awake);
  ASSERT_EQ(a.devices().size(), 1u);
  EXPECT_EQ(a.devices()[0].utilization_percent, 3.0);
  EXPECT_EQ(a.devices()[0].temperature_c, 56.0);
  EXPECT_EQ(a.devices()[0].power_watts, 36.0);
  EXPECT_EQ(a.devices()[0].power_limit_watts, 289.0);
  EXPECT_EQ(prop(a.devices()[0], "runtime_pm"), "");
}

TEST(RocmDetect, DanglingDeviceLink) {
  // card0's device link points nowhere; KFD still knows the GPU at that address.
  FixtureBuilder f;
  f.link("/sys/class/drm/card0", "../../devices/pci0000:00/0000:43:00.0/drm/card0")
      .file("/sys/devices/pci0000:00/0000:43:00.0/drm/card0/dev", "226:0\n")
      .link("/sys/devices/pci0000:00/0000:43:00.0/drm/card0/device", "../../../0000:44:00.0");
  add_card(f, Card{.number = 1, .bdf = "0000:03:00.0", .device = "0x740f"});
  add_kfd_node(f, 0, cpu_props);
  add_kfd_node(f, 1, gpu_props(0x4400, 90010, 416, 0x740f));
  add_kfd_node(f, 2, gpu_props(0x0300, 90010, 416, 0x740f));
  const auto r = detect_rocm(f);
  ASSERT_EQ(r.devices().size(), 2u);
  EXPECT_EQ(r.devices()[0].pci_bus_id, "0000:03:00.0");
  EXPECT_EQ(prop(r.devices()[0], "drm_card"), "card1");
  EXPECT_EQ(r.devices()[1].pci_bus_id, "0000:44:00.0");
  EXPECT_EQ(r.devices()[1].name, "AMD Instinct MI210");
  EXPECT_EQ(prop(r.devices()[1], "drm_card"), "");
  const std::vector<std::string> expected = {
      "io_error: /sys/class/drm/card0/device links to '../../../0000:44:00.0', which does not exist; rocm:1 is "
      "reported from the KFD topology alone"};
  EXPECT_EQ(warning_texts(r), expected);

  // Without KFD the dangling card is no evidence of anything: skipped quietly.
  FixtureBuilder g;
  g.link("/sys/class/drm/card0", "../../devices/pci0000:00/0000:43:00.0/drm/card0")
      .file("/sys/devices/pci0000:00/0000:43:00.0/drm/card0/dev", "226:0\n")
      .link("/sys/devices/pci0000:00/0000:43:00.0/drm/card0/device", "../../../0000:44:00.0");
  const auto none = detect_rocm(g);
  EXPECT_TRUE(none.devices().empty());
  EXPECT_TRUE(none.warnings().empty());
}

TEST(RocmDetect, AmdgpuWithoutKfdIsStillReported) {
  FixtureBuilder f;
  add_card(f, Card{.number = 0, .device = "0x744c", .revision = "0xc8"});
  add_card(f, Card{.number = 1, .bdf = "0000:43:00.0", .device = "0x744c", .revision = "0xcc"});
  add_kfd_node(f, 0, cpu_props);
  add_kfd_node(f, 1, gpu_props(0x0300, 110000, 192, 0x744c));
  // No /dev/kfd: the topology is visible (sysfs), the device node is not.
  const auto r = detect_rocm(f);
  ASSERT_EQ(r.devices().size(), 2u);
  EXPECT_TRUE(r.devices()[0].available);
  EXPECT_EQ(prop(r.devices()[0], "rocm_compute"), "unavailable: /dev/kfd is missing (not passed to this container?)");
  EXPECT_TRUE(r.devices()[1].available);
  EXPECT_EQ(r.devices()[1].name, "AMD Radeon RX 7900 XT");
  EXPECT_EQ(prop(r.devices()[1], "rocm_compute"), "unavailable: the KFD topology has no node for this GPU");
  EXPECT_TRUE(r.warnings().empty()) << warning_texts(r)[0];
}

TEST(RocmDetect, NameFallbacks) {
  FixtureBuilder f;
  add_card(f, Card{.number = 0, .device = "0x75a0", .files = {{"product_name", "AMD Instinct MI350X\n"}}});
  add_card(f, Card{.number = 1, .bdf = "0000:43:00.0", .device = "0x75a3", .files = {{"product_name", "\n"}}});
  const auto r = detect_rocm(f);
  ASSERT_EQ(r.devices().size(), 2u);
  EXPECT_EQ(r.devices()[0].name, "AMD Instinct MI350X");
  EXPECT_EQ(prop(r.devices()[0], "product_name"), "AMD Instinct MI350X");
  EXPECT_EQ(r.devices()[1].name, "AMD GPU [1002:75a3]");
}

TEST(RocmDetect, Mi250VariantsByComputeUnits) {
  FixtureBuilder f;
  add_card(f, Card{.number = 0, .device = "0x740c", .revision = "0x01"});
  add_card(f, Card{.number = 1, .bdf = "0000:43:00.0", .device = "0x740c", .revision = "0x01"});
  add_card(f, Card{.number = 2, .bdf = "0000:83:00.0", .device = "0x740c", .revision = "0x01"});
  add_kfd_node(f, 0, cpu_props);
  add_kfd_node(f, 1, gpu_props(0x0300, 90010, 440, 0x740c));  // 110 CUs per GCD
  add_kfd_node(f, 2, gpu_props(0x4300, 90010, 416, 0x740c));  // 104 CUs per GCD
  const auto r = detect_rocm(f);
  ASSERT_EQ(r.devices().size(), 3u);
  EXPECT_EQ(r.devices()[0].name, "AMD Instinct MI250X");
  EXPECT_EQ(r.devices()[1].name, "AMD Instinct MI250");
  EXPECT_EQ(r.devices()[2].name, "AMD Instinct MI250X / MI250");  // no KFD: CUs unknown
}

TEST(RocmDetect, DriverVersionOnlyFromTheModule) {
  FixtureBuilder f;
  add_card(f, Card{.number = 0, .device = "0x74a1", .files = {{"vbios_version", "113-M3000100-102\n"}}});
  f.file("/sys/module/amdgpu/version", "6.10.5\n");
  f.file("/proc/sys/kernel/osrelease", "6.8.0-45-generic\n");
  const auto r = detect_rocm(f);
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_EQ(r.devices()[0].driver_version, "6.10.5");
  EXPECT_EQ(r.devices()[0].firmware_version, "113-M3000100-102");

  FixtureBuilder in_tree;
  add_card(in_tree, Card{.number = 0, .device = "0x74a1"});
  in_tree.file("/proc/sys/kernel/osrelease", "6.8.0-45-generic\n");
  const auto t = detect_rocm(in_tree);
  ASSERT_EQ(t.devices().size(), 1u);
  EXPECT_FALSE(t.devices()[0].driver_version);
}

TEST(RocmDetect, XgmiHiveAndLinks) {
  FixtureBuilder f;
  const std::uint64_t hive = 12609507387757274807ull;
  add_card(f, Card{.number = 0, .bdf = "0000:03:00.0", .device = "0x740f"});
  add_card(f, Card{.number = 1, .bdf = "0000:43:00.0", .device = "0x740f"});
  add_card(f, Card{.number = 2, .bdf = "0000:83:00.0", .device = "0x740f", .root = "pci0000:80"});
  add_kfd_node(f, 0, cpu_props);
  add_kfd_node(f, 1, cpu_props);
  add_kfd_node(f, 2, gpu_props(0x0300, 90010, 416, 0x740f, 0xa, hive),
               {link(2, 2, 0, 20, 32000), link(11, 2, 3, 15, 50000)});
  add_kfd_node(f, 3, gpu_props(0x4300, 90010, 416, 0x740f, 0xb, hive),
               {link(2, 3, 0, 20, 32000), link(11, 3, 2, 15, 50000)});
  add_kfd_node(f, 4, gpu_props(0x8300, 90010, 416, 0x740f, 0xc), {link(2, 4, 1, 20, 32000)});
  const auto r = detect_rocm(f);
  ASSERT_EQ(r.devices().size(), 3u);
  ASSERT_EQ(r.interconnects().size(), 1u);
  const auto& ic = r.interconnects()[0];
  EXPECT_EQ(ic.kind, "xgmi_hive");
  EXPECT_EQ(ic.name, "xGMI hive 12609507387757274807");
  EXPECT_EQ(ic.device_ids, (std::vector<std::string>{"rocm:0", "rocm:1"}));
  EXPECT_EQ(ic.bandwidth_gbps, 50.0);
  ASSERT_EQ(r.links().size(), 3u);
  EXPECT_EQ(r.links()[0].a, "rocm:0");
  EXPECT_EQ(r.links()[0].b, "rocm:1");
  EXPECT_EQ(r.links()[0].kind, LinkKind::xgmi);
  EXPECT_EQ(r.links()[0].hops, 1u);
  EXPECT_EQ(r.links()[0].bandwidth_gbps, 50.0);
  EXPECT_EQ(r.links()[0].source, "kfd io_links");
  // The third GPU hangs off the other CPU node: a cross-socket PCIe path.
  EXPECT_EQ(r.links()[1].b, "rocm:2");
  EXPECT_EQ(r.links()[1].kind, LinkKind::system);
  EXPECT_EQ(r.links()[2].a, "rocm:1");
  EXPECT_EQ(r.links()[2].kind, LinkKind::system);
  EXPECT_EQ(prop(r.devices()[0], "xgmi_hive_id"), "12609507387757274807");
  EXPECT_EQ(prop(r.devices()[2], "xgmi_hive_id"), "");
}

TEST(RocmDetect, HiveFromSysfsWithoutKfd) {
  // amdgpu's xgmi_hive_info is a folder (shared by the hive's devices) whose
  // xgmi_hive_id attribute names the hive.
  FixtureBuilder f;
  add_card(f, Card{.number = 0, .bdf = "0000:03:00.0", .device = "0x740f",
                   .files = {{"xgmi_hive_info/xgmi_hive_id", "4242\n"}}});
  add_card(f, Card{.number = 1, .bdf = "0000:43:00.0", .device = "0x740f"});
  f.link("/sys/devices/pci0000:00/0000:43:00.0/xgmi_hive_info", "../0000:03:00.0/xgmi_hive_info");
  const auto r = detect_rocm(f);
  ASSERT_EQ(r.devices().size(), 2u);
  ASSERT_EQ(r.interconnects().size(), 1u);
  EXPECT_EQ(r.interconnects()[0].name, "xGMI hive 4242");
  EXPECT_EQ(r.interconnects()[0].device_ids, (std::vector<std::string>{"rocm:0", "rocm:1"}));
  EXPECT_FALSE(r.interconnects()[0].bandwidth_gbps);  // no KFD io_links to say
  EXPECT_EQ(prop(r.devices()[1], "xgmi_hive_id"), "4242");
}

// An MI300X in CPX mode with one of its eight partitions missing from KFD,
// as one real dump showed.
void add_cpx_nodes(FixtureBuilder& f, int present) {
  add_kfd_node(f, 0, cpu_props);
  for (int p = 0; p < present; ++p)
    add_kfd_node(f, 1 + p, gpu_props(0x0300 | static_cast<std::uint32_t>(p), 90402, 152, 0x74a1, 0x6a0e51d3c2b89f17ull,
                                     0, 1, 128 + static_cast<std::uint32_t>(p)),
                 {}, {bank(24 * gib)});
}

TEST(RocmDetect, ComputePartitions) {
  FixtureBuilder f;
  add_card(f, Card{.number = 0, .device = "0x74a1",
                   .files = {{"current_compute_partition", "CPX\n"}, {"current_memory_partition", "NPS1\n"},
                             {"mem_info_vram_total", "206158430208\n"}}});
  add_cpx_nodes(f, 8);
  const auto r = detect_rocm(f);
  ASSERT_EQ(r.devices().size(), 1u) << ::testing::PrintToString(warning_texts(r));
  const auto& d = r.devices()[0];
  EXPECT_EQ(d.memory_bytes, 206158430208ull);
  EXPECT_EQ(d.compute_units, 304u);
  EXPECT_EQ(d.uuid, "GPU-6a0e51d3c2b89f17");
  ASSERT_EQ(d.partitions.size(), 8u);
  for (std::uint32_t p = 0; p < 8; ++p) {
    EXPECT_EQ(d.partitions[p].id, "rocm:0/partition:" + std::to_string(p));
    EXPECT_EQ(d.partitions[p].index, p);
    EXPECT_EQ(d.partitions[p].profile, "CPX");
    EXPECT_EQ(d.partitions[p].memory_bytes, 24 * gib);
    EXPECT_EQ(d.partitions[p].compute_units, 38u);
  }
  EXPECT_EQ(prop(d, "compute_partition"), "CPX");
  EXPECT_EQ(prop(d, "compute_partition_source"), "current_compute_partition");
  EXPECT_EQ(prop(d, "memory_partition"), "NPS1");
  EXPECT_EQ(prop(d, "kfd_nodes"), "1,2,3,4,5,6,7,8");
  EXPECT_EQ(prop(d, "drm_render_minors"), "128,129,130,131,132,133,134,135");
  EXPECT_TRUE(r.warnings().empty()) << warning_texts(r)[0];
}

TEST(RocmDetect, SevenOfEightPartitions) {
  FixtureBuilder f;
  add_card(f, Card{.number = 0, .device = "0x74a1", .files = {{"current_compute_partition", "CPX\n"}}});
  add_cpx_nodes(f, 7);
  const auto r = detect_rocm(f);
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_EQ(r.devices()[0].partitions.size(), 7u);
  EXPECT_EQ(r.devices()[0].compute_units, 266u);
  const std::vector<std::string> expected = {
      "inconsistent: rocm:0 (0000:03:00.0) is in CPX mode, which makes 8 partitions, but the KFD topology lists 7; "
      "the partitions it lists are reported"};
  EXPECT_EQ(warning_texts(r), expected);

  // KFD alone: the mode is inferred from one XCC per node; the board's memory
  // is unknown rather than seven eighths of it.
  FixtureBuilder g;
  add_cpx_nodes(g, 7);
  const auto k = detect_rocm(g);
  ASSERT_EQ(k.devices().size(), 1u);
  EXPECT_EQ(k.devices()[0].partitions.size(), 7u);
  EXPECT_FALSE(k.devices()[0].memory_bytes);
  EXPECT_EQ(prop(k.devices()[0], "compute_partition"), "CPX");
  EXPECT_EQ(prop(k.devices()[0], "compute_partition_source"), "inferred from the KFD topology (7 nodes of 1 XCC)");
  const std::vector<std::string> kfd_only = {
      "inconsistent: /sys/class/drm has no amdgpu card; 1 GPU is reported from the KFD topology alone (no memory "
      "use, temperature, power or PCIe link)",
      "inconsistent: rocm:0 (0000:03:00.0) is in CPX mode, which makes 8 partitions, but the KFD topology lists 7; "
      "the partitions it lists are reported"};
  EXPECT_EQ(warning_texts(k), kfd_only);
}

TEST(RocmDetect, BadPartitionModeIsAWarning) {
  FixtureBuilder f;
  add_card(f, Card{.number = 0, .device = "0x74a1",
                   .files = {{"current_compute_partition", "XPX\n"}, {"current_memory_partition", "NPSx\n"}}});
  const auto r = detect_rocm(f);
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_EQ(prop(r.devices()[0], "compute_partition"), "");
  EXPECT_EQ(prop(r.devices()[0], "memory_partition"), "");
  const std::vector<std::string> expected = {
      "parse_error: /sys/class/drm/card0/device/current_compute_partition: 'XPX' is not a compute partition mode",
      "parse_error: /sys/class/drm/card0/device/current_memory_partition: 'NPSx' is not a memory partition mode"};
  EXPECT_EQ(warning_texts(r), expected);
}

TEST(RocmDetect, BrokenKfdNodes) {
  FixtureBuilder f;
  add_card(f, Card{.number = 0, .device = "0x740f"});
  add_kfd_node(f, 0, cpu_props);
  add_kfd_node(f, 1, gpu_props(0x0300, 91602, 416, 0x740f) + "simd_per_cu four\n");
  f.file("/sys/class/kfd/kfd/topology/nodes/2/gpu_id", "7\n");  // no properties file
  const auto r = detect_rocm(f);
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_FALSE(r.devices()[0].compute_capability);
  EXPECT_FALSE(r.devices()[0].compute_units);
  const std::vector<std::string> expected = {
      "parse_error: /sys/class/kfd/kfd/topology/nodes/1/properties: simd_per_cu not a decimal integer; ignored",
      "io_error: /sys/class/kfd/kfd/topology/nodes/2/properties cannot be read; KFD node 2 is skipped",
      "invalid_value: KFD node 1: gfx_target_version 91602 does not name a gfx target"};
  EXPECT_EQ(warning_texts(r), expected);
}

TEST(RocmDetect, HugeFilesAreCut) {
  FixtureBuilder f;
  add_card(f, Card{.number = 0, .device = "0x740f", .files = {{"mem_info_vram_total", std::string(100000, '7')}}});
  add_kfd_node(f, 0, std::string(200000, 'x'));
  add_kfd_node(f, 1, gpu_props(0x0300, 90010, 416, 0x740f));
  const auto r = detect_rocm(f);
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_FALSE(r.devices()[0].memory_bytes);
  EXPECT_EQ(r.devices()[0].compute_capability, "gfx90a");
  const std::vector<std::string> expected = {
      "truncated: /sys/class/kfd/kfd/topology/nodes/0/properties: longer than 65536 bytes; read the start only",
      "truncated: /sys/class/drm/card0/device/mem_info_vram_total: longer than a sysfs attribute can be; ignored"};
  EXPECT_EQ(warning_texts(r), expected);
}

TEST(RocmDetect, UniqueIdFromSysfsWithoutKfd) {
  FixtureBuilder f;
  add_card(f, Card{.number = 0, .device = "0x73bf", .revision = "0xc0", .files = {{"unique_id", "946d7e1ef9b172dd\n"}}});
  add_card(f, Card{.number = 1, .bdf = "0000:43:00.0", .device = "0x73bf", .revision = "0xc0",
                   .files = {{"unique_id", "zz\n"}}});
  const auto r = detect_rocm(f);
  ASSERT_EQ(r.devices().size(), 2u);
  EXPECT_EQ(r.devices()[0].uuid, "GPU-946d7e1ef9b172dd");
  EXPECT_FALSE(r.devices()[1].uuid);
  const std::vector<std::string> expected = {"parse_error: /sys/class/drm/card1/device/unique_id: 'zz' is not hexadecimal"};
  EXPECT_EQ(warning_texts(r), expected);
}

TEST(RocmDetect, SlotLinkOfTheCardsOwnSwitch) {
  // Radeon boards carry a PCIe switch: the GPU function's link is internal,
  // the slot link is on the switch's upstream port.
  FixtureBuilder f;
  const std::string up = "/sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0";
  const std::string down = up + "/0000:02:00.0";
  const std::string gpu = down + "/0000:03:00.0";
  auto bridge = [&](const std::string& dir, const std::string& bdf, const std::string& device, const std::string& speed,
                    const std::string& width) {
    f.file(dir + "/vendor", "0x1002\n")
        .file(dir + "/device", device + "\n")
        .file(dir + "/class", "0x060400\n")
        .file(dir + "/current_link_speed", speed + "\n")
        .file(dir + "/current_link_width", width + "\n")
        .link("/sys/bus/pci/devices/" + bdf, "../../.." + dir.substr(4));
  };
  bridge(up, "0000:01:00.0", "0x1478", "8.0 GT/s PCIe", "8");
  bridge(down, "0000:02:00.0", "0x1479", "16.0 GT/s PCIe", "16");
  f.file(gpu + "/vendor", "0x1002\n")
      .file(gpu + "/device", "0x744c\n")
      .file(gpu + "/revision", "0xc8\n")
      .file(gpu + "/class", "0x030000\n")
      .file(gpu + "/current_link_speed", "16.0 GT/s PCIe\n")
      .file(gpu + "/current_link_width", "16\n")
      .link(gpu + "/driver", "../../../../../../bus/pci/drivers/amdgpu")
      .link("/sys/bus/pci/devices/0000:03:00.0", "../../.." + gpu.substr(4))
      .file(gpu + "/drm/card0/dev", "226:0\n")
      .link(gpu + "/drm/card0/device", "../../../0000:03:00.0")
      .link("/sys/class/drm/card0", "../.." + gpu.substr(4) + "/drm/card0");
  const auto r = detect_rocm(f);
  ASSERT_EQ(r.devices().size(), 1u) << ::testing::PrintToString(warning_texts(r));
  const auto& d = r.devices()[0];
  ASSERT_TRUE(d.pcie);
  EXPECT_EQ(d.pcie->current_speed_gts, 8.0);
  EXPECT_EQ(d.pcie->current_width, 8u);
  EXPECT_EQ(prop(d, "pcie_link"),
            "slot link of the card's PCIe switch upstream port 0000:01:00.0; the GPU function's own link (16 GT/s x16) "
            "is internal to the card");
}

TEST(RocmDetect, PcieKindFromThePciTree) {
  // Two GPUs under one root complex but different root ports: a host bridge apart.
  FixtureBuilder f;
  for (const auto& [card, port, bdf] : std::vector<std::tuple<int, std::string, std::string>>{
           {0, "0000:00:01.1", "0000:03:00.0"}, {1, "0000:00:03.1", "0000:05:00.0"}}) {
    const std::string dir = "/sys/devices/pci0000:00/" + port + "/" + bdf;
    f.file(dir + "/vendor", "0x1002\n")
        .file(dir + "/device", "0x740f\n")
        .link(dir + "/driver", "../../../../bus/pci/drivers/amdgpu")
        .link("/sys/bus/pci/devices/" + bdf, "../../.." + dir.substr(4))
        .file(dir + "/drm/card" + std::to_string(card) + "/dev", "226:0\n")
        .link(dir + "/drm/card" + std::to_string(card) + "/device", "../../../" + bdf)
        .link("/sys/class/drm/card" + std::to_string(card), "../.." + dir.substr(4) + "/drm/card" + std::to_string(card));
  }
  const auto r = detect_rocm(f);
  ASSERT_EQ(r.devices().size(), 2u);
  ASSERT_EQ(r.links().size(), 1u);
  EXPECT_EQ(r.links()[0].kind, LinkKind::host_bridge);
  EXPECT_EQ(r.links()[0].source, "sysfs PCI topology");
}

// --- rocm-smi and rocminfo: the views of last resort ---------------------------

constexpr const char* rocm_smi_all =
    "============================ ROCm System Management Interface ============================\n"
    "Driver version: 6.7.0\n"
    "GPU[0]\t\t: Device ID: 0x74a1\n"
    "GPU[1]\t\t: Device ID: 0x74a1\n"
    "GPU[0]\t\t: Unique ID: 0x8d1457e2c20f59d2\n"
    "GPU[1]\t\t: Unique ID: N/A\n"
    "GPU[0]\t\t: get_power_profiles, Not supported on the given system\n"
    "GPU[0]\t\t: PCI Bus: 0000:26:00.0\n"
    "GPU[1]\t\t: PCI Bus: 0000:46:00.0\n"
    "GPU[0]\t\t: Card series: \t\tAMD Instinct MI300X OAM\n"
    "GPU[1]\t\t: Card series: \t\tAMD Instinct MI300X OAM\n";

constexpr const char* rocminfo_two =
    "*******\nAgent 1\n*******\n  Name:                    AMD EPYC 9474F\n  Device Type:             CPU\n"
    "  BDFID:                   0\n  Pool Info:\n    Pool 1\n      Segment:                 GLOBAL; FLAGS: COARSE GRAINED\n"
    "      Size:                    1188729676(0x46da934c) KB\n"
    "*******\nAgent 2\n*******\n  Name:                    gfx942\n  Marketing Name:          AMD Instinct MI300X\n"
    "  Device Type:             GPU\n  BDFID:                   17920\n  Compute Unit:            304\n"
    "  Pool Info:\n    Pool 1\n      Segment:                 GLOBAL; FLAGS: COARSE GRAINED\n"
    "      Size:                    201310208(0xbffc000) KB\n  ISA Info:\n    ISA 1\n"
    "      Name:                    amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-\n"
    "*******\nAgent 3\n*******\n  Name:                    gfx942\n  Marketing Name:          AMD Instinct MI300X\n"
    "  Device Type:             GPU\n  BDFID:                   9728\n  Compute Unit:            304\n"
    "  Pool Info:\n    Pool 1\n      Segment:                 GLOBAL; FLAGS: FINE GRAINED\n"
    "      Size:                    1(0x1) KB\n    Pool 2\n      Segment:                 GLOBAL; FLAGS: COARSE GRAINED\n"
    "      Size:                    201310208(0xbffc000) KB\n";

TEST(RocmTools, RocmSmiTextForms) {
  const auto all = parsers::parse_rocm_smi_text(rocm_smi_all);
  ASSERT_TRUE(all) << all.error().message;
  ASSERT_EQ(all->gpus.size(), 2u);
  EXPECT_EQ(all->driver_version, "6.7.0");
  EXPECT_EQ(all->gpus[0].get("Card series"), "AMD Instinct MI300X OAM");
  EXPECT_EQ(all->gpus[0].get("PCI Bus"), "0000:26:00.0");
  EXPECT_FALSE(all->gpus[1].get("Unique ID"));  // N/A
  EXPECT_FALSE(all->gpus[0].get("get_power_profiles, Not supported on the given system"));

  const auto concise = parsers::parse_rocm_smi_text(
      "=== Concise Info ===\nDevice  [Model : Revision]    Temp        Power\n        Name (20 chars)       (Junction)\n"
      "=============\n0       [0x74a1 : 0x00]       35.0\u00b0C      133.0W\n        AMD Instinct MI300X        \n"
      "1       [0x74a1 : 0x00]       37.0\u00b0C      131.0W\n        AMD Instinct MI300X        \n==============\n");
  ASSERT_TRUE(concise) << concise.error().message;
  ASSERT_EQ(concise->gpus.size(), 2u);
  EXPECT_EQ(concise->gpus[1].get("Device ID"), "0x74a1");
  EXPECT_EQ(concise->gpus[1].get("Name"), "AMD Instinct MI300X");

  const auto topo = parsers::parse_rocm_smi_text(
      "== Link Type between two GPUs ==\n       GPU0         GPU1         GPU2         \n"
      "GPU0   0            PCIE         PCIE         \n");
  ASSERT_TRUE(topo) << topo.error().message;
  EXPECT_EQ(topo->gpus.size(), 3u);

  EXPECT_FALSE(parsers::parse_rocm_smi_text("ERROR: GPU[0]\n"));
  EXPECT_FALSE(parsers::parse_rocm_smi_text(""));
}

TEST(RocmTools, RocmSmiJsonAndRocminfo) {
  const auto json = parsers::parse_rocm_smi_json(
      R"json({"card1": {"GPU ID": "0x738c", "Card series": "Arcturus GL-XL [Instinct MI100]", "Unique ID": "N/A",
                    "VRAM Total Memory (B)": "34342961152"},
          "card0": {"GPU ID": "0x738c", "PCI Bus": "0000:1E:00.0"},
          "system": {"Driver version": "6.2.4"}})json");
  ASSERT_TRUE(json) << json.error().message;
  ASSERT_EQ(json->gpus.size(), 2u);
  EXPECT_EQ(json->gpus[0].index, 0u);  // by index, not by the order of the document
  EXPECT_EQ(json->gpus[1].get("VRAM Total Memory (B)"), "34342961152");
  EXPECT_EQ(json->driver_version, "6.2.4");
  EXPECT_FALSE(parsers::parse_rocm_smi_json(R"({"system": {}})"));
  EXPECT_FALSE(parsers::parse_rocm_smi_json("{"));

  const auto agents = parsers::parse_rocminfo(rocminfo_two);
  ASSERT_TRUE(agents) << agents.error().message;
  ASSERT_EQ(agents->size(), 2u);  // the CPU agent is left out
  EXPECT_EQ((*agents)[0].gfx_target, "gfx942");  // not the ISA's name
  EXPECT_EQ((*agents)[0].pci_address->to_string(), "0000:46:00.0");
  EXPECT_EQ((*agents)[1].memory_bytes, 201310208ull * 1024);  // the coarse-grained pool, not the first
  EXPECT_EQ((*agents)[1].compute_units, 304u);
  EXPECT_FALSE(parsers::parse_rocminfo("ROCk module is NOT loaded, possibly no GPU devices\n"));
}

// No DRM sysfs (a container without /sys, a paste): rocm-smi names the GPUs,
// rocminfo adds memory and the gfx target, joined by PCI address, not position.
TEST(RocmTools, GpusFromRocmSmiJoinedWithRocminfo) {
  FixtureBuilder f;
  f.command({"rocm-smi", "-a", "--json"}, "", 2, "rocm-smi: error: unrecognized arguments: --json\n")
      .command({"rocm-smi", "-a"}, rocm_smi_all)
      .command({"rocminfo"}, rocminfo_two);
  const auto r = detect_rocm(f);
  ASSERT_EQ(r.devices().size(), 2u);
  const auto& d0 = r.devices()[0];
  EXPECT_EQ(d0.name, "AMD Instinct MI300X OAM");
  EXPECT_EQ(d0.pci_bus_id, "0000:26:00.0");
  EXPECT_EQ(d0.memory_bytes, 201310208ull * 1024);  // rocminfo's agent at 26:00.0 (listed second)
  EXPECT_EQ(d0.compute_capability, "gfx942");
  EXPECT_EQ(d0.uuid, "GPU-8d1457e2c20f59d2");
  EXPECT_EQ(d0.driver_version, "6.7.0");
  EXPECT_EQ(d0.properties.at("source"), "rocm-smi -a");
  EXPECT_FALSE(r.devices()[1].uuid);
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::degraded);
  EXPECT_NE(r.warnings()[0].message.find("rocm-smi -a and rocminfo"), std::string::npos) << r.warnings()[0].message;
}

// Where DRM sysfs is there and shows no AMD GPU, there is none: the tools are not run.
TEST(RocmTools, SysfsWithoutAmdGpuRunsNoTool) {
  FixtureBuilder f;
  f.file("/sys/class/drm/version", "drm 1.1.0 20060810\n").command({"rocm-smi", "-a"}, rocm_smi_all);
  const auto r = detect_rocm(f);
  EXPECT_TRUE(r.devices().empty());
  EXPECT_TRUE(r.warnings().empty());
}

}  // namespace
