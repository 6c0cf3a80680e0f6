// Training memory by method, optimizer, precision and parallelism: which
// models each method holds, what ZeRO and offload move, how tensor and
// pipeline parallelism split the model, the fit check and the minimum
// device count, and the JSON.
#include <gtest/gtest.h>

#include <simdjson.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

import hwaccel;

#include "module_helpers.hpp"

namespace {

using namespace hwaccel;

using hwaccel::testing::model;

using hwaccel::testing::with_teacher;

AuxiliaryModels with_reward(ModelDescription m) {
  AuxiliaryModels aux;
  aux.reward = std::move(m);
  return aux;
}

using hwaccel::testing::find;

std::vector<std::string> roles(const TrainingEstimate& e) {
  std::vector<std::string> out;
  for (const auto& m : e.models) out.push_back(m.role);
  return out;
}

TEST(TrainingMethods, FullFineTuneBreakdownAddsUp) {
  const auto m = model("llama-3.1-8b");
  const auto e = estimate_training(m, {}).value();
  const auto& d = e.per_device;
  EXPECT_EQ(d.parameters_bytes, m.parameters * 2);
  EXPECT_EQ(d.gradients_bytes, m.parameters * 2);
  EXPECT_EQ(d.optimizer_bytes, m.parameters * 12);
  std::uint64_t sum = 0;
  for (const auto& c : d.components) {
    EXPECT_FALSE(c.rule.empty()) << c.name;
    if (c.location == MemoryLocation::device) sum += c.bytes;
  }
  EXPECT_EQ(sum, d.total_bytes);
  EXPECT_EQ(d.host_bytes, 0u);
  EXPECT_TRUE(find(d, "logits"));
  EXPECT_TRUE(find(d, "runtime_overhead"));
  EXPECT_EQ(e.trainable_parameters, m.parameters);
  EXPECT_EQ(e.frozen_parameters, 0u);
  EXPECT_EQ(roles(e), std::vector<std::string>{"model"});
  // Llama 3.1 8B at 2048 tokens: FlashAttention, SwiGLU, GQA, no dropout.
  // Per layer: norms 2x2sbh, attention input 2sbh, q 2sbh, k and v 2 x 2sb x 1024,
  // output 2sbh, log-sum-exp 4 x 32 x s, MLP input 2sbh, gate/up/down 3 x 2 x s x 14336.
  const std::uint64_t s = 2048, h = 4096;
  const std::uint64_t layer = 4 * s * h + 2 * s * h + 2 * s * h + 4 * s * 1024 + 2 * s * h + 4 * 32 * s + 2 * s * h +
                              6 * s * 14336;
  EXPECT_EQ(find(d, "activations")->bytes, 32 * layer + 4 * s * h);  // + final norm and head inputs
  EXPECT_EQ(find(d, "logits")->bytes, 4 * s * 128256);
}

TEST(TrainingMethods, OptimizersAndPrecisions) {
  const auto m = model("llama-2-7b");
  const auto states = [&](TrainingPrecision p, OptimizerKind o) {
    TrainingSettings s;
    s.precision = p;
    s.optimizer = o;
    return estimate_training(m, s).value().per_device;
  };
  const std::uint64_t n = m.parameters;
  EXPECT_EQ(states(TrainingPrecision::fp32, OptimizerKind::adamw).model_states_bytes(), 16 * n);
  EXPECT_FALSE(find(states(TrainingPrecision::fp32, OptimizerKind::adamw), "master_weights"));
  EXPECT_EQ(states(TrainingPrecision::bf16_pure, OptimizerKind::adamw).model_states_bytes(), 8 * n);
  EXPECT_EQ(states(TrainingPrecision::bf16_mixed, OptimizerKind::sgd).model_states_bytes(), 8 * n);
  EXPECT_EQ(states(TrainingPrecision::bf16_mixed, OptimizerKind::sgd_momentum).model_states_bytes(), 12 * n);
  // 8-bit AdamW: 2 bytes plus 2 x 4 bytes of absmax per 256 values; norms
  // (4096 values) are 8-bit too, nothing here is under 4096 values.
  const auto eight = states(TrainingPrecision::bf16_mixed, OptimizerKind::adamw_8bit);
  const double per_param = static_cast<double>(find(eight, "optimizer_states")->bytes) / static_cast<double>(n);
  EXPECT_NEAR(per_param, 2.03125, 1e-4);
  // Adafactor: rows + columns per matrix, 4 bytes each: 32 layers x
  // (4 x (4096 + 4096) + 3 x (4096 + 11008)) + 2 x (32000 + 4096) matrices,
  // plus every norm vector element.
  const auto ada = states(TrainingPrecision::bf16_mixed, OptimizerKind::adafactor);
  const std::uint64_t matrices = 32 * (4 * 8192 + 3 * (4096 + 11008)) + 2 * (32000 + 4096);
  const std::uint64_t vectors = 32 * 2 * 4096 + 4096;
  EXPECT_EQ(find(ada, "optimizer_states")->bytes, 4 * (matrices + vectors));
}

TEST(TrainingMethods, LoraAndQlora) {
  const auto m = model("llama-3-8b");
  TrainingSettings s;
  s.method = TrainingMethod::lora;
  auto e = estimate_training(m, s).value();
  EXPECT_EQ(e.settings.lora_rank, 8u);                          // PEFT's default
  EXPECT_EQ(e.settings.lora_targets, LoraTargets::query_value());  // PEFT's default for Llama
  EXPECT_EQ(e.trainable_parameters, 3'407'872u);
  EXPECT_EQ(e.frozen_parameters, m.parameters);
  EXPECT_EQ(find(e.per_device, "frozen_weights")->bytes, m.parameters * 2);
  EXPECT_EQ(find(e.per_device, "adapter_weights")->bytes, 3'407'872u * 2);
  EXPECT_EQ(e.per_device.gradients_bytes, 3'407'872u * 2);
  EXPECT_EQ(e.per_device.optimizer_bytes, 3'407'872u * 12);
  EXPECT_FALSE(find(e.per_device, "dequantized_weight"));
  // Frozen, unadapted layers keep no input: LoRA on q,v stores less than full training.
  const auto full = estimate_training(m, {}).value();
  EXPECT_LT(find(e.per_device, "activations")->bytes, find(full.per_device, "activations")->bytes);

  // 8-bit LoRA: LLM.int8 linear layers (1 byte + an fp32 scale per row), 16-bit embeddings.
  s.base_quantization = QuantizationLevel::int8;
  e = estimate_training(m, s).value();
  const std::uint64_t frozen = find(e.per_device, "frozen_weights")->bytes;
  EXPECT_GT(frozen, m.parameters);
  EXPECT_LT(frozen, m.parameters * 1.2);
  EXPECT_TRUE(find(e.per_device, "dequantized_weight"));

  s = {};
  s.method = TrainingMethod::qlora;
  e = estimate_training(m, s).value();
  EXPECT_EQ(e.settings.lora_rank, 64u);
  EXPECT_EQ(e.settings.base_quantization, QuantizationLevel::nf4);
  EXPECT_EQ(e.trainable_parameters, 41'943'040u * 4);  // r = 64 on all linear layers
  // NF4 (4.127 bits) linear layers, bf16 embedding and head: about 5.7 GB for Llama 3 8B.
  const double frozen_gb = static_cast<double>(find(e.per_device, "frozen_weights")->bytes) / 1e9;
  const double linear = static_cast<double>(m.parameters - 2 * 128256ull * 4096 - 65 * 4096);
  EXPECT_NEAR(frozen_gb, (linear * 4.127 / 8 + 2.0 * (2 * 128256.0 * 4096 + 65 * 4096)) / 1e9, 0.01);
  // The largest matrix (14336 x 4096) is dequantized to bf16 for its matmul.
  EXPECT_EQ(find(e.per_device, "dequantized_weight")->bytes, 14336u * 4096 * 2);
}

TEST(TrainingMethods, PrefixTuning) {
  const auto m = model("llama-2-7b");
  TrainingSettings s;
  s.method = TrainingMethod::prefix;
  auto e = estimate_training(m, s).value();
  // 20 virtual tokens x 32 layers x 2 (key and value) x 4096.
  EXPECT_EQ(e.trainable_parameters, 20u * 32 * 2 * 4096);
  EXPECT_EQ(find(e.per_device, "prefix_parameters")->bytes, 20u * 32 * 2 * 4096 * 2);
  EXPECT_EQ(find(e.per_device, "frozen_weights")->bytes, m.parameters * 2);
  // GQA: prefixes are as wide as the keys and values (8 heads x 128).
  EXPECT_EQ(count_prefix_parameters(model("llama-3-8b").architecture, 20, 0).prefixes, 20u * 32 * 2 * 1024);
  // The reparameterization MLP trains instead of the prefixes (Li & Liang 2021).
  const auto p = count_prefix_parameters(m.architecture, 10, 512);
  EXPECT_EQ(p.projection, 10u * 4096 + 4096u * 512 + 512 + 512u * (32 * 2 * 4096) + 32 * 2 * 4096);
  EXPECT_EQ(p.trainable(), p.projection);
  s.prefix_projection = 512;
  s.prefix_length = 10;
  e = estimate_training(m, s).value();
  EXPECT_EQ(e.trainable_parameters, p.projection);
}

TEST(TrainingMethods, DpoHoldsAReference) {
  const auto m = model("llama-3.1-8b");
  TrainingSettings s;
  s.method = TrainingMethod::dpo;
  auto e = estimate_training(m, s).value();
  EXPECT_EQ(roles(e), (std::vector<std::string>{"policy", "reference"}));
  EXPECT_EQ(find(e.per_device, "weights", "reference")->bytes, m.parameters * 2);
  EXPECT_EQ(find(e.per_device, "weights", "reference")->category, MemoryCategory::parameters);
  EXPECT_TRUE(find(e.per_device, "forward_working_set", "reference"));
  // Chosen and rejected sequences run together: twice the activations of SFT.
  const auto sft = estimate_training(m, {}).value();
  EXPECT_GT(find(e.per_device, "activations", "policy")->bytes, 19 * find(sft.per_device, "activations")->bytes / 10);
  // A quantized reference.
  s.frozen_quantization = QuantizationLevel::int8;
  e = estimate_training(m, s).value();
  EXPECT_LT(find(e.per_device, "weights", "reference")->bytes, m.parameters * 12 / 10);
  // With LoRA the reference is the base with its adapters disabled: no second copy.
  s = {};
  s.method = TrainingMethod::dpo;
  s.adapter = TrainingMethod::lora;
  e = estimate_training(m, s).value();
  EXPECT_FALSE(find(e.per_device, "weights", "reference"));
  EXPECT_EQ(e.models[1].storage, "the policy's frozen base with its adapters disabled: no extra memory");
  EXPECT_EQ(e.trainable_parameters, 3'407'872u);
}

TEST(TrainingMethods, RlhfHoldsFourModels) {
  const auto m = model("llama-3.1-8b");
  TrainingSettings s;
  s.method = TrainingMethod::rlhf;
  const auto rlhf = estimate_training(m, s).value();
  EXPECT_EQ(roles(rlhf), (std::vector<std::string>{"policy", "value", "reference", "reward"}));
  // Two trained models, two frozen ones.
  EXPECT_EQ(rlhf.trainable_parameters, 2 * m.parameters);
  EXPECT_EQ(rlhf.per_device.model_states_bytes(), 2 * 16 * m.parameters + 2 * 2 * m.parameters);
  s.method = TrainingMethod::dpo;
  const auto dpo = estimate_training(m, s).value();
  EXPECT_GT(rlhf.per_device.model_states_bytes(), 2 * dpo.per_device.model_states_bytes() - 2 * m.parameters * 2);
  // A smaller reward model, whose shape the value model takes.
  s.method = TrainingMethod::rlhf;
  const auto small = estimate_training(m, s, with_reward(model("llama-3.2-1b"))).value();
  EXPECT_EQ(small.models[1].name, "llama-3.2-1b");
  EXPECT_LT(small.per_device.total_bytes, rlhf.per_device.total_bytes);
}

TEST(TrainingMethods, DistillationTeacherAndStudent) {
  const auto student = model("llama-3.2-1b");
  const auto teacher = model("llama-3.1-8b");
  TrainingSettings s;
  s.method = TrainingMethod::distillation;
  const auto e = estimate_training(student, s, with_teacher(teacher)).value();
  EXPECT_EQ(roles(e), (std::vector<std::string>{"student", "teacher"}));
  EXPECT_EQ(find(e.per_device, "weights", "teacher")->bytes, teacher.parameters * 2);
  EXPECT_EQ(find(e.per_device, "weights", "student")->bytes, student.parameters * 2);
  EXPECT_EQ(find(e.per_device, "logits", "teacher")->bytes, 4u * 2048 * 128256);
  EXPECT_EQ(e.trainable_parameters, student.parameters);
  EXPECT_EQ(e.frozen_parameters, teacher.parameters);
}

TEST(TrainingMethods, OffloadMovesStatesToTheHost) {
  const auto m = model("llama-3.1-8b");
  TrainingSettings s;
  s.zero_stage = 2;
  s.offload = OffloadMode::optimizer;
  auto e = estimate_training(m, s).value();
  const auto& d = e.per_device;
  EXPECT_EQ(find(d, "optimizer_states")->location, MemoryLocation::host);
  EXPECT_EQ(find(d, "master_weights")->location, MemoryLocation::host);
  EXPECT_EQ(find(d, "gradients")->location, MemoryLocation::host);
  EXPECT_EQ(d.optimizer_bytes, 0u);
  EXPECT_EQ(d.gradients_bytes, 0u);
  EXPECT_EQ(d.parameters_bytes, m.parameters * 2);
  EXPECT_EQ(d.host_bytes, m.parameters * 14);
  // ZeRO-Offload on one device is a real saving: no "partitions nothing" warning.
  for (const auto& w : e.warnings) EXPECT_EQ(w.find("partitions nothing"), std::string::npos) << w;

  s.zero_stage = 3;
  s.offload = OffloadMode::parameters;
  e = estimate_training(m, s).value();
  EXPECT_EQ(e.per_device.parameters_bytes, 0u);
  EXPECT_EQ(e.per_device.host_bytes, m.parameters * 16);
  EXPECT_TRUE(find(e.per_device, "gathered_parameters"));
}

TEST(TrainingMethods, TensorAndPipelineParallel) {
  const auto m = model("llama-3.1-70b");
  TrainingSettings s;
  s.tensor_parallel = 8;
  s.pipeline_parallel = 4;
  s.sequence_parallel = true;
  const auto e = estimate_training(m, s).value();
  ASSERT_EQ(e.stages.size(), 4u);
  std::uint32_t layers = 0;
  for (std::uint32_t i = 0; i < 4; ++i) {
    EXPECT_EQ(e.stages[i].first_layer, layers);
    EXPECT_EQ(e.stages[i].layer_count, 20u);
    EXPECT_EQ(e.stages[i].micro_batches_in_flight, 4 - i);
    layers += e.stages[i].layer_count;
  }
  EXPECT_TRUE(e.stages.front().embedding);
  EXPECT_TRUE(e.stages.back().head);
  // Every rank holds 1/tp of 1/pp of the layers (norms replicated) and its share of embedding or head.
  const std::uint64_t layer_params = (m.parameters - 2 * 128256ull * 8192 - 8192) / 80;
  const std::uint64_t rank_layers = 20 * (layer_params - 2 * 8192) / 8 + 20 * 2 * 8192;
  const std::uint64_t embedding = 128256ull / 8 * 8192;
  EXPECT_EQ(e.stages[0].parameters_bytes, 2 * (rank_layers + embedding));
  EXPECT_EQ(e.stages[3].parameters_bytes, 2 * (rank_layers + embedding + 8192));
  // The first stage holds four micro-batches of activations, the last one.
  EXPECT_GT(e.stages[0].activations_bytes, 3 * e.stages[3].activations_bytes);
  EXPECT_EQ(e.per_device.stage, 0u);
  // Uneven splits give the remainder to the last stages.
  TrainingSettings uneven;
  uneven.pipeline_parallel = 3;
  const auto u = estimate_training(model("llama-3.1-8b"), uneven).value();
  EXPECT_EQ(u.stages[0].layer_count, 10u);
  EXPECT_EQ(u.stages[1].layer_count, 11u);
  EXPECT_EQ(u.stages[2].layer_count, 11u);
  EXPECT_EQ(u.stages[2].first_layer, 21u);
}

TEST(TrainingMethods, FitAndMinimumDevices) {
  const auto m = model("llama-3.1-70b");
  TrainingSettings s;
  s.zero_stage = 3;
  s.data_parallel = 8;
  s.recompute = Recompute::full;
  const auto registry = hypothetical_registry("8xH100-SXM-80GB").value();
  const auto e = plan_training(registry, m, s).value();
  ASSERT_TRUE(e.fit);
  EXPECT_EQ(e.fit->device_name, "H100-SXM-80GB");
  EXPECT_EQ(e.fit->devices_needed, 8u);
  EXPECT_EQ(e.fit->devices_available, 8u);
  EXPECT_EQ(e.fit->capacity_bytes, static_cast<std::uint64_t>(80.0 * (1ull << 30) * 0.9));
  // 70.6B x 16 bytes / 8 = 141 GB per device: does not fit.
  EXPECT_FALSE(e.fit->fits);
  ASSERT_TRUE(e.minimum);
  ASSERT_TRUE(e.minimum->found);
  EXPECT_EQ(e.minimum->zero_stage, 3u);
  const std::uint32_t n = e.minimum->data_parallel;
  EXPECT_EQ(e.minimum->devices, n);
  EXPECT_EQ(e.minimum->summary.substr(0, 6 + std::to_string(n).size()), "needs " + std::to_string(n));
  // n devices hold it and n - 1 do not.
  const auto at = [&](std::uint32_t dp) {
    TrainingSettings t = s;
    t.data_parallel = dp;
    return estimate_training(m, t).value().per_device.total_bytes;
  };
  EXPECT_LE(at(n), e.fit->capacity_bytes);
  EXPECT_GT(at(n - 1), e.fit->capacity_bytes);
  EXPECT_EQ(e.minimum->per_device_bytes, at(n));

  // ZeRO-0 never fits a 70B model on 80 GB devices, nor do stages 1 and 2
  // (16-bit weights and gradients alone are 282 GB): the search raises the stage to 3.
  s.zero_stage = 0;
  s.data_parallel = 1;
  const auto raised = plan_training(registry, m, s).value();
  ASSERT_TRUE(raised.minimum->found);
  EXPECT_EQ(raised.minimum->zero_stage, 3u);
  EXPECT_EQ(raised.minimum->data_parallel, n);
  EXPECT_NE(raised.minimum->summary.find("ZeRO-0 as asked fits at no data-parallel degree"), std::string::npos);

  // Too few devices in the registry.
  s.data_parallel = 16;
  s.zero_stage = 3;
  const auto short_of = plan_training(registry, m, s).value();
  EXPECT_FALSE(short_of.fit->fits);
  EXPECT_NE(short_of.fit->reason.find("the registry has 8"), std::string::npos);

  // Nothing fits when even the activations exceed a device.
  TrainingSettings huge;
  huge.micro_batch = 64;
  huge.sequence = 32768;
  const auto none = plan_training(hypothetical_registry("1xRTX-4090").value(), model("llama-3.1-8b"), huge).value();
  EXPECT_FALSE(none.minimum->found);
  EXPECT_NE(none.minimum->summary.find("does not fit on any number of RTX-4090"), std::string::npos);

  // A registry without accelerators.
  const auto empty = plan_training(AcceleratorRegistry{}, m, {}).value();
  EXPECT_FALSE(empty.fit->fits);
  EXPECT_FALSE(empty.minimum);
}

TEST(TrainingMethods, HostMemoryForOffload) {
  const auto m = model("llama-3.1-8b");
  TrainingSettings s;
  s.zero_stage = 2;
  s.offload = OffloadMode::optimizer;
  const auto with_host = [](std::uint64_t gib) {
    auto registry = hypothetical_registry("1xH100-SXM-80GB").value();
    DeviceProfile cpu;
    cpu.id = "cpu:0";
    cpu.backend = Backend::cpu;
    cpu.family = Family::cpu;
    cpu.name = "host";
    cpu.memory_bytes = gib << 30;
    EXPECT_TRUE(registry.add_device(cpu));
    return registry;
  };
  // 14 bytes per parameter on the host: 112 GB for 8B parameters.
  const auto small = plan_training(with_host(64), m, s).value();
  ASSERT_TRUE(small.fit->host_fits);
  EXPECT_FALSE(*small.fit->host_fits);
  EXPECT_FALSE(small.fit->fits);
  EXPECT_EQ(*small.fit->host_capacity_bytes, static_cast<std::uint64_t>((64.0 * (1ull << 30)) * 0.9));
  EXPECT_NE(small.fit->reason.find("for offloaded states"), std::string::npos);
  const auto large = plan_training(with_host(256), m, s).value();
  EXPECT_TRUE(*large.fit->host_fits);
  EXPECT_TRUE(large.fit->fits);
  // Hypothetical devices alone describe no host: said, not guessed.
  const auto unknown = plan_training(hypothetical_registry("1xH100-SXM-80GB").value(), m, s).value();
  EXPECT_FALSE(unknown.fit->host_fits);
  bool said = false;
  for (const auto& a : unknown.assumptions) said |= a.find("host memory for offloaded states is not checked") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(TrainingMethods, PipelineStagesInJson) {
  TrainingSettings s;
  s.pipeline_parallel = 4;
  const auto e = estimate_training(model("llama-3.1-8b"), s).value();
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(to_json(e)).get(doc), simdjson::SUCCESS);
  simdjson::dom::array stages;
  ASSERT_EQ(doc["stages"].get(stages), simdjson::SUCCESS);
  EXPECT_EQ(stages.size(), 4u);
  std::uint64_t first = 0;
  ASSERT_EQ(stages.at(3)["first_layer"].get(first), simdjson::SUCCESS);
  EXPECT_EQ(first, 24u);
  // Without pipeline parallelism there is no stages array.
  EXPECT_EQ(to_json(estimate_training(model("llama-3.1-8b"), {}).value()).find("\"stages\""), std::string::npos);
}

TEST(TrainingMethods, PrecisionSupportWarnings) {
  // T4 (compute capability 7.5) has no bf16.
  const auto e = plan_training(hypothetical_registry("1xT4-16GB").value(), model("llama-3.2-1b"), {}).value();
  bool warned = false;
  for (const auto& w : e.warnings) warned |= w.rfind("bf16 is ", 0) == 0;
  EXPECT_TRUE(warned);
  TrainingSettings fp16;
  fp16.precision = TrainingPrecision::fp16_mixed;
  const auto ok = plan_training(hypothetical_registry("1xT4-16GB").value(), model("llama-3.2-1b"), fp16).value();
  for (const auto& w : ok.warnings) EXPECT_NE(w.rfind("fp16 is ", 0), 0u) << w;
}

TEST(TrainingMethods, JsonIsCanonicalAndComplete) {
  const auto registry = hypothetical_registry("8xH100-SXM-80GB").value();
  TrainingSettings s;
  s.method = TrainingMethod::lora;
  s.zero_stage = 2;
  s.data_parallel = 2;
  const auto e = plan_training(registry, model("llama-3.1-8b"), s).value();
  const std::string text = to_json(e);
  EXPECT_EQ(text, to_json(e));
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(text).get(doc), simdjson::SUCCESS) << text;
  simdjson::dom::object per_device;
  ASSERT_EQ(doc["per_device"].get(per_device), simdjson::SUCCESS);
  for (const char* key : {"parameters_bytes", "gradients_bytes", "optimizer_bytes", "model_states_bytes",
                          "activations_bytes", "other_bytes", "total_bytes", "host_bytes"}) {
    std::uint64_t v = 0;
    EXPECT_EQ(per_device[key].get(v), simdjson::SUCCESS) << key;
  }
  std::uint64_t total = 0, states = 0;
  ASSERT_EQ(per_device["total_bytes"].get(total), simdjson::SUCCESS);
  ASSERT_EQ(per_device["model_states_bytes"].get(states), simdjson::SUCCESS);
  EXPECT_EQ(total, e.per_device.total_bytes);
  EXPECT_EQ(states, e.per_device.model_states_bytes());
  simdjson::dom::array breakdown;
  ASSERT_EQ(per_device["breakdown"].get(breakdown), simdjson::SUCCESS);
  EXPECT_EQ(breakdown.size(), e.per_device.components.size());
  for (auto c : breakdown) {
    std::string_view rule;
    EXPECT_EQ(c["rule"].get(rule), simdjson::SUCCESS);
    EXPECT_FALSE(rule.empty());
  }
  bool fits = false;
  EXPECT_EQ(doc["fits"].get(fits), simdjson::SUCCESS);
  EXPECT_EQ(fits, e.fit->fits);
  std::string_view summary;
  EXPECT_EQ(doc["minimum_devices"]["summary"].get(summary), simdjson::SUCCESS);
  std::string_view targets;
  EXPECT_EQ(doc["lora"]["targets"].get(targets), simdjson::SUCCESS);
  EXPECT_EQ(targets, "q,v");
  simdjson::dom::array assumptions;
  ASSERT_EQ(doc["assumptions"].get(assumptions), simdjson::SUCCESS);
  EXPECT_GT(assumptions.size(), 2u);
  // No registry: "fits" is null.
  const std::string bare = to_json(estimate_training(model("llama-3.1-8b"), {}).value());
  EXPECT_NE(bare.find("\"fits\":null"), std::string::npos);
}

TEST(TrainingMethods, SeedEntryPointByMethod) {
  std::uint64_t previous = 0;
  for (const auto method : {TrainingMethod::qlora, TrainingMethod::lora, TrainingMethod::full, TrainingMethod::rlhf}) {
    const auto e = estimate_training_memory(7'000'000'000, method).value();
    EXPECT_GT(e.per_device.total_bytes, previous) << to_string(method);
    previous = e.per_device.total_bytes;
    EXPECT_TRUE(e.architecture_assumed);
  }
  EXPECT_TRUE(estimate_training_memory(7'000'000'000, TrainingMethod::distillation));
  EXPECT_TRUE(estimate_training_memory(7'000'000'000, TrainingMethod::prefix));
  EXPECT_TRUE(estimate_training_memory(7'000'000'000, TrainingMethod::dpo));
}

}  // namespace
