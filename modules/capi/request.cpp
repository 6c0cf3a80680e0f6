// The C API's plan and training requests: keys set one by one, read through
// the library's settings tables (the CLI's and Python's: one reader, one
// error text), and the plan or estimate returned as JSON.
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

import hwaccel;

#include "capi_support.hpp"

using namespace hwaccel::capi;

namespace {

using hwaccel::Result;
using hwaccel::Setting;

// The keys a request may hold: every table a plan or a training estimate
// reads. Both read the planning inputs (model, params, devices,
// device-specs, nodes, fabric).
template <class Settings>
const char* table_name(std::span<const hwaccel::SettingKey<Settings>> keys, std::string_view key) {
  const auto* found = hwaccel::find_setting_key(keys, key);
  return found ? found->name.data() : nullptr;
}

// The table's spelling of `key` ("kv_dtype" is "kv-dtype"), or nullptr for
// a key no table has.
std::optional<std::string_view> canonical_key(std::string_view key) {
  for (const char* name : {table_name(hwaccel::planning_input_keys(), key), table_name(hwaccel::inference_setting_keys(), key),
                           table_name(hwaccel::training_setting_keys(), key), table_name(hwaccel::training_model_keys(), key),
                           table_name(hwaccel::recommend_setting_keys(), key)})
    if (name) return std::string_view(name);
  return std::nullopt;
}

bool plan_key(std::string_view key) {
  return hwaccel::find_setting_key(hwaccel::planning_input_keys(), key) ||
         hwaccel::find_setting_key(hwaccel::inference_setting_keys(), key);
}

// Training has no speed model: runtime profiles are not read.
bool train_key(std::string_view key) {
  return (hwaccel::find_setting_key(hwaccel::planning_input_keys(), key) && key != "runtime-profiles") ||
         hwaccel::find_setting_key(hwaccel::training_setting_keys(), key) ||
         hwaccel::find_setting_key(hwaccel::training_model_keys(), key);
}

bool recommend_key(std::string_view key) {
  return plan_key(key) || hwaccel::find_setting_key(hwaccel::recommend_setting_keys(), key);
}

bool specs_key(std::string_view key) { return key == "device-specs"; }

// What a key a call does not read is, for its error: the call it belongs to.
std::string_view kind_of_key(std::string_view key) {
  if (hwaccel::find_setting_key(hwaccel::training_setting_keys(), key) ||
      hwaccel::find_setting_key(hwaccel::training_model_keys(), key))
    return "a training setting";
  if (hwaccel::find_setting_key(hwaccel::inference_setting_keys(), key)) return "an inference-plan setting";
  if (hwaccel::find_setting_key(hwaccel::recommend_setting_keys(), key)) return "a recommendation setting";
  return "not read by this call";
}

std::vector<Setting> settings_of(const hwaccel_request& request) {
  std::vector<Setting> values;
  values.reserve(request.values.size());
  for (const auto& [key, value] : request.values) values.push_back(Setting{key, value});
  return values;
}

// A library error as the C API reports it: the operation named first.
hwaccel_status report_in(hwaccel_error** error, std::string_view operation, const hwaccel::Error& e) {
  return report(error, status_of(e.kind), hwaccel::text::cat(operation, ": ", e.message));
}

// The checks a request call starts with, in the order the header documents
// them: the request and the output pointer given, no unknown flag bits, and
// every key one the call reads (`accepts`). HWACCEL_OK lets the call go on.
hwaccel_status check_request_call(hwaccel_error** error, std::string_view operation, const hwaccel_request* request,
                                  char** out, uint32_t flags, bool (*accepts)(std::string_view)) {
  if (!request) return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, hwaccel::text::cat(operation, ": request is NULL"));
  if (!out) return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, hwaccel::text::cat(operation, ": out is NULL"));
  if ((flags & ~HWACCEL_JSON_PRETTY) != 0)
    return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, hwaccel::text::cat(operation, ": unknown flag bits"));
  for (const auto& [key, value] : request->values)
    if (!accepts(key))
      return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, hwaccel::text::cat(operation, ": '", key, "' is ", kind_of_key(key)));
  return HWACCEL_OK;
}

// What plan, train and recommend each read from a request: its inputs
// (devices, files, options), the model they name and the device specs.
struct RequestModel {
  hwaccel::PlanningInputs inputs;
  hwaccel::ModelDescription model;
  hwaccel::DeviceSpecSet specs;
  std::vector<hwaccel::RuntimeProfile> profiles;  // runtime-profiles; empty: the built-in ones
};

// `with_profiles`: the call has a speed model (plan, recommend), so the
// runtime-profile file (or $HWACCEL_RUNTIME_PROFILES) is read.
hwaccel::Result<RequestModel> request_model(std::span<const Setting> values, bool with_profiles) {
  auto inputs = hwaccel::read_planning_inputs(values);
  if (!inputs) return hwaccel::fail(inputs.error());
  auto model = inputs->load_model();
  if (!model) return hwaccel::fail(model.error());
  auto specs = inputs->load_device_specs();
  if (!specs) return hwaccel::fail(specs.error());
  std::vector<hwaccel::RuntimeProfile> profiles;
  if (with_profiles) {
    auto read = inputs->load_runtime_profiles();
    if (!read) return hwaccel::fail(read.error());
    profiles = std::move(*read);
  }
  return RequestModel{std::move(*inputs), std::move(*model), std::move(*specs), std::move(profiles)};
}

}  // namespace

extern "C" {

HWACCEL_API hwaccel_request* hwaccel_request_new(void) {
#if __cpp_exceptions
  try {
    return new hwaccel_request{};
  } catch (...) {
    return nullptr;
  }
#else
  return new hwaccel_request{};
#endif
}

HWACCEL_API void hwaccel_request_free(hwaccel_request* request) { delete request; }

HWACCEL_API hwaccel_status hwaccel_request_set(hwaccel_request* request, const char* key, const char* value,
                                               hwaccel_error** error) {
  return guarded(error, [&] {
    if (!request) return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, "hwaccel_request_set: request is NULL");
    if (!key) return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, "hwaccel_request_set: key is NULL");
    const auto name = canonical_key(key);
    if (!name)
      return report(error, HWACCEL_ERROR_INVALID_ARGUMENT,
                    hwaccel::text::cat("hwaccel_request_set: unknown key '", hwaccel::text::excerpt(key, 80),
                                       "' (include/hwaccel/hwaccel.h lists the keys)"));
    if (value) request->values.insert_or_assign(std::string(*name), std::string(value));
    else request->values.erase(std::string(*name));
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
    constexpr std::string_view operation = "hwaccel_plan_json";
    if (const auto checked = check_request_call(error, operation, request, out, flags, &plan_key); checked != HWACCEL_OK)
      return checked;
    const std::vector<Setting> values = settings_of(*request);
    auto settings = hwaccel::read_inference_settings(values);
    if (!settings) return report_in(error, operation, settings.error());
    auto read = request_model(values, true);
    if (!read) return report_in(error, operation, read.error());
    if (auto v = settings->validate(read->model); !v) return report_in(error, operation, v.error());
    if (!read->specs.empty()) settings->device_specs = &read->specs;
    settings->runtime_profiles = read->profiles;
    auto cluster = read->inputs.cluster(registry ? &registry->registry : nullptr, read->specs);
    if (!cluster) return report_in(error, operation, cluster.error());
    auto plan = hwaccel::plan_inference(*cluster, read->model, *settings);
    if (!plan) return report(error, plan.error());
    return return_json(hwaccel::to_json(*plan, (flags & HWACCEL_JSON_PRETTY) != 0), out, length);
  });
}

HWACCEL_API hwaccel_status hwaccel_train_json(const hwaccel_registry* registry, const hwaccel_request* request,
                                              uint32_t flags, char** out, size_t* length, hwaccel_error** error) {
  if (out) *out = nullptr;
  if (length) *length = 0;
  return guarded(error, [&] {
    constexpr std::string_view operation = "hwaccel_train_json";
    if (const auto checked = check_request_call(error, operation, request, out, flags, &train_key); checked != HWACCEL_OK)
      return checked;
    const std::vector<Setting> values = settings_of(*request);
    auto settings = hwaccel::read_training_settings(values);
    if (!settings) return report_in(error, operation, settings.error());
    auto names = hwaccel::read_training_models(values);
    if (!names) return report_in(error, operation, names.error());
    auto read = request_model(values, false);
    if (!read) return report_in(error, operation, read.error());
    auto auxiliary = names->load();
    if (!auxiliary) return report_in(error, operation, auxiliary.error());
    auto cluster = read->inputs.cluster(registry ? &registry->registry : nullptr, read->specs);
    if (!cluster) return report_in(error, operation, cluster.error());
    auto estimate = hwaccel::plan_training(*cluster, read->model, *settings, *auxiliary);
    if (!estimate) return report(error, estimate.error());
    return return_json(hwaccel::to_json(*estimate, (flags & HWACCEL_JSON_PRETTY) != 0), out, length);
  });
}

HWACCEL_API hwaccel_status hwaccel_recommend_json(const hwaccel_request* request, uint32_t flags, char** out, size_t* length,
                                                  hwaccel_error** error) {
  if (out) *out = nullptr;
  if (length) *length = 0;
  return guarded(error, [&] {
    constexpr std::string_view operation = "hwaccel_recommend_json";
    if (const auto checked = check_request_call(error, operation, request, out, flags, &recommend_key); checked != HWACCEL_OK)
      return checked;
    const std::vector<Setting> values = settings_of(*request);
    auto options = hwaccel::read_recommend_options(values);
    if (!options) return report_in(error, operation, options.error());
    auto read = request_model(values, true);
    if (!read) return report_in(error, operation, read.error());
    if (auto v = options->settings.validate(read->model); !v) return report_in(error, operation, v.error());
    if (!read->specs.empty()) options->settings.device_specs = &read->specs;
    options->settings.runtime_profiles = read->profiles;
    auto catalogue = options->load_catalogue(read->specs);
    if (!catalogue) return report_in(error, operation, catalogue.error());
    auto r = hwaccel::recommend_instances(read->model, *options, *catalogue);
    if (!r) return report(error, r.error());
    return return_json(hwaccel::to_json(*r, (flags & HWACCEL_JSON_PRETTY) != 0), out, length);
  });
}

HWACCEL_API hwaccel_status hwaccel_device_specs_json(const hwaccel_request* request, char** out, size_t* length,
                                                     hwaccel_error** error) {
  if (out) *out = nullptr;
  if (length) *length = 0;
  return guarded(error, [&] {
    constexpr std::string_view operation = "hwaccel_device_specs_json";
    if (const auto checked = check_request_call(error, operation, request, out, 0, &specs_key); checked != HWACCEL_OK)
      return checked;
    auto inputs = hwaccel::read_planning_inputs(settings_of(*request));
    if (!inputs) return report_in(error, operation, inputs.error());
    const auto specs = inputs->load_device_specs();
    if (!specs) return report_in(error, operation, specs.error());
    return return_json(hwaccel::device_specs_json(*specs), out, length);
  });
}

HWACCEL_API hwaccel_status hwaccel_models_json(char** out, size_t* length, hwaccel_error** error) {
  if (out) *out = nullptr;
  if (length) *length = 0;
  return guarded(error, [&] {
    if (!out) return report(error, HWACCEL_ERROR_INVALID_ARGUMENT, "hwaccel_models_json: out is NULL");
    return return_json(hwaccel::model_catalogue_json(), out, length);
  });
}

}  // extern "C"
