// Canonical JSON output: fixed field order, no locale, always valid UTF-8.
module;
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
export module hwaccel.hardware:json;

export namespace hwaccel::json {

/// Appends `text` as a JSON string literal, quotes included. Control
/// characters are escaped and bytes that are not valid UTF-8 become U+FFFD,
/// so hostile tool output can never produce invalid JSON.
void append_string(std::string& out, std::string_view text);

/// Streaming writer. Keys are written in the order the caller gives them,
/// which is what makes output canonical; `pretty` indents by two spaces.
class Writer {
 public:
  explicit Writer(bool pretty = false, std::size_t reserve = 1024);

  Writer& begin_object();
  Writer& end_object();
  Writer& begin_array();
  Writer& end_array();
  Writer& key(std::string_view name);

  Writer& value(std::string_view v);
  Writer& value(const char* v) { return value(std::string_view(v)); }
  Writer& value(const std::string& v) { return value(std::string_view(v)); }
  Writer& value(bool v);
  Writer& value(std::int64_t v);
  Writer& value(std::uint64_t v);
  Writer& value(std::int32_t v) { return value(static_cast<std::int64_t>(v)); }
  Writer& value(std::uint32_t v) { return value(static_cast<std::uint64_t>(v)); }
  /// Non-finite numbers are written as null.
  Writer& value(double v);
  Writer& null();

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

  const std::string& str() const noexcept { return out_; }
  std::string take() && noexcept { return std::move(out_); }

 private:
  void before_value();
  void newline();

  std::string out_;
  bool pretty_;
  bool first_ = true;      // no element yet in the current container
  bool after_key_ = false;  // a key was written; its value comes next
  int depth_ = 0;
};

}  // namespace hwaccel::json
