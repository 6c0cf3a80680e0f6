// NVIDIA backend: nvidia-smi output parsers and detection through fixture trees.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "../test_support.hpp"

import hwaccel;
import hwaccel.detectors;

#include "fixture_detection.hpp"

namespace {

using namespace hwaccel;
using hwaccel::testing::FixtureBuilder;
using Row = std::map<std::string, std::string>;

// --- helpers ------------------------------------------------------------------

std::vector<std::string> fields_of(const std::vector<std::string>& argv) {
  std::string list = argv.at(1).substr(std::string("--query-gpu=").size());
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const auto comma = list.find(',', start);
    out.push_back(list.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string unit_of(const std::string& field) {
  if (field.starts_with("memory.")) return " [MiB]";
  if (field.starts_with("power.")) return " [W]";
  if (field == "utilization.gpu") return " [%]";
  if (field == "clocks.max.memory") return " [MHz]";
  return "";
}

// `--format=csv` output for the fields of `argv`: units in the header and
// the values, ", " separators, [N/A] for anything a row does not give.
std::string csv(const std::vector<std::string>& argv, const std::vector<Row>& rows) {
  const auto fields = fields_of(argv);
  std::string out;
  for (std::size_t i = 0; i < fields.size(); ++i) out += (i ? ", " : "") + fields[i] + unit_of(fields[i]);
  out += '\n';
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < fields.size(); ++i) {
      const auto it = row.find(fields[i]);
      out += (i ? ", " : "") + (it == row.end() ? std::string("[N/A]") : it->second);
    }
    out += '\n';
  }
  return out;
}

Row h100(int index, const std::string& bus) {
  return {{"index", std::to_string(index)},
          {"uuid", "GPU-" + std::to_string(index) + "1b2c3d4-0000-1111-2222-333344445555"},
          {"name", "NVIDIA H100 80GB HBM3"},
          {"pci.bus_id", bus},
          {"pci.device_id", "0x233010DE"},
          {"driver_version", "565.57.01"},
          {"vbios_version", "96.00.99.00.01"},
          {"memory.total", "81559 MiB"},
          {"memory.used", "1 MiB"},
          {"memory.free", "81079 MiB"},
          {"compute_mode", "Default"},
          {"ecc.mode.current", "Enabled"},
          {"power.draw", "69.85 W"},
          {"power.limit", "700.00 W"},
          {"temperature.gpu", "31"},
          {"utilization.gpu", "0 %"},
          {"clocks.max.memory", "2619 MHz"},
          {"pcie.link.gen.current", "5"},
          {"pcie.link.gen.max", "5"},
          {"pcie.link.width.current", "16"},
          {"pcie.link.width.max", "16"},
          {"mig.mode.current", "Disabled"},
          {"compute_cap", "9.0"}};
}

std::string uuid_of(int index) { return "GPU-" + std::to_string(index) + "1b2c3d4-0000-1111-2222-333344445555"; }

std::string listing(int gpus, const std::string& name = "NVIDIA H100 80GB HBM3") {
  std::string out;
  for (int i = 0; i < gpus; ++i) out += "GPU " + std::to_string(i) + ": " + name + " (UUID: " + uuid_of(i) + ")\n";
  return out;
}

std::string nvlink_status(int gpus, int links, const std::string& speed, const std::string& name = "NVIDIA H100 80GB HBM3") {
  std::string out;
  for (int i = 0; i < gpus; ++i) {
    out += "GPU " + std::to_string(i) + ": " + name + " (UUID: " + uuid_of(i) + ")\n";
    for (int l = 0; l < links; ++l) out += "\t Link " + std::to_string(l) + ": " + speed + " GB/s\n";
  }
  return out;
}

constexpr const char* legend =
    "\nLegend:\n\n  X    = Self\n  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes "
    "(e.g., QPI/UPI)\n  NV#  = Connection traversing a bonded set of # NVLinks\n";

const char* optional_rejected = "Field \"addressing_mode\" is not a valid field to query.\n\n";

// A PCI function in sysfs, bound to `driver`.
void pci_device(FixtureBuilder& f, const std::string& addr, const std::string& driver, const std::string& cls,
                const std::string& device, int numa, const std::string& cpulist, const std::string& cur_speed,
                const std::string& max_speed, int width) {
  const std::string dir = "/sys/bus/pci/devices/" + addr;
  f.file(dir + "/vendor", "0x10de\n")
      .file(dir + "/device", device + "\n")
      .file(dir + "/class", cls + "\n")
      .file(dir + "/numa_node", std::to_string(numa) + "\n")
      .file(dir + "/local_cpulist", cpulist + "\n")
      .file(dir + "/current_link_speed", cur_speed + "\n")
      .file(dir + "/max_link_speed", max_speed + "\n")
      .file(dir + "/current_link_width", std::to_string(width) + "\n")
      .file(dir + "/max_link_width", std::to_string(width) + "\n")
      .link(dir + "/driver", "../../../bus/pci/drivers/" + driver)
      .link("/sys/bus/pci/drivers/" + driver + "/" + addr, "../../devices/" + addr);
}

void gpu_sysfs(FixtureBuilder& f, const std::string& addr, int numa, const std::string& cpulist) {
  pci_device(f, addr, "nvidia", "0x030200", "0x2330", numa, cpulist, "2.5 GT/s PCIe", "32.0 GT/s PCIe", 16);
}

std::vector<WarningKind> kinds(const AcceleratorRegistry& r) {
  std::vector<WarningKind> out;
  for (const auto& w : r.warnings()) out.push_back(w.kind);
  return out;
}

std::string all_warnings(const AcceleratorRegistry& r) {
  std::string out;
  for (const auto& w : r.warnings()) out += std::string(to_string(w.kind)) + ": " + w.message + "\n";
  return out;
}

AcceleratorRegistry detect(FixtureBuilder& f) { return hwaccel::testing::detect_backend(f, Backend::cuda); }

const DeviceProfile& device(const AcceleratorRegistry& r, std::size_t i) { return r.devices()[i]; }

// --- value and CSV parsers ----------------------------------------------------

TEST(CudaParsers, PlaceholdersAreNoValue) {
  for (const char* p : {"[N/A]", "N/A", "[Not Supported]", "[Unknown Error]", "[Insufficient Permissions]",
                        "[Requested functionality has been deprecated]", "Requested functionality has been deprecated",
                        "", "   ", "[GPU is lost]"})
    EXPECT_FALSE(parsers::nvidia_smi_value(p)) << p;
  EXPECT_EQ(parsers::nvidia_smi_value(" 81559 MiB "), "81559 MiB");
  EXPECT_EQ(parsers::nvidia_smi_value("Disabled"), "Disabled");
}

TEST(CudaParsers, CsvByHeaderNameInAnyOrderWithExtraColumns) {
  const std::string text =
      "timestamp, memory.total [MiB], fan.speed [%], name, index, pci.bus_id, compute_cap\n"
      "2026/07/14 08:12:38.123, 81559 MiB, [N/A], NVIDIA H100 80GB HBM3, 0, 00000000:18:00.0, 9.0\n";
  const auto table = parsers::parse_query_gpu(text);
  ASSERT_TRUE(table) << table.error().message;
  ASSERT_EQ(table->gpus.size(), 1u);
  parsers::NvidiaGpu expected;
  expected.index = 0;
  expected.name = "NVIDIA H100 80GB HBM3";
  expected.bus_id = PciAddress::parse("0000:18:00.0");
  expected.memory_total_bytes = 81559ull << 20;
  expected.compute_capability = "9.0";
  EXPECT_EQ(table->gpus[0], expected);
  EXPECT_TRUE(table->problems.empty());
}

TEST(CudaParsers, CsvNoUnitsVariantTakesTheHeaderUnit) {
  // `--format=csv,nounits`: units only in the header.
  const auto table = parsers::parse_query_gpu(
      "name, memory.used [MiB], memory.free [MiB], power.draw [W], utilization.gpu [%], temperature.gpu\n"
      "Tesla P100-PCIE-16GB, 0, 16280, 28.16, 0, 37\n");
  ASSERT_TRUE(table);
  ASSERT_EQ(table->gpus.size(), 1u);
  const auto& g = table->gpus[0];
  EXPECT_EQ(g.memory_used_bytes, 0u);
  EXPECT_EQ(g.memory_free_bytes, 16280ull << 20);
  EXPECT_FALSE(g.memory_total_bytes);
  EXPECT_EQ(g.power_draw_watts, 28.16);
  EXPECT_EQ(g.utilization_percent, 0.0);
  EXPECT_EQ(g.temperature_c, 37.0);
  EXPECT_FALSE(g.index);
}

TEST(CudaParsers, EveryFieldOfTheDetectorsQuery) {
  const auto argv = nvidia_smi_argv::query();
  const auto table = parsers::parse_query_gpu(csv(argv, {h100(3, "00000000:9A:00.0")}));
  ASSERT_TRUE(table);
  ASSERT_EQ(table->gpus.size(), 1u);
  const auto& g = table->gpus[0];
  EXPECT_EQ(g.index, 3u);
  EXPECT_EQ(g.uuid, uuid_of(3));
  EXPECT_EQ(g.bus_id->to_string(), "0000:9a:00.0");
  EXPECT_EQ(g.pci_device_id, 0x2330);
  EXPECT_EQ(g.driver_version, "565.57.01");
  EXPECT_EQ(g.vbios_version, "96.00.99.00.01");
  EXPECT_EQ(g.memory_used_bytes, 1ull << 20);
  EXPECT_EQ(g.compute_mode, "Default");
  EXPECT_EQ(g.ecc_enabled, true);
  EXPECT_EQ(g.power_limit_watts, 700.0);
  EXPECT_EQ(g.max_memory_clock_mhz, 2619.0);
  EXPECT_EQ(g.pcie_generation_current, 5u);
  EXPECT_EQ(g.pcie_width_max, 16u);
  EXPECT_EQ(g.mig_enabled, false);
  EXPECT_TRUE(table->problems.empty());
}

TEST(CudaParsers, ImplausibleValuesAreDiscardedWithAProblem) {
  const auto table = parsers::parse_query_gpu(
      "index, name, memory.total [MiB], temperature.gpu, utilization.gpu [%], compute_cap, pci.bus_id\n"
      "0, NVIDIA A100, lots MiB, 9000, 140 %, nine, not-a-bus\n");
  ASSERT_TRUE(table);
  ASSERT_EQ(table->gpus.size(), 1u);
  const auto& g = table->gpus[0];
  EXPECT_FALSE(g.memory_total_bytes);
  EXPECT_FALSE(g.temperature_c);
  EXPECT_FALSE(g.utilization_percent);
  EXPECT_FALSE(g.compute_capability);
  EXPECT_FALSE(g.bus_id);
  ASSERT_EQ(table->problems.size(), 5u);
  for (const auto& p : table->problems) EXPECT_EQ(p.kind, WarningKind::invalid_value);
  EXPECT_NE(table->problems[0].message.find("pci.bus_id"), std::string::npos);
  EXPECT_NE(table->problems[1].message.find("memory.total"), std::string::npos);
}

TEST(CudaParsers, TruncatedHeaderOnlyGarbageAndErrorLines) {
  // A row cut short: skipped with a problem, the complete one kept.
  auto t = parsers::parse_query_gpu("index, name, memory.total [MiB]\n0, NVIDIA L4, 23034 MiB\n1, NVIDIA L");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->gpus.size(), 1u);
  ASSERT_EQ(t->problems.size(), 1u);
  EXPECT_EQ(t->problems[0].kind, WarningKind::parse_error);
  EXPECT_NE(t->problems[0].message.find("line 3 has 2 fields where the header has 3"), std::string::npos);
  // Header only.
  t = parsers::parse_query_gpu("index, name, memory.total [MiB]\n");
  ASSERT_TRUE(t);
  EXPECT_TRUE(t->gpus.empty());
  // Garbage and messages are not a table.
  for (std::string bad : {std::string("\x7f" "ELF\x02\x01\x01\0\0\0\xff\xfe", 12), std::string(""),
                          std::string("No devices were found\n"),
                          std::string("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n"),
                          // A lone word in random bytes looks like a one-field header.
                          std::string("\x9a\x1b\xa1\n" "D\n" "\x08\x03\n" "u\n" "K7\n")}) {
    const auto r = parsers::parse_query_gpu(bad);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().kind, ErrorKind::parse_error);
  }
  // A lost GPU's message before the header does not hide the table.
  t = parsers::parse_query_gpu(
      "Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error\nindex, name\n0, NVIDIA A10\n");
  ASSERT_TRUE(t);
  ASSERT_EQ(t->gpus.size(), 1u);
  EXPECT_EQ(t->gpus[0].name, "NVIDIA A10");
}

TEST(CudaParsers, HugeOutputIsCutWithBoundedProblems) {
  std::string text = "index, name\n0, NVIDIA T4\n";
  while (text.size() < (10u << 20)) text += "garbage without the right field count, a, b, c\n";
  const auto t = parsers::parse_query_gpu(text);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->gpus.size(), 1u);
  ASSERT_LE(t->problems.size(), 10u);
  EXPECT_EQ(t->problems.back().kind, WarningKind::truncated);
}

TEST(CudaParsers, RejectedField) {
  EXPECT_EQ(parsers::rejected_query_field("Field \"compute_cap\" is not a valid field to query.\n\n"), "compute_cap");
  EXPECT_FALSE(parsers::rejected_query_field("Invalid combination of input arguments.\n"));
  EXPECT_FALSE(parsers::rejected_query_field("Field \""));
}

// --- nvidia-smi -L -----------------------------------------------------------------

TEST(CudaParsers, ListWithPartialMig) {
  const auto gpus = parsers::parse_gpu_list(
      "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-513536b6-7d19-9063-b049-1e69664bb298)\n"
      "  MIG 1g.20gb     Device  0: (UUID: MIG-ce861fb0-a248-58ce-a9a8-f9adbc22a66a)\n"
      "  MIG 1c.3g.40gb  Device  1: (UUID: MIG-a45882f0-9215-5733-a0c1-49286ab31cb5)\n"
      "GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-d8594bd4-0fc3-8595-e355-7c98138f3b95)\n"
      "some banner line\n");
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(gpus[0].uuid, "GPU-513536b6-7d19-9063-b049-1e69664bb298");
  ASSERT_EQ(gpus[0].mig_devices.size(), 2u);
  EXPECT_EQ(gpus[0].mig_devices[1].index, 1u);
  EXPECT_EQ(gpus[0].mig_devices[1].profile, "1c.3g.40gb");
  EXPECT_EQ(gpus[0].mig_devices[1].uuid, "MIG-a45882f0-9215-5733-a0c1-49286ab31cb5");
  EXPECT_FALSE(gpus[0].mig_devices[1].gpu_instance_id);
  EXPECT_TRUE(gpus[1].mig_devices.empty());
}

// The fuzz corpus holds the layouts of R470 and R570 tables, the latter with
// MIG devices and processes.
std::string default_table(std::string_view name) {
  return hwaccel::testing::read_file(hwaccel::testing::fixtures_root().parent_path() / "tests/fuzz/corpus/nvidia_default_table" / name);
}

TEST(CudaParsers, DefaultTableWithMigDevicesAndProcesses) {
  const auto table = parsers::parse_default_table(default_table("two-gpus-mig-and-processes.txt"));
  ASSERT_TRUE(table) << table.error().message;
  ASSERT_EQ(table->gpus.size(), 2u);
  const auto& g0 = table->gpus[0];
  EXPECT_EQ(g0.index, 0u);
  EXPECT_EQ(g0.name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(g0.bus_id, PciAddress::parse("00000000:07:00.0"));
  EXPECT_EQ(g0.driver_version, "570.86.15");
  EXPECT_EQ(g0.memory_total_bytes, 81920ull << 20);
  EXPECT_EQ(g0.memory_used_bytes, 88ull << 20);
  EXPECT_FALSE(g0.memory_free_bytes);  // not printed: the driver's reserve is in neither
  EXPECT_EQ(g0.power_draw_watts, 61.0);
  EXPECT_EQ(g0.power_limit_watts, 400.0);
  EXPECT_EQ(g0.temperature_c, 33.0);
  EXPECT_FALSE(g0.utilization_percent);  // N/A under MIG
  EXPECT_EQ(g0.compute_mode, "Default");
  EXPECT_EQ(g0.mig_enabled, true);
  ASSERT_EQ(g0.mig_devices.size(), 2u);
  EXPECT_EQ(g0.mig_devices[1].index, 1u);
  EXPECT_EQ(g0.mig_devices[1].gpu_instance_id, 2u);
  EXPECT_EQ(g0.mig_devices[1].compute_instance_id, 0u);
  EXPECT_EQ(g0.mig_devices[1].memory_bytes, 40192ull << 20);
  EXPECT_EQ(g0.mig_devices[1].memory_used_bytes, 44ull << 20);
  EXPECT_EQ(g0.mig_devices[1].multiprocessors, 42u);
  const auto& g1 = table->gpus[1];
  EXPECT_EQ(g1.utilization_percent, 87.0);
  EXPECT_EQ(g1.compute_mode, "Exclusive_Process");
  EXPECT_EQ(g1.mig_enabled, false);
  EXPECT_TRUE(g1.mig_devices.empty());
  EXPECT_TRUE(table->problems.empty());
}

TEST(CudaParsers, DefaultTableOlderLayoutKeepsACutNameAndSaysSo) {
  const auto table = parsers::parse_default_table(default_table("r470-layout-truncated-name.txt"));
  ASSERT_TRUE(table) << table.error().message;
  ASSERT_EQ(table->gpus.size(), 1u);
  EXPECT_EQ(table->gpus[0].name, "Tesla V100-SXM2...");
  EXPECT_EQ(table->gpus[0].memory_total_bytes, 16160ull << 20);
  EXPECT_EQ(table->gpus[0].power_limit_watts, 300.0);
  EXPECT_FALSE(table->gpus[0].mig_enabled);  // N/A
  EXPECT_TRUE(table->problems.empty());
}

// A name the table cut short is taken whole from `-L`; without it, kept as
// printed with a warning (never taken for a shorter product's name).
TEST(CudaDetection, DefaultTableCutNameTakenFromTheListing) {
  FixtureBuilder f;
  f.command(nvidia_smi_argv::table(), default_table("r470-layout-truncated-name.txt"));
  const auto alone = detect(f);
  ASSERT_EQ(alone.devices().size(), 1u);
  EXPECT_EQ(device(alone, 0).name, "Tesla V100-SXM2...");
  EXPECT_NE(all_warnings(alone).find("truncated: nvidia-smi: GPU 0: the table cuts the name short"), std::string::npos)
      << all_warnings(alone);
  f.command(nvidia_smi_argv::list(), "GPU 0: Tesla V100-SXM2-16GB (UUID: GPU-0a1b2c3d-0000-1111-2222-333344445555)\n");
  const auto listed = detect(f);
  ASSERT_EQ(listed.devices().size(), 1u);
  EXPECT_EQ(device(listed, 0).name, "Tesla V100-SXM2-16GB");
  EXPECT_EQ(device(listed, 0).compute_capability, "7.0");
  EXPECT_EQ(all_warnings(listed).find("cuts the name short"), std::string::npos);
}

// Copied without its blank lines, the MIG and process boxes are still not GPU rows.
TEST(CudaParsers, DefaultTableWithoutBlankLines) {
  const auto table = parsers::parse_default_table(default_table("blank-lines-lost.txt"));
  ASSERT_TRUE(table) << table.error().message;
  ASSERT_EQ(table->gpus.size(), 2u);
  EXPECT_EQ(table->gpus[0].mig_devices.size(), 2u);
  EXPECT_EQ(table->gpus[1].memory_total_bytes, 81920ull << 20);
}

TEST(CudaParsers, DefaultTableGarbageAndDamage) {
  EXPECT_FALSE(parsers::parse_default_table(""));
  EXPECT_FALSE(parsers::parse_default_table("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."));
  EXPECT_FALSE(parsers::parse_default_table(std::string(5000, '|')));
  // Cut in the middle of the first GPU: the row that is there is read.
  auto text = default_table("two-gpus-mig-and-processes.txt");
  text.resize(text.find("| N/A   33C"));
  const auto cut = parsers::parse_default_table(text);
  ASSERT_TRUE(cut);
  ASSERT_EQ(cut->gpus.size(), 1u);
  EXPECT_FALSE(cut->gpus[0].memory_total_bytes);
  // A value that is not plausible is dropped with a problem.
  auto bad = default_table("r470-layout-truncated-name.txt");
  bad.replace(bad.find("300W"), 4, "9e9W");
  const auto damaged = parsers::parse_default_table(bad);
  ASSERT_TRUE(damaged);
  EXPECT_FALSE(damaged->gpus[0].power_limit_watts);
  EXPECT_EQ(damaged->problems.back().kind, WarningKind::invalid_value);
}

TEST(CudaParsers, ListLineWithoutIndexIsSkipped) {
  // "GPU " followed only by the UUID (a cut line): nothing to number, no crash.
  const auto gpus = parsers::parse_gpu_list(
      "GPU (UUID: GPU-4e5f6a7b-8c9d-0e1f-2a3b-4c5d6e7f8a9b)\n"
      "GPU 5: NVIDIA A100-SXM4-80GB (UUID: GPU-8a0b3f2e-4c1d-5e6f-7a8b-9c0d1e2f3a4b)\n");
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0].index, 5u);
}

TEST(CudaParsers, ListWithR450MigUuidsGivesInstanceIds) {
  const auto gpus = parsers::parse_gpu_list(
      "GPU 0: A100-SXM4-40GB (UUID: GPU-e91edf3b-b297-37c1-a2a7-7601c3238fa2)\n"
      "  MIG 3g.20gb Device 0: (UUID: MIG-GPU-e91edf3b-b297-37c1-a2a7-7601c3238fa2/1/0)\n");
  ASSERT_EQ(gpus.size(), 1u);
  ASSERT_EQ(gpus[0].mig_devices.size(), 1u);
  EXPECT_EQ(gpus[0].mig_devices[0].gpu_instance_id, 1u);
  EXPECT_EQ(gpus[0].mig_devices[0].compute_instance_id, 0u);
}

// --- nvidia-smi topo -m -------------------------------------------------------------

TEST(CudaParsers, TopologyTabsAnsiAndTheDoubleTab) {
  // As driver 590 prints it: underline codes around the header, " X " self
  // cells, two TABs between NUMA Affinity and GPU NUMA ID.
  const auto t = parsers::parse_topology_matrix(
      "\t\x1b[4mGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\n"
      "GPU0\t X \tNV12\tPXB\t0-19\t0\t\tN/A\n"
      "GPU1\tNV12\t X \tSYS\t20-39\t1\t\tN/A\n"
      "NIC0\tPXB\tSYS\t X \n" +
      std::string(legend) + "\nNIC Legend:\n\n  NIC0: mlx5_0\n");
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->columns, (std::vector<std::string>{"GPU0", "GPU1", "NIC0"}));
  ASSERT_EQ(t->rows.size(), 3u);
  const auto& gpu0 = t->rows[0];
  EXPECT_EQ(gpu0.label, "GPU0");
  ASSERT_EQ(gpu0.cells.size(), 3u);
  EXPECT_FALSE(gpu0.cells[0]);
  EXPECT_EQ(gpu0.cells[1], (parsers::NvidiaTopologyCell{LinkKind::nvlink, 12}));
  EXPECT_EQ(gpu0.cells[2], (parsers::NvidiaTopologyCell{LinkKind::pcie_switch, std::nullopt}));
  EXPECT_EQ(gpu0.cpu_affinity, "0-19");
  EXPECT_EQ(gpu0.numa_affinity, "0");
  EXPECT_FALSE(gpu0.gpu_numa_id);
  EXPECT_EQ(t->rows[1].cells[2], (parsers::NvidiaTopologyCell{LinkKind::system, std::nullopt}));
  EXPECT_EQ(t->rows[1].numa_affinity, "1");
  EXPECT_FALSE(t->rows[2].cpu_affinity);
  EXPECT_EQ(t->nic_names.at("NIC0"), "mlx5_0");
  EXPECT_TRUE(t->problems.empty());
}

TEST(CudaParsers, TopologyTabAlignedNotApplicableAffinity) {
  // Older drivers pad with two TABs after short values: "0-7\t\tN/A\t\tN/A".
  const auto t = parsers::parse_topology_matrix(
      "\tGPU0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\nGPU0\t X \t0-7\t\tN/A\t\tN/A\n");
  ASSERT_TRUE(t);
  ASSERT_EQ(t->rows.size(), 1u);
  EXPECT_EQ(t->rows[0].cpu_affinity, "0-7");
  EXPECT_FALSE(t->rows[0].numa_affinity);
  EXPECT_FALSE(t->rows[0].gpu_numa_id);
}

TEST(CudaParsers, TopologySpaceAlignedPasteWithoutGpuNumaId) {
  // A terminal copy: TABs became spaces; older driver, no GPU NUMA ID column;
  // NUMA affinity a range, CPU affinity a single CPU (a Slurm cgroup).
  const auto t = parsers::parse_topology_matrix(
      "        GPU0    GPU1    NIC0    CPU Affinity    NUMA Affinity\n"
      "GPU0     X      NV4     PXB     0       0-1\n"
      "GPU1    NV4      X      SYS     0       0-1\n"
      "NIC0    PXB     SYS      X \n");
  ASSERT_TRUE(t);
  ASSERT_EQ(t->rows.size(), 3u);
  EXPECT_EQ(t->rows[0].cells[1], (parsers::NvidiaTopologyCell{LinkKind::nvlink, 4}));
  EXPECT_EQ(t->rows[1].cpu_affinity, "0");
  EXPECT_EQ(t->rows[1].numa_affinity, "0-1");
}

TEST(CudaParsers, TopologyCommaCpuListsAndGpuNumaId) {
  const auto t = parsers::parse_topology_matrix(
      "        GPU0    GPU1    CPU Affinity    NUMA Affinity   GPU NUMA ID\n"
      "GPU0     X      NODE    6,14,22,30      3               4\n"
      "GPU1    NODE     X      4,12,20,28      3               5\n");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->rows[0].cells[1], (parsers::NvidiaTopologyCell{LinkKind::numa_node, std::nullopt}));
  EXPECT_EQ(t->rows[0].cpu_affinity, "6,14,22,30");
  EXPECT_EQ(t->rows[1].gpu_numa_id, "5");
}

TEST(CudaParsers, TopologyErrorsAndUnknownCodes) {
  const auto windows = parsers::parse_topology_matrix(
      "ERROR: Option -m is missing its value. Please run 'nvidia-smi -h' for help.\n\n");
  ASSERT_FALSE(windows);
  EXPECT_EQ(windows.error().kind, ErrorKind::parse_error);
  EXPECT_FALSE(parsers::parse_topology_matrix(std::string(3000, '\x01')));
  const auto odd = parsers::parse_topology_matrix("\tGPU0\tGPU1\nGPU0\t X \tQQQ\nGPU1\tSOC\t X \n");
  ASSERT_TRUE(odd);
  EXPECT_FALSE(odd->rows[0].cells[1]);
  EXPECT_EQ(odd->rows[1].cells[0], (parsers::NvidiaTopologyCell{LinkKind::system, std::nullopt}));
  ASSERT_EQ(odd->problems.size(), 1u);
  EXPECT_NE(odd->problems[0].message.find("QQQ"), std::string::npos);
}

// --- nvidia-smi nvlink -s -----------------------------------------------------------

TEST(CudaParsers, NvlinkStatus) {
  const auto s = parsers::parse_nvlink_status(
      "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-ff8a40d4-abc6-08d1-f939-15848b5d4e05)\n"
      "\t Link 0: 25 GB/s\n\t Link 1: 25 GB/s\n\t Link 2: <inactive>\n"
      "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-0c512562-871f-8257-6187-b5ae1b986d5e)\n"
      "\t Link 0: 26.562 GB/s\n"
      "......\n"
      "GPU 2: NVIDIA H100 80GB HBM3 (UUID: GPU-2)\nNvlink queries are not supported for Devices in MIG mode\n"
      "GPU 3: NVIDIA GeForce RTX 2080 SUPER (UUID: GPU-3)\n"
      "NVML: Unable to retrieve Nvlink information as all links are inActive\n");
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].gpu_index, 0u);
  EXPECT_EQ(s[0].uuid, "GPU-ff8a40d4-abc6-08d1-f939-15848b5d4e05");
  EXPECT_EQ(s[0].active_links, 2u);
  EXPECT_EQ(s[0].inactive_links, 1u);
  EXPECT_EQ(s[0].link_gbps, 25.0);
  EXPECT_EQ(s[0].total_gbps, 50.0);
  EXPECT_EQ(s[1].link_gbps, 26.562);
  EXPECT_TRUE(s[2].unsupported_in_mig);
  EXPECT_EQ(s[2].active_links, 0u);
  EXPECT_EQ(s[3].active_links, 0u);
  EXPECT_FALSE(s[3].link_gbps);
}

// --- nvidia-smi -q -------------------------------------------------------------------

constexpr const char* query_text_590_mig = R"(
==============NVSMI LOG==============

Timestamp                                              : Tue Jul 14 09:00:27 2026
Driver Version                                         : 590.48.01
CUDA Version                                           : 13.1

Attached GPUs                                          : 1
GPU 00000000:00:09.0
    Product Name                                       : NVIDIA H100 80GB HBM3
    Product Architecture                               : Hopper
    MIG Mode
        Current                                        : Enabled
        Pending                                        : Enabled
    MIG Device
        Index                                          : 0
        GPU Instance ID                                : 2
        Compute Instance ID                            : 0
        Device Attributes
            Shared
                Multiprocessor count                   : 60
        Shared FB Memory Usage
            Total                                      : 40448 MiB
            Reserved                                   : 0 MiB
        Shared BAR1 Memory
            Total                                      : 24739 MiB
    MIG Device
        Index                                          : 1
        GPU Instance ID                                : 3
        Compute Instance ID                            : 0
        Shared FB Memory Usage
            Total                                      : 20096 MiB
    Accounting Mode                                    : Disabled
    GPU UUID                                           : GPU-00000000-0000-0000-0000-000000000000
    PCI
        Bus Id                                         : 00000000:00:09.0
        Device Id                                      : 0x233010DE
        GPU Link Info
            PCIe Generation
                Max                                    : 5
                Current                                : 5
            Link Width
                Max                                    : 16x
                Current                                : 16x
    FB Memory Usage
        Total                                          : 81559 MiB
        Used                                           : 59 MiB
        Free                                           : 81022 MiB
    Utilization
        GPU                                            : N/A
    Temperature
        GPU Current Temp                               : 42 C
    GPU Power Readings
        Power Draw                                     : 71.15 W
        Current Power Limit                            : 700.00 W
    Module Power Readings
        Power Draw                                     : 500.00 W
    Max Clocks
        Graphics                                       : 1980 MHz
        Memory                                         : 2619 MHz
)";

TEST(CudaParsers, QueryTextWithMigDevices) {
  const auto t = parsers::parse_query_text(query_text_590_mig);
  ASSERT_TRUE(t) << t.error().message;
  ASSERT_EQ(t->gpus.size(), 1u);
  const auto& g = t->gpus[0];
  EXPECT_EQ(g.index, 0u);
  EXPECT_EQ(g.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g.architecture, "Hopper");
  EXPECT_EQ(g.driver_version, "590.48.01");
  EXPECT_EQ(g.bus_id->to_string(), "0000:00:09.0");
  EXPECT_EQ(g.pci_device_id, 0x2330);
  EXPECT_EQ(g.mig_enabled, true);
  EXPECT_EQ(g.memory_total_bytes, 81559ull << 20);
  EXPECT_EQ(g.pcie_width_current, 16u);
  EXPECT_EQ(g.pcie_generation_max, 5u);
  EXPECT_FALSE(g.utilization_percent);
  EXPECT_EQ(g.temperature_c, 42.0);
  EXPECT_EQ(g.power_draw_watts, 71.15);  // not the module's 500 W
  EXPECT_EQ(g.power_limit_watts, 700.0);
  EXPECT_EQ(g.max_memory_clock_mhz, 2619.0);
  ASSERT_EQ(g.mig_devices.size(), 2u);
  // This abridged copy keeps only each MIG device's total.
  EXPECT_EQ(g.mig_devices[0],
            (parsers::NvidiaMigDevice{0, "", std::nullopt, 2, 0, 60, 40448ull << 20, std::nullopt, std::nullopt}));
  EXPECT_EQ(g.mig_devices[1].gpu_instance_id, 3u);
  EXPECT_EQ(g.mig_devices[1].memory_bytes, 20096ull << 20);
  EXPECT_TRUE(t->problems.empty());
}

TEST(CudaParsers, QueryTextOlderLayoutsAndDriver610) {
  // R510 nests MIG devices under "MIG Devices" with "FB Memory Usage"; R610
  // annotates the deprecated Driver Version key.
  const auto t = parsers::parse_query_text(
      "Driver Version                 : 610.57.04 [Deprecated; will be removed in CUDA 14.0. Use KMD Version instead]\n"
      "KMD Version                    : 610.57.04\n"
      "GPU 00000000:00:04.0\n"
      "    Product Name               : NVIDIA A100-SXM4-40GB\n"
      "    MIG Devices\n"
      "        MIG Device\n"
      "            Index              : 0\n"
      "            GPU Instance ID    : 1\n"
      "            FB Memory Usage\n"
      "                Total          : 19968 MiB\n"
      "    Power Readings\n"
      "        Power Draw             : 43.97 W\n"
      "        Power Limit            : 400.00 W\n");
  ASSERT_TRUE(t);
  ASSERT_EQ(t->gpus.size(), 1u);
  EXPECT_EQ(t->gpus[0].driver_version, "610.57.04");
  EXPECT_EQ(t->gpus[0].power_limit_watts, 400.0);
  ASSERT_EQ(t->gpus[0].mig_devices.size(), 1u);
  EXPECT_EQ(t->gpus[0].mig_devices[0].memory_bytes, 19968ull << 20);
  EXPECT_FALSE(parsers::parse_query_text("Attached GPUs : 0\n"));
}

// --- /proc, architecture, MIG profiles ------------------------------------------------

TEST(CudaParsers, ProcFiles) {
  const auto info = parsers::parse_proc_gpu_information(
      "Model: \t\t NVIDIA A100-SXM4-80GB\nIRQ:   \t\t 188\nGPU UUID: \t GPU-513536b6-7d19-9063-b049-1e69664bb298\n"
      "Video BIOS: \t 92.00.36.00.10\nBus Type: \t PCIe\nBus Location: \t 0000:07:00.0\nDevice Minor: \t 0\n");
  EXPECT_EQ(info.model, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(info.uuid, "GPU-513536b6-7d19-9063-b049-1e69664bb298");
  EXPECT_EQ(info.bus_location->to_string(), "0000:07:00.0");
  EXPECT_EQ(info.device_minor, 0u);
  EXPECT_EQ(parsers::parse_proc_driver_version(
                "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\n"),
            "535.104.05");
  EXPECT_EQ(parsers::parse_proc_driver_version(
                "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build  (dvs-builder@U16)\n"),
            "570.86.15");
  EXPECT_FALSE(parsers::parse_proc_driver_version("garbage"));
}

TEST(CudaParsers, ArchitectureAndMigProfiles) {
  EXPECT_EQ(parsers::cuda_architecture("7.0"), "Volta");
  EXPECT_EQ(parsers::cuda_architecture("7.5"), "Turing");
  EXPECT_EQ(parsers::cuda_architecture("8.0"), "Ampere");
  EXPECT_EQ(parsers::cuda_architecture("8.9"), "Ada Lovelace");
  EXPECT_EQ(parsers::cuda_architecture("9.0"), "Hopper");
  EXPECT_EQ(parsers::cuda_architecture("10.0"), "Blackwell");
  EXPECT_EQ(parsers::cuda_architecture("12.1"), "Blackwell");
  EXPECT_EQ(parsers::cuda_architecture("6.1"), "Pascal");
  EXPECT_EQ(parsers::cuda_architecture("42.0"), "");
  EXPECT_EQ(parsers::cuda_architecture("x"), "");
  EXPECT_EQ(parsers::mig_profile_memory_bytes("3g.40gb"), 40ull << 30);
  EXPECT_EQ(parsers::mig_profile_memory_bytes("1c.3g.71gb"), 71ull << 30);
  EXPECT_EQ(parsers::mig_profile_memory_bytes("1g.10gb+me"), 10ull << 30);
  EXPECT_FALSE(parsers::mig_profile_memory_bytes("garbage"));
}

// --- detection ---------------------------------------------------------------------------

// Records the detector's five first-wave commands.
void record(FixtureBuilder& f, const std::string& query_out, const std::string& list_out, const std::string& topo_out,
            const std::string& nvlink_out, int query_exit = 0) {
  f.command(nvidia_smi_argv::query(), query_out, query_exit)
      .command(nvidia_smi_argv::list(), list_out)
      .command(nvidia_smi_argv::topology(), topo_out)
      .command(nvidia_smi_argv::nvlink(), nvlink_out)
      .command(nvidia_smi_argv::optional_query(), optional_rejected, 2);
}

TEST(CudaDetection, NoToolNoGpuIsSilent) {
  FixtureBuilder f;
  f.file("/proc/meminfo", "MemTotal: 1024 kB\n");
  const auto r = detect(f);
  EXPECT_TRUE(r.devices().empty());
  EXPECT_TRUE(r.warnings().empty()) << all_warnings(r);
}

TEST(CudaDetection, NoToolButSysfsGpus) {
  FixtureBuilder f;
  gpu_sysfs(f, "0000:81:00.0", 1, "24-47");
  gpu_sysfs(f, "0000:01:00.0", 0, "0-23");
  f.file("/proc/driver/nvidia/gpus/0000:81:00.0/information",
         "Model: \t\t NVIDIA L40S\nGPU UUID: \t GPU-aaaa\nBus Location: \t 0000:81:00.0\n")
      .file("/proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31\n");
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 2u);
  const auto& a = device(r, 0);
  EXPECT_EQ(a.id, "cuda:0");
  EXPECT_EQ(a.pci_bus_id, "0000:01:00.0");
  EXPECT_EQ(a.name, "NVIDIA GPU [10de:2330]");
  EXPECT_EQ(a.numa_node, 0);
  EXPECT_EQ(a.cpu_affinity, "0-23");
  EXPECT_FALSE(a.memory_bytes);
  EXPECT_EQ(a.driver_version, "550.90.07");
  ASSERT_TRUE(a.pcie);
  EXPECT_EQ(a.pcie->max_generation(), 5u);
  EXPECT_EQ(a.pcie->current_generation(), 1u);
  const auto& b = device(r, 1);
  EXPECT_EQ(b.name, "NVIDIA L40S");
  EXPECT_EQ(b.uuid, "GPU-aaaa");
  EXPECT_EQ(b.numa_node, 1);
  EXPECT_EQ(b.properties.at("source"), "sysfs");
  // The two models differ, so the visibility pass also says the runtime order is assumed.
  ASSERT_EQ(kinds(r), (std::vector<WarningKind>{WarningKind::tool_missing, WarningKind::degraded}));
  EXPECT_NE(r.warnings()[0].message.find("2 GPU(s)"), std::string::npos);
}

TEST(CudaDetection, NoToolStillReportsTheSwitches) {
  FixtureBuilder f;
  gpu_sysfs(f, "0000:18:00.0", 0, "0-55");
  f.file("/proc/driver/nvidia-nvswitch/devices/0000:05:00.0/information", "BIOS Version: 96.10.55.00.01\n")
      .file("/proc/driver/nvidia-nvswitch/devices/0000:06:00.0/information", "BIOS Version: 96.10.55.00.01\n");
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 1u);
  ASSERT_EQ(r.interconnects().size(), 1u);
  const Interconnect& ic = r.interconnects()[0];
  EXPECT_EQ(ic.kind, "nvswitch");
  EXPECT_EQ(ic.switch_count, 2u);
  EXPECT_TRUE(ic.device_ids.empty());  // nothing without nvidia-smi says which GPUs they join
  EXPECT_FALSE(ic.bandwidth_gbps);
  EXPECT_EQ(ic.name, "NVSwitch fabric (2 switches)");
  EXPECT_EQ(kinds(r), std::vector<WarningKind>{WarningKind::tool_missing});
}

TEST(CudaDetection, JoinsSysfsByBusIdNotByPosition) {
  // nvidia-smi index 0 sits on bus 0x81 (NUMA 1), index 1 on bus 0x01 (NUMA 0).
  FixtureBuilder f;
  gpu_sysfs(f, "0000:01:00.0", 0, "0-23");
  gpu_sysfs(f, "0000:81:00.0", 1, "24-47");
  const auto argv = nvidia_smi_argv::query();
  record(f, csv(argv, {h100(0, "00000000:81:00.0"), h100(1, "00000000:01:00.0")}), listing(2),
         "\t\x1b[4mGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\n"
         "GPU0\t X \tNV4\t24-47\t1\t\tN/A\nGPU1\tNV4\t X \t0-23\t0\t\tN/A\n" + std::string(legend),
         nvlink_status(2, 4, "26.562"));
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 2u) << all_warnings(r);
  EXPECT_TRUE(r.warnings().empty()) << all_warnings(r);
  const auto& a = device(r, 0);
  EXPECT_EQ(a.pci_bus_id, "0000:81:00.0");
  EXPECT_EQ(a.numa_node, 1);
  EXPECT_EQ(a.cpu_affinity, "24-47");
  EXPECT_EQ(a.uuid, uuid_of(0));
  EXPECT_EQ(a.memory_bytes, 81559ull << 20);
  EXPECT_EQ(a.memory_free_bytes, 81079ull << 20);
  EXPECT_EQ(a.compute_capability, "9.0");
  EXPECT_EQ(a.architecture, "Hopper");
  EXPECT_EQ(a.driver_version, "565.57.01");
  EXPECT_EQ(a.firmware_version, "96.00.99.00.01");
  EXPECT_EQ(a.power_watts, 69.85);
  EXPECT_EQ(a.power_limit_watts, 700.0);
  EXPECT_EQ(a.temperature_c, 31.0);
  EXPECT_EQ(a.utilization_percent, 0.0);
  EXPECT_EQ(a.memory_kind, MemoryKind::dedicated);
  ASSERT_TRUE(a.pcie);
  EXPECT_EQ(a.pcie->current_speed_gts, 2.5);  // sysfs wins over nvidia-smi's "5"
  EXPECT_EQ(a.pcie->max_speed_gts, 32.0);
  EXPECT_EQ(a.properties.at("nvlink_links"), "4");
  EXPECT_EQ(a.properties.at("nvlink_link_gbps"), "26.562");
  EXPECT_EQ(a.properties.at("nvlink_gbps"), "106.248");
  EXPECT_EQ(a.properties.at("pci_id"), "10de:2330");
  EXPECT_EQ(device(r, 1).numa_node, 0);
  ASSERT_EQ(r.links().size(), 1u);
  const DeviceLink& link = r.links()[0];
  EXPECT_EQ(link.a, "cuda:0");
  EXPECT_EQ(link.b, "cuda:1");
  EXPECT_EQ(link.kind, LinkKind::nvlink);
  EXPECT_EQ(link.lanes, 4u);
  EXPECT_EQ(link.bandwidth_gbps, 106.248);
  EXPECT_EQ(link.source, "nvidia-smi topo -m");
  ASSERT_EQ(r.interconnects().size(), 1u);
  EXPECT_EQ(r.interconnects()[0].kind, "nvlink_bridge");
  EXPECT_EQ(r.interconnects()[0].device_ids, (std::vector<std::string>{"cuda:0", "cuda:1"}));
  EXPECT_FALSE(r.interconnects()[0].switch_count);
}

TEST(CudaDetection, OldDriverRejectingComputeCapKeepsEveryGpu) {
  FixtureBuilder f;
  Row v100 = h100(0, "00000000:06:00.0");
  v100["name"] = "Tesla V100-SXM2-32GB";
  f.command(nvidia_smi_argv::query(2), "Field \"compute_cap\" is not a valid field to query.\n\n", 2)
      .command(nvidia_smi_argv::query(1), csv(nvidia_smi_argv::query(1), {v100}))
      .command(nvidia_smi_argv::list(), listing(1, "Tesla V100-SXM2-32GB"))
      .command(nvidia_smi_argv::topology(), "\tGPU0\tCPU Affinity\tNUMA Affinity\nGPU0\t X \t0-19\t0\n")
      .command(nvidia_smi_argv::nvlink(), nvlink_status(1, 6, "25.781", "Tesla V100-SXM2-32GB"))
      .command(nvidia_smi_argv::optional_query(), optional_rejected, 2);
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_EQ(device(r, 0).name, "Tesla V100-SXM2-32GB");
  EXPECT_EQ(device(r, 0).memory_bytes, 81559ull << 20);
  // The driver does not say; the product name does, and the device says where it came from.
  EXPECT_EQ(device(r, 0).compute_capability, "7.0");
  EXPECT_EQ(device(r, 0).architecture, "Volta");
  EXPECT_EQ(device(r, 0).properties.at("compute_capability_source"),
            "product name (this nvidia-smi view does not print it)");
  ASSERT_EQ(kinds(r), std::vector<WarningKind>{WarningKind::degraded}) << all_warnings(r);
  EXPECT_EQ(r.warnings()[0].message,
            "nvidia-smi --query-gpu: this driver rejects the field compute_cap; asked again without compute_cap, so "
            "it is not read from the driver");
}

TEST(CudaDetection, RetriesDownToTheOldestFields) {
  FixtureBuilder f;
  f.command(nvidia_smi_argv::query(2), "Field \"compute_cap\" is not a valid field to query.\n\n", 2)
      .command(nvidia_smi_argv::query(1), "Field \"mig.mode.current\" is not a valid field to query.\n\n", 2)
      .command(nvidia_smi_argv::query(0), csv(nvidia_smi_argv::query(0), {h100(0, "00000000:06:00.0")}))
      .command(nvidia_smi_argv::list(), listing(1))
      .command(nvidia_smi_argv::topology(), "")
      .command(nvidia_smi_argv::nvlink(), "")
      .command(nvidia_smi_argv::optional_query(), optional_rejected, 2);
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_FALSE(device(r, 0).properties.contains("mig_mode"));
  EXPECT_EQ(kinds(r), (std::vector<WarningKind>{WarningKind::degraded, WarningKind::parse_error}))
      << all_warnings(r);
  EXPECT_NE(r.warnings()[0].message.find("compute_cap, mig.mode.current"), std::string::npos);
  EXPECT_NE(r.warnings()[1].message.find("nvidia-smi topo -m: output has no GPU matrix header"), std::string::npos);
}

TEST(CudaDetection, TruncatedCsvKeepsTheCompleteRows) {
  FixtureBuilder f;
  std::string out = csv(nvidia_smi_argv::query(), {h100(0, "00000000:18:00.0"), h100(1, "00000000:2A:00.0")});
  out.resize(out.size() - 40);
  record(f, out, listing(2), "", nvlink_status(2, 18, "26.562"));
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_EQ(device(r, 0).pci_bus_id, "0000:18:00.0");
  ASSERT_EQ(kinds(r), (std::vector<WarningKind>{WarningKind::parse_error, WarningKind::parse_error}))
      << all_warnings(r);
  EXPECT_NE(r.warnings()[0].message.find("nvidia-smi --query-gpu: line 3 has"), std::string::npos);
}

TEST(CudaDetection, HeaderOnlyCsvFallsBackToQueryText) {
  FixtureBuilder f;
  record(f, csv(nvidia_smi_argv::query(), {}), listing(1), "", "");
  f.command(nvidia_smi_argv::details(), query_text_590_mig);
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 1u);
  const auto& d = device(r, 0);
  EXPECT_EQ(d.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(d.memory_bytes, 81559ull << 20);
  EXPECT_EQ(d.architecture, "Hopper");
  EXPECT_EQ(d.properties.at("source"), "nvidia-smi -q");
  ASSERT_EQ(kinds(r), (std::vector<WarningKind>{WarningKind::parse_error, WarningKind::degraded,
                                                WarningKind::parse_error}))
      << all_warnings(r);
  EXPECT_EQ(r.warnings()[0].message, "nvidia-smi --query-gpu printed its header but no GPU rows (truncated output?)");
}

bool has_warning(const AcceleratorRegistry& r, WarningKind kind, std::string_view message) {
  return std::any_of(r.warnings().begin(), r.warnings().end(),
                     [&](const Warning& w) { return w.kind == kind && w.message == message; });
}

// The query missing (a pasted report, a query form that fails): `-q -x` is
// read before `-q`, and a GPU's MIG devices come from the same report.
TEST(CudaDetection, XmlReportBeforeQueryText) {
  FixtureBuilder f;
  f.tool("nvidia-smi").command(nvidia_smi_argv::details_xml(),
                               "<?xml version=\"1.0\" ?>\n<!DOCTYPE nvidia_smi_log SYSTEM \"nvsmi_device_v12.dtd\">\n"
                               "<nvidia_smi_log><driver_version>550.54.14</driver_version><attached_gpus>1</attached_gpus>"
                               "<gpu id=\"00000000:18:00.0\"><product_name>NVIDIA H100 80GB HBM3</product_name>"
                               "<mig_mode><current_mig>Enabled</current_mig></mig_mode><mig_devices><mig_device>"
                               "<index>0</index><gpu_instance_id>1</gpu_instance_id><compute_instance_id>0</compute_instance_id>"
                               "<fb_memory_usage><total>40448 MiB</total></fb_memory_usage></mig_device></mig_devices>"
                               "<uuid>GPU-11111111-2222-3333-4444-555555555555</uuid>"
                               "<pci><pci_bus_id>00000000:18:00.0</pci_bus_id><pci_device_id>233010DE</pci_device_id></pci>"
                               "<fb_memory_usage><total>81559 MiB</total></fb_memory_usage>"
                               "<temperature><gpu_temp>9999 C</gpu_temp></temperature></gpu></nvidia_smi_log>\n");
  f.command(nvidia_smi_argv::details(), query_text_590_mig);  // present, but the XML answers first
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 1u);
  const auto& d = device(r, 0);
  EXPECT_EQ(d.memory_bytes, 81559ull << 20);
  EXPECT_EQ(d.pci_bus_id, "0000:18:00.0");
  EXPECT_EQ(d.properties.at("source"), "nvidia-smi -q -x");
  EXPECT_EQ(d.properties.at("pci_id"), "10de:2330");
  EXPECT_EQ(d.compute_capability, "9.0");
  EXPECT_FALSE(d.temperature_c);  // 9999 C is not plausible: dropped with a warning, as from -q
  ASSERT_EQ(d.partitions.size(), 1u);
  EXPECT_EQ(d.partitions[0].memory_bytes, 40448ull << 20);
  EXPECT_EQ(d.partitions[0].gpu_instance_id, 1u);
  EXPECT_NE(all_warnings(r).find("invalid_value"), std::string::npos) << all_warnings(r);
}

// Only `-L` answers: the GPUs are named with their UUIDs and MIG devices, and a warning says what is unknown.
TEST(CudaDetection, ListingAloneEnumeratesTheGpus) {
  FixtureBuilder f;
  f.command(nvidia_smi_argv::list(), listing(2, "NVIDIA A100-SXM4-80GB") +
                                         "  MIG 1g.10gb     Device  0: (UUID: MIG-aaaaaaaa-0000-0000-0000-000000000000)\n");
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 2u);
  EXPECT_EQ(device(r, 1).name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(device(r, 1).uuid, uuid_of(1));
  EXPECT_FALSE(device(r, 1).memory_bytes);
  EXPECT_EQ(device(r, 1).compute_capability, "8.0");
  EXPECT_EQ(device(r, 1).partitions.size(), 1u);
  EXPECT_EQ(device(r, 1).properties.at("source"), "nvidia-smi -L");
  EXPECT_TRUE(has_warning(r, WarningKind::degraded,
                          "2 GPU(s) are known only from nvidia-smi -L: names and UUIDs; no memory, bus id or PCIe link"))
      << all_warnings(r);
}

// Only the default table answers (what people paste): memory and bus ids
// from it, UUIDs from `-L` where it answers too, MIG devices from its box.
TEST(CudaDetection, DefaultTableWhenTheQueryAndReportsFail) {
  FixtureBuilder f;
  f.command(nvidia_smi_argv::table(), default_table("two-gpus-mig-and-processes.txt"));
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 2u) << all_warnings(r);
  const auto& d = device(r, 0);
  EXPECT_EQ(d.name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(d.memory_bytes, 81920ull << 20);
  EXPECT_EQ(d.compute_capability, "8.0");
  EXPECT_FALSE(d.uuid);
  EXPECT_EQ(d.properties.at("source"), "nvidia-smi");
  ASSERT_EQ(d.partitions.size(), 2u);
  EXPECT_EQ(d.partitions[0].memory_bytes, 40192ull << 20);
  EXPECT_EQ(d.properties.at("mig_memory_source"), "nvidia-smi");
  EXPECT_NE(all_warnings(r).find("2 GPU(s) were read from nvidia-smi's table instead"), std::string::npos)
      << all_warnings(r);

  f.command(nvidia_smi_argv::list(), listing(2, "NVIDIA A100-SXM4-80GB"));
  const auto with_list = detect(f);
  ASSERT_EQ(with_list.devices().size(), 2u);
  EXPECT_EQ(device(with_list, 1).uuid, uuid_of(1));
  EXPECT_EQ(device(with_list, 1).memory_bytes, 81920ull << 20);
}

// Only the topology matrix: the count, the links and the CPU affinity, nothing invented.
TEST(CudaDetection, TopologyAloneGivesCountAndLinks) {
  FixtureBuilder f;
  f.command(nvidia_smi_argv::topology(),
            "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\nGPU0\t X \tNV6\t0-7\t0\nGPU1\tNV6\t X \t8-15\t1\n");
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 2u);
  EXPECT_EQ(device(r, 0).name, "NVIDIA GPU");
  EXPECT_FALSE(device(r, 0).memory_bytes);
  EXPECT_EQ(device(r, 1).cpu_affinity, "8-15");
  ASSERT_EQ(r.links().size(), 1u);
  EXPECT_EQ(r.links()[0].kind, LinkKind::nvlink);
  EXPECT_EQ(r.links()[0].lanes, 6u);
  EXPECT_TRUE(has_warning(r, WarningKind::degraded,
                          "2 GPU(s) are known only from nvidia-smi topo -m: their count, links and CPU affinity; no "
                          "name, memory or bus id"))
      << all_warnings(r);
}

TEST(CudaDetection, BinaryGarbageFallsBackToSysfs) {
  FixtureBuilder f;
  gpu_sysfs(f, "0000:3b:00.0", 0, "0-15");
  const std::string garbage("\x7f" "ELF\x02\x01\x01\0\0\0\xff\xfe\x80garbage", 20);
  record(f, garbage, garbage, garbage, garbage);
  f.command(nvidia_smi_argv::details(), garbage);
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_EQ(device(r, 0).pci_bus_id, "0000:3b:00.0");
  EXPECT_EQ(device(r, 0).properties.at("source"), "sysfs");
  ASSERT_EQ(kinds(r), (std::vector<WarningKind>{WarningKind::parse_error, WarningKind::parse_error,
                                                WarningKind::degraded}))
      << all_warnings(r);
  EXPECT_NE(r.warnings()[0].message.find("nvidia-smi --query-gpu: output has no CSV header"), std::string::npos);
  EXPECT_NE(r.warnings()[1].message.find("nvidia-smi -q: output has no"), std::string::npos);
}

TEST(CudaDetection, TenMegabyteOutputGivesBoundedWarnings) {
  FixtureBuilder f;
  std::string out = csv(nvidia_smi_argv::query(), {h100(0, "00000000:18:00.0")});
  while (out.size() < (10u << 20)) out += "0, 1, 2, 3\n";
  record(f, out, listing(1), "", nvlink_status(1, 18, "26.562"));
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_LE(r.warnings().size(), 12u) << all_warnings(r);
  const auto k = kinds(r);
  EXPECT_EQ(std::count(k.begin(), k.end(), WarningKind::truncated), 1) << all_warnings(r);
}

TEST(CudaDetection, HungNvidiaSmiTimesOutAndSysfsRemains) {
  FixtureBuilder f;
  gpu_sysfs(f, "0000:18:00.0", 0, "0-55");
  for (const auto& argv : {nvidia_smi_argv::query(), nvidia_smi_argv::list(), nvidia_smi_argv::topology(),
                           nvidia_smi_argv::nvlink(), nvidia_smi_argv::optional_query()})
    f.command(argv, "", 0, "", /*hang=*/true);
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_EQ(device(r, 0).properties.at("source"), "sysfs");
  // No second attempt at a hung tool (`-q` is not run).
  ASSERT_EQ(kinds(r), (std::vector<WarningKind>{WarningKind::timeout, WarningKind::timeout, WarningKind::degraded}))
      << all_warnings(r);
  EXPECT_NE(r.warnings()[0].message.find("nvidia-smi --query-gpu="), std::string::npos);
  EXPECT_NE(r.warnings()[1].message.find("nvidia-smi -L"), std::string::npos);
}

TEST(CudaDetection, DriverNotLoadedIsAToolFailure) {
  FixtureBuilder f;
  const std::string msg =
      "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
      "NVIDIA driver is installed and running.\n\n";
  for (const auto& argv : {nvidia_smi_argv::query(), nvidia_smi_argv::list(), nvidia_smi_argv::topology(),
                           nvidia_smi_argv::nvlink(), nvidia_smi_argv::optional_query(), nvidia_smi_argv::details_xml(),
                           nvidia_smi_argv::details()})
    f.command(argv, msg, 9);
  const auto r = detect(f);
  EXPECT_TRUE(r.devices().empty());
  ASSERT_EQ(kinds(r), (std::vector<WarningKind>{WarningKind::tool_failed, WarningKind::tool_failed,
                                                WarningKind::tool_failed}))
      << all_warnings(r);
  EXPECT_EQ(r.warnings()[1].message,
            "nvidia-smi -L exited with code 9: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA "
            "driver. Make sure that the latest NVIDIA driver is installed and running.");
  EXPECT_TRUE(r.warnings()[0].message.starts_with("nvidia-smi --query-gpu exited with code 9: NVIDIA-SMI has failed"));
  // Both reports were tried, and one warning says what each answered.
  EXPECT_TRUE(r.warnings()[2].message.starts_with("nvidia-smi -q -x exited with code 9: NVIDIA-SMI has failed"));
  EXPECT_NE(r.warnings()[2].message.find("; nvidia-smi -q exited with code 9: NVIDIA-SMI has failed"), std::string::npos);
}

TEST(CudaDetection, NoDevicesFoundIsNotAProblem) {
  FixtureBuilder f;
  for (const auto& argv : {nvidia_smi_argv::query(), nvidia_smi_argv::list(), nvidia_smi_argv::topology(),
                           nvidia_smi_argv::nvlink(), nvidia_smi_argv::optional_query()})
    f.command(argv, "No devices were found\n", 6);
  const auto r = detect(f);
  EXPECT_TRUE(r.devices().empty());
  EXPECT_TRUE(r.warnings().empty()) << all_warnings(r);
}

TEST(CudaDetection, LostGpuKeepsTheOthers) {
  FixtureBuilder f;
  const std::string out = "Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error\n" +
                          csv(nvidia_smi_argv::query(), {h100(0, "00000000:18:00.0")});
  record(f, out, listing(1), "", nvlink_status(1, 18, "26.562"), 15);
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 1u);
  ASSERT_EQ(kinds(r), (std::vector<WarningKind>{WarningKind::tool_failed, WarningKind::parse_error}))
      << all_warnings(r);
  EXPECT_EQ(r.warnings()[0].message,
            "nvidia-smi --query-gpu exited with code 15: Unable to determine the device handle for GPU0000:3B:00.0: "
            "Unknown Error; the 1 GPU row(s) it printed are used");
}

// Found by fuzzing (tests/fuzz/regressions/detect_cuda/free-above-total): a
// scheduler must never read more free memory than the GPU has.
TEST(CudaDetection, FreeMemoryAboveTheTotalIsDropped) {
  FixtureBuilder f;
  Row gpu = h100(0, "00000000:18:00.0");
  gpu["memory.free"] = "99999 MiB";
  record(f, csv(nvidia_smi_argv::query(), {gpu}), listing(1), "\tGPU0\tCPU Affinity\tNUMA Affinity\nGPU0\t X \t0-7\tN/A\n", "");
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_EQ(device(r, 0).memory_bytes, 81559ull << 20);
  EXPECT_FALSE(device(r, 0).memory_free_bytes);
  EXPECT_FALSE(device(r, 0).memory_used_bytes);
  ASSERT_EQ(kinds(r), std::vector<WarningKind>{WarningKind::invalid_value}) << all_warnings(r);
  EXPECT_EQ(r.warnings()[0].message,
            "cuda:0 (NVIDIA H100 80GB HBM3): free memory (104856551424 bytes) exceeds its total memory "
            "(85520809984 bytes); free and used memory are unknown");
}

TEST(CudaDetection, DuplicateIndexKeepsTheFirstRow) {
  FixtureBuilder f;
  record(f, csv(nvidia_smi_argv::query(), {h100(0, "00000000:18:00.0"), h100(0, "00000000:2A:00.0")}), listing(1),
         "\tGPU0\tCPU Affinity\tNUMA Affinity\nGPU0\t X \t0-7\tN/A\n", "");
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_EQ(device(r, 0).pci_bus_id, "0000:18:00.0");
  ASSERT_EQ(kinds(r), std::vector<WarningKind>{WarningKind::inconsistent}) << all_warnings(r);
}

TEST(CudaDetection, DuplicateBusIdKeepsTheFirstRow) {
  FixtureBuilder f;
  record(f, csv(nvidia_smi_argv::query(), {h100(0, "00000000:18:00.0"), h100(1, "00000000:18:00.0")}), listing(1),
         "\tGPU0\tCPU Affinity\tNUMA Affinity\nGPU0\t X \t0-7\tN/A\n", "");
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_EQ(device(r, 0).id, "cuda:0");
  ASSERT_EQ(kinds(r), std::vector<WarningKind>{WarningKind::inconsistent}) << all_warnings(r);
  EXPECT_NE(r.warnings()[0].message.find("gives GPU index 1 the bus id 0000:18:00.0 of an earlier row"), std::string::npos)
      << r.warnings()[0].message;
}

TEST(CudaDetection, PartialMigWithDetailsFromQueryText) {
  FixtureBuilder f;
  Row mig = h100(0, "00000000:00:09.0");
  mig["mig.mode.current"] = "Enabled";
  mig["uuid"] = "GPU-00000000-0000-0000-0000-000000000000";
  Row whole = h100(1, "00000000:00:0A.0");
  record(f, csv(nvidia_smi_argv::query(), {mig, whole}),
         "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-00000000-0000-0000-0000-000000000000)\n"
         "  MIG 3g.40gb     Device  0: (UUID: MIG-00000000-0000-0000-0000-000000000000)\n"
         "  MIG 2g.20gb     Device  1: (UUID: MIG-00000001-0000-0000-0000-000000000001)\n"
         "GPU 1: NVIDIA H100 80GB HBM3 (UUID: " + uuid_of(1) + ")\n",
         "", "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-00000000-0000-0000-0000-000000000000)\n"
             "Nvlink queries are not supported for Devices in MIG mode\n");
  f.command(nvidia_smi_argv::details(), query_text_590_mig);
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 2u);
  const auto& d = device(r, 0);
  ASSERT_EQ(d.partitions.size(), 2u);
  DevicePartition expected;
  expected.id = "cuda:0/mig:0";
  expected.index = 0;
  expected.profile = "3g.40gb";
  expected.uuid = "MIG-00000000-0000-0000-0000-000000000000";
  expected.gpu_instance_id = 2;
  expected.compute_instance_id = 0;
  expected.memory_bytes = 40448ull << 20;
  expected.compute_units = 60;
  expected.runtime_index = 0;  // CUDA exposes the first MIG device of the first MIG GPU
  EXPECT_EQ(d.partitions[0], expected);
  EXPECT_EQ(d.partitions[1].memory_bytes, 20096ull << 20);
  EXPECT_EQ(d.properties.at("mig_mode"), "enabled");
  EXPECT_EQ(d.properties.at("mig_memory_source"), "nvidia-smi -q");
  EXPECT_EQ(d.properties.at("nvlink"), "not reported in MIG mode");
  EXPECT_TRUE(device(r, 1).partitions.empty());
  ASSERT_EQ(kinds(r), std::vector<WarningKind>{WarningKind::parse_error}) << all_warnings(r);  // topo printed nothing
}

TEST(CudaDetection, RepeatedMigDeviceKeepsTheFirst) {
  FixtureBuilder f;
  Row mig = h100(0, "00000000:00:09.0");
  mig["mig.mode.current"] = "Enabled";
  record(f, csv(nvidia_smi_argv::query(), {mig}),
         "GPU 0: NVIDIA H100 80GB HBM3 (UUID: " + uuid_of(0) + ")\n"
         "  MIG 3g.40gb     Device  0: (UUID: MIG-00000000-0000-0000-0000-000000000000)\n"
         "  MIG 2g.20gb     Device  1: (UUID: MIG-00000001-0000-0000-0000-000000000001)\n"
         "  MIG 1g.10gb     Device  1: (UUID: MIG-00000002-0000-0000-0000-000000000002)\n",
         "", "");
  f.command(nvidia_smi_argv::details(), "", 0, "", /*hang=*/true);
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 1u);
  const auto& d = device(r, 0);
  ASSERT_EQ(d.partitions.size(), 2u);
  EXPECT_EQ(d.partitions[1].id, "cuda:0/mig:1");
  EXPECT_EQ(d.partitions[1].profile, "2g.20gb");
  const auto repeated = std::find_if(r.warnings().begin(), r.warnings().end(), [](const Warning& w) {
    return w.kind == WarningKind::inconsistent &&
           w.message == "nvidia-smi lists MIG device 1 of cuda:0 twice; the second is left out";
  });
  EXPECT_NE(repeated, r.warnings().end()) << all_warnings(r);
}

TEST(CudaDetection, MigMemoryFromProfileNamesSaysSo) {
  FixtureBuilder f;
  Row mig = h100(0, "00000000:00:09.0");
  mig["mig.mode.current"] = "Enabled";
  record(f, csv(nvidia_smi_argv::query(), {mig}),
         "GPU 0: NVIDIA H200 (UUID: " + uuid_of(0) + ")\n  MIG 1c.3g.71gb    Device  0: (UUID: MIG-1)\n", "", "");
  f.command(nvidia_smi_argv::details(), "", 0, "", /*hang=*/true);
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 1u);
  const auto& d = device(r, 0);
  ASSERT_EQ(d.partitions.size(), 1u);
  EXPECT_EQ(d.partitions[0].profile, "1c.3g.71gb");
  EXPECT_EQ(d.partitions[0].memory_bytes, 71ull << 30);
  EXPECT_EQ(d.properties.at("mig_memory_source"), "MIG profile names (nominal GiB, a few percent above the usable size)");
  EXPECT_EQ(kinds(r), (std::vector<WarningKind>{WarningKind::timeout, WarningKind::parse_error})) << all_warnings(r);
}

std::string full_matrix(int gpus, const std::string& code) {
  std::string out = "\t\x1b[4m";
  for (int i = 0; i < gpus; ++i) out += "GPU" + std::to_string(i) + "\t";
  out += "CPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\n";
  for (int i = 0; i < gpus; ++i) {
    out += "GPU" + std::to_string(i);
    for (int j = 0; j < gpus; ++j) out += i == j ? "\t X " : "\t" + code;
    out += i < gpus / 2 ? "\t0-55\t0\t\tN/A\n" : "\t56-111\t1\t\tN/A\n";
  }
  return out + legend;
}

TEST(CudaDetection, NvSwitchOnlyFromDriverEvidence) {
  FixtureBuilder f;
  std::vector<Row> rows;
  for (int i = 0; i < 4; ++i) rows.push_back(h100(i, "00000000:1" + std::to_string(i) + ":00.0"));
  record(f, csv(nvidia_smi_argv::query(), rows), listing(4), full_matrix(4, "NV18"), nvlink_status(4, 18, "26.562"));
  for (int s = 0; s < 2; ++s) {
    const std::string addr = "0000:c" + std::to_string(s) + ":00.0";
    f.file("/proc/driver/nvidia-nvswitch/devices/" + addr + "/information", "BIOS Version: 96.10.55.00.01\n");
    pci_device(f, addr, "nvidia-nvswitch", "0x068000", "0x22a3", 0, "0-55", "16.0 GT/s PCIe", "16.0 GT/s PCIe", 2);
    f.file("/dev/nvidia-nvswitch" + std::to_string(s), "");
  }
  f.file("/dev/nvidia-nvswitchctl", "");
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 4u) << all_warnings(r);
  EXPECT_EQ(r.links().size(), 6u);
  ASSERT_EQ(r.interconnects().size(), 1u);
  const Interconnect& ic = r.interconnects()[0];
  EXPECT_EQ(ic.kind, "nvswitch");
  EXPECT_EQ(ic.switch_count, 2u);
  EXPECT_EQ(ic.device_ids, (std::vector<std::string>{"cuda:0", "cuda:1", "cuda:2", "cuda:3"}));
  EXPECT_EQ(ic.bandwidth_gbps, 478.116);
  EXPECT_EQ(ic.name, "NVSwitch fabric (2 switches, 4 GPUs)");
  EXPECT_EQ(ic.source,
            "/proc/driver/nvidia-nvswitch/devices, /sys/bus/pci/drivers/nvidia-nvswitch, /dev/nvidia-nvswitch*");
  EXPECT_TRUE(r.warnings().empty()) << all_warnings(r);
}

TEST(CudaDetection, Nv18PairWithoutSwitchIsABridgeNotNvSwitch) {
  // Two PCIe cards bridged with NV18, and the control node the driver
  // creates on any machine: no switch.
  FixtureBuilder f;
  record(f, csv(nvidia_smi_argv::query(), {h100(0, "00000000:AD:00.0"), h100(1, "00000000:AE:00.0")}), listing(2),
         full_matrix(2, "NV18"), nvlink_status(2, 18, "26.562"));
  f.file("/dev/nvidia-nvswitchctl", "").file("/proc/driver/nvidia-nvswitch/permissions", "DeviceFileMode: 438\n");
  const auto r = detect(f);
  ASSERT_EQ(r.interconnects().size(), 1u);
  EXPECT_EQ(r.interconnects()[0].kind, "nvlink_bridge");
  EXPECT_EQ(r.interconnects()[0].name, "NVLink bridge (cuda:0, cuda:1)");
  EXPECT_EQ(r.interconnects()[0].bandwidth_gbps, 478.116);
}

TEST(CudaDetection, Gb10IsUnifiedWithoutInventedMemory) {
  FixtureBuilder f;
  Row gb10 = h100(0, "0000000F:01:00.0");
  gb10["name"] = "NVIDIA GB10";
  gb10["compute_cap"] = "12.1";
  for (const char* k : {"memory.total", "memory.used", "memory.free", "power.limit"}) gb10[k] = "[N/A]";
  record(f, csv(nvidia_smi_argv::query(), {gb10}), listing(1, "NVIDIA GB10"),
         "\tGPU0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\nGPU0\t X \t0-19\t0\t\tN/A\n",
         "GPU 0: NVIDIA GB10 (UUID: " + uuid_of(0) + ")\n");
  f.file("/proc/meminfo", "MemTotal:       125508468 kB\nMemAvailable:   120000000 kB\n");
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 1u);
  const auto& d = device(r, 0);
  EXPECT_FALSE(d.memory_bytes);
  EXPECT_FALSE(d.memory_free_bytes);
  EXPECT_EQ(d.memory_kind, MemoryKind::unified);
  EXPECT_TRUE(d.integrated);
  EXPECT_EQ(d.shared_memory_bytes, 125508468ull * 1024);
  EXPECT_EQ(d.architecture, "Blackwell");
  EXPECT_FALSE(d.pcie);  // NVML's "gen 5 x16" (gen 1 x1 on real GB10s) is not its path to memory
  EXPECT_EQ(d.properties.at("unified_memory"), "integrated GPU sharing the CPU's memory");
  EXPECT_TRUE(r.warnings().empty()) << all_warnings(r);
}

TEST(CudaDetection, GraceHopperIsCoherentButKeepsItsOwnMemory) {
  FixtureBuilder f;
  Row gh = h100(0, "00000009:01:00.0");
  gh["name"] = "NVIDIA GH200 480GB";
  gh["memory.total"] = "97871 MiB";
  f.command(nvidia_smi_argv::query(), csv(nvidia_smi_argv::query(), {gh}))
      .command(nvidia_smi_argv::list(), listing(1, "NVIDIA GH200 480GB"))
      .command(nvidia_smi_argv::topology(),
               "\tGPU0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\nGPU0\t X \t0-71\t0\t\t1\n")
      .command(nvidia_smi_argv::nvlink(), "")
      .command(nvidia_smi_argv::optional_query(),
               "index, addressing_mode, c2c.mode\n0, ATS, Enabled\n");
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 1u);
  const auto& d = device(r, 0);
  EXPECT_EQ(d.memory_bytes, 97871ull << 20);
  EXPECT_FALSE(d.shared_memory_bytes);
  EXPECT_EQ(d.memory_kind, MemoryKind::unified);
  EXPECT_FALSE(d.integrated);
  EXPECT_EQ(d.properties.at("c2c_mode"), "enabled");
  EXPECT_EQ(d.properties.at("addressing_mode"), "ATS");
  EXPECT_EQ(d.properties.at("gpu_numa_node"), "1");
  EXPECT_EQ(d.properties.at("unified_memory"),
            "c2c.mode Enabled (NVLink-C2C to the CPU); addressing_mode ATS (the GPU translates CPU addresses); GPU "
            "memory is a NUMA node of the host (topo -m GPU NUMA ID)");
  EXPECT_TRUE(r.warnings().empty()) << all_warnings(r);
}

TEST(CudaDetection, WindowsTopologyFailureIsAWarning) {
  FixtureBuilder f;
  Row rtx = h100(0, "00000000:0C:00.0");
  rtx["name"] = "NVIDIA GeForce RTX 2080 SUPER";
  rtx["compute_mode"] = "Prohibited";
  f.command(nvidia_smi_argv::query(), csv(nvidia_smi_argv::query(), {rtx}))
      .command(nvidia_smi_argv::list(), listing(1, "NVIDIA GeForce RTX 2080 SUPER"))
      .command(nvidia_smi_argv::topology(), "ERROR: Option -m is missing its value. Please run 'nvidia-smi -h' for help.\n\n", 255)
      .command(nvidia_smi_argv::nvlink(), "GPU 0: NVIDIA GeForce RTX 2080 SUPER (UUID: " + uuid_of(0) +
                                              ")\nNVML: Unable to retrieve Nvlink information as all links are inActive\n")
      .command(nvidia_smi_argv::optional_query(), optional_rejected, 2);
  const auto r = detect(f);
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_FALSE(device(r, 0).available);  // compute mode Prohibited
  ASSERT_EQ(kinds(r), std::vector<WarningKind>{WarningKind::tool_failed}) << all_warnings(r);
  EXPECT_EQ(r.warnings()[0].message,
            "nvidia-smi topo -m exited with code 255: ERROR: Option -m is missing its value. Please run 'nvidia-smi "
            "-h' for help.");
}

// Thermal thresholds, both ways drivers print them: R580 as offsets from
// T.Limit (the H200 capture: 42 C now, 45 C margin, slowdown at -2 C of it),
// R510 as absolute temperatures (netdata's A100 -q -x: slowdown 89 C).
TEST(NvidiaSmi, ReadsThermalThresholdsFromTheReports) {
  const auto text = hwaccel::testing::read_file(hwaccel::testing::fixtures_root() / "captures/nvidia-h200-firecracker-driver-580/nvsmi_q.txt");
  const auto report = parsers::parse_query_text(text);
  ASSERT_TRUE(report) << report.error().message;
  ASSERT_EQ(report->gpus.size(), 1u);
  EXPECT_DOUBLE_EQ(*report->gpus[0].slowdown_temperature_c, 42.0 + 45.0 + 2.0);
  EXPECT_DOUBLE_EQ(*report->gpus[0].shutdown_temperature_c, 42.0 + 45.0 + 8.0);
  const auto xml_text = hwaccel::testing::read_file(hwaccel::testing::fixtures_root() / "captures/nvidia-h200-firecracker-driver-580/q_x_idle.xml");
  const auto xml = parsers::parse_query_xml(xml_text);
  ASSERT_TRUE(xml) << xml.error().message;
  EXPECT_DOUBLE_EQ(*xml->gpus[0].slowdown_temperature_c, 89.0);
  const auto shared = hwaccel::testing::shared_fixtures_root() / "nvidia/netdata-a100-sxm4-40gb-mig-510/nvidia-smi-q-x.xml";
  if (!std::filesystem::exists(shared)) GTEST_SKIP() << "shared capture not available";
  const auto old = parsers::parse_query_xml(hwaccel::testing::read_file(shared));
  ASSERT_TRUE(old) << old.error().message;
  EXPECT_DOUBLE_EQ(*old->gpus[0].slowdown_temperature_c, 89.0);
  EXPECT_DOUBLE_EQ(*old->gpus[0].shutdown_temperature_c, 92.0);
}

}  // namespace
