// hwaccel.plan: how a model should run on a registry's devices: model
// descriptions (from a parameter count, the catalogue, or the model's own
// files), memory estimates, quantization suggestions, sharding plans and
// throughput grounded in bandwidth and FLOPs; cloud instances a model fits on;
// the settings tables the front ends read them through.
module;
#include <cstdint>
export module hwaccel.plan;
export import hwaccel.hardware;
export import hwaccel.registry;
export import :model;
export import :catalogue;
export import :memory;
export import :cluster;
export import :runtime;
export import :planner;
export import :cloud;
export import :hf_cache;
export import :settings;

export namespace hwaccel {

/// Bytes taken by `params` weights stored at `bits_per_weight` bits each,
/// rounded up to whole bytes; an invalid_input error for 0 parameters, a
/// width outside (0, 64] or a result beyond 64 bits.
[[nodiscard]] Result<std::uint64_t> weight_bytes(std::uint64_t params, double bits_per_weight);

}  // namespace hwaccel
