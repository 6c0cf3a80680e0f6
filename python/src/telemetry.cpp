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
        [](const AcceleratorRegistry* registry, const std::optional<std::string>& fixture,
           std::optional<std::int64_t> timeout_ms) {
          TelemetryOptions options;
          if (timeout_ms) {
            if (*timeout_ms < 1 || *timeout_ms > 600'000)
              raise_argument("timeout_ms", text::cat(*timeout_ms, " is outside 1..600000 milliseconds"));
            options.tool_timeout = std::chrono::milliseconds(*timeout_ms);
          }
          std::unique_ptr<System> system;
          if (fixture) system = open_fixture(*fixture);
          const py::gil_scoped_release unlocked;
          if (!system) system = make_live_system();
          AcceleratorRegistry detected = registry ? *registry : DetectBuilder{}.detect(*system);
          TelemetrySample sample = sample_telemetry(detected, *system, options);
          return std::make_tuple(std::move(detected), std::move(sample));
        },
        py::arg("registry"), py::arg("fixture"), py::arg("timeout_ms"));

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
