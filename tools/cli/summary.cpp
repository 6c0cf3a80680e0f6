// `hwaccel summary`: the compact JSON view, the same as `hwaccel detect --summary`.
#include "commands.hpp"

#include <memory>
#include <string>

import hwaccel;

namespace hwaccel::cli {

Command add_summary_command(CLI::App& app) {
  auto args = std::make_shared<DetectArgs>();
  args->command = "summary";
  auto* cmd = app.add_subcommand("summary", "Detect and print a compact JSON summary (as `hwaccel detect --summary`)");
  cmd->footer(
      "Prints one JSON document: the version, the registry's schema version, device counts by family and by\n"
      "backend, the best available device, total and accelerator memory, and warning counts by kind\n"
      "(docs/json.md, \"Summary\"; docs/summary.schema.json).\n"
      "\n"
      "Examples:\n"
      "  hwaccel summary\n"
      "  hwaccel summary --fixture fixtures/machines/dgx-h100-8x-nvswitch --pretty\n"
      "\n" +
      std::string(common_help_footer));
  add_detect_options(*cmd, *args);
  return {cmd, [args] {
            args->summary = true;
            return run_detect(*args);
          }};
}

}  // namespace hwaccel::cli
