// What the binding's translation units share: the road from a library error
// to a Python exception, fixture opening, keyword arguments as settings, and
// each file's bind_ function. Include after `import hwaccel;`.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hwaccel::python {

/// A library error on its way to Python (see the translator in the module body).
struct LibraryError {
  Error error;
};

[[noreturn]] inline void raise(ErrorKind kind, std::string message) { throw LibraryError{Error{kind, std::move(message)}}; }
[[noreturn]] inline void raise(Error error) { throw LibraryError{std::move(error)}; }
[[noreturn]] inline void raise_argument(std::string_view argument, std::string_view message) {
  raise(ErrorKind::invalid_input, text::cat(argument, ": ", message));
}

template <class T>
T value_or_raise(Result<T> r, std::string_view context = {}) {
  if (!r) {
    Error e = std::move(r.error());
    if (!context.empty()) e.message = text::cat(context, ": ", e.message);
    raise(std::move(e));
  }
  return std::move(*r);
}

/// A fixture folder opened, or its error raised.
inline std::unique_ptr<FixtureSystem> open_fixture(const std::string& dir) {
  return value_or_raise(FixtureSystem::open(dir), text::cat("fixture '", dir, "'"));
}

/// A count argument checked against its bounds.
inline std::uint32_t count_argument(std::string_view argument, std::int64_t value, std::int64_t low = 1,
                                    std::int64_t high = 1 << 20) {
  if (value < low || value > high) raise_argument(argument, text::cat(value, " is outside ", low, "..", high));
  return static_cast<std::uint32_t>(value);
}

/// Keyword arguments as settings: None left out, a bool as true/false,
/// numbers and str as written, a path by os.fspath, a list or tuple joined
/// with commas (python/src/settings.cpp). The library's readers then check
/// them as they check the CLI's options and the C API's keys.
std::vector<Setting> settings_argument(const pybind11::dict& keywords);

/// setting_keys(): every settings table (python/src/settings.cpp).
void bind_settings(pybind11::module_& m);
/// Registry and its queries, registry_from_json, hypothetical, machine_registry (python/src/registry.cpp).
void bind_registry(pybind11::module_& m);
/// detect, capture and CachedRegistry (python/src/detect.cpp).
void bind_detect(pybind11::module_& m);
/// plan, train, recommend, the fleet planners, specs_json and models_json (python/src/planning.cpp).
void bind_planning(pybind11::module_& m);
/// TelemetrySample, sample_telemetry and metrics_text (python/src/telemetry.cpp).
void bind_telemetry(pybind11::module_& m);
/// The fleet layer's functions and FleetStore (python/src/fleet.cpp).
void bind_fleet(pybind11::module_& m);
/// The Watcher (python/src/watch.cpp).
void bind_watch(pybind11::module_& m);
/// reserve, Lease and held_leases (python/src/lease.cpp).
void bind_lease(pybind11::module_& m);

}  // namespace hwaccel::python
