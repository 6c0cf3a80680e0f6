// The C API's status names, error objects, version queries and the strings
// it hands out (include/hwaccel/hwaccel.h, "status and errors").
#include <cstdint>
#include <string>

import hwaccel;

#include "capi_support.hpp"

using namespace hwaccel::capi;

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
#if __cpp_exceptions
  try {
    static const std::string version(hwaccel::library_version());
    return version.c_str();
  } catch (...) {
    return "unknown";
  }
#else
  static const std::string version(hwaccel::library_version());
  return version.c_str();
#endif
}

HWACCEL_API uint32_t hwaccel_c_api_version(void) { return HWACCEL_C_API_VERSION; }

HWACCEL_API uint32_t hwaccel_schema_version(void) { return hwaccel::registry_schema_version; }

HWACCEL_API void hwaccel_string_free(char* string) { delete[] string; }

}  // extern "C"
