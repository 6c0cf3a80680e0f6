// Reading a whole document a user hands over as a file (config.json, an
// instance catalogue, a device-spec file). Included right after the module
// declaration of hwaccel.hardware or hwaccel.plan, because it returns their
// Result; the headers it needs (<cstdint>, <filesystem>,
// <fstream>, <string>, <system_error>) come from the including unit's global
// module fragment.
#pragma once

namespace hwaccel::small_file {

/// The whole of `path`, refused (invalid_input) above `max_bytes`, which the
/// error names as the limit of `what` ("a config.json"); not_found when the
/// file cannot be sized (missing, or not a regular file), io_error on a short read.
inline Result<std::string> read(const std::filesystem::path& path, std::uint64_t max_bytes, std::string_view what) {
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

}  // namespace hwaccel::small_file
