// `hwaccel detect` (and bare `hwaccel`): the registry of this machine or a fixture, as JSON or a table.
#include "commands.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <initializer_list>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

import hwaccel;

#include "detect_builder.hpp"
#include "setting_options.hpp"

namespace hwaccel::cli {

CLI::Validator host_name_validator() {
  return CLI::Validator(
      [](std::string& name) {
        const auto problem = host_name_problem(name);
        return problem ? *problem : std::string();
      },
      "HOST", "host name");
}

void add_host_option(CLI::App& cmd, DetectArgs& args) {
  cmd.add_option("--host", args.host,
                 "The node's name in the registry (system.host) instead of the kernel's host name: a Kubernetes "
                 "node name, a Slurm node name, or a name for a fixture in a fleet scan")
      ->check(host_name_validator());
}

CommandResult<DetectedMachine> detect_machine(const DetectArgs& args) {
  auto builder = make_builder(args);
  if (!builder) return tl::unexpected(builder.error());
  auto system = machine_system(args);
  if (!system) return tl::unexpected(system.error());
  DetectedMachine machine;
  machine.system = std::move(*system);
  machine.registry = builder->detect(*machine.system);
  if (!args.host.empty()) machine.registry.inventory().system.host = args.host;
  return machine;
}

CommandResult<DetectSettings> detect_settings(const DetectArgs& args) {
  std::vector<Setting> values = settings_of(args.settings);
  // -v, -vv, -vvv win over $HWACCEL_LOG, as a value given wins over its variable.
  if (args.log.verbosity > 0)
    values.push_back(Setting{"log-level", args.log.verbosity == 1 ? "info" : args.log.verbosity == 2 ? "debug" : "trace"});
  auto settings = read_detect_settings(values, process_environment(), BadEnvironment::fail);
  if (!settings) return usage_error(settings.error().message);
  return std::move(*settings);
}

CommandResult<DetectBuilder> make_builder(const DetectArgs& args) {
  auto settings = detect_settings(args);
  if (!settings) return tl::unexpected(settings.error());
  DetectBuilder builder = settings->builder();
  if (settings->log_level) install_log_sink(builder, *settings->log_level, args.log);
  return builder;
}

CommandResult<std::unique_ptr<System>> machine_system(const DetectArgs& args) {
  if (args.fixture.empty()) return make_live_system();
  FixtureOptions options;
  options.simulate_durations = args.simulate;
  // A fixture with a timeline replays its steps to `hwaccel watch`, and
  // reads as its first state to everything else.
  auto fixture = open_fixture_folder(args.fixture, options);
  if (!fixture) return failure("cannot replay fixture: " + fixture.error().message);
  return std::move(*fixture);
}

void add_detect_setting_options(CLI::App& cmd, DetectArgs& args, std::initializer_list<std::string_view> only) {
  add_setting_options(cmd, detect_setting_keys(), args.settings, only);
}

void add_machine_options(CLI::App& cmd, DetectArgs& args, const std::string& fixture_help) {
  cmd.add_option("--fixture", args.fixture, fixture_help)->check(CLI::ExistingDirectory);
  add_detect_setting_options(cmd, args);
  cmd.add_flag("--simulate-durations", args.simulate,
               "With --fixture: take as long as the captured tools took, and a hung one until its deadline");
}

void add_json_default_flag(CLI::App& cmd, bool& json) {
  cmd.add_flag("--json", json, "JSON output (the default: accepted for scripts that pass it to every command)");
}

namespace {

std::string human_bytes(std::optional<std::uint64_t> bytes) {
  if (!bytes) return "-";
  const double gib = static_cast<double>(*bytes) / (1024.0 * 1024 * 1024);
  if (gib >= 1) return fmt::format("{:.1f} GiB", gib);
  return fmt::format("{:.0f} MiB", static_cast<double>(*bytes) / (1024.0 * 1024));
}

// Short code of a link, in nvidia-smi topo -m's vocabulary where it has one.
std::string link_code(const DeviceLink& l) {
  switch (l.kind) {
    case LinkKind::nvlink: return l.lanes ? fmt::format("NV{}", *l.lanes) : "NV";
    case LinkKind::xgmi: return "XGMI";
    case LinkKind::ici: return "ICI";
    case LinkKind::neuronlink: return "NLNK";
    case LinkKind::pcie_switch: return "PXB";
    case LinkKind::host_bridge: return "PHB";
    case LinkKind::numa_node: return "NODE";
    case LinkKind::system: return "SYS";
  }
  return "?";
}

// The device-to-device link matrix and the fabrics joining devices.
std::string link_matrix(const AcceleratorRegistry& registry, const char* bold, const char* reset) {
  std::vector<std::string> ids;
  for (const auto& d : registry.devices())
    for (const auto& l : registry.links())
      if (l.a == d.id || l.b == d.id) {
        ids.push_back(d.id);
        break;
      }
  std::string out;
  if (!ids.empty()) {
    out += fmt::format("\n{}Links{}\n{:<10}", bold, reset, "");
    for (const auto& id : ids) out += fmt::format(" {:>8}", id);
    out += '\n';
    for (const auto& row : ids) {
      out += fmt::format("{:<10}", row);
      for (const auto& col : ids) {
        std::string cell = row == col ? "X" : "-";
        for (const auto& l : registry.links())
          if ((l.a == row && l.b == col) || (l.a == col && l.b == row)) cell = link_code(l);
        out += fmt::format(" {:>8}", cell);
      }
      out += '\n';
    }
  }
  for (const auto& ic : registry.interconnects()) {
    std::string devices;
    for (const auto& id : ic.device_ids) devices += (devices.empty() ? "" : " ") + id;
    out += fmt::format("{}{}: {}{}", out.empty() ? "\n" : "", ic.kind, ic.name,
                       ic.bandwidth_gbps ? fmt::format(", {:.1f} GB/s per device", *ic.bandwidth_gbps) : "");
    out += devices.empty() ? "\n" : fmt::format(" [{}]\n", devices);
  }
  return out;
}

std::string registry_table(const AcceleratorRegistry& registry, bool color) {
  const char* bold = color ? "\033[1m" : "";
  const char* dim = color ? "\033[2m" : "";
  const char* yellow = color ? "\033[33m" : "";
  const char* reset = color ? "\033[0m" : "";
  std::string out = fmt::format("{}{:<10} {:<6} {:<34} {:>11} {:>11} {:<14} {:<8} {}{}\n", bold, "ID", "FAMILY",
                                "NAME", "MEMORY", "FREE", "PCI", "LINK", "NUMA", reset);
  if (registry.devices().empty()) out += "(no device detected)\n";
  for (const auto& d : registry.devices()) {
    std::string name = d.name.size() > 34 ? d.name.substr(0, 31) + "..." : d.name;
    std::string link = "-";
    if (d.pcie && d.pcie->current_generation() && d.pcie->current_width)
      link = fmt::format("Gen{} x{}", *d.pcie->current_generation(), *d.pcie->current_width);
    std::string pci = d.pci_bus_id ? *d.pci_bus_id : "-";
    std::string numa = d.numa_node ? std::to_string(*d.numa_node) : "-";
    const char* tone = (!d.visible || !d.available) ? dim : "";
    std::string note;
    if (!d.available) note += "  (unavailable)";
    if (!d.visible) note += "  (hidden by *_VISIBLE_DEVICES)";
    out += fmt::format("{}{:<10} {:<6} {:<34} {:>11} {:>11} {:<14} {:<8} {}{}{}\n", tone, d.id, to_string(d.family),
                       name, human_bytes(d.memory_bytes), human_bytes(d.memory_free_bytes), pci, link, numa, note,
                       tone[0] ? reset : "");
  }
  out += link_matrix(registry, bold, reset);
  if (!registry.warnings().empty()) {
    out += fmt::format("\n{}Warnings{}\n", bold, reset);
    for (const auto& w : registry.warnings())
      out += fmt::format("  {}{}{} [{}] {}\n", yellow, w.backend, reset, to_string(w.kind), w.message);
  }
  return out;
}

}  // namespace

void add_detect_options(CLI::App& cmd, DetectArgs& args) {
  cmd.add_option("--fixture", args.fixture, "Replay a captured machine (fixture folder) instead of this one")
      ->check(CLI::ExistingDirectory);
  add_detect_setting_options(cmd, args, {"backends", "timeout-ms", "system-probes", "all-tools", "plugin-path",
                                         "plugins-in-process", "plugin-host"});
  add_host_option(cmd, args);
  cmd.add_flag("--pretty", args.pretty, "Indent the JSON (no effect with --table)");
  auto* table = cmd.add_flag("--table", args.table,
                             "A table for people instead of JSON: one device a line (ID, family, name, memory, free "
                             "memory, PCI address, PCIe link, NUMA node), then the warnings");
  add_json_default_flag(cmd, args.json);
  table->excludes(cmd.get_option("--json"));
  cmd.add_flag("--no-timings", args.no_timings, "Leave per-backend timings out of the JSON (stable output)");
  cmd.add_flag("--simulate-durations", args.simulate,
               "With --fixture: take as long as the captured tools took (latency tests)");
  cmd.add_flag("--summary", args.summary,
               "A compact JSON document instead of the registry: device counts by family and backend, the best "
               "device, memory totals, warnings by kind (docs/json.md)");
  add_log_options(cmd, args.log);
}

int run_detect(const DetectArgs& args) {
  auto builder = make_builder(args);
  if (!builder) return fail_with(args.command, builder.error());
  AcceleratorRegistry registry;
  if (!args.fixture.empty()) {
    FixtureOptions options;
    options.simulate_durations = args.simulate;
    auto fixture = FixtureSystem::open(args.fixture, options);
    if (!fixture) return fail_with(args.command, "cannot replay fixture: " + fixture.error().message, exit_failure);
    registry = builder->detect(**fixture);
  } else {
    registry = builder->detect();
  }
  if (!args.host.empty()) registry.inventory().system.host = args.host;
  if (args.summary) {
    std::cout << summary_json(registry, args.pretty);
    if (!args.pretty) std::cout << "\n";
  } else if (args.table) {
    std::cout << registry_table(registry, use_color(STDOUT_FILENO));
  } else {
    std::cout << to_json(registry, JsonOptions{.pretty = args.pretty, .include_timings = !args.no_timings});
    if (!args.pretty) std::cout << "\n";
  }
  std::cout.flush();
  return std::cout.good() ? 0 : exit_failure;
}

Command add_detect_command(CLI::App& app) {
  auto args = std::make_shared<DetectArgs>();
  auto* cmd = app.add_subcommand("detect", "Detect accelerators and print the registry (JSON by default)");
  cmd->footer(
      "Detects the accelerators of this machine (or of a captured one, with --fixture) and prints the\n"
      "registry: devices, host facts, warnings and per-backend timings, as JSON (docs/json.md) or as a table.\n"
      "\n"
      "Examples:\n"
      "  hwaccel detect --table\n"
      "  hwaccel detect --backends cpu,cuda --pretty\n"
      "  hwaccel detect --fixture fixtures/machines/dual-xeon-8480-no-accel --no-timings\n"
      "  hwaccel detect --host \"$NODE_NAME\" --no-timings   (a node of a fleet scan: docs/fleet.md)\n"
      "\n" +
      std::string(common_help_footer));
  add_detect_options(*cmd, *args);
  return {cmd, [args] { return run_detect(*args); }};
}

}  // namespace hwaccel::cli
