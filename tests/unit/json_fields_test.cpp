// The field-table JSON reader every data-file reader uses: one wording and
// one ErrorKind per kind of mistake, whatever the format.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

import hwaccel;
import hwaccel.json_fields;

namespace {

using namespace hwaccel;
using json::Field;

constexpr Field test_fabric_fields[] = {Field::text("kind", json::required, 8)};
constexpr Field test_fields[] = {
    Field::text("id", json::required, 16),
    Field::positive("size", 100),
    Field::number("ratio", -1, 1),
    Field::whole("count", 1, 8),
    Field::whole("layers"),
    Field::boolean("tied"),
    Field::hex("vendor", 1, 0xffff),
    Field::object("fabric"),
    Field::array("ids", json::Type::hex, 2, json::Need::optional, 1, 0xffff),
    Field::array("names", json::Type::text, 3, json::Need::optional, 0, 8),
    Field::any("anything"),
};

struct FieldsRead {
  json::Document doc;
  hwaccel::Result<json::Object> object;
};

FieldsRead read_fields(std::string_view text, json::Keys keys = json::Keys::closed) {
  auto doc = json::Document::parse(text, "t.json");
  EXPECT_TRUE(doc) << doc.error().message;
  auto object = json::Object::read(doc->root(), test_fields, "t.json: x[0]", keys);
  return {std::move(*doc), std::move(object)};
}

Error fields_error_of(std::string_view text, json::Keys keys = json::Keys::closed) {
  auto r = read_fields(text, keys);
  EXPECT_FALSE(r.object) << text;
  return r.object ? Error{} : r.object.error();
}

TEST(JsonFields, ReadsTheValuesOfTheTable) {
  const auto r = read_fields(R"({"id": " a-1 ", "size": 12.5, "ratio": -1, "count": 8, "layers": 4096.0, "tied": true,
                         "vendor": "0x10de", "fabric": {"kind": "nvlink"}, "ids": ["0x1234", 4660],
                         "names": ["x", " y "], "anything": [1, "two"], "comment": null})",
                      json::Keys::open);
  ASSERT_TRUE(r.object) << r.object.error().message;
  const auto& o = *r.object;
  EXPECT_EQ(o.text("id"), "a-1");  // trimmed
  EXPECT_EQ(o.number("size"), 12.5);
  EXPECT_EQ(o.number("ratio"), -1.0);
  EXPECT_EQ(o.whole("count"), 8u);
  EXPECT_EQ(o.whole("layers"), 4096u);  // configs write integers as 4096.0
  EXPECT_EQ(o.boolean("tied"), true);
  EXPECT_EQ(o.whole("vendor"), 0x10deu);
  EXPECT_EQ(o.wholes("ids"), (std::vector<std::uint64_t>{0x1234, 0x1234}));
  EXPECT_EQ(o.texts("names"), (std::vector<std::string_view>{"x", "y"}));
  ASSERT_TRUE(o.value("fabric"));
  const auto fabric = json::Object::read(*o.value("fabric"), test_fabric_fields, "t.json: x[0]: fabric").value();
  EXPECT_EQ(fabric.text("kind"), "nvlink");
  EXPECT_EQ(o.value("anything")->elements().size(), 2u);
  EXPECT_EQ(o.where(), "t.json: x[0]");
}

TEST(JsonFields, AbsentAndNullAreTheSame) {
  const auto r = read_fields(R"({"id": "a", "size": null, "tied": null})");
  ASSERT_TRUE(r.object) << r.object.error().message;
  EXPECT_FALSE(r.object->has("size"));
  EXPECT_FALSE(r.object->number("size"));
  EXPECT_FALSE(r.object->boolean("tied"));
  EXPECT_EQ(r.object->text("names"), "");
  EXPECT_TRUE(r.object->wholes("ids").empty());
  const Error e = fields_error_of(R"({"id": null})");
  EXPECT_EQ(e.kind, ErrorKind::parse_error);
  EXPECT_EQ(e.message, "t.json: x[0]: missing \"id\"");
}

TEST(JsonFields, TheWrongShapeIsAParseError) {
  struct Case {
    std::string_view text, message;
  };
  for (const auto& c : {
           Case{R"([1])", "t.json: x[0] must be a JSON object"},
           Case{R"({"id": "a", "colour": 1})", "t.json: x[0]: unknown field \"colour\""},
           Case{R"({"id": "a", "id": "b"})", "t.json: x[0]: \"id\" given twice"},
           Case{R"({"id": 7})", "t.json: x[0]: \"id\" must be a string"},
           Case{R"({"id": "a", "size": "12"})", "t.json: x[0]: \"size\" must be a number"},
           Case{R"({"id": "a", "count": true})", "t.json: x[0]: \"count\" must be a number"},
           Case{R"({"id": "a", "tied": 1})", "t.json: x[0]: \"tied\" must be true or false"},
           Case{R"({"id": "a", "vendor": [1]})", "t.json: x[0]: \"vendor\" must be a hex id like \"0x10de\""},
           Case{R"({"id": "a", "fabric": "nvlink"})", "t.json: x[0]: \"fabric\" must be an object"},
           Case{R"({"id": "a", "ids": "0x1"})", "t.json: x[0]: \"ids\" must be an array"},
           Case{R"({"id": "a", "names": ["x", 2]})", "t.json: x[0]: \"names\"[1] must be a string"},
           Case{R"({"id": "a", "names": [null]})", "t.json: x[0]: \"names\"[0] must be a string"},
       }) {
    const Error e = fields_error_of(c.text);
    EXPECT_EQ(e.kind, ErrorKind::parse_error) << c.text;
    EXPECT_EQ(e.message, c.message);
  }
  // An open object passes over keys outside the table, not over the wrong type of one in it.
  EXPECT_TRUE(read_fields(R"({"id": "a", "colour": 1})", json::Keys::open).object);
  EXPECT_EQ(fields_error_of(R"({"id": "a", "tied": 1})", json::Keys::open).kind, ErrorKind::parse_error);
}

TEST(JsonFields, ABadValueIsInvalidInput) {
  struct Case {
    std::string_view text, message;
  };
  for (const auto& c : {
           Case{R"({"id": "  "})", "t.json: x[0]: \"id\" is empty"},
           Case{R"({"id": "abcdefghijklmnopq"})", "t.json: x[0]: \"id\" is longer than 16 characters"},
           Case{"{\"id\": \"a\\tb\"}", "t.json: x[0]: \"id\" holds a control character"},
           Case{R"({"id": "a", "size": 0})", "t.json: x[0]: \"size\" must be a positive number at most 100, got 0"},
           Case{R"({"id": "a", "size": 100.5})", "t.json: x[0]: \"size\" must be a positive number at most 100, got 100.5"},
           Case{R"({"id": "a", "ratio": 1.5})", "t.json: x[0]: \"ratio\" must be a number in -1..1, got 1.5"},
           Case{R"({"id": "a", "count": 9})", "t.json: x[0]: \"count\" must be a whole number in 1..8, got 9"},
           Case{R"({"id": "a", "count": 2.5})", "t.json: x[0]: \"count\" must be a whole number in 1..8, got 2.5"},
           Case{R"({"id": "a", "layers": -1})", "t.json: x[0]: \"layers\" must be a non-negative whole number, got -1"},
           Case{R"({"id": "a", "vendor": "zz"})", "t.json: x[0]: \"vendor\" must be a hex id like \"0x10de\", got \"zz\""},
           Case{R"({"id": "a", "vendor": 0})", "t.json: x[0]: \"vendor\" must be an id in 0x0001..0xffff"},
           Case{R"({"id": "a", "ids": [1, 2, 3]})", "t.json: x[0]: \"ids\" holds more than 2 items"},
           Case{R"({"id": "a", "ids": [1, "0x0"]})", "t.json: x[0]: \"ids\"[1] must be an id in 0x0001..0xffff"},
       }) {
    const Error e = fields_error_of(c.text);
    EXPECT_EQ(e.kind, ErrorKind::invalid_input) << c.text;
    EXPECT_EQ(e.message, c.message);
  }
}

TEST(JsonFields, DocumentsAndEntries) {
  const auto bad = json::Document::parse("{", "t.json");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().kind, ErrorKind::parse_error);
  EXPECT_EQ(bad.error().message.rfind("t.json is not valid JSON: ", 0), 0u) << bad.error().message;
  EXPECT_FALSE(json::Document::parse("", "t.json"));
  const auto doc = json::Document::parse(R"([{"id": "gpu-1"}, {"id": 3}, 4])", "t.json").value();
  const auto entries = doc.root().elements();
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(json::entry_where("t.json", "devices", 0, entries[0], "id"), "t.json: devices[0] \"gpu-1\"");
  EXPECT_EQ(json::entry_where("t.json", "devices", 1, entries[1], "id"), "t.json: devices[1]");
  EXPECT_EQ(json::entry_where("t.json", "devices", 2, entries[2], "id"), "t.json: devices[2]");
  EXPECT_EQ(entries[2].kind(), json::Value::Kind::number);
  EXPECT_EQ(entries[2].whole(), 4u);
  EXPECT_EQ(entries[0].member("id")->string(), "gpu-1");
  EXPECT_FALSE(entries[0].member("name"));
  EXPECT_FALSE(entries[2].member("id"));
}

}  // namespace
