// The training module's settings tables (training/setting_keys.cppm): each
// key's name, type, default, bounds and store.
module;
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
module hwaccel.training;

namespace hwaccel {

namespace {

using TrainingKey = SettingKey<TrainingSettings>;
using TrainingModelKey = SettingKey<TrainingModels>;

Result<QuantizationLevel> parse_training_quantization(std::string_view name) { return parse_quantization(name); }

constexpr double max_degree = max_parallel_degree;

constexpr std::array training_keys = {
    TrainingKey{"method", SettingType::choice, "full", 0, 0, "",
                "full (pre-training / full fine-tune), lora, qlora, prefix, dpo, rlhf (PPO), distill",
                &store_parsed<&parse_training_method, &TrainingSettings::method>},
    TrainingKey{"adapter", SettingType::choice, "", 0, 0, "", "dpo, rlhf, distill: train the policy/student with lora or qlora",
                &store_parsed<&parse_training_method, &TrainingSettings::adapter>},
    TrainingKey{"optimizer", SettingType::choice, "adamw", 0, 0, "",
                "adamw, adamw-32bit (bitsandbytes/paged, fp32 states), adamw-8bit, adafactor, sgd, sgd-momentum",
                &store_parsed<&parse_optimizer, &TrainingSettings::optimizer>},
    TrainingKey{"precision", SettingType::choice, "bf16", 0, 0, "", "fp32, bf16 (mixed, fp32 master), fp16 (mixed), bf16-pure",
                &store_parsed<&parse_training_precision, &TrainingSettings::precision>},
    TrainingKey{"zero", SettingType::choice, "0", 0, 0, "", "ZeRO stage 0, 1, 2, 3 (FSDP: no_shard, shard_grad_op, full_shard)",
                &store_parsed<&parse_zero_stage, &TrainingSettings::zero_stage>},
    TrainingKey{"offload", SettingType::choice, "none", 0, 0, "", "none, optimizer (ZeRO-Offload, stage >= 1), params (stage 3)",
                &store_parsed<&parse_offload, &TrainingSettings::offload>},
    TrainingKey{"dp", SettingType::whole, "1", 1, max_degree, "", "Data-parallel degree",
                &store_whole<&TrainingSettings::data_parallel>},
    TrainingKey{"tp", SettingType::whole, "1", 1, max_degree, "", "Tensor-parallel degree (must divide the attention heads)",
                &store_whole<&TrainingSettings::tensor_parallel>},
    TrainingKey{"pp", SettingType::whole, "1", 1, max_degree, "", "Pipeline-parallel degree (stages, 1F1B schedule)",
                &store_whole<&TrainingSettings::pipeline_parallel>},
    TrainingKey{"sequence-parallel", SettingType::boolean, "false", 0, 0, "", "Megatron sequence parallelism (needs tp 2+)",
                &store_boolean<&TrainingSettings::sequence_parallel>},
    TrainingKey{"micro-batch", SettingType::whole, "1", 1, max_micro_batch, "",
                "Sequences per micro-batch per data-parallel rank", &store_whole<&TrainingSettings::micro_batch>},
    TrainingKey{"seq", SettingType::whole, "2048", 1, max_training_sequence, "", "Tokens per sequence",
                &store_whole<&TrainingSettings::sequence>},
    TrainingKey{"micro-batches", SettingType::whole, "", 1, max_micro_batches, "",
                "Micro-batches per step (gradient accumulation); default: pp",
                &store_whole<&TrainingSettings::micro_batches>},
    TrainingKey{"recompute", SettingType::choice, "none", 0, 0, "", "Activation recomputation: none, selective, full",
                &store_parsed<&parse_recompute, &TrainingSettings::recompute>},
    TrainingKey{"attention", SettingType::choice, "flash", 0, 0, "",
                "flash (FlashAttention/SDPA) or standard (materialised scores)",
                &store_parsed<&parse_attention_kernel, &TrainingSettings::attention>},
    TrainingKey{"dropout", SettingType::boolean, "false", 0, 0, "", "Dropout layers (GPT-2/3 style) whose masks are kept",
                &store_boolean<&TrainingSettings::dropout>},
    TrainingKey{"lora-rank", SettingType::whole, "", 1, max_lora_rank, "", "LoRA rank (default 8; QLoRA 64)",
                &store_whole<&TrainingSettings::lora_rank>},
    TrainingKey{"lora-targets", SettingType::text, "", 0, 0, "",
                "Adapted matrices: q,k,v,o,gate,up,down or all (default q,v; QLoRA all)",
                &store_parsed<&parse_lora_targets, &TrainingSettings::lora_targets>},
    TrainingKey{"qlora-bits", SettingType::whole, "", 1, 32, "", "Bits of the QLoRA base (only 4 is QLoRA)",
                &store_whole<&TrainingSettings::qlora_bits>},
    TrainingKey{"double-quant", SettingType::boolean, "true", 0, 0, "", "QLoRA's double quantization of the NF4 scales",
                &store_boolean<&TrainingSettings::double_quantization>},
    TrainingKey{"base-quant", SettingType::choice, "", 0, 0, "",
                "LoRA base storage: bf16, fp16, fp32, int8 (8-bit LoRA), fp8_e4m3",
                &store_parsed<&parse_training_quantization, &TrainingSettings::base_quantization>},
    TrainingKey{"frozen-quant", SettingType::choice, "", 0, 0, "",
                "Reference/reward/teacher storage: bf16, fp16, fp8_e4m3, int8, nf4",
                &store_parsed<&parse_training_quantization, &TrainingSettings::frozen_quantization>},
    TrainingKey{"prefix-length", SettingType::whole, "", 1, max_prefix_length, "",
                "Prefix tuning: virtual tokens per layer (default 20)", &store_whole<&TrainingSettings::prefix_length>},
    TrainingKey{"prefix-projection", SettingType::whole, "0", 0, max_prefix_projection, "",
                "Prefix tuning: reparameterization MLP width (0: none)", &store_whole<&TrainingSettings::prefix_projection>},
    TrainingKey{"reserve", SettingType::fraction, "0.1", 0, 0.95, "", "Fraction of each device's memory kept free",
                &store_fraction<&TrainingSettings::reserve_fraction>},
};

constexpr std::array training_model_key_table = {
    TrainingModelKey{"teacher", SettingType::text, "", 0, 0, "", "Distillation teacher: catalogue id or model file",
                     &store_text<&TrainingModels::teacher>},
    TrainingModelKey{"reward-model", SettingType::text, "", 0, 0, "",
                     "RLHF reward model (the value model takes its shape): catalogue id or file",
                     &store_text<&TrainingModels::reward_model>},
};

}  // namespace

std::span<const SettingKey<TrainingSettings>> training_setting_keys() noexcept { return training_keys; }
std::span<const SettingKey<TrainingModels>> training_model_keys() noexcept { return training_model_key_table; }

Result<TrainingSettings> read_training_settings(std::span<const Setting> values) {
  TrainingSettings s;
  if (auto r = read_settings(s, training_setting_keys(), values); !r) return fail(r.error());
  if (auto v = s.validate(); !v) return fail(v.error());
  return s;
}

Result<TrainingModels> read_training_models(std::span<const Setting> values) {
  TrainingModels m;
  if (auto r = read_settings(m, training_model_keys(), values); !r) return fail(r.error());
  return m;
}

Result<AuxiliaryModels> TrainingModels::load() const {
  AuxiliaryModels auxiliary;
  for (const auto& [key, name, target] : {std::tuple{"teacher", &teacher, &auxiliary.teacher},
                                          std::tuple{"reward-model", &reward_model, &auxiliary.reward}}) {
    if (name->empty()) continue;
    auto m = load_model(*name);
    if (!m) return fail(m.error().kind, text::cat(key, ": ", m.error().message));
    *target = std::move(*m);
  }
  return auxiliary;
}

}  // namespace hwaccel
