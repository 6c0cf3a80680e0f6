// The detection that `detect`, `capture` and the commands reading a machine
// configure from the command line. Include after `import hwaccel;` (it uses
// the module's types).
#pragma once

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "commands.hpp"

namespace hwaccel::cli {

/// The detection settings the command line gives, read by the library's
/// detection table: --backends (else $HWACCEL_BACKENDS), --timeout-ms,
/// --no-system-probes, -v/-vv/-vvv (else $HWACCEL_LOG). A bad value, given
/// or in the environment, is a usage error (exit 2).
CommandResult<DetectSettings> detect_settings(const DetectArgs& args);

/// A builder from detect_settings(), with the stderr log sink that -v or
/// $HWACCEL_LOG asks for (none when neither does).
CommandResult<DetectBuilder> make_builder(const DetectArgs& args);

/// Sends the builder's diagnostic events at `level` and above to stderr,
/// one line each, as text or JSON (--log-format).
void install_log_sink(DetectBuilder& builder, LogLevel level, const LogArgs& args);

/// The machine a command reads: the --fixture folder (taking the captured
/// durations with --simulate-durations; "cannot replay fixture: why", exit
/// 1, when it cannot be read) or this one.
CommandResult<std::unique_ptr<System>> machine_system(const DetectArgs& args);

/// Registers the detection settings' options on `cmd` (by default
/// --backends and --timeout-ms; --no-system-probes when `only` names
/// system-probes).
void add_detect_setting_options(CLI::App& cmd, DetectArgs& args,
                                std::initializer_list<std::string_view> only = {"backends", "timeout-ms"});

/// Registers what machine_system() and make_builder() read: --fixture
/// (`fixture_help` says what is done with it), --backends, --timeout-ms and
/// --simulate-durations.
void add_machine_options(CLI::App& cmd, DetectArgs& args, const std::string& fixture_help);

/// A machine read and detected as the options say, named by --host when given.
struct DetectedMachine {
  std::unique_ptr<System> system;
  AcceleratorRegistry registry;
};
CommandResult<DetectedMachine> detect_machine(const DetectArgs& args);
/// --host: the node's name instead of the kernel's host name.
void add_host_option(CLI::App& cmd, DetectArgs& args);

/// Accepts a node name that a fleet scan can key by (host_name_problem).
CLI::Validator host_name_validator();

/// --json where JSON is already what a command prints: accepted, so that
/// every command printing JSON takes it, and said to change nothing.
void add_json_default_flag(CLI::App& cmd, bool& json);

}  // namespace hwaccel::cli
