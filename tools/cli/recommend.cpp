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

namespace hwaccel::cli {
namespace {

struct RecommendArgs {
  std::string model;
  std::string quant;
  SequenceOptions sequence;
  std::string providers;
  std::string catalogue;
  std::string device_specs;
  std::size_t top = 5;
  std::uint32_t max_instances = 1;
  bool json = false;
  bool human = false;
  bool pretty = false;
  bool verbose = false;
};

// Rejected instances listed in text without --verbose.
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
    if (shown < cheaper.size()) out += fmt::format("  ... {} more (--verbose, or --json)\n", cheaper.size() - shown);
  }
  out += "\nTOK/S: decode tokens per second of all replicas together (planner estimate); USD/MTOK: price per\n"
         "million decoded tokens at that rate. " + r.prices + "\n";
  return out;
}

int run_recommend(const RecommendArgs& a) {
  RecommendOptions options;
  InferenceSettings& settings = options.settings;
  const auto q = quantization_option("recommend", "--quant", a.quant);
  if (!q) return exit_usage;
  settings.quantization = *q;
  if (!apply_sequence_options("recommend", a.sequence, settings)) return exit_usage;
  options.max_instances = a.max_instances;
  for (std::string_view rest = a.providers; !rest.empty();) {
    const auto comma = rest.find(',');
    const std::string_view name = text::trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    const auto p = parse_cloud_provider(name);
    if (!p) {
      std::cerr << "hwaccel recommend: --provider: unknown provider '" << name << "' (aws, gcp, azure)\n";
      return exit_usage;
    }
    options.providers.push_back(*p);
  }

  auto model = load_model(a.model);
  if (!model) {
    std::cerr << "hwaccel recommend: --model: " << model.error().message << "\n";
    return exit_failure;
  }
  if (auto v = settings.validate(*model); !v) {
    std::cerr << "hwaccel recommend: " << v.error().message << "\n";
    return exit_usage;
  }

  // A user catalogue may name devices of a user device-spec file.
  const auto device_specs = device_specs_option("recommend", a.device_specs);
  if (!device_specs) return exit_failure;
  if (!device_specs->empty()) settings.device_specs = &*device_specs;
  // --catalogue, else $HWACCEL_INSTANCE_CATALOGUE, else the built-in one.
  std::string file = a.catalogue;
  if (file.empty())
    if (const char* env = std::getenv("HWACCEL_INSTANCE_CATALOGUE"); env && *env) file = env;
  auto catalogue = file.empty() ? builtin_instance_catalogue() : read_instance_catalogue(file, *device_specs);
  if (!catalogue) {
    std::cerr << "hwaccel recommend: catalogue: " << catalogue.error().message << "\n";
    return exit_failure;
  }

  auto r = recommend_instances(*model, options, *catalogue);
  if (!r) {
    std::cerr << "hwaccel recommend: " << r.error().message << "\n";
    return r.error().kind == ErrorKind::invalid_input ? exit_usage : exit_failure;
  }
  const bool json = a.json || (!a.human && !is_terminal(STDOUT_FILENO));
  if (json) std::cout << to_json(*r, a.pretty) << "\n";
  else std::cout << human_recommendation(*r, a.top, a.verbose, use_color(STDOUT_FILENO));
  std::cout.flush();
  if (!std::cout.good()) return exit_failure;
  if (r->recommended.empty()) {
    std::cerr << "hwaccel recommend: no instance fits " << r->model_name << " at " << to_string(r->quantization)
              << "\n";
    return exit_failure;
  }
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
  cmd->add_option("--model", args->model, "Catalogue id (see `hwaccel models`), or a config.json, .gguf, .safetensors or model folder")
      ->required();
  cmd->add_option("--quant", args->quant, "Quantization to run at (bf16, fp16, fp8, int8, int4, ...)")->required();
  add_sequence_options(cmd, args->sequence);
  cmd->add_option("--provider", args->providers, "Comma list of providers: aws, gcp, azure (default: all)");
  cmd->add_option("--catalogue", args->catalogue,
                  "Instance catalogue file replacing the built-in one (default: $HWACCEL_INSTANCE_CATALOGUE, else "
                  "built in; format in docs/planning.md)");
  add_device_specs_option(cmd, args->device_specs);
  cmd->add_option("--max-instances", args->max_instances,
                  "A model too large for one instance may span up to N of the same type (a multi-node plan)")
      ->check(CLI::Range(1u, 4096u));
  cmd->add_option("--top", args->top, "Instances listed in text output")->check(CLI::Range(std::size_t{1}, std::size_t{10000}));
  cmd->add_flag("--verbose,-v", args->verbose, "List every rejected instance with its reason");
  auto* json_flag = cmd->add_flag("--json", args->json, "JSON output (every instance, rejected ones with their reason)");
  auto* human_flag = cmd->add_flag("--human", args->human, "Text output even when stdout is not a terminal");
  json_flag->excludes(human_flag);
  cmd->add_flag("--pretty", args->pretty, "Indent the JSON");
  return {cmd, [args] { return run_recommend(*args); }};
}

}  // namespace hwaccel::cli
