// `nvidia-smi -q -x`: the XML report, read with pugixml by element names, and
// the compute capability of an NVIDIA product name for the views that do not
// print it.
module;
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <pugixml.hpp>
module hwaccel.detect;

namespace hwaccel::parsers {

namespace {

// The text of a leaf, trimmed, with nvidia-smi's placeholders gone. XML
// reports spell some without the brackets of the text reports.
std::optional<std::string_view> leaf(const pugi::xml_node& parent, const char* path) {
  const pugi::xml_node node = parent.first_element_by_path(path);
  if (!node) return std::nullopt;
  const auto value = nvidia_smi_value(node.text().get());
  if (!value) return std::nullopt;
  for (std::string_view placeholder : {"N/A", "Not Supported", "Unknown Error", "Insufficient Permissions",
                                       "Requested functionality has been deprecated", "Not Available"})
    if (text::iequals(*value, placeholder)) return std::nullopt;
  return value;
}

std::optional<std::string> leaf_string(const pugi::xml_node& parent, const char* path) {
  const auto v = leaf(parent, path);
  return v ? std::optional<std::string>(*v) : std::nullopt;
}

std::optional<bool> enabled(const pugi::xml_node& parent, const char* path) {
  const auto v = leaf(parent, path);
  if (!v) return std::nullopt;
  if (text::iequals(*v, "Enabled")) return true;
  if (text::iequals(*v, "Disabled")) return false;
  return std::nullopt;
}

// "40960 MiB" -> bytes.
std::optional<std::uint64_t> memory(const pugi::xml_node& parent, const char* path) {
  const auto v = leaf(parent, path);
  return v ? text::parse_memory_size(*v) : std::nullopt;
}

// "66.92 W", "36 C", "1215 MHz", "0 %": the number before the unit.
std::optional<double> number(const pugi::xml_node& parent, const char* path) {
  const auto v = leaf(parent, path);
  if (!v) return std::nullopt;
  const auto n = text::parse_number_with_unit(*v);
  return n ? std::optional<double>(n->value) : std::nullopt;
}

// "4", "16x" -> 4, 16.
std::optional<std::uint32_t> small_count(const pugi::xml_node& parent, const char* path) {
  auto v = leaf(parent, path);
  if (!v) return std::nullopt;
  std::string_view digits = *v;
  if (digits.ends_with('x')) digits.remove_suffix(1);
  const auto n = text::parse_u64(digits);
  if (!n || *n > 1'000'000) return std::nullopt;
  return static_cast<std::uint32_t>(*n);
}

// "20B010DE": device id in the upper half, vendor in the lower.
std::optional<std::uint16_t> pci_device_id(const pugi::xml_node& pci) {
  auto v = leaf(pci, "pci_device_id");
  if (!v) return std::nullopt;
  std::string_view hex = *v;
  if (hex.starts_with("0x") || hex.starts_with("0X")) hex.remove_prefix(2);
  if (hex.size() != 8) return std::nullopt;
  const auto id = text::parse_hex(hex);
  if (!id) return std::nullopt;
  return static_cast<std::uint16_t>(*id >> 16);
}

NvidiaMigDevice mig_device(const pugi::xml_node& node, std::uint32_t position) {
  NvidiaMigDevice m;
  const auto index = small_count(node, "index");
  m.index = index.value_or(position);
  m.gpu_instance_id = small_count(node, "gpu_instance_id");
  m.compute_instance_id = small_count(node, "compute_instance_id");
  m.multiprocessors = small_count(node, "device_attributes/shared/multiprocessor_count");
  m.memory_bytes = memory(node, "fb_memory_usage/total");
  if (const auto uuid = leaf(node, "uuid")) m.uuid = std::string(*uuid);
  if (const auto profile = leaf(node, "profile_name")) m.profile = std::string(*profile);
  return m;
}

NvidiaGpu gpu_of(const pugi::xml_node& node, std::uint32_t index, const std::optional<std::string>& driver) {
  NvidiaGpu g;
  g.index = index;
  g.name = leaf_string(node, "product_name").value_or("");
  g.uuid = leaf_string(node, "uuid");
  const pugi::xml_node pci = node.child("pci");
  if (const auto bus = leaf(pci, "pci_bus_id")) g.bus_id = PciAddress::parse(*bus);
  if (!g.bus_id)
    if (const auto id = node.attribute("id"); !id.empty()) g.bus_id = PciAddress::parse(id.value());
  g.pci_device_id = pci_device_id(pci);
  g.memory_total_bytes = memory(node, "fb_memory_usage/total");
  g.memory_used_bytes = memory(node, "fb_memory_usage/used");
  g.memory_free_bytes = memory(node, "fb_memory_usage/free");
  g.architecture = leaf_string(node, "product_architecture");
  g.driver_version = driver;
  g.vbios_version = leaf_string(node, "vbios_version");
  g.mig_enabled = enabled(node, "mig_mode/current_mig");
  g.compute_mode = leaf_string(node, "compute_mode");
  g.ecc_enabled = enabled(node, "ecc_mode/current_ecc");
  g.addressing_mode = leaf_string(node, "addressing_mode");
  // R535 moved the readings to <gpu_power_readings> and renamed the limit.
  for (const char* readings : {"gpu_power_readings", "power_readings"}) {
    const pugi::xml_node r = node.child(readings);
    if (!r) continue;
    if (!g.power_draw_watts) g.power_draw_watts = number(r, "power_draw");
    if (!g.power_draw_watts) g.power_draw_watts = number(r, "instant_power_draw");
    if (!g.power_limit_watts) g.power_limit_watts = number(r, "power_limit");
    if (!g.power_limit_watts) g.power_limit_watts = number(r, "current_power_limit");
    if (!g.power_limit_watts) g.power_limit_watts = number(r, "enforced_power_limit");
  }
  g.temperature_c = number(node, "temperature/gpu_temp");
  g.utilization_percent = number(node, "utilization/gpu_util");
  g.max_memory_clock_mhz = number(node, "max_clocks/mem_clock");
  const pugi::xml_node link = pci.child("pci_gpu_link_info");
  g.pcie_generation_current = small_count(link, "pcie_gen/current_link_gen");
  g.pcie_generation_max = small_count(link, "pcie_gen/max_link_gen");
  g.pcie_width_current = small_count(link, "link_widths/current_link_width");
  g.pcie_width_max = small_count(link, "link_widths/max_link_width");
  std::uint32_t position = 0;
  for (const pugi::xml_node m : node.child("mig_devices").children("mig_device")) g.mig_devices.push_back(mig_device(m, position++));
  return g;
}

}  // namespace

Result<NvidiaGpuTable> parse_query_xml(std::string_view xml) {
  if (text::trim(xml).empty()) return fail(ErrorKind::parse_error, "no output");
  pugi::xml_document doc;
  // parse_default keeps no DOCTYPE node and expands only the predefined
  // entities and character references: nothing outside the text is read.
  const pugi::xml_parse_result parsed = doc.load_buffer(xml.data(), xml.size(), pugi::parse_default, pugi::encoding_utf8);
  if (!parsed)
    return fail(ErrorKind::parse_error,
                text::cat("not XML (", parsed.description(), " at byte ", static_cast<std::int64_t>(parsed.offset), ")"));
  const pugi::xml_node root = doc.child("nvidia_smi_log");
  if (!root) return fail(ErrorKind::parse_error, "no <nvidia_smi_log> element: not an nvidia-smi -q -x report");
  NvidiaGpuTable table;
  const auto driver = leaf_string(root, "driver_version");
  std::uint32_t index = 0;
  for (const pugi::xml_node gpu : root.children("gpu")) {
    NvidiaGpu g = gpu_of(gpu, index++, driver);
    if (g.name.empty() && !g.uuid && !g.bus_id) {
      table.problems.push_back({WarningKind::parse_error,
                                text::cat("<gpu> element ", index - 1, " names no product, UUID or bus id; left out")});
      continue;
    }
    table.gpus.push_back(std::move(g));
  }
  if (const auto attached = small_count(root, "attached_gpus"); attached && *attached != index)
    table.problems.push_back({WarningKind::inconsistent,
                              text::cat("the report says ", *attached, " attached GPU(s) and describes ", index)});
  return table;
}

std::string_view cuda_capability_of_name(std::string_view name) noexcept {
  // Matched against the name upper-cased with spaces and '-' removed
  // ("NVIDIA A100-SXM4-40GB" -> "NVIDIAA100SXM440GB"); longer patterns of a
  // family come first so that "A100" is never read as "A10". Source:
  // https://developer.nvidia.com/cuda-gpus (compute capability per product).
  struct Family {
    std::string_view pattern;
    std::string_view capability;
  };
  static constexpr std::array<Family, 57> families = {{
      {"RTXPRO6000BLACKWELL", "12.0"}, {"RTXPRO5000BLACKWELL", "12.0"}, {"RTXPRO4000BLACKWELL", "12.0"},
      {"GB300", "10.3"}, {"B300", "10.3"}, {"GB200", "10.0"}, {"B200", "10.0"}, {"B100", "10.0"},
      {"GB10", "12.1"}, {"RTX50", "12.0"},
      {"GH200", "9.0"}, {"H200", "9.0"}, {"H100", "9.0"}, {"H800", "9.0"}, {"H20", "9.0"},
      {"L40", "8.9"}, {"L20", "8.9"}, {"L4", "8.9"}, {"RTX40", "8.9"},
      {"A100", "8.0"}, {"A800", "8.0"}, {"A30", "8.0"},
      {"A40", "8.6"}, {"A16", "8.6"}, {"A10", "8.6"}, {"A2", "8.6"}, {"RTX30", "8.6"}, {"RTXA", "8.6"},
      {"T4", "7.5"}, {"T1000", "7.5"}, {"T400", "7.5"}, {"T600", "7.5"}, {"RTX20", "7.5"}, {"GTX16", "7.5"},
      {"QUADRORTX", "7.5"}, {"TITANRTX", "7.5"},
      {"V100", "7.0"}, {"TITANV", "7.0"},
      {"P100", "6.0"}, {"P40", "6.1"}, {"P4", "6.1"}, {"P6", "6.1"}, {"GTX10", "6.1"}, {"TITANX", "6.1"},
      {"QUADROP", "6.1"},
      {"M60", "5.2"}, {"M40", "5.2"}, {"M10", "5.0"}, {"GTX9", "5.2"}, {"GTX750", "5.0"},
      {"K80", "3.7"}, {"K40", "3.5"}, {"K20", "3.5"}, {"K10", "3.0"}, {"GTX7", "3.0"}, {"GTX6", "3.0"},
      {"K520", "3.0"},
  }};
  std::string key;
  for (const char c : name)
    if (c != ' ' && c != '-' && c != '_') key.push_back(static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c));
  // A pattern must begin where the model does, after the brand words, never
  // inside another model number ("SXM4" holds no "M4", "RTX4090" no "X4").
  constexpr std::array<std::string_view, 4> brands = {"NVIDIA", "TESLA", "GEFORCE", "GRID"};
  std::string_view product = key;
  for (bool stripped = true; stripped;) {
    stripped = false;
    for (std::string_view b : brands)
      if (product.starts_with(b) && product.size() > b.size()) {
        product.remove_prefix(b.size());
        stripped = true;
      }
  }
  // "RTX 2000 Ada Generation", "RTX 5000 Ada": the generation word decides,
  // not the number that other families share.
  if (product.find("ADAGENERATION") != std::string_view::npos || product.ends_with("ADA")) return "8.9";
  for (const auto& f : families)
    if (product.starts_with(f.pattern)) return f.capability;
  return {};
}

}  // namespace hwaccel::parsers
