// hwaccel._native's Watcher (docs/watch.md): the library's watcher over this
// machine or a fixture timeline; events cross as their JSON lines. Waiting
// releases the GIL, so other Python threads run meanwhile.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

import hwaccel;

#include "native_support.hpp"

namespace py = pybind11;

namespace hwaccel::python {
namespace {

// The machine a watcher reads: a fixture replays its timeline where it has one.
std::unique_ptr<System> watched_system(const std::optional<std::string>& fixture) {
  if (!fixture) return make_live_system();
  return value_or_raise(open_fixture_folder(*fixture), text::cat("fixture '", *fixture, "'"));
}

struct PyWatcher {
  std::unique_ptr<System> system;
  std::unique_ptr<Watcher> watcher;
};

}  // namespace

void bind_watch(py::module_& m) {
  py::class_<PyWatcher>(m, "Watcher")
      .def(py::init([](const std::optional<std::string>& fixture, const std::optional<std::string>& backends,
                       double interval_s, double debounce_s, bool uevents, bool kernel_log) {
             if (interval_s < 0 || interval_s > 86400) raise_argument("interval", "must be within 0..86400 seconds");
             if (debounce_s < 0 || debounce_s > 60) raise_argument("debounce", "must be within 0..60 seconds");
             auto w = std::make_unique<PyWatcher>();
             w->system = watched_system(fixture);
             WatchOptions options;
             if (backends) {
               const std::vector<Setting> chosen{Setting{"backends", *backends}};
               options.detect.backends = value_or_raise(read_detect_settings(chosen, {})).backends;
             }
             options.rescan_interval = std::chrono::milliseconds(static_cast<std::int64_t>(interval_s * 1000));
             options.debounce = std::chrono::milliseconds(static_cast<std::int64_t>(debounce_s * 1000));
             options.uevents = uevents;
             options.kernel_log = kernel_log;
             const py::gil_scoped_release unlocked;
             w->watcher = value_or_raise(Watcher::start(*w->system, std::move(options)), "watch");
             return w;
           }),
           py::arg("fixture"), py::arg("backends"), py::arg("interval"), py::arg("debounce"), py::arg("uevents"),
           py::arg("kernel_log"))
      .def(
          "next_event",
          [](PyWatcher& w, std::optional<double> timeout_s) -> std::optional<std::string> {
            const auto deadline =
                timeout_s ? std::chrono::steady_clock::now() +
                                std::chrono::milliseconds(static_cast<std::int64_t>(std::max(0.0, *timeout_s) * 1000))
                          : std::chrono::steady_clock::time_point::max();
            std::optional<WatchEvent> e;
            {
              const py::gil_scoped_release unlocked;
              e = w.watcher->next_event(deadline);
            }
            if (!e) return std::nullopt;
            return to_json(*e);
          },
          py::arg("timeout"))
      .def("registry", [](const PyWatcher& w) { return *w.watcher->registry(); })
      .def("stop",
           [](PyWatcher& w) {
             const py::gil_scoped_release unlocked;
             w.watcher->stop();
           })
      .def_property_readonly("finished", [](const PyWatcher& w) { return w.watcher->status().finished; })
      .def_property_readonly("sources", [](const PyWatcher& w) { return w.watcher->status().sources; })
      .def_property_readonly("unavailable", [](const PyWatcher& w) { return w.watcher->status().unavailable; })
      .def_property_readonly("detections", [](const PyWatcher& w) { return w.watcher->status().detections; })
      .def_property_readonly("changes", [](const PyWatcher& w) { return w.watcher->status().changes; });
}

}  // namespace hwaccel::python
