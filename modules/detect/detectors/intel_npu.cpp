// Intel NPU backend: NPUs driven by intel_vpu, read from the accel class and
// the PCI function's sysfs attributes. The NPU works out of system memory
// (through the IOMMU), so no memory size is reported for it.
module;
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
module hwaccel.detectors;

namespace hwaccel {
namespace parsers {
namespace {

struct IntelNpuId {
  std::uint16_t device_id;
  IntelNpuGeneration generation;
};

// PCI_DEVICE_ID_* and ivpu_hw_ip_gen() of drivers/accel/ivpu/ivpu_drv.h.
constexpr std::array<IntelNpuId, 6> intel_npu_ids = {{
    {0x7d1d, {"Meteor Lake", "NPU 37xx"}},
    {0xad1d, {"Arrow Lake", "NPU 37xx"}},
    {0x643e, {"Lunar Lake", "NPU 40xx"}},
    {0xb03e, {"Panther Lake", "NPU 50xx"}},
    {0xfd3e, {"Wildcat Lake", "NPU 50xx"}},
    {0xd71d, {"Nova Lake", "NPU 60xx"}},
}};

}  // namespace

std::optional<IntelNpuGeneration> intel_npu_generation(std::uint16_t device_id) noexcept {
  for (const auto& id : intel_npu_ids)
    if (id.device_id == device_id) return id.generation;
  return std::nullopt;
}

}  // namespace parsers

namespace {

constexpr std::string_view driver_name = "intel_vpu";

// Attributes intel_vpu adds to the PCI device (ivpu_sysfs.c); each appeared in
// a different kernel release, so any of them may be missing.
void read_driver_attributes(const System& sys, const std::string& dir, DeviceProfile& d) {
  if (const auto mode = read_text(sys, dir + "/sched_mode", 64); mode && !mode->empty())
    d.properties.emplace("scheduling_mode", *mode);
  if (const auto mhz = read_u64(sys, dir + "/npu_max_frequency_mhz"); mhz && *mhz > 0 && *mhz < 100'000)
    d.properties.emplace("max_frequency_mhz", std::to_string(*mhz));
  // Bytes of buffer objects resident for the NPU, all of them system memory.
  if (const auto used = read_u64(sys, dir + "/npu_memory_utilization")) d.memory_used_bytes = *used;
}

DetectorOutput detect_intel_npu(const DetectContext& ctx) {
  DetectorOutput out;
  const System& sys = ctx.system();
  std::uint32_t index = 0;
  for (const AccelFunction& function : accel_functions_of_driver(sys, driver_name)) {
    DeviceProfile d;
    d.backend = Backend::intel_npu;
    d.family = Family::npu;
    d.index = index++;
    d.id = device_id(d.backend, d.index);
    d.vendor = "Intel";
    d.integrated = true;
    d.memory_kind = MemoryKind::unified;
    const PciFunction pci = describe_accel_function(ctx, out, function, driver_name, d);
    const auto generation =
        pci.device_id ? parsers::intel_npu_generation(*pci.device_id) : std::optional<parsers::IntelNpuGeneration>{};
    if (generation) {
      d.name = text::cat("Intel NPU (", generation->platform, ")");
      d.architecture = std::string(generation->ip);
    } else if (pci.device_id) {
      d.name = "Intel NPU (unknown generation)";
    } else {
      d.name = "Intel NPU";
      ctx.warn(out, WarningKind::io_error,
               text::cat("/sys/bus/pci/devices/", *d.pci_bus_id, ": no readable PCI device id, so the NPU generation is unknown"));
    }
    read_driver_attributes(sys, "/sys/bus/pci/devices/" + *d.pci_bus_id, d);
    // The firmware version is only in debugfs (readable by root): optional.
    if (function.node && function.node->minor) {
      const std::string debug = text::cat("/sys/kernel/debug/accel/", *function.node->minor);
      if (auto fw = read_text(sys, debug + "/fw_version", 4096); fw && !fw->empty()) d.firmware_version = std::move(*fw);
      if (auto name = read_text(sys, debug + "/fw_name", 4096); name && !name->empty())
        d.properties.emplace("firmware_file", std::move(*name));
    }
    out.devices.push_back(std::move(d));
  }
  return out;
}

}  // namespace

constexpr std::string_view intel_npu_drivers[] = {"intel_vpu"};
constexpr PciKind intel_npu_pci[] = {{0x8086, 0x1200, "Intel NPU"}};
constexpr std::string_view intel_npu_runtimes[] = {"openvino"};

const Detector intel_npu_detector{
    .name = "intel_npu",
    .backend = Backend::intel_npu,
    .tools = {},
    .detect = &detect_intel_npu,
    .facts = {.drivers = intel_npu_drivers,
              .pci = intel_npu_pci,
              .accel_class = true,
              .driver_remedy = "load intel_vpu (sudo modprobe intel_vpu), or install a kernel of 6.3 or later",
              .vendor = "Intel",
              .runtimes = intel_npu_runtimes,
              .container_remedy = "start the container with --device /dev/accel",
              .device_nodes_of = &accel_nodes_of},
};

}  // namespace hwaccel
