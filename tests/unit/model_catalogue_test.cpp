// The catalogue's newer entries, each checked against the parameter count its
// model card (or, where the card names only a size class, the Hugging Face
// model page's safetensors count) publishes, and the catalogue's lookup keys.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

import hwaccel;

namespace {

using namespace hwaccel;

struct Card {
  const char* id;
  double billions;  ///< the published total
  double tolerance; ///< relative
};

// Tolerance: 3 % by default. The catalogue counts every weight matrix, norm
// and bias its fields describe exactly, and leaves out only small tensors its
// `source` names (q/k norms, a few biases, a multi-token-prediction layer):
// well under 1 % for every model here. Cards round to two or three
// significant figures, so 3 % covers the rounding of "70.6B" as of "1T"
// without letting a wrong layer count, width or vocabulary through (one layer
// of 32 is 3 %, of 80 is 1.25 %; those are caught by the exact checks of
// model_test.cpp's families and the agreement of the others). Where a card
// rounds harder, the entry says so and widens the tolerance.
constexpr Card cards[] = {
    // https://huggingface.co/meta-llama/Llama-3.3-70B-Instruct ("70B"; the page: 70.6B params)
    {"llama-3.3-70b", 70.6, 0.03},
    // https://huggingface.co/meta-llama/Llama-4-Maverick-17B-128E ("17B active, 400B total", which counts
    // the vision encoder too: the language model alone is 400.7B)
    {"llama-4-maverick", 400, 0.03},
    // https://huggingface.co/Qwen/Qwen2.5-0.5B ("Number of Parameters: 0.49B")
    {"qwen2.5-0.5b", 0.49, 0.03},
    // https://huggingface.co/Qwen/Qwen2.5-1.5B ("1.54B")
    {"qwen2.5-1.5b", 1.54, 0.03},
    // https://huggingface.co/Qwen/Qwen2.5-3B ("3.09B")
    {"qwen2.5-3b", 3.09, 0.03},
    // https://huggingface.co/Qwen/Qwen3-0.6B ("0.6B"), Qwen3-1.7B ("1.7B"), Qwen3-4B ("4.0B"), Qwen3-14B ("14.8B")
    {"qwen3-0.6b", 0.6, 0.03},
    {"qwen3-1.7b", 1.7, 0.03},
    {"qwen3-4b", 4.0, 0.03},
    {"qwen3-14b", 14.8, 0.03},
    // https://huggingface.co/deepseek-ai/DeepSeek-R1-Distill-Qwen-7B (7.62B params on the page), -Qwen-14B (14.8B),
    // -Qwen-32B (32.8B), -Llama-8B (8.03B), -Llama-70B (70.6B): their base models' counts.
    {"deepseek-r1-distill-qwen-7b", 7.62, 0.03},
    {"deepseek-r1-distill-qwen-14b", 14.8, 0.03},
    {"deepseek-r1-distill-qwen-32b", 32.8, 0.03},
    {"deepseek-r1-distill-llama-8b", 8.03, 0.03},
    {"deepseek-r1-distill-llama-70b", 70.6, 0.03},
    // https://huggingface.co/google/gemma-3-270m ("270M": 170M embedding, 100M transformer blocks)
    {"gemma-3-270m", 0.27, 0.03},
    // https://arxiv.org/abs/2503.19786 (Gemma 3 report, table 1: 1B = 302M embedding + 698M non-embedding;
    // 4B = 675M + 3,209M, the 417M vision encoder aside)
    {"gemma-3-1b", 0.302 + 0.698, 0.03},
    {"gemma-3-4b", 0.675 + 3.209, 0.03},
    // https://huggingface.co/mistralai/Mistral-Nemo-Base-2407 ("12B"; 12.2B on the page)
    {"mistral-nemo-12b", 12.2, 0.03},
    // https://huggingface.co/microsoft/Phi-3.5-mini-instruct ("3.8B"; 3.82B on the page)
    {"phi-3.5-mini", 3.82, 0.03},
    // https://huggingface.co/microsoft/Phi-3.5-MoE-instruct ("16x3.8B ... 6.6B active"; 41.9B on the page)
    {"phi-3.5-moe", 41.9, 0.03},
    // https://huggingface.co/tiiuae/falcon-40b ("a 40B parameters causal decoder-only model"): the card names the
    // size class; the weights are 41.3B, so 5 %.
    {"falcon-40b", 40, 0.05},
    // https://huggingface.co/moonshotai/Kimi-K2-Instruct ("1 trillion total parameters", rounded: 3 % is 30B)
    {"kimi-k2", 1000, 0.03},
    // https://huggingface.co/zai-org/GLM-4.5 ("355 billion total parameters"), GLM-4.5-Air ("106 billion")
    {"glm-4.5", 355, 0.03},
    {"glm-4.5-air", 106, 0.03},
    // https://huggingface.co/allenai/OLMo-2-1124-7B ("7B"; 7.3B on the page), OLMo-2-1124-13B (13.7B)
    {"olmo-2-7b", 7.3, 0.03},
    {"olmo-2-13b", 13.7, 0.03},
    // https://huggingface.co/HuggingFaceTB/SmolLM3-3B ("a 3B parameter language model"; 3.08B on the page)
    {"smollm3-3b", 3.08, 0.03},
    // https://huggingface.co/mistralai/Mistral-Small-3.1-24B-Base-2503 ("24 billion parameters", which counts the
    // vision encoder too: the language model alone is 23.57B)
    {"mistral-small-3.1-24b", 24, 0.03},
    // https://huggingface.co/mistralai/Mistral-Large-Instruct-2407 ("123B")
    {"mistral-large-2", 123, 0.03},
    // https://huggingface.co/microsoft/phi-4 ("14B parameters"; 14.7B on the page), Phi-4-mini-instruct ("3.8B")
    {"phi-4", 14.7, 0.03},
    {"phi-4-mini", 3.8, 0.03},
    // https://huggingface.co/tiiuae/falcon-180B ("a 180B parameters causal decoder-only model")
    {"falcon-180b", 180, 0.03},
};

double billions(std::uint64_t n) { return static_cast<double>(n) / 1e9; }

TEST(ModelCatalogue, NewEntriesAgreeWithModelCards) {
  for (const auto& c : cards) {
    const auto d = catalogue_model(c.id);
    ASSERT_TRUE(d) << c.id << ": " << d.error().message;
    EXPECT_NEAR(billions(d->parameters), c.billions, c.billions * c.tolerance) << c.id;
    EXPECT_EQ(d->source, ModelSource::catalogue);
  }
}

TEST(ModelCatalogue, MixtureOfExpertsActiveParameters) {
  const auto active = [](std::string_view id) {
    const auto d = catalogue_model(id);
    EXPECT_TRUE(d) << id;
    return d ? billions(d->active_parameters) : 0.0;
  };
  const auto active_without_embeddings = [](std::string_view id) {
    const auto d = catalogue_model(id).value();
    const auto count = count_parameters(d.architecture).value();
    return billions(count.active - count.embedding);
  };
  // Llama 4 Maverick: "17B active parameters" (one routed and one shared expert in each of the 24 MoE layers).
  EXPECT_NEAR(active("llama-4-maverick"), 17, 17 * 0.03);
  // Phi-3.5-MoE: "6.6B active parameters" (two of 16 experts).
  EXPECT_NEAR(active("phi-3.5-moe"), 6.6, 6.6 * 0.03);
  // Kimi K2: "32 billion activated parameters".
  EXPECT_NEAR(active("kimi-k2"), 32, 32 * 0.03);
  // GLM-4.5 "32 billion active", GLM-4.5-Air "12 billion active": Z.ai counts them without the embedding and
  // output tables (1.55B and 1.24B), as OpenAI does for gpt-oss.
  EXPECT_NEAR(active_without_embeddings("glm-4.5"), 32, 32 * 0.03);
  EXPECT_NEAR(active_without_embeddings("glm-4.5-air"), 12, 12 * 0.03);
  // Dense models: every parameter is active.
  const auto dense = catalogue_model("olmo-2-13b").value();
  EXPECT_EQ(dense.active_parameters, dense.parameters);
}

TEST(ModelCatalogue, HasSixtyModelsWithUniqueKeys) {
  const auto all = model_catalogue();
  EXPECT_GE(all.size(), 60u);
  // Every id, alias and Hugging Face repository (with or without its owner)
  // names exactly one entry, case- and '_'/'-'-insensitively.
  std::map<std::string, std::string> owner;
  const auto key = [](std::string_view s) {
    std::string k;
    for (char c : s) k += c == '_' ? '-' : static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return k;
  };
  const auto claim = [&](std::string_view name, const CatalogueEntry& e) {
    const auto [it, inserted] = owner.emplace(key(name), std::string(e.id));
    EXPECT_TRUE(inserted || it->second == e.id) << name << " names both " << it->second << " and " << e.id;
    EXPECT_EQ(find_catalogue_model(name), &e) << name;
  };
  for (const auto& e : all) {
    claim(e.id, e);
    claim(e.hf_repo, e);
    claim(e.hf_repo.substr(e.hf_repo.find('/') + 1), e);
    for (const auto& alias : e.aliases) claim(alias, e);
    EXPECT_TRUE(e.source.starts_with("https://huggingface.co/")) << e.id;
    EXPECT_NE(e.source.find("config.json"), std::string_view::npos) << e.id;
  }
  EXPECT_EQ(find_catalogue_model("DeepSeek-R1-Distill-Qwen-32B")->id, "deepseek-r1-distill-qwen-32b");
  EXPECT_EQ(find_catalogue_model("r1-distill-llama-70b")->id, "deepseek-r1-distill-llama-70b");
  EXPECT_EQ(find_catalogue_model("deepseek-r1")->id, "deepseek-v3");
}

TEST(ModelCatalogue, InterleavedMixtureOfExperts) {
  // Llama 4 Maverick: interleave_moe_layer_step 2 makes layers 1, 3, ..., 47 MoE and the others dense.
  const auto a = catalogue_model("llama-4-maverick")->architecture;
  EXPECT_FALSE(a.is_moe_layer(0));
  EXPECT_TRUE(a.is_moe_layer(1));
  EXPECT_FALSE(a.is_moe_layer(46));
  EXPECT_TRUE(a.is_moe_layer(47));
  EXPECT_FALSE(a.is_moe_layer(48));  // past the last layer
  EXPECT_EQ(a.moe_layer_count(), 24u);
  EXPECT_EQ(a.first_moe_layer(), 1u);
  EXPECT_TRUE(a.has_dense_layers());
  bool dense_ffn = false, experts = false;
  for (const auto& g : layer_tensors(a, 0)) dense_ffn |= g.role == TensorRole::ffn_down && g.rows == 5120 && g.cols == 16384;
  for (const auto& g : layer_tensors(a, 1)) experts |= g.role == TensorRole::expert_down && g.count == 128;
  EXPECT_TRUE(dense_ffn);
  EXPECT_TRUE(experts);
  // Scout (step 1) and DeepSeek-V3 (three leading dense layers) are unchanged.
  const auto scout = catalogue_model("llama-4-scout")->architecture;
  EXPECT_EQ(scout.moe_layer_count(), 48u);
  EXPECT_FALSE(scout.has_dense_layers());
  const auto v3 = catalogue_model("deepseek-v3")->architecture;
  EXPECT_EQ(v3.first_moe_layer(), 3u);
  EXPECT_EQ(v3.moe_layer_count(), 58u);
  // A step and leading dense layers together: MoE layers are those >= first_k_dense_replace with
  // (layer + 1) a multiple of the step.
  auto mixed = v3;
  mixed.moe.layer_step = 4;
  EXPECT_EQ(mixed.first_moe_layer(), 3u);
  EXPECT_EQ(mixed.moe_layer_count(), 15u);  // layers 3, 7, ..., 59
  mixed.moe.first_dense_layers = 4;
  EXPECT_EQ(mixed.first_moe_layer(), 7u);
  EXPECT_EQ(mixed.moe_layer_count(), 14u);
  mixed.moe.layer_step = 62;  // more than the layers
  EXPECT_FALSE(count_parameters(mixed));
}

TEST(ModelCatalogue, ConfigJsonReadsTheInterleaveStep) {
  // Maverick's text_config as published (https://huggingface.co/meta-llama/Llama-4-Maverick-17B-128E).
  const auto d = model_from_config_json(R"({
    "model_type": "llama4",
    "text_config": {
      "model_type": "llama4_text", "num_hidden_layers": 48, "hidden_size": 5120,
      "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128,
      "intermediate_size": 8192, "intermediate_size_mlp": 16384, "vocab_size": 202048,
      "max_position_embeddings": 1048576, "num_local_experts": 128, "num_experts_per_tok": 1,
      "interleave_moe_layer_step": 2, "tie_word_embeddings": false
    }})");
  ASSERT_TRUE(d) << d.error().message;
  const auto catalogue = catalogue_model("llama-4-maverick").value();
  EXPECT_EQ(d->architecture.moe, catalogue.architecture.moe);
  EXPECT_EQ(d->architecture.intermediate_size, 16384u);
  EXPECT_EQ(d->parameters, catalogue.parameters);
  EXPECT_EQ(d->active_parameters, catalogue.active_parameters);
}

TEST(ModelCatalogue, FalconIsANonGatedLayerNormModel) {
  const auto a = catalogue_model("falcon-40b")->architecture;
  EXPECT_FALSE(a.gated_ffn);
  EXPECT_TRUE(a.norm_bias);
  EXPECT_EQ(a.attention_kind(), AttentionKind::grouped_query);
  // Per layer: fused q/k/v 8192 x (128 + 2 x 8) x 64, the output projection, the 4 x 8192 MLP (two
  // matrices) and two LayerNorms with biases; plus the tied embedding and the final LayerNorm.
  const std::uint64_t layer = 8192ull * (128 + 16) * 64 + 8192ull * 8192 + 2ull * 8192 * 32768 + 4ull * 8192;
  EXPECT_EQ(catalogue_model("falcon-40b")->parameters, 60 * layer + 65024ull * 8192 + 2 * 8192);
  // Falcon 180B: the same layout at 14848 wide, 232 query heads of 64 and 8 KV heads, 80 layers.
  const auto big = catalogue_model("falcon-180b")->architecture;
  EXPECT_FALSE(big.gated_ffn);
  EXPECT_TRUE(big.tied_embeddings);
  const std::uint64_t big_layer =
      14848ull * (232 + 16) * 64 + 14848ull * 14848 + 2ull * 14848 * 59392 + 4ull * 14848;
  EXPECT_EQ(catalogue_model("falcon-180b")->parameters, 80 * big_layer + 65024ull * 14848 + 2 * 14848);
}

}  // namespace
