// The placement and capacity settings tables: what `hwaccel place` and
// `hwaccel plan --what-is-missing` (--busy, --fabric, --exact-max,
// --node-kind, --max-nodes) and Fleet.place / what_is_missing in Python set.
module;
#include <array>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
module hwaccel.place;

namespace hwaccel {

namespace {

using CapacityKey = SettingKey<CapacityOptions>;
using PlacementKey = SettingKey<PlacementOptions>;

// A list of busy nodes is at most a few MB, a placement result of a large
// fleet somewhat more.
constexpr std::uint64_t max_busy_file_bytes = std::uint64_t{64} << 20;

template <class Options>
Result<void> busy_into(Options& o, const SettingValue& v) {
  auto busy = read_busy(v.text);
  if (!busy) return fail(busy.error());
  o.busy = std::move(*busy);
  return {};
}

template <class Options>
Result<void> fabric_into(Options& o, const SettingValue& v) {
  auto fabric = parse_fabric(v.text);
  if (!fabric) return fail(fabric.error());
  o.fabric = std::move(*fabric);
  return {};
}

constexpr std::string_view busy_help =
    "Nodes or devices taken: HOST,HOST/cuda:0,... or a file (such a list, or `hwaccel place --json` output)";
constexpr std::string_view fabric_help =
    "Fabric between nodes: ib-400g, ib-8x400g, roce-200g, ethernet-100g, efa-32x100g (default: the nodes' own RDMA "
    "ports)";

constexpr std::array capacity_keys = {
    CapacityKey{"node-kind", SettingType::text, "", 0, 0, "",
                "The kind of node: 8xH100-SXM-80GB or a kind of the fleet (default: the devices, else the fleet's "
                "most common)",
                &store_text<&CapacityOptions::node_kind>},
    CapacityKey{"busy", SettingType::text, "", 0, 0, "", busy_help, &busy_into<CapacityOptions>},
    CapacityKey{"fabric", SettingType::text, "", 0, 0, "", fabric_help, &fabric_into<CapacityOptions>},
    CapacityKey{"max-nodes", SettingType::whole, "4096", 1, max_cluster_nodes, "", "The most nodes a plan is tried on",
                &store_whole<&CapacityOptions::max_nodes>},
};

constexpr std::array placement_keys = {
    PlacementKey{"busy", SettingType::text, "", 0, 0, "", busy_help, &busy_into<PlacementOptions>},
    PlacementKey{"fabric", SettingType::text, "", 0, 0, "", fabric_help, &fabric_into<PlacementOptions>},
    PlacementKey{"exact-max", SettingType::whole, "12", 0, max_exact_placement, "",
                 "Largest instance (replicas and nodes) searched exactly; larger ones use first-fit decreasing",
                 [](PlacementOptions& o, const SettingValue& v) -> Result<void> {
                   o.exact_max_replicas = o.exact_max_nodes = static_cast<std::size_t>(v.whole);
                   return {};
                 }},
    PlacementKey{"power-budget", SettingType::fraction, "", 0.001, 1e9, "",
                 "Kilowatts the placed replicas may draw on the whole fleet; replicas past it stay unplaced",
                 &store_fraction<&PlacementOptions::power_budget_kw>},
    PlacementKey{"node-power-budget", SettingType::fraction, "", 0.001, 1e6, "",
                 "Kilowatts the placed replicas may draw on each node",
                 &store_fraction<&PlacementOptions::node_power_budget_kw>},
};

}  // namespace

Result<BusyDevices> read_busy(std::string_view file_or_list) {
  std::error_code ec;
  const std::filesystem::path path(file_or_list);
  if (!file_or_list.empty() && std::filesystem::is_regular_file(path, ec)) {
    auto text = read_small_file(file_or_list, max_busy_file_bytes, "a busy list");
    if (!text) return fail(text.error());
    return parse_busy(*text);
  }
  return parse_busy(file_or_list);
}

std::span<const SettingKey<CapacityOptions>> capacity_setting_keys() noexcept { return capacity_keys; }
std::span<const SettingKey<PlacementOptions>> placement_setting_keys() noexcept { return placement_keys; }

Result<CapacityOptions> read_capacity_options(std::span<const Setting> values) {
  CapacityOptions options;
  if (auto r = read_settings(options, capacity_setting_keys(), values); !r) return fail(r.error());
  return options;
}

Result<PlacementOptions> read_placement_options(std::span<const Setting> values) {
  PlacementOptions options;
  if (auto r = read_settings(options, placement_setting_keys(), values); !r) return fail(r.error());
  return options;
}

}  // namespace hwaccel
