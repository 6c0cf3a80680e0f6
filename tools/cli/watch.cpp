// `hwaccel watch`: devices added, removed, changed and health reports as they
// happen, one JSON line (or table row) each, until SIGINT or SIGTERM.
#include "commands.hpp"

#include <fmt/format.h>

#include <bitset>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <memory>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

import hwaccel;

#include "detect_builder.hpp"

namespace hwaccel::cli {
namespace {

struct WatchArgs {
  DetectArgs detect;
  std::string format = "jsonl";
  bool json = false;
  bool full = false;
  double interval_s = 30;
  int debounce_ms = 500;
  bool no_uevents = false;
  bool no_kernel_log = false;
  std::uint64_t count = 0;
  double duration_s = 0;
  double telemetry_interval_s = 10;
  double thermal_horizon_s = 300;
};

// A ThermalTrend warning as a health event on the device it concerns.
WatchEvent thermal_event(const ThermalWarning& w, const AcceleratorRegistry& registry) {
  WatchEvent e;
  e.kind = WatchEventKind::health;
  e.id = w.device_id;
  e.at = std::chrono::system_clock::now();
  HealthReport h;
  h.source = "thermal_trend";
  h.severity = HealthSeverity::warning;
  h.summary = fmt::format("{} sensor at {:.0f} C rises {:.1f} C a minute: its slowdown temperature ({:.0f} C) in "
                          "about {} s",
                          w.sensor, w.celsius, w.degrees_per_minute, w.slowdown_celsius, w.eta.count());
  h.message = h.summary;
  for (const auto& d : registry.devices())
    if (d.id == w.device_id) {
      e.identity = device_identity(d);
      e.name = d.name;
      e.backend = d.backend;
      h.pci_bus_id = d.pci_bus_id;
    }
  e.health = std::move(h);
  return e;
}

std::string redetected_names(const std::bitset<backend_count>& backends) {
  std::string out;
  for (std::size_t i = 0; i < backend_count; ++i)
    if (backends.test(i)) out += fmt::format("{}{}", out.empty() ? "" : ",", to_string(static_cast<Backend>(i)));
  return out;
}

// The line after a change's events with --full: what caused it and the new
// registry's summary document.
std::string change_line(const RegistryChange& change) {
  json::Writer w(false);
  w.begin_object();
  w.field("event", "registry");
  w.field("change", change.serial);
  w.field("cause", to_string(change.cause));
  w.field("notifications", static_cast<std::uint64_t>(change.notifications));
  w.key("redetected").begin_array();
  for (std::size_t i = 0; i < backend_count; ++i)
    if (change.redetected.test(i)) w.value(to_string(static_cast<Backend>(i)));
  w.end_array();
  w.field("latency_us", static_cast<std::uint64_t>(change.latency.count()));
  w.end_object();
  // The summary is a document of its own: nested as written, not re-parsed.
  std::string line = std::move(w).take();
  std::string summary = summary_json(*change.registry);
  while (!summary.empty() && (summary.back() == '\n' || summary.back() == ' ')) summary.pop_back();
  line.pop_back();
  return fmt::format("{},\"summary\":{}}}", line, summary);
}

int run_watch(const WatchArgs& args) {
  auto builder = make_builder(args.detect);
  if (!builder) return fail_with("watch", builder.error());
  auto opened = machine_system(args.detect);
  if (!opened) return fail_with("watch", opened.error());
  const std::unique_ptr<System> system = std::move(*opened);

  // SIGINT and SIGTERM are taken from a signalfd, so that every thread
  // (the watcher's included, which inherits this mask) leaves them to it.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  // A shell starts background jobs with SIGINT ignored; an ignored signal is
  // discarded before the signalfd sees it. Blocked, the default does no harm.
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  const int signal_fd = ::signalfd(-1, &signals, SFD_CLOEXEC);
  const int done_fd = ::eventfd(0, EFD_CLOEXEC);
  if (signal_fd < 0 || done_fd < 0) {
    return fail_with("watch", "cannot set up signal handling", exit_failure);
  }
  const auto done = [done_fd] {
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto n = ::write(done_fd, &one, sizeof one);
  };

  std::mutex output;
  std::uint64_t printed = 0;
  const bool table = args.format == "table";
  WatchOptions options;
  options.detect = builder->options();
  options.rescan_interval = std::chrono::milliseconds(static_cast<std::int64_t>(args.interval_s * 1000));
  options.debounce = std::chrono::milliseconds(args.debounce_ms);
  options.uevents = !args.no_uevents;
  options.kernel_log = !args.no_kernel_log;
  options.on_change = [&](const RegistryChange& change) {
    std::lock_guard lock(output);
    for (const auto& e : change.events) {
      if (args.count > 0 && printed >= args.count) break;
      if (table)
        std::cout << fmt::format("{}  {}\n", local_time(e.at), to_text(e));
      else
        std::cout << to_json(e) << "\n";
      ++printed;
    }
    if (args.full) {
      if (table)
        std::cout << fmt::format("{}  registry: {} device(s) after change {} ({}; re-detected {})\n", local_time(
                                     std::chrono::system_clock::now()),
                                 change.registry->devices().size(), change.serial, to_string(change.cause),
                                 redetected_names(change.redetected));
      else
        std::cout << change_line(change) << "\n";
    }
    std::cout.flush();
    if (args.count > 0 && printed >= args.count) done();
  };

  auto watcher = Watcher::start(*system, std::move(options));
  if (!watcher) return fail_with("watch", watcher.error().message, exit_failure);
  const WatchStatus started = (*watcher)->status();
  std::string sources;
  for (const auto& s : started.sources) sources += fmt::format("{}{}", sources.empty() ? "" : ", ", s);
  note("watch", fmt::format("{} device(s); listening to {}", (*watcher)->registry()->devices().size(),
                            sources.empty() ? "nothing" : sources));
  for (const auto& u : started.unavailable) note("watch", "not available: " + u);

  // Telemetry at its own interval: a device whose temperature trend reaches
  // its slowdown threshold within the horizon raises a health event.
  std::mutex thermal_mutex;
  std::condition_variable thermal_wake;
  bool stopping = false;
  std::thread thermal;
  if (args.telemetry_interval_s > 0 && args.thermal_horizon_s > 0) {
    thermal = std::thread([&] {
      TelemetryOptions topts;
      topts.slow_tools = std::make_shared<SlowToolCache>(std::chrono::minutes(10));
      ThermalTrend trend{std::chrono::seconds(static_cast<std::int64_t>(args.thermal_horizon_s))};
      const auto interval = std::chrono::milliseconds(static_cast<std::int64_t>(args.telemetry_interval_s * 1000));
      std::unique_lock lock(thermal_mutex);
      while (!stopping) {
        lock.unlock();
        const auto registry = (*watcher)->registry();
        const auto sample = sample_telemetry(*registry, *system, topts);
        for (const auto& w : trend.add(sample)) {
          std::lock_guard out_lock(output);
          if (args.count > 0 && printed >= args.count) break;
          const WatchEvent e = thermal_event(w, *registry);
          if (table) std::cout << fmt::format("{}  {}\n", local_time(e.at), to_text(e));
          else std::cout << to_json(e) << "\n";
          std::cout.flush();
          if (args.count > 0 && ++printed >= args.count) done();
        }
        lock.lock();
        thermal_wake.wait_for(lock, interval, [&] { return stopping; });
      }
    });
  }

  // A replayed timeline ends by itself; say so to the wait below.
  std::thread finished([&] {
    (*watcher)->wait_finished(std::chrono::steady_clock::time_point::max());
    done();
  });
  pollfd fds[2] = {{signal_fd, POLLIN, 0}, {done_fd, POLLIN, 0}};
  const int timeout = args.duration_s > 0 ? static_cast<int>(args.duration_s * 1000) : -1;
  int ready = 0;
  do {
    ready = ::poll(fds, 2, timeout);
  } while (ready < 0 && errno == EINTR);
  {
    std::lock_guard lock(thermal_mutex);
    stopping = true;
  }
  thermal_wake.notify_all();
  if (thermal.joinable()) thermal.join();
  (*watcher)->stop();
  finished.join();
  const WatchStatus end = (*watcher)->status();
  if (end.error) note("watch", *end.error);
  if (end.dropped_events > 0) note("watch", fmt::format("{} event(s) dropped", end.dropped_events));
  ::close(signal_fd);
  ::close(done_fd);
  return 0;
}

}  // namespace

Command add_watch_command(CLI::App& app) {
  auto args = std::make_shared<WatchArgs>();
  auto* cmd = app.add_subcommand("watch", "Report devices added, removed, changed and health events as they happen");
  cmd->footer(
      "Detects the machine, then follows it: kernel uevents (hot-plug, driver bind and unbind, driver\n"
      "loads) and kernel log health lines (NVIDIA Xid, amdgpu RAS/ECC) re-detect only the backends they\n"
      "concern, after a burst goes quiet (--debounce-ms); a periodic re-scan (--interval) catches what\n"
      "sends no event, such as a MIG reconfiguration or a GPU lost from the bus, and is all there is\n"
      "where the kernel's notifications cannot be read (many containers). Devices are named by PCI\n"
      "address or UUID, never by position. Ends on SIGINT or SIGTERM (docs/watch.md).\n"
      "\n"
      "Output: one JSON object per line per event ({\"event\": \"added\"|\"removed\"|\"changed\"|\"health\", ...});\n"
      "with --full, a line {\"event\": \"registry\", ...} with the new registry's summary after each change.\n"
      "\n"
      "Examples:\n"
      "  hwaccel watch\n"
      "  hwaccel watch --format table --interval 10\n"
      "  hwaccel watch --fixture fixtures/timelines/xid79-gpu-falls-off-bus   # replay a recorded timeline\n"
      "\n" +
      std::string(common_help_footer));
  add_machine_options(*cmd, args->detect,
                      "Replay a fixture instead of this machine; a fixture with a timeline.json replays its steps");
  add_log_options(*cmd, args->detect.log);
  auto* format = cmd->add_option("--format", args->format, "jsonl (default) or table")
                     ->check(CLI::IsMember({"jsonl", "table"}));
  // --json is --format jsonl, the default.
  add_json_default_flag(*cmd, args->json);
  cmd->get_option("--json")->excludes(format);
  cmd->add_flag("--full", args->full, "After each change, print the new registry's summary");
  cmd->add_option("--interval", args->interval_s, "Seconds between periodic re-scans; 0 for none (default 30)")
      ->check(CLI::Range(0.0, 86400.0));
  cmd->add_option("--debounce-ms", args->debounce_ms, "Quiet time that ends a burst of events (default 500)")
      ->check(CLI::Range(0, 60'000));
  cmd->add_flag("--no-uevents", args->no_uevents, "Do not listen to kernel uevents");
  cmd->add_flag("--no-kernel-log", args->no_kernel_log, "Do not read /dev/kmsg for health events");
  cmd->add_option("--telemetry-interval", args->telemetry_interval_s,
                  "Seconds between telemetry samples for the thermal trend; 0 for none (default 10)")
      ->check(CLI::Range(0.0, 86400.0));
  cmd->add_option("--thermal-horizon", args->thermal_horizon_s,
                  "Raise a health event when a device's temperature trend reaches its slowdown threshold within this "
                  "many seconds (default 300)")
      ->check(CLI::Range(0.0, 86400.0));
  cmd->add_option("--count", args->count, "Exit after this many events");
  cmd->add_option("--duration", args->duration_s, "Exit after this many seconds")->check(CLI::Range(0.0, 1e9));
  return {cmd, [args] { return run_watch(*args); }};
}

}  // namespace hwaccel::cli
