// `hwaccel backends`: the detectors, the tools each may run, and the plugins
// found in plugin folders.
#include "commands.hpp"

#include <iostream>
#include <memory>
#include <string>

#include "detect_builder.hpp"

import hwaccel;

namespace hwaccel::cli {

namespace {

void print_plugin(const PluginDescription& p) {
  const auto& d = p.descriptor;
  std::cout << (d && !d->name.empty() ? d->name : std::string("?")) << " (plugin " << p.file.path << ", "
            << p.file.origin << ")";
  if (p.problem) {
    std::cout << "\tnot loaded: " << *p.problem << "\n";
    return;
  }
  if (!d->version.empty()) std::cout << "\tversion: " << d->version;
  if (!d->tools.empty()) {
    std::cout << "\ttools:";
    for (const auto& t : d->tools) std::cout << " " << t;
  }
  if (!d->description.empty()) std::cout << "\t" << d->description;
  std::cout << "\n";
}

}  // namespace

Command add_backends_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("backends", "List the detectors, the tools each may run, and the plugins found");
  auto args = std::make_shared<DetectArgs>();
  args->command = "backends";
  add_detect_setting_options(*cmd, *args, {"timeout-ms", "plugin-path", "plugins-in-process", "plugin-host"});
  cmd->footer(
      "Prints the detectors in the order they report, one a line: the backend name (as --backends and\n"
      "HWACCEL_BACKENDS take it; \"(host probe)\" marks probes that are not backends) and the tools it may run.\n"
      "Then each plugin of the plugin folders ($HWACCEL_PLUGIN_PATH, then the system folder): its name, file\n"
      "and folder, version, tools and description, or why it is not loaded (docs/plugins.md). Listing a plugin\n"
      "loads it (in hwaccel-plugin-host unless --plugins-in-process) but detects nothing.\n"
      "\n" +
      std::string(common_help_footer));
  return {cmd, [args] {
            auto settings = detect_settings(*args);
            if (!settings) return fail_with("backends", settings.error());
            for (const Detector* d : detector_table()) {
              std::cout << d->name << (d->backend ? "" : " (host probe)");
              if (!d->tools.empty()) {
                std::cout << "\ttools:";
                for (auto t : d->tools) std::cout << " " << t;
              }
              std::cout << "\n";
            }
            for (const auto& p : describe_plugins(settings->plugins, settings->tool_timeout))
              print_plugin(p);
            return 0;
          }};
}

}  // namespace hwaccel::cli
