// Workload files in; capacity reports and placements out (docs/planning.md).
module;
#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.place;

#include "json_input.hpp"

namespace hwaccel {
namespace {

constexpr std::size_t max_workloads = 10'000;
constexpr std::uint64_t max_replicas = 10'000;
constexpr std::uint64_t max_total_replicas = 100'000;  // the packing holds one item per replica

Error bad(std::size_t index, std::string_view what) {
  return Error{ErrorKind::invalid_input, text::cat("workloads[", index, "]: ", what)};
}

Result<Workload> read_workload(simdjson::dom::element item, std::size_t index) {
  simdjson::dom::object o;
  if (item.get_object().get(o) != simdjson::SUCCESS) return fail(bad(index, "not an object"));
  Workload w;
  bool has_model = false;
  for (auto [key, value] : o) {
    if (key == "name") {
      std::string_view s;
      if (value.get_string().get(s) != simdjson::SUCCESS || s.empty() || s.size() > 256)
        return fail(bad(index, "\"name\" must be a string of 1..256 characters"));
      w.name = std::string(s);
    } else if (key == "model") {
      std::string_view s;
      if (value.get_string().get(s) != simdjson::SUCCESS || s.empty() || s.size() > 4096)
        return fail(bad(index, "\"model\" must be a catalogue id or a path"));
      w.model = std::string(s);
      has_model = true;
    } else if (key == "replicas") {
      std::uint64_t n = 0;
      if (value.get_uint64().get(n) != simdjson::SUCCESS || n == 0 || n > max_replicas)
        return fail(bad(index, text::cat("\"replicas\" must be 1..", max_replicas)));
      w.replicas = static_cast<std::uint32_t>(n);
    } else if (key == "quantization") {
      std::string_view s;
      if (value.get_string().get(s) != simdjson::SUCCESS) return fail(bad(index, "\"quantization\" must be a string"));
      auto level = parse_quantization(s);
      if (!level) return fail(bad(index, level.error().message));
      w.quantization = *level;
    } else if (key == "context") {
      if (value.get_uint64().get(w.context) != simdjson::SUCCESS)
        return fail(bad(index, "\"context\" must be a whole number of tokens"));
    } else if (key == "batch") {
      std::uint64_t n = 0;
      if (value.get_uint64().get(n) != simdjson::SUCCESS || n == 0 || n > max_plan_batch)
        return fail(bad(index, text::cat("\"batch\" must be 1..", max_plan_batch)));
      w.batch = static_cast<std::uint32_t>(n);
    } else if (key == "reserve") {
      if (value.get_double().get(w.reserve_fraction) != simdjson::SUCCESS)
        return fail(bad(index, "\"reserve\" must be a number"));
    } else {
      return fail(bad(index, text::cat("unknown key \"", text::excerpt(key), "\"")));
    }
  }
  if (!has_model) return fail(bad(index, "no \"model\""));
  if (w.name.empty()) w.name = w.model;
  return w;
}

}  // namespace

Result<std::vector<Workload>> parse_workloads(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (const auto err = json_input::parse(parser, json).get(doc); err != simdjson::SUCCESS)
    return fail(ErrorKind::invalid_input, text::cat("workloads: not valid JSON: ", simdjson::error_message(err)));
  simdjson::dom::array list;
  if (doc["workloads"].get_array().get(list) != simdjson::SUCCESS)
    return fail(ErrorKind::invalid_input, "workloads: the document must be an object with a \"workloads\" list");
  std::vector<Workload> out;
  std::set<std::string, std::less<>> names;
  std::size_t index = 0;
  for (simdjson::dom::element item : list) {
    if (out.size() == max_workloads)
      return fail(ErrorKind::invalid_input, text::cat("workloads: more than ", max_workloads, " workloads"));
    auto w = read_workload(item, index);
    if (!w) return fail(w.error());
    if (!names.insert(w->name).second)
      return fail(bad(index, text::cat("the name \"", text::excerpt(w->name), "\" is used twice")));
    out.push_back(std::move(*w));
    ++index;
  }
  if (out.empty()) return fail(ErrorKind::invalid_input, "workloads: the list is empty");
  std::uint64_t total = 0;
  for (const auto& w : out) total += w.replicas;
  if (total > max_total_replicas)
    return fail(ErrorKind::invalid_input,
                text::cat("workloads: ", total, " replicas in all, more than ", max_total_replicas));
  return out;
}

std::string to_json(const CapacityReport& r, bool pretty) {
  json::Writer w(pretty, 4096 + r.plan.shards.size() * 400);
  w.begin_object();
  w.field("model", r.model_name);
  w.field("node_kind", r.node_kind);
  w.key("nodes_needed");
  if (r.nodes_needed) w.value(*r.nodes_needed);
  else w.null();
  w.field("nodes_of_kind", r.nodes_of_kind);
  w.field("nodes_free", r.nodes_free);
  w.field("nodes_missing", r.nodes_missing);
  w.field("summary", r.summary);
  w.key("plan");
  write_json(w, r.plan);
  w.end_object();
  return std::move(w).document();
}

std::string to_json(const PlacementResult& r, bool pretty) {
  json::Writer w(pretty, 1024 + r.placed.size() * 256);
  w.begin_object();
  w.key("placed").begin_array();
  for (const auto& p : r.placed) {
    w.begin_object();
    w.field("workload", p.workload);
    w.field("replica", p.replica);
    w.field("nodes", p.nodes);
    w.field("devices", p.devices);
    w.field("quantization", to_string(p.quantization));
    w.field("tp", p.tensor_parallel);
    w.field("pp", p.pipeline_parallel);
    w.field("bytes_per_device", p.bytes_per_device);
    w.key("watts");
    if (p.watts) w.value(*p.watts);
    else w.null();
    w.end_object();
  }
  w.end_array();
  w.key("unplaced").begin_array();
  for (const auto& u : r.unplaced) {
    w.begin_object();
    w.field("workload", u.workload);
    w.field("replica", u.replica);
    w.field("reason", u.reason);
    w.end_object();
  }
  w.end_array();
  w.field("nodes_used", static_cast<std::uint64_t>(r.nodes_used));
  w.field("lower_bound", static_cast<std::uint64_t>(r.lower_bound));
  w.key("ratio");
  if (r.lower_bound > 0) w.value(static_cast<double>(r.nodes_used) / static_cast<double>(r.lower_bound));
  else w.null();
  w.field("method", r.method);
  w.field("search_complete", r.search_complete);
  w.field("notes", r.notes);
  w.end_object();
  return std::move(w).document();
}

}  // namespace hwaccel
