// JSON writer: canonical, locale-free, UTF-8 safe.
module;
#include <array>
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

void append_string(std::string& out, std::string_view s) {
  out.push_back('"');
  std::size_t i = 0;
  while (i < s.size()) {
    // Copy the longest run of plain ASCII in one go.
    std::size_t j = i;
    while (j + 8 <= s.size()) {
      std::uint64_t word;
      std::memcpy(&word, s.data() + j, sizeof word);
      if (word_may_need_escape(word)) break;
      j += 8;
    }
    while (j < s.size() && !needs_escape(static_cast<unsigned char>(s[j]))) ++j;
    out.append(s.data() + i, j - i);
    i = j;
    if (i >= s.size()) break;
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const std::size_t n = utf8_sequence_length(s, i);
      if (n == 0) {
        out.append("\xef\xbf\xbd");  // U+FFFD as UTF-8, so output reads back unchanged
        ++i;
      } else {
        out.append(s.data() + i, n);
        i += n;
      }
      continue;
    }
    switch (c) {
      case '"': out.append("\\\""); break;
      case '\\': out.append("\\\\"); break;
      case '\n': out.append("\\n"); break;
      case '\r': out.append("\\r"); break;
      case '\t': out.append("\\t"); break;
      case '\b': out.append("\\b"); break;
      case '\f': out.append("\\f"); break;
      default: {
        constexpr char hex[] = "0123456789abcdef";
        const char esc[] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xf]};
        out.append(esc, sizeof esc);
      }
    }
    ++i;
  }
  out.push_back('"');
}

Writer::Writer(bool pretty, std::size_t reserve) : pretty_(pretty) { out_.reserve(reserve); }

void Writer::newline() {
  out_.push_back('\n');
  out_.append(static_cast<std::size_t>(depth_) * 2, ' ');
}

void Writer::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (depth_ == 0) return;
  if (!first_) out_.push_back(',');
  first_ = false;
  if (pretty_) newline();
}

Writer& Writer::begin_object() {
  before_value();
  out_.push_back('{');
  ++depth_;
  first_ = true;
  return *this;
}

Writer& Writer::end_object() {
  --depth_;
  if (pretty_ && !first_) newline();
  out_.push_back('}');
  first_ = false;
  return *this;
}

Writer& Writer::begin_array() {
  before_value();
  out_.push_back('[');
  ++depth_;
  first_ = true;
  return *this;
}

Writer& Writer::end_array() {
  --depth_;
  if (pretty_ && !first_) newline();
  out_.push_back(']');
  first_ = false;
  return *this;
}

Writer& Writer::key(std::string_view name) {
  if (!first_) out_.push_back(',');
  first_ = false;
  if (pretty_) newline();
  append_string(out_, name);
  out_.push_back(':');
  if (pretty_) out_.push_back(' ');
  after_key_ = true;
  return *this;
}

Writer& Writer::value(std::string_view v) {
  before_value();
  append_string(out_, v);
  return *this;
}

Writer& Writer::value(bool v) {
  before_value();
  out_.append(v ? "true" : "false");
  return *this;
}

Writer& Writer::value(std::int64_t v) {
  before_value();
  text::append_int(out_, v);
  return *this;
}

Writer& Writer::value(std::uint64_t v) {
  before_value();
  text::append_uint(out_, v);
  return *this;
}

Writer& Writer::value(double v) {
  before_value();
  if (!(v == v) || v > 1.7976931348623157e308 || v < -1.7976931348623157e308) {
    out_.append("null");
  } else {
    text::append_double(out_, v);
  }
  return *this;
}

Writer& Writer::null() {
  before_value();
  out_.append("null");
  return *this;
}

}  // namespace hwaccel::json
