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

namespace hwaccel::cli {
namespace {

struct PlanArgs {
  std::string params;
  std::string model;
  std::string quant;
  SequenceOptions sequence;
  std::string objective = "throughput";
  std::string family;
  bool no_offload = false;
  std::string fixture;
  std::string devices;
  std::string device_specs;
  std::uint32_t nodes = 0;
  std::string fleet;
  std::string hosts;
  std::string fabric;
  bool expert_parallel = false;
  std::string runtime;
  std::string flash_attention;
  std::uint64_t input_len = 0;
  std::uint64_t output_len = 0;
  bool what_is_missing = false;
  std::string node_kind;
  std::string busy;
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
  // Exactly one way to name the model.
  if (a.params.empty() == a.model.empty()) {
    std::cerr << "hwaccel plan: give exactly one of --params N and --model FILE|NAME\n";
    return exit_usage;
  }
  InferenceSettings settings;
  settings.allow_cpu_offload = !a.no_offload;
  settings.objective = a.objective == "latency" ? PlanObjective::latency : PlanObjective::throughput;
  if (!a.quant.empty()) {
    const auto q = quantization_option("plan", "--quant", a.quant);
    if (!q) return exit_usage;
    settings.quantization = *q;
  }
  if (!apply_sequence_options("plan", a.sequence, settings)) return exit_usage;
  if (!a.runtime.empty()) {
    auto r = parse_runtime(a.runtime);
    if (!r) {
      std::cerr << "hwaccel plan: --runtime: " << r.error().message << "\n";
      return exit_usage;
    }
    settings.runtime = *r;
  }
  if (!a.flash_attention.empty()) settings.flash_attention = a.flash_attention == "on";
  if ((a.input_len > 0) != (a.output_len > 0)) {
    std::cerr << "hwaccel plan: give --input-len and --output-len together\n";
    return exit_usage;
  }
  if (a.output_len > 0) {
    settings.input_tokens = a.input_len;
    settings.output_tokens = a.output_len;
    if (!a.sequence.context_given) settings.context = a.input_len + a.output_len;
  }
  if (a.family == "gguf") settings.quantization_family = QuantizationFamily::gguf;
  else if (a.family == "hf") settings.quantization_family = QuantizationFamily::floating;

  ModelDescription model;
  if (!a.params.empty()) {
    const auto n = parse_parameter_count(a.params);
    if (!n) {
      std::cerr << "hwaccel plan: --params: '" << a.params << "' is not a positive parameter count (e.g. 7e9, 70B)\n";
      return exit_usage;
    }
    auto m = ModelDescription::from_parameter_count(*n);
    if (!m) {
      std::cerr << "hwaccel plan: --params: " << m.error().message << "\n";
      return exit_usage;
    }
    model = std::move(*m);
  } else {
    auto m = load_model(a.model);
    if (!m) {
      std::cerr << "hwaccel plan: --model: " << m.error().message << "\n";
      return exit_failure;
    }
    model = std::move(*m);
  }
  if (auto v = settings.validate(model); !v) {
    std::cerr << "hwaccel plan: " << v.error().message << "\n";
    return exit_usage;
  }

  settings.expert_parallel = a.expert_parallel;
  const auto device_specs = device_specs_option("plan", a.device_specs);
  if (!device_specs) return exit_failure;
  if (!device_specs->empty()) settings.device_specs = &*device_specs;
  std::optional<Fabric> fabric;
  if (!fabric_option("plan", a.fabric, fabric)) return exit_usage;
  BusyDevices busy;
  if (int code = exit_failure; !busy_option("plan", a.busy, busy, code)) return code;
  const bool json = a.json || (!a.human && !is_terminal(STDOUT_FILENO));
  std::optional<Fleet> fleet;
  if (!a.fleet.empty()) {
    fleet = fleet_option("plan", a.fleet);
    if (!fleet) return exit_failure;
  }

  if (a.what_is_missing) {
    CapacityOptions options;
    options.node_kind = a.node_kind.empty() ? a.devices : a.node_kind;
    options.busy = busy;
    options.fabric = fabric;
    if (!fleet) {
      // No fleet: this machine (or the fixture) is the fleet, one node.
      int failure = exit_failure;
      auto registry = planning_registry("plan", {}, a.fixture, failure);
      if (!registry) return failure;
      fleet.emplace();
      FleetNode node;
      node.host = registry->system().host.value_or("localhost");
      node.registry = std::move(*registry);
      fleet->nodes.push_back(std::move(node));
    }
    auto report = what_is_missing(*fleet, model, settings, options);
    if (!report) {
      std::cerr << "hwaccel plan: " << report.error().message << "\n";
      return report.error().kind == ErrorKind::invalid_input ? exit_usage : exit_failure;
    }
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
      if (!parsed) {
        std::cerr << "hwaccel plan: --hosts: " << parsed.error().message << "\n";
        return exit_usage;
      }
      hosts = std::move(*parsed);
    }
    auto cluster = cluster_from_fleet(*fleet, busy, hosts, fabric);
    if (!cluster) {
      std::cerr << "hwaccel plan: --fleet: " << cluster.error().message << "\n";
      return exit_failure;
    }
    plan = plan_inference(*cluster, model, settings);
  } else {
    int failure = exit_failure;
    auto cluster = planning_cluster("plan", a.devices, a.fixture, a.nodes, failure, *device_specs);
    if (!cluster) return failure;
    cluster->fabric = fabric;
    plan = plan_inference(*cluster, model, settings);
  }
  if (!plan) {
    std::cerr << "hwaccel plan: " << plan.error().message << "\n";
    return exit_failure;
  }
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
    if (text.empty()) {
      std::cerr << "hwaccel plan: --launch " << a.launch << ": this plan has no such launch hint (see its assumptions)\n";
      return exit_failure;
    }
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
  cmd->add_option("--params", args->params, "Parameter count: 7000000000, 7e9, 70B (architecture borrowed from the nearest catalogue model)");
  cmd->add_option("--model", args->model, "Catalogue id (see `hwaccel models`), or a config.json, .gguf, .safetensors, *.safetensors.index.json or model folder");
  cmd->add_option("--quant", args->quant, "Quantization (bf16, fp16, fp8, int8, int4, nf4, q8_0, q6_k, q5_k_m, q4_k_m, ...); default: the best that fits");
  add_sequence_options(cmd, args->sequence);
  cmd->add_option("--objective", args->objective, "throughput (most replicas) or latency (widest tensor parallelism)")
      ->check(CLI::IsMember({"throughput", "latency"}));
  cmd->add_option("--formats", args->family, "Levels a suggestion picks from: hf (bf16/fp8/int8/int4) or gguf (llama.cpp)")
      ->check(CLI::IsMember({"hf", "gguf"}));
  cmd->add_flag("--no-offload", args->no_offload, "Never put layers in host memory");
  cmd->add_option("--runtime", args->runtime,
                  "Runtime whose speed profile the estimates use: llama.cpp-cuda, llama.cpp-rocm, llama.cpp-metal, "
                  "llama.cpp-vulkan, llama.cpp-cpu, mlx, vllm, sglang, trtllm (default: from the level and the devices)");
  cmd->add_option("--flash-attention", args->flash_attention,
                  "llama.cpp's -fa: on, each KV head is read once per token; off (the default, as the llama.cpp "
                  "profiles' calibration runs), once per query head")
      ->check(CLI::IsMember({"on", "off"}));
  cmd->add_option("--input-len", args->input_len, "Serving: prompt tokens per request (with --output-len; --batch requests at once)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 24));
  cmd->add_option("--output-len", args->output_len, "Serving: generated tokens per request; gives output tok/s, TTFT and TPOT")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 24));
  auto* fixture = cmd->add_option("--fixture", args->fixture, "Plan for a captured machine (fixture folder)")->check(CLI::ExistingDirectory);
  auto* devices = cmd->add_option("--devices", args->devices,
                                  "Plan for hypothetical devices, e.g. 8xH100-SXM-80GB or 2xRTX-4090+1xRTX-3090 (see "
                                  "`hwaccel specs`), or nodes of them: 2x(8xH100-SXM-80GB)");
  fixture->excludes(devices);
  add_device_specs_option(cmd, args->device_specs);
  auto* nodes = cmd->add_option("--nodes", args->nodes, "Plan over N nodes like this machine (or the fixture, or --devices)")
                    ->check(CLI::Range(1u, max_cluster_nodes));
  auto* fleet = cmd->add_option("--fleet", args->fleet, "Plan over the nodes of a fleet document (`hwaccel fleet scan`)")
                    ->check(CLI::ExistingFile);
  fleet->excludes(fixture)->excludes(nodes);
  cmd->add_option("--hosts", args->hosts, "With --fleet: the nodes to plan over (commas or blanks between names)")
      ->needs(fleet);
  cmd->add_option("--fabric", args->fabric,
                  "Fabric between nodes: ib-400g, ib-8x400g, roce-200g, ethernet-100g, efa-32x100g (default: the "
                  "nodes' own RDMA ports)");
  cmd->add_flag("--expert-parallel", args->expert_parallel,
                "MoE models: each tensor-parallel group holds whole experts (vLLM --enable-expert-parallel)");
  cmd->add_flag("--what-is-missing", args->what_is_missing,
                "Count the nodes of one kind the model needs against the fleet's free ones (with --fleet; else this "
                "machine is the fleet)");
  cmd->add_option("--node-kind", args->node_kind,
                  "With --what-is-missing: the kind of node, 8xH100-SXM-80GB or a kind of the fleet (default: "
                  "--devices, else the fleet's most common)");
  cmd->add_option("--busy", args->busy,
                  "Nodes or devices taken: HOST,HOST/cuda:0,... or a file (such a list, or `hwaccel place --json` output)");
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
