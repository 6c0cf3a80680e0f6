// Capacity: the fewest nodes of a kind that hold a model, against the fleet.
module;
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.place;

namespace hwaccel {

namespace {

struct Template {
  AcceleratorRegistry registry;
  std::string kind;
};

// `extra`: a user device-spec file's entries, for a kind that names them.
Result<Template> template_node(const Fleet& fleet, std::string_view wanted, const DeviceSpecSet* extra) {
  if (wanted.empty()) {
    // The fleet's most common kind of node with accelerators (first seen on a tie).
    std::map<std::string, std::pair<std::uint32_t, const FleetNode*>> kinds;
    std::vector<std::string> order;
    for (const auto& node : fleet.nodes) {
      if (!node.registry || !node.registry->has_accelerator()) continue;
      std::string kind = node_kind(*node.registry);
      auto [it, fresh] = kinds.try_emplace(kind, 0u, &node);
      if (fresh) order.push_back(kind);
      ++it->second.first;
    }
    if (order.empty())
      return fail(ErrorKind::unsupported, "the fleet has no node with accelerators: name a kind with --node-kind");
    const std::string* best = &order.front();
    for (const auto& k : order)
      if (kinds[k].first > kinds[*best].first) best = &k;
    return Template{*kinds[*best].second->registry, *best};
  }
  for (const auto& node : fleet.nodes)
    if (node.registry && node_kind(*node.registry) == wanted) return Template{*node.registry, std::string(wanted)};
  auto hypothetical = extra ? hypothetical_registry(wanted, *extra) : hypothetical_registry(wanted);
  if (!hypothetical)
    return fail(ErrorKind::invalid_input, text::cat("--node-kind '", text::excerpt(wanted),
                                                    "' is neither a kind of the fleet's nodes nor a device list: ",
                                                    hypothetical.error().message));
  std::string kind = node_kind(*hypothetical);
  return Template{std::move(*hypothetical), std::move(kind)};
}

}  // namespace

Result<CapacityReport> what_is_missing(const Fleet& fleet, const ModelDescription& model,
                                       const InferenceSettings& settings_in, const CapacityOptions& options) {
  auto node = template_node(fleet, options.node_kind, settings_in.device_specs);
  if (!node) return fail(node.error());
  InferenceSettings settings = settings_in;
  // Capacity counts accelerators: layers in a node's host memory would make
  // any node "enough" for any model.
  settings.allow_cpu_offload = false;
  // Counting nodes needs one level: the one asked for, a GGUF file's own, else the 16-bit weights.
  if (!settings.quantization)
    settings.quantization =
        model.source == ModelSource::gguf && model.stored && model.stored->level ? *model.stored->level
                                                                                 : QuantizationLevel::bf16;
  // Without a fabric given, the cluster takes the node's own (Cluster::effective_fabric).
  auto fewest = fewest_nodes(node->registry, model, settings, options.max_nodes, options.fabric);
  if (!fewest) return fail(fewest.error());
  CapacityReport report;
  report.model_name = model.name;
  report.node_kind = node->kind;
  report.nodes_needed = fewest->nodes;
  report.plan = std::move(fewest->plan);
  for (const auto& n : fleet.nodes) {
    if (!n.registry || node_kind(*n.registry) != report.node_kind) continue;
    ++report.nodes_of_kind;
    if (options.busy.by_host.find(n.host) == options.busy.by_host.end()) ++report.nodes_free;
  }
  const std::string what = text::cat(model.name, " at ", info(*settings.quantization).display_name, " (",
                                     settings.context, " tokens x ", settings.batch, ")");
  const std::string has = text::cat("the fleet has ", report.nodes_free, " free (", report.nodes_of_kind, " in all)");
  if (report.nodes_needed) {
    report.nodes_missing = *report.nodes_needed > report.nodes_free ? *report.nodes_needed - report.nodes_free : 0;
    report.summary = text::cat(what, " needs ", *report.nodes_needed, " node", *report.nodes_needed == 1 ? "" : "s",
                               " of ", report.node_kind, "; ", has, ": ",
                               report.nodes_missing == 0 ? std::string("nothing missing")
                                                         : text::cat(report.nodes_missing, " missing"));
  } else {
    report.summary = text::cat(what, " does not fit even ", options.max_nodes, " nodes of ", report.node_kind, "; ", has);
  }
  return report;
}

}  // namespace hwaccel
