// `hwaccel detect`, `hwaccel capture` and `hwaccel backends`.
#include "commands.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

import hwaccel;

namespace hwaccel::cli {
namespace {

// Resolves --backends, then $HWACCEL_BACKENDS; a bad list is a usage error.
std::optional<DetectBuilder> make_builder(const DetectArgs& args) {
  DetectBuilder builder;
  std::string list = args.backends;
  std::string origin = "--backends";
  if (list.empty()) {
    if (const char* env = std::getenv("HWACCEL_BACKENDS")) {
      list = env;
      origin = "HWACCEL_BACKENDS";
    }
  }
  if (!list.empty()) {
    if (auto r = builder.select(list); !r) {
      std::cerr << "hwaccel: " << origin << ": " << r.error().message << "\n";
      return std::nullopt;
    }
  }
  builder.system_probes(!args.no_system).tool_timeout(std::chrono::milliseconds(args.timeout_ms));
  return builder;
}

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

std::string describe_machine(const AcceleratorRegistry& registry) {
  std::string text;
  const auto& cpu = registry.system().cpu;
  if (cpu && !cpu->model_name.empty()) text = cpu->model_name;
  std::size_t accelerators = 0;
  for (const auto& d : registry.devices())
    if (d.family != Family::cpu) ++accelerators;
  text += fmt::format("{}{} accelerator(s)", text.empty() ? "" : ", ", accelerators);
  return text;
}

int run_capture(const DetectArgs& args, const std::string& out_dir, const std::string& machine_arg) {
  auto builder = make_builder(args);
  if (!builder) return exit_usage;
  const auto live = make_live_system();
  RecordingSystem recorder(*live);
  const AcceleratorRegistry registry = builder->detect(recorder);

  const std::string machine = machine_arg.empty() ? describe_machine(registry) : machine_arg;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "unknown-host");
  const std::string source =
      fmt::format("captured with hwaccel capture {} on {} at {}", library_version(), host, utc_timestamp());
  if (auto r = recorder.write(out_dir, machine, source); !r) {
    std::cerr << "hwaccel: capture failed: " << r.error().message << "\n";
    return exit_failure;
  }
  std::string error;
  if (!write_file(out_dir + "/expected.json", to_json(registry, JsonOptions{.pretty = true, .include_timings = false}),
                  error)) {
    std::cerr << "hwaccel: capture failed: " << error << "\n";
    return exit_failure;
  }
  std::cerr << "hwaccel: captured " << registry.devices().size() << " device(s) into " << out_dir
            << "; replay with: hwaccel detect --fixture " << out_dir << "\n";
  return 0;
}

// `capture --import`: pasted outputs become a fixture, replayed once so the
// user sees at once what hwaccel makes of them.
int run_import(const DetectArgs& args, const std::string& source, const std::string& out_dir, const std::string& machine) {
  auto summary = import_capture(source, out_dir, machine);
  if (!summary) {
    std::cerr << "hwaccel: import failed: " << summary.error().message << "\n";
    return summary.error().kind == ErrorKind::invalid_input || summary.error().kind == ErrorKind::parse_error
               ? exit_usage
               : exit_failure;
  }
  for (const auto& note : summary->notes) std::cerr << "hwaccel: " << note << "\n";
  auto builder = make_builder(args);
  if (!builder) return exit_usage;
  auto fixture = FixtureSystem::open(out_dir);
  if (!fixture) {
    std::cerr << "hwaccel: import failed: " << fixture.error().message << "\n";
    return exit_failure;
  }
  const AcceleratorRegistry registry = builder->system_probes(false).detect(**fixture);
  std::cerr << "hwaccel: imported " << summary->commands << " command output(s) and " << summary->files
            << " file(s) into " << out_dir << "; they replay to " << describe_machine(registry)
            << "; replay with: hwaccel detect --fixture " << out_dir << "\n";
  return 0;
}

}  // namespace

void add_detect_options(CLI::App& cmd, DetectArgs& args) {
  cmd.add_option("--fixture", args.fixture, "Replay a captured machine (fixture folder) instead of this one")
      ->check(CLI::ExistingDirectory);
  cmd.add_option("--backends", args.backends,
                 "Comma list of backends to run (default: all, or $HWACCEL_BACKENDS); see `hwaccel backends`");
  cmd.add_flag("--pretty", args.pretty, "Indent the JSON (no effect with --table)");
  cmd.add_flag("--table", args.table,
               "A table for people instead of JSON: one device a line (ID, family, name, memory, free memory, "
               "PCI address, PCIe link, NUMA node), then the warnings");
  cmd.add_flag("--no-timings", args.no_timings, "Leave per-backend timings out of the JSON (stable output)");
  cmd.add_flag("--no-system-probes", args.no_system, "Skip host probes (environment, storage, network)");
  cmd.add_flag("--simulate-durations", args.simulate,
               "With --fixture: take as long as the captured tools took (latency tests)");
  cmd.add_option("--timeout-ms", args.timeout_ms, "Deadline for each tool run, in milliseconds")
      ->check(CLI::Range(1, 600'000));
}

int run_detect(const DetectArgs& args) {
  auto builder = make_builder(args);
  if (!builder) return exit_usage;
  AcceleratorRegistry registry;
  if (!args.fixture.empty()) {
    FixtureOptions options;
    options.simulate_durations = args.simulate;
    auto fixture = FixtureSystem::open(args.fixture, options);
    if (!fixture) {
      std::cerr << "hwaccel: cannot replay fixture: " << fixture.error().message << "\n";
      return exit_failure;
    }
    registry = builder->detect(**fixture);
  } else {
    registry = builder->detect();
  }
  if (args.table) {
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
      "\n" +
      std::string(common_help_footer));
  add_detect_options(*cmd, *args);
  return {cmd, [args] { return run_detect(*args); }};
}

Command add_capture_command(CLI::App& app) {
  struct Args {
    DetectArgs detect;
    std::string out;
    std::string machine;
    std::string import_from;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("capture", "Record this machine into a fixture folder that replays it exactly");
  cmd->footer(
      "Detects this machine while recording every file read and every tool run, and writes them as a\n"
      "fixture folder (fixture.json, root/, commands/, expected.json; docs/fixtures.md) that\n"
      "`hwaccel detect --fixture DIR` replays to the same registry. Attach it to a bug report.\n"
      "\n"
      "Examples:\n"
      "  hwaccel capture --out my-machine\n"
      "  hwaccel capture --out gpu-box --machine \"2x H100 SXM, driver 550\" --backends cpu,cuda\n"
      "  hwaccel capture --import bug-report.txt --out bug-1234     # a pasted terminal transcript\n"
      "  hwaccel capture --import outputs/import.json --out bug-1234  # output files named in a manifest\n"
      "\n"
      "With --import, nothing of this machine is read: pasted tool outputs become the fixture. A\n"
      "transcript gives each command on a line starting with \"$ \" followed by its output; a manifest\n"
      "(JSON) names each output file's command and exit code, and files or folders copied from the\n"
      "machine (docs/fixtures.md, \"Importing pasted outputs\"). Commands not pasted answer \"not captured\".\n"
      "\n" +
      std::string(common_help_footer));
  cmd->add_option("--out", args->out, "Folder to create (must not exist, or be empty)")->required();
  cmd->add_option("--machine", args->machine,
                  "One-line description of the machine for fixture.json (default: CPU model and accelerator count)");
  cmd->add_option("--backends", args->detect.backends,
                  "Comma list of backends to run (default: all, or $HWACCEL_BACKENDS); see `hwaccel backends`");
  cmd->add_option("--timeout-ms", args->detect.timeout_ms, "Deadline for each tool run, in milliseconds")
      ->check(CLI::Range(1, 600'000));
  cmd->add_option("--import", args->import_from,
                  "Make the fixture from pasted outputs: a transcript, an import manifest (JSON), or a folder holding "
                  "import.json")
      ->check(CLI::ExistingPath);
  return {cmd, [args] {
            if (!args->import_from.empty()) return run_import(args->detect, args->import_from, args->out, args->machine);
            return run_capture(args->detect, args->out, args->machine);
          }};
}

Command add_backends_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("backends", "List the detectors and the tools each may run");
  cmd->footer(
      "Prints the detectors in the order they report, one a line: the backend name (as --backends and\n"
      "HWACCEL_BACKENDS take it; \"(host probe)\" marks probes that are not backends) and the tools it may run.\n"
      "\n" +
      std::string(common_help_footer));
  return {cmd, [] {
            for (const Detector* d : detector_table()) {
              std::cout << d->name << (d->backend ? "" : " (host probe)");
              if (!d->tools.empty()) {
                std::cout << "\ttools:";
                for (auto t : d->tools) std::cout << " " << t;
              }
              std::cout << "\n";
            }
            return 0;
          }};
}

}  // namespace hwaccel::cli
