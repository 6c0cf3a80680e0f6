// Kubernetes as a fleet source: the node and pod lists kubectl prints, and
// each node asked through its exporter DaemonSet's pod, all through the
// System seam (so recorded kubectl output replays the scan).
module;
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <simdjson.h>

#include "json_input.hpp"
module hwaccel.fleet;

namespace hwaccel {

namespace {

constexpr std::size_t max_kubernetes_items = 100'000;
// A NodeList of 5 000 nodes is some tens of MiB.
constexpr std::size_t max_list_bytes = std::size_t{256} << 20;

// A DNS subdomain name (RFC 1123) as Kubernetes names pods and namespaces:
// what may go into an API path.
bool kubernetes_name(std::string_view name) {
  if (name.empty() || name.size() > 253 || name.front() == '.' || name.front() == '-' || name.back() == '.' ||
      name.back() == '-')
    return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.'; }) &&
         name.find("..") == std::string_view::npos;
}

Error kube_error(std::string_view what, std::string_view why) {
  return Error{ErrorKind::parse_error, text::cat("kubectl ", what, ": ", why)};
}

// A member's text, or empty; a missing parent propagates as an error, never a throw.
std::string_view text_of(simdjson::simdjson_result<simdjson::dom::element> e, std::string_view key) {
  std::string_view v;
  return e[key].get_string().get(v) == simdjson::SUCCESS ? v : std::string_view();
}
std::string_view text_of(simdjson::dom::element e, std::string_view key) {
  std::string_view v;
  return e[key].get_string().get(v) == simdjson::SUCCESS ? v : std::string_view();
}

// The items of a List of `kind` ("Node", "Pod"): a NodeList/PodList, or a
// generic List whose items are all of that kind.
Result<simdjson::dom::array> items_of(simdjson::dom::parser& parser, std::string_view json, std::string_view kind,
                                      std::string_view what) {
  simdjson::dom::element doc;
  if (const auto err = json_input::parse(parser, json).get(doc); err != simdjson::SUCCESS)
    return fail(kube_error(what, text::cat("not JSON (", simdjson::error_message(err), ")")));
  const std::string_view list_kind = text_of(doc, "kind");
  if (list_kind != text::cat(kind, "List") && list_kind != "List")
    return fail(kube_error(what, text::cat("not a ", kind, "List (kind \"", text::excerpt(list_kind, 40), "\")")));
  simdjson::dom::array items;
  if (doc["items"].get_array().get(items) != simdjson::SUCCESS) return fail(kube_error(what, "no \"items\" array"));
  if (items.size() > max_kubernetes_items)
    return fail(kube_error(what, text::cat("more than ", max_kubernetes_items, " items")));
  for (simdjson::dom::element item : items) {
    const std::string_view k = text_of(item, "kind");
    if (!k.empty() && k != kind) return fail(kube_error(what, text::cat("an item of kind \"", text::excerpt(k, 40), "\"")));
    if (!item.is_object()) return fail(kube_error(what, "an item that is not an object"));
  }
  return items;
}

bool feature_label(std::string_view name) {
  return name.starts_with("feature.node.kubernetes.io/") || name.starts_with("hwaccel.io/");
}

}  // namespace

Result<std::vector<KubernetesNode>> parse_kubectl_nodes(std::string_view json) {
  simdjson::dom::parser parser;
  auto items = items_of(parser, json, "Node", "get nodes");
  if (!items) return fail(items.error());
  std::vector<KubernetesNode> out;
  for (simdjson::dom::element item : *items) {
    KubernetesNode n;
    n.name = std::string(text_of(item["metadata"], "name"));
    if (n.name.empty()) return fail(kube_error("get nodes", "a node without metadata.name"));
    if (auto problem = host_name_problem(n.name)) return fail(kube_error("get nodes", *problem));
    simdjson::dom::object labels;
    if (item["metadata"]["labels"].get_object().get(labels) == simdjson::SUCCESS)
      for (auto field : labels) {
        std::string_view value;
        if (feature_label(field.key) && field.value.get_string().get(value) == simdjson::SUCCESS)
          n.feature_labels.emplace_back(std::string(field.key), std::string(value));
      }
    std::sort(n.feature_labels.begin(), n.feature_labels.end());
    simdjson::dom::array addresses, conditions;
    if (item["status"]["addresses"].get_array().get(addresses) == simdjson::SUCCESS)
      for (simdjson::dom::element a : addresses)
        if (text_of(a, "type") == "InternalIP" && !n.internal_ip) n.internal_ip = std::string(text_of(a, "address"));
    if (item["status"]["conditions"].get_array().get(conditions) == simdjson::SUCCESS)
      for (simdjson::dom::element c : conditions)
        if (text_of(c, "type") == "Ready") n.ready = text_of(c, "status") == "True";
    out.push_back(std::move(n));
  }
  return out;
}

Result<std::vector<KubernetesPod>> parse_kubectl_pods(std::string_view json) {
  simdjson::dom::parser parser;
  auto items = items_of(parser, json, "Pod", "get pods");
  if (!items) return fail(items.error());
  std::vector<KubernetesPod> out;
  for (simdjson::dom::element item : *items) {
    KubernetesPod p;
    p.name = std::string(text_of(item["metadata"], "name"));
    p.namespace_name = std::string(text_of(item["metadata"], "namespace"));
    if (p.name.empty()) return fail(kube_error("get pods", "a pod without metadata.name"));
    p.node = std::string(text_of(item["spec"], "nodeName"));
    p.phase = std::string(text_of(item["status"], "phase"));
    out.push_back(std::move(p));
  }
  return out;
}

Result<Fleet> scan_kubernetes(const System& system, const KubernetesScan& where, const ScanOptions& options) {
  const auto list = [&](std::vector<std::string> argv, std::string_view what) -> Result<std::string> {
    auto run = system.run(ToolRequest{std::move(argv), options.node_deadline, max_list_bytes});
    if (!run) return fail(run.error().kind, text::cat("kubectl ", what, ": ", run.error().message));
    if (run->out_truncated) return fail(ErrorKind::parse_error, text::cat("kubectl ", what, ": more than 256 MiB"));
    if (!run->succeeded())
      return fail(ErrorKind::tool_failed, text::cat("kubectl ", what, ": exited with status ", run->exit_code, ": ",
                                                    text::excerpt(text::trim(run->err), 200)));
    return std::move(run->out);
  };
  std::vector<std::string> get_nodes = {where.kubectl, "get", "nodes", "-o", "json"};
  if (!where.node_selector.empty()) get_nodes.insert(get_nodes.end(), {"-l", where.node_selector});
  auto nodes_json = list(std::move(get_nodes), "get nodes");
  if (!nodes_json) return fail(nodes_json.error());
  auto nodes = parse_kubectl_nodes(*nodes_json);
  if (!nodes) return fail(nodes.error());
  auto pods_json = list({where.kubectl, "get", "pods", "-n", where.namespace_name, "-l", where.pod_selector, "-o", "json"},
                        "get pods");
  if (!pods_json) return fail(pods_json.error());
  auto pods = parse_kubectl_pods(*pods_json);
  if (!pods) return fail(pods.error());
  // Each node's running pod (the first, by name, when there are several).
  std::map<std::string, const KubernetesPod*> pod_of;
  std::sort(pods->begin(), pods->end(), [](const KubernetesPod& a, const KubernetesPod& b) { return a.name < b.name; });
  for (const auto& p : *pods)
    if (p.phase == "Running" && !p.node.empty()) pod_of.try_emplace(p.node, &p);

  Fleet fleet;
  fleet.scanned_at = fleet_detail::scan_time(options);
  std::vector<FleetNode> out(nodes->size());
  fleet_detail::for_each_index(nodes->size(), system.runs_instantly() ? 1 : options.concurrency, [&](std::size_t i) {
      const KubernetesNode& n = (*nodes)[i];
      // A node that is not asked is still in the fleet, with why.
      const auto not_asked = [&](NodeErrorKind kind, std::string message) {
        FleetNode node;
        node.host = n.name;
        node.scanned_at = fleet.scanned_at;
        node.source = "kubernetes";
        node.labels = n.feature_labels;
        node.error = NodeError{kind, std::move(message)};
        out[i] = std::move(node);
      };
      const auto found = pod_of.find(n.name);
      if (found == pod_of.end())
        return not_asked(NodeErrorKind::no_answer,
                         text::cat(n.name, ": no running pod of ", where.pod_selector, " in namespace ",
                                   where.namespace_name, n.ready ? "" : " (the node is not Ready)"));
      const KubernetesPod& pod = *found->second;
      const std::string& pod_namespace = pod.namespace_name.empty() ? where.namespace_name : pod.namespace_name;
      if (where.registry_port && (!kubernetes_name(pod.name) || !kubernetes_name(pod_namespace)))
        return not_asked(NodeErrorKind::failed, text::cat(n.name, ": pod \"", text::excerpt(pod.name, 60), "\" in \"",
                                                          text::excerpt(pod_namespace, 60),
                                                          "\" is not a Kubernetes name; not asked"));
      std::vector<std::string> ask =
          where.registry_port
              ? std::vector<std::string>{where.kubectl, "get", "--raw",
                                         text::cat("/api/v1/namespaces/", pod_namespace, "/pods/", pod.name, ":",
                                                   *where.registry_port, "/proxy/registry")}
              : std::vector<std::string>{where.kubectl, "exec", "-n", pod_namespace, pod.name, "--", "hwaccel", "detect",
                                         "--no-timings"};
      FleetNode node = fleet_detail::run_node(system, n.name, std::move(ask), options, fleet.scanned_at);
      node.source = where.registry_port ? text::cat("kubernetes:", pod.name, ":", *where.registry_port, "/registry")
                                        : text::cat("kubernetes:", pod.name);
      node.labels = n.feature_labels;
      if (node.error && !n.ready) node.error->message += " (the node is not Ready)";
      out[i] = std::move(node);
  });
  std::size_t orphans = 0;
  for (const auto& p : *pods) orphans += p.phase == "Running" && !p.node.empty() &&
                                          std::none_of(nodes->begin(), nodes->end(), [&](const KubernetesNode& n) { return n.name == p.node; });
  if (orphans > 0)
    fleet.warnings.push_back(text::cat(orphans, " running pod(s) of ", where.pod_selector,
                                       " are on nodes the node list (and its selector) leaves out"));
  fleet.nodes = std::move(out);
  fleet_detail::settle_nodes(fleet);
  return fleet;
}

}  // namespace hwaccel
