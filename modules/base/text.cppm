// Small string_view helpers shared by every parser: no allocation, no locale.
module;
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>
export module hwaccel.base:text;

export namespace hwaccel::text {

inline constexpr bool is_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' || c == '\0';
}

/// Removes blanks, line ends and NUL padding (some sysfs snapshots are
/// NUL-padded to the page size) from both ends.
inline constexpr std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

inline constexpr char to_lower(char c) noexcept {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

inline constexpr bool iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (to_lower(a[i]) != to_lower(b[i])) return false;
  return true;
}

/// Identifiers as people type them: case-insensitive, '_' read as '-'
/// ("H100_SXM" is "h100-sxm"). Allocates nothing (planners look up every
/// device of a fleet).
inline constexpr bool same_identifier(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const char x = a[i] == '_' ? '-' : to_lower(a[i]);
    const char y = b[i] == '_' ? '-' : to_lower(b[i]);
    if (x != y) return false;
  }
  return true;
}

/// An identifier as same_identifier compares it (lower case, '_' as '-'):
/// two names are the same identifier when their keys are equal, so a map
/// keyed by it finds a repeated name in one lookup.
inline std::string identifier_key(std::string_view name) {
  std::string key(name);
  for (char& c : key) c = c == '_' ? '-' : to_lower(c);
  return key;
}

/// Case-insensitive substring search.
inline constexpr bool icontains(std::string_view haystack, std::string_view needle) noexcept {
  if (needle.empty()) return true;
  if (needle.size() > haystack.size()) return false;
  for (std::size_t i = 0; i + needle.size() <= haystack.size(); ++i)
    if (iequals(haystack.substr(i, needle.size()), needle)) return true;
  return false;
}

inline std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = to_lower(c);
  return out;
}

/// Splits off the text before the first `sep`; `rest` keeps what follows it.
/// Returns the whole input when there is no separator and empties `rest`.
inline constexpr std::string_view next_token(std::string_view& rest, char sep) noexcept {
  const auto pos = rest.find(sep);
  std::string_view head = rest.substr(0, pos);
  rest = pos == std::string_view::npos ? std::string_view{} : rest.substr(pos + 1);
  return head;
}

/// Next line without its terminator ("\n" or "\r\n").
inline constexpr std::string_view next_line(std::string_view& rest) noexcept {
  std::string_view line = next_token(rest, '\n');
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

/// All lines of a text, terminators removed.
inline std::vector<std::string_view> lines(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) out.push_back(next_line(text));
  return out;
}

/// Splits on a separator, trimming each field.
inline std::vector<std::string_view> split_trimmed(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  if (text.empty()) return out;
  while (true) {
    const auto pos = text.find(sep);
    out.push_back(trim(text.substr(0, pos)));
    if (pos == std::string_view::npos) break;
    text.remove_prefix(pos + 1);
  }
  return out;
}

/// Whitespace-separated words, into `out` (cleared first): a parser of many
/// lines keeps one vector's storage for all of them.
inline void words_into(std::string_view text, std::vector<std::string_view>& out) {
  out.clear();
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && is_space(text[i])) ++i;
    const std::size_t start = i;
    while (i < text.size() && !is_space(text[i])) ++i;
    if (i > start) out.push_back(text.substr(start, i - start));
  }
}

/// Whitespace-separated words.
inline std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> out;
  // Room for a mountinfo or cpuinfo line's words: one allocation instead of
  // one per doubling.
  out.reserve(16);
  words_into(text, out);
  return out;
}

/// Unsigned decimal integer filling the whole (trimmed) text.
inline std::optional<std::uint64_t> parse_u64(std::string_view s, int base = 10) noexcept {
  s = trim(s);
  if (base == 16 && s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  if (s.empty() || s.front() == '-' || s.front() == '+') return std::nullopt;
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value, base);
  if (ec != std::errc{} || ptr != s.data() + s.size()) return std::nullopt;
  return value;
}

/// A number the kernel printed into a name with "%u" (card0, accel1, KFD
/// node 12): decimal digits only, without space, sign or leading zero, so that
/// "0", "00" and "0 " cannot name one object twice.
inline std::optional<std::uint32_t> parse_name_number(std::string_view s) noexcept {
  if (s.empty() || (s.size() > 1 && s.front() == '0')) return std::nullopt;
  std::uint32_t value = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc{} || ptr != s.data() + s.size()) return std::nullopt;
  return value;
}

/// Hexadecimal with or without a 0x prefix ("0x10de", "10DE").
inline std::optional<std::uint64_t> parse_hex(std::string_view s) noexcept { return parse_u64(s, 16); }

inline std::optional<std::int64_t> parse_i64(std::string_view s) noexcept {
  s = trim(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  std::int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc{} || ptr != s.data() + s.size()) return std::nullopt;
  return value;
}

/// Finite decimal number filling the whole (trimmed) text; no locale.
inline std::optional<double> parse_double(std::string_view s) noexcept {
  s = trim(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  double value = 0;
#if defined(_LIBCPP_VERSION) && _LIBCPP_VERSION < 200000
  // libc++ before 20 (the WebAssembly build's) has no floating-point
  // from_chars: strtod reads the same digits, in the only locale WASI has,
  // once anything from_chars would refuse (blanks, hex, words) is refused.
  if (s.size() > 64 || s.find_first_not_of("0123456789.eE+-") != std::string_view::npos) return std::nullopt;
  char digits[65];
  s.copy(digits, s.size());
  digits[s.size()] = '\0';
  char* end = nullptr;
  value = std::strtod(digits, &end);
  if (end != digits + s.size()) return std::nullopt;
#else
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc{} || ptr != s.data() + s.size()) return std::nullopt;
#endif
  if (!(value == value) || value > 1.7e308 || value < -1.7e308) return std::nullopt;
  return value;
}

/// Leading number of a value with a unit ("81559 MiB", "16.0 GT/s PCIe"):
/// the number and the rest, trimmed.
struct NumberWithUnit {
  double value = 0;
  std::string_view unit;
};
inline std::optional<NumberWithUnit> parse_number_with_unit(std::string_view s) noexcept {
  s = trim(s);
  std::size_t end = 0;
  while (end < s.size() && ((s[end] >= '0' && s[end] <= '9') || s[end] == '.' || (end == 0 && (s[end] == '-' || s[end] == '+'))))
    ++end;
  const auto value = parse_double(s.substr(0, end));
  if (!value) return std::nullopt;
  return NumberWithUnit{*value, trim(s.substr(end))};
}

/// Saturating multiply for byte counts built from tool output.
inline constexpr std::optional<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b) noexcept {
  if (a != 0 && b > UINT64_MAX / a) return std::nullopt;
  return a * b;
}

inline constexpr std::uint64_t bytes_per_mib = std::uint64_t{1} << 20;
inline constexpr std::uint64_t bytes_per_gib = std::uint64_t{1} << 30;

/// Bytes in one unit of a memory size: "", "B" and "bytes" are 1; kB/KB/KiB/K
/// are 1024 (as /proc and sysfs mean them); MB/GB/TB (and M/G/T) are taken as
/// the binary units tools print them as. Case-insensitive; nullopt for
/// anything else.
inline std::optional<std::uint64_t> memory_unit_bytes(std::string_view unit) noexcept {
  if (unit.empty() || iequals(unit, "B") || iequals(unit, "bytes")) return std::uint64_t{1};
  if (iequals(unit, "kB") || iequals(unit, "KiB") || iequals(unit, "K")) return std::uint64_t{1} << 10;
  if (iequals(unit, "MB") || iequals(unit, "MiB") || iequals(unit, "M")) return std::uint64_t{1} << 20;
  if (iequals(unit, "GB") || iequals(unit, "GiB") || iequals(unit, "G")) return std::uint64_t{1} << 30;
  if (iequals(unit, "TB") || iequals(unit, "TiB") || iequals(unit, "T")) return std::uint64_t{1} << 40;
  return std::nullopt;
}

/// A parsed number with a memory unit to bytes, rounded; nullopt for a
/// negative value, an unknown unit or more than 2^64 bytes.
inline std::optional<std::uint64_t> memory_size(const NumberWithUnit& n) noexcept {
  if (n.value < 0) return std::nullopt;
  const auto unit = memory_unit_bytes(n.unit);
  if (!unit) return std::nullopt;
  const double bytes = n.value * static_cast<double>(*unit);
  if (bytes >= 1.8e19) return std::nullopt;
  return static_cast<std::uint64_t>(bytes + 0.5);
}

/// Memory size with a binary or decimal unit ("16 GB", "81559 MiB", "512 kB")
/// to bytes, with the units of memory_unit_bytes; nullopt for anything else.
inline std::optional<std::uint64_t> parse_memory_size(std::string_view s) noexcept {
  const auto n = parse_number_with_unit(s);
  return n ? memory_size(*n) : std::nullopt;
}

/// Calls `range(first, last)` for each item of a Linux cpulist ("0-3,8,10-11"
/// gives 0-3, 8-8, 10-11); false on malformed input, absurd ranges, or when
/// `range` returns false (to stop).
template <class Range>
bool for_each_cpulist_range(std::string_view list, Range&& range) {
  list = trim(list);
  std::uint64_t count = 0;
  while (!list.empty()) {
    std::string_view item = trim(next_token(list, ','));
    if (item.empty()) return false;
    const auto dash = item.find('-');
    const auto lo = parse_u64(item.substr(0, dash));
    const auto hi = dash == std::string_view::npos ? lo : parse_u64(item.substr(dash + 1));
    if (!lo || !hi || *hi < *lo || *hi - *lo > 1'000'000) return false;
    count += *hi - *lo + 1;
    if (count > 10'000'000 || !range(*lo, *hi)) return false;
  }
  return true;
}

/// Parses a Linux cpulist ("0-3,8,10-11") into the number of CPUs it names;
/// nullopt on malformed input or absurd ranges.
inline std::optional<std::uint32_t> cpulist_count(std::string_view list) noexcept {
  std::uint64_t count = 0;
  const bool ok = for_each_cpulist_range(list, [&](std::uint64_t lo, std::uint64_t hi) noexcept {
    count += hi - lo + 1;
    return true;
  });
  return ok ? std::optional<std::uint32_t>(static_cast<std::uint32_t>(count)) : std::nullopt;
}

/// Appends the decimal form of an integer.
inline void append_int(std::string& out, std::int64_t v) {
  char buf[24];
  const auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, ptr);
}
inline void append_uint(std::string& out, std::uint64_t v) {
  char buf[24];
  const auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, ptr);
}

/// Permission bits as `ls -l`'s octal form: "0660", "4755".
inline std::string octal_mode(std::uint32_t mode) {
  char buf[8];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, mode & 07777u, 8);
  const std::string digits(buf, end);
  return std::string(4 - std::min<std::size_t>(4, digits.size()), '0') + digits;
}

/// Shortest decimal form that reads back to the same double; "null" is the
/// caller's business (non-finite values are written as 0).
inline void append_double(std::string& out, double v) {
  if (!(v == v) || v > 1.7976931348623157e308 || v < -1.7976931348623157e308) v = 0;
  char buf[32];
  const auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, ptr);
}

namespace detail {
inline void append_piece(std::string& out, std::string_view s) { out.append(s); }
inline void append_piece(std::string& out, const char* s) { out.append(s); }
inline void append_piece(std::string& out, const std::string& s) { out.append(s); }
inline void append_piece(std::string& out, char c) { out.push_back(c); }
inline void append_piece(std::string& out, double v) { append_double(out, v); }
inline void append_piece(std::string& out, float v) { append_double(out, v); }
template <class T>
  requires std::is_integral_v<T>
inline void append_piece(std::string& out, T v) {
  if constexpr (std::is_signed_v<T>) append_int(out, v);
  else append_uint(out, v);
}
// An upper bound of what append_piece writes, so that cat() allocates once.
inline std::size_t piece_size(std::string_view s) noexcept { return s.size(); }
inline std::size_t piece_size(const char* s) noexcept { return std::char_traits<char>::length(s); }
inline std::size_t piece_size(const std::string& s) noexcept { return s.size(); }
inline std::size_t piece_size(char) noexcept { return 1; }
template <class T>
  requires std::is_arithmetic_v<T>
inline std::size_t piece_size(T) noexcept {
  return 24;  // the longest integer or shortest round-trip double
}
}  // namespace detail

/// Concatenates strings and numbers into one message, without a locale.
template <class... Parts>
std::string cat(const Parts&... parts) {
  std::string out;
  out.reserve((detail::piece_size(parts) + ... + 0));
  (detail::append_piece(out, parts), ...);
  return out;
}

/// `digits` lower-case hex digits of `value`, zero-padded (the high digits
/// beyond them dropped): hex_digits(0x2f69, 8) is "00002f69".
inline std::string hex_digits(std::uint64_t value, int digits) {
  constexpr char hex[] = "0123456789abcdef";
  std::string s(static_cast<std::size_t>(digits > 0 ? digits : 0), '0');
  for (int i = digits - 1; i >= 0; --i, value >>= 4) s[static_cast<std::size_t>(i)] = hex[value & 0xf];
  return s;
}
/// Lower-case hex digits of `value`: at least `min_digits`, more when the
/// value needs them (hex_at_least(0x10000, 4) is "10000").
inline std::string hex_at_least(std::uint64_t value, int min_digits) {
  int digits = min_digits > 0 ? min_digits : 1;
  while (digits < 16 && (value >> (4 * digits)) != 0) ++digits;
  return hex_digits(value, digits);
}
/// Four lower-case hex digits: PCI vendor and device ids as pci.ids writes them ("10de").
inline std::string hex4(std::uint16_t v) { return hex_digits(v, 4); }

/// A parsed field kept beyond the text it was read from.
inline std::optional<std::string> owned(std::optional<std::string_view> v) {
  return v ? std::optional<std::string>(std::string(*v)) : std::nullopt;
}

/// Bytes as decimal gigabytes with two decimals ("12.35 GB"): short enough for
/// every rule of a training estimate, and what its messages print.
inline std::string decimal_gb(std::uint64_t bytes) {
  char buf[64];
  const auto [ptr, ec] =
      std::to_chars(buf, buf + sizeof buf, static_cast<double>(bytes) / 1e9, std::chars_format::fixed, 2);
  return (ec == std::errc{} ? std::string(buf, ptr) : std::string("?")) + " GB";
}

/// Shortens a value for inclusion in a message (hostile input can be huge or binary).
/// The items of `names` (text) between `separator`s: "cpu, gpu, npu".
template <class Range>
std::string join(const Range& names, std::string_view separator = ", ") {
  std::string out;
  for (const auto& name : names) {
    if (!out.empty()) out += separator;
    out += name;
  }
  return out;
}

inline std::string excerpt(std::string_view s, std::size_t max = 80) {
  std::string out;
  for (char c : s.substr(0, max)) {
    const auto u = static_cast<unsigned char>(c);
    out.push_back(u >= 0x20 && u < 0x7f ? c : '?');
  }
  if (s.size() > max) out += "...";
  return out;
}

}  // namespace hwaccel::text
