// The C API's detection: detect options (backends, fixture, tool deadline,
// host probes, log callback) and hwaccel_detect.
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <utility>

import hwaccel;

#include "capi_support.hpp"

using namespace hwaccel::capi;

extern "C" {

HWACCEL_API hwaccel_detect_options* hwaccel_detect_options_new(void) {
  return new (std::nothrow) hwaccel_detect_options{};
}

HWACCEL_API void hwaccel_detect_options_free(hwaccel_detect_options* options) { delete options; }

HWACCEL_API hwaccel_status hwaccel_detect_options_set_backends(hwaccel_detect_options* options, const char* backends,
                                                               hwaccel_error** error) {
  return guarded(error, [&] {
    if (!options) return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, "hwaccel_detect_options_set_backends: options is NULL");
    if (!backends) return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, "hwaccel_detect_options_set_backends: backends is NULL");
    hwaccel::DetectBuilder candidate = options->builder;
    if (auto r = candidate.select(backends); !r) return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, r.error().message);
    options->builder = std::move(candidate);
    options->backends_chosen = true;
    return HWACCEL_OK;
  });
}

HWACCEL_API hwaccel_status hwaccel_detect_options_set_fixture(hwaccel_detect_options* options, const char* fixture_dir,
                                                              hwaccel_error** error) {
  return guarded(error, [&] {
    if (!options) return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, "hwaccel_detect_options_set_fixture: options is NULL");
    options->fixture_dir = fixture_dir ? fixture_dir : "";
    return HWACCEL_OK;
  });
}

HWACCEL_API hwaccel_status hwaccel_detect_options_set_tool_timeout_ms(hwaccel_detect_options* options,
                                                                      uint32_t timeout_ms, hwaccel_error** error) {
  return guarded(error, [&] {
    if (!options)
      return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, "hwaccel_detect_options_set_tool_timeout_ms: options is NULL");
    if (timeout_ms < 1 || timeout_ms > 600'000)
      return report(error, HWACCEL_ERROR_INVALID_ARGUMENT,
                    "tool timeout " + std::to_string(timeout_ms) + " ms is outside 1 to 600000 ms");
    options->builder.tool_timeout(std::chrono::milliseconds(timeout_ms));
    return HWACCEL_OK;
  });
}

HWACCEL_API hwaccel_status hwaccel_detect_options_set_system_probes(hwaccel_detect_options* options, bool enabled,
                                                                    hwaccel_error** error) {
  return guarded(error, [&] {
    if (!options)
      return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, "hwaccel_detect_options_set_system_probes: options is NULL");
    options->builder.system_probes(enabled);
    return HWACCEL_OK;
  });
}

HWACCEL_API hwaccel_status hwaccel_detect_options_set_log_callback(hwaccel_detect_options* options, int level,
                                                                   hwaccel_log_callback callback, void* user_data,
                                                                   hwaccel_error** error) {
  return guarded(error, [&] {
    if (!options)
      return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, "hwaccel_detect_options_set_log_callback: options is NULL");
    if (level < HWACCEL_LOG_TRACE || level > HWACCEL_LOG_WARN)
      return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, "hwaccel_detect_options_set_log_callback: unknown level");
    if (!callback) {
      options->builder.diagnostics(nullptr);
      return HWACCEL_OK;
    }
    options->builder.diagnostics(
        [callback, user_data](const hwaccel::DiagnosticEvent& e) {
          // NUL-terminated copies for C; the views live as long as the call.
          const std::string event(e.event), backend(e.backend);
          const hwaccel_log_event c{static_cast<hwaccel_log_level>(e.level), event.c_str(), backend.c_str(),
                                    e.subject.c_str(), e.outcome.c_str(), e.detail.c_str(), e.count,
                                    static_cast<int64_t>(e.elapsed.count())};
          callback(&c, user_data);
        },
        static_cast<hwaccel::LogLevel>(level));
    return HWACCEL_OK;
  });
}

HWACCEL_API hwaccel_status hwaccel_detect(const hwaccel_detect_options* options, hwaccel_registry** out,
                                          hwaccel_error** error) {
  if (out) *out = nullptr;
  return guarded(error, [&] {
    if (!out) return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, "hwaccel_detect: out is NULL");
    hwaccel::DetectBuilder builder = options ? options->builder : hwaccel::DetectBuilder{};
    // As for AcceleratorRegistry::detect(): unless the caller chose the
    // backends, $HWACCEL_BACKENDS does, and a bad list is a warning.
    std::optional<hwaccel::Warning> env_warning;
    if (!options || !options->backends_chosen) {
      const char* list = std::getenv("HWACCEL_BACKENDS");
      if (list && !hwaccel::text::trim(list).empty()) {
        if (auto r = builder.select(list); !r)
          env_warning = hwaccel::Warning{"detect", hwaccel::WarningKind::invalid_value,
                                         "HWACCEL_BACKENDS ignored: " + r.error().message};
      }
    }
    auto result = std::make_unique<hwaccel_registry>();
    if (options && !options->fixture_dir.empty()) {
      auto fixture = hwaccel::FixtureSystem::open(options->fixture_dir);
      if (!fixture) return report(error, fixture.error());
      result->registry = builder.detect(**fixture);
    } else {
      result->registry = builder.detect();
    }
    if (env_warning) result->registry.inventory().warnings.push_back(std::move(*env_warning));
    *out = result.release();
    return HWACCEL_OK;
  });
}

}  // extern "C"
