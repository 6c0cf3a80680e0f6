// The devices `hwaccel plan` and `hwaccel train` plan for: hypothetical ones
// (--devices), a captured machine (--fixture) or this machine. Include after
// `import hwaccel;` (it uses the module's types).
#pragma once

#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "cli_common.hpp"

namespace hwaccel::cli {

/// The registry to plan on; on failure prints "hwaccel COMMAND: ..." and
/// sets `exit_code` (2 for a bad --devices list, 1 for a fixture that does
/// not replay).
inline std::optional<AcceleratorRegistry> planning_registry(std::string_view command, const std::string& devices,
                                                            const std::string& fixture_dir, int& exit_code) {
  if (!devices.empty()) {
    auto r = hypothetical_registry(devices);
    if (r) return std::move(*r);
    std::cerr << "hwaccel " << command << ": --devices: " << r.error().message << "\n";
    exit_code = exit_usage;
    return std::nullopt;
  }
  if (!fixture_dir.empty()) {
    auto fixture = FixtureSystem::open(fixture_dir);
    if (fixture) return DetectBuilder{}.detect(**fixture);
    std::cerr << "hwaccel " << command << ": cannot replay fixture: " << fixture.error().message << "\n";
    exit_code = exit_failure;
    return std::nullopt;
  }
  return AcceleratorRegistry::detect();
}

}  // namespace hwaccel::cli
