// Shared plumbing of the hwaccel subcommands (no module types here: this
// header is included before `import hwaccel;`).
#pragma once

#include <CLI/CLI.hpp>
#include <tl/expected.hpp>

#include <cstdint>
#include <functional>
#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hwaccel::cli {

/// Exit codes (docs/cli.md): 0 success, 1 the operation failed (unreadable
/// fixture, malformed model file, ...), 2 the command line was wrong.
inline constexpr int exit_failure = 1;
inline constexpr int exit_usage = 2;

/// Environment, exit status and documentation, shown after every --help (and
/// so in the generated man page; docs/cli.md says the same).
inline constexpr std::string_view common_help_footer =
    "Environment:\n"
    "  HWACCEL_BACKENDS   comma list of backends to run when --backends is not given\n"
    "  NO_COLOR           when set and not empty, --table output has no colours\n"
    "  HWACCEL_INSTANCE_CATALOGUE  instance catalogue file for `hwaccel recommend` (--catalogue wins)\n"
    "  HWACCEL_DEVICE_SPECS  device-spec file for `hwaccel specs`, plan, train, recommend (--device-specs wins)\n"
    "  HWACCEL_LOG        diagnostic events on stderr: warn, info, debug or trace (-v, -vv, -vvv win)\n"
    "\n"
    "Exit status:\n"
    "  0  success (a backend that failed is a warning in the output, not a failure)\n"
    "  1  the operation failed: unreadable fixture, capture folder not writable, ...\n"
    "  2  the command line was wrong: unknown option, bad value, unknown backend\n"
    "\n"
    "Data goes to standard output, diagnostics to standard error.\n"
    "Documentation: docs/cli.md, docs/json.md, docs/fixtures.md.";

/// A subcommand: its options are registered on the app it was added to; `run`
/// executes it after parsing and returns the exit code.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

/// The CLI's one way of failing: every subcommand says what went wrong on
/// stderr as "hwaccel COMMAND: MESSAGE" and ends with the exit status of
/// docs/cli.md. Helpers never print: they return a CommandError (or the
/// library's Error), and the command hands it to fail_with.
struct CommandError {
  std::string message;
  int exit_code = exit_failure;
};
template <class T>
using CommandResult = tl::expected<T, CommandError>;

/// A command line that was wrong (exit 2).
inline tl::unexpected<CommandError> usage_error(std::string message) {
  return tl::unexpected<CommandError>(CommandError{std::move(message), exit_usage});
}
/// An operation that failed (exit 1).
inline tl::unexpected<CommandError> failure(std::string message) {
  return tl::unexpected<CommandError>(CommandError{std::move(message), exit_failure});
}

/// Prints "hwaccel COMMAND: MESSAGE" ("hwaccel: MESSAGE" for an empty
/// command) on stderr and returns `exit_code`.
int fail_with(std::string_view command, std::string_view message, int exit_code);
inline int fail_with(std::string_view command, const CommandError& error) {
  return fail_with(command, error.message, error.exit_code);
}
/// Prints "hwaccel COMMAND: MESSAGE" on stderr: progress and warnings, the
/// same voice as fail_with, for what is not a failure.
void note(std::string_view command, std::string_view message);

/// Settings given on a command line, as (key, value) text in the order given:
/// what the library's readers (read_settings) check and store.
using SettingTexts = std::vector<std::pair<std::string, std::string>>;

/// Colour on a terminal unless NO_COLOR is set (https://no-color.org).
bool use_color(int fd);
/// True when `fd` is a terminal.
bool is_terminal(int fd);
/// "2026-11-22T15:04:05Z"
std::string utc_timestamp();
/// Writes a whole file (exit 1 when it cannot be written).
CommandResult<void> write_file(const std::string& path, std::string_view content);
/// "1.5 GiB", "300 MiB", "12 KiB", "7 B".
std::string bytes_text(std::uint64_t bytes);
/// Replaces a file atomically: written under a temporary name in the same
/// folder, synced, then renamed, so that a reader (node-exporter's textfile
/// collector, NFD's features.d watcher) sees the old file or the new one,
/// never half of one.
CommandResult<void> replace_file(const std::string& path, std::string_view content);
/// Reads a whole file up to `cap` bytes (exit 1 when it cannot be read).
CommandResult<std::string> read_file(const std::string& path, std::size_t cap = 64 << 20);
/// A time in the local time zone, "2026-12-03 10:02:11" (or `format`, strftime's).
std::string local_time(std::chrono::system_clock::time_point at, const char* format = "%Y-%m-%d %H:%M:%S");

/// The USER:PASSWORD on the first line of a basic-auth file, which must not
/// be readable by others; `option` names the flag in messages.
CommandResult<std::string> read_credentials(const std::string& file, std::string_view option);

}  // namespace hwaccel::cli
