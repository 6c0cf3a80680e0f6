// Names of the hardware enums, PCI addresses and PCIe link arithmetic.
module;
#include <array>
#include <cstdint>
#include <optional>
#include <ranges>
#include <string>
#include <string_view>
module hwaccel.hardware;

namespace hwaccel {
namespace {

template <class Enum, std::size_t N>
constexpr std::string_view name_of(const std::array<std::string_view, N>& names, Enum e) noexcept {
  const auto i = static_cast<std::size_t>(e);
  return i < N ? names[i] : std::string_view{"unknown"};
}

template <class Enum, std::size_t N>
Result<Enum> enum_of(const std::array<std::string_view, N>& names, std::string_view s, std::string_view what) {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == s) return static_cast<Enum>(i);
  return fail(unknown_name(what, s, text::join(names)));
}

constexpr std::array<std::string_view, 5> family_names = {"cpu", "gpu", "npu", "tpu", "asic"};
constexpr std::array<std::string_view, 3> memory_kind_names = {"dedicated", "unified", "carve_out"};
constexpr std::array<std::string_view, 8> link_kind_names = {
    "nvlink", "xgmi", "ici", "neuronlink", "pcie_switch", "host_bridge", "numa_node", "system"};
constexpr std::array<std::string_view, 6> storage_kind_names = {"nvme", "ssd", "hdd", "virtio", "network", "unknown"};
constexpr std::array<std::string_view, 12> warning_kind_names = {
    "tool_missing", "tool_failed",   "timeout",   "parse_error", "io_error",    "permission_denied",
    "not_captured", "truncated",     "degraded",  "inconsistent", "unsupported", "invalid_value"};

constexpr int hex_digit(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Parses exactly `s` as hex into value <= max.
constexpr bool parse_hex_field(std::string_view s, std::uint32_t max, std::uint32_t& value) noexcept {
  if (s.empty() || s.size() > 8) return false;
  std::uint64_t v = 0;
  for (char c : s) {
    const int d = hex_digit(c);
    if (d < 0) return false;
    v = v * 16 + static_cast<std::uint64_t>(d);
  }
  if (v > max) return false;
  value = static_cast<std::uint32_t>(v);
  return true;
}

}  // namespace

std::string_view to_string(Backend b) noexcept {
  const auto i = static_cast<std::size_t>(b);
  return i < backend_count ? backend_table[i].second : std::string_view{"unknown"};
}
Result<Backend> parse_backend(std::string_view s) {
  for (const auto& [backend, name] : backend_table)
    if (name == s) return backend;
  return fail(unknown_name("backend", s, text::join(backend_table | std::views::values)));
}
std::string_view to_string(Family f) noexcept { return name_of(family_names, f); }
Result<Family> parse_family(std::string_view s) { return enum_of<Family>(family_names, s, "device family"); }
std::string_view to_string(MemoryKind k) noexcept { return name_of(memory_kind_names, k); }
Result<MemoryKind> parse_memory_kind(std::string_view s) { return enum_of<MemoryKind>(memory_kind_names, s, "memory kind"); }
std::string_view to_string(LinkKind k) noexcept { return name_of(link_kind_names, k); }
Result<LinkKind> parse_link_kind(std::string_view s) { return enum_of<LinkKind>(link_kind_names, s, "link kind"); }
std::string_view to_string(StorageKind k) noexcept { return name_of(storage_kind_names, k); }
Result<StorageKind> parse_storage_kind(std::string_view s) { return enum_of<StorageKind>(storage_kind_names, s, "storage kind"); }
std::string_view to_string(WarningKind k) noexcept { return name_of(warning_kind_names, k); }
Result<WarningKind> parse_warning_kind(std::string_view s) { return enum_of<WarningKind>(warning_kind_names, s, "warning kind"); }

Family default_family(Backend b) noexcept {
  switch (b) {
    case Backend::cpu: return Family::cpu;
    case Backend::cuda:
    case Backend::rocm:
    case Backend::apple:
    case Backend::vulkan:
    case Backend::intel_oneapi:
    case Backend::dxgi: return Family::gpu;
    case Backend::intel_npu:
    case Backend::amd_xdna:
    case Backend::samsung_npu:
    case Backend::mediatek_apu: return Family::npu;
    case Backend::tpu: return Family::tpu;
    case Backend::gaudi:
    case Backend::aws_neuron:
    case Backend::qualcomm:
    case Backend::cerebras:
    case Backend::graphcore:
    case Backend::groq:
    case Backend::plugin: return Family::asic;
  }
  return Family::asic;
}

std::string device_id(Backend backend, std::uint32_t index) {
  std::string id(to_string(backend));
  id.push_back(':');
  text::append_uint(id, index);
  return id;
}

std::optional<PciAddress> PciAddress::parse(std::string_view s) noexcept {
  s = text::trim(s);
  // [domain:]bus:device.function
  const auto dot = s.rfind('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const std::string_view fn = s.substr(dot + 1);
  std::string_view head = s.substr(0, dot);
  const auto colon2 = head.rfind(':');
  if (colon2 == std::string_view::npos) return std::nullopt;
  const std::string_view dev = head.substr(colon2 + 1);
  head = head.substr(0, colon2);
  const auto colon1 = head.rfind(':');
  const std::string_view bus = colon1 == std::string_view::npos ? head : head.substr(colon1 + 1);
  const std::string_view dom = colon1 == std::string_view::npos ? std::string_view{} : head.substr(0, colon1);
  std::uint32_t d = 0, b = 0, v = 0, f = 0;
  if (!dom.empty() && !parse_hex_field(dom, 0xffffffffu, d)) return std::nullopt;
  if (bus.size() > 2 || !parse_hex_field(bus, 0xff, b)) return std::nullopt;
  if (dev.size() > 2 || !parse_hex_field(dev, 0x1f, v)) return std::nullopt;
  if (fn.size() != 1 || !parse_hex_field(fn, 7, f)) return std::nullopt;
  return PciAddress{d, static_cast<std::uint8_t>(b), static_cast<std::uint8_t>(v), static_cast<std::uint8_t>(f)};
}

std::string PciAddress::to_string() const {
  constexpr char digits[] = "0123456789abcdef";
  std::string out;
  int domain_digits = 4;
  while (domain_digits < 8 && (domain >> (4 * domain_digits)) != 0) ++domain_digits;
  for (int i = domain_digits - 1; i >= 0; --i) out.push_back(digits[(domain >> (4 * i)) & 0xf]);
  out.push_back(':');
  out.push_back(digits[bus >> 4]);
  out.push_back(digits[bus & 0xf]);
  out.push_back(':');
  out.push_back(digits[device >> 4]);
  out.push_back(digits[device & 0xf]);
  out.push_back('.');
  out.push_back(digits[function & 0x7]);
  return out;
}

std::optional<std::uint32_t> pcie_generation(double gts) noexcept {
  // Nominal rates per generation; sysfs prints e.g. "2.5 GT/s", "16.0 GT/s".
  constexpr double rates[] = {2.5, 5.0, 8.0, 16.0, 32.0, 64.0, 128.0};
  for (std::uint32_t i = 0; i < std::size(rates); ++i)
    if (gts > rates[i] * 0.95 && gts < rates[i] * 1.05) return i + 1;
  return std::nullopt;
}

namespace {
std::optional<double> link_bandwidth(std::optional<double> gts, std::optional<std::uint32_t> width) noexcept {
  if (!gts || !width || *gts <= 0 || *width == 0) return std::nullopt;
  const auto gen = pcie_generation(*gts);
  double efficiency = 128.0 / 130.0;
  if (gen && *gen <= 2) efficiency = 8.0 / 10.0;
  else if (gen && *gen >= 6) efficiency = 242.0 / 256.0;
  return *gts * static_cast<double>(*width) * efficiency / 8.0;
}
}  // namespace

std::optional<std::uint32_t> PcieLink::current_generation() const noexcept {
  return current_speed_gts ? pcie_generation(*current_speed_gts) : std::nullopt;
}
std::optional<std::uint32_t> PcieLink::max_generation() const noexcept {
  return max_speed_gts ? pcie_generation(*max_speed_gts) : std::nullopt;
}
std::optional<double> PcieLink::current_bandwidth_gbps() const noexcept {
  return link_bandwidth(current_speed_gts, current_width);
}
std::optional<double> PcieLink::max_bandwidth_gbps() const noexcept {
  return link_bandwidth(max_speed_gts, max_width);
}

std::optional<PciIds> pci_id_property(const DeviceProfile& device) noexcept {
  const auto it = device.properties.find("pci_id");
  if (it == device.properties.end()) return std::nullopt;
  std::string_view rest = it->second;
  const auto vendor = text::parse_hex(text::next_token(rest, ':'));
  const auto device_id = text::parse_hex(rest);
  if (!vendor || !device_id || *vendor > 0xffff || *device_id > 0xffff) return std::nullopt;
  return PciIds{static_cast<std::uint16_t>(*vendor), static_cast<std::uint16_t>(*device_id)};
}

}  // namespace hwaccel
