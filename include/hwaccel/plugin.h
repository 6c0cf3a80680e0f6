/* The hwaccel plugin ABI: how a third-party backend adds its devices to
 * hwaccel without being part of it (docs/plugins.md).
 *
 * A plugin is a shared object in a plugin folder ($HWACCEL_PLUGIN_PATH, then
 * $libdir/hwaccel/plugins) that exports one C function, hwaccel_plugin_entry,
 * returning a descriptor: its name, the backend's facts and a detect
 * function. The detect function reads the machine only through the
 * hwaccel_plugin_system it is given (files, folders, links, file status,
 * environment variables, tools run with a deadline) and writes what it found
 * as one JSON document through that system's emit():
 *
 *   {"devices": [<registry device objects>], "warnings": [<registry warnings>]}
 *
 * in the registry's own form (docs/registry.schema.json). Because every read
 * goes through the system, a fixture replays a plugin's machine exactly as it
 * replays a built-in backend's, and `hwaccel capture` records what it read.
 *
 * By default a plugin runs in a child process (hwaccel-plugin-host) whose
 * every system call is answered by hwaccel over a pipe: a plugin that
 * crashes, hangs or floods its output becomes a warning, never hwaccel's
 * failure. The header needs nothing but the C standard library, and a plugin
 * links nothing of hwaccel's.
 */
#ifndef HWACCEL_PLUGIN_H
#define HWACCEL_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI this header describes. A plugin sets its descriptor's abi_version to
 * it; hwaccel refuses a plugin built for another version, naming both. */
#define HWACCEL_PLUGIN_ABI_VERSION 1u

#if defined(_WIN32)
#define HWACCEL_PLUGIN_EXPORT __declspec(dllexport)
#else
#define HWACCEL_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* What a system call returns. */
typedef enum hwaccel_plugin_status {
  HWACCEL_PLUGIN_OK = 0,
  HWACCEL_PLUGIN_NOT_FOUND = 1,         /* no such file, folder, link, variable or tool */
  HWACCEL_PLUGIN_PERMISSION_DENIED = 2, /* the file or tool may not be read or run */
  HWACCEL_PLUGIN_IO_ERROR = 3,          /* it exists but could not be read */
  HWACCEL_PLUGIN_TIMEOUT = 4,           /* the tool did not finish before its deadline and was killed */
  HWACCEL_PLUGIN_NOT_CAPTURED = 5,      /* fixture replay: the capture does not hold what was asked */
  HWACCEL_PLUGIN_TOO_LARGE = 6,         /* emit(): the document passed the output cap; stop writing */
  HWACCEL_PLUGIN_FAILED = 7             /* anything else (a bad argument, a tool that could not start) */
} hwaccel_plugin_status;

/* Bytes owned by hwaccel: valid until the plugin's detect function returns.
 * Not NUL-terminated unless said; `size` is their length. */
typedef struct hwaccel_plugin_bytes {
  const char* data;
  size_t size;
} hwaccel_plugin_bytes;

/* The kind of a file, as stat() tells it. */
typedef enum hwaccel_plugin_file_type {
  HWACCEL_PLUGIN_FILE_REGULAR = 0,
  HWACCEL_PLUGIN_FILE_DIRECTORY = 1,
  HWACCEL_PLUGIN_FILE_SYMLINK = 2,
  HWACCEL_PLUGIN_FILE_CHAR_DEVICE = 3,
  HWACCEL_PLUGIN_FILE_BLOCK_DEVICE = 4,
  HWACCEL_PLUGIN_FILE_FIFO = 5,
  HWACCEL_PLUGIN_FILE_SOCKET = 6,
  HWACCEL_PLUGIN_FILE_UNKNOWN = 7
} hwaccel_plugin_file_type;

/* One entry of a folder. `name` is NUL-terminated and owned by hwaccel. */
typedef struct hwaccel_plugin_dir_entry {
  const char* name;
  hwaccel_plugin_file_type type;
} hwaccel_plugin_dir_entry;

/* What status() says about a path. */
typedef struct hwaccel_plugin_file_status {
  hwaccel_plugin_file_type type;
  uint64_t size;
  uint32_t mode; /* permission bits (07777) */
  uint32_t uid;
  uint32_t gid;
} hwaccel_plugin_file_status;

/* How a tool run ended. out and err are owned by hwaccel. */
typedef struct hwaccel_plugin_tool_result {
  hwaccel_plugin_bytes out;
  hwaccel_plugin_bytes err;
  int exit_code;     /* valid when signal is 0 */
  int signal;        /* the signal that killed the tool, else 0 */
  int out_truncated; /* non-zero when stdout passed its cap and was cut */
  int err_truncated;
} hwaccel_plugin_tool_result;

/* The machine, as a plugin may read it. Every function takes `context` as
 * its first argument and returns a hwaccel_plugin_status. Paths are absolute
 * ("/sys/class/..."), as on the real machine, and NUL-terminated. Calls are
 * made from the thread that called detect, one at a time. */
typedef struct hwaccel_plugin_system {
  /* The ABI version of this table (HWACCEL_PLUGIN_ABI_VERSION). */
  uint32_t abi_version;
  void* context;

  /* Reads at most `max_bytes` of a regular file (0: hwaccel's default cap, 1
   * MiB); *truncated is set non-zero when the file is longer. FIFOs, sockets
   * and device nodes are refused (FAILED) without being opened. */
  int (*read_file)(void* context, const char* path, size_t max_bytes, hwaccel_plugin_bytes* content,
                   int* truncated);
  /* The entries of a folder, "." and ".." excluded, sorted by name. */
  int (*list_dir)(void* context, const char* path, const hwaccel_plugin_dir_entry** entries, size_t* count);
  /* The target of a symbolic link, as stored. */
  int (*read_link)(void* context, const char* path, hwaccel_plugin_bytes* target);
  /* stat() of a path, following links when `follow_symlinks` is non-zero. */
  int (*status)(void* context, const char* path, int follow_symlinks, hwaccel_plugin_file_status* status);
  /* An environment variable of the detecting process (NOT_FOUND when unset). */
  int (*env)(void* context, const char* name, hwaccel_plugin_bytes* value);
  /* Runs a tool without a shell: argv is NULL-terminated and argv[0] a bare
   * name looked up on PATH. `timeout_ms` 0 takes hwaccel's tool deadline
   * (--timeout-ms); a longer one is cut to it. Output is capped as vendor
   * tools' is. A non-zero exit is OK with result->exit_code set. */
  int (*run)(void* context, const char* const* argv, uint32_t timeout_ms, hwaccel_plugin_tool_result* result);
  /* Appends bytes to the plugin's result document. TOO_LARGE once the
   * document passes the output cap: what was written is discarded and the
   * plugin should return. */
  int (*emit)(void* context, const char* data, size_t size);
  /* What the last failed call of this system said, NUL-terminated; "" when
   * none failed. */
  const char* (*last_error)(void* context);
} hwaccel_plugin_system;

/* A PCI function the backend's driver binds: vendor and device id (device 0
 * for any of the vendor's). */
typedef struct hwaccel_plugin_pci_id {
  uint16_t vendor;
  uint16_t device;
} hwaccel_plugin_pci_id;

/* What a plugin is. The first two members keep their place in every ABI
 * version, so that hwaccel can name a plugin it refuses. Lists are
 * NULL-terminated arrays of NUL-terminated strings, or NULL for none. The
 * descriptor and everything it points to must stay valid while the plugin is
 * loaded (static storage). */
typedef struct hwaccel_plugin_descriptor {
  uint32_t abi_version; /* HWACCEL_PLUGIN_ABI_VERSION */
  /* The backend's name: 1-32 of [a-z0-9_], starting with a letter, not a
   * built-in backend's ("tenstorrent"). Its devices' ids are "NAME:N". */
  const char* name;
  const char* version;     /* the plugin's own version ("1.0.0") */
  const char* description; /* one line: what it detects */
  const char* vendor;      /* who makes the devices ("Tenstorrent") */
  /* The family of its devices: "gpu", "npu", "tpu" or "asic" (a device
   * object may say otherwise for itself). */
  const char* family;
  const char* const* drivers;        /* PCI drivers that bind its devices ("tenstorrent") */
  const char* const* kernel_modules; /* other kernel modules that concern it */
  const hwaccel_plugin_pci_id* pci_ids;
  size_t pci_id_count;
  const char* const* device_nodes; /* /dev entry names or prefixes ("tenstorrent") */
  /* The variable its runtime reads to choose devices by index
   * ("TT_VISIBLE_DEVICES"); NULL for none. hwaccel marks the devices it
   * leaves out as not visible, as it does for CUDA_VISIBLE_DEVICES. */
  const char* visibility_variable;
  const char* const* tools; /* tools its detect function may run ("tt-smi") */
  /* Finds the devices: reads through `system`, writes the document through
   * system->emit. Returns 0, or non-zero when it could not look (a warning
   * then says so; what it emitted is still read). */
  int (*detect)(const hwaccel_plugin_system* system);
} hwaccel_plugin_descriptor;

/* The entry point a plugin exports, called once per load. */
typedef const hwaccel_plugin_descriptor* (*hwaccel_plugin_entry_fn)(void);
#define HWACCEL_PLUGIN_ENTRY_NAME "hwaccel_plugin_entry"

HWACCEL_PLUGIN_EXPORT const hwaccel_plugin_descriptor* hwaccel_plugin_entry(void);

#ifdef __cplusplus
}
#endif

#endif /* HWACCEL_PLUGIN_H */
