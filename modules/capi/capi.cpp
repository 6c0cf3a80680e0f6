// The C API of include/hwaccel/hwaccel.h over the C++ library: opaque handles,
// status codes and error objects; every entry point catches every exception.
#include "hwaccel/hwaccel.h"

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

import hwaccel;

struct hwaccel_error {
  hwaccel_status status = HWACCEL_ERROR_INTERNAL;
  std::string message;
};

struct hwaccel_detect_options {
  hwaccel::DetectBuilder builder;
  bool backends_chosen = false;  // false: every backend, or $HWACCEL_BACKENDS
  std::string fixture_dir;       // empty: this machine
};

struct hwaccel_registry {
  hwaccel::AcceleratorRegistry registry;
};

// hwaccel_device and hwaccel_warning are never defined: their pointers are the
// registry's DeviceProfile and Warning objects, converted back and forth.

namespace {

using hwaccel::ErrorKind;

const hwaccel::DeviceProfile* profile_of(const hwaccel_device* device) noexcept {
  return reinterpret_cast<const hwaccel::DeviceProfile*>(device);
}
const hwaccel_device* handle_of(const hwaccel::DeviceProfile* profile) noexcept {
  return reinterpret_cast<const hwaccel_device*>(profile);
}
const hwaccel::Warning* warning_of(const hwaccel_warning* warning) noexcept {
  return reinterpret_cast<const hwaccel::Warning*>(warning);
}
const hwaccel_warning* handle_of(const hwaccel::Warning* warning) noexcept {
  return reinterpret_cast<const hwaccel_warning*>(warning);
}

hwaccel_status status_of(ErrorKind kind) noexcept {
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
hwaccel_status report(hwaccel_error** error, hwaccel_status status, std::string_view message) noexcept {
  if (error) {
    try {
      *error = new hwaccel_error{status, std::string(message)};
    } catch (...) {
      *error = nullptr;
    }
  }
  return status;
}

hwaccel_status report(hwaccel_error** error, const hwaccel::Error& e) noexcept {
  return report(error, status_of(e.kind), e.message);
}

// Runs `body` (returning hwaccel_status) so that no exception escapes.
template <class Body>
hwaccel_status guarded(hwaccel_error** error, Body&& body) noexcept {
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
}

// NUL-terminated names of an enum's values, built once from the library's
// to_string (whose string_view results carry no NUL guarantee). Values are
// dense from 0; the first one named "unknown" ends the table.
template <class Enum>
const char* enum_name(Enum value) noexcept {
  constexpr std::size_t max_values = 64;
  struct Table {
    std::array<std::string, max_values> names;
    std::size_t count = 0;
  };
  try {
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
  } catch (...) {
    return "unknown";
  }
}

const char* c_str_or_null(const std::optional<std::string>& value) noexcept {
  return value ? value->c_str() : nullptr;
}

template <class T, class Out>
bool copy_out(const std::optional<T>& value, Out* out) noexcept {
  if (!value || !out) return false;
  *out = static_cast<Out>(*value);
  return true;
}

constexpr std::uint32_t known_json_flags = HWACCEL_JSON_PRETTY | HWACCEL_JSON_NO_TIMINGS;

}  // namespace

extern "C" {

HWACCEL_API const char* hwaccel_status_name(hwaccel_status status) {
  switch (status) {
    case HWACCEL_OK: return "ok";
    case HWACCEL_ERROR_INVALID_ARGUMENT: return "invalid_argument";
    case HWACCEL_ERROR_NOT_FOUND: return "not_found";
    case HWACCEL_ERROR_PERMISSION_DENIED: return "permission_denied";
    case HWACCEL_ERROR_IO: return "io_error";
    case HWACCEL_ERROR_NOT_REGULAR_FILE: return "not_regular_file";
    case HWACCEL_ERROR_ESCAPES_ROOT: return "escapes_root";
    case HWACCEL_ERROR_SYMLINK_LOOP: return "symlink_loop";
    case HWACCEL_ERROR_TOOL_NOT_FOUND: return "tool_not_found";
    case HWACCEL_ERROR_TOOL_FAILED: return "tool_failed";
    case HWACCEL_ERROR_TIMEOUT: return "timeout";
    case HWACCEL_ERROR_NOT_CAPTURED: return "not_captured";
    case HWACCEL_ERROR_PARSE: return "parse_error";
    case HWACCEL_ERROR_UNSUPPORTED: return "unsupported";
    case HWACCEL_ERROR_OUT_OF_MEMORY: return "out_of_memory";
    case HWACCEL_ERROR_INTERNAL: return "internal";
    case HWACCEL_STATUS_MAX_ENUM: break;
  }
  return "unknown";
}

HWACCEL_API hwaccel_status hwaccel_error_status(const hwaccel_error* error) {
  return error ? error->status : HWACCEL_ERROR_INVALID_ARGUMENT;
}

HWACCEL_API const char* hwaccel_error_message(const hwaccel_error* error) {
  return error ? error->message.c_str() : nullptr;
}

HWACCEL_API void hwaccel_error_free(hwaccel_error* error) { delete error; }

HWACCEL_API const char* hwaccel_version(void) {
  // library_version() views a string literal; copied once to be sure of the NUL.
  try {
    static const std::string version(hwaccel::library_version());
    return version.c_str();
  } catch (...) {
    return "unknown";
  }
}

HWACCEL_API uint32_t hwaccel_c_api_version(void) { return HWACCEL_C_API_VERSION; }

HWACCEL_API uint32_t hwaccel_schema_version(void) { return hwaccel::registry_schema_version; }

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

HWACCEL_API hwaccel_status hwaccel_registry_from_json(const char* json, size_t length, hwaccel_registry** out,
                                                      hwaccel_error** error) {
  if (out) *out = nullptr;
  return guarded(error, [&] {
    if (!out) return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, "hwaccel_registry_from_json: out is NULL");
    if (!json) return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, "hwaccel_registry_from_json: json is NULL");
    auto parsed = hwaccel::registry_from_json(std::string_view(json, length));
    if (!parsed) return report(error, parsed.error());
    *out = new hwaccel_registry{std::move(*parsed)};
    return HWACCEL_OK;
  });
}

HWACCEL_API void hwaccel_registry_free(hwaccel_registry* registry) { delete registry; }

HWACCEL_API hwaccel_status hwaccel_registry_to_json(const hwaccel_registry* registry, uint32_t flags, char** out,
                                                    size_t* length, hwaccel_error** error) {
  if (out) *out = nullptr;
  if (length) *length = 0;
  return guarded(error, [&] {
    if (!registry) return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, "hwaccel_registry_to_json: registry is NULL");
    if (!out) return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, "hwaccel_registry_to_json: out is NULL");
    if ((flags & ~known_json_flags) != 0)
      return report(error, HWACCEL_ERROR_INVALID_ARGUMENT,
                    "hwaccel_registry_to_json: unknown flag bits " + std::to_string(flags & ~known_json_flags));
    const std::string json = hwaccel::to_json(
        registry->registry, hwaccel::JsonOptions{.pretty = (flags & HWACCEL_JSON_PRETTY) != 0,
                                                 .include_timings = (flags & HWACCEL_JSON_NO_TIMINGS) == 0});
    auto buffer = std::make_unique<char[]>(json.size() + 1);
    std::memcpy(buffer.get(), json.data(), json.size());
    buffer[json.size()] = '\0';
    *out = buffer.release();
    if (length) *length = json.size();
    return HWACCEL_OK;
  });
}

HWACCEL_API void hwaccel_string_free(char* string) { delete[] string; }

HWACCEL_API uint32_t hwaccel_registry_schema_version(const hwaccel_registry* registry) {
  return registry ? registry->registry.schema_version() : 0;
}

HWACCEL_API bool hwaccel_registry_has_accelerator(const hwaccel_registry* registry) {
  return registry && registry->registry.has_accelerator();
}

HWACCEL_API size_t hwaccel_registry_device_count(const hwaccel_registry* registry) {
  return registry ? registry->registry.devices().size() : 0;
}

HWACCEL_API const hwaccel_device* hwaccel_registry_device(const hwaccel_registry* registry, size_t index) {
  if (!registry || index >= registry->registry.devices().size()) return nullptr;
  return handle_of(&registry->registry.devices()[index]);
}

HWACCEL_API const hwaccel_device* hwaccel_registry_find_device(const hwaccel_registry* registry, const char* id) {
  if (!registry || !id) return nullptr;
  return handle_of(registry->registry.find(id));
}

HWACCEL_API const char* hwaccel_device_id(const hwaccel_device* device) {
  return device ? profile_of(device)->id.c_str() : nullptr;
}

HWACCEL_API const char* hwaccel_device_backend(const hwaccel_device* device) {
  return device ? enum_name(profile_of(device)->backend) : nullptr;
}

HWACCEL_API const char* hwaccel_device_family(const hwaccel_device* device) {
  return device ? enum_name(profile_of(device)->family) : nullptr;
}

HWACCEL_API uint32_t hwaccel_device_index(const hwaccel_device* device) {
  return device ? profile_of(device)->index : 0;
}

HWACCEL_API const char* hwaccel_device_name(const hwaccel_device* device) {
  return device ? profile_of(device)->name.c_str() : nullptr;
}

HWACCEL_API bool hwaccel_device_memory_bytes(const hwaccel_device* device, uint64_t* out) {
  return device && copy_out(profile_of(device)->memory_bytes, out);
}

HWACCEL_API bool hwaccel_device_memory_free_bytes(const hwaccel_device* device, uint64_t* out) {
  return device && copy_out(profile_of(device)->memory_free_bytes, out);
}

HWACCEL_API const char* hwaccel_device_pci_bus_id(const hwaccel_device* device) {
  return device ? c_str_or_null(profile_of(device)->pci_bus_id) : nullptr;
}

HWACCEL_API bool hwaccel_device_numa_node(const hwaccel_device* device, int32_t* out) {
  return device && copy_out(profile_of(device)->numa_node, out);
}

HWACCEL_API const char* hwaccel_device_compute_capability(const hwaccel_device* device) {
  return device ? c_str_or_null(profile_of(device)->compute_capability) : nullptr;
}

HWACCEL_API const char* hwaccel_device_driver_version(const hwaccel_device* device) {
  return device ? c_str_or_null(profile_of(device)->driver_version) : nullptr;
}

HWACCEL_API bool hwaccel_device_visible(const hwaccel_device* device) {
  return device && profile_of(device)->visible;
}

HWACCEL_API bool hwaccel_device_available(const hwaccel_device* device) {
  return device && profile_of(device)->available;
}

HWACCEL_API bool hwaccel_device_runtime_index(const hwaccel_device* device, uint32_t* out) {
  return device && copy_out(profile_of(device)->runtime_index, out);
}

HWACCEL_API size_t hwaccel_registry_warning_count(const hwaccel_registry* registry) {
  return registry ? registry->registry.warnings().size() : 0;
}

HWACCEL_API const hwaccel_warning* hwaccel_registry_warning(const hwaccel_registry* registry, size_t index) {
  if (!registry || index >= registry->registry.warnings().size()) return nullptr;
  return handle_of(&registry->registry.warnings()[index]);
}

HWACCEL_API const char* hwaccel_warning_backend(const hwaccel_warning* warning) {
  return warning ? warning_of(warning)->backend.c_str() : nullptr;
}

HWACCEL_API const char* hwaccel_warning_kind(const hwaccel_warning* warning) {
  return warning ? enum_name(warning_of(warning)->kind) : nullptr;
}

HWACCEL_API const char* hwaccel_warning_message(const hwaccel_warning* warning) {
  return warning ? warning_of(warning)->message.c_str() : nullptr;
}

}  // extern "C"
