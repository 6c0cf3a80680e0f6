// The detection that `detect`, `capture` and the planners configure from the
// command line. Include after `import hwaccel;` (it uses the module's types).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "commands.hpp"

namespace hwaccel::cli {

/// A builder from --backends (or $HWACCEL_BACKENDS), --no-system-probes and
/// --timeout-ms; a bad backend list prints why and gives nothing (exit 2).
std::optional<DetectBuilder> make_builder(const DetectArgs& args);

/// Installs the stderr log sink that -v/-vv/-vvv or HWACCEL_LOG ask for
/// (none when neither does); false, after saying why, for a bad
/// HWACCEL_LOG or --log-format.
bool install_log_sink(DetectBuilder& builder, const LogArgs& args);

/// The machine a command reads: the --fixture folder (taking the captured
/// durations with --simulate-durations) or this one; nullptr after printing
/// "hwaccel COMMAND: cannot replay fixture: why" (exit 1).
std::unique_ptr<System> machine_system(std::string_view command, const DetectArgs& args);

/// Registers what machine_system() and make_builder() read: --fixture
/// (`fixture_help` says what is done with it), --backends, --timeout-ms and
/// --simulate-durations.
void add_machine_options(CLI::App& cmd, DetectArgs& args, const std::string& fixture_help);

/// A machine read and detected as the options say, named by --host when given.
struct DetectedMachine {
  std::unique_ptr<System> system;
  AcceleratorRegistry registry;
};
/// nullopt after saying why on stderr; `exit_code` is then what to return.
std::optional<DetectedMachine> detect_machine(std::string_view command, const DetectArgs& args, int& exit_code);
/// --host: the node's name instead of the kernel's host name.
void add_host_option(CLI::App& cmd, DetectArgs& args);

/// Accepts a node name that a fleet scan can key by (host_name_problem).
CLI::Validator host_name_validator();

}  // namespace hwaccel::cli
