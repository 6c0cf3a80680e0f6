// Training memory against the published numbers it must agree with: the
// ZeRO paper's worked example, Korthikanti et al.'s activation formulas and
// their claims, the LoRA paper's parameter counts for GPT-3, PEFT's printed
// counts for Llama models, and the QLoRA paper's memory claims.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

import hwaccel;

#include "module_helpers.hpp"

namespace {

using namespace hwaccel;

// A GPT-3-style layer stack: LayerNorm with bias, multi-head attention, a 4h
// GeLU MLP, tied embeddings (Brown et al. 2020, Table 2.1).
ModelArchitecture gpt(std::uint32_t layers, std::uint64_t hidden, std::uint32_t heads) {
  ModelArchitecture a;
  a.family = "gpt3";
  a.layers = layers;
  a.hidden_size = hidden;
  a.attention_heads = heads;
  a.kv_heads = heads;
  a.head_dim = static_cast<std::uint32_t>(hidden / heads);
  a.intermediate_size = 4 * hidden;
  a.vocab_size = 50257;
  a.tied_embeddings = true;
  a.gated_ffn = false;
  a.qkv_bias = true;
  a.norm_bias = true;
  a.max_context = 2048;
  return a;
}

ModelDescription described(std::string name, const ModelArchitecture& a) {
  return ModelDescription::from_architecture(std::move(name), a).value();
}

// LLaMA-65B's published config.json (Touvron et al. 2023).
ModelArchitecture llama_65b() {
  ModelArchitecture a;
  a.family = "llama";
  a.layers = 80;
  a.hidden_size = 8192;
  a.attention_heads = 64;
  a.kv_heads = 64;
  a.head_dim = 128;
  a.intermediate_size = 22016;
  a.vocab_size = 32000;
  a.max_context = 2048;
  return a;
}

using hwaccel::testing::find;

// Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion
// Parameter Models" (2019), Figure 1: Psi = 7.5B, Nd = 64, K = 12.
TEST(TrainingPapers, ZeroWorkedExample) {
  const auto model = ModelDescription::from_parameter_count(7'500'000'000).value();
  TrainingSettings s;
  s.precision = TrainingPrecision::fp16_mixed;
  s.optimizer = OptimizerKind::adamw;
  s.data_parallel = 64;
  const std::uint64_t expected[4] = {
      120'000'000'000,  // baseline (2 + 2 + K) Psi = 120 GB
      31'406'250'000,   // P_os: 2Psi + 2Psi + K Psi / Nd = 31.4 GB
      16'640'625'000,   // P_os+g: 2Psi + (2 + K) Psi / Nd = 16.6 GB
      1'875'000'000,    // P_os+g+p: (2 + 2 + K) Psi / Nd = 1.9 GB
  };
  const double paper_gb[4] = {120, 31.4, 16.6, 1.9};
  for (std::uint32_t stage = 0; stage <= 3; ++stage) {
    s.zero_stage = stage;
    const auto e = estimate_training(model, s).value();
    EXPECT_EQ(e.per_device.model_states_bytes(), expected[stage]) << "stage " << stage;
    EXPECT_NEAR(static_cast<double>(e.per_device.model_states_bytes()) / 1e9, paper_gb[stage], 0.05) << "stage " << stage;
  }
  // What each stage partitions.
  s.zero_stage = 1;
  auto d = estimate_training(model, s).value().per_device;
  EXPECT_EQ(d.parameters_bytes, 15'000'000'000u);
  EXPECT_EQ(d.gradients_bytes, 15'000'000'000u);
  EXPECT_EQ(find(d, "master_weights")->bytes, 30'000'000'000u / 64);
  EXPECT_EQ(find(d, "optimizer_states")->bytes, 60'000'000'000u / 64);
  s.zero_stage = 2;
  d = estimate_training(model, s).value().per_device;
  EXPECT_EQ(d.parameters_bytes, 15'000'000'000u);
  EXPECT_EQ(d.gradients_bytes, 15'000'000'000u / 64);
  s.zero_stage = 3;
  d = estimate_training(model, s).value().per_device;
  EXPECT_EQ(d.parameters_bytes, 15'000'000'000u / 64);
}

// Mixed-precision Adam: 2 (weights) + 2 (gradients) + 12 (fp32 master,
// momentum, variance) = 16 bytes per parameter; a 7B model needs 112 GB
// of model states before activations.
TEST(TrainingPapers, MixedPrecisionAdamSixteenBytes) {
  EXPECT_EQ(model_state_bytes_per_parameter(TrainingPrecision::bf16_mixed, OptimizerKind::adamw), 16.0);
  EXPECT_EQ(model_state_bytes_per_parameter(TrainingPrecision::fp16_mixed, OptimizerKind::adamw), 16.0);
  EXPECT_EQ(model_state_bytes_per_parameter(TrainingPrecision::fp32, OptimizerKind::adamw), 16.0);  // 4 + 4 + 8
  EXPECT_EQ(model_state_bytes_per_parameter(TrainingPrecision::bf16_pure, OptimizerKind::adamw), 8.0);  // 2 + 2 + 4
  EXPECT_EQ(model_state_bytes_per_parameter(TrainingPrecision::bf16_pure, OptimizerKind::adamw_32bit), 12.0);
  EXPECT_EQ(model_state_bytes_per_parameter(TrainingPrecision::bf16_mixed, OptimizerKind::sgd), 8.0);
  EXPECT_EQ(model_state_bytes_per_parameter(TrainingPrecision::bf16_mixed, OptimizerKind::sgd_momentum), 12.0);
  EXPECT_EQ(adam_model_state_bytes(7'000'000'000).value(), 112'000'000'000u);

  const auto e = estimate_training_memory(7'000'000'000, TrainingMethod::full).value();
  EXPECT_EQ(e.per_device.model_states_bytes(), 112'000'000'000u);
  EXPECT_EQ(e.per_device.parameters_bytes, 14'000'000'000u);
  EXPECT_EQ(e.per_device.gradients_bytes, 14'000'000'000u);   // the reference design omits these
  EXPECT_EQ(e.per_device.optimizer_bytes, 84'000'000'000u);  // master 4 + momentum 4 + variance 4
  EXPECT_GT(e.per_device.activations_bytes, 0u);
  EXPECT_EQ(e.per_device.total_bytes, e.per_device.model_states_bytes() + e.per_device.activations_bytes +
                                          e.per_device.other_bytes);
}

struct Layer {
  std::uint64_t s, b, h, a;
  std::uint64_t sbh() const { return s * b * h; }
  std::uint64_t scores() const { return 5 * a * s * s * b; }  // 5as^2b
};

LayerActivations gpt_layer(const ModelArchitecture& arch, std::uint32_t t, bool sp, Recompute r) {
  ActivationSettings as;
  as.micro_batch = 1;
  as.sequence = 2048;
  as.tensor_parallel = t;
  as.sequence_parallel = sp;
  as.recompute = r;
  as.attention = AttentionKernel::standard;
  as.dropout = true;
  return layer_activations(arch, 0, as).value();
}

// Korthikanti et al., "Reducing Activation Recomputation in Large
// Transformer Models" (2022), Table 2, on GPT-3 175B (s = 2048, b = 1,
// h = 12288, a = 96) with the paper's tensor-parallel size t = 8.
TEST(TrainingPapers, KorthikantiTableTwo) {
  const auto arch = gpt(96, 12288, 96);
  const Layer g{2048, 1, 12288, 96};
  const std::uint64_t t = 8;
  // No parallelism: sbh(34 + 5as/h).
  EXPECT_EQ(gpt_layer(arch, 1, false, Recompute::none).stored, 34 * g.sbh() + g.scores());
  EXPECT_EQ(gpt_layer(arch, 1, false, Recompute::none).stored, 2'868'903'936u);  // 2.87 GB per layer
  // Tensor parallel: sbh(10 + 24/t + 5as/(ht)).
  EXPECT_EQ(gpt_layer(arch, 8, false, Recompute::none).stored, 10 * g.sbh() + 24 * g.sbh() / t + g.scores() / t);
  // Tensor + sequence parallel: sbh(34/t + 5as/(ht)).
  EXPECT_EQ(gpt_layer(arch, 8, true, Recompute::none).stored, 34 * g.sbh() / t + g.scores() / t);
  // Tensor parallel + selective recomputation: sbh(10 + 24/t).
  EXPECT_EQ(gpt_layer(arch, 8, false, Recompute::selective).stored, 10 * g.sbh() + 24 * g.sbh() / t);
  // Tensor + sequence parallel + selective: sbh(34/t).
  EXPECT_EQ(gpt_layer(arch, 8, true, Recompute::selective).stored, 34 * g.sbh() / t);
  // Full recomputation keeps the layer input, 2sbh (split by t under sequence parallelism).
  EXPECT_EQ(gpt_layer(arch, 1, false, Recompute::full).stored, 2 * g.sbh());
  EXPECT_EQ(gpt_layer(arch, 8, true, Recompute::full).stored, 2 * g.sbh() / t);
  // ... and rebuilds the whole layer while its gradients are computed.
  EXPECT_EQ(gpt_layer(arch, 1, false, Recompute::full).recompute_working_set, 32 * g.sbh() + g.scores());
}

// Section 4.2's arithmetic: for GPT-3 5as/h = 80, so selective recomputation
// removes 80 / (34 + 80) = 70 % of a layer's activations; for MT-NLG 530B
// (a = 128, h = 20480) 5as/h = 64 and it removes 65 %.
TEST(TrainingPapers, KorthikantiSelectiveSavings) {
  const auto saving = [](const ModelArchitecture& arch) {
    const double none = static_cast<double>(gpt_layer(arch, 1, false, Recompute::none).stored);
    const double selective = static_cast<double>(gpt_layer(arch, 1, false, Recompute::selective).stored);
    return 1.0 - selective / none;
  };
  EXPECT_NEAR(saving(gpt(96, 12288, 96)), 0.70, 0.005);
  EXPECT_NEAR(saving(gpt(105, 20480, 128)), 0.65, 0.005);
}

// The abstract's "reduces activation memory by 5x": sequence parallelism
// with selective recomputation against the tensor-parallel baseline, for
// the four configurations of Table 3 (t = 8 throughout).
TEST(TrainingPapers, KorthikantiFiveTimes) {
  struct Config {
    std::uint32_t layers;
    std::uint64_t hidden;
    std::uint32_t heads;
  };
  for (const Config c : {Config{48, 6144, 64}, Config{96, 12288, 96}, Config{105, 20480, 128}, Config{128, 25600, 160}}) {
    const auto arch = gpt(c.layers, c.hidden, c.heads);
    const double baseline = static_cast<double>(gpt_layer(arch, 8, false, Recompute::none).stored);
    const double present = static_cast<double>(gpt_layer(arch, 8, true, Recompute::selective).stored);
    EXPECT_GE(baseline / present, 4.9) << c.hidden;
    EXPECT_LE(baseline / present, 6.3) << c.hidden;
  }
}

// Section 4.2.3: under 1F1B the first pipeline stage holds p micro-batches
// of L/p layers, i.e. L layers' worth whatever p is, plus the embedding
// dropout mask of each micro-batch (sbhp/t with sequence parallelism).
TEST(TrainingPapers, KorthikantiFirstPipelineStage) {
  struct Config {
    std::uint32_t layers;
    std::uint64_t hidden;
    std::uint32_t heads;
    std::uint32_t pp;
  };
  for (const Config c : {Config{96, 12288, 96, 8}, Config{105, 20480, 128, 35}, Config{128, 25600, 160, 64}}) {
    const auto model = described("gpt", gpt(c.layers, c.hidden, c.heads));
    TrainingSettings s;
    s.tensor_parallel = 8;
    s.sequence_parallel = true;
    s.pipeline_parallel = c.pp;
    s.recompute = Recompute::selective;
    s.attention = AttentionKernel::standard;
    s.dropout = true;
    const auto e = estimate_training(model, s).value();
    const std::uint64_t sbh = 2048 * c.hidden;
    const auto& first = e.stages.front();
    EXPECT_EQ(first.micro_batches_in_flight, c.pp);
    EXPECT_EQ(first.activations_bytes, c.layers * 34 * sbh / 8 + c.pp * sbh / 8) << c.hidden;
    // The last stage holds one micro-batch.
    EXPECT_EQ(e.stages.back().micro_batches_in_flight, 1u);
  }
}

// Hu et al., "LoRA: Low-Rank Adaptation of Large Language Models" (2021),
// GPT-3 175B (96 layers, d_model 12288): |Theta| = 2 x L x d x r per
// adapted matrix type. Section 7.1 sets an 18M budget: r = 4 on Wq and Wv
// (or r = 8 on one type, r = 2 on all four); Table 4's "LoRA 4.7M" is r = 1
// on Wq, Wv and "37.7M" r = 8 on Wq, Wv.
TEST(TrainingPapers, LoraGpt3Counts) {
  const auto arch = gpt(96, 12288, 96);
  const auto count = [&](std::uint32_t r, std::string_view targets) {
    return count_lora_parameters(arch, r, parse_lora_targets(targets).value()).value().parameters;
  };
  EXPECT_EQ(count(4, "q,v"), 18'874'368u);
  EXPECT_EQ(count(4, "q,v"), 2u * 96 * 2 * 12288 * 4);
  EXPECT_EQ(count(8, "q"), 18'874'368u);
  EXPECT_EQ(count(8, "v"), 18'874'368u);
  EXPECT_EQ(count(2, "q,k,v,o"), 18'874'368u);
  EXPECT_EQ(count(1, "q,v"), 4'718'592u);   // Table 4: 4.7M
  EXPECT_EQ(count(8, "q,v"), 37'748'736u);  // Table 4: 37.7M
  EXPECT_EQ(count_lora_parameters(arch, 4, LoraTargets::query_value()).value().adapted_matrices, 192u);
  // "roughly 35MB if stored in FP16": 18.9M x 2 bytes = 37.7 MB = 36 MiB.
  EXPECT_NEAR(static_cast<double>(count(4, "q,v") * 2) / (1024 * 1024), 36.0, 0.01);
}

// Section 4.2: LoRA on GPT-3 175B needs about 350 GB (the frozen fp16
// weights) where full fine-tuning needs far more.
TEST(TrainingPapers, LoraGpt3FrozenWeights) {
  const auto model = described("gpt-3", gpt(96, 12288, 96));
  EXPECT_NEAR(static_cast<double>(model.parameters) / 1e9, 175.0, 1.0);
  TrainingSettings s;
  s.method = TrainingMethod::lora;
  s.lora_rank = 4;
  s.lora_targets = LoraTargets::query_value();
  s.precision = TrainingPrecision::fp16_mixed;
  const auto e = estimate_training(model, s).value();
  EXPECT_EQ(e.trainable_parameters, 18'874'368u);
  EXPECT_NEAR(static_cast<double>(find(e.per_device, "frozen_weights")->bytes) / 1e9, 350.0, 2.0);
  EXPECT_EQ(find(e.per_device, "adapter_weights")->bytes, 18'874'368u * 2);
  EXPECT_LT(e.per_device.model_states_bytes(), 350'000'000'000u + 18'874'368u * 16);
}

// PEFT's print_trainable_parameters for the usual configurations (GQA keys
// and values are 1024 wide in Llama 3 8B).
TEST(TrainingPapers, LoraPeftCounts) {
  const auto count = [](std::string_view id, std::uint32_t r, LoraTargets t) {
    return count_lora_parameters(catalogue_model(id).value().architecture, r, t).value().parameters;
  };
  EXPECT_EQ(count("llama-2-7b", 8, LoraTargets::query_value()), 4'194'304u);
  EXPECT_EQ(count("llama-3-8b", 8, LoraTargets::query_value()), 3'407'872u);
  EXPECT_EQ(count("llama-3-8b", 16, LoraTargets::all_linear()), 41'943'040u);
  // Mixtral: every expert of every layer is adapted.
  const std::uint64_t per_layer_attention = 8 * (4096 + 4096) * 2 + 8 * (4096 + 1024) * 2;
  const std::uint64_t per_layer_experts = 8 * 3 * 8 * (4096 + 14336);
  EXPECT_EQ(count("mixtral-8x7b", 8, LoraTargets::all_linear()), 32 * (per_layer_attention + per_layer_experts));
}

// Dettmers et al., "QLoRA: Efficient Finetuning of Quantized LLMs" (2023).
TEST(TrainingPapers, QloraStorage) {
  // NF4 with blocks of 64: an fp32 absmax adds 32/64 = 0.5 bits; double
  // quantization 8/64 + 32/(64 x 256) = 0.127 bits.
  const std::uint64_t n = 4096ull * 4096;
  EXPECT_DOUBLE_EQ(static_cast<double>(nf4_tensor_bytes(n, false)) * 8 / static_cast<double>(n), 4.5);
  EXPECT_NEAR(static_cast<double>(nf4_tensor_bytes(n, true)) * 8 / static_cast<double>(n), 4.127, 0.0005);
  // "...a reduction of 0.373 bits per parameter ... approximately 3 GB for a 65B model".
  const auto model = described("llama-65b", llama_65b());
  TrainingSettings s;
  s.method = TrainingMethod::qlora;
  const auto with = estimate_training(model, s).value();
  s.double_quantization = false;
  const auto without = estimate_training(model, s).value();
  const double saved = static_cast<double>(find(without.per_device, "frozen_weights")->bytes -
                                           find(with.per_device, "frozen_weights")->bytes);
  EXPECT_NEAR(saved / 1e9, 3.0, 0.1);
}

// "QLoRA reduces the average memory requirements of finetuning a 65B
// parameter model from >780GB of GPU memory to <48GB": 16-bit finetuning
// with bf16 weights and gradients and 32-bit Adam is 12 bytes per
// parameter; Guanaco 65B trains on one 48 GB GPU with the qlora.py
// defaults (r = 64 on every linear layer, adapters cast to bf16, paged
// 32-bit AdamW, batch 1, gradient checkpointing, sequences of ~512 tokens).
TEST(TrainingPapers, QloraSixtyFiveBillion) {
  const auto model = described("llama-65b", llama_65b());
  TrainingSettings full;
  full.precision = TrainingPrecision::bf16_pure;
  full.optimizer = OptimizerKind::adamw_32bit;
  const auto sixteen_bit = estimate_training(model, full).value();
  EXPECT_GT(sixteen_bit.per_device.model_states_bytes(), 780'000'000'000u);
  EXPECT_EQ(sixteen_bit.per_device.model_states_bytes(), model.parameters * 12);

  TrainingSettings q;
  q.method = TrainingMethod::qlora;
  q.precision = TrainingPrecision::bf16_pure;
  q.optimizer = OptimizerKind::adamw_32bit;
  q.sequence = 512;
  q.recompute = Recompute::full;
  const auto registry = hypothetical_registry("1xL40S-48GB").value();
  const auto e = plan_training(registry, model, q).value();
  EXPECT_EQ(e.settings.lora_rank, 64u);
  EXPECT_EQ(e.settings.lora_targets, LoraTargets::all_linear());
  EXPECT_EQ(e.trainable_parameters, 799'539'200u);
  ASSERT_TRUE(e.fit);
  EXPECT_TRUE(e.fit->fits) << e.fit->reason;
  EXPECT_LT(e.per_device.total_bytes, 48ull << 30);
  ASSERT_TRUE(e.minimum);
  EXPECT_EQ(e.minimum->devices, 1u);
  // With the ZeRO layout (an fp32 master copy of the adapters, 16 bytes per
  // trainable parameter) the same run no longer fits: why qlora.py keeps
  // its adapters in bf16.
  q.precision = TrainingPrecision::bf16_mixed;
  q.optimizer = OptimizerKind::adamw;
  const auto mixed = plan_training(registry, model, q).value();
  EXPECT_FALSE(mixed.fit->fits);
  EXPECT_EQ(mixed.per_device.total_bytes - e.per_device.total_bytes, 799'539'200u * 4);
}

}  // namespace
