// Reading the JSON manifests of fixture folders: fixture.json (replay) and
// import.json (`capture --import`) share field conventions and messages.
// Included right after `module hwaccel.detect;` by units that already include
// <simdjson.h>, <map>, <string> and <string_view>; functions are inline, since
// two units of the module include it.
#pragma once

namespace hwaccel::manifest_json {

/// The string field `key` of `obj`: "" when absent and not `required`; an
/// error naming `where` when required and absent, or not a string.
inline Result<std::string> string_field(simdjson::dom::object obj, std::string_view key, std::string_view where,
                                        bool required) {
  simdjson::dom::element el;
  if (obj[key].get(el) != simdjson::SUCCESS) {
    if (required) return fail(ErrorKind::parse_error, text::cat(where, ": missing required field \"", key, "\""));
    return std::string();
  }
  std::string_view v;
  if (el.get_string().get(v) != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat(where, ": field \"", key, "\" must be a string"));
  return std::string(v);
}

/// The optional object of strings `key` of `obj` ("env"), added to `into`.
inline Result<void> string_map_field(simdjson::dom::object obj, std::string_view key, std::string_view where,
                                     std::map<std::string, std::string, std::less<>>& into) {
  simdjson::dom::element el;
  if (obj[key].get(el) != simdjson::SUCCESS) return {};
  simdjson::dom::object map;
  if (el.get_object().get(map) != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat(where, ": \"", key, "\" must be an object of strings"));
  for (auto [k, v] : map) {
    std::string_view value;
    if (v.get_string().get(value) != simdjson::SUCCESS)
      return fail(ErrorKind::parse_error, text::cat(where, ": ", key, " \"", k, "\" must be a string"));
    into.emplace(std::string(k), std::string(value));
  }
  return {};
}

/// Calls `each(object, where)` for every entry of the optional array of
/// objects `key` ("commands"); `where` reads "fixture.json: commands[3]". The
/// first error, of the array's shape or of `each`, ends the walk.
template <class Each>
Result<void> for_each_object(simdjson::dom::object obj, std::string_view key, std::string_view where, Each&& each) {
  simdjson::dom::element el;
  if (obj[key].get(el) != simdjson::SUCCESS) return {};
  simdjson::dom::array entries;
  if (el.get_array().get(entries) != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat(where, ": \"", key, "\" must be an array"));
  std::size_t i = 0;
  for (auto entry : entries) {
    const std::string at = text::cat(where, ": ", key, "[", i++, "]");
    simdjson::dom::object item;
    if (entry.get_object().get(item) != simdjson::SUCCESS) return fail(ErrorKind::parse_error, at + " must be an object");
    if (auto r = each(item, std::string_view(at)); !r) return r;
  }
  return {};
}

}  // namespace hwaccel::manifest_json
