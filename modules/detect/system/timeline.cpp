// Fixture timelines (docs/fixtures.md): recorded kernel notifications, each
// step followed by the machine's state after it, replayed through the System
// seam so that watching is tested like detection is.
module;
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <unistd.h>
#include "posix_compat.hpp"

#include <simdjson.h>
#include "json_input.hpp"
module hwaccel.detect;

#include "manifest_json.hpp"

namespace hwaccel {

namespace {

constexpr std::size_t max_steps = 10'000;
constexpr std::size_t max_events_per_step = 1'000'000;

// A folder named by a timeline: relative, inside the fixture folder.
bool safe_folder(std::string_view p) {
  if (p.empty() || p.front() == '/' || p.find('\0') != std::string_view::npos) return false;
  std::string_view rest = p;
  while (!rest.empty()) {
    const std::string_view c = text::next_token(rest, '/');
    if (c == "..") return false;
  }
  return true;
}

Result<KernelEvent> parse_event(simdjson::dom::object entry, std::string_view where) {
  simdjson::dom::element el;
  if (entry["kernel_log"].get(el) == simdjson::SUCCESS) {
    std::string_view line;
    if (el.get_string().get(line) != simdjson::SUCCESS)
      return fail(ErrorKind::parse_error, text::cat(where, ": \"kernel_log\" must be a string"));
    return KernelEvent{KernelEvent::Source::kernel_log, std::string(line)};
  }
  if (entry["uevent"].get(el) != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat(where, ": an event is {\"uevent\": ...} or {\"kernel_log\": ...}"));
  std::string_view raw;
  if (el.get_string().get(raw) == simdjson::SUCCESS)  // the message as sent, for malformed ones
    return KernelEvent{KernelEvent::Source::uevent, std::string(raw)};
  simdjson::dom::object vars;
  if (el.get_object().get(vars) != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat(where, ": \"uevent\" must be an object of strings or the raw message"));
  Uevent event;
  for (auto [key, value] : vars) {
    std::string_view v;
    if (value.get_string().get(v) != simdjson::SUCCESS)
      return fail(ErrorKind::parse_error, text::cat(where, ": uevent variable \"", text::excerpt(key), "\" must be a string"));
    if (key == "ACTION") event.action = std::string(v);
    if (key == "DEVPATH") event.devpath = std::string(v);
    event.variables.emplace_back(std::string(key), std::string(v));
  }
  if (event.action.empty() || event.devpath.empty())
    return fail(ErrorKind::parse_error, text::cat(where, ": a uevent object needs ACTION and DEVPATH"));
  return KernelEvent{KernelEvent::Source::uevent, format_uevent(event)};
}

}  // namespace

Result<Timeline> parse_timeline(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (const auto err = json_input::parse(parser, json).get(doc); err != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat("timeline.json is not valid JSON: ", simdjson::error_message(err)));
  simdjson::dom::object root;
  if (doc.get_object().get(root) != simdjson::SUCCESS) return fail(ErrorKind::parse_error, "timeline.json must be a JSON object");
  std::int64_t format = 0;
  if (root["format"].get_int64().get(format) != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, "timeline.json: missing or non-integer field \"format\"");
  if (format != 1)
    return fail(ErrorKind::parse_error, text::cat("timeline.json: unsupported format ", format, " (this version reads format 1)"));
  Timeline timeline;
  const auto step = [&](simdjson::dom::object item, std::string_view where) -> Result<void> {
    if (timeline.steps.size() == max_steps)
      return fail(ErrorKind::invalid_input, text::cat("timeline.json: more than ", max_steps, " steps"));
    TimelineStep s;
    auto name = manifest_json::string_field(item, "name", where, false);
    if (!name) return fail(name.error());
    s.name = std::move(*name);
    simdjson::dom::element el;
    if (item["rescan"].get(el) == simdjson::SUCCESS && el.get_bool().get(s.rescan) != simdjson::SUCCESS)
      return fail(ErrorKind::parse_error, text::cat(where, ": \"rescan\" must be a boolean"));
    if (item["complete"].get(el) == simdjson::SUCCESS && el.get_bool().get(s.complete) != simdjson::SUCCESS)
      return fail(ErrorKind::parse_error, text::cat(where, ": \"complete\" must be a boolean"));
    if (item["state"].get(el) == simdjson::SUCCESS) {
      std::string_view folder;
      if (el.get_string().get(folder) != simdjson::SUCCESS || !safe_folder(folder))
        return fail(ErrorKind::escapes_root, text::cat(where, ": \"state\" must be a folder inside the fixture"));
      s.state = std::string(folder);
    }
    if (s.complete && !s.state) return fail(ErrorKind::parse_error, text::cat(where, ": a complete step needs its \"state\""));
    if (item["removed"].get(el) == simdjson::SUCCESS) {
      simdjson::dom::array paths;
      if (el.get_array().get(paths) != simdjson::SUCCESS)
        return fail(ErrorKind::parse_error, text::cat(where, ": \"removed\" must be an array of absolute paths"));
      for (auto p : paths) {
        std::string_view path;
        if (p.get_string().get(path) != simdjson::SUCCESS || path.empty() || path.front() != '/')
          return fail(ErrorKind::parse_error, text::cat(where, ": \"removed\" must be an array of absolute paths"));
        s.removed.emplace_back(path);
      }
    }
    const auto event = [&](simdjson::dom::object e, std::string_view at) -> Result<void> {
      if (s.events.size() == max_events_per_step)
        return fail(ErrorKind::invalid_input, text::cat(where, ": more than ", max_events_per_step, " events"));
      auto parsed = parse_event(e, at);
      if (!parsed) return fail(parsed.error());
      s.events.push_back(std::move(*parsed));
      return {};
    };
    if (auto r = manifest_json::for_each_object(item, "events", where, event); !r) return fail(r.error());
    timeline.steps.push_back(std::move(s));
    return {};
  };
  if (auto r = manifest_json::for_each_object(root, "steps", "timeline.json", step); !r) return fail(r.error());
  return timeline;
}

std::string write_timeline(const Timeline& timeline) {
  json::Writer w(true);
  w.begin_object();
  w.field("format", timeline.format);
  w.key("steps").begin_array();
  for (const auto& s : timeline.steps) {
    w.begin_object();
    if (!s.name.empty()) w.field("name", s.name);
    if (s.rescan) w.field("rescan", true);
    w.key("events").begin_array();
    for (const auto& e : s.events) {
      w.begin_object();
      if (e.source == KernelEvent::Source::kernel_log) {
        w.field("kernel_log", e.payload);
      } else if (auto parsed = parse_uevent(e.payload); parsed && format_uevent(*parsed) == e.payload &&
                                                          parsed->get("ACTION") == parsed->action &&
                                                          parsed->get("DEVPATH") == parsed->devpath) {
        // Readable where the object reads back as the same message; the raw
        // message otherwise (a malformed one, or one without ACTION/DEVPATH).
        w.field("uevent", parsed->variables);
      } else {
        w.field("uevent", e.payload);
      }
      w.end_object();
    }
    w.end_array();
    w.field("state", s.state);
    if (!s.removed.empty()) {
      w.field("removed", s.removed);
    }
    if (s.complete) w.field("complete", true);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return std::move(w).document();
}

struct TimelineSystem::State {
  Timeline timeline;
  // states[k]: the machine after k steps. A step that changes nothing shares
  // the previous state.
  std::vector<std::shared_ptr<const FixtureSystem>> states;
  std::atomic<std::size_t> position{0};
  std::atomic<bool> streaming{false};

  const FixtureSystem& now() const { return *states[position.load(std::memory_order_acquire)]; }
};

namespace {

// Delivers the timeline one step per wait(), moving the state on first, so
// that whoever reacts to the events reads the machine as it is after them.
class TimelineStream final : public EventStream {
 public:
  explicit TimelineStream(TimelineSystem::State& state) : state_(state) {}
  ~TimelineStream() override { state_.streaming.store(false); }

  Result<EventBatch> wait(std::chrono::steady_clock::time_point) override {
    EventBatch batch;
    const std::size_t at = state_.position.load();
    if (at >= state_.timeline.steps.size()) {
      batch.ended = true;
      return batch;
    }
    const TimelineStep& step = state_.timeline.steps[at];
    state_.position.store(at + 1, std::memory_order_release);
    batch.events = step.events;
    batch.rescan = step.rescan;
    batch.ended = at + 1 == state_.timeline.steps.size();
    return batch;
  }
  void wake() noexcept override {}
  std::vector<std::string> sources() const override { return {"recorded timeline"}; }
  std::vector<std::string> unavailable() const override { return {}; }
  bool replay() const noexcept override { return true; }

 private:
  TimelineSystem::State& state_;
};

}  // namespace

TimelineSystem::TimelineSystem(std::unique_ptr<State> state) : state_(std::move(state)) {}
TimelineSystem::~TimelineSystem() = default;

Result<std::unique_ptr<TimelineSystem>> TimelineSystem::open(std::string_view dir, FixtureOptions options) {
  std::string base(dir);
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  auto state = std::make_unique<State>();
  {
    constexpr std::size_t cap = std::size_t{64} << 20;
    auto content = read_fixture_file(base + "/timeline.json", cap, text::cat(dir, "/timeline.json"));
    if (!content) {
      if (::access((base + "/timeline.json").c_str(), F_OK) != 0)
        return fail(ErrorKind::not_found, text::cat(dir, " has no timeline.json: not a fixture timeline"));
      return fail(content.error());
    }
    if (content->truncated) return fail(ErrorKind::invalid_input, text::cat(dir, "/timeline.json is larger than 64 MiB"));
    auto timeline = parse_timeline(content->data);
    if (!timeline) return fail(Error{timeline.error().kind, text::cat(dir, ": ", timeline.error().message)});
    state->timeline = std::move(*timeline);
  }
  auto first = FixtureSystem::open(base, options);
  if (!first) return fail(first.error());
  state->states.push_back(std::shared_ptr<const FixtureSystem>(std::move(*first)));
  // Layers since the last complete state, which each state is opened with.
  std::string layered_base = base;
  std::vector<FixtureSystem::Layer> layers;
  const auto real_base = real_path(base);
  if (!real_base) return fail(real_base.error().kind, text::cat("fixture folder ", dir, ": ", real_base.error().message));
  const std::string& resolved_base = *real_base;
  for (const TimelineStep& step : state->timeline.steps) {
    // A state folder must really be inside the fixture: a link on its way
    // could point anywhere, and nothing outside the fixture is ever read.
    if (step.state) {
      const auto resolved = real_path(text::cat(base, "/", *step.state));
      if (!resolved)
        return fail(resolved.error().kind, text::cat("timeline step ", state->states.size(), ": state folder ",
                                                     text::excerpt(*step.state), ": ", resolved.error().message));
      const std::string_view inside(*resolved);
      const std::string_view root(resolved_base);
      if (!inside.starts_with(root) || inside.size() <= root.size() || inside[root.size()] != '/')
        return fail(ErrorKind::escapes_root, text::cat("timeline step ", state->states.size(), ": state folder ",
                                                       text::excerpt(*step.state), " leads outside the fixture"));
    }
    if (!step.state && step.removed.empty()) {
      state->states.push_back(state->states.back());
      continue;
    }
    if (step.complete) {
      layered_base = text::cat(base, "/", *step.state);
      layers.clear();
    } else {
      layers.push_back(FixtureSystem::Layer{step.state ? text::cat(base, "/", *step.state) : std::string(), step.removed});
    }
    auto opened = FixtureSystem::open_layered(layered_base, layers, options);
    if (!opened)
      return fail(Error{opened.error().kind, text::cat("timeline step ", state->states.size(),
                                                       step.name.empty() ? "" : text::cat(" (", step.name, ")"), ": ",
                                                       opened.error().message)});
    state->states.push_back(std::shared_ptr<const FixtureSystem>(std::move(*opened)));
  }
  return std::unique_ptr<TimelineSystem>(new TimelineSystem(std::move(state)));
}

Result<std::unique_ptr<System>> open_fixture_folder(std::string_view dir, FixtureOptions options) {
  std::string base(dir);
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  if (::access((base + "/timeline.json").c_str(), F_OK) == 0) {
    auto timeline = TimelineSystem::open(base, options);
    if (!timeline) return fail(timeline.error());
    return std::unique_ptr<System>(std::move(*timeline));
  }
  auto fixture = FixtureSystem::open(base, options);
  if (!fixture) return fail(fixture.error());
  return std::unique_ptr<System>(std::move(*fixture));
}

const Timeline& TimelineSystem::timeline() const noexcept { return state_->timeline; }
std::size_t TimelineSystem::position() const noexcept { return state_->position.load(); }
const FixtureSystem& TimelineSystem::state(std::size_t steps) const {
  return *state_->states[std::min(steps, state_->states.size() - 1)];
}

Result<FileContent> TimelineSystem::read_file(std::string_view path, std::size_t max_bytes) const {
  return state_->now().read_file(path, max_bytes);
}
Result<std::vector<DirEntry>> TimelineSystem::list_dir(std::string_view path) const { return state_->now().list_dir(path); }
Result<std::string> TimelineSystem::read_link(std::string_view path) const { return state_->now().read_link(path); }
Result<FileStatus> TimelineSystem::status(std::string_view path, bool follow) const {
  return state_->now().status(path, follow);
}
std::optional<std::string> TimelineSystem::env(std::string_view name) const { return state_->now().env(name); }
ProcessIdentity TimelineSystem::identity() const { return state_->now().identity(); }
std::optional<std::string> TimelineSystem::find_tool(std::string_view name) const { return state_->now().find_tool(name); }
Result<ToolResult> TimelineSystem::run(const ToolRequest& request) const { return state_->now().run(request); }
bool TimelineSystem::runs_instantly() const noexcept { return state_->now().runs_instantly(); }

Result<std::unique_ptr<EventStream>> TimelineSystem::open_events(const EventStreamOptions&) const {
  if (state_->streaming.exchange(true))
    return fail(ErrorKind::unsupported, "this timeline is already being replayed by another stream");
  return std::unique_ptr<EventStream>(std::make_unique<TimelineStream>(*state_));
}

}  // namespace hwaccel
