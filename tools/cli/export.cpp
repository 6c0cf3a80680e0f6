// `hwaccel export`: this node described to a scheduler in its own format
// (Node Feature Discovery labels for Kubernetes, gres.conf and slurm.conf for Slurm).
#include "commands.hpp"

#include <chrono>
#include <iostream>
#include <string_view>
#include <memory>
#include <optional>
#include <string>
#include <thread>

import hwaccel;

#include "detect_builder.hpp"

namespace hwaccel::cli {
namespace {

struct NfdArgs {
  DetectArgs detect;
  bool vendor_labels = false;
  std::string output;
  int expiry_hours = 0;
  int every_seconds = 0;
};

struct SlurmArgs {
  DetectArgs detect;
  std::string node_name;
  bool node_line = false;
  bool node_name_in_gres = false;
  std::string output;
};

int emit(std::string_view command, const std::string& output, const std::string& text) {
  if (output.empty()) {
    std::cout << text;
    std::cout.flush();
    return std::cout.good() ? 0 : exit_failure;
  }
  if (auto written = replace_file(output, text); !written) return fail_with(command, written.error());
  return 0;
}

int run_nfd(const NfdArgs& args) {
  // With --every the labels follow the node (a GPU lost, a driver upgraded):
  // each round detects again and replaces the file.
  for (;;) {
    const auto machine = detect_machine(args.detect);
    if (!machine) return fail_with("export nfd", machine.error());
    NfdOptions options;
    options.vendor_labels = args.vendor_labels;
    options.system = machine->system.get();
    const auto labels = nfd_labels(machine->registry, options);
    std::optional<std::chrono::system_clock::time_point> expiry;
    if (args.expiry_hours > 0) expiry = std::chrono::system_clock::now() + std::chrono::hours(args.expiry_hours);
    const int code = emit("export nfd", args.output, nfd_feature_file(labels, expiry));
    if (args.every_seconds == 0) return code;
    std::this_thread::sleep_for(std::chrono::seconds(args.every_seconds));
  }
}

int run_slurm(const SlurmArgs& args) {
  const auto machine = detect_machine(args.detect);
  if (!machine) return fail_with("export slurm", machine.error());
  SlurmOptions options;
  if (!args.node_name.empty()) options.node_name = args.node_name;
  options.node_name_in_gres = args.node_name_in_gres;
  const SlurmNodeConfig config = slurm_node_config(machine->registry, *machine->system, options);
  for (const auto& w : config.warnings) note("export slurm", "warning: " + w);
  const std::string text = args.node_line
                               ? "# slurm.conf lines from hwaccel (docs/fleet.md)\nGresTypes=" + config.gres_types + "\n" +
                                     config.node_line + "\n"
                               : config.gres_conf;
  return emit("export slurm", args.output, text);
}

}  // namespace

Command add_export_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("export", "Describe this node to a scheduler: NFD labels, Slurm gres.conf");
  cmd->require_subcommand(1);
  cmd->footer(
      "Examples:\n"
      "  hwaccel export nfd --vendor-labels --output /etc/kubernetes/node-feature-discovery/features.d/hwaccel\n"
      "  hwaccel export slurm > /etc/slurm/gres.conf\n"
      "  hwaccel export slurm --node-line             (the slurm.conf NodeName= line)\n"
      "\n"
      "docs/fleet.md lists every label and explains each gres.conf field.\n\n" +
      std::string(common_help_footer));

  auto nfd = std::make_shared<NfdArgs>();
  auto* n = cmd->add_subcommand("nfd", "Node labels as a Node Feature Discovery features.d file");
  add_machine_options(*n, nfd->detect, "Describe a captured machine (fixture folder) instead of this one");
  n->add_flag("--vendor-labels", nfd->vendor_labels,
              "Also the labels NVIDIA GPU feature discovery, AMD's node labeller and Intel's GPU labels use");
  auto* output = n->add_option("--output", nfd->output,
                               "Replace this file atomically instead of printing (NFD's features.d folder)");
  n->add_option("--expiry-hours", nfd->expiry_hours, "NFD drops the labels this long after the file was written")
      ->check(CLI::Range(0, 24 * 365));
  n->add_option("--every", nfd->every_seconds,
                "Run until stopped, detecting again and replacing --output every this many seconds (a DaemonSet)")
      ->check(CLI::Range(1, 24 * 3600))
      ->needs(output);
  add_log_options(*n, nfd->detect.log);

  auto slurm = std::make_shared<SlurmArgs>();
  auto* s = cmd->add_subcommand("slurm", "gres.conf lines for this node (or its slurm.conf NodeName= line)");
  add_machine_options(*s, slurm->detect, "Describe a captured machine (fixture folder) instead of this one");
  add_host_option(*s, slurm->detect);
  s->add_option("--node-name", slurm->node_name, "NodeName (default: --host, else the host name)")
      ->check(host_name_validator());
  s->add_flag("--node-line", slurm->node_line, "Print the slurm.conf GresTypes= and NodeName= lines instead of gres.conf");
  s->add_flag("--node-name-in-gres", slurm->node_name_in_gres,
              "Begin every gres.conf line with NodeName=, for one gres.conf shared by all nodes");
  s->add_option("--output", slurm->output, "Replace this file atomically instead of printing");
  add_log_options(*s, slurm->detect.log);

  return {cmd, [=] { return n->parsed() ? run_nfd(*nfd) : run_slurm(*slurm); }};
}

}  // namespace hwaccel::cli
