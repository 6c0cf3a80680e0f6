// Prometheus service discovery (file_sd and http_sd) from a fleet document.
module;
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>
module hwaccel.fleet;

namespace hwaccel {

namespace {

std::string comma_list(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

}  // namespace

std::string prometheus_targets(const Fleet& fleet, std::uint16_t port, bool pretty) {
  json::Writer w(pretty, 256 + fleet.nodes.size() * 256);
  w.begin_array();
  for (const FleetNode& node : fleet.nodes) {
    if (!node.registry) continue;
    std::set<std::string> backends, models, specs;
    std::uint64_t accelerators = 0;
    for (const auto& d : node.registry->devices()) {
      if (d.family == Family::cpu) continue;
      ++accelerators;
      backends.insert(std::string(to_string(d.backend)));
      if (!d.name.empty()) models.insert(d.name);
      if (d.spec_id) specs.insert(*d.spec_id);
    }
    // An IPv6 literal needs its brackets in a target.
    const bool ipv6 = node.host.find(':') != std::string::npos && !node.host.starts_with('[');
    w.begin_object();
    w.key("targets").begin_array();
    w.value(text::cat(ipv6 ? "[" : "", node.host, ipv6 ? "]" : "", ":", port));
    w.end_array();
    w.key("labels").begin_object();
    w.field("host", node.host);
    w.field("backends", comma_list(backends));
    w.field("accelerators", std::to_string(accelerators));
    w.field("accelerator_models", comma_list(models));
    w.field("spec_ids", comma_list(specs));
    w.end_object();
    w.end_object();
  }
  w.end_array();
  return std::move(w).document();
}

}  // namespace hwaccel
