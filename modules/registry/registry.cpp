// Registry queries and the detect builder.
module;
#include <algorithm>
#include <bitset>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hwaccel_version.h"
module hwaccel.registry;

namespace hwaccel {

std::string_view library_version() noexcept { return HWACCEL_VERSION; }

const DeviceProfile* AcceleratorRegistry::find(std::string_view id) const noexcept {
  for (const auto& d : inventory_.devices)
    if (d.id == id) return &d;
  return nullptr;
}

std::vector<const DeviceProfile*> AcceleratorRegistry::available() const {
  std::vector<const DeviceProfile*> out;
  for (const auto& d : inventory_.devices)
    if (d.available && d.visible) out.push_back(&d);
  return out;
}

std::vector<const DeviceProfile*> AcceleratorRegistry::by_family(Family family) const {
  std::vector<const DeviceProfile*> out;
  for (const auto& d : inventory_.devices)
    if (d.available && d.visible && d.family == family) out.push_back(&d);
  return out;
}

std::vector<const DeviceProfile*> AcceleratorRegistry::by_backend(Backend backend) const {
  std::vector<const DeviceProfile*> out;
  for (const auto& d : inventory_.devices)
    if (d.backend == backend) out.push_back(&d);
  return out;
}

bool AcceleratorRegistry::has_accelerator() const noexcept {
  return std::any_of(inventory_.devices.begin(), inventory_.devices.end(),
                     [](const DeviceProfile& d) { return d.available && d.visible && d.family != Family::cpu; });
}

Result<void> AcceleratorRegistry::add_device(DeviceProfile device) {
  if (device.id.empty()) {
    std::uint32_t next = 0;
    for (const auto& d : inventory_.devices)
      if (d.backend == device.backend) next = std::max(next, d.index + 1);
    device.index = next;
    device.id = device_id(device.backend, next);
  }
  if (find(device.id)) return fail(ErrorKind::invalid_input, text::cat("a device with id ", device.id, " already exists"));
  inventory_.devices.push_back(std::move(device));
  return {};
}

std::vector<const DeviceProfile*> AcceleratorRegistry::satisfying(const AcceleratorRequirement& requirement) const {
  std::vector<const DeviceProfile*> out;
  for (const auto& d : inventory_.devices)
    if (requirement.satisfied_by(d)) out.push_back(&d);
  if (out.size() < std::max<std::uint32_t>(requirement.min_devices, 1)) out.clear();
  return out;
}

namespace {

// Memory in whole GiB, rounded: cards are sold by the GB and drivers reserve
// differing amounts (an H100 reports 81559 MiB, an A100 81920 MiB).
std::uint64_t memory_gib(const DeviceProfile& d) noexcept {
  const auto bytes = usable_memory_bytes(d);
  return bytes ? (*bytes + (std::uint64_t{1} << 29)) >> 30 : 0;
}

// Whether `a` is more capable than `b` (see best_available).
bool more_capable(const DeviceProfile& a, const DeviceProfile& b) noexcept {
  const bool a_accel = a.family != Family::cpu, b_accel = b.family != Family::cpu;
  if (a_accel != b_accel) return a_accel;
  const auto ma = memory_gib(a), mb = memory_gib(b);
  if (ma != mb) return ma > mb;
  if (a.memory_bandwidth_gbps && b.memory_bandwidth_gbps && *a.memory_bandwidth_gbps != *b.memory_bandwidth_gbps)
    return *a.memory_bandwidth_gbps > *b.memory_bandwidth_gbps;
  return false;
}

}  // namespace

const DeviceProfile* AcceleratorRegistry::best_available() const noexcept {
  const DeviceProfile* best = nullptr;
  for (const auto& d : inventory_.devices) {
    if (!d.available || !d.visible) continue;
    if (!best || more_capable(d, *best)) best = &d;
  }
  return best;
}

std::uint64_t AcceleratorRegistry::total_accelerator_memory() const noexcept {
  std::uint64_t total = 0;
  for (const auto& d : inventory_.devices)
    if (d.available && d.visible && d.family != Family::cpu) total += usable_memory_bytes(d).value_or(0);
  return total;
}

std::uint64_t AcceleratorRegistry::total_memory_including_cpu() const noexcept {
  const bool host_counted = std::any_of(inventory_.devices.begin(), inventory_.devices.end(), [](const DeviceProfile& d) {
    return d.available && d.visible && d.family == Family::cpu && usable_memory_bytes(d).has_value();
  });
  std::uint64_t total = 0;
  for (const auto& d : inventory_.devices) {
    if (!d.available || !d.visible) continue;
    if (host_counted && d.family != Family::cpu && d.memory_kind == MemoryKind::unified) continue;
    total += usable_memory_bytes(d).value_or(0);
  }
  return total;
}

AcceleratorRegistry AcceleratorRegistry::detect() {
  const auto system = make_live_system();
  // $HWACCEL_BACKENDS through the detection settings; a bad list is a warning.
  auto settings = read_detect_settings({}, [&](std::string_view name) { return system->env(name); },
                                       BadEnvironment::ignore);
  return (settings ? settings->builder() : DetectBuilder{}).detect(*system);
}

DetectBuilder AcceleratorRegistry::builder() { return DetectBuilder{}; }

DetectBuilder DetectBuilder::none() {
  DetectBuilder b;
  b.options_.backends.reset();
  return b;
}

DetectBuilder& DetectBuilder::with(Backend backend) {
  options_.backends.set(static_cast<std::size_t>(backend));
  return *this;
}

DetectBuilder& DetectBuilder::without(Backend backend) {
  options_.backends.reset(static_cast<std::size_t>(backend));
  return *this;
}

DetectBuilder& DetectBuilder::only(std::bitset<backend_count> backends) {
  options_.backends = backends;
  return *this;
}

Result<void> DetectBuilder::select(std::string_view list) {
  auto parsed = parse_backend_list(list);
  if (!parsed) return fail(parsed.error());
  options_.backends = *parsed;
  return {};
}

DetectBuilder& DetectBuilder::system_probes(bool on) {
  options_.system_probes = on;
  return *this;
}

DetectBuilder& DetectBuilder::tool_timeout(std::chrono::milliseconds timeout) {
  options_.tool_timeout = timeout;
  return *this;
}

DetectBuilder& DetectBuilder::tool_output_cap(std::size_t bytes) {
  options_.tool_output_cap = bytes;
  return *this;
}

DetectBuilder& DetectBuilder::all_tools(bool on) {
  options_.all_tools = on;
  return *this;
}

DetectBuilder& DetectBuilder::diagnostics(DiagnosticSink sink, LogLevel level) {
  options_.sink = sink ? std::make_shared<const DiagnosticSink>(std::move(sink)) : nullptr;
  options_.log_level = level;
  return *this;
}

AcceleratorRegistry DetectBuilder::detect() const {
  const auto system = make_live_system();
  return detect(*system);
}

DetectBuilder& DetectBuilder::warning(Warning warning) {
  warnings_.push_back(std::move(warning));
  return *this;
}

DetectBuilder::DetectBuilder() { options_.plugins = plugin_runner(PluginSettings{}); }

DetectBuilder& DetectBuilder::plugins(PluginSettings settings) {
  options_.plugins = plugin_runner(settings);
  return *this;
}

DetectBuilder& DetectBuilder::without_plugins() {
  options_.plugins = nullptr;
  return *this;
}

AcceleratorRegistry DetectBuilder::detect(const System& system) const {
  AcceleratorRegistry registry(detect_inventory(system, options_));
  for (const auto& w : warnings_) registry.inventory().warnings.push_back(w);
  return registry;
}

}  // namespace hwaccel
