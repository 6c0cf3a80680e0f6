// Cross-backend passes over a finished detection.
module;
#include <algorithm>
#include <string>
#include <tuple>
#include <vector>
module hwaccel.detect;

namespace hwaccel {

void finalize_inventory(Inventory& inv, const System& system, const DetectOptions& options) {
  // Before ordering: a Vulkan device folded into its native twin leaves the list.
  merge_vulkan_devices(inv, system);
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
  // Published figures for the devices the spec table knows (spec_match.cpp).
  match_device_specs(inv, system);
  // Running the passes again over a finalized inventory (LazyRegistry joins
  // finalized parts) must not repeat their warnings.
  std::vector<Warning> unique;
  unique.reserve(inv.warnings.size());
  for (auto& w : inv.warnings)
    if (std::find(unique.begin(), unique.end(), w) == unique.end()) unique.push_back(std::move(w));
  inv.warnings = std::move(unique);
}

}  // namespace hwaccel
