// `hwaccel capture`: record this machine, or pasted outputs, as a fixture that replays.
#include "commands.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

import hwaccel;

#include "detect_builder.hpp"

namespace hwaccel::cli {
namespace {

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

// `capture --watch`: after the first state, each change the watcher sees is
// recorded as a timeline step: the kernel notifications that caused it, then
// the whole machine detected again and recorded (a complete state).
int record_timeline(const DetectBuilder& builder, const System& live, const std::string& out_dir, double seconds,
                    const std::string& source) {
  std::mutex mutex;
  Timeline timeline;
  std::string failure;
  WatchOptions options;
  options.detect = builder.options();
  options.on_change = [&](const RegistryChange& change) {
    std::lock_guard lock(mutex);
    const std::string folder = fmt::format("steps/{:03}", timeline.steps.size() + 1);
    RecordingSystem recorder(live);
    const AcceleratorRegistry state = builder.detect(recorder);
    if (auto r = recorder.write(out_dir + "/" + folder, describe_machine(state), source); !r) {
      failure = r.error().message;
      return;
    }
    TimelineStep step;
    step.name = fmt::format("change {} ({})", change.serial, to_string(change.cause));
    step.events = change.kernel_events;
    step.rescan = change.cause == ChangeCause::rescan || change.cause == ChangeCause::overflow;
    step.state = folder;
    step.complete = true;
    timeline.steps.push_back(std::move(step));
    std::cerr << fmt::format("hwaccel capture: step {}: {} event(s) after {} notification(s)\n", timeline.steps.size(),
                             change.events.size(), change.notifications);
  };
  auto watcher = Watcher::start(live, std::move(options));
  if (!watcher) {
    std::cerr << "hwaccel capture: cannot watch: " << watcher.error().message << "\n";
    return exit_failure;
  }
  for (const auto& u : (*watcher)->status().unavailable) std::cerr << "hwaccel capture: not available: " << u << "\n";
  std::cerr << fmt::format("hwaccel capture: watching for {} s\n", seconds);
  (*watcher)->wait_finished(std::chrono::steady_clock::now() +
                            std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000)));
  (*watcher)->stop();
  std::lock_guard lock(mutex);
  if (!failure.empty()) {
    std::cerr << "hwaccel capture: recording a step failed: " << failure << "\n";
    return exit_failure;
  }
  std::string error;
  if (!write_file(out_dir + "/timeline.json", write_timeline(timeline), error)) {
    std::cerr << "hwaccel capture: " << error << "\n";
    return exit_failure;
  }
  std::cerr << fmt::format("hwaccel capture: recorded {} step(s); replay with: hwaccel watch --fixture {}\n",
                           timeline.steps.size(), out_dir);
  return 0;
}

int run_capture(const DetectArgs& args, const std::string& out_dir, const std::string& machine_arg,
                double watch_seconds) {
  auto builder = make_builder(args);
  if (!builder) return exit_usage;
  const auto live = make_live_system();
  RecordingSystem recorder(*live);
  const AcceleratorRegistry registry = builder->detect(recorder);
  // The telemetry reads too, so that `hwaccel metrics --fixture` replays them.
  TelemetryOptions telemetry;
  telemetry.tool_timeout = std::chrono::milliseconds(args.timeout_ms);
  sample_telemetry(registry, recorder, telemetry);

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
  if (watch_seconds > 0) return record_timeline(*builder, *live, out_dir, watch_seconds, source);
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

Command add_capture_command(CLI::App& app) {
  struct Args {
    DetectArgs detect;
    std::string out;
    std::string machine;
    std::string import_from;
    double watch_seconds = 0;
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
  cmd->add_option("--watch", args->watch_seconds,
                  "Then watch for SECONDS and record each change as a step of a timeline (timeline.json) that "
                  "`hwaccel watch --fixture` replays")
      ->check(CLI::Range(0.0, 86400.0));
  return {cmd, [args] {
            if (!args->import_from.empty()) return run_import(args->detect, args->import_from, args->out, args->machine);
            return run_capture(args->detect, args->out, args->machine, args->watch_seconds);
          }};
}

}  // namespace hwaccel::cli
