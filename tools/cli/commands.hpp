// The subcommands of hwaccel, each defined in its own translation unit.
#pragma once

#include "common.hpp"

#include <string>

namespace hwaccel::cli {

/// Diagnostic logging on stderr: -v (info), -vv (debug), -vvv (trace), or
/// HWACCEL_LOG=warn|info|debug|trace; --log-format text|json.
struct LogArgs {
  int verbosity = 0;
  std::string format = "text";
};
void add_log_options(CLI::App& cmd, LogArgs& args);

/// Options shared by `hwaccel`, `hwaccel detect` and the commands that read
/// the machine or a fixture.
struct DetectArgs {
  /// The subcommand, as messages name it ("detect"; empty for bare `hwaccel`).
  std::string command = "detect";
  std::string fixture;
  std::string host;
  /// The detection settings given (--backends, --timeout-ms,
  /// --no-system-probes), read by the library's detection table.
  SettingTexts settings;
  bool pretty = false;
  bool table = false;
  bool json = false;
  bool no_timings = false;
  bool simulate = false;
  bool summary = false;
  LogArgs log;
};

void add_detect_options(CLI::App& cmd, DetectArgs& args);
int run_detect(const DetectArgs& args);

Command add_detect_command(CLI::App& app);
Command add_capture_command(CLI::App& app);
Command add_backends_command(CLI::App& app);
Command add_plan_command(CLI::App& app);
Command add_specs_command(CLI::App& app);
Command add_models_command(CLI::App& app);
Command add_train_command(CLI::App& app);
Command add_recommend_command(CLI::App& app);
Command add_summary_command(CLI::App& app);
Command add_doctor_command(CLI::App& app);
Command add_metrics_command(CLI::App& app);
Command add_serve_command(CLI::App& app);
Command add_fleet_command(CLI::App& app);
Command add_export_command(CLI::App& app);
Command add_watch_command(CLI::App& app);
Command add_place_command(CLI::App& app);
Command add_top_command(CLI::App& app);
Command add_run_command(CLI::App& app);
Command add_leases_command(CLI::App& app);
Command add_usage_command(CLI::App& app);

}  // namespace hwaccel::cli
