// `hwaccel run`, `hwaccel leases` and `hwaccel usage`: sharing a node's
// accelerators (docs/sharing.md). run takes leases on free devices, runs the
// command with the visibility variables set and releases them when it exits.
#include "commands.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

import hwaccel;

#include "detect_builder.hpp"
#include "planning_registry.hpp"
#include "setting_options.hpp"

namespace hwaccel::cli {
namespace {

struct RunArgs {
  DetectArgs detect;
  std::size_t devices = 1;
  std::vector<std::string> device_ids;
  std::string min_free_memory;
  double max_utilization = -1;
  bool same_domain = false;
  bool wait = false;
  double timeout_s = 0;
  std::string lease_dir;
  std::string usage_db;
  bool no_usage = false;
  std::string quota_file;
  std::string plan_model;
  std::vector<std::string> command;
};

// --plan MODEL: as many devices as one replica of the planner's layout for
// this machine takes (tensor x pipeline parallel), in one domain when it is
// split by tensor parallelism.
CommandResult<std::pair<std::size_t, bool>> devices_for_plan(const std::string& model, const AcceleratorRegistry& registry) {
  const std::vector<Setting> values = settings_of({{"model", model}});
  auto inputs = checked(read_planning_inputs(values));
  if (!inputs) return tl::unexpected(inputs.error());
  auto settings = checked(read_inference_settings(values));
  if (!settings) return tl::unexpected(settings.error());
  auto loaded = inputs->load_model();
  if (!loaded) return failure("--plan: " + loaded.error().message);
  auto cluster = inputs->cluster(&registry, DeviceSpecSet{});
  if (!cluster) return failure("--plan: " + cluster.error().message);
  auto plan = plan_inference(*cluster, *loaded, *settings);
  if (!plan) return failure("--plan: " + plan.error().message);
  const auto& st = plan->strategy;
  return std::pair<std::size_t, bool>(std::size_t{st.tensor_parallel} * st.pipeline_parallel, st.tensor_parallel > 1);
}

std::string usage_db_path(const std::string& asked) {
  if (!asked.empty()) return asked;
  if (const char* env = std::getenv("HWACCEL_USAGE_DB"); env && *env) return env;
  return std::string(default_usage_db);
}

std::string quoted_command(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    out += a.find_first_of(" \t\"'$\\") == std::string::npos && !a.empty() ? a : "'" + a + "'";
  }
  return out;
}

// The child's status as the shell reports it: its exit code, or 128 + the signal.
int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return exit_failure;
}

int run_command(const RunArgs& args) {
  if (args.command.empty()) return fail_with("run", "give the command after --: hwaccel run --devices 1 -- python train.py", exit_usage);
  const auto settings = detect_settings(args.detect);
  if (!settings) return fail_with("run", settings.error());
  auto machine = detect_machine(args.detect);
  if (!machine) return fail_with("run", machine.error());
  LeaseRequest request;
  request.count = args.devices;
  if (!args.plan_model.empty()) {
    auto needed = devices_for_plan(args.plan_model, machine->registry);
    if (!needed) return fail_with("run", needed.error());
    request.count = needed->first;
    request.same_domain = needed->second;
    note("run", fmt::format("the plan for {} takes {} device{}{}", args.plan_model, needed->first, needed->first == 1 ? "" : "s",
                            needed->second ? " in one domain" : ""));
  }
  request.device_ids = args.device_ids;
  if (!args.min_free_memory.empty()) {
    const auto bytes = text::parse_memory_size(args.min_free_memory);
    if (!bytes) return fail_with("run", "--min-free-memory: '" + args.min_free_memory + "' is not a size (40G, 512MiB)", exit_usage);
    request.min_free_memory_bytes = *bytes;
  }
  if (args.max_utilization >= 0) request.max_utilization = args.max_utilization;
  request.same_domain = request.same_domain || args.same_domain;
  request.lease_dir = args.lease_dir;
  if (!args.no_usage) {
    request.usage_db = usage_db_path(args.usage_db);
    // The default folder is made where the user may (root, usually).
    const auto slash = request.usage_db.rfind('/');
    if (slash != std::string::npos && slash > 0) ::mkdir(request.usage_db.substr(0, slash).c_str(), 0755);
  }
  request.quota_file = args.quota_file;
  request.command = quoted_command(args.command);
  if (args.wait) request.wait = args.timeout_s > 0 ? std::chrono::milliseconds(static_cast<std::int64_t>(args.timeout_s * 1000))
                                                   : std::chrono::hours(24 * 365);
  std::vector<DeviceRefusal> refused;
  auto lease = reserve(machine->registry, *machine->system, request, &refused);
  if (!lease) {
    const int code = lease.error().kind == ErrorKind::invalid_input ? exit_usage : exit_failure;
    return fail_with("run", lease.error().message, code);
  }
  for (const auto& w : lease->warnings()) note("run", "warning: " + w);
  std::string held;
  for (const auto& d : lease->devices()) held += (held.empty() ? "" : ", ") + d.device_id;
  std::string env_text;
  for (const auto& [name, value] : lease->environment()) env_text += fmt::format(" {}={}", name, value);
  note("run", fmt::format("leased {}:{}", held, env_text));

  // Signals reach the command; run waits for it and keeps the lease until it ends.
  sigset_t signals;
  sigemptyset(&signals);
  for (const int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&signals, s);
  sigset_t previous;
  pthread_sigmask(SIG_BLOCK, &signals, &previous);
  const int signal_fd = ::signalfd(-1, &signals, SFD_CLOEXEC);
  if (signal_fd < 0) return fail_with("run", "cannot set up signal handling", exit_failure);
  std::cout.flush();
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) return fail_with("run", std::string("cannot start the command: ") + std::strerror(errno), exit_failure);
  if (child == 0) {
    // If run itself is killed, the command does not keep devices it no longer holds.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) _exit(128 + SIGTERM);
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    for (const auto& name : lease->cleared_environment()) ::unsetenv(name.c_str());
    for (const auto& [name, value] : lease->environment()) ::setenv(name.c_str(), value.c_str(), 1);
    std::vector<char*> argv;
    for (const auto& a : args.command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    const int why = errno;
    const std::string message = fmt::format("hwaccel run: cannot run {}: {}\n", args.command.front(), std::strerror(why));
    [[maybe_unused]] const auto n = ::write(STDERR_FILENO, message.data(), message.size());
    _exit(why == ENOENT ? 127 : 126);
  }
  int status = 0;
  for (;;) {
    signalfd_siginfo info{};
    if (::read(signal_fd, &info, sizeof info) != static_cast<ssize_t>(sizeof info)) {
      if (errno == EINTR) continue;
      break;
    }
    if (info.ssi_signo == SIGCHLD) {
      if (::waitpid(child, &status, WNOHANG) == child) break;
      continue;
    }
    ::kill(child, static_cast<int>(info.ssi_signo));
  }
  ::close(signal_fd);
  lease->release();
  for (const auto& w : lease->warnings()) note("run", "warning: " + w);
  return exit_code_of(status);
}

struct LeasesArgs {
  std::string lease_dir;
  std::string release;
  bool json = false;
};

int run_leases(const LeasesArgs& args) {
  if (!args.release.empty()) {
    auto released = release_lease(args.lease_dir, args.release);
    if (!released) return fail_with("leases", released.error().message, exit_failure);
    note("leases", fmt::format("sent SIGTERM to PID {} ({}), which holds {}", released->pid, released->user, args.release));
    return 0;
  }
  auto held = held_leases(args.lease_dir);
  if (!held) return fail_with("leases", held.error().message, exit_failure);
  if (args.json) {
    json::Writer w(false);
    w.begin_array();
    for (const auto& h : *held) write_json(w, h);
    w.end_array();
    std::cout << w.str() << "\n";
  } else if (held->empty()) {
    std::cout << "no device is leased\n";
  } else {
    std::cout << fmt::format("{:<14} {:<12} {:>8} {:<19} {}\n", "DEVICE", "USER", "PID", "SINCE", "COMMAND");
    for (const auto& h : *held) {
      const std::string when = h.since > 0 ? local_time(std::chrono::system_clock::from_time_t(h.since)) : "-";
      std::cout << fmt::format("{:<14} {:<12} {:>8} {:<19} {}\n", h.device_id.empty() ? h.identity : h.device_id, h.user, h.pid,
                               when, h.command);
    }
  }
  std::cout.flush();
  return std::cout.good() ? 0 : exit_failure;
}

struct UsageArgs {
  std::string usage_db;
  std::string since = "7d";
  std::string by = "user";
  bool json = false;
};

int run_usage(const UsageArgs& args) {
  // "7d", "12h", "30m", "3600s", or a bare number of days.
  const std::string_view since_text = args.since;
  const char unit = since_text.empty() ? 'd' : since_text.back();
  const bool has_unit = unit == 'd' || unit == 'h' || unit == 'm' || unit == 's';
  const auto amount = text::parse_double(has_unit ? since_text.substr(0, since_text.size() - 1) : since_text);
  if (!amount || *amount < 0 || *amount > 3660 * 86400.0)
    return fail_with("usage", "--since: '" + args.since + "' is not a duration (7d, 12h, 30m)", exit_usage);
  const double seconds = *amount * (unit == 'h' ? 3600 : unit == 'm' ? 60 : unit == 's' ? 1 : 86400);
  const auto now = static_cast<std::int64_t>(std::time(nullptr));
  const std::int64_t since = now - static_cast<std::int64_t>(seconds);
  const std::string path = usage_db_path(args.usage_db);
  auto records = usage_records(path, since);
  if (!records) return fail_with("usage", records.error().message, exit_failure);
  const UsageGrouping by = args.by == "device" ? UsageGrouping::device : args.by == "day" ? UsageGrouping::day : UsageGrouping::user;
  const auto lines = usage_by(*records, by, since, now);
  if (args.json) {
    json::Writer w(false);
    w.begin_object().field("since", since).field("until", now).field("by", args.by).key("usage").begin_array();
    for (const auto& l : lines)
      w.begin_object().field("key", l.key).field("device_hours", l.device_hours).field("leases", static_cast<std::uint64_t>(l.leases)).end_object();
    w.end_array().end_object();
    std::cout << w.str() << "\n";
  } else {
    std::cout << fmt::format("{:<24} {:>14} {:>8}\n", args.by == "day" ? "DAY (UTC)" : args.by == "device" ? "DEVICE" : "USER",
                             "DEVICE-HOURS", "LEASES");
    double total = 0;
    for (const auto& l : lines) {
      std::cout << fmt::format("{:<24} {:>14.2f} {:>8}\n", l.key, l.device_hours, l.leases);
      total += l.device_hours;
    }
    std::cout << fmt::format("{:<24} {:>14.2f}\n", "total", total);
  }
  std::cout.flush();
  return std::cout.good() ? 0 : exit_failure;
}

}  // namespace

Command add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  args->detect.command = "run";
  auto* cmd = app.add_subcommand("run", "Run a command on free accelerators, leased to it until it exits");
  cmd->footer(
      "Chooses devices that no lease holds and no other process uses (by telemetry: nvidia-smi's process\n"
      "list, DRM fdinfo), takes a lease on each (a lock the kernel drops when the job dies), sets the\n"
      "variables that make the runtime use exactly them (CUDA_VISIBLE_DEVICES by UUID, ROCR_VISIBLE_DEVICES,\n"
      "ZE_AFFINITY_MASK, ...), runs the command and releases them when it exits, however it exits. The exit\n"
      "status is the command's. Each lease is accounted in the usage database; a quota file is enforced\n"
      "when the lease is taken. MIG instances and partitions are leased one by one. docs/sharing.md.\n"
      "\n"
      "Examples:\n"
      "  hwaccel run --devices 2 -- python train.py\n"
      "  hwaccel run --devices 1 --min-free-memory 40G --wait --timeout 600 -- ./serve.sh\n"
      "  hwaccel run --device cuda:0/mig:1 -- python notebook_kernel.py\n"
      "  hwaccel run --plan llama-3.1-70b -- vllm serve meta-llama/Llama-3.1-70B-Instruct\n"
      "  hwaccel leases\n"
      "\n" +
      std::string(common_help_footer));
  add_machine_options(*cmd, args->detect, "Choose among a captured machine's devices (fixture folder): for tests");
  auto* count = cmd->add_option("--devices", args->devices, "How many devices (default 1)")->check(CLI::Range(1, 4096));
  auto* plan = cmd->add_option("--plan", args->plan_model, "As many devices as the plan for this model on this machine takes (a catalogue id or config.json)")
                   ->excludes(count);
  cmd->add_option("--device", args->device_ids, "This device (registry id or identity); repeat for several")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->excludes(count)
      ->excludes(plan);
  cmd->add_option("--min-free-memory", args->min_free_memory, "Only devices with this much free memory (40G)");
  cmd->add_option("--max-utilization", args->max_utilization, "Only devices at most this busy (0 to 1)")->check(CLI::Range(0.0, 1.0));
  cmd->add_flag("--same-domain", args->same_domain, "All in one NVLink/xGMI domain");
  auto* wait = cmd->add_flag("--wait", args->wait, "Wait for enough free devices instead of failing");
  cmd->add_option("--timeout", args->timeout_s, "With --wait: give up after this many seconds")->check(CLI::Range(0.0, 1e7))->needs(wait);
  cmd->add_option("--lease-dir", args->lease_dir, "Where the leases are (default $HWACCEL_LEASE_DIR, else /run/hwaccel/leases)");
  auto* db = cmd->add_option("--usage-db", args->usage_db, "The usage database (default $HWACCEL_USAGE_DB, else /var/lib/hwaccel/usage.sqlite)");
  cmd->add_flag("--no-usage", args->no_usage, "Do not account this lease")->excludes(db);
  cmd->add_option("--quota", args->quota_file, "A quota file to enforce (docs/sharing.md)")->check(CLI::ExistingFile);
  cmd->add_option("command", args->command, "The command and its arguments, after --")->required();
  cmd->prefix_command(false);
  add_log_options(*cmd, args->detect.log);
  return {cmd, [args] { return run_command(*args); }};
}

Command add_leases_command(CLI::App& app) {
  auto args = std::make_shared<LeasesArgs>();
  auto* cmd = app.add_subcommand("leases", "List who holds which device (hwaccel run's leases), or release one");
  cmd->footer("A lease whose job died is gone at once (its lock was the kernel's). --release ID sends SIGTERM to\n"
              "the holder (its owner or root only). docs/sharing.md.\n\n" +
              std::string(common_help_footer));
  cmd->add_option("--lease-dir", args->lease_dir, "Where the leases are (default $HWACCEL_LEASE_DIR, else /run/hwaccel/leases)");
  cmd->add_option("--release", args->release, "End the lease on this device (registry id or identity)");
  cmd->add_flag("--json", args->json, "JSON instead of a table");
  return {cmd, [args] { return run_leases(*args); }};
}

Command add_usage_command(CLI::App& app) {
  auto args = std::make_shared<UsageArgs>();
  auto* cmd = app.add_subcommand("usage", "Device-hours used through hwaccel run, by user, device or day");
  cmd->footer("Reads the usage database that hwaccel run writes (one record per lease; a lease still held counts\n"
              "until now). docs/sharing.md.\n\n" +
              std::string(common_help_footer));
  cmd->add_option("--usage-db", args->usage_db, "The usage database (default $HWACCEL_USAGE_DB, else /var/lib/hwaccel/usage.sqlite)");
  cmd->add_option("--since", args->since, "How far back: 7d (default), 12h, 30m");
  cmd->add_option("--by", args->by, "user (default), device or day")->check(CLI::IsMember({"user", "device", "day"}));
  cmd->add_flag("--json", args->json, "JSON instead of a table");
  return {cmd, [args] { return run_usage(*args); }};
}

}  // namespace hwaccel::cli
