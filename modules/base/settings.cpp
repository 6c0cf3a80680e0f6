// The non-template half of the settings reader: value checks and the error
// text every front end shows for a bad value.
module;
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <span>
#include <string>
#include <string_view>
module hwaccel.base;

namespace hwaccel {

std::string_view to_string(SettingType type) noexcept {
  switch (type) {
    case SettingType::whole: return "whole number";
    case SettingType::fraction: return "number";
    case SettingType::boolean: return "boolean";
    case SettingType::choice: return "choice";
    case SettingType::text: return "text";
  }
  return "text";
}

EnvironmentLookup process_environment() {
  return [](std::string_view name) -> std::optional<std::string> {
    const std::string n(name);
    const char* value = std::getenv(n.c_str());
    if (!value) return std::nullopt;
    return std::string(value);
  };
}

const Setting* find_setting(std::span<const Setting> values, std::string_view name) noexcept {
  const Setting* found = nullptr;
  for (const auto& v : values)
    if (setting_detail::key_matches(name, v.key)) found = &v;
  return found;
}

namespace setting_detail {

bool key_matches(std::string_view name, std::string_view given) noexcept {
  if (name.size() != given.size()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char a = name[i] == '_' ? '-' : name[i];
    const char b = given[i] == '_' ? '-' : given[i];
    if (a != b) return false;
  }
  return true;
}

Result<SettingValue> check_value(SettingType type, double low, double high, std::string_view text) {
  SettingValue value;
  value.text = text::trim(text);
  switch (type) {
    case SettingType::whole: {
      const auto n = text::parse_u64(value.text);
      if (!n || static_cast<double>(*n) < low || static_cast<double>(*n) > high)
        return fail(ErrorKind::invalid_input,
                    text::cat("not a whole number from ", static_cast<std::uint64_t>(low), " to ",
                              static_cast<std::uint64_t>(high)));
      value.whole = *n;
      return value;
    }
    case SettingType::fraction: {
      const auto d = text::parse_double(value.text);
      if (!d || !(*d >= low && *d <= high))
        return fail(ErrorKind::invalid_input, text::cat("not a number from ", low, " to ", high));
      value.fraction = *d;
      return value;
    }
    case SettingType::boolean:
      for (auto yes : {"true", "1", "yes", "on"})
        if (text::iequals(value.text, yes)) {
          value.boolean = true;
          return value;
        }
      for (auto no : {"false", "0", "no", "off"})
        if (text::iequals(value.text, no)) return value;
      return fail(ErrorKind::invalid_input, "not true or false");
    case SettingType::choice:
    case SettingType::text: return value;
  }
  return value;
}

Error bad_value(std::string_view who, std::string_view value, std::string_view why) {
  return Error{ErrorKind::invalid_input, text::cat(who, " '", text::excerpt(text::trim(value), 80), "': ", why)};
}

std::string ignored_value(std::string_view env, std::string_view value, std::string_view why) {
  return text::cat(env, " ignored: '", text::excerpt(text::trim(value), 80), "': ", why);
}

}  // namespace setting_detail
}  // namespace hwaccel
