// Registries of hypothetical devices from the published-spec table
// ("8xH100-SXM-80GB+2xRTX-4090"), for planning hardware one does not have.
module;
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.plan;
import :internals;


namespace hwaccel {
namespace {

constexpr std::uint64_t max_hypothetical_devices = 1'000'000;

struct Item {
  std::uint64_t count = 1;
  const DeviceSpec* spec = nullptr;
  std::uint64_t memory_bytes = 0;
};

std::string spec_names(const DeviceSpecSet& extra) {
  std::string names;
  for (const auto& s : device_specs()) {
    if (!names.empty()) names += ", ";
    names += s.name;
  }
  for (const auto& s : extra.specs()) names += text::cat(", ", s.name, " (", extra.origin(), ")");
  return names;
}

Result<Item> parse_item(std::string_view text_item, const DeviceSpecSet& extra) {
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
  item.spec = find_spec(s, extra);
  if (item.spec) {
    item.memory_bytes = item.spec->memory_bytes;
    return item;
  }
  // Unified-memory parts come in several sizes: "M2-Ultra-192GB".
  const auto dash = s.rfind('-');
  if (dash != std::string_view::npos && s.size() > dash + 3 && text::iequals(s.substr(s.size() - 2), "GB")) {
    const auto gb = text::parse_u64(s.substr(dash + 1, s.size() - dash - 3));
    if (const DeviceSpec* base = find_spec(s.substr(0, dash), extra); base && gb) {
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
              text::cat("unknown device '", text::excerpt(s), "' (see `hwaccel specs`): ", spec_names(extra)));
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
  return hypothetical_registry(devices, DeviceSpecSet());
}

Result<AcceleratorRegistry> hypothetical_registry(std::string_view devices, const DeviceSpecSet& extra) {
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
    auto item = parse_item(piece, extra);
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
    for (std::uint64_t n = 0; n < item.count * spec.devices_per_package; ++n)
      // specs are per device (per GCD for MI250X)
      inv.devices.push_back(
          hypothetical::device(spec, next_index[static_cast<std::size_t>(spec.backend)]++, item.memory_bytes));
    // Devices of one product share its fabric in domains of its usual size.
    if (spec.fabric) {
      Interconnect fabric;
      fabric.kind = interconnect_kind(*spec.fabric);
      fabric.name = std::string(spec.fabric->name);
      fabric.bandwidth_gbps = spec.fabric->bandwidth_gbps;
      fabric.source = extra.contains(&spec)
                          ? text::cat("device-spec file ", extra.origin(), ", entry ", spec.id, " (hypothetical devices)")
                          : text::cat("published spec ", spec.id, " (hypothetical devices)");
      hypothetical::join_in_domains(inv, first, inv.devices.size(), spec.fabric->domain_size, fabric);
    }
  }
  return AcceleratorRegistry(std::move(inv));
}

}  // namespace hwaccel
