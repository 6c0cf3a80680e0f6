// What a workload needs from a device: device class, device count, memory,
// compute capability and number format, checked against DeviceProfiles.
module;
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
export module hwaccel.registry:requirement;
import hwaccel.hardware;

export namespace hwaccel {

/// Which devices a requirement accepts.
enum class DeviceClass : std::uint8_t {
  any_accelerator,  ///< any device but the CPU
  gpu,              ///< Family::gpu (CUDA, ROCm, Apple, Vulkan, oneAPI)
  tpu,              ///< Family::tpu
  gaudi,            ///< Backend::gaudi
  aws_neuron,       ///< Backend::aws_neuron (Inferentia, Trainium)
  gpu_or_tpu,
  npu,              ///< Family::npu
  any,              ///< any device, the CPU included (a CPU fallback is acceptable)
};

std::string_view to_string(DeviceClass device_class) noexcept;

/// The memory a device can allocate for a model, in bytes:
/// - dedicated memory: memory_bytes;
/// - unified memory: shared_memory_bytes when the detector reports the
///   GPU-usable share of it, else memory_bytes;
/// - a carve-out: memory_bytes only; the system RAM it can also map
///   (shared_memory_bytes, AMD GTT) is the CPU's too and is not counted;
/// - the CPU: memory_bytes, capped by its cgroup memory limit.
/// nullopt when the detector did not learn the size.
std::optional<std::uint64_t> usable_memory_bytes(const DeviceProfile& device) noexcept;

/// Orders two compute capabilities of the same scheme:
/// - NVIDIA "major.minor" numerically ("8.9" < "9.0" < "10.0");
/// - AMD gfx targets by architecture generation within one ISA line:
///   the gfx9 line (Vega gfx900/902/904/909/90c < gfx906 < CDNA gfx908 <
///   gfx90a < gfx940/941/942 < gfx950) or the RDNA line (gfx101x < gfx103x
///   < gfx110x < gfx115x < gfx120x); feature suffixes (":sramecc+") are
///   ignored. Targets of different lines do not run each other's code and
///   are unordered;
/// - TPU generations (v2 < v3 < v4 < v5e = v5litepod < v5p < v6e < v7).
/// Anything else is equivalent when equal and unordered otherwise.
std::partial_ordering compare_compute_capability(std::string_view a, std::string_view b) noexcept;

/// Whether the device computes in a number format natively: "fp32", "fp16",
/// "bf16", "fp8" or "int8" (tensor/matrix units or vector instructions for
/// that type). Derived from the backend and the compute capability (CUDA
/// bf16 from 8.0, fp8 from 8.9, int8 from 6.1; AMD bf16 on gfx908 and later
/// CDNA and RDNA3+, fp8 on gfx94x, gfx950 and RDNA4) or, for the CPU, its ISA
/// features (avx512_bf16/amx_bf16/Arm bf16, avx512_fp16/Arm fp16,
/// VNNI/Arm dotprod). TPUs, Gaudi and Neuron compute bf16 and fp32. nullopt
/// when it cannot be told from what was detected, or for another name.
/// (A string until the planner's quantization type replaces it.)
std::optional<bool> supports_dtype(const DeviceProfile& device, std::string_view dtype) noexcept;

/// What a workload needs: `min_devices` devices of a class, each available,
/// visible to this process and meeting every condition that is set. A
/// condition on something a detector did not learn (memory, capability) is
/// not met: nothing is assumed.
struct AcceleratorRequirement {
  DeviceClass device_class = DeviceClass::any_accelerator;
  std::uint32_t min_devices = 1;
  std::optional<std::uint64_t> min_memory_bytes;  ///< usable memory of each device
  /// Compared with compare_compute_capability; a device of another scheme
  /// (an AMD GPU against "8.0") does not meet it.
  std::optional<std::string> min_compute_capability;
  /// A number format each device must compute natively (supports_dtype).
  std::optional<std::string> dtype;

  /// `min_devices` devices of a class, with no other condition.
  static AcceleratorRequirement of(DeviceClass device_class, std::uint32_t min_devices = 1) {
    AcceleratorRequirement r;
    r.device_class = device_class;
    r.min_devices = min_devices;
    return r;
  }
  static AcceleratorRequirement any_accelerator() { return of(DeviceClass::any_accelerator); }
  static AcceleratorRequirement gpu() { return of(DeviceClass::gpu); }
  /// A TPU slice of `chips` chips (each chip is one device).
  static AcceleratorRequirement tpu(std::uint32_t chips) { return of(DeviceClass::tpu, chips); }
  static AcceleratorRequirement gaudi() { return of(DeviceClass::gaudi); }
  static AcceleratorRequirement aws_neuron() { return of(DeviceClass::aws_neuron); }
  static AcceleratorRequirement gpu_or_tpu() { return of(DeviceClass::gpu_or_tpu); }

  AcceleratorRequirement with_min_devices(std::uint32_t n) const;
  AcceleratorRequirement with_min_memory(std::uint64_t bytes) const;
  AcceleratorRequirement with_min_compute_capability(std::string capability) const;
  AcceleratorRequirement with_dtype(std::string dtype) const;

  /// Whether one device meets the per-device conditions.
  bool satisfied_by(const DeviceProfile& device) const { return !rejection(device); }
  /// Why a device does not meet them, as a sentence; nullopt when it does.
  std::optional<std::string> rejection(const DeviceProfile& device) const;
  /// "2+ tpu, >= 16 GiB, compute capability >= v5e, bf16".
  std::string to_string() const;

  friend bool operator==(const AcceleratorRequirement&, const AcceleratorRequirement&) = default;
};

}  // namespace hwaccel
