// Fuzzes fixture.json parsing; a manifest that parses must write and read back identically.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

import hwaccel;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto manifest = hwaccel::parse_fixture_manifest(text);
  if (!manifest) return 0;
  const std::string written = hwaccel::write_fixture_manifest(*manifest);
  const auto again = hwaccel::parse_fixture_manifest(written);
  if (!again) __builtin_trap();
  if (hwaccel::write_fixture_manifest(*again) != written) __builtin_trap();
  if (again->commands.size() != manifest->commands.size()) __builtin_trap();
  return 0;
}
