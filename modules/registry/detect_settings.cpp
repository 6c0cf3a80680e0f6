// The detection settings' table: what --backends, --timeout-ms,
// --no-system-probes, --all-tools and -v (HWACCEL_BACKENDS, HWACCEL_LOG) set, read by
// the CLI, the C API, the Python package and AcceleratorRegistry::detect().
module;
#include <array>
#include <bitset>
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.registry;

namespace hwaccel {

namespace {

using Key = SettingKey<DetectSettings>;

constexpr std::array detect_keys = {
    Key{"backends", SettingType::text, "all", 0, 0, "HWACCEL_BACKENDS",
        "Comma list of backends to run (cpu,cuda; all; none); see `hwaccel backends`",
        &store_parsed<&parse_backend_list, &DetectSettings::backends>},
    Key{"timeout-ms", SettingType::whole, "5000", 1, static_cast<double>(max_tool_timeout.count()), "",
        "Deadline for each tool run, in milliseconds",
        [](DetectSettings& s, const SettingValue& v) -> Result<void> {
          s.tool_timeout = std::chrono::milliseconds(v.whole);
          return {};
        }},
    Key{"system-probes", SettingType::boolean, "true", 0, 0, "",
        "Host probes: environment, storage, network",
        &store_boolean<&DetectSettings::system_probes>},
    Key{"all-tools", SettingType::boolean, "false", 0, 0, "",
        "Look for every backend's tools, also where its devices leave no trace in /sys/module, /dev or PCI",
        &store_boolean<&DetectSettings::all_tools>},
    Key{"plugin-path", SettingType::text, "", 0, 0, "HWACCEL_PLUGIN_PATH",
        "Folders of plugins, ':' between, searched before the system folder ($libdir/hwaccel/plugins)",
        [](DetectSettings& s, const SettingValue& v) -> Result<void> {
          s.plugins.path = v.text;
          return {};
        }},
    Key{"plugins-in-process", SettingType::boolean, "false", 0, 0, "",
        "Load plugins into this process instead of a hwaccel-plugin-host child: faster, but a plugin's crash or hang is then hwaccel's",
        [](DetectSettings& s, const SettingValue& v) -> Result<void> {
          s.plugins.in_process = v.boolean;
          return {};
        }},
    Key{"plugin-host", SettingType::text, "", 0, 0, "HWACCEL_PLUGIN_HOST",
        "The hwaccel-plugin-host program isolated plugins run in (default: beside this program, else $libexecdir/hwaccel)",
        [](DetectSettings& s, const SettingValue& v) -> Result<void> {
          s.plugins.host = v.text;
          return {};
        }},
    Key{"log-level", SettingType::choice, "", 0, 0, "HWACCEL_LOG",
        "Diagnostic events wanted: warn, info, debug or trace",
        [](DetectSettings& s, const SettingValue& v) -> Result<void> {
          const auto level = parse_log_level(v.text);
          if (!level) return fail(ErrorKind::invalid_input, "not warn, info, debug or trace");
          s.log_level = *level;
          return {};
        }},
};

}  // namespace

std::span<const SettingKey<DetectSettings>> detect_setting_keys() noexcept { return detect_keys; }

Result<DetectSettings> read_detect_settings(std::span<const Setting> values, const EnvironmentLookup& environment,
                                            BadEnvironment bad) {
  DetectSettings settings;
  auto notes = read_settings(settings, detect_setting_keys(), values, environment, bad);
  if (!notes) return fail(notes.error());
  for (auto& note : *notes) settings.warnings.push_back(Warning{"detect", WarningKind::invalid_value, std::move(note)});
  return settings;
}

DetectBuilder DetectSettings::builder() const {
  DetectBuilder builder;
  builder.only(backends).system_probes(system_probes).tool_timeout(tool_timeout).all_tools(all_tools).plugins(plugins);
  for (const auto& w : warnings) builder.warning(w);
  return builder;
}

}  // namespace hwaccel
