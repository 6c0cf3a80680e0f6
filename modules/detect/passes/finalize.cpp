// Cross-backend passes over a finished detection.
module;
#include <algorithm>
#include <chrono>
#include <optional>
#include <string_view>
#include <string>
#include <tuple>
#include <utility>
#include <vector>
module hwaccel.detect;

namespace hwaccel {

namespace {

// The kernel's host name, when it is a name: a fleet keys nodes by it, so
// control bytes or a 64 KB blob are dropped with a warning, not passed on.
std::optional<std::string> kernel_host_name(const System& system, std::vector<Warning>& warnings) {
  auto name = read_text(system, "/proc/sys/kernel/hostname", 1024);
  if (!name || name->empty()) return std::nullopt;
  const bool valid = name->size() <= 253 && std::all_of(name->begin(), name->end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
  });
  if (!valid) {
    warnings.push_back(Warning{"environment", WarningKind::invalid_value,
                               "/proc/sys/kernel/hostname is not a host name; the node's name is unknown"});
    return std::nullopt;
  }
  return name;
}

// Free or used memory above the total is no measurement (a tool's garbage, a
// driver bug): a scheduler must never read more free memory than exists.
void drop_impossible_memory(Inventory& inv) {
  for (auto& d : inv.devices) {
    if (!d.memory_bytes) continue;
    for (auto [field, name] : {std::pair{&d.memory_free_bytes, "free"}, std::pair{&d.memory_used_bytes, "used"}}) {
      if (!*field || **field <= *d.memory_bytes) continue;
      inv.warnings.push_back(Warning{
          std::string(to_string(d.backend)), WarningKind::invalid_value,
          text::cat(d.id.empty() ? device_id(d.backend, d.index) : d.id, " (", text::excerpt(d.name, 60), "): ", name,
                    " memory (", **field, " bytes) exceeds its total memory (", *d.memory_bytes,
                    " bytes); free and used memory are unknown")});
      d.memory_free_bytes.reset();
      d.memory_used_bytes.reset();
    }
  }
}

}  // namespace

void finalize_inventory(Inventory& inv, const System& system, const DetectOptions& options) {
  // The cross-backend passes add warnings of their own: they are reported
  // as events like the detectors' (those are already told).
  std::vector<Warning> warnings_before;
  if (options.wants(LogLevel::warn)) warnings_before = inv.warnings;
  drop_impossible_memory(inv);
  // Before ordering: a Vulkan device folded into its native twin leaves the list.
  std::vector<std::pair<std::string, std::string>> vulkan_before;  // name, bus id
  const bool tell_merges = options.wants(LogLevel::info);
  if (tell_merges)
    for (const auto& d : inv.devices)
      if (d.backend == Backend::vulkan) vulkan_before.emplace_back(d.name, d.pci_bus_id.value_or(""));
  merge_dxgi_devices(inv);
  merge_vulkan_devices(inv, system);
  if (tell_merges) {
    std::vector<std::pair<std::string, std::string>> vulkan_after;
    for (const auto& d : inv.devices)
      if (d.backend == Backend::vulkan) vulkan_after.emplace_back(d.name, d.pci_bus_id.value_or(""));
    for (const auto& [name, bus] : vulkan_before) {
      const auto it = std::find(vulkan_after.begin(), vulkan_after.end(), std::pair{name, bus});
      if (it != vulkan_after.end()) {
        vulkan_after.erase(it);
        continue;
      }
      options.report(DiagnosticEvent{LogLevel::info, "device_merged", "vulkan", bus.empty() ? name : text::cat(name, " ", bus),
                                    "folded into the native backend's device of the same GPU", {}, -1,
                                    std::chrono::microseconds{-1}});
    }
  }
  if (options.enabled(Backend::vulkan)) warn_unreported_render_nodes(inv, system);
  std::sort(inv.devices.begin(), inv.devices.end(), [](const DeviceProfile& a, const DeviceProfile& b) {
    return std::tie(a.backend, a.index) < std::tie(b.backend, b.index);
  });
  for (auto& d : inv.devices)
    if (d.id.empty()) d.id = device_id(d.backend, d.index);
  std::sort(inv.links.begin(), inv.links.end(), [](const DeviceLink& x, const DeviceLink& y) {
    if (x.a != y.a) return natural_less(x.a, y.a);
    if (x.b != y.b) return natural_less(x.b, y.b);
    return x.kind < y.kind;
  });
  // Which GPUs this process may use and the runtime's numbering of them
  // (*_VISIBLE_DEVICES; visibility.cpp, docs/environment.md).
  const bool has_gpus = std::any_of(inv.devices.begin(), inv.devices.end(), [](const DeviceProfile& d) {
    return d.backend == Backend::cuda || d.backend == Backend::rocm;
  });
  if (has_gpus) resolve_visibility(inv.devices, visibility_inputs(system, inv.system.environment), inv.warnings);
  assign_network_affinity(inv, system);
  if (options.system_probes && !inv.system.host) inv.system.host = kernel_host_name(system, inv.warnings);
  // Published figures for the devices the spec table knows (spec_match.cpp).
  match_device_specs(inv, system);
  // Running the passes again over a finalized inventory (LazyRegistry joins
  // finalized parts) must not repeat their warnings.
  std::vector<Warning> unique;
  unique.reserve(inv.warnings.size());
  for (auto& w : inv.warnings)
    if (std::find(unique.begin(), unique.end(), w) == unique.end()) unique.push_back(std::move(w));
  inv.warnings = std::move(unique);
  if (options.wants(LogLevel::warn))
    for (const auto& w : inv.warnings)
      if (std::find(warnings_before.begin(), warnings_before.end(), w) == warnings_before.end())
        options.report(DiagnosticEvent{LogLevel::warn, "warning", w.backend, {}, std::string(to_string(w.kind)), w.message,
                                      -1, std::chrono::microseconds{-1}});
}

}  // namespace hwaccel
