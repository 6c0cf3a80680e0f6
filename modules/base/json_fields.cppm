// Reading JSON documents whose objects have a fixed set of fields: each
// format declares its fields once, in a table (name, type, required or not,
// bounds), and one reader checks an object against it, so that every file
// the library reads (device specs, model catalogues, config.json, instance
// catalogues, runtime profiles) reports an unknown key, a wrong type, a
// missing field or a value out of range in the same words and with the same
// ErrorKind.
//
// Internal to the library (not installed): the readers' shared machinery,
// not an API. simdjson stays in the implementation unit.
module;
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>
export module hwaccel.json_fields;
import hwaccel.base;

export namespace hwaccel::json {

/// One value of a parsed Document: a view, valid while the document lives.
class Value {
 public:
  enum class Kind : std::uint8_t { null, boolean, number, string, array, object };

  Kind kind() const noexcept;
  /// The text of a string (escapes resolved); empty for another kind.
  std::string_view string() const noexcept;
  /// Any JSON number, integers converted; nullopt for another kind.
  std::optional<double> number() const noexcept;
  /// A non-negative integer, also when written as 4096.0; nullopt otherwise.
  std::optional<std::uint64_t> whole() const noexcept;
  std::optional<bool> boolean() const noexcept;
  /// An array's elements in order; empty for another kind.
  std::vector<Value> elements() const;
  /// The member `key` of an object (null counts as absent); nullopt when
  /// absent or when this is not an object.
  std::optional<Value> member(std::string_view key) const noexcept;
  /// An object's members in document order (keys are views into the
  /// document); empty for another kind.
  std::vector<std::pair<std::string_view, Value>> members() const;

 private:
  friend struct ValueAccess;  // the implementation's bridge to the parser's element
  alignas(8) unsigned char element_[sizeof(void*) + sizeof(std::size_t)]{};
};

/// A parsed document; it owns the memory its Values view.
class Document {
 public:
  /// Parses `text`: parse_error "<origin> is not valid JSON: <why>".
  [[nodiscard]] static Result<Document> parse(std::string_view text, std::string_view origin);

  Value root() const noexcept { return root_; }

  Document(Document&&) noexcept;
  Document& operator=(Document&&) noexcept;
  ~Document();

 private:
  struct Parser;
  Document() = default;
  std::unique_ptr<Parser> parser_;
  Value root_;
};

/// What a field holds. A JSON null is read as an absent field everywhere.
enum class Type : std::uint8_t {
  text,     ///< a string, trimmed: not empty, at most `max` characters, no control character
  number,   ///< a number in [min, max], or (min, max] with `above_min`
  whole,    ///< a non-negative integer (4096.0 counts) in [min, max]
  boolean,  ///< true or false
  hex,      ///< an id as a hex string ("0x10de") or a whole number, in [min, max]
  object,   ///< an object, read with a table of its own
  array,    ///< at most `max_items` elements, each of type `element` (bounds apply to each)
  any,      ///< anything; the reader looks at it itself
};

enum class Need : bool { optional, required };
inline constexpr Need required = Need::required;

/// One field of a table.
struct Field {
  std::string_view key;
  Type type = Type::text;
  Need need = Need::optional;
  Type element = Type::any;  ///< arrays: the type of each element
  double min = 0;
  double max = 0;
  bool above_min = false;    ///< numbers: min itself is refused ("a positive number")
  std::size_t max_items = 0; ///< arrays

  static constexpr std::size_t max_text_length = 4096;

  static constexpr Field text(std::string_view key, Need need = Need::optional,
                              std::size_t max_length = max_text_length) {
    return {key, Type::text, need, Type::any, 0, static_cast<double>(max_length)};
  }
  /// A number in (0, max]: a size, a rate, a price.
  static constexpr Field positive(std::string_view key, double max, Need need = Need::optional) {
    return {key, Type::number, need, Type::any, 0, max, true};
  }
  static constexpr Field number(std::string_view key, double min, double max, Need need = Need::optional) {
    return {key, Type::number, need, Type::any, min, max};
  }
  static constexpr Field whole(std::string_view key, std::uint64_t min = 0,
                               std::uint64_t max = std::numeric_limits<std::uint64_t>::max(),
                               Need need = Need::optional) {
    return {key, Type::whole, need, Type::any, static_cast<double>(min), static_cast<double>(max)};
  }
  static constexpr Field boolean(std::string_view key, Need need = Need::optional) {
    return {key, Type::boolean, need};
  }
  static constexpr Field hex(std::string_view key, std::uint64_t min, std::uint64_t max, Need need = Need::optional) {
    return {key, Type::hex, need, Type::any, static_cast<double>(min), static_cast<double>(max)};
  }
  static constexpr Field object(std::string_view key, Need need = Need::optional) {
    return {key, Type::object, need};
  }
  static constexpr Field any(std::string_view key, Need need = Need::optional) { return {key, Type::any, need}; }
  /// An array of `max_items` elements at most; `min` and `max` bound each
  /// element as for a field of type `element` (a text's length: `max`).
  static constexpr Field array(std::string_view key, Type element, std::size_t max_items, Need need = Need::optional,
                               double min = 0, double max = 0) {
    return {key, Type::array, need, element, min, max, false, max_items};
  }
};

/// Whether keys outside the table are refused (a typo would otherwise drop a
/// figure without a word) or passed over (a config.json has dozens the
/// reader has no use for).
enum class Keys : bool { closed, open };

/// An object's fields, checked against a table. Errors are parse_error where
/// the document has the wrong shape (not an object, an unknown or repeated
/// key, a missing required field, a value of the wrong JSON type) and
/// invalid_input where a value of the right type is wrong (empty, too long,
/// out of bounds), each "<where>: "<key>" <what is wrong>"; the getters
/// return what was checked.
class Object {
 public:
  /// Reads `value` against `fields`; `where` ("devices.json: devices[3]
  /// "my-gpu"") opens every message.
  [[nodiscard]] static Result<Object> read(Value value, std::span<const Field> fields, std::string where,
                                           Keys keys = Keys::closed);

  bool has(std::string_view key) const noexcept;
  /// A text field, trimmed; empty when absent.
  std::string_view text(std::string_view key) const noexcept;
  std::optional<double> number(std::string_view key) const noexcept;
  /// A whole or hex field.
  std::optional<std::uint64_t> whole(std::string_view key) const noexcept;
  std::optional<bool> boolean(std::string_view key) const noexcept;
  /// An object, array or any field, as it stands in the document.
  std::optional<Value> value(std::string_view key) const noexcept;
  /// The elements of an array field (of objects, arrays or any).
  std::vector<Value> values(std::string_view key) const;
  /// An array of text, trimmed.
  std::vector<std::string_view> texts(std::string_view key) const;
  /// An array of whole or hex.
  std::vector<std::uint64_t> wholes(std::string_view key) const;

  std::string_view where() const noexcept { return where_; }
  /// "<where>: "<key>" <what>", for what the reader finds wrong with a
  /// checked value (an unknown name, an inconsistency): invalid_input unless said.
  Error error(std::string_view key, std::string_view what, ErrorKind kind = ErrorKind::invalid_input) const;
  /// "<where>: <what>".
  Error error(std::string_view what, ErrorKind kind = ErrorKind::invalid_input) const;
  /// parse_error "<where>: missing "<key>"", for a field a reader requires
  /// only in some cases.
  Error missing(std::string_view key) const;

 private:
  struct Slot {
    std::optional<Value> value;
    std::string_view text;
    double number = 0;
    std::uint64_t whole = 0;
    bool flag = false;
    std::vector<Slot> items;
  };
  const Slot* slot(std::string_view key) const noexcept;
  [[nodiscard]] static Result<void> check(const Field& field, Type type, Value value, std::string_view where,
                            std::string_view label, Slot& slot);

  std::span<const Field> fields_;
  std::vector<Slot> slots_;
  std::string where_;
  mutable std::size_t hint_ = 0;  // where the next lookup starts: readers ask in table order
};

/// What one format of data file is, for read_data_file: the value of its
/// "format" member, the most bytes a file may hold, and how a message names
/// such a file ("a model catalogue").
struct FileFormat {
  std::string_view format;
  std::size_t max_bytes = 0;
  std::string_view what;
};

/// A data file read up to its entries: the document, which owns what the
/// root views, and the root object, checked against its field table.
struct DataFile {
  Document document;
  Object root;
};

/// The opening every data-file reader shares: refuses `text` over
/// `format.max_bytes` (invalid_input "<origin> is N bytes; <what> is at most
/// M"), parses it, reads the root against `root_fields`, and checks its
/// "format" and "version" members where present (parse_error: the value must
/// be `format.format` and 1). Whether they are required is the table's to say.
[[nodiscard]] Result<DataFile> read_data_file(std::string_view text, std::string_view origin, const FileFormat& format,
                                              std::span<const Field> root_fields);

/// "<origin>: <array>[<index>]", followed by " "<label>"" when `entry` is an
/// object with a string member `label_key` (an entry's id or name): how
/// every reader names the entry of a list it reports on.
std::string entry_where(std::string_view origin, std::string_view array, std::size_t index, Value entry,
                        std::string_view label_key);

}  // namespace hwaccel::json
