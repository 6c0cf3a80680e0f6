// Files a user hands over: whole documents (a config.json, an instance
// catalogue, a device-spec file), and what is at a path.
module;
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>
export module hwaccel.base:file;
import :error;

export namespace hwaccel {

/// The whole of the file at `path`, refused (invalid_input) above `max_bytes`,
/// which the error names as the limit of `what` ("a config.json"); not_found
/// when the file cannot be sized (missing, or not a regular file), io_error
/// on a short read.
[[nodiscard]] Result<std::string> read_small_file(std::string_view path, std::uint64_t max_bytes, std::string_view what);

/// What is at a path, following links. POSIX calls rather than
/// std::filesystem, whose operations the WebAssembly C++ runtime lacks (there
/// the paths are the JavaScript host's files: docs/web.md).
enum class PathKind { missing, regular, directory, other };
PathKind path_kind(std::string_view path) noexcept;

/// The size of the regular file at `path` (following links); not_found when
/// there is none.
[[nodiscard]] Result<std::uint64_t> regular_file_size(std::string_view path);

/// The names in the folder at `path` (no "." or ".."), sorted; invalid_input
/// past `most` of them.
[[nodiscard]] Result<std::vector<std::string>> folder_entries(std::string_view path, std::size_t most);

/// `path` made absolute against the working folder and lexically normal
/// ("a/../b" is "b"); links are not resolved.
std::string absolute_path(std::string_view path);

/// `path` with every link resolved (realpath); not_found when it does not
/// exist, unsupported where the platform cannot resolve links (WebAssembly).
/// The error's message says why only (the caller names the path).
[[nodiscard]] Result<std::string> real_path(std::string_view path);

}  // namespace hwaccel
