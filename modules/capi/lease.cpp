// The C API's leases: reserve() with a JSON request, the lease as JSON.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

import hwaccel;
import hwaccel.json_fields;

#include "capi_support.hpp"

using namespace hwaccel::capi;

struct hwaccel_lease {
  hwaccel::Lease lease;
};

namespace {

// The request's keys, checked: an unknown key is refused, not ignored.
hwaccel::Result<hwaccel::LeaseRequest> read_request(std::string_view json) {
  using hwaccel::fail;
  using hwaccel::ErrorKind;
  using Kind = hwaccel::json::Value::Kind;
  hwaccel::LeaseRequest r;
  if (json.empty()) return r;
  auto doc = hwaccel::json::Document::parse(json, "the lease request");
  if (!doc) return fail(ErrorKind::invalid_input, doc.error().message);
  const auto root = doc->root();
  if (root.kind() != Kind::object) return fail(ErrorKind::invalid_input, "the lease request is not a JSON object");
  const auto text = [](const hwaccel::json::Value& v, std::string_view key) -> hwaccel::Result<std::string> {
    if (v.kind() != Kind::string || v.string().size() > 4096)
      return fail(ErrorKind::invalid_input, hwaccel::text::cat("\"", key, "\" is not a string"));
    return std::string(v.string());
  };
  for (const auto& [key, value] : root.members()) {
    if (key == "count") {
      const auto n = value.whole();
      if (!n || *n < 1 || *n > 4096) return fail(ErrorKind::invalid_input, "\"count\" is not a whole number from 1 to 4096");
      r.count = static_cast<std::size_t>(*n);
    } else if (key == "device_ids") {
      if (value.kind() != Kind::array) return fail(ErrorKind::invalid_input, "\"device_ids\" is not an array of ids");
      for (const auto& id : value.elements()) {
        auto t = text(id, "device_ids");
        if (!t) return fail(t.error());
        r.device_ids.push_back(std::move(*t));
      }
    } else if (key == "min_free_memory") {
      if (value.kind() == Kind::string) r.min_free_memory_bytes = hwaccel::text::parse_memory_size(value.string());
      else r.min_free_memory_bytes = value.whole();
      if (!r.min_free_memory_bytes) return fail(ErrorKind::invalid_input, "\"min_free_memory\" is not a size (\"40G\") or bytes");
    } else if (key == "max_utilization") {
      const auto n = value.number();
      if (!n || !(*n >= 0 && *n <= 1)) return fail(ErrorKind::invalid_input, "\"max_utilization\" is not a number from 0 to 1");
      r.max_utilization = *n;
    } else if (key == "same_domain") {
      const auto b = value.boolean();
      if (!b) return fail(ErrorKind::invalid_input, "\"same_domain\" is not true or false");
      r.same_domain = *b;
    } else if (key == "wait_ms") {
      const auto n = value.whole();
      if (!n || *n > (std::uint64_t{1} << 40)) return fail(ErrorKind::invalid_input, "\"wait_ms\" is not a number of milliseconds");
      r.wait = std::chrono::milliseconds(static_cast<std::int64_t>(*n));
    } else if (key == "lease_dir" || key == "usage_db" || key == "quota_file" || key == "command") {
      auto t = text(value, key);
      if (!t) return fail(t.error());
      (key == "lease_dir" ? r.lease_dir : key == "usage_db" ? r.usage_db : key == "quota_file" ? r.quota_file : r.command) = std::move(*t);
    } else {
      return fail(ErrorKind::invalid_input,
                  hwaccel::text::cat("unknown key \"", hwaccel::text::excerpt(key, 40),
                                     "\" (count, device_ids, min_free_memory, max_utilization, same_domain, wait_ms, lease_dir, "
                                     "usage_db, quota_file, command)"));
    }
  }
  if (r.command.empty()) r.command = "a program through the C API";
  return r;
}

}  // namespace

extern "C" {

HWACCEL_API hwaccel_status hwaccel_reserve(const hwaccel_detect_options* options, const char* request_json, hwaccel_lease** out,
                                           hwaccel_error** error) {
  if (out) *out = nullptr;
  return guarded(error, [&] {
    if (!out) return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, "hwaccel_reserve: out is NULL");
    auto request = read_request(request_json ? std::string_view(request_json) : std::string_view());
    if (!request) return report(error, request.error());
    std::unique_ptr<hwaccel::System> system;
    if (options && !options->fixture_dir.empty()) {
      auto opened = hwaccel::open_fixture_folder(options->fixture_dir);
      if (!opened) return report(error, opened.error());
      system = std::move(*opened);
    } else {
      system = hwaccel::make_live_system();
    }
    const auto registry = detect_builder(options, {}).detect(*system);
    auto lease = hwaccel::reserve(registry, *system, *request);
    if (!lease) return report(error, lease.error());
    *out = new hwaccel_lease{std::move(*lease)};
    return HWACCEL_OK;
  });
}

HWACCEL_API hwaccel_status hwaccel_lease_json(const hwaccel_lease* lease, char** out, size_t* length, hwaccel_error** error) {
  if (out) *out = nullptr;
  if (length) *length = 0;
  return guarded(error, [&] {
    if (!lease || !out) return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, "hwaccel_lease_json: NULL argument");
    hwaccel::json::Writer w(false);
    w.begin_object().key("devices").begin_array();
    for (const auto& h : lease->lease.devices()) hwaccel::write_json(w, h);
    w.end_array().key("environment").begin_object();
    for (const auto& [name, value] : lease->lease.environment()) w.field(std::string_view(name), value);
    w.end_object().field("cleared", lease->lease.cleared_environment()).field("warnings", lease->lease.warnings()).end_object();
    return return_json(std::string(w.str()), out, length);
  });
}

HWACCEL_API void hwaccel_lease_free(hwaccel_lease* lease) { delete lease; }

}  // extern "C"
