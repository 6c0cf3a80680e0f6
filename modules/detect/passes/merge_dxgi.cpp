// The cross-backend pass that keeps one entry per GPU when DXGI and a vendor
// backend (CUDA through nvidia-smi.exe, ROCm, oneAPI) both report it.
module;
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>
module hwaccel.detect;

namespace hwaccel {
namespace {

bool is_vendor_gpu(const DeviceProfile& d) noexcept {
  return d.family == Family::gpu && d.backend != Backend::dxgi && facts_of(d.backend).merges_with_vulkan;
}

std::string_view property(const DeviceProfile& d, std::string_view key) {
  const auto it = d.properties.find(key);
  return it == d.properties.end() ? std::string_view() : std::string_view(it->second);
}

void fold_into(DeviceProfile& vendor, const DeviceProfile& dxgi, std::string_view joined_by) {
  for (const auto& [key, value] : dxgi.properties)
    if (key.starts_with("dxgi_")) vendor.properties.insert_or_assign(key, value);
  if (dxgi.name != vendor.name) vendor.properties.insert_or_assign("dxgi_description", dxgi.name);
  if (dxgi.driver_version) vendor.properties.insert_or_assign("dxgi_driver_version", *dxgi.driver_version);
  vendor.properties.insert_or_assign("dxgi_joined_by", std::string(joined_by));
  if (!vendor.memory_bytes && dxgi.memory_bytes) {
    vendor.memory_bytes = dxgi.memory_bytes;
    vendor.properties.insert_or_assign("memory_source", "dxgi: DedicatedVideoMemory");
  }
  if (!vendor.shared_memory_bytes && dxgi.shared_memory_bytes) {
    vendor.shared_memory_bytes = dxgi.shared_memory_bytes;
    vendor.properties.insert_or_assign("shared_memory", std::string(property(dxgi, "shared_memory")));
  }
  if (!vendor.vendor) vendor.vendor = dxgi.vendor;
}

}  // namespace

void merge_dxgi_devices(Inventory& inventory) {
  std::vector<std::size_t> dxgi, vendor;
  for (std::size_t i = 0; i < inventory.devices.size(); ++i) {
    const DeviceProfile& d = inventory.devices[i];
    if (d.backend == Backend::dxgi) dxgi.push_back(i);
    else if (is_vendor_gpu(d)) vendor.push_back(i);
  }
  if (dxgi.empty() || vendor.empty()) return;
  std::vector<bool> taken(vendor.size(), false);
  std::vector<bool> merged(inventory.devices.size(), false);
  const auto join = [&](std::size_t di, std::size_t vn, std::string_view joined_by) {
    taken[vn] = true;
    merged[di] = true;
    fold_into(inventory.devices[vendor[vn]], inventory.devices[di], joined_by);
  };

  // The same PCI ids (DXGI gives no PCI location). Identical GPUs have the
  // same ids on both sides; with as many on each, they are paired in
  // enumeration order (the counts and the memory agree whichever way they pair).
  for (const std::size_t di : dxgi) {
    if (merged[di]) continue;
    const std::string_view ids = property(inventory.devices[di], "pci_id");
    if (ids.empty()) continue;
    std::vector<std::size_t> dxgi_same, vendor_same;
    for (const std::size_t other : dxgi)
      if (!merged[other] && property(inventory.devices[other], "pci_id") == ids) dxgi_same.push_back(other);
    for (std::size_t vn = 0; vn < vendor.size(); ++vn)
      if (!taken[vn] && property(inventory.devices[vendor[vn]], "pci_id") == ids) vendor_same.push_back(vn);
    if (dxgi_same.size() != vendor_same.size()) continue;  // some GPU is missing on one side: no guessing
    const std::string_view joined_by = dxgi_same.size() == 1 ? "PCI ids" : "PCI ids, in enumeration order";
    for (std::size_t k = 0; k < dxgi_same.size(); ++k) join(dxgi_same[k], vendor_same[k], joined_by);
  }

  remove_merged(inventory, merged, Backend::dxgi);
}

}  // namespace hwaccel
