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

std::optional<LogLevel> log_level_argument(const std::optional<std::string>& level) {
  if (!level) return std::nullopt;
  const auto parsed = parse_log_level(*level);
  if (!parsed) raise_argument("log_level", text::cat("'", *level, "' is not trace, debug, info or warn"));
  return parsed;
}

DetectBuilder builder_from(const std::optional<std::string>& backends, std::optional<std::int64_t> timeout_ms,
                           bool system_probes) {
  DetectBuilder builder;
  if (backends) {
    if (auto r = builder.select(*backends); !r) raise(r.error().kind, text::cat("backends: ", r.error().message));
  }
  if (timeout_ms) {
    if (*timeout_ms < 1 || *timeout_ms > 600'000)
      raise_argument("timeout_ms", text::cat(*timeout_ms, " is outside 1..600000 milliseconds"));
    builder.tool_timeout(std::chrono::milliseconds(*timeout_ms));
  }
  builder.system_probes(system_probes);
  return builder;
}


std::tuple<AcceleratorRegistry, std::vector<EventTuple>> detect(const std::optional<std::string>& fixture,
                                                                const std::optional<std::string>& backends,
                                                                std::optional<std::int64_t> timeout_ms,
                                                                bool system_probes,
                                                                const std::optional<std::string>& log_level) {
  DetectBuilder builder = builder_from(backends, timeout_ms, system_probes);
  const auto level = log_level_argument(log_level);
  EventCollector events;
  if (level) builder.diagnostics(events.sink(), *level);
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
  m.def("detect", &detect, py::arg("fixture"), py::arg("backends"), py::arg("timeout_ms"), py::arg("system_probes"),
        py::arg("log_level"));

  m.def("capture",
        [](const std::string& out_dir, const std::string& machine, const std::string& source,
           const std::optional<std::string>& backends, std::optional<std::int64_t> timeout_ms) {
          DetectBuilder builder = builder_from(backends, timeout_ms, true);
          const py::gil_scoped_release unlocked;
          const auto live = make_live_system();
          RecordingSystem recorder(*live);
          AcceleratorRegistry registry = builder.detect(recorder);
          if (auto r = recorder.write(out_dir, machine.empty() ? describe_machine(registry) : machine, source); !r) raise(r.error().kind, text::cat("capture: ", r.error().message));
          return registry;
        },
        py::arg("out_dir"), py::arg("machine"), py::arg("source"), py::arg("backends"), py::arg("timeout_ms"));

  // A registry detected at most once per TTL, shared by the threads that use
  // this object (the library's CachedRegistry).
  py::class_<CachedRegistry>(m, "CachedRegistry")
      .def(py::init([](std::int64_t ttl_ms, std::optional<std::string> backends, std::optional<std::int64_t> timeout_ms,
                       bool system_probes) {
             if (ttl_ms < 0) raise_argument("ttl", "is negative");
             CacheOptions options;
             options.ttl = std::chrono::milliseconds(ttl_ms);
             options.detect = [builder = builder_from(backends, timeout_ms, system_probes)] { return builder.detect(); };
             return std::make_unique<CachedRegistry>(std::move(options));
           }),
           py::arg("ttl_ms"), py::arg("backends"), py::arg("timeout_ms"), py::arg("system_probes"))
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
