// `hwaccel capture`: record this machine, or pasted outputs, as a fixture that replays.
#include "commands.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>
#if defined(_WIN32)
#include "posix_compat.hpp"
#endif

import hwaccel;

#include "detect_builder.hpp"
#include "setting_options.hpp"

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

#if !defined(_WIN32)
// `capture --watch`: after the first state, each change the watcher sees is
// recorded as a timeline step: the kernel notifications that caused it, then
// the whole machine detected again and recorded (a complete state).
int record_timeline(const DetectBuilder& builder, const System& live, const std::string& out_dir, double seconds,
                    const std::string& source) {
  std::mutex mutex;
  Timeline timeline;
  std::string step_failure;
  WatchOptions options;
  options.detect = builder.options();
  options.on_change = [&](const RegistryChange& change) {
    std::lock_guard lock(mutex);
    const std::string folder = fmt::format("steps/{:03}", timeline.steps.size() + 1);
    RecordingSystem recorder(live);
    const AcceleratorRegistry state = builder.detect(recorder);
    if (auto r = recorder.write(out_dir + "/" + folder, describe_machine(state), source); !r) {
      step_failure = r.error().message;
      return;
    }
    TimelineStep step;
    step.name = fmt::format("change {} ({})", change.serial, to_string(change.cause));
    step.events = change.kernel_events;
    step.rescan = change.cause == ChangeCause::rescan || change.cause == ChangeCause::overflow;
    step.state = folder;
    step.complete = true;
    timeline.steps.push_back(std::move(step));
    note("capture", fmt::format("step {}: {} event(s) after {} notification(s)", timeline.steps.size(),
                                change.events.size(), change.notifications));
  };
  auto watcher = Watcher::start(live, std::move(options));
  if (!watcher) return fail_with("capture", "cannot watch: " + watcher.error().message, exit_failure);
  for (const auto& u : (*watcher)->status().unavailable) note("capture", "not available: " + u);
  note("capture", fmt::format("watching for {} s", seconds));
  (*watcher)->wait_finished(std::chrono::steady_clock::now() +
                            std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000)));
  (*watcher)->stop();
  std::lock_guard lock(mutex);
  if (!step_failure.empty()) return fail_with("capture", "recording a step failed: " + step_failure, exit_failure);
  if (auto written = write_file(out_dir + "/timeline.json", write_timeline(timeline)); !written)
    return fail_with("capture", written.error());
  note("capture", fmt::format("recorded {} step(s); replay with: hwaccel watch --fixture {}", timeline.steps.size(),
                              out_dir));
  return 0;
}
#endif

int run_capture(const DetectArgs& args, const std::string& out_dir, const std::string& machine_arg,
                double watch_seconds) {
  const auto settings = detect_settings(args);
  if (!settings) return fail_with("capture", settings.error());
  auto builder = make_builder(args);
  if (!builder) return fail_with("capture", builder.error());
  const auto live = make_live_system();
  RecordingSystem recorder(*live);
  // A capture is evidence for a bug report: every backend's tools are looked
  // for, also those whose devices the kernel does not show.
  const AcceleratorRegistry registry = builder->all_tools(true).detect(recorder);
#if !defined(_WIN32)
  // The telemetry reads too, so that `hwaccel metrics --fixture` replays them.
  TelemetryOptions telemetry;
  telemetry.tool_timeout = settings->tool_timeout;
  sample_telemetry(registry, recorder, telemetry);
#endif

  const std::string machine = machine_arg.empty() ? describe_machine(registry) : machine_arg;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "unknown-host");
  const std::string source =
      fmt::format("captured with hwaccel capture {} on {} at {}", library_version(), host, utc_timestamp());
  if (auto r = recorder.write(out_dir, machine, source); !r)
    return fail_with("capture", "capture failed: " + r.error().message, exit_failure);
  if (auto written =
          write_file(out_dir + "/expected.json", to_json(registry, JsonOptions{.pretty = true, .include_timings = false}));
      !written)
    return fail_with("capture", "capture failed: " + written.error().message, exit_failure);
  note("capture", fmt::format("captured {} device(s) into {}; replay with: hwaccel detect --fixture {}",
                              registry.devices().size(), out_dir, out_dir));
#if defined(_WIN32)
  if (watch_seconds > 0)
    return fail_with("capture", "--watch needs the watcher, which the Windows build does not have (docs/windows.md)",
                     exit_usage);
#else
  if (watch_seconds > 0) return record_timeline(*builder, *live, out_dir, watch_seconds, source);
#endif
  return 0;
}

// `capture --import`: pasted outputs become a fixture, replayed once so the
// user sees at once what hwaccel makes of them.
int run_import(const DetectArgs& args, const std::string& source, const std::string& out_dir, const std::string& machine) {
  auto summary = import_capture(source, out_dir, machine);
  if (!summary)
    return fail_with("capture", "import failed: " + summary.error().message,
                     summary.error().kind == ErrorKind::invalid_input || summary.error().kind == ErrorKind::parse_error
                         ? exit_usage
                         : exit_failure);
  for (const auto& n : summary->notes) note("capture", n);
  auto builder = make_builder(args);
  if (!builder) return fail_with("capture", builder.error());
  auto fixture = FixtureSystem::open(out_dir);
  if (!fixture) return fail_with("capture", "import failed: " + fixture.error().message, exit_failure);
  const AcceleratorRegistry registry = builder->system_probes(false).detect(**fixture);
  note("capture", fmt::format("imported {} command output(s) and {} file(s) into {}; they replay to {}; replay with: "
                              "hwaccel detect --fixture {}",
                              summary->commands, summary->files, out_dir, describe_machine(registry), out_dir));
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
  add_detect_setting_options(*cmd, args->detect, {"backends", "timeout-ms", "plugin-path", "plugins-in-process", "plugin-host"});
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
