// Registry JSON write and read at 13 and 129 devices.
#include <benchmark/benchmark.h>

#include <string>

import hwaccel;

namespace {

using namespace hwaccel;

// A CPU plus `gpus` H100-like devices with the fields a real detection fills.
AcceleratorRegistry registry_of(int gpus) {
  Inventory inv;
  DeviceProfile cpu;
  cpu.id = "cpu:0";
  cpu.name = "Intel(R) Xeon(R) Platinum 8480+";
  cpu.vendor = "Intel";
  cpu.memory_bytes = 2164088897536ull;
  cpu.memory_free_bytes = 2135282630656ull;
  cpu.architecture = "x86_64";
  cpu.compute_units = 112;
  inv.devices.push_back(cpu);
  for (int i = 0; i < gpus; ++i) {
    DeviceProfile d;
    d.backend = Backend::cuda;
    d.family = Family::gpu;
    d.index = static_cast<std::uint32_t>(i);
    d.id = device_id(Backend::cuda, d.index);
    d.name = "NVIDIA H100 80GB HBM3";
    d.vendor = "NVIDIA";
    d.uuid = "GPU-4d6b1a5c-7e1f-2b9c-8a3d-" + std::to_string(100000000000 + i);
    d.pci_bus_id = PciAddress{0, static_cast<std::uint8_t>(0x18 + i % 200), 0, 0}.to_string();
    d.numa_node = i % 2;
    d.memory_bytes = 85520809984ull;
    d.memory_free_bytes = 84987215872ull;
    d.memory_used_bytes = 533594112ull;
    d.driver_version = "565.57.01";
    d.compute_capability = "9.0";
    d.architecture = "Hopper";
    d.pcie = PcieLink{32.0, 32.0, 16, 16};
    d.power_watts = 71.2;
    d.temperature_c = 31;
    d.utilization_percent = 0;
    d.runtime_index = d.index;
    inv.devices.push_back(std::move(d));
  }
  return AcceleratorRegistry(std::move(inv));
}

void write_json(benchmark::State& state) {
  const auto registry = registry_of(static_cast<int>(state.range(0)) - 1);
  std::size_t bytes = 0;
  for (auto _ : state) {
    auto text = to_json(registry);
    bytes = text.size();
    benchmark::DoNotOptimize(text);
  }
  state.counters["bytes"] = static_cast<double>(bytes);
}

void read_json(benchmark::State& state) {
  const std::string text = to_json(registry_of(static_cast<int>(state.range(0)) - 1));
  for (auto _ : state) {
    auto registry = registry_from_json(text);
    benchmark::DoNotOptimize(registry);
  }
  state.counters["bytes"] = static_cast<double>(text.size());
}

}  // namespace

BENCHMARK(write_json)->Arg(13)->Arg(129)->Unit(benchmark::kMicrosecond);
BENCHMARK(read_json)->Arg(13)->Arg(129)->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
