/* hwaccel C API: detect AI accelerators from C, or from any language with a C FFI.
 *
 * Conventions
 * - Every object is an opaque handle. Each handle a function returns is owned
 *   by the caller and released by exactly one matching call:
 *     hwaccel_detect_options_new      -> hwaccel_detect_options_free
 *     hwaccel_detect                  -> hwaccel_registry_free
 *     hwaccel_registry_from_json      -> hwaccel_registry_free
 *     hwaccel_registry_to_json        -> hwaccel_string_free
 *     any function's error out-param  -> hwaccel_error_free
 *   Every free function accepts NULL and does nothing.
 * - Device and warning pointers (hwaccel_device, hwaccel_warning) are borrowed
 *   views into their registry: never free them; they, and every string read
 *   through them, stay valid until that registry is freed.
 * - Every function accepts NULL for any pointer argument: getters then return
 *   0, false or NULL, fallible functions return HWACCEL_ERROR_INVALID_ARGUMENT.
 * - Fallible functions return a hwaccel_status. Their last parameter,
 *   `hwaccel_error** error`, may be NULL; otherwise, on failure, *error is set
 *   to a new error object (its status and a message naming the file, value or
 *   field involved) that the caller frees with hwaccel_error_free. On success
 *   *error is left untouched. No global or thread-local error state exists.
 * - Values the machine did not report are absent, never guessed: string
 *   getters return NULL and numeric getters return false, leaving *out as is.
 * - Strings are UTF-8 and NUL-terminated.
 * - No C++ exception crosses this interface.
 * - A registry is immutable: it may be read from several threads at once.
 *
 * Link with -lhwaccel (pkg-config: `pkg-config --cflags --libs hwaccel`).
 */
#ifndef HWACCEL_HWACCEL_H
#define HWACCEL_HWACCEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32) || defined(__CYGWIN__)
#  define HWACCEL_API
#elif defined(__GNUC__) || defined(__clang__)
#  define HWACCEL_API __attribute__((visibility("default")))
#else
#  define HWACCEL_API
#endif

/* Version of this C interface. It changes only when an existing declaration
 * changes incompatibly; additions keep it. */
#define HWACCEL_C_API_VERSION 5

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status and errors ------------------------------------------------ */

/* What a fallible call returned. The values after HWACCEL_OK follow the
 * library's error kinds; new values may be added at the end. */
typedef enum hwaccel_status {
  HWACCEL_OK = 0,
  HWACCEL_ERROR_INVALID_ARGUMENT = 1, /* NULL where a value is required, or a bad value */
  HWACCEL_ERROR_NOT_FOUND = 2,        /* file or folder does not exist */
  HWACCEL_ERROR_PERMISSION_DENIED = 3,
  HWACCEL_ERROR_IO = 4,               /* a read failed */
  HWACCEL_ERROR_NOT_REGULAR_FILE = 5, /* a FIFO, device node or socket where a file was expected */
  HWACCEL_ERROR_ESCAPES_ROOT = 6,     /* fixture: a path or symlink leads outside the fixture */
  HWACCEL_ERROR_SYMLINK_LOOP = 7,
  HWACCEL_ERROR_TOOL_NOT_FOUND = 8,
  HWACCEL_ERROR_TOOL_FAILED = 9,
  HWACCEL_ERROR_TIMEOUT = 10,
  HWACCEL_ERROR_NOT_CAPTURED = 11,    /* fixture: this command or file was not recorded */
  HWACCEL_ERROR_PARSE = 12,           /* input did not have the expected form */
  HWACCEL_ERROR_UNSUPPORTED = 13,
  HWACCEL_ERROR_OUT_OF_MEMORY = 14,
  HWACCEL_ERROR_INTERNAL = 15,        /* a bug in hwaccel: please report it */
  /* Not a status: makes the type as wide as int, so that a value a later
   * version adds is a valid hwaccel_status for this one too (C++ gives an
   * enum only the range its enumerators need). */
  HWACCEL_STATUS_MAX_ENUM = 0x7fffffff
} hwaccel_status;

/* An error: its status and one human-readable sentence. */
typedef struct hwaccel_error hwaccel_error;

/* snake_case name of a status ("ok", "not_found", ...); "unknown" for a value
 * this version does not define. Never NULL; static storage. */
HWACCEL_API const char* hwaccel_status_name(hwaccel_status status);

/* The error's status; HWACCEL_ERROR_INVALID_ARGUMENT for NULL. */
HWACCEL_API hwaccel_status hwaccel_error_status(const hwaccel_error* error);
/* The error's message, valid until the error is freed; NULL for NULL. */
HWACCEL_API const char* hwaccel_error_message(const hwaccel_error* error);
HWACCEL_API void hwaccel_error_free(hwaccel_error* error);

/* ---- version ------------------------------------------------------------ */

/* Library version, "major.minor.patch". Never NULL; static storage. */
HWACCEL_API const char* hwaccel_version(void);
/* HWACCEL_C_API_VERSION of the library actually loaded. */
HWACCEL_API uint32_t hwaccel_c_api_version(void);
/* Registry JSON schema_version this library writes (docs/json.md). */
HWACCEL_API uint32_t hwaccel_schema_version(void);

/* ---- detection ------------------------------------------------------------ */

/* What a detection runs and on what: every backend on this machine by
 * default (or those named in $HWACCEL_BACKENDS). */
typedef struct hwaccel_detect_options hwaccel_detect_options;

/* New options with the defaults; NULL when out of memory. */
HWACCEL_API hwaccel_detect_options* hwaccel_detect_options_new(void);
HWACCEL_API void hwaccel_detect_options_free(hwaccel_detect_options* options);

/* Selects the backends of a comma-separated list of names ("cpu,cuda"; the
 * names are those of the registry JSON's "backend" field, plus "all"; "" and
 * "none" select none). Once called, $HWACCEL_BACKENDS no longer applies. An
 * unknown name is HWACCEL_ERROR_INVALID_ARGUMENT and leaves the selection
 * unchanged. */
HWACCEL_API hwaccel_status hwaccel_detect_options_set_backends(hwaccel_detect_options* options,
                                                               const char* backends, hwaccel_error** error);
/* Replays the captured machine in fixture folder `fixture_dir` (docs/fixtures.md)
 * instead of reading this machine; NULL or "" goes back to this machine. The
 * folder is opened by hwaccel_detect. */
HWACCEL_API hwaccel_status hwaccel_detect_options_set_fixture(hwaccel_detect_options* options,
                                                              const char* fixture_dir, hwaccel_error** error);
/* Deadline for each vendor tool run, in milliseconds (1 to 600000; default 5000). */
HWACCEL_API hwaccel_status hwaccel_detect_options_set_tool_timeout_ms(hwaccel_detect_options* options,
                                                                      uint32_t timeout_ms, hwaccel_error** error);
/* Whether host probes (environment, storage, network) run; default true. */
HWACCEL_API hwaccel_status hwaccel_detect_options_set_system_probes(hwaccel_detect_options* options,
                                                                    bool enabled, hwaccel_error** error);

/* Diagnostic events (docs/cli.md, "Diagnostic logging"): what each detector
 * looked at and how it went. Levels: */
typedef enum hwaccel_log_level {
  HWACCEL_LOG_TRACE = 0, /* every file, folder and link looked at */
  HWACCEL_LOG_DEBUG = 1, /* tools found and run, detectors started and finished */
  HWACCEL_LOG_INFO = 2,  /* what each detector found */
  HWACCEL_LOG_WARN = 3   /* the registry's warnings */
} hwaccel_log_level;

/* One event, valid only during the callback. Strings are UTF-8 and never
 * NULL ("" when absent); `count` and `elapsed_us` are -1 when absent. */
typedef struct hwaccel_log_event {
  hwaccel_log_level level;
  const char* event;   /* read_file, list_dir, read_link, status, find_tool, run_tool,
                          detector_start, detector_done, warning, detection_done */
  const char* backend; /* the detector it happened in, "" outside any */
  const char* subject; /* a path, a tool or a command line */
  const char* outcome; /* "ok", an error kind, "not found", "exit 2" */
  const char* detail;  /* a failed tool's first line of output, a warning's message */
  int64_t count;       /* devices, entries or bytes */
  int64_t elapsed_us;
} hwaccel_log_event;

/* Called for each event at the chosen level and above, from the detecting
 * threads, possibly several at once: it must be thread-safe and must not
 * call back into hwaccel. */
typedef void (*hwaccel_log_callback)(const hwaccel_log_event* event, void* user_data);

/* Sends the events of hwaccel_detect with these options at `level` (one of
 * hwaccel_log_level; another value is HWACCEL_ERROR_INVALID_ARGUMENT) and
 * above to `callback` with `user_data`; NULL turns them off (the default:
 * then no event is made at all). */
HWACCEL_API hwaccel_status hwaccel_detect_options_set_log_callback(hwaccel_detect_options* options, int level,
                                                                   hwaccel_log_callback callback, void* user_data,
                                                                   hwaccel_error** error);

/* The result of a detection, or of reading registry JSON. Immutable. */
typedef struct hwaccel_registry hwaccel_registry;

/* Detects with `options` (NULL: the defaults) and stores a new registry in
 * *out (NULL on failure). A backend that fails is a warning in the registry,
 * not an error: errors are a fixture that cannot be opened, bad arguments,
 * and running out of memory. */
HWACCEL_API hwaccel_status hwaccel_detect(const hwaccel_detect_options* options, hwaccel_registry** out,
                                          hwaccel_error** error);

/* Reads registry JSON as written by hwaccel_registry_to_json or `hwaccel
 * detect` (`length` bytes of `json`, which need not be NUL-terminated). */
HWACCEL_API hwaccel_status hwaccel_registry_from_json(const char* json, size_t length, hwaccel_registry** out,
                                                      hwaccel_error** error);

/* The devices pasted text describes (C API version 4): `hwaccel detect`
 * JSON, or tool output as a user copies it from a terminal (nvidia-smi's
 * table, -L, --query-gpu CSV, -q or -q -x; rocm-smi; rocminfo;
 * system_profiler SPDisplaysDataType -json; xpu-smi; hl-smi; neuron-ls;
 * vulkaninfo; or a transcript of "$ command" lines and what each printed),
 * detected by the same detectors as a machine. Text that is none of these is
 * HWACCEL_ERROR_PARSE, naming what it looked for; over 16 MiB,
 * HWACCEL_ERROR_INVALID_ARGUMENT. */
HWACCEL_API hwaccel_status hwaccel_registry_from_text(const char* text, size_t length, hwaccel_registry** out,
                                                      hwaccel_error** error);

HWACCEL_API void hwaccel_registry_free(hwaccel_registry* registry);

/* ---- the registry ------------------------------------------------------- */

/* Flags of hwaccel_registry_to_json, combined with |. */
#define HWACCEL_JSON_PRETTY 1u     /* indented, one field per line */
#define HWACCEL_JSON_NO_TIMINGS 2u /* leave timings_us out (output stable across runs) */

/* The registry as JSON (docs/json.md), compact unless HWACCEL_JSON_PRETTY.
 * *out receives a new NUL-terminated string freed with hwaccel_string_free;
 * `length` (may be NULL) receives its length without the NUL. Unknown flag
 * bits are HWACCEL_ERROR_INVALID_ARGUMENT. */
HWACCEL_API hwaccel_status hwaccel_registry_to_json(const hwaccel_registry* registry, uint32_t flags, char** out,
                                                    size_t* length, hwaccel_error** error);
HWACCEL_API void hwaccel_string_free(char* string);

/* schema_version the registry was written with (hwaccel_schema_version() for a
 * detection); 0 for NULL. */
HWACCEL_API uint32_t hwaccel_registry_schema_version(const hwaccel_registry* registry);
/* Whether an available, visible device other than the CPU exists. */
HWACCEL_API bool hwaccel_registry_has_accelerator(const hwaccel_registry* registry);

/* A device of a registry: a borrowed view, valid while its registry lives. */
typedef struct hwaccel_device hwaccel_device;

/* Number of devices, the CPU included; 0 for NULL. */
HWACCEL_API size_t hwaccel_registry_device_count(const hwaccel_registry* registry);
/* Device `index` (0 .. count-1, in the registry's canonical order), or NULL. */
HWACCEL_API const hwaccel_device* hwaccel_registry_device(const hwaccel_registry* registry, size_t index);
/* The device with this id ("cuda:0"), or NULL. */
HWACCEL_API const hwaccel_device* hwaccel_registry_find_device(const hwaccel_registry* registry, const char* id);

/* "<backend>:<index>", unique in the registry. */
HWACCEL_API const char* hwaccel_device_id(const hwaccel_device* device);
/* "cpu", "cuda", "rocm", "apple", "vulkan", "intel_npu", ... */
HWACCEL_API const char* hwaccel_device_backend(const hwaccel_device* device);
/* "cpu", "gpu", "npu", "tpu" or "asic". */
HWACCEL_API const char* hwaccel_device_family(const hwaccel_device* device);
/* Enumeration order within the backend; 0 for NULL. */
HWACCEL_API uint32_t hwaccel_device_index(const hwaccel_device* device);
/* Product name as the driver or tool reports it. */
HWACCEL_API const char* hwaccel_device_name(const hwaccel_device* device);
/* Total and currently free device memory in bytes. */
HWACCEL_API bool hwaccel_device_memory_bytes(const hwaccel_device* device, uint64_t* out);
HWACCEL_API bool hwaccel_device_memory_free_bytes(const hwaccel_device* device, uint64_t* out);
/* PCI address, canonical "0000:17:00.0"; NULL when not a PCI device or unknown. */
HWACCEL_API const char* hwaccel_device_pci_bus_id(const hwaccel_device* device);
/* NUMA node the device is attached to. */
HWACCEL_API bool hwaccel_device_numa_node(const hwaccel_device* device, int32_t* out);
/* "9.0" (CUDA), "gfx942" (ROCm), ...; NULL when unknown. */
HWACCEL_API const char* hwaccel_device_compute_capability(const hwaccel_device* device);
/* Driver version; NULL when unknown. */
HWACCEL_API const char* hwaccel_device_driver_version(const hwaccel_device* device);
/* False when *_VISIBLE_DEVICES hides the device from this process. */
HWACCEL_API bool hwaccel_device_visible(const hwaccel_device* device);
/* False when the device is present but unusable (error state). */
HWACCEL_API bool hwaccel_device_available(const hwaccel_device* device);
/* Index the vendor runtime gives the device in this process (after
 * *_VISIBLE_DEVICES remapping). */
HWACCEL_API bool hwaccel_device_runtime_index(const hwaccel_device* device, uint32_t* out);

/* A non-fatal problem found during detection: a borrowed view, valid while
 * its registry lives. */
typedef struct hwaccel_warning hwaccel_warning;

HWACCEL_API size_t hwaccel_registry_warning_count(const hwaccel_registry* registry);
/* Warning `index` (0 .. count-1), or NULL. */
HWACCEL_API const hwaccel_warning* hwaccel_registry_warning(const hwaccel_registry* registry, size_t index);
/* The backend or probe that reported it ("cuda", "environment"). */
HWACCEL_API const char* hwaccel_warning_backend(const hwaccel_warning* warning);
/* "tool_missing", "tool_failed", "timeout", "parse_error", ... (docs/json.md). */
HWACCEL_API const char* hwaccel_warning_kind(const hwaccel_warning* warning);
/* Names the file or command and what was wrong. */
HWACCEL_API const char* hwaccel_warning_message(const hwaccel_warning* warning);

/* ---- planning and training estimates (C API version 2) ------------------ */

/* A plan or training request: the model and its settings, each set by the
 * name of the matching `hwaccel plan` / `hwaccel train` option (without the
 * dashes; '_' may stand for '-'). Values are checked when the request is
 * used, by the settings tables the command and the Python package use too:
 * the same bounds, and an error "KEY 'VALUE': why" after the function's name.
 * A request without `device-specs` reads $HWACCEL_DEVICE_SPECS. Keys:
 *   model          catalogue id ("llama-3.1-70b"), or a config.json, .gguf,
 *                  .safetensors, *.safetensors.index.json or model folder
 *   params         parameter count instead of a model ("7e9", "70B")
 *   devices        plan for hypothetical devices ("8xH100-SXM-80GB") when
 *                  the registry given is NULL
 *   device-specs   a JSON file of devices the built-in spec table lacks
 *                  (docs/planning.md, "Device specs"): names for `devices`,
 *                  and figures for the registry's devices it matches
 *   nodes          copies of the node planned on (1 to 100000)
 *   fabric         the fabric between nodes ("ib-8x400g")
 *   reserve        share of each device's memory kept free (0 to 0.95)
 * plan:   quant, kv-dtype, context (1 to 16777216), batch (1 to 65536),
 *         objective (throughput|latency|energy), formats (hf|gguf), offload
 *         (true|false), flash-attention (true|false), runtime, input-len,
 *         output-len, expert-parallel, power-cap (watts per device),
 *         min-tokens-per-s (the energy objective's floor); the plan's
 *         "power" holds watts and joules (docs/planning.md, "Power and energy")
 * train:  method, optimizer, precision, zero, offload (none|optimizer|params),
 *         dp, tp, pp, sequence-parallel, micro-batch, micro-batches, seq,
 *         recompute, attention, dropout, lora-rank, lora-targets, qlora-bits,
 *         double-quant, base-quant, frozen-quant, adapter, prefix-length,
 *         prefix-projection, teacher, reward-model
 * Booleans are true/false (or 1/0, yes/no). */
typedef struct hwaccel_request hwaccel_request;

/* A new, empty request (NULL when out of memory); free with hwaccel_request_free. */
HWACCEL_API hwaccel_request* hwaccel_request_new(void);
HWACCEL_API void hwaccel_request_free(hwaccel_request* request);
/* Sets `key` to `value` (NUL-terminated), replacing an earlier value; a NULL
 * value removes the key. An unknown key is HWACCEL_ERROR_INVALID_ARGUMENT. */
HWACCEL_API hwaccel_status hwaccel_request_set(hwaccel_request* request, const char* key, const char* value,
                                               hwaccel_error** error);

/* A registry of hypothetical devices from the published-spec table
 * ("8xH100-SXM-80GB", "2xRTX-4090+1xRTX-3090"; `hwaccel specs` lists them). */
HWACCEL_API hwaccel_status hwaccel_registry_hypothetical(const char* devices, hwaccel_registry** out,
                                                         hwaccel_error** error);

/* Plans how the request's model runs on the registry's devices (or on the
 * request's hypothetical `devices` when `registry` is NULL) and returns the
 * plan as JSON (docs/planning.md), as `hwaccel plan --json` prints it; flags
 * as for hwaccel_registry_to_json (HWACCEL_JSON_PRETTY). A plan that does not
 * fit is HWACCEL_OK with "fits": false; a model that cannot be read or run
 * at all is an error. */
HWACCEL_API hwaccel_status hwaccel_plan_json(const hwaccel_registry* registry, const hwaccel_request* request,
                                             uint32_t flags, char** out, size_t* length, hwaccel_error** error);

/* Estimates the training memory of the request (docs/training.md) and checks
 * it against the registry's devices (or the hypothetical `devices`), as
 * `hwaccel train --json` prints it. */
HWACCEL_API hwaccel_status hwaccel_train_json(const hwaccel_registry* registry, const hwaccel_request* request,
                                              uint32_t flags, char** out, size_t* length, hwaccel_error** error);

/* ---- recommendations and the built-in lists (C API version 4) ---------- */

/* The cheapest cloud instances that run the request's model, as `hwaccel
 * recommend --json` prints them (docs/planning.md). Keys: the planning
 * inputs and plan keys above, and provider (aws,gcp,azure), max-instances,
 * catalogue (an instance catalogue file; $HWACCEL_INSTANCE_CATALOGUE). */
HWACCEL_API hwaccel_status hwaccel_recommend_json(const hwaccel_request* request, uint32_t flags, char** out,
                                                  size_t* length, hwaccel_error** error);

/* The published device specs `devices` accepts, and those of the request's
 * `device-specs` file (its only key), as `hwaccel specs --json` prints them. */
HWACCEL_API hwaccel_status hwaccel_device_specs_json(const hwaccel_request* request, char** out, size_t* length,
                                                     hwaccel_error** error);

/* The model catalogue, as `hwaccel models --json` prints it. */
HWACCEL_API hwaccel_status hwaccel_models_json(char** out, size_t* length, hwaccel_error** error);

/* ---- watching the machine (docs/watch.md; C API version 3) ---- */

typedef struct hwaccel_watcher hwaccel_watcher;

/* Detects the machine as `options` say (NULL: defaults), then follows it on a
 * thread of its own: kernel uevents and kernel log health lines re-detect
 * the backends they concern, and a full re-scan runs every
 * `rescan_interval_ms` (0: never). With a fixture that has a timeline.json,
 * its steps are replayed instead. HWACCEL_ERROR_UNSUPPORTED when there is
 * nothing to watch with (no kernel notifications and no re-scan). */
HWACCEL_API hwaccel_status hwaccel_watch_start(const hwaccel_detect_options* options, uint32_t rescan_interval_ms,
                                               hwaccel_watcher** out, hwaccel_error** error);
/* Waits up to `timeout_ms` (negative: without limit) for the next event and
 * gives it as one line of JSON (free it with hwaccel_string_free); *out is
 * NULL at the timeout, or once the watcher has finished and every event was
 * taken. */
HWACCEL_API hwaccel_status hwaccel_watch_next_event(hwaccel_watcher* watcher, int32_t timeout_ms, char** out,
                                                    size_t* length, hwaccel_error** error);
/* A copy of the registry as of the last change (free it with hwaccel_registry_free). */
HWACCEL_API hwaccel_status hwaccel_watch_registry(const hwaccel_watcher* watcher, hwaccel_registry** out,
                                                  hwaccel_error** error);
/* True once stopped, or once a replayed timeline has been fully acted on. */
HWACCEL_API bool hwaccel_watch_finished(const hwaccel_watcher* watcher);
/* Stops watching (the thread is joined) and frees the watcher; NULL is ignored. */
HWACCEL_API void hwaccel_watch_free(hwaccel_watcher* watcher);

/* ---- sharing the machine's devices (docs/sharing.md; C API version 5) ---- */

typedef struct hwaccel_lease hwaccel_lease;

/* Leases free devices of the machine `options` describe (NULL: this one; a
 * fixture replays one) for this process, as `hwaccel run` does: no other lease
 * holds them and, by telemetry, no other process uses them. `request_json` is
 * an object, every key optional: {"count": 2} or {"device_ids": ["cuda:0/mig:1"]},
 * "min_free_memory": "40G" (or bytes), "max_utilization": 0.5, "same_domain":
 * true, "wait_ms": 60000, "lease_dir", "usage_db", "quota_file", "command".
 * HWACCEL_ERROR_TIMEOUT when not enough devices are free (the message says
 * why each was refused), HWACCEL_ERROR_INVALID_ARGUMENT for an unknown device
 * or key or a quota that refuses, HWACCEL_ERROR_UNSUPPORTED for an unsafe
 * lease directory. The lease holds until hwaccel_lease_free or the process ends. */
HWACCEL_API hwaccel_status hwaccel_reserve(const hwaccel_detect_options* options, const char* request_json, hwaccel_lease** out,
                                           hwaccel_error** error);
/* The lease as JSON (free it with hwaccel_string_free): {"devices": [{"device_id",
 * "identity", "user", "uid", "pid", ...}], "environment": {"CUDA_VISIBLE_DEVICES":
 * "GPU-..."}, "cleared": ["HIP_VISIBLE_DEVICES", ...], "warnings": [...]}: set
 * the environment and unset the cleared variables in the child that uses it. */
HWACCEL_API hwaccel_status hwaccel_lease_json(const hwaccel_lease* lease, char** out, size_t* length, hwaccel_error** error);
/* Releases the lease (its accounting record is closed) and frees it; NULL is ignored. */
HWACCEL_API void hwaccel_lease_free(hwaccel_lease* lease);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HWACCEL_HWACCEL_H */
