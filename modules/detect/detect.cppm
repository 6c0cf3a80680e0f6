// hwaccel.detect: the System seam (system/), what a detector is given and
// returns, the table of detectors, the orchestrator that runs them
// concurrently and the passes over what they found (passes/). The detectors
// themselves, and their parsers, are the internal module hwaccel.detectors
// (detectors/), which only the library and its tests import.
module;
#include <span>
#include <string_view>
#include <vector>
export module hwaccel.detect;
export import hwaccel.hardware;
export import :system;
export import :windows_facts;
export import :live;
export import :fixture;
export import :timeline;
export import :read_cache;
export import :capture;
export import :support;
export import :topology;
export import :passes;

export namespace hwaccel {

/// The registration table: every detector and host probe, in canonical order.
/// Generated from the `detectors` list of modules/detect/detectors/meson.build.
std::span<const Detector* const> detector_table() noexcept;

/// The row of `backend`'s detector.
const Detector& detector_for(Backend backend) noexcept;
/// What is known about `backend` before detecting (BackendFacts).
inline const BackendFacts& facts_of(Backend backend) noexcept { return detector_for(backend).facts; }

/// Every backend's visibility variables, each once, in table order: what the
/// environment probe records (Environment::visible_devices_env).
std::span<const std::string_view> device_selection_variables() noexcept;

/// The backends whose devices can have `family`: those of that default
/// family and those that name it among their other families (Apple reports
/// its Neural Engine beside its GPU), in canonical order. Every backend
/// belongs to at least one family.
std::span<const Backend> backends_of(Family family) noexcept;

/// Runs the detectors `options` selects against `system`. Detectors that may
/// wait on a tool run on their own threads, the others on the calling thread;
/// one backend failing is a warning, never a failed detection. Devices come
/// out sorted by backend then index, merged across backends where two see the
/// same PCI device, with visibility to this process resolved.
Inventory detect_inventory(const System& system, const DetectOptions& options = {});

/// The finalize pass that recognises devices in the published-spec table
/// (spec_match.cpp): sets DeviceProfile::spec_id of every non-CPU device
/// without one that match_spec() matches, with PCI ids from the device's
/// properties or, failing that, from sysfs under its PCI bus id. Figures stay
/// in the table; nothing else of the device changes.
void match_device_specs(Inventory& inventory, const System& system);

/// Cross-backend passes after every detector has finished (finalize.cpp):
/// canonical order, merging of devices seen by two backends, visibility,
/// NIC affinity. detect_inventory runs it; it is exported for callers that
/// detect in parts and join the parts (LazyRegistry), and must stay
/// idempotent: running it on a finalized inventory changes nothing.
void finalize_inventory(Inventory& inventory, const System& system, const DetectOptions& options);

}  // namespace hwaccel
