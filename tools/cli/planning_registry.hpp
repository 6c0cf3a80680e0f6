// What the planning subcommands (plan, train, recommend) read from their
// command lines the same way: the devices they plan for (hypothetical ones,
// --devices; a captured machine, --fixture; or this machine) and quantization
// options. Include after `import hwaccel;` (it uses the module's types).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <unistd.h>

#include "common.hpp"

namespace hwaccel::cli {

/// The user device specs a planning command reads: --device-specs FILE,
/// else $HWACCEL_DEVICE_SPECS, else none (an empty set: the built-in table
/// alone). On failure prints "hwaccel COMMAND: device specs: why" and returns
/// nothing (exit 1, as for an unreadable instance catalogue).
inline std::optional<DeviceSpecSet> device_specs_option(std::string_view command, const std::string& option) {
  std::string file = option;
  if (file.empty())
    if (const char* env = std::getenv("HWACCEL_DEVICE_SPECS"); env && *env) file = env;
  if (file.empty()) return DeviceSpecSet();
  auto set = read_device_specs(file);
  if (set) return std::move(*set);
  std::cerr << "hwaccel " << command << ": device specs: " << set.error().message << "\n";
  return std::nullopt;
}

/// Registers --device-specs on `cmd`.
inline void add_device_specs_option(CLI::App* cmd, std::string& file) {
  cmd->add_option("--device-specs", file,
                  "JSON file of devices the built-in spec table lacks, for --devices and for matching detected devices "
                  "(default: $HWACCEL_DEVICE_SPECS; format in docs/planning.md, \"Device specs\")");
}

/// The registry to plan on; on failure prints "hwaccel COMMAND: ..." and
/// sets `exit_code` (2 for a bad --devices list, 1 for a fixture that does
/// not replay). --devices names may be `extra`'s entries as well as the table's.
inline std::optional<AcceleratorRegistry> planning_registry(std::string_view command, const std::string& devices,
                                                            const std::string& fixture_dir, int& exit_code,
                                                            const DeviceSpecSet& extra = DeviceSpecSet()) {
  if (!devices.empty()) {
    auto r = hypothetical_registry(devices, extra);
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

/// The nodes to plan on: `--devices` naming nodes ("2x(8xH100-SXM-80GB)"),
/// else `--nodes` copies (1: the one machine) of what planning_registry
/// gives. A cluster of one node plans exactly as its registry. On failure
/// prints why and sets `exit_code` (2 for bad --devices or --nodes).
inline std::optional<Cluster> planning_cluster(std::string_view command, const std::string& devices,
                                               const std::string& fixture_dir, std::uint32_t nodes, int& exit_code,
                                               const DeviceSpecSet& extra = DeviceSpecSet()) {
  if (devices.find('(') != std::string::npos) {
    if (nodes > 1) {
      std::cerr << "hwaccel " << command << ": --nodes copies one node; --devices already names the nodes\n";
      exit_code = exit_usage;
      return std::nullopt;
    }
    auto cluster = hypothetical_cluster(devices, extra);
    if (cluster) return std::move(*cluster);
    std::cerr << "hwaccel " << command << ": --devices: " << cluster.error().message << "\n";
    exit_code = exit_usage;
    return std::nullopt;
  }
  auto registry = planning_registry(command, devices, fixture_dir, exit_code, extra);
  if (!registry) return std::nullopt;
  auto cluster = Cluster::replicate(*registry, std::max<std::uint32_t>(nodes, 1));
  if (cluster) return std::move(*cluster);
  std::cerr << "hwaccel " << command << ": --nodes: " << cluster.error().message << "\n";
  exit_code = exit_usage;
  return std::nullopt;
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

/// --fabric: the fabric between nodes, or nothing when the option is empty.
/// On a bad value prints "hwaccel COMMAND: why" and returns false (a usage error).
inline bool fabric_option(std::string_view command, const std::string& value, std::optional<Fabric>& out) {
  if (value.empty()) return true;
  auto fabric = parse_fabric(value);
  if (!fabric) {
    std::cerr << "hwaccel " << command << ": " << fabric.error().message << "\n";
    return false;
  }
  out = std::move(*fabric);
  return true;
}

/// --fleet: a fleet document read and parsed; on failure prints
/// "hwaccel COMMAND: --fleet: why" and returns nothing (exit 1).
inline std::optional<Fleet> fleet_option(std::string_view command, const std::string& path) {
  std::string content, error;
  if (!read_file(path, content, error, std::size_t{4} << 30)) {
    std::cerr << "hwaccel " << command << ": --fleet: " << error << "\n";
    return std::nullopt;
  }
  auto fleet = fleet_from_json(content);
  if (!fleet) {
    std::cerr << "hwaccel " << command << ": --fleet: " << path << ": " << fleet.error().message << "\n";
    return std::nullopt;
  }
  return std::move(*fleet);
}

/// --busy: a file (a list, or a placement result) when one is there, else
/// the list itself. On failure prints why and sets `exit_code` (1 for an
/// unreadable file, 2 for a bad list).
inline bool busy_option(std::string_view command, const std::string& value, BusyDevices& out, int& exit_code) {
  if (value.empty()) return true;
  std::string text = value, error;
  if (::access(value.c_str(), R_OK) == 0 && !read_file(value, text, error)) {
    std::cerr << "hwaccel " << command << ": --busy: " << error << "\n";
    exit_code = exit_failure;
    return false;
  }
  auto busy = parse_busy(text);
  if (!busy) {
    std::cerr << "hwaccel " << command << ": " << busy.error().message << "\n";
    exit_code = exit_usage;
    return false;
  }
  out = std::move(*busy);
  return true;
}

/// The options that size an inference plan, shared by plan and recommend.
struct SequenceOptions {
  std::uint64_t context = 4096;
  std::uint32_t batch = 1;
  std::string kv_dtype;  ///< empty: the weights' compute type
  double reserve = 0.10;
  bool context_given = false;  ///< --context was on the command line
};

/// Registers --context, --batch, --kv-dtype and --reserve on `cmd`.
inline void add_sequence_options(CLI::App* cmd, SequenceOptions& o) {
  cmd->add_option("--context", o.context, "Tokens per sequence, prompt and output together")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 24))
      ->each([&o](const std::string&) { o.context_given = true; });
  cmd->add_option("--batch", o.batch, "Concurrent sequences per replica")->check(CLI::Range(1u, 65536u));
  cmd->add_option("--kv-dtype", o.kv_dtype,
                  "KV cache type (fp16, bf16, fp8_e4m3, fp8_e5m2, int8, q8_0, q4_0, ...); default: the weights' "
                  "compute type");
  cmd->add_option("--reserve", o.reserve, "Fraction of each device's memory kept free (vLLM: 1 - gpu_memory_utilization)")
      ->check(CLI::Range(0.0, 0.95));
}

/// Copies the options into `settings`; false (after printing why) when
/// --kv-dtype names no KV cache type.
inline bool apply_sequence_options(std::string_view command, const SequenceOptions& o, InferenceSettings& settings) {
  settings.context = o.context;
  settings.batch = o.batch;
  settings.reserve_fraction = o.reserve;
  if (o.kv_dtype.empty()) return true;
  const auto kv = quantization_option(command, "--kv-dtype", o.kv_dtype, true);
  if (kv) settings.kv_cache_type = *kv;
  return kv.has_value();
}

}  // namespace hwaccel::cli
