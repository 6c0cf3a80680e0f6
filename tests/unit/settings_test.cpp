// The settings reader (hwaccel.base) and the settings tables: every key of
// the inference and training tables, and the planning and detection keys
// with bounds, read through the C API as through the library's reader: the
// same keys accepted, the same bounds, the same error text for a bad value.
// tests/python/test_settings.py checks the Python package and the CLI
// against the same tables.
#include <gtest/gtest.h>

#include <hwaccel/hwaccel.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

import hwaccel;

namespace hwaccel {
namespace {

// ---- the reader itself ---------------------------------------------------------

struct Toy {
  std::uint64_t count = 1;
  double share = 0.5;
  bool on = false;
  std::string name = "a";
};

constexpr std::array toy_keys = {
    SettingKey<Toy>{"count", SettingType::whole, "1", 1, 10, "", "a count",
                    [](Toy& t, const SettingValue& v) -> Result<void> {
                      t.count = v.whole;
                      return {};
                    }},
    SettingKey<Toy>{"share", SettingType::fraction, "0.5", 0, 0.95, "", "a share",
                    [](Toy& t, const SettingValue& v) -> Result<void> {
                      t.share = v.fraction;
                      return {};
                    }},
    SettingKey<Toy>{"is-on", SettingType::boolean, "false", 0, 0, "", "a switch",
                    [](Toy& t, const SettingValue& v) -> Result<void> {
                      t.on = v.boolean;
                      return {};
                    }},
    SettingKey<Toy>{"name", SettingType::choice, "a", 0, 0, "TOY_NAME", "a or b",
                    [](Toy& t, const SettingValue& v) -> Result<void> {
                      if (v.text != "a" && v.text != "b") return fail(ErrorKind::invalid_input, "not a or b");
                      t.name = std::string(v.text);
                      return {};
                    }},
};

Result<Toy> read_toy(std::vector<Setting> values, const EnvironmentLookup& env = {},
                     BadEnvironment bad = BadEnvironment::fail) {
  Toy toy;
  auto notes = read_settings(toy, std::span<const SettingKey<Toy>>(toy_keys), values, env, bad);
  if (!notes) return fail(notes.error());
  if (!notes->empty()) return fail(ErrorKind::unsupported, notes->front());
  return toy;
}

TEST(SettingsReader, TypesBoundsAndTheErrorText) {
  const auto toy = read_toy({{"count", " 10 "}, {"share", "0.25"}, {"is_on", "yes"}, {"name", "b"}});
  ASSERT_TRUE(toy) << toy.error().message;
  EXPECT_EQ(toy->count, 10u);
  EXPECT_EQ(toy->share, 0.25);
  EXPECT_TRUE(toy->on) << "'_' stands for '-', as Python spells keyword arguments";
  EXPECT_EQ(toy->name, "b");
  const std::pair<Setting, std::string_view> bad[] = {
      {{"count", "11"}, "count '11': not a whole number from 1 to 10"},
      {{"count", "0"}, "count '0': not a whole number from 1 to 10"},
      {{"count", "-1"}, "count '-1': not a whole number from 1 to 10"},
      {{"count", "2.5"}, "count '2.5': not a whole number from 1 to 10"},
      {{"share", "0.96"}, "share '0.96': not a number from 0 to 0.95"},
      {{"share", "nan"}, "share 'nan': not a number from 0 to 0.95"},
      {{"is-on", "sometimes"}, "is-on 'sometimes': not true or false"},
      {{"name", "c"}, "name 'c': not a or b"},
  };
  for (const auto& [setting, message] : bad) {
    const auto r = read_toy({setting});
    ASSERT_FALSE(r) << setting.key;
    EXPECT_EQ(r.error().kind, ErrorKind::invalid_input);
    EXPECT_EQ(r.error().message, message);
  }
}

TEST(SettingsReader, TheLastValueWinsAndOtherTablesKeysAreLeft) {
  const auto toy = read_toy({{"count", "2"}, {"batch", "99999"}, {"count", "3"}});
  ASSERT_TRUE(toy) << toy.error().message;
  EXPECT_EQ(toy->count, 3u);
}

TEST(SettingsReader, EnvironmentVariablesWhenTheKeyIsNotGiven) {
  const EnvironmentLookup env = [](std::string_view name) -> std::optional<std::string> {
    if (name == "TOY_NAME") return std::string("b");
    return std::nullopt;
  };
  EXPECT_EQ(read_toy({}, env)->name, "b");
  EXPECT_EQ(read_toy({{"name", "a"}}, env)->name, "a") << "a value given wins over its variable";
  const EnvironmentLookup bad = [](std::string_view) -> std::optional<std::string> { return std::string("z"); };
  const auto refused = read_toy({}, bad);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message, "TOY_NAME 'z': not a or b");
  const auto ignored = read_toy({}, bad, BadEnvironment::ignore);
  ASSERT_FALSE(ignored);
  EXPECT_EQ(ignored.error().message, "TOY_NAME ignored: 'z': not a or b");
  const EnvironmentLookup blank = [](std::string_view) -> std::optional<std::string> { return std::string("  "); };
  EXPECT_EQ(read_toy({}, blank)->name, "a") << "a blank variable is not set";
}

// ---- the tables through the C API -------------------------------------------------

struct RequestFree {
  void operator()(hwaccel_request* r) const noexcept { hwaccel_request_free(r); }
};
struct ErrorFree {
  void operator()(hwaccel_error* e) const noexcept { hwaccel_error_free(e); }
};
struct StringFree {
  void operator()(char* s) const noexcept { hwaccel_string_free(s); }
};

using Values = std::map<std::string, std::string>;

// The C API's answer to a plan or training request: empty when it planned,
// else its error message.
std::optional<std::string> c_api(bool train, const Values& values) {
  std::unique_ptr<hwaccel_request, RequestFree> request(hwaccel_request_new());
  for (const auto& [key, value] : values) {
    hwaccel_error* raw = nullptr;
    if (hwaccel_request_set(request.get(), key.c_str(), value.c_str(), &raw) != HWACCEL_OK) {
      std::unique_ptr<hwaccel_error, ErrorFree> error(raw);
      return std::string(hwaccel_error_message(error.get()));
    }
  }
  char* json = nullptr;
  hwaccel_error* raw = nullptr;
  const hwaccel_status status = train ? hwaccel_train_json(nullptr, request.get(), 0, &json, nullptr, &raw)
                                      : hwaccel_plan_json(nullptr, request.get(), 0, &json, nullptr, &raw);
  std::unique_ptr<char, StringFree> out(json);
  std::unique_ptr<hwaccel_error, ErrorFree> error(raw);
  if (status == HWACCEL_OK) return std::nullopt;
  return std::string(hwaccel_error_message(error.get()));
}

// The library reader's answer for the same values.
std::optional<std::string> reader(bool train, const Values& values) {
  std::vector<Setting> settings;
  for (const auto& [key, value] : values) settings.push_back(Setting{key, value});
  if (auto inputs = read_planning_inputs(settings, {}); !inputs) return inputs.error().message;
  if (train) {
    if (auto s = read_training_settings(settings); !s) return s.error().message;
  } else if (auto s = read_inference_settings(settings); !s) {
    return s.error().message;
  }
  return std::nullopt;
}

// What a request needs besides the key tried: a model, devices, and for some
// keys the others they go with.
Values request_with(std::string_view key, const std::string& value) {
  Values v{{"params", "7B"}, {"devices", "1xH100-SXM-80GB"}};
  static const std::map<std::string, Values, std::less<>> companions = {
      {"input-len", {{"output-len", "16"}}},
      {"output-len", {{"input-len", "16"}}},
      {"sequence-parallel", {{"tp", "2"}, {"devices", "2xH100-SXM-80GB"}}},
      {"adapter", {{"method", "dpo"}}},
      {"qlora-bits", {{"method", "qlora"}}},
      {"base-quant", {{"method", "lora"}}},
      {"tp", {{"devices", "1xH100-SXM-80GB"}}},
      {"nodes", {{"devices", "1xH100-SXM-80GB"}}},
  };
  if (const auto it = companions.find(key); it != companions.end())
    for (const auto& [k, c] : it->second) v[k] = c;
  v[std::string(key)] = value;
  return v;
}

// A value the key accepts: its default, its lower bound, or one of its names.
std::string accepted_value(std::string_view key, SettingType type, std::string_view default_text, double low) {
  static const std::map<std::string, std::string, std::less<>> samples = {
      {"quant", "bf16"},  {"kv-dtype", "fp8_e4m3"}, {"formats", "gguf"},       {"runtime", "vllm"},
      {"adapter", "lora"}, {"lora-targets", "q,v"}, {"base-quant", "int8"}, {"frozen-quant", "fp8_e4m3"},
      {"qlora-bits", "4"}, {"fabric", "ib-400g"},   {"input-len", "16"},        {"output-len", "16"}};
  if (const auto it = samples.find(key); it != samples.end()) return it->second;
  if (type == SettingType::whole) return std::to_string(static_cast<std::uint64_t>(low));
  if (type == SettingType::fraction) return text::cat(low);
  if (type == SettingType::boolean) return default_text.empty() ? "true" : std::string(default_text);
  return std::string(default_text);
}

// Values each key refuses: past its bounds, or not one of its names.
std::vector<std::string> refused_values(SettingType type, double low, double high) {
  switch (type) {
    case SettingType::whole: {
      std::vector<std::string> out{std::to_string(static_cast<std::uint64_t>(high) + 1), "many"};
      if (low >= 1) out.push_back(std::to_string(static_cast<std::uint64_t>(low) - 1));
      return out;
    }
    case SettingType::fraction: return {text::cat(high + 0.01), "-0.01", "half"};
    case SettingType::boolean: return {"sometimes"};
    case SettingType::choice:
    case SettingType::text: return {"no-such-value"};
  }
  return {};
}

template <class Settings>
void check_table(bool train, std::span<const SettingKey<Settings>> keys, std::string_view operation,
                 std::initializer_list<std::string_view> skip = {}) {
  for (const auto& key : keys) {
    if (std::find(skip.begin(), skip.end(), key.name) != skip.end()) continue;
    SCOPED_TRACE(std::string(key.name));
    const std::string good = accepted_value(key.name, key.type, key.default_text, key.low);
    if (!good.empty()) {
      const Values values = request_with(key.name, good);
      EXPECT_EQ(reader(train, values), std::nullopt) << key.name << "=" << good;
      EXPECT_EQ(c_api(train, values), std::nullopt) << key.name << "=" << good;
    }
    for (const auto& bad : refused_values(key.type, key.low, key.high)) {
      // A choice or text key whose parser takes anything (a path, a name
      // read later) has no refused value here.
      if ((key.type == SettingType::text || key.type == SettingType::choice) && reader(train, request_with(key.name, bad)) == std::nullopt)
        continue;
      const Values values = request_with(key.name, bad);
      const auto expected = reader(train, values);
      ASSERT_TRUE(expected) << key.name << "=" << bad << " was accepted";
      EXPECT_EQ(expected->rfind(text::cat(key.name, " '", bad, "': "), 0), 0u) << *expected;
      EXPECT_EQ(c_api(train, values), text::cat(operation, ": ", *expected));
    }
  }
}

TEST(SettingsTables, TheCApiReadsEveryInferenceKeyAsTheLibraryDoes) {
  check_table(false, inference_setting_keys(), "hwaccel_plan_json");
}

TEST(SettingsTables, TheCApiReadsEveryTrainingKeyAsTheLibraryDoes) {
  check_table(true, training_setting_keys(), "hwaccel_train_json");
}

TEST(SettingsTables, TheCApiReadsThePlanningInputsAsTheLibraryDoes) {
  // model, params and devices are what request_with fills; device-specs is
  // a file read later (CApiPlan.DeviceSpecFilesNameDevicesTheTableLacks).
  check_table(false, planning_input_keys(), "hwaccel_plan_json", {"model", "params", "devices", "device-specs"});
  check_table(true, planning_input_keys(), "hwaccel_train_json", {"model", "params", "devices", "device-specs"});
}

TEST(SettingsTables, BoundsComeFromTheLibrarysLimits) {
  const auto bound = [](auto keys, std::string_view name) {
    const auto* key = find_setting_key(keys, name);
    EXPECT_NE(key, nullptr) << name;
    return key ? key->high : 0.0;
  };
  EXPECT_EQ(bound(inference_setting_keys(), "batch"), max_plan_batch);
  EXPECT_EQ(bound(inference_setting_keys(), "context"), static_cast<double>(max_plan_context));
  EXPECT_EQ(bound(training_setting_keys(), "micro-batch"), static_cast<double>(max_micro_batch));
  EXPECT_EQ(bound(training_setting_keys(), "dp"), max_parallel_degree);
  EXPECT_EQ(bound(training_setting_keys(), "lora-rank"), max_lora_rank);
  EXPECT_EQ(bound(planning_input_keys(), "nodes"), max_cluster_nodes);
  EXPECT_EQ(bound(detect_setting_keys(), "timeout-ms"), static_cast<double>(max_tool_timeout.count()));
  EXPECT_EQ(bound(placement_setting_keys(), "exact-max"), static_cast<double>(max_exact_placement));
  EXPECT_EQ(bound(scan_setting_keys(), "deadline-ms"), static_cast<double>(max_node_deadline.count()));
  EXPECT_EQ(max_micro_batch, max_plan_batch);
}

TEST(SettingsTables, EnvironmentVariablesAreTheTablesOwn) {
  const auto env = [](auto keys, std::string_view name) {
    const auto* key = find_setting_key(keys, name);
    return key ? std::string(key->env) : std::string("(no key)");
  };
  EXPECT_EQ(env(detect_setting_keys(), "backends"), "HWACCEL_BACKENDS");
  EXPECT_EQ(env(detect_setting_keys(), "log-level"), "HWACCEL_LOG");
  EXPECT_EQ(env(planning_input_keys(), "device-specs"), "HWACCEL_DEVICE_SPECS");
  EXPECT_EQ(env(recommend_setting_keys(), "catalogue"), "HWACCEL_INSTANCE_CATALOGUE");
}

TEST(SettingsTables, DetectionSettingsThroughTheCApiSayWhatTheReaderSays) {
  struct OptionsFree {
    void operator()(hwaccel_detect_options* o) const noexcept { hwaccel_detect_options_free(o); }
  };
  std::unique_ptr<hwaccel_detect_options, OptionsFree> options(hwaccel_detect_options_new());
  for (const std::uint32_t timeout : {0u, 600'001u}) {
    hwaccel_error* raw = nullptr;
    EXPECT_EQ(hwaccel_detect_options_set_tool_timeout_ms(options.get(), timeout, &raw), HWACCEL_ERROR_INVALID_ARGUMENT);
    std::unique_ptr<hwaccel_error, ErrorFree> error(raw);
    const std::vector<Setting> values{Setting{"timeout-ms", std::to_string(timeout)}};
    EXPECT_EQ(std::string(hwaccel_error_message(error.get())), read_detect_settings(values, {}).error().message);
  }
  hwaccel_error* raw = nullptr;
  EXPECT_EQ(hwaccel_detect_options_set_backends(options.get(), "cpu,warp", &raw), HWACCEL_ERROR_INVALID_ARGUMENT);
  std::unique_ptr<hwaccel_error, ErrorFree> error(raw);
  const std::vector<Setting> values{Setting{"backends", "cpu,warp"}};
  EXPECT_EQ(std::string(hwaccel_error_message(error.get())), read_detect_settings(values, {}).error().message);
}

TEST(SettingsTables, ABadBackendsVariableIsAWarningOfTheLibrarysDetection) {
  const EnvironmentLookup env = [](std::string_view name) -> std::optional<std::string> {
    if (name == "HWACCEL_BACKENDS") return std::string("cpu,warp");
    return std::nullopt;
  };
  const auto lenient = read_detect_settings({}, env, BadEnvironment::ignore);
  ASSERT_TRUE(lenient);
  ASSERT_EQ(lenient->warnings.size(), 1u);
  EXPECT_NE(lenient->warnings[0].message.find("HWACCEL_BACKENDS ignored: 'cpu,warp'"), std::string::npos);
  EXPECT_TRUE(lenient->backends.all()) << "every backend, as without the variable";
  const auto strict = read_detect_settings({}, env, BadEnvironment::fail);
  ASSERT_FALSE(strict);
  EXPECT_EQ(strict.error().message.rfind("HWACCEL_BACKENDS 'cpu,warp': ", 0), 0u) << strict.error().message;
}

}  // namespace
}  // namespace hwaccel
