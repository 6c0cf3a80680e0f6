// Reading a whole document a user hands over as a file: a config.json, an
// instance catalogue, a device-spec file.
module;
#include <cstdint>
#include <string>
#include <string_view>
export module hwaccel.base:file;
import :error;

export namespace hwaccel {

/// The whole of the file at `path`, refused (invalid_input) above `max_bytes`,
/// which the error names as the limit of `what` ("a config.json"); not_found
/// when the file cannot be sized (missing, or not a regular file), io_error
/// on a short read.
[[nodiscard]] Result<std::string> read_small_file(std::string_view path, std::uint64_t max_bytes, std::string_view what);

}  // namespace hwaccel
