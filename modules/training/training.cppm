// hwaccel.training: training memory by method, optimizer, precision and sharding.
module;
#include <cstdint>
export module hwaccel.training;
export import hwaccel.hardware;
export import hwaccel.plan;

export namespace hwaccel {

/// Model-state bytes per parameter of mixed-precision Adam: fp16 weights (2)
/// and gradients (2), fp32 master weights, momentum and variance (12).
inline constexpr std::uint64_t mixed_precision_adam_bytes_per_param = 16;

/// Model-state bytes (parameters, gradients, optimizer) of full training with
/// mixed-precision Adam on one device, before any sharding.
Result<std::uint64_t> adam_model_state_bytes(std::uint64_t params);

}  // namespace hwaccel
