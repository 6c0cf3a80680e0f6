// `hwaccel doctor`: why an accelerator is not detected or not usable here,
// with a cause, a remedy and the evidence for each.
#include "commands.hpp"

#include <iostream>
#include <memory>
#include <string>

import hwaccel;

#include "detect_builder.hpp"

namespace hwaccel::cli {
namespace {

struct DoctorArgs {
  DetectArgs detect;
  bool json = false;
};

int run_doctor_command(const DoctorArgs& args) {
  auto builder = make_builder(args.detect);
  if (!builder) return fail_with("doctor", builder.error());
  DoctorReport report;
  if (!args.detect.fixture.empty()) {
    auto fixture = FixtureSystem::open(args.detect.fixture);
    if (!fixture) return fail_with("doctor", "cannot replay fixture: " + fixture.error().message, exit_failure);
    report = run_doctor(**fixture, *builder);
  } else {
    const auto live = make_live_system();
    report = run_doctor(*live, *builder);
  }
  std::cout << (args.json ? doctor_json(report, args.detect.pretty) : doctor_text(report));
  if (args.json && !args.detect.pretty) std::cout << "\n";
  std::cout.flush();
  if (!std::cout.good()) return exit_failure;
  return report.usable() ? 0 : 1;
}

}  // namespace

Command add_doctor_command(CLI::App& app) {
  auto args = std::make_shared<DoctorArgs>();
  auto* cmd = app.add_subcommand("doctor", "Explain why an accelerator is not detected or not usable, and what to do");
  cmd->footer(
      "Detects the machine while recording what each backend looked at, then checks what detection cannot\n"
      "report by itself: PCI functions of known accelerators without a usable driver (none, vfio-pci,\n"
      "nouveau), device nodes that are missing (in a container: not mounted) or that this user cannot open,\n"
      "visible-devices variables that hide every device, and vendor tools that failed or are missing.\n"
      "Each finding has a cause, a remedy and its evidence (path, mode, owner, group, the user's groups,\n"
      "the tool's exit and first line of output). docs/doctor.md.\n"
      "\n"
      "Exit status: 0 every accelerator found is usable, 1 a finding keeps one from being used (or the\n"
      "fixture could not be read), 2 bad usage.\n"
      "\n"
      "Examples:\n"
      "  hwaccel doctor\n"
      "  hwaccel doctor --json\n"
      "  hwaccel doctor --fixture fixtures/doctor/kfd-not-readable\n"
      "\n" +
      std::string(common_help_footer));
  cmd->add_option("--fixture", args->detect.fixture, "Examine a captured machine (fixture folder) instead of this one")
      ->check(CLI::ExistingDirectory);
  add_detect_setting_options(*cmd, args->detect);
  cmd->add_flag("--json", args->json, "JSON output (docs/doctor.md)");
  cmd->add_flag("--pretty", args->detect.pretty, "Indent the JSON");
  add_log_options(*cmd, args->detect.log);
  return {cmd, [args] { return run_doctor_command(*args); }};
}

}  // namespace hwaccel::cli
