// The registration table, generated from the `detectors` list in meson.build.
module;
#include <array>
#include <span>
module hwaccel.detect;

namespace hwaccel {
namespace {

constexpr std::array table = {
#include "detector_table.inc"
};

}  // namespace

std::span<const Detector* const> detector_table() noexcept { return table; }

}  // namespace hwaccel
