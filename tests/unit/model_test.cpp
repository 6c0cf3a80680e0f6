// Model architectures and the catalogue, checked against the parameter counts
// published for each model (model cards, the safetensors index total_size / 2
// for bf16 checkpoints).
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

import hwaccel;

namespace {

using namespace hwaccel;

std::uint64_t params(std::string_view id) {
  const auto d = catalogue_model(id);
  EXPECT_TRUE(d) << id << ": " << (d ? "" : d.error().message);
  return d ? d->parameters : 0;
}

TEST(Model, ExactParameterCountsFromPublishedConfigs) {
  EXPECT_EQ(params("llama-2-7b"), 6'738'415'616u);
  EXPECT_EQ(params("llama-3.1-8b"), 8'030'261'248u);
  EXPECT_EQ(params("mixtral-8x7b"), 46'702'792'704u);
  EXPECT_EQ(params("llama-2-13b"), 13'015'864'320u);
  EXPECT_EQ(params("llama-2-70b"), 68'976'648'192u);
  EXPECT_EQ(params("llama-3.1-70b"), 70'553'706'496u);
  EXPECT_EQ(params("llama-3.1-405b"), 405'853'388'800u);
  EXPECT_EQ(params("llama-3.2-1b"), 1'235'814'400u);
  EXPECT_EQ(params("llama-3.2-3b"), 3'212'749'824u);
  EXPECT_EQ(params("mistral-7b"), 7'241'732'096u);
  EXPECT_EQ(params("qwen2.5-7b"), 7'615'616'512u);
  EXPECT_EQ(params("qwen2.5-32b"), 32'763'876'352u);
  EXPECT_EQ(params("gemma-2-2b"), 2'614'341'888u);
  EXPECT_EQ(params("gemma-2-9b"), 9'241'705'984u);
  EXPECT_EQ(params("gemma-2-27b"), 27'227'128'320u);
}

// Model cards state rounded figures; every entry must agree to their precision.
TEST(Model, CatalogueAgreesWithModelCards) {
  const struct {
    const char* id;
    double billions;
    double tolerance;
  } cards[] = {
      {"llama-3-70b", 70.6, 0.05},      {"mistral-7b-v0.3", 7.25, 0.01},  {"mixtral-8x22b", 141, 0.5},
      {"qwen2-7b", 7.62, 0.01},         {"qwen2-72b", 72.7, 0.05},        {"qwen2.5-14b", 14.77, 0.01},
      {"qwen2.5-72b", 72.7, 0.05},      {"phi-3-mini", 3.82, 0.01},       {"phi-3-medium", 13.96, 0.01},
      {"deepseek-v2", 236, 0.5},        {"deepseek-v3", 671, 0.5},
      // Model cards: Qwen3 ("8.2B", "32.8B", "30.5B", "235B"), gpt-oss ("21B", "117B"); Gemma 3's
      // technical report (table 1: 12.2B and 27.4B with a 0.4B vision encoder the catalogue leaves out);
      // Llama 4 Scout's "109B total", which also counts its vision encoder.
      {"qwen3-8b", 8.2, 0.05},          {"qwen3-32b", 32.8, 0.05},        {"qwen3-30b-a3b", 30.5, 0.1},
      {"qwen3-235b-a22b", 235, 0.5},    {"gpt-oss-20b", 21, 0.5},         {"gpt-oss-120b", 117, 0.5},
      {"gemma-3-12b", 12.2 - 0.4, 0.1}, {"gemma-3-27b", 27.4 - 0.4, 0.1}, {"llama-4-scout", 109, 2.0},
  };
  for (const auto& c : cards)
    EXPECT_NEAR(static_cast<double>(params(c.id)) / 1e9, c.billions, c.tolerance) << c.id;
}

TEST(Model, MixtureOfExpertsActiveParameters) {
  const auto mixtral = catalogue_model("mixtral-8x7b").value();
  // 2 of 8 experts: "12.9B active parameters" (Mistral's announcement).
  EXPECT_EQ(mixtral.active_parameters, 12'879'925'248u);
  const auto v3 = catalogue_model("deepseek-v3").value();
  EXPECT_NEAR(static_cast<double>(v3.active_parameters) / 1e9, 37.0, 1.0);  // "37B activated"
  const auto v2 = catalogue_model("deepseek-v2").value();
  EXPECT_NEAR(static_cast<double>(v2.active_parameters) / 1e9, 21.0, 0.5);  // "21B activated"
  // "3.3B activated", "22B activated" (Qwen3 model cards), "17B active parameters" (Llama 4 Scout).
  EXPECT_NEAR(static_cast<double>(catalogue_model("qwen3-30b-a3b")->active_parameters) / 1e9, 3.3, 0.1);
  EXPECT_NEAR(static_cast<double>(catalogue_model("qwen3-235b-a22b")->active_parameters) / 1e9, 22.0, 0.5);
  EXPECT_NEAR(static_cast<double>(catalogue_model("llama-4-scout")->active_parameters) / 1e9, 17.0, 0.5);
  // gpt-oss: "3.6B active" and "5.1B active" (OpenAI's model card) leave out the embedding table,
  // of which a token reads one row; the catalogue counts it like every other model's.
  for (const auto& [id, card] : {std::pair{"gpt-oss-20b", 3.6}, std::pair{"gpt-oss-120b", 5.1}}) {
    const auto m = catalogue_model(id).value();
    const double embedding = 201088.0 * 2880.0;
    EXPECT_NEAR((static_cast<double>(m.active_parameters) - embedding) / 1e9, card, 0.05) << id;
  }
  const auto dense = catalogue_model("llama-3.1-8b").value();
  EXPECT_EQ(dense.active_parameters, dense.parameters);
}

TEST(Model, CatalogueIsConsistent) {
  std::set<std::string> ids;
  for (const auto& e : model_catalogue()) {
    EXPECT_TRUE(ids.insert(std::string(e.id)).second) << e.id;
    const auto& a = e.architecture;
    EXPECT_TRUE(a.validate()) << e.id;
    EXPECT_EQ(find_catalogue_model(e.id), &e);
    EXPECT_EQ(find_catalogue_model(e.hf_repo), &e);
    EXPECT_FALSE(e.source.empty());
  }
  EXPECT_EQ(ids.size(), model_catalogue().size());
  EXPECT_GE(ids.size(), 60u);
  EXPECT_EQ(find_catalogue_model("Llama-3.1-70B")->id, "llama-3.1-70b");
  EXPECT_EQ(find_catalogue_model("meta-llama/Llama-3.1-70B")->id, "llama-3.1-70b");
  EXPECT_EQ(find_catalogue_model("deepseek-r1")->id, "deepseek-v3");
  EXPECT_EQ(find_catalogue_model("llama-9"), nullptr);
  const auto missing = catalogue_model("llama-9");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::invalid_input);
  EXPECT_NE(missing.error().message.find("llama-3.1-70b"), std::string::npos);
}

TEST(Model, AttentionKinds) {
  EXPECT_EQ(catalogue_model("llama-2-7b")->architecture.attention_kind(), AttentionKind::multi_head);
  EXPECT_EQ(catalogue_model("llama-3.1-70b")->architecture.attention_kind(), AttentionKind::grouped_query);
  EXPECT_EQ(catalogue_model("deepseek-v3")->architecture.attention_kind(), AttentionKind::multi_head_latent);
  // KV elements per token and layer: 2 x kv_heads x head_dim; MLA caches the latent plus the rope key.
  EXPECT_EQ(catalogue_model("llama-2-7b")->architecture.kv_elements_per_token_per_layer(), 2u * 32 * 128);
  EXPECT_EQ(catalogue_model("llama-3.1-70b")->architecture.kv_elements_per_token_per_layer(), 2u * 8 * 128);
  EXPECT_EQ(catalogue_model("deepseek-v3")->architecture.kv_elements_per_token_per_layer(), 512u + 64);
}

TEST(Model, LayerTensorsMatchTheArchitecture) {
  const auto a = catalogue_model("llama-3.1-8b")->architecture;
  const auto t = layer_tensors(a, 0);
  std::uint64_t sum = 0;
  for (const auto& g : t) sum += g.parameters();
  EXPECT_EQ(sum, 218'112'000u);  // (8,030,261,248 - 2 x 525,336,576 - 4096) / 32
  const auto v3 = catalogue_model("deepseek-v3")->architecture;
  bool dense_ffn = false, experts = false;
  for (const auto& g : layer_tensors(v3, 2)) dense_ffn |= g.role == TensorRole::ffn_down;
  for (const auto& g : layer_tensors(v3, 3)) experts |= g.role == TensorRole::expert_down && g.count == 256;
  EXPECT_TRUE(dense_ffn);  // first_k_dense_replace = 3
  EXPECT_TRUE(experts);
}

TEST(Model, ValidationNamesTheField) {
  auto a = catalogue_model("llama-2-7b")->architecture;
  a.kv_heads = 5;  // 32 heads do not split into 5 groups
  auto r = count_parameters(a);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::invalid_input);
  EXPECT_NE(r.error().message.find("num_key_value_heads"), std::string::npos);
  a = catalogue_model("llama-2-7b")->architecture;
  a.layers = 0;
  EXPECT_NE(count_parameters(a).error().message.find("num_hidden_layers"), std::string::npos);
  a = catalogue_model("mixtral-8x7b")->architecture;
  a.moe.experts_per_token = 9;
  EXPECT_FALSE(count_parameters(a));
}

TEST(Model, FromParameterCountBorrowsTheNearestShape) {
  const auto d = ModelDescription::from_parameter_count(7'000'000'000).value();
  EXPECT_EQ(d.parameters, 7'000'000'000u);
  EXPECT_TRUE(d.architecture_assumed);
  EXPECT_FALSE(d.exact_parameters);
  EXPECT_EQ(d.source, ModelSource::parameter_count);
  EXPECT_EQ(d.architecture.layers, 32u);
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_NE(d.notes[0].find("architecture assumed"), std::string::npos);
  EXPECT_EQ(ModelDescription::from_parameter_count(70'000'000'000)->architecture.layers, 80u);
  EXPECT_FALSE(ModelDescription::from_parameter_count(0).has_value());
  EXPECT_EQ(ModelDescription::from_parameter_count(0).error().kind, ErrorKind::invalid_input);
  EXPECT_FALSE(ModelDescription::from_parameter_count(UINT64_MAX).has_value());
}

}  // namespace
