// Memory estimates against published facts: KV cache per token of MHA, GQA
// and MLA models, and GGUF file sizes of well-known quantized models.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "../test_support.hpp"

import hwaccel;

#include "module_helpers.hpp"

namespace {

using namespace hwaccel;

using hwaccel::testing::KiB;
using hwaccel::testing::GiB;

using hwaccel::testing::model;

TEST(PlanMemory, KvCachePerToken) {
  // MHA: 2 x 32 layers x 32 heads x 128 x 2 bytes = 512 KiB per token at fp16.
  EXPECT_EQ(kv_cache_bytes_per_token(model("llama-2-7b").architecture, QuantizationLevel::fp16).value(), 512 * KiB);
  // GQA: 2 x 80 x 8 KV heads x 128 x 2 bytes = 320 KiB per token.
  EXPECT_EQ(kv_cache_bytes_per_token(model("llama-3.1-70b").architecture, QuantizationLevel::bf16).value(), 320 * KiB);
  EXPECT_EQ(kv_cache_bytes_per_token(model("llama-3.1-70b").architecture, QuantizationLevel::fp8_e4m3).value(), 160 * KiB);
  // llama.cpp q8_0 cache: 34 bytes per 32 elements.
  EXPECT_EQ(kv_cache_bytes_per_token(model("llama-2-7b").architecture, QuantizationLevel::q8_0).value(),
            32u * 2 * 32 * 128 / 32 * 34);
  // MLA: 61 layers x (512 + 64) x 2 bytes.
  EXPECT_EQ(kv_cache_bytes_per_token(model("deepseek-v3").architecture, QuantizationLevel::bf16).value(), 61u * 576 * 2);
  // 4096 tokens of Llama 2 7B: 2 GiB.
  EXPECT_EQ(kv_cache_bytes(model("llama-2-7b").architecture, QuantizationLevel::fp16, 4096, 1).value(), 2 * GiB);
  EXPECT_EQ(kv_cache_bytes(model("llama-2-7b").architecture, QuantizationLevel::fp16, 4096, 8).value(), 16 * GiB);
  EXPECT_FALSE(kv_cache_bytes(model("llama-2-7b").architecture, QuantizationLevel::fp16, UINT64_MAX, 2));
  EXPECT_EQ(kv_cache_bytes(model("llama-2-7b").architecture, QuantizationLevel::q4_k_m, 1, 1).error().kind,
            ErrorKind::invalid_input);
  // Tensor parallel: 8 KV heads over 16 ranks keep one (replicated) head each.
  const auto a = model("llama-3.1-70b").architecture;
  EXPECT_EQ(kv_cache_bytes_per_token_per_layer(a, QuantizationLevel::bf16, 2).value(), 2u * 4 * 128 * 2);
  EXPECT_EQ(kv_cache_bytes_per_token_per_layer(a, QuantizationLevel::bf16, 16).value(), 2u * 1 * 128 * 2);
}

double file_gb(std::string_view id, QuantizationLevel level) {
  return static_cast<double>(weight_layout(model(id), level).value().total()) / 1e9;
}

// Sizes of TheBloke/Llama-2-7B-GGUF and TheBloke/Mistral-7B-v0.1-GGUF (model
// cards), which add ~1-2 MB of metadata and vocabulary to the tensor data.
TEST(PlanMemory, GgufSizesMatchPublishedFiles) {
  EXPECT_NEAR(file_gb("llama-2-7b", QuantizationLevel::q4_k_m), 4.08, 0.04);
  EXPECT_NEAR(file_gb("llama-2-7b", QuantizationLevel::q8_0), 7.16, 0.04);
  EXPECT_NEAR(file_gb("llama-2-7b", QuantizationLevel::q4_0), 3.83, 0.04);
  EXPECT_NEAR(file_gb("llama-2-7b", QuantizationLevel::q5_k_m), 4.78, 0.05);
  EXPECT_NEAR(file_gb("llama-2-7b", QuantizationLevel::q6_k), 5.53, 0.05);
  EXPECT_NEAR(file_gb("mistral-7b", QuantizationLevel::q4_k_m), 4.37, 0.05);
  EXPECT_NEAR(file_gb("mistral-7b", QuantizationLevel::q8_0), 7.70, 0.05);
  EXPECT_NEAR(file_gb("llama-2-7b", QuantizationLevel::q3_k_s), 2.95, 0.03);
  EXPECT_NEAR(file_gb("llama-2-7b", QuantizationLevel::q3_k_m), 3.30, 0.03);
  EXPECT_NEAR(file_gb("llama-2-7b", QuantizationLevel::q3_k_l), 3.60, 0.03);
  EXPECT_NEAR(file_gb("llama-2-7b", QuantizationLevel::q4_k_s), 3.86, 0.03);
  EXPECT_NEAR(file_gb("llama-2-7b", QuantizationLevel::q5_k_s), 4.65, 0.03);
  // F16 GGUF: every parameter in 2 bytes except the F32 norms.
  EXPECT_NEAR(file_gb("llama-2-7b", QuantizationLevel::fp16), 13.48, 0.01);
}

// An 8-expert model exercises the MoE rules (attn_v/attn_k in Q8_0, attn_output
// in Q5_K): bartowski/Mixtral-8x22B-v0.1-GGUF (llama.cpp b2636) lists these sizes.
TEST(PlanMemory, MixtureOfExpertsGgufSizes) {
  EXPECT_NEAR(file_gb("mixtral-8x22b", QuantizationLevel::q2_k), 52.10, 0.1);
  EXPECT_NEAR(file_gb("mixtral-8x22b", QuantizationLevel::q3_k_m), 67.78, 0.1);
  EXPECT_NEAR(file_gb("mixtral-8x22b", QuantizationLevel::q4_k_s), 80.47, 0.1);
  EXPECT_NEAR(file_gb("mixtral-8x22b", QuantizationLevel::q4_k_m), 85.58, 0.1);
  EXPECT_NEAR(file_gb("mixtral-8x22b", QuantizationLevel::q5_k_m), 99.96, 0.1);
}

TEST(PlanMemory, IntegerLevelsKeepEmbeddingsAt16Bit) {
  const auto m = model("llama-3.1-8b");
  const auto w = weight_layout(m, QuantizationLevel::int4).value();
  EXPECT_EQ(w.embedding_bytes, 128256u * 4096 * 2);
  EXPECT_EQ(w.head_bytes, 128256u * 4096 * 2 + 4096 * 2);
  // The layers: 4.156 bits per weight, 16-bit norms.
  const double layer_params = 218'112'000.0 - 8192;
  EXPECT_NEAR(static_cast<double>(w.layer_bytes[0]), layer_params * 4.15625 / 8 + 8192 * 2, 4096);
  const auto bf16 = weight_layout(m, QuantizationLevel::bf16).value();
  EXPECT_EQ(bf16.total(), 2 * m.parameters);
}

TEST(PlanMemory, MixtureOfExpertsTracksExpertBytes) {
  const auto w = weight_layout(model("mixtral-8x7b"), QuantizationLevel::bf16).value();
  EXPECT_EQ(w.layer_expert_bytes[0], 8u * 3 * 4096 * 14336 * 2);
  EXPECT_GT(w.layer_bytes[0], w.layer_expert_bytes[0]);
}

TEST(PlanMemory, ParameterCountScalesTheBorrowedShape) {
  const auto m = ModelDescription::from_parameter_count(7'000'000'000).value();
  const auto w = weight_layout(m, QuantizationLevel::bf16).value();
  EXPECT_NEAR(static_cast<double>(w.total()), 14e9, 14e9 * 1e-6);
}

TEST(PlanMemory, EstimateHasSeparateLines) {
  const auto e = estimate_memory(model("llama-2-7b"), QuantizationLevel::fp16, QuantizationLevel::fp16, 4096, 1).value();
  EXPECT_EQ(e.weights_bytes, 2 * 6'738'415'616u);
  EXPECT_EQ(e.kv_cache_bytes, 2 * GiB);
  EXPECT_EQ(e.kv_cache_bytes_per_token, 512 * KiB);
  EXPECT_EQ(e.overhead_bytes, 512u * 1024 * 1024);
  EXPECT_GT(e.activation_bytes, 100u * 1024 * 1024);
  EXPECT_LT(e.activation_bytes, 2 * GiB);
  EXPECT_EQ(e.total_bytes, e.weights_bytes + e.kv_cache_bytes + e.activation_bytes + e.overhead_bytes);
  EXPECT_FALSE(estimate_memory(model("llama-2-7b"), QuantizationLevel::fp16, QuantizationLevel::fp16, 0, 1));
}

TEST(PlanMemory, RuntimeOverheadSaysWhy) {
  EXPECT_EQ(runtime_overhead(Backend::cuda, false).bytes, 512u << 20);
  EXPECT_EQ(runtime_overhead(Backend::cuda, true).bytes, 768u << 20);
  EXPECT_EQ(runtime_overhead(Backend::cpu, false).bytes, 0u);
  EXPECT_FALSE(runtime_overhead(Backend::tpu, true).reason.empty());
  EXPECT_EQ(default_kv_cache_type(QuantizationLevel::q4_k_m), QuantizationLevel::fp16);
  EXPECT_EQ(default_kv_cache_type(QuantizationLevel::fp8_e4m3), QuantizationLevel::bf16);
}

}  // namespace

namespace {

TEST(PlanMemory, Nf4BlocksRunOverTheFlattenedTensor) {
  // bitsandbytes quantizes weight.flatten() in blocks of 64, so a 4096-wide
  // row does not round up to a 16384-weight absmax group. Llama 2 7B in NF4
  // with double quantization: 6.48 G linear weights at 4.127 bits plus the
  // 16-bit embedding and head (2 x 32000 x 4096) and norms: about 3.87 GB.
  const auto layout = weight_layout(hwaccel::catalogue_model("llama-2-7b").value(), hwaccel::QuantizationLevel::nf4);
  ASSERT_TRUE(layout);
  const double gb = static_cast<double>(layout->total()) / 1e9;
  EXPECT_NEAR(gb, 3.87, 0.05);
  // One tensor: 4096 x 4096 weights are 256 groups of 16384, 8452 bytes each.
  constexpr hwaccel::TensorEncoding nf4{"NF4-DQ", 16384, 8452, true};
  EXPECT_EQ(nf4.bytes(4096, 4096).value(), 1024u * 8452);
  EXPECT_EQ(nf4.bytes(1, 100).value(), 8452u);  // only the last block is partial
  EXPECT_FALSE(nf4.bytes(UINT64_MAX, 2));
}

}  // namespace

namespace {

// One plan of `model_id` on `devices` under `runtime`, with no reserve.
Plan plan_under(std::string_view devices, std::string_view model_id, QuantizationLevel level, std::uint64_t context,
                Runtime runtime) {
  auto registry = hypothetical_registry(devices);
  EXPECT_TRUE(registry.has_value());
  InferenceSettings s;
  s.quantization = level;
  s.context = context;
  s.reserve_fraction = 0;
  s.allow_cpu_offload = false;
  s.runtime = runtime;
  auto plan = plan_inference(*registry, model(model_id), s);
  EXPECT_TRUE(plan.has_value()) << (plan ? "" : plan.error().message);
  return plan.value_or(Plan{});
}

bool mentions(const Plan& plan, std::string_view text) {
  for (const auto& a : plan.assumptions)
    if (a.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST(PlanMemory, LlamaCppKeepsTheTokenEmbeddingOnTheHost) {
  // Llama 3 8B in F16 ran on a 16 GB RTX 4080 at 4096 tokens under llama.cpp
  // (39.4 tok/s, tests/data/speed/decode.json): its untied embedding (128256
  // x 4096 x 2 bytes) stays in host memory, and llama.cpp's 512-token
  // physical batch and absent NCCL buffers leave room for the rest.
  const Plan llama = plan_under("1xRTX-4080", "llama-3-8b", QuantizationLevel::fp16, 4096, Runtime::llama_cpp_cuda);
  const Plan vllm = plan_under("1xRTX-4080", "llama-3-8b", QuantizationLevel::fp16, 4096, Runtime::vllm);
  EXPECT_TRUE(llama.fits);
  EXPECT_FALSE(vllm.fits);
  EXPECT_EQ(vllm.memory.weights_bytes - llama.memory.weights_bytes, 128256ull * 4096 * 2);
  EXPECT_LT(llama.memory.activation_bytes, vllm.memory.activation_bytes);
  EXPECT_TRUE(mentions(llama, "stays in host memory"));
  EXPECT_FALSE(mentions(vllm, "stays in host memory"));

  // A tied embedding is the head too: llama.cpp loads it again beside the
  // last layer, so the device holds as much as before.
  const Plan tied = plan_under("1xRTX-4080", "llama-3.2-1b", QuantizationLevel::fp16, 4096, Runtime::llama_cpp_cuda);
  const Plan tied_vllm = plan_under("1xRTX-4080", "llama-3.2-1b", QuantizationLevel::fp16, 4096, Runtime::vllm);
  EXPECT_EQ(tied.memory.weights_bytes, tied_vllm.memory.weights_bytes);
  EXPECT_TRUE(mentions(tied, "loaded again beside the last layer"));

  // Several GPUs: no NCCL buffers under llama.cpp's layer split.
  const Plan split = plan_under("6xRTX-3090", "llama-3-70b", QuantizationLevel::fp16, 8192, Runtime::llama_cpp_cuda);
  const Plan split_vllm = plan_under("6xRTX-3090", "llama-3-70b", QuantizationLevel::fp16, 8192, Runtime::vllm);
  EXPECT_TRUE(split.fits);
  EXPECT_EQ(split_vllm.memory.overhead_bytes - split.memory.overhead_bytes, 6ull * 256 * 1024 * 1024);
}
