// NVIDIA detection on the real nvidia-smi captures of ../shared/fixtures/real/nvidia:
// each capture's outputs answer the argv the cuda detector runs, and the
// result is checked against the ground truth of the capture's SOURCE.md.
//
// The `-q -x` XML reports (netdata-*, telegraf-*) are replayed here parser
// first and through the detector with nothing but the XML, as its fallback
// when the query form is missing. Not replayed: the default tables
// (nvidia-smi.txt of every capture: truncated names, no UUIDs, layout only for
// people) and `nvidia-smi --version`. tests/conformance/replay_real_captures.py
// replays every capture through the CLI exactly as the capture holds it.
// Below, the topology-only, `nvlink -s`-only and `-L`-only captures from issues get a minimal
// `--query-gpu` CSV naming the GPUs the capture shows, so that the assertions are about what the
// capture itself adds (links, affinity, MIG); replay_real_captures.py replays them alone.
#include <gtest/gtest.h>

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

std::string warnings_of(const AcceleratorRegistry& r) {
  std::string out;
  for (const auto& w : r.warnings()) out += std::string(to_string(w.kind)) + ": " + w.message + "\n";
  return out;
}

AcceleratorRegistry detect(FixtureBuilder& f) {
  auto system = FixtureSystem::open(f.write());
  EXPECT_TRUE(system) << system.error().message;
  return DetectBuilder::none().with(Backend::cuda).system_probes(false).detect(**system);
}

// A capture of utkuozdemir/nvidia_gpu_exporter: every command the detector
// runs is in it (the `--query-gpu` CSV holds all the detector's fields).
AcceleratorRegistry replay_exporter_capture(const fs::path& dir, int topo_exit = 0) {
  const fs::path x = dir / "extracted";
  const std::string query = read_file(x / "nvidia-smi-query-gpu.csv");
  FixtureBuilder f("nvidia_gpu_exporter capture", dir.string());
  f.command(nvidia_smi_argv::query(), query)
      .command(nvidia_smi_argv::optional_query(), query)
      .command(nvidia_smi_argv::list(), read_file(x / "nvidia-smi-L.txt"))
      .command(nvidia_smi_argv::topology(), read_file(x / "nvidia-smi-topo-m.txt"), topo_exit)
      .command(nvidia_smi_argv::nvlink(), read_file(x / "nvidia-smi-nvlink-s.txt"))
      .command(nvidia_smi_argv::details(), read_file(x / "nvidia-smi-q.txt"));
  return detect(f);
}

#define REQUIRE_CAPTURE(var, rel)                                                     \
  const fs::path var = shared_capture(rel);                                           \
  if (var.empty()) GTEST_SKIP() << "shared capture " << (rel) << " is not available " \
                                << "(set HWACCEL_SHARED_FIXTURES to ../shared/fixtures/real)"

TEST(NvidiaConformance, H100Sxm590) {
  REQUIRE_CAPTURE(dir, "nvidia/nge-linux-h100-80gb-hbm3-590.48.01");
  const auto r = replay_exporter_capture(dir);
  EXPECT_TRUE(r.warnings().empty()) << warnings_of(r);
  ASSERT_EQ(r.devices().size(), 1u);
  const DeviceProfile& d = r.devices()[0];
  EXPECT_EQ(d.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(d.memory_bytes, 85520809984u);
  EXPECT_EQ(d.driver_version, "590.48.01");
  EXPECT_EQ(d.compute_capability, "9.0");
  EXPECT_EQ(d.architecture, "Hopper");
  EXPECT_EQ(d.pci_bus_id, "0000:00:09.0");
  EXPECT_EQ(d.properties.at("pci_id"), "10de:2330");
  ASSERT_TRUE(d.pcie);
  EXPECT_EQ(d.pcie->current_generation(), 5u);
  EXPECT_EQ(d.pcie->max_generation(), 5u);
  EXPECT_EQ(d.pcie->current_width, 16u);
  EXPECT_EQ(d.pcie->max_width, 16u);
  EXPECT_EQ(d.properties.at("mig_mode"), "disabled");
  EXPECT_TRUE(d.partitions.empty());
  EXPECT_EQ(d.numa_node, 0);
  EXPECT_EQ(d.cpu_affinity, "0-19");
  EXPECT_EQ(d.memory_kind, MemoryKind::dedicated);
  // 18 NVLinks at 26.562 GB/s, yet no peer: a GPU passed through alone.
  EXPECT_EQ(d.properties.at("nvlink_links"), "18");
  EXPECT_EQ(d.properties.at("nvlink_link_gbps"), "26.562");
  EXPECT_TRUE(r.links().empty());
  EXPECT_TRUE(r.interconnects().empty());
}

TEST(NvidiaConformance, H100Mig590) {
  REQUIRE_CAPTURE(dir, "nvidia/nge-linux-h100-mig-590.48.01");
  const auto r = replay_exporter_capture(dir);
  EXPECT_TRUE(r.warnings().empty()) << warnings_of(r);
  ASSERT_EQ(r.devices().size(), 1u);
  const DeviceProfile& d = r.devices()[0];
  EXPECT_EQ(d.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(d.memory_bytes, 85520809984u);
  EXPECT_EQ(d.pci_bus_id, "0000:00:09.0");
  EXPECT_EQ(d.properties.at("mig_mode"), "enabled");
  EXPECT_EQ(d.properties.at("nvlink"), "not reported in MIG mode");
  EXPECT_EQ(d.numa_node, 0);
  EXPECT_EQ(d.cpu_affinity, "0-19");
  // 4 MIG devices: 3g.40gb, 2g.20gb, 1g.10gb, 1g.10gb; memory and instance ids from the same capture's -q.
  ASSERT_EQ(d.partitions.size(), 4u);
  const std::vector<std::string> profiles = {"3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"};
  const std::vector<std::uint64_t> mib = {40448, 20096, 9984, 9984};
  const std::vector<std::uint32_t> gpu_instances = {2, 3, 9, 10};
  const std::vector<std::uint32_t> sms = {60, 32, 16, 16};
  for (std::size_t i = 0; i < 4; ++i) {
    const DevicePartition& p = d.partitions[i];
    EXPECT_EQ(p.id, "cuda:0/mig:" + std::to_string(i));
    EXPECT_EQ(p.profile, profiles[i]);
    EXPECT_EQ(p.uuid, "MIG-0000000" + std::to_string(i) + "-0000-0000-0000-00000000000" + std::to_string(i));
    EXPECT_EQ(p.memory_bytes, mib[i] << 20);
    EXPECT_EQ(p.gpu_instance_id, gpu_instances[i]);
    EXPECT_EQ(p.compute_instance_id, 0u);
    EXPECT_EQ(p.compute_units, sms[i]);
  }
  EXPECT_EQ(d.properties.at("mig_memory_source"), "nvidia-smi -q");
}

TEST(NvidiaConformance, Rtx2080SuperDriver610) {
  REQUIRE_CAPTURE(dir, "nvidia/nge-linux-rtx-2080-super-610.57.04");
  const auto r = replay_exporter_capture(dir);
  EXPECT_TRUE(r.warnings().empty()) << warnings_of(r);
  ASSERT_EQ(r.devices().size(), 1u);
  const DeviceProfile& d = r.devices()[0];
  EXPECT_EQ(d.name, "NVIDIA GeForce RTX 2080 SUPER");
  EXPECT_EQ(d.memory_bytes, 8589934592u);
  EXPECT_EQ(d.driver_version, "610.57.04");
  EXPECT_EQ(d.compute_capability, "7.5");
  EXPECT_EQ(d.architecture, "Turing");
  EXPECT_EQ(d.pci_bus_id, "0000:0c:00.0");
  EXPECT_EQ(d.properties.at("pci_id"), "10de:1e81");
  ASSERT_TRUE(d.pcie);
  EXPECT_EQ(d.pcie->current_generation(), 1u);
  EXPECT_EQ(d.pcie->max_generation(), 3u);
  EXPECT_EQ(d.pcie->current_width, 16u);
  EXPECT_EQ(d.pcie->max_width, 16u);
  EXPECT_FALSE(d.properties.contains("mig_mode"));  // [N/A]
  EXPECT_EQ(d.numa_node, 0);
  EXPECT_EQ(d.cpu_affinity, "0-23");
  EXPECT_FALSE(d.properties.contains("nvlink_links"));  // all links inactive
}

TEST(NvidiaConformance, Rtx2080SuperWindows) {
  REQUIRE_CAPTURE(dir, "nvidia/nge-windows-rtx-2080-super-591.86");
  // SOURCE.md: `topo -m` exited 255 on Windows.
  const auto r = replay_exporter_capture(dir, 255);
  ASSERT_EQ(r.devices().size(), 1u);
  const DeviceProfile& d = r.devices()[0];
  EXPECT_EQ(d.name, "NVIDIA GeForce RTX 2080 SUPER");
  EXPECT_EQ(d.memory_bytes, 8589934592u);
  EXPECT_EQ(d.driver_version, "591.86");
  EXPECT_EQ(d.compute_capability, "7.5");
  EXPECT_EQ(d.pci_bus_id, "0000:0c:00.0");
  ASSERT_TRUE(d.pcie);
  EXPECT_EQ(d.pcie->current_generation(), 3u);
  EXPECT_EQ(d.pcie->max_generation(), 3u);
  EXPECT_FALSE(d.numa_node);
  EXPECT_FALSE(d.cpu_affinity);
  ASSERT_EQ(r.warnings().size(), 1u) << warnings_of(r);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::tool_failed);
  EXPECT_EQ(r.warnings()[0].message,
            "nvidia-smi topo -m exited with code 255: ERROR: Option -m is missing its value. Please run 'nvidia-smi "
            "-h' for help.");
}

TEST(NvidiaConformance, QueryTextOfEveryExporterCaptureAgreesWithItsCsv) {
  const std::vector<std::string> names = {"nge-linux-h100-80gb-hbm3-590.48.01", "nge-linux-h100-mig-590.48.01",
                                          "nge-linux-rtx-2080-super-610.57.04", "nge-windows-rtx-2080-super-591.86"};
  int seen = 0;
  for (const auto& name : names) {
    const fs::path dir = shared_capture("nvidia/" + name);
    if (dir.empty()) continue;
    ++seen;
    const auto text = parsers::parse_query_text(read_file(dir / "extracted" / "nvidia-smi-q.txt"));
    const auto csv = parsers::parse_query_gpu(read_file(dir / "extracted" / "nvidia-smi-query-gpu.csv"));
    ASSERT_TRUE(text) << name << ": " << text.error().message;
    ASSERT_TRUE(csv) << name;
    ASSERT_EQ(text->gpus.size(), 1u) << name;
    ASSERT_EQ(csv->gpus.size(), 1u) << name;
    const auto& q = text->gpus[0];
    const auto& c = csv->gpus[0];
    EXPECT_EQ(q.name, c.name) << name;
    EXPECT_EQ(q.uuid, c.uuid) << name;
    EXPECT_EQ(q.bus_id, c.bus_id) << name;
    EXPECT_EQ(q.memory_total_bytes, c.memory_total_bytes) << name;
    EXPECT_EQ(q.driver_version, c.driver_version) << name;
    EXPECT_EQ(q.pcie_generation_max, c.pcie_generation_max) << name;
    EXPECT_EQ(q.pcie_width_current, c.pcie_width_current) << name;
    EXPECT_EQ(q.mig_enabled, c.mig_enabled) << name;
    EXPECT_EQ(q.pci_device_id, c.pci_device_id) << name;
    EXPECT_TRUE(text->problems.empty()) << name << ": " << (text->problems.empty() ? "" : text->problems[0].message);
    // The desktops' processes: the compositor at least, with a name; Windows keeps their memory to itself.
    if (name.find("rtx-2080") != std::string::npos) {
      ASSERT_FALSE(q.processes.empty()) << name;
      EXPECT_FALSE(q.processes[0].name.empty()) << name;
      EXPECT_NE(q.processes[0].pid, 0u) << name;
      EXPECT_EQ(q.processes[0].memory_used_bytes.has_value(), name.find("windows") == std::string::npos) << name;
    }
  }
  if (seen == 0) GTEST_SKIP() << "no nvidia_gpu_exporter capture available";
}

// `nvidia-smi -a` (= -q) of an 8x H100 SXM server: the capture holds nothing
// else, so the detector's query is not captured and its `-q` fallback reads it.
TEST(NvidiaConformance, EightH100SxmFromQueryText) {
  REQUIRE_CAPTURE(dir, "nvidia/gls-8x-h100-sxm-565");
  FixtureBuilder f("8x H100 SXM", dir.string());
  f.command(nvidia_smi_argv::details(), read_file(dir / "nvidia-smi-a.txt"));
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 8u) << warnings_of(r);
  const std::vector<std::string> buses = {"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0",
                                          "0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0"};
  for (std::size_t i = 0; i < 8; ++i) {
    const DeviceProfile& d = r.devices()[i];
    EXPECT_EQ(d.id, "cuda:" + std::to_string(i));
    EXPECT_EQ(d.name, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(d.memory_bytes, 85520809984u);
    EXPECT_EQ(d.driver_version, "565.57.01");
    EXPECT_EQ(d.architecture, "Hopper");
    EXPECT_EQ(d.pci_bus_id, buses[i]);
    ASSERT_TRUE(d.pcie);
    EXPECT_EQ(d.pcie->max_generation(), 5u);
    EXPECT_EQ(d.pcie->current_generation(), 5u);
    EXPECT_EQ(d.pcie->max_width, 16u);
    EXPECT_EQ(d.pcie->current_width, 16u);
    EXPECT_EQ(d.properties.at("mig_mode"), "disabled");
    EXPECT_EQ(d.properties.at("source"), "nvidia-smi -q");
    // `-q` does not print it: the ground truth derives it from the model, as the detector does.
    EXPECT_EQ(d.compute_capability, "9.0");
    EXPECT_EQ(d.properties.at("compute_capability_source"), "product name (this nvidia-smi view does not print it)");
  }
  // What the capture lacks is said, and nothing else.
  for (const auto& w : r.warnings())
    EXPECT_TRUE(w.kind == WarningKind::not_captured || w.kind == WarningKind::degraded) << w.message;
}

TEST(NvidiaConformance, TwoH100NvlFromQueryText) {
  REQUIRE_CAPTURE(dir, "nvidia/gls-2x-h100-nvl-550");
  const auto t = parsers::parse_query_text(read_file(dir / "nvidia-smi-a.txt"));
  ASSERT_TRUE(t) << t.error().message;
  ASSERT_EQ(t->gpus.size(), 2u);
  const std::vector<std::string> buses = {"0000:ad:00.0", "0000:ae:00.0"};
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& g = t->gpus[i];
    EXPECT_EQ(g.name, "NVIDIA H100 NVL");
    EXPECT_EQ(g.memory_total_bytes, 100485038080u);
    EXPECT_EQ(g.driver_version, "550.54.14");
    EXPECT_EQ(g.bus_id->to_string(), buses[i]);
    EXPECT_EQ(g.pcie_generation_max, 5u);
    EXPECT_EQ(g.pcie_generation_current, 5u);
    EXPECT_EQ(g.pcie_width_max, 16u);
    EXPECT_EQ(g.mig_enabled, false);
  }
}

// A minimal GPU list for captures that only hold topology or link data.
std::string gpu_csv(int gpus, const std::string& name) {
  std::string out = "index, name\n";
  for (int i = 0; i < gpus; ++i) out += std::to_string(i) + ", " + name + "\n";
  return out;
}

TEST(NvidiaConformance, FourH100Nv6TopologyPaste) {
  REQUIRE_CAPTURE(dir, "nvidia/issue-nccl1617-4x-h100-nv6-topo");
  FixtureBuilder f("4x H100 NV6", dir.string());
  f.command(nvidia_smi_argv::query(), gpu_csv(4, "NVIDIA H100 80GB HBM3"))
      .command(nvidia_smi_argv::topology(), read_file(dir / "nvidia-smi-topo-m.txt"));
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 4u) << warnings_of(r);
  // NV6 between every pair; NICs are not devices.
  ASSERT_EQ(r.links().size(), 6u);
  for (const auto& l : r.links()) {
    EXPECT_EQ(l.kind, LinkKind::nvlink) << l.a << "-" << l.b;
    EXPECT_EQ(l.lanes, 6u);
  }
  const std::vector<std::string> cpus = {"6,14,22,30", "4,12,20,28", "7,15,23,31", "5,13,21,29"};
  const std::vector<int> numa = {3, 1, 7, 5};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(r.devices()[i].cpu_affinity, cpus[i]);
    EXPECT_EQ(r.devices()[i].numa_node, numa[i]);
  }
  // Partial NVLink, not NVSwitch.
  ASSERT_EQ(r.interconnects().size(), 1u);
  EXPECT_EQ(r.interconnects()[0].kind, "nvlink_mesh");
  EXPECT_FALSE(r.interconnects()[0].switch_count);
}

TEST(NvidiaConformance, FourA100Nv4TopologyWithoutGpuNumaId) {
  REQUIRE_CAPTURE(dir, "nvidia/issue-nccltests331-4x-a100-nv4-topo");
  FixtureBuilder f("4x A100 NV4", dir.string());
  f.command(nvidia_smi_argv::query(), gpu_csv(4, "NVIDIA A100-SXM4-80GB"))
      .command(nvidia_smi_argv::topology(), read_file(dir / "nvidia-smi-topo-m.txt"));
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 4u) << warnings_of(r);
  ASSERT_EQ(r.links().size(), 6u);
  for (const auto& l : r.links()) EXPECT_EQ(l.lanes, 4u);
  for (const auto& d : r.devices()) {
    EXPECT_EQ(d.cpu_affinity, "0");
    EXPECT_FALSE(d.numa_node);  // "0-1" is not one node
    EXPECT_EQ(d.properties.at("numa_affinity"), "0-1");
  }
}

TEST(NvidiaConformance, A100NvlinkStatusPaste) {
  REQUIRE_CAPTURE(dir, "nvidia/issue-nccltests228-a100-nvlink-s");
  FixtureBuilder f("A100 NVSwitch box (truncated paste)", dir.string());
  f.command(nvidia_smi_argv::query(), gpu_csv(3, "NVIDIA A100-SXM4-80GB"))
      .command(nvidia_smi_argv::nvlink(), read_file(dir / "nvidia-smi-nvlink-s.txt"));
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 3u) << warnings_of(r);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(r.devices()[i].properties.at("nvlink_links"), "12");
    EXPECT_EQ(r.devices()[i].properties.at("nvlink_link_gbps"), "25");
    EXPECT_EQ(r.devices()[i].properties.at("nvlink_gbps"), "300");
  }
  // The user cut the paste after GPU 2's first link.
  EXPECT_EQ(r.devices()[2].properties.at("nvlink_links"), "1");
  // NVLink counts alone never make an NVSwitch.
  EXPECT_TRUE(r.interconnects().empty());
}

TEST(NvidiaConformance, FourA100WithMigOnGpu0Only) {
  REQUIRE_CAPTURE(dir, "nvidia/issue-telegraf5812-4x-a100-partial-mig-L");
  FixtureBuilder f("4x A100-SXM4-80GB, MIG on GPU 0", dir.string());
  f.command(nvidia_smi_argv::query(), gpu_csv(4, "NVIDIA A100-SXM4-80GB"))
      .command(nvidia_smi_argv::list(), read_file(dir / "nvidia-smi-L.txt"));
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 4u) << warnings_of(r);
  const DeviceProfile& gpu0 = r.devices()[0];
  EXPECT_EQ(gpu0.uuid, "GPU-513536b6-7d19-9063-b049-1e69664bb298");
  ASSERT_EQ(gpu0.partitions.size(), 4u);
  for (const auto& p : gpu0.partitions) {
    EXPECT_EQ(p.profile, "1g.20gb");
    ASSERT_TRUE(p.uuid);
    EXPECT_TRUE(p.uuid->starts_with("MIG-"));
    // No `-q` in this capture: the nominal size of the profile name, which is
    // above the 19968 MiB these instances really have; the device says so.
    EXPECT_EQ(p.memory_bytes, 20ull << 30);
    EXPECT_GE(*p.memory_bytes, 19968ull << 20);
  }
  EXPECT_EQ(gpu0.partitions[3].uuid, "MIG-930574a9-d43a-5d2b-95da-3e68384c8d6b");
  EXPECT_NE(gpu0.properties.at("mig_memory_source").find("profile names"), std::string::npos);
  for (std::size_t i = 1; i < 4; ++i) EXPECT_TRUE(r.devices()[i].partitions.empty());
  EXPECT_EQ(r.devices()[3].uuid, "GPU-69ec2344-ebac-b028-f88f-452abb3d7f11");
  // Schedulable CUDA devices: 4 MIG + 3 whole GPUs.
  std::size_t schedulable = 0;
  for (const auto& d : r.devices()) schedulable += d.partitions.empty() ? 1 : d.partitions.size();
  EXPECT_EQ(schedulable, 7u);
}

TEST(NvidiaConformance, TeslaP100NoUnitsCsv) {
  REQUIRE_CAPTURE(dir, "nvidia/netdata-tesla-p100-510");
  FixtureBuilder f("Tesla P100-PCIE-16GB", dir.string());
  f.command(nvidia_smi_argv::query(), read_file(dir / "nvidia-smi-query-gpu.csv"));
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 1u) << warnings_of(r);
  const DeviceProfile& d = r.devices()[0];
  EXPECT_EQ(d.name, "Tesla P100-PCIE-16GB");
  EXPECT_EQ(d.uuid, "GPU-ef1b2c9b-38d8-2090-2bd1-f567a3eb42a6");
  // The CSV has no memory.total column (SOURCE.md): nothing is made up from used + free.
  EXPECT_FALSE(d.memory_bytes);
  EXPECT_EQ(d.memory_used_bytes, 0u);
  EXPECT_EQ(d.memory_free_bytes, 16280ull << 20);
  EXPECT_EQ(d.temperature_c, 37.0);
  EXPECT_EQ(d.power_watts, 28.16);
}

}  // namespace

// --- `nvidia-smi -q -x` reports: the detector's fallback when the query is missing ---------

AcceleratorRegistry replay_xml_only(const fs::path& dir) {
  FixtureBuilder f("nvidia-smi -q -x capture", dir.string());
  f.command(nvidia_smi_argv::details_xml(), read_file(dir / "nvidia-smi-q-x.xml"));
  return detect(f);
}

TEST(NvidiaConformance, XmlA100WithTwoMigDevices) {
  REQUIRE_CAPTURE(dir, "nvidia/netdata-a100-sxm4-40gb-mig-510");
  const auto table = parsers::parse_query_xml(read_file(dir / "nvidia-smi-q-x.xml"));
  ASSERT_TRUE(table) << table.error().message;
  EXPECT_TRUE(table->problems.empty());
  const auto r = replay_xml_only(dir);
  ASSERT_EQ(r.devices().size(), 1u) << warnings_of(r);
  const DeviceProfile& d = r.devices()[0];
  EXPECT_EQ(d.name, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(d.memory_bytes, 40960ull << 20);
  EXPECT_EQ(d.driver_version, "510.47.03");
  EXPECT_EQ(d.pci_bus_id, "0000:00:04.0");
  EXPECT_EQ(d.properties.at("pci_id"), "10de:20b0");
  EXPECT_EQ(d.compute_capability, "8.0");  // not in the XML: from the model
  EXPECT_EQ(d.architecture, "Ampere");     // the XML's product_architecture
  ASSERT_TRUE(d.pcie);
  EXPECT_EQ(d.pcie->current_generation(), 4u);
  EXPECT_EQ(d.pcie->max_width, 16u);
  EXPECT_EQ(d.properties.at("mig_mode"), "enabled");
  EXPECT_EQ(d.properties.at("source"), "nvidia-smi -q -x");
  ASSERT_EQ(d.partitions.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(d.partitions[i].memory_bytes, 19968ull << 20);
    EXPECT_EQ(d.partitions[i].compute_units, 42u);
    EXPECT_EQ(d.partitions[i].gpu_instance_id, i + 1);
  }
}

TEST(NvidiaConformance, XmlTeslaP100) {
  REQUIRE_CAPTURE(dir, "nvidia/netdata-tesla-p100-510");
  const auto r = replay_xml_only(dir);
  ASSERT_EQ(r.devices().size(), 1u) << warnings_of(r);
  const DeviceProfile& d = r.devices()[0];
  EXPECT_EQ(d.name, "Tesla P100-PCIE-16GB");
  EXPECT_EQ(d.memory_bytes, 16384ull << 20);
  EXPECT_EQ(d.properties.at("pci_id"), "10de:15f8");
  EXPECT_EQ(d.compute_capability, "6.0");
  ASSERT_TRUE(d.pcie);
  EXPECT_EQ(d.pcie->max_generation(), 3u);
  EXPECT_EQ(d.pcie->current_width, 16u);
  EXPECT_FALSE(d.properties.contains("mig_mode"));  // N/A on Pascal
}

TEST(NvidiaConformance, XmlGridP4VirtualGpu) {
  REQUIRE_CAPTURE(dir, "nvidia/telegraf-grid-p4-1q-vgpu-513");
  const auto r = replay_xml_only(dir);
  ASSERT_EQ(r.devices().size(), 1u) << warnings_of(r);
  const DeviceProfile& d = r.devices()[0];
  EXPECT_EQ(d.name, "GRID P4-1Q");
  EXPECT_EQ(d.memory_bytes, 1024ull << 20);  // the vGPU's framebuffer, not the board's 8 GiB
  EXPECT_EQ(d.driver_version, "513.46");
  EXPECT_EQ(d.compute_capability, "6.1");
}

TEST(NvidiaConformance, XmlGtx1660TiAsGraphicsDevice) {
  REQUIRE_CAPTURE(dir, "nvidia/telegraf-gtx1660ti-graphics-device-418");
  const auto r = replay_xml_only(dir);
  ASSERT_EQ(r.devices().size(), 1u) << warnings_of(r);
  const DeviceProfile& d = r.devices()[0];
  // Driver 418 names the card "Graphics Device"; the PCI id says what it is.
  EXPECT_EQ(d.name, "Graphics Device");
  EXPECT_EQ(d.properties.at("pci_id"), "10de:2184");
  EXPECT_EQ(d.memory_bytes, 5912ull << 20);
  EXPECT_EQ(d.driver_version, "418.43");
  EXPECT_FALSE(d.compute_capability);  // no family in the name
}
