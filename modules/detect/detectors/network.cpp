// Network probe: every port of every RDMA device under /sys/class/infiniband,
// with its state, rate, link layer, RoCE version, NIC PCI address and netdev.
module;
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.detectors;

namespace hwaccel {
namespace parsers {

std::optional<NumberedValue> parse_numbered_value(std::string_view text) noexcept {
  text = text::trim(text);
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const auto code = text::parse_u64(text.substr(0, colon));
  if (!code || *code > 0xffffffffu) return std::nullopt;
  return NumberedValue{static_cast<std::uint32_t>(*code), text::trim(text.substr(colon + 1))};
}

std::optional<double> parse_ib_rate(std::string_view text) noexcept {
  // The kernel prints "%d%s Gb/sec (%dX%s)" with ".5" for half rates
  // (2.5 Gb/sec SDR 1X); the signalling name after the width is optional.
  const auto n = text::parse_number_with_unit(text);
  if (!n || !n->unit.starts_with("Gb/sec")) return std::nullopt;
  if (!(n->value > 0) || n->value > 100000) return std::nullopt;
  return n->value;
}

}  // namespace parsers

namespace {

constexpr std::string_view class_dir = "/sys/class/infiniband";
// GID tables hold up to a few hundred entries; the RoCE v2 GIDs of the
// default addresses come first, so a bounded scan finds them.
constexpr std::size_t max_gid_entries_read = 64;

// node_type 4 is an iWARP RNIC (drivers/infiniband/core/sysfs.c node_type_show).
constexpr std::uint32_t node_type_rnic = 4;
// phys_state 5 is LinkUp; the rate of a port whose link is not up is a
// placeholder (the kernel falls back to SDR for an invalid speed).
constexpr std::uint32_t phys_state_link_up = 5;

std::vector<std::uint32_t> port_numbers(const std::vector<std::string>& names) {
  std::vector<std::uint32_t> ports;
  for (const auto& name : names)
    if (const auto n = text::parse_name_number(name); n && *n > 0 && *n <= 0xffff) ports.push_back(*n);
  std::sort(ports.begin(), ports.end());
  return ports;
}

std::vector<std::string> numeric_entries(const System& sys, const std::string& dir) {
  std::vector<std::string> names = list_names(sys, dir);
  std::erase_if(names, [](const std::string& n) { return !text::parse_u64(n); });
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) { return natural_less(a, b); });
  return names;
}

struct GidSummary {
  bool roce_v1 = false;
  bool roce_v2 = false;
  std::optional<std::string> netdev;
};

// The GID types of an Ethernet port ("IB/RoCE v1", "RoCE v2") and the netdev
// of its first populated GID. Unpopulated entries fail to read (EINVAL).
GidSummary read_gids(const System& sys, const std::string& port_dir) {
  GidSummary gids;
  const std::string types_dir = port_dir + "/gid_attrs/types";
  std::size_t read = 0;
  for (const auto& index : numeric_entries(sys, types_dir)) {
    if (++read > max_gid_entries_read) break;
    const auto type = read_text(sys, types_dir + "/" + index, 256);
    if (!type) continue;
    if (text::icontains(*type, "RoCE v2")) gids.roce_v2 = true;
    else if (text::icontains(*type, "v1")) gids.roce_v1 = true;
    if (!gids.netdev)
      if (auto ndev = read_text(sys, port_dir + "/gid_attrs/ndevs/" + index, 256); ndev && !ndev->empty())
        gids.netdev = std::move(*ndev);
    if (gids.roce_v2 && gids.netdev) break;
  }
  return gids;
}

// The netdev of a port from the NIC's net/ folder: the only one, or the one
// whose dev_port (0-based port) matches; mlx4 puts both ports on one function.
std::optional<std::string> netdev_of_port(const System& sys, const std::string& device_dir, std::uint32_t port) {
  const std::string net_dir = device_dir + "/device/net";
  const auto names = list_names(sys, net_dir);
  if (names.size() == 1) return names.front();
  for (const auto& name : names) {
    auto index = read_u64(sys, net_dir + "/" + name + "/dev_port");
    if (!index) index = read_u64(sys, net_dir + "/" + name + "/dev_id", 16);
    if (index && *index + 1 == port) return name;
  }
  return std::nullopt;
}

struct NicInfo {
  std::optional<PciAddress> address;
  std::optional<std::int32_t> numa_node;
  std::optional<std::string> driver;
  std::optional<std::uint32_t> node_type;
};

NicInfo read_nic(const DetectContext& ctx, DetectorOutput& out, const std::string& device_dir) {
  const System& sys = ctx.system();
  NicInfo nic;
  if (const auto type = read_text(sys, device_dir + "/node_type", 256)) {
    if (const auto parsed = parsers::parse_numbered_value(*type)) nic.node_type = parsed->code;
    else ctx.warn(out, WarningKind::parse_error,
                  text::cat(device_dir, "/node_type: expected \"<number>: <name>\", got \"", text::excerpt(*type), "\""));
  }
  // Software devices (rxe, siw) live under /sys/devices/virtual and have no PCI function.
  if (const auto resolved = resolve_path(sys, device_dir)) {
    if (const auto path = pci_path_of(*resolved)) {
      nic.address = path->chain.back();
      const PciFunction function = read_pci_function(sys, *nic.address);
      nic.numa_node = function.numa_node;
      nic.driver = function.driver;
    }
  }
  if (!nic.driver)
    if (const auto link = sys.read_link(device_dir + "/device/driver")) nic.driver = std::string(base_name(*link));
  return nic;
}

std::string kind_of(const NicInfo& nic, const std::optional<std::string>& link_layer, const GidSummary& gids) {
  if (nic.driver == "efa") return "efa";
  if (link_layer == "InfiniBand") return "infiniband";
  if (link_layer == "Ethernet") {
    if (nic.node_type == node_type_rnic) return "iwarp";
    if (gids.roce_v2) return "roce_v2";
    if (gids.roce_v1) return "roce_v1";
    return "roce";
  }
  if (nic.node_type == node_type_rnic) return "iwarp";
  return "unknown";
}

void read_port(const DetectContext& ctx, DetectorOutput& out, const std::string& device, const std::string& device_dir,
               const NicInfo& nic, std::uint32_t number) {
  const System& sys = ctx.system();
  const std::string dir = text::cat(device_dir, "/ports/", number);
  NetworkPort port;
  port.device = device;
  port.port = number;
  if (nic.address) port.pci_bus_id = nic.address->to_string();
  port.numa_node = nic.numa_node;
  port.driver = nic.driver;

  std::optional<std::uint32_t> state_code;
  if (auto content = sys.read_file(dir + "/state", 256)) {
    if (const auto state = parsers::parse_numbered_value(content->data); state && !state->name.empty()) {
      port.state = std::string(state->name);
      state_code = state->code;
    } else {
      ctx.warn(out, WarningKind::parse_error,
               text::cat(dir, "/state: expected \"<number>: <STATE>\", got \"", text::excerpt(text::trim(content->data)), "\""));
    }
  } else {
    ctx.warn(out, content.error());
  }
  std::optional<std::uint32_t> phys_code;
  if (const auto phys = read_text(sys, dir + "/phys_state", 256)) {
    if (const auto parsed = parsers::parse_numbered_value(*phys); parsed && !parsed->name.empty()) {
      port.phys_state = std::string(parsed->name);
      phys_code = parsed->code;
    } else {
      ctx.warn(out, WarningKind::parse_error,
               text::cat(dir, "/phys_state: expected \"<number>: <State>\", got \"", text::excerpt(*phys), "\""));
    }
  }
  port.link_layer = read_text(sys, dir + "/link_layer", 256);
  if (port.link_layer && port.link_layer->empty()) port.link_layer.reset();

  // ACTIVE (4), ARMED (3) and INIT (2) all have a trained link; without
  // phys_state, the logical state says whether the link is up.
  const bool link_up = phys_code ? *phys_code == phys_state_link_up : (state_code && *state_code >= 2 && *state_code <= 5);
  if (link_up) {
    if (auto rate = sys.read_file(dir + "/rate", 256)) {
      port.rate_gbps = parsers::parse_ib_rate(rate->data);
      if (!port.rate_gbps)
        ctx.warn(out, WarningKind::parse_error,
                 text::cat(dir, "/rate: expected \"<N> Gb/sec (<W>X <SPEED>)\", got \"", text::excerpt(text::trim(rate->data)), "\""));
    } else {
      ctx.warn(out, rate.error());
    }
  }

  GidSummary gids;
  if (port.link_layer != "InfiniBand") gids = read_gids(sys, dir);
  port.kind = kind_of(nic, port.link_layer, gids);
  port.netdev = gids.netdev ? std::move(gids.netdev) : netdev_of_port(sys, device_dir, number);
  out.network.push_back(std::move(port));
}

DetectorOutput detect_network(const DetectContext& ctx) {
  DetectorOutput out;
  const System& sys = ctx.system();
  auto devices = sys.list_dir(class_dir);
  if (!devices) {
    // No RDMA stack loaded is the common case, not a problem.
    if (devices.error().kind != ErrorKind::not_found) ctx.warn(out, devices.error());
    return out;
  }
  std::sort(devices->begin(), devices->end(),
            [](const DirEntry& a, const DirEntry& b) { return natural_less(a.name, b.name); });
  for (const auto& entry : *devices) {
    const std::string device_dir = text::cat(class_dir, "/", entry.name);
    const NicInfo nic = read_nic(ctx, out, device_dir);
    auto ports = sys.list_dir(device_dir + "/ports");
    if (!ports) {
      ctx.warn(out, ports.error());
      continue;
    }
    std::vector<std::string> names;
    for (auto& p : *ports) names.push_back(std::move(p.name));
    const auto numbers = port_numbers(names);
    if (numbers.empty())
      ctx.warn(out, WarningKind::parse_error, text::cat(device_dir, "/ports lists no numbered port"));
    for (const std::uint32_t number : numbers) read_port(ctx, out, entry.name, device_dir, nic, number);
  }
  return out;
}

}  // namespace

const Detector network_detector{"network", std::nullopt, {}, &detect_network};

}  // namespace hwaccel
