// Canonical JSON output: fixed field order, no locale, always valid UTF-8.
module;
#include <charconv>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
export module hwaccel.hardware:json;

export namespace hwaccel::json {

/// Appends `text` as a JSON string literal, quotes included. Control
/// characters are escaped and bytes that are not valid UTF-8 become U+FFFD,
/// so hostile tool output can never produce invalid JSON.
void append_string(std::string& out, std::string_view text);

/// Writes `text` as a JSON string literal at `out`, which has room for six
/// bytes per byte of `text` plus two, and returns the end; the escaping of
/// append_string.
char* escape_into(char* out, std::string_view text) noexcept;

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

  inline Writer& value(std::string_view v) {
    before_value();
    commit(escape_into(room(v.size() * 6 + 2), v));
    return *this;
  }
  inline Writer& value(const char* v) { return value(std::string_view(v)); }
  inline Writer& value(const std::string& v) { return value(std::string_view(v)); }
  inline Writer& value(bool v) {
    before_value();
    char* p = room(5);
    std::memcpy(p, v ? "true" : "false", v ? 4 : 5);
    commit(p + (v ? 4 : 5));
    return *this;
  }
  inline Writer& value(std::int64_t v) {
    before_value();
    char* p = room(24);
    commit(std::to_chars(p, p + 24, v).ptr);
    return *this;
  }
  inline Writer& value(std::uint64_t v) {
    before_value();
    char* p = room(24);
    commit(std::to_chars(p, p + 24, v).ptr);
    return *this;
  }
  inline Writer& value(std::int32_t v) { return value(static_cast<std::int64_t>(v)); }
  inline Writer& value(std::uint32_t v) { return value(static_cast<std::uint64_t>(v)); }
  /// Non-finite numbers are written as null.
  Writer& value(double v);
  Writer& null();

  template <std::size_t N, class T>
  Writer& field(const char (&name)[N], const T& v) {
    literal_key(name, N - 1);
    return value(v);
  }
  /// Writes nothing when `v` is empty.
  template <std::size_t N, class T>
  Writer& field(const char (&name)[N], const std::optional<T>& v) {
    if (v) {
      literal_key(name, N - 1);
      value(*v);
    }
    return *this;
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
    char* p = room(length + 4);
    if (!first_) *p++ = ',';
    first_ = false;
    *p++ = '"';
    std::memcpy(p, name, length);
    p += length;
    *p++ = '"';
    *p++ = ':';
    commit(p);
    after_key_ = true;
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
