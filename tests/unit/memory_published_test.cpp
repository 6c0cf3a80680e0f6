// Memory figures checked against published numbers: MLA's latent cache,
// sliding-window and chunked-attention KV caches, and MXFP4 checkpoints.
// Each check names its source and says why its tolerance is what it is.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "../test_support.hpp"

import hwaccel;

namespace {

using namespace hwaccel;
using Q = QuantizationLevel;

using hwaccel::testing::MiB;
using hwaccel::testing::GiB;

ModelArchitecture arch(std::string_view id) { return catalogue_model(id).value().architecture; }

// The same model with every layer attending to the whole context.
ModelArchitecture full_attention(ModelArchitecture a) {
  a.sliding_window.reset();
  a.attention_chunk.reset();
  return a;
}

std::uint64_t kv(const ModelArchitecture& a, Q type, std::uint64_t context, std::uint64_t batch = 1) {
  return kv_cache_bytes(a, type, context, batch).value();
}

// DeepSeek-V2 paper (arXiv:2405.04434), section 2.1.4 and Table 1: MLA caches
// (d_c + d_h^R) x l elements per token, with d_c = 4 d_h = 512 and
// d_h^R = d_h / 2 = 64, "equal to GQA with only 2.25 groups" (4.5 d_h l).
// DeepSeek-V3 (arXiv:2412.19437, section 2.1.1) keeps d_c = 512, d_h^R = 64
// over 61 layers: 61 x 576 x 2 bytes = 70,272 bytes per token in BF16.
// Exact: the cache is these elements and nothing else.
TEST(MemoryPublished, MlaLatentCachePerToken) {
  EXPECT_EQ(kv_cache_bytes_per_token(arch("deepseek-v3"), Q::bf16).value(), 70'272u);
  EXPECT_EQ(kv_cache_bytes_per_token(arch("deepseek-v2"), Q::bf16).value(), 60u * 576 * 2);
  // 576 elements = GQA with 2.25 groups of 2 x 128: the paper's comparison.
  EXPECT_EQ(arch("deepseek-v3").kv_elements_per_token_per_layer(), static_cast<std::uint64_t>(2.25 * 2 * 128));
  // The latent is the same on every tensor-parallel rank (replicated, not split).
  EXPECT_EQ(kv_cache_bytes_per_token_per_layer(arch("deepseek-v3"), Q::bf16, 8).value(), 576u * 2);
  // MLA has no windowed layers: 128K tokens cost 128K x the per-token figure.
  EXPECT_EQ(kv(arch("deepseek-v3"), Q::bf16, 131072), 131072ull * 70'272);
}

// Gemma 3 27B: 62 layers, 16 KV heads of 128, sliding_window 1024 and
// sliding_window_pattern 6 (config.json): layers 5, 11, ..., 59 are global,
// 52 slide. Published figures (fp16 cache, 131072 tokens):
// - llama.cpp before its SWA cache allocated every layer at the full context:
//   63488 MB (MiB) for gemma-3-27b at 128k (the table in r/LocalLLaMA that
//   https://github.com/ggml-org/llama.cpp/issues/12637 links; 62 x 8192 B x 128K).
// - llama.cpp's SWA cache (https://github.com/ggml-org/llama.cpp/pull/13194)
//   gives the global layers 10240 MiB at 128k and the sliding ones
//   PAD(n_swa x n_seq + n_batch) cells: 3072 at the default n_batch 2048,
//   1248 MiB (the same post's tables after the PR).
// This library keeps min(context, window) = 1024 tokens per sliding layer,
// so it is below llama.cpp's 11488 MiB by exactly the 2048 batch cells of 52
// layers (832 MiB): transient prefill room, not per-sequence state.
TEST(MemoryPublished, Gemma3SlidingWindowAt128k) {
  const auto a = arch("gemma-3-27b");
  EXPECT_EQ(a.windowed_layer_count(), 52u);
  EXPECT_EQ(a.layer_attention(5), LayerAttention::full);
  EXPECT_EQ(a.layer_attention(4), LayerAttention::sliding);
  EXPECT_EQ(a.layer_attention(61), LayerAttention::sliding);
  const std::uint64_t context = 131072;
  EXPECT_EQ(kv_cache_bytes_per_token(a, Q::fp16).value(), 62u * 8192);
  EXPECT_EQ(kv(full_attention(a), Q::fp16, context), 63488 * MiB);
  const std::uint64_t windowed = kv(a, Q::fp16, context);
  EXPECT_EQ(windowed, 10240 * MiB + 52ull * 1024 * 8192);
  EXPECT_EQ((10240 + 1248) * MiB - windowed, 52ull * 2048 * 8192);
  // "5:1 interleaved sliding window attention ... can reduce the KV cache
  // usage to one sixth" (issue #12637, reading the Gemma 3 technical report,
  // arXiv:2503.19786, Figure 6): 10 of 62 layers is 0.161; the windows add
  // 52 x 1024 / (62 x 128K) = 0.0066. Tolerance 0.01 covers both.
  EXPECT_NEAR(static_cast<double>(windowed) / static_cast<double>(kv(full_attention(a), Q::fp16, context)), 1.0 / 6,
              0.01);
  // Within the window every layer holds every token: no saving.
  EXPECT_EQ(kv(a, Q::fp16, 1024), kv(full_attention(a), Q::fp16, 1024));
}

// Gemma 2: layers alternate, sliding (4096) then global (transformers'
// Gemma2 `is_sliding = not layer_idx % 2`): at its 8192-token maximum the
// cache is 3/4 of full attention. Exact arithmetic.
TEST(MemoryPublished, Gemma2Alternates) {
  const auto a = arch("gemma-2-9b");
  EXPECT_EQ(a.windowed_layer_count(), 21u);
  EXPECT_EQ(a.layer_attention(0), LayerAttention::sliding);
  EXPECT_EQ(a.layer_attention(1), LayerAttention::full);
  EXPECT_EQ(kv(a, Q::bf16, 8192) * 4, kv(full_attention(a), Q::bf16, 8192) * 3);
}

// Mistral 7B v0.1: sliding_window 4096 on every layer, so the cache stops
// growing at 4096 tokens ("cache memory stops growing when the sequence
// reaches the window size", https://huggingface.co/blog/faster-transformers).
TEST(MemoryPublished, Mistral7bEveryLayerSlides) {
  const auto a = arch("mistral-7b");
  EXPECT_EQ(a.windowed_layer_count(), 32u);
  EXPECT_EQ(kv(a, Q::fp16, 32768), kv(a, Q::fp16, 4096));
  EXPECT_EQ(kv(a, Q::fp16, 4096), 4096ull * 32 * 2 * 8 * 128 * 2);
}

// gpt-oss-120b: 36 layers of 8 KV heads x 64, layer_types alternating
// sliding_attention (128 tokens) and full_attention (config.json). A token
// inside every window costs 36 x 2 x 8 x 64 x 2 = 73,728 bytes in BF16; past
// 128 tokens only the 18 full layers keep it: "gpt-oss alternates between
// sliding and global attention layers, which results in total KV cache
// memory being halved ... as sequence length increases"
// (https://huggingface.co/blog/faster-transformers). Tolerance 0.001: the
// 18 x 128-token windows are 0.05 % of the cache at 131072 tokens.
TEST(MemoryPublished, GptOssAlternatingWindows) {
  const auto a = arch("gpt-oss-120b");
  EXPECT_EQ(a.windowed_layer_count(), 18u);
  EXPECT_EQ(a.layer_attention(0), LayerAttention::sliding);
  EXPECT_EQ(a.layer_attention(1), LayerAttention::full);
  EXPECT_EQ(kv_cache_bytes_per_token(a, Q::bf16).value(), 73'728u);
  const std::uint64_t context = 131072;
  EXPECT_EQ(kv(a, Q::bf16, context), (18ull * context + 18ull * 128) * 2048);
  EXPECT_NEAR(static_cast<double>(kv(a, Q::bf16, context)) / static_cast<double>(kv(full_attention(a), Q::bf16, context)),
              0.5, 0.001);
}

// Llama 4 Scout: attention_chunk_size 8192 and no_rope_layers with an
// interval of 4 (config.json text_config; transformers' Llama4TextConfig):
// 36 of 48 layers attend within 8192-token chunks and keep at most 8192
// tokens (vLLM's hybrid KV cache manager gives "local chunked attention"
// layers their own chunk-sized allocation,
// https://docs.vllm.ai/en/latest/design/hybrid_kv_cache_manager/). Meta
// publishes no cache size; the check is the config's arithmetic, exact:
// 48 x 2 x 8 x 128 x 2 = 196,608 bytes per token with every layer global,
// 2.06 TB at the 10M-token maximum; chunked, 12 global layers hold the
// context and 36 the chunk: 25.06 % of that.
TEST(MemoryPublished, Llama4ChunkedAttention) {
  const auto a = arch("llama-4-scout");
  EXPECT_EQ(a.windowed_layer_count(), 36u);
  EXPECT_EQ(a.layer_attention(3), LayerAttention::full);
  EXPECT_EQ(a.layer_attention(0), LayerAttention::chunked);
  const std::uint64_t ten_m = 10'485'760, one_m = 1'048'576;
  EXPECT_EQ(kv(full_attention(a), Q::bf16, ten_m), 196'608ull * ten_m);
  EXPECT_EQ(kv(a, Q::bf16, ten_m), (12ull * ten_m + 36ull * 8192) * 4096);
  EXPECT_NEAR(static_cast<double>(kv(a, Q::bf16, ten_m)) / static_cast<double>(kv(full_attention(a), Q::bf16, ten_m)),
              0.2506, 0.0001);
  // Maverick at its 1M maximum: (12 + 36 x 8192 / 1M) / 48 = 0.2559.
  const auto m = arch("llama-4-maverick");
  EXPECT_EQ(kv(m, Q::bf16, one_m), (12ull * one_m + 36ull * 8192) * 4096);
  EXPECT_NEAR(static_cast<double>(kv(m, Q::bf16, one_m)) / static_cast<double>(kv(full_attention(m), Q::bf16, one_m)),
              0.2559, 0.0001);
}

// MXFP4 blocks: 32 E2M1 values (16 bytes) and one E8M0 scale (OCP
// Microscaling Formats v1.0): 4.25 bits per weight.
TEST(MemoryPublished, Mxfp4Encoding) {
  EXPECT_DOUBLE_EQ(info(Q::mxfp4).bits_per_weight(), 4.25);
  EXPECT_EQ(parse_quantization("MXFP4").value(), Q::mxfp4);
  EXPECT_EQ(info(Q::mxfp4).encoding.bytes(2880, 2880).value(), 2880ull * 90 * 17);
  EXPECT_FALSE(kv_cache_bits(Q::mxfp4));
}

// gpt-oss model card (arXiv:2508.10925, Table 1): checkpoint size 60.8 GiB
// for gpt-oss-120b and 12.8 GiB for gpt-oss-20b, "MoE weights ... quantized
// to the MXFP4 format" (4.25 bits), the rest in BF16. The catalogue leaves
// out the experts' BF16 biases (gate_up 2 x 2880 and down 2880 per expert:
// 0.074 GiB for 120b, 0.012 GiB for 20b), added back here; the o_proj
// biases and attention sinks are under 1 MB. Tolerance 0.05 GiB: the card
// rounds to 0.1 GiB. (Without the biases: 60.69 and 12.80 GiB.)
TEST(MemoryPublished, GptOssMxfp4CheckpointSize) {
  const auto expert_biases = [](double experts, double layers) { return experts * 3 * 2880 * layers * 2; };
  const auto big = weight_layout(catalogue_model("gpt-oss-120b").value(), Q::mxfp4).value();
  EXPECT_NEAR((static_cast<double>(big.total()) + expert_biases(128, 36)) / GiB, 60.8, 0.05);
  const auto small = weight_layout(catalogue_model("gpt-oss-20b").value(), Q::mxfp4).value();
  EXPECT_NEAR((static_cast<double>(small.total()) + expert_biases(32, 24)) / GiB, 12.8, 0.05);
  // Experts at 4.25 bits, attention, router, norms at BF16 (quantization_config
  // modules_to_not_convert: self_attn, router, embed_tokens, lm_head).
  const std::uint64_t experts = 128ull * 3 * 2880 * 2880;
  EXPECT_EQ(big.layer_expert_bytes[0], experts * 17 / 32);
  const std::uint64_t attention = 2880ull * 4096 * 2 + 2880ull * 512 * 2 + 4096 + 512 * 2;
  EXPECT_EQ(big.layer_bytes[0] - big.layer_expert_bytes[0], (attention + 2 * 2880 + 128 * 2880 + 128) * 2);
  EXPECT_EQ(big.embedding_bytes, 201088ull * 2880 * 2);
  // Against BF16 the experts shrink 16 / 4.25 = 3.76x.
  const auto bf16 = weight_layout(catalogue_model("gpt-oss-120b").value(), Q::bf16).value();
  EXPECT_NEAR(static_cast<double>(bf16.layer_expert_bytes[0]) / static_cast<double>(big.layer_expert_bytes[0]),
              16.0 / 4.25, 1e-9);
}

// "gpt-oss-20b ... can run on edge devices with just 16 GB of memory"
// (https://openai.com/index/introducing-gpt-oss/): weights, an 8K-token
// cache, one prefill chunk of activations and the CUDA runtime stay under
// 16 GB. "gpt-oss-120b ... runs efficiently on a single 80 GB GPU" (same
// post): planned on one H100 80GB at the full 131072-token context without
// --quant, it fits at its native MXFP4.
TEST(MemoryPublished, GptOssFitsThePublishedMemory) {
  const auto m = estimate_memory(catalogue_model("gpt-oss-20b").value(), Q::mxfp4, Q::bf16, 8192, 1).value();
  EXPECT_LT(m.total_bytes, 16'000'000'000u);
  const auto h100 = hypothetical_registry("1xH100-SXM-80GB").value();
  InferenceSettings s;
  s.context = 131072;
  const auto plan = plan_inference(h100, catalogue_model("gpt-oss-120b").value(), s).value();
  EXPECT_EQ(plan.quantization, Q::mxfp4);
  EXPECT_TRUE(plan.fits);
  EXPECT_EQ(plan.strategy.tensor_parallel * plan.strategy.pipeline_parallel, 1u);
  EXPECT_EQ(plan.memory.kv_cache_bytes, kv(arch("gpt-oss-120b"), Q::bf16, 131072));
}

// The planner's per-stage KV sums (prefix sums over layers) add up to the
// whole-model figure however the layers are split, and the --swa-full
// option counts every layer at the full context.
TEST(MemoryPublished, PlannerStagesSumTheWindowedCache) {
  const auto model = catalogue_model("gemma-3-27b").value();
  const auto registry = hypothetical_registry("2xH100-PCIe-80GB").value();
  InferenceSettings s;
  s.quantization = Q::bf16;
  s.context = 131072;
  s.batch = 8;
  const auto plan = plan_inference(registry, model, s).value();
  std::uint64_t kv_sum = 0;
  for (const auto& shard : plan.shards)
    if (shard.replica == 0) kv_sum += shard.kv_cache_bytes;
  EXPECT_EQ(kv_sum, kv(model.architecture, Q::bf16, 131072, 8));
  EXPECT_EQ(plan.memory.kv_cache_bytes, kv_sum);
  bool said = false;
  for (const auto& line : plan.assumptions) said |= line.find("52 of 62 layers slide") != std::string::npos;
  EXPECT_TRUE(said);
  s.full_kv_every_layer = true;
  const auto full = plan_inference(registry, model, s).value();
  EXPECT_EQ(full.memory.kv_cache_bytes, kv(full_attention(model.architecture), Q::bf16, 131072, 8));
}

// config.json forms: Gemma 3's sliding_window_pattern, layer_types (newer
// transformers), gpt-oss's quantization_config, Llama 4's no_rope_layers.
TEST(MemoryPublished, ConfigJsonLayerKinds) {
  const std::string base = R"("hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
      "intermediate_size": 128, "vocab_size": 100, "max_position_embeddings": 131072, )";
  const auto read = [&](const std::string& fields) { return model_from_config_json("{" + base + fields + "}").value(); };
  const auto gemma = read(R"("model_type": "gemma3_text", "num_hidden_layers": 12, "sliding_window": 1024,
                             "sliding_window_pattern": 6)");
  EXPECT_EQ(gemma.architecture.sliding_window_pattern, 6u);
  EXPECT_EQ(gemma.architecture.windowed_layer_count(), 10u);
  const auto types = read(R"("model_type": "gpt_oss", "num_hidden_layers": 4, "sliding_window": 128,
                             "num_local_experts": 4, "num_experts_per_tok": 2,
                             "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention"],
                             "quantization_config": {"quant_method": "mxfp4"})");
  EXPECT_EQ(types.architecture.sliding_window_pattern, 2u);
  EXPECT_EQ(types.native_level, Q::mxfp4);
  const auto gemma_types = read(R"("model_type": "gemma3_text", "num_hidden_layers": 6, "sliding_window": 512,
      "layer_types": ["sliding_attention", "sliding_attention", "sliding_attention", "sliding_attention",
                      "sliding_attention", "full_attention"])");
  EXPECT_EQ(gemma_types.architecture.sliding_window_pattern, 6u);
  const auto all_full = read(R"("model_type": "qwen3", "num_hidden_layers": 2, "sliding_window": 4096,
                                "layer_types": ["full_attention", "full_attention"])");
  EXPECT_FALSE(all_full.architecture.sliding_window);
  const auto llama4 = read(R"("model_type": "llama4_text", "num_hidden_layers": 8, "attention_chunk_size": 8192,
                              "no_rope_layers": [1, 1, 1, 0, 1, 1, 1, 0])");
  EXPECT_EQ(llama4.architecture.attention_chunk, 8192u);
  EXPECT_EQ(llama4.architecture.attention_chunk_pattern, 4u);
  EXPECT_EQ(llama4.architecture.windowed_layer_count(), 6u);
  const auto mistral = read(R"("model_type": "mistral", "num_hidden_layers": 4, "sliding_window": 4096)");
  EXPECT_EQ(mistral.architecture.windowed_layer_count(), 4u);
}

}  // namespace
