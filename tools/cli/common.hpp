// Shared plumbing of the hwaccel subcommands (no module types here: this
// header is included before `import hwaccel;`).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

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

/// Colour on a terminal unless NO_COLOR is set (https://no-color.org).
bool use_color(int fd);
/// True when `fd` is a terminal.
bool is_terminal(int fd);
/// "2026-11-22T15:04:05Z"
std::string utc_timestamp();
/// Writes a whole file; on failure returns false and sets `error`.
bool write_file(const std::string& path, std::string_view content, std::string& error);
/// "1.5 GiB", "300 MiB", "12 KiB", "7 B".
std::string bytes_text(std::uint64_t bytes);
/// Replaces a file atomically: written under a temporary name in the same
/// folder, synced, then renamed, so that a reader (node-exporter's textfile
/// collector, NFD's features.d watcher) sees the old file or the new one,
/// never half of one.
bool replace_file(const std::string& path, std::string_view content, std::string& error);
/// Reads a whole file up to `cap` bytes; on failure returns false and sets `error`.
bool read_file(const std::string& path, std::string& content, std::string& error, std::size_t cap = 64 << 20);

}  // namespace hwaccel::cli
