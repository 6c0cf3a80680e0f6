// The C API's plan and training requests: keys set one by one, read into the
// library's settings, and the plan or estimate returned as JSON.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

import hwaccel;

#include "capi_support.hpp"

using namespace hwaccel::capi;

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
