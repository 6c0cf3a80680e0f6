// Telemetry read from files: amdgpu's sysfs and hwmon (no tool runs, so a
// scrape cannot hang on it) and the host's /proc/loadavg and /proc/meminfo.
module;
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
module hwaccel.telemetry;
import :internals;

namespace hwaccel::telemetry_detail {
namespace {

constexpr std::size_t small_file = 4096;

class FileReader {
 public:
  FileReader(const System& system, std::string dir, std::vector<std::string>& problems)
      : system_(system), dir_(std::move(dir)), problems_(problems) {}

  /// The file's trimmed text, or nullopt when it does not exist (or cannot be read: noted).
  std::optional<std::string> text(std::string_view name) const {
    const std::string path = text::cat(dir_, "/", name);
    auto content = system_.read_file(path, small_file);
    if (!content) {
      if (content.error().kind != ErrorKind::not_found && content.error().kind != ErrorKind::not_captured)
        note(text::cat(path, ": ", content.error().message));
      return std::nullopt;
    }
    return std::string(text::trim(content->data));
  }

  std::optional<std::uint64_t> integer(std::string_view name, std::uint64_t max) const {
    const auto t = text(name);
    if (!t) return std::nullopt;
    const auto n = text::parse_u64(*t);
    if (!n || *n > max) {
      note(text::cat(dir_, "/", name, ": '", text::excerpt(*t, 40), "' is not a number up to ", max));
      return std::nullopt;
    }
    return n;
  }

  std::optional<std::int64_t> signed_integer(std::string_view name, std::int64_t lo, std::int64_t hi) const {
    const auto t = text(name);
    if (!t) return std::nullopt;
    const auto n = text::parse_i64(*t);
    if (!n || *n < lo || *n > hi) {
      note(text::cat(dir_, "/", name, ": '", text::excerpt(*t, 40), "' is not a number in ", lo, "..", hi));
      return std::nullopt;
    }
    return n;
  }

  const std::string& dir() const noexcept { return dir_; }
  void note(std::string message) const {
    if (problems_.size() < 16) problems_.push_back(std::move(message));
  }

 private:
  const System& system_;
  std::string dir_;
  std::vector<std::string>& problems_;
};

// "1: 1000Mhz *" lines of pp_dpm_sclk/mclk: the current level is marked.
std::optional<double> current_dpm_mhz(std::string_view table) {
  while (!table.empty()) {
    const std::string_view line = text::trim(text::next_line(table));
    if (!line.ends_with('*')) continue;
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    const auto n = text::parse_number_with_unit(text::trim(line.substr(colon + 1, line.size() - colon - 2)));
    if (!n || !text::iequals(n->unit, "Mhz") || n->value < 0 || n->value > 100'000) return std::nullopt;
    return n->value;
  }
  return std::nullopt;
}

void read_hwmon(const FileReader& hwmon, DeviceTelemetry& t) {
  // amdgpu numbers its sensors 1-3; Intel's xe 2-15 (pkg, vram, each memory channel).
  for (int i = 1; i <= 16; ++i) {
    const auto millidegrees = hwmon.signed_integer(text::cat("temp", i, "_input"), -50'000, 200'000);
    if (!millidegrees) continue;
    auto label = hwmon.text(text::cat("temp", i, "_label"));
    const auto degrees = [&](std::string_view suffix) -> std::optional<double> {
      const auto v = hwmon.signed_integer(text::cat("temp", i, suffix), -50'000, 250'000);
      return v ? std::optional<double>(static_cast<double>(*v) / 1000.0) : std::nullopt;
    };
    t.temperatures.push_back({label && !label->empty() ? *label : text::cat("temp", i),
                              static_cast<double>(*millidegrees) / 1000.0, degrees("_crit"), degrees("_emergency")});
  }
  // Microwatts: power1_average on most amdgpu boards, power1_input on newer ones.
  constexpr std::uint64_t max_microwatts = 100'000ull * 1'000'000ull;
  auto power = hwmon.integer("power1_average", max_microwatts);
  if (!power) power = hwmon.integer("power1_input", max_microwatts);
  if (power) t.power_watts = static_cast<double>(*power) / 1e6;
  if (const auto cap = hwmon.integer("power1_cap", max_microwatts)) t.power_limit_watts = static_cast<double>(*cap) / 1e6;
  if (const auto energy = hwmon.integer("energy1_input", ~std::uint64_t{0} / 2)) t.energy_joules = static_cast<double>(*energy) / 1e6;
  for (int i = 1; i <= 4; ++i) {
    const auto hz = hwmon.integer(text::cat("freq", i, "_input"), 100'000'000'000ull);
    if (!hz) continue;
    const auto label = hwmon.text(text::cat("freq", i, "_label"));
    std::string name = label ? *label : text::cat("freq", i);
    if (name == "sclk") name = "graphics";
    else if (name == "mclk") name = "memory";
    t.clocks_mhz[name] = static_cast<double>(*hz) / 1e6;
  }
  const auto rpm = hwmon.integer("fan1_input", 100'000);
  const auto max_rpm = hwmon.integer("fan1_max", 100'000);
  if (rpm && max_rpm && *max_rpm > 0) t.fan_speed_ratio = std::min(1.0, static_cast<double>(*rpm) / static_cast<double>(*max_rpm));
}

// The PCI function's current link ("16.0 GT/s PCIe", "16").
void read_pcie_link(const FileReader& dev, DeviceTelemetry& t) {
  if (const auto speed = dev.text("current_link_speed")) {
    if (const auto n = text::parse_number_with_unit(*speed)) t.pcie_generation = pcie_generation(n->value);
  }
  if (const auto width = dev.integer("current_link_width", 64); width && *width > 0)
    t.pcie_width = static_cast<std::uint32_t>(*width);
}

// ras/<block>_err_count: "ue: N\nce: M".
void read_ras(const System& system, const FileReader& device, DeviceTelemetry& t) {
  const std::string dir = device.dir() + "/ras";
  auto entries = system.list_dir(dir);
  if (!entries) return;
  for (const auto& e : *entries) {
    if (!e.name.ends_with("_err_count") || e.name.size() > 64) continue;
    const std::string block = e.name.substr(0, e.name.size() - 10);
    const auto content = device.text(text::cat("ras/", e.name));
    if (!content) continue;
    std::string_view rest = *content;
    while (!rest.empty()) {
      const std::string_view line = text::trim(text::next_line(rest));
      const auto colon = line.find(':');
      if (colon == std::string_view::npos) continue;
      const std::string_view key = text::trim(line.substr(0, colon));
      const auto n = text::parse_u64(text::trim(line.substr(colon + 1)));
      if (!n || (key != "ue" && key != "ce")) {
        device.note(text::cat(dir, "/", e.name, ": '", text::excerpt(line, 40), "' is not 'ue: N' or 'ce: N'"));
        continue;
      }
      t.ecc_errors.push_back({key == "ue" ? "uncorrected" : "corrected", "volatile", block, *n});
    }
  }
}

}  // namespace

DeviceTelemetry read_amd(const DeviceProfile& device, const System& system, std::vector<std::string>& problems) {
  DeviceTelemetry t;
  t.device_id = device.id;
  t.source = "amdgpu sysfs";
  const FileReader dev(system, text::cat("/sys/bus/pci/devices/", *device.pci_bus_id), problems);
  if (const auto busy = dev.integer("gpu_busy_percent", 100)) t.utilization = static_cast<double>(*busy) / 100;
  if (const auto busy = dev.integer("mem_busy_percent", 100)) t.engine_utilization["memory"] = static_cast<double>(*busy) / 100;
  constexpr std::uint64_t max_bytes = std::uint64_t{1} << 46;
  t.memory_total_bytes = dev.integer("mem_info_vram_total", max_bytes);
  t.memory_used_bytes = dev.integer("mem_info_vram_used", max_bytes);
  if (t.memory_total_bytes && t.memory_used_bytes && *t.memory_used_bytes <= *t.memory_total_bytes)
    t.memory_free_bytes = *t.memory_total_bytes - *t.memory_used_bytes;
  read_pcie_link(dev, t);

  if (auto hwmons = system.list_dir(dev.dir() + "/hwmon"); hwmons && !hwmons->empty()) {
    const FileReader hwmon(system, text::cat(dev.dir(), "/hwmon/", hwmons->front().name), problems);
    read_hwmon(hwmon, t);
  }
  for (const auto& [file, name] : {std::pair{"pp_dpm_sclk", "graphics"}, std::pair{"pp_dpm_mclk", "memory"},
                                   std::pair{"pp_dpm_fclk", "fabric"}, std::pair{"pp_dpm_socclk", "soc"}}) {
    if (t.clocks_mhz.contains(name)) continue;
    if (const auto table = dev.text(file))
      if (const auto mhz = current_dpm_mhz(*table)) t.clocks_mhz[name] = *mhz;
  }
  read_ras(system, dev, t);
  return t;
}

// Intel xe/i915: their hwmon (energy counters, temperatures by label, fan,
// power cap; no instantaneous power: Prometheus' rate() of the energy
// counter gives it) and xe's actual GT frequency.
DeviceTelemetry read_intel(const DeviceProfile& device, const System& system, std::vector<std::string>& problems) {
  DeviceTelemetry t;
  t.device_id = device.id;
  t.source = "xe/i915 hwmon";
  const FileReader dev(system, text::cat("/sys/bus/pci/devices/", *device.pci_bus_id), problems);
  if (auto hwmons = system.list_dir(dev.dir() + "/hwmon"); hwmons) {
    for (const auto& h : *hwmons) {
      const FileReader hwmon(system, text::cat(dev.dir(), "/hwmon/", h.name), problems);
      const auto name = hwmon.text("name");
      if (!name || (*name != "xe" && *name != "i915")) continue;
      read_hwmon(hwmon, t);
      break;
    }
  }
  if (const auto mhz = dev.integer("tile0/gt0/freq0/act_freq", 100'000)) t.clocks_mhz["graphics"] = static_cast<double>(*mhz);
  read_pcie_link(dev, t);
  return t;
}

// The Neuron driver's sysfs (Neuron sysfs user guide): a counter is a folder
// whose `total` holds the value (for memory, what is in use now); a memory
// counter may instead be a folder of categories, each such a counter.
DeviceTelemetry read_neuron(const DeviceProfile& device, const System& system, std::vector<std::string>& problems) {
  DeviceTelemetry t;
  t.device_id = device.id;
  t.source = "neuron sysfs";
  const FileReader dev(system, text::cat("/sys/devices/virtual/neuron_device/neuron", device.index), problems);
  constexpr std::uint64_t max_bytes = std::uint64_t{1} << 46;
  const auto memory_counter = [&](const std::string& path) -> std::optional<std::uint64_t> {
    if (const auto total = dev.integer(path + "/total", max_bytes)) return total;
    const auto categories = system.list_dir(text::cat(dev.dir(), "/", path));
    if (!categories) return std::nullopt;
    std::optional<std::uint64_t> sum;
    for (const auto& c : *categories)
      if (c.type == FileType::directory)
        if (const auto n = dev.integer(text::cat(path, "/", c.name, "/total"), max_bytes))
          sum = std::min(sum.value_or(0) + *n, max_bytes + 1);  // each term is at most max_bytes: no wrap
    return sum;
  };
  if (const auto entries = system.list_dir(dev.dir())) {
    std::optional<std::uint64_t> in_use;
    for (const auto& e : *entries) {
      if (!e.name.starts_with("neuron_core") || e.name.size() > 24) continue;
      if (const auto n = memory_counter(text::cat(e.name, "/stats/memory_usage/device_mem")))
        in_use = std::min(in_use.value_or(0) + *n, max_bytes + 1);
    }
    if (in_use && *in_use <= max_bytes) t.memory_used_bytes = in_use;
    else if (in_use) dev.note(text::cat(dev.dir(), ": NeuronCores' device memory in use adds up to more than any device has"));
  }
  // Uncorrected ECC events since the driver loaded: a plain number or a counter folder.
  for (const auto& [file, block] : {std::pair{"mem_ecc_uncorrected", "dram"},
                                    std::pair{"mem_ecc_repairable_uncorrected", "dram_repairable"},
                                    std::pair{"sram_ecc_uncorrected", "sram"}}) {
    const std::string path = text::cat("stats/hardware/", file);
    auto n = dev.integer(path + "/total", ~std::uint64_t{0} / 2);
    if (!n && !system.list_dir(text::cat(dev.dir(), "/", path))) n = dev.integer(path, ~std::uint64_t{0} / 2);
    if (n) t.ecc_errors.push_back({"uncorrected", "volatile", block, *n});
  }
  // "<status>,<timestamp>,<min>,<max>,<avg>": the last minute's power as a
  // percentage of the device's maximum; only a valid sample counts.
  if (const auto line = dev.text("stats/power/utilization")) {
    const auto fields = text::split_trimmed(*line, ',');
    if (fields.size() == 5 && fields[0] == "POWER_STATUS_VALID") {
      if (const auto avg = text::parse_double(fields[4]); avg && *avg >= 0 && *avg <= 100) t.power_utilization = *avg / 100;
      else dev.note(text::cat(dev.dir(), "/stats/power/utilization: average '", text::excerpt(fields[4], 20), "' is not 0..100"));
    } else if (fields.empty() || !fields[0].starts_with("POWER_STATUS_")) {
      dev.note(text::cat(dev.dir(), "/stats/power/utilization: '", text::excerpt(*line, 60),
                         "' is not status,timestamp,min,max,avg"));
    }
  }
  return t;
}

HostTelemetry read_host(const System& system) {
  HostTelemetry h;
  if (auto load = system.read_file("/proc/loadavg", small_file)) {
    const auto w = text::words(load->data);
    if (w.size() >= 3) {
      h.load1 = text::parse_double(w[0]);
      h.load5 = text::parse_double(w[1]);
      h.load15 = text::parse_double(w[2]);
    }
  }
  if (auto meminfo = system.read_file("/proc/meminfo", 64 * 1024)) {
    std::string_view rest = meminfo->data;
    while (!rest.empty()) {
      const std::string_view line = text::next_line(rest);
      const auto colon = line.find(':');
      if (colon == std::string_view::npos) continue;
      const std::string_view key = line.substr(0, colon);
      if (key != "MemTotal" && key != "MemAvailable") continue;
      const auto bytes = text::parse_memory_size(text::trim(line.substr(colon + 1)));
      (key == "MemTotal" ? h.memory_total_bytes : h.memory_available_bytes) = bytes;
    }
  }
  return h;
}

}  // namespace hwaccel::telemetry_detail
