// Hugging Face config.json: the architecture of a model from its own config.
module;
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
module hwaccel.plan;
import :internals;
import hwaccel.json_fields;

namespace hwaccel {
namespace {

using json::Field;

constexpr std::size_t max_config_layers = 1u << 20;  // per-layer lists (layer_types, no_rope_layers)

// What decides whether the language model's fields are at the top or in
// text_config (a multimodal config).
constexpr Field config_outer_fields[] = {
    Field::text("model_type"),
    Field::any("num_hidden_layers"),
    Field::object("text_config"),
};

// Every field the reader uses, under each family's names. A config.json
// holds many more, which the reader passes over.
constexpr Field config_fields[] = {
    Field::text("model_type"),
    Field::whole("num_hidden_layers", 0, UINT64_MAX, json::required),
    Field::whole("hidden_size", 0, UINT64_MAX, json::required),
    Field::whole("num_attention_heads", 0, UINT64_MAX, json::required),
    Field::whole("vocab_size", 0, UINT64_MAX, json::required),
    Field::whole("num_key_value_heads"),
    Field::whole("head_dim"),
    Field::whole("intermediate_size"),
    Field::whole("max_position_embeddings"),
    Field::boolean("tie_word_embeddings"),
    Field::boolean("attention_bias"),
    Field::boolean("use_sliding_window"),
    Field::whole("sliding_window"),
    Field::array("layer_types", json::Type::any, max_config_layers),
    Field::whole("sliding_window_pattern"),
    Field::whole("_sliding_window_pattern"),
    Field::whole("attention_chunk_size"),
    Field::array("no_rope_layers", json::Type::any, max_config_layers),
    Field::whole("no_rope_layer_interval"),
    // Mixture of experts.
    Field::whole("num_local_experts"),
    Field::whole("n_routed_experts"),
    Field::whole("num_experts"),
    Field::whole("num_experts_per_tok"),
    Field::whole("moe_topk"),
    Field::whole("moe_intermediate_size"),
    Field::whole("n_shared_experts"),
    Field::whole("shared_expert_intermediate_size"),
    Field::whole("first_k_dense_replace"),
    Field::whole("interleave_moe_layer_step"),
    Field::whole("intermediate_size_mlp"),
    Field::text("topk_method"),
    // Falcon's own names and layout switches (transformers' FalconConfig).
    Field::whole("num_kv_heads"),
    Field::whole("ffn_hidden_size"),
    Field::boolean("new_decoder_architecture"),
    Field::boolean("parallel_attn"),
    Field::boolean("multi_query"),
    Field::boolean("bias"),
    // DeepSeek multi-head latent attention.
    Field::whole("kv_lora_rank"),
    Field::whole("q_lora_rank"),
    Field::whole("qk_nope_head_dim"),
    Field::whole("qk_rope_head_dim"),
    Field::whole("v_head_dim"),
    Field::whole("num_nextn_predict_layers"),
    Field::object("quantization_config"),
};

constexpr Field quantization_config_fields[] = {
    Field::text("quant_method"),
};

// A list of strings (layer_types) or integers (no_rope_layers), one entry a
// layer, as "is this layer local" flags; empty when absent or when an entry
// is neither.
std::vector<bool> local_flags(const json::Object& o, std::string_view key) {
  std::vector<bool> out;
  for (const json::Value& e : o.values(key)) {
    if (e.kind() == json::Value::Kind::string) {
      const std::string_view kind = e.string();
      out.push_back(kind == "sliding_attention" || kind == "chunked_attention" || kind == "local_attention");
    } else if (const auto n = e.number(); n && *n == std::floor(*n)) {
      out.push_back(*n != 0);  // no_rope_layers: 1 = RoPE (chunked), 0 = NoPE (global)
    } else {
      return {};
    }
  }
  return out;
}

// The first of several names a field goes by.
std::optional<std::uint64_t> first_whole(const json::Object& o, std::initializer_list<std::string_view> keys) {
  for (auto k : keys)
    if (const auto v = o.whole(k)) return v;
  return std::nullopt;
}

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

namespace config_detail {

Result<ConfigArchitecture> architecture_of_config(json::Value config, std::string_view where) {
  auto outer = json::Object::read(config, config_outer_fields, std::string(where), json::Keys::open);
  if (!outer) return fail(outer.error());
  ConfigArchitecture out;
  auto& notes = out.notes;
  std::string family(outer->text("model_type"));
  // Multimodal configs keep the language model in text_config.
  json::Value fields_of = config;
  std::string fields_where(where);
  if (!outer->has("num_hidden_layers") && outer->has("text_config")) {
    fields_of = *outer->value("text_config");
    fields_where = text::cat(where, ": text_config");
    notes.push_back("architecture read from text_config (the language model of a multimodal config)");
  }
  auto read = json::Object::read(fields_of, config_fields, fields_where, json::Keys::open);
  if (!read) return fail(read.error());
  const json::Object& o = *read;
  if (fields_where != where && o.has("model_type")) family = std::string(o.text("model_type"));
  if (family.empty()) {
    family = "unknown";
    notes.push_back("config.json has no model_type; read with Llama-style field names");
  }

  // Counts that must fit 32 bits; larger values are left for validate() to reject as 0.
  const auto u32 = [](std::uint64_t v) { return v > UINT32_MAX ? 0u : static_cast<std::uint32_t>(v); };
  const auto whole = [&](std::string_view key) { return o.whole(key); };

  ModelArchitecture& a = out.architecture;
  a.family = family;
  a.layers = u32(*whole("num_hidden_layers"));
  a.hidden_size = *whole("hidden_size");
  a.attention_heads = u32(*whole("num_attention_heads"));
  a.vocab_size = *whole("vocab_size");
  const auto kv = whole("num_key_value_heads");
  const auto head_dim = whole("head_dim");
  const auto inter = whole("intermediate_size");
  const auto ctx = whole("max_position_embeddings");
  const auto tie = o.boolean("tie_word_embeddings");
  const auto attention_bias = o.boolean("attention_bias");

  const bool gemma = family == "gemma" || family == "gemma2";
  const bool falcon = family == "falcon";
  a.kv_heads = kv ? u32(*kv) : a.attention_heads;  // the transformers default: multi-head attention
  const bool falcon_new_decoder = falcon && o.boolean("new_decoder_architecture").value_or(false);
  if (falcon) {
    // Falcon: num_kv_heads with the new decoder architecture (40B, 180B) or
    // without multi_query; else one KV head shared by all (7B).
    if (falcon_new_decoder || !o.boolean("multi_query").value_or(true))
      a.kv_heads = u32(whole("num_kv_heads").value_or(a.attention_heads));
    else
      a.kv_heads = 1;
  }
  if (head_dim) {
    a.head_dim = u32(*head_dim);
  } else if (a.attention_heads > 0) {
    if (a.hidden_size % a.attention_heads != 0)
      return fail(o.error(text::cat("hidden_size (", a.hidden_size, ") is not a multiple of num_attention_heads (",
                                    a.attention_heads, ") and there is no head_dim")));
    a.head_dim = u32(a.hidden_size / a.attention_heads);
  }
  a.intermediate_size = inter.value_or(0);
  if (ctx) a.max_context = static_cast<std::uint32_t>(std::min<std::uint64_t>(*ctx, UINT32_MAX));
  if (falcon) {
    // A two-matrix MLP of ffn_hidden_size (4 x hidden_size by default), LayerNorms
    // with biases, 2048 positions unless said; one norm before the parallel
    // attention and MLP, or one for each with the new decoder architecture.
    a.intermediate_size = whole("ffn_hidden_size").value_or(4 * a.hidden_size);
    a.gated_ffn = false;
    a.norm_bias = true;
    if (!ctx) a.max_context = 2048;
    a.norms_per_layer = falcon_new_decoder || !o.boolean("parallel_attn").value_or(true) ? 2 : 1;
    if (o.boolean("bias").value_or(false)) {
      a.qkv_bias = true;
      notes.push_back("bias: q/k/v biases counted; the other linear layers' are not");
    }
  }
  if (tie) {
    a.tied_embeddings = *tie;
  } else {
    // transformers' defaults differ by model class: Gemma and Falcon tie, the others do not.
    a.tied_embeddings = gemma || falcon;
    notes.push_back(text::cat("tie_word_embeddings absent: ", a.tied_embeddings ? "tied" : "untied", " (the ", family,
                              " default)"));
  }
  if (family == "phimoe") a.norm_bias = true;  // Phi-3.5-MoE's LayerNorms have biases
  if (family == "qwen2" || family == "qwen2_moe") a.qkv_bias = true;  // Qwen2 always has q/k/v biases
  if (attention_bias.value_or(false)) {
    a.qkv_bias = true;
    notes.push_back("attention_bias: q/k/v biases counted; an o_proj bias is not");
  }
  if (family == "gemma2" || family == "gemma3" || family == "gemma3_text") a.norms_per_layer = 4;
  // OLMo 2: norms after attention and after the MLP, and over the full query and key widths.
  if (family == "olmo2") a.norms_per_layer = 4;
  if (o.boolean("use_sliding_window").value_or(true)) {
    if (const auto w = whole("sliding_window"); w && *w > 0 && (a.max_context == 0 || *w < a.max_context))
      a.sliding_window = u32(*w);
  }
  // Which layers slide: layer_types (newer transformers: Gemma 2/3, gpt-oss),
  // Gemma 3's sliding_window_pattern, or the family's fixed interleave.
  if (a.sliding_window) {
    const auto types = local_flags(o, "layer_types");
    const auto pattern = first_whole(o, {"sliding_window_pattern", "_sliding_window_pattern"});
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
  if (const auto chunk = whole("attention_chunk_size"); chunk && *chunk > 0 && (a.max_context == 0 || *chunk < a.max_context)) {
    a.attention_chunk = u32(*chunk);
    if (const auto rope = local_flags(o, "no_rope_layers"); !rope.empty())
      a.attention_chunk_pattern = layer_pattern(rope, a.layers, notes, "no_rope_layers");
    else
      a.attention_chunk_pattern = u32(whole("no_rope_layer_interval").value_or(4));
  }

  // Mixture of experts, under each family's field names.
  if (const auto experts = first_whole(o, {"num_local_experts", "n_routed_experts", "num_experts"}); experts && *experts > 0) {
    const auto per_token = first_whole(o, {"num_experts_per_tok", "moe_topk"});
    const auto shared_width = whole("shared_expert_intermediate_size");
    if (!per_token) return fail(o.missing("num_experts_per_tok"));
    a.moe.experts = u32(*experts);
    a.moe.experts_per_token = u32(*per_token);
    a.moe.expert_intermediate_size = whole("moe_intermediate_size").value_or(a.intermediate_size);
    a.moe.shared_experts = u32(whole("n_shared_experts").value_or(0));
    if (shared_width && *shared_width > 0 && a.moe.expert_intermediate_size > 0) {
      // Qwen2-MoE: one shared expert as wide as several routed ones.
      if (*shared_width % a.moe.expert_intermediate_size != 0)
        return fail(o.error("shared_expert_intermediate_size is not a multiple of moe_intermediate_size"));
      a.moe.shared_experts = u32(*shared_width / a.moe.expert_intermediate_size);
      notes.push_back("the shared expert's scalar gate (hidden_size weights) is not counted");
    }
    a.moe.first_dense_layers = u32(whole("first_k_dense_replace").value_or(0));
    if (family == "llama4" || family == "llama4_text") {
      // Llama 4: intermediate_size is the experts' width, intermediate_size_mlp
      // the dense layers'; every MoE layer has one shared expert; with
      // interleave_moe_layer_step n only layers n-1, 2n-1, ... are MoE.
      a.moe.shared_experts = 1;
      a.moe.layer_step = u32(whole("interleave_moe_layer_step").value_or(1));
      if (const auto dense_width = whole("intermediate_size_mlp"); dense_width && *dense_width > 0)
        a.intermediate_size = *dense_width;
    }
    // DeepSeek V3 (and Kimi K2) route with a per-expert score-correction
    // bias, GLM-4.5 likewise; gpt-oss's router is a linear layer with a bias.
    a.moe.router_bias = o.text("topk_method") == "noaux_tc" || family == "glm4_moe" || family == "gpt_oss";
  }

  // DeepSeek multi-head latent attention.
  if (const auto kv_lora = whole("kv_lora_rank"); kv_lora && *kv_lora > 0) {
    LatentAttention m;
    m.kv_lora_rank = u32(*kv_lora);
    m.q_lora_rank = u32(whole("q_lora_rank").value_or(0));
    for (const std::string_view key : {"qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"})
      if (!o.has(key)) return fail(o.missing(key));
    m.qk_nope_head_dim = u32(*whole("qk_nope_head_dim"));
    m.qk_rope_head_dim = u32(*whole("qk_rope_head_dim"));
    m.v_head_dim = u32(*whole("v_head_dim"));
    a.mla = m;
    a.head_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
    if (const auto nextn = whole("num_nextn_predict_layers"); nextn.value_or(0) > 0)
      notes.push_back(text::cat("num_nextn_predict_layers = ", *nextn,
                                ": the multi-token-prediction layer(s) in the checkpoint are not counted"));
  }
  if (a.has_dense_layers() && a.intermediate_size == 0) return fail(o.missing("intermediate_size"));

  // gpt-oss: quantization_config {"quant_method": "mxfp4"}, the experts in MXFP4.
  if (const auto quant = o.value("quantization_config")) {
    auto q = json::Object::read(*quant, quantization_config_fields, text::cat(fields_where, ": quantization_config"),
                                json::Keys::open);
    if (!q) return fail(q.error());
    if (q->text("quant_method") == "mxfp4") out.native_level = QuantizationLevel::mxfp4;
  }
  return out;
}

}  // namespace config_detail

Result<ModelDescription> model_from_config_json(std::string_view json, std::string_view name) {
  if (json.size() > max_config_json_bytes)
    return fail(ErrorKind::invalid_input,
                text::cat(name, " is ", json.size(), " bytes; a config.json is at most ", max_config_json_bytes));
  auto doc = json::Document::parse(json, name);
  if (!doc) return fail(doc.error());
  auto config = config_detail::architecture_of_config(doc->root(), name);
  if (!config) return fail(config.error());
  auto d = ModelDescription::from_architecture(std::string(name), std::move(config->architecture));
  if (!d) return fail(Error{d.error().kind, text::cat(name, ": ", d.error().message)});
  d->source = ModelSource::hf_config;
  d->notes = std::move(config->notes);
  d->native_level = config->native_level;
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
