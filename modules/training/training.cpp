// The seed's model-state entry point: mixed-precision Adam on one device.
module;
#include <cstdint>
module hwaccel.training;

namespace hwaccel {

Result<std::uint64_t> adam_model_state_bytes(std::uint64_t params) {
  if (params == 0) return fail(ErrorKind::invalid_input, "a model needs at least one parameter");
  const auto bytes = text::checked_mul(params, mixed_precision_adam_bytes_per_param);
  if (!bytes) return fail(ErrorKind::invalid_input, "model size overflows 64-bit byte counts");
  return *bytes;
}

}  // namespace hwaccel
