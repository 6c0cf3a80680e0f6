// Fuzzes the /proc and cgroup parsers of the CPU detector.
#include <cstddef>
#include <cstdint>
#include <string_view>

import hwaccel;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto mem = hwaccel::parsers::parse_meminfo(text);
  if (mem.total_bytes && *mem.total_bytes == 0 && text.find("MemTotal") == std::string_view::npos) __builtin_trap();
  const auto cpu = hwaccel::parsers::parse_cpuinfo(text);
  for (std::size_t i = 1; i < cpu.isa_features.size(); ++i)
    if (cpu.isa_features[i - 1] >= cpu.isa_features[i]) __builtin_trap();  // sorted and unique
  (void)hwaccel::parsers::parse_cgroup_memory_limit(text);
  return 0;
}
