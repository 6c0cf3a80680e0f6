// The registration table: one line per detector, in canonical output order.
module;
#include <array>
#include <span>
module hwaccel.detect;

namespace hwaccel {
namespace {

constexpr std::array<const Detector*, 1> table = {
    &cpu_detector,
};

}  // namespace

std::span<const Detector* const> detector_table() noexcept { return table; }

}  // namespace hwaccel
