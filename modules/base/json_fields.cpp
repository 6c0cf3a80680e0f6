// The field-table reader over simdjson's DOM.
module;
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <simdjson.h>
#include "json_input.hpp"
module hwaccel.json_fields;

namespace hwaccel::json {

// A Value holds a simdjson element (a document pointer and a tape index) by
// its bytes, so that the interface names no simdjson type.
struct ValueAccess {
  static_assert(sizeof(simdjson::dom::element) == sizeof(Value::element_));
  static_assert(std::is_trivially_copyable_v<simdjson::dom::element>);
  static simdjson::dom::element element(const Value& v) noexcept {
    simdjson::dom::element e;
    std::memcpy(static_cast<void*>(&e), v.element_, sizeof e);
    return e;
  }
  static Value of(simdjson::dom::element e) noexcept {
    Value v;
    std::memcpy(v.element_, static_cast<const void*>(&e), sizeof e);
    return v;
  }
};

struct Document::Parser {
  simdjson::dom::parser parser;
};

namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

// A bound as a message prints it: whole numbers without an exponent
// ("100000", not "1e+05").
std::string fields_bound_text(double v) {
  if (v == std::floor(v) && std::abs(v) < 9.007199254740992e15)
    return v < 0 ? text::cat(static_cast<std::int64_t>(v)) : text::cat(static_cast<std::uint64_t>(v));
  return text::cat(v);
}

std::string fields_hex_text(std::uint64_t v) { return "0x" + text::hex_at_least(v, 4); }

// What a value of the wrong JSON type should have been.
std::string_view fields_expected(Type type) {
  switch (type) {
    case Type::text: return "must be a string";
    case Type::number:
    case Type::whole: return "must be a number";
    case Type::boolean: return "must be true or false";
    case Type::hex: return "must be a hex id like \"0x10de\"";
    case Type::object: return "must be an object";
    case Type::array: return "must be an array";
    case Type::any: return "";
  }
  return "";
}

std::optional<double> fields_number_of(element e) {
  double d = 0;
  if (e.get_double().get(d) == simdjson::SUCCESS) return d;
  std::int64_t i = 0;
  if (e.get_int64().get(i) == simdjson::SUCCESS) return static_cast<double>(i);
  std::uint64_t u = 0;
  if (e.get_uint64().get(u) == simdjson::SUCCESS) return static_cast<double>(u);
  return std::nullopt;
}

std::optional<std::uint64_t> fields_whole_of(element e) {
  std::uint64_t u = 0;
  if (e.get_uint64().get(u) == simdjson::SUCCESS) return u;
  std::int64_t i = 0;
  if (e.get_int64().get(i) == simdjson::SUCCESS) return i >= 0 ? std::optional<std::uint64_t>(static_cast<std::uint64_t>(i)) : std::nullopt;
  // Some configs write integers as 4096.0.
  double d = 0;
  if (e.get_double().get(d) == simdjson::SUCCESS && d >= 0 && d < 1.8446744073709552e19 && d == std::floor(d))
    return static_cast<std::uint64_t>(d);
  return std::nullopt;
}

bool fields_is_number(element e) {
  const auto t = e.type();
  return t == element_type::DOUBLE || t == element_type::INT64 || t == element_type::UINT64;
}

}  // namespace

// --- Value -------------------------------------------------------------------

Value::Kind Value::kind() const noexcept {
  switch (ValueAccess::element(*this).type()) {
    case element_type::ARRAY: return Kind::array;
    case element_type::OBJECT: return Kind::object;
    case element_type::INT64:
    case element_type::UINT64:
    case element_type::DOUBLE: return Kind::number;
    case element_type::STRING: return Kind::string;
    case element_type::BOOL: return Kind::boolean;
    case element_type::NULL_VALUE: return Kind::null;
  }
  return Kind::null;
}

std::string_view Value::string() const noexcept {
  std::string_view s;
  if (ValueAccess::element(*this).get_string().get(s) != simdjson::SUCCESS) return {};
  return s;
}

std::optional<double> Value::number() const noexcept { return fields_number_of(ValueAccess::element(*this)); }

std::optional<std::uint64_t> Value::whole() const noexcept { return fields_whole_of(ValueAccess::element(*this)); }

std::optional<bool> Value::boolean() const noexcept {
  bool b = false;
  if (ValueAccess::element(*this).get_bool().get(b) != simdjson::SUCCESS) return std::nullopt;
  return b;
}

std::vector<Value> Value::elements() const {
  std::vector<Value> out;
  simdjson::dom::array a;
  if (ValueAccess::element(*this).get_array().get(a) != simdjson::SUCCESS) return out;
  out.reserve(a.size());
  for (element e : a) out.push_back(ValueAccess::of(e));
  return out;
}

std::vector<std::pair<std::string_view, Value>> Value::members() const {
  std::vector<std::pair<std::string_view, Value>> out;
  simdjson::dom::object o;
  if (ValueAccess::element(*this).get_object().get(o) != simdjson::SUCCESS) return out;
  out.reserve(o.size());
  for (const auto field : o) out.emplace_back(field.key, ValueAccess::of(field.value));
  return out;
}

std::optional<Value> Value::member(std::string_view key) const noexcept {
  simdjson::dom::object o;
  if (ValueAccess::element(*this).get_object().get(o) != simdjson::SUCCESS) return std::nullopt;
  element e;
  if (o[key].get(e) != simdjson::SUCCESS || e.is_null()) return std::nullopt;
  return ValueAccess::of(e);
}

// --- Document ----------------------------------------------------------------

Document::Document(Document&&) noexcept = default;
Document& Document::operator=(Document&&) noexcept = default;
Document::~Document() = default;

Result<Document> Document::parse(std::string_view text, std::string_view origin) {
  Document d;
  d.parser_ = std::make_unique<Parser>();
  element root;
  if (const auto err = json_input::parse(d.parser_->parser, text).get(root); err != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat(origin, " is not valid JSON: ", simdjson::error_message(err)));
  d.root_ = ValueAccess::of(root);
  return d;
}

// --- Object ------------------------------------------------------------------

// Checks one value against a field's type and bounds, filling `slot`;
// `label` names it in messages ("\"memory_gib\"", "\"pci_device_ids\"[1]").
Result<void> Object::check(const Field& f, Type type, Value value, std::string_view where, std::string_view label,
                           Slot& slot) {
  const element e = ValueAccess::element(value);
  const auto wrong_type = [&] {
    return fail(ErrorKind::parse_error, text::cat(where, ": ", label, " ", fields_expected(type)));
  };
  const auto wrong_value = [&](std::string_view what) {
    return fail(ErrorKind::invalid_input, text::cat(where, ": ", label, " ", what));
  };
  slot.value = ValueAccess::of(e);
  switch (type) {
    case Type::text: {
      std::string_view v;
      if (e.get_string().get(v) != simdjson::SUCCESS) return wrong_type();
      v = text::trim(v);
      if (v.empty()) return wrong_value("is empty");
      if (static_cast<double>(v.size()) > f.max)
        return wrong_value(text::cat("is longer than ", fields_bound_text(f.max), " characters"));
      for (char c : v)
        if (static_cast<unsigned char>(c) < 0x20) return wrong_value("holds a control character");
      slot.text = v;
      return {};
    }
    case Type::number: {
      if (!fields_is_number(e)) return wrong_type();
      const double v = *fields_number_of(e);
      const bool low_ok = f.above_min ? v > f.min : v >= f.min;
      if (!std::isfinite(v) || !low_ok || v > f.max) {
        if (f.above_min && f.min == 0)
          return wrong_value(std::isinf(f.max)
                                 ? text::cat("must be a positive number, got ", v)
                                 : text::cat("must be a positive number at most ", fields_bound_text(f.max), ", got ", v));
        return wrong_value(text::cat("must be a number in ", fields_bound_text(f.min), "..", fields_bound_text(f.max),
                                     ", got ", v));
      }
      slot.number = v;
      return {};
    }
    case Type::whole: {
      if (!fields_is_number(e)) return wrong_type();
      const auto v = fields_whole_of(e);
      if (!v || static_cast<double>(*v) < f.min || static_cast<double>(*v) > f.max) {
        const std::string got = text::cat(*fields_number_of(e));
        if (f.max >= 1.8446744073709552e19)
          return wrong_value(f.min == 0 ? text::cat("must be a non-negative whole number, got ", got)
                                        : text::cat("must be a whole number of at least ", fields_bound_text(f.min),
                                                    ", got ", got));
        return wrong_value(text::cat("must be a whole number in ", fields_bound_text(f.min), "..",
                                     fields_bound_text(f.max), ", got ", got));
      }
      slot.whole = *v;
      return {};
    }
    case Type::boolean: {
      bool b = false;
      if (e.get_bool().get(b) != simdjson::SUCCESS) return wrong_type();
      slot.flag = b;
      return {};
    }
    case Type::hex: {
      std::uint64_t u = 0;
      std::string_view s;
      if (e.get_string().get(s) == simdjson::SUCCESS) {
        const auto v = text::parse_hex(text::trim(s));
        if (!v) return wrong_value(text::cat("must be a hex id like \"0x10de\", got \"", text::excerpt(s), "\""));
        u = *v;
      } else if (const auto w = fields_is_number(e) ? fields_whole_of(e) : std::nullopt) {
        u = *w;
      } else {
        return wrong_type();
      }
      if (static_cast<double>(u) < f.min || static_cast<double>(u) > f.max)
        return wrong_value(text::cat("must be an id in ", fields_hex_text(static_cast<std::uint64_t>(f.min)), "..",
                                     fields_hex_text(static_cast<std::uint64_t>(f.max))));
      slot.whole = u;
      return {};
    }
    case Type::object:
      if (e.type() != element_type::OBJECT) return wrong_type();
      return {};
    case Type::array: {
      simdjson::dom::array a;
      if (e.get_array().get(a) != simdjson::SUCCESS) return wrong_type();
      if (a.size() > f.max_items) return wrong_value(text::cat("holds more than ", f.max_items, " items"));
      slot.items.resize(a.size());
      std::size_t i = 0;
      for (element item : a) {
        if (item.is_null() && f.element != Type::any)
          return fail(ErrorKind::parse_error, text::cat(where, ": ", label, "[", i, "] ", fields_expected(f.element)));
        if (auto r = check(f, f.element, ValueAccess::of(item), where, text::cat(label, "[", i, "]"), slot.items[i]); !r)
          return r;
        ++i;
      }
      return {};
    }
    case Type::any: return {};
  }
  return {};
}

Result<Object> Object::read(Value value, std::span<const Field> fields, std::string where, Keys keys) {
  simdjson::dom::object o;
  if (ValueAccess::element(value).get_object().get(o) != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat(where, " must be a JSON object"));
  Object out;
  out.fields_ = fields;
  out.slots_.resize(fields.size());
  out.where_ = std::move(where);
  std::vector<bool> seen(fields.size(), false);
  std::vector<element> found(fields.size());
  std::size_t hint = 0;
  for (auto member : o) {
    const std::string_view key = member.key;
    // Files list their fields in table order, mostly: look from the last one found.
    std::size_t index = fields.size();
    for (std::size_t n = 0; n < fields.size(); ++n) {
      const std::size_t i = (hint + n) % fields.size();
      if (fields[i].key == key) {
        index = i;
        break;
      }
    }
    if (index == fields.size()) {
      if (keys == Keys::open) continue;
      return fail(ErrorKind::parse_error, text::cat(out.where_, ": unknown field \"", text::excerpt(key), "\""));
    }
    if (seen[index])
      return fail(ErrorKind::parse_error, text::cat(out.where_, ": \"", text::excerpt(key), "\" given twice"));
    seen[index] = true;
    found[index] = member.value;
    hint = index + 1;
  }
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const Field& f = fields[i];
    if (!seen[i] || found[i].is_null()) {
      if (f.need == Need::required) return fail(out.missing(f.key));
      continue;
    }
    if (auto r = check(f, f.type, ValueAccess::of(found[i]), out.where_, text::cat("\"", f.key, "\""), out.slots_[i]); !r)
      return fail(r.error());
  }
  return out;
}

const Object::Slot* Object::slot(std::string_view key) const noexcept {
  for (std::size_t n = 0; n < fields_.size(); ++n) {
    const std::size_t i = (hint_ + n) % fields_.size();
    if (fields_[i].key == key) {
      hint_ = i + 1;
      return slots_[i].value ? &slots_[i] : nullptr;
    }
  }
  return nullptr;  // not a field of the table: a reader's own mistake, which its tests catch
}

bool Object::has(std::string_view key) const noexcept { return slot(key) != nullptr; }

std::string_view Object::text(std::string_view key) const noexcept {
  const Slot* s = slot(key);
  return s ? s->text : std::string_view();
}

std::optional<double> Object::number(std::string_view key) const noexcept {
  const Slot* s = slot(key);
  return s ? std::optional<double>(s->number) : std::nullopt;
}

std::optional<std::uint64_t> Object::whole(std::string_view key) const noexcept {
  const Slot* s = slot(key);
  return s ? std::optional<std::uint64_t>(s->whole) : std::nullopt;
}

std::optional<bool> Object::boolean(std::string_view key) const noexcept {
  const Slot* s = slot(key);
  return s ? std::optional<bool>(s->flag) : std::nullopt;
}

std::optional<Value> Object::value(std::string_view key) const noexcept {
  const Slot* s = slot(key);
  return s ? s->value : std::nullopt;
}

std::vector<Value> Object::values(std::string_view key) const {
  std::vector<Value> out;
  if (const Slot* s = slot(key))
    for (const auto& item : s->items) out.push_back(*item.value);
  return out;
}

std::vector<std::string_view> Object::texts(std::string_view key) const {
  std::vector<std::string_view> out;
  if (const Slot* s = slot(key))
    for (const auto& item : s->items) out.push_back(item.text);
  return out;
}

std::vector<std::uint64_t> Object::wholes(std::string_view key) const {
  std::vector<std::uint64_t> out;
  if (const Slot* s = slot(key))
    for (const auto& item : s->items) out.push_back(item.whole);
  return out;
}

Error Object::error(std::string_view key, std::string_view what, ErrorKind kind) const {
  return Error{kind, text::cat(where_, ": \"", key, "\" ", what)};
}

Error Object::error(std::string_view what, ErrorKind kind) const { return Error{kind, text::cat(where_, ": ", what)}; }

Error Object::missing(std::string_view key) const {
  return Error{ErrorKind::parse_error, text::cat(where_, ": missing \"", key, "\"")};
}

Result<DataFile> read_data_file(std::string_view text, std::string_view origin, const FileFormat& format,
                                std::span<const Field> root_fields) {
  if (text.size() > format.max_bytes)
    return fail(ErrorKind::invalid_input,
                text::cat(origin, " is ", text.size(), " bytes; ", format.what, " is at most ", format.max_bytes));
  auto document = Document::parse(text, origin);
  if (!document) return fail(document.error());
  auto root = Object::read(document->root(), root_fields, std::string(origin));
  if (!root) return fail(root.error());
  if (root->has("format") && root->text("format") != format.format)
    return fail(root->error("format", text::cat("must be \"", format.format, "\""), ErrorKind::parse_error));
  if (root->has("version") && root->whole("version") != 1u)
    return fail(root->error("version", "must be 1", ErrorKind::parse_error));
  return DataFile{std::move(*document), std::move(*root)};
}

std::string entry_where(std::string_view origin, std::string_view array, std::size_t index, Value entry,
                        std::string_view label_key) {
  if (const auto label = entry.member(label_key); label && label->kind() == Value::Kind::string)
    return text::cat(origin, ": ", array, "[", index, "] \"", text::excerpt(label->string()), "\"");
  return text::cat(origin, ": ", array, "[", index, "]");
}

}  // namespace hwaccel::json
