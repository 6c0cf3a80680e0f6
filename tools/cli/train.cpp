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
#include <tuple>
#include <utility>

#include <unistd.h>

import hwaccel;

#include "planning_registry.hpp"

namespace hwaccel::cli {
namespace {

struct TrainArgs {
  std::string params;
  std::string model;
  std::string method;
  std::string adapter;
  std::string optimizer = "adamw";
  std::string precision = "bf16";
  std::string zero = "0";
  std::string offload = "none";
  std::uint32_t dp = 1;
  std::uint32_t tp = 1;
  std::uint32_t pp = 1;
  bool sequence_parallel = false;
  std::uint64_t micro_batch = 1;
  std::uint64_t seq = 2048;
  std::optional<std::uint32_t> micro_batches;
  std::string recompute = "none";
  std::string attention = "flash";
  bool dropout = false;
  std::optional<std::uint32_t> lora_rank;
  std::string lora_targets;
  std::optional<std::uint32_t> qlora_bits;
  bool no_double_quant = false;
  std::string base_quant;
  std::string frozen_quant;
  std::optional<std::uint32_t> prefix_length;
  std::uint32_t prefix_projection = 0;
  std::string teacher;
  std::string reward_model;
  double reserve = 0.10;
  std::string fixture;
  std::string devices;
  std::string device_specs;
  std::uint32_t nodes = 1;
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

// Reads a model named on the command line; prints the error and returns nullopt.
std::optional<ModelDescription> read_model(std::string_view option, const std::string& name) {
  auto m = load_model(name);
  if (!m) {
    std::cerr << "hwaccel train: " << option << ": " << m.error().message << "\n";
    return std::nullopt;
  }
  return std::move(*m);
}

int run_train(const TrainArgs& a) {
  const auto usage = [](std::string_view message) {
    std::cerr << "hwaccel train: " << message << "\n";
    return exit_usage;
  };
  if (a.params.empty() == a.model.empty()) return usage("give exactly one of --params N and --model FILE|NAME");

  TrainingSettings s;
  {
    auto method = parse_training_method(a.method);
    if (!method) return usage(text::cat("--method: ", method.error().message));
    s.method = *method;
    auto optimizer = parse_optimizer(a.optimizer);
    if (!optimizer) return usage(text::cat("--optimizer: ", optimizer.error().message));
    s.optimizer = *optimizer;
    auto precision = parse_training_precision(a.precision);
    if (!precision) return usage(text::cat("--precision: ", precision.error().message));
    s.precision = *precision;
    auto zero = parse_zero_stage(a.zero);
    if (!zero) return usage(text::cat("--zero: ", zero.error().message));
    s.zero_stage = *zero;
    auto offload = parse_offload(a.offload);
    if (!offload) return usage(text::cat("--offload: ", offload.error().message));
    s.offload = *offload;
    auto recompute = parse_recompute(a.recompute);
    if (!recompute) return usage(text::cat("--recompute: ", recompute.error().message));
    s.recompute = *recompute;
    auto attention = parse_attention_kernel(a.attention);
    if (!attention) return usage(text::cat("--attention: ", attention.error().message));
    s.attention = *attention;
  }
  if (!a.adapter.empty()) {
    auto adapter = parse_training_method(a.adapter);
    if (!adapter) return usage(text::cat("--adapter: ", adapter.error().message));
    s.adapter = *adapter;
  }
  s.data_parallel = a.dp;
  s.tensor_parallel = a.tp;
  s.pipeline_parallel = a.pp;
  s.sequence_parallel = a.sequence_parallel;
  s.micro_batch = a.micro_batch;
  s.sequence = a.seq;
  s.micro_batches = a.micro_batches;
  s.dropout = a.dropout;
  s.lora_rank = a.lora_rank;
  if (!a.lora_targets.empty()) {
    auto targets = parse_lora_targets(a.lora_targets);
    if (!targets) return usage(text::cat("--lora-targets: ", targets.error().message));
    s.lora_targets = *targets;
  }
  s.qlora_bits = a.qlora_bits;
  s.double_quantization = !a.no_double_quant;
  for (const auto& [option, text_value, target] :
       {std::tuple{"--base-quant", &a.base_quant, &s.base_quantization},
        std::tuple{"--frozen-quant", &a.frozen_quant, &s.frozen_quantization}}) {
    if (text_value->empty()) continue;
    auto level = parse_quantization(*text_value);
    if (!level) return usage(text::cat(option, ": ", level.error().message));
    *target = *level;
  }
  s.prefix_length = a.prefix_length;
  s.prefix_projection = a.prefix_projection;
  s.reserve_fraction = a.reserve;
  if (auto v = s.validate(); !v) return usage(v.error().message);

  ModelDescription model;
  if (!a.params.empty()) {
    const auto n = parse_parameter_count(a.params);
    if (!n) return usage(text::cat("--params: '", a.params, "' is not a positive parameter count (e.g. 7e9, 70B)"));
    auto m = ModelDescription::from_parameter_count(*n);
    if (!m) return usage(text::cat("--params: ", m.error().message));
    model = std::move(*m);
  } else {
    auto m = read_model("--model", a.model);
    if (!m) return exit_failure;
    model = std::move(*m);
  }
  AuxiliaryModels aux;
  if (!a.teacher.empty()) {
    auto m = read_model("--teacher", a.teacher);
    if (!m) return exit_failure;
    aux.teacher = std::move(*m);
  }
  if (!a.reward_model.empty()) {
    auto m = read_model("--reward-model", a.reward_model);
    if (!m) return exit_failure;
    aux.reward = std::move(*m);
  }

  // Training sizes memory only: a user entry's figures matter for --devices
  // (its memory size), not for matching detected devices, which report theirs.
  const auto device_specs = device_specs_option("train", a.device_specs);
  if (!device_specs) return exit_failure;
  int failure = exit_failure;
  auto cluster = planning_cluster("train", a.devices, a.fixture, a.nodes, failure, *device_specs);
  if (!cluster) return failure;
  auto estimate = plan_training(*cluster, model, s, aux);
  if (!estimate) {
    std::cerr << "hwaccel train: " << estimate.error().message << "\n";
    return estimate.error().kind == ErrorKind::invalid_input ? exit_usage : exit_failure;
  }
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
  cmd->add_option("--params", args->params, "Parameter count: 7000000000, 7e9, 70B (architecture borrowed from the nearest catalogue model)");
  cmd->add_option("--model", args->model, "Catalogue id (see `hwaccel models`), or a config.json, .gguf, .safetensors, *.safetensors.index.json or model folder");
  cmd->add_option("--method", args->method, "full (pre-training / full fine-tune), lora, qlora, prefix, dpo, rlhf (PPO), distill")->required();
  cmd->add_option("--adapter", args->adapter, "dpo, rlhf, distill: train the policy/student with lora or qlora");
  cmd->add_option("--optimizer", args->optimizer, "adamw, adamw-32bit (bitsandbytes/paged, fp32 states), adamw-8bit, adafactor, sgd, sgd-momentum")->capture_default_str();
  cmd->add_option("--precision", args->precision, "fp32, bf16 (mixed, fp32 master), fp16 (mixed), bf16-pure")->capture_default_str();
  cmd->add_option("--zero", args->zero, "ZeRO stage 0, 1, 2, 3 (FSDP: no_shard, shard_grad_op, full_shard)")->capture_default_str();
  cmd->add_option("--offload", args->offload, "none, optimizer (ZeRO-Offload, stage >= 1), params (stage 3)")->capture_default_str();
  cmd->add_option("--dp", args->dp, "Data-parallel degree")->capture_default_str();
  cmd->add_option("--tp", args->tp, "Tensor-parallel degree (must divide the attention heads)")->capture_default_str();
  cmd->add_option("--pp", args->pp, "Pipeline-parallel degree (stages, 1F1B schedule)")->capture_default_str();
  cmd->add_flag("--sequence-parallel", args->sequence_parallel, "Megatron sequence parallelism (needs --tp 2+)");
  cmd->add_option("--micro-batch", args->micro_batch, "Sequences per micro-batch per data-parallel rank")->capture_default_str();
  cmd->add_option("--seq", args->seq, "Tokens per sequence")->capture_default_str();
  cmd->add_option("--micro-batches", args->micro_batches, "Micro-batches per step (gradient accumulation); default: pp");
  cmd->add_option("--recompute", args->recompute, "Activation recomputation: none, selective, full")->capture_default_str();
  cmd->add_option("--attention", args->attention, "flash (FlashAttention/SDPA) or standard (materialised scores)")->capture_default_str();
  cmd->add_flag("--dropout", args->dropout, "Dropout layers (GPT-2/3 style) whose masks are kept");
  cmd->add_option("--lora-rank", args->lora_rank, "LoRA rank (default 8; QLoRA 64)");
  cmd->add_option("--lora-targets", args->lora_targets, "Adapted matrices: q,k,v,o,gate,up,down or all (default q,v; QLoRA all)");
  cmd->add_option("--qlora-bits", args->qlora_bits, "Bits of the QLoRA base (only 4 is QLoRA)");
  cmd->add_flag("--no-double-quant", args->no_double_quant, "QLoRA without double quantization of the NF4 scales");
  cmd->add_option("--base-quant", args->base_quant, "LoRA base storage: bf16, fp16, fp32, int8 (8-bit LoRA), fp8_e4m3");
  cmd->add_option("--frozen-quant", args->frozen_quant, "Reference/reward/teacher storage: bf16, fp16, fp8_e4m3, int8, nf4");
  cmd->add_option("--prefix-length", args->prefix_length, "Prefix tuning: virtual tokens per layer (default 20)");
  cmd->add_option("--prefix-projection", args->prefix_projection, "Prefix tuning: reparameterization MLP width (0: none)");
  cmd->add_option("--teacher", args->teacher, "Distillation teacher: catalogue id or model file");
  cmd->add_option("--reward-model", args->reward_model, "RLHF reward model (the value model takes its shape): catalogue id or file");
  cmd->add_option("--reserve", args->reserve, "Fraction of each device's memory kept free")->check(CLI::Range(0.0, 0.95))->capture_default_str();
  auto* fixture = cmd->add_option("--fixture", args->fixture, "Check against a captured machine (fixture folder)")->check(CLI::ExistingDirectory);
  auto* devices = cmd->add_option("--devices", args->devices, "Check against hypothetical devices, e.g. 8xH100-SXM-80GB (see `hwaccel specs`), or nodes of them: 4x(8xH100-SXM-80GB)");
  fixture->excludes(devices);
  add_device_specs_option(cmd, args->device_specs);
  cmd->add_option("--nodes", args->nodes, "Check against N nodes like this machine, the fixture or --devices")
      ->check(CLI::Range(1u, max_cluster_nodes));
  auto* json_flag = cmd->add_flag("--json", args->json, "JSON output");
  auto* human_flag = cmd->add_flag("--human", args->human, "Text output even when stdout is not a terminal");
  json_flag->excludes(human_flag);
  cmd->add_flag("--pretty", args->pretty, "Indent the JSON");
  return {cmd, [args] { return run_train(*args); }};
}

}  // namespace hwaccel::cli
