// `hwaccel plan`: how a model runs on this machine, a fixture or hypothetical devices.
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
#include <vector>

#include <unistd.h>

import hwaccel;

#include "planning_registry.hpp"
#include "setting_options.hpp"

namespace hwaccel::cli {
namespace {

struct PlanArgs {
  /// The planning inputs (--model, --params, --devices, --device-specs,
  /// --nodes, --fabric), the inference settings and --node-kind, --busy,
  /// --max-nodes, for the library's tables.
  SettingTexts settings;
  std::string fixture;
  std::string fleet;
  std::string hosts;
  bool what_is_missing = false;
  std::string launch;
  bool json = false;
  bool human = false;
  bool pretty = false;
  std::size_t max_shards = 32;
};

std::string rate_text(const std::optional<double>& r) { return r ? fmt::format("{:.1f}", *r) : std::string("unknown"); }

std::string human_plan(const Plan& p, std::size_t max_shards, bool color) {
  const char* bold = color ? "\033[1m" : "";
  const char* reset = color ? "\033[0m" : "";
  const char* red = color ? "\033[31m" : "";
  const char* green = color ? "\033[32m" : "";
  const QuantizationInfo& q = info(p.quantization);
  std::string out;
  out += fmt::format("{}Model{}         {} ({:.2f} B parameters{}, {} layers{})\n", bold, reset, p.model_name,
                     static_cast<double>(p.parameters) / 1e9,
                     p.active_parameters != p.parameters
                         ? fmt::format(", {:.1f} B active", static_cast<double>(p.active_parameters) / 1e9)
                         : std::string(),
                     p.layers, p.architecture_assumed ? ", architecture assumed" : "");
  out += fmt::format("{}Quantization{}  {} ({} bits per weight, {:.2f} per parameter here{}); KV cache {} ({} per token)\n",
                     bold, reset, q.display_name, q.bits_per_weight(), p.weight_bits_per_parameter,
                     p.quantization_suggested ? "; suggested" : "", to_string(p.kv_cache_type),
                     bytes_text(p.memory.kv_cache_bytes_per_token));
  out += fmt::format("{}Workload{}      {} tokens x {} sequence(s), {:.0f}% of memory reserved\n", bold, reset, p.context,
                     p.batch, p.reserve_fraction * 100);
  out += fmt::format("{}Strategy{}      {}\n", bold, reset, p.strategy.name());
  if (!p.nodes.empty()) {
    std::string names;
    for (std::size_t i = 0; i < p.nodes.size() && i < 8; ++i) names += (i ? ", " : "") + p.nodes[i];
    if (p.nodes.size() > 8) names += fmt::format(" and {} more", p.nodes.size() - 8);
    out += fmt::format("{}Nodes{}         {} used: {}; fabric {}\n", bold, reset, p.nodes.size(), names,
                       p.fabric ? p.fabric->describe() : std::string("unknown"));
  }
  out += fmt::format("{}Memory{}        weights {} + KV cache {} + activations {} + overhead {} = {} per replica\n", bold,
                     reset, bytes_text(p.memory.weights_bytes), bytes_text(p.memory.kv_cache_bytes),
                     bytes_text(p.memory.activation_bytes), bytes_text(p.memory.overhead_bytes),
                     bytes_text(p.memory.total_bytes));
  out += fmt::format("{}Fits{}          {}{}{}\n", bold, reset, p.fits ? green : red, p.fits ? "yes" : "no", reset);
  const auto& t = p.throughput;
  if (t.decode_tokens_per_s)
    out += fmt::format("{}Throughput{}    decode {} tok/s per sequence ({} in all; ceiling {}), bound by {} (bandwidth: {})\n",
                       bold, reset, rate_text(t.decode_tokens_per_s), rate_text(t.decode_tokens_per_s_total),
                       rate_text(t.decode_ceiling_tokens_per_s), t.decode_bottleneck, t.bandwidth_source);
  else
    out += fmt::format("{}Throughput{}    decode unknown (see the assumptions)\n", bold, reset);
  if (t.decode_tokens_per_s_low && t.decode_tokens_per_s_high)
    out += fmt::format("              runtime {}: 80% interval {}-{} tok/s per sequence{}\n", t.runtime,
                       rate_text(t.decode_tokens_per_s_low), rate_text(t.decode_tokens_per_s_high),
                       t.runtime_calibrated ? "" : " (profile not calibrated)");
  if (const auto& rs = t.llama_row_split; rs && rs->decode_tokens_per_s)
    out += fmt::format("              llama.cpp --split-mode row over these {} GPUs: decode {} tok/s (80% interval {}-{}){}\n",
                       rs->devices, rate_text(rs->decode_tokens_per_s), rate_text(rs->decode_tokens_per_s_low),
                       rate_text(rs->decode_tokens_per_s_high),
                       rs->fits ? "" : fmt::format(", does not fit: the first GPU would hold {}",
                                                   bytes_text(rs->main_device_bytes)));
  if (t.prefill_tokens_per_s)
    out += fmt::format("              prefill {} tok/s, bound by {}\n", rate_text(t.prefill_tokens_per_s),
                       t.prefill_bottleneck);
  else
    out += "              prefill unknown (see the assumptions)\n";
  if (const auto& sv = t.serving)
    out += fmt::format("{}Serving{}       {} requests of {} + {} tokens at once per replica ({} asked; KV cache holds {}), "
                       "{} replica(s): {:.0f} output tok/s (80% interval {:.0f}-{:.0f}), TTFT {:.0f} ms, TPOT {:.1f} ms, "
                       "bound by {}\n",
                       bold, reset, sv->batch, sv->input_tokens, sv->output_tokens, sv->requested_batch,
                       sv->kv_capacity_sequences, sv->replicas, sv->output_tokens_per_s, sv->output_tokens_per_s_low,
                       sv->output_tokens_per_s_high, sv->time_to_first_token_s * 1e3, sv->time_per_output_token_s * 1e3,
                       sv->decode_bottleneck);
  if (const auto& pw = p.power) {
    out += fmt::format("{}Power{}         {:.0f} W in all (80% interval {:.0f}-{:.0f}), {:.3g} J per output token "
                       "({:.3g}-{:.3g}), {:.3g} tokens per joule",
                       bold, reset, pw->watts, pw->watts_low, pw->watts_high, pw->energy_per_output_token_j,
                       pw->energy_per_output_token_j_low, pw->energy_per_output_token_j_high, pw->tokens_per_joule);
    if (pw->energy_per_request_j) out += fmt::format(", {:.3g} J per request", *pw->energy_per_request_j);
    out += pw->power_capped ? "; clocks held down by the power cap\n" : "\n";
  }
  if (p.load_time)
    out += fmt::format("{}Load time{}     {:.1f} s to read {} from {} at {:.2f} GB/s ({})\n", bold, reset,
                       p.load_time->seconds, bytes_text(p.load_bytes), p.load_time->storage,
                       p.load_time->read_bandwidth_gbps,
                       p.load_time->bandwidth_source == "table" ? "class default, not measured"
                       : p.load_time->bandwidth_source == "pcie_link" ? "PCIe link ceiling, not measured"
                                                                      : p.load_time->bandwidth_source);
  const bool nodes = !p.nodes.empty();
  out += fmt::format("\n{}{:<12} {:<30} {:>4} {:>5} {:>4} {:>11} {:>10} {:>10} {:>21}{}\n", bold, nodes ? "NODE/DEVICE" : "DEVICE", "NAME",
                     "REPL", "STAGE", "RANK", "LAYERS", "WEIGHTS", "KV CACHE", "TOTAL / CAPACITY", reset);
  std::size_t shown = 0;
  for (const auto& s : p.shards) {
    if (shown++ == max_shards) {
      out += fmt::format("... {} more shard(s) (all of them with --json)\n", p.shards.size() - max_shards);
      break;
    }
    const std::string layers =
        s.layer_count ? fmt::format("{}-{}", s.first_layer, s.first_layer + s.layer_count - 1) : std::string("-");
    std::string name = s.device_name.size() > 30 ? s.device_name.substr(0, 27) + "..." : s.device_name;
    const std::string device = s.node.empty() ? s.device : s.node + "/" + s.device;
    out += fmt::format("{:<12} {:<30} {:>4} {:>5} {:>4} {:>11} {:>10} {:>10} {:>21}\n", device, name, s.replica,
                       s.stage, s.tp_rank, layers, bytes_text(s.weights_bytes), bytes_text(s.kv_cache_bytes),
                       bytes_text(s.total_bytes) + " / " + bytes_text(s.capacity_bytes));
  }
  const auto& l = p.launch;
  if (!l.visible_devices.empty() || !l.vllm.empty() || !l.llama_cpp.empty() || !l.sglang.empty()) {
    out += fmt::format("\n{}Launch{} (one replica; --launch NAME prints one of them alone)\n", bold, reset);
    if (!l.visible_devices.empty()) out += "  " + l.visible_devices + "\n";
    for (const auto& line : l.node_devices) out += "  " + line + "\n";
    if (!l.ray.empty()) {
      out += "  ray:       " + l.ray.front() + "   # on the head node\n";
      for (std::size_t i = 1; i < l.ray.size(); ++i) out += "             " + l.ray[i] + "   # on each other node\n";
    }
    const std::pair<const char*, const std::string*> lines[] = {
        {"vllm", &l.vllm}, {"sglang", &l.sglang}, {"trtllm", &l.trtllm}, {"torchrun", &l.torchrun}, {"llama.cpp", &l.llama_cpp}};
    for (const auto& [label, line] : lines)
      if (!line->empty()) out += fmt::format("  {:<10} {}\n", std::string(label) + ":", *line);
    if (!l.sglang.empty() && !p.nodes.empty())
      out += "  (set NODE_RANK to 0 on the head node, 1.. on the others; HEAD_ADDR to the head node's address)\n";
    if (!l.slurm.empty()) out += "  slurm:     a batch script (--launch slurm)\n";
    if (!l.kubernetes.empty()) out += "  kubernetes: a LeaderWorkerSet manifest (--launch kubernetes)\n";
  }
  out += fmt::format("\n{}Assumptions{}\n", bold, reset);
  for (const auto& a : p.assumptions) out += "  - " + a + "\n";
  return out;
}

int run_plan(const PlanArgs& a) {
  const std::vector<Setting> values = settings_of(a.settings);
  auto inputs = checked(read_planning_inputs(values));
  if (!inputs) return fail_with("plan", inputs.error());
  auto settings = checked(read_inference_settings(values));
  if (!settings) return fail_with("plan", settings.error());
  auto capacity = checked(read_capacity_options(values));
  if (!capacity) return fail_with("plan", capacity.error());
  auto model = inputs->load_model();
  if (!model) return fail_with("plan", model.error().message, model_error_exit(*inputs));
  if (auto v = settings->validate(*model); !v) return fail_with("plan", v.error().message, exit_usage);
  const auto device_specs = inputs->load_device_specs();
  if (!device_specs) return fail_with("plan", device_specs.error().message, exit_failure);
  if (!device_specs->empty()) settings->device_specs = &*device_specs;
  const auto runtime_profiles = inputs->load_runtime_profiles();
  if (!runtime_profiles) return fail_with("plan", runtime_profiles.error().message, exit_failure);
  settings->runtime_profiles = *runtime_profiles;
  const bool json = a.json || (!a.human && !is_terminal(STDOUT_FILENO));
  std::optional<Fleet> fleet;
  if (!a.fleet.empty()) {
    auto read = read_fleet(a.fleet);
    if (!read) return fail_with("plan", read.error());
    fleet = std::move(*read);
  }

  if (a.what_is_missing) {
    CapacityOptions options = *capacity;
    if (options.node_kind.empty()) options.node_kind = inputs->devices;
    options.fabric = inputs->fabric;
    if (!fleet) {
      // No fleet: this machine (or the fixture) is the fleet, one node.
      auto registry = machine_registry(a.fixture);
      if (!registry) return fail_with("plan", registry.error());
      fleet.emplace();
      FleetNode node;
      node.host = registry->system().host.value_or("localhost");
      node.registry = std::move(*registry);
      fleet->nodes.push_back(std::move(node));
    }
    auto report = checked(what_is_missing(*fleet, *model, *settings, options));
    if (!report) return fail_with("plan", report.error());
    if (json) std::cout << to_json(*report, a.pretty);
    else std::cout << report->summary << "\n";
    std::cout.flush();
    return std::cout.good() ? 0 : exit_failure;
  }

  Result<Plan> plan = fail(ErrorKind::unsupported, "no plan");
  if (fleet) {
    std::vector<std::string> hosts;
    if (!a.hosts.empty()) {
      auto parsed = parse_host_list(a.hosts);
      if (!parsed) return fail_with("plan", "--hosts: " + parsed.error().message, exit_usage);
      hosts = std::move(*parsed);
    }
    auto cluster = cluster_from_fleet(*fleet, capacity->busy, hosts, inputs->fabric);
    if (!cluster) return fail_with("plan", "--fleet: " + cluster.error().message, exit_failure);
    plan = plan_inference(*cluster, *model, *settings);
  } else {
    auto cluster = planning_cluster(*inputs, a.fixture, *device_specs);
    if (!cluster) return fail_with("plan", cluster.error());
    plan = plan_inference(*cluster, *model, *settings);
  }
  if (!plan) return fail_with("plan", plan.error().message, exit_failure);
  if (!a.launch.empty()) {
    // One launch hint alone, for a pipe (`| kubectl apply -f -`, `> job.sbatch`).
    const auto& l = plan->launch;
    std::string text;
    if (a.launch == "vllm") text = l.vllm;
    else if (a.launch == "sglang") text = l.sglang;
    else if (a.launch == "trtllm") text = l.trtllm;
    else if (a.launch == "torchrun") text = l.torchrun;
    else if (a.launch == "llama-cpp") text = l.llama_cpp;
    else if (a.launch == "slurm") text = l.slurm;
    else if (a.launch == "kubernetes") text = l.kubernetes;
    else if (a.launch == "ray")
      for (const auto& line : l.ray) text += line + "\n";
    if (text.empty())
      return fail_with("plan", "--launch " + a.launch + ": this plan has no such launch hint (see its assumptions)",
                       exit_failure);
    std::cout << text << (text.back() == '\n' ? "" : "\n");
    std::cout.flush();
    return std::cout.good() ? 0 : exit_failure;
  }
  // JSON for programs (--json, or stdout not a terminal), text for people.
  if (json) std::cout << to_json(*plan, a.pretty) << "\n";
  else std::cout << human_plan(*plan, a.max_shards, use_color(STDOUT_FILENO));
  std::cout.flush();
  return std::cout.good() ? 0 : exit_failure;
}

}  // namespace

Command add_plan_command(CLI::App& app) {
  auto args = std::make_shared<PlanArgs>();
  auto* cmd = app.add_subcommand(
      "plan",
      "Plan how a model runs on this machine, a fixture or hypothetical devices: quantization, memory, sharding, "
      "throughput.\nOutput is text on a terminal and JSON otherwise (or with --json). Exit status: 0 planned (see "
      "\"fits\"), 1 the model or fixture could not be read or no device can run it, 2 bad usage.");
  const SettingOptions inputs = add_setting_options(*cmd, planning_input_keys(), args->settings);
  auto* fixture = cmd->add_option("--fixture", args->fixture, "Plan for a captured machine (fixture folder)")
                      ->check(CLI::ExistingDirectory);
  fixture->excludes(inputs.at("devices"));
  add_setting_options(*cmd, inference_setting_keys(), args->settings);
  auto* fleet = cmd->add_option("--fleet", args->fleet, "Plan over the nodes of a fleet document (`hwaccel fleet scan`)")
                    ->check(CLI::ExistingFile);
  fleet->excludes(fixture)->excludes(inputs.at("nodes"));
  cmd->add_option("--hosts", args->hosts, "With --fleet: the nodes to plan over (commas or blanks between names)")
      ->needs(fleet);
  cmd->add_flag("--what-is-missing", args->what_is_missing,
                "Count the nodes of one kind the model needs against the fleet's free ones (with --fleet; else this "
                "machine is the fleet)");
  add_setting_options(*cmd, capacity_setting_keys(), args->settings, {"node-kind", "busy", "max-nodes"});
  cmd->add_option("--launch", args->launch, "Print one launch hint alone: vllm, sglang, trtllm, torchrun, llama-cpp, ray, slurm, kubernetes")
      ->check(CLI::IsMember({"vllm", "sglang", "trtllm", "torchrun", "llama-cpp", "ray", "slurm", "kubernetes"}));
  auto* json_flag = cmd->add_flag("--json", args->json, "JSON output");
  auto* human_flag = cmd->add_flag("--human", args->human, "Text output even when stdout is not a terminal");
  json_flag->excludes(human_flag);
  cmd->add_flag("--pretty", args->pretty, "Indent the JSON");
  cmd->add_option("--max-shards", args->max_shards, "Shards listed in text output");
  return {cmd, [args] { return run_plan(*args); }};
}

}  // namespace hwaccel::cli
