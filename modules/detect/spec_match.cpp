// Finalize pass: recognises detected devices in the published-spec table and
// records the match in DeviceProfile::spec_id (figures stay in the table).
module;
#include <cstdint>
#include <optional>
#include <string>
module hwaccel.detect;

namespace hwaccel {

void match_device_specs(Inventory& inventory, const System& system) {
  for (auto& d : inventory.devices) {
    if (d.spec_id || d.family == Family::cpu) continue;
    SpecQuery q;
    q.backend = d.backend;
    q.name = d.name;
    if (d.compute_capability) q.compute_capability = *d.compute_capability;
    q.memory_bytes = d.memory_bytes;
    // The PCI device id tells SKUs apart that share a marketing name; a
    // detector may have recorded it, else sysfs has it under the bus id.
    const auto property_id = [&](const char* key) -> std::optional<std::uint16_t> {
      const auto it = d.properties.find(key);
      if (it == d.properties.end()) return std::nullopt;
      const auto v = text::parse_hex(it->second);
      return v && *v <= 0xffff ? std::optional<std::uint16_t>(static_cast<std::uint16_t>(*v)) : std::nullopt;
    };
    q.pci_vendor_id = property_id("pci_vendor_id");
    q.pci_device_id = property_id("pci_device_id");
    if ((!q.pci_vendor_id || !q.pci_device_id) && d.pci_bus_id) {
      if (const auto address = PciAddress::parse(*d.pci_bus_id)) {
        const PciFunction f = read_pci_function(system, *address);
        q.pci_vendor_id = f.vendor_id;
        q.pci_device_id = f.device_id;
      }
    }
    if (const DeviceSpec* spec = match_spec(q)) d.spec_id = std::string(spec->id);
  }
}

}  // namespace hwaccel
