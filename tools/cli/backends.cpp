// `hwaccel backends`: the detectors and the tools each may run.
#include "commands.hpp"

#include <iostream>

import hwaccel;

namespace hwaccel::cli {

Command add_backends_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("backends", "List the detectors and the tools each may run");
  cmd->footer(
      "Prints the detectors in the order they report, one a line: the backend name (as --backends and\n"
      "HWACCEL_BACKENDS take it; \"(host probe)\" marks probes that are not backends) and the tools it may run.\n"
      "\n" +
      std::string(common_help_footer));
  return {cmd, [] {
            for (const Detector* d : detector_table()) {
              std::cout << d->name << (d->backend ? "" : " (host probe)");
              if (!d->tools.empty()) {
                std::cout << "\ttools:";
                for (auto t : d->tools) std::cout << " " << t;
              }
              std::cout << "\n";
            }
            return 0;
          }};
}

}  // namespace hwaccel::cli
