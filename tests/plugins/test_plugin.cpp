// Plugins the tests load (tests/unit/plugin_test.cpp), one behaviour each,
// chosen at build time by TEST_PLUGIN: a well-behaved one that reads its
// machine through the system table, and hostile ones that crash, hang, flood
// their output, speak another ABI, print nonsense or claim another backend's
// device. Each is a warning or a refusal, never hwaccel's failure.
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>

#include "hwaccel/plugin.h"

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

namespace {

int emit(const hwaccel_plugin_system* s, const std::string& text) { return s->emit(s->context, text.data(), text.size()); }

std::string text_of(hwaccel_plugin_bytes b) {
  std::string t(b.data, b.size);
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  return t;
}

// example_accel: /sys/class/example_accel/accelN/{name,memory_bytes}, the
// driver version from `example-smi --version`, EXAMPLE_VISIBLE_DEVICES.
[[maybe_unused]] int detect_example(const hwaccel_plugin_system* s) {
  const hwaccel_plugin_dir_entry* entries = nullptr;
  std::size_t count = 0;
  std::string devices;
  std::string warnings;
  std::string driver;
  const char* argv[] = {"example-smi", "--version", nullptr};
  hwaccel_plugin_tool_result run{};
  if (s->run(s->context, argv, 0, &run) == HWACCEL_PLUGIN_OK && run.exit_code == 0) driver = text_of(run.out);
  else warnings = std::string(R"({"backend":"example_accel","kind":"tool_failed","message":"example-smi: )") + s->last_error(s->context) + "\"}";
  if (s->list_dir(s->context, "/sys/class/example_accel", &entries, &count) != HWACCEL_PLUGIN_OK) return 0;
  for (std::size_t i = 0; i < count; ++i) {
    const std::string dir = std::string("/sys/class/example_accel/") + entries[i].name;
    hwaccel_plugin_bytes name{}, memory{};
    int truncated = 0;
    if (s->read_file(s->context, (dir + "/name").c_str(), 0, &name, &truncated) != HWACCEL_PLUGIN_OK) continue;
    std::string device = "{\"id\":\"example_accel:" + std::to_string(i) + "\",\"backend\":\"plugin\",\"family\":\"npu\",\"index\":" +
                         std::to_string(i) + ",\"name\":\"" + text_of(name) + "\"";
    if (s->read_file(s->context, (dir + "/memory_bytes").c_str(), 0, &memory, &truncated) == HWACCEL_PLUGIN_OK)
      device += ",\"memory_bytes\":" + text_of(memory);
    if (!driver.empty()) device += ",\"driver_version\":\"" + driver + "\"";
    device += ",\"properties\":{\"compute_types\":\"int8,fp16\"}}";
    devices += (devices.empty() ? "" : ",") + device;
  }
  return emit(s, "{\"devices\":[" + devices + "],\"warnings\":[" + warnings + "]}");
}

[[maybe_unused]] int detect_crash(const hwaccel_plugin_system*) {
  std::raise(SIGSEGV);
  return 0;
}

[[maybe_unused]] int detect_hang(const hwaccel_plugin_system*) {
  for (volatile unsigned long spin = 0;; spin = spin + 1) {
  }
}

// A gibibyte of JSON, a mebibyte at a time, whatever emit() answers.
[[maybe_unused]] int detect_flood(const hwaccel_plugin_system* s) {
  const std::string chunk(std::size_t{1} << 20, ' ');
  emit(s, "{\"devices\":[");
  for (int i = 0; i < 1024; ++i) emit(s, chunk);
  return emit(s, "]}");
}

[[maybe_unused]] int detect_garbage(const hwaccel_plugin_system* s) { return emit(s, "{\"devices\": [ {\"id\": "); }

[[maybe_unused]] int detect_impostor(const hwaccel_plugin_system* s) {
  return emit(s, R"({"devices":[{"id":"cuda:0","backend":"cuda","family":"gpu","index":0,"name":"NVIDIA H100"},)"
                 R"({"id":"impostor:0","backend":"plugin","family":"cpu","index":0,"name":"Not a CPU"}]})");
}

#if defined(TEST_PLUGIN_EXAMPLE)
constexpr auto detect = &detect_example;
constexpr const char* name = "example_accel";
#elif defined(TEST_PLUGIN_CRASH)
constexpr auto detect = &detect_crash;
constexpr const char* name = "crash";
#elif defined(TEST_PLUGIN_HANG)
constexpr auto detect = &detect_hang;
constexpr const char* name = "hang";
#elif defined(TEST_PLUGIN_FLOOD)
constexpr auto detect = &detect_flood;
constexpr const char* name = "flood";
#elif defined(TEST_PLUGIN_WRONG_ABI)
constexpr auto detect = &detect_example;
constexpr const char* name = "wrong_abi";
#elif defined(TEST_PLUGIN_GARBAGE)
constexpr auto detect = &detect_garbage;
constexpr const char* name = "garbage";
#elif defined(TEST_PLUGIN_IMPOSTOR)
constexpr auto detect = &detect_impostor;
constexpr const char* name = "impostor";
#endif

#if defined(TEST_PLUGIN_WRONG_ABI)
constexpr std::uint32_t abi = 99;
#else
constexpr std::uint32_t abi = HWACCEL_PLUGIN_ABI_VERSION;
#endif

const char* const drivers[] = {"example_accel", nullptr};
const char* const tools[] = {"example-smi", nullptr};
const hwaccel_plugin_pci_id pci_ids[] = {{0x1e52, 0}};
const hwaccel_plugin_descriptor descriptor{abi,     name,    "1.0.0", "test plugin (" STRINGIFY(TEST_PLUGIN_KIND) ")",
                                           "Example", "npu", drivers, nullptr,
                                           pci_ids, 1,       nullptr, "EXAMPLE_VISIBLE_DEVICES",
                                           tools,   detect};

}  // namespace

extern "C" HWACCEL_PLUGIN_EXPORT const hwaccel_plugin_descriptor* hwaccel_plugin_entry(void) { return &descriptor; }
