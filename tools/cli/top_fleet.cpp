// NodePoller and the fleet frame of `hwaccel top --hosts`.
#include "commands.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

import hwaccel;

#include "top_fleet.hpp"
#include "top_view.hpp"

namespace hwaccel::cli {

struct NodePoller::State {
  NodePollOptions options;
  mutable std::mutex mutex;
  std::condition_variable_any wake;
  std::vector<NodeState> nodes;
  std::vector<std::chrono::steady_clock::time_point> inventory_at;
  std::vector<std::jthread> threads;

  // One round for node `i`: the inventory when it is missing or old, then a sample.
  void poll(std::size_t i) {
    std::string node;
    bool need_inventory = false;
    {
      const std::lock_guard lock(mutex);
      node = nodes[i].node;
      need_inventory = !nodes[i].registry || std::chrono::steady_clock::now() - inventory_at[i] > options.inventory_age;
    }
    const auto get = [&](std::string_view path) {
      HttpGetRequest request;
      request.url = node_url(node, path);
      request.timeout = options.timeout;
      request.credentials = options.credentials;
      request.ca_file = options.ca_file;
      return http_get(request);
    };
    const auto answer = [&](const Result<HttpGetReply>& reply, std::string_view path) -> std::optional<std::string> {
      if (!reply) return reply.error().message;
      if (reply->status != 200)
        return fmt::format("GET {}: HTTP {}{}", path, reply->status, reply->status == 401 ? " (credentials refused)" : "");
      return std::nullopt;
    };
    std::shared_ptr<const AcceleratorRegistry> registry;
    std::string error;
    if (need_inventory) {
      const auto reply = get("/registry");
      if (const auto e = answer(reply, "/registry")) error = *e;
      else if (auto parsed = registry_from_json(reply->body)) registry = std::make_shared<const AcceleratorRegistry>(std::move(*parsed));
      else error = "/registry: " + parsed.error().message;
    }
    std::shared_ptr<const TelemetrySample> sample;
    if (error.empty()) {
      const auto reply = get("/telemetry");
      if (const auto e = answer(reply, "/telemetry")) error = *e;
      else if (auto parsed = telemetry_from_json(reply->body)) sample = std::make_shared<const TelemetrySample>(std::move(*parsed));
      else error = "/telemetry: " + parsed.error().message;
    }
    const std::lock_guard lock(mutex);
    NodeState& state = nodes[i];
    state.tried = true;
    state.error = error;
    if (registry) {
      state.registry = std::move(registry);
      inventory_at[i] = std::chrono::steady_clock::now();
    }
    if (sample) {
      state.sample = std::move(sample);
      state.answered_at = std::chrono::steady_clock::now();
    }
  }
};

NodePoller::NodePoller(std::vector<std::string> nodes, NodePollOptions options) : state_(std::make_unique<State>()) {
  state_->options = std::move(options);
  for (auto& node : nodes) {
    NodeState n;
    n.node = std::move(node);
    state_->nodes.push_back(std::move(n));
  }
  state_->inventory_at.resize(state_->nodes.size());
}

NodePoller::~NodePoller() {
  for (auto& t : state_->threads) t.request_stop();
  state_->wake.notify_all();
  state_->threads.clear();  // joins
}

void NodePoller::start() {
  for (std::size_t i = 0; i < state_->nodes.size(); ++i)
    state_->threads.emplace_back([state = state_.get(), i](std::stop_token stop) {
      while (!stop.stop_requested()) {
        state->poll(i);
        std::unique_lock lock(state->mutex);
        state->wake.wait_for(lock, stop, state->options.interval, [] { return false; });
      }
    });
}

void NodePoller::poll_once() {
  std::vector<std::jthread> round;
  for (std::size_t i = 0; i < state_->nodes.size(); ++i) round.emplace_back([state = state_.get(), i] { state->poll(i); });
}

std::vector<NodeState> NodePoller::snapshot() const {
  const std::lock_guard lock(state_->mutex);
  return state_->nodes;
}

std::vector<ScreenLine> fleet_frame(const std::vector<NodeState>& nodes, const std::string& filter, int columns, int rows,
                                    std::chrono::milliseconds interval, bool help) {
  using namespace top_text;
  const auto width = static_cast<std::size_t>(std::max(columns, 40));
  std::vector<ScreenLine> lines;
  std::size_t answering = 0, devices = 0;
  for (const NodeState& n : nodes) {
    if (n.error.empty() && n.sample) ++answering;
    if (n.registry) devices += n.registry->devices().size();
  }
  std::string title = fmt::format("hwaccel top  {} nodes, {} answering", nodes.size(), answering);
  if (rows > 0) title += fmt::format("  every {:.1f}s", static_cast<double>(interval.count()) / 1000);
  if (!filter.empty()) title += fmt::format("  filter \"{}\"", filter);
  lines.push_back({fit(title, width), LineStyle::title});
  if (help && rows > 0) {
    lines.push_back({"hwaccel top --hosts: keys", LineStyle::heading});
    lines.push_back({"  h ?   this help (any key closes it)", LineStyle::normal});
    lines.push_back({"  q     quit", LineStyle::normal});
    lines.push_back({"  /     filter the rows by node, device or name (Enter applies, Esc clears)", LineStyle::normal});
    lines.push_back({"", LineStyle::normal});
    lines.push_back({"Each node is read by a thread of its own (GET /registry, then /telemetry at each refresh): a node", LineStyle::dim});
    lines.push_back({"that stops answering is shown as such, and the others go on.", LineStyle::dim});
    return lines;
  }
  const std::string header = fmt::format("{} {} {} {} {} {} {} {}", pad("NODE", 22), pad("DEVICE", 10), pad("NAME", 26),
                                         pad_left("UTIL", 5), pad_left("MEMORY", 15), pad_left("POWER", 13), pad_left("TEMP", 5),
                                         pad_left("PROCS", 5));
  lines.push_back({fit(header, width), LineStyle::heading});
  std::vector<ScreenLine> body;
  for (const NodeState& n : nodes) {
    if (!n.error.empty() || !n.sample || !n.registry) {
      if (!filter.empty() && !text::icontains(n.node, filter)) continue;
      std::string why = !n.tried ? "waiting for the first answer" : n.error;
      if (n.answered_at && !n.error.empty())
        why += fmt::format(" (last answer {} s ago)",
                           std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - *n.answered_at).count());
      body.push_back({fit(fmt::format("{} {}", pad(n.node, 22), !n.tried ? why : "not answering: " + why), width),
                      n.tried ? LineStyle::warning : LineStyle::dim});
      continue;
    }
    std::size_t shown = 0;
    for (const DeviceProfile& d : n.registry->devices()) {
      if (d.backend == Backend::cpu) continue;
      if (!filter.empty() && !text::icontains(fmt::format("{} {} {}", n.node, d.id, d.name), filter)) continue;
      ++shown;
      const DeviceTelemetry* t = nullptr;
      for (const DeviceTelemetry& x : n.sample->devices)
        if (x.device_id == d.id) t = &x;
      const auto processes = std::count_if(n.sample->processes.begin(), n.sample->processes.end(),
                                           [&](const DeviceProcess& p) { return p.device_id == d.id; });
      std::string memory = "-", power = "-", temperature = "-";
      std::optional<double> utilization;
      if (t) {
        utilization = t->utilization;
        memory = fmt::format("{} / {}", bytes_text(t->memory_used_bytes), bytes_text(t->memory_total_bytes));
        if (t->power_watts)
          power = t->power_limit_watts ? fmt::format("{:.0f} / {:.0f} W", *t->power_watts, *t->power_limit_watts)
                                       : fmt::format("{:.0f} W", *t->power_watts);
        if (const auto c = gpu_temperature(*t)) temperature = fmt::format("{:.0f}C", *c);
      }
      const std::string row = fmt::format("{} {} {} {} {} {} {} {}", pad(n.node, 22), pad(d.id, 10), pad(d.name, 26),
                                          pad_left(percent(utilization), 5), pad_left(memory, 15), pad_left(power, 13),
                                          pad_left(temperature, 5), pad_left(fmt::format("{}", processes), 5));
      body.push_back({fit(row, width), t ? LineStyle::normal : LineStyle::dim});
    }
    if (shown == 0 && filter.empty()) body.push_back({fit(fmt::format("{} no accelerators", pad(n.node, 22)), width), LineStyle::dim});
  }
  const std::size_t room = rows > 0 && static_cast<std::size_t>(rows) > lines.size() + 1 ? static_cast<std::size_t>(rows) - lines.size() - 1 : 0;
  for (std::size_t i = 0; i < body.size() && (rows == 0 || i < room); ++i) lines.push_back(body[i]);
  if (rows > 0) {
    while (lines.size() + 1 < static_cast<std::size_t>(rows)) lines.push_back({"", LineStyle::normal});
    lines.push_back({fit(fmt::format("{} devices on {} nodes   h help  q quit  / filter", devices, nodes.size()), width), LineStyle::dim});
  }
  return lines;
}

}  // namespace hwaccel::cli
