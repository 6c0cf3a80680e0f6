// The C API's watcher: a detection followed on a thread of its own, its
// events handed out as JSON lines.
#include <chrono>
#include <cstdint>
#include <memory>
#include <utility>

import hwaccel;

#include "capi_support.hpp"

using namespace hwaccel::capi;

extern "C" {

HWACCEL_API hwaccel_status hwaccel_watch_start(const hwaccel_detect_options* options, uint32_t rescan_interval_ms,
                                               hwaccel_watcher** out, hwaccel_error** error) {
  if (out) *out = nullptr;
  return guarded(error, [&] {
    if (!out) return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, "hwaccel_watch_start: out is NULL");
    auto result = std::make_unique<hwaccel_watcher>();
    if (options && !options->fixture_dir.empty()) {
      auto opened = hwaccel::open_fixture_folder(options->fixture_dir);
      if (!opened) return report(error, opened.error());
      result->system = std::move(*opened);
    } else {
      result->system = hwaccel::make_live_system();
    }
    hwaccel::WatchOptions watch;
    // As before the settings tables: the options alone, no environment variable.
    watch.detect = detect_builder(options, {}).options();
    watch.rescan_interval = std::chrono::milliseconds(rescan_interval_ms);
    auto watcher = hwaccel::Watcher::start(*result->system, std::move(watch));
    if (!watcher) return report(error, watcher.error());
    result->watcher = std::move(*watcher);
    *out = result.release();
    return HWACCEL_OK;
  });
}

HWACCEL_API hwaccel_status hwaccel_watch_next_event(hwaccel_watcher* watcher, int32_t timeout_ms, char** out,
                                                    size_t* length, hwaccel_error** error) {
  if (out) *out = nullptr;
  if (length) *length = 0;
  return guarded(error, [&] {
    if (!watcher || !out) return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, "hwaccel_watch_next_event: NULL argument");
    const auto deadline = timeout_ms < 0 ? std::chrono::steady_clock::time_point::max()
                                         : std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    auto event = watcher->watcher->next_event(deadline);
    if (!event) return HWACCEL_OK;
    return return_json(to_json(*event), out, length);
  });
}

HWACCEL_API hwaccel_status hwaccel_watch_registry(const hwaccel_watcher* watcher, hwaccel_registry** out,
                                                  hwaccel_error** error) {
  if (out) *out = nullptr;
  return guarded(error, [&] {
    if (!watcher || !out) return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, "hwaccel_watch_registry: NULL argument");
    *out = new hwaccel_registry{*watcher->watcher->registry()};
    return HWACCEL_OK;
  });
}

HWACCEL_API bool hwaccel_watch_finished(const hwaccel_watcher* watcher) {
  try {
    return watcher && watcher->watcher->status().finished;
  } catch (...) {
    return false;
  }
}

HWACCEL_API void hwaccel_watch_free(hwaccel_watcher* watcher) {
  if (!watcher) return;
  try {
    watcher->watcher->stop();
  } catch (...) {
    // Stopping joins a thread; nothing here can recover from its failure.
  }
  delete watcher;
}

}  // extern "C"
