// Finalize pass: recognises detected devices in the published-spec table and
// records the match in DeviceProfile::spec_id (figures stay in the table).
module;
#include <string>
module hwaccel.detect;

namespace hwaccel {

void match_device_specs(Inventory& inventory, const System& system) {
  for (auto& d : inventory.devices) {
    if (d.spec_id || d.family == Family::cpu) continue;
    // The PCI device id tells SKUs apart that share a marketing name; a
    // detector may have recorded it, else sysfs has it under the bus id.
    SpecQuery q = spec_query_of(d);
    if ((!q.pci_vendor_id || !q.pci_device_id) && d.pci_bus_id) {
      if (const auto address = PciAddress::parse(*d.pci_bus_id)) {
        const PciFunction f = read_pci_ids(system, *address);
        q.pci_vendor_id = f.vendor_id;
        q.pci_device_id = f.device_id;
      }
    }
    if (const DeviceSpec* spec = match_spec(q)) d.spec_id = std::string(spec->id);
  }
}

}  // namespace hwaccel
