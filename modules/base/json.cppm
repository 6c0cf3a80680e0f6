// Canonical JSON output: fixed field order, no locale, always valid UTF-8.
module;
#include <cstdint>
#include <concepts>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
export module hwaccel.base:json;

export namespace hwaccel::json {

/// A value the Writer writes as a JSON array: a container of values, not text.
template <class R>
concept Sequence = requires(const R& r) {
  r.begin();
  r.end();
} && !std::is_convertible_v<const R&, std::string_view>;

/// A value the Writer writes as a JSON object: a container of (key, value)
/// pairs whose keys are text, such as std::map<std::string, T>.
template <class M>
concept Mapping = Sequence<M> && requires(const M& m) {
  { m.begin()->first } -> std::convertible_to<std::string_view>;
  m.begin()->second;
};

/// Appends `text` as a JSON string literal, quotes included. Control
/// characters are escaped and bytes that are not valid UTF-8 become U+FFFD,
/// so hostile tool output can never produce invalid JSON.
void append_string(std::string& out, std::string_view text);

/// Writes `text` as a JSON string literal at `out`, which has room for six
/// bytes per byte of `text` plus two, and returns the end; the escaping of
/// append_string.
char* escape_into(char* out, std::string_view text) noexcept;

/// Writes `v` in decimal at `out`, which has room for 20 bytes (21 signed),
/// and returns the end: std::to_chars's text, without its digit-counting loop.
char* format_number(char* out, std::uint64_t v) noexcept;
char* format_number(char* out, std::int64_t v) noexcept;

/// Writes `v` at `out`, which has room for 32 bytes, and returns the end: the
/// shortest text that reads back as the same double (std::to_chars's), or
/// null for a value JSON cannot hold (NaN, infinities).
char* format_number(char* out, double v) noexcept;

/// Streaming writer. Keys are written in the order the caller gives them,
/// which is what makes output canonical; `pretty` indents by two spaces.
///
/// A key given as a string literal is written as it is, without looking for
/// bytes to escape: literal keys are the schema's own names (ASCII letters,
/// digits and '_'). Any other key, and every string value, is escaped.
class Writer {
 public:
  explicit Writer(bool pretty = false, std::size_t reserve = 1024);

  inline Writer& begin_object() { return open('{'); }
  inline Writer& end_object() { return close('}'); }
  inline Writer& begin_array() { return open('['); }
  inline Writer& end_array() { return close(']'); }
  /// An escaped key (names from data: map keys, backend names).
  Writer& key(std::string_view name);
  template <std::size_t N>
  Writer& key(const char (&name)[N]) {
    return literal_key(name, N - 1);
  }

  inline Writer& value(std::string_view v) { return put_value(v); }
  inline Writer& value(const char* v) { return put_value(std::string_view(v)); }
  inline Writer& value(const std::string& v) { return put_value(std::string_view(v)); }
  inline Writer& value(bool v) { return put_value(v); }
  inline Writer& value(std::int64_t v) { return put_value(v); }
  inline Writer& value(std::uint64_t v) { return put_value(v); }
  inline Writer& value(std::int32_t v) { return put_value(static_cast<std::int64_t>(v)); }
  inline Writer& value(std::uint32_t v) { return put_value(static_cast<std::uint64_t>(v)); }
  /// Non-finite numbers are written as null.
  inline Writer& value(double v) { return put_value(v); }
  Writer& null();
  /// An array of the container's values, each written by value().
  template <Sequence R>
    requires(!Mapping<R>)
  Writer& value(const R& items) {
    begin_array();
    for (const auto& item : items) value(item);
    return end_array();
  }
  /// An object with a member per (key, value) pair, keys escaped.
  template <Mapping M>
  Writer& value(const M& members) {
    begin_object();
    for (const auto& [name, v] : members) {
      key(name);
      value(v);
    }
    return end_object();
  }
  /// An array with one element per item, each written by `write(*this, item)`.
  template <Sequence R, class Write>
  Writer& array(const R& items, Write&& write) {
    begin_array();
    for (const auto& item : items) write(*this, item);
    return end_array();
  }

  /// A member: the key (a schema name, written as it is) and its value, with
  /// one capacity check for both.
  template <std::size_t N, class T>
  Writer& field(const char (&name)[N], const T& v) {
    if (pretty_) {
      literal_key(name, N - 1);
      return value(v);
    }
    char* p = room(N + 3 + room_for(text_of(v)));
    commit(put(literal_key_at(p, name, N - 1), text_of(v)));
    return *this;
  }
  /// A member whose value is a container: an array, or an object for a map.
  template <std::size_t N, Sequence R>
  Writer& field(const char (&name)[N], const R& items) {
    literal_key(name, N - 1);
    return value(items);
  }
  /// Writes nothing when `v` is empty.
  template <std::size_t N, class T>
  Writer& field(const char (&name)[N], const std::optional<T>& v) {
    return v ? field(name, *v) : *this;
  }
  template <class T>
  Writer& field(std::string_view name, const T& v) {
    key(name);
    return value(v);
  }
  /// Writes nothing when `v` is empty.
  template <class T>
  Writer& field(std::string_view name, const std::optional<T>& v) {
    if (v) {
      key(name);
      value(*v);
    }
    return *this;
  }

  inline std::string_view str() const noexcept { return {out_.data(), size_}; }
  inline std::string take() && {
    out_.resize(size_);
    return std::move(out_);
  }
  /// The text as a whole document: pretty output ends with a line break,
  /// as a file or a terminal expects; compact output stays one token stream.
  inline std::string document() && {
    if (pretty_) put('\n');
    return std::move(*this).take();
  }

 private:
  // The text lives in out_[0, size_); out_ is kept at its allocated size so
  // that tokens are copied in place, with one capacity check each.
  inline char* room(std::size_t n) {
    if (out_.size() - size_ < n) grow(n);
    return out_.data() + size_;
  }
  inline void commit(const char* end) noexcept { size_ = static_cast<std::size_t>(end - out_.data()); }
  void grow(std::size_t n);
  inline void put(char c) { *room(1) = c, ++size_; }

  // Before a value: the comma after a sibling, and in pretty mode the line break.
  inline void before_value() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (depth_ == 0) return;
    if (!first_) put(',');
    first_ = false;
    if (pretty_) newline();
  }
  inline Writer& open(char bracket) {
    before_value();
    put(bracket);
    ++depth_;
    first_ = true;
    return *this;
  }
  inline Writer& close(char bracket) {
    --depth_;
    if (pretty_ && !first_) newline();
    put(bracket);
    first_ = false;
    return *this;
  }
  inline Writer& literal_key(const char* name, std::size_t length) {
    if (pretty_) return key(std::string_view(name, length));
    commit(literal_key_at(room(length + 4), name, length));
    after_key_ = true;
    return *this;
  }
  // A compact member's separator and key at `p`, which has room for the key
  // plus four bytes; the value follows at once.
  inline char* literal_key_at(char* p, const char* name, std::size_t length) noexcept {
    if (!first_) *p++ = ',';
    first_ = false;
    *p++ = '"';
    std::memcpy(p, name, length);
    p += length;
    *p++ = '"';
    *p++ = ':';
    return p;
  }

  // Each value's text: the most bytes it can take, and writing it at a
  // pointer with that much room. text_of gives every value type the
  // overload value() gives it (a C string is text, not a bool).
  static inline std::string_view text_of(const char* v) noexcept { return v; }
  static inline std::string_view text_of(const std::string& v) noexcept { return v; }
  static inline std::string_view text_of(std::string_view v) noexcept { return v; }
  static inline bool text_of(bool v) noexcept { return v; }
  static inline std::int64_t text_of(std::int64_t v) noexcept { return v; }
  static inline std::uint64_t text_of(std::uint64_t v) noexcept { return v; }
  static inline std::int64_t text_of(std::int32_t v) noexcept { return v; }
  static inline std::uint64_t text_of(std::uint32_t v) noexcept { return v; }
  static inline double text_of(double v) noexcept { return v; }

  static inline std::size_t room_for(std::string_view v) noexcept { return v.size() * 6 + 2; }
  static inline std::size_t room_for(bool) noexcept { return 5; }
  static inline std::size_t room_for(std::int64_t) noexcept { return 24; }
  static inline std::size_t room_for(std::uint64_t) noexcept { return 24; }
  static inline std::size_t room_for(double) noexcept { return 32; }

  static inline char* put(char* p, std::string_view v) noexcept { return escape_into(p, v); }
  static inline char* put(char* p, bool v) noexcept {
    std::memcpy(p, v ? "true" : "false", v ? 4 : 5);
    return p + (v ? 4 : 5);
  }
  static inline char* put(char* p, std::int64_t v) noexcept { return format_number(p, v); }
  static inline char* put(char* p, std::uint64_t v) noexcept { return format_number(p, v); }
  static inline char* put(char* p, double v) noexcept { return format_number(p, v); }

  template <class T>
  inline Writer& put_value(T v) {
    before_value();
    commit(put(room(room_for(v)), v));
    return *this;
  }
  void newline();

  // Member functions defined in a module interface are not implicitly
  // inline: the small ones above say so, so that callers inline them.
  std::string out_;
  std::size_t size_ = 0;
  bool pretty_;
  bool first_ = true;       // no element yet in the current container
  bool after_key_ = false;  // a key was written; its value comes next
  int depth_ = 0;
};

}  // namespace hwaccel::json
