// JSON writer: canonical, locale-free, UTF-8 safe.
module;
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <iterator>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
module hwaccel.base;

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

// Whether any byte of `w` may need escaping (a control byte, '"', '\\' or a
// non-ASCII byte); a false positive can only follow a true one, and either
// way the bytes are then looked at one by one.
template <class Word>
constexpr bool may_need_escape(Word w) noexcept {
  constexpr Word ones = static_cast<Word>(~Word{0}) / 0xFF, high = ones * 0x80;
  const auto has_zero_byte = [](Word v) { return static_cast<Word>((v - ones) & ~v & high); };
  const Word below_space = (w - ones * 0x20) & ~w & high;
  return (below_space | has_zero_byte(w ^ (ones * '"')) | has_zero_byte(w ^ (ones * '\\')) | (w & high)) != 0;
}

template <class Word>
Word load(const char* at) noexcept {
  Word w;
  std::memcpy(&w, at, sizeof w);
  return w;
}

template <class Word>
void store(char* at, Word w) noexcept {
  std::memcpy(at, &w, sizeof w);
}

// Copies `s` to `p` when none of its bytes needs escaping and returns the
// end, or returns nullptr. Most strings of a registry (names, ids, versions,
// PCI addresses) are short and plain: they are checked and copied a word at
// a time, the last word overlapping the one before, without a byte loop.
char* copy_if_plain(char* p, std::string_view s) noexcept {
  const char* in = s.data();
  const std::size_t n = s.size();
  if (n >= 8) {
    for (std::size_t i = 0; i + 8 <= n; i += 8)
      if (may_need_escape(load<std::uint64_t>(in + i))) return nullptr;
    const auto last = load<std::uint64_t>(in + n - 8);
    if (may_need_escape(last)) return nullptr;
    for (std::size_t i = 0; i + 8 <= n; i += 8) store(p + i, load<std::uint64_t>(in + i));
    store(p + n - 8, last);
    return p + n;
  }
  if (n >= 4) {
    const auto first = load<std::uint32_t>(in), last = load<std::uint32_t>(in + n - 4);
    if (may_need_escape(first) || may_need_escape(last)) return nullptr;
    store(p, first);
    store(p + n - 4, last);
    return p + n;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (needs_escape(static_cast<unsigned char>(in[i]))) return nullptr;
    p[i] = in[i];
  }
  return p + n;
}

// The general case, kept out of line so that the plain strings' path needs
// few registers.
[[gnu::noinline]] char* escape_bytes(char* p, std::string_view s) noexcept {
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t j = i;
    while (j + 8 <= s.size()) {
      if (may_need_escape(load<std::uint64_t>(s.data() + j))) break;
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

}  // namespace

// The longest escape is \u00XX: six bytes for one.
char* escape_into(char* p, std::string_view s) noexcept {
  *p++ = '"';
  if (char* end = copy_if_plain(p, s)) {
    *end = '"';
    return end + 1;
  }
  return escape_bytes(p, s);
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

namespace {

// "00" to "99": integers are written two digits at a time.
constexpr auto digit_pairs = [] {
  std::array<char, 200> t{};
  for (std::size_t i = 0; i < 100; ++i) {
    t[2 * i] = static_cast<char>('0' + i / 10);
    t[2 * i + 1] = static_cast<char>('0' + i % 10);
  }
  return t;
}();

inline void put_pair(char* p, std::uint32_t v) noexcept { std::memcpy(p, &digit_pairs[2 * v], 2); }

// Exactly four digits of v < 10^4, leading zeros included.
inline void put_four(char* p, std::uint32_t v) noexcept {
  put_pair(p, v / 100);
  put_pair(p + 2, v % 100);
}

// Exactly eight digits of v < 10^8.
inline void put_eight(char* p, std::uint32_t v) noexcept {
  put_four(p, v / 10000);
  put_four(p + 4, v % 10000);
}

// v < 10^4 without leading zeros.
inline char* put_up_to_four(char* p, std::uint32_t v) noexcept {
  if (v < 10) {
    *p = static_cast<char>('0' + v);
    return p + 1;
  }
  if (v < 100) {
    put_pair(p, v);
    return p + 2;
  }
  if (v < 1000) {
    *p = static_cast<char>('0' + v / 100);
    put_pair(p + 1, v % 100);
    return p + 3;
  }
  put_four(p, v);
  return p + 4;
}

// v < 10^8 without leading zeros.
inline char* put_up_to_eight(char* p, std::uint32_t v) noexcept {
  if (v < 10000) return put_up_to_four(p, v);
  p = put_up_to_four(p, v / 10000);
  put_four(p, v % 10000);
  return p + 4;
}

// The shortest text that reads back as `v`, as std::to_chars(p, end, v)
// writes it, for the values a registry mostly holds (watts, link speeds,
// bandwidths with a few decimals), without the general algorithm: it tries
// 0 to 4 decimals and keeps the first that reads back. Between 1 and 1e5 in
// magnitude fixed notation is never longer than scientific, and a value with
// fewer than 1e9 in numerator and a power of ten below 1e15 in denominator
// is read back exactly by one correctly rounded division, as strtod does.
// Returns nullptr when `v` needs the general algorithm.
char* few_decimals(char* p, double v) noexcept {
  const double magnitude = v < 0 ? -v : v;
  if (!(magnitude >= 1 && magnitude < 1e5)) {
    if (v != 0 || std::signbit(v)) return nullptr;
    *p = '0';
    return p + 1;
  }
  constexpr double scale[] = {1, 10, 100, 1000, 10000};
  for (std::size_t decimals = 0; decimals < std::size(scale); ++decimals) {
    const auto scaled = static_cast<std::int64_t>(magnitude * scale[decimals] + 0.5);
    if (static_cast<double>(scaled) / scale[decimals] != magnitude) continue;
    if (v < 0) *p++ = '-';
    if (decimals == 0) return put_up_to_eight(p, static_cast<std::uint32_t>(scaled));
    const auto unit = static_cast<std::int64_t>(scale[decimals]);
    p = put_up_to_eight(p, static_cast<std::uint32_t>(scaled / unit));
    *p++ = '.';
    auto fraction = scaled % unit;
    for (std::size_t i = decimals; i-- > 0;) {
      p[i] = static_cast<char>('0' + fraction % 10);
      fraction /= 10;
    }
    return p + decimals;
  }
  return nullptr;
}

}  // namespace

char* format_number(char* p, std::uint64_t v) noexcept {
  constexpr std::uint64_t e8 = 100'000'000;
  if (v < e8) return put_up_to_eight(p, static_cast<std::uint32_t>(v));
  if (v < e8 * e8) {
    p = put_up_to_eight(p, static_cast<std::uint32_t>(v / e8));
    put_eight(p, static_cast<std::uint32_t>(v % e8));
    return p + 8;
  }
  p = put_up_to_four(p, static_cast<std::uint32_t>(v / (e8 * e8)));  // at most 1844
  v %= e8 * e8;
  put_eight(p, static_cast<std::uint32_t>(v / e8));
  put_eight(p + 8, static_cast<std::uint32_t>(v % e8));
  return p + 16;
}

char* format_number(char* p, std::int64_t v) noexcept {
  if (v >= 0) return format_number(p, static_cast<std::uint64_t>(v));
  *p = '-';
  return format_number(p + 1, ~static_cast<std::uint64_t>(v) + 1);  // -INT64_MIN wraps to its magnitude
}

char* format_number(char* p, double v) noexcept {
  if (!(v == v) || v > 1.7976931348623157e308 || v < -1.7976931348623157e308) {
    std::memcpy(p, "null", 4);
    return p + 4;
  }
  if (char* end = few_decimals(p, v)) return end;
  // Shortest form that reads back to the same double, as text::append_double.
  return std::to_chars(p, p + 32, v).ptr;
}

Writer& Writer::null() {
  before_value();
  char* p = room(4);
  std::memcpy(p, "null", 4);
  commit(p + 4);
  return *this;
}

}  // namespace hwaccel::json
