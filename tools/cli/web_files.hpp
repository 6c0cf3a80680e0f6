// The planner page's files for `hwaccel serve --web DIR`: read once at start,
// served from memory, so that a request never touches the disk and no path
// from a request is ever opened.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common.hpp"

namespace hwaccel::cli {

/// One file of the folder, with the Content-Type its name gives.
struct WebFile {
  std::string content_type;
  std::string body;
};

/// The regular files directly inside a folder (the assembled build-wasm/web/:
/// index.html, page.js, hwaccel.js, hwaccel.wasm...) whose extension is one of
/// .html .js .mjs .css .wasm .json .svg .png .ico .txt; dot files, sub-folders,
/// symbolic links and other names are left out. Refused (exit 2): a folder that cannot be
/// read, one without index.html, more than `max_files` files or more than
/// `max_bytes` in all.
class WebFiles {
 public:
  static constexpr std::size_t max_files = 64;
  static constexpr std::size_t max_bytes = std::size_t{64} << 20;

  [[nodiscard]] static CommandResult<WebFiles> load(const std::string& folder);

  /// The file a request path names: "/" is index.html, "/page.js" page.js;
  /// nullopt for anything else (no sub-paths, no "..": names are looked up,
  /// never opened).
  const WebFile* find(std::string_view path) const;
  std::size_t size() const noexcept { return files_.size(); }

 private:
  std::map<std::string, WebFile, std::less<>> files_;
};

}  // namespace hwaccel::cli
