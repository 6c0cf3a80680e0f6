// Sampling: each backend's reader over the registry's devices, and the
// collector that long-running exporters share.
module;
#include <array>
#include <iterator>
#include <span>
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.telemetry;
import :internals;

namespace hwaccel {
namespace {

void add_problems(TelemetrySample& sample, std::string_view backend, const std::vector<std::string>& problems) {
  for (const auto& p : problems) sample.warnings.push_back(Warning{std::string(backend), WarningKind::parse_error, p});
}

// The memory of each of the GPU's MIG instances, matched by the MIG device index.
void add_mig_instances(const DeviceProfile& d, const parsers::NvidiaGpuTable& table, DeviceTelemetry& t) {
  const auto gpu = std::find_if(table.gpus.begin(), table.gpus.end(), [&](const parsers::NvidiaGpu& g) {
    return (d.pci_bus_id && g.bus_id && g.bus_id->to_string() == *d.pci_bus_id) || (d.uuid && g.uuid && *g.uuid == *d.uuid);
  });
  if (gpu == table.gpus.end()) return;
  for (const DevicePartition& p : d.partitions) {
    const auto m = std::find_if(gpu->mig_devices.begin(), gpu->mig_devices.end(),
                                [&](const parsers::NvidiaMigDevice& x) { return x.index == p.index; });
    if (m == gpu->mig_devices.end() || (!m->memory_used_bytes && !m->memory_bytes)) continue;
    DeviceTelemetry::PartitionTelemetry pt;
    pt.partition_id = p.id;
    pt.memory_total_bytes = m->memory_bytes;
    pt.memory_used_bytes = m->memory_used_bytes;
    pt.memory_free_bytes = m->memory_free_bytes;
    t.partitions.push_back(std::move(pt));
  }
}

// The report's slowdown and shutdown temperatures on the GPU's own reading.
void add_thermal_thresholds(const DeviceProfile& d, const parsers::NvidiaGpuTable& table, DeviceTelemetry& t) {
  const auto gpu = std::find_if(table.gpus.begin(), table.gpus.end(), [&](const parsers::NvidiaGpu& g) {
    return (d.pci_bus_id && g.bus_id && g.bus_id->to_string() == *d.pci_bus_id) || (d.uuid && g.uuid && *g.uuid == *d.uuid);
  });
  if (gpu == table.gpus.end()) return;
  for (TemperatureReading& r : t.temperatures)
    if (r.sensor == "gpu") {
      r.slowdown_celsius = gpu->slowdown_temperature_c;
      r.shutdown_celsius = gpu->shutdown_temperature_c;
    }
}

void sample_nvidia(const AcceleratorRegistry& registry, const System& system, const TelemetryOptions& options,
                   std::vector<std::pair<std::size_t, DeviceTelemetry>>& found, TelemetrySample& sample) {
  const auto devices = registry.devices();
  std::vector<std::size_t> gpus;
  for (std::size_t i = 0; i < devices.size(); ++i)
    if (devices[i].backend == Backend::cuda) gpus.push_back(i);
  if (gpus.empty()) return;
  auto run = telemetry_detail::run_nvidia_query(system, options.tool_timeout);
  add_problems(sample, "cuda", run.problems);
  // A MIG instance's own memory is only in the reports (`-q`, `-q -x`).
  std::optional<parsers::NvidiaGpuTable> mig;
  std::string mig_view = "nvidia-smi -q";
  if (run.failure && run.failure->kind == ErrorKind::timeout) {
    // A hung nvidia-smi would hang again for the reports, at each scrape.
    sample.warnings.push_back(Warning{"cuda", warning_kind_for(run.failure->kind), run.failure->message});
    sample.failed_sources.emplace_back("cuda");
    return;
  }
  if (run.failure) {
    // Where the query is refused or was never recorded (most agents keep
    // `-q -x`), the reports still carry the core values.
    auto report = telemetry_detail::run_nvidia_report(system, options);
    if (!report) {
      sample.warnings.push_back(Warning{"cuda", warning_kind_for(run.failure->kind), run.failure->message});
      sample.warnings.push_back(Warning{"cuda", warning_kind_for(report.error().kind), report.error().message});
      sample.failed_sources.emplace_back("cuda");
      return;
    }
    sample.warnings.push_back(Warning{"cuda", WarningKind::degraded,
                                      text::cat(run.failure->message, "; telemetry was read from ", report->view,
                                                " instead (no clocks, ECC counters or clock-event reasons)")});
    for (const auto& p : report->table.problems)
      sample.warnings.push_back(Warning{"cuda", p.kind, text::cat(report->view, ": ", p.message)});
    run.rows = telemetry_detail::telemetry_rows(report->table, report->view);
    mig = std::move(report->table);
    mig_view = report->view;
  }
  // NVLink error counters, only where the inventory has NVLink links (PCIe-only GPUs print nothing).
  std::vector<NvlinkErrorBlock> nvlink;
  const auto links = registry.links();
  if (std::any_of(links.begin(), links.end(), [](const DeviceLink& l) { return l.kind == LinkKind::nvlink; })) {
    std::vector<std::string> problems;
    auto blocks = telemetry_detail::run_nvlink_errors(system, options.tool_timeout, problems);
    add_problems(sample, "cuda", problems);
    // The query already gave the GPUs' values: a failing nvlink -e is a warning, not a failed source.
    if (blocks) nvlink = std::move(*blocks);
    else sample.warnings.push_back(Warning{"cuda", warning_kind_for(blocks.error().kind), blocks.error().message});
  }
  // `nvidia-smi -q` is slow: read when a GPU has MIG instances (and no report
  // was read already), and kept between scrapes like tpu-info.
  if (!mig && std::any_of(gpus.begin(), gpus.end(), [&](std::size_t i) { return !devices[i].partitions.empty(); })) {
    auto table = telemetry_detail::run_mig_query(system, options);
    if (table) {
      for (const auto& p : table->problems)
        sample.warnings.push_back(Warning{"cuda", p.kind, text::cat("nvidia-smi -q: ", p.message)});
      mig = std::move(*table);
    } else {
      sample.warnings.push_back(Warning{"cuda", warning_kind_for(table.error().kind), table.error().message});
    }
  }
  // The thermal thresholds are only in the reports, and stay while the
  // driver runs: the -q already read, else the slow-tool cache's (without a
  // cache, -q would run at every sample: no thresholds then).
  std::optional<parsers::NvidiaGpuTable> kept_report;
  const parsers::NvidiaGpuTable* thresholds = mig ? &*mig : nullptr;
  if (!thresholds && options.slow_tools) {
    auto table = telemetry_detail::run_mig_query(system, options);
    if (table) {
      kept_report = std::move(*table);
      thresholds = &*kept_report;
    } else if (table.error().kind != ErrorKind::not_captured) {
      sample.warnings.push_back(Warning{"cuda", WarningKind::degraded,
                                        text::cat("thermal thresholds unknown: ", table.error().message)});
    }
  }
  if (options.processes) {
    // The compute-apps query is fresh at every sample; the `-q` read for MIG
    // instances may be the slow-tool cache's, so it only names the instance
    // each listed process runs in. Where the query failed, the report read
    // in its place (fresh) lists them.
    std::vector<std::string> problems;
    auto processes = run.failure ? Result<std::vector<DeviceProcess>>(fail(ErrorKind::not_captured, "no query"))
                                 : telemetry_detail::run_nvidia_compute_apps(registry, system, options.tool_timeout, problems);
    add_problems(sample, "cuda", problems);
    if (processes) {
      if (mig) {
        const auto attributed = telemetry_detail::nvidia_processes(registry, *mig, mig_view);
        for (DeviceProcess& p : *processes)
          for (const DeviceProcess& a : attributed)
            if (a.device_id == p.device_id && a.driver_pid == p.driver_pid && !a.partition_id.empty()) {
              p.partition_id = a.partition_id;
              p.kind = a.kind;
            }
      }
      std::move(processes->begin(), processes->end(), std::back_inserter(sample.processes));
    } else if (mig) {
      auto listed = telemetry_detail::nvidia_processes(registry, *mig, mig_view);
      std::move(listed.begin(), listed.end(), std::back_inserter(sample.processes));
    } else {
      sample.warnings.push_back(Warning{"cuda", warning_kind_for(processes.error().kind), processes.error().message});
    }
  }
  for (const std::size_t i : gpus) {
    const DeviceProfile& d = devices[i];
    const auto row = std::find_if(run.rows.begin(), run.rows.end(), [&](const NvidiaTelemetryRow& r) {
      return (d.pci_bus_id && !r.pci_bus_id.empty() && *d.pci_bus_id == r.pci_bus_id) ||
             (d.uuid && !r.uuid.empty() && *d.uuid == r.uuid);
    });
    if (row == run.rows.end()) {
      sample.warnings.push_back(Warning{"cuda", WarningKind::inconsistent,
                                        text::cat("nvidia-smi telemetry has no row for ", d.id,
                                                  d.pci_bus_id ? text::cat(" (", *d.pci_bus_id, ")") : std::string())});
      continue;
    }
    DeviceTelemetry t = row->telemetry;
    t.device_id = d.id;
    // By UUID; a header without one (some drivers) by nvidia-smi's index.
    const auto block = std::find_if(nvlink.begin(), nvlink.end(), [&](const NvlinkErrorBlock& b) {
      return b.uuid.empty() ? b.gpu_index == d.index : (d.uuid && b.uuid == *d.uuid);
    });
    if (block != nvlink.end()) t.link_errors = block->counts;
    if (mig && !d.partitions.empty()) add_mig_instances(d, *mig, t);
    if (thresholds) add_thermal_thresholds(d, *thresholds, t);
    found.emplace_back(i, std::move(t));
  }
}

}  // namespace

std::optional<double> thermal_headroom_celsius(const DeviceTelemetry& t) noexcept {
  std::optional<double> least;
  for (const TemperatureReading& r : t.temperatures)
    if (r.slowdown_celsius) least = std::min(least.value_or(*r.slowdown_celsius - r.celsius), *r.slowdown_celsius - r.celsius);
  return least;
}

namespace {

std::vector<std::size_t> positions_of(const AcceleratorRegistry& registry, Backend backend) {
  std::vector<std::size_t> positions;
  const auto devices = registry.devices();
  for (std::size_t i = 0; i < devices.size(); ++i)
    if (devices[i].backend == backend) positions.push_back(i);
  return positions;
}

void take(telemetry_detail::ToolSourceRun run, std::string_view backend,
          std::vector<std::pair<std::size_t, DeviceTelemetry>>& found, TelemetrySample& sample) {
  add_problems(sample, backend, run.problems);
  for (auto& w : run.warnings) sample.warnings.push_back(std::move(w));
  if (run.failed) sample.failed_sources.emplace_back(backend);
  for (auto& f : run.found) found.push_back(std::move(f));
}

bool has_values(const DeviceTelemetry& t) {
  return t.utilization || t.memory_used_bytes || t.memory_total_bytes || !t.temperatures.empty() || t.power_watts ||
         t.energy_joules || !t.clocks_mhz.empty();
}

// amdgpu's sysfs; rocm-smi for the GPUs where it gave nothing (sysfs hidden
// from a container, or a driver that does not fill it).
void sample_amd(const AcceleratorRegistry& registry, const System& system, const TelemetryOptions& options,
                std::vector<std::pair<std::size_t, DeviceTelemetry>>& found, TelemetrySample& sample) {
  const auto devices = registry.devices();
  std::vector<std::string> problems;
  std::vector<std::size_t> without_sysfs;
  for (const std::size_t i : positions_of(registry, Backend::rocm)) {
    const DeviceProfile& d = devices[i];
    if (!d.pci_bus_id) continue;
    DeviceTelemetry t = telemetry_detail::read_amd(d, system, problems);
    if (has_values(t)) found.emplace_back(i, std::move(t));
    else without_sysfs.push_back(i);
  }
  add_problems(sample, "rocm", problems);
  if (!without_sysfs.empty() && system.find_tool("rocm-smi"))
    take(telemetry_detail::read_rocm_smi(registry, without_sysfs, system, options), "rocm", found, sample);
}

// Intel: the xe/i915 hwmon, and xpu-smi's table (when installed) for the busy
// ratio, memory in use and instantaneous power that the hwmon does not have.
void sample_intel(const AcceleratorRegistry& registry, const System& system, const TelemetryOptions& options,
                  std::vector<std::pair<std::size_t, DeviceTelemetry>>& found, TelemetrySample& sample) {
  const auto devices = registry.devices();
  std::vector<std::string> problems;
  std::vector<std::pair<std::size_t, DeviceTelemetry>> read;
  std::vector<std::size_t> positions;
  for (const std::size_t i : positions_of(registry, Backend::intel_oneapi)) {
    const DeviceProfile& d = devices[i];
    if (!d.pci_bus_id) continue;
    positions.push_back(i);
    read.emplace_back(i, telemetry_detail::read_intel(d, system, problems));
  }
  add_problems(sample, "intel_oneapi", problems);
  if (!positions.empty() && system.find_tool("xpu-smi")) {
    auto run = telemetry_detail::read_xpu_smi(registry, positions, system, options);
    for (auto& [i, tool] : run.found) {
      auto& hwmon = std::find_if(read.begin(), read.end(), [&](const auto& r) { return r.first == i; })->second;
      const bool had_hwmon = has_values(hwmon);
      // The driver's own files win where both have a value.
      if (!hwmon.utilization) hwmon.utilization = tool.utilization;
      if (!hwmon.memory_total_bytes) hwmon.memory_total_bytes = tool.memory_total_bytes;
      if (!hwmon.memory_used_bytes) hwmon.memory_used_bytes = tool.memory_used_bytes;
      if (!hwmon.memory_free_bytes) hwmon.memory_free_bytes = tool.memory_free_bytes;
      if (!hwmon.power_watts) hwmon.power_watts = tool.power_watts;
      if (!hwmon.power_limit_watts) hwmon.power_limit_watts = tool.power_limit_watts;
      for (auto& reading : tool.temperatures) hwmon.temperatures.push_back(std::move(reading));
      hwmon.source = had_hwmon ? text::cat(hwmon.source, " + xpu-smi") : std::string("xpu-smi");
    }
    run.found.clear();
    take(std::move(run), "intel_oneapi", found, sample);
  }
  // An integrated GPU has no hwmon of its own: with nothing from xpu-smi either, no empty entry.
  for (auto& [i, t] : read)
    if (has_values(t) || t.power_limit_watts) found.emplace_back(i, std::move(t));
}

void sample_neuron(const AcceleratorRegistry& registry, const System& system, const TelemetryOptions&,
                   std::vector<std::pair<std::size_t, DeviceTelemetry>>& found, TelemetrySample& sample) {
  const auto devices = registry.devices();
  std::vector<std::string> problems;
  for (const std::size_t i : positions_of(registry, Backend::aws_neuron)) {
    DeviceTelemetry t = telemetry_detail::read_neuron(devices[i], system, problems);
    if (t.memory_used_bytes || !t.ecc_errors.empty() || t.power_utilization) found.emplace_back(i, std::move(t));
  }
  add_problems(sample, "aws_neuron", problems);
}

void sample_gaudi(const AcceleratorRegistry& registry, const System& system, const TelemetryOptions& options,
                  std::vector<std::pair<std::size_t, DeviceTelemetry>>& found, TelemetrySample& sample) {
  if (const auto gaudi = positions_of(registry, Backend::gaudi); !gaudi.empty())
    take(telemetry_detail::read_gaudi(registry, gaudi, system, options), "gaudi", found, sample);
}

void sample_tpu(const AcceleratorRegistry& registry, const System& system, const TelemetryOptions& options,
                std::vector<std::pair<std::size_t, DeviceTelemetry>>& found, TelemetrySample& sample) {
  if (const auto tpus = positions_of(registry, Backend::tpu); !tpus.empty())
    take(telemetry_detail::read_tpu(registry, tpus, system, options), "tpu", found, sample);
}

// The telemetry source of each backend that has one (what its detector's row
// names in BackendFacts::telemetry), in the order their warnings come.
struct Source {
  Backend backend;
  void (*sample)(const AcceleratorRegistry&, const System&, const TelemetryOptions&,
                 std::vector<std::pair<std::size_t, DeviceTelemetry>>&, TelemetrySample&);
};
constexpr Source sources[] = {
    {Backend::cuda, &sample_nvidia},        {Backend::rocm, &sample_amd}, {Backend::intel_oneapi, &sample_intel},
    {Backend::aws_neuron, &sample_neuron}, {Backend::gaudi, &sample_gaudi}, {Backend::tpu, &sample_tpu},
};
constexpr std::array<Backend, std::size(sources)> source_backends = [] {
  std::array<Backend, std::size(sources)> out{};
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = sources[i].backend;
  return out;
}();

}  // namespace

std::span<const Backend> telemetry_backends() noexcept { return source_backends; }

TelemetrySample sample_telemetry(const AcceleratorRegistry& registry, const System& system,
                                 const TelemetryOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  TelemetrySample sample;
  sample.taken_at = options.clock ? options.clock() : std::chrono::system_clock::now();
  std::vector<std::pair<std::size_t, DeviceTelemetry>> found;
  for (const Source& source : sources) source.sample(registry, system, options, found, sample);
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [index, telemetry] : found) sample.devices.push_back(std::move(telemetry));
  sample.host = telemetry_detail::read_host(system);
  if (options.processes) {
    auto drm = telemetry_detail::drm_processes(registry, system, sample.warnings);
    std::move(drm.begin(), drm.end(), std::back_inserter(sample.processes));
    telemetry_detail::describe_processes(sample.processes, system, sample.warnings);
    telemetry_detail::order_processes(registry, sample.processes);
  }
  sample.elapsed = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start);
  return sample;
}

// --- the collector ---------------------------------------------------------------

struct TelemetryCollector::State {
  const System& system;
  CollectorOptions options;
  CachedRegistry inventory;

  mutable std::mutex mutex;
  std::condition_variable sampled;
  std::shared_ptr<const TelemetrySample> latest;
  std::chrono::steady_clock::time_point latest_at{};
  bool sampling = false;
  std::uint64_t generation = 0;
  ExporterCounters counters;
  ThermalTrend thermal;

  State(const System& s, CollectorOptions o)
      : system(s), options(std::move(o)), inventory(cache_options(s, options)), thermal(options.thermal_horizon) {
    counters.baseline_accelerators = options.baseline_accelerators;
    // tpu-info and rocm-smi -a take seconds: scrapes share what they last printed.
    if (!options.telemetry.slow_tools) options.telemetry.slow_tools = std::make_shared<SlowToolCache>();
  }

  static CacheOptions cache_options(const System& system, const CollectorOptions& options) {
    CacheOptions c;
    c.ttl = options.inventory_ttl;
    DetectBuilder builder;
    const DetectOptions& o = options.detect;
    builder.only(o.backends).system_probes(o.system_probes).tool_timeout(o.tool_timeout).tool_output_cap(o.tool_output_cap);
    if (o.sink) builder.diagnostics(*o.sink, o.log_level);
    c.detect = [&system, builder] { return builder.detect(system); };
    return c;
  }
};

TelemetryCollector::TelemetryCollector(const System& system, CollectorOptions options)
    : state_(std::make_unique<State>(system, std::move(options))) {}

TelemetryCollector::~TelemetryCollector() = default;

CachedRegistry& TelemetryCollector::inventory_cache() noexcept { return state_->inventory; }

std::shared_ptr<const AcceleratorRegistry> TelemetryCollector::registry() { return state_->inventory.get(); }

TelemetryCollector::Snapshot TelemetryCollector::collect() {
  State& s = *state_;
  auto registry = s.inventory.get();
  std::unique_lock lock(s.mutex);
  const auto fresh = [&] {
    return s.latest && std::chrono::steady_clock::now() - s.latest_at <= s.options.sample_max_age;
  };
  if (fresh()) return {registry, s.latest};
  if (s.sampling) {
    // Single flight: wait for the sample being taken and share it.
    const auto generation = s.generation;
    s.sampled.wait(lock, [&] { return s.generation != generation; });
    return {registry, s.latest};
  }
  s.sampling = true;
  lock.unlock();
  std::shared_ptr<const TelemetrySample> sample;
  try {
    sample = std::make_shared<const TelemetrySample>(sample_telemetry(*registry, s.system, s.options.telemetry));
  } catch (...) {
    // sample_telemetry does not throw, but an allocation can: never leave waiters hanging.
    lock.lock();
    s.sampling = false;
    ++s.generation;
    s.sampled.notify_all();
    throw;
  }
  lock.lock();
  s.latest = sample;
  s.latest_at = std::chrono::steady_clock::now();
  s.sampling = false;
  ++s.generation;
  std::vector<ThermalWarning> warnings;
  if (s.options.thermal_horizon.count() > 0) {
    warnings = s.thermal.add(*sample);
    s.counters.thermal_warnings += warnings.size();
    s.counters.thermal_approaching = s.thermal.approaching();
  }
  s.sampled.notify_all();
  lock.unlock();
  if (s.options.on_thermal_warning)
    for (const auto& w : warnings) s.options.on_thermal_warning(w);
  return {registry, sample};
}

std::string TelemetryCollector::scrape(MetricsFormat format) {
  const Snapshot snapshot = collect();
  ExporterCounters counters;
  {
    const std::lock_guard lock(state_->mutex);
    ++state_->counters.scrapes;
    for (const auto& source : snapshot.sample->failed_sources) ++state_->counters.scrape_errors[source];
    counters = state_->counters;
  }
  return metrics_text(*snapshot.registry, *snapshot.sample, counters, format);
}

void TelemetryCollector::count_health_event(ExporterCounters::HealthKey key) {
  const std::lock_guard lock(state_->mutex);
  // Bounded: a flood of distinct reports keeps the first 4096 series.
  auto& events = state_->counters.health_events;
  if (events.size() < 4096 || events.contains(key)) ++events[std::move(key)];
}

ExporterCounters TelemetryCollector::counters() const {
  const std::lock_guard lock(state_->mutex);
  return state_->counters;
}

}  // namespace hwaccel
