// Telemetry of the backends other than NVIDIA, AMD sysfs and Intel: Gaudi
// through hl-smi (its three views), TPUs through tpu-info (kept between
// samples), AWS Neuron through the driver's sysfs counters, Intel through
// xpu-smi's table, and AMD through rocm-smi where sysfs gives nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../test_support.hpp"

import hwaccel;

#include "module_helpers.hpp"

namespace {

using namespace hwaccel;
namespace support = hwaccel::testing;
using support::FixtureBuilder;

std::unique_ptr<FixtureSystem> machine(const std::string& name) { return support::open_machine(name); }

std::unique_ptr<FixtureSystem> open(FixtureBuilder& f) {
  auto system = FixtureSystem::open(f.write());
  if (!system) throw std::runtime_error(system.error().message);
  return std::move(*system);
}

const DeviceTelemetry* find(const TelemetrySample& s, std::string_view id) { return support::find_telemetry(s, id); }

std::optional<double> temperature(const DeviceTelemetry& t, std::string_view sensor) {
  for (const auto& r : t.temperatures)
    if (r.sensor == sensor) return r.celsius;
  return std::nullopt;
}

std::optional<std::uint64_t> ecc(const DeviceTelemetry& t, std::string_view type, std::string_view scope,
                                 std::string_view block) {
  for (const auto& e : t.ecc_errors)
    if (e.type == type && e.scope == scope && e.block == block) return e.count;
  return std::nullopt;
}

using RunCountingSystem = support::CountingSystem;

DeviceProfile device(Backend backend, std::string id, std::optional<std::string> bus = std::nullopt) {
  DeviceProfile d;
  d.backend = backend;
  d.family = Family::asic;
  d.id = std::move(id);
  d.pci_bus_id = std::move(bus);
  return d;
}

// --- Gaudi --------------------------------------------------------------------------

TEST(GaudiTelemetry, ReadsTheQueryWithEccCounters) {
  const auto hls2 = support::sample_machine("hls2-8x-gaudi2-hl-smi");
  const auto& sample = hls2.sample;
  EXPECT_TRUE(sample.failed_sources.empty());
  ASSERT_EQ(sample.devices.size(), 8u);
  const DeviceTelemetry& busy = *find(sample, "gaudi:3");
  EXPECT_EQ(busy.source, "hl-smi --query-aip");
  EXPECT_DOUBLE_EQ(*busy.utilization, 0.87);
  EXPECT_EQ(*busy.memory_used_bytes, 61440ull << 20);
  EXPECT_EQ(*busy.memory_free_bytes, (98304ull - 61440ull) << 20);
  EXPECT_EQ(temperature(busy, "aip"), 41.0);
  EXPECT_DOUBLE_EQ(*busy.power_watts, 412);
  const DeviceTelemetry& errors = *find(sample, "gaudi:5");
  EXPECT_EQ(ecc(errors, "corrected", "volatile", "total"), 3u);
  EXPECT_EQ(ecc(errors, "corrected", "aggregate", "total"), 8u);
  EXPECT_EQ(ecc(errors, "uncorrected", "volatile", "total"), 0u);
}

// An hl-smi that refuses the query form: the default table gives what it shows,
// the power cap included.
TEST(GaudiTelemetry, FallsBackToTheTable) {
  const auto dl1 = support::sample_machine("dl1-8x-gaudi-hl205-table");
  const auto& sample = dl1.sample;
  EXPECT_TRUE(sample.failed_sources.empty());
  ASSERT_EQ(sample.devices.size(), 8u);
  const DeviceTelemetry& t = sample.devices.front();
  EXPECT_EQ(t.source, "hl-smi");
  EXPECT_TRUE(t.power_limit_watts);
  EXPECT_TRUE(t.memory_used_bytes);
  EXPECT_TRUE(t.ecc_errors.empty());
}

// The real 8x HL-225 table of the shared captures (Ray's Gaudi tutorial).
TEST(GaudiTelemetry, ReadsTheRealHlSmiTable) {
  const auto table = support::shared_capture("gaudi/ray-docs-8x-hl225-gaudi2/hl-smi.txt");
  if (table.empty()) GTEST_SKIP() << "shared capture gaudi/ray-docs-8x-hl225-gaudi2 not available";
  FixtureBuilder f;
  f.command({"hl-smi"}, support::read_file(table));
  const auto system = open(f);
  AcceleratorRegistry registry;
  ASSERT_TRUE(registry.add_device(device(Backend::gaudi, "gaudi:0", "0000:33:00.0")));
  ASSERT_TRUE(registry.add_device(device(Backend::gaudi, "gaudi:7", "0000:b4:00.0")));
  const auto sample = sample_telemetry(registry, *system);
  ASSERT_EQ(sample.devices.size(), 2u);
  const DeviceTelemetry& first = *find(sample, "gaudi:0");
  EXPECT_EQ(temperature(first, "aip"), 22.0);
  EXPECT_DOUBLE_EQ(*first.power_watts, 88);
  EXPECT_DOUBLE_EQ(*first.power_limit_watts, 600);
  EXPECT_EQ(*first.memory_used_bytes, 768ull << 20);
  EXPECT_EQ(*first.memory_total_bytes, 98304ull << 20);
  EXPECT_DOUBLE_EQ(*first.utilization, 0);
  EXPECT_DOUBLE_EQ(*find(sample, "gaudi:7")->power_watts, 90);
}

TEST(GaudiTelemetry, AHungToolIsOneTimeoutNotThreeTries) {
  FixtureBuilder f;
  f.command({"hl-smi", "--query-aip=index,bus_id,uuid,memory.total,memory.used,memory.free,temperature.aip,power.draw,"
                       "utilization.aip,ecc.errors.corrected.volatile.total,ecc.errors.uncorrected.volatile.total,"
                       "ecc.errors.corrected.aggregate.total,ecc.errors.uncorrected.aggregate.total",
             "--format=csv,nounits"},
            "", 0, {}, /*hang=*/true);
  f.command({"hl-smi"}, "garbage that must not be read\n");
  const auto fixture = open(f);
  const RunCountingSystem system(*fixture);
  AcceleratorRegistry registry;
  ASSERT_TRUE(registry.add_device(device(Backend::gaudi, "gaudi:0", "0000:33:00.0")));
  const auto sample = sample_telemetry(registry, system);
  EXPECT_TRUE(sample.devices.empty());
  EXPECT_EQ(sample.failed_sources, std::vector<std::string>{"gaudi"});
  ASSERT_EQ(sample.warnings.size(), 1u);
  EXPECT_EQ(sample.warnings[0].kind, WarningKind::timeout);
  EXPECT_EQ(system.runs("hl-smi"), 1);
}

TEST(GaudiTelemetry, GarbageInEveryViewIsAFailedSource) {
  FixtureBuilder f;
  f.command({"hl-smi"}, "+-----+\n| not a table |\n");
  const auto system = open(f);
  AcceleratorRegistry registry;
  ASSERT_TRUE(registry.add_device(device(Backend::gaudi, "gaudi:0", "0000:33:00.0")));
  const auto sample = sample_telemetry(registry, *system);
  EXPECT_TRUE(sample.devices.empty());
  EXPECT_EQ(sample.failed_sources, std::vector<std::string>{"gaudi"});
  ASSERT_FALSE(sample.warnings.empty());
  EXPECT_EQ(sample.warnings.back().kind, WarningKind::parse_error);
}

// --- TPU ------------------------------------------------------------------------------

TEST(TpuTelemetry, ReadsTpuInfoUsage) {
  const auto vm = support::sample_machine("tpu-v6e-4-vm-busy");
  const auto& sample = vm.sample;
  EXPECT_TRUE(sample.failed_sources.empty());
  ASSERT_EQ(sample.devices.size(), 4u);
  for (const auto& t : sample.devices) {
    EXPECT_EQ(t.source, "tpu-info");
    EXPECT_TRUE(t.memory_used_bytes && t.memory_total_bytes && *t.memory_used_bytes <= *t.memory_total_bytes);
  }
}

// The real v6e tpu-info output of the shared captures (rich box tables).
TEST(TpuTelemetry, ReadsTheRealTpuInfo) {
  const auto out = support::shared_capture("tpu/issue-tabpfn424-v6e-tpu-info/tpu-info.txt");
  if (out.empty()) GTEST_SKIP() << "shared capture tpu/issue-tabpfn424-v6e-tpu-info not available";
  FixtureBuilder f;
  f.command({"tpu-info"}, support::read_file(out));
  const auto system = open(f);
  AcceleratorRegistry registry;
  DeviceProfile chip = device(Backend::tpu, "tpu:0", "0000:00:04.0");
  chip.properties["device_node"] = "/dev/vfio/0";
  ASSERT_TRUE(registry.add_device(chip));
  const auto sample = sample_telemetry(registry, *system);
  ASSERT_EQ(sample.devices.size(), 1u);
  const DeviceTelemetry& t = sample.devices[0];
  EXPECT_NEAR(*t.utilization, 0.0038, 1e-12);
  EXPECT_NEAR(static_cast<double>(*t.memory_used_bytes), 2.94 * (1ull << 30), 1 << 20);
  EXPECT_NEAR(static_cast<double>(*t.memory_total_bytes), 31.25 * (1ull << 30), 1 << 20);
}

// tpu-info takes seconds: a collector runs it once per SlowToolCache max_age,
// not on every scrape.
TEST(TpuTelemetry, TheCollectorKeepsTpuInfoBetweenScrapes) {
  const auto vm = machine("tpu-v6e-4-vm-busy");
  const RunCountingSystem system(*vm);
  CollectorOptions options;
  options.sample_max_age = std::chrono::milliseconds(0);  // every scrape samples
  TelemetryCollector collector(system, options);
  const int detection_runs = [&] {
    (void)collector.registry();
    return system.runs("tpu-info");
  }();
  for (int i = 0; i < 5; ++i) EXPECT_NE(collector.scrape(MetricsFormat::prometheus_text).find("backend=\"tpu\""), std::string::npos);
  EXPECT_EQ(system.runs("tpu-info") - detection_runs, 1);

  // Without a cache every sample runs it.
  const auto registry = collector.registry();
  const int before = system.runs("tpu-info");
  (void)sample_telemetry(*registry, system);
  (void)sample_telemetry(*registry, system);
  EXPECT_EQ(system.runs("tpu-info") - before, 2);
  // A cache whose results are too old runs it again.
  TelemetryOptions expiring;
  expiring.slow_tools = std::make_shared<SlowToolCache>(std::chrono::milliseconds(0));
  (void)sample_telemetry(*registry, system, expiring);
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  (void)sample_telemetry(*registry, system, expiring);
  EXPECT_EQ(system.runs("tpu-info") - before, 4);
}

TEST(TpuTelemetry, NoFrameworkHoldingTheTpuIsNoDataNotAnError) {
  FixtureBuilder f;
  f.command({"tpu-info"},
            "TPU Chips\n| Chip | Type | Devices | PID |\n|---|---|---|---|\n| /dev/vfio/0 | TPU v5 lite chip | 1 | None |\n"
            "Libtpu metrics unavailable. Is there a framework using the TPU?\n");
  const auto system = open(f);
  AcceleratorRegistry registry;
  DeviceProfile chip = device(Backend::tpu, "tpu:0");
  chip.properties["device_node"] = "/dev/vfio/0";
  ASSERT_TRUE(registry.add_device(chip));
  const auto sample = sample_telemetry(registry, *system);
  EXPECT_TRUE(sample.devices.empty());
  EXPECT_TRUE(sample.failed_sources.empty());
  EXPECT_TRUE(sample.warnings.empty());
}

// --- AWS Neuron -------------------------------------------------------------------------

TEST(NeuronTelemetry, ReadsTheDriverCounters) {
  const auto trn1 = support::sample_machine("trn1-2xlarge-no-neuron-ls");
  const auto& registry = trn1.registry;
  const auto& sample = trn1.sample;
  ASSERT_EQ(sample.devices.size(), 1u);
  const DeviceTelemetry& t = sample.devices[0];
  EXPECT_EQ(t.source, "neuron sysfs");
  // Core 0's categories plus core 1's single counter.
  EXPECT_EQ(*t.memory_used_bytes, 6442450944ull + 104857600 + 1073741824 + 33554432 + 67108864 + 134217728);
  EXPECT_EQ(ecc(t, "uncorrected", "volatile", "dram_repairable"), 2u);
  EXPECT_EQ(ecc(t, "uncorrected", "volatile", "sram"), 0u);
  EXPECT_DOUBLE_EQ(*t.power_utilization, 0.3875);
  EXPECT_FALSE(t.utilization);  // the driver's sysfs has no busy time
  const std::string text = metrics_text(registry, sample, {});
  EXPECT_NE(text.find("hwaccel_device_power_utilization_ratio{device=\"aws_neuron:0\""), std::string::npos);
}

TEST(NeuronTelemetry, BadCountersAreProblemsNotValues) {
  FixtureBuilder f;
  const std::string dir = "/sys/devices/virtual/neuron_device/neuron0";
  f.file(dir + "/neuron_core0/stats/memory_usage/device_mem/total", "lots\n");
  f.file(dir + "/stats/power/utilization", "POWER_STATUS_VALID,1764153600,1,2,250\n");
  f.file(dir + "/stats/hardware/sram_ecc_uncorrected/total", "-1\n");
  const auto system = open(f);
  AcceleratorRegistry registry;
  ASSERT_TRUE(registry.add_device(device(Backend::aws_neuron, "aws_neuron:0")));
  const auto sample = sample_telemetry(registry, *system);
  EXPECT_TRUE(sample.devices.empty());
  EXPECT_EQ(sample.warnings.size(), 3u);

  FixtureBuilder quiet;
  quiet.file(dir + "/stats/power/utilization", "POWER_STATUS_NO_DATA,0,0,0,0\n");
  const auto idle = open(quiet);
  const auto none = sample_telemetry(registry, *idle);
  EXPECT_TRUE(none.devices.empty());
  EXPECT_TRUE(none.warnings.empty());
}

// --- Intel through xpu-smi ------------------------------------------------------------

TEST(XpuSmiTelemetry, AddsWhatTheHwmonLacks) {
  const auto desktop = support::sample_machine("raptor-lake-igpu-arc-b580-xpu-smi");
  const auto& sample = desktop.sample;
  EXPECT_TRUE(sample.failed_sources.empty());
  ASSERT_EQ(sample.devices.size(), 1u);  // the UHD 770 has no hwmon and is not in xpu-smi's table
  const DeviceTelemetry& t = sample.devices[0];
  EXPECT_EQ(t.source, "xpu-smi");
  EXPECT_DOUBLE_EQ(*t.utilization, 0.93);
  EXPECT_EQ(*t.memory_used_bytes, 9472ull << 20);
  EXPECT_EQ(*t.memory_total_bytes, 12216ull << 20);
  EXPECT_DOUBLE_EQ(*t.power_watts, 148);
  EXPECT_DOUBLE_EQ(*t.power_limit_watts, 190);
  EXPECT_EQ(temperature(t, "gpu"), 61.0);
}

// The real Arc B580 table of Intel's xpumanager README, with the card's real
// hwmon from another capture: the hwmon's values stay, xpu-smi adds the rest.
TEST(XpuSmiTelemetry, MergesTheRealTableWithTheRealHwmon) {
  const auto table = support::shared_capture("intel/xpumanager-readme-arc-b580/xpu-smi.txt");
  const auto device_dir = support::shared_capture("intel/lact-b580-sysfs/card1/device");
  if (table.empty() || device_dir.empty()) GTEST_SKIP() << "shared captures of the Arc B580 not available";
  FixtureBuilder f;
  f.command({"xpu-smi"}, support::read_file(table));
  f.tree(device_dir, "/sys/bus/pci/devices/0000:03:00.0");
  const auto system = open(f);
  AcceleratorRegistry registry;
  DeviceProfile gpu = device(Backend::intel_oneapi, "intel_oneapi:0", "0000:03:00.0");
  gpu.family = Family::gpu;
  ASSERT_TRUE(registry.add_device(gpu));
  const auto sample = sample_telemetry(registry, *system);
  ASSERT_EQ(sample.devices.size(), 1u);
  const DeviceTelemetry& t = sample.devices[0];
  EXPECT_EQ(t.source, "xe/i915 hwmon + xpu-smi");
  EXPECT_DOUBLE_EQ(*t.utilization, 0);
  EXPECT_EQ(*t.memory_used_bytes, 239ull << 20);
  EXPECT_DOUBLE_EQ(*t.power_watts, 66);         // xpu-smi: the hwmon has no instantaneous power
  EXPECT_DOUBLE_EQ(*t.power_limit_watts, 190);  // the hwmon's power1_cap wins over the table's 380 W
  EXPECT_EQ(temperature(t, "gpu"), 25.0);
  EXPECT_TRUE(t.energy_joules);
}

TEST(XpuSmiTelemetry, AFailingXpuSmiKeepsTheHwmonValues) {
  const auto device_dir = support::shared_capture("intel/lact-b580-sysfs/card1/device");
  if (device_dir.empty()) GTEST_SKIP() << "shared capture intel/lact-b580-sysfs not available";
  FixtureBuilder f;
  f.command({"xpu-smi"}, "", 1, "Level Zero initialization failed\n");
  f.tree(device_dir, "/sys/bus/pci/devices/0000:03:00.0");
  const auto system = open(f);
  AcceleratorRegistry registry;
  ASSERT_TRUE(registry.add_device(device(Backend::intel_oneapi, "intel_oneapi:0", "0000:03:00.0")));
  const auto sample = sample_telemetry(registry, *system);
  ASSERT_EQ(sample.devices.size(), 1u);
  EXPECT_EQ(sample.devices[0].source, "xe/i915 hwmon");
  EXPECT_TRUE(sample.devices[0].energy_joules);
  EXPECT_EQ(sample.failed_sources, std::vector<std::string>{"intel_oneapi"});
}

// --- AMD through rocm-smi ---------------------------------------------------------------

constexpr std::string_view rocm_smi_json = R"json({
  "card0": {"GPU use (%)": "42", "VRAM Total Memory (B)": "34342961152", "VRAM Total Used Memory (B)": "1073741824",
            "Temperature (Sensor edge) (C)": "31.0", "Temperature (Sensor junction) (C)": "34.0",
            "Current Socket Graphics Package Power (W)": "140.5", "Max Graphics Package Power (W)": "750.0",
            "sclk clock speed:": "(2100Mhz)", "mclk clock speed:": "(1300Mhz)", "pcie clock level": "1 (32.0GT/s x16)",
            "PCI Bus": "0000:1E:00.0"},
  "card1": {"GPU use (%)": "banana", "PCI Bus": "0000:22:00.0"},
  "system": {"Driver version": "6.8.5"}
})json";

TEST(RocmSmiTelemetry, FillsInWhereSysfsGivesNothing) {
  FixtureBuilder f;
  f.command({"rocm-smi", "-a", "--json"}, rocm_smi_json);
  const auto system = open(f);
  AcceleratorRegistry registry;
  DeviceProfile a = device(Backend::rocm, "rocm:0", "0000:1e:00.0");
  DeviceProfile b = device(Backend::rocm, "rocm:1", "0000:22:00.0");
  DeviceProfile c = device(Backend::rocm, "rocm:2", "0000:43:00.0");
  for (auto* d : {&a, &b, &c}) d->family = Family::gpu;
  for (const auto& d : {a, b, c}) ASSERT_TRUE(registry.add_device(d));
  const auto sample = sample_telemetry(registry, *system);
  EXPECT_TRUE(sample.failed_sources.empty());
  const DeviceTelemetry& t = *find(sample, "rocm:0");
  EXPECT_EQ(t.source, "rocm-smi");
  EXPECT_DOUBLE_EQ(*t.utilization, 0.42);
  EXPECT_EQ(*t.memory_free_bytes, 34342961152ull - 1073741824ull);
  EXPECT_EQ(temperature(t, "junction"), 34.0);
  EXPECT_DOUBLE_EQ(*t.power_watts, 140.5);
  EXPECT_DOUBLE_EQ(*t.power_limit_watts, 750);
  EXPECT_DOUBLE_EQ(t.clocks_mhz.at("graphics"), 2100);
  EXPECT_EQ(*t.pcie_generation, 5u);
  EXPECT_EQ(*t.pcie_width, 16u);
  // card1's garbage is a problem, not a value; rocm:2 is not listed at all.
  EXPECT_FALSE(find(sample, "rocm:1")->utilization);
  EXPECT_FALSE(find(sample, "rocm:2"));
  const auto named = [&](std::string_view what) {
    return std::any_of(sample.warnings.begin(), sample.warnings.end(),
                       [&](const Warning& w) { return w.message.find(what) != std::string::npos; });
  };
  EXPECT_TRUE(named("banana"));
  EXPECT_TRUE(named("0000:43:00.0"));
}

// The real rocm-smi JSON of 6x MI100 (ROCm 5.7.1) that telegraf's tests replay.
TEST(RocmSmiTelemetry, ReadsTheRealMi100Json) {
  const auto json = support::shared_capture("amd/telegraf-rocmsmi-6x-mi100-rocm571/rocm-smi.json");
  if (json.empty()) GTEST_SKIP() << "shared capture amd/telegraf-rocmsmi-6x-mi100-rocm571 not available";
  FixtureBuilder f;
  f.command({"rocm-smi", "-a", "--json"}, support::read_file(json));
  const auto system = open(f);
  AcceleratorRegistry registry;
  DeviceProfile gpu = device(Backend::rocm, "rocm:0", "0000:1e:00.0");
  gpu.family = Family::gpu;
  ASSERT_TRUE(registry.add_device(gpu));
  const auto sample = sample_telemetry(registry, *system);
  ASSERT_EQ(sample.devices.size(), 1u);
  const DeviceTelemetry& t = sample.devices[0];
  EXPECT_DOUBLE_EQ(*t.utilization, 0);
  EXPECT_EQ(*t.memory_total_bytes, 34342961152ull);
  EXPECT_EQ(temperature(t, "edge"), 31.0);
  EXPECT_EQ(temperature(t, "mem"), 30.0);
  EXPECT_DOUBLE_EQ(*t.power_watts, 39);
  EXPECT_DOUBLE_EQ(*t.power_limit_watts, 290);
  EXPECT_DOUBLE_EQ(t.clocks_mhz.at("memory"), 1200);
  EXPECT_DOUBLE_EQ(t.clocks_mhz.at("fabric"), 1402);
  EXPECT_EQ(*t.pcie_generation, 3u);
  EXPECT_EQ(*t.pcie_width, 16u);
}

}  // namespace
