// `hwaccel train`: training memory per device by method, precision,
// optimizer and sharding, checked against this machine, a fixture or
// hypothetical devices.
#include "commands.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <unistd.h>

import hwaccel;

#include "planning_registry.hpp"
#include "setting_options.hpp"

namespace hwaccel::cli {
namespace {

struct TrainArgs {
  /// The planning inputs, the training settings and --teacher,
  /// --reward-model, for the library's tables.
  SettingTexts settings;
  std::string fixture;
  bool json = false;
  bool human = false;
  bool pretty = false;
};

std::string gb(std::uint64_t b) { return fmt::format("{:.2f} GB", static_cast<double>(b) / 1e9); }

std::string count_text(std::uint64_t n) {
  const double v = static_cast<double>(n);
  if (v >= 1e9) return fmt::format("{:.2f} B", v / 1e9);
  if (v >= 1e6) return fmt::format("{:.2f} M", v / 1e6);
  if (v >= 1e3) return fmt::format("{:.1f} K", v / 1e3);
  return fmt::format("{}", n);
}

std::string_view precision_text(TrainingPrecision p) {
  switch (p) {
    case TrainingPrecision::fp32: return "fp32";
    case TrainingPrecision::bf16_mixed: return "bf16 mixed precision";
    case TrainingPrecision::fp16_mixed: return "fp16 mixed precision";
    case TrainingPrecision::bf16_pure: return "pure bf16";
  }
  return "?";
}

std::string human_estimate(const TrainingEstimate& e, bool color) {
  const char* bold = color ? "\033[1m" : "";
  const char* reset = color ? "\033[0m" : "";
  const char* red = color ? "\033[31m" : "";
  const char* green = color ? "\033[32m" : "";
  const char* yellow = color ? "\033[33m" : "";
  const TrainingSettings& s = e.settings;
  std::string out;
  if (e.model_source == ModelSource::parameter_count)
    out += fmt::format("{}Model{}        {} parameters ({} layers{})\n", bold, reset, count_text(e.parameters), e.layers,
                       e.architecture_assumed ? ", architecture assumed" : "");
  else
    out += fmt::format("{}Model{}        {} ({} parameters, {} layers{})\n", bold, reset, e.model_name,
                       count_text(e.parameters), e.layers, e.architecture_assumed ? ", architecture assumed" : "");
  std::string method(to_string(s.method));
  if (s.adapter) method += fmt::format(" with {}", to_string(*s.adapter));
  if (s.lora_rank && s.lora_targets)
    method += fmt::format(" (r={} on {}{})", *s.lora_rank, to_string(*s.lora_targets),
                          s.base_quantization ? fmt::format(", {} base", to_string(*s.base_quantization)) : std::string());
  if (s.prefix_length) method += fmt::format(" ({} prefix tokens)", *s.prefix_length);
  out += fmt::format("{}Method{}       {}, {}, {}; trainable {} parameters\n", bold, reset, method,
                     precision_text(s.precision), to_string(s.optimizer), count_text(e.trainable_parameters));
  out += fmt::format("{}Parallel{}     dp {} x tp {} x pp {} = {} device{}{}, ZeRO-{}, offload {}\n", bold, reset,
                     s.data_parallel, s.tensor_parallel, s.pipeline_parallel, s.devices(), s.devices() == 1 ? "" : "s",
                     s.sequence_parallel ? " (sequence parallel)" : "", s.zero_stage, to_string(s.offload));
  out += fmt::format("{}Workload{}     micro-batch {} x {} tokens, recompute {}, {} attention{}\n", bold, reset,
                     s.micro_batch, s.sequence, to_string(s.recompute), to_string(s.attention),
                     s.dropout ? ", dropout" : "");
  if (e.models.size() > 1) {
    out += fmt::format("{}Models{}\n", bold, reset);
    for (const auto& m : e.models)
      out += fmt::format("  {:<10} {} ({} parameters): {}\n", m.role, m.name, count_text(m.parameters), m.storage);
  }
  const DeviceMemory& d = e.per_device;
  out += fmt::format("\n{}Per device{} (pipeline stage {} of {}, layers {}-{})\n", bold, reset, d.stage, s.pipeline_parallel,
                     d.first_layer, d.first_layer + d.layer_count - (d.layer_count ? 1 : 0));
  out += fmt::format("  parameters   {:>12}\n  gradients    {:>12}\n  optimizer    {:>12}\n", gb(d.parameters_bytes),
                     gb(d.gradients_bytes), gb(d.optimizer_bytes));
  out += fmt::format("  model states {:>12}\n  activations  {:>12}\n  other        {:>12}\n", gb(d.model_states_bytes()),
                     gb(d.activations_bytes), gb(d.other_bytes));
  out += fmt::format("  {}total        {:>12}{}\n", bold, gb(d.total_bytes), reset);
  if (d.host_bytes > 0) out += fmt::format("  host         {:>12} (offloaded)\n", gb(d.host_bytes));
  out += fmt::format("\n{}{:<22} {:<10} {:<7} {:>11}  {}{}\n", bold, "COMPONENT", "MODEL", "WHERE", "BYTES", "RULE", reset);
  for (const auto& c : d.components)
    out += fmt::format("{:<22} {:<10} {:<7} {:>11}  {}\n", c.name, c.model, to_string(c.location), gb(c.bytes), c.rule);
  if (e.stages.size() > 1) {
    out += fmt::format("\n{}{:<6} {:>11} {:>14} {:>14} {:>14}{}\n", bold, "STAGE", "LAYERS", "MODEL STATES", "ACTIVATIONS",
                       "TOTAL", reset);
    for (const auto& st : e.stages)
      out += fmt::format("{:<6} {:>11} {:>14} {:>14} {:>14}\n", st.stage,
                         fmt::format("{}-{}", st.first_layer, st.first_layer + st.layer_count - 1), gb(st.model_states_bytes()),
                         gb(st.activations_bytes), gb(st.total_bytes));
  }
  if (e.fit) {
    out += fmt::format("\n{}Fits{}         {}{}{}: {}\n", bold, reset, e.fit->fits ? green : red, e.fit->fits ? "yes" : "no",
                       reset, e.fit->reason);
    if (e.fit->nodes > 1)
      out += fmt::format("{}Nodes{}        {} of {} devices each; launch on each: {}\n", bold, reset, e.fit->nodes,
                         e.fit->devices_per_node, e.fit->torchrun);
  }
  if (e.minimum) out += fmt::format("{}Minimum{}      {}\n", bold, reset, e.minimum->summary);
  if (!e.warnings.empty()) {
    out += fmt::format("\n{}Warnings{}\n", bold, reset);
    for (const auto& w : e.warnings) out += fmt::format("  {}!{} {}\n", yellow, reset, w);
  }
  out += fmt::format("\n{}Assumptions{}\n", bold, reset);
  for (const auto& a : e.assumptions) out += "  - " + a + "\n";
  return out;
}

int run_train(const TrainArgs& a) {
  const std::vector<Setting> values = settings_of(a.settings);
  auto inputs = checked(read_planning_inputs(values));
  if (!inputs) return fail_with("train", inputs.error());
  // The settings are checked together too (TrainingSettings::validate): an
  // invalid combination is a usage error.
  auto settings = checked(read_training_settings(values));
  if (!settings) return fail_with("train", settings.error());
  auto names = checked(read_training_models(values));
  if (!names) return fail_with("train", names.error());
  auto model = inputs->load_model();
  if (!model) return fail_with("train", model.error().message, model_error_exit(*inputs));
  auto aux = names->load();
  if (!aux) return fail_with("train", aux.error().message, exit_failure);

  // Training sizes memory only: a user entry's figures matter for --devices
  // (its memory size), not for matching detected devices, which report theirs.
  const auto device_specs = inputs->load_device_specs();
  if (!device_specs) return fail_with("train", device_specs.error().message, exit_failure);
  auto cluster = planning_cluster(*inputs, a.fixture, *device_specs);
  if (!cluster) return fail_with("train", cluster.error());
  auto estimate = checked(plan_training(*cluster, *model, *settings, *aux));
  if (!estimate) return fail_with("train", estimate.error());
  // JSON for programs (--json, or stdout not a terminal), text for people.
  const bool json = a.json || (!a.human && !is_terminal(STDOUT_FILENO));
  if (json) std::cout << to_json(*estimate, a.pretty) << "\n";
  else std::cout << human_estimate(*estimate, use_color(STDOUT_FILENO));
  std::cout.flush();
  return std::cout.good() ? 0 : exit_failure;
}

}  // namespace

Command add_train_command(CLI::App& app) {
  auto args = std::make_shared<TrainArgs>();
  auto* cmd = app.add_subcommand(
      "train",
      "Estimate training memory per device (parameters, gradients, optimizer states, activations, buffers) by method, "
      "precision, optimizer and ZeRO/FSDP sharding, check it against this machine, a fixture or hypothetical devices, "
      "and find the fewest devices that hold it.\nOutput is text on a terminal and JSON otherwise (or with --json). Exit "
      "status: 0 estimated (see \"fits\"), 1 a model or fixture could not be read, 2 bad usage or an invalid combination.");
  // Training has no speed model: runtime-profiles is plan's and recommend's.
  const SettingOptions inputs = add_setting_options(*cmd, planning_input_keys(), args->settings,
                                                    {"model", "params", "devices", "device-specs", "nodes", "fabric"});
  auto* fixture = cmd->add_option("--fixture", args->fixture, "Check against a captured machine (fixture folder)")
                      ->check(CLI::ExistingDirectory);
  fixture->excludes(inputs.at("devices"));
  const SettingOptions training = add_setting_options(*cmd, training_setting_keys(), args->settings);
  training.at("method")->required();
  add_setting_options(*cmd, training_model_keys(), args->settings);
  auto* json_flag = cmd->add_flag("--json", args->json, "JSON output");
  auto* human_flag = cmd->add_flag("--human", args->human, "Text output even when stdout is not a terminal");
  json_flag->excludes(human_flag);
  cmd->add_flag("--pretty", args->pretty, "Indent the JSON");
  return {cmd, [args] { return run_train(*args); }};
}

}  // namespace hwaccel::cli
