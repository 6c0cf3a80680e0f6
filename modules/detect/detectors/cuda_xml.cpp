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
module hwaccel.detectors;

#include "nvidia_smi_values.hpp"

namespace hwaccel::parsers {

using namespace nvidia_smi;

namespace {

// The text of a leaf, with nvidia-smi's placeholders gone.
std::optional<std::string_view> leaf(const pugi::xml_node& parent, const char* path) {
  const pugi::xml_node node = parent.first_element_by_path(path);
  return node ? nvidia_smi_value(node.text().get()) : std::nullopt;
}

NvidiaMigDevice mig_device(const pugi::xml_node& node, std::uint32_t position, ValueReader& read) {
  NvidiaMigDevice m;
  m.index = read.integer("MIG index", leaf(node, "index"), 0, 1024).value_or(position);
  m.gpu_instance_id = read.integer("MIG gpu_instance_id", leaf(node, "gpu_instance_id"), 0, 1u << 20);
  m.compute_instance_id = read.integer("MIG compute_instance_id", leaf(node, "compute_instance_id"), 0, 1u << 20);
  m.multiprocessors =
      read.integer("MIG multiprocessor_count", leaf(node, "device_attributes/shared/multiprocessor_count"), 0, 1u << 16);
  m.memory_bytes = read.memory("MIG fb_memory_usage/total", leaf(node, "fb_memory_usage/total"), "MiB");
  m.memory_used_bytes = read.memory("MIG fb_memory_usage/used", leaf(node, "fb_memory_usage/used"), "MiB");
  m.memory_free_bytes = read.memory("MIG fb_memory_usage/free", leaf(node, "fb_memory_usage/free"), "MiB");
  m.uuid = text::owned(leaf(node, "uuid"));
  if (const auto profile = leaf(node, "profile_name")) m.profile = std::string(*profile);
  return m;
}

// The same fields, names and ranges as the `-q` text reader.
NvidiaGpu gpu_of(const pugi::xml_node& node, std::uint32_t index, const std::optional<std::string>& driver,
                 ValueReader& read) {
  NvidiaGpu g;
  g.index = index;
  g.name = std::string(leaf(node, "product_name").value_or(""));
  g.uuid = text::owned(leaf(node, "uuid"));
  const pugi::xml_node pci = node.child("pci");
  if (const auto bus = leaf(pci, "pci_bus_id")) g.bus_id = PciAddress::parse(*bus);
  if (!g.bus_id)
    if (const auto id = node.attribute("id"); !id.empty()) g.bus_id = PciAddress::parse(id.value());
  g.pci_device_id = device_id_of(leaf(pci, "pci_device_id"));
  g.memory_total_bytes = read.memory("fb_memory_usage/total", leaf(node, "fb_memory_usage/total"), "MiB");
  g.memory_used_bytes = read.memory("fb_memory_usage/used", leaf(node, "fb_memory_usage/used"), "MiB");
  g.memory_free_bytes = read.memory("fb_memory_usage/free", leaf(node, "fb_memory_usage/free"), "MiB");
  g.architecture = text::owned(leaf(node, "product_architecture"));
  g.driver_version = driver;
  g.vbios_version = text::owned(leaf(node, "vbios_version"));
  g.mig_enabled = enabled_flag(leaf(node, "mig_mode/current_mig"));
  g.compute_mode = text::owned(leaf(node, "compute_mode"));
  g.ecc_enabled = enabled_flag(leaf(node, "ecc_mode/current_ecc"));
  g.addressing_mode = text::owned(leaf(node, "addressing_mode"));
  // R535 moved the readings to <gpu_power_readings> and renamed the limit.
  const pugi::xml_node power = node.child("gpu_power_readings") ? node.child("gpu_power_readings") : node.child("power_readings");
  const auto draw = leaf(power, "power_draw");
  g.power_draw_watts = read.number("power_draw", draw ? draw : leaf(power, "instant_power_draw"), 0, 10000, "W");
  const auto limit = leaf(power, "power_limit");
  g.power_limit_watts = read.number("power_limit", limit ? limit : leaf(power, "current_power_limit"), 0, 10000, "W");
  if (!g.power_limit_watts)
    g.power_limit_watts = read.number("enforced_power_limit", leaf(power, "enforced_power_limit"), 0, 10000, "W");
  g.temperature_c = read.number("gpu_temp", leaf(node, "temperature/gpu_temp"), -100, 250, "C");
  g.slowdown_temperature_c =
      read.number("gpu_temp_slow_threshold", leaf(node, "temperature/gpu_temp_slow_threshold"), -100, 250, "C");
  g.shutdown_temperature_c =
      read.number("gpu_temp_max_threshold", leaf(node, "temperature/gpu_temp_max_threshold"), -100, 250, "C");
  NvidiaTlimit{read.number("gpu_temp_tlimit", leaf(node, "temperature/gpu_temp_tlimit"), -250, 250, "C"),
               read.number("gpu_temp_slow_tlimit_threshold", leaf(node, "temperature/gpu_temp_slow_tlimit_threshold"),
                           -250, 250, "C"),
               read.number("gpu_temp_max_tlimit_threshold", leaf(node, "temperature/gpu_temp_max_tlimit_threshold"),
                           -250, 250, "C")}
      .apply(g);
  g.utilization_percent = read.number("gpu_util", leaf(node, "utilization/gpu_util"), 0, 100, "%");
  g.max_memory_clock_mhz = read.number("max_clocks/mem_clock", leaf(node, "max_clocks/mem_clock"), 0, 100000, "MHz");
  const pugi::xml_node link = pci.child("pci_gpu_link_info");
  g.pcie_generation_current = read.integer("current_link_gen", leaf(link, "pcie_gen/current_link_gen"), 1, 8);
  g.pcie_generation_max = read.integer("max_link_gen", leaf(link, "pcie_gen/max_link_gen"), 1, 8);
  g.pcie_width_current = read.integer("current_link_width", leaf(link, "link_widths/current_link_width"), 1, 64);
  g.pcie_width_max = read.integer("max_link_width", leaf(link, "link_widths/max_link_width"), 1, 64);
  std::uint32_t position = 0;
  for (const pugi::xml_node m : node.child("mig_devices").children("mig_device"))
    g.mig_devices.push_back(mig_device(m, position++, read));
  for (const pugi::xml_node p : node.child("processes").children("process_info")) {
    if (g.processes.size() >= max_processes) break;
    NvidiaProcess process;
    process.pid = read.integer("process pid", leaf(p, "pid"), 1, 1u << 30).value_or(0);
    if (process.pid == 0) continue;
    process.type = std::string(leaf(p, "type").value_or(""));
    process.name = std::string(leaf(p, "process_name").value_or(""));
    process.memory_used_bytes = read.memory("process used_memory", leaf(p, "used_memory"), "MiB");
    process.gpu_instance_id = read.integer("process gpu_instance_id", leaf(p, "gpu_instance_id"), 0, 1u << 20);
    process.compute_instance_id = read.integer("process compute_instance_id", leaf(p, "compute_instance_id"), 0, 1u << 20);
    g.processes.push_back(std::move(process));
  }
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
  const auto driver = text::owned(leaf(root, "driver_version"));
  std::uint32_t index = 0;
  for (const pugi::xml_node gpu : root.children("gpu")) {
    if (table.gpus.size() >= max_gpus) break;
    ValueReader read(table.problems, text::cat("<gpu> ", index));
    NvidiaGpu g = gpu_of(gpu, index++, driver, read);
    if (g.name.empty() && !g.uuid && !g.bus_id) {
      add_problem(table.problems, WarningKind::parse_error,
                  text::cat("<gpu> element ", index - 1, " names no product, UUID or bus id; left out"));
      continue;
    }
    table.gpus.push_back(std::move(g));
  }
  if (table.gpus.empty()) return fail(ErrorKind::parse_error, "the report describes no GPU (no usable <gpu> element)");
  ValueReader read(table.problems, "<attached_gpus>");
  if (const auto attached = read.integer("attached_gpus", leaf(root, "attached_gpus"), 0, max_gpus);
      attached && *attached != index)
    add_problem(table.problems, WarningKind::inconsistent,
                text::cat("the report says ", *attached, " attached GPU(s) and describes ", index));
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
