// ROCm backend, KFD side: parsers for the KFD topology files and the reader
// of /sys/class/kfd/kfd/topology.
module;
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.detectors;

namespace hwaccel::parsers {
namespace {

using U64 = std::optional<std::uint64_t>;

// "key value" lines. The kernel prints one pair per line with a single
// space; captures have been seen NUL-padded to a page, so every line is
// trimmed (text::trim strips NULs) and keys are matched exactly.
template <class Fields, class OnInvalid>
void parse_key_values(std::string_view text, const Fields& fields, OnInvalid&& on_invalid) {
  while (!text.empty()) {
    const std::string_view line = text::trim(text::next_line(text));
    if (line.empty()) continue;
    std::string_view rest = line;
    const std::string_view key = text::next_token(rest, ' ');
    const std::string_view value = text::trim(rest);
    for (const auto& [name, slot] : fields) {
      if (key != name) continue;
      if (const auto v = text::parse_u64(value)) *slot = *v;
      else on_invalid(name);
      break;
    }
  }
}

}  // namespace

KfdNodeProperties parse_kfd_node_properties(std::string_view text) {
  KfdNodeProperties p;
  const std::array<std::pair<std::string_view, U64*>, 19> fields = {{
      {"cpu_cores_count", &p.cpu_cores_count},
      {"simd_count", &p.simd_count},
      {"mem_banks_count", &p.mem_banks_count},
      {"array_count", &p.array_count},
      {"simd_arrays_per_engine", &p.simd_arrays_per_engine},
      {"cu_per_simd_array", &p.cu_per_simd_array},
      {"simd_per_cu", &p.simd_per_cu},
      {"wave_front_size", &p.wave_front_size},
      {"gfx_target_version", &p.gfx_target_version},
      {"vendor_id", &p.vendor_id},
      {"device_id", &p.device_id},
      {"location_id", &p.location_id},
      {"domain", &p.domain},
      {"drm_render_minor", &p.drm_render_minor},
      {"hive_id", &p.hive_id},
      {"unique_id", &p.unique_id},
      {"num_xcc", &p.num_xcc},
      {"local_mem_size", &p.local_mem_size},
      {"max_engine_clk_fcompute", &p.max_engine_clk_fcompute},
  }};
  parse_key_values(text, fields, [&](std::string_view key) {
    if (std::find(p.invalid_keys.begin(), p.invalid_keys.end(), key) == p.invalid_keys.end())
      p.invalid_keys.emplace_back(key);
  });
  // A value that failed to parse after a good one must not leave the good one.
  for (const auto& key : p.invalid_keys)
    for (const auto& [name, slot] : fields)
      if (key == name) slot->reset();
  return p;
}

KfdLink parse_kfd_link(std::string_view text) {
  KfdLink l;
  const std::array<std::pair<std::string_view, U64*>, 6> fields = {{
      {"type", &l.type},
      {"node_from", &l.node_from},
      {"node_to", &l.node_to},
      {"weight", &l.weight},
      {"min_bandwidth", &l.min_bandwidth_mbps},
      {"max_bandwidth", &l.max_bandwidth_mbps},
  }};
  std::vector<std::string_view> invalid;
  parse_key_values(text, fields, [&](std::string_view key) { invalid.push_back(key); });
  for (const auto key : invalid)
    for (const auto& [name, slot] : fields)
      if (key == name) slot->reset();
  return l;
}

KfdMemBank parse_kfd_mem_bank(std::string_view text) {
  KfdMemBank b;
  const std::array<std::pair<std::string_view, U64*>, 4> fields = {{
      {"heap_type", &b.heap_type},
      {"size_in_bytes", &b.size_in_bytes},
      {"width", &b.width_bits},
      {"mem_clk_max", &b.mem_clk_max_mhz},
  }};
  std::vector<std::string_view> invalid;
  parse_key_values(text, fields, [&](std::string_view key) { invalid.push_back(key); });
  for (const auto key : invalid)
    for (const auto& [name, slot] : fields)
      if (key == name) slot->reset();
  return b;
}

std::optional<std::string> gfx_target_name(std::uint64_t version) {
  // HSA encodes the target as major * 10000 + minor * 100 + stepping, with
  // minor and stepping written as one hex digit each in the target name.
  const std::uint64_t major = version / 10000;
  const std::uint64_t minor = (version / 100) % 100;
  const std::uint64_t stepping = version % 100;
  if (major == 0 || major > 99 || minor > 15 || stepping > 15) return std::nullopt;
  constexpr std::string_view hex = "0123456789abcdef";
  return text::cat("gfx", major, hex[minor], hex[stepping]);
}

std::string_view gfx_architecture(std::string_view gfx) noexcept {
  // Exact gfx9 targets: the same major covers GCN5, CDNA and CDNA2/3/4.
  constexpr std::array<std::pair<std::string_view, std::string_view>, 12> exact = {{
      {"gfx900", "GCN5"},  {"gfx902", "GCN5"},   {"gfx904", "GCN5"},  {"gfx906", "GCN5.1"},
      {"gfx909", "GCN5"},  {"gfx90c", "GCN5"},   {"gfx908", "CDNA"},  {"gfx90a", "CDNA2"},
      {"gfx940", "CDNA3"}, {"gfx941", "CDNA3"},  {"gfx942", "CDNA3"}, {"gfx950", "CDNA4"},
  }};
  for (const auto& [target, arch] : exact)
    if (gfx == target) return arch;
  if (gfx.size() != 7) return {};
  constexpr std::array<std::pair<std::string_view, std::string_view>, 5> families = {{
      {"gfx101", "RDNA"}, {"gfx103", "RDNA2"}, {"gfx110", "RDNA3"}, {"gfx115", "RDNA3.5"}, {"gfx120", "RDNA4"},
  }};
  for (const auto& [prefix, arch] : families)
    if (gfx.starts_with(prefix)) return arch;
  return {};
}

std::optional<PciAddress> kfd_pci_address(std::optional<std::uint64_t> domain,
                                          std::optional<std::uint64_t> location_id) noexcept {
  if (!location_id || *location_id > 0xffff) return std::nullopt;
  if (domain && *domain > 0xffffffffu) return std::nullopt;
  PciAddress a;
  a.domain = static_cast<std::uint32_t>(domain.value_or(0));
  a.bus = static_cast<std::uint8_t>(*location_id >> 8);
  a.device = static_cast<std::uint8_t>((*location_id >> 3) & 0x1f);
  a.function = static_cast<std::uint8_t>(*location_id & 0x7);
  return a;
}

std::optional<std::uint32_t> xgmi_hops_from_weight(std::uint64_t weight) noexcept {
  constexpr std::uint64_t per_hop = 15, intra_package = 13;
  if (weight == intra_package) return 0u;
  if (weight == 0 || weight > 15 * 64) return std::nullopt;
  if (weight % per_hop == 0) return static_cast<std::uint32_t>(weight / per_hop);
  if (weight > 2 * intra_package && (weight - 2 * intra_package) % per_hop == 0)
    return static_cast<std::uint32_t>((weight - 2 * intra_package) / per_hop);
  return std::nullopt;
}

std::optional<std::uint32_t> partitions_in_mode(std::string_view mode, std::uint32_t xcd_count) noexcept {
  if (mode == "SPX") return 1u;
  if (mode == "DPX") return 2u;
  if (mode == "TPX") return 3u;
  if (mode == "QPX") return 4u;
  if (mode == "CPX" && xcd_count > 0) return xcd_count;
  return std::nullopt;
}

std::optional<std::uint64_t> KfdNode::frame_buffer_bytes() const noexcept {
  std::optional<std::uint64_t> sum;
  for (const auto& bank : mem_banks)
    if (bank.size_in_bytes && (bank.heap_type == 1u || bank.heap_type == 2u)) sum = sum.value_or(0) + *bank.size_in_bytes;
  return sum;
}

std::optional<std::uint64_t> KfdNode::bank_bytes() const noexcept {
  std::optional<std::uint64_t> sum;
  for (const auto& bank : mem_banks)
    if (bank.size_in_bytes) sum = sum.value_or(0) + *bank.size_in_bytes;
  return sum;
}

namespace {

constexpr std::string_view kfd_nodes_dir = "/sys/class/kfd/kfd/topology/nodes";
// A properties file is well under 2 KiB; a page-padded capture is 4 KiB.
constexpr std::size_t properties_cap = 64 * 1024;

// Reads one topology file; problems other than "not found" are warnings.
std::optional<std::string> read_topology_file(const DetectContext& ctx, DetectorOutput& out, const std::string& path) {
  auto content = ctx.system().read_file(path, properties_cap);
  if (!content) {
    if (content.error().kind != ErrorKind::not_found) ctx.warn(out, content.error());
    return std::nullopt;
  }
  if (content->truncated)
    ctx.warn(out, WarningKind::truncated, text::cat(path, ": longer than ", properties_cap, " bytes; read the start only"));
  return std::move(content->data);
}

// Numbered subfolders (io_links/0, io_links/1, ...) in numeric order.
std::vector<std::string> numbered_entries(const System& sys, const std::string& dir) {
  std::vector<std::string> names;
  for (auto& name : list_names(sys, dir))
    if (text::parse_name_number(name)) names.push_back(std::move(name));
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) { return natural_less(a, b); });
  return names;
}

std::vector<KfdLink> read_links(const DetectContext& ctx, DetectorOutput& out, const std::string& dir) {
  std::vector<KfdLink> links;
  for (const auto& name : numbered_entries(ctx.system(), dir))
    if (const auto text = read_topology_file(ctx, out, text::cat(dir, "/", name, "/properties")))
      links.push_back(parse_kfd_link(*text));
  return links;
}

}  // namespace

KfdTopology read_kfd_topology(const DetectContext& ctx, DetectorOutput& out) {
  KfdTopology topo;
  const System& sys = ctx.system();
  auto entries = sys.list_dir(kfd_nodes_dir);
  if (!entries) {
    // Absent: no amdgpu, or amdgpu built without KFD. Anything else is worth saying.
    if (entries.error().kind != ErrorKind::not_found) ctx.warn(out, entries.error());
    return topo;
  }
  topo.present = true;
  for (const auto& entry : *entries) {
    const auto id = text::parse_name_number(entry.name);
    if (!id) continue;
    const std::string dir = text::cat(kfd_nodes_dir, "/", entry.name);
    const auto properties = read_topology_file(ctx, out, dir + "/properties");
    if (!properties) {
      ctx.warn(out, WarningKind::io_error, dir + "/properties cannot be read; KFD node " + entry.name + " is skipped");
      continue;
    }
    KfdNode node;
    node.id = *id;
    node.properties = parse_kfd_node_properties(*properties);
    if (!node.properties.invalid_keys.empty()) {
      std::string keys;
      for (const auto& k : node.properties.invalid_keys) keys += (keys.empty() ? "" : ", ") + k;
      ctx.warn(out, WarningKind::parse_error, text::cat(dir, "/properties: ", keys, " not a decimal integer; ignored"));
    }
    if (!node.properties.is_gpu()) {
      topo.nodes.push_back(std::move(node));
      continue;
    }
    node.address = kfd_pci_address(node.properties.domain, node.properties.location_id);
    if (!node.address)
      ctx.warn(out, WarningKind::parse_error,
               text::cat(dir, "/properties: GPU node without a valid location_id; it cannot be joined to its PCI device"));
    if (const auto gpu_id = read_topology_file(ctx, out, dir + "/gpu_id")) {
      if (const auto v = text::parse_u64(*gpu_id); v && *v <= 0xffffffffu) node.gpu_id = static_cast<std::uint32_t>(*v);
    }
    node.io_links = read_links(ctx, out, dir + "/io_links");
    node.p2p_links = read_links(ctx, out, dir + "/p2p_links");
    for (const auto& bank : numbered_entries(sys, dir + "/mem_banks"))
      if (const auto text = read_topology_file(ctx, out, text::cat(dir, "/mem_banks/", bank, "/properties")))
        node.mem_banks.push_back(parse_kfd_mem_bank(*text));
    topo.nodes.push_back(std::move(node));
  }
  std::sort(topo.nodes.begin(), topo.nodes.end(), [](const KfdNode& a, const KfdNode& b) { return a.id < b.id; });
  return topo;
}

}  // namespace hwaccel::parsers
