// Gaudi, Neuron and Intel GPU detection on the real captures of
// ../shared/fixtures/real, checked against each capture's SOURCE.md ground truth.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "../test_support.hpp"

import hwaccel;
import hwaccel.detectors;

namespace {

namespace fs = std::filesystem;
using namespace hwaccel;
using hwaccel::testing::FixtureBuilder;
using hwaccel::testing::read_file;
using hwaccel::testing::shared_capture;

constexpr std::uint64_t MiB = 1ull << 20;
constexpr std::uint64_t GiB = 1ull << 30;

const std::vector<std::string> hl_smi_query = {
    "hl-smi",
    "--query-aip=index,module_id,name,bus_id,uuid,serial,driver_version,memory.total,memory.used,memory.free,"
    "temperature.aip,power.draw,utilization.aip",
    "--format=csv,nounits"};

AcceleratorRegistry detect_only(FixtureBuilder& f, Backend backend) {
  auto system = FixtureSystem::open(f.write());
  EXPECT_TRUE(system) << system.error().message;
  return DetectBuilder::none().with(backend).system_probes(false).detect(**system);
}

// --- Gaudi: gaudi/ray-docs-8x-hl225-gaudi2 (default hl-smi table) -------------

TEST(GaudiConformance, RayDocs8xHl225TableParses) {
  const fs::path capture = shared_capture("gaudi/ray-docs-8x-hl225-gaudi2/hl-smi.txt");
  if (capture.empty()) GTEST_SKIP() << "shared capture gaudi/ray-docs-8x-hl225-gaudi2 not available";
  const auto r = parsers::parse_hl_smi_table(read_file(capture));
  ASSERT_TRUE(r) << r.error().message;
  // SOURCE.md: 8 AIPs, HL-225, 98304 MiB total and 768 MiB used each, driver
  // 1.22.1-97ec1a4, hl-smi hl-1.22.1-fw-61.4.2.1, power cap 600 W, bus ids unsorted.
  EXPECT_EQ(r->driver_version, "1.22.1-97ec1a4") << "not the Nic Driver Version line";
  EXPECT_EQ(r->tool_version, "hl-1.22.1-fw-61.4.2.1");
  ASSERT_EQ(r->devices.size(), 8u);
  const std::vector<std::string> bus_ids = {"0000:33:00.0", "0000:9a:00.0", "0000:34:00.0", "0000:4d:00.0",
                                            "0000:4e:00.0", "0000:9b:00.0", "0000:b3:00.0", "0000:b4:00.0"};
  for (std::size_t i = 0; i < 8; ++i) {
    const auto& d = r->devices[i];
    EXPECT_EQ(d.index, i);
    EXPECT_EQ(d.name, "HL-225");
    ASSERT_TRUE(d.bus_id);
    EXPECT_EQ(d.bus_id->to_string(), bus_ids[i]);
    EXPECT_EQ(d.memory_total_bytes, 98304 * MiB);
    EXPECT_EQ(d.memory_used_bytes, 768 * MiB);
    EXPECT_EQ(d.power_limit_watts, 600.0);
  }
  EXPECT_TRUE(r->problems.empty());
}

TEST(GaudiConformance, RayDocs8xHl225ThroughTheDetector) {
  const fs::path capture = shared_capture("gaudi/ray-docs-8x-hl225-gaudi2/hl-smi.txt");
  if (capture.empty()) GTEST_SKIP() << "shared capture gaudi/ray-docs-8x-hl225-gaudi2 not available";
  // The capture is the default table only: the query form is replayed as refused,
  // which is the case the table fallback serves.
  FixtureBuilder f("8x Gaudi 2 HL-225 (hl-smi table)", "ray-project/ray docs capture");
  f.command(hl_smi_query, "", 1, "hl-smi: the capture holds the default table only\n");
  f.command({"hl-smi"}, read_file(capture));
  const auto registry = detect_only(f, Backend::gaudi);
  ASSERT_EQ(registry.devices().size(), 8u);
  for (const auto& d : registry.devices()) {
    EXPECT_EQ(d.name, "Intel Gaudi 2 HL-225");
    EXPECT_EQ(d.compute_capability, "gaudi2");
    EXPECT_EQ(d.memory_bytes, 98304 * MiB);
    EXPECT_EQ(d.driver_version, "1.22.1-97ec1a4");
    EXPECT_EQ(d.firmware_version, "61.4.2.1");
    EXPECT_EQ(d.power_limit_watts, 600.0);
  }
  EXPECT_EQ(registry.devices()[1].pci_bus_id, "0000:9a:00.0");
  ASSERT_EQ(registry.warnings().size(), 1u);
  EXPECT_EQ(registry.warnings()[0].kind, WarningKind::degraded);
}

// --- Neuron: neuron/docs-inf1-6xlarge-sdk2.8 (tables, no JSON in that release) ---

void expect_inf1(const parsers::NeuronLsReport& r, bool with_domain) {
  // SOURCE.md: 4 devices x 4 NeuronCores, 8 GB each, BDF 00:1c.0..00:1f.0, chain 0-1-2-3.
  ASSERT_EQ(r.devices.size(), 4u);
  const std::vector<std::string> bdf = {"0000:00:1c.0", "0000:00:1d.0", "0000:00:1e.0", "0000:00:1f.0"};
  const std::vector<std::vector<std::uint32_t>> peers = {{1}, {2, 0}, {3, 1}, {2}};
  for (std::size_t i = 0; i < 4; ++i) {
    const auto& d = r.devices[i];
    EXPECT_EQ(d.index, i);
    EXPECT_EQ(d.neuroncores, 4u);
    EXPECT_EQ(d.memory_bytes, 8 * GiB);
    ASSERT_TRUE(d.bus_id);
    EXPECT_EQ(d.bus_id->to_string(), bdf[i]) << (with_domain ? "" : "domain-less BDF column");
    EXPECT_EQ(d.connected_to, peers[i]);
  }
  EXPECT_TRUE(r.problems.empty());
}

TEST(NeuronConformance, Inf1TablesOfEveryView) {
  const fs::path dir = shared_capture("neuron/docs-inf1-6xlarge-sdk2.8");
  if (dir.empty()) GTEST_SKIP() << "shared capture neuron/docs-inf1-6xlarge-sdk2.8 not available";
  for (const char* file : {"neuron-ls.txt", "neuron-ls-wide.txt", "neuron-ls-show-all-procs.txt", "neuron-ls-topology.txt"}) {
    SCOPED_TRACE(file);
    const auto r = parsers::parse_neuron_ls_table(read_file(dir / file));
    ASSERT_TRUE(r) << r.error().message;
    expect_inf1(*r, std::string(file) != "neuron-ls-topology.txt");
  }
  // --show-all-procs lists neuron-monitor and neuron-ls itself as further processes.
  const auto all = parsers::parse_neuron_ls_table(read_file(dir / "neuron-ls-show-all-procs.txt"));
  ASSERT_TRUE(all);
  EXPECT_EQ(all->devices[0].process_count, 4u);
  EXPECT_EQ(all->devices[3].process_count, 2u);
}

TEST(NeuronConformance, Inf1ThroughTheDetector) {
  const fs::path dir = shared_capture("neuron/docs-inf1-6xlarge-sdk2.8");
  if (dir.empty()) GTEST_SKIP() << "shared capture neuron/docs-inf1-6xlarge-sdk2.8 not available";
  // Neuron SDK 2.8 had no JSON output: both JSON flags are replayed as refused.
  FixtureBuilder f("inf1.6xlarge", "aws-neuron-sdk docs capture");
  f.command({"neuron-ls", "--output-format", "json"}, "", 2, "neuron-ls: error: unrecognized arguments: --output-format json\n");
  f.command({"neuron-ls", "--json-output"}, "", 2, "neuron-ls: error: unrecognized arguments: --json-output\n");
  f.command({"neuron-ls"}, read_file(dir / "neuron-ls.txt"));
  const auto registry = detect_only(f, Backend::aws_neuron);
  EXPECT_TRUE(registry.warnings().empty());
  ASSERT_EQ(registry.devices().size(), 4u);
  for (const auto& d : registry.devices()) {
    // The capture names no instance type and has no sysfs: the chip is not guessed.
    EXPECT_EQ(d.name, "AWS Neuron device");
    EXPECT_EQ(d.memory_bytes, 8 * GiB);
    EXPECT_EQ(d.compute_units, 4u);
  }
  ASSERT_EQ(registry.links().size(), 3u);
  EXPECT_EQ(registry.links()[0].a, "aws_neuron:0");
  EXPECT_EQ(registry.links()[0].b, "aws_neuron:1");
  EXPECT_EQ(registry.links()[2].b, "aws_neuron:3");
}

// --- Neuron: neuron/docs-trn2n-48xlarge-current ---------------------------------

TEST(NeuronConformance, Trn2nTablesOfEveryView) {
  const fs::path dir = shared_capture("neuron/docs-trn2n-48xlarge-current");
  if (dir.empty()) GTEST_SKIP() << "shared capture neuron/docs-trn2n-48xlarge-current not available";
  for (const char* file : {"neuron-ls.txt", "neuron-ls-wide.txt", "neuron-ls-show-all-procs.txt", "neuron-ls-topology.txt"}) {
    SCOPED_TRACE(file);
    const auto r = parsers::parse_neuron_ls_table(read_file(dir / file));
    ASSERT_TRUE(r) << r.error().message;
    // SOURCE.md: 16 devices x 4 NeuronCores (LNC=2), 96 GB = 103079215104 bytes, instance-type header line.
    EXPECT_EQ(r->instance_type, "trn2n.48xlarge");
    EXPECT_EQ(r->logical_neuroncore_config, 2u);
    ASSERT_EQ(r->devices.size(), 16u);
    for (const auto& d : r->devices) {
      EXPECT_EQ(d.neuroncores, 4u);
      EXPECT_EQ(d.memory_bytes, 103079215104ull);
    }
    EXPECT_EQ(r->devices[0].bus_id->to_string(), "0000:cc:00.0");
    EXPECT_EQ(r->devices[15].bus_id->to_string(), "0000:f7:00.0");
    EXPECT_EQ(r->devices[0].connected_to, (std::vector<std::uint32_t>{12, 3, 4, 1}));
    EXPECT_TRUE(r->problems.empty());
  }
  const auto main = parsers::parse_neuron_ls_table(read_file(dir / "neuron-ls.txt"));
  ASSERT_TRUE(main);
  // NUMA: devices 0-3 and 12-15 on node 1, 4-11 on node 0.
  for (const auto& d : main->devices) {
    EXPECT_EQ(d.numa_node, (d.index >= 4 && d.index <= 11) ? 0 : 1) << d.index;
    EXPECT_EQ(d.neuroncore_ids, std::to_string(d.index * 4) + "-" + std::to_string(d.index * 4 + 3));
  }
  EXPECT_EQ(main->devices[4].cpu_affinity, "0-47,96-143");
}

TEST(NeuronConformance, Trn2nAbridgedJsonFieldNames) {
  const fs::path capture = shared_capture("neuron/docs-trn2n-48xlarge-current/neuron-ls-j.abridged.json.txt");
  if (capture.empty()) GTEST_SKIP() << "shared capture neuron/docs-trn2n-48xlarge-current not available";
  const std::string abridged = read_file(capture);
  // The doc elides devices 1..14 with a bare "..." line: not JSON as printed.
  EXPECT_EQ(parsers::parse_neuron_ls_json(abridged).error().kind, ErrorKind::parse_error);
  std::string json;
  for (std::string_view rest = abridged; !rest.empty();) {
    const auto nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
    if (line.find("...") != std::string_view::npos && line.find('"') == std::string_view::npos) continue;
    json.append(line).push_back('\n');
  }
  const auto r = parsers::parse_neuron_ls_json(json);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->devices.size(), 2u);
  EXPECT_EQ(r->devices[0].index, 0u);
  EXPECT_EQ(r->devices[0].bus_id->to_string(), "0000:cc:00.0");
  EXPECT_EQ(r->devices[0].numa_node, 1) << "numa_node is the string \"1\"";
  EXPECT_EQ(r->devices[0].memory_bytes, 103079215104ull);
  EXPECT_EQ(r->devices[0].logical_neuroncore_config, 2u);
  EXPECT_EQ(r->devices[0].neuroncore_ids, "0-3");
  EXPECT_EQ(r->devices[0].process_count, 1u);
  EXPECT_EQ(r->devices[1].index, 15u);
  EXPECT_EQ(r->devices[1].connected_to, (std::vector<std::uint32_t>{11, 14, 3, 12}));
}

TEST(NeuronConformance, Trn2nThroughTheDetector) {
  const fs::path dir = shared_capture("neuron/docs-trn2n-48xlarge-current");
  if (dir.empty()) GTEST_SKIP() << "shared capture neuron/docs-trn2n-48xlarge-current not available";
  // The doc's JSON is abridged (not a whole answer): both JSON forms replayed as refused.
  FixtureBuilder f("trn2n.48xlarge", "aws-neuron-sdk docs capture");
  f.command({"neuron-ls", "--output-format", "json"}, "", 2, "neuron-ls: error: unrecognized arguments: --output-format json\n");
  f.command({"neuron-ls", "--json-output"}, "", 2, "neuron-ls: error: the capture has no whole JSON answer\n");
  f.command({"neuron-ls"}, read_file(dir / "neuron-ls.txt"));
  const auto registry = detect_only(f, Backend::aws_neuron);
  EXPECT_TRUE(registry.warnings().empty());
  ASSERT_EQ(registry.devices().size(), 16u);
  for (const auto& d : registry.devices()) {
    EXPECT_EQ(d.name, "AWS Trainium2");
    EXPECT_EQ(d.memory_bytes, 96 * GiB);
    EXPECT_EQ(d.compute_units, 4u);
    EXPECT_EQ(d.properties.at("physical_neuroncores"), "8");
    EXPECT_EQ(d.numa_node, (d.index >= 4 && d.index <= 11) ? 0 : 1);
  }
  // A 4x4 torus with wrap-around: four NeuronLink neighbours each, 32 links.
  EXPECT_EQ(registry.links().size(), 32u);
  ASSERT_EQ(registry.interconnects().size(), 1u);
  EXPECT_EQ(registry.interconnects()[0].device_ids.size(), 16u);
}

// --- Intel: intel/xpumanager-readme-arc-b580 and intel/lact-b580-sysfs ----------
// The default `xpu-smi` table (xpu-smi.txt) is not what the detector reads; its
// `discovery -d 0` box is.

TEST(IntelConformance, XpuSmiDiscoveryOfAnArcB580) {
  const fs::path capture = shared_capture("intel/xpumanager-readme-arc-b580/xpu-smi-discovery-d0.txt");
  if (capture.empty()) GTEST_SKIP() << "shared capture intel/xpumanager-readme-arc-b580 not available";
  const auto r = parsers::parse_xpu_smi_discovery(read_file(capture));
  ASSERT_TRUE(r) << r.error().message;
  // SOURCE.md: 1 GPU, Intel(R) Arc(TM) B580 Graphics, 0xe20b at 0000:03:00.0, 12216 MiB,
  // driver 9FF4708BCC22C0EE6FD801A, PCIe gen 4 x8, 160 EUs, 1 tile, empty GFX firmware version.
  ASSERT_EQ(r->size(), 1u);
  const auto& d = (*r)[0];
  EXPECT_EQ(d.device_id, 0u);
  EXPECT_EQ(d.get("Device Name"), "Intel(R) Arc(TM) B580 Graphics");
  EXPECT_EQ(d.get("PCI Device ID"), "0xe20b");
  EXPECT_EQ(d.get("PCI BDF Address"), "0000:03:00.0");
  EXPECT_EQ(text::parse_memory_size(*d.get("Memory Physical Size")), 12216 * MiB);
  EXPECT_EQ(d.get("Driver Version"), "9FF4708BCC22C0EE6FD801A");
  EXPECT_EQ(d.get("PCIe Generation"), "4");
  EXPECT_EQ(d.get("PCIe Max Link Width"), "8");
  EXPECT_EQ(d.get("Number of EUs"), "160");
  EXPECT_EQ(d.get("Number of Tiles"), "1");
  EXPECT_FALSE(d.get("GFX Firmware Version"));
}

TEST(IntelConformance, LactB580XeSysfs) {
  const fs::path card = shared_capture("intel/lact-b580-sysfs/card1");
  if (card.empty()) GTEST_SKIP() << "shared capture intel/lact-b580-sysfs not available";
  FixtureBuilder f("Arc B580 on xe", "LACT snapshot");
  f.tree(card, "/sys/class/drm/card1");
  const auto registry = detect_only(f, Backend::intel_oneapi);
  EXPECT_TRUE(registry.warnings().empty());
  // SOURCE.md: 1 GPU (card1) on xe, 8086:e20b at 0000:09:00.0, no VRAM file, the
  // function's 2.5 GT/s x1 is the card switch's internal link.
  ASSERT_EQ(registry.devices().size(), 1u);
  const DeviceProfile& d = registry.devices()[0];
  EXPECT_EQ(d.name, "Intel Arc B580");
  EXPECT_EQ(d.pci_bus_id, "0000:09:00.0");
  EXPECT_EQ(d.properties.at("driver"), "xe");
  EXPECT_FALSE(d.integrated);
  EXPECT_FALSE(d.memory_bytes) << "xe exposes no memory size here; nothing is guessed";
  EXPECT_FALSE(d.pcie) << "2.5 GT/s x1 is the switch-internal link, not the card's";
  EXPECT_NE(d.properties.at("pcie_link").find("2.5 GT/s x1"), std::string::npos);
}

}  // namespace
