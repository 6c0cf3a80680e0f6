// `hwaccel metrics`: one telemetry sample as Prometheus metrics, on stdout or
// atomically into node-exporter's textfile-collector folder.
#include "commands.hpp"

#include <iostream>
#include <memory>
#include <optional>
#include <string>

import hwaccel;

#include "detect_builder.hpp"

namespace hwaccel::cli {
namespace {

struct MetricsArgs {
  DetectArgs detect;
  bool openmetrics = false;
  bool json = false;
  std::string textfile_dir;
};

int run_metrics(const MetricsArgs& args) {
  const auto settings = detect_settings(args.detect);
  if (!settings) return fail_with("metrics", settings.error());
  auto machine = detect_machine(args.detect);
  if (!machine) return fail_with("metrics", machine.error());
  const System& system = *machine->system;
  const AcceleratorRegistry& registry = machine->registry;
  TelemetryOptions options;
  options.tool_timeout = settings->tool_timeout;
  const TelemetrySample sample = sample_telemetry(registry, system, options);
  ExporterCounters counters;
  counters.scrapes = 1;
  for (const auto& source : sample.failed_sources) ++counters.scrape_errors[source];
  for (const auto& w : sample.warnings) note("metrics", "warning: " + w.backend + ": " + w.message);
  if (args.json) {
    std::cout << to_json(sample, args.detect.pretty) << "\n";
    std::cout.flush();
    return std::cout.good() ? 0 : exit_failure;
  }
  const std::string text =
      metrics_text(registry, sample, counters, args.openmetrics ? MetricsFormat::openmetrics : MetricsFormat::prometheus_text);
  if (!args.textfile_dir.empty()) {
    if (auto written = replace_file(args.textfile_dir + "/hwaccel.prom", text); !written)
      return fail_with("metrics", written.error());
    return 0;
  }
  std::cout << text;
  std::cout.flush();
  return std::cout.good() ? 0 : exit_failure;
}

}  // namespace

Command add_metrics_command(CLI::App& app) {
  auto args = std::make_shared<MetricsArgs>();
  auto* cmd = app.add_subcommand("metrics", "Print one telemetry sample of every device as Prometheus metrics");
  cmd->footer(
      "Detects the devices, reads their telemetry (utilization, memory, temperatures, power, clocks, ECC\n"
      "and throttle reasons; docs/metrics.md) and prints it in the Prometheus text format, or\n"
      "OpenMetrics with --openmetrics. With --textfile DIR the output replaces DIR/hwaccel.prom\n"
      "atomically, for node-exporter's textfile collector (run it from cron or a systemd timer).\n"
      "`hwaccel serve` serves the same metrics over HTTP.\n"
      "\n"
      "Examples:\n"
      "  hwaccel metrics\n"
      "  hwaccel metrics --textfile /var/lib/prometheus/node-exporter\n"
      "  hwaccel metrics --fixture fixtures/machines/dgx-h100-8x-nvswitch\n"
      "\n" +
      std::string(common_help_footer));
  add_machine_options(*cmd, args->detect, "Read a captured machine (fixture folder) instead of this one");
  auto* openmetrics = cmd->add_flag("--openmetrics", args->openmetrics, "OpenMetrics 1.0 instead of the Prometheus text format 0.0.4");
  auto* textfile = cmd->add_option("--textfile", args->textfile_dir, "Write DIR/hwaccel.prom atomically instead of printing")
      ->check(CLI::ExistingDirectory);
  auto* json = cmd->add_flag("--json", args->json, "The sample as JSON (docs/metrics.md) instead of metrics");
  json->excludes(openmetrics)->excludes(textfile);
  cmd->add_flag("--pretty", args->detect.pretty, "Indent the JSON");
  add_log_options(*cmd, args->detect.log);
  return {cmd, [args] { return run_metrics(*args); }};
}

}  // namespace hwaccel::cli
