// The detection that `detect`, `capture` and the planners configure from the
// command line. Include after `import hwaccel;` (it uses the module's types).
#pragma once

#include <optional>

#include "commands.hpp"

namespace hwaccel::cli {

/// A builder from --backends (or $HWACCEL_BACKENDS), --no-system-probes and
/// --timeout-ms; a bad backend list prints why and gives nothing (exit 2).
std::optional<DetectBuilder> make_builder(const DetectArgs& args);

/// Installs the stderr log sink that -v/-vv/-vvv or HWACCEL_LOG ask for
/// (none when neither does); false, after saying why, for a bad
/// HWACCEL_LOG or --log-format.
bool install_log_sink(DetectBuilder& builder, const LogArgs& args);

}  // namespace hwaccel::cli
