// What isolating a plugin costs: detection of the example plugin's fixture
// machine (tests/plugins/fixture: two devices, four sysfs reads and a tool run
// through the system table) with the plugin in hwaccel-plugin-host, in
// process, and with no plugin at all.
#include <benchmark/benchmark.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

import hwaccel;

namespace {

namespace fs = std::filesystem;
using namespace hwaccel;

// The example test plugin alone in a folder of its own (mode 0755).
struct PluginFolder {
  fs::path dir;
  PluginFolder() {
    const char* built = std::getenv("HWACCEL_TEST_PLUGINS");
    if (!built) return;
    std::string templ = (fs::temp_directory_path() / "hwaccel-plugin-bench.XXXXXX").string();
    if (!::mkdtemp(templ.data())) return;
    dir = templ;
    ::chmod(dir.c_str(), 0755);
    fs::copy_file(fs::path(built) / "example.so", dir / "example.so");
  }
  ~PluginFolder() {
    std::error_code ec;
    if (!dir.empty()) fs::remove_all(dir, ec);
  }
};

const PluginFolder& folder() {
  static const PluginFolder f;
  return f;
}

void detect_with(benchmark::State& state, int mode) {
  const char* source = std::getenv("HWACCEL_SOURCE_DIR");
  auto machine = FixtureSystem::open((fs::path(source ? source : ".") / "tests/plugins/fixture").string());
  if (!machine || folder().dir.empty()) {
    state.SkipWithError("needs HWACCEL_SOURCE_DIR and HWACCEL_TEST_PLUGINS");
    return;
  }
  PluginSettings settings;
  settings.path = folder().dir.string();
  settings.system_folder = false;
  settings.in_process = mode == 1;
  if (const char* host = std::getenv("HWACCEL_PLUGIN_HOST")) settings.host = host;
  DetectBuilder builder;
  if (mode == 2) builder.without_plugins();
  else builder.plugins(settings);
  for (auto _ : state) {
    auto registry = builder.detect(**machine);
    benchmark::DoNotOptimize(registry);
  }
}

}  // namespace

BENCHMARK_CAPTURE(detect_with, isolated, 0)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(detect_with, in_process, 1)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(detect_with, no_plugin, 2)->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
