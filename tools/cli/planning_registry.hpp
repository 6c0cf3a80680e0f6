// What the planning subcommands (plan, train, recommend, specs, place) read
// from their command lines the same way: their settings, through the
// library's tables (setting_options.hpp), and the machine or fleet they plan
// on. Include after `import hwaccel;` (it uses the module's types).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>

#include "common.hpp"
#include "setting_options.hpp"

namespace hwaccel::cli {

/// The machine a command plans on when no --devices are given: the
/// --fixture folder replayed, else this one ("cannot replay fixture: why",
/// exit 1, when the fixture cannot be read). Either is detected as
/// AcceleratorRegistry::detect() detects: $HWACCEL_BACKENDS, the plugin
/// folders of $HWACCEL_PLUGIN_PATH.
inline CommandResult<AcceleratorRegistry> machine_registry(const std::string& fixture_dir) {
  if (fixture_dir.empty()) return AcceleratorRegistry::detect();
  auto fixture = FixtureSystem::open(fixture_dir);
  if (!fixture) return failure("cannot replay fixture: " + fixture.error().message);
  const auto settings = read_detect_settings({}, process_environment(), BadEnvironment::ignore);
  return (settings ? settings->builder() : DetectBuilder{}).detect(**fixture);
}

/// The nodes a plan or estimate is made for: --devices (names of the table
/// or of `extra`), or --nodes copies of --fixture's machine or this one.
inline CommandResult<Cluster> planning_cluster(const PlanningInputs& inputs, const std::string& fixture_dir,
                                               const DeviceSpecSet& extra) {
  std::optional<AcceleratorRegistry> machine;
  if (inputs.devices.empty()) {
    auto read = machine_registry(fixture_dir);
    if (!read) return tl::unexpected(read.error());
    machine = std::move(*read);
  }
  auto cluster = inputs.cluster(machine ? &*machine : nullptr, extra);
  if (!cluster) return tl::unexpected(command_error(cluster.error()));
  return std::move(*cluster);
}

/// The exit status of a model that cannot be had: 1 when a --model file or
/// id could not be read, 2 for a bad --params or for neither or both given.
inline int model_error_exit(const PlanningInputs& inputs) {
  return !inputs.model.empty() && !inputs.params ? exit_failure : exit_usage;
}

/// --fleet: a fleet document read and parsed (exit 1 when it cannot be).
inline CommandResult<Fleet> read_fleet(const std::string& path) {
  auto content = read_file(path, std::size_t{4} << 30);
  if (!content) return failure("--fleet: " + content.error().message);
  auto fleet = fleet_from_json(*content);
  if (!fleet) return failure("--fleet: " + path + ": " + fleet.error().message);
  return std::move(*fleet);
}

}  // namespace hwaccel::cli
