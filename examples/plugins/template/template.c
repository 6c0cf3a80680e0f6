/* A minimal hwaccel plugin to start from (docs/plugins.md, "Walkthrough").
 * It finds the devices of a kernel driver that registers a sysfs class,
 * /sys/class/my_accel/my_accelN/, each with a `name` and a `mem_bytes`
 * attribute, and reports them in the registry's JSON form. Replace the class,
 * the attributes and the descriptor's facts with your driver's. Plain C11;
 * it links nothing of hwaccel's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwaccel/plugin.h>

#define CLASS_DIR "/sys/class/my_accel"

/* Appends `text` to the document as a JSON string (quotes and escapes). */
static int emit_string(const hwaccel_plugin_system* s, const char* text, size_t size) {
  char buf[8];
  if (s->emit(s->context, "\"", 1) != HWACCEL_PLUGIN_OK) return -1;
  for (size_t i = 0; i < size; ++i) {
    const unsigned char c = (unsigned char)text[i];
    if (c == '\n' && i + 1 == size) break; /* sysfs values end with a newline */
    if (c == '"' || c == '\\') {
      buf[0] = '\\';
      buf[1] = (char)c;
      s->emit(s->context, buf, 2);
    } else if (c < 0x20) {
      snprintf(buf, sizeof buf, "\\u%04x", c);
      s->emit(s->context, buf, 6);
    } else {
      s->emit(s->context, (const char*)&text[i], 1);
    }
  }
  return s->emit(s->context, "\"", 1) == HWACCEL_PLUGIN_OK ? 0 : -1;
}

static int detect(const hwaccel_plugin_system* s) {
  const hwaccel_plugin_dir_entry* entries = NULL;
  size_t count = 0;
  unsigned index = 0;
  char path[512];
  char head[160];
  s->emit(s->context, "{\"devices\":[", 12);
  /* No class folder: no device (and no warning: the driver is not loaded). */
  if (s->list_dir(s->context, CLASS_DIR, &entries, &count) == HWACCEL_PLUGIN_OK) {
    for (size_t i = 0; i < count; ++i) {
      hwaccel_plugin_bytes name, memory;
      int truncated = 0;
      snprintf(path, sizeof path, CLASS_DIR "/%s/name", entries[i].name);
      if (s->read_file(s->context, path, 256, &name, &truncated) != HWACCEL_PLUGIN_OK) continue;
      snprintf(head, sizeof head, "%s{\"id\":\"my_accel:%u\",\"backend\":\"plugin\",\"family\":\"npu\",\"index\":%u,\"name\":",
               index ? "," : "", index, index);
      s->emit(s->context, head, strlen(head));
      emit_string(s, name.data, name.size);
      snprintf(path, sizeof path, CLASS_DIR "/%s/mem_bytes", entries[i].name);
      if (s->read_file(s->context, path, 64, &memory, &truncated) == HWACCEL_PLUGIN_OK && memory.size < 32) {
        char digits[32];
        memcpy(digits, memory.data, memory.size);
        digits[memory.size] = '\0';
        char* end = NULL;
        const unsigned long long bytes = strtoull(digits, &end, 10);
        if (end != digits) {
          snprintf(head, sizeof head, ",\"memory_bytes\":%llu", bytes);
          s->emit(s->context, head, strlen(head));
        }
      }
      /* The formats its runtime computes in, for the planner (docs/plugins.md). */
      const char* tail = ",\"properties\":{\"compute_types\":\"int8,fp16\"}}";
      s->emit(s->context, tail, strlen(tail));
      ++index;
    }
  }
  return s->emit(s->context, "],\"warnings\":[]}", 16) == HWACCEL_PLUGIN_OK ? 0 : 1;
}

static const char* const drivers[] = {"my_accel", NULL};
static const char* const device_nodes[] = {"my_accel", NULL};

static const hwaccel_plugin_descriptor descriptor = {
    HWACCEL_PLUGIN_ABI_VERSION,
    "my_accel",                      /* the backend's name: devices are my_accel:N */
    "0.1.0",                         /* this plugin's version */
    "My accelerator (sysfs class my_accel)",
    "My Company",                    /* who makes the devices */
    "npu",                           /* gpu, npu, tpu or asic */
    drivers,                         /* PCI drivers that bind them */
    NULL,                            /* other kernel modules */
    NULL, 0,                         /* PCI vendor:device ids */
    device_nodes,                    /* /dev entry names */
    "MY_ACCEL_VISIBLE_DEVICES",      /* what its runtime reads to choose devices */
    NULL,                            /* tools its detect function runs */
    detect,
};

HWACCEL_PLUGIN_EXPORT const hwaccel_plugin_descriptor* hwaccel_plugin_entry(void) { return &descriptor; }
