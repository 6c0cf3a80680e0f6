// Fuzz target for the settings reader: key=value lines, as a front end hands
// them over (CLI options, C API request keys, Python keyword arguments), read
// through every settings table, with a fake environment from the same lines.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.hpp"

import hwaccel;

namespace hwaccel::fuzz {

namespace {

std::vector<Setting> settings_of(std::string_view input, std::vector<Setting>& environment) {
  std::vector<Setting> values;
  while (!input.empty() && values.size() + environment.size() < 256) {
    const auto end = input.find('\n');
    const std::string_view line = input.substr(0, end);
    input = end == std::string_view::npos ? std::string_view{} : input.substr(end + 1);
    const auto eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    Setting s{std::string(line.substr(0, eq)), std::string(line.substr(eq + 1))};
    // "$NAME=value" is an environment variable.
    if (s.key.starts_with('$'))
      environment.push_back(Setting{s.key.substr(1), std::move(s.value)});
    else
      values.push_back(std::move(s));
  }
  return values;
}

// A refusal names what it refused: "KEY 'VALUE': why".
void check_error(const Error& e, std::string_view table, Findings& findings) {
  findings.check(e.kind == ErrorKind::invalid_input, std::string(table) + ": a bad value is not invalid_input");
  findings.check(e.message.find('\'') != std::string::npos, std::string(table) + ": an error that does not quote the value");
}

}  // namespace

void settings_text(std::string_view, std::string_view input, Findings& findings) {
  std::vector<Setting> environment;
  const auto values = settings_of(input, environment);
  const EnvironmentLookup lookup = [&environment](std::string_view name) -> std::optional<std::string> {
    for (const auto& e : environment)
      if (e.key == name) return e.value;
    return std::nullopt;
  };
  if (auto d = read_detect_settings(values, lookup, BadEnvironment::fail)) {
    findings.check(d->tool_timeout.count() >= 1 && d->tool_timeout <= max_tool_timeout, "detect: a deadline out of bounds");
  } else {
    check_error(d.error(), "detect", findings);
  }
  // Ignored environment values never fail a detection.
  if (auto d = read_detect_settings(values, lookup, BadEnvironment::ignore); !d) check_error(d.error(), "detect", findings);
  if (auto i = read_inference_settings(values); !i) check_error(i.error(), "inference", findings);
  if (auto p = read_planning_inputs(values, lookup); !p) check_error(p.error(), "planning", findings);
  if (auto t = read_training_settings(values); !t) check_error(t.error(), "training", findings);
  if (auto s = read_scan_options(values); !s) check_error(s.error(), "scan", findings);
  if (auto o = read_placement_options(values); !o) check_error(o.error(), "placement", findings);
}

}  // namespace hwaccel::fuzz
