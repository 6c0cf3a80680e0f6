// Fuzzes the shared text primitives every parser is built on.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

import hwaccel;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hwaccel;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)text::parse_memory_size(text);
  (void)text::cpulist_count(text);
  (void)text::parse_double(text);
  (void)parse_link_speed(text);
  if (const auto pci = PciAddress::parse(text)) {
    const auto again = PciAddress::parse(pci->to_string());
    if (!again || *again != *pci) __builtin_trap();
  }
  std::string json;
  json::append_string(json, text);
  if (json.size() < 2 || json.front() != '"' || json.back() != '"') __builtin_trap();
  std::string_view rest = text;
  std::size_t lines = 0;
  while (!rest.empty() && lines < 1'000'000) {
    (void)text::next_line(rest);
    ++lines;
  }
  return 0;
}
