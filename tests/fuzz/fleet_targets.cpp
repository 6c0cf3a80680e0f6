// Fuzz targets for the fleet layer's readers: fleet documents, JSON lines of
// registries, host lists and command templates, and a whole machine described
// to the schedulers (NFD labels, gres.conf).
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.hpp"

import hwaccel;

#include "machine_text.hpp"

namespace hwaccel::fuzz {

void fleet_json(std::string_view, std::string_view input, Findings& findings) {
  const auto fleet = fleet_from_json(input);
  if (!fleet) return;
  for (const auto& node : fleet->nodes) {
    findings.check(!host_name_problem(node.host), "fleet JSON: a node with an invalid host name was accepted");
    findings.check(node.registry.has_value() || node.error.has_value(), "fleet JSON: a node with neither registry nor error");
  }
  const std::string once = to_json(*fleet);
  const auto reread = fleet_from_json(once);
  if (!findings.check(reread.has_value(), "fleet JSON: what to_json wrote does not read back")) return;
  findings.check(to_json(*reread) == once, "fleet JSON: a second round trip differs");
  findings.check(fleet_diff(*fleet, *reread).empty(), "fleet JSON: a round trip shows as a change");
  findings.check(fleet_check(*fleet, *reread).empty(), "fleet JSON: a round trip fails its own baseline check");
}

void fleet_lines(std::string_view, std::string_view input, Findings& findings) {
  const Fleet fleet = scan_lines(input);
  std::string previous;
  for (const auto& node : fleet.nodes) {
    findings.check(!host_name_problem(node.host), "JSON lines: a node with an invalid host name");
    findings.check(node.registry.has_value(), "JSON lines: a node without a registry");
    findings.check(previous.empty() || previous < node.host, "JSON lines: nodes not sorted or a host twice");
    previous = node.host;
  }
  findings.check(fleet_from_json(to_json(fleet)).has_value(), "JSON lines: the fleet document does not read back");
}

void fleet_subnet(std::string_view, std::string_view input, Findings& findings) {
  const auto addresses = subnet_addresses(input, 9464);
  if (!addresses) return;
  findings.check(!addresses->empty(), "subnet: accepted with no address");
  findings.check(addresses->size() <= (std::size_t{1} << (32 - min_subnet_prefix)), "subnet: more than a /16 swept");
  for (const auto& a : *addresses)
    if (!findings.check(a.ends_with(":9464") && !host_name_problem(a), "subnet: an address a scan cannot name")) break;
  // The same sweep again from the first address's own subnet text is the same.
  findings.check(subnet_addresses(input, 9464).value_or(std::vector<std::string>{}) == *addresses,
                 "subnet: a second read differs");
}

void kubectl_lists(std::string_view, std::string_view input, Findings& findings) {
  if (const auto nodes = parse_kubectl_nodes(input)) {
    for (const auto& n : *nodes) {
      findings.check(!n.name.empty() && !host_name_problem(n.name), "kubectl nodes: a node a scan cannot name");
      findings.check(std::is_sorted(n.feature_labels.begin(), n.feature_labels.end()), "kubectl nodes: labels not sorted");
    }
  }
  if (const auto pods = parse_kubectl_pods(input))
    for (const auto& p : *pods) findings.check(!p.name.empty(), "kubectl pods: a pod without a name");
}

void mdns_services(std::string_view, std::string_view input, Findings& findings) {
  const auto services = parse_mdns_services(input);
  if (!services) return;
  for (const auto& s : *services) findings.check(s.port != 0, "mdns: a service at port 0");
  const auto targets = mdns_exporter_targets(*services);
  findings.check(targets.size() <= services->size(), "mdns: more exporters than services");
  for (const auto& t : targets) {
    findings.check(!t.address.empty() && !t.node.empty(), "mdns: an exporter without an address or a name");
    findings.check(t.address.find('\n') == std::string::npos, "mdns: a line break in an address");
    findings.check(!host_name_problem(t.node), "mdns: a node name a fleet document cannot hold");
  }
}

void fleet_command(std::string_view, std::string_view input, Findings& findings) {
  const auto split = input.find('\n');
  const std::string_view template_text = input.substr(0, split);
  if (const auto command = CommandTemplate::parse(template_text)) {
    findings.check(!command->words.empty(), "command template: accepted without words");
    const auto argv = command->argv_for("node-1");
    findings.check(argv.size() == command->words.size(), "command template: argv lost words");
    bool named = false;
    for (const auto& word : argv) named = named || word.find("node-1") != std::string::npos;
    findings.check(named, "command template: {host} was not replaced anywhere");
  }
  if (split == std::string_view::npos) return;
  if (const auto hosts = parse_host_list(input.substr(split + 1))) {
    for (const auto& host : *hosts) findings.check(!host_name_problem(host), "host list: an invalid host was accepted");
  }
}

// A machine described to Kubernetes and Slurm: every label obeys the label
// rules, every gres.conf line names a type and its device files.
void fleet_exports_machine(std::string_view, std::string_view input, Findings& findings) {
  const auto system = MemorySystem::decode(input);
  const AcceleratorRegistry registry = DetectBuilder().detect(*system);
  for (const auto& label : nfd_labels(registry, NfdOptions{.vendor_labels = true, .system = system.get()}))
    findings.check(!label_problem(label), text::cat("NFD: an invalid label ", text::excerpt(label.name), "=",
                                                    text::excerpt(label.value)));
  const SlurmNodeConfig config = slurm_node_config(registry, *system, SlurmOptions{.node_name = "fuzz-node"});
  std::string_view rest = config.gres_conf;
  while (!rest.empty()) {
    const std::string_view line = text::next_line(rest);
    if (line.empty() || line.front() == '#') continue;
    findings.check(line.starts_with("Name=gpu Type="), "gres.conf: a line that is not a GPU");
    findings.check(line.find(" File=/dev/") != std::string_view::npos ||
                       line.find(" MultipleFiles=/dev/") != std::string_view::npos,
                   "gres.conf: a GPU without its device file");
    findings.check(line.find("Type= ") == std::string_view::npos, "gres.conf: an empty type");
  }
  findings.check(config.node_line.starts_with("NodeName=fuzz-node"), "slurm.conf: the node line lost its name");
  findings.check(config.node_line.find('\n') == std::string::npos, "slurm.conf: the node line spans lines");
}

}  // namespace hwaccel::fuzz
