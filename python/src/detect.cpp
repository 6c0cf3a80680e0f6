// hwaccel._native's detection: detect() with its diagnostic events, capture()
// and CachedRegistry, each from the same builder options.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

import hwaccel;

#include "native_support.hpp"

namespace py = pybind11;

namespace hwaccel::python {
namespace {

/// Diagnostic events collected while the GIL is released; the Python layer
/// hands them to `logging` afterwards (hwaccel/_logging.py).
using EventTuple = std::tuple<std::string, std::string, std::string, std::string, std::string, std::string, std::int64_t,
                              std::int64_t>;

class EventCollector {
 public:
  DiagnosticSink sink() {
    return [this](const DiagnosticEvent& e) {
      const std::lock_guard lock(mutex_);
      events_.emplace_back(std::string(to_string(e.level)), std::string(e.event), std::string(e.backend), e.subject,
                           e.outcome, e.detail, e.count, static_cast<std::int64_t>(e.elapsed.count()));
    };
  }
  std::vector<EventTuple> take() {
    const std::lock_guard lock(mutex_);
    return std::move(events_);
  }

 private:
  std::mutex mutex_;
  std::vector<EventTuple> events_;
};

// The detection the keyword arguments ask for (backends, timeout_ms,
// system_probes, log_level), read as the CLI's options are; without
// backends, $HWACCEL_BACKENDS chooses them, and a bad list is a warning of
// the detection, as for AcceleratorRegistry::detect().
DetectSettings detect_settings(const py::dict& settings) {
  return value_or_raise(read_detect_settings(settings_argument(settings), process_environment(), BadEnvironment::ignore));
}

// Events are collected only when Python asked for them (its `hwaccel`
// logger is enabled): $HWACCEL_LOG names stderr's level for the command.
std::tuple<AcceleratorRegistry, std::vector<EventTuple>> detect(const std::optional<std::string>& fixture,
                                                                const py::dict& settings) {
  const DetectSettings s = detect_settings(settings);
  DetectBuilder builder = s.builder();
  EventCollector events;
  const bool wanted = settings.contains("log_level") && !settings["log_level"].is_none();
  if (wanted && s.log_level) builder.diagnostics(events.sink(), *s.log_level);
  AcceleratorRegistry registry;
  {
    const py::gil_scoped_release unlocked;
    if (fixture) {
      const auto system = open_fixture(*fixture);
      registry = builder.detect(*system);
    } else {
      registry = builder.detect();
    }
  }
  return {std::move(registry), events.take()};
}

/// "CPU model, N accelerator(s)": a fixture's default description (as `hwaccel capture` writes it).
std::string describe_machine(const AcceleratorRegistry& registry) {
  std::string text;
  if (const auto& cpu = registry.system().cpu; cpu && !cpu->model_name.empty()) text = cpu->model_name;
  std::size_t accelerators = 0;
  for (const auto& d : registry.devices())
    if (d.family != Family::cpu) ++accelerators;
  return text::cat(text, text.empty() ? "" : ", ", accelerators, " accelerator(s)");
}

}  // namespace

void bind_detect(py::module_& m) {
  m.def("detect", &detect, py::arg("fixture"), py::arg("settings"));

  m.def("capture",
        [](const std::string& out_dir, const std::string& machine, const std::string& source, const py::dict& settings) {
          const DetectBuilder builder = detect_settings(settings).builder();
          const py::gil_scoped_release unlocked;
          const auto live = make_live_system();
          RecordingSystem recorder(*live);
          AcceleratorRegistry registry = builder.detect(recorder);
          if (auto r = recorder.write(out_dir, machine.empty() ? describe_machine(registry) : machine, source); !r) raise(r.error().kind, text::cat("capture: ", r.error().message));
          return registry;
        },
        py::arg("out_dir"), py::arg("machine"), py::arg("source"), py::arg("settings"));

  // A registry detected at most once per TTL, shared by the threads that use
  // this object (the library's CachedRegistry).
  py::class_<CachedRegistry>(m, "CachedRegistry")
      .def(py::init([](std::int64_t ttl_ms, const py::dict& settings) {
             if (ttl_ms < 0) raise_argument("ttl", "is negative");
             CacheOptions options;
             options.ttl = std::chrono::milliseconds(ttl_ms);
             options.detect = [builder = detect_settings(settings).builder()] { return builder.detect(); };
             return std::make_unique<CachedRegistry>(std::move(options));
           }),
           py::arg("ttl_ms"), py::arg("settings"))
      .def("get",
           [](CachedRegistry& c) {
             std::shared_ptr<const AcceleratorRegistry> r;
             {
               const py::gil_scoped_release unlocked;
               r = c.get();
             }
             return *r;
           })
      .def("invalidate", &CachedRegistry::invalidate)
      .def_property_readonly("detections", &CachedRegistry::detections)
      .def_property_readonly("ttl_ms", [](const CachedRegistry& c) { return c.ttl().count(); });
}

}  // namespace hwaccel::python
