// Model files: Hugging Face config.json, GGUF and safetensors headers written
// byte by byte here, including truncated, hostile and malformed ones.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../test_support.hpp"

import hwaccel;

namespace {

using namespace hwaccel;
namespace fs = std::filesystem;
using hwaccel::testing::TempDir;
using hwaccel::testing::write_file;

// --- config.json ------------------------------------------------------------------

constexpr const char* llama2_7b_config = R"({
  "architectures": ["LlamaForCausalLM"], "bos_token_id": 1, "eos_token_id": 2, "hidden_act": "silu",
  "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 11008, "max_position_embeddings": 4096,
  "model_type": "llama", "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 32,
  "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_scaling": null, "tie_word_embeddings": false,
  "torch_dtype": "float16", "transformers_version": "4.31.0.dev0", "use_cache": true, "vocab_size": 32000})";

constexpr const char* mixtral_config = R"({
  "architectures": ["MixtralForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336,
  "max_position_embeddings": 32768, "model_type": "mixtral", "num_attention_heads": 32, "num_experts_per_tok": 2,
  "num_hidden_layers": 32, "num_key_value_heads": 8, "num_local_experts": 8, "rms_norm_eps": 1e-05,
  "rope_theta": 1000000.0, "sliding_window": null, "tie_word_embeddings": false, "vocab_size": 32000})";

constexpr const char* deepseek_v3_config = R"({
  "architectures": ["DeepseekV3ForCausalLM"], "first_k_dense_replace": 3, "hidden_size": 7168,
  "intermediate_size": 18432, "kv_lora_rank": 512, "max_position_embeddings": 163840, "model_type": "deepseek_v3",
  "moe_intermediate_size": 2048, "moe_layer_freq": 1, "n_group": 8, "n_routed_experts": 256, "n_shared_experts": 1,
  "norm_topk_prob": true, "num_attention_heads": 128, "num_experts_per_tok": 8, "num_hidden_layers": 61,
  "num_key_value_heads": 128, "num_nextn_predict_layers": 1, "q_lora_rank": 1536, "qk_nope_head_dim": 128,
  "qk_rope_head_dim": 64, "scoring_func": "sigmoid", "tie_word_embeddings": false, "topk_group": 4,
  "topk_method": "noaux_tc", "v_head_dim": 128, "vocab_size": 129280})";

TEST(PlanFiles, ConfigJsonGivesExactCounts) {
  const auto llama = model_from_config_json(llama2_7b_config).value();
  EXPECT_EQ(llama.parameters, 6'738'415'616u);
  EXPECT_EQ(llama.source, ModelSource::hf_config);
  EXPECT_EQ(llama.architecture.max_context, 4096u);
  EXPECT_EQ(llama.architecture.head_dim, 128u);  // hidden / heads
  const auto mixtral = model_from_config_json(mixtral_config).value();
  EXPECT_EQ(mixtral.parameters, 46'702'792'704u);
  EXPECT_EQ(mixtral.active_parameters, 12'879'925'248u);
  EXPECT_FALSE(mixtral.architecture.sliding_window);  // null
  const auto v3 = model_from_config_json(deepseek_v3_config).value();
  EXPECT_EQ(v3.architecture, catalogue_model("deepseek-v3")->architecture);
  EXPECT_EQ(v3.parameters, catalogue_model("deepseek-v3")->parameters);
  ASSERT_FALSE(v3.notes.empty());
  EXPECT_NE(v3.notes.back().find("multi-token-prediction"), std::string::npos);
}

TEST(PlanFiles, ConfigJsonDefaultsAndNesting) {
  // No num_key_value_heads: multi-head attention; no tie_word_embeddings: the family default.
  const auto m = model_from_config_json(
                     R"({"model_type":"gemma2","num_hidden_layers":26,"hidden_size":2304,"num_attention_heads":8,
                         "num_key_value_heads":4,"head_dim":256,"intermediate_size":9216,"vocab_size":256000,
                         "max_position_embeddings":8192,"sliding_window":4096})")
                     .value();
  EXPECT_EQ(m.parameters, 2'614'341'888u);
  EXPECT_TRUE(m.architecture.tied_embeddings);
  EXPECT_EQ(m.architecture.sliding_window, 4096u);
  const auto nested = model_from_config_json(
                          R"({"model_type":"llava","text_config":{"model_type":"llama","num_hidden_layers":32,
                              "hidden_size":4096,"num_attention_heads":32,"intermediate_size":11008,
                              "vocab_size":32000,"tie_word_embeddings":false}})")
                          .value();
  EXPECT_EQ(nested.parameters, 6'738'415'616u);
  EXPECT_EQ(nested.architecture.kv_heads, 32u);
}

TEST(PlanFiles, ConfigJsonErrorsNameTheField) {
  const auto missing = model_from_config_json(R"({"model_type":"llama","hidden_size":4096})");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::parse_error);
  EXPECT_NE(missing.error().message.find("num_hidden_layers"), std::string::npos);
  const auto not_json = model_from_config_json("{\"model_type\": ");
  ASSERT_FALSE(not_json);
  EXPECT_EQ(not_json.error().kind, ErrorKind::parse_error);
  const auto wrong_type = model_from_config_json(
      R"({"num_hidden_layers":"32","hidden_size":4096,"num_attention_heads":32,"vocab_size":1,"intermediate_size":1})");
  ASSERT_FALSE(wrong_type);
  EXPECT_NE(wrong_type.error().message.find("num_hidden_layers"), std::string::npos);
  const auto inconsistent = model_from_config_json(
      R"({"num_hidden_layers":2,"hidden_size":64,"num_attention_heads":4,"num_key_value_heads":3,
          "vocab_size":10,"intermediate_size":8})");
  ASSERT_FALSE(inconsistent);
  EXPECT_EQ(inconsistent.error().kind, ErrorKind::invalid_input);
  const auto moe_without_k = model_from_config_json(
      R"({"num_hidden_layers":2,"hidden_size":64,"num_attention_heads":4,"vocab_size":10,"intermediate_size":8,
          "num_local_experts":8})");
  ASSERT_FALSE(moe_without_k);
  EXPECT_NE(moe_without_k.error().message.find("num_experts_per_tok"), std::string::npos);
  EXPECT_FALSE(model_from_config_json("[1,2,3]"));
  EXPECT_FALSE(model_from_config_json(std::string(17 << 20, ' ')));
}

// --- GGUF -------------------------------------------------------------------------

// Little-endian GGUF builder.
class Gguf {
 public:
  explicit Gguf(std::uint32_t version = 3) {
    raw("GGUF", 4);
    u32(version);
  }
  Gguf& u32(std::uint32_t v) { return put(v); }
  Gguf& u64(std::uint64_t v) { return put(v); }
  Gguf& str(std::string_view s) {
    u64(s.size());
    return raw(s.data(), s.size());
  }
  Gguf& raw(const void* p, std::size_t n) {
    bytes_.append(static_cast<const char*>(p), n);
    return *this;
  }
  Gguf& kv_u32(std::string_view key, std::uint32_t v) { return str(key).u32(4).u32(v); }
  Gguf& kv_str(std::string_view key, std::string_view v) { return str(key).u32(8).str(v); }
  Gguf& kv_f32(std::string_view key, float v) { str(key).u32(6); return put(v); }
  Gguf& kv_string_array(std::string_view key, std::size_t n) {
    str(key).u32(9).u32(8).u64(n);
    for (std::size_t i = 0; i < n; ++i) str("tok" + std::to_string(i));
    return *this;
  }
  Gguf& kv_i32_array(std::string_view key, std::vector<std::int32_t> v) {
    str(key).u32(9).u32(5).u64(v.size());
    for (auto x : v) put(x);
    return *this;
  }
  Gguf& tensor(std::string_view name, std::vector<std::uint64_t> dims, GgmlType type, std::uint64_t offset) {
    str(name).u32(static_cast<std::uint32_t>(dims.size()));
    for (auto d : dims) u64(d);
    return u32(static_cast<std::uint32_t>(type)).u64(offset);
  }
  const std::string& bytes() const { return bytes_; }
  // Writes the header and extends the file (sparsely) to hold `data` bytes of tensors.
  fs::path write(const fs::path& path, std::uint64_t data) const {
    write_file(path, bytes_);
    const std::uint64_t header = (bytes_.size() + 31) / 32 * 32;
    fs::resize_file(path, header + data);
    return path;
  }

 private:
  template <class T>
  Gguf& put(T v) {
    return raw(&v, sizeof v);
  }
  std::string bytes_;
};

struct TinyTensor {
  std::string name;
  std::vector<std::uint64_t> dims;
  GgmlType type;
};

// A two-layer llama: hidden 256, 4 heads (2 KV), FFN 512, vocab 1000.
std::vector<TinyTensor> tiny_llama_tensors(GgmlType matrix, bool with_output = true) {
  std::vector<TinyTensor> t = {{"token_embd.weight", {256, 1000}, matrix}, {"output_norm.weight", {256}, GgmlType::f32}};
  if (with_output) t.push_back({"output.weight", {256, 1000}, GgmlType::q6_k});
  for (int l = 0; l < 2; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    t.push_back({p + "attn_norm.weight", {256}, GgmlType::f32});
    t.push_back({p + "attn_q.weight", {256, 256}, matrix});
    t.push_back({p + "attn_k.weight", {256, 128}, matrix});
    t.push_back({p + "attn_v.weight", {256, 128}, matrix});
    t.push_back({p + "attn_output.weight", {256, 256}, matrix});
    t.push_back({p + "ffn_norm.weight", {256}, GgmlType::f32});
    t.push_back({p + "ffn_gate.weight", {256, 512}, matrix});
    t.push_back({p + "ffn_up.weight", {256, 512}, matrix});
    t.push_back({p + "ffn_down.weight", {512, 256}, matrix});
  }
  return t;
}

fs::path tiny_gguf(const fs::path& path, GgmlType matrix, std::uint32_t file_type, std::uint32_t version = 3,
                   bool with_output = true) {
  const auto tensors = tiny_llama_tensors(matrix, with_output);
  Gguf g(version);
  g.u64(tensors.size()).u64(12);
  g.kv_str("general.architecture", "llama").kv_str("general.name", "Tiny Llama");
  g.kv_u32("general.file_type", file_type).kv_u32("llama.block_count", 2);
  g.kv_u32("llama.embedding_length", 256).kv_u32("llama.feed_forward_length", 512);
  g.kv_u32("llama.attention.head_count", 4).kv_i32_array("llama.attention.head_count_kv", {2, 2});
  g.kv_u32("llama.context_length", 2048).kv_f32("llama.rope.freq_base", 10000.0f);
  g.kv_string_array("tokenizer.ggml.tokens", 1000);
  g.str("tokenizer.ggml.merges").u32(9).u32(9).u64(1).u32(8).u64(2).str("a").str("b");  // nested array
  std::uint64_t offset = 0;
  for (const auto& t : tensors) {
    g.tensor(t.name, t.dims, t.type, offset);
    std::uint64_t rows = 1;
    for (std::size_t i = 1; i < t.dims.size(); ++i) rows *= t.dims[i];
    offset += *ggml_encoding(t.type)->bytes(rows, t.dims[0]);
    offset = (offset + 31) / 32 * 32;
  }
  return g.write(path, offset);
}

// Parameters of the tiny llama: embedding + head + norms + 2 layers.
constexpr std::uint64_t tiny_params =
    2 * 256000 + 256 + 2 * (256 + 256 * 256 + 2 * 256 * 128 + 256 * 256 + 256 + 3 * 256 * 512);

TEST(PlanFiles, GgufHeaderGivesExactParametersAndBytes) {
  TempDir dir;
  for (std::uint32_t version : {2u, 3u}) {
    const auto path = tiny_gguf(dir.path() / ("tiny-v" + std::to_string(version) + ".gguf"), GgmlType::q8_0, 7, version);
    const auto m = read_gguf(path).value();
    EXPECT_EQ(m.parameters, tiny_params);
    EXPECT_TRUE(m.exact_parameters);
    EXPECT_EQ(m.source, ModelSource::gguf);
    EXPECT_EQ(m.name, "Tiny Llama");
    EXPECT_EQ(m.architecture.layers, 2u);
    EXPECT_EQ(m.architecture.hidden_size, 256u);
    EXPECT_EQ(m.architecture.attention_heads, 4u);
    EXPECT_EQ(m.architecture.kv_heads, 2u);  // from a per-layer array
    EXPECT_EQ(m.architecture.head_dim, 64u);
    EXPECT_EQ(m.architecture.vocab_size, 1000u);  // tokenizer.ggml.tokens length
    EXPECT_EQ(m.architecture.max_context, 2048u);
    EXPECT_FALSE(m.architecture.tied_embeddings);
    ASSERT_TRUE(m.stored);
    EXPECT_EQ(m.stored->level, QuantizationLevel::q8_0);
    ASSERT_EQ(m.stored->layer_bytes.size(), 2u);
    // One layer of Q8_0 matrices (34 bytes per 32 weights) and two F32 norms.
    const std::uint64_t layer = (256 * 256 * 2 + 256 * 128 * 2 + 256 * 512 * 3) / 32 * 34 + 2 * 256 * 4;
    EXPECT_EQ(m.stored->layer_bytes[0], layer);
    EXPECT_EQ(m.stored->embedding_bytes, 256000u / 32 * 34);
    EXPECT_EQ(m.stored->head_bytes, 256000u / 256 * 210 + 256 * 4);
    ASSERT_EQ(m.stored->by_dtype.size(), 3u);
    EXPECT_EQ(m.stored->by_dtype[0].dtype, "F32");
    EXPECT_EQ(m.stored->by_dtype[1].dtype, "Q6_K");
    EXPECT_EQ(m.stored->by_dtype[2].dtype, "Q8_0");
    EXPECT_EQ(m.stored->total_bytes(), m.stored->by_dtype[0].bytes + m.stored->by_dtype[1].bytes + m.stored->by_dtype[2].bytes);
  }
  // No output tensor: tied embeddings.
  const auto tied = read_gguf(tiny_gguf(dir.path() / "tied.gguf", GgmlType::q4_0, 2, 3, false)).value();
  EXPECT_TRUE(tied.architecture.tied_embeddings);
  EXPECT_EQ(tied.stored->level, QuantizationLevel::q4_0);
}

TEST(PlanFiles, GgufMxfp4FileTypeRunsUnderLlamaCpp) {
  // llama.cpp's MXFP4_MOE file type (38), gpt-oss's GGUFs: the level is
  // MXFP4, the bytes the file's own, and the plan's runtime llama.cpp
  // although MXFP4 alone would default to vLLM on CUDA.
  TempDir dir;
  const auto m = read_gguf(tiny_gguf(dir.path() / "mxfp4.gguf", GgmlType::mxfp4, 38)).value();
  ASSERT_TRUE(m.stored);
  EXPECT_EQ(m.stored->level, QuantizationLevel::mxfp4);
  auto registry = hypothetical_registry("1xRTX-4090");
  ASSERT_TRUE(registry.has_value());
  InferenceSettings s;
  s.context = 1024;
  auto plan = plan_inference(*registry, m, s);
  ASSERT_TRUE(plan.has_value()) << plan.error().message;
  EXPECT_EQ(plan->quantization, QuantizationLevel::mxfp4);
  EXPECT_EQ(plan->throughput.runtime, "llama.cpp-cuda");
  EXPECT_EQ(default_runtime(Backend::cuda, QuantizationLevel::mxfp4), Runtime::vllm);
  EXPECT_EQ(default_runtime(Backend::cuda, QuantizationLevel::mxfp4, true), Runtime::llama_cpp_cuda);
}

Error gguf_error(const std::string& bytes, std::uint64_t pad = 0) {
  TempDir dir;
  const auto path = dir.path() / "bad.gguf";
  write_file(path, bytes);
  if (pad) fs::resize_file(path, bytes.size() + pad);
  const auto r = read_gguf(path);
  EXPECT_FALSE(r) << "expected an error";
  return r ? Error{} : r.error();
}

TEST(PlanFiles, HostileGgufIsAClearError) {
  // 20 bytes: magic, version, tensor count and half a metadata count.
  {
    Gguf g;
    g.u64(0).u32(0);
    const auto e = gguf_error(g.bytes());
    EXPECT_EQ(e.kind, ErrorKind::parse_error);
    EXPECT_NE(e.message.find("truncated"), std::string::npos) << e.message;
  }
  // 2^63 tensors.
  {
    Gguf g;
    g.u64(1ull << 63).u64(0);
    const auto e = gguf_error(g.bytes(), 1000);
    EXPECT_EQ(e.kind, ErrorKind::parse_error);
    EXPECT_NE(e.message.find("tensors"), std::string::npos) << e.message;
  }
  // A key whose length prefix runs past the end of the file.
  {
    Gguf g;
    g.u64(0).u64(1).u64(1ull << 40);
    const auto e = gguf_error(g.bytes(), 64);
    EXPECT_EQ(e.kind, ErrorKind::parse_error);
    EXPECT_NE(e.message.find("truncated"), std::string::npos) << e.message;
  }
  // An array claiming 2^60 elements.
  {
    Gguf g;
    g.u64(0).u64(1).str("x").u32(9).u32(4).u64(1ull << 60);
    EXPECT_EQ(gguf_error(g.bytes(), 64).kind, ErrorKind::parse_error);
  }
  // An unknown value type.
  {
    Gguf g;
    g.u64(0).u64(1).str("x").u32(77).u32(0);
    const auto e = gguf_error(g.bytes(), 64);
    EXPECT_NE(e.message.find("unknown value type"), std::string::npos) << e.message;
  }
  // Not GGUF, version 1, an unknown version, a big-endian file.
  EXPECT_EQ(gguf_error(std::string("GGML") + std::string(40, '\0')).kind, ErrorKind::parse_error);
  EXPECT_EQ(gguf_error(Gguf(1).u64(0).u64(0).bytes()).kind, ErrorKind::unsupported);
  EXPECT_EQ(gguf_error(Gguf(99).u64(0).u64(0).bytes()).kind, ErrorKind::parse_error);
  EXPECT_EQ(gguf_error(Gguf(0x03000000).u64(0).u64(0).bytes()).kind, ErrorKind::unsupported);
  // Five dimensions; a shape overflowing 64 bits.
  {
    Gguf g;
    g.u64(1).u64(0).tensor("t", {1, 1, 1, 1, 1}, GgmlType::f32, 0);
    EXPECT_NE(gguf_error(g.bytes(), 64).message.find("dimensions"), std::string::npos);
  }
  {
    Gguf g;
    g.u64(1).u64(0).tensor("t", {1ull << 40, 1ull << 40}, GgmlType::f32, 0);
    EXPECT_NE(gguf_error(g.bytes(), 64).message.find("absurd"), std::string::npos);
  }
  // A zero-sized dimension is an empty tensor, not a division by zero.
  {
    Gguf g;
    g.u64(1).u64(1).kv_str("general.architecture", "llama").tensor("t", {0, 16}, GgmlType::q4_0, 0);
    const auto e = gguf_error(g.bytes(), 64);
    EXPECT_NE(e.message.find("block_count"), std::string::npos) << e.message;
  }
  // Tensor data beyond the end of the file (a cut-off download).
  {
    TempDir dir;
    const auto path = tiny_gguf(dir.path() / "cut.gguf", GgmlType::q8_0, 7);
    fs::resize_file(path, fs::file_size(path) - 4096);
    const auto r = read_gguf(path);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("truncated"), std::string::npos) << r.error().message;
  }
  // Metadata without the architecture.
  {
    Gguf g;
    g.u64(0).u64(1).kv_u32("general.file_type", 7);
    EXPECT_NE(gguf_error(g.bytes(), 64).message.find("general.architecture"), std::string::npos);
  }
  // Not a file at all.
  EXPECT_EQ(read_gguf("/nonexistent/model.gguf").error().kind, ErrorKind::not_found);
  EXPECT_EQ(read_gguf("/dev/null").error().kind, ErrorKind::not_regular_file);
}

// Every prefix of a valid header, and random byte flips in it, must give a
// result or a clear error: never a crash, a hang or a huge allocation.
TEST(PlanFiles, TruncatedAndMutatedGgufNeverCrash) {
  TempDir dir;
  const auto good = tiny_gguf(dir.path() / "good.gguf", GgmlType::q8_0, 7);
  const std::string bytes = hwaccel::testing::read_file(good);
  const std::size_t header = 20000;  // past the metadata and tensor infos
  ASSERT_GT(bytes.size(), header);
  const auto path = dir.path() / "cut.gguf";
  for (std::size_t n = 0; n < header; n += n < 512 ? 1 : 97) {
    write_file(path, bytes.substr(0, n));
    const auto r = read_gguf(path);
    ASSERT_FALSE(r) << "prefix of " << n << " bytes";
    EXPECT_TRUE(r.error().kind == ErrorKind::parse_error || r.error().kind == ErrorKind::invalid_input)
        << n << ": " << r.error().message;
  }
  std::uint64_t state = 0x9e3779b97f4a7c15ull;  // fixed seed: the same mutations every run
  const auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  for (int round = 0; round < 400; ++round) {
    std::string mutated = bytes;
    for (int k = 0, flips = 1 + static_cast<int>(next() % 8); k < flips; ++k)
      mutated[next() % header] = static_cast<char>(next());
    write_file(path, mutated);
    const auto r = read_gguf(path);
    if (r) EXPECT_GT(r->parameters, 0u);
  }
}

// --- safetensors ------------------------------------------------------------------

using StTensor = hwaccel::testing::SafetensorsTensor;
using hwaccel::testing::write_safetensors;

std::vector<StTensor> tiny_hf_tensors(int first_layer, int last_layer, bool head = true) {
  std::vector<StTensor> t;
  if (first_layer == 0) t.push_back({"model.embed_tokens.weight", "BF16", {1000, 256}});
  for (int l = first_layer; l <= last_layer; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    t.push_back({p + "input_layernorm.weight", "BF16", {256}});
    t.push_back({p + "self_attn.q_proj.weight", "BF16", {256, 256}});
    t.push_back({p + "self_attn.k_proj.weight", "BF16", {128, 256}});
    t.push_back({p + "self_attn.v_proj.weight", "BF16", {128, 256}});
    t.push_back({p + "self_attn.o_proj.weight", "BF16", {256, 256}});
    t.push_back({p + "post_attention_layernorm.weight", "BF16", {256}});
    t.push_back({p + "mlp.gate_proj.weight", "BF16", {512, 256}});
    t.push_back({p + "mlp.up_proj.weight", "BF16", {512, 256}});
    t.push_back({p + "mlp.down_proj.weight", "BF16", {256, 512}});
  }
  if (head) {
    t.push_back({"model.norm.weight", "BF16", {256}});
    t.push_back({"lm_head.weight", "BF16", {1000, 256}});
  }
  return t;
}

constexpr const char* tiny_config = R"({"model_type":"llama","num_hidden_layers":2,"hidden_size":256,
  "num_attention_heads":4,"num_key_value_heads":2,"intermediate_size":512,"vocab_size":1000,
  "tie_word_embeddings":false,"max_position_embeddings":2048})";

TEST(PlanFiles, SafetensorsWithConfig) {
  TempDir dir;
  write_file(dir.path() / "config.json", tiny_config);
  const auto path = write_safetensors(dir.path() / "model.safetensors", tiny_hf_tensors(0, 1));
  const auto m = read_safetensors(path).value();
  EXPECT_EQ(m.parameters, tiny_params);
  EXPECT_EQ(m.source, ModelSource::safetensors);
  ASSERT_TRUE(m.stored);
  EXPECT_EQ(m.stored->level, QuantizationLevel::bf16);
  EXPECT_EQ(m.stored->total_bytes(), 2 * tiny_params);
  EXPECT_EQ(m.stored->layer_bytes.size(), 2u);
  EXPECT_EQ(m.stored->embedding_bytes, 2u * 256000);
  // The folder works too, and so does the config alone.
  EXPECT_EQ(load_model(dir.str()).value().parameters, tiny_params);
  EXPECT_EQ(read_config_json(dir.path() / "config.json").value().parameters, tiny_params);
}

TEST(PlanFiles, SafetensorsWithoutConfigInfersTheShape) {
  TempDir dir;
  const auto m = read_safetensors(write_safetensors(dir.path() / "model.safetensors", tiny_hf_tensors(0, 1))).value();
  EXPECT_EQ(m.parameters, tiny_params);
  EXPECT_EQ(m.architecture.layers, 2u);
  EXPECT_EQ(m.architecture.intermediate_size, 512u);
  // Shapes give heads x head_dim only: head_dim is assumed 128 (q 256 wide, k 128 wide).
  EXPECT_EQ(m.architecture.head_dim, 128u);
  EXPECT_EQ(m.architecture.attention_heads, 2u);
  EXPECT_EQ(m.architecture.kv_heads, 1u);
  bool noted = false;
  for (const auto& n : m.notes) noted |= n.find("head_dim assumed") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(PlanFiles, ShardedSafetensors) {
  TempDir dir;
  write_file(dir.path() / "config.json", tiny_config);
  write_safetensors(dir.path() / "model-00001-of-00002.safetensors", tiny_hf_tensors(0, 0, false));
  write_safetensors(dir.path() / "model-00002-of-00002.safetensors", tiny_hf_tensors(1, 1, true));
  std::string index = R"({"metadata":{"total_size":1},"weight_map":{)";
  bool first = true;
  for (const auto& [tensors, file] : {std::pair{tiny_hf_tensors(0, 0, false), "model-00001-of-00002.safetensors"},
                                      std::pair{tiny_hf_tensors(1, 1, true), "model-00002-of-00002.safetensors"}})
    for (const auto& t : tensors) {
      index += std::string(first ? "" : ",") + "\"" + t.name + "\":\"" + file + "\"";
      first = false;
    }
  index += "}}";
  write_file(dir.path() / "model.safetensors.index.json", index);
  const auto m = load_model(dir.str()).value();
  EXPECT_EQ(m.parameters, tiny_params);
  EXPECT_EQ(m.stored->total_bytes(), 2 * tiny_params);
  // A shard name that climbs out of the folder, and a missing shard.
  write_file(dir.path() / "evil.index.json", R"({"weight_map":{"a":"../../etc/passwd"}})");
  const auto evil = read_safetensors(dir.path() / "evil.index.json");
  ASSERT_FALSE(evil);
  EXPECT_EQ(evil.error().kind, ErrorKind::parse_error);
  write_file(dir.path() / "missing.index.json", R"({"weight_map":{"a":"nope.safetensors"}})");
  EXPECT_EQ(read_safetensors(dir.path() / "missing.index.json").error().kind, ErrorKind::not_found);
}

TEST(PlanFiles, HostileSafetensorsIsAClearError) {
  TempDir dir;
  const auto expect_error = [&](const std::string& bytes, std::string_view needle) {
    const auto path = dir.path() / "bad.safetensors";
    write_file(path, bytes);
    const auto r = read_safetensors(path);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().kind, ErrorKind::parse_error);
    EXPECT_NE(r.error().message.find(needle), std::string::npos) << r.error().message;
  };
  const auto with_length = [](std::uint64_t len, std::string body) {
    std::string b(8, '\0');
    std::memcpy(b.data(), &len, 8);
    return b + body;
  };
  expect_error("abc", "truncated");
  expect_error(with_length(1ull << 62, "{}"), "header length");
  expect_error(with_length(1000, "{}"), "truncated");
  expect_error(with_length(5, "{\"a\":"), "not valid JSON");
  expect_error(with_length(2, "[]"), "JSON object");
  const std::string no_shape = R"({"w":{"dtype":"F32","data_offsets":[]}})";
  expect_error(with_length(no_shape.size(), no_shape), "shape");
  const std::string mismatch = R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,8]}})";
  expect_error(with_length(mismatch.size(), mismatch) + std::string(8, '\0'), "needs 16");
  const std::string beyond = R"({"w":{"dtype":"F16","shape":[4],"data_offsets":[0,8]}})";
  expect_error(with_length(beyond.size(), beyond), "truncated");
}

TEST(PlanFiles, LoadModelDispatch) {
  EXPECT_EQ(load_model("llama-3.1-8b").value().parameters, 8'030'261'248u);
  EXPECT_EQ(load_model("meta-llama/Llama-3.1-8B").value().source, ModelSource::catalogue);
  const auto unknown = load_model("no-such-model");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().kind, ErrorKind::not_found);
  EXPECT_NE(unknown.error().message.find("neither a file nor a catalogue model"), std::string::npos);
  EXPECT_EQ(load_model("").error().kind, ErrorKind::invalid_input);
  TempDir dir;
  write_file(dir.path() / "notes.txt", "hello");
  EXPECT_EQ(load_model((dir.path() / "notes.txt").string()).error().kind, ErrorKind::invalid_input);
  EXPECT_EQ(load_model(dir.str()).error().kind, ErrorKind::invalid_input);
  const auto gguf = tiny_gguf(dir.path() / "only.gguf", GgmlType::q8_0, 7);
  EXPECT_EQ(load_model(dir.str()).value().source, ModelSource::gguf);
  EXPECT_EQ(load_model(gguf.string()).value().parameters, tiny_params);
}

}  // namespace
