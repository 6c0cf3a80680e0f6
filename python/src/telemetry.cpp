// hwaccel._native's telemetry: one sample of what the devices are doing, and
// the same sample as Prometheus or OpenMetrics text.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

import hwaccel;

#include "native_support.hpp"

namespace py = pybind11;

namespace hwaccel::python {

void bind_telemetry(py::module_& m) {
  py::class_<TelemetrySample>(m, "TelemetrySample")
      .def("to_json", [](const TelemetrySample& s) { return to_json(s); });

  m.def("sample_telemetry",
        [](const AcceleratorRegistry* registry, const std::optional<std::string>& fixture, const py::dict& settings) {
          // timeout_ms: the detection settings' key, each tool run's deadline.
          TelemetryOptions options;
          options.tool_timeout = value_or_raise(read_detect_settings(settings_argument(settings), {})).tool_timeout;
          std::unique_ptr<System> system;
          if (fixture) system = open_fixture(*fixture);
          const py::gil_scoped_release unlocked;
          if (!system) system = make_live_system();
          AcceleratorRegistry detected = registry ? *registry : DetectBuilder{}.detect(*system);
          TelemetrySample sample = sample_telemetry(detected, *system, options);
          return std::make_tuple(std::move(detected), std::move(sample));
        },
        py::arg("registry"), py::arg("fixture"), py::arg("settings"));

  m.def("metrics_text",
        [](const AcceleratorRegistry& registry, const TelemetrySample& sample, bool openmetrics) {
          ExporterCounters counters;
          counters.scrapes = 1;
          for (const auto& source : sample.failed_sources) ++counters.scrape_errors[source];
          return metrics_text(registry, sample, counters,
                              openmetrics ? MetricsFormat::openmetrics : MetricsFormat::prometheus_text);
        },
        py::arg("registry"), py::arg("sample"), py::arg("openmetrics"));

}

}  // namespace hwaccel::python
