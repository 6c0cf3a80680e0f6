// hwaccel.watch: a registry that follows the machine (docs/watch.md). Kernel
// uevents and kernel log records arrive through the System seam; bursts are
// debounced into one re-detection of only the backends they concern; what
// changed comes out as events naming devices by their stable identity.
module;
#include <bitset>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
export module hwaccel.watch;
export import hwaccel.hardware;
export import hwaccel.detect;
export import hwaccel.registry;

export namespace hwaccel {

// --- what the kernel says ------------------------------------------------------

/// How bad a health report is.
enum class HealthSeverity : std::uint8_t {
  info,      ///< an application's fault seen by the driver (NVIDIA Xid 13, 31, 43)
  warning,   ///< corrected or contained: the device still works (ECC corrected, page retired)
  critical,  ///< the device needs attention: fallen off the bus, uncorrectable ECC, link down
};
std::string_view to_string(HealthSeverity severity) noexcept;

/// A device health report read from one kernel log record.
struct HealthReport {
  std::string source;  ///< "nvidia_xid", "amdgpu_ras"
  /// The device's PCI address, canonical. NVIDIA's "PCI:0000:3b:00" names no
  /// function; function 0 is meant.
  std::optional<std::string> pci_bus_id;
  std::optional<std::uint32_t> code;  ///< the Xid number
  HealthSeverity severity = HealthSeverity::warning;
  std::string summary;  ///< "GPU has fallen off the bus" (from the Xid table, docs/watch.md)
  std::string message;  ///< the record's text as the kernel wrote it, bounded
  friend bool operator==(const HealthReport&, const HealthReport&) = default;
};

/// Reads a /dev/kmsg record ("PRIO,SEQ,USEC,FLAGS;TEXT", or bare dmesg text):
/// an NVIDIA Xid line or an amdgpu RAS/ECC/reset line becomes a report; any
/// other line is nullopt. Never fails: the kernel log is not ours to reject.
std::optional<HealthReport> parse_kernel_log_record(std::string_view record);

/// Which backends an event concerns, and why (for diagnostics).
struct EventConcern {
  std::bitset<backend_count> backends;
  std::string reason;  ///< "pci 0000:3b:00.0 vendor 10de", "module nvidia", "" when none
};

/// The backends a uevent concerns: by the PCI device it names (its vendor
/// from the event, else sysfs through `system`, else the device of that
/// address in `current` when it is already gone) with its class (display,
/// processing accelerator, co-processor), by the kernel module loaded or
/// removed (nvidia, amdgpu, i915, xe, intel_vpu, amdxdna, habanalabs,
/// neuron, qaic), or by its device node (kfd, nvidia*, neuron*, accel/*).
/// None for everything else: a USB stick, a network link, a monitor plugged
/// into a GPU (a connector hot-plug is not a device change).
EventConcern concerned_backends(const Uevent& event, const AcceleratorRegistry& current, const System& system);

// --- what changed ------------------------------------------------------------

enum class WatchEventKind : std::uint8_t { added, removed, changed, health };
std::string_view to_string(WatchEventKind kind) noexcept;

/// One change to the machine, naming the device by device_identity (its PCI
/// address, else its UUID), never by a list position.
struct WatchEvent {
  WatchEventKind kind = WatchEventKind::changed;
  std::string identity;
  std::string id;    ///< registry id where the device is known (the removed one's former id); else ""
  std::string name;  ///< "" for a health report on a device the registry does not know
  std::optional<Backend> backend;
  std::vector<FieldChange> fields;     ///< for `changed`
  std::optional<HealthReport> health;  ///< for `health`
  std::uint64_t change = 0;            ///< serial of the registry change it came with (1, 2, ...)
  std::chrono::system_clock::time_point at{};
  friend bool operator==(const WatchEvent&, const WatchEvent&) = default;
};

/// What caused a re-detection.
enum class ChangeCause : std::uint8_t {
  uevent,      ///< kernel uevents
  kernel_log,  ///< a health report alone
  rescan,      ///< the periodic re-scan (or a timeline step a re-scan saw)
  overflow,    ///< notifications were lost: a full re-scan
};
std::string_view to_string(ChangeCause cause) noexcept;

/// One registry change: a burst of notifications coalesced into a single
/// re-detection, and the events it produced (health reports first, then
/// device changes by identity).
struct RegistryChange {
  std::uint64_t serial = 0;
  ChangeCause cause = ChangeCause::uevent;
  std::size_t notifications = 0;              ///< kernel notifications coalesced into it
  /// Those notifications as they arrived (the first 4096), for a recording
  /// of the timeline (`hwaccel capture --watch`) and for diagnostics.
  std::vector<KernelEvent> kernel_events;
  std::bitset<backend_count> redetected;      ///< backends run again
  std::vector<WatchEvent> events;
  std::shared_ptr<const AcceleratorRegistry> registry;  ///< the machine after it
  std::chrono::microseconds latency{0};       ///< first notification of the burst to the registry published
};

/// JSON of an event, one line (docs/watch.md).
std::string to_json(const WatchEvent& event);
/// One line for people: "removed cuda:3 NVIDIA H100 80GB HBM3 (0000:5d:00.0)".
std::string to_text(const WatchEvent& event);

// --- the watcher ---------------------------------------------------------------

/// How a Watcher listens and re-detects.
struct WatchOptions {
  /// What each detection runs; a re-detection runs the part of it an event concerns.
  DetectOptions detect;
  /// A full re-scan this often when nothing else happened, for what sends no
  /// uevent (MIG reconfiguration, a GPU lost from the bus); zero: never.
  std::chrono::milliseconds rescan_interval = std::chrono::seconds(30);
  /// Quiet time that ends a burst: a driver reload sends dozens of uevents.
  std::chrono::milliseconds debounce = std::chrono::milliseconds(500);
  /// A burst that never goes quiet is acted on after this long anyway.
  std::chrono::milliseconds max_delay = std::chrono::seconds(5);
  bool uevents = true;
  bool kernel_log = true;
  /// Events kept for next_event(); beyond it the oldest are dropped (and counted).
  std::size_t queue_limit = 10'000;
  /// Caches invalidated as attach() does, from the first notification on;
  /// each must outlive the watcher.
  std::vector<CachedRegistry*> caches;
  /// Called on the watcher's thread after each change is published: the
  /// registry is already the new one. Must not call stop() or block for long.
  std::function<void(const RegistryChange&)> on_change;
};

/// What a watcher listens to and has done.
struct WatchStatus {
  std::vector<std::string> sources;      ///< "uevent netlink socket", "/dev/kmsg", "periodic re-scan every 30 s"
  std::vector<std::string> unavailable;  ///< what could not be opened, and why
  std::uint64_t detections = 0;          ///< including the first
  std::uint64_t changes = 0;             ///< registry changes published
  std::uint64_t notifications = 0;       ///< kernel notifications read
  std::uint64_t ignored = 0;             ///< notifications that concerned no backend
  std::uint64_t malformed = 0;           ///< uevents that did not parse
  std::uint64_t dropped_events = 0;      ///< events pushed out of a full queue
  bool finished = false;                 ///< stopped, or a replayed timeline ended and was acted on
  std::optional<std::string> error;      ///< why the event stream failed, when it did
};

/// Follows a machine: detects it once, then listens on its own thread and
/// re-detects what kernel notifications concern. Thread-safe.
class Watcher {
 public:
  /// Detects `system` (which must outlive the watcher) and starts watching.
  /// Without an event stream (a container, a plain fixture) it re-scans
  /// periodically, and says so in status().unavailable; unsupported when
  /// there is neither a stream nor a re-scan interval.
  [[nodiscard]] static Result<std::unique_ptr<Watcher>> start(const System& system, WatchOptions options = {});
  ~Watcher();
  Watcher(const Watcher&) = delete;
  Watcher& operator=(const Watcher&) = delete;

  /// The registry as of the last change.
  std::shared_ptr<const AcceleratorRegistry> registry() const;
  /// The next event, waiting until `deadline`; nullopt at the deadline, or
  /// once the watcher has finished and every event was taken.
  std::optional<WatchEvent> next_event(std::chrono::steady_clock::time_point deadline);
  /// Waits until the watcher has finished (stop(), or a replayed timeline
  /// fully acted on) or `deadline`; true when finished.
  bool wait_finished(std::chrono::steady_clock::time_point deadline);
  /// Stops listening; returns once the thread has ended. Idempotent.
  void stop();
  WatchStatus status() const;

  /// `cache` is invalidated at the first notification of every burst and
  /// again when its change is published, so it never serves a device an
  /// event has removed. It must outlive the watcher or be detached.
  void attach(CachedRegistry& cache);
  void detach(CachedRegistry& cache);

  struct State;

 private:
  explicit Watcher(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace hwaccel
