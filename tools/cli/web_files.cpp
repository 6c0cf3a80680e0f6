#include "web_files.hpp"

#include <array>
#include <filesystem>
#include <system_error>
#include <utility>

import hwaccel;

namespace hwaccel::cli {
namespace {

struct Extension {
  std::string_view suffix;
  std::string_view content_type;
};
constexpr std::array<Extension, 10> extensions = {{
    {".html", "text/html; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".mjs", "text/javascript; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".wasm", "application/wasm"},
    {".json", "application/json"},
    {".svg", "image/svg+xml"},
    {".png", "image/png"},
    {".ico", "image/x-icon"},
    {".txt", "text/plain; charset=utf-8"},
}};

std::optional<std::string_view> content_type_of(std::string_view name) {
  for (const auto& e : extensions)
    if (name.size() > e.suffix.size() && name.ends_with(e.suffix)) return e.content_type;
  return std::nullopt;
}

}  // namespace

CommandResult<WebFiles> WebFiles::load(const std::string& folder) {
  namespace fs = std::filesystem;
  WebFiles out;
  std::size_t total = 0;
  std::error_code ec;
  fs::directory_iterator it(folder, ec);
  if (ec) return usage_error("--web: cannot read the folder " + folder + ": " + ec.message());
  // Files directly inside: links are not followed, so nothing outside is served.
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) return usage_error("--web: cannot read the folder " + folder + ": " + ec.message());
    const fs::directory_entry& entry = *it;
    const std::string name = entry.path().filename().string();
    const auto type = content_type_of(name);
    if (name.starts_with('.') || !type || !fs::is_regular_file(entry.symlink_status(ec))) continue;
    if (out.files_.size() == max_files)
      return usage_error(text::cat("--web: ", folder, " has more than ", max_files, " files to serve"));
    auto body = read_file(entry.path().string(), max_bytes - total);
    if (!body) return usage_error("--web: " + body.error().message);
    total += body->size();
    if (total >= max_bytes) return usage_error(text::cat("--web: ", folder, " holds more than ", bytes_text(max_bytes)));
    out.files_.emplace(name, WebFile{std::string(*type), std::move(*body)});
  }
  if (!out.files_.contains("index.html"))
    return usage_error("--web: " + folder + " has no index.html (give the assembled page: build-wasm/web)");
  return out;
}

const WebFile* WebFiles::find(std::string_view path) const {
  if (!path.starts_with('/')) return nullptr;
  std::string_view name = path.substr(1);
  if (name.empty()) name = "index.html";
  const auto it = files_.find(name);
  return it == files_.end() ? nullptr : &it->second;
}

}  // namespace hwaccel::cli
