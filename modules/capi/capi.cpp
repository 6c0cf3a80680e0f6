// The C API of include/hwaccel/hwaccel.h over the C++ library: opaque handles,
// status codes and error objects; every entry point catches every exception.
#include "hwaccel/hwaccel.h"

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
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

struct hwaccel_watcher {
  std::unique_ptr<hwaccel::System> system;  // what the watcher reads; outlives it
  std::unique_ptr<hwaccel::Watcher> watcher;
};

struct hwaccel_request {
  std::map<std::string, std::string, std::less<>> values;
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

// Hands `json` to the caller as a new NUL-terminated string (hwaccel_string_free).
hwaccel_status return_json(const std::string& json, char** out, size_t* length) {
  auto buffer = std::make_unique<char[]>(json.size() + 1);
  std::memcpy(buffer.get(), json.data(), json.size());
  buffer[json.size()] = '\0';
  *out = buffer.release();
  if (length) *length = json.size();
  return HWACCEL_OK;
}

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
    return return_json(json, out, length);
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

namespace {

// ---- plan and training requests ------------------------------------------

constexpr std::array<std::string_view, 5> common_request_keys = {"model", "params", "devices", "reserve", "device-specs"};
constexpr std::array<std::string_view, 8> plan_request_keys = {"quant",     "kv-dtype", "context", "batch",
                                                               "objective", "formats",  "offload", "flash-attention"};
constexpr std::array<std::string_view, 26> train_request_keys = {
    "method",       "optimizer",  "precision",    "zero",           "offload",      "dp",
    "tp",           "pp",         "sequence-parallel", "micro-batch", "micro-batches", "seq",
    "recompute",    "attention",  "dropout",      "lora-rank",      "lora-targets", "qlora-bits",
    "double-quant", "base-quant", "frozen-quant", "adapter",        "prefix-length", "prefix-projection",
    "teacher",      "reward-model"};

template <std::size_t N>
bool listed(const std::array<std::string_view, N>& keys, std::string_view key) {
  for (auto k : keys)
    if (k == key) return true;
  return false;
}

using hwaccel::Result;

// Reads the request's values, each by its key, into typed settings; the
// first bad value is an invalid_input error that names its key.
class RequestReader {
 public:
  RequestReader(const hwaccel_request& request, std::string_view operation)
      : request_(request), operation_(operation) {}

  const std::string* get(std::string_view key) const {
    const auto it = request_.values.find(key);
    return it == request_.values.end() ? nullptr : &it->second;
  }

  // Applies `parse` to the value of `key` when present and stores it in `target`.
  template <class T, class Parse>
  void read(std::string_view key, T& target, Parse parse) {
    if (error_) return;
    const std::string* value = get(key);
    if (!value) return;
    auto parsed = parse(std::string_view(*value));
    if (parsed) target = std::move(*parsed);
    else error_ = hwaccel::Error{hwaccel::ErrorKind::invalid_input, message(key, *value, parsed.error().message)};
  }

  template <class T>
  void number(std::string_view key, T& target, std::uint64_t low, std::uint64_t high) {
    read(key, target, [&](std::string_view v) -> Result<T> {
      const auto n = hwaccel::text::parse_u64(hwaccel::text::trim(v));
      if (!n || *n < low || *n > high)
        return hwaccel::fail(hwaccel::ErrorKind::invalid_input,
                             hwaccel::text::cat("not a whole number from ", low, " to ", high));
      return static_cast<T>(*n);
    });
  }

  void fraction(std::string_view key, double& target) {
    read(key, target, [](std::string_view v) -> Result<double> {
      const auto d = hwaccel::text::parse_double(hwaccel::text::trim(v));
      if (!d || !(*d >= 0.0 && *d <= 0.95)) return hwaccel::fail(hwaccel::ErrorKind::invalid_input, "not a number from 0 to 0.95");
      return *d;
    });
  }

  // `target`: a bool, or a std::optional<bool> left empty when the key is not set.
  template <class T>
  void boolean(std::string_view key, T& target) {
    read(key, target, [](std::string_view v) -> Result<bool> {
      v = hwaccel::text::trim(v);
      for (auto yes : {"true", "1", "yes", "on"})
        if (hwaccel::text::iequals(v, yes)) return true;
      for (auto no : {"false", "0", "no", "off"})
        if (hwaccel::text::iequals(v, no)) return false;
      return hwaccel::fail(hwaccel::ErrorKind::invalid_input, "not true or false");
    });
  }

  // The model named by `model` or `params` (exactly one of them).
  Result<hwaccel::ModelDescription> model() {
    const std::string* file_or_name = get("model");
    const std::string* params = get("params");
    if ((file_or_name == nullptr) == (params == nullptr))
      return hwaccel::fail(hwaccel::ErrorKind::invalid_input,
                           hwaccel::text::cat(operation_, ": set exactly one of \"model\" and \"params\""));
    if (params) {
      const auto n = hwaccel::parse_parameter_count(*params);
      if (!n)
        return hwaccel::fail(hwaccel::ErrorKind::invalid_input,
                             message("params", *params, "not a positive parameter count (e.g. 7e9, 70B)"));
      return hwaccel::ModelDescription::from_parameter_count(*n);
    }
    return named_model("model", *file_or_name);
  }

  Result<hwaccel::ModelDescription> named_model(std::string_view key, const std::string& file_or_name) const {
    auto m = hwaccel::load_model(file_or_name);
    if (!m) return hwaccel::fail(m.error().kind, hwaccel::text::cat(operation_, ": ", key, ": ", m.error().message));
    return m;
  }

  // The user device-spec file `device-specs` names (docs/planning.md,
  // "Device specs"); an empty set (the built-in table alone) without one.
  Result<hwaccel::DeviceSpecSet> device_specs() const {
    const std::string* file = get("device-specs");
    if (!file) return hwaccel::DeviceSpecSet();
    auto set = hwaccel::read_device_specs(*file);
    if (!set) return hwaccel::fail(set.error().kind, hwaccel::text::cat(operation_, ": device-specs: ", set.error().message));
    return set;
  }

  // The registry to plan on: the caller's, or the request's hypothetical
  // devices (names from the table or from `extra`).
  Result<hwaccel::AcceleratorRegistry> registry(const hwaccel_registry* given,
                                                const hwaccel::DeviceSpecSet& extra = hwaccel::DeviceSpecSet()) const {
    const std::string* devices = get("devices");
    if (given && devices)
      return hwaccel::fail(hwaccel::ErrorKind::invalid_input,
                           hwaccel::text::cat(operation_, ": give a registry or \"devices\", not both"));
    if (given) return given->registry;
    if (!devices)
      return hwaccel::fail(hwaccel::ErrorKind::invalid_input,
                           hwaccel::text::cat(operation_, ": registry is NULL and no \"devices\" were set"));
    auto r = hwaccel::hypothetical_registry(*devices, extra);
    if (!r) return hwaccel::fail(r.error().kind, hwaccel::text::cat(operation_, ": devices: ", r.error().message));
    return r;
  }

  const std::optional<hwaccel::Error>& error() const { return error_; }

 private:
  std::string message(std::string_view key, std::string_view value, std::string_view why) const {
    return hwaccel::text::cat(operation_, ": ", key, " '", hwaccel::text::excerpt(value, 80), "': ", why);
  }

  const hwaccel_request& request_;
  std::string_view operation_;
  std::optional<hwaccel::Error> error_;
};

Result<hwaccel::InferenceSettings> inference_settings(RequestReader& r) {
  hwaccel::InferenceSettings s;
  r.read("quant", s.quantization, [](std::string_view v) { return hwaccel::parse_quantization(v); });
  r.read("kv-dtype", s.kv_cache_type, [](std::string_view v) -> Result<hwaccel::QuantizationLevel> {
    auto q = hwaccel::parse_quantization(v);
    if (!q) return q;
    if (auto bits = hwaccel::kv_cache_bits(*q); !bits) return hwaccel::fail(bits.error());
    return q;
  });
  r.number("context", s.context, 1, std::uint64_t{1} << 24);
  r.number("batch", s.batch, 1, 65536);
  r.fraction("reserve", s.reserve_fraction);
  r.read("objective", s.objective, [](std::string_view v) -> Result<hwaccel::PlanObjective> {
    if (v == "throughput") return hwaccel::PlanObjective::throughput;
    if (v == "latency") return hwaccel::PlanObjective::latency;
    return hwaccel::fail(hwaccel::ErrorKind::invalid_input, "not throughput or latency");
  });
  r.read("formats", s.quantization_family, [](std::string_view v) -> Result<hwaccel::QuantizationFamily> {
    if (v == "hf") return hwaccel::QuantizationFamily::floating;
    if (v == "gguf") return hwaccel::QuantizationFamily::gguf;
    return hwaccel::fail(hwaccel::ErrorKind::invalid_input, "not hf or gguf");
  });
  r.boolean("offload", s.allow_cpu_offload);
  r.boolean("flash-attention", s.flash_attention);
  if (r.error()) return hwaccel::fail(*r.error());
  return s;
}

Result<hwaccel::TrainingSettings> training_settings(RequestReader& r) {
  hwaccel::TrainingSettings s;
  r.read("method", s.method, [](std::string_view v) { return hwaccel::parse_training_method(v); });
  r.read("optimizer", s.optimizer, [](std::string_view v) { return hwaccel::parse_optimizer(v); });
  r.read("precision", s.precision, [](std::string_view v) { return hwaccel::parse_training_precision(v); });
  r.read("zero", s.zero_stage, [](std::string_view v) { return hwaccel::parse_zero_stage(v); });
  r.read("offload", s.offload, [](std::string_view v) { return hwaccel::parse_offload(v); });
  r.read("recompute", s.recompute, [](std::string_view v) { return hwaccel::parse_recompute(v); });
  r.read("attention", s.attention, [](std::string_view v) { return hwaccel::parse_attention_kernel(v); });
  r.read("adapter", s.adapter, [](std::string_view v) { return hwaccel::parse_training_method(v); });
  r.read("lora-targets", s.lora_targets, [](std::string_view v) { return hwaccel::parse_lora_targets(v); });
  r.read("base-quant", s.base_quantization, [](std::string_view v) { return hwaccel::parse_quantization(v); });
  r.read("frozen-quant", s.frozen_quantization, [](std::string_view v) { return hwaccel::parse_quantization(v); });
  constexpr std::uint64_t max_u32 = 0xffffffffu;
  r.number("dp", s.data_parallel, 1, max_u32);
  r.number("tp", s.tensor_parallel, 1, max_u32);
  r.number("pp", s.pipeline_parallel, 1, max_u32);
  r.number("micro-batch", s.micro_batch, 1, std::uint64_t{1} << 32);
  r.number("seq", s.sequence, 1, std::uint64_t{1} << 24);
  std::uint32_t micro_batches = 0, lora_rank = 0, qlora_bits = 0, prefix_length = 0;
  r.number("micro-batches", micro_batches, 1, max_u32);
  r.number("lora-rank", lora_rank, 1, max_u32);
  r.number("qlora-bits", qlora_bits, 1, 16);
  r.number("prefix-length", prefix_length, 1, max_u32);
  r.number("prefix-projection", s.prefix_projection, 0, max_u32);
  if (micro_batches) s.micro_batches = micro_batches;
  if (lora_rank) s.lora_rank = lora_rank;
  if (qlora_bits) s.qlora_bits = qlora_bits;
  if (prefix_length) s.prefix_length = prefix_length;
  r.boolean("sequence-parallel", s.sequence_parallel);
  r.boolean("dropout", s.dropout);
  r.boolean("double-quant", s.double_quantization);
  r.fraction("reserve", s.reserve_fraction);
  if (r.error()) return hwaccel::fail(*r.error());
  if (auto v = s.validate(); !v) return hwaccel::fail(v.error());
  return s;
}

}  // namespace

extern "C" {

HWACCEL_API hwaccel_request* hwaccel_request_new(void) {
  try {
    return new hwaccel_request{};
  } catch (...) {
    return nullptr;
  }
}

HWACCEL_API void hwaccel_request_free(hwaccel_request* request) { delete request; }

HWACCEL_API hwaccel_status hwaccel_request_set(hwaccel_request* request, const char* key, const char* value,
                                               hwaccel_error** error) {
  return guarded(error, [&] {
    if (!request) return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, "hwaccel_request_set: request is NULL");
    if (!key) return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, "hwaccel_request_set: key is NULL");
    const std::string_view k(key);
    if (!listed(common_request_keys, k) && !listed(plan_request_keys, k) && !listed(train_request_keys, k))
      return report(error, HWACCEL_ERROR_INVALID_ARGUMENT,
                    hwaccel::text::cat("hwaccel_request_set: unknown key '", hwaccel::text::excerpt(k, 80),
                                       "' (include/hwaccel/hwaccel.h lists the keys)"));
    if (value) request->values.insert_or_assign(std::string(k), std::string(value));
    else request->values.erase(std::string(k));
    return HWACCEL_OK;
  });
}

HWACCEL_API hwaccel_status hwaccel_registry_hypothetical(const char* devices, hwaccel_registry** out,
                                                         hwaccel_error** error) {
  if (out) *out = nullptr;
  return guarded(error, [&] {
    if (!devices) return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, "hwaccel_registry_hypothetical: devices is NULL");
    if (!out) return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, "hwaccel_registry_hypothetical: out is NULL");
    auto r = hwaccel::hypothetical_registry(devices);
    if (!r) return report(error, r.error());
    *out = new hwaccel_registry{std::move(*r)};
    return HWACCEL_OK;
  });
}

HWACCEL_API hwaccel_status hwaccel_plan_json(const hwaccel_registry* registry, const hwaccel_request* request,
                                             uint32_t flags, char** out, size_t* length, hwaccel_error** error) {
  if (out) *out = nullptr;
  if (length) *length = 0;
  return guarded(error, [&] {
    if (!request) return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, "hwaccel_plan_json: request is NULL");
    if (!out) return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, "hwaccel_plan_json: out is NULL");
    if ((flags & ~HWACCEL_JSON_PRETTY) != 0)
      return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, "hwaccel_plan_json: unknown flag bits");
    for (const auto& [key, value] : request->values)
      if (listed(train_request_keys, key) && !listed(plan_request_keys, key))
        return report(error, HWACCEL_ERROR_INVALID_ARGUMENT,
                      hwaccel::text::cat("hwaccel_plan_json: '", key, "' is a training setting"));
    RequestReader reader(*request, "hwaccel_plan_json");
    auto settings = inference_settings(reader);
    if (!settings) return report(error, settings.error());
    auto model = reader.model();
    if (!model) return report(error, model.error());
    if (auto v = settings->validate(*model); !v) return report(error, v.error());
    const auto specs = reader.device_specs();
    if (!specs) return report(error, specs.error());
    if (!specs->empty()) settings->device_specs = &*specs;
    auto devices = reader.registry(registry, *specs);
    if (!devices) return report(error, devices.error());
    auto plan = hwaccel::plan_inference(*devices, *model, *settings);
    if (!plan) return report(error, plan.error());
    return return_json(hwaccel::to_json(*plan, (flags & HWACCEL_JSON_PRETTY) != 0), out, length);
  });
}

HWACCEL_API hwaccel_status hwaccel_train_json(const hwaccel_registry* registry, const hwaccel_request* request,
                                              uint32_t flags, char** out, size_t* length, hwaccel_error** error) {
  if (out) *out = nullptr;
  if (length) *length = 0;
  return guarded(error, [&] {
    if (!request) return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, "hwaccel_train_json: request is NULL");
    if (!out) return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, "hwaccel_train_json: out is NULL");
    if ((flags & ~HWACCEL_JSON_PRETTY) != 0)
      return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, "hwaccel_train_json: unknown flag bits");
    for (const auto& [key, value] : request->values)
      if (listed(plan_request_keys, key) && !listed(train_request_keys, key))
        return report(error, HWACCEL_ERROR_INVALID_ARGUMENT,
                      hwaccel::text::cat("hwaccel_train_json: '", key, "' is an inference-plan setting"));
    RequestReader reader(*request, "hwaccel_train_json");
    auto settings = training_settings(reader);
    if (!settings) return report(error, settings.error());
    auto model = reader.model();
    if (!model) return report(error, model.error());
    hwaccel::AuxiliaryModels auxiliary;
    if (const std::string* teacher = reader.get("teacher")) {
      auto m = reader.named_model("teacher", *teacher);
      if (!m) return report(error, m.error());
      auxiliary.teacher = std::move(*m);
    }
    if (const std::string* reward = reader.get("reward-model")) {
      auto m = reader.named_model("reward-model", *reward);
      if (!m) return report(error, m.error());
      auxiliary.reward = std::move(*m);
    }
    const auto specs = reader.device_specs();
    if (!specs) return report(error, specs.error());
    auto devices = reader.registry(registry, *specs);
    if (!devices) return report(error, devices.error());
    auto estimate = hwaccel::plan_training(*devices, *model, *settings, auxiliary);
    if (!estimate) return report(error, estimate.error());
    return return_json(hwaccel::to_json(*estimate, (flags & HWACCEL_JSON_PRETTY) != 0), out, length);
  });
}

}  // extern "C"

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
    if (options) watch.detect = options->builder.options();
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
