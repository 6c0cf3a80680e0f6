// Events as JSON lines (docs/watch.md) and as one line of text for people.
module;
#include <chrono>
#include <ctime>
#include <string>
#include <string_view>
module hwaccel.watch;

namespace hwaccel {

namespace {

// "2026-11-27T19:05:12.345Z": events of one burst share a second, so the
// milliseconds are kept.
std::string utc_millis(std::chrono::system_clock::time_point at) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(at.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buffer[48];
  const auto n = std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%S", &tm);
  const long long fraction = ((ms % 1000) + 1000) % 1000;
  return text::cat(std::string_view(buffer, n), ".", fraction < 100 ? (fraction < 10 ? "00" : "0") : "", fraction, "Z");
}

}  // namespace

std::string to_json(const WatchEvent& e) {
  json::Writer w(false);
  w.begin_object();
  w.field("event", to_string(e.kind));
  w.field("change", e.change);
  w.field("at", utc_millis(e.at));
  w.field("identity", e.identity);
  if (!e.id.empty()) w.field("id", e.id);
  if (!e.name.empty()) w.field("name", e.name);
  if (e.backend) w.field("backend", to_string(*e.backend));
  if (e.kind == WatchEventKind::changed) write_field_changes(w.key("fields"), e.fields);
  if (e.health) {
    const HealthReport& h = *e.health;
    w.key("health").begin_object();
    w.field("source", h.source);
    w.field("severity", to_string(h.severity));
    w.field("code", h.code);
    w.field("summary", h.summary);
    w.field("message", h.message);
    w.end_object();
  }
  w.end_object();
  return std::move(w).take();
}

std::string to_text(const WatchEvent& e) {
  const std::string who = e.id.empty() ? e.identity
                          : e.identity == e.id ? e.id
                                               : text::cat(e.id, " (", e.identity, ")");
  const std::string named = e.name.empty() ? who : text::cat(who, " ", e.name);
  switch (e.kind) {
    case WatchEventKind::added: return text::cat("added ", named);
    case WatchEventKind::removed: return text::cat("removed ", named);
    case WatchEventKind::changed: {
      std::string out = text::cat("changed ", named, ":");
      for (const auto& f : e.fields) out += text::cat(" ", to_text(f), ";");
      out.pop_back();
      return out;
    }
    case WatchEventKind::health: {
      if (!e.health) return text::cat("health ", named);
      const HealthReport& h = *e.health;
      return text::cat("health ", named, ": ", to_string(h.severity), ", ", h.summary,
                       h.code ? text::cat(" (", h.source == "nvidia_xid" ? "Xid " : "code ", *h.code, ")") : std::string());
    }
  }
  return named;
}

}  // namespace hwaccel
