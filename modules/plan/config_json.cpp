// Hugging Face config.json: the architecture of a model from its own config.
module;
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <simdjson.h>
#include "json_input.hpp"
module hwaccel.plan;


namespace hwaccel {
namespace {

using simdjson::dom::element;
using simdjson::dom::object;

struct ConfigReader {
  object root;
  std::string_view name;

  bool has(std::string_view key) const {
    element e;
    return root[key].get(e) == simdjson::SUCCESS && !e.is_null();
  }

  Result<std::optional<std::uint64_t>> optional_uint(std::string_view key) const {
    element e;
    if (root[key].get(e) != simdjson::SUCCESS || e.is_null()) return std::optional<std::uint64_t>{};
    std::uint64_t v = 0;
    if (e.get_uint64().get(v) == simdjson::SUCCESS) return std::optional<std::uint64_t>{v};
    // Some configs write integers as 4096.0.
    double d = 0;
    if (e.get_double().get(d) == simdjson::SUCCESS && d >= 0 && d < 1.8e19 && d == static_cast<double>(static_cast<std::uint64_t>(d)))
      return std::optional<std::uint64_t>{static_cast<std::uint64_t>(d)};
    return fail(ErrorKind::parse_error, text::cat(name, ": \"", key, "\" must be a non-negative integer"));
  }

  Result<std::uint64_t> required_uint(std::string_view key) const {
    auto v = optional_uint(key);
    if (!v) return fail(v.error());
    if (!*v) return fail(ErrorKind::parse_error, text::cat(name, ": missing \"", key, "\""));
    return **v;
  }

  // The first of several names a field goes by.
  Result<std::optional<std::uint64_t>> first_uint(std::initializer_list<std::string_view> keys) const {
    for (auto k : keys) {
      auto v = optional_uint(k);
      if (!v || *v) return v;
    }
    return std::optional<std::uint64_t>{};
  }

  Result<std::optional<bool>> optional_bool(std::string_view key) const {
    element e;
    if (root[key].get(e) != simdjson::SUCCESS || e.is_null()) return std::optional<bool>{};
    bool b = false;
    if (e.get_bool().get(b) != simdjson::SUCCESS)
      return fail(ErrorKind::parse_error, text::cat(name, ": \"", key, "\" must be true or false"));
    return std::optional<bool>{b};
  }

  // A list of strings (layer_types) or integers (no_rope_layers), one entry a
  // layer, as "is this layer local" flags; empty when absent or not a list.
  std::vector<bool> local_flags(std::string_view key) const {
    std::vector<bool> out;
    simdjson::dom::array list;
    if (root[key].get_array().get(list) != simdjson::SUCCESS) return out;
    for (element e : list) {
      std::string_view kind;
      std::int64_t flag = 0;
      if (e.get_string().get(kind) == simdjson::SUCCESS)
        out.push_back(kind == "sliding_attention" || kind == "chunked_attention" || kind == "local_attention");
      else if (e.get_int64().get(flag) == simdjson::SUCCESS)
        out.push_back(flag != 0);  // no_rope_layers: 1 = RoPE (chunked), 0 = NoPE (global)
      else
        return {};
    }
    return out;
  }

  std::string string_or(std::string_view key, std::string_view fallback) const {
    std::string_view v;
    if (root[key].get_string().get(v) == simdjson::SUCCESS) return std::string(v);
    return std::string(fallback);
  }
};

// The pattern N of per-layer local flags: every N-th layer (N-1, 2N-1, ...)
// global, the others local; 0 when all are local. Flags that follow no such
// pattern get the N nearest their share of global layers (and a note).
std::uint32_t layer_pattern(const std::vector<bool>& local, std::uint32_t layers, std::vector<std::string>& notes,
                            std::string_view field) {
  std::uint32_t globals = 0, first_global = 0;
  for (std::uint32_t i = 0; i < local.size(); ++i)
    if (!local[i] && globals++ == 0) first_global = i;
  if (globals == 0) return 0;
  const std::uint32_t n = first_global + 1;
  bool regular = local.size() == layers;
  for (std::uint32_t i = 0; i < local.size() && regular; ++i) regular = local[i] == ((i + 1) % n != 0);
  if (regular) return n;
  const auto nearest = static_cast<std::uint32_t>(std::max<std::uint64_t>(
      1, (static_cast<std::uint64_t>(local.size()) + globals / 2) / globals));
  notes.push_back(text::cat(field, " follows no every-N-th-layer pattern: counted as ", globals, " global layers in ",
                            local.size(), ", one in every ", nearest));
  return nearest;
}

}  // namespace

Result<ModelDescription> model_from_config_json(std::string_view json, std::string_view name) {
  if (json.size() > max_config_json_bytes)
    return fail(ErrorKind::invalid_input,
                text::cat(name, " is ", json.size(), " bytes; a config.json is at most ", max_config_json_bytes));
  simdjson::dom::parser parser;
  element doc;
  if (const auto err = json_input::parse(parser, json).get(doc); err != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat(name, " is not valid JSON: ", simdjson::error_message(err)));
  ConfigReader r;
  r.name = name;
  if (doc.get_object().get(r.root) != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat(name, " must be a JSON object"));

  std::vector<std::string> notes;
  std::string family = r.string_or("model_type", "");
  // Multimodal configs keep the language model in text_config.
  if (!r.has("num_hidden_layers")) {
    object text_config;
    if (r.root["text_config"].get_object().get(text_config) == simdjson::SUCCESS) {
      r.root = text_config;
      notes.push_back("architecture read from text_config (the language model of a multimodal config)");
      if (const auto t = r.string_or("model_type", ""); !t.empty()) family = t;
    }
  }
  if (family.empty()) {
    family = "unknown";
    notes.push_back("config.json has no model_type; read with Llama-style field names");
  }

  // Field readers that keep the first error; checked once all are read.
  std::optional<Error> error;
  const auto keep = [&](auto result, auto fallback) {
    using T = typename decltype(result)::value_type;
    if (!result) {
      if (!error) error = result.error();
      return T(fallback);
    }
    return T(*result);
  };
  const auto req = [&](std::string_view key) { return keep(r.required_uint(key), std::uint64_t{0}); };
  const auto opt = [&](std::string_view key) { return keep(r.optional_uint(key), std::optional<std::uint64_t>{}); };
  const auto any_of = [&](std::initializer_list<std::string_view> keys) {
    return keep(r.first_uint(keys), std::optional<std::uint64_t>{});
  };
  const auto flag = [&](std::string_view key) { return keep(r.optional_bool(key), std::optional<bool>{}); };
  // Counts that must fit 32 bits; larger values are left for validate() to reject as 0.
  const auto u32 = [](std::uint64_t v) { return v > UINT32_MAX ? 0u : static_cast<std::uint32_t>(v); };

  ModelArchitecture a;
  a.family = family;
  a.layers = u32(req("num_hidden_layers"));
  a.hidden_size = req("hidden_size");
  a.attention_heads = u32(req("num_attention_heads"));
  a.vocab_size = req("vocab_size");
  const auto kv = opt("num_key_value_heads");
  const auto head_dim = opt("head_dim");
  const auto inter = opt("intermediate_size");
  const auto ctx = opt("max_position_embeddings");
  const auto tie = flag("tie_word_embeddings");
  const auto attention_bias = flag("attention_bias");
  if (error) return fail(*error);

  const bool gemma = family == "gemma" || family == "gemma2";
  a.kv_heads = kv ? u32(*kv) : a.attention_heads;  // the transformers default: multi-head attention
  if (head_dim) {
    a.head_dim = u32(*head_dim);
  } else if (a.attention_heads > 0) {
    if (a.hidden_size % a.attention_heads != 0)
      return fail(ErrorKind::invalid_input, text::cat(name, ": hidden_size (", a.hidden_size,
                                                      ") is not a multiple of num_attention_heads (", a.attention_heads,
                                                      ") and there is no head_dim"));
    a.head_dim = u32(a.hidden_size / a.attention_heads);
  }
  a.intermediate_size = inter.value_or(0);
  if (ctx) a.max_context = static_cast<std::uint32_t>(std::min<std::uint64_t>(*ctx, UINT32_MAX));
  if (tie) {
    a.tied_embeddings = *tie;
  } else {
    // transformers' defaults differ by model class: Gemma ties, the others do not.
    a.tied_embeddings = gemma;
    notes.push_back(text::cat("tie_word_embeddings absent: ", gemma ? "tied" : "untied", " (the ", family,
                              " default)"));
  }
  if (family == "qwen2" || family == "qwen2_moe") a.qkv_bias = true;  // Qwen2 always has q/k/v biases
  if (attention_bias.value_or(false)) {
    a.qkv_bias = true;
    notes.push_back("attention_bias: q/k/v biases counted; an o_proj bias is not");
  }
  if (family == "gemma2" || family == "gemma3" || family == "gemma3_text") a.norms_per_layer = 4;
  if (flag("use_sliding_window").value_or(true)) {
    if (const auto w = opt("sliding_window"); w && *w > 0 && (a.max_context == 0 || *w < a.max_context))
      a.sliding_window = u32(*w);
  }
  // Which layers slide: layer_types (newer transformers: Gemma 2/3, gpt-oss),
  // Gemma 3's sliding_window_pattern, or the family's fixed interleave.
  if (a.sliding_window) {
    const auto types = r.local_flags("layer_types");
    const auto pattern = any_of({"sliding_window_pattern", "_sliding_window_pattern"});
    if (!types.empty()) {
      if (std::find(types.begin(), types.end(), true) == types.end()) a.sliding_window.reset();  // all full_attention
      else a.sliding_window_pattern = layer_pattern(types, a.layers, notes, "layer_types");
    } else if (pattern && *pattern > 0) {
      a.sliding_window_pattern = u32(*pattern);
    } else if (family == "gemma2" || family == "gpt_oss") {
      a.sliding_window_pattern = 2;  // even layers slide, odd layers are global
    } else if (family == "gemma3" || family == "gemma3_text") {
      a.sliding_window_pattern = 6;  // transformers' Gemma3TextConfig default
    }
  }
  // Llama 4 chunked local attention: no_rope_layers marks the chunked (RoPE)
  // layers with 1; without it, every no_rope_layer_interval-th layer (4) is global.
  if (const auto chunk = opt("attention_chunk_size"); chunk && *chunk > 0 && (a.max_context == 0 || *chunk < a.max_context)) {
    a.attention_chunk = u32(*chunk);
    if (const auto rope = r.local_flags("no_rope_layers"); !rope.empty())
      a.attention_chunk_pattern = layer_pattern(rope, a.layers, notes, "no_rope_layers");
    else
      a.attention_chunk_pattern = u32(opt("no_rope_layer_interval").value_or(4));
  }
  if (error) return fail(*error);

  // Mixture of experts, under each family's field names.
  if (const auto experts = any_of({"num_local_experts", "n_routed_experts", "num_experts"}); experts && *experts > 0) {
    const auto per_token = any_of({"num_experts_per_tok", "moe_topk"});
    const auto moe_inter = opt("moe_intermediate_size");
    const auto shared = opt("n_shared_experts");
    const auto shared_width = opt("shared_expert_intermediate_size");
    const auto dense = opt("first_k_dense_replace");
    const auto step = opt("interleave_moe_layer_step");
    const auto dense_width = opt("intermediate_size_mlp");
    if (error) return fail(*error);
    if (!per_token) return fail(ErrorKind::parse_error, text::cat(name, ": missing \"num_experts_per_tok\""));
    a.moe.experts = u32(*experts);
    a.moe.experts_per_token = u32(*per_token);
    a.moe.expert_intermediate_size = moe_inter.value_or(a.intermediate_size);
    a.moe.shared_experts = u32(shared.value_or(0));
    if (shared_width && *shared_width > 0 && a.moe.expert_intermediate_size > 0) {
      // Qwen2-MoE: one shared expert as wide as several routed ones.
      if (*shared_width % a.moe.expert_intermediate_size != 0)
        return fail(ErrorKind::invalid_input, text::cat(name, ": shared_expert_intermediate_size is not a multiple of "
                                                              "moe_intermediate_size"));
      a.moe.shared_experts = u32(*shared_width / a.moe.expert_intermediate_size);
      notes.push_back("the shared expert's scalar gate (hidden_size weights) is not counted");
    }
    a.moe.first_dense_layers = u32(dense.value_or(0));
    if (family == "llama4" || family == "llama4_text") {
      // Llama 4: intermediate_size is the experts' width, intermediate_size_mlp
      // the dense layers'; every MoE layer has one shared expert; with
      // interleave_moe_layer_step n only layers n-1, 2n-1, ... are MoE.
      a.moe.shared_experts = 1;
      a.moe.layer_step = u32(step.value_or(1));
      if (dense_width && *dense_width > 0) a.intermediate_size = *dense_width;
    }
    // DeepSeek V3 routes with a per-expert score-correction bias.
    a.moe.router_bias = r.string_or("topk_method", "") == "noaux_tc";
  }

  // DeepSeek multi-head latent attention.
  if (const auto kv_lora = opt("kv_lora_rank"); kv_lora && *kv_lora > 0) {
    LatentAttention m;
    m.kv_lora_rank = u32(*kv_lora);
    m.q_lora_rank = u32(opt("q_lora_rank").value_or(0));
    m.qk_nope_head_dim = u32(req("qk_nope_head_dim"));
    m.qk_rope_head_dim = u32(req("qk_rope_head_dim"));
    m.v_head_dim = u32(req("v_head_dim"));
    const auto nextn = opt("num_nextn_predict_layers");
    if (error) return fail(*error);
    a.mla = m;
    a.head_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
    if (nextn.value_or(0) > 0)
      notes.push_back(text::cat("num_nextn_predict_layers = ", *nextn,
                                ": the multi-token-prediction layer(s) in the checkpoint are not counted"));
  }
  if (error) return fail(*error);
  if (a.has_dense_layers() && a.intermediate_size == 0)
    return fail(ErrorKind::parse_error, text::cat(name, ": missing \"intermediate_size\""));

  auto d = ModelDescription::from_architecture(std::string(name), std::move(a));
  if (!d) return fail(Error{d.error().kind, text::cat(name, ": ", d.error().message)});
  d->source = ModelSource::hf_config;
  d->notes = std::move(notes);
  // gpt-oss: quantization_config {"quant_method": "mxfp4"}, the experts in MXFP4.
  if (object quant; r.root["quantization_config"].get_object().get(quant) == simdjson::SUCCESS) {
    std::string_view method;
    if (quant["quant_method"].get_string().get(method) == simdjson::SUCCESS && method == "mxfp4")
      d->native_level = QuantizationLevel::mxfp4;
  }
  return d;
}

Result<ModelDescription> read_config_json(const std::filesystem::path& path) {
  const auto content = read_small_file(path.string(), max_config_json_bytes, "a config.json");
  if (!content) return fail(content.error());
  auto d = model_from_config_json(*content, path.filename().string());
  if (!d) return d;
  d->origin = path.string();
  if (const auto parent = path.parent_path().filename().string(); !parent.empty() && path.filename() == "config.json")
    d->name = parent;
  return d;
}

}  // namespace hwaccel
