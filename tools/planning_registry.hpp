// What the planning subcommands (plan, train, recommend) read from their
// command lines the same way: the devices they plan for (hypothetical ones,
// --devices; a captured machine, --fixture; or this machine) and quantization
// options. Include after `import hwaccel;` (it uses the module's types).
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

/// The quantization level an option names (--quant, --kv-dtype). With
/// `for_kv_cache` the level must also be one a KV cache can be stored in. On
/// failure prints "hwaccel COMMAND: OPTION: why" and returns nothing (a usage
/// error).
inline std::optional<QuantizationLevel> quantization_option(std::string_view command, std::string_view option,
                                                            const std::string& value, bool for_kv_cache = false) {
  auto level = parse_quantization(value);
  std::string error = level ? std::string() : level.error().message;
  if (level && for_kv_cache)
    if (const auto bits = kv_cache_bits(*level); !bits) error = bits.error().message;
  if (error.empty()) return *level;
  std::cerr << "hwaccel " << command << ": " << option << ": " << error << "\n";
  return std::nullopt;
}

}  // namespace hwaccel::cli
