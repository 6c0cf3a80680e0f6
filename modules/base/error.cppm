// Errors as values: every fallible call returns Result<T>.
module;
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <tl/expected.hpp>
export module hwaccel.base:error;

export namespace hwaccel {

/// What went wrong, as a closed set callers can switch on.
enum class ErrorKind : std::uint8_t {
  not_found,           ///< file or directory does not exist
  permission_denied,
  io_error,            ///< read failed for another reason
  not_regular_file,    ///< a FIFO, device node or socket where a file was expected
  escapes_root,        ///< fixture: a path or symlink leads outside the fixture root
  symlink_loop,        ///< too many levels of symbolic links
  tool_not_found,      ///< not on PATH (or not executable)
  tool_failed,         ///< could not be started
  timeout,             ///< deadline passed; the process group was killed
  not_captured,        ///< fixture: this command or file was not recorded
  parse_error,         ///< input did not have the expected form
  invalid_input,       ///< a caller-supplied value is out of range or inconsistent
  unsupported,         ///< the request cannot be served here
};

std::string_view to_string(ErrorKind kind) noexcept;

/// An error: its kind and one human sentence naming the file, command or
/// value involved.
struct Error {
  ErrorKind kind = ErrorKind::io_error;
  std::string message;

  friend bool operator==(const Error&, const Error&) = default;
};

template <class T>
using Result = tl::expected<T, Error>;

/// Shorthand for returning an error: `return fail(ErrorKind::parse_error, "...")`.
inline tl::unexpected<Error> fail(ErrorKind kind, std::string message) {
  return tl::unexpected<Error>(Error{kind, std::move(message)});
}

/// The error of an enum parser. Every parser of an enum's name is
/// `[[nodiscard]] Result<E> parse_<enum>(std::string_view)`, and an unknown
/// name fails with invalid_input "unknown <what> '<name>' (one of: <choices>)".
Error unknown_name(std::string_view what, std::string_view name, std::string_view choices);

/// Passes an error on: `if (!r) return fail(r.error());`
inline tl::unexpected<Error> fail(Error error) { return tl::unexpected<Error>(std::move(error)); }

/// What a reader of built-in data (a data/ file compiled into the library)
/// gave; when it failed, "hwaccel: the built-in <what>: <why>" on
/// stderr and std::abort(). The tests read the same text with the same
/// reader, so a library built from a file that does not read cannot work.
template <class T>
T builtin_or_abort(Result<T> read, std::string_view what) {
  if (!read) {
    std::fprintf(stderr, "hwaccel: the built-in %.*s: %s\n", static_cast<int>(what.size()), what.data(),
                 read.error().message.c_str());
    std::abort();
  }
  return std::move(*read);
}

}  // namespace hwaccel
