// `hwaccel top`: a terminal monitor of every device and its processes, live
// or from a fixture; --once prints one frame, --json the sample.
#include "commands.hpp"

#include <cerrno>
#include <chrono>
#include <clocale>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <langinfo.h>
#include <sys/types.h>
#include <unistd.h>

#include <fmt/format.h>

import hwaccel;

#include "detect_builder.hpp"
#include "top_view.hpp"

namespace hwaccel::cli {
namespace {

struct TopArgs {
  DetectArgs detect;
  double interval_s = 1.0;
  bool once = false;
  bool json = false;
  int width = 0;
  bool no_color = false;
};

std::string source_label(const DetectArgs& args) {
  if (!args.fixture.empty()) return "fixture " + std::filesystem::path(args.fixture).filename().string();
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) == 0 && name[0] != '\0') return name;
  return "this machine";
}

int once_width(int asked) {
  if (asked > 0) return asked;
  if (const char* columns = std::getenv("COLUMNS"))
    if (const auto n = text::parse_u64(columns); n && *n >= 40 && *n <= 1000) return static_cast<int>(*n);
  return 120;
}

bool utf8_terminal() {
  std::setlocale(LC_CTYPE, "");
  const char* codeset = nl_langinfo(CODESET);
  return codeset && (std::strcmp(codeset, "UTF-8") == 0 || std::strcmp(codeset, "utf8") == 0);
}

// Signals the selected process after a yes; the answer is a message.
std::pair<std::string, LineStyle> terminate(const DeviceProcess& p, bool fixture) {
  if (fixture) return {"a fixture's processes are not on this machine: nothing was signalled", LineStyle::warning};
  if (!p.pid) return {"this process's PID is not in this PID namespace: it cannot be signalled from here", LineStyle::warning};
  if (!p.uid || (*p.uid != getuid() && geteuid() != 0))
    return {fmt::format("PID {} is not yours: only your own processes can be signalled", *p.pid), LineStyle::warning};
  if (::kill(static_cast<pid_t>(*p.pid), SIGTERM) != 0)
    return {fmt::format("SIGTERM to PID {} failed: {}", *p.pid, std::strerror(errno)), LineStyle::warning};
  return {fmt::format("sent SIGTERM to PID {}", *p.pid), LineStyle::good};
}

int run_top(const TopArgs& args) {
  const auto settings = detect_settings(args.detect);
  if (!settings) return fail_with("top", settings.error());
  auto machine = detect_machine(args.detect);
  if (!machine) return fail_with("top", machine.error());
  const System& system = *machine->system;
  auto registry = std::make_shared<const AcceleratorRegistry>(std::move(machine->registry));
  TelemetryOptions options;
  options.tool_timeout = settings->tool_timeout;
  options.processes = true;
  // tpu-info and rocm-smi -a take seconds: refreshes share what they last printed.
  options.slow_tools = std::make_shared<SlowToolCache>();
  const bool fixture = !args.detect.fixture.empty();

  if (args.json || args.once) {
    TelemetrySample sample = sample_telemetry(*registry, system, options);
    if (args.json) {
      std::cout << to_json(sample, args.detect.pretty) << "\n";
    } else {
      TopView view(registry, source_label(args.detect), false);
      view.add_sample(std::move(sample));
      for (const ScreenLine& line : view.frame(once_width(args.width), 0)) std::cout << line.text << "\n";
    }
    std::cout.flush();
    return std::cout.good() ? 0 : exit_failure;
  }

  const bool unicode = utf8_terminal();
  const bool color = !args.no_color && !std::getenv("NO_COLOR");
  std::string error;
  auto screen = TerminalScreen::open(color, error);
  if (!screen) return fail_with("top", error, exit_failure);
  const auto interval = std::chrono::milliseconds(static_cast<std::int64_t>(args.interval_s * 1000));
  TopView view(registry, source_label(args.detect), unicode);
  view.set_interval(interval);
  enum class Mode { browse, filter, confirm } mode = Mode::browse;
  std::string typed;
  auto next_sample = std::chrono::steady_clock::now();
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= next_sample) {
      view.add_sample(sample_telemetry(*registry, system, options));
      next_sample = std::chrono::steady_clock::now() + interval;
    }
    screen->draw(view.frame(screen->columns(), screen->rows()));
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next_sample - std::chrono::steady_clock::now());
    const ScreenKey key = screen->next_key(std::max(wait, std::chrono::milliseconds(0)));
    if (key.kind == ScreenKey::none || key.kind == ScreenKey::resize) continue;
    if (key.kind == ScreenKey::interrupt) break;
    if (mode == Mode::filter) {
      if (key.kind == ScreenKey::enter) {
        view.set_filter(typed);
        view.set_message("");
        mode = Mode::browse;
      } else if (key.kind == ScreenKey::escape) {
        view.set_filter("");
        view.set_message("");
        mode = Mode::browse;
      } else {
        if (key.kind == ScreenKey::backspace && !typed.empty()) typed.pop_back();
        else if (key.kind == ScreenKey::typed && key.character < 128 && typed.size() < 64)
          typed.push_back(static_cast<char>(key.character));
        view.set_message("filter: " + typed + "_  (Enter applies, Esc clears)");
      }
      continue;
    }
    if (mode == Mode::confirm) {
      mode = Mode::browse;
      const DeviceProcess* p = view.selected_process();
      if (p && key.kind == ScreenKey::typed && (key.character == 'y' || key.character == 'Y')) {
        auto [message, style] = terminate(*p, fixture);
        view.set_message(std::move(message), style);
      } else {
        view.set_message("nothing was signalled");
      }
      continue;
    }
    if (view.help()) {
      view.toggle_help();
      if (key.kind == ScreenKey::typed && key.character == 'q') break;
      continue;
    }
    switch (key.kind) {
      case ScreenKey::up: view.select_next(-1); break;
      case ScreenKey::down: view.select_next(1); break;
      case ScreenKey::page_up: view.select_next(-10); break;
      case ScreenKey::page_down: view.select_next(10); break;
      case ScreenKey::home: view.select_next(-1000000); break;
      case ScreenKey::end: view.select_next(1000000); break;
      case ScreenKey::escape: view.set_message(""); break;
      case ScreenKey::typed:
        switch (key.character) {
          case 'q': return 0;
          case 'h':
          case '?': view.toggle_help(); break;
          case 's': view.cycle_sort(); break;
          case 'r': view.reverse_sort(); break;
          case '/':
            mode = Mode::filter;
            typed = view.filter();
            view.set_message("filter: " + typed + "_  (Enter applies, Esc clears)");
            break;
          case 'k':
            if (const DeviceProcess* p = view.selected_process()) {
              mode = Mode::confirm;
              view.set_message(fmt::format("send SIGTERM to {} ({})? y/n", p->pid ? fmt::format("PID {}", *p->pid) : "this process",
                                           text::excerpt(p->command, 60)),
                               LineStyle::warning);
            } else {
              view.set_message("no process is selected");
            }
            break;
          case 'j': view.select_next(1); break;
          default: break;
        }
        break;
      default: break;
    }
  }
  return 0;
}

}  // namespace

Command add_top_command(CLI::App& app) {
  auto args = std::make_shared<TopArgs>();
  args->detect.command = "top";
  auto* cmd = app.add_subcommand("top", "Watch every device and its processes in the terminal");
  cmd->footer(
      "A full-screen monitor (ncurses): per device its utilization and memory with a minute of\n"
      "history, power against its cap, temperature, clocks, ECC errors and throttle reasons; MIG\n"
      "instances and partitions as rows of their own; then the processes on the devices (from\n"
      "nvidia-smi, and from DRM fdinfo for amdgpu, xe and i915) with user, GPU memory, engine use\n"
      "and command line. Keys: h help, q quit, arrows select, s sort, r reverse, / filter,\n"
      "k send SIGTERM to your own selected process (after a y). NO_COLOR turns colour off.\n"
      "--once prints one frame for scripts and tests; --json prints the sample with its processes.\n"
      "docs/top.md describes the columns.\n"
      "\n"
      "Examples:\n"
      "  hwaccel top\n"
      "  hwaccel top --interval 2\n"
      "  hwaccel top --once --fixture fixtures/machines/shared-node-4x-a100-containers\n"
      "\n" +
      std::string(common_help_footer));
  add_machine_options(*cmd, args->detect, "Show a captured machine (fixture folder) instead of this one");
  cmd->add_option("-d,--interval", args->interval_s, "Seconds between refreshes (default 1)")->check(CLI::Range(0.1, 3600.0));
  auto* once = cmd->add_flag("--once", args->once, "Print one frame and exit");
  auto* json = cmd->add_flag("--json", args->json, "Print one sample with its processes as JSON (docs/metrics.md) and exit");
  json->excludes(once);
  cmd->add_flag("--pretty", args->detect.pretty, "Indent the JSON")->needs(json);
  cmd->add_option("--width", args->width, "With --once: the width of the frame (default $COLUMNS, else 120)")
      ->check(CLI::Range(40, 1000))
      ->needs(once);
  cmd->add_flag("--no-color", args->no_color, "No colour (as NO_COLOR does)");
  add_log_options(*cmd, args->detect.log);
  return {cmd, [args] { return run_top(*args); }};
}

}  // namespace hwaccel::cli
