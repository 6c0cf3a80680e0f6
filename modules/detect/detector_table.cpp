// The registration table, generated from the `detectors` list in
// modules/detect/detectors/meson.build.
module;
#include <algorithm>
#include <array>
#include <span>
#include <string_view>
#include <vector>
module hwaccel.detect;
import hwaccel.detectors;

namespace hwaccel {
namespace {

constexpr std::array table = {
#include "detector_table.inc"
};

}  // namespace

std::span<const Detector* const> detector_table() noexcept { return table; }

const Detector& detector_for(Backend backend) noexcept {
  // Every backend has exactly one row (detector_table_test checks it).
  static const std::array<const Detector*, backend_count> by_backend = [] {
    std::array<const Detector*, backend_count> rows{};
    for (const Detector* d : table)
      if (d->backend) rows[static_cast<std::size_t>(*d->backend)] = d;
    return rows;
  }();
  return *by_backend[static_cast<std::size_t>(backend)];
}

std::span<const std::string_view> device_selection_variables() noexcept {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (const Detector* d : table)
      for (const auto& v : d->facts.visibility_variables)
        if (std::find(out.begin(), out.end(), v.name) == out.end()) out.push_back(v.name);
    return out;
  }();
  return names;
}

std::span<const Backend> backends_of(Family family) noexcept {
  constexpr std::size_t families = 5;
  static const std::array<std::vector<Backend>, families> members = [] {
    std::array<std::vector<Backend>, families> out;
    for (const Backend b : all_backends) {
      out[static_cast<std::size_t>(default_family(b))].push_back(b);
      for (const Family f : facts_of(b).other_families) out[static_cast<std::size_t>(f)].push_back(b);
    }
    for (auto& list : out) std::sort(list.begin(), list.end());
    return out;
  }();
  const auto i = static_cast<std::size_t>(family);
  return i < families ? std::span<const Backend>(members[i]) : std::span<const Backend>();
}

}  // namespace hwaccel
