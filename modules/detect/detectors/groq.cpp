// Groq backend: each PCI function of vendor 0x1de0 (the GroqChip) is one
// device. Memory is the chip's on-die SRAM, known only from Groq's product
// brief, so it is attached as a published figure.
module;
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
module hwaccel.detectors;

namespace hwaccel {
namespace parsers {

std::optional<std::string_view> groq_board(std::uint16_t subsystem_vendor, std::uint16_t subsystem_device) noexcept {
  if (subsystem_vendor != 0x1de0) return std::nullopt;
  switch (subsystem_device) {
    case 0x0000: return "GroqCard GC1-010X-ES";
    case 0xc005: return "GroqCard GC1-010B";
    default: return std::nullopt;
  }
}

}  // namespace parsers

namespace {

constexpr std::uint16_t groq_vendor_id = 0x1de0;
// Groq's GroqCard product brief: 230 MB of on-chip SRAM per GroqChip.
constexpr std::uint64_t published_sram_bytes = 230'000'000;

DetectorOutput detect_groq(const DetectContext& ctx) {
  DetectorOutput out;
  const auto functions = pci_functions_of_vendor(ctx.system(), groq_vendor_id);
  std::uint32_t index = 0;
  for (const PciFunction& f : functions) {
    DeviceProfile p;
    p.backend = Backend::groq;
    p.family = Family::asic;
    p.vendor = "Groq";
    p.index = index++;
    p.id = device_id(Backend::groq, p.index);
    std::optional<std::string_view> board;
    if (f.subsystem_vendor_id && f.subsystem_device_id) board = parsers::groq_board(*f.subsystem_vendor_id, *f.subsystem_device_id);
    p.name = board ? text::cat("Groq GroqChip (", *board, ")") : std::string("Groq GroqChip");
    p.architecture = "TSP";
    p.pci_bus_id = f.address.to_string();
    p.numa_node = f.numa_node;
    p.cpu_affinity = f.local_cpulist;
    if (f.link.current_speed_gts || f.link.max_speed_gts) p.pcie = f.link;
    if (f.driver) p.properties["driver"] = *f.driver;
    else {
      p.available = false;
      ctx.warn(out, WarningKind::unsupported,
               text::cat("GroqChip ", p.pci_bus_id.value_or("?"), " is bound to no driver (/proc/bus/pci/devices)"));
    }
    p.properties["published_memory_bytes"] = std::to_string(published_sram_bytes);
    p.properties["published_spec"] = "Groq GroqChip: 230 MB on-chip SRAM (product brief, not read from the device)";
    out.devices.push_back(std::move(p));
  }
  return out;
}

}  // namespace

constexpr PciKind groq_pci[] = {{groq_vendor_id, 0, {}}};

constexpr std::string_view groq_runtimes[] = {"groqflow"};

const Detector groq_detector{
    .name = "groq",
    .backend = Backend::groq,
    .tools = {},
    .detect = &detect_groq,
    .facts = {.pci = groq_pci, .vendor = "Groq", .runtimes = groq_runtimes},
};

}  // namespace hwaccel
