// The C API's detection: detect options (backends, fixture, tool deadline,
// host probes, log callback) and hwaccel_detect.
#include <cstdint>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

import hwaccel;

#include "capi_support.hpp"

using namespace hwaccel::capi;

namespace {

// Checks one detection setting through the library's table (the message of
// a bad value is the CLI's and Python's) and keeps it, replacing an earlier one.
hwaccel_status set_setting(hwaccel_detect_options& options, std::string_view key, std::string_view value,
                           hwaccel_error** error) {
  const hwaccel::Setting setting{std::string(key), std::string(value)};
  if (auto checked = hwaccel::read_detect_settings(std::span(&setting, 1), {}); !checked)
    return report(error, checked.error());
  std::erase_if(options.settings, [&](const hwaccel::Setting& s) { return s.key == key; });
  options.settings.push_back(setting);
  return HWACCEL_OK;
}

}  // namespace

namespace hwaccel::capi {

hwaccel::DetectBuilder detect_builder(const hwaccel_detect_options* options, const hwaccel::EnvironmentLookup& environment) {
  const std::vector<hwaccel::Setting> none;
  auto settings = hwaccel::read_detect_settings(options ? options->settings : none, environment, hwaccel::BadEnvironment::ignore);
  // The settings were checked one by one as they were set.
  hwaccel::DetectBuilder builder = settings ? settings->builder() : hwaccel::DetectBuilder{};
  if (options && options->sink)
    builder.diagnostics(options->sink, settings && settings->log_level ? *settings->log_level : hwaccel::LogLevel::info);
  return builder;
}

}  // namespace hwaccel::capi

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
    return set_setting(*options, "backends", backends, error);
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
    return set_setting(*options, "timeout-ms", std::to_string(timeout_ms), error);
  });
}

HWACCEL_API hwaccel_status hwaccel_detect_options_set_system_probes(hwaccel_detect_options* options, bool enabled,
                                                                    hwaccel_error** error) {
  return guarded(error, [&] {
    if (!options)
      return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, "hwaccel_detect_options_set_system_probes: options is NULL");
    return set_setting(*options, "system-probes", enabled ? "true" : "false", error);
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
      options->sink = nullptr;
      std::erase_if(options->settings, [](const hwaccel::Setting& s) { return s.key == "log-level"; });
      return HWACCEL_OK;
    }
    if (const auto status = set_setting(*options, "log-level", to_string(static_cast<hwaccel::LogLevel>(level)), error);
        status != HWACCEL_OK)
      return status;
    options->sink = [callback, user_data](const hwaccel::DiagnosticEvent& e) {
      // NUL-terminated copies for C; the views live as long as the call.
      const std::string event(e.event), backend(e.backend);
      const hwaccel_log_event c{static_cast<hwaccel_log_level>(e.level), event.c_str(), backend.c_str(),
                                e.subject.c_str(), e.outcome.c_str(), e.detail.c_str(), e.count,
                                static_cast<int64_t>(e.elapsed.count())};
      callback(&c, user_data);
    };
    return HWACCEL_OK;
  });
}

HWACCEL_API hwaccel_status hwaccel_detect(const hwaccel_detect_options* options, hwaccel_registry** out,
                                          hwaccel_error** error) {
  if (out) *out = nullptr;
  return guarded(error, [&] {
    if (!out) return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, "hwaccel_detect: out is NULL");
    // As for AcceleratorRegistry::detect(): unless the caller chose the
    // backends, $HWACCEL_BACKENDS does, and a bad list is a warning.
    const hwaccel::DetectBuilder builder = detect_builder(options, hwaccel::process_environment());
    auto result = std::make_unique<hwaccel_registry>();
    if (options && !options->fixture_dir.empty()) {
      auto fixture = hwaccel::FixtureSystem::open(options->fixture_dir);
      if (!fixture) return report(error, fixture.error());
      result->registry = builder.detect(**fixture);
    } else {
      result->registry = builder.detect();
    }
    *out = result.release();
    return HWACCEL_OK;
  });
}

}  // extern "C"
