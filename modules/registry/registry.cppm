// hwaccel.registry: the detected devices and host facts, queries over them,
// and the registry's JSON form (a public, versioned contract: docs/json.md).
module;
#include <bitset>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>
export module hwaccel.registry;
export import hwaccel.hardware;
export import hwaccel.detect;
export import :requirement;

export namespace hwaccel {

/// Version of the registry JSON schema this library writes (docs/json.md).
inline constexpr std::uint32_t registry_schema_version = 1;

/// Library version, "major.minor.patch".
std::string_view library_version() noexcept;

class DetectBuilder;

/// The result of a detection: devices, links, host facts, warnings and
/// per-backend timings, with queries over them. A value type: copy it, keep
/// it, compare it.
class AcceleratorRegistry {
 public:
  AcceleratorRegistry() = default;
  explicit AcceleratorRegistry(Inventory inventory) : inventory_(std::move(inventory)) {}

  /// Detects this machine with every backend (or those named in the
  /// HWACCEL_BACKENDS environment variable).
  static AcceleratorRegistry detect();
  /// A builder to choose backends, limits or another System.
  static DetectBuilder builder();

  const Inventory& inventory() const noexcept { return inventory_; }
  Inventory& inventory() noexcept { return inventory_; }
  std::span<const DeviceProfile> devices() const noexcept { return inventory_.devices; }
  std::span<const DeviceLink> links() const noexcept { return inventory_.links; }
  std::span<const Interconnect> interconnects() const noexcept { return inventory_.interconnects; }
  const SystemInfo& system() const noexcept { return inventory_.system; }
  std::span<const Warning> warnings() const noexcept { return inventory_.warnings; }
  std::span<const BackendTiming> timings() const noexcept { return inventory_.timings; }
  /// Schema version the registry was read with (registry_schema_version when detected).
  std::uint32_t schema_version() const noexcept { return schema_version_; }

  /// The device with this id, or nullptr.
  const DeviceProfile* find(std::string_view id) const noexcept;
  /// Devices that are available and visible to this process.
  std::vector<const DeviceProfile*> available() const;
  std::vector<const DeviceProfile*> by_family(Family family) const;
  std::vector<const DeviceProfile*> by_backend(Backend backend) const;
  /// Whether any available, visible non-CPU device exists.
  bool has_accelerator() const noexcept;

  /// Adds a device (for configuration-driven setups and what-if analysis);
  /// an empty id is filled in, a duplicate id is an invalid_input error.
  Result<void> add_device(DeviceProfile device);

  // --- capability queries ---------------------------------------------------

  /// The devices that meet the requirement's per-device conditions (see
  /// AcceleratorRequirement), in registry order; empty when fewer than
  /// `requirement.min_devices` do, since the requirement cannot be met.
  std::vector<const DeviceProfile*> satisfying(const AcceleratorRequirement& requirement) const;
  /// Whether at least `requirement.min_devices` devices meet it.
  bool satisfies(const AcceleratorRequirement& requirement) const { return !satisfying(requirement).empty(); }

  /// The most capable available, visible device, judged on what it can do,
  /// never on its vendor: any accelerator before the CPU (the CPU is the
  /// fallback); among accelerators the most usable memory
  /// (usable_memory_bytes, compared in whole GiB so that an 81559 MiB H100
  /// and an 81920 MiB A100 tie), then the higher memory bandwidth where both
  /// are known, then registry order. A model that does not fit runs nowhere,
  /// so capacity comes first. nullptr when no device is available.
  const DeviceProfile* best_available() const noexcept;

  /// Usable memory (usable_memory_bytes) summed over the available, visible
  /// accelerators. CPU memory is NOT included. Devices of unknown size add 0.
  std::uint64_t total_accelerator_memory() const noexcept;
  /// total_accelerator_memory() plus the host's memory (the CPU device's,
  /// capped by its cgroup limit). Accelerators with unified memory are not
  /// added on top of it: their memory is the host's RAM, already counted
  /// (they are when the registry has no CPU device).
  std::uint64_t total_memory_including_cpu() const noexcept;

  // --- what-if analysis ------------------------------------------------------
  // Each returns a new registry built from this one, for re-planning without
  // re-detecting: nothing is read from the machine. System info, warnings
  // and timings are those of the detection the registry came from; links,
  // interconnects and NIC affinity are kept consistent with the devices.

  /// Adds devices (an empty id becomes "<backend>:<next index>") and,
  /// optionally, links between them and existing devices. A duplicate id or a
  /// link naming an unknown device is an invalid_input error. Added devices
  /// are near no NIC: affinity needs the machine.
  Result<AcceleratorRegistry> what_if_add(std::vector<DeviceProfile> devices, std::vector<DeviceLink> links = {}) const;
  /// Removes devices by id, with every link to them, their membership in
  /// interconnects (an interconnect left with fewer than two devices goes)
  /// and their place in NICs' near_devices. An unknown id is an
  /// invalid_input error. The CPU may be removed too; it is never re-detected.
  Result<AcceleratorRegistry> what_if_remove(std::span<const std::string> ids) const;
  /// Removes the devices for which `remove` returns true (see what_if_remove).
  AcceleratorRegistry what_if_remove_if(const std::function<bool(const DeviceProfile&)>& remove) const;

  /// What happens to the replaced device's links and interconnects.
  enum class LinkPolicy : std::uint8_t {
    drop,  ///< the new device has no links yet (the default: a different device has different links)
    keep,  ///< same slot, same fabric: the new device inherits them
  };
  /// Puts `replacement` in the place of device `id` (same slot): it keeps the
  /// id when its backend is the same, else gets "<backend>:<next index>" and
  /// every reference is renamed; it inherits the old device's PCI address,
  /// NUMA node and CPU affinity when it has none; NIC affinity follows it.
  /// An unknown id is an invalid_input error.
  Result<AcceleratorRegistry> what_if_replace(std::string_view id, DeviceProfile replacement,
                                              LinkPolicy links = LinkPolicy::drop) const;

  friend bool operator==(const AcceleratorRegistry&, const AcceleratorRegistry&) = default;

 private:
  friend Result<AcceleratorRegistry> registry_from_json(std::string_view json);
  Inventory inventory_;
  std::uint32_t schema_version_ = registry_schema_version;
};

/// Chooses what a detection runs: backends (all by default), host probes,
/// tool deadline. `detect()` reads this machine, `detect(system)` any System
/// (a fixture, a recording).
class DetectBuilder {
 public:
  DetectBuilder() = default;
  /// A builder with no backend selected.
  static DetectBuilder none();

  DetectBuilder& with(Backend backend);
  DetectBuilder& without(Backend backend);
  DetectBuilder& only(std::bitset<backend_count> backends);
  /// Selects the backends of a comma list ("cuda,rocm"); see parse_backend_list.
  Result<void> select(std::string_view list);
  DetectBuilder& system_probes(bool on);
  DetectBuilder& tool_timeout(std::chrono::milliseconds timeout);
  DetectBuilder& tool_output_cap(std::size_t bytes);

  const DetectOptions& options() const noexcept { return options_; }

  AcceleratorRegistry detect() const;
  AcceleratorRegistry detect(const System& system) const;

 private:
  DetectOptions options_;
};

/// How the registry is written.
struct JsonOptions {
  bool pretty = false;
  /// Per-backend timings vary run to run: golden files leave them out.
  bool include_timings = true;
};

/// Canonical JSON: fixed field order, devices in registry order, optional
/// fields left out when unknown, no locale, always valid UTF-8.
std::string to_json(const AcceleratorRegistry& registry, const JsonOptions& options = {});

/// Reads what to_json wrote (any schema version up to ours; newer versions
/// are read as far as this version understands them, with a warning added).
/// Malformed input is a parse_error naming the offending field.
Result<AcceleratorRegistry> registry_from_json(std::string_view json);

// --- model load time ---------------------------------------------------------

/// How long reading a model's files from storage takes, and on what it rests.
struct LoadTimeEstimate {
  double seconds = 0;
  double read_bandwidth_gbps = 0;  ///< GB/s (10^9 bytes per second)
  std::string storage;             ///< name of the storage device assumed
  std::string bandwidth_source;    ///< "pcie_link" or "table" (see StorageDevice)
  std::string assumption;          ///< one sentence: what the figure assumes

  friend bool operator==(const LoadTimeEstimate&, const LoadTimeEstimate&) = default;
};

/// Time to read `model_bytes` sequentially from `device` at its read
/// bandwidth, cold (nothing in the page cache). Errors: invalid_input for 0
/// bytes; unsupported when the device's bandwidth is unknown (network
/// filesystems, cloud volumes: it depends on what is behind them).
Result<LoadTimeEstimate> estimate_load_time(const StorageDevice& device, std::uint64_t model_bytes);

/// The same on the registry's storage. With `model_path`, the device is the
/// one holding the mount the path is under (the longest matching mount
/// point; on a volume over several disks, the slowest of them, since
/// striping is not modelled); without it, the fastest local device, which
/// is an optimistic assumption the result says. Errors: invalid_input for 0
/// bytes or a relative path; not_found when no storage is known or no mount
/// holds the path; unsupported when that storage's bandwidth is unknown.
Result<LoadTimeEstimate> estimate_load_time(const AcceleratorRegistry& registry, std::uint64_t model_bytes,
                                            std::string_view model_path = {});

}  // namespace hwaccel
