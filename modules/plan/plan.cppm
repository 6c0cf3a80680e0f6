// hwaccel.plan: how a model should run on a registry's devices.
module;
#include <cstdint>
export module hwaccel.plan;
export import hwaccel.hardware;
export import hwaccel.registry;

export namespace hwaccel {

/// Bytes taken by `params` weights stored at `bits_per_weight` bits each,
/// rounded up to whole bytes; nullopt on overflow.
Result<std::uint64_t> weight_bytes(std::uint64_t params, double bits_per_weight);

}  // namespace hwaccel
