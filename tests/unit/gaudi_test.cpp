// Gaudi backend: hl-smi CSV and table parsers, product generations, and
// detection through fixtures (query, table fallback, sysfs only, failures).
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

using hwaccel::testing::MiB;
using hwaccel::testing::GiB;

const std::vector<std::string> query_argv = {
    "hl-smi",
    "--query-aip=index,module_id,name,bus_id,uuid,serial,driver_version,memory.total,memory.used,memory.free,"
    "temperature.aip,power.draw,utilization.aip",
    "--format=csv,nounits"};

constexpr const char* query_csv =
    "index, module_id, name, bus_id, uuid, serial, driver_version, memory.total [MiB], memory.used [MiB], "
    "memory.free [MiB], temperature.aip [C], power.draw [W], utilization.aip [%]\n"
    "1, 3, HL-225, 0000:9a:00.0, 01P0-HL2080A0-15-TNBS72-03-07-11, AN5000144, 1.22.1-97ec1a4, 98304, 768, 97536, 23, 84, 0\n"
    "0, 2, HL-225, 0000:33:00.0, 01P0-HL2080A0-15-TNBS72-11-07-04, AN5000101, 1.22.1-97ec1a4, 98304, 768, 97536, 22, 88, 0\n";

// Same layout as hl-smi's default table, with the older "Volatile Uncorr. ECC" header.
constexpr const char* gaudi1_table =
    "+-----------------------------------------------------------------------------+\n"
    "| HL-SMI Version:                                hl-1.15.1-fw-49.0.0.0        |\n"
    "| Driver Version:                                     1.15.1-a596ef0          |\n"
    "|-------------------------------+----------------------+----------------------+\n"
    "| AIP  Name       Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n"
    "| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | AIP-Util  Compute M. |\n"
    "|===============================+======================+======================|\n"
    "|   0  HL-205              N/A  | 0000:10:1d.0     N/A |                   0  |\n"
    "| N/A   31C   N/A    96W / 350W |    512MiB / 32768MiB |     3%           N/A |\n"
    "|-------------------------------+----------------------+----------------------+\n"
    "|   1  HL-205              N/A  | 0000:10:1b.0     N/A |                   0  |\n"
    "| N/A   30C   N/A    93W / 350W |    512MiB / 32768MiB |     0%           N/A |\n"
    "|-------------------------------+----------------------+----------------------+\n"
    "| Compute Processes:                                               AIP Memory |\n"
    "|  AIP       PID   Type   Process name                             Usage      |\n"
    "|=============================================================================|\n"
    "|   0        N/A   N/A    N/A                                      N/A        |\n"
    "+=============================================================================+\n";

TEST(GaudiParsers, CsvIsReadByHeaderName) {
  const auto r = parsers::parse_hl_smi_csv(query_csv);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->devices.size(), 2u);
  const auto& d = r->devices[0];
  EXPECT_EQ(d.index, 1u);
  EXPECT_EQ(d.module_id, 3u);
  EXPECT_EQ(d.name, "HL-225");
  EXPECT_EQ(d.bus_id, PciAddress::parse("0000:9a:00.0"));
  EXPECT_EQ(d.uuid, "01P0-HL2080A0-15-TNBS72-03-07-11");
  EXPECT_EQ(d.serial, "AN5000144");
  EXPECT_EQ(d.driver_version, "1.22.1-97ec1a4");
  EXPECT_EQ(d.memory_total_bytes, 98304 * MiB);
  EXPECT_EQ(d.memory_used_bytes, 768 * MiB);
  EXPECT_EQ(d.memory_free_bytes, 97536 * MiB);
  EXPECT_EQ(d.temperature_c, 23.0);
  EXPECT_EQ(d.power_watts, 84.0);
  EXPECT_EQ(d.utilization_percent, 0.0);
  EXPECT_TRUE(r->problems.empty());
}

TEST(GaudiParsers, CsvColumnsInAnyOrderWithUnitsInValues) {
  const auto r = parsers::parse_hl_smi_csv(
      "memory.total [MiB], name, bus_id, index, power.draw [W]\n"
      "131072 MiB, HL-325L, 0000:19:00.0, 4, 155 W\n"
      "[N/A], HL-325L, N/A, 5, N/A\n");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->devices.size(), 2u);
  EXPECT_EQ(r->devices[0].memory_total_bytes, 131072 * MiB);
  EXPECT_EQ(r->devices[0].power_watts, 155.0);
  EXPECT_EQ(r->devices[0].index, 4u);
  EXPECT_FALSE(r->devices[1].memory_total_bytes);
  EXPECT_FALSE(r->devices[1].bus_id);
  EXPECT_FALSE(r->devices[1].power_watts);
  EXPECT_TRUE(r->problems.empty());
}

TEST(GaudiParsers, CsvBadRowsAreNamedAndSkipped) {
  const auto r = parsers::parse_hl_smi_csv(
      "index, name, bus_id, memory.total [MiB]\n"
      "zero, HL-225, 0000:33:00.0, 98304\n"
      "1, HL-225\n"
      "2, HL-225, 0000:xx:00.0, lots\n"
      "3, HL-225, 0000:4d:00.0, 99999999999999999\n"
      "4, HL-225, 0000:4e:00.0, 98304\n");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->devices.size(), 3u);
  EXPECT_EQ(r->devices[0].index, 2u);
  EXPECT_FALSE(r->devices[0].bus_id);
  EXPECT_FALSE(r->devices[0].memory_total_bytes);
  EXPECT_FALSE(r->devices[1].memory_total_bytes) << "16 TiB and more is not a Gaudi";
  EXPECT_EQ(r->devices[2].memory_total_bytes, 98304 * MiB);
  ASSERT_EQ(r->problems.size(), 5u);
  EXPECT_NE(r->problems[0].find("index 'zero'"), std::string::npos);
  EXPECT_NE(r->problems[1].find("2 fields where the header has 4"), std::string::npos);
}

TEST(GaudiParsers, CsvWithoutUsableHeaderIsAnError) {
  EXPECT_EQ(parsers::parse_hl_smi_csv("").error().kind, ErrorKind::parse_error);
  EXPECT_EQ(parsers::parse_hl_smi_csv("\n\n").error().kind, ErrorKind::parse_error);
  EXPECT_EQ(parsers::parse_hl_smi_csv("foo, bar\n1, 2\n").error().kind, ErrorKind::parse_error);
  EXPECT_EQ(parsers::parse_hl_smi_csv(std::string("\x7f" "ELF\x01\x02\0\0", 8)).error().kind, ErrorKind::parse_error);
}

TEST(GaudiParsers, TableOfTwoRowsPerAip) {
  const auto r = parsers::parse_hl_smi_table(gaudi1_table);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->tool_version, "hl-1.15.1-fw-49.0.0.0");
  EXPECT_EQ(r->driver_version, "1.15.1-a596ef0");
  ASSERT_EQ(r->devices.size(), 2u);
  const auto& d = r->devices[0];
  EXPECT_EQ(d.index, 0u);
  EXPECT_EQ(d.name, "HL-205");
  EXPECT_EQ(d.bus_id, PciAddress::parse("0000:10:1d.0"));
  EXPECT_EQ(d.temperature_c, 31.0);
  EXPECT_EQ(d.power_watts, 96.0);
  EXPECT_EQ(d.power_limit_watts, 350.0);
  EXPECT_EQ(d.memory_used_bytes, 512 * MiB);
  EXPECT_EQ(d.memory_total_bytes, 32768 * MiB);
  EXPECT_EQ(d.memory_free_bytes, (32768 - 512) * MiB);
  EXPECT_EQ(d.utilization_percent, 3.0);
  EXPECT_FALSE(d.uuid);
  EXPECT_TRUE(r->problems.empty());
}

TEST(GaudiParsers, TableNicDriverVersionIsNotTheDriverVersion) {
  std::string t = gaudi1_table;
  t.insert(t.find("|-------------------------------+"),
           "| Nic Driver Version:                                 9.9.9-nic               |\n");
  const auto r = parsers::parse_hl_smi_table(t);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->driver_version, "1.15.1-a596ef0");
}

TEST(GaudiParsers, TableGarbageAndTruncation) {
  EXPECT_EQ(parsers::parse_hl_smi_table("").error().kind, ErrorKind::parse_error);
  EXPECT_EQ(parsers::parse_hl_smi_table("hl-smi: command not found\n").error().kind, ErrorKind::parse_error);
  EXPECT_EQ(parsers::parse_hl_smi_table(std::string(5000, '|')).error().kind, ErrorKind::parse_error);
  // Cut after the first row of AIP 1: AIP 0 is complete, AIP 1 keeps what it had.
  std::string t = gaudi1_table;
  t.resize(t.find("| N/A   30C"));
  const auto r = parsers::parse_hl_smi_table(t);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->devices.size(), 2u);
  EXPECT_EQ(r->devices[0].memory_total_bytes, 32768 * MiB);
  EXPECT_FALSE(r->devices[1].memory_total_bytes);
}

TEST(GaudiParsers, GenerationsFromBoardNamesAndPciIds) {
  const auto gen = [](std::string_view name) {
    const auto m = parsers::gaudi_model_from_name(name);
    return m ? std::string(m->generation) : std::string("?");
  };
  EXPECT_EQ(gen("HL-205"), "Gaudi");
  EXPECT_EQ(gen("HL-225"), "Gaudi 2");
  EXPECT_EQ(gen("HL-225B"), "Gaudi 2");
  EXPECT_EQ(gen("HL-288"), "Gaudi 2");
  EXPECT_EQ(gen("HL-325"), "Gaudi 3");
  EXPECT_EQ(gen("HL-325L"), "Gaudi 3");
  EXPECT_EQ(gen("HL-338"), "Gaudi 3");
  EXPECT_EQ(gen("HL-100"), "Goya");
  EXPECT_EQ(gen("GAUDI2"), "Gaudi 2");
  EXPECT_EQ(gen("GAUDI3 HL-338"), "Gaudi 3");
  EXPECT_EQ(gen("GAUDI HL2000M"), "Gaudi");
  EXPECT_EQ(gen("HL-9X"), "?");
  EXPECT_EQ(gen("HL-"), "?");
  EXPECT_EQ(gen(""), "?");
  EXPECT_EQ(parsers::gaudi_model_from_name("HL-225")->published_memory_bytes, 96 * GiB);
  EXPECT_EQ(parsers::gaudi_model_from_name("HL-325L")->published_memory_bytes, 128 * GiB);
  EXPECT_EQ(parsers::gaudi_model_from_name("HL-205")->published_memory_bytes, 32 * GiB);
  EXPECT_EQ(parsers::gaudi_model_from_pci(0x1020)->compute_capability, "gaudi2");
  EXPECT_EQ(parsers::gaudi_model_from_pci(0x1063)->compute_capability, "gaudi3");
  EXPECT_EQ(parsers::gaudi_model_from_pci(0x1000)->compute_capability, "gaudi");
  EXPECT_FALSE(parsers::gaudi_model_from_pci(0x7777));
}

class GaudiDetection : public ::testing::Test {
 protected:
  FixtureBuilder f_;
  AcceleratorRegistry detect() {
    auto sys = FixtureSystem::open(f_.write());
    EXPECT_TRUE(sys) << sys.error().message;
    return DetectBuilder::none().with(Backend::gaudi).system_probes(false).detect(**sys);
  }
  void habana(const std::string& addr, unsigned device, int numa, std::string status = "Operational") {
    add_pci(f_, PciSpec(addr, 0x1da3, device).bound("habanalabs").numa(numa).link("16.0 GT/s PCIe", 16).cpus(numa == 0 ? "0-39" : "40-79"));
    const std::string dir = "/sys/devices/pci0000:00/" + addr;
    f_.file(dir + "/status", status + "\n");
    f_.file(dir + "/device_type", device == 0x1060 ? "GAUDI3\n" : "GAUDI2\n");
    f_.file(dir + "/driver_ver", "1.22.1-97ec1a4\n");
  }
};

TEST_F(GaudiDetection, QueryJoinedWithSysfsByBusId) {
  f_.command(query_argv, query_csv);
  habana("0000:33:00.0", 0x1020, 0);
  habana("0000:9a:00.0", 0x1020, 1);
  const auto r = detect();
  ASSERT_EQ(r.devices().size(), 2u);
  EXPECT_TRUE(r.warnings().empty());
  const DeviceProfile& d0 = r.devices()[0];
  EXPECT_EQ(d0.id, "gaudi:0");
  EXPECT_EQ(d0.name, "Intel Gaudi 2 HL-225");
  EXPECT_EQ(d0.architecture, "Gaudi 2");
  EXPECT_EQ(d0.compute_capability, "gaudi2");
  EXPECT_EQ(d0.pci_bus_id, "0000:33:00.0");
  EXPECT_EQ(d0.numa_node, 0);
  EXPECT_EQ(d0.cpu_affinity, "0-39");
  ASSERT_TRUE(d0.pcie);
  EXPECT_EQ(d0.pcie->current_generation(), 4u);
  EXPECT_EQ(d0.memory_bytes, 98304 * MiB);
  EXPECT_EQ(d0.uuid, "01P0-HL2080A0-15-TNBS72-11-07-04");
  EXPECT_EQ(d0.properties.at("module_id"), "2");
  EXPECT_EQ(d0.properties.at("serial"), "AN5000101");
  EXPECT_EQ(d0.properties.at("status"), "Operational");
  EXPECT_FALSE(d0.properties.contains("published_memory_bytes"));
  EXPECT_EQ(r.devices()[1].pci_bus_id, "0000:9a:00.0");
  EXPECT_EQ(r.devices()[1].numa_node, 1);
}

TEST_F(GaudiDetection, RefusedQueryFallsBackToTheTable) {
  f_.command(query_argv, "", 1, "hl-smi: unrecognized field 'module_id'\n");
  f_.command({"hl-smi"}, gaudi1_table);
  const auto r = detect();
  ASSERT_EQ(r.devices().size(), 2u);
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::degraded);
  EXPECT_NE(r.warnings()[0].message.find("unrecognized field"), std::string::npos);
  const DeviceProfile& d = r.devices()[0];
  EXPECT_EQ(d.name, "Intel Gaudi HL-205");
  EXPECT_EQ(d.compute_capability, "gaudi");
  EXPECT_EQ(d.memory_bytes, 32768 * MiB);
  EXPECT_EQ(d.driver_version, "1.15.1-a596ef0");
  EXPECT_EQ(d.firmware_version, "49.0.0.0");
  EXPECT_EQ(d.power_limit_watts, 350.0);
}

TEST_F(GaudiDetection, SysfsOnlyWhenHlSmiIsMissing) {
  habana("0000:b3:00.0", 0x1020, 1);
  habana("0000:4d:00.0", 0x1060, 0);
  const auto r = detect();
  ASSERT_EQ(r.devices().size(), 2u);
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::tool_missing);
  const DeviceProfile& d0 = r.devices()[0];
  EXPECT_EQ(d0.pci_bus_id, "0000:4d:00.0");
  EXPECT_EQ(d0.name, "Intel Gaudi 3");
  EXPECT_FALSE(d0.memory_bytes) << "a published figure is not a measurement";
  EXPECT_EQ(d0.properties.at("published_memory_bytes"), std::to_string(128 * GiB));
  EXPECT_NE(d0.properties.at("published_spec").find("not read from the device"), std::string::npos);
  EXPECT_EQ(d0.driver_version, "1.22.1-97ec1a4");
  EXPECT_EQ(r.devices()[1].name, "Intel Gaudi 2");
}

TEST_F(GaudiDetection, FailingToolKeepsTheDriversDevices) {
  f_.command(query_argv, "", 1, "Failed to initialize HLML\n");
  f_.command({"hl-smi"}, "", 1, "Failed to initialize HLML\n");
  habana("0000:33:00.0", 0x1060, 0, "Needs reset");
  const auto r = detect();
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_FALSE(r.devices()[0].available);
  ASSERT_EQ(r.warnings().size(), 2u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::tool_failed);
  EXPECT_NE(r.warnings()[0].message.find("Failed to initialize HLML"), std::string::npos);
  EXPECT_EQ(r.warnings()[1].kind, WarningKind::unsupported);
  EXPECT_NE(r.warnings()[1].message.find("Needs reset"), std::string::npos);
}

TEST_F(GaudiDetection, GarbageFromBothFormsIsAParseError) {
  f_.command(query_argv, "\x01\x02garbage\n");
  f_.command({"hl-smi"}, "Segmentation fault\n");
  const auto r = detect();
  EXPECT_TRUE(r.devices().empty());
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::parse_error);
}

TEST_F(GaudiDetection, HangingToolIsATimeoutAndTheTableIsNotTried) {
  f_.command(query_argv, "", 0, "", true);
  const auto r = detect();
  EXPECT_TRUE(r.devices().empty());
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::timeout);
}

TEST_F(GaudiDetection, DeviceMissingFromHlSmiIsReportedAsInconsistent) {
  f_.command(query_argv, query_csv);
  habana("0000:33:00.0", 0x1020, 0);
  habana("0000:9a:00.0", 0x1020, 1);
  habana("0000:b4:00.0", 0x1020, 1);
  const auto r = detect();
  ASSERT_EQ(r.devices().size(), 2u);
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::inconsistent);
  EXPECT_NE(r.warnings()[0].message.find("0000:b4:00.0"), std::string::npos);
}

TEST_F(GaudiDetection, AipListedTwiceCountsOnce) {
  // The second row repeats AIP 0's bus id; the third repeats AIP 1's UUID without a bus id.
  f_.command(query_argv,
             std::string(query_csv) +
                 "0, 2, HL-225, 0000:33:00.0, 01P0-HL2080A0-15-TNBS72-11-07-04, AN5000101, 1.22.1-97ec1a4, 98304, 0, "
                 "98304, 22, 88, 0\n"
                 "7, 3, HL-225, N/A, 01P0-HL2080A0-15-TNBS72-03-07-11, AN5000144, 1.22.1-97ec1a4, 98304, 0, 98304, 23, "
                 "84, 0\n");
  habana("0000:33:00.0", 0x1020, 0);
  habana("0000:9a:00.0", 0x1020, 1);
  const auto r = detect();
  ASSERT_EQ(r.devices().size(), 2u);
  EXPECT_EQ(r.devices()[0].id, "gaudi:0");
  EXPECT_EQ(r.devices()[0].memory_used_bytes, 768 * MiB) << "the first row is kept";
  EXPECT_EQ(r.devices()[1].id, "gaudi:1");
  EXPECT_EQ(r.devices()[1].pci_bus_id, "0000:9a:00.0");
  ASSERT_EQ(r.warnings().size(), 2u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::inconsistent);
  EXPECT_EQ(r.warnings()[0].message, "hl-smi lists the AIP at 0000:33:00.0 twice; the first row is kept");
  EXPECT_EQ(r.warnings()[1].message, "hl-smi lists AIP 01P0-HL2080A0-15-TNBS72-03-07-11 twice; the first row is kept");
}

TEST_F(GaudiDetection, NothingAtAllMeansNothing) {
  const auto r = detect();
  EXPECT_TRUE(r.devices().empty());
  EXPECT_TRUE(r.warnings().empty());
}

}  // namespace
