// What the C API's translation units share (a header of modules/capi only):
// the handles' definitions and the road from a library error, or an
// exception, to a status and an error object. Include after `import hwaccel;`.
#pragma once

#include "hwaccel/hwaccel.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

struct hwaccel_error {
  hwaccel_status status = HWACCEL_ERROR_INTERNAL;
  std::string message;
};

struct hwaccel_detect_options {
  /// The detection settings set so far, by key (detect_setting_keys()); a
  /// key not set takes its environment variable ($HWACCEL_BACKENDS) in
  /// hwaccel_detect, or its default.
  std::vector<hwaccel::Setting> settings;
  hwaccel::DiagnosticSink sink;  // the log callback; empty: none
  std::string fixture_dir;       // empty: this machine
};

struct hwaccel_registry {
  hwaccel::AcceleratorRegistry registry;
};

#if !defined(__wasi__)  // the WebAssembly build has no machine to watch
struct hwaccel_watcher {
  std::unique_ptr<hwaccel::System> system;  // what the watcher reads; outlives it
  std::unique_ptr<hwaccel::Watcher> watcher;
};
#endif

struct hwaccel_request {
  std::map<std::string, std::string, std::less<>> values;
};

// hwaccel_device and hwaccel_warning are never defined: their pointers are the
// registry's DeviceProfile and Warning objects, converted back and forth.

namespace hwaccel::capi {

using hwaccel::ErrorKind;

inline const hwaccel::DeviceProfile* profile_of(const hwaccel_device* device) noexcept {
  return reinterpret_cast<const hwaccel::DeviceProfile*>(device);
}
inline const hwaccel_device* handle_of(const hwaccel::DeviceProfile* profile) noexcept {
  return reinterpret_cast<const hwaccel_device*>(profile);
}
inline const hwaccel::Warning* warning_of(const hwaccel_warning* warning) noexcept {
  return reinterpret_cast<const hwaccel::Warning*>(warning);
}
inline const hwaccel_warning* handle_of(const hwaccel::Warning* warning) noexcept {
  return reinterpret_cast<const hwaccel_warning*>(warning);
}

inline hwaccel_status status_of(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::not_found: return HWACCEL_ERROR_NOT_FOUND;
    case ErrorKind::permission_denied: return HWACCEL_ERROR_PERMISSION_DENIED;
    case ErrorKind::io_error: return HWACCEL_ERROR_IO;
    case ErrorKind::not_regular_file: return HWACCEL_ERROR_NOT_REGULAR_FILE;
    case ErrorKind::escapes_root: return HWACCEL_ERROR_ESCAPES_ROOT;
    case ErrorKind::symlink_loop: return HWACCEL_ERROR_SYMLINK_LOOP;
    case ErrorKind::tool_not_found: return HWACCEL_ERROR_TOOL_NOT_FOUND;
    case ErrorKind::tool_failed: return HWACCEL_ERROR_TOOL_FAILED;
    case ErrorKind::timeout: return HWACCEL_ERROR_TIMEOUT;
    case ErrorKind::not_captured: return HWACCEL_ERROR_NOT_CAPTURED;
    case ErrorKind::parse_error: return HWACCEL_ERROR_PARSE;
    case ErrorKind::invalid_input: return HWACCEL_ERROR_INVALID_ARGUMENT;
    case ErrorKind::unsupported: return HWACCEL_ERROR_UNSUPPORTED;
  }
  return HWACCEL_ERROR_INTERNAL;
}

// Reports a failure through the optional out-param and returns its status.
// Allocating the error object may itself fail: the status still tells.
inline hwaccel_status report(hwaccel_error** error, hwaccel_status status, std::string_view message) noexcept {
  if (error) {
#if __cpp_exceptions
    try {
      *error = new hwaccel_error{status, std::string(message)};
    } catch (...) {
      *error = nullptr;
    }
#else
    *error = new hwaccel_error{status, std::string(message)};
#endif
  }
  return status;
}

inline hwaccel_status report(hwaccel_error** error, const hwaccel::Error& e) noexcept {
  return report(error, status_of(e.kind), e.message);
}

// Runs `body` (returning hwaccel_status) so that no exception escapes.
template <class Body>
inline hwaccel_status guarded(hwaccel_error** error, Body&& body) noexcept {
#if !__cpp_exceptions
  (void)error;
  return body();  // built without exceptions (WebAssembly): nothing can escape
#else
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return report(error, HWACCEL_ERROR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    try {
      return report(error, HWACCEL_ERROR_INTERNAL, std::string("internal error: ") + e.what());
    } catch (...) {
      return report(error, HWACCEL_ERROR_INTERNAL, "internal error");
    }
  } catch (...) {
    return report(error, HWACCEL_ERROR_INTERNAL, "internal error: unknown exception");
  }
#endif
}

// NUL-terminated names of an enum's values, built once from the library's
// to_string (whose string_view results carry no NUL guarantee). Values are
// dense from 0; the first one named "unknown" ends the table.
template <class Enum>
inline const char* enum_name(Enum value) noexcept {
  constexpr std::size_t max_values = 64;
  struct Table {
    std::array<std::string, max_values> names;
    std::size_t count = 0;
  };
#if __cpp_exceptions
  try {
#endif
    static const Table table = [] {
      Table t;
      for (; t.count < max_values; ++t.count) {
        const std::string_view name = to_string(static_cast<Enum>(t.count));
        if (name == "unknown") break;
        t.names[t.count] = std::string(name);
      }
      return t;
    }();
    const auto i = static_cast<std::size_t>(value);
    return i < table.count ? table.names[i].c_str() : "unknown";
#if __cpp_exceptions
  } catch (...) {
    return "unknown";
  }
#endif
}

inline const char* c_str_or_null(const std::optional<std::string>& value) noexcept {
  return value ? value->c_str() : nullptr;
}

template <class T, class Out>
inline bool copy_out(const std::optional<T>& value, Out* out) noexcept {
  if (!value || !out) return false;
  *out = static_cast<Out>(*value);
  return true;
}

inline constexpr std::uint32_t known_json_flags = HWACCEL_JSON_PRETTY | HWACCEL_JSON_NO_TIMINGS;

// Hands `json` to the caller as a new NUL-terminated string (hwaccel_string_free).
inline hwaccel_status return_json(const std::string& json, char** out, size_t* length) {
  auto buffer = std::make_unique<char[]>(json.size() + 1);
  std::memcpy(buffer.get(), json.data(), json.size());
  buffer[json.size()] = '\0';
  *out = buffer.release();
  if (length) *length = json.size();
  return HWACCEL_OK;
}

/// The builder `options` describe (NULL: defaults), the settings read as
/// hwaccel_detect reads them: a bad environment value is a warning of the
/// detection. `environment` empty: no environment variable is read.
hwaccel::DetectBuilder detect_builder(const hwaccel_detect_options* options, const hwaccel::EnvironmentLookup& environment);

}  // namespace hwaccel::capi
