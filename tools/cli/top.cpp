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
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <langinfo.h>
#include <sys/types.h>
#include <unistd.h>

#include <fmt/format.h>

import hwaccel;

#include "detect_builder.hpp"
#include "top_fleet.hpp"
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
  std::vector<std::string> hosts;
  std::string hosts_file;
  double timeout_s = 2.0;
  std::string basic_auth_file;
  std::string ca_file;
};

int once_width(int asked);

// The nodes of --hosts and --hosts-file (one per line; # starts a comment).
CommandResult<std::vector<std::string>> fleet_nodes(const TopArgs& args) {
  std::vector<std::string> nodes = args.hosts;
  if (!args.hosts_file.empty()) {
    auto text = read_file(args.hosts_file, std::size_t{1} << 20);
    if (!text) return tl::unexpected(text.error());
    std::string_view rest = *text;
    while (!rest.empty()) {
      std::string_view line = text::next_line(rest);
      line = text::trim(line.substr(0, line.find('#')));
      if (!line.empty()) nodes.emplace_back(line);
    }
  }
  for (const auto& node : nodes)
    if (node.empty() || node.size() > 256 || node.find_first_of(" \t\"") != std::string::npos)
      return usage_error("--hosts: '" + text::excerpt(node, 60) + "' is not HOST:PORT or a URL");
  if (nodes.size() > 1024) return usage_error("--hosts: more than 1024 nodes; use a Prometheus server for a fleet that size");
  return nodes;
}

int run_fleet_top(const TopArgs& args, std::vector<std::string> nodes) {
  NodePollOptions options;
  options.interval = std::chrono::milliseconds(static_cast<std::int64_t>(args.interval_s * 1000));
  options.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(args.timeout_s * 1000));
  options.ca_file = args.ca_file;
  if (!args.basic_auth_file.empty()) {
    auto credentials = read_credentials(args.basic_auth_file, "--basic-auth-file");
    if (!credentials) return fail_with("top", credentials.error());
    options.credentials = std::move(*credentials);
  }
  NodePoller poller(std::move(nodes), options);
  if (args.once) {
    poller.poll_once();
    for (const ScreenLine& line : fleet_frame(poller.snapshot(), "", once_width(args.width), 0, options.interval, false))
      std::cout << line.text << "\n";
    std::cout.flush();
    return std::cout.good() ? 0 : exit_failure;
  }
  std::string error;
  auto screen = TerminalScreen::open(!args.no_color && !std::getenv("NO_COLOR"), error);
  if (!screen) return fail_with("top", error, exit_failure);
  poller.start();
  std::string filter, typed;
  bool help = false, typing = false;
  for (;;) {
    auto lines = fleet_frame(poller.snapshot(), filter, screen->columns(), screen->rows(), options.interval, help);
    if (typing && !lines.empty()) lines.back() = {"filter: " + typed + "_  (Enter applies, Esc clears)", LineStyle::normal};
    screen->draw(lines);
    // The nodes answer on their own threads: redraw a few times a second.
    const ScreenKey key = screen->next_key(std::chrono::milliseconds(250));
    if (key.kind == ScreenKey::interrupt) break;
    if (key.kind == ScreenKey::none || key.kind == ScreenKey::resize) continue;
    if (typing) {
      if (key.kind == ScreenKey::enter) filter = typed, typing = false;
      else if (key.kind == ScreenKey::escape) filter.clear(), typing = false;
      else if (key.kind == ScreenKey::backspace && !typed.empty()) typed.pop_back();
      else if (key.kind == ScreenKey::typed && key.character < 128 && typed.size() < 64) typed.push_back(static_cast<char>(key.character));
      continue;
    }
    if (help) {
      help = false;
      continue;
    }
    if (key.kind != ScreenKey::typed) continue;
    if (key.character == 'q') break;
    if (key.character == 'h' || key.character == '?') help = true;
    if (key.character == '/') {
      typing = true;
      typed = filter;
    }
  }
  return 0;
}

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
  if (!args.hosts.empty() || !args.hosts_file.empty()) {
    auto nodes = fleet_nodes(args);
    if (!nodes) return fail_with("top", nodes.error());
    if (nodes->empty()) return fail_with("top", "--hosts-file: no node in " + args.hosts_file, exit_usage);
    return run_fleet_top(args, std::move(*nodes));
  }
  const auto settings = detect_settings(args.detect);
  if (!settings) return fail_with("top", settings.error());
  auto machine = detect_machine(args.detect);
  if (!machine) return fail_with("top", machine.error());
  const System& system = *machine->system;
  std::shared_ptr<const AcceleratorRegistry> registry = std::make_shared<const AcceleratorRegistry>(std::move(machine->registry));
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

  // Hot-plug and health events: a live machine's kernel notifications, or a
  // fixture's recorded timeline replayed; the registry follows them.
  std::unique_ptr<Watcher> watcher;
  std::mutex event_mutex;
  std::vector<std::pair<std::string, LineStyle>> pending_events;
  const bool timeline = dynamic_cast<const TimelineSystem*>(&system) != nullptr;
  if (!fixture || timeline) {
    auto builder = make_builder(args.detect);
    if (!builder) return fail_with("top", builder.error());
    WatchOptions watch;
    watch.detect = builder->options();
    watch.rescan_interval = std::chrono::seconds(fixture ? 0 : 60);
    watch.on_change = [&](const RegistryChange& change) {
      const std::lock_guard lock(event_mutex);
      for (const WatchEvent& e : change.events) {
        const std::string device = e.id.empty() ? e.identity : e.id;
        if (e.kind == WatchEventKind::health && e.health)
          pending_events.emplace_back(fmt::format("{}  {}: {}{}", local_time(e.at, "%H:%M:%S"), device, e.health->summary,
                                                  e.health->code ? fmt::format(" (Xid {})", *e.health->code) : ""),
                                      e.health->severity == HealthSeverity::critical ? LineStyle::warning : LineStyle::normal);
        else
          pending_events.emplace_back(fmt::format("{}  {} {} {}", local_time(e.at, "%H:%M:%S"), device, to_string(e.kind), e.name),
                                      e.kind == WatchEventKind::removed ? LineStyle::warning : LineStyle::normal);
      }
    };
    if (auto started = Watcher::start(system, std::move(watch))) watcher = std::move(*started);
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
  // The screen is drawn again only when a sample, a key or a resize changed
  // it: a wait that ends early (a signal, ncurses' own wake-ups) costs no frame.
  bool dirty = true;
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= next_sample) {
      dirty = true;
      if (watcher)
        if (auto current = watcher->registry(); current && current != registry) {
          registry = std::move(current);
          view.set_registry(registry);
          // What slow tools printed (nvidia-smi -q's MIG instances) described the old machine.
          options.slow_tools = std::make_shared<SlowToolCache>();
        }
      {
        const std::lock_guard lock(event_mutex);
        for (auto& [line, style] : pending_events) view.add_event(std::move(line), style);
        pending_events.clear();
      }
      view.add_sample(sample_telemetry(*registry, system, options));
      next_sample = std::chrono::steady_clock::now() + interval;
    }
    if (dirty) screen->draw(view.frame(screen->columns(), screen->rows()));
    dirty = false;
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next_sample - std::chrono::steady_clock::now());
    const ScreenKey key = screen->next_key(std::max(wait, std::chrono::milliseconds(0)));
    if (key.kind == ScreenKey::none) continue;
    dirty = true;
    if (key.kind == ScreenKey::resize) continue;
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
      "--hosts reads other nodes' `hwaccel serve` (/registry and /telemetry) instead: a row per node and\n"
      "device; a node that stops answering is shown as such and never holds up the view.\n"
      "docs/top.md describes the columns.\n"
      "\n"
      "Examples:\n"
      "  hwaccel top\n"
      "  hwaccel top --interval 2\n"
      "  hwaccel top --once --fixture fixtures/machines/dgx-h100-busy-containers\n"
      "  hwaccel top --hosts gpu-a:9464,gpu-b:9464,gpu-c:9464\n"
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
  auto* hosts = cmd->add_option("--hosts", args->hosts, "Nodes running `hwaccel serve` (HOST:PORT or URL, comma-separated): a row per node and device")
                    ->delimiter(',');
  auto* hosts_file = cmd->add_option("--hosts-file", args->hosts_file, "The nodes, one per line (# comments)")->check(CLI::ExistingFile);
  cmd->add_option("--timeout", args->timeout_s, "With --hosts: seconds each request may take (default 2)")->check(CLI::Range(0.1, 60.0));
  cmd->add_option("--basic-auth-file", args->basic_auth_file, "With --hosts: USER:PASSWORD for the nodes' basic auth (a file only you can read)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--cacert", args->ca_file, "With --hosts: the CAs that https nodes' certificates must chain to (default: the system's)")
      ->check(CLI::ExistingFile);
  hosts->excludes(json);
  hosts_file->excludes(json);
  for (auto* option : {hosts, hosts_file})
    for (const char* local : {"--fixture", "--simulate-durations"})
      if (auto* other = cmd->get_option_no_throw(local)) option->excludes(other);
  add_log_options(*cmd, args->detect.log);
  return {cmd, [args] { return run_top(*args); }};
}

}  // namespace hwaccel::cli
