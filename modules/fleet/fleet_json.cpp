// The fleet document and the diff's JSON (docs/fleet.md, docs/fleet.schema.json).
module;
#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "json_input.hpp"
module hwaccel.fleet;

namespace hwaccel {

namespace {

// Kubernetes' own bounds on a label (a 253-byte prefix, '/', a 63-byte name;
// a 63-byte value), with room for hand-written documents; a node's labels number tens.
constexpr std::size_t max_label_name_bytes = 317;
constexpr std::size_t max_label_value_bytes = 1024;
constexpr std::size_t max_node_labels = 4096;

void write_counts(json::Writer& w, std::string_view name, const std::vector<FleetCount>& counts) {
  w.key(name).begin_array();
  for (const auto& c : counts) {
    w.begin_object();
    w.field("key", c.key);
    w.field("devices", c.devices);
    w.field("nodes", c.nodes);
    w.field("memory_bytes", c.memory_bytes);
    w.end_object();
  }
  w.end_array();
}

Error bad(std::string_view where, std::string_view what) {
  return Error{ErrorKind::parse_error, text::cat("fleet JSON: ", where, ": ", what)};
}

}  // namespace

std::string to_json(const Fleet& fleet, bool pretty) {
  json::Writer w(pretty, 4096);
  w.begin_object();
  w.field("fleet_schema_version", fleet_schema_version);
  w.field("scanned_at", format_utc_time(fleet.scanned_at));
  const FleetTotals totals = fleet_totals(fleet);
  w.key("totals").begin_object();
  w.field("nodes", totals.nodes);
  w.field("nodes_answered", totals.nodes_answered);
  w.field("accelerators", totals.accelerators);
  w.field("accelerator_memory_bytes", totals.accelerator_memory_bytes);
  write_counts(w, "by_model", totals.by_model);
  write_counts(w, "by_spec", totals.by_spec);
  write_counts(w, "by_backend", totals.by_backend);
  w.end_object();
  w.key("nodes").begin_array();
  for (const auto& node : fleet.nodes) {
    w.begin_object();
    w.field("host", node.host);
    w.field("scanned_at", format_utc_time(node.scanned_at));
    w.field("source", node.source);
    w.field("elapsed_ms", static_cast<std::int64_t>(node.elapsed.count()));
    if (!node.labels.empty()) {
      w.key("labels").begin_object();
      for (const auto& [name, value] : node.labels) w.field(std::string_view(name), value);
      w.end_object();
    }
    if (node.registry) {
      w.key("registry");
      write_json(w, *node.registry, !node.registry->timings().empty());
    }
    if (node.error) {
      w.key("error").begin_object();
      w.field("kind", to_string(node.error->kind));
      w.field("message", node.error->message);
      w.end_object();
    }
    w.end_object();
  }
  w.end_array();
  w.field("warnings", fleet.warnings);
  w.end_object();
  return std::move(w).document();
}

Result<Fleet> fleet_from_json(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (const auto err = json_input::parse(parser, json).get(doc); err != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat("fleet JSON is not valid JSON: ", simdjson::error_message(err)));
  simdjson::dom::object root;
  if (doc.get_object().get(root) != simdjson::SUCCESS) return fail(ErrorKind::parse_error, "fleet JSON must be an object");

  Fleet fleet;
  std::uint64_t version = 0;
  if (root["fleet_schema_version"].get_uint64().get(version) != simdjson::SUCCESS) {
    // One node's registry, as `hwaccel detect` prints it.
    if (root["schema_version"].error() != simdjson::SUCCESS)
      return fail(ErrorKind::parse_error, "neither a fleet document (fleet_schema_version) nor a registry (schema_version)");
    auto registry = registry_from_json(json);
    if (!registry) return fail(registry.error());
    FleetNode node;
    node.source = "registry";
    if (const auto& host = registry->system().host) {
      node.host = *host;
    } else {
      node.host = "unknown";
      fleet.warnings.emplace_back("the registry names no host (system.host); its node is called \"unknown\"");
    }
    node.registry = std::move(*registry);
    fleet.nodes.push_back(std::move(node));
    return fleet;
  }
  if (version == 0 || version > 1'000'000) return fail(bad("fleet_schema_version", "not a version"));
  if (version > fleet_schema_version)
    fleet.warnings.push_back(text::cat("fleet document of schema version ", version, ", newer than this hwaccel's (",
                                       fleet_schema_version, "): read as far as it is understood"));

  std::string_view scanned_at;
  if (root["scanned_at"].get_string().get(scanned_at) == simdjson::SUCCESS) {
    const auto at = parse_utc_time(scanned_at);
    if (!at) return fail(bad("scanned_at", "not a time of the form 2026-11-26T13:50:19Z"));
    fleet.scanned_at = *at;
  }
  simdjson::dom::array nodes;
  if (root["nodes"].get_array().get(nodes) != simdjson::SUCCESS)
    return fail(bad("nodes", "missing or not an array"));
  std::size_t index = 0;
  for (simdjson::dom::element item : nodes) {
    const std::string where = text::cat("nodes[", index++, "]");
    simdjson::dom::object o;
    if (item.get_object().get(o) != simdjson::SUCCESS) return fail(bad(where, "not an object"));
    FleetNode node;
    std::string_view s;
    if (o["host"].get_string().get(s) != simdjson::SUCCESS) return fail(bad(where, "no \"host\""));
    node.host = std::string(s);
    if (const auto problem = host_name_problem(node.host)) return fail(bad(where, *problem));
    if (o["scanned_at"].get_string().get(s) == simdjson::SUCCESS) {
      const auto at = parse_utc_time(s);
      if (!at) return fail(bad(where, "scanned_at is not a time of the form 2026-11-26T13:50:19Z"));
      node.scanned_at = *at;
    }
    if (o["source"].get_string().get(s) == simdjson::SUCCESS) node.source = std::string(s);
    std::int64_t elapsed = 0;
    if (o["elapsed_ms"].get_int64().get(elapsed) == simdjson::SUCCESS && elapsed >= 0)
      node.elapsed = std::chrono::milliseconds{elapsed};
    simdjson::dom::object labels;
    if (o["labels"].get_object().get(labels) == simdjson::SUCCESS) {
      for (const auto field : labels) {
        std::string_view value;
        if (field.value.get_string().get(value) != simdjson::SUCCESS)
          return fail(bad(text::cat(where, ".labels"), text::cat("\"", text::excerpt(field.key), "\" is not a string")));
        if (field.key.size() > max_label_name_bytes || value.size() > max_label_value_bytes ||
            node.labels.size() >= max_node_labels)
          return fail(bad(text::cat(where, ".labels"), "a label longer than Kubernetes allows, or too many labels"));
        node.labels.emplace_back(std::string(field.key), std::string(value));
      }
      std::sort(node.labels.begin(), node.labels.end());
    }
    simdjson::dom::element registry;
    if (o["registry"].get(registry) == simdjson::SUCCESS) {
      auto parsed = registry_from_json(simdjson::minify(registry));
      if (!parsed) return fail(bad(text::cat(where, ".registry"), parsed.error().message));
      node.registry = std::move(*parsed);
    }
    simdjson::dom::object error;
    if (o["error"].get_object().get(error) == simdjson::SUCCESS) {
      NodeError e;
      if (error["kind"].get_string().get(s) != simdjson::SUCCESS || !parse_node_error_kind(s))
        return fail(bad(text::cat(where, ".error"), "no known \"kind\""));
      e.kind = *parse_node_error_kind(s);
      if (error["message"].get_string().get(s) == simdjson::SUCCESS) e.message = std::string(s);
      node.error = std::move(e);
    }
    if (!node.registry && !node.error)
      return fail(bad(where, "has neither a registry nor an error"));
    fleet.nodes.push_back(std::move(node));
  }
  simdjson::dom::array warnings;
  if (root["warnings"].get_array().get(warnings) == simdjson::SUCCESS)
    for (simdjson::dom::element w : warnings) {
      std::string_view s;
      if (w.get_string().get(s) == simdjson::SUCCESS) fleet.warnings.emplace_back(s);
    }
  fleet_detail::settle_nodes(fleet);
  return fleet;
}

std::string to_json(const FleetDiff& diff, bool pretty) {
  json::Writer w(pretty, 1024);
  w.begin_object();
  w.field("fleet_schema_version", fleet_schema_version);
  w.key("nodes").begin_array();
  for (const auto& n : diff.nodes) {
    w.begin_object();
    w.field("host", n.host);
    w.field("change", to_string(n.kind));
    if (!n.detail.empty()) w.field("detail", n.detail);
    w.end_object();
  }
  w.end_array();
  w.key("devices").begin_array();
  for (const auto& d : diff.devices) {
    w.begin_object();
    w.field("host", d.host);
    w.field("change", to_string(d.kind));
    w.field("identity", d.identity);
    w.field("id", d.id);
    w.field("name", d.name);
    if (!d.fields.empty()) write_field_changes(w.key("fields"), d.fields);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return std::move(w).document();
}

}  // namespace hwaccel
