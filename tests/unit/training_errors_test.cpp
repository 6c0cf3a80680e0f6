// Invalid and questionable training settings: each invalid combination is
// an invalid_input error naming the setting; valid but pointless choices
// are warnings.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>
#include <string_view>

import hwaccel;

#include "module_helpers.hpp"

namespace {

using namespace hwaccel;

using hwaccel::testing::model;

using hwaccel::testing::with_teacher;

// The error of estimating `m` with `s`, which must fail with invalid_input.
std::string error_of(const TrainingSettings& s, const ModelDescription& m = model("llama-3.1-8b"),
                     const AuxiliaryModels& aux = {}) {
  const auto e = estimate_training(m, s, aux);
  EXPECT_FALSE(e) << "expected an error";
  if (e) return {};
  EXPECT_EQ(e.error().kind, ErrorKind::invalid_input) << e.error().message;
  return e.error().message;
}

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

TEST(TrainingErrors, QloraMustBeFourBits) {
  TrainingSettings s;
  s.method = TrainingMethod::qlora;
  s.qlora_bits = 16;
  EXPECT_TRUE(contains(error_of(s), "QLoRA at 16 bits is not QLoRA"));
  s.qlora_bits = 32;
  EXPECT_TRUE(contains(error_of(s), "plain LoRA"));
  s.qlora_bits = 8;
  EXPECT_TRUE(contains(error_of(s), "--base-quant int8"));
  s.qlora_bits = 3;
  EXPECT_TRUE(contains(error_of(s), "3 bits is not supported"));
  s.qlora_bits = 4;
  EXPECT_TRUE(estimate_training(model("llama-3.1-8b"), s));
  // A 16-bit base named through the base quantization is the same mistake.
  s.qlora_bits.reset();
  s.base_quantization = QuantizationLevel::bf16;
  EXPECT_TRUE(contains(error_of(s), "QLoRA's base is 4-bit NF4"));
  // And NF4 under plain LoRA is QLoRA.
  s.method = TrainingMethod::lora;
  s.base_quantization = QuantizationLevel::nf4;
  EXPECT_TRUE(contains(error_of(s), "--method qlora"));
  // Bits given to a method without a quantized base.
  s = {};
  s.qlora_bits = 4;
  EXPECT_TRUE(contains(error_of(s), "only to QLoRA"));
  // Inference formats are no training base.
  s = {};
  s.method = TrainingMethod::lora;
  s.base_quantization = QuantizationLevel::q4_k_m;
  EXPECT_TRUE(contains(error_of(s), "inference format"));
}

TEST(TrainingErrors, ZeroWithoutDataParallelismIsAWarning) {
  for (std::uint32_t stage = 1; stage <= 3; ++stage) {
    TrainingSettings s;
    s.zero_stage = stage;
    const auto e = estimate_training(model("llama-3.2-1b"), s).value();
    bool warned = false;
    for (const auto& w : e.warnings) warned |= contains(w, "partitions nothing");
    EXPECT_TRUE(warned) << "stage " << stage;
    // And it is not presented as a saving: the same memory as stage 0.
    const auto zero = estimate_training(model("llama-3.2-1b"), {}).value();
    EXPECT_EQ(e.per_device.model_states_bytes(), zero.per_device.model_states_bytes()) << "stage " << stage;
  }
  TrainingSettings s;
  s.zero_stage = 3;
  s.data_parallel = 2;
  // Held in a variable: a range-for over a member of a temporary outlives it.
  const auto with_replicas = estimate_training(model("llama-3.2-1b"), s).value();
  for (const auto& w : with_replicas.warnings)
    EXPECT_FALSE(contains(w, "partitions nothing")) << w;
}

TEST(TrainingErrors, SizesMustBePositive) {
  TrainingSettings s;
  s.micro_batch = 0;
  EXPECT_TRUE(contains(error_of(s), "micro-batch"));
  s = {};
  s.sequence = 0;
  EXPECT_TRUE(contains(error_of(s), "sequence length"));
  s = {};
  s.data_parallel = 0;
  EXPECT_TRUE(contains(error_of(s), "data-parallel degree"));
  s = {};
  s.tensor_parallel = 0;
  EXPECT_TRUE(contains(error_of(s), "tensor-parallel degree"));
  s = {};
  s.pipeline_parallel = 0;
  EXPECT_TRUE(contains(error_of(s), "pipeline-parallel degree"));
  s = {};
  s.micro_batches = 0;
  EXPECT_TRUE(contains(error_of(s), "micro-batches"));
  s = {};
  s.method = TrainingMethod::lora;
  s.lora_rank = 0;
  EXPECT_TRUE(contains(error_of(s), "LoRA rank"));
  s = {};
  s.method = TrainingMethod::prefix;
  s.prefix_length = 0;
  EXPECT_TRUE(contains(error_of(s), "prefix length"));
  s = {};
  s.reserve_fraction = -0.1;
  EXPECT_TRUE(contains(error_of(s), "reserve"));
  s.reserve_fraction = 0.99;
  EXPECT_TRUE(contains(error_of(s), "reserve"));
  // A model of no parameters.
  EXPECT_EQ(ModelDescription::from_parameter_count(0).error().kind, ErrorKind::invalid_input);
  EXPECT_EQ(estimate_training_memory(0, TrainingMethod::full).error().kind, ErrorKind::invalid_input);
  EXPECT_EQ(adam_model_state_bytes(0).error().kind, ErrorKind::invalid_input);
  // Workloads whose bytes overflow 64 bits are errors, not saturated totals.
  s = {};
  s.micro_batch = 65536;
  s.sequence = 1u << 24;
  EXPECT_TRUE(contains(error_of(s, model("llama-3.1-405b")), "overflow"));
  // Products that overflow 64 bits.
  EXPECT_EQ(adam_model_state_bytes(UINT64_MAX / 2).error().kind, ErrorKind::invalid_input);
}

TEST(TrainingErrors, ParallelismMustFitTheModel) {
  TrainingSettings s;
  s.tensor_parallel = 3;  // Llama 3.1 8B has 32 heads
  EXPECT_TRUE(contains(error_of(s), "does not divide the 32 attention heads"));
  s.tensor_parallel = 64;  // divides nothing: 32 heads
  EXPECT_TRUE(contains(error_of(s), "attention heads"));
  s = {};
  s.pipeline_parallel = 33;
  EXPECT_TRUE(contains(error_of(s), "exceeds the 32 layers"));
  s = {};
  s.sequence_parallel = true;
  EXPECT_TRUE(contains(error_of(s), "needs --tp 2"));
  s.tensor_parallel = 8;
  s.sequence = 2050;
  EXPECT_TRUE(contains(error_of(s), "must divide by the tensor-parallel degree"));
  // 16 ranks and 8 KV heads: each rank keeps a replica of one, with a warning.
  s = {};
  s.tensor_parallel = 16;
  const auto e = estimate_training(model("llama-3.1-70b"), s).value();
  bool warned = false;
  for (const auto& w : e.warnings) warned |= contains(w, "KV heads");
  EXPECT_TRUE(warned);
}

TEST(TrainingErrors, OffloadNeedsAStage) {
  TrainingSettings s;
  s.offload = OffloadMode::optimizer;
  EXPECT_TRUE(contains(error_of(s), "needs ZeRO stage 1, 2 or 3"));
  s.offload = OffloadMode::parameters;
  s.zero_stage = 2;
  EXPECT_TRUE(contains(error_of(s), "needs ZeRO stage 3"));
  s.zero_stage = 4;
  s.offload = OffloadMode::none;
  EXPECT_TRUE(contains(error_of(s), "ZeRO stage must be"));
}

TEST(TrainingErrors, MethodsNeedTheirModels) {
  TrainingSettings s;
  s.method = TrainingMethod::distillation;
  EXPECT_TRUE(contains(error_of(s), "needs a teacher"));
  // A teacher whose heads a tensor-parallel degree does not divide.
  s.tensor_parallel = 8;  // Qwen2 7B has 28 heads
  const std::string message = error_of(s, model("llama-3.1-70b"), with_teacher(model("qwen2-7b")));
  EXPECT_TRUE(contains(message, "teacher qwen2-7b")) << message;
  EXPECT_TRUE(contains(message, "28 attention heads")) << message;
  // An adapter applies to dpo, rlhf and distillation only.
  s = {};
  s.adapter = TrainingMethod::lora;
  EXPECT_TRUE(contains(error_of(s), "--method lora"));
  s.method = TrainingMethod::dpo;
  s.adapter = TrainingMethod::prefix;
  EXPECT_TRUE(contains(error_of(s), "an adapter is lora or qlora"));
  // Settings that do not apply are warnings, not errors.
  s = {};
  s.lora_rank = 16;
  s.frozen_quantization = QuantizationLevel::int8;
  const auto e = estimate_training(model("llama-3.2-1b"), s, with_teacher(model("llama-3.2-3b"))).value();
  EXPECT_EQ(e.warnings.size(), 3u);
  EXPECT_FALSE(e.settings.lora_rank);
}

TEST(TrainingErrors, ParsersNameTheChoices) {
  const auto optimizer = parse_optimizer("lion");
  ASSERT_FALSE(optimizer);
  EXPECT_EQ(optimizer.error().kind, ErrorKind::invalid_input);
  EXPECT_TRUE(contains(optimizer.error().message, "adamw, adamw-32bit, adamw-8bit, adafactor, sgd, sgd-momentum"));
  EXPECT_EQ(parse_optimizer("AdamW_8bit").value(), OptimizerKind::adamw_8bit);
  EXPECT_EQ(parse_optimizer("paged_adamw_32bit").value(), OptimizerKind::adamw_32bit);
  EXPECT_EQ(parse_training_method("PPO").value(), TrainingMethod::rlhf);
  EXPECT_EQ(parse_training_method("distill").value(), TrainingMethod::distillation);
  EXPECT_FALSE(parse_training_method("sft"));
  EXPECT_EQ(parse_training_precision("bf16").value(), TrainingPrecision::bf16_mixed);
  EXPECT_EQ(parse_training_precision("bf16-pure").value(), TrainingPrecision::bf16_pure);
  EXPECT_FALSE(parse_training_precision("fp8"));
  EXPECT_EQ(parse_zero_stage("full_shard").value(), 3u);
  EXPECT_EQ(parse_zero_stage("SHARD_GRAD_OP").value(), 2u);
  EXPECT_FALSE(parse_zero_stage("4"));
  EXPECT_EQ(parse_offload("params").value(), OffloadMode::parameters);
  EXPECT_FALSE(parse_offload("nvme"));
  EXPECT_EQ(parse_recompute("selective").value(), Recompute::selective);
  EXPECT_FALSE(parse_recompute("some"));
  EXPECT_EQ(parse_lora_targets("q_proj, v_proj").value(), LoraTargets::query_value());
  EXPECT_EQ(parse_lora_targets("all-linear").value(), LoraTargets::all_linear());
  EXPECT_EQ(to_string(parse_lora_targets("down,q,k").value()), "q,k,down");
  const auto bad = parse_lora_targets("q,lm_head");
  ASSERT_FALSE(bad);
  EXPECT_TRUE(contains(bad.error().message, "lm_head"));
  EXPECT_FALSE(parse_lora_targets(""));
}

// Read from keys, a combination the settings refuse together quotes the
// value it refuses, as a refusal of one key does ("KEY 'VALUE': why"); the
// first case is what the settings_text fuzz target found.
TEST(TrainingErrors, RefusedCombinationsQuoteTheSettingAndItsValue) {
  const std::pair<std::vector<Setting>, std::string_view> cases[] = {
      {{{"qlora-bits", "4"}, {"zero", "3"}, {"dp", "8"}}, "qlora-bits '4' with method 'full'"},
      {{{"method", "qlora"}, {"qlora-bits", "16"}}, "qlora-bits '16'"},
      {{{"method", "qlora"}, {"qlora-bits", "8"}}, "qlora-bits '8'"},
      {{{"method", "qlora"}, {"qlora-bits", "3"}}, "qlora-bits '3'"},
      {{{"offload", "optimizer"}}, "offload 'optimizer'"},
      {{{"offload", "params"}, {"zero", "2"}}, "offload 'params'"},
      {{{"sequence-parallel", "true"}}, "sequence-parallel 'true'"},
      {{{"sequence-parallel", "true"}, {"tp", "3"}, {"seq", "2048"}}, "seq '2048'"},
      {{{"adapter", "lora"}}, "adapter 'lora' with method 'full'"},
      {{{"adapter", "full"}, {"method", "dpo"}}, "adapter 'full'"},
      {{{"base-quant", "int8"}}, "base-quant 'int8' with method 'full'"},
      {{{"method", "lora"}, {"base-quant", "nf4"}}, "base-quant 'nf4'"},
      {{{"method", "qlora"}, {"base-quant", "bf16"}}, "base-quant 'bf16'"},
      {{{"dp", "1048576"}, {"tp", "2"}}, "dp '1048576', tp '2', pp '1'"},
  };
  for (const auto& [values, quoted] : cases) {
    const auto r = read_training_settings(values);
    ASSERT_FALSE(r) << quoted;
    EXPECT_EQ(r.error().kind, ErrorKind::invalid_input) << r.error().message;
    EXPECT_TRUE(contains(r.error().message, quoted)) << r.error().message;
  }
}

}  // namespace
