// The passes over what the detectors found that need more than one backend:
// a GPU Vulkan and a native backend both report becomes one device, and the
// device-selection variables decide which devices this process sees
// (passes/merge.cpp, passes/visibility.cpp; finalize.cpp runs them).
module;
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>
export module hwaccel.detect:passes;
import hwaccel.hardware;
import :system;

export namespace hwaccel {

/// Folds each DXGI adapter that is the same GPU as a vendor backend's device
/// (nvidia-smi.exe's CUDA device, on Windows) into that device, as properties
/// (dxgi_luid, dxgi_driver_version, ...), instead of listing it twice. The
/// same GPU is found by PCI vendor and device id (DXGI gives no PCI
/// location), in enumeration order when each side has as many identical GPUs
/// (the device says so in dxgi_joined_by); with unequal counts nothing joins. Other DXGI devices stay and are renumbered. Runs before
/// merge_vulkan_devices, so that a Vulkan device joins the one device left.
void merge_dxgi_devices(Inventory& inventory);

/// Folds each Vulkan device that is the same GPU as a device of a native
/// backend (CUDA, ROCm, oneAPI, Apple) into that device, as properties
/// (vulkan_api_version, vulkan_driver, vulkan_device_index), instead of
/// listing it twice. The same GPU is found by adapter LUID (Windows: Vulkan's
/// deviceLUID against DXGI's, properties vulkan_luid and dxgi_luid); failing
/// that by PCI bus id; failing that by
/// PCI vendor and device id when each side has one such device; failing that
/// by UUID. Other Vulkan devices stay and are renumbered.
void merge_vulkan_devices(Inventory& inventory, const System& system);

/// Without vulkaninfo, warns about GPUs that have a /dev/dri render node but
/// that no backend reported (they would only have been seen through Vulkan).
void warn_unreported_render_nodes(Inventory& inventory, const System& system);

/// What decides which GPUs this process sees.
struct VisibilityInputs {
  /// Device-selection variables by name. An absent name is unset; an empty
  /// value is set and empty, which CUDA and ROCr read as "no device".
  std::map<std::string, std::string, std::less<>> env;
  /// NVIDIA_VISIBLE_DEVICES is read by the NVIDIA container runtime when a
  /// container starts, never by CUDA: it only matters inside a container.
  bool in_container = false;
};

/// Reads the inputs through `system`. `environment` is the probe's result when
/// it ran (otherwise the container facts are probed here). When
/// NVIDIA_VISIBLE_DEVICES names a folder (the device plugin's volume-mounts
/// strategy), the entries of that folder become its list.
VisibilityInputs visibility_inputs(const System& system, const std::optional<Environment>& environment);

/// Marks the CUDA and ROCm devices (and partitions) this process cannot use
/// (visible = false) and numbers the others as the runtime will
/// (runtime_index), following the rules of docs/environment.md. Devices of
/// other backends are left alone. Problems with the variables become
/// invalid_value / unsupported / degraded warnings appended to `warnings`.
void resolve_visibility(std::vector<DeviceProfile>& devices, const VisibilityInputs& inputs,
                        std::vector<Warning>& warnings);

}  // namespace hwaccel

// Module-internal: what the merge passes share (merge.cpp).
namespace hwaccel {
/// Drops the devices `merged` marks and renumbers the `renumbered` backend's
/// devices left, in their order.
void remove_merged(Inventory& inventory, const std::vector<bool>& merged, Backend renumbered);
}  // namespace hwaccel
