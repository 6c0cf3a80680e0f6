// The fleet view of `hwaccel top --hosts`: each node's `hwaccel serve` read
// over HTTP (/registry now and then, /telemetry at each refresh) by a thread
// of its own, so that a node that stops answering is shown as such and never
// holds up the others or the screen. Include after `import hwaccel;`.
#pragma once

#include "http_client.hpp"
#include "terminal_screen.hpp"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hwaccel::cli {

struct NodePollOptions {
  std::chrono::milliseconds interval{1000};
  std::chrono::milliseconds timeout{2000};       ///< each request's deadline
  std::chrono::milliseconds inventory_age{60000};  ///< /registry is read again after this
  std::optional<std::string> credentials;        ///< basic auth, USER:PASSWORD
  std::string ca_file;
};

/// What is known of a node: its last inventory and sample, and how the last request went.
struct NodeState {
  std::string node;  ///< as given: "127.0.0.2:9464", "https://gpu-a:9464"
  std::shared_ptr<const AcceleratorRegistry> registry;
  std::shared_ptr<const TelemetrySample> sample;
  std::string error;  ///< the last request's failure; empty after an answer
  std::optional<std::chrono::steady_clock::time_point> answered_at;
  bool tried = false;
};

class NodePoller {
 public:
  NodePoller(std::vector<std::string> nodes, NodePollOptions options);
  ~NodePoller();  ///< stops the threads (each within its request's deadline)
  NodePoller(const NodePoller&) = delete;
  NodePoller& operator=(const NodePoller&) = delete;

  /// Starts polling every node in the background, every interval.
  void start();
  /// Reads every node once, all at the same time, and returns when each has
  /// answered or failed (at most about one timeout for /registry and one for /telemetry).
  void poll_once();
  std::vector<NodeState> snapshot() const;

  struct State;

 private:
  std::unique_ptr<State> state_;
};

/// The fleet's frame: a row per node and device, a row for a node that does
/// not answer; `rows` 0 prints everything (--once).
std::vector<ScreenLine> fleet_frame(const std::vector<NodeState>& nodes, const std::string& filter, int columns, int rows,
                                    std::chrono::milliseconds interval, bool help);

}  // namespace hwaccel::cli
