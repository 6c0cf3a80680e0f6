// `hwaccel recommend`: the cheapest cloud instances a model's plan fits on.
#include "commands.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

import hwaccel;

#include "planning_registry.hpp"
#include "setting_options.hpp"

namespace hwaccel::cli {
namespace {

struct RecommendArgs {
  /// --model, --device-specs, the inference settings a recommendation
  /// takes, --provider, --max-instances and --catalogue, for the library's tables.
  SettingTexts settings;
  std::size_t top = 5;
  bool json = false;
  bool human = false;
  bool pretty = false;
  bool all_rejected = false;
};

// Rejected instances listed in text without --all-rejected.
constexpr std::size_t short_rejection_list = 5;

std::string instance_line(const InstanceVerdict& v) {
  const auto& i = v.instance;
  std::string strategy = "-", rate = "-", per_million = "-";
  if (v.plan) {
    strategy = v.plan->strategy.name();
    if (v.plan->throughput.decode_tokens_per_s_total)
      rate = fmt::format("{:.0f}", *v.plan->throughput.decode_tokens_per_s_total);
  }
  if (v.usd_per_million_tokens) per_million = fmt::format("{:.2f}", *v.usd_per_million_tokens);
  // Several instances: "2 x p5.48xlarge" at the price of both.
  const std::string name = v.instances > 1 ? fmt::format("{} x {}", v.instances, i.name) : i.name;
  return fmt::format("{:<6} {:<28} {:>9.2f} {:>4} x {:<17} {:<10} {:<34} {:>8} {:>8}\n", to_string(i.provider), name,
                     i.price_usd_per_hour * v.instances, i.count, i.accelerator, to_string(i.interconnect), strategy,
                     rate, per_million);
}

std::string human_recommendation(const InstanceRecommendation& r, std::size_t top, bool verbose, bool color) {
  const char* bold = color ? "\033[1m" : "";
  const char* reset = color ? "\033[0m" : "";
  std::string out;
  out += fmt::format("{}Model{}      {} at {}, {} tokens x {} sequence(s)\n", bold, reset, r.model_name,
                     info(r.quantization).display_name, r.context, r.batch);
  out += fmt::format("{}Catalogue{}  {}\n", bold, reset, r.catalogue_origin);
  if (r.recommended.empty()) {
    out += "\nNo instance in the catalogue fits this model at this level.\n";
  } else {
    out += fmt::format("\n{}{:<6} {:<28} {:>9} {:<22} {:<10} {:<34} {:>8} {:>8}{}\n", bold, "CLOUD", "INSTANCE", "USD/HOUR",
                       "ACCELERATORS", "LINK", "STRATEGY", "TOK/S", "USD/MTOK", reset);
    for (std::size_t n = 0; n < r.recommended.size() && n < top; ++n) out += instance_line(r.recommended[n]);
    if (r.recommended.size() > top)
      out += fmt::format("... {} more that fit (--top N, or --json for all)\n", r.recommended.size() - top);
  }
  // Rejections that matter: instances cheaper than the first recommendation
  // (all of them when nothing fits).
  const double best = r.recommended.empty() ? 1e300 : r.recommended.front().instance.price_usd_per_hour * r.recommended.front().instances;
  std::vector<const InstanceVerdict*> cheaper;
  for (const auto& v : r.rejected)
    if (verbose || v.instance.price_usd_per_hour < best) cheaper.push_back(&v);
  if (!cheaper.empty()) {
    out += fmt::format("\n{}{}{}\n", bold, verbose ? "Rejected" : "Cheaper instances rejected", reset);
    const std::size_t shown = verbose ? cheaper.size() : std::min(cheaper.size(), short_rejection_list);
    for (std::size_t n = 0; n < shown; ++n) {
      const auto& v = *cheaper[n];
      out += fmt::format("  {} {} (${:.2f}/h, {} x {}): {}: {}\n", to_string(v.instance.provider), v.instance.name,
                         v.instance.price_usd_per_hour, v.instance.count, v.instance.accelerator,
                         to_string(*v.rejection), v.reason);
    }
    if (shown < cheaper.size()) out += fmt::format("  ... {} more (--all-rejected, or --json)\n", cheaper.size() - shown);
  }
  out += "\nTOK/S: decode tokens per second of all replicas together (planner estimate); USD/MTOK: price per\n"
         "million decoded tokens at that rate. " + r.prices + "\n";
  return out;
}

int run_recommend(const RecommendArgs& a) {
  const std::vector<Setting> values = settings_of(a.settings);
  auto inputs = checked(read_planning_inputs(values));
  if (!inputs) return fail_with("recommend", inputs.error());
  auto options = checked(read_recommend_options(values));
  if (!options) return fail_with("recommend", options.error());
  auto model = inputs->load_model();
  if (!model) return fail_with("recommend", model.error().message, model_error_exit(*inputs));
  if (auto v = options->settings.validate(*model); !v) return fail_with("recommend", v.error().message, exit_usage);

  // A user catalogue may name devices of a user device-spec file.
  const auto device_specs = inputs->load_device_specs();
  if (!device_specs) return fail_with("recommend", device_specs.error().message, exit_failure);
  if (!device_specs->empty()) options->settings.device_specs = &*device_specs;
  const auto runtime_profiles = inputs->load_runtime_profiles();
  if (!runtime_profiles) return fail_with("recommend", runtime_profiles.error().message, exit_failure);
  options->settings.runtime_profiles = *runtime_profiles;
  // --catalogue, else $HWACCEL_INSTANCE_CATALOGUE, else the built-in one.
  auto catalogue = options->load_catalogue(*device_specs);
  if (!catalogue) return fail_with("recommend", catalogue.error().message, exit_failure);

  auto r = checked(recommend_instances(*model, *options, *catalogue));
  if (!r) return fail_with("recommend", r.error());
  const bool json = a.json || (!a.human && !is_terminal(STDOUT_FILENO));
  if (json) std::cout << to_json(*r, a.pretty) << "\n";
  else std::cout << human_recommendation(*r, a.top, a.all_rejected, use_color(STDOUT_FILENO));
  std::cout.flush();
  if (!std::cout.good()) return exit_failure;
  if (r->recommended.empty())
    return fail_with("recommend", text::cat("no instance fits ", r->model_name, " at ", to_string(r->quantization)),
                     exit_failure);
  return 0;
}

}  // namespace

Command add_recommend_command(CLI::App& app) {
  auto args = std::make_shared<RecommendArgs>();
  auto* cmd = app.add_subcommand(
      "recommend",
      "Recommend the cheapest cloud instances a model fits on, device by device (memory per device, dtype support, "
      "interconnect), with the reason each cheaper instance was rejected.\nOutput is text on a terminal and JSON "
      "otherwise (or with --json). Exit status: 0 at least one instance fits, 1 none fits or the model or catalogue "
      "could not be read, 2 bad usage.");
  add_setting_options(*cmd, planning_input_keys(), args->settings, {"model", "device-specs", "runtime-profiles"}).at("model")->required();
  add_setting_options(*cmd, inference_setting_keys(), args->settings, {"quant", "kv-dtype", "context", "batch", "reserve"})
      .at("quant")
      ->required();
  add_setting_options(*cmd, recommend_setting_keys(), args->settings);
  cmd->add_option("--top", args->top, "Instances listed in text output")->check(CLI::Range(std::size_t{1}, std::size_t{10000}));
  cmd->add_flag("--all-rejected", args->all_rejected, "List every rejected instance with its reason");
  auto* json_flag = cmd->add_flag("--json", args->json, "JSON output (every instance, rejected ones with their reason)");
  auto* human_flag = cmd->add_flag("--human", args->human, "Text output even when stdout is not a terminal");
  json_flag->excludes(human_flag);
  cmd->add_flag("--pretty", args->pretty, "Indent the JSON");
  return {cmd, [args] { return run_recommend(*args); }};
}

}  // namespace hwaccel::cli
