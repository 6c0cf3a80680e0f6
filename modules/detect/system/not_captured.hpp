// What a replayed machine (a fixture folder, a paste) answers for a command
// it does not hold: one wording for both, so that a paste and the same text
// imported as a fixture give the same warnings. Included by fixture.cpp and
// pasted.cpp right after `module hwaccel.detect;`.
#pragma once

namespace hwaccel::replayed {

inline Result<ToolResult> not_captured(std::span<const std::string> argv) {
  return fail(ErrorKind::not_captured, text::cat(text::excerpt(join_argv(argv), 200), ": not captured in this fixture"));
}

}  // namespace hwaccel::replayed
