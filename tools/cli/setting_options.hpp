// The library's settings tables as command-line options: each key an option
// named after it, whose value the library's reader checks (with the C API's
// and the Python package's error text). Include after `import hwaccel;`.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common.hpp"

namespace hwaccel::cli {

/// The options add_setting_options registered, by key (for required(),
/// excludes() and needs()).
using SettingOptions = std::map<std::string, CLI::Option*, std::less<>>;

/// The help line of a key: what it sets, its bounds and its default.
template <class Settings>
std::string setting_help(const SettingKey<Settings>& key) {
  std::string help(key.help);
  std::string extra;
  if (key.type == SettingType::whole)
    extra = text::cat(static_cast<std::uint64_t>(key.low), " to ", static_cast<std::uint64_t>(key.high));
  else if (key.type == SettingType::fraction)
    extra = text::cat(key.low, " to ", key.high);
  std::string fallback;
  if (!key.default_text.empty() && key.type != SettingType::boolean) fallback = text::cat("default ", key.default_text);
  if (!key.env.empty()) fallback += text::cat(fallback.empty() ? "default $" : ", or $", key.env);
  if (!fallback.empty()) extra += text::cat(extra.empty() ? "" : "; ", fallback);
  return extra.empty() ? help : text::cat(help, " (", extra, ")");
}

/// Registers the keys of `keys` (every one, or those `only` names) on `cmd`,
/// appending each one given to `values` as (key, value). A boolean whose
/// default is true is a flag --no-KEY, one whose default is false a flag
/// --KEY, one without a default an option --KEY on|off; every other key is
/// an option --KEY VALUE.
template <class Settings>
SettingOptions add_setting_options(CLI::App& cmd, std::span<const SettingKey<Settings>> keys, SettingTexts& values,
                                   std::initializer_list<std::string_view> only = {}) {
  SettingOptions options;
  for (const auto& key : keys) {
    if (only.size() && std::find(only.begin(), only.end(), key.name) == only.end()) continue;
    const std::string name(key.name);
    CLI::Option* option = nullptr;
    if (key.type == SettingType::boolean && key.default_text == "true") {
      option = cmd.add_flag_callback(
          "--no-" + name, [&values, name] { values.emplace_back(name, "false"); },
          setting_help(key) + " (on by default; this turns it off)");
    } else if (key.type == SettingType::boolean && key.default_text == "false") {
      option = cmd.add_flag_callback("--" + name, [&values, name] { values.emplace_back(name, "true"); }, setting_help(key));
    } else {
      option = cmd.add_option_function<std::string>(
          "--" + name, [&values, name](const std::string& value) { values.emplace_back(name, value); }, setting_help(key));
      option->type_name(key.type == SettingType::whole      ? "N"
                        : key.type == SettingType::fraction ? "X"
                        : key.type == SettingType::boolean  ? "on|off"
                                                            : "TEXT");
    }
    options.emplace(name, option);
  }
  return options;
}

/// The settings given, as the library's readers take them.
inline std::vector<Setting> settings_of(const SettingTexts& given) {
  std::vector<Setting> values;
  values.reserve(given.size());
  for (const auto& [key, value] : given) values.push_back(Setting{key, value});
  return values;
}

/// A library error as a command's failure: a bad value or an inconsistent
/// request is a usage error (exit 2), anything else exit `otherwise`.
inline CommandError command_error(const Error& e, int otherwise = exit_failure) {
  return CommandError{e.message, e.kind == ErrorKind::invalid_input ? exit_usage : otherwise};
}

/// A library result as a command's: its error through command_error.
template <class T>
CommandResult<T> checked(Result<T> r, int otherwise = exit_failure) {
  if (!r) return tl::unexpected(command_error(r.error(), otherwise));
  return std::move(*r);
}

}  // namespace hwaccel::cli
