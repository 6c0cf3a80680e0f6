// The registration table, generated from the `detectors` list in
// modules/detect/detectors/meson.build.
module;
#include <array>
#include <span>
module hwaccel.detect;
import hwaccel.detectors;

namespace hwaccel {
namespace {

constexpr std::array table = {
#include "detector_table.inc"
};

}  // namespace

std::span<const Detector* const> detector_table() noexcept { return table; }

}  // namespace hwaccel
