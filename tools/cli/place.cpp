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
#include <vector>

import hwaccel;

#include "planning_registry.hpp"
#include "setting_options.hpp"

namespace hwaccel::cli {
namespace {

struct PlaceArgs {
  std::string fleet;
  std::string workloads;
  SettingTexts settings;  ///< --busy, --fabric, --exact-max, --device-specs, for the library's tables
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
  const std::vector<Setting> values = settings_of(a.settings);
  auto options = checked(read_placement_options(values));
  if (!options) return fail_with("place", options.error());
  auto inputs = checked(read_planning_inputs(values));
  if (!inputs) return fail_with("place", inputs.error());
  const auto fleet = read_fleet(a.fleet);
  if (!fleet) return fail_with("place", fleet.error());
  auto workload_text = read_file(a.workloads, std::size_t{64} << 20);
  if (!workload_text) return fail_with("place", "--workloads: " + workload_text.error().message, exit_failure);
  auto workloads = parse_workloads(*workload_text);
  if (!workloads) return fail_with("place", "--workloads: " + a.workloads + ": " + workloads.error().message, exit_usage);
  const auto device_specs = inputs->load_device_specs();
  if (!device_specs) return fail_with("place", device_specs.error().message, exit_failure);
  if (!device_specs->empty()) options->device_specs = &*device_specs;
  const auto runtime_profiles = inputs->load_runtime_profiles();
  if (!runtime_profiles) return fail_with("place", runtime_profiles.error().message, exit_failure);
  options->runtime_profiles = *runtime_profiles;
  auto result = place_workloads(*fleet, *workloads, *options);
  if (!result) return fail_with("place", result.error().message, exit_failure);
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
  add_setting_options(*cmd, placement_setting_keys(), args->settings);
  add_setting_options(*cmd, planning_input_keys(), args->settings, {"device-specs", "runtime-profiles"});
  auto* json_flag = cmd->add_flag("--json", args->json, "JSON output");
  auto* human_flag = cmd->add_flag("--human", args->human, "Text output even when stdout is not a terminal");
  json_flag->excludes(human_flag);
  cmd->add_flag("--pretty", args->pretty, "Indent the JSON");
  return {cmd, [args] { return run_place(*args); }};
}

}  // namespace hwaccel::cli
