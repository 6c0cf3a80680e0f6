// hwaccel.lease: sharing a node's accelerators without a scheduler. A lease
// is a lock the kernel holds on a file per device in a lease directory, so a
// job that dies frees its devices at once; devices are chosen among those no
// lease holds and no other process uses (by telemetry); each lease's start
// and end go to a per-node SQLite database, against which quotas are
// enforced (docs/sharing.md).
module;
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
export module hwaccel.lease;
export import hwaccel.hardware;
export import hwaccel.detect;
export import hwaccel.registry;
export import hwaccel.telemetry;

export namespace hwaccel {

/// Where leases live when nothing else is said (HWACCEL_LEASE_DIR overrides it).
inline constexpr std::string_view default_lease_dir = "/run/hwaccel/leases";
/// Where usage is accounted when nothing else is said (HWACCEL_USAGE_DB overrides it).
inline constexpr std::string_view default_usage_db = "/var/lib/hwaccel/usage.sqlite";

/// Who holds a device: what its lease file records.
struct LeaseHolder {
  std::string device_id;  ///< the registry's id: "cuda:0", or a MIG instance "cuda:0/mig:1"
  std::string identity;   ///< what names the device across detections (PCI address, UUID); the lease file's name
  std::string user;
  std::uint32_t uid = 0;
  std::uint32_t pid = 0;                       ///< in the holder's view of /proc
  std::optional<std::uint64_t> pid_namespace;  ///< inode of the holder's PID namespace
  std::optional<std::uint64_t> start_time;     ///< the holder's start (/proc/PID/stat, clock ticks after boot)
  std::string command;
  std::int64_t since = 0;  ///< Unix seconds
  friend bool operator==(const LeaseHolder&, const LeaseHolder&) = default;
};

/// A holder as a JSON object (lease files, `hwaccel leases --json`, the C API):
/// device_id, identity, user, uid, pid, pid_namespace, start_time, command, since.
void write_json(json::Writer& w, const LeaseHolder& holder);

/// What a job asks for.
struct LeaseRequest {
  std::size_t count = 1;                ///< devices wanted, when `device_ids` is empty
  std::vector<std::string> device_ids;  ///< exactly these (registry ids or identities)
  std::optional<std::uint64_t> min_free_memory_bytes;
  std::optional<double> max_utilization;  ///< 0..1
  bool same_domain = false;               ///< all in one NVLink/xGMI domain (an interconnect of the registry)
  std::string lease_dir;                  ///< empty: $HWACCEL_LEASE_DIR, else default_lease_dir
  std::string usage_db;                   ///< empty: no accounting
  std::string quota_file;                 ///< empty: no quota
  std::string command;                    ///< recorded in the lease and the accounting
  /// How long to wait for enough free devices; zero fails at once.
  std::chrono::milliseconds wait{0};
};

/// A device that was not chosen, and why ("held by alice (PID 4121) since ...",
/// "2 processes use it", "31.2 GiB free, 40 GiB asked").
struct DeviceRefusal {
  std::string device_id;
  std::string reason;
  friend bool operator==(const DeviceRefusal&, const DeviceRefusal&) = default;
};

/// The devices a job holds, until it is released or destroyed (move-only).
/// The locks are the kernel's: if the process dies, they go with it.
class Lease {
 public:
  Lease(Lease&&) noexcept;
  Lease& operator=(Lease&&) noexcept;
  ~Lease();  ///< releases
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;

  const std::vector<LeaseHolder>& devices() const noexcept;
  /// The variables that give a runtime exactly these devices, per backend:
  /// CUDA_VISIBLE_DEVICES by UUID (a MIG instance's MIG- UUID);
  /// ROCR_VISIBLE_DEVICES, ZE_AFFINITY_MASK, HABANA_VISIBLE_MODULES,
  /// TPU_VISIBLE_CHIPS (the detector rows' selecting variable) by the
  /// runtime's index. A backend without one gets a warning instead.
  std::vector<std::pair<std::string, std::string>> environment() const;
  /// Variables to unset beside them: for ROCm, HIP_VISIBLE_DEVICES and
  /// CUDA_VISIBLE_DEVICES, which HIP reads after ROCR's selection.
  const std::vector<std::string>& cleared_environment() const noexcept;
  /// What went wrong without stopping the lease (accounting kept for later).
  const std::vector<std::string>& warnings() const noexcept;
  /// Ends the lease now (the accounting record is closed); idempotent.
  void release() noexcept;

  struct State;
  explicit Lease(std::unique_ptr<State> state);

 private:
  std::unique_ptr<State> state_;
};

/// Takes a lease on free devices of `registry` (detected on `system`, which
/// the telemetry and process lists are read through). Errors:
/// invalid_input for an unknown device id, a request no device can meet or
/// a quota that refuses it (the message names it); unsupported when the
/// lease directory is unsafe (a symbolic link, world-writable without the
/// sticky bit, not a directory); timeout when `wait` passed without enough
/// free devices; the reasons per device go to `refused`.
[[nodiscard]] Result<Lease> reserve(const AcceleratorRegistry& registry, const System& system, const LeaseRequest& request,
                                    std::vector<DeviceRefusal>* refused = nullptr);

/// The reference design's call: one named device for `owner` (recorded as
/// the command), in the default lease directory.
[[nodiscard]] Result<Lease> reserve(const AcceleratorRegistry& registry, const System& system, std::string_view device_id,
                                    std::string_view owner);

/// The leases held now in `lease_dir` (empty: the default), by device
/// identity; files whose lock nobody holds are stale and left out.
[[nodiscard]] Result<std::vector<LeaseHolder>> held_leases(std::string_view lease_dir);

/// Ends the lease on a device (registry id or identity) by sending its
/// holder SIGTERM: only its owner or root may. permission_denied otherwise,
/// not_found when no lease holds it.
[[nodiscard]] Result<LeaseHolder> release_lease(std::string_view lease_dir, std::string_view device);

// --- accounting -----------------------------------------------------------------

/// One lease's record in the usage database.
struct UsageRecord {
  std::int64_t id = 0;
  std::string identity;
  std::string device_id;
  std::string user;
  std::uint32_t uid = 0;
  std::uint32_t pid = 0;
  std::string command;
  std::int64_t started_at = 0;               ///< Unix seconds
  std::optional<std::int64_t> ended_at;      ///< absent while held (or when the holder died unrecorded)
  friend bool operator==(const UsageRecord&, const UsageRecord&) = default;
};

/// Device-hours by key ("alice", "cuda:0", "2026-12-03") since a time.
struct UsageLine {
  std::string key;
  double device_hours = 0;
  std::size_t leases = 0;
};
enum class UsageGrouping : std::uint8_t { user, device, day };

/// Reads the usage database (`path`, WAL): every record since `since`
/// (Unix seconds), and the device-hours by `by`; an open record counts until
/// now. parse_error for a file that is not hwaccel's usage database.
[[nodiscard]] Result<std::vector<UsageRecord>> usage_records(std::string_view path, std::int64_t since);
std::vector<UsageLine> usage_by(const std::vector<UsageRecord>& records, UsageGrouping by, std::int64_t since,
                                std::int64_t now);

/// A quota file: device-hours per user or group per period (docs/sharing.md).
struct Quota {
  std::int64_t period_seconds = 30 * 86400;
  std::map<std::string, double> users;   ///< device-hours by user name
  std::map<std::string, double> groups;  ///< by group name: its members' sum
  std::optional<double> others;          ///< everyone not named
};
/// Reads a quota file; invalid_input naming the field for anything else.
[[nodiscard]] Result<Quota> parse_quota(std::string_view json);

}  // namespace hwaccel
