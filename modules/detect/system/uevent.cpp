// The uevent message format, and what a System without kernel notifications
// answers when asked for them (the live stream is live_events.cpp).
module;
#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.detect;

namespace hwaccel {

std::string_view Uevent::get(std::string_view key) const noexcept {
  for (const auto& [k, v] : variables)
    if (k == key) return v;
  return {};
}

namespace {

bool printable_key(std::string_view key) noexcept {
  return !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

}  // namespace

Result<Uevent> parse_uevent(std::string_view message) {
  if (message.size() > max_uevent_bytes)
    return fail(ErrorKind::parse_error, text::cat("uevent of ", message.size(), " bytes: more than the ",
                                                  max_uevent_bytes, " a kernel message can be"));
  if (message.starts_with("libudev"))
    return fail(ErrorKind::parse_error, "a udev re-broadcast, not a kernel uevent");
  if (!message.empty() && message.back() == '\0') message.remove_suffix(1);
  std::string_view header = text::next_token(message, '\0');
  const auto at = header.find('@');
  if (at == std::string_view::npos || at == 0)
    return fail(ErrorKind::parse_error, text::cat("uevent header \"", text::excerpt(header), "\" is not ACTION@DEVPATH"));
  Uevent event;
  event.action = std::string(header.substr(0, at));
  event.devpath = std::string(header.substr(at + 1));
  if (!printable_key(event.action))
    return fail(ErrorKind::parse_error, text::cat("uevent action \"", text::excerpt(event.action), "\" is not a word"));
  if (event.devpath.empty() || event.devpath.front() != '/')
    return fail(ErrorKind::parse_error, text::cat("uevent device path \"", text::excerpt(event.devpath), "\" is not absolute"));
  while (!message.empty()) {
    const std::string_view line = text::next_token(message, '\0');
    if (line.empty()) continue;
    const auto eq = line.find('=');
    if (eq == std::string_view::npos || !printable_key(line.substr(0, eq)))
      return fail(ErrorKind::parse_error, text::cat("uevent variable \"", text::excerpt(line), "\" is not KEY=VALUE"));
    const std::string_view key = line.substr(0, eq);
    const std::string_view value = line.substr(eq + 1);
    if ((key == "ACTION" && value != event.action) || (key == "DEVPATH" && value != event.devpath))
      return fail(ErrorKind::parse_error, text::cat("uevent ", key, "=", text::excerpt(value), " contradicts its header"));
    event.variables.emplace_back(std::string(key), std::string(value));
  }
  return event;
}

std::string format_uevent(const Uevent& event) {
  std::string out = text::cat(event.action, "@", event.devpath);
  out.push_back('\0');
  for (const auto& [k, v] : event.variables) {
    out += k;
    out += '=';
    out += v;
    out.push_back('\0');
  }
  return out;
}

Result<std::unique_ptr<EventStream>> System::open_events(const EventStreamOptions&) const {
  return fail(ErrorKind::unsupported, "this System has no kernel notifications");
}

}  // namespace hwaccel
