// What reading the built-in data costs: the device-spec table
// (data/device-specs.json) as the library reads it on first use, the JSON
// parse alone, and the same text read as a user's file would be (which also
// checks every entry against the built-in table).
#include <benchmark/benchmark.h>

import hwaccel;
import hwaccel.json_fields;

namespace {

using namespace hwaccel;

void BM_DeviceSpecsJsonParse(benchmark::State& state) {
  const auto text = builtin_device_specs_json();
  for (auto _ : state) benchmark::DoNotOptimize(json::Document::parse(text, "built-in device-specs.json"));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}

void BM_DeviceSpecsBuiltinRead(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(parse_builtin_device_specs());
  state.counters["entries"] = static_cast<double>(device_specs().size());
}

void BM_DeviceSpecsAsUserFile(benchmark::State& state) {
  const auto text = builtin_device_specs_json();
  (void)device_specs();  // the table the file's entries are checked against, read once
  for (auto _ : state) benchmark::DoNotOptimize(parse_device_specs(text, "device-specs.json"));
}

}  // namespace

BENCHMARK(BM_DeviceSpecsJsonParse)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DeviceSpecsBuiltinRead)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DeviceSpecsAsUserFile)->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
