// Registries of hypothetical devices from the published-spec table
// ("8xH100-SXM-80GB+2xRTX-4090"), for planning hardware one does not have.
module;
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>
module hwaccel.plan;

namespace hwaccel {
namespace {

constexpr std::uint64_t max_hypothetical_devices = 1'000'000;

struct Item {
  std::uint64_t count = 1;
  const DeviceSpec* spec = nullptr;
  std::uint64_t memory_bytes = 0;
};

std::string spec_names() {
  std::string names;
  for (const auto& s : device_specs()) {
    if (!names.empty()) names += ", ";
    names += s.name;
  }
  return names;
}

Result<Item> parse_item(std::string_view text_item) {
  std::string_view s = text::trim(text_item);
  Item item;
  std::size_t digits = 0;
  while (digits < s.size() && s[digits] >= '0' && s[digits] <= '9') ++digits;
  if (digits > 0) {
    std::string_view rest = text::trim(s.substr(digits));
    if (rest.empty() || (rest.front() != 'x' && rest.front() != 'X' && rest.front() != '*'))
      return fail(ErrorKind::invalid_input,
                  text::cat("device spec '", text::excerpt(s), "' must read COUNTxNAME, e.g. 8xH100-SXM-80GB"));
    const auto n = text::parse_u64(s.substr(0, digits));
    if (!n || *n == 0 || *n > max_hypothetical_devices)
      return fail(ErrorKind::invalid_input, text::cat("device count in '", text::excerpt(s), "' must be 1..",
                                                      max_hypothetical_devices));
    item.count = *n;
    s = text::trim(rest.substr(1));
  }
  if (s.empty()) return fail(ErrorKind::invalid_input, "empty device name in --devices");
  item.spec = find_spec(s);
  if (item.spec) {
    item.memory_bytes = item.spec->memory_bytes;
    return item;
  }
  // Unified-memory parts come in several sizes: "M2-Ultra-192GB".
  const auto dash = s.rfind('-');
  if (dash != std::string_view::npos && s.size() > dash + 3 && text::iequals(s.substr(s.size() - 2), "GB")) {
    const auto gb = text::parse_u64(s.substr(dash + 1, s.size() - dash - 3));
    if (const DeviceSpec* base = find_spec(s.substr(0, dash)); base && gb) {
      for (auto option : base->memory_options_gib)
        if (option != 0 && option == *gb) {
          item.spec = base;
          item.memory_bytes = *gb * 1024ull * 1024 * 1024;
          return item;
        }
      std::string sizes;
      for (auto option : base->memory_options_gib)
        if (option != 0) sizes += text::cat(sizes.empty() ? "" : ", ", option, "GB");
      return fail(ErrorKind::invalid_input, text::cat(base->name, " is not sold with ", *gb, " GB",
                                                      sizes.empty() ? std::string() : text::cat(" (sizes: ", sizes, ")")));
    }
  }
  return fail(ErrorKind::invalid_input,
              text::cat("unknown device '", text::excerpt(s), "' (see `hwaccel specs`): ", spec_names()));
}

std::string interconnect_kind(const FabricSpec& f) {
  if (f.kind == "nvlink") {
    if (text::icontains(f.name, "NVSwitch")) return "nvswitch";
    if (text::icontains(f.name, "bridge")) return "nvlink_bridge";
    return "nvlink";
  }
  if (f.kind == "xgmi") return "xgmi_hive";
  return std::string(f.kind);
}

}  // namespace

Result<AcceleratorRegistry> hypothetical_registry(std::string_view devices) {
  std::vector<Item> items;
  std::uint64_t total = 0;
  std::string_view rest = devices;
  bool more = !text::trim(devices).empty();
  while (more) {
    const std::size_t cut = rest.find_first_of("+,");
    std::string_view piece = rest.substr(0, cut);
    more = cut != std::string_view::npos;
    rest = more ? rest.substr(cut + 1) : std::string_view{};
    if (text::trim(piece).empty()) return fail(ErrorKind::invalid_input, "empty entry in --devices");
    auto item = parse_item(piece);
    if (!item) return fail(item.error());
    total += item->count * item->spec->devices_per_package;
    if (total > max_hypothetical_devices)
      return fail(ErrorKind::invalid_input, text::cat("more than ", max_hypothetical_devices, " devices"));
    items.push_back(*item);
  }
  if (items.empty()) return fail(ErrorKind::invalid_input, "no devices given (e.g. --devices 8xH100-SXM-80GB)");
  Inventory inv;
  inv.devices.reserve(total);
  std::uint32_t next_index[backend_count] = {};
  for (const auto& item : items) {
    const DeviceSpec& spec = *item.spec;
    const std::size_t first = inv.devices.size();
    for (std::uint64_t n = 0; n < item.count * spec.devices_per_package; ++n) {
      DeviceProfile d;
      d.backend = spec.backend;
      d.family = spec.family;
      d.index = next_index[static_cast<std::size_t>(spec.backend)]++;
      d.id = device_id(d.backend, d.index);
      d.name = std::string(spec.product);
      d.vendor = std::string(spec.vendor);
      d.memory_bytes = item.memory_bytes;  // specs are per device (per GCD for MI250X)
      d.memory_kind = spec.memory_kind;
      if (!spec.compute_capability.empty()) d.compute_capability = std::string(spec.compute_capability);
      if (!spec.architecture.empty()) d.architecture = std::string(spec.architecture);
      d.runtime_index = d.index;
      d.spec_id = std::string(spec.id);
      d.properties.emplace("hypothetical", "true");
      inv.devices.push_back(std::move(d));
    }
    // Devices of one product share its fabric in domains of its usual size.
    if (spec.fabric && spec.fabric->domain_size >= 2) {
      const std::size_t last = inv.devices.size();
      for (std::size_t start = first; start + 1 < last; start += spec.fabric->domain_size) {
        Interconnect ic;
        ic.kind = interconnect_kind(*spec.fabric);
        ic.name = std::string(spec.fabric->name);
        for (std::size_t i = start; i < last && i < start + spec.fabric->domain_size; ++i)
          ic.device_ids.push_back(inv.devices[i].id);
        ic.bandwidth_gbps = spec.fabric->bandwidth_gbps;
        ic.source = text::cat("published spec ", spec.id, " (hypothetical devices)");
        inv.interconnects.push_back(std::move(ic));
      }
    }
  }
  return AcceleratorRegistry(std::move(inv));
}

}  // namespace hwaccel
