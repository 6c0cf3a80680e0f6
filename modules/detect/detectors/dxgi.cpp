// DXGI backend: one device per hardware adapter. The vendor backends that
// report the same GPU (nvidia-smi.exe's CUDA devices) take its facts over in
// the DXGI merge pass (passes/merge_dxgi.cpp), so one GPU is one device.
module;
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
module hwaccel.detectors;

namespace hwaccel {

namespace parsers {

bool dxgi_adapter_is_accelerator(const DxgiAdapter& adapter) noexcept { return !adapter.software && !adapter.remote; }

DeviceProfile dxgi_device(const DxgiAdapter& a, std::uint32_t index) {
  DeviceProfile d;
  d.backend = Backend::dxgi;
  d.family = Family::gpu;
  d.index = index;
  d.id = device_id(d.backend, index);
  // DXGI's ids are 32-bit: one wider than PCI's 16 bits is named whole, never cut.
  d.name = a.description.empty()
               ? text::cat("GPU [", text::hex_at_least(a.vendor_id, 4), ":", text::hex_at_least(a.device_id, 4), "]")
               : a.description;
  if (const auto vendor = gpu_vendor_name(a.vendor_id); !vendor.empty()) d.vendor = std::string(vendor);
  const bool carve_out_vendor = a.vendor_id == 0x8086 || a.vendor_id == 0x1002 || a.vendor_id == 0x1022;
  d.integrated = carve_out_vendor && a.dedicated_video_memory < dxgi_integrated_below_bytes;
  if (d.integrated) {
    // The carve-out is small; what the GPU can use is the shared system memory.
    d.memory_kind = MemoryKind::carve_out;
    d.memory_bytes = a.dedicated_video_memory + a.dedicated_system_memory;
  } else {
    d.memory_bytes = a.dedicated_video_memory;
  }
  if (a.shared_system_memory) {
    d.shared_memory_bytes = a.shared_system_memory;
    d.properties.emplace("shared_memory", "DXGI SharedSystemMemory: system RAM the adapter may map");
  }
  d.driver_version = a.driver_version;
  if (a.vendor_id <= 0xffff && a.device_id <= 0xffff)
    d.properties.emplace("pci_id", pci_id_text(static_cast<std::uint16_t>(a.vendor_id), static_cast<std::uint16_t>(a.device_id)));
  d.properties.emplace("dxgi_adapter_index", std::to_string(a.index));
  if (a.luid) d.properties.emplace("dxgi_luid", dxgi_luid_text(*a.luid));
  if (a.subsystem_id) d.properties.emplace("dxgi_subsystem_id", text::cat("0x", text::hex4(static_cast<std::uint16_t>(a.subsystem_id >> 16)),
                                                                       text::hex4(static_cast<std::uint16_t>(a.subsystem_id))));
  if (a.dedicated_system_memory) d.properties.emplace("dxgi_dedicated_system_memory", std::to_string(a.dedicated_system_memory));
  if (a.local_budget) d.properties.emplace("dxgi_local_budget_bytes", std::to_string(*a.local_budget));
  if (a.local_usage) d.properties.emplace("dxgi_local_usage_bytes", std::to_string(*a.local_usage));
  return d;
}

}  // namespace parsers

namespace {

DetectorOutput detect_dxgi(const DetectContext& ctx) {
  DetectorOutput out;
  const auto file = ctx.system().read_file(dxgi_adapters_path);
  if (!file) {
    if (file.error().kind != ErrorKind::not_found) ctx.warn(out, file.error());
    return out;
  }
  if (file->truncated) {
    ctx.warn(out, WarningKind::parse_error, text::cat(dxgi_adapters_path, " is larger than a DXGI adapter list can be"));
    return out;
  }
  auto adapters = parse_dxgi_adapters(file->data);
  if (!adapters) {
    ctx.warn(out, adapters.error());
    return out;
  }
  std::uint32_t index = 0;
  for (const DxgiAdapter& a : *adapters)
    if (parsers::dxgi_adapter_is_accelerator(a)) out.devices.push_back(parsers::dxgi_device(a, index++));
  return out;
}

constexpr std::string_view dxgi_runtimes[] = {"llama.cpp"};

}  // namespace

const Detector dxgi_detector{
    .name = "dxgi",
    .backend = Backend::dxgi,
    .tools = {},
    .detect = &detect_dxgi,
    .facts = {.vendor = "the adapter's vendor (Windows DXGI)",
              .runtimes = dxgi_runtimes,
              .merges_with_vulkan = true},
};

}  // namespace hwaccel
