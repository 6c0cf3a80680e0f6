// hwaccel: detect AI accelerators, report what they can do, plan how models
// run on them. Data goes to stdout, diagnostics to stderr.
#include "commands.hpp"

#include <memory>
#include <string>
#include <vector>

import hwaccel;

int main(int argc, char** argv) {
  using namespace hwaccel::cli;
  CLI::App app{"hwaccel: detect AI accelerators, report what they can do, and plan how models run on them.\n"
               "Without a subcommand, `hwaccel` runs `hwaccel detect` with the options below;\n"
               "`hwaccel COMMAND --help` describes each command."};
  app.name("hwaccel");
  app.set_version_flag("--version,-V", "hwaccel " + std::string(hwaccel::library_version()));
  app.footer(std::string(common_help_footer));
  app.require_subcommand(0, 1);

  std::vector<Command> commands;
  commands.push_back(add_detect_command(app));
  commands.push_back(add_capture_command(app));
  commands.push_back(add_backends_command(app));
  commands.push_back(add_plan_command(app));
  commands.push_back(add_specs_command(app));
  commands.push_back(add_models_command(app));
  commands.push_back(add_train_command(app));
  commands.push_back(add_recommend_command(app));

  // Bare `hwaccel [detect options]` means `hwaccel detect`.
  DetectArgs top_args;
  add_detect_options(app, top_args);

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return exit_usage;
  }
  for (const auto& c : commands)
    if (c.app->parsed()) return c.run();
  return run_detect(top_args);
}
