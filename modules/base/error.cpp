// Names of the error kinds.
module;
#include <array>
#include <cstddef>
#include <string_view>
module hwaccel.base;

namespace hwaccel {

std::string_view to_string(ErrorKind kind) noexcept {
  static constexpr std::array<std::string_view, 13> names = {
      "not_found",      "permission_denied", "io_error",    "not_regular_file", "escapes_root",
      "symlink_loop",   "tool_not_found",    "tool_failed", "timeout",          "not_captured",
      "parse_error",    "invalid_input",     "unsupported"};
  const auto i = static_cast<std::size_t>(kind);
  return i < names.size() ? names[i] : std::string_view{"unknown"};
}

Error unknown_name(std::string_view what, std::string_view name, std::string_view choices) {
  return Error{ErrorKind::invalid_input, text::cat("unknown ", what, " '", text::excerpt(name), "' (one of: ", choices, ")")};
}

}  // namespace hwaccel
