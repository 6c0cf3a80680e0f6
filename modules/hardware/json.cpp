// JSON writer: canonical, locale-free, UTF-8 safe.
module;
#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
module hwaccel.hardware;

namespace hwaccel::json {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 if invalid.
std::size_t utf8_sequence_length(std::string_view s, std::size_t i) noexcept {
  const auto c0 = static_cast<unsigned char>(s[i]);
  auto cont = [&](std::size_t k) {
    return i + k < s.size() && (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
  };
  if (c0 < 0x80) return 1;
  if (c0 >= 0xC2 && c0 <= 0xDF) return cont(1) ? 2 : 0;
  if (c0 >= 0xE0 && c0 <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    const auto c1 = static_cast<unsigned char>(s[i + 1]);
    if (c0 == 0xE0 && c1 < 0xA0) return 0;  // overlong
    if (c0 == 0xED && c1 > 0x9F) return 0;  // surrogates
    return 3;
  }
  if (c0 >= 0xF0 && c0 <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    const auto c1 = static_cast<unsigned char>(s[i + 1]);
    if (c0 == 0xF0 && c1 < 0x90) return 0;
    if (c0 == 0xF4 && c1 > 0x8F) return 0;
    return 4;
  }
  return 0;
}

// Bytes that end a run of plain ASCII, looked up by table: strings are
// written at a byte per step without a chain of comparisons.
constexpr auto escape_table = [] {
  std::array<bool, 256> t{};
  for (std::size_t c = 0; c < t.size(); ++c) t[c] = c < 0x20 || c == '"' || c == '\\' || c >= 0x80;
  return t;
}();

constexpr bool needs_escape(unsigned char c) noexcept { return escape_table[c]; }

// Whether any of the 8 bytes in `w` may need escaping (a control byte, '"',
// '\\' or a non-ASCII byte); a false positive can only follow a true one, and
// either way the bytes are then looked at one by one.
constexpr bool word_may_need_escape(std::uint64_t w) noexcept {
  constexpr std::uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
  const auto has_zero_byte = [](std::uint64_t v) { return (v - ones) & ~v & high; };
  const std::uint64_t below_space = (w - ones * 0x20) & ~w & high;
  return (below_space | has_zero_byte(w ^ (ones * '"')) | has_zero_byte(w ^ (ones * '\\')) | (w & high)) != 0;
}

}  // namespace

// The longest escape is \u00XX: six bytes for one.
char* escape_into(char* p, std::string_view s) noexcept {
  *p++ = '"';
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t j = i;
    while (j + 8 <= s.size()) {
      std::uint64_t word;
      std::memcpy(&word, s.data() + j, sizeof word);
      if (word_may_need_escape(word)) break;
      j += 8;
    }
    while (j < s.size() && !needs_escape(static_cast<unsigned char>(s[j]))) ++j;
    std::memcpy(p, s.data() + i, j - i);
    p += j - i;
    i = j;
    if (i >= s.size()) break;
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const std::size_t n = utf8_sequence_length(s, i);
      if (n == 0) {
        std::memcpy(p, "\xef\xbf\xbd", 3);  // U+FFFD
        p += 3;
        ++i;
      } else {
        std::memcpy(p, s.data() + i, n);
        p += n;
        i += n;
      }
      continue;
    }
    *p++ = '\\';
    switch (c) {
      case '"': *p++ = '"'; break;
      case '\\': *p++ = '\\'; break;
      case '\n': *p++ = 'n'; break;
      case '\r': *p++ = 'r'; break;
      case '\t': *p++ = 't'; break;
      case '\b': *p++ = 'b'; break;
      case '\f': *p++ = 'f'; break;
      default: {
        constexpr char hex[] = "0123456789abcdef";
        const char esc[] = {'u', '0', '0', hex[c >> 4], hex[c & 0xf]};
        std::memcpy(p, esc, sizeof esc);
        p += sizeof esc;
      }
    }
    ++i;
  }
  *p++ = '"';
  return p;
}

void append_string(std::string& out, std::string_view s) {
  const std::size_t at = out.size();
  out.resize(at + s.size() * 6 + 2);
  out.resize(static_cast<std::size_t>(escape_into(out.data() + at, s) - out.data()));
}

Writer::Writer(bool pretty, std::size_t reserve) : pretty_(pretty) { out_.resize(reserve); }

void Writer::grow(std::size_t n) { out_.resize(std::max(out_.size() * 2, size_ + n + 256)); }

void Writer::newline() {
  const auto indent = static_cast<std::size_t>(depth_) * 2;
  char* p = room(indent + 1);
  *p = '\n';
  std::memset(p + 1, ' ', indent);
  commit(p + 1 + indent);
}

Writer& Writer::key(std::string_view name) {
  if (!first_) put(',');
  first_ = false;
  if (pretty_) newline();
  char* p = escape_into(room(name.size() * 6 + 4), name);
  *p++ = ':';
  if (pretty_) *p++ = ' ';
  commit(p);
  after_key_ = true;
  return *this;
}

Writer& Writer::value(double v) {
  before_value();
  char* p = room(32);
  if (!(v == v) || v > 1.7976931348623157e308 || v < -1.7976931348623157e308) {
    std::memcpy(p, "null", 4);
    commit(p + 4);
  } else {
    // Shortest form that reads back to the same double, as text::append_double.
    commit(std::to_chars(p, p + 32, v).ptr);
  }
  return *this;
}

Writer& Writer::null() {
  before_value();
  char* p = room(4);
  std::memcpy(p, "null", 4);
  commit(p + 4);
  return *this;
}

}  // namespace hwaccel::json
