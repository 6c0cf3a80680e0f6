// Devices made from the published spec table, for planning on machines that
// are not this one (--devices, cloud instances). Included right after
// `module hwaccel.plan;`, because it builds the module's types; <cstddef>,
// <cstdint>, <string> and <utility> come from the including unit's global
// module fragment.
#pragma once

namespace hwaccel::hypothetical {

/// Device `index` of its backend, as `spec` describes one, with
/// `memory_bytes` of memory; property "hypothetical" says it was not detected.
inline DeviceProfile device(const DeviceSpec& spec, std::uint32_t index, std::uint64_t memory_bytes) {
  DeviceProfile d;
  d.backend = spec.backend;
  d.family = spec.family;
  d.index = index;
  d.id = device_id(d.backend, d.index);
  d.name = std::string(spec.product);
  d.vendor = std::string(spec.vendor);
  d.memory_bytes = memory_bytes;
  d.memory_kind = spec.memory_kind;
  if (!spec.compute_capability.empty()) d.compute_capability = std::string(spec.compute_capability);
  if (!spec.architecture.empty()) d.architecture = std::string(spec.architecture);
  d.runtime_index = d.index;
  d.spec_id = std::string(spec.id);
  d.properties.emplace("hypothetical", "true");
  return d;
}

/// Joins devices [first, last) of `inv` in domains of `domain` devices, each
/// an interconnect like `fabric` (kind, name, bandwidth, source); a lone
/// device left at the end joins nothing.
inline void join_in_domains(Inventory& inv, std::size_t first, std::size_t last, std::size_t domain,
                            const Interconnect& fabric) {
  if (domain < 2) return;
  for (std::size_t start = first; start + 1 < last; start += domain) {
    Interconnect ic = fabric;
    for (std::size_t i = start; i < last && i < start + domain; ++i) ic.device_ids.push_back(inv.devices[i].id);
    inv.interconnects.push_back(std::move(ic));
  }
}

}  // namespace hwaccel::hypothetical
