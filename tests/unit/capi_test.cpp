// The C API (include/hwaccel/hwaccel.h): every accessor, the error objects,
// detection from fixtures, JSON both ways, and NULL handling.
#include <gtest/gtest.h>

#include <hwaccel/hwaccel.h>

#include <cstdint>
#include <cstdlib>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../test_support.hpp"

import hwaccel;

namespace {

using hwaccel::testing::FixtureBuilder;

struct RegistryFree {
  void operator()(hwaccel_registry* r) const noexcept { hwaccel_registry_free(r); }
};
struct OptionsFree {
  void operator()(hwaccel_detect_options* o) const noexcept { hwaccel_detect_options_free(o); }
};
struct ErrorFree {
  void operator()(hwaccel_error* e) const noexcept { hwaccel_error_free(e); }
};
struct StringFree {
  void operator()(char* s) const noexcept { hwaccel_string_free(s); }
};
using RegistryPtr = std::unique_ptr<hwaccel_registry, RegistryFree>;
using OptionsPtr = std::unique_ptr<hwaccel_detect_options, OptionsFree>;
using ErrorPtr = std::unique_ptr<hwaccel_error, ErrorFree>;
using StringPtr = std::unique_ptr<char, StringFree>;

// A registry with a fully described GPU, a CPU with little known, a hidden
// GPU and two warnings, as the C API sees it after a JSON round trip.
hwaccel::AcceleratorRegistry sample_registry() {
  using namespace hwaccel;
  Inventory inv;
  DeviceProfile cpu;
  cpu.id = "cpu:0";
  cpu.name = "AMD EPYC 9654 96-Core Processor";
  inv.devices.push_back(cpu);
  DeviceProfile gpu;
  gpu.id = "cuda:0";
  gpu.backend = Backend::cuda;
  gpu.family = Family::gpu;
  gpu.name = "NVIDIA H100 80GB HBM3";
  gpu.memory_bytes = 85'520'809'984;
  gpu.memory_free_bytes = 84'952'547'328;
  gpu.pci_bus_id = "0000:18:00.0";
  gpu.numa_node = 0;
  gpu.compute_capability = "9.0";
  gpu.driver_version = "550.54.15";
  gpu.runtime_index = 0;
  inv.devices.push_back(gpu);
  DeviceProfile hidden = gpu;
  hidden.id = "cuda:1";
  hidden.index = 1;
  hidden.pci_bus_id = "0000:2a:00.0";
  hidden.numa_node = 1;
  hidden.visible = false;
  hidden.runtime_index.reset();
  hidden.available = false;
  inv.devices.push_back(hidden);
  inv.warnings.push_back(Warning{"cuda", WarningKind::tool_missing, "nvidia-smi is not on PATH"});
  inv.warnings.push_back(Warning{"environment", WarningKind::parse_error, "/proc/self/cgroup: line 3 has no ':'"});
  inv.timings.push_back(BackendTiming{"cpu", std::chrono::microseconds(120)});
  return AcceleratorRegistry(inv);
}

RegistryPtr c_registry_from(const hwaccel::AcceleratorRegistry& registry) {
  const std::string json = hwaccel::to_json(registry);
  hwaccel_registry* out = nullptr;
  hwaccel_error* error = nullptr;
  EXPECT_EQ(hwaccel_registry_from_json(json.data(), json.size(), &out, &error), HWACCEL_OK)
      << (error ? hwaccel_error_message(error) : "");
  hwaccel_error_free(error);
  return RegistryPtr(out);
}

std::string str(const char* s) { return s ? s : "(null)"; }

TEST(CApi, VersionsMatchTheLibrary) {
  EXPECT_EQ(str(hwaccel_version()), std::string(hwaccel::library_version()));
  EXPECT_EQ(hwaccel_c_api_version(), HWACCEL_C_API_VERSION);
  EXPECT_EQ(hwaccel_schema_version(), hwaccel::registry_schema_version);
}

TEST(CApi, DeviceAccessorsReportEveryFieldAndAbsenceAsAbsence) {
  const auto registry = c_registry_from(sample_registry());
  ASSERT_TRUE(registry);
  ASSERT_EQ(hwaccel_registry_device_count(registry.get()), 3u);
  EXPECT_TRUE(hwaccel_registry_has_accelerator(registry.get()));
  EXPECT_EQ(hwaccel_registry_schema_version(registry.get()), hwaccel::registry_schema_version);

  const hwaccel_device* gpu = hwaccel_registry_device(registry.get(), 1);
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(hwaccel_registry_find_device(registry.get(), "cuda:0"), gpu);
  EXPECT_EQ(str(hwaccel_device_id(gpu)), "cuda:0");
  EXPECT_EQ(str(hwaccel_device_backend(gpu)), "cuda");
  EXPECT_EQ(str(hwaccel_device_family(gpu)), "gpu");
  EXPECT_EQ(hwaccel_device_index(gpu), 0u);
  EXPECT_EQ(str(hwaccel_device_name(gpu)), "NVIDIA H100 80GB HBM3");
  std::uint64_t bytes = 0;
  ASSERT_TRUE(hwaccel_device_memory_bytes(gpu, &bytes));
  EXPECT_EQ(bytes, 85'520'809'984u);
  ASSERT_TRUE(hwaccel_device_memory_free_bytes(gpu, &bytes));
  EXPECT_EQ(bytes, 84'952'547'328u);
  EXPECT_EQ(str(hwaccel_device_pci_bus_id(gpu)), "0000:18:00.0");
  std::int32_t numa = -1;
  ASSERT_TRUE(hwaccel_device_numa_node(gpu, &numa));
  EXPECT_EQ(numa, 0);
  EXPECT_EQ(str(hwaccel_device_compute_capability(gpu)), "9.0");
  EXPECT_EQ(str(hwaccel_device_driver_version(gpu)), "550.54.15");
  EXPECT_TRUE(hwaccel_device_visible(gpu));
  EXPECT_TRUE(hwaccel_device_available(gpu));
  std::uint32_t runtime = 99;
  ASSERT_TRUE(hwaccel_device_runtime_index(gpu, &runtime));
  EXPECT_EQ(runtime, 0u);

  const hwaccel_device* hidden = hwaccel_registry_find_device(registry.get(), "cuda:1");
  ASSERT_EQ(hidden, hwaccel_registry_device(registry.get(), 2));
  EXPECT_FALSE(hwaccel_device_visible(hidden));
  EXPECT_FALSE(hwaccel_device_available(hidden));
  EXPECT_EQ(hwaccel_device_index(hidden), 1u);
  ASSERT_TRUE(hwaccel_device_numa_node(hidden, &numa));
  EXPECT_EQ(numa, 1);
  runtime = 99;
  EXPECT_FALSE(hwaccel_device_runtime_index(hidden, &runtime));
  EXPECT_EQ(runtime, 99u);

  // Unknown values are absent: NULL strings, false with *out untouched.
  const hwaccel_device* cpu = hwaccel_registry_device(registry.get(), 0);
  EXPECT_EQ(str(hwaccel_device_id(cpu)), "cpu:0");
  EXPECT_EQ(str(hwaccel_device_family(cpu)), "cpu");
  bytes = 7;
  EXPECT_FALSE(hwaccel_device_memory_bytes(cpu, &bytes));
  EXPECT_FALSE(hwaccel_device_memory_free_bytes(cpu, &bytes));
  EXPECT_EQ(bytes, 7u);
  EXPECT_EQ(hwaccel_device_pci_bus_id(cpu), nullptr);
  EXPECT_FALSE(hwaccel_device_numa_node(cpu, &numa));
  EXPECT_EQ(hwaccel_device_compute_capability(cpu), nullptr);
  EXPECT_EQ(hwaccel_device_driver_version(cpu), nullptr);
  // A NULL out-pointer is refused, not written through.
  EXPECT_FALSE(hwaccel_device_memory_bytes(gpu, nullptr));

  EXPECT_EQ(hwaccel_registry_device(registry.get(), 3), nullptr);
  EXPECT_EQ(hwaccel_registry_find_device(registry.get(), "cuda:7"), nullptr);
  EXPECT_EQ(hwaccel_registry_find_device(registry.get(), nullptr), nullptr);
}

TEST(CApi, WarningsKeepBackendKindAndMessage) {
  const auto registry = c_registry_from(sample_registry());
  ASSERT_EQ(hwaccel_registry_warning_count(registry.get()), 2u);
  const hwaccel_warning* first = hwaccel_registry_warning(registry.get(), 0);
  EXPECT_EQ(str(hwaccel_warning_backend(first)), "cuda");
  EXPECT_EQ(str(hwaccel_warning_kind(first)), "tool_missing");
  EXPECT_EQ(str(hwaccel_warning_message(first)), "nvidia-smi is not on PATH");
  const hwaccel_warning* second = hwaccel_registry_warning(registry.get(), 1);
  EXPECT_EQ(str(hwaccel_warning_backend(second)), "environment");
  EXPECT_EQ(str(hwaccel_warning_kind(second)), "parse_error");
  EXPECT_EQ(hwaccel_registry_warning(registry.get(), 2), nullptr);
}

TEST(CApi, JsonFlagsSelectPrettinessAndTimings) {
  const hwaccel::AcceleratorRegistry source = sample_registry();
  const auto registry = c_registry_from(source);
  struct Case {
    std::uint32_t flags;
    hwaccel::JsonOptions options;
  };
  for (const Case& c : {Case{0, {.pretty = false, .include_timings = true}},
                        Case{HWACCEL_JSON_PRETTY, {.pretty = true, .include_timings = true}},
                        Case{HWACCEL_JSON_NO_TIMINGS, {.pretty = false, .include_timings = false}},
                        Case{HWACCEL_JSON_PRETTY | HWACCEL_JSON_NO_TIMINGS, {.pretty = true, .include_timings = false}}}) {
    char* raw = nullptr;
    std::size_t length = 0;
    ASSERT_EQ(hwaccel_registry_to_json(registry.get(), c.flags, &raw, &length, nullptr), HWACCEL_OK);
    const StringPtr json(raw);
    EXPECT_EQ(std::string(json.get(), length), hwaccel::to_json(source, c.options)) << "flags " << c.flags;
    EXPECT_EQ(json.get()[length], '\0');
  }
  char* raw = reinterpret_cast<char*>(0x1);
  hwaccel_error* error = nullptr;
  EXPECT_EQ(hwaccel_registry_to_json(registry.get(), 8, &raw, nullptr, &error), HWACCEL_ERROR_INVALID_ARGUMENT);
  const ErrorPtr owned(error);
  EXPECT_EQ(raw, nullptr);
  EXPECT_EQ(str(hwaccel_error_message(error)), "hwaccel_registry_to_json: unknown flag bits 8");
}

// A machine of one CPU and 16 GiB; the folder lives as long as `fixture`.
std::string write_one_cpu_machine(FixtureBuilder& fixture) {
  fixture.file("/proc/cpuinfo", "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Test CPU\n\n")
      .file("/proc/meminfo", "MemTotal:       16384 kB\nMemAvailable:    8192 kB\n");
  return fixture.write();
}

TEST(CApi, DetectsFromAFixtureWithTheChosenBackends) {
  FixtureBuilder fixture;
  const std::string dir = write_one_cpu_machine(fixture);

  const OptionsPtr options(hwaccel_detect_options_new());
  ASSERT_TRUE(options);
  ASSERT_EQ(hwaccel_detect_options_set_fixture(options.get(), dir.c_str(), nullptr), HWACCEL_OK);
  ASSERT_EQ(hwaccel_detect_options_set_backends(options.get(), "cpu", nullptr), HWACCEL_OK);
  ASSERT_EQ(hwaccel_detect_options_set_tool_timeout_ms(options.get(), 1000, nullptr), HWACCEL_OK);
  ASSERT_EQ(hwaccel_detect_options_set_system_probes(options.get(), false, nullptr), HWACCEL_OK);
  hwaccel_registry* raw = nullptr;
  hwaccel_error* error = nullptr;
  ASSERT_EQ(hwaccel_detect(options.get(), &raw, &error), HWACCEL_OK) << str(hwaccel_error_message(error));
  const RegistryPtr registry(raw);
  EXPECT_EQ(error, nullptr);

  // The C API reports exactly what the C++ API detects from the same fixture.
  auto system = hwaccel::FixtureSystem::open(dir);
  ASSERT_TRUE(system);
  hwaccel::DetectBuilder builder;
  ASSERT_TRUE(builder.select("cpu"));
  builder.system_probes(false);
  const auto expected = builder.detect(**system);
  char* json = nullptr;
  ASSERT_EQ(hwaccel_registry_to_json(registry.get(), HWACCEL_JSON_NO_TIMINGS, &json, nullptr, nullptr), HWACCEL_OK);
  const StringPtr owned_json(json);
  EXPECT_EQ(std::string(json), hwaccel::to_json(expected, {.include_timings = false}));
  ASSERT_EQ(hwaccel_registry_device_count(registry.get()), 1u);
  EXPECT_EQ(str(hwaccel_device_name(hwaccel_registry_device(registry.get(), 0))), "Test CPU");
  EXPECT_FALSE(hwaccel_registry_has_accelerator(registry.get()));
}

TEST(CApi, ChoosingNoBackendDetectsNothing) {
  FixtureBuilder fixture;
  fixture.file("/proc/cpuinfo", "processor\t: 0\nmodel name\t: Test CPU\n\n");
  const std::string dir = fixture.write();
  const OptionsPtr options(hwaccel_detect_options_new());
  ASSERT_EQ(hwaccel_detect_options_set_fixture(options.get(), dir.c_str(), nullptr), HWACCEL_OK);
  ASSERT_EQ(hwaccel_detect_options_set_backends(options.get(), "", nullptr), HWACCEL_OK);
  hwaccel_registry* raw = nullptr;
  ASSERT_EQ(hwaccel_detect(options.get(), &raw, nullptr), HWACCEL_OK);
  const RegistryPtr registry(raw);
  EXPECT_EQ(hwaccel_registry_device_count(registry.get()), 0u);
}

TEST(CApi, ErrorsCarryStatusAndMessage) {
  const OptionsPtr options(hwaccel_detect_options_new());
  hwaccel_error* error = nullptr;
  EXPECT_EQ(hwaccel_detect_options_set_backends(options.get(), "cpu,nvidia", &error), HWACCEL_ERROR_INVALID_ARGUMENT);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(hwaccel_error_status(error), HWACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(str(hwaccel_error_message(error)).find("nvidia"), std::string::npos) << hwaccel_error_message(error);
  hwaccel_error_free(error);

  error = nullptr;
  EXPECT_EQ(hwaccel_detect_options_set_tool_timeout_ms(options.get(), 600'001, &error), HWACCEL_ERROR_INVALID_ARGUMENT);
  // The detection settings table's text, as the CLI and Python give it.
  EXPECT_EQ(str(hwaccel_error_message(error)), "timeout-ms '600001': not a whole number from 1 to 600000");
  hwaccel_error_free(error);

  // A missing fixture folder: the status of the library's error kind, the path in the message.
  hwaccel::testing::TempDir tmp;
  const std::string missing = (tmp.path() / "no-such-fixture").string();
  ASSERT_EQ(hwaccel_detect_options_set_fixture(options.get(), missing.c_str(), nullptr), HWACCEL_OK);
  hwaccel_registry* raw = reinterpret_cast<hwaccel_registry*>(0x1);
  error = nullptr;
  EXPECT_EQ(hwaccel_detect(options.get(), &raw, &error), HWACCEL_ERROR_NOT_FOUND);
  EXPECT_EQ(raw, nullptr);
  ASSERT_NE(error, nullptr);
  EXPECT_NE(str(hwaccel_error_message(error)).find(missing), std::string::npos) << hwaccel_error_message(error);
  hwaccel_error_free(error);

  // The error out-param is optional.
  EXPECT_EQ(hwaccel_detect(options.get(), &raw, nullptr), HWACCEL_ERROR_NOT_FOUND);

  const std::string_view not_json = "{\"schema_version\": 1, \"devices\": [";
  error = nullptr;
  EXPECT_EQ(hwaccel_registry_from_json(not_json.data(), not_json.size(), &raw, &error), HWACCEL_ERROR_PARSE);
  EXPECT_EQ(raw, nullptr);
  EXPECT_EQ(hwaccel_error_status(error), HWACCEL_ERROR_PARSE);
  hwaccel_error_free(error);

  const std::string_view bad_field = R"({"schema_version": 1, "devices": [{"id": "x:0", "backend": "warp"}]})";
  error = nullptr;
  EXPECT_EQ(hwaccel_registry_from_json(bad_field.data(), bad_field.size(), &raw, &error), HWACCEL_ERROR_PARSE);
  EXPECT_NE(str(hwaccel_error_message(error)).find("devices[0].backend"), std::string::npos)
      << hwaccel_error_message(error);
  hwaccel_error_free(error);
}

TEST(CApi, EveryFunctionAcceptsNull) {
  EXPECT_EQ(hwaccel_registry_device_count(nullptr), 0u);
  EXPECT_EQ(hwaccel_registry_device(nullptr, 0), nullptr);
  EXPECT_EQ(hwaccel_registry_find_device(nullptr, "cpu:0"), nullptr);
  EXPECT_EQ(hwaccel_registry_warning_count(nullptr), 0u);
  EXPECT_EQ(hwaccel_registry_warning(nullptr, 0), nullptr);
  EXPECT_EQ(hwaccel_registry_schema_version(nullptr), 0u);
  EXPECT_FALSE(hwaccel_registry_has_accelerator(nullptr));
  std::uint64_t u64 = 5;
  std::int32_t i32 = 5;
  std::uint32_t u32 = 5;
  EXPECT_EQ(hwaccel_device_id(nullptr), nullptr);
  EXPECT_EQ(hwaccel_device_backend(nullptr), nullptr);
  EXPECT_EQ(hwaccel_device_family(nullptr), nullptr);
  EXPECT_EQ(hwaccel_device_index(nullptr), 0u);
  EXPECT_EQ(hwaccel_device_name(nullptr), nullptr);
  EXPECT_FALSE(hwaccel_device_memory_bytes(nullptr, &u64));
  EXPECT_FALSE(hwaccel_device_memory_free_bytes(nullptr, &u64));
  EXPECT_EQ(hwaccel_device_pci_bus_id(nullptr), nullptr);
  EXPECT_FALSE(hwaccel_device_numa_node(nullptr, &i32));
  EXPECT_EQ(hwaccel_device_compute_capability(nullptr), nullptr);
  EXPECT_EQ(hwaccel_device_driver_version(nullptr), nullptr);
  EXPECT_FALSE(hwaccel_device_visible(nullptr));
  EXPECT_FALSE(hwaccel_device_available(nullptr));
  EXPECT_FALSE(hwaccel_device_runtime_index(nullptr, &u32));
  EXPECT_EQ(u64, 5u);
  EXPECT_EQ(i32, 5);
  EXPECT_EQ(u32, 5u);
  EXPECT_EQ(hwaccel_warning_backend(nullptr), nullptr);
  EXPECT_EQ(hwaccel_warning_kind(nullptr), nullptr);
  EXPECT_EQ(hwaccel_warning_message(nullptr), nullptr);
  EXPECT_EQ(hwaccel_error_status(nullptr), HWACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hwaccel_error_message(nullptr), nullptr);

  hwaccel_error* error = nullptr;
  EXPECT_EQ(hwaccel_detect(nullptr, nullptr, &error), HWACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(str(hwaccel_error_message(error)), "hwaccel_detect: out is NULL");
  hwaccel_error_free(error);
  EXPECT_EQ(hwaccel_registry_from_json(nullptr, 3, nullptr, nullptr), HWACCEL_ERROR_INVALID_ARGUMENT);
  char* json = nullptr;
  EXPECT_EQ(hwaccel_registry_to_json(nullptr, 0, &json, nullptr, nullptr), HWACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hwaccel_detect_options_set_backends(nullptr, "cpu", nullptr), HWACCEL_ERROR_INVALID_ARGUMENT);
  const OptionsPtr options(hwaccel_detect_options_new());
  EXPECT_EQ(hwaccel_detect_options_set_backends(options.get(), nullptr, nullptr), HWACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hwaccel_detect_options_set_fixture(nullptr, "x", nullptr), HWACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hwaccel_detect_options_set_fixture(options.get(), nullptr, nullptr), HWACCEL_OK);  // back to live
  EXPECT_EQ(hwaccel_detect_options_set_tool_timeout_ms(nullptr, 10, nullptr), HWACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hwaccel_detect_options_set_system_probes(nullptr, true, nullptr), HWACCEL_ERROR_INVALID_ARGUMENT);

  hwaccel_registry_free(nullptr);
  hwaccel_detect_options_free(nullptr);
  hwaccel_error_free(nullptr);
  hwaccel_string_free(nullptr);
}

TEST(CApi, StatusNamesAreStable) {
  EXPECT_EQ(str(hwaccel_status_name(HWACCEL_OK)), "ok");
  EXPECT_EQ(str(hwaccel_status_name(HWACCEL_ERROR_INVALID_ARGUMENT)), "invalid_argument");
  EXPECT_EQ(str(hwaccel_status_name(HWACCEL_ERROR_NOT_FOUND)), "not_found");
  EXPECT_EQ(str(hwaccel_status_name(HWACCEL_ERROR_PARSE)), "parse_error");
  EXPECT_EQ(str(hwaccel_status_name(HWACCEL_ERROR_INTERNAL)), "internal");
  // A value a later version may add (C callers can pass any int): defined
  // behaviour, not a load of an out-of-range enum (UBSan checks that).
  EXPECT_EQ(str(hwaccel_status_name(static_cast<hwaccel_status>(999))), "unknown");
  EXPECT_EQ(str(hwaccel_status_name(HWACCEL_STATUS_MAX_ENUM)), "unknown");
}

}  // namespace

namespace {

struct RequestFree {
  void operator()(hwaccel_request* r) const noexcept { hwaccel_request_free(r); }
};
using RequestPtr = std::unique_ptr<hwaccel_request, RequestFree>;

RequestPtr request(const std::vector<std::pair<const char*, const char*>>& values) {
  RequestPtr r(hwaccel_request_new());
  for (const auto& [key, value] : values) EXPECT_EQ(hwaccel_request_set(r.get(), key, value, nullptr), HWACCEL_OK) << key;
  return r;
}

// The status and message of a failed hwaccel_plan_json or hwaccel_train_json.
std::pair<hwaccel_status, std::string> failure(bool train, const hwaccel_registry* registry, const hwaccel_request* r) {
  char* json = reinterpret_cast<char*>(1);
  hwaccel_error* raw = nullptr;
  const hwaccel_status status = train ? hwaccel_train_json(registry, r, 0, &json, nullptr, &raw)
                                      : hwaccel_plan_json(registry, r, 0, &json, nullptr, &raw);
  ErrorPtr error(raw);
  EXPECT_EQ(json, nullptr);
  return {status, error ? hwaccel_error_message(error.get()) : ""};
}

TEST(CApiPlan, PlanMatchesTheLibrary) {
  const auto r = request({{"model", "llama-3.1-8b"}, {"devices", "2xRTX-4090"}, {"context", "16384"}, {"batch", "4"}});
  char* raw = nullptr;
  size_t length = 0;
  ASSERT_EQ(hwaccel_plan_json(nullptr, r.get(), HWACCEL_JSON_PRETTY, &raw, &length, nullptr), HWACCEL_OK);
  StringPtr json(raw);
  hwaccel::InferenceSettings settings;
  settings.context = 16384;
  settings.batch = 4;
  const auto expected = hwaccel::plan_inference(hwaccel::hypothetical_registry("2xRTX-4090").value(),
                                                hwaccel::catalogue_model("llama-3.1-8b").value(), settings);
  ASSERT_TRUE(expected);
  EXPECT_EQ(std::string(json.get(), length), hwaccel::to_json(*expected, true));
}

TEST(CApiPlan, RegistryFromTheCallerOrDevicesNotBoth) {
  const auto r = request({{"params", "7B"}, {"devices", "1xA100-SXM4-80GB"}});
  RegistryPtr registry;
  {
    hwaccel_registry* raw = nullptr;
    ASSERT_EQ(hwaccel_registry_hypothetical("1xH100-SXM-80GB", &raw, nullptr), HWACCEL_OK);
    registry.reset(raw);
  }
  EXPECT_NE(failure(false, registry.get(), r.get()).second.find("not both"), std::string::npos);
  const auto no_devices = request({{"params", "7B"}});
  EXPECT_NE(failure(false, nullptr, no_devices.get()).second.find("no registry and no devices"), std::string::npos);
  char* raw = nullptr;
  ASSERT_EQ(hwaccel_plan_json(registry.get(), no_devices.get(), 0, &raw, nullptr, nullptr), HWACCEL_OK);
  StringPtr json(raw);
  EXPECT_NE(std::string_view(json.get()).find("H100"), std::string_view::npos);
  hwaccel_registry* none = reinterpret_cast<hwaccel_registry*>(1);
  EXPECT_EQ(hwaccel_registry_hypothetical("3xNo-Such-GPU", &none, nullptr), HWACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(none, nullptr);
}

TEST(CApiPlan, DeviceSpecFilesNameDevicesTheTableLacks) {
  const hwaccel::testing::TempDir tmp;
  const std::filesystem::path dir = tmp.path();
  const std::string file = (dir / "specs.json").string();
  std::ofstream(file) << R"({"devices": [{"id": "my-gpu-48gb", "name": "MyGPU-48GB", "vendor": "Example",
    "backend": "cuda", "architecture": "Ada Lovelace", "compute_capability": "8.9", "memory_gib": 48,
    "memory_bandwidth_gbps": 960, "bf16_tflops": 180}]})";
  const auto r = request({{"model", "llama-3.1-8b"}, {"devices", "2xMyGPU-48GB"}});
  EXPECT_NE(failure(false, nullptr, r.get()).second.find("MyGPU-48GB"), std::string::npos);
  ASSERT_EQ(hwaccel_request_set(r.get(), "device-specs", file.c_str(), nullptr), HWACCEL_OK);
  char* raw = nullptr;
  ASSERT_EQ(hwaccel_plan_json(nullptr, r.get(), 0, &raw, nullptr, nullptr), HWACCEL_OK);
  StringPtr json(raw);
  EXPECT_NE(std::string_view(json.get()).find("\"spec_id\":\"my-gpu-48gb\""), std::string_view::npos);
  EXPECT_NE(std::string_view(json.get()).find("\"bandwidth_source\":\"published spec\""), std::string_view::npos);
  // A file that is not there is an error naming the key.
  ASSERT_EQ(hwaccel_request_set(r.get(), "device-specs", (dir / "missing.json").c_str(), nullptr), HWACCEL_OK);
  const auto [status, message] = failure(false, nullptr, r.get());
  EXPECT_NE(status, HWACCEL_OK);
  EXPECT_NE(message.find("device-specs"), std::string::npos) << message;
}

TEST(CApiPlan, RuntimeProfilesKeyForPlansNotTraining) {
  const hwaccel::testing::TempDir tmp;
  const std::string file = (tmp.path() / "profiles.json").string();
  std::ofstream(file) << hwaccel::builtin_runtime_profiles_json();
  const auto r = request({{"model", "llama-3.1-8b"}, {"devices", "1xH100-SXM-80GB"}, {"runtime", "vllm"},
                          {"runtime-profiles", file.c_str()}});
  char* raw = nullptr;
  ASSERT_EQ(hwaccel_plan_json(nullptr, r.get(), 0, &raw, nullptr, nullptr), HWACCEL_OK);
  StringPtr json(raw);
  const auto plain = request({{"model", "llama-3.1-8b"}, {"devices", "1xH100-SXM-80GB"}, {"runtime", "vllm"}});
  char* raw_plain = nullptr;
  ASSERT_EQ(hwaccel_plan_json(nullptr, plain.get(), 0, &raw_plain, nullptr, nullptr), HWACCEL_OK);
  StringPtr json_plain(raw_plain);
  EXPECT_EQ(std::string(json.get()), std::string(json_plain.get()));  // the built-in file's copy plans the same
  // vLLM at half the bandwidth efficiency: the plan's decode speed follows the file.
  std::string slower(hwaccel::builtin_runtime_profiles_json());
  const auto at = slower.find("\"bandwidth_efficiency\"", slower.find("\"runtime\": \"vllm\""));
  ASSERT_NE(at, std::string::npos);
  const auto value = slower.find_first_of("0123456789", at);
  slower.replace(value, slower.find_first_of(",\n", value) - value, "0.4");
  std::ofstream(file, std::ios::trunc) << slower;
  char* raw_slow = nullptr;
  ASSERT_EQ(hwaccel_plan_json(nullptr, r.get(), 0, &raw_slow, nullptr, nullptr), HWACCEL_OK);
  StringPtr json_slow(raw_slow);
  const auto decode = [](const char* plan) {
    const std::string_view text(plan);
    const auto key = text.find("\"decode_tokens_per_s\":");
    return key == std::string_view::npos ? 0.0 : std::strtod(plan + key + 22, nullptr);
  };
  ASSERT_GT(decode(json_plain.get()), 0);
  EXPECT_LT(decode(json_slow.get()), decode(json_plain.get()) * 0.75);
  std::ofstream(file, std::ios::trunc) << "{}";
  EXPECT_NE(failure(false, nullptr, r.get()).second.find("runtime-profiles: "), std::string::npos);
  const auto training = request({{"model", "llama-3.1-8b"}, {"devices", "1xH100-SXM-80GB"}, {"method", "lora"},
                                 {"runtime-profiles", file.c_str()}});
  EXPECT_NE(failure(true, nullptr, training.get()).second.find("runtime-profiles"), std::string::npos);
}

TEST(CApiPlan, FlashAttentionKey) {
  const auto off = request({{"model", "llama-3.1-8b"}, {"devices", "1xRTX-4090"}, {"quant", "q4_k_m"}, {"context", "32768"}});
  const auto on = request({{"model", "llama-3.1-8b"}, {"devices", "1xRTX-4090"}, {"quant", "q4_k_m"}, {"context", "32768"},
                           {"flash-attention", "true"}});
  char* raw_off = nullptr;
  char* raw_on = nullptr;
  ASSERT_EQ(hwaccel_plan_json(nullptr, off.get(), 0, &raw_off, nullptr, nullptr), HWACCEL_OK);
  ASSERT_EQ(hwaccel_plan_json(nullptr, on.get(), 0, &raw_on, nullptr, nullptr), HWACCEL_OK);
  StringPtr json_off(raw_off), json_on(raw_on);
  EXPECT_NE(std::string_view(json_on.get()).find("flash attention on (-fa 1)"), std::string_view::npos);
  EXPECT_NE(std::string_view(json_off.get()).find("flash attention off (-fa 0"), std::string_view::npos);
  const auto bad = request({{"model", "llama-3.1-8b"}, {"devices", "1xRTX-4090"}, {"flash-attention", "sometimes"}});
  EXPECT_NE(failure(false, nullptr, bad.get()).second.find("flash-attention"), std::string::npos);
  EXPECT_NE(failure(true, nullptr, on.get()).second.find("inference-plan setting"), std::string::npos);
}

TEST(CApiPlan, BadValuesNameTheirKey) {
  struct Case {
    bool train;
    std::vector<std::pair<const char*, const char*>> values;
    hwaccel_status status;
    const char* message;
  };
  const Case cases[] = {
      {false, {{"params", "7B"}, {"devices", "1xRTX-4090"}, {"context", "0"}}, HWACCEL_ERROR_INVALID_ARGUMENT, "context '0'"},
      {false, {{"params", "7B"}, {"devices", "1xRTX-4090"}, {"quant", "q3_x"}}, HWACCEL_ERROR_INVALID_ARGUMENT, "quant 'q3_x'"},
      {false, {{"params", "seven"}, {"devices", "1xRTX-4090"}}, HWACCEL_ERROR_INVALID_ARGUMENT, "params 'seven'"},
      {false, {{"params", "7B"}, {"model", "llama-2-7b"}, {"devices", "1xRTX-4090"}}, HWACCEL_ERROR_INVALID_ARGUMENT,
       "exactly one"},
      {false, {{"model", "/nonexistent/config.json"}, {"devices", "1xRTX-4090"}}, HWACCEL_ERROR_NOT_FOUND, "model: "},
      {false, {{"params", "7B"}, {"devices", "1xRTX-4090"}, {"offload", "maybe"}}, HWACCEL_ERROR_INVALID_ARGUMENT,
       "offload 'maybe': not true or false"},
      {false, {{"params", "7B"}, {"devices", "1xRTX-4090"}, {"method", "lora"}}, HWACCEL_ERROR_INVALID_ARGUMENT,
       "'method' is a training setting"},
      {true, {{"params", "7B"}, {"devices", "1xRTX-4090"}, {"batch", "2"}}, HWACCEL_ERROR_INVALID_ARGUMENT,
       "'batch' is an inference-plan setting"},
      {true, {{"params", "7B"}, {"devices", "1xRTX-4090"}, {"zero", "4"}}, HWACCEL_ERROR_INVALID_ARGUMENT, "zero '4'"},
      {true, {{"params", "7B"}, {"devices", "1xRTX-4090"}, {"dp", "-1"}}, HWACCEL_ERROR_INVALID_ARGUMENT, "dp '-1'"},
      {true, {{"params", "7B"}, {"devices", "1xRTX-4090"}, {"method", "distill"}}, HWACCEL_ERROR_INVALID_ARGUMENT, ""},
  };
  for (const auto& c : cases) {
    const auto r = request(c.values);
    const auto [status, message] = failure(c.train, nullptr, r.get());
    EXPECT_EQ(status, c.status) << message;
    EXPECT_NE(message.find(c.message), std::string::npos) << message;
    EXPECT_FALSE(message.empty());
  }
}

TEST(CApiPlan, TrainingEstimateMatchesTheLibrary) {
  const auto r = request({{"model", "llama-2-7b"}, {"devices", "8xA100-SXM4-80GB"}, {"method", "full"}, {"zero", "3"},
                          {"dp", "8"}, {"micro-batch", "2"}, {"seq", "4096"}, {"recompute", "full"}});
  char* raw = nullptr;
  ASSERT_EQ(hwaccel_train_json(nullptr, r.get(), 0, &raw, nullptr, nullptr), HWACCEL_OK);
  StringPtr json(raw);
  hwaccel::TrainingSettings s;
  s.zero_stage = 3;
  s.data_parallel = 8;
  s.micro_batch = 2;
  s.sequence = 4096;
  s.recompute = hwaccel::Recompute::full;
  const auto expected = hwaccel::plan_training(hwaccel::hypothetical_registry("8xA100-SXM4-80GB").value(),
                                               hwaccel::catalogue_model("llama-2-7b").value(), s);
  ASSERT_TRUE(expected);
  EXPECT_EQ(std::string(json.get()), hwaccel::to_json(*expected));
}

TEST(CApiPlan, NullSafety) {
  EXPECT_EQ(hwaccel_request_set(nullptr, "model", "x", nullptr), HWACCEL_ERROR_INVALID_ARGUMENT);
  const auto r = request({{"model", "llama-2-7b"}});
  EXPECT_EQ(hwaccel_request_set(r.get(), nullptr, "x", nullptr), HWACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hwaccel_request_set(r.get(), "model", nullptr, nullptr), HWACCEL_OK);  // removes it
  EXPECT_NE(failure(false, nullptr, r.get()).second.find("exactly one"), std::string::npos);
  EXPECT_EQ(hwaccel_plan_json(nullptr, nullptr, 0, nullptr, nullptr, nullptr), HWACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hwaccel_train_json(nullptr, r.get(), 0, nullptr, nullptr, nullptr), HWACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hwaccel_registry_hypothetical(nullptr, nullptr, nullptr), HWACCEL_ERROR_INVALID_ARGUMENT);
  hwaccel_request_free(nullptr);
}

}  // namespace

namespace {

struct CollectedEvents {
  std::mutex mutex;
  std::vector<std::string> lines;
};

void collect_event(const hwaccel_log_event* e, void* user_data) {
  auto* collected = static_cast<CollectedEvents*>(user_data);
  std::lock_guard lock(collected->mutex);
  collected->lines.push_back(std::string(e->backend) + " " + e->event + " " + e->subject + ": " + e->outcome);
}

TEST(CApi, LogCallbackGetsTheDetectionsEvents) {
  FixtureBuilder fixture;
  const std::string dir = write_one_cpu_machine(fixture);
  const OptionsPtr options(hwaccel_detect_options_new());
  ASSERT_TRUE(options);
  ASSERT_EQ(hwaccel_detect_options_set_fixture(options.get(), dir.c_str(), nullptr), HWACCEL_OK);
  ASSERT_EQ(hwaccel_detect_options_set_backends(options.get(), "cpu", nullptr), HWACCEL_OK);
  CollectedEvents collected;
  ASSERT_EQ(hwaccel_detect_options_set_log_callback(options.get(), HWACCEL_LOG_TRACE, &collect_event, &collected, nullptr),
            HWACCEL_OK);
  hwaccel_registry* raw = nullptr;
  ASSERT_EQ(hwaccel_detect(options.get(), &raw, nullptr), HWACCEL_OK);
  const RegistryPtr registry(raw);
  const auto has = [&](std::string_view line) {
    return std::find(collected.lines.begin(), collected.lines.end(), line) != collected.lines.end();
  };
  EXPECT_TRUE(has("cpu read_file /proc/cpuinfo: ok"));
  EXPECT_TRUE(has("cpu detector_done : ok"));
  EXPECT_TRUE(std::any_of(collected.lines.begin(), collected.lines.end(),
                          [](const std::string& l) { return l.starts_with(" detection_done : "); }));

  // NULL turns it off; a bad level is an argument error.
  collected.lines.clear();
  ASSERT_EQ(hwaccel_detect_options_set_log_callback(options.get(), HWACCEL_LOG_WARN, nullptr, nullptr, nullptr), HWACCEL_OK);
  ASSERT_EQ(hwaccel_detect(options.get(), &raw, nullptr), HWACCEL_OK);
  hwaccel_registry_free(raw);
  EXPECT_TRUE(collected.lines.empty());
  EXPECT_EQ(hwaccel_detect_options_set_log_callback(options.get(), 9, &collect_event, &collected, nullptr),
            HWACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hwaccel_detect_options_set_log_callback(options.get(), -1, &collect_event, &collected, nullptr),
            HWACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hwaccel_detect_options_set_log_callback(nullptr, HWACCEL_LOG_INFO, &collect_event, &collected, nullptr),
            HWACCEL_ERROR_INVALID_ARGUMENT);
}

}  // namespace

// The watcher through the C API: a fixture timeline (the H100 pair, then a
// driver update) replays to the same events the C++ watcher reports.
TEST(CApiWatch, ReplaysATimelineAsJsonLines) {
  namespace fs = std::filesystem;
  hwaccel::testing::TempDir dir;
  fs::copy(hwaccel::testing::fixtures_root() / "machines" / "h100-nvl-pair-nvlink-bridge", dir.path(),
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  const fs::path state = dir.path() / "steps" / "1";
  fs::create_directories(state);
  fs::copy(dir.path() / "commands", state / "commands", fs::copy_options::recursive);
  fs::copy(dir.path() / "fixture.json", state / "fixture.json");
  {
    const fs::path query = state / "commands" / "nvidia-smi-query-gpu.out";
    std::string text = hwaccel::testing::read_file(query);
    for (auto at = text.find("550.54.14"); at != std::string::npos; at = text.find("550.54.14", at))
      text.replace(at, 9, "550.127.05");
    hwaccel::testing::write_file(query, text);
  }
  hwaccel::testing::write_file(dir.path() / "timeline.json",
                  R"({"format": 1, "steps": [{"events": [{"uevent": {"ACTION": "add", "DEVPATH": "/module/nvidia",)"
                  R"( "SUBSYSTEM": "module"}}], "state": "steps/1"}]})");

  const OptionsPtr options(hwaccel_detect_options_new());
  ASSERT_EQ(hwaccel_detect_options_set_fixture(options.get(), dir.str().c_str(), nullptr), HWACCEL_OK);
  hwaccel_watcher* watcher = nullptr;
  hwaccel_error* error = nullptr;
  ASSERT_EQ(hwaccel_watch_start(options.get(), 0, &watcher, &error), HWACCEL_OK) << str(hwaccel_error_message(error));
  std::vector<std::string> events;
  for (;;) {
    char* line = nullptr;
    ASSERT_EQ(hwaccel_watch_next_event(watcher, 30'000, &line, nullptr, nullptr), HWACCEL_OK);
    if (!line) break;
    events.emplace_back(line);
    hwaccel_string_free(line);
  }
  EXPECT_TRUE(hwaccel_watch_finished(watcher));
  ASSERT_EQ(events.size(), 2u);
  for (const auto& e : events) {
    EXPECT_NE(e.find(R"("event":"changed")"), std::string::npos) << e;
    EXPECT_NE(e.find(R"("after":"550.127.05")"), std::string::npos) << e;
  }
  hwaccel_registry* registry = nullptr;
  ASSERT_EQ(hwaccel_watch_registry(watcher, &registry, nullptr), HWACCEL_OK);
  const RegistryPtr owned(registry);
  EXPECT_EQ(str(hwaccel_device_driver_version(hwaccel_registry_find_device(registry, "cuda:0"))), "550.127.05");
  hwaccel_watch_free(watcher);

  // NULL arguments and nothing to watch with are errors, never crashes.
  EXPECT_EQ(hwaccel_watch_start(options.get(), 0, nullptr, nullptr), HWACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hwaccel_watch_next_event(nullptr, 0, nullptr, nullptr, nullptr), HWACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_FALSE(hwaccel_watch_finished(nullptr));
  hwaccel_watch_free(nullptr);
  const OptionsPtr plain(hwaccel_detect_options_new());
  const std::string machine = (hwaccel::testing::fixtures_root() / "machines" / "h100-nvl-pair-nvlink-bridge").string();
  ASSERT_EQ(hwaccel_detect_options_set_fixture(plain.get(), machine.c_str(), nullptr), HWACCEL_OK);
  hwaccel_watcher* none = nullptr;
  EXPECT_EQ(hwaccel_watch_start(plain.get(), 0, &none, nullptr), HWACCEL_ERROR_UNSUPPORTED);
  EXPECT_EQ(none, nullptr);
}

// Leases through the C API: the busy DGX's idle GPU 4, held until freed.
TEST(CApi, ReservesAFreeDeviceUntilFreed) {
  const std::string machine = (hwaccel::testing::fixtures_root() / "machines" / "dgx-h100-busy-containers").string();
  hwaccel::testing::TempDir dir;
  const OptionsPtr options(hwaccel_detect_options_new());
  ASSERT_EQ(hwaccel_detect_options_set_fixture(options.get(), machine.c_str(), nullptr), HWACCEL_OK);
  const std::string request = R"({"count": 1, "min_free_memory": "40G", "lease_dir": ")" + dir.str() + R"("})";
  hwaccel_lease* lease = nullptr;
  hwaccel_error* error = nullptr;
  ASSERT_EQ(hwaccel_reserve(options.get(), request.c_str(), &lease, &error), HWACCEL_OK) << str(hwaccel_error_message(error));
  char* json = nullptr;
  ASSERT_EQ(hwaccel_lease_json(lease, &json, nullptr, nullptr), HWACCEL_OK);
  const std::string text = json;
  hwaccel_string_free(json);
  EXPECT_NE(text.find(R"("device_id":"cuda:4")"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("CUDA_VISIBLE_DEVICES":"GPU-2c8a5c6d-bf3e-4d9a-ab4c-8e7f6a5b4c32")"), std::string::npos) << text;
  // Held: a second lease finds nothing free, and says why.
  hwaccel_lease* second = nullptr;
  EXPECT_EQ(hwaccel_reserve(options.get(), request.c_str(), &second, &error), HWACCEL_ERROR_TIMEOUT);
  EXPECT_NE(str(hwaccel_error_message(error)).find("cuda:4: held by"), std::string::npos) << str(hwaccel_error_message(error));
  hwaccel_error_free(error);
  error = nullptr;
  hwaccel_lease_free(lease);
  ASSERT_EQ(hwaccel_reserve(options.get(), request.c_str(), &second, nullptr), HWACCEL_OK);
  hwaccel_lease_free(second);
  // Bad requests.
  EXPECT_EQ(hwaccel_reserve(options.get(), R"({"devices": 2})", &second, &error), HWACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(str(hwaccel_error_message(error)).find("unknown key \"devices\""), std::string::npos);
  hwaccel_error_free(error);
  EXPECT_EQ(hwaccel_reserve(options.get(), "[1]", &second, nullptr), HWACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hwaccel_reserve(options.get(), nullptr, nullptr, nullptr), HWACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(second, nullptr);
  hwaccel_lease_free(nullptr);
}
