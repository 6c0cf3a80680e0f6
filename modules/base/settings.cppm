// Settings read from key/value text: the one road from a front end's names
// (a CLI option, a C API request key, a Python keyword argument) to the
// library's settings types.
//
// Why the reader is here and the tables are not: every settings type keeps
// its table beside it (detect_setting_keys() in hwaccel.registry,
// inference_setting_keys() and planning_input_keys() in hwaccel.plan,
// training_setting_keys() in hwaccel.training, scan_setting_keys() in
// hwaccel.fleet, placement_setting_keys() in hwaccel.place), where the
// bounds the type's own validation uses (max_plan_batch, max_tool_timeout,
// ...) are visible, and where the module's own code can read with it:
// AcceleratorRegistry::detect() reads $HWACCEL_BACKENDS through the
// detection table, which a module above hwaccel.registry could not serve.
// The reading itself (types, bounds, environment variables, the error text
// of a bad value) is this one function template, so that every table, and
// every front end, says the same about the same value.
module;
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>
export module hwaccel.base:settings;
import :error;

export namespace hwaccel {

/// How a setting's value is written.
enum class SettingType : std::uint8_t {
  whole,     ///< a whole number from `low` to `high`
  fraction,  ///< a decimal number from `low` to `high`
  boolean,   ///< true/false, 1/0, yes/no or on/off
  choice,    ///< one of a few names (the help lists them)
  text,      ///< a name, a list or a path, read by the library's own parser
};

/// "whole number", "number", "boolean", "choice", "text".
std::string_view to_string(SettingType type) noexcept;

/// A setting as a front end holds it: the key and its value, both text. A
/// key is a table's name ("kv-dtype"); '_' may stand for '-' ("kv_dtype", as
/// Python spells keyword arguments).
struct Setting {
  std::string key;
  std::string value;

  friend bool operator==(const Setting&, const Setting&) = default;
};

/// A value that passed its key's type and bounds, for the key's store.
struct SettingValue {
  std::string_view text;    ///< the value, trimmed
  std::uint64_t whole = 0;  ///< SettingType::whole
  double fraction = 0;      ///< SettingType::fraction
  bool boolean = false;     ///< SettingType::boolean
};

/// One key of a settings table.
template <class Settings>
struct SettingKey {
  std::string_view name;  ///< "batch": the CLI's --batch, the C API's key, Python's batch=
  SettingType type = SettingType::text;
  /// The default, as text; empty when the key is unset by default (the
  /// library then decides, or the value is optional).
  std::string_view default_text;
  /// Bounds of whole and fraction values, both included. Whole bounds are
  /// exact up to 2^53.
  double low = 0;
  double high = 0;
  /// Environment variable read when the key is not given; empty: none.
  std::string_view env;
  /// What the key sets, in one line (the CLI's --help, the docs).
  std::string_view help;
  /// Stores a value that passed the type and bounds; a choice or text value
  /// is parsed here, and a refusal's message says why, without the key
  /// (the reader adds it).
  Result<void> (*store)(Settings& settings, const SettingValue& value) = nullptr;
};

/// Where environment variables come from: the value of one, or nothing.
using EnvironmentLookup = std::function<std::optional<std::string>(std::string_view name)>;

/// The process's own environment (getenv).
EnvironmentLookup process_environment();

/// What a bad value in an environment variable is.
enum class BadEnvironment : std::uint8_t {
  fail,    ///< an error, as a bad value given as a setting
  ignore,  ///< the key keeps its default, and the returned notes say why
};

namespace setting_detail {

/// Whether `given` names the key `name` ('_' standing for '-').
bool key_matches(std::string_view name, std::string_view given) noexcept;

/// Checks `text` against a key's type and bounds; the error's message is the
/// reason alone ("not a whole number from 1 to 65536").
[[nodiscard]] Result<SettingValue> check_value(SettingType type, double low, double high, std::string_view text);

/// "batch '0': not a whole number from 1 to 65536": the error of every front
/// end for a bad value; `who` is the key, or the environment variable the
/// value came from.
Error bad_value(std::string_view who, std::string_view value, std::string_view why);

/// "HWACCEL_BACKENDS ignored: ...": the note of a bad environment value ignored.
std::string ignored_value(std::string_view env, std::string_view value, std::string_view why);

/// Checks and stores one value; the error's message is the reason alone.
template <class Settings>
[[nodiscard]] Result<void> read_one(Settings& settings, const SettingKey<Settings>& key, std::string_view text) {
  auto checked = check_value(key.type, key.low, key.high, text);
  if (!checked) return fail(checked.error());
  return key.store(settings, *checked);
}

template <class>
struct member_pointer;
template <class Owner, class Value>
struct member_pointer<Value Owner::*> {
  using owner = Owner;
  using value = Value;
};
/// The settings type a field pointer belongs to, and the field's type.
template <auto Field>
using owner_of = typename member_pointer<decltype(Field)>::owner;
template <auto Field>
using value_of = typename member_pointer<decltype(Field)>::value;

}  // namespace setting_detail

// Stores for the common kinds of key, as SettingKey::store: a table row names
// the field, `&store_whole<&InferenceSettings::batch>`, instead of a function
// of its own. A field may be std::optional of its type.

/// A whole number, converted to the field's type (the key's bounds fit it).
template <auto Field>
[[nodiscard]] Result<void> store_whole(setting_detail::owner_of<Field>& settings, const SettingValue& value) {
  using T = setting_detail::value_of<Field>;
  if constexpr (requires { typename T::value_type; })
    settings.*Field = static_cast<typename T::value_type>(value.whole);
  else
    settings.*Field = static_cast<T>(value.whole);
  return {};
}

/// A fraction.
template <auto Field>
[[nodiscard]] Result<void> store_fraction(setting_detail::owner_of<Field>& settings, const SettingValue& value) {
  settings.*Field = value.fraction;
  return {};
}

/// A boolean.
template <auto Field>
[[nodiscard]] Result<void> store_boolean(setting_detail::owner_of<Field>& settings, const SettingValue& value) {
  settings.*Field = value.boolean;
  return {};
}

/// The text as given (a path, a name the caller resolves later).
template <auto Field>
[[nodiscard]] Result<void> store_text(setting_detail::owner_of<Field>& settings, const SettingValue& value) {
  settings.*Field = std::string(value.text);
  return {};
}

/// What a library parser makes of the text; its refusal is the reason the
/// reader reports.
template <auto Parse, auto Field>
[[nodiscard]] Result<void> store_parsed(setting_detail::owner_of<Field>& settings, const SettingValue& value) {
  auto parsed = Parse(value.text);
  if (!parsed) return fail(parsed.error());
  settings.*Field = std::move(*parsed);
  return {};
}

/// The key of `keys` named `name` ('_' standing for '-'), or nullptr.
template <class Settings>
const SettingKey<Settings>* find_setting_key(std::span<const SettingKey<Settings>> keys, std::string_view name) noexcept {
  for (const auto& key : keys)
    if (setting_detail::key_matches(key.name, name)) return &key;
  return nullptr;
}

/// The value given for `name` (the last one, when given more than once), or nullptr.
const Setting* find_setting(std::span<const Setting> values, std::string_view name) noexcept;

/// Reads `values` into `settings` through the table `keys`: each value is
/// checked against its key's type and bounds, then stored; values whose
/// keys are not in the table are left for other tables (a request holds the
/// keys of several). A key given more than once takes its last value. A key
/// not given whose environment variable is set (and not blank) reads that,
/// when `environment` is given. The first bad value is an invalid_input error
/// whose message, "KEY 'VALUE': why" ("ENV 'VALUE': why" for an environment
/// variable), is what every front end shows. Returns the notes of bad
/// environment values ignored (BadEnvironment::ignore).
template <class Settings>
[[nodiscard]] Result<std::vector<std::string>> read_settings(Settings& settings, std::span<const SettingKey<Settings>> keys,
                                                             std::span<const Setting> values,
                                                             const EnvironmentLookup& environment = {},
                                                             BadEnvironment bad = BadEnvironment::fail) {
  std::vector<std::string> notes;
  for (const auto& key : keys) {
    if (const Setting* given = find_setting(values, key.name)) {
      if (auto r = setting_detail::read_one(settings, key, given->value); !r)
        return fail(setting_detail::bad_value(key.name, given->value, r.error().message));
      continue;
    }
    if (key.env.empty() || !environment) continue;
    const std::optional<std::string> text = environment(key.env);
    if (!text || text->find_first_not_of(" \t\r\n") == std::string::npos) continue;
    // A bad value must not half-fill the settings: it is read into a copy.
    Settings candidate = settings;
    if (auto r = setting_detail::read_one(candidate, key, *text); !r) {
      if (bad == BadEnvironment::fail) return fail(setting_detail::bad_value(key.env, *text, r.error().message));
      notes.push_back(setting_detail::ignored_value(key.env, *text, r.error().message));
      continue;
    }
    settings = std::move(candidate);
  }
  return notes;
}

}  // namespace hwaccel
