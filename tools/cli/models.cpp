// `hwaccel models`: the built-in model catalogue `--model` accepts.
#include "commands.hpp"

#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <optional>
#include <string>

import hwaccel;

namespace hwaccel::cli {
namespace {

int run_models(bool json_output) {
  if (json_output) {
    std::cout << model_catalogue_json() << "\n";
    return 0;
  }
  std::cout << fmt::format("{:<16} {:<20} {:>9} {:>7} {:>6} {:>10} {:>7} {:>8}  {}\n", "ID", "NAME", "PARAMS",
                           "LAYERS", "HIDDEN", "HEADS/KV", "VOCAB", "CONTEXT", "EXPERTS");
  for (const auto& e : model_catalogue()) {
    const auto d = catalogue_model(e.id);
    if (!d) continue;
    const auto& a = d->architecture;
    const std::string experts =
        a.moe.is_moe() ? fmt::format("{} of {} ({:.1f} B active)", a.moe.experts_per_token, a.moe.experts,
                                     static_cast<double>(d->active_parameters) / 1e9)
                       : std::string("-");
    std::cout << fmt::format("{:<16} {:<20} {:>8.2f}B {:>7} {:>6} {:>10} {:>7} {:>8}  {}\n", e.id, e.display_name,
                             static_cast<double>(d->parameters) / 1e9, a.layers, a.hidden_size,
                             fmt::format("{}/{}", a.attention_heads, a.kv_heads), a.vocab_size, a.max_context, experts);
  }
  std::cout << "\nArchitectures from each model's published config.json. Use an ID with --model, e.g. "
               "`hwaccel plan --model llama-3.1-70b`.\n";
  return 0;
}

}  // namespace

Command add_models_command(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("models", "List the built-in model catalogue `--model` accepts");
  cmd->add_flag("--json", *json, "JSON output");
  return {cmd, [json] { return run_models(*json); }};
}

}  // namespace hwaccel::cli
