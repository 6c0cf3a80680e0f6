// Fuzzes the registry JSON reader; what it accepts must write and read back identically.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

import hwaccel;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto registry = hwaccel::registry_from_json(text);
  if (!registry) return 0;
  const std::string once = hwaccel::to_json(*registry);
  const auto reread = hwaccel::registry_from_json(once);
  if (!reread) __builtin_trap();
  if (hwaccel::to_json(*reread) != once) __builtin_trap();
  return 0;
}
