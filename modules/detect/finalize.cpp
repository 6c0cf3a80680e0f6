// Cross-backend passes over a finished detection.
module;
#include <algorithm>
#include <string>
#include <tuple>
#include <vector>
module hwaccel.detect;

namespace hwaccel {

void finalize_inventory(Inventory& inv, const System& system) {
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
  match_device_specs(inv, system);
}

}  // namespace hwaccel
