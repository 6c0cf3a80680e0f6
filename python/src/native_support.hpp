// What the binding's translation units share: the road from a library error
// to a Python exception, and fixture opening. Include after `import hwaccel;`.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>

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

/// The fleet layer's functions and FleetStore (python/src/fleet.cpp).
void bind_fleet(pybind11::module_& m);
/// The Watcher (python/src/watch.cpp).
void bind_watch(pybind11::module_& m);

}  // namespace hwaccel::python
