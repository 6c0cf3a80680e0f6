// The C API's registries: reading and writing their JSON, and the borrowed
// device and warning views with their accessors.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

import hwaccel;

#include "capi_support.hpp"

using namespace hwaccel::capi;

extern "C" {

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

HWACCEL_API hwaccel_status hwaccel_registry_from_text(const char* text, size_t length, hwaccel_registry** out,
                                                      hwaccel_error** error) {
  if (out) *out = nullptr;
  return guarded(error, [&] {
    if (!out) return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, "hwaccel_registry_from_text: out is NULL");
    if (!text) return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, "hwaccel_registry_from_text: text is NULL");
    auto parsed = hwaccel::registry_from_paste(std::string_view(text, length));
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
