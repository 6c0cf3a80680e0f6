// hwaccel.training: training memory by method (full, LoRA, QLoRA, prefix,
// DPO, RLHF/PPO, distillation), precision and optimizer, ZeRO/FSDP sharding
// and offload across devices, tensor and pipeline parallelism, activations
// with and without recomputation, each part of the memory with its rule.
module;
#include <cstdint>
export module hwaccel.training;
export import hwaccel.hardware;
export import hwaccel.plan;
export import :settings;
export import :adapters;
export import :activations;
export import :estimate;
export import :setting_keys;

export namespace hwaccel {

/// Model-state bytes per parameter of mixed-precision Adam: fp16 weights (2)
/// and gradients (2), fp32 master weights, momentum and variance (12).
inline constexpr std::uint64_t mixed_precision_adam_bytes_per_param = 16;

/// Model-state bytes (parameters, gradients, optimizer) of full training with
/// mixed-precision Adam on one device, before any sharding.
[[nodiscard]] Result<std::uint64_t> adam_model_state_bytes(std::uint64_t params);

}  // namespace hwaccel
