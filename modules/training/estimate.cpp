// A training run's memory per device: the settings resolved, the models
// checked, their roles, and one estimate per pipeline stage
// (stage_memory.cpp), with the warnings and the assumptions they rest on.
module;
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.training;
import :stage_memory;

namespace hwaccel {

std::string_view to_string(MemoryCategory category) noexcept {
  switch (category) {
    case MemoryCategory::parameters: return "parameters";
    case MemoryCategory::gradients: return "gradients";
    case MemoryCategory::optimizer: return "optimizer";
    case MemoryCategory::activations: return "activations";
    case MemoryCategory::other: return "other";
  }
  return "unknown";
}

std::string_view to_string(MemoryLocation location) noexcept {
  return location == MemoryLocation::host ? "host" : "device";
}

double model_state_bytes_per_parameter(TrainingPrecision precision, OptimizerKind optimizer) noexcept {
  const bool fp32 = precision == TrainingPrecision::fp32;
  const bool pure = precision == TrainingPrecision::bf16_pure;
  const double weights = fp32 ? 4 : 2;
  const double master = (precision == TrainingPrecision::bf16_mixed || precision == TrainingPrecision::fp16_mixed) ? 4 : 0;
  const double state = pure ? 2 : 4;
  double states = 0;
  switch (optimizer) {
    case OptimizerKind::adamw: states = 2 * state; break;
    case OptimizerKind::adamw_32bit: states = 8; break;
    case OptimizerKind::adamw_8bit: states = 2; break;
    case OptimizerKind::adafactor: states = 0; break;  // factored: rows + columns per matrix, not per parameter
    case OptimizerKind::sgd: states = 0; break;
    case OptimizerKind::sgd_momentum: states = state; break;
  }
  return weights + weights + master + states;
}

namespace {

Result<void> check_model(const ModelDescription& m, const TrainingSettings& s, std::string_view role) {
  if (auto v = m.architecture.validate(); !v)
    return fail(ErrorKind::invalid_input, text::cat(role, " ", m.name, ": ", v.error().message));
  if (auto v = check_tensor_parallel(m.architecture, s.tensor_parallel); !v)
    return fail(ErrorKind::invalid_input, text::cat(role, " ", m.name, ": ", v.error().message));
  if (s.pipeline_parallel > m.architecture.layers)
    return fail(ErrorKind::invalid_input, text::cat("pipeline-parallel degree ", s.pipeline_parallel, " exceeds the ",
                                                    m.architecture.layers, " layers of the ", role, " ", m.name));
  if (m.parameters == 0) return fail(ErrorKind::invalid_input, text::cat("the ", role, " ", m.name, " has no parameters"));
  return {};
}

// Resolves defaults and collects the warnings that need no model.
TrainingSettings resolve(TrainingSettings s, std::vector<std::string>& warnings) {
  const TrainingMethod w = s.weight_method();
  const bool adapters = w == TrainingMethod::lora || w == TrainingMethod::qlora;
  if (adapters) {
    if (!s.lora_rank) s.lora_rank = w == TrainingMethod::qlora ? 64u : 8u;
    if (!s.lora_targets) s.lora_targets = w == TrainingMethod::qlora ? LoraTargets::all_linear() : LoraTargets::query_value();
    if (w == TrainingMethod::qlora) {
      s.qlora_bits = 4;
      s.base_quantization = QuantizationLevel::nf4;
    }
  } else if (s.lora_rank || s.lora_targets) {
    warnings.push_back(text::cat("LoRA rank and targets are ignored: ", to_string(s.method), " trains no adapters"));
    s.lora_rank.reset();
    s.lora_targets.reset();
  }
  if (s.method == TrainingMethod::prefix) {
    if (!s.prefix_length) s.prefix_length = 20;
  } else if (s.prefix_length || s.prefix_projection > 0) {
    warnings.push_back("prefix length and projection are ignored: the method is not prefix tuning");
    s.prefix_length.reset();
    s.prefix_projection = 0;
  }
  if (!s.micro_batches) s.micro_batches = s.pipeline_parallel;
  return s;
}

}  // namespace

Result<TrainingEstimate> estimate_training(const ModelDescription& model, const TrainingSettings& settings_in,
                                           const AuxiliaryModels& aux, Backend backend) {
  using namespace training_detail;
  if (auto v = settings_in.validate(); !v) return fail(v.error());
  TrainingEstimate est;
  const TrainingSettings s = resolve(settings_in, est.warnings);
  est.settings = s;
  est.backend = backend;
  est.model_name = model.name;
  est.model_source = model.source;
  est.parameters = model.parameters;
  est.layers = model.architecture.layers;
  est.architecture_assumed = model.architecture_assumed;

  const std::string_view main_role = s.method == TrainingMethod::dpo || s.method == TrainingMethod::rlhf ? "policy"
                                     : s.method == TrainingMethod::distillation                          ? "student"
                                                                                                         : "model";
  if (auto v = check_model(model, s, main_role); !v) return fail(v.error());
  if (s.method == TrainingMethod::distillation) {
    if (!aux.teacher)
      return fail(ErrorKind::invalid_input, "distillation needs a teacher model (--teacher MODEL|FILE)");
    if (auto v = check_model(*aux.teacher, s, "teacher"); !v) return fail(v.error());
    if (aux.teacher->architecture.vocab_size != model.architecture.vocab_size)
      est.warnings.push_back(text::cat("teacher and student vocabularies differ (", aux.teacher->architecture.vocab_size,
                                       " vs ", model.architecture.vocab_size,
                                       "): logit distillation needs one tokenizer"));
  } else if (aux.teacher) {
    est.warnings.push_back(text::cat("the teacher model is ignored: only distillation uses one"));
  }
  if (s.method == TrainingMethod::rlhf && aux.reward) {
    if (auto v = check_model(*aux.reward, s, "reward model"); !v) return fail(v.error());
  } else if (aux.reward) {
    est.warnings.push_back("the reward model is ignored: only rlhf uses one");
  }

  const std::vector<Role> roles = roles_of(s, model, aux);
  const bool has_frozen_model = std::any_of(roles.begin(), roles.end(), [](const Role& r) { return r.weights == Weights::frozen; });
  if (s.frozen_quantization && !has_frozen_model)
    est.warnings.push_back(text::cat("the frozen-model quantization is ignored: ", to_string(s.method),
                                     s.adapter ? " with adapters" : "", " holds no separate frozen model"));

  // Warnings about valid but questionable choices.
  if (s.zero_stage > 0 && s.data_parallel == 1 && s.offload == OffloadMode::none)
    est.warnings.push_back(text::cat("ZeRO stage ", s.zero_stage,
                                     " with one data-parallel rank and no offload partitions nothing: the memory is that "
                                     "of stage 0 (raise --dp or offload)"));
  if (s.zero_stage >= 2 && s.pipeline_parallel > 1)
    est.warnings.push_back("DeepSpeed does not combine ZeRO stage 2 or 3 with pipeline parallelism; Megatron's "
                           "distributed optimizer (ZeRO-1 style) does");
  if (s.precision == TrainingPrecision::bf16_pure)
    est.warnings.push_back("pure bf16 keeps no fp32 master weights: updates below bf16's precision are lost unless the "
                           "optimizer uses stochastic rounding or Kahan summation");
  if (s.precision == TrainingPrecision::fp32 && s.attention == AttentionKernel::flash)
    est.warnings.push_back("FlashAttention computes in 16-bit: fp32 training falls back to materialised attention "
                           "(--attention standard)");
  if (s.micro_batches && *s.micro_batches < s.pipeline_parallel)
    est.warnings.push_back(text::cat(*s.micro_batches, " micro-batches per step for ", s.pipeline_parallel,
                                     " pipeline stages leave stages idle most of the step"));
  if (!model.architecture_assumed && model.architecture.max_context > 0 && s.sequence > model.architecture.max_context)
    est.warnings.push_back(text::cat("sequence ", s.sequence, " exceeds the model's ", model.architecture.max_context,
                                     "-token context"));
  if (s.offload == OffloadMode::optimizer && s.zero_stage == 1)
    est.warnings.push_back("optimizer offload at ZeRO stage 1 keeps the full gradients on the device; stage 2 moves "
                           "their partition to the host");
  if (!model.architecture.mla && s.tensor_parallel > model.architecture.kv_heads)
    est.warnings.push_back(text::cat("tensor-parallel degree ", s.tensor_parallel, " exceeds the ",
                                     model.architecture.kv_heads, " KV heads: each rank keeps a replica of one"));
  if (s.weight_method() == TrainingMethod::qlora && s.zero_stage == 3)
    est.warnings.push_back("ZeRO-3/FSDP with a 4-bit base needs bnb_4bit_quant_storage set to the compute type so the "
                           "packed weights can be sharded (FSDP-QLoRA)");

  // Models and their trainable parameters.
  for (const Role& r : roles) {
    TrainingModel m;
    m.role = r.name;
    m.name = r.model->name;
    m.parameters = r.model->parameters;
    m.architecture_assumed = r.model->architecture_assumed;
    m.storage = storage_phrase(r, s);
    switch (r.weights) {
      case Weights::full: m.trainable_parameters = r.model->parameters; break;
      case Weights::lora: {
        auto c = count_lora_parameters(r.model->architecture, *s.lora_rank, *s.lora_targets);
        if (!c) return fail(c.error());
        if (c->parameters == 0)
          return fail(ErrorKind::invalid_input, text::cat("LoRA targets ", to_string(*s.lora_targets), " adapt no matrix of ",
                                                          r.model->name));
        m.trainable_parameters = c->parameters;
        break;
      }
      case Weights::prefix:
        m.trainable_parameters =
            count_prefix_parameters(r.model->architecture, *s.prefix_length, s.prefix_projection).trainable();
        break;
      default: break;
    }
    if (r.weights != Weights::shared) {
      est.trainable_parameters += m.trainable_parameters;
      if (r.weights != Weights::full) est.frozen_parameters += r.model->parameters;
    }
    est.models.push_back(std::move(m));
  }

  Builder builder{s, backend};
  for (std::uint32_t stage = 0; stage < s.pipeline_parallel; ++stage) {
    auto d = build_stage(builder, roles, stage);
    if (!d) return fail(d.error());
    // Sums saturate: a total at the 64-bit ceiling means something overflowed.
    if (d->total_bytes == u64_max || d->host_bytes == u64_max)
      return fail(ErrorKind::invalid_input, text::cat("memory of pipeline stage ", stage,
                                                      " overflows 64-bit byte counts: the workload is too large"));
    est.stages.push_back(std::move(*d));
  }
  const auto worst = std::max_element(est.stages.begin(), est.stages.end(),
                                      [](const DeviceMemory& a, const DeviceMemory& b) { return a.total_bytes < b.total_bytes; });
  est.per_device = *worst;

  // What the numbers rest on.
  auto& as = est.assumptions;
  for (const Role& r : roles)
    if (r.model->architecture_assumed)
      for (const auto& note : r.model->notes) as.push_back(text::cat(r.name, ": ", note));
  as.push_back(text::cat("per device: data-parallel rank 0, tensor-parallel rank 0 of pipeline stage ", est.per_device.stage,
                         " (the most loaded of ", s.pipeline_parallel, "); devices = dp ", s.data_parallel, " x tp ",
                         s.tensor_parallel, " x pp ", s.pipeline_parallel, " = ", s.devices()));
  as.push_back(text::cat("model states (ZeRO's layout): ", dtype_name(s.precision), " weights and gradients",
                         mixed(s.precision) ? " with fp32 master weights counted as optimizer memory (K = 12 for AdamW)" : "",
                         "; ", optimizer_rule(s.optimizer, s.precision)));
  if (s.zero_stage > 0)
    as.push_back(text::cat("ZeRO stage ", s.zero_stage, " over dp ", s.data_parallel, ": ",
                           s.zero_stage == 1   ? "optimizer states and master weights partitioned"
                           : s.zero_stage == 2 ? "optimizer states, master weights and gradients partitioned (FSDP SHARD_GRAD_OP)"
                                               : "optimizer states, master weights, gradients and parameters partitioned "
                                                 "(FSDP FULL_SHARD); frozen models are partitioned too"));
  {
    const Role& main = roles.front();
    const ActivationSettings a = builder.activation_settings(main, true);
    as.push_back(text::cat("activations: ", activation_rule(main.model->architecture, a)));
  }
  if (s.pipeline_parallel > 1)
    as.push_back(text::cat("pipeline: layers split evenly (the last stages take any remainder); under 1F1B stage i holds "
                           "min(pp - i, micro-batches) = up to ",
                           std::min(s.pipeline_parallel, *s.micro_batches), " micro-batches of activations"));
  if (s.tensor_parallel > 1)
    as.push_back(text::cat("tensor parallel ", s.tensor_parallel,
                           ": attention and FFN matrices, embedding and head split (Megatron); norms and MoE routers "
                           "replicated; experts split like dense FFNs (no expert parallelism)"));
  if (s.data_parallel > 1 && s.zero_stage == 0)
    as.push_back("data parallel without ZeRO: gradients are all-reduced in place (Megatron's contiguous buffer, DDP "
                 "gradient_as_bucket_view); PyTorch DDP's default keeps a second gradient copy in its buckets");
  if (s.method == TrainingMethod::rlhf)
    as.push_back("RLHF/PPO: policy and value models train in one step (their activations add up); reference and reward "
                 "forward passes and the policy's generation run in the experience phase, counted where they exceed the "
                 "training phase; value and reward models are costed with their language-model embedding");
  if (s.method == TrainingMethod::dpo)
    as.push_back(s.adapter ? "DPO with adapters: the reference is the policy's base with the adapters disabled"
                           : "DPO: the frozen reference runs a no-grad forward pass on the same pairs after the policy's "
                             "(precomputing reference log-probabilities removes it from the step)");
  if (s.method == TrainingMethod::distillation)
    as.push_back("distillation: the teacher's no-grad forward pass precedes the student's; its fp32 logits stay for "
                 "the loss");
  if (s.offload != OffloadMode::none)
    as.push_back("offloaded states sit in pinned host memory; host_bytes is per device, so a host holds it once per "
                 "local device");
  return est;
}

Result<TrainingEstimate> estimate_training_memory(std::uint64_t parameters, TrainingMethod method) {
  auto model = ModelDescription::from_parameter_count(parameters);
  if (!model) return fail(model.error());
  TrainingSettings s;
  s.method = method;
  AuxiliaryModels aux;
  if (method == TrainingMethod::distillation) aux.teacher = *model;
  return estimate_training(*model, s, aux);
}

}  // namespace hwaccel
