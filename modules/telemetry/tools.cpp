// Telemetry from tools beside the main nvidia-smi query: nvidia-smi's NVLink
// counters and `-q` (for MIG instances), hl-smi for Gaudi, tpu-info for TPUs
// (slow: kept between samples), xpu-smi for what Intel's hwmon lacks, and
// rocm-smi where amdgpu's sysfs gave nothing. Each reuses the detector's
// parser of the same output.
module;
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>
module hwaccel.telemetry;
import :internals;

namespace hwaccel {

Result<ToolResult> SlowToolCache::run(const System& system, const ToolRequest& request) {
  {
    const std::lock_guard lock(mutex_);
    if (const auto it = kept_.find(request.argv);
        it != kept_.end() && std::chrono::steady_clock::now() - it->second.at <= max_age_)
      return it->second.result;
  }
  // Run unlocked: the collector's single flight already keeps samples from
  // overlapping, and a hung tool must not block readers of other commands.
  auto result = system.run(request);
  const std::lock_guard lock(mutex_);
  kept_.insert_or_assign(request.argv, Kept{std::chrono::steady_clock::now(), result});
  return result;
}

namespace telemetry_detail {
namespace {

constexpr std::size_t tool_output_cap = std::size_t{4} << 20;

// hl-smi's query fields for telemetry (Intel Gaudi docs, System Management
// Interface Tool: "Possible queries").
constexpr std::string_view gaudi_telemetry_fields =
    "index,bus_id,uuid,memory.total,memory.used,memory.free,temperature.aip,power.draw,utilization.aip,"
    "ecc.errors.corrected.volatile.total,ecc.errors.uncorrected.volatile.total,"
    "ecc.errors.corrected.aggregate.total,ecc.errors.uncorrected.aggregate.total";

std::chrono::milliseconds time_left(std::chrono::steady_clock::time_point deadline) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
}

// A tool's run as an error when it did not succeed (the message is built only then).
Result<ToolResult> succeeded(Result<ToolResult> result, const std::vector<std::string>& argv) {
  if (!result || result->succeeded()) return result;
  return fail(ErrorKind::tool_failed, text::cat("`", text::excerpt(join_argv(argv), 60), "` ", describe_exit(*result)));
}

// One run of a tool for a sample, through `kept` when given (slow tools).
Result<ToolResult> run_tool(const System& system, std::vector<std::string> argv, std::chrono::milliseconds timeout,
                            SlowToolCache* kept = nullptr) {
  ToolRequest request;
  request.argv = std::move(argv);
  request.timeout = timeout;
  request.max_output_bytes = tool_output_cap;
  return succeeded(kept ? kept->run(system, request) : system.run(request), request.argv);
}

std::chrono::milliseconds slow_timeout(const TelemetryOptions& options) {
  return std::max(options.tool_timeout, options.slow_tool_timeout);
}

void fail_source(ToolSourceRun& run, std::string_view backend, const Error& error) {
  run.failed = true;
  run.warnings.push_back(Warning{std::string(backend), warning_kind_for(error.kind), error.message});
}

// Runs a tool and parses what it printed; a failure of either fails the source.
template <class Parse>
auto run_and_parse(ToolSourceRun& run, std::string_view backend, const System& system, std::vector<std::string> argv,
                   std::chrono::milliseconds timeout, SlowToolCache* kept, Parse parse)
    -> std::optional<typename std::invoke_result_t<Parse, std::string_view>::value_type> {
  auto result = run_tool(system, std::move(argv), timeout, kept);
  if (!result) {
    fail_source(run, backend, result.error());
    return std::nullopt;
  }
  auto parsed = parse(std::string_view(result->out));
  if (!parsed) {
    fail_source(run, backend, parsed.error());
    return std::nullopt;
  }
  return std::move(*parsed);
}

std::optional<std::string> canonical_bus_id(std::string_view text) {
  if (const auto pci = PciAddress::parse(text::trim(text))) return pci->to_string();
  return std::nullopt;
}

// --- Gaudi -------------------------------------------------------------------------

DeviceTelemetry gaudi_telemetry(const parsers::HlSmiDevice& row, std::string_view source) {
  DeviceTelemetry t;
  t.source = std::string(source);
  if (row.utilization_percent && *row.utilization_percent >= 0 && *row.utilization_percent <= 100)
    t.utilization = *row.utilization_percent / 100;
  t.memory_total_bytes = row.memory_total_bytes;
  t.memory_used_bytes = row.memory_used_bytes;
  t.memory_free_bytes = row.memory_free_bytes;
  if (!t.memory_free_bytes && t.memory_total_bytes && t.memory_used_bytes && *t.memory_used_bytes <= *t.memory_total_bytes)
    t.memory_free_bytes = *t.memory_total_bytes - *t.memory_used_bytes;
  if (row.temperature_c) t.temperatures.push_back({"aip", *row.temperature_c, {}, {}});
  t.power_watts = row.power_watts;
  t.power_limit_watts = row.power_limit_watts;
  for (const auto& [type, scope, count] :
       {std::tuple{"corrected", "volatile", row.ecc_corrected_volatile},
        std::tuple{"uncorrected", "volatile", row.ecc_uncorrected_volatile},
        std::tuple{"corrected", "aggregate", row.ecc_corrected_aggregate},
        std::tuple{"uncorrected", "aggregate", row.ecc_uncorrected_aggregate}})
    if (count) t.ecc_errors.push_back({type, scope, "total", *count});
  return t;
}

// --- AMD through rocm-smi ------------------------------------------------------------

// "39.0", "(1200Mhz)", "0 (8.0GT/s x16)": the number (and its unit) of a rocm-smi value.
std::optional<text::NumberWithUnit> rocm_number(std::optional<std::string_view> value) {
  if (!value) return std::nullopt;
  std::string_view v = text::trim(*value);
  if (const auto open = v.find('('); open != std::string_view::npos) {
    const auto close = v.find(')', open);
    v = v.substr(open + 1, close == std::string_view::npos ? std::string_view::npos : close - open - 1);
  }
  return text::parse_number_with_unit(text::trim(v));
}

std::optional<double> rocm_quantity(const parsers::RocmSmiGpu& gpu, std::string_view key, double lo, double hi,
                                    std::string_view unit, std::vector<std::string>& problems) {
  const auto raw = gpu.get(key);
  if (!raw) return std::nullopt;
  const auto n = rocm_number(raw);
  if (!n || !(n->value >= lo && n->value <= hi) || (!unit.empty() && !n->unit.empty() && !text::iequals(n->unit, unit))) {
    if (problems.size() < 16)
      problems.push_back(text::cat("rocm-smi card", gpu.index, ": ", key, " '", text::excerpt(*raw, 40),
                                   "' is not a value in ", lo, "..", hi, unit.empty() ? "" : " ", unit));
    return std::nullopt;
  }
  return n->value;
}

DeviceTelemetry rocm_smi_telemetry(const parsers::RocmSmiGpu& gpu, std::vector<std::string>& problems) {
  DeviceTelemetry t;
  t.source = "rocm-smi";
  if (const auto busy = rocm_quantity(gpu, "GPU use (%)", 0, 100, "", problems)) t.utilization = *busy / 100;
  constexpr double max_bytes = static_cast<double>(std::uint64_t{1} << 46);
  if (const auto total = rocm_quantity(gpu, "VRAM Total Memory (B)", 0, max_bytes, "", problems))
    t.memory_total_bytes = static_cast<std::uint64_t>(*total);
  if (const auto used = rocm_quantity(gpu, "VRAM Total Used Memory (B)", 0, max_bytes, "", problems))
    t.memory_used_bytes = static_cast<std::uint64_t>(*used);
  if (t.memory_total_bytes && t.memory_used_bytes && *t.memory_used_bytes <= *t.memory_total_bytes)
    t.memory_free_bytes = *t.memory_total_bytes - *t.memory_used_bytes;
  // The sensor names amdgpu's hwmon labels use, so both sources give one series.
  for (const auto& [key, sensor] : {std::pair{"Temperature (Sensor edge) (C)", "edge"},
                                    std::pair{"Temperature (Sensor junction) (C)", "junction"},
                                    std::pair{"Temperature (Sensor memory) (C)", "mem"}})
    if (const auto c = rocm_quantity(gpu, key, -50, 200, "", problems)) t.temperatures.push_back({sensor, *c, {}, {}});
  // MI300 and later report the socket's power ("Current Socket Graphics Package Power").
  for (const std::string_view key : {"Average Graphics Package Power (W)", "Current Socket Graphics Package Power (W)"})
    if (!t.power_watts) t.power_watts = rocm_quantity(gpu, key, 0, 100'000, "", problems);
  t.power_limit_watts = rocm_quantity(gpu, "Max Graphics Package Power (W)", 0, 100'000, "", problems);
  for (const auto& [key, clock] : {std::pair{"sclk clock speed:", "graphics"}, std::pair{"mclk clock speed:", "memory"},
                                   std::pair{"fclk clock speed:", "fabric"}, std::pair{"socclk clock speed:", "soc"}})
    if (const auto mhz = rocm_quantity(gpu, key, 0, 100'000, "Mhz", problems)) t.clocks_mhz[clock] = *mhz;
  if (const auto fan = rocm_quantity(gpu, "Fan speed (%)", 0, 100, "", problems)) t.fan_speed_ratio = *fan / 100;
  // "0 (8.0GT/s x16)": the current PCIe level, its rate and width.
  if (const auto level = gpu.get("pcie clock level")) {
    const auto open = level->find('(');
    const auto inside = open == std::string_view::npos ? std::vector<std::string_view>() : text::words(level->substr(open + 1));
    const std::string_view rate_text = inside.empty() ? std::string_view() : inside.front();
    if (const auto rate = text::parse_number_with_unit(rate_text); rate && text::iequals(rate->unit, "GT/s"))
      t.pcie_generation = pcie_generation(rate->value);
    if (const auto x = level->rfind('x'); x != std::string_view::npos) {
      std::string_view width = level->substr(x + 1);
      if (const auto close = width.find(')'); close != std::string_view::npos) width = width.substr(0, close);
      if (const auto n = text::parse_u64(text::trim(width)); n && *n > 0 && *n <= 64) t.pcie_width = static_cast<std::uint32_t>(*n);
    }
  }
  return t;
}

}  // namespace

namespace {

// Reading an eight-GPU report costs milliseconds, and the slow-tool cache
// hands back the same text for its max age at every sample (`top`, the
// exporter): its table is kept with it. An explicit cache of one report per
// process, keyed by the text itself.
Result<parsers::NvidiaGpuTable> parse_report_once(const std::string& text) {
  static std::mutex mutex;
  static std::string parsed_text;
  static std::optional<parsers::NvidiaGpuTable> parsed_table;
  {
    const std::lock_guard lock(mutex);
    if (parsed_table && parsed_text == text) return *parsed_table;
  }
  auto table = parsers::parse_query_text(text);
  if (table) {
    const std::lock_guard lock(mutex);
    parsed_text = text;
    parsed_table = *table;
  }
  return table;
}

}  // namespace

Result<parsers::NvidiaGpuTable> run_mig_query(const System& system, const TelemetryOptions& options) {
  auto result = run_tool(system, {"nvidia-smi", "-q"}, slow_timeout(options), options.slow_tools.get());
  if (!result) return fail(result.error());
  return parse_report_once(result->out);
}

Result<NvidiaReport> run_nvidia_report(const System& system, const TelemetryOptions& options) {
  using Parse = Result<parsers::NvidiaGpuTable> (*)(std::string_view);
  const std::array<std::pair<std::vector<std::string>, Parse>, 2> views = {{
      {{"nvidia-smi", "-q", "-x"}, &parsers::parse_query_xml},
      {{"nvidia-smi", "-q"}, &parsers::parse_query_text},
  }};
  std::string failures;
  ErrorKind kind = ErrorKind::not_captured;  // stays so only when no view was recorded
  for (const auto& [argv, parse] : views) {
    // Not through the slow-tool cache: these are the sample's values, and a
    // cached copy would be exported as current.
    auto result = run_tool(system, argv, slow_timeout(options));
    auto table = result ? parse(result->out) : Result<parsers::NvidiaGpuTable>(fail(result.error()));
    if (table) return NvidiaReport{join_argv(argv), std::move(*table)};
    failures += text::cat(failures.empty() ? "" : "; ", table.error().message);
    if (table.error().kind == ErrorKind::timeout) {
      kind = ErrorKind::timeout;  // the next view would hang as long
      break;
    }
    if (table.error().kind != ErrorKind::not_captured) kind = ErrorKind::tool_failed;
  }
  return fail(kind, text::cat("nvidia-smi reports: ", failures));
}

Result<std::vector<NvlinkErrorBlock>> run_nvlink_errors(const System& system, std::chrono::milliseconds timeout,
                                                        std::vector<std::string>& problems) {
  auto result = run_tool(system, {"nvidia-smi", "nvlink", "-e"}, timeout);
  if (!result) {
    if (result.error().kind == ErrorKind::not_captured) return std::vector<NvlinkErrorBlock>{};
    return fail(result.error());
  }
  return parse_nvlink_errors(result->out, &problems);
}

ToolSourceRun read_gaudi(const AcceleratorRegistry& registry, const std::vector<std::size_t>& positions,
                         const System& system, const TelemetryOptions& options) {
  ToolSourceRun run;
  struct View {
    std::vector<std::string> argv;
    bool table;
  };
  // The telemetry query; the detector's (an older hl-smi rejects the ECC
  // fields, and it is what fixtures record); the default table every version prints.
  const std::array<View, 3> views = {{
      {{"hl-smi", text::cat("--query-aip=", gaudi_telemetry_fields), "--format=csv,nounits"}, false},
      {{"hl-smi", text::cat("--query-aip=", parsers::hl_smi_query_fields), "--format=csv,nounits"}, false},
      {{"hl-smi"}, true},
  }};
  const auto deadline = std::chrono::steady_clock::now() + options.tool_timeout;
  std::optional<parsers::HlSmiReport> report;
  std::string_view source;
  Error last{ErrorKind::tool_failed, "hl-smi telemetry: no view answered"};
  for (const View& view : views) {
    const auto left = time_left(deadline);
    if (left.count() <= 0) {
      last = Error{ErrorKind::timeout, "hl-smi telemetry: no time left for another view"};
      break;
    }
    auto result = run_tool(system, view.argv, left);
    if (!result) {
      last = result.error();
      // A hung or missing tool does not get better by asking it another way.
      if (last.kind == ErrorKind::timeout || last.kind == ErrorKind::tool_not_found) break;
      continue;
    }
    auto parsed = view.table ? parsers::parse_hl_smi_table(result->out) : parsers::parse_hl_smi_csv(result->out);
    if (!parsed) {
      last = parsed.error();
      continue;
    }
    report = std::move(*parsed);
    source = view.table ? "hl-smi" : "hl-smi --query-aip";
    break;
  }
  if (!report) {
    fail_source(run, "gaudi", last);
    return run;
  }
  run.problems = std::move(report->problems);
  const auto devices = registry.devices();
  for (const std::size_t i : positions) {
    const DeviceProfile& d = devices[i];
    const auto row = std::find_if(report->devices.begin(), report->devices.end(), [&](const parsers::HlSmiDevice& r) {
      return (d.pci_bus_id && r.bus_id && r.bus_id->to_string() == *d.pci_bus_id) || (d.uuid && r.uuid && *r.uuid == *d.uuid);
    });
    if (row == report->devices.end()) {
      run.warnings.push_back(Warning{"gaudi", WarningKind::inconsistent,
                                     text::cat("hl-smi telemetry has no row for ", d.id,
                                               d.pci_bus_id ? text::cat(" (", *d.pci_bus_id, ")") : std::string())});
      continue;
    }
    DeviceTelemetry t = gaudi_telemetry(*row, source);
    t.device_id = d.id;
    run.found.emplace_back(i, std::move(t));
  }
  return run;
}

ToolSourceRun read_tpu(const AcceleratorRegistry& registry, const std::vector<std::size_t>& positions,
                       const System& system, const TelemetryOptions& options) {
  ToolSourceRun run;
  auto result = run_tool(system, {"tpu-info"}, slow_timeout(options), options.slow_tools.get());
  if (!result) {
    fail_source(run, "tpu", result.error());
    return run;
  }
  const parsers::TpuInfoReport report = parsers::parse_tpu_info(result->out);
  // No framework holds the TPU: libtpu serves no metrics, and there is nothing to report.
  if (report.metrics_unavailable) return run;
  if (report.usage.empty()) {
    run.problems.push_back(report.chips.empty() ? std::string("tpu-info printed neither its chip nor its usage table")
                                                : std::string("tpu-info printed no usage table"));
    return run;
  }
  const auto devices = registry.devices();
  for (const auto& usage : report.usage) {
    // tpu-info names chip k's device node after k (/dev/vfio/k, /dev/accelk);
    // where a chip shows two runtime devices (v2, v3) a row is half a chip and is left out.
    const std::string vfio = text::cat("/dev/vfio/", usage.device), accel = text::cat("/dev/accel", usage.device);
    const auto position = std::find_if(positions.begin(), positions.end(), [&](std::size_t i) {
      const auto& p = devices[i].properties;
      const auto node = p.find("device_node");
      const auto per_chip = p.find("runtime_devices_per_chip");
      return node != p.end() && (node->second == vfio || node->second == accel) &&
             (per_chip == p.end() || per_chip->second == "1");
    });
    if (position == positions.end()) continue;
    DeviceTelemetry t;
    t.device_id = devices[*position].id;
    t.source = "tpu-info";
    if (usage.duty_cycle_percent && *usage.duty_cycle_percent >= 0 && *usage.duty_cycle_percent <= 100)
      t.utilization = *usage.duty_cycle_percent / 100;
    t.memory_total_bytes = usage.total_bytes;
    t.memory_used_bytes = usage.used_bytes;
    if (t.memory_total_bytes && t.memory_used_bytes && *t.memory_used_bytes <= *t.memory_total_bytes)
      t.memory_free_bytes = *t.memory_total_bytes - *t.memory_used_bytes;
    run.found.emplace_back(*position, std::move(t));
  }
  return run;
}

ToolSourceRun read_xpu_smi(const AcceleratorRegistry& registry, const std::vector<std::size_t>& positions,
                           const System& system, const TelemetryOptions& options) {
  ToolSourceRun run;
  const auto table = run_and_parse(run, "intel_oneapi", system, {"xpu-smi"}, options.tool_timeout, nullptr,
                                   [](std::string_view out) { return parsers::parse_xpu_smi_table(out); });
  if (!table) return run;
  const auto devices = registry.devices();
  for (const std::size_t i : positions) {
    const DeviceProfile& d = devices[i];
    const auto row = std::find_if(table->begin(), table->end(), [&](const parsers::XpuSmiDevice& x) {
      const auto bdf = x.get("PCI BDF Address");
      return bdf && d.pci_bus_id && canonical_bus_id(*bdf) == *d.pci_bus_id;
    });
    if (row == table->end()) continue;  // xpu-smi leaves out what Level Zero cannot open
    DeviceTelemetry t;
    t.device_id = d.id;
    t.source = "xpu-smi";
    const auto number = [&](std::string_view key, std::string_view unit, double lo, double hi) -> std::optional<double> {
      const auto v = row->get(key);
      if (!v) return std::nullopt;
      const auto n = text::parse_number_with_unit(*v);
      if (n && text::iequals(n->unit, unit) && n->value >= lo && n->value <= hi) return n->value;
      if (run.problems.size() < 16)
        run.problems.push_back(text::cat("xpu-smi device ", row->device_id, ": ", key, " '", text::excerpt(*v, 30),
                                         "' is not ", lo, "..", hi, " ", unit));
      return std::nullopt;
    };
    if (const auto busy = number("GPU Utilization", "%", 0, 100)) t.utilization = *busy / 100;
    constexpr double max_mib = 64.0 * 1024 * 1024;
    if (const auto used = number("GPU Memory Used", "MiB", 0, max_mib)) t.memory_used_bytes = static_cast<std::uint64_t>(*used) << 20;
    if (const auto total = number("Memory Physical Size", "MiB", 0, max_mib)) t.memory_total_bytes = static_cast<std::uint64_t>(*total) << 20;
    if (t.memory_total_bytes && t.memory_used_bytes && *t.memory_used_bytes <= *t.memory_total_bytes)
      t.memory_free_bytes = *t.memory_total_bytes - *t.memory_used_bytes;
    if (const auto c = number("GPU Temperature", "C", -50, 200)) t.temperatures.push_back({"gpu", *c, {}, {}});
    t.power_watts = number("GPU Power", "W", 0, 100'000);
    t.power_limit_watts = number("GPU Power Cap", "W", 0, 100'000);
    run.found.emplace_back(i, std::move(t));
  }
  return run;
}

ToolSourceRun read_rocm_smi(const AcceleratorRegistry& registry, const std::vector<std::size_t>& positions,
                            const System& system, const TelemetryOptions& options) {
  ToolSourceRun run;
  // What the detector runs, so captures replay it.
  const auto report = run_and_parse(run, "rocm", system, {"rocm-smi", "-a", "--json"}, slow_timeout(options),
                                    options.slow_tools.get(),
                                    [](std::string_view out) { return parsers::parse_rocm_smi_json(out); });
  if (!report) return run;
  const auto devices = registry.devices();
  for (const std::size_t i : positions) {
    const DeviceProfile& d = devices[i];
    const auto gpu = std::find_if(report->gpus.begin(), report->gpus.end(), [&](const parsers::RocmSmiGpu& g) {
      const auto bus = g.get("PCI Bus");
      return bus && d.pci_bus_id && canonical_bus_id(*bus) == *d.pci_bus_id;
    });
    if (gpu == report->gpus.end()) {
      run.warnings.push_back(Warning{"rocm", WarningKind::inconsistent,
                                     text::cat("rocm-smi lists no card at ", d.pci_bus_id.value_or(d.id))});
      continue;
    }
    DeviceTelemetry t = rocm_smi_telemetry(*gpu, run.problems);
    t.device_id = d.id;
    run.found.emplace_back(i, std::move(t));
  }
  return run;
}

}  // namespace telemetry_detail
}  // namespace hwaccel
