// AMD XDNA backend: Ryzen AI NPUs driven by amdxdna, read from the accel
// class and the PCI function's sysfs attributes. The NPU works out of system
// memory, so no memory size is reported for it.
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

struct XdnaId {
  std::uint16_t device_id;
  std::uint8_t revision;
  XdnaGeneration generation;
};

constexpr std::string_view xdna2_platforms = "Strix Point, Krackan Point, Strix Halo or Gorgon Point";

// amdxdna_ids[] of drivers/accel/amdxdna/amdxdna_pci_drv.c: the driver keys
// generations on (device id, revision).
constexpr std::array<XdnaId, 5> xdna_ids = {{
    {0x1502, 0x00, {"NPU1", "XDNA", "Phoenix or Hawk Point"}},
    {0x17f0, 0x00, {"NPU2", "XDNA 2", xdna2_platforms}},
    {0x17f0, 0x10, {"NPU4", "XDNA 2", xdna2_platforms}},
    {0x17f0, 0x11, {"NPU5", "XDNA 2", xdna2_platforms}},
    {0x17f0, 0x20, {"NPU6", "XDNA 2", xdna2_platforms}},
}};

}  // namespace

std::optional<XdnaGeneration> xdna_generation(std::uint16_t device_id, std::optional<std::uint8_t> revision) noexcept {
  if (device_id == 0x1502) return xdna_ids[0].generation;  // one generation whatever the revision
  if (!revision) {
    // The architecture is known from the device id alone, the NPU number is not.
    if (device_id == 0x17f0) return XdnaGeneration{"", "XDNA 2", xdna2_platforms};
    return std::nullopt;
  }
  for (const auto& id : xdna_ids)
    if (id.device_id == device_id && id.revision == *revision) return id.generation;
  return std::nullopt;
}

}  // namespace parsers

namespace {

constexpr std::string_view xdna_driver = "amdxdna";

DetectorOutput detect_amd_xdna(const DetectContext& ctx) {
  DetectorOutput out;
  const System& sys = ctx.system();
  std::uint32_t index = 0;
  for (const AccelFunction& function : accel_functions_of_driver(sys, xdna_driver)) {
    DeviceProfile d;
    d.backend = Backend::amd_xdna;
    d.family = Family::npu;
    d.index = index++;
    d.id = device_id(d.backend, d.index);
    d.vendor = "AMD";
    d.integrated = true;
    d.memory_kind = MemoryKind::unified;
    const PciFunction pci = describe_accel_function(ctx, out, function, xdna_driver, d);
    const auto generation =
        pci.device_id ? parsers::xdna_generation(*pci.device_id, pci.revision) : std::optional<parsers::XdnaGeneration>{};
    if (generation) {
      d.name = text::cat("AMD ", generation->architecture, " NPU");
      d.architecture = std::string(generation->architecture);
      if (!generation->npu.empty()) d.compute_capability = std::string(generation->npu);
      d.properties.emplace("platforms", std::string(generation->platforms));
    } else {
      d.name = "AMD XDNA NPU";
      if (!pci.device_id)
        ctx.warn(out, WarningKind::io_error,
                 text::cat("/sys/bus/pci/devices/", *d.pci_bus_id,
                           ": no readable PCI device id, so the NPU generation is unknown"));
    }
    if (pci.revision) d.properties.emplace("pci_revision", "0x" + text::hex_digits(*pci.revision, 2));
    // Attributes amdxdna adds to the PCI device (amdxdna_sysfs.c).
    const std::string dir = "/sys/bus/pci/devices/" + *d.pci_bus_id;
    if (auto fw = read_text(sys, dir + "/fw_version", 256); fw && !fw->empty() && *fw != "0.0.0.0")
      d.firmware_version = std::move(*fw);
    if (auto vbnv = read_text(sys, dir + "/vbnv", 256); vbnv && !vbnv->empty()) d.properties.emplace("vbnv", std::move(*vbnv));
    out.devices.push_back(std::move(d));
  }
  return out;
}

}  // namespace

constexpr std::string_view amd_xdna_drivers[] = {"amdxdna"};
constexpr PciKind amd_xdna_pci[] = {{0x1022, 0x1180, "AMD NPU (XDNA)"}};
constexpr std::string_view amd_xdna_runtimes[] = {"onnxruntime-vitisai"};

const Detector amd_xdna_detector{
    .name = "amd_xdna",
    .backend = Backend::amd_xdna,
    .tools = {},
    .detect = &detect_amd_xdna,
    .facts = {.drivers = amd_xdna_drivers,
              .pci = amd_xdna_pci,
              .accel_class = true,
              .driver_remedy = "load amdxdna (sudo modprobe amdxdna), or install a kernel of 6.14 or later",
              .vendor = "AMD",
              .runtimes = amd_xdna_runtimes,
              .container_remedy = "start the container with --device /dev/accel",
              .device_nodes_of = &accel_nodes_of},
};

}  // namespace hwaccel
