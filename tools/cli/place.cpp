// `hwaccel place`: many models' replicas onto a fleet's nodes and devices.
#include "commands.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

import hwaccel;

#include "planning_registry.hpp"

namespace hwaccel::cli {
namespace {

struct PlaceArgs {
  std::string fleet;
  std::string workloads;
  std::string busy;
  std::string fabric;
  std::string device_specs;
  std::size_t exact_max = 12;
  bool json = false;
  bool human = false;
  bool pretty = false;
};

std::string human_placement(const PlacementResult& r, bool color) {
  const char* bold = color ? "\033[1m" : "";
  const char* reset = color ? "\033[0m" : "";
  std::string out = fmt::format("{}{:<24} {:>7} {:<6} {:>3} {:>3} {:>10}  {}{}\n", bold, "WORKLOAD", "REPLICA", "QUANT",
                                "TP", "PP", "PER DEVICE", "DEVICES", reset);
  for (const auto& p : r.placed) {
    std::string devices;
    for (std::size_t i = 0; i < p.devices.size() && i < 8; ++i) devices += (i ? "," : "") + p.devices[i];
    if (p.devices.size() > 8) devices += fmt::format(" and {} more", p.devices.size() - 8);
    out += fmt::format("{:<24} {:>7} {:<6} {:>3} {:>3} {:>10}  {}\n", p.workload, p.replica, to_string(p.quantization),
                       p.tensor_parallel, p.pipeline_parallel, bytes_text(p.bytes_per_device), devices);
  }
  for (const auto& u : r.unplaced) out += fmt::format("{:<24} {:>7} not placed: {}\n", u.workload, u.replica, u.reason);
  out += fmt::format("\n{}Nodes{} {} used, at least {} needed ({}; {})\n", bold, reset, r.nodes_used, r.lower_bound,
                     r.method, r.search_complete ? "the fewest possible" : "not proven the fewest");
  for (const auto& n : r.notes) out += "  - " + n + "\n";
  return out;
}

int run_place(const PlaceArgs& a) {
  const auto fleet = fleet_option("place", a.fleet);
  if (!fleet) return exit_failure;
  std::string workload_text, error;
  if (!read_file(a.workloads, workload_text, error, std::size_t{64} << 20)) {
    std::cerr << "hwaccel place: --workloads: " << error << "\n";
    return exit_failure;
  }
  auto workloads = parse_workloads(workload_text);
  if (!workloads) {
    std::cerr << "hwaccel place: --workloads: " << a.workloads << ": " << workloads.error().message << "\n";
    return exit_usage;
  }
  PlacementOptions options;
  options.exact_max_replicas = a.exact_max;
  options.exact_max_nodes = a.exact_max;
  if (!fabric_option("place", a.fabric, options.fabric)) return exit_usage;
  if (int code = exit_failure; !busy_option("place", a.busy, options.busy, code)) return code;
  const auto device_specs = device_specs_option("place", a.device_specs);
  if (!device_specs) return exit_failure;
  if (!device_specs->empty()) options.device_specs = &*device_specs;
  auto result = place_workloads(*fleet, *workloads, options);
  if (!result) {
    std::cerr << "hwaccel place: " << result.error().message << "\n";
    return exit_failure;
  }
  const bool json = a.json || (!a.human && !is_terminal(STDOUT_FILENO));
  if (json) std::cout << to_json(*result, a.pretty) << (a.pretty ? "" : "\n");
  else std::cout << human_placement(*result, use_color(STDOUT_FILENO));
  std::cout.flush();
  // Exit 3 when a replica found no place, so scripts can tell without parsing.
  if (!std::cout.good()) return exit_failure;
  return result->unplaced.empty() ? 0 : 3;
}

}  // namespace

Command add_place_command(CLI::App& app) {
  auto args = std::make_shared<PlaceArgs>();
  auto* cmd = app.add_subcommand(
      "place",
      "Place model replicas on a fleet's nodes: each replica's tensor-parallel group inside one NVLink/xGMI domain, as "
      "many replicas as fit on the fewest nodes (docs/planning.md).\nExit status: 0 all placed, 3 some not placed (see "
      "\"unplaced\"), 1 a file could not be read or planned, 2 bad usage.");
  cmd->add_option("--fleet", args->fleet, "A fleet document (`hwaccel fleet scan`)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--workloads", args->workloads,
                  "JSON: {\"workloads\": [{\"name\", \"model\", \"replicas\", \"quantization\", \"context\", \"batch\"}]}")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--busy", args->busy,
                  "Nodes or devices taken: HOST,HOST/cuda:0,... or a file (such a list, or an earlier `hwaccel place --json`)");
  cmd->add_option("--fabric", args->fabric, "Fabric between nodes for replicas that span nodes: ib-400g, roce-200g, ...");
  add_device_specs_option(cmd, args->device_specs);
  cmd->add_option("--exact-max", args->exact_max,
                  "Largest instance (replicas and nodes) searched exactly; larger ones use first-fit decreasing")
      ->check(CLI::Range(0, 64));
  auto* json_flag = cmd->add_flag("--json", args->json, "JSON output");
  auto* human_flag = cmd->add_flag("--human", args->human, "Text output even when stdout is not a terminal");
  json_flag->excludes(human_flag);
  cmd->add_flag("--pretty", args->pretty, "Indent the JSON");
  return {cmd, [args] { return run_place(*args); }};
}

}  // namespace hwaccel::cli
