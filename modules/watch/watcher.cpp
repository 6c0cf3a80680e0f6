// The watcher: one thread that blocks on the kernel's notifications (or a
// re-scan deadline), gathers a burst until it goes quiet, re-detects what the
// burst concerns, and publishes what changed.
module;
#include <algorithm>
#include <atomic>
#include <bitset>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>
module hwaccel.watch;

namespace hwaccel {

namespace {

using Mask = std::bitset<backend_count>;
using Steady = std::chrono::steady_clock;

// Health reports kept per burst: a flood of Xid lines is one fault said many
// times, and must not grow memory without bound.
constexpr std::size_t max_health_per_burst = 256;
constexpr std::size_t max_kept_notifications = 4096;

struct Burst {
  bool active = false;
  Mask backends;
  std::size_t notifications = 0;
  std::vector<HealthReport> health;
  std::vector<KernelEvent> kept;
  bool uevents = false;
  bool rescan = false;
  bool overflow = false;
  Steady::time_point first{};
  Steady::time_point last{};
};

Backend backend_of_report(const HealthReport& report) {
  return report.source == "nvidia_xid" ? Backend::cuda : Backend::rocm;
}

const DeviceProfile* device_at(const AcceleratorRegistry& registry, const std::string& pci_bus_id) {
  for (const auto& d : registry.devices())
    if (d.pci_bus_id == pci_bus_id) return &d;
  return nullptr;
}

std::string seconds_text(std::chrono::milliseconds ms) {
  return ms.count() % 1000 == 0 ? text::cat(ms.count() / 1000, " s") : text::cat(ms.count(), " ms");
}

}  // namespace

std::string_view to_string(WatchEventKind kind) noexcept {
  switch (kind) {
    case WatchEventKind::added: return "added";
    case WatchEventKind::removed: return "removed";
    case WatchEventKind::changed: return "changed";
    case WatchEventKind::health: return "health";
  }
  return "changed";
}

std::string_view to_string(ChangeCause cause) noexcept {
  switch (cause) {
    case ChangeCause::uevent: return "uevent";
    case ChangeCause::kernel_log: return "kernel_log";
    case ChangeCause::rescan: return "rescan";
    case ChangeCause::overflow: return "overflow";
  }
  return "uevent";
}

struct Watcher::State {
  State(const System& s, WatchOptions o) : system(s), options(std::move(o)) {}

  const System& system;
  WatchOptions options;
  std::unique_ptr<EventStream> stream;  // null: periodic re-scans only
  bool stream_failed = false;           // the watcher thread's own
  std::thread thread;
  std::atomic<bool> stopping{false};

  mutable std::mutex mutex;
  std::condition_variable changed;  // queue grew, or finished
  std::condition_variable idle;     // wakes a stream-less wait on stop
  std::shared_ptr<const AcceleratorRegistry> current;
  std::deque<WatchEvent> queue;
  std::vector<CachedRegistry*> caches;
  WatchStatus status;
  std::uint64_t serial = 0;

  void invalidate_caches() {
    std::lock_guard lock(mutex);
    for (CachedRegistry* cache : caches) cache->invalidate();
  }

  void add_notifications(const EventBatch& batch, Burst& burst) {
    std::shared_ptr<const AcceleratorRegistry> now_registry;
    {
      std::lock_guard lock(mutex);
      now_registry = current;
      status.notifications += batch.events.size();
    }
    bool relevant = false;
    std::uint64_t ignored = 0, malformed = 0;
    for (const KernelEvent& e : batch.events) {
      if (e.source == KernelEvent::Source::uevent) {
        auto parsed = parse_uevent(e.payload);
        if (!parsed) {
          ++malformed;
          continue;
        }
        const EventConcern concern = concerned_backends(*parsed, *now_registry, system);
        if (concern.backends.none()) {
          ++ignored;
          continue;
        }
        burst.backends |= concern.backends;
        burst.uevents = true;
      } else {
        auto report = parse_kernel_log_record(e.payload);
        if (!report) {
          ++ignored;
          continue;
        }
        burst.backends.set(static_cast<std::size_t>(backend_of_report(*report)));
        if (burst.health.size() < max_health_per_burst &&
            std::find(burst.health.begin(), burst.health.end(), *report) == burst.health.end())
          burst.health.push_back(std::move(*report));
      }
      relevant = true;
      ++burst.notifications;
      if (burst.kept.size() < max_kept_notifications) burst.kept.push_back(e);
    }
    if (batch.rescan) {
      relevant = true;
      burst.rescan = true;
      burst.overflow = burst.overflow || !(stream && stream->replay());
    }
    {
      std::lock_guard lock(mutex);
      status.ignored += ignored;
      status.malformed += malformed;
    }
    if (!relevant) return;
    const auto now = Steady::now();
    if (!burst.active) {
      burst.active = true;
      burst.first = now;
      // The kernel has already changed the machine: a cached registry must
      // not serve the old one while the burst settles.
      invalidate_caches();
    }
    burst.last = now;
  }

  // Re-detects what the burst concerns and publishes what changed.
  void act_on(Burst& burst) {
    std::shared_ptr<const AcceleratorRegistry> before;
    {
      std::lock_guard lock(mutex);
      before = current;
    }
    const Mask backends = burst.rescan ? options.detect.backends : burst.backends;
    AcceleratorRegistry after;
    try {
      after = redetect_backends(*before, system, options.detect, backends);
    } catch (const std::exception& e) {
      // Detectors do not throw; this is allocation failure. Keep the old
      // registry and say so, rather than lose the watcher.
      std::lock_guard lock(mutex);
      status.error = text::cat("re-detection failed: ", e.what());
      burst = Burst{};
      return;
    }
    auto registry = std::make_shared<const AcceleratorRegistry>(std::move(after));

    RegistryChange change;
    change.cause = burst.overflow         ? ChangeCause::overflow
                   : burst.rescan         ? ChangeCause::rescan
                   : burst.uevents        ? ChangeCause::uevent
                                          : ChangeCause::kernel_log;
    change.notifications = burst.notifications;
    change.kernel_events = std::move(burst.kept);
    change.redetected = backends & options.detect.backends;
    change.registry = registry;
    const auto at = std::chrono::system_clock::now();
    for (auto& report : burst.health) {
      WatchEvent e;
      e.kind = WatchEventKind::health;
      const DeviceProfile* d = report.pci_bus_id ? device_at(*before, *report.pci_bus_id) : nullptr;
      if (!d && report.pci_bus_id) d = device_at(*registry, *report.pci_bus_id);
      e.identity = d ? device_identity(*d) : report.pci_bus_id.value_or("");
      if (d) {
        e.id = d->id;
        e.name = d->name;
        e.backend = d->backend;
      } else {
        e.backend = backend_of_report(report);
      }
      e.health = std::move(report);
      change.events.push_back(std::move(e));
    }
    for (auto& d : compare_registries(*before, *registry)) {
      WatchEvent e;
      e.kind = d.kind == ChangeKind::added     ? WatchEventKind::added
               : d.kind == ChangeKind::removed ? WatchEventKind::removed
                                               : WatchEventKind::changed;
      e.identity = std::move(d.identity);
      e.id = std::move(d.id);
      e.name = std::move(d.name);
      e.backend = d.backend;
      e.fields = std::move(d.fields);
      change.events.push_back(std::move(e));
    }
    change.latency = std::chrono::duration_cast<std::chrono::microseconds>(Steady::now() - burst.first);
    burst = Burst{};
    {
      std::lock_guard lock(mutex);
      ++status.detections;
      current = registry;
      if (!change.events.empty()) {
        change.serial = ++serial;
        ++status.changes;
        for (auto& e : change.events) {
          e.change = change.serial;
          e.at = at;
          queue.push_back(e);
        }
        while (queue.size() > options.queue_limit) {
          queue.pop_front();
          ++status.dropped_events;
        }
      }
    }
    invalidate_caches();
    changed.notify_all();
    if (!change.events.empty() && options.on_change) {
      try {
        options.on_change(change);
      } catch (...) {
        // A consumer's exception must not end the watching.
      }
    }
  }

  void finish() {
    {
      std::lock_guard lock(mutex);
      status.finished = true;
    }
    changed.notify_all();
  }

  void run() {
    const auto interval = options.rescan_interval;
    const auto never = Steady::time_point::max();
    auto next_rescan = interval.count() > 0 ? Steady::now() + interval : never;
    Burst burst;
    while (!stopping.load()) {
      const auto deadline =
          burst.active ? std::min(burst.last + options.debounce, burst.first + options.max_delay) : next_rescan;
      EventBatch batch;
      if (stream && !stream_failed) {
        auto got = stream->wait(deadline);
        if (!got) {
          stream_failed = true;
          std::lock_guard lock(mutex);
          status.error = text::cat("the event stream failed: ", got.error().message);
          status.unavailable.push_back(*status.error);
          if (interval.count() <= 0) break;
          continue;
        }
        batch = std::move(*got);
      } else {
        if (!stream_failed && !stream && interval.count() <= 0) break;
        std::unique_lock lock(mutex);
        idle.wait_until(lock, deadline, [&] { return stopping.load(); });
      }
      if (stopping.load()) break;
      add_notifications(batch, burst);
      const bool replay = stream && !stream_failed && stream->replay();
      const auto now = Steady::now();
      if (burst.active &&
          (replay || batch.ended || now >= std::min(burst.last + options.debounce, burst.first + options.max_delay))) {
        act_on(burst);
        if (interval.count() > 0) next_rescan = Steady::now() + interval;
      } else if (!burst.active && !replay && now >= next_rescan) {
        burst.active = true;
        burst.rescan = true;
        burst.first = now;
        act_on(burst);
        next_rescan = Steady::now() + interval;
      }
      if (batch.ended) break;
    }
    finish();
  }
};

Watcher::Watcher(std::unique_ptr<State> state) : state_(std::move(state)) {}

Watcher::~Watcher() { stop(); }

Result<std::unique_ptr<Watcher>> Watcher::start(const System& system, WatchOptions options) {
  if (options.debounce.count() < 0 || options.max_delay.count() < 0 || options.rescan_interval.count() < 0)
    return fail(ErrorKind::invalid_input, "watch intervals must not be negative");
  auto state = std::make_unique<State>(system, std::move(options));
  State& s = *state;
  s.caches = s.options.caches;
  if (s.options.uevents || s.options.kernel_log) {
    EventStreamOptions stream_options;
    stream_options.uevents = s.options.uevents;
    stream_options.kernel_log = s.options.kernel_log;
    if (auto stream = system.open_events(stream_options)) {
      s.stream = std::move(*stream);
      s.status.sources = s.stream->sources();
      s.status.unavailable = s.stream->unavailable();
    } else {
      s.status.unavailable.push_back(stream.error().message);
    }
  }
  const bool replay = s.stream && s.stream->replay();
  if (s.options.rescan_interval.count() > 0 && !replay)
    s.status.sources.push_back(text::cat("periodic re-scan every ", seconds_text(s.options.rescan_interval)));
  if (!s.stream && s.options.rescan_interval.count() <= 0) {
    std::string why = "nothing to watch with: no kernel notifications and no re-scan interval";
    for (const auto& u : s.status.unavailable) why += text::cat("; ", u);
    return fail(ErrorKind::unsupported, std::move(why));
  }
  s.current = std::make_shared<const AcceleratorRegistry>(detect_inventory(system, s.options.detect));
  s.status.detections = 1;
  s.thread = std::thread([&s] { s.run(); });
  return std::unique_ptr<Watcher>(new Watcher(std::move(state)));
}

std::shared_ptr<const AcceleratorRegistry> Watcher::registry() const {
  std::lock_guard lock(state_->mutex);
  return state_->current;
}

std::optional<WatchEvent> Watcher::next_event(std::chrono::steady_clock::time_point deadline) {
  State& s = *state_;
  std::unique_lock lock(s.mutex);
  s.changed.wait_until(lock, deadline, [&] { return !s.queue.empty() || s.status.finished; });
  if (s.queue.empty()) return std::nullopt;
  WatchEvent e = std::move(s.queue.front());
  s.queue.pop_front();
  return e;
}

bool Watcher::wait_finished(std::chrono::steady_clock::time_point deadline) {
  State& s = *state_;
  std::unique_lock lock(s.mutex);
  return s.changed.wait_until(lock, deadline, [&] { return s.status.finished; });
}

void Watcher::stop() {
  State& s = *state_;
  if (!s.thread.joinable()) return;
  {
    std::lock_guard lock(s.mutex);
    s.stopping.store(true);
  }
  if (s.stream) s.stream->wake();
  s.idle.notify_all();
  s.thread.join();
}

WatchStatus Watcher::status() const {
  std::lock_guard lock(state_->mutex);
  return state_->status;
}

void Watcher::attach(CachedRegistry& cache) {
  std::lock_guard lock(state_->mutex);
  if (std::find(state_->caches.begin(), state_->caches.end(), &cache) == state_->caches.end())
    state_->caches.push_back(&cache);
}

void Watcher::detach(CachedRegistry& cache) {
  std::lock_guard lock(state_->mutex);
  std::erase(state_->caches, &cache);
}

}  // namespace hwaccel
