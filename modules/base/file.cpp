// Whole-file reads of users' documents, bounded before anything is read.
module;
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
module hwaccel.base;

namespace hwaccel {

Result<std::string> read_small_file(std::string_view path_text, std::uint64_t max_bytes, std::string_view what) {
  const std::filesystem::path path(path_text);
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return fail(ErrorKind::not_found, text::cat("cannot read ", path.string(), ": ", ec.message()));
  if (size > max_bytes)
    return fail(ErrorKind::invalid_input, text::cat(path.string(), " is ", size, " bytes; ", what, " is at most ", max_bytes));
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(ErrorKind::io_error, text::cat("cannot open ", path.string()));
  std::string content(size, '\0');
  in.read(content.data(), static_cast<std::streamsize>(size));
  if (static_cast<std::uint64_t>(in.gcount()) != size) return fail(ErrorKind::io_error, text::cat("short read of ", path.string()));
  return content;
}

}  // namespace hwaccel
