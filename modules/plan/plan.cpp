// Weight storage arithmetic.
module;
#include <cmath>
#include <cstdint>
module hwaccel.plan;

namespace hwaccel {

Result<std::uint64_t> weight_bytes(std::uint64_t params, double bits_per_weight) {
  if (params == 0) return fail(ErrorKind::invalid_input, "a model needs at least one parameter");
  if (!(bits_per_weight > 0) || bits_per_weight > 64)
    return fail(ErrorKind::invalid_input, text::cat("bits per weight must be in (0, 64], got ", bits_per_weight));
  const double bytes = std::ceil(static_cast<double>(params) * bits_per_weight / 8.0);
  if (bytes >= 1.8e19) return fail(ErrorKind::invalid_input, "model size overflows 64-bit byte counts");
  return static_cast<std::uint64_t>(bytes);
}

}  // namespace hwaccel
