// AWS Neuron backend: neuron-ls JSON (both forms) and table parsers, chip
// figures, and detection (JSON, older tool forms, /dev fallback, failures).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backend_fixture.hpp"

#include "../test_support.hpp"

import hwaccel;
import hwaccel.detectors;

namespace {

using namespace hwaccel;
using hwaccel::testing::add_pci;
using hwaccel::testing::FixtureBuilder;
using hwaccel::testing::PciSpec;

using hwaccel::testing::GiB;

// The `--json-output` array, keys as neuron-ls prints them (numa_node is a string,
// connected_to is null on a single-device instance).
constexpr const char* trn1_json = R"([
    {
        "neuron_device": 0,
        "bdf": "0000:00:1e.0",
        "cpu_affinity": "0-7",
        "numa_node": "-1",
        "connected_to": null,
        "nc_count": 2,
        "memory_size": 34359738368,
        "neuroncore_ids": [
            0,
            1
        ],
        "neuron_processes": []
    }
])";

constexpr const char* trn2_pair_json = R"([
  {"instance_type": "trn2.48xlarge", "instance_id": "i-0123", "neuron_device": 1, "bdf": "b5:00.0",
   "cpu_affinity": "48-95,144-191", "numa_node": "1", "connected_to": [13, 0, 5, 2], "nc_count": 4,
   "logical_neuroncore_config": 2, "memory_size": 103079215104, "neuroncore_ids": [4, 5, 6, 7],
   "neuron_processes": [{"pid": 7, "command": "x", "neuron_runtime_version": "2.0.0"}]},
  {"instance_type": "trn2.48xlarge", "instance_id": "i-0123", "neuron_device": 0, "bdf": "cc:00.0",
   "cpu_affinity": "48-95,144-191", "numa_node": "1", "connected_to": [12, 3, 4, 1], "nc_count": 4,
   "logical_neuroncore_config": 2, "memory_size": 103079215104, "neuroncore_ids": [0, 1, 2, 3],
   "neuron_processes": []}
])";

// A table in the layout of recent releases: key: value lines, then columns that
// include NEURON CORE IDS, CPU AFFINITY and NUMA NODE.
constexpr const char* trn2_table =
    "instance-type: trn2.48xlarge\n"
    "instance-id: i-0123\n"
    "logical-neuroncore-config: 2\n"
    "+--------+--------+----------+--------+---------------+--------------+---------------+------+\n"
    "| NEURON | NEURON |  NEURON  | NEURON |   CONNECTED   |     PCI      |      CPU      | NUMA |\n"
    "| DEVICE | CORES  | CORE IDS | MEMORY |    DEVICES    |     BDF      |   AFFINITY    | NODE |\n"
    "+--------+--------+----------+--------+---------------+--------------+---------------+------+\n"
    "| 0      | 4      | 0-3      | 96 GB  | 12, 3, 4, 1   | 0000:cc:00.0 | 48-95,144-191 | 1    |\n"
    "| 1      | 4      | 4-7      | 96 GB  | 13, 0, 5, 2   | 0000:b5:00.0 | 48-95,144-191 | 1    |\n"
    "+--------+--------+----------+--------+---------------+--------------+---------------+------+\n";

// The older layout: process columns, continuation rows, a warning line first.
constexpr const char* inf1_table =
    "WARNING: neuron-rtd service is deprecated\n"
    "+--------+--------+--------+-----------+--------------+-------+-----------------+---------+\n"
    "| NEURON | NEURON | NEURON | CONNECTED |     PCI      |  PID  |     COMMAND     | RUNTIME |\n"
    "| DEVICE | CORES  | MEMORY |  DEVICES  |     BDF      |       |                 | VERSION |\n"
    "+--------+--------+--------+-----------+--------------+-------+-----------------+---------+\n"
    "| 0      | 4      | 8 GB   | 1         | 0000:00:1c.0 | 101   | app infer --a.. | 2.0.0   |\n"
    "|        |        |        |           |              | 102   | app infer --b.. | 2.0.0   |\n"
    "+--------+--------+--------+-----------+--------------+-------+-----------------+---------+\n"
    "| 1      | 4      | 8 GB   | 0         | 0000:00:1d.0 | NA    | NA              | NA      |\n"
    "+--------+--------+--------+-----------+--------------+-------+-----------------+---------+\n"
    "\n"
    "Neuron Device Topology\n"
    "\n"
    "  [ 0 ]\xe2\x97\x84\xe2\x80\x93\xe2\x80\x93\xe2\x96\xba[ 1 ]\n";

TEST(NeuronParsers, JsonArrayWithTheToolsKeys) {
  const auto r = parsers::parse_neuron_ls_json(trn1_json);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->devices.size(), 1u);
  const auto& d = r->devices[0];
  EXPECT_EQ(d.index, 0u);
  EXPECT_EQ(d.bus_id, PciAddress::parse("0000:00:1e.0"));
  EXPECT_EQ(d.cpu_affinity, "0-7");
  EXPECT_FALSE(d.numa_node) << "\"-1\" means no NUMA node";
  EXPECT_TRUE(d.connected_to.empty());
  EXPECT_EQ(d.neuroncores, 2u);
  EXPECT_EQ(d.memory_bytes, 32 * GiB);
  EXPECT_EQ(d.neuroncore_ids, "0-1");
  EXPECT_EQ(d.process_count, 0u);
  EXPECT_TRUE(r->problems.empty());
}

TEST(NeuronParsers, JsonPerDeviceInstanceFieldsAndSorting) {
  const auto r = parsers::parse_neuron_ls_json(trn2_pair_json);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->devices.size(), 2u);
  EXPECT_EQ(r->devices[0].index, 0u);
  EXPECT_EQ(r->devices[0].bus_id, PciAddress::parse("0000:cc:00.0"));
  EXPECT_EQ(r->devices[0].numa_node, 1);
  EXPECT_EQ(r->devices[0].logical_neuroncore_config, 2u);
  EXPECT_EQ(r->devices[0].connected_to, (std::vector<std::uint32_t>{12, 3, 4, 1}));
  EXPECT_EQ(r->devices[1].process_count, 1u);
  EXPECT_EQ(r->instance_type, "trn2.48xlarge");
  EXPECT_EQ(r->instance_id, "i-0123");
}

TEST(NeuronParsers, JsonObjectFormFindsTheDeviceEntries) {
  // `--output-format json` moves instance-wide facts to the top level; the device
  // entries are found by their keys, whatever member holds them.
  const auto r = parsers::parse_neuron_ls_json(
      R"({"instance_type": "inf2.24xlarge", "logical_neuroncore_config": 1,
          "devices": [{"neuron_device": 0, "bdf": "0000:10:1c.0", "nc_count": 2, "memory_size": 34359738368}]})");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->devices.size(), 1u);
  EXPECT_EQ(r->instance_type, "inf2.24xlarge");
  EXPECT_EQ(r->logical_neuroncore_config, 1u);
  EXPECT_EQ(r->devices[0].neuroncores, 2u);
}

TEST(NeuronParsers, JsonErrors) {
  EXPECT_EQ(parsers::parse_neuron_ls_json("").error().kind, ErrorKind::parse_error);
  EXPECT_EQ(parsers::parse_neuron_ls_json("[{\"neuron_device\": 0,").error().kind, ErrorKind::parse_error);
  EXPECT_EQ(parsers::parse_neuron_ls_json(R"({"model": "Inferentia", "nc_count": 4})").error().kind, ErrorKind::parse_error);
  // An empty list is a valid answer (no device).
  const auto empty = parsers::parse_neuron_ls_json("[]");
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->devices.empty());
  // Bad entries are named, good ones kept.
  const auto mixed = parsers::parse_neuron_ls_json(
      R"([{"neuron_device": "x"}, {"neuron_device": 1, "bdf": "garbage", "memory_size": "lots"},
          {"neuron_device": 2, "memory_size": 18446744073709551615}])");
  ASSERT_TRUE(mixed);
  ASSERT_EQ(mixed->devices.size(), 2u);
  EXPECT_FALSE(mixed->devices[0].bus_id);
  EXPECT_FALSE(mixed->devices[1].memory_bytes);
  EXPECT_EQ(mixed->problems.size(), 3u);
}

TEST(NeuronParsers, TableOfRecentReleases) {
  const auto r = parsers::parse_neuron_ls_table(trn2_table);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->instance_type, "trn2.48xlarge");
  EXPECT_EQ(r->logical_neuroncore_config, 2u);
  ASSERT_EQ(r->devices.size(), 2u);
  const auto& d = r->devices[1];
  EXPECT_EQ(d.index, 1u);
  EXPECT_EQ(d.neuroncores, 4u);
  EXPECT_EQ(d.neuroncore_ids, "4-7");
  EXPECT_EQ(d.memory_bytes, 96 * GiB);
  EXPECT_EQ(d.connected_to, (std::vector<std::uint32_t>{13, 0, 5, 2}));
  EXPECT_EQ(d.bus_id, PciAddress::parse("0000:b5:00.0"));
  EXPECT_EQ(d.cpu_affinity, "48-95,144-191");
  EXPECT_EQ(d.numa_node, 1);
  EXPECT_EQ(d.logical_neuroncore_config, 2u);
}

TEST(NeuronParsers, OlderTableWithProcessRowsAndTopology) {
  const auto r = parsers::parse_neuron_ls_table(inf1_table);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->devices.size(), 2u);
  EXPECT_EQ(r->devices[0].process_count, 2u);
  EXPECT_EQ(r->devices[1].process_count, 0u);
  EXPECT_EQ(r->devices[0].memory_bytes, 8 * GiB);
  EXPECT_EQ(r->devices[0].neuroncores, 4u);
  EXPECT_EQ(r->devices[1].connected_to, (std::vector<std::uint32_t>{0}));
  EXPECT_FALSE(r->instance_type);
  EXPECT_TRUE(r->problems.empty());
}

TEST(NeuronParsers, LogicalNcColumnMeansPhysicalCoresBesideIt) {
  const auto r = parsers::parse_neuron_ls_table(
      "+--------+--------+---------+--------+---------------+---------+\n"
      "| NEURON | NEURON | LOGICAL | NEURON |   CONNECTED   |   PCI   |\n"
      "| DEVICE | CORES  |   NC    | MEMORY |    DEVICES    |   BDF   |\n"
      "+--------+--------+---------+--------+---------------+---------+\n"
      "| 0      | 8      | 4       | 96 GB  | 12, 3, 4, 1   | cc:00.0 |\n"
      "+--------+--------+---------+--------+---------------+---------+\n");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->devices.size(), 1u);
  EXPECT_EQ(r->devices[0].physical_neuroncores, 8u);
  EXPECT_EQ(r->devices[0].neuroncores, 4u);
  EXPECT_EQ(r->devices[0].bus_id, PciAddress::parse("0000:cc:00.0"));
}

TEST(NeuronParsers, TableErrors) {
  EXPECT_EQ(parsers::parse_neuron_ls_table("").error().kind, ErrorKind::parse_error);
  EXPECT_EQ(parsers::parse_neuron_ls_table("ERROR: no neuron device found\n").error().kind, ErrorKind::parse_error);
  EXPECT_EQ(parsers::parse_neuron_ls_table("+---+\n| A |\n| B |\n+---+\n| 0 |\n").error().kind, ErrorKind::parse_error);
  const auto r = parsers::parse_neuron_ls_table(
      "+--------+--------+--------+\n| NEURON | NEURON | NEURON |\n| DEVICE | CORES  | MEMORY |\n+--------+--------+--------+\n"
      "| x      | 4      | 8 GB   |\n| 1      | 4      |\n| 2      | 4      | lots   |\n+--------+--------+--------+\n");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->devices.size(), 1u);
  EXPECT_FALSE(r->devices[0].memory_bytes);
  EXPECT_EQ(r->problems.size(), 3u);
}

TEST(NeuronParsers, ChipsAndTheirPublishedFigures) {
  const auto inf1 = parsers::neuron_chip_from_instance_type("inf1.6xlarge");
  ASSERT_TRUE(inf1);
  EXPECT_EQ(inf1->name, "Inferentia");
  EXPECT_EQ(inf1->published_neuroncores, 4u);
  EXPECT_EQ(inf1->published_memory_bytes, 8 * GiB);
  const auto inf2 = parsers::neuron_chip_from_instance_type("inf2.xlarge");
  EXPECT_EQ(inf2->published_neuroncores, 2u);
  EXPECT_EQ(inf2->published_memory_bytes, 32 * GiB);
  const auto trn1 = parsers::neuron_chip_from_instance_type("trn1n.32xlarge");
  EXPECT_EQ(trn1->name, "Trainium");
  EXPECT_EQ(trn1->published_memory_bytes, 32 * GiB);
  for (const char* t : {"trn2.48xlarge", "trn2n.48xlarge", "trn2u.48xlarge"}) {
    const auto trn2 = parsers::neuron_chip_from_instance_type(t);
    ASSERT_TRUE(trn2) << t;
    EXPECT_EQ(trn2->name, "Trainium2");
    EXPECT_EQ(trn2->published_neuroncores, 8u);
    EXPECT_EQ(trn2->published_memory_bytes, 96 * GiB);
    EXPECT_NE(trn2->published_note.find("4 logical cores"), std::string_view::npos);
  }
  EXPECT_FALSE(parsers::neuron_chip_from_instance_type("p5.48xlarge"));
  EXPECT_EQ(parsers::neuron_chip_from_pci(0x7064)->name, "Inferentia");
  EXPECT_EQ(parsers::neuron_chip_from_pci(0x7164)->name, "Trainium");
  EXPECT_EQ(parsers::neuron_chip_from_pci(0x7264)->name, "Inferentia2");
  EXPECT_EQ(parsers::neuron_chip_from_pci(0x7364)->name, "Trainium2");
  EXPECT_FALSE(parsers::neuron_chip_from_pci(0xec20)) << "ENA is not a Neuron device";
  EXPECT_EQ(parsers::neuron_chip_from_name("Inferentia2")->name, "Inferentia2");
  EXPECT_EQ(parsers::neuron_chip_from_name("Trainium1")->name, "Trainium");
  EXPECT_FALSE(parsers::neuron_chip_from_name("Trainium3")->published_memory_bytes);
}

class NeuronDetection : public ::testing::Test {
 protected:
  FixtureBuilder f_;
  AcceleratorRegistry detect() {
    auto sys = FixtureSystem::open(f_.write());
    EXPECT_TRUE(sys) << sys.error().message;
    return DetectBuilder::none().with(Backend::aws_neuron).system_probes(false).detect(**sys);
  }
  void refuse_json() {
    f_.command({"neuron-ls", "--output-format", "json"}, "", 2,
               "usage: neuron-ls [-h] [-w] [-a] [-t] [-j]\nneuron-ls: error: unrecognized arguments: --output-format json\n");
    f_.command({"neuron-ls", "--json-output"}, "", 2, "neuron-ls: error: unrecognized arguments: --json-output\n");
  }
};

TEST_F(NeuronDetection, OldJsonFormAfterTheNewOneIsRefused) {
  f_.command({"neuron-ls", "--output-format", "json"}, "", 2, "neuron-ls: error: unrecognized arguments\n");
  f_.command({"neuron-ls", "--json-output"}, trn2_pair_json);
  add_pci(f_, PciSpec("0000:cc:00.0", 0x1d0f, 0x7364).bound("neuron-driver").numa(1).link("32.0 GT/s PCIe", 8));
  const auto r = detect();
  EXPECT_TRUE(r.warnings().empty()) << "an older tool refusing the newer flag is expected";
  ASSERT_EQ(r.devices().size(), 2u);
  const DeviceProfile& d0 = r.devices()[0];
  EXPECT_EQ(d0.id, "aws_neuron:0");
  EXPECT_EQ(d0.name, "AWS Trainium2");
  EXPECT_EQ(d0.architecture, "NeuronCore-v3");
  EXPECT_EQ(d0.compute_capability, "trn2");
  EXPECT_EQ(d0.memory_bytes, 96 * GiB);
  EXPECT_EQ(d0.compute_units, 4u);
  EXPECT_EQ(d0.properties.at("logical_neuroncore_config"), "2");
  EXPECT_EQ(d0.properties.at("physical_neuroncores"), "8");
  EXPECT_EQ(d0.properties.at("neuroncore_ids"), "0-3");
  EXPECT_FALSE(d0.properties.contains("published_memory_bytes"));
  EXPECT_EQ(d0.pci_bus_id, "0000:cc:00.0");
  EXPECT_EQ(d0.numa_node, 1);
  ASSERT_TRUE(d0.pcie);
  EXPECT_EQ(d0.pcie->current_generation(), 5u);
  // Only the pair both devices see is linked: 12, 13, 3, ... are outside this view.
  ASSERT_EQ(r.links().size(), 1u);
  EXPECT_EQ(r.links()[0].a, "aws_neuron:0");
  EXPECT_EQ(r.links()[0].b, "aws_neuron:1");
  EXPECT_EQ(r.links()[0].kind, LinkKind::neuronlink);
  ASSERT_EQ(r.interconnects().size(), 1u);
  EXPECT_EQ(r.interconnects()[0].kind, "neuronlink");
  EXPECT_EQ(r.interconnects()[0].device_ids, (std::vector<std::string>{"aws_neuron:0", "aws_neuron:1"}));
}

TEST_F(NeuronDetection, TwoDevicesAtOneBusIdAreOne) {
  std::string json = trn2_pair_json;
  json.replace(json.find("b5:00.0"), 7, "cc:00.0");
  f_.command({"neuron-ls", "--output-format", "json"}, json);
  const auto r = detect();
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_EQ(r.devices()[0].id, "aws_neuron:0");
  EXPECT_TRUE(r.links().empty()) << "no link to the device left out";
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::inconsistent);
  EXPECT_EQ(r.warnings()[0].message, "neuron-ls gives device 1 the bus id 0000:cc:00.0 of an earlier device; kept the first");
}

TEST_F(NeuronDetection, TableWhenNoJsonFormIsKnown) {
  refuse_json();
  f_.command({"neuron-ls"}, inf1_table);
  const auto r = detect();
  EXPECT_TRUE(r.warnings().empty());
  ASSERT_EQ(r.devices().size(), 2u);
  EXPECT_EQ(r.devices()[0].name, "AWS Neuron device") << "no instance type, no PCI ids: the chip is not guessed";
  EXPECT_EQ(r.devices()[0].memory_bytes, 8 * GiB);
  EXPECT_EQ(r.devices()[0].compute_units, 4u);
  ASSERT_EQ(r.links().size(), 1u);
}

TEST_F(NeuronDetection, DeviceNodesWithoutNeuronLs) {
  f_.file("/dev/neuron0", "");
  f_.file("/dev/neuron1", "");
  f_.file("/dev/neuron", "");  // not a device node name this backend owns
  for (int i = 0; i < 2; ++i) {
    const std::string dir = "/sys/devices/virtual/neuron_device/neuron" + std::to_string(i);
    f_.file(dir + "/core_count", "2\n");
    f_.file(dir + "/connected_devices", i == 0 ? "1\n" : "0\n");
    f_.file(dir + "/info/architecture/device_name", "Trainium1\n");
    f_.file(dir + "/info/architecture/arch_type", "v2\n");
  }
  const auto r = detect();
  ASSERT_EQ(r.devices().size(), 2u);
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::tool_missing);
  const DeviceProfile& d = r.devices()[0];
  EXPECT_EQ(d.name, "AWS Trainium");
  EXPECT_FALSE(d.memory_bytes) << "the published figure is not a measurement";
  EXPECT_EQ(d.properties.at("published_memory_bytes"), std::to_string(32 * GiB));
  EXPECT_EQ(d.properties.at("published_neuroncores"), "2");
  EXPECT_EQ(d.compute_units, 2u);
  EXPECT_EQ(d.properties.at("device_node"), "/dev/neuron0");
  ASSERT_EQ(r.links().size(), 1u);
}

TEST_F(NeuronDetection, ChipFromPciWhenSysfsHasNoName) {
  f_.file("/dev/neuron0", "");
  f_.file("/sys/devices/virtual/neuron_device/neuron0/core_count", "2\n");
  f_.file("/proc/bus/pci/devices", hwaccel::testing::proc_pci_line(0, 0x1e, 0, 0x1d0f, 0x7264, "neuron-driver") +
                                       hwaccel::testing::proc_pci_line(0, 0x05, 0, 0x1d0f, 0xec20, "ena"));
  const auto r = detect();
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_EQ(r.devices()[0].name, "AWS Inferentia2");
  EXPECT_EQ(r.devices()[0].properties.at("published_memory_bytes"), std::to_string(32 * GiB));
}

TEST_F(NeuronDetection, FailingToolFallsBackToTheDeviceNodes) {
  refuse_json();
  f_.command({"neuron-ls"}, "", 1, "ERROR: failed to open /dev/neuron0: Permission denied\n");
  f_.file("/dev/neuron0", "");
  const auto r = detect();
  ASSERT_EQ(r.devices().size(), 1u);
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::tool_failed);
  EXPECT_NE(r.warnings()[0].message.find("Permission denied"), std::string::npos);
}

TEST_F(NeuronDetection, GarbageOutputOfEveryFormIsAParseError) {
  f_.command({"neuron-ls", "--output-format", "json"}, "{{{{");
  f_.command({"neuron-ls", "--json-output"}, "\xff\xfe garbage");
  f_.command({"neuron-ls"}, "Segmentation fault (core dumped)\n");
  f_.file("/dev/neuron0", "");
  const auto r = detect();
  ASSERT_EQ(r.devices().size(), 1u);
  // One warning for the walk, naming what each view answered.
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::parse_error);
  for (const char* form : {"neuron-ls --output-format json:", "neuron-ls --json-output:", "neuron-ls:"})
    EXPECT_NE(r.warnings()[0].message.find(form), std::string::npos) << r.warnings()[0].message;
}

TEST_F(NeuronDetection, EmptyAnswerWithDeviceNodesIsInconsistent) {
  f_.command({"neuron-ls", "--output-format", "json"}, "[]");
  f_.file("/dev/neuron3", "");
  const auto r = detect();
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_EQ(r.devices()[0].id, "aws_neuron:3");
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::inconsistent);
}

TEST_F(NeuronDetection, DeviceNodeWithoutTheDriversSysfsIsNotLookedFor) {
  // Without neuron-ls and without the driver's class folder, /dev is not listed.
  f_.file("/dev/neuron0", "");
  const auto r = detect();
  EXPECT_TRUE(r.devices().empty());
  EXPECT_TRUE(r.warnings().empty());
}

TEST_F(NeuronDetection, NothingAtAllMeansNothing) {
  f_.file("/dev/null", "");
  const auto r = detect();
  EXPECT_TRUE(r.devices().empty());
  EXPECT_TRUE(r.warnings().empty());
}

}  // namespace
