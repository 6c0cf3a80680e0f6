// Telemetry: the nvidia-smi query reader on real output, amdgpu sysfs, the
// sampler's failures, the Prometheus exposition and the collector.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "../test_support.hpp"

import hwaccel;
import hwaccel.detectors;

#include "module_helpers.hpp"

namespace {

using namespace hwaccel;
namespace support = hwaccel::testing;
using support::FixtureBuilder;

std::unique_ptr<FixtureSystem> machine(const std::string& name) { return support::open_machine(name); }
const DeviceTelemetry* find(const TelemetrySample& s, std::string_view id) { return support::find_telemetry(s, id); }

// A registry of one GPU of `backend` at `bus`, as detection would give it.
AcceleratorRegistry one_gpu(Backend backend, std::string bus, std::string id = {}) {
  AcceleratorRegistry registry;
  DeviceProfile gpu;
  gpu.id = std::move(id);
  gpu.backend = backend;
  gpu.family = Family::gpu;
  gpu.pci_bus_id = std::move(bus);
  EXPECT_TRUE(registry.add_device(gpu));
  return registry;
}

// The real H200 capture under a bf16 matmul load (driver 580).
TEST(NvidiaTelemetry, ReadsTheRealCaptureUnderLoad) {
  const std::string csv = support::read_file(support::fixtures_root() / "machines" / "h200-sxm-telemetry-load-driver-580" /
                                             "commands" / "05-nvidia-smi.stdout");
  std::vector<std::string> problems;
  const auto rows = parse_nvidia_telemetry(csv, &problems);
  ASSERT_TRUE(rows) << rows.error().message;
  EXPECT_TRUE(problems.empty()) << problems.front();
  ASSERT_EQ(rows->size(), 1u);
  const auto& row = rows->front();
  EXPECT_EQ(row.pci_bus_id, "0000:00:06.0");
  EXPECT_EQ(row.uuid, "GPU-5a41ce45-e82a-a159-ec6f-fe593e0e1c21");
  const DeviceTelemetry& t = row.telemetry;
  EXPECT_DOUBLE_EQ(*t.utilization, 1.0);
  EXPECT_DOUBLE_EQ(t.engine_utilization.at("memory"), 0.24);
  EXPECT_EQ(*t.memory_total_bytes, 143771ull << 20);
  EXPECT_EQ(*t.memory_used_bytes, 1139ull << 20);
  ASSERT_EQ(t.temperatures.size(), 2u);
  EXPECT_EQ(t.temperatures[0], (TemperatureReading{"gpu", 60, {}, {}}));
  EXPECT_EQ(t.temperatures[1], (TemperatureReading{"memory", 48, {}, {}}));
  EXPECT_DOUBLE_EQ(*t.power_watts, 690.26);
  EXPECT_DOUBLE_EQ(*t.power_limit_watts, 700.0);
  EXPECT_DOUBLE_EQ(t.clocks_mhz.at("sm"), 1455);
  EXPECT_FALSE(t.fan_speed_ratio);  // [N/A] on a passively cooled SXM board
  EXPECT_EQ(*t.pcie_generation, 5u);
  EXPECT_EQ(t.ecc_errors.size(), 4u);
  EXPECT_FALSE(t.retired_pages_single_bit);  // [N/A]: Hopper remaps rows instead
  EXPECT_EQ(*t.remapped_rows_correctable, 0u);
  EXPECT_EQ(*t.remapped_rows_pending, false);
  EXPECT_EQ(t.clock_event_reasons.size(), 9u);
  EXPECT_TRUE(t.clock_event_reasons.at("sw_power_cap"));
  EXPECT_FALSE(t.clock_event_reasons.at("gpu_idle"));
}

TEST(NvidiaTelemetry, BadOutputIsAnErrorOrAProblemNeverAGuess) {
  EXPECT_FALSE(parse_nvidia_telemetry(""));
  EXPECT_FALSE(parse_nvidia_telemetry("temperature.gpu\n45\n"));  // no way to name the GPU
  std::vector<std::string> problems;
  const auto rows = parse_nvidia_telemetry(
      "pci.bus_id, utilization.gpu [%], power.draw [W], remapped_rows.pending\n"
      "00000000:18:00.0, 250, banana, Maybe\n"
      "00000000:19:00.0, 50\n"
      "not-a-bus, 10, 1, No\n",
      &problems);
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows->size(), 1u);  // the short row and the row naming no GPU are skipped
  EXPECT_FALSE(rows->front().telemetry.utilization);  // 250 % is out of range
  EXPECT_FALSE(rows->front().telemetry.power_watts);
  EXPECT_FALSE(rows->front().telemetry.remapped_rows_pending);
  EXPECT_GE(problems.size(), 4u);
}

TEST(NvidiaTelemetry, RetriesWithoutFieldsAnOlderDriverRejects) {
  FixtureBuilder f;
  auto argv = nvidia_telemetry_argv();
  f.command(argv, "", 2, "Field \"temperature.memory\" is not a valid field to query.\n");
  // The second query: without temperature.memory.
  std::string list = argv[1];
  list.erase(list.find(",temperature.memory"), std::string(",temperature.memory").size());
  f.command({"nvidia-smi", list, "--format=csv,nounits"}, "pci.bus_id, utilization.gpu [%]\n00000000:18:00.0, 42\n");
  f.file("/proc/loadavg", "0.50 0.40 0.30 1/100 1234\n");
  const auto system = FixtureSystem::open(f.write());
  ASSERT_TRUE(system);
  const auto registry = one_gpu(Backend::cuda, "0000:18:00.0", "cuda:0");
  const auto sample = sample_telemetry(registry, **system);
  ASSERT_EQ(sample.devices.size(), 1u);
  EXPECT_DOUBLE_EQ(*sample.devices[0].utilization, 0.42);
  EXPECT_TRUE(sample.failed_sources.empty());
  EXPECT_DOUBLE_EQ(*sample.host.load1, 0.5);
}

// `nvidia-smi nvlink -e` as published outputs print it: spaces or a tab before
// "Link", blank lines between links, CRC errors split into flit and data on
// older drivers, a header without a UUID on some.
TEST(NvidiaTelemetry, ReadsNvlinkErrorCounters) {
  std::vector<std::string> problems;
  const auto blocks = parse_nvlink_errors(
      "GPU 0: NVIDIA GeForce RTX 3090 (UUID: GPU-aaaa1111-2222-3333-4444-555555555555)\n"
      "         Link 0: Replay Errors: 0\n"
      "         Link 0: CRC Flit Errors: 5\n"
      "\n"
      "         Link 1: CRC Data Errors: 12\n"
      "GPU 1: NVIDIA GB300\n"
      "\t Link 0: Recovery Errors: 2\n"
      "\t Link 0: CRC Errors: banana\n",
      &problems);
  ASSERT_TRUE(blocks) << blocks.error().message;
  ASSERT_EQ(blocks->size(), 2u);
  EXPECT_EQ((*blocks)[0].uuid, "GPU-aaaa1111-2222-3333-4444-555555555555");
  EXPECT_EQ((*blocks)[0].counts, (std::vector<DeviceTelemetry::LinkErrorCount>{
                                     {0, "replay", 0}, {0, "crc_flit", 5}, {1, "crc_data", 12}}));
  EXPECT_EQ((*blocks)[1].gpu_index, 1u);
  EXPECT_TRUE((*blocks)[1].uuid.empty());
  EXPECT_EQ((*blocks)[1].counts, (std::vector<DeviceTelemetry::LinkErrorCount>{{0, "recovery", 2}}));
  ASSERT_EQ(problems.size(), 1u);  // the banana
  EXPECT_TRUE(parse_nvlink_errors(""));  // no NVLink: nothing, not an error
  EXPECT_FALSE(parse_nvlink_errors("NVML: Unknown Error\n"));
}

TEST(NvidiaTelemetry, NvlinkErrorsJoinTheGpusOfAnNvswitchNode) {
  const auto dgx = support::sample_machine("dgx-h100-8x-nvswitch");
  const auto& registry = dgx.registry;
  const auto& sample = dgx.sample;
  EXPECT_TRUE(sample.warnings.empty());
  const DeviceTelemetry& gpu5 = *find(sample, "cuda:5");
  EXPECT_EQ(gpu5.link_errors.size(), 18u * 3u);
  EXPECT_NE(std::find(gpu5.link_errors.begin(), gpu5.link_errors.end(), DeviceTelemetry::LinkErrorCount{7, "crc", 14}),
            gpu5.link_errors.end());
  const std::string text = metrics_text(registry, sample, {});
  // Summed over the links: GPU 5's link 7 is the only one with errors.
  EXPECT_NE(text.find("link_kind=\"nvlink\",type=\"crc\"} 14\n"), std::string::npos);
  EXPECT_NE(text.find("link_kind=\"nvlink\",type=\"replay\"} 3\n"), std::string::npos);
  std::size_t series = 0;
  for (auto at = text.find("\nhwaccel_device_link_errors_total{"); at != std::string::npos;
       at = text.find("\nhwaccel_device_link_errors_total{", at + 1))
    ++series;
  EXPECT_EQ(series, 8u * 3u);  // one per GPU and type, not per link
}

// MIG instances' own memory, from `nvidia-smi -q` (driver 510's layout in the
// fixture), after a query that driver answers only on the third try.
TEST(NvidiaTelemetry, MigInstancesReportTheirOwnMemory) {
  const auto a100 = support::sample_machine("a100-40gb-mig-enabled");
  const auto& registry = a100.registry;
  const auto& sample = a100.sample;
  EXPECT_TRUE(sample.failed_sources.empty());
  ASSERT_EQ(sample.devices.size(), 1u);
  const DeviceTelemetry& t = sample.devices[0];
  EXPECT_FALSE(t.utilization);  // [N/A] in MIG mode
  EXPECT_TRUE(t.clock_event_reasons.at("gpu_idle"));  // asked again as clocks_throttle_reasons
  ASSERT_EQ(t.partitions.size(), 2u);
  EXPECT_EQ(t.partitions[1].partition_id, "cuda:0/mig:1");
  EXPECT_EQ(t.partitions[1].memory_total_bytes, 19968ull << 20);
  EXPECT_EQ(t.partitions[1].memory_used_bytes, 19ull << 20);
  EXPECT_EQ(t.partitions[1].memory_free_bytes, 19948ull << 20);
  const std::string text = metrics_text(registry, sample, {});
  EXPECT_NE(text.find("partition=\"cuda:0/mig:1\",profile=\"3g.20gb\"} 19922944\n"), std::string::npos);
}

// The real `nvidia-smi -q` of an H100 with four MIG instances (driver 590:
// "Shared FB Memory Usage") and the real XML of an A100 (driver 510).
TEST(NvidiaTelemetry, ReadsMigMemoryFromTheRealCaptures) {
  const auto text = support::shared_capture("nvidia/nge-linux-h100-mig-590.48.01/extracted/nvidia-smi-q.txt");
  const auto xml = support::shared_capture("nvidia/netdata-a100-sxm4-40gb-mig-510/nvidia-smi-q-x.xml");
  if (text.empty() || xml.empty()) GTEST_SKIP() << "shared MIG captures not available";
  const auto h100 = parsers::parse_query_text(support::read_file(text));
  ASSERT_TRUE(h100) << h100.error().message;
  ASSERT_EQ(h100->gpus.at(0).mig_devices.size(), 4u);
  EXPECT_EQ(h100->gpus[0].mig_devices[0].memory_used_bytes, 26ull << 20);
  EXPECT_EQ(h100->gpus[0].mig_devices[0].memory_free_bytes, 40423ull << 20);
  const auto a100 = parsers::parse_query_xml(support::read_file(xml));
  ASSERT_TRUE(a100) << a100.error().message;
  ASSERT_FALSE(a100->gpus.at(0).mig_devices.empty());
  EXPECT_EQ(a100->gpus[0].mig_devices[0].memory_used_bytes, 19ull << 20);
  EXPECT_EQ(a100->gpus[0].mig_devices[0].memory_free_bytes, 19948ull << 20);
}

// Where the query was never recorded (or is refused), the `-q -x` report
// gives the core values, with a warning; what it lacks stays absent.
TEST(NvidiaTelemetry, ReportsWhenTheQueryFails) {
  FixtureBuilder f;
  f.command({"nvidia-smi", "-q", "-x"},
            "<?xml version=\"1.0\" ?>\n<nvidia_smi_log><driver_version>510.47.03</driver_version>"
            "<gpu id=\"00000000:18:00.0\"><product_name>Tesla P100-PCIE-16GB</product_name>"
            "<uuid>GPU-ef1b2c9b-38d8-2090-2bd1-f567a3eb42a6</uuid>"
            "<fb_memory_usage><total>16384 MiB</total><used>2 MiB</used><free>16382 MiB</free></fb_memory_usage>"
            "<utilization><gpu_util>7 %</gpu_util></utilization><temperature><gpu_temp>38 C</gpu_temp></temperature>"
            "<power_readings><power_draw>26.16 W</power_draw><power_limit>250.00 W</power_limit></power_readings>"
            "</gpu></nvidia_smi_log>\n");
  const auto system = FixtureSystem::open(f.write());
  ASSERT_TRUE(system);
  const auto registry = one_gpu(Backend::cuda, "0000:18:00.0", "cuda:0");
  const auto sample = sample_telemetry(registry, **system);
  ASSERT_EQ(sample.devices.size(), 1u);
  const auto& t = sample.devices[0];
  EXPECT_EQ(t.source, "nvidia-smi -q -x");
  EXPECT_EQ(t.memory_used_bytes, 2ull << 20);
  EXPECT_EQ(t.memory_total_bytes, 16384ull << 20);
  EXPECT_DOUBLE_EQ(*t.utilization, 0.07);
  ASSERT_EQ(t.temperatures.size(), 1u);
  EXPECT_DOUBLE_EQ(t.temperatures[0].celsius, 38);
  EXPECT_DOUBLE_EQ(*t.power_watts, 26.16);
  EXPECT_DOUBLE_EQ(*t.power_limit_watts, 250);
  EXPECT_TRUE(t.clocks_mhz.empty());
  EXPECT_TRUE(sample.failed_sources.empty());
  EXPECT_TRUE(std::any_of(sample.warnings.begin(), sample.warnings.end(), [](const Warning& w) {
    return w.kind == WarningKind::degraded && w.message.find("telemetry was read from nvidia-smi -q -x instead") != std::string::npos;
  }));
}

// A report that hangs ends the walk: `-q` is not asked after a hung `-q -x`,
// and the source fails with the timeout.
TEST(NvidiaTelemetry, AHungReportIsNotFollowedByTheNext) {
  FixtureBuilder f;
  f.command({"nvidia-smi", "-q", "-x"}, "", 0, {}, /*hang=*/true);
  f.command({"nvidia-smi", "-q"}, "==============NVSMI LOG==============\n\nGPU 00000000:18:00.0\n    Product Name : X\n"
                                  "    FB Memory Usage\n        Total : 100 MiB\n        Used : 1 MiB\n");
  const auto system = FixtureSystem::open(f.write());
  ASSERT_TRUE(system);
  const auto registry = one_gpu(Backend::cuda, "0000:18:00.0", "cuda:0");
  const auto sample = sample_telemetry(registry, **system);
  EXPECT_TRUE(sample.devices.empty());
  EXPECT_EQ(sample.failed_sources, std::vector<std::string>{"cuda"});
  EXPECT_TRUE(std::any_of(sample.warnings.begin(), sample.warnings.end(),
                          [](const Warning& w) { return w.kind == WarningKind::timeout; }));
}

TEST(Telemetry, AFailedSourceIsAWarningAndAScrapeErrorNotAFailure) {
  FixtureBuilder f;
  f.command(nvidia_telemetry_argv(), "", 0, {}, /*hang=*/true);
  const auto system = FixtureSystem::open(f.write());
  ASSERT_TRUE(system);
  const auto registry = one_gpu(Backend::cuda, "0000:18:00.0");
  const auto sample = sample_telemetry(registry, **system);
  EXPECT_TRUE(sample.devices.empty());
  ASSERT_EQ(sample.failed_sources, std::vector<std::string>{"cuda"});
  ASSERT_FALSE(sample.warnings.empty());
  EXPECT_EQ(sample.warnings[0].kind, WarningKind::timeout);
  ExporterCounters counters;
  counters.scrape_errors["cuda"] = 1;
  const std::string text = metrics_text(registry, sample, counters);
  EXPECT_NE(text.find("hwaccel_scrape_errors_total{source=\"cuda\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("hwaccel_device_info{device=\"cuda:0\""), std::string::npos);  // static facts stay
}

TEST(Telemetry, SamplesTheEightGpuNodeAndAmdSysfs) {
  const auto dgx = support::sample_machine("dgx-h100-8x-nvswitch");
  const auto& sample = dgx.sample;
  EXPECT_EQ(sample.devices.size(), 8u);
  EXPECT_TRUE(sample.failed_sources.empty());
  EXPECT_TRUE(find(sample, "cuda:6")->clock_event_reasons.at("sw_power_cap"));

  const auto mi210 = support::sample_machine("amd-2x-mi210-pcie");
  const auto& amd = mi210.sample;
  ASSERT_EQ(amd.devices.size(), 2u);
  const DeviceTelemetry& t = amd.devices[0];
  EXPECT_EQ(t.source, "amdgpu sysfs");
  EXPECT_TRUE(t.power_watts);  // hwmon power1_average
  EXPECT_TRUE(t.memory_total_bytes);
}

// The real Arc B580 (xe driver) of the shared captures: energy counters,
// temperatures by label, fan and power cap from its hwmon.
TEST(Telemetry, ReadsIntelXeHwmon) {
  const auto device_dir = support::shared_capture("intel/lact-b580-sysfs/card1/device");
  if (device_dir.empty()) GTEST_SKIP() << "shared capture intel/lact-b580-sysfs not available";
  FixtureBuilder f;
  f.tree(device_dir, "/sys/bus/pci/devices/0000:09:00.0");
  const auto system = FixtureSystem::open(f.write());
  ASSERT_TRUE(system) << system.error().message;
  const auto registry = one_gpu(Backend::intel_oneapi, "0000:09:00.0");
  const auto sample = sample_telemetry(registry, **system);
  ASSERT_EQ(sample.devices.size(), 1u);
  const DeviceTelemetry& t = sample.devices[0];
  EXPECT_EQ(t.source, "xe/i915 hwmon");
  EXPECT_DOUBLE_EQ(*t.energy_joules, 11031.745544);  // energy1_input, microjoules
  EXPECT_DOUBLE_EQ(*t.power_limit_watts, 190.0);      // power1_cap, microwatts
  // temp2_crit and temp2_emergency: where xe throttles and shuts down.
  EXPECT_NE(std::find(t.temperatures.begin(), t.temperatures.end(), TemperatureReading{"pkg", 54, 100, 125}),
            t.temperatures.end());
  ASSERT_TRUE(thermal_headroom_celsius(t).has_value());
  EXPECT_LE(*thermal_headroom_celsius(t), 46.0);
  EXPECT_DOUBLE_EQ(*t.fan_speed_ratio, 1116.0 / 2160.0);
  EXPECT_DOUBLE_EQ(t.clocks_mhz.at("graphics"), 0);  // idle: tile0/gt0/freq0/act_freq
  EXPECT_FALSE(t.power_watts);  // xe has no instantaneous power file: rate() of the energy counter
}

TEST(Metrics, FollowsTheExpositionFormats) {
  AcceleratorRegistry registry;
  DeviceProfile gpu;
  gpu.backend = Backend::rocm;
  gpu.family = Family::gpu;
  gpu.name = "Odd \"name\" with \\ and\nnewline";
  gpu.memory_bytes = 1024;
  ASSERT_TRUE(registry.add_device(gpu));
  TelemetrySample sample;
  DeviceTelemetry t;
  t.device_id = "rocm:0";
  t.energy_joules = 12.5;
  sample.devices.push_back(t);
  const std::string text = metrics_text(registry, sample, {});
  EXPECT_NE(text.find(R"(model="Odd \"name\" with \\ and\nnewline")"), std::string::npos);
  EXPECT_NE(text.find("# TYPE hwaccel_device_energy_joules_total counter\n"), std::string::npos);
  EXPECT_EQ(text.find("# EOF"), std::string::npos);
  const std::string open = metrics_text(registry, sample, {}, MetricsFormat::openmetrics);
  EXPECT_NE(open.find("# TYPE hwaccel_device_energy_joules counter\n"), std::string::npos);
  EXPECT_NE(open.find("hwaccel_device_energy_joules_total{"), std::string::npos);
  EXPECT_TRUE(open.ends_with("# EOF\n"));
}

TEST(Collector, ConcurrentScrapesShareOneSample) {
  const auto dgx = machine("dgx-h100-8x-nvswitch");
  CollectorOptions options;
  options.sample_max_age = std::chrono::seconds(60);
  TelemetryCollector collector(*dgx, options);
  std::vector<std::thread> threads;
  std::vector<std::shared_ptr<const TelemetrySample>> samples(8);
  for (std::size_t i = 0; i < samples.size(); ++i)
    threads.emplace_back([&, i] { samples[i] = collector.collect().sample; });
  for (auto& t : threads) t.join();
  for (const auto& s : samples) EXPECT_EQ(s, samples[0]);
  EXPECT_EQ(samples[0]->devices.size(), 8u);
  const std::string text = collector.scrape(MetricsFormat::prometheus_text);
  EXPECT_NE(text.find("hwaccel_scrapes_total 1\n"), std::string::npos);
  EXPECT_EQ(collector.counters().scrapes, 1u);
}

}  // namespace

namespace thermal_trend_test {

// A warming H200: the real capture's telemetry row with its temperature
// raised 2 C every 30 s, and the real -q report's thresholds (slowdown at
// 89 C: 42 C + 45 C T.Limit margin + 2 C), sampled as a collector would.
TEST(ThermalTrend, AWarmingGpuWarnsBeforeItThrottles) {
  const auto root = hwaccel::testing::fixtures_root();
  const std::string row_file = hwaccel::testing::read_file(
      root / "machines" / "h200-sxm-telemetry-load-driver-580" / "commands" / "05-nvidia-smi.stdout");
  const std::string report =
      hwaccel::testing::read_file(root / "captures" / "nvidia-h200-firecracker-driver-580" / "nvsmi_q.txt");
  const auto header_end = row_file.find('\n');
  const std::string header = row_file.substr(0, header_end + 1);
  std::vector<std::string> fields;
  for (std::string_view rest = std::string_view(row_file).substr(header_end + 1); !rest.empty();) {
    const auto comma = rest.find(", ");
    fields.emplace_back(rest.substr(0, comma == std::string_view::npos ? rest.find('\n') : comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 2);
  }
  ASSERT_GT(fields.size(), 10u);
  ASSERT_EQ(fields[9], "60");  // temperature.gpu
  const auto registry = one_gpu(Backend::cuda, "0000:00:06.0", "cuda:0");
  TelemetryOptions options;
  options.slow_tools = std::make_shared<SlowToolCache>(std::chrono::hours(1));
  ThermalTrend trend;
  const auto start = std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000));
  std::optional<ThermalWarning> first;
  int warnings = 0;
  double warned_at = 0;
  for (int step = 0; step < 20; ++step) {
    const double celsius = 50 + 2 * step;
    fields[9] = std::to_string(static_cast<int>(celsius));
    std::string row;
    for (std::size_t i = 0; i < fields.size(); ++i) row += (i ? ", " : "") + fields[i];
    FixtureBuilder f;
    f.command(nvidia_telemetry_argv(), header + row + "\n");
    f.command({"nvidia-smi", "-q"}, report);
    const auto system = FixtureSystem::open(f.write());
    ASSERT_TRUE(system) << system.error().message;
    options.clock = [&] { return start + std::chrono::seconds(30 * step); };
    options.slow_tools = std::make_shared<SlowToolCache>(std::chrono::hours(1));
    const auto sample = sample_telemetry(registry, **system, options);
    ASSERT_EQ(sample.devices.size(), 1u);
    ASSERT_TRUE(thermal_headroom_celsius(sample.devices[0]).has_value());
    EXPECT_DOUBLE_EQ(*thermal_headroom_celsius(sample.devices[0]), 89 - celsius);
    for (const auto& w : trend.add(sample)) {
      ++warnings;
      if (!first) {
        first = w;
        warned_at = celsius;
      }
    }
  }
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(warnings, 1);  // once per approach
  EXPECT_EQ(first->device_id, "cuda:0");
  EXPECT_DOUBLE_EQ(first->slowdown_celsius, 89);
  EXPECT_NEAR(first->degrees_per_minute, 4.0, 1e-6);
  // Within five minutes of the threshold at 4 C a minute: at 70 C, 19 C left.
  EXPECT_DOUBLE_EQ(warned_at, 70);
  EXPECT_NEAR(static_cast<double>(first->eta.count()), 19.0 / 4.0 * 60, 1.0);
  EXPECT_LT(warned_at, 89);
  // Still approaching at the last sample (88 C): the exporter's gauge.
  const auto approaching = trend.approaching();
  ASSERT_EQ(approaching.size(), 1u);
  EXPECT_LE(approaching.front().eta.count(), 15);
  ExporterCounters counters;
  counters.thermal_approaching = approaching;
  counters.thermal_warnings = 1;
  TelemetrySample last;
  DeviceTelemetry t;
  t.device_id = "cuda:0";
  t.temperatures.push_back({"gpu", 88, 89, 95});
  last.devices.push_back(t);
  const std::string text = metrics_text(registry, last, counters);
  EXPECT_NE(text.find("hwaccel_device_thermal_slowdown_eta_seconds{device=\"cuda:0\""), std::string::npos) << text;
  EXPECT_NE(text.find("hwaccel_device_thermal_headroom_celsius{device=\"cuda:0\""), std::string::npos);
  EXPECT_NE(text.find("hwaccel_thermal_warnings_total 1"), std::string::npos);
}

// The same through a fixture timeline (fixtures/machines/h200-sxm-warming-
// driver-580): its steps are the states a sampler sees every 30 s.
TEST(ThermalTrend, TheWarmingFixtureTimelineWarnsBeforeItThrottles) {
  auto opened = TimelineSystem::open((hwaccel::testing::fixtures_root() / "machines" / "h200-sxm-warming-driver-580").string());
  ASSERT_TRUE(opened) << opened.error().message;
  const TimelineSystem& timeline = **opened;
  const auto registry = DetectBuilder{}.detect(timeline.state(0));
  ASSERT_EQ(registry.devices().size(), 2u);  // the GPU and the CPU
  ThermalTrend trend;
  const auto start = std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000));
  std::vector<std::pair<std::size_t, ThermalWarning>> warnings;
  for (std::size_t step = 0; step <= timeline.timeline().steps.size(); ++step) {
    TelemetryOptions options;
    options.slow_tools = std::make_shared<SlowToolCache>(std::chrono::hours(1));
    options.clock = [&] { return start + std::chrono::seconds(30 * static_cast<std::int64_t>(step)); };
    const auto sample = sample_telemetry(registry, timeline.state(step), options);
    const auto* gpu = find(sample, "cuda:0");
    ASSERT_NE(gpu, nullptr);
    EXPECT_DOUBLE_EQ(*thermal_headroom_celsius(*gpu), 89.0 - (50.0 + 2.0 * static_cast<double>(step)));
    for (auto& w : trend.add(sample)) warnings.emplace_back(step, std::move(w));
  }
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].first, 10u);  // 70 C, 19 C and about 285 s before the slowdown
  EXPECT_EQ(warnings[0].second.device_id, "cuda:0");
  EXPECT_NEAR(static_cast<double>(warnings[0].second.eta.count()), 285, 1);
}

TEST(ThermalTrend, AFlatOrCoolingDeviceNeverWarns) {
  ThermalTrend trend(std::chrono::minutes(5));
  const auto start = std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000));
  for (int step = 0; step < 10; ++step) {
    TelemetrySample s;
    s.taken_at = start + std::chrono::seconds(10 * step);
    DeviceTelemetry t;
    t.device_id = "rocm:0";
    t.temperatures.push_back({"junction", 80.0 - step * 0.5, 95.0, 105.0});
    s.devices.push_back(t);
    EXPECT_TRUE(trend.add(s).empty());
  }
}

}  // namespace thermal_trend_test
