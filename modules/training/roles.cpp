// The roles a training method holds (model; policy and reference; policy,
// value, reference and reward; student and teacher) and how each stores and
// trains its weights.
module;
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.training;
import :stage_memory;

namespace hwaccel::training_detail {

Scale scale_of(const ModelDescription& m) {
  if (!m.architecture_assumed) return {};
  const auto c = count_parameters(m.architecture);
  if (!c || c->total == 0) return {};
  return {m.parameters, c->total};
}

// Roles of the method, in output order.
std::vector<Role> roles_of(const TrainingSettings& s, const ModelDescription& model, const AuxiliaryModels& aux) {
  const QuantizationLevel dense = compute_level(s.precision);
  const TrainingMethod w = s.weight_method();
  const Weights trained = w == TrainingMethod::lora || w == TrainingMethod::qlora ? Weights::lora
                          : w == TrainingMethod::prefix                           ? Weights::prefix
                                                                                  : Weights::full;
  const QuantizationLevel base = s.base_quantization.value_or(dense);
  const QuantizationLevel frozen = s.frozen_quantization.value_or(dense);
  std::vector<Role> roles;
  const auto role = [&](std::string name, const ModelDescription& m, Weights weights, QuantizationLevel storage) {
    Role r;
    r.name = std::move(name);
    r.model = &m;
    r.weights = weights;
    r.storage = storage;
    r.scale = scale_of(m);
    return r;
  };
  switch (s.method) {
    case TrainingMethod::full:
    case TrainingMethod::lora:
    case TrainingMethod::qlora:
    case TrainingMethod::prefix: roles.push_back(role("model", model, trained, trained == Weights::prefix ? dense : base)); break;
    case TrainingMethod::dpo: {
      Role policy = role("policy", model, trained, base);
      policy.batch_factor = 2;
      roles.push_back(policy);
      Role reference = role("reference", model, trained == Weights::lora ? Weights::shared : Weights::frozen, frozen);
      reference.batch_factor = 2;
      roles.push_back(reference);
      break;
    }
    case TrainingMethod::rlhf: {
      const ModelDescription& reward = aux.reward ? *aux.reward : model;
      roles.push_back(role("policy", model, trained, base));
      Role value = role("value", reward, trained, base);
      value.language_head = false;
      roles.push_back(value);
      roles.push_back(role("reference", model, trained == Weights::lora ? Weights::shared : Weights::frozen, frozen));
      Role reward_role = role("reward", reward, Weights::frozen, frozen);
      reward_role.language_head = false;
      roles.push_back(reward_role);
      break;
    }
    case TrainingMethod::distillation:
      roles.push_back(role("student", model, trained, base));
      roles.push_back(role("teacher", *aux.teacher, Weights::frozen, frozen));
      break;
  }
  return roles;
}

std::string storage_phrase(const Role& r, const TrainingSettings& s) {
  const QuantizationLevel dense = compute_level(s.precision);
  const std::string states = text::cat(dtype_name(s.precision), " weights and gradients",
                                       mixed(s.precision) ? ", fp32 master weights" : "", ", ", to_string(s.optimizer),
                                       " states");
  switch (r.weights) {
    case Weights::full: return text::cat("trainable: ", states);
    case Weights::lora:
      return text::cat("frozen ", to_string(r.storage), r.storage == QuantizationLevel::nf4 && s.double_quantization ? " (double quantization)" : "",
                       " base; LoRA r=", *s.lora_rank, " on ", to_string(*s.lora_targets), " with ", states);
    case Weights::prefix:
      return text::cat("frozen ", to_string(dense), "; ", *s.prefix_length, " prefix tokens per layer",
                       s.prefix_projection ? text::cat(" through a ", s.prefix_projection, "-wide MLP") : std::string(),
                       " with ", states);
    case Weights::frozen: return text::cat("frozen ", to_string(r.storage));
    case Weights::shared: return "the policy's frozen base with its adapters disabled: no extra memory";
  }
  return {};
}

}  // namespace hwaccel::training_detail
