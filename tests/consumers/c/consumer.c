/* A plain C11 program using hwaccel through its C API: replays a fixture,
 * writes the registry JSON to a file and prints every device's and warning's
 * fields, one line each, for the test script to compare with the fixture's
 * expected.json. It also checks the error paths and NULL handling, and exits
 * non-zero on the first surprise. */
#include <hwaccel/hwaccel.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond)                                                    \
  do {                                                                 \
    if (!(cond)) {                                                     \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                      \
    }                                                                  \
  } while (0)

static const char* or_dash(const char* s) { return s ? s : "-"; }

static void print_device(const hwaccel_device* d) {
  uint64_t memory = 0, free_memory = 0;
  int32_t numa = 0;
  uint32_t runtime_index = 0;
  char memory_text[32] = "-", free_text[32] = "-", numa_text[16] = "-", runtime_text[16] = "-";
  if (hwaccel_device_memory_bytes(d, &memory)) snprintf(memory_text, sizeof memory_text, "%" PRIu64, memory);
  if (hwaccel_device_memory_free_bytes(d, &free_memory))
    snprintf(free_text, sizeof free_text, "%" PRIu64, free_memory);
  if (hwaccel_device_numa_node(d, &numa)) snprintf(numa_text, sizeof numa_text, "%" PRId32, numa);
  if (hwaccel_device_runtime_index(d, &runtime_index))
    snprintf(runtime_text, sizeof runtime_text, "%" PRIu32, runtime_index);
  printf("device id=%s backend=%s family=%s index=%" PRIu32 " name=%s memory_bytes=%s memory_free_bytes=%s "
         "pci_bus_id=%s numa_node=%s compute_capability=%s driver_version=%s visible=%d available=%d "
         "runtime_index=%s\n",
         hwaccel_device_id(d), hwaccel_device_backend(d), hwaccel_device_family(d), hwaccel_device_index(d),
         hwaccel_device_name(d), memory_text, free_text, or_dash(hwaccel_device_pci_bus_id(d)), numa_text,
         or_dash(hwaccel_device_compute_capability(d)), or_dash(hwaccel_device_driver_version(d)),
         hwaccel_device_visible(d) ? 1 : 0, hwaccel_device_available(d) ? 1 : 0, runtime_text);
}

/* Every getter and free function must accept NULL. */
static void check_null_safety(void) {
  uint64_t u64 = 7;
  int32_t i32 = 7;
  uint32_t u32 = 7;
  hwaccel_registry* registry = (hwaccel_registry*)&u64; /* must be reset to NULL on failure */
  char* json = (char*)&u64;
  hwaccel_error* error = NULL;

  CHECK(hwaccel_registry_device_count(NULL) == 0);
  CHECK(hwaccel_registry_device(NULL, 0) == NULL);
  CHECK(hwaccel_registry_find_device(NULL, "cpu:0") == NULL);
  CHECK(hwaccel_registry_warning_count(NULL) == 0);
  CHECK(hwaccel_registry_warning(NULL, 0) == NULL);
  CHECK(hwaccel_registry_schema_version(NULL) == 0);
  CHECK(!hwaccel_registry_has_accelerator(NULL));
  CHECK(hwaccel_device_id(NULL) == NULL && hwaccel_device_name(NULL) == NULL);
  CHECK(hwaccel_device_backend(NULL) == NULL && hwaccel_device_family(NULL) == NULL);
  CHECK(hwaccel_device_index(NULL) == 0);
  CHECK(!hwaccel_device_memory_bytes(NULL, &u64) && u64 == 7);
  CHECK(!hwaccel_device_memory_free_bytes(NULL, &u64) && u64 == 7);
  CHECK(!hwaccel_device_numa_node(NULL, &i32) && i32 == 7);
  CHECK(!hwaccel_device_runtime_index(NULL, &u32) && u32 == 7);
  CHECK(hwaccel_device_pci_bus_id(NULL) == NULL && hwaccel_device_compute_capability(NULL) == NULL);
  CHECK(hwaccel_device_driver_version(NULL) == NULL);
  CHECK(!hwaccel_device_visible(NULL) && !hwaccel_device_available(NULL));
  CHECK(hwaccel_warning_backend(NULL) == NULL && hwaccel_warning_kind(NULL) == NULL);
  CHECK(hwaccel_warning_message(NULL) == NULL);
  CHECK(hwaccel_error_status(NULL) == HWACCEL_ERROR_INVALID_ARGUMENT);
  CHECK(hwaccel_error_message(NULL) == NULL);

  CHECK(hwaccel_registry_to_json(NULL, 0, &json, NULL, &error) == HWACCEL_ERROR_INVALID_ARGUMENT);
  CHECK(json == NULL);
  CHECK(error != NULL && hwaccel_error_status(error) == HWACCEL_ERROR_INVALID_ARGUMENT);
  CHECK(error != NULL && strstr(hwaccel_error_message(error), "registry is NULL") != NULL);
  hwaccel_error_free(error);
  error = NULL;
  CHECK(hwaccel_detect(NULL, NULL, NULL) == HWACCEL_ERROR_INVALID_ARGUMENT);
  CHECK(hwaccel_registry_from_json(NULL, 0, &registry, NULL) == HWACCEL_ERROR_INVALID_ARGUMENT);
  CHECK(registry == NULL);
  CHECK(hwaccel_detect_options_set_backends(NULL, "cpu", NULL) == HWACCEL_ERROR_INVALID_ARGUMENT);
  CHECK(hwaccel_detect_options_set_fixture(NULL, "x", NULL) == HWACCEL_ERROR_INVALID_ARGUMENT);
  CHECK(hwaccel_detect_options_set_tool_timeout_ms(NULL, 10, NULL) == HWACCEL_ERROR_INVALID_ARGUMENT);
  CHECK(hwaccel_detect_options_set_system_probes(NULL, true, NULL) == HWACCEL_ERROR_INVALID_ARGUMENT);

  hwaccel_registry_free(NULL);
  hwaccel_detect_options_free(NULL);
  hwaccel_error_free(NULL);
  hwaccel_string_free(NULL);
}

/* Bad arguments and a missing fixture come back as statuses with messages. */
static void check_errors(void) {
  hwaccel_detect_options* options = hwaccel_detect_options_new();
  hwaccel_registry* registry = NULL;
  hwaccel_error* error = NULL;
  CHECK(options != NULL);

  CHECK(hwaccel_detect_options_set_backends(options, "cpu,warp_drive", &error) == HWACCEL_ERROR_INVALID_ARGUMENT);
  CHECK(error != NULL && strstr(hwaccel_error_message(error), "warp_drive") != NULL);
  printf("error set_backends status=%s\n", hwaccel_status_name(hwaccel_error_status(error)));
  hwaccel_error_free(error);
  error = NULL;

  CHECK(hwaccel_detect_options_set_tool_timeout_ms(options, 0, &error) == HWACCEL_ERROR_INVALID_ARGUMENT);
  hwaccel_error_free(error);
  error = NULL;

  CHECK(hwaccel_detect_options_set_fixture(options, "/nonexistent/hwaccel-fixture", NULL) == HWACCEL_OK);
  const hwaccel_status status = hwaccel_detect(options, &registry, &error);
  CHECK(status != HWACCEL_OK && registry == NULL);
  CHECK(error != NULL && hwaccel_error_status(error) == status);
  CHECK(error != NULL && strstr(hwaccel_error_message(error), "/nonexistent/hwaccel-fixture") != NULL);
  printf("error fixture status=%s\n", hwaccel_status_name(status));
  hwaccel_error_free(error);
  error = NULL;

  CHECK(hwaccel_registry_from_json("{\"devices\": []}", 15, &registry, &error) == HWACCEL_ERROR_PARSE);
  CHECK(registry == NULL && error != NULL);
  printf("error from_json status=%s\n", hwaccel_status_name(hwaccel_error_status(error)));
  hwaccel_error_free(error);

  hwaccel_detect_options_free(options);
}

/* A plan and a training estimate on hypothetical devices, as a scheduler
 * written in C would ask for them. */
static void check_plan_and_train(void) {
  hwaccel_request* request = hwaccel_request_new();
  hwaccel_error* error = NULL;
  CHECK(request != NULL);
  CHECK(hwaccel_request_set(request, "model", "llama-3.1-70b", &error) == HWACCEL_OK);
  CHECK(hwaccel_request_set(request, "devices", "8xH100-SXM-80GB", &error) == HWACCEL_OK);
  CHECK(hwaccel_request_set(request, "quant", "bf16", &error) == HWACCEL_OK);
  CHECK(hwaccel_request_set(request, "context", "8192", &error) == HWACCEL_OK);
  char* json = NULL;
  size_t length = 0;
  CHECK(hwaccel_plan_json(NULL, request, 0, &json, &length, &error) == HWACCEL_OK);
  CHECK(json != NULL && strlen(json) == length);
  CHECK(json && strstr(json, "\"fits\":true") != NULL);
  hwaccel_string_free(json);

  CHECK(hwaccel_request_set(request, "no-such-key", "1", &error) == HWACCEL_ERROR_INVALID_ARGUMENT);
  CHECK(error && strstr(hwaccel_error_message(error), "no-such-key") != NULL);
  hwaccel_error_free(error);
  error = NULL;

  /* A training-only key makes no sense for a plan. */
  CHECK(hwaccel_request_set(request, "zero", "3", NULL) == HWACCEL_OK);
  CHECK(hwaccel_plan_json(NULL, request, 0, &json, NULL, &error) == HWACCEL_ERROR_INVALID_ARGUMENT);
  CHECK(json == NULL && error != NULL);
  hwaccel_error_free(error);
  error = NULL;

  hwaccel_request_free(request);
  request = hwaccel_request_new();
  CHECK(hwaccel_request_set(request, "params", "7e9", NULL) == HWACCEL_OK);
  CHECK(hwaccel_request_set(request, "method", "qlora", NULL) == HWACCEL_OK);
  hwaccel_registry* devices = NULL;
  CHECK(hwaccel_registry_hypothetical("1xRTX-4090", &devices, &error) == HWACCEL_OK);
  CHECK(hwaccel_registry_device_count(devices) == 1);
  CHECK(hwaccel_train_json(devices, request, HWACCEL_JSON_PRETTY, &json, &length, &error) == HWACCEL_OK);
  CHECK(json && strstr(json, "\"method\"") != NULL);
  hwaccel_string_free(json);
  hwaccel_registry_free(devices);
  hwaccel_request_free(request);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s FIXTURE_DIR JSON_OUT\n", argv[0]);
    return 2;
  }
  printf("version %s c_api=%" PRIu32 " schema=%" PRIu32 "\n", hwaccel_version(), hwaccel_c_api_version(),
         hwaccel_schema_version());
  CHECK(hwaccel_c_api_version() == HWACCEL_C_API_VERSION);

  hwaccel_error* error = NULL;
  hwaccel_detect_options* options = hwaccel_detect_options_new();
  hwaccel_registry* registry = NULL;
  if (!options || hwaccel_detect_options_set_fixture(options, argv[1], &error) != HWACCEL_OK ||
      hwaccel_detect(options, &registry, &error) != HWACCEL_OK) {
    fprintf(stderr, "detection failed: %s\n", error ? hwaccel_error_message(error) : "out of memory");
    hwaccel_error_free(error);
    hwaccel_detect_options_free(options);
    return 1;
  }
  hwaccel_detect_options_free(options);

  const size_t count = hwaccel_registry_device_count(registry);
  for (size_t i = 0; i < count; ++i) {
    const hwaccel_device* device = hwaccel_registry_device(registry, i);
    CHECK(device != NULL);
    CHECK(hwaccel_registry_find_device(registry, hwaccel_device_id(device)) == device);
    print_device(device);
  }
  CHECK(hwaccel_registry_device(registry, count) == NULL);
  CHECK(hwaccel_registry_find_device(registry, "no-such:9") == NULL);
  for (size_t i = 0; i < hwaccel_registry_warning_count(registry); ++i) {
    const hwaccel_warning* w = hwaccel_registry_warning(registry, i);
    printf("warning backend=%s kind=%s message=%s\n", hwaccel_warning_backend(w), hwaccel_warning_kind(w),
           hwaccel_warning_message(w));
  }
  printf("has_accelerator=%d\n", hwaccel_registry_has_accelerator(registry) ? 1 : 0);

  char* json = NULL;
  size_t length = 0;
  CHECK(hwaccel_registry_to_json(registry, HWACCEL_JSON_PRETTY | HWACCEL_JSON_NO_TIMINGS, &json, &length, &error) ==
        HWACCEL_OK);
  CHECK(json != NULL && strlen(json) == length);
  FILE* out = fopen(argv[2], "wb");
  CHECK(out != NULL);
  if (out && json) {
    CHECK(fwrite(json, 1, length, out) == length);
    CHECK(fclose(out) == 0);
  }

  /* The JSON reads back into an equal registry. */
  hwaccel_registry* reread = NULL;
  CHECK(hwaccel_registry_from_json(json, length, &reread, &error) == HWACCEL_OK);
  char* json_again = NULL;
  CHECK(hwaccel_registry_to_json(reread, HWACCEL_JSON_PRETTY | HWACCEL_JSON_NO_TIMINGS, &json_again, NULL, NULL) ==
        HWACCEL_OK);
  CHECK(json && json_again && strcmp(json, json_again) == 0);
  CHECK(hwaccel_registry_schema_version(reread) == hwaccel_schema_version());
  hwaccel_string_free(json_again);
  CHECK(hwaccel_registry_to_json(registry, 4u, &json_again, NULL, NULL) == HWACCEL_ERROR_INVALID_ARGUMENT);
  CHECK(json_again == NULL);
  hwaccel_string_free(json);
  hwaccel_registry_free(reread);
  hwaccel_registry_free(registry);

  check_null_safety();
  check_errors();
  check_plan_and_train();
  if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
  return failures ? 1 : 0;
}
