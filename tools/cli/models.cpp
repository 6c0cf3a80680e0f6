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
    json::Writer w(false);
    w.begin_array();
    for (const auto& e : model_catalogue()) {
      const auto d = catalogue_model(e.id);
      if (!d) continue;
      const auto& a = d->architecture;
      w.begin_object();
      w.field("id", e.id).field("name", e.display_name).field("hf_repo", e.hf_repo).field("family", e.family);
      w.field("params", d->parameters).field("active_params", d->active_parameters);
      w.field("layers", a.layers).field("hidden_size", a.hidden_size).field("attention_heads", a.attention_heads);
      w.field("kv_heads", a.kv_heads).field("head_dim", a.head_dim).field("intermediate_size", a.intermediate_size);
      w.field("vocab_size", a.vocab_size).field("tied_embeddings", a.tied_embeddings);
      w.field("max_context", a.max_context);
      if (a.moe.is_moe()) w.field("experts", a.moe.experts).field("experts_per_token", a.moe.experts_per_token);
      w.field("attention", to_string(a.attention_kind()));
      w.field("source", e.source);
      w.end_object();
    }
    w.end_array();
    std::cout << w.str() << "\n";
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
