// Fuzz targets for the parsers of vendor tool output: nvidia-smi (query CSV,
// -q, -L, topo -m, nvlink -s) and the driver's /proc files, vulkaninfo,
// tpu-info, qaic-util, system_profiler, the device-tree compatible string,
// hl-smi, neuron-ls, xpu-smi and gc-info.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.hpp"

import hwaccel;
import hwaccel.detectors;

namespace hwaccel::fuzz {

namespace {

void check_bus_id(const std::optional<PciAddress>& address, Findings& findings) {
  if (!address) return;
  const auto again = PciAddress::parse(address->to_string());
  findings.check(again && *again == *address, "a parsed PCI address does not read back from its canonical form");
}

void check_gpu(const parsers::NvidiaGpu& gpu, Findings& findings) {
  check_bus_id(gpu.bus_id, findings);
  for (const auto* v : {&gpu.power_draw_watts, &gpu.power_limit_watts, &gpu.temperature_c, &gpu.utilization_percent,
                        &gpu.max_memory_clock_mhz})
    if (*v) findings.check(std::isfinite(**v), "nvidia-smi: a parsed number is not finite");
}

}  // namespace

void nvidia_telemetry(std::string_view, std::string_view input, Findings& findings) {
  std::vector<std::string> problems;
  const auto rows = parse_nvidia_telemetry(input, &problems);
  findings.check(problems.size() <= 8, "telemetry: problems are not bounded");
  if (!rows) return;
  for (const auto& row : *rows) {
    const DeviceTelemetry& t = row.telemetry;
    findings.check(!row.pci_bus_id.empty() || !row.uuid.empty(), "telemetry: a row that names no GPU was kept");
    if (t.utilization) findings.check(*t.utilization >= 0 && *t.utilization <= 1, "telemetry: utilization outside 0..1");
    if (t.fan_speed_ratio) findings.check(*t.fan_speed_ratio >= 0 && *t.fan_speed_ratio <= 1, "telemetry: fan outside 0..1");
    for (const auto& [engine, r] : t.engine_utilization) findings.check(r >= 0 && r <= 1, "telemetry: engine outside 0..1");
    if (t.power_watts) findings.check(std::isfinite(*t.power_watts), "telemetry: power not finite");
  }
}

void nvidia_query_csv(std::string_view, std::string_view input, Findings& findings) {
  if (const auto csv = parsers::parse_nvidia_smi_csv(input)) {
    findings.check(!csv->columns.empty(), "CSV: a table without columns was accepted");
    findings.check(csv->units.size() == csv->columns.size(), "CSV: one unit per column");
    findings.check(csv->cells.size() == csv->row_count() * csv->columns.size(), "CSV: a row has the wrong width");
    for (std::size_t i = 0; i < csv->columns.size(); ++i) {
      const auto found = csv->column(csv->columns[i]);
      findings.check(found && *found <= i, "CSV: column() does not find a column by its own name");
    }
  }
  if (const auto table = parsers::parse_query_gpu(input))
    for (const auto& gpu : table->gpus) check_gpu(gpu, findings);
  if (const auto field = parsers::rejected_query_field(input))
    findings.check(!field->empty() && field->size() <= 100, "rejected field name out of bounds");
}

void nvidia_query_text(std::string_view, std::string_view input, Findings& findings) {
  const auto table = parsers::parse_query_text(input);
  if (!table) return;
  findings.check(!table->gpus.empty(), "-q: success without a GPU section");
  for (const auto& gpu : table->gpus) check_gpu(gpu, findings);
}

void nvidia_query_xml(std::string_view, std::string_view input, Findings& findings) {
  const auto table = parsers::parse_query_xml(input);
  if (!table) return;
  for (const auto& gpu : table->gpus) {
    check_gpu(gpu, findings);
    findings.check(!gpu.name.empty() || gpu.uuid || gpu.bus_id, "-q -x: a GPU with no name, UUID or bus id was kept");
  }
  for (const auto& gpu : table->gpus) (void)parsers::cuda_capability_of_name(gpu.name);
}

void nvidia_default_table(std::string_view, std::string_view input, Findings& findings) {
  const auto table = parsers::parse_default_table(input);
  if (!table) return;
  findings.check(!table->gpus.empty(), "table: success without a GPU row");
  for (const auto& gpu : table->gpus) {
    check_gpu(gpu, findings);
    findings.check(gpu.index.has_value(), "table: a GPU row without its index was kept");
    findings.check(!gpu.memory_free_bytes, "table: a free memory the table does not print");
  }
}

void nvidia_gpu_list(std::string_view, std::string_view input, Findings& findings) {
  for (const auto& gpu : parsers::parse_gpu_list(input))
    for (const auto& mig : gpu.mig_devices)
      if (mig.memory_bytes) findings.check(*mig.memory_bytes > 0, "-L: a MIG device with zero memory");
}

void nvidia_topology(std::string_view, std::string_view input, Findings& findings) {
  const auto topology = parsers::parse_topology_matrix(input);
  if (!topology) return;
  findings.check(!topology->columns.empty(), "topo -m: success without columns");
  for (const auto& row : topology->rows) {
    findings.check(row.cells.size() == topology->columns.size(), "topo -m: a row has the wrong width");
    for (const auto& cell : row.cells)
      if (cell && cell->nvlinks) findings.check(*cell->nvlinks > 0, "topo -m: NV0");
  }
}

void nvidia_nvlink(std::string_view, std::string_view input, Findings& findings) {
  for (const auto& gpu : parsers::parse_nvlink_status(input)) {
    findings.check(std::isfinite(gpu.total_gbps) && gpu.total_gbps >= 0, "nvlink -s: total bandwidth not finite");
    findings.check(gpu.link_gbps.has_value() == (gpu.active_links > 0), "nvlink -s: link speed without an active link");
    if (gpu.link_gbps) findings.check(gpu.total_gbps + 0.001 >= *gpu.link_gbps, "nvlink -s: total below one link");
  }
}

void nvidia_proc_files(std::string_view, std::string_view input, Findings& findings) {
  const auto info = parsers::parse_proc_gpu_information(input);
  check_bus_id(info.bus_location, findings);
  (void)parsers::parse_proc_driver_version(input);
  (void)parsers::cuda_architecture(input);
  if (const auto bytes = parsers::mig_profile_memory_bytes(input)) findings.check(*bytes > 0, "MIG profile of 0 bytes");
  if (const auto value = parsers::nvidia_smi_value(input))
    findings.check(value->size() <= input.size(), "nvidia_smi_value grew its input");
}

void vulkaninfo(std::string_view param, std::string_view input, Findings& findings) {
  const auto info = param == "summary" ? parsers::parse_vulkaninfo_summary(input) : parsers::parse_vulkaninfo(input);
  if (!info.has_devices) findings.check(info.devices.empty(), "vulkaninfo: devices outside a device section");
  for (const auto& device : info.devices) {
    check_bus_id(device.pci_address, findings);
    (void)parsers::is_software_renderer(device);
  }
}

void nvlink_errors(std::string_view, std::string_view input, Findings& findings) {
  std::vector<std::string> problems;
  const auto blocks = parse_nvlink_errors(input, &problems);
  findings.check(problems.size() <= 8, "nvlink -e: problems are not bounded");
  if (!blocks) return;
  for (const auto& b : *blocks)
    for (const auto& c : b.counts)
      findings.check(!c.type.empty() && c.type.find(' ') == std::string::npos, "nvlink -e: an empty or spaced type");
}

void nvidia_compute_apps(std::string_view, std::string_view input, Findings& findings) {
  std::vector<std::string> problems;
  const auto apps = parse_nvidia_compute_apps(input, &problems);
  findings.check(problems.size() <= 9, "compute-apps: problems are not bounded");
  if (!apps) return;
  for (const auto& app : *apps) {
    findings.check(app.pid != 0, "compute-apps: a row without a process id");
    findings.check(!app.pci_bus_id.empty() || !app.uuid.empty(), "compute-apps: a row naming no GPU");
    if (!app.pci_bus_id.empty()) findings.check(PciAddress::parse(app.pci_bus_id).has_value(), "compute-apps: a bus id that does not parse back");
  }
}

void drm_fdinfo(std::string_view, std::string_view input, Findings& findings) {
  std::vector<std::string> problems;
  const auto client = parse_drm_fdinfo(input, &problems);
  findings.check(problems.size() <= 9, "fdinfo: problems are not bounded");
  if (!client) return;
  findings.check(!client->driver.empty(), "fdinfo: a client without a driver");
  if (!client->pdev.empty()) findings.check(PciAddress::parse(client->pdev).has_value(), "fdinfo: a pdev that does not parse back");
  for (const auto& [engine, counter] : client->engines) {
    findings.check(!engine.empty() && engine.size() <= 32, "fdinfo: an empty or long engine name");
    findings.check(counter.capacity >= 1, "fdinfo: an engine of no capacity");
  }
  (void)device_memory_of(*client);
}

void proc_status(std::string_view, std::string_view input, Findings& findings) {
  const auto status = parse_proc_status(input);
  if (!status) return;
  findings.check(status->namespace_pids.size() <= 32, "status: NSpid is not bounded");
  findings.check(status->name.size() <= 80, "status: the name is not bounded");
}

void telemetry_json(std::string_view, std::string_view input, Findings& findings) {
  const auto sample = telemetry_from_json(input);
  if (!sample) return;
  // What is read back writes the same JSON again.
  const auto again = telemetry_from_json(to_json(*sample));
  findings.check(again.has_value(), "telemetry JSON: a sample's own JSON does not read back");
  if (!again) return;
  findings.check(again->devices == sample->devices, "telemetry JSON: devices change on a round trip");
  findings.check(again->processes == sample->processes, "telemetry JSON: processes change on a round trip");
}

void tpu_info(std::string_view, std::string_view input, Findings& findings) {
  const auto report = parsers::parse_tpu_info(input);
  for (const auto& usage : report.usage) {
    if (usage.duty_cycle_percent) findings.check(std::isfinite(*usage.duty_cycle_percent), "tpu-info: duty cycle not finite");
  }
  if (report.accelerator_type) (void)parsers::tpu_version_of_accelerator_type(*report.accelerator_type);
  (void)parsers::tpu_version_of_accelerator_type(input);
}

void qaic_util(std::string_view, std::string_view input, Findings& findings) {
  const auto report = parsers::parse_qaic_util(input);
  for (const auto& device : report.devices) {
    check_bus_id(device.pci_address, findings);
    if (device.dram_total_bytes && device.dram_free_bytes) (void)(device.qid);
  }
}

void system_profiler(std::string_view, std::string_view input, Findings& findings) {
  if (const auto hardware = parsers::parse_sp_hardware(input)) {
    if (hardware->chip_type) (void)parsers::apple_chip_by_name(*hardware->chip_type);
  }
  if (const auto gpus = parsers::parse_sp_displays(input)) {
    for (const auto& gpu : *gpus) {
      findings.check(!gpu.name.empty(), "system_profiler: a GPU without a name");
      if (gpu.cores) findings.check(*gpu.cores > 0 && *gpu.cores < 100'000, "system_profiler: core count out of range");
    }
  }
}

void devicetree_compatible(std::string_view, std::string_view input, Findings& findings) {
  const auto dt = parsers::parse_devicetree_compatible(input);
  if (!dt.apple) findings.check(dt.soc.empty() && dt.board.empty(), "device tree: Apple fields without an Apple platform");
  if (!dt.soc.empty()) {
    findings.check(dt.soc.size() == 5 && dt.soc[0] == 't', "device tree: SoC code is not tNNNN");
    (void)parsers::apple_chip_by_soc(dt.soc);
  }
  findings.check(dt.board.size() <= input.size(), "device tree: board longer than the input");
}

namespace {

void check_finite(const std::optional<double>& v, Findings& findings, std::string_view what) {
  if (v) findings.check(std::isfinite(*v), what);
}

}  // namespace

void hl_smi(std::string_view param, std::string_view input, Findings& findings) {
  const auto report = param == "table" ? parsers::parse_hl_smi_table(input) : parsers::parse_hl_smi_csv(input);
  if (!report) {
    findings.check(!report.error().message.empty(), "hl-smi: an error without a message");
    return;
  }
  for (const auto& d : report->devices) {
    check_finite(d.temperature_c, findings, "hl-smi: temperature not finite");
    check_finite(d.power_watts, findings, "hl-smi: power not finite");
    if (d.bus_id) findings.check(PciAddress::parse(d.bus_id->to_string()) == d.bus_id, "hl-smi: bus id round trip");
  }
  (void)parsers::gaudi_model_from_name(input);
}

void neuron_ls(std::string_view param, std::string_view input, Findings& findings) {
  const auto report = param == "table" ? parsers::parse_neuron_ls_table(input) : parsers::parse_neuron_ls_json(input);
  if (!report) {
    findings.check(!report.error().message.empty(), "neuron-ls: an error without a message");
    return;
  }
  for (const auto& d : report->devices) {
    if (d.bus_id) findings.check(PciAddress::parse(d.bus_id->to_string()) == d.bus_id, "neuron-ls: bus id round trip");
  }
  (void)parsers::neuron_chip_from_instance_type(input);
  (void)parsers::neuron_chip_from_name(input);
}

void xpu_smi(std::string_view, std::string_view input, Findings& findings) {
  if (const auto devices = parsers::parse_xpu_smi_discovery(input))
    for (const auto& d : *devices) findings.check(d.fields.size() <= input.size(), "xpu-smi: more fields than bytes");
  (void)parsers::is_placeholder_gpu_name(input);
  if (const auto devices = parsers::parse_xpu_smi_table(input)) {
    findings.check(!devices->empty(), "xpu-smi table: success without a device row");
    static constexpr std::array<std::string_view, 8> shown = {
        "Device Name",     "PCI BDF Address", "Memory Physical Size", "GPU Memory Used",
        "GPU Utilization", "GPU Temperature", "GPU Power",            "GPU Power Cap"};
    for (const auto& d : *devices)
      for (const auto& [key, value] : d.fields)
        findings.check(std::find(shown.begin(), shown.end(), key) != shown.end() && !value.empty(),
                       "xpu-smi table: a key the table does not show, or an empty value");
  }
}

void rocm_smi(std::string_view param, std::string_view input, Findings& findings) {
  const auto report = param == "json" ? parsers::parse_rocm_smi_json(input) : parsers::parse_rocm_smi_text(input);
  if (!report) return;
  findings.check(!report->gpus.empty(), "rocm-smi: success without a GPU");
  for (std::size_t i = 1; i < report->gpus.size(); ++i)
    findings.check(report->gpus[i - 1].index < report->gpus[i].index, "rocm-smi: GPUs out of order or repeated");
  for (const auto& g : report->gpus)
    for (const auto& [key, value] : g.fields) findings.check(!key.empty() && !value.empty(), "rocm-smi: an empty key or value");
}

void rocminfo(std::string_view, std::string_view input, Findings& findings) {
  const auto agents = parsers::parse_rocminfo(input);
  if (!agents) return;
  for (const auto& a : *agents)
    if (a.memory_bytes) findings.check(*a.memory_bytes % 1024 == 0, "rocminfo: a pool size that is not whole KB");
}

void capture_transcript(std::string_view, std::string_view input, Findings& findings) {
  const auto capture = parse_capture_transcript(input, "transcript");
  if (!capture) return;
  findings.check(!capture->commands.empty() || !capture->contents.empty(), "transcript: success with nothing to replay");
  std::size_t output = 0;
  for (const auto& c : capture->commands) {
    findings.check(!c.argv.empty() && !c.argv[0].empty(), "transcript: a command without a tool name");
    findings.check(c.argv[0].find('/') == std::string::npos, "transcript: a tool name with a folder");
    output += c.out.size();
  }
  for (const auto& [path, content] : capture->contents) {
    findings.check(path.starts_with("/") && path.find("/../") == std::string::npos && !path.ends_with("/.."),
                   "transcript: a file outside the machine's root");
    output += content.size();
  }
  findings.check(output <= input.size(), "transcript: more output than input");
}

// A paste (the web page's and the npm package's input): recognised or
// refused, and what is detected in it writes JSON that reads back.
void pasted_devices(std::string_view, std::string_view input, Findings& findings) {
  const auto registry = registry_from_paste(input);
  if (!registry) {
    findings.check(!registry.error().message.empty(), "paste: an error without a message");
    return;
  }
  findings.check(registry_from_json(to_json(*registry)).has_value(), "paste: the detected registry's JSON does not read back");
}

void gc_info(std::string_view param, std::string_view input, Findings& findings) {
  if (param == "device") {
    (void)parsers::parse_gc_info_device(input);
    return;
  }
  if (const auto list = parsers::parse_gc_info_list(input))
    for (const auto& entry : *list) findings.check(entry.fields.size() <= input.size(), "gc-info -l: fields from nowhere");
  (void)parsers::ipu_architecture(input);
}

}  // namespace hwaccel::fuzz
