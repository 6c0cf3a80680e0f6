// hwaccel: detect AI accelerators, report what they can do, plan how models
// run on them. Data goes to stdout, diagnostics to stderr.
#include "commands.hpp"

#include <array>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

import hwaccel;

namespace {

using namespace hwaccel::cli;

struct Subcommand {
  std::string_view name;
  Command (*add)(CLI::App&);
};

// In the order `hwaccel --help` lists them.
constexpr std::array subcommands{
    Subcommand{"detect", &add_detect_command},       Subcommand{"capture", &add_capture_command},
    Subcommand{"backends", &add_backends_command},   Subcommand{"plan", &add_plan_command},
    Subcommand{"specs", &add_specs_command},         Subcommand{"models", &add_models_command},
    Subcommand{"train", &add_train_command},         Subcommand{"recommend", &add_recommend_command},
    Subcommand{"summary", &add_summary_command},     Subcommand{"doctor", &add_doctor_command},
#if !defined(_WIN32)
    // Windows has these only where the library's Linux modules are ported
    // (docs/windows.md): telemetry, HTTP, fleets, watching, leases.
    Subcommand{"metrics", &add_metrics_command},     Subcommand{"serve", &add_serve_command},
    Subcommand{"fleet", &add_fleet_command},         Subcommand{"export", &add_export_command},
    Subcommand{"watch", &add_watch_command},         Subcommand{"place", &add_place_command},
    Subcommand{"top", &add_top_command},             Subcommand{"run", &add_run_command},
    Subcommand{"leases", &add_leases_command},       Subcommand{"usage", &add_usage_command},
#endif
};

const Subcommand* subcommand_named(std::string_view name) {
  for (const auto& s : subcommands)
    if (s.name == name) return &s;
  return nullptr;
}

bool asks_for_help(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "-h" || a == "--help" || a == "--help-all") return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string version = "hwaccel " + std::string(hwaccel::library_version());
  // Scripts probe for the tool with --version: it is answered before any
  // parser is built (the start-up benchmark's floor).
  if (argc == 2 && (std::string_view(argv[1]) == "--version" || std::string_view(argv[1]) == "-V")) {
    std::puts(version.c_str());
    return std::fflush(stdout) == 0 ? 0 : exit_failure;
  }

  // Bare `hwaccel [detect options]` means `hwaccel detect`.
  DetectArgs top_args;
  top_args.command.clear();  // its messages say "hwaccel: ..."
  // `hwaccel` and `hwaccel detect` alone, what scripts and launchers run most,
  // take every default: building CLI11's options for detect costs a quarter
  // of the instructions of a detection on a machine without accelerators.
  // The settings still come from the environment, read by the library.
  if (argc == 1) return run_detect(top_args);
  if (argc == 2 && std::string_view(argv[1]) == "detect") return run_detect(DetectArgs{});

  CLI::App app{"hwaccel: detect AI accelerators, report what they can do, and plan how models run on them.\n"
               "Without a subcommand, `hwaccel` runs `hwaccel detect` with the options below;\n"
               "`hwaccel COMMAND --help` describes each command."};
  app.name("hwaccel");
  app.set_version_flag("--version,-V", version);
  app.footer(std::string(common_help_footer));
  app.require_subcommand(0, 1);

  // Only the subcommand that runs is built: the parser of every option of
  // every command costs more than detecting a machine without accelerators.
  // All of them are built for --help, and where a subcommand's name comes
  // after other arguments or none is named but words are given (a typo gets
  // CLI11's own message).
  const Subcommand* named = argc > 1 ? subcommand_named(argv[1]) : nullptr;
  bool words = false;
  for (int i = 1; i < argc && !named; ++i) words = words || argv[i][0] != '-';
  const bool build_all = !named && (words || asks_for_help(argc, argv));
  std::vector<Command> commands;
  for (const auto& s : subcommands)
    if (build_all || named == &s) commands.push_back(s.add(app));

  // A named subcommand's options follow its name, so the top level then
  // takes none (and `hwaccel detect` does not build the detect options twice).
  if (!named) add_detect_options(app, top_args);

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
