// safetensors model files: the header (or an index of shards) read with
// bounds, and the architecture the tensor names and shapes imply.
module;
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "posix_compat.hpp"

#include <simdjson.h>
#include "json_input.hpp"
module hwaccel.plan;

#include "model_file_support.hpp"

namespace hwaccel {
namespace {

using namespace model_files;

// --- safetensors -------------------------------------------------------------

std::optional<double> safetensors_dtype_bytes(std::string_view dtype) {
  if (dtype == "F64" || dtype == "I64" || dtype == "U64") return 8;
  if (dtype == "F32" || dtype == "I32" || dtype == "U32") return 4;
  if (dtype == "F16" || dtype == "BF16" || dtype == "I16" || dtype == "U16") return 2;
  if (dtype == "I8" || dtype == "U8" || dtype == "BOOL" || dtype == "F8_E4M3" || dtype == "F8_E5M2" ||
      dtype == "F8_E8M0")
    return 1;
  return std::nullopt;
}

struct SafetensorsTensor {
  std::string name;
  std::string dtype;
  std::vector<std::uint64_t> shape;
  std::uint64_t elements = 0;
  std::uint64_t bytes = 0;
};

Result<std::vector<SafetensorsTensor>> read_safetensors_header(const std::filesystem::path& path) {
  auto opened = BinaryFile::open(path);
  if (!opened) return fail(opened.error());
  const BinaryFile& file = *opened;
  if (file.size() < 8)
    return fail(ErrorKind::parse_error, text::cat(path.string(), ": truncated safetensors file (", file.size(),
                                                  " bytes; the header length alone is 8)"));
  char prefix[8];
  if (auto r = file.read_at(0, prefix, 8); !r) return fail(r.error());
  std::uint64_t header_len = 0;
  std::memcpy(&header_len, prefix, 8);  // little-endian u64
  if (header_len == 0 || header_len > max_safetensors_header_bytes)
    return fail(ErrorKind::parse_error, text::cat(path.string(), ": safetensors header length ", header_len,
                                                  " is outside 1..", max_safetensors_header_bytes));
  if (header_len > file.size() - 8)
    return fail(ErrorKind::parse_error, text::cat(path.string(), ": truncated safetensors file: the header claims ",
                                                  header_len, " bytes, the file has ", file.size() - 8, " after the length"));
  std::string header(header_len, '\0');
  if (auto r = file.read_at(8, header.data(), header_len); !r) return fail(r.error());
  const std::uint64_t data_size = file.size() - 8 - header_len;

  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (const auto err = json_input::parse(parser, header).get(doc); err != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat(path.string(), ": safetensors header is not valid JSON: ",
                                                  simdjson::error_message(err)));
  simdjson::dom::object root;
  if (doc.get_object().get(root) != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat(path.string(), ": safetensors header must be a JSON object"));
  std::vector<SafetensorsTensor> tensors;
  for (auto [key, value] : root) {
    if (key == "__metadata__") continue;
    const auto bad = [&](std::string_view why) {
      return fail(ErrorKind::parse_error, text::cat(path.string(), ": tensor ", text::excerpt(key), ": ", why));
    };
    simdjson::dom::object o;
    if (value.get_object().get(o) != simdjson::SUCCESS) return bad("must be an object");
    SafetensorsTensor t;
    t.name = std::string(key);
    std::string_view dtype;
    if (o["dtype"].get_string().get(dtype) != simdjson::SUCCESS) return bad("missing \"dtype\"");
    t.dtype = std::string(dtype);
    simdjson::dom::array shape, offsets;
    if (o["shape"].get_array().get(shape) != simdjson::SUCCESS) return bad("missing \"shape\"");
    if (o["data_offsets"].get_array().get(offsets) != simdjson::SUCCESS) return bad("missing \"data_offsets\"");
    t.elements = 1;
    for (auto dim : shape) {
      std::uint64_t n = 0;
      if (dim.get_uint64().get(n) != simdjson::SUCCESS) return bad("shape must be non-negative integers");
      const auto product = text::checked_mul(t.elements, n);
      if (!product || *product > (1ull << 50)) return bad("absurd shape");
      t.elements = *product;
      t.shape.push_back(n);
      if (t.shape.size() > 8) return bad("more than 8 dimensions");
    }
    std::uint64_t begin = 0, end = 0;
    std::size_t i = 0;
    for (auto off : offsets) {
      std::uint64_t v = 0;
      if (off.get_uint64().get(v) != simdjson::SUCCESS) return bad("data_offsets must be integers");
      (i == 0 ? begin : end) = v;
      if (++i > 2) return bad("data_offsets must be [begin, end]");
    }
    if (i != 2 || end < begin) return bad("data_offsets must be [begin, end] with begin <= end");
    if (end > data_size)
      return bad(text::cat("data ends at byte ", end, " of a data section of ", data_size, " bytes (truncated file?)"));
    t.bytes = end - begin;
    if (const auto size = safetensors_dtype_bytes(t.dtype)) {
      const auto expected = text::checked_mul(t.elements, static_cast<std::uint64_t>(*size));
      if (!expected || *expected != t.bytes)
        return bad(text::cat("data_offsets span ", t.bytes, " bytes but ", t.dtype, " x shape needs ",
                             expected ? *expected : 0));
    }
    tensors.push_back(std::move(t));
  }
  return tensors;
}

std::optional<QuantizationLevel> level_of_safetensors_dtype(std::string_view dtype) {
  if (dtype == "BF16") return QuantizationLevel::bf16;
  if (dtype == "F16") return QuantizationLevel::fp16;
  if (dtype == "F32") return QuantizationLevel::fp32;
  if (dtype == "F8_E4M3") return QuantizationLevel::fp8_e4m3;
  if (dtype == "F8_E5M2") return QuantizationLevel::fp8_e5m2;
  if (dtype == "I8") return QuantizationLevel::int8;
  return std::nullopt;
}

// The architecture of a Llama-style checkpoint from its tensor names and
// shapes, for a safetensors file without a config.json beside it.
Result<ModelArchitecture> infer_architecture(const std::vector<SafetensorsTensor>& tensors, std::vector<std::string>& notes) {
  std::map<std::string, const SafetensorsTensor*, std::less<>> by_name;
  std::uint32_t layers = 0;
  bool experts = false;
  for (const auto& t : tensors) {
    by_name.emplace(t.name, &t);
    if (const auto l = layer_of(t.name, "model.layers.")) layers = std::max(layers, *l + 1);
    experts |= t.name.find(".experts.") != std::string::npos;
  }
  if (experts)
    return fail(ErrorKind::invalid_input, "a mixture-of-experts checkpoint needs its config.json: experts per token is "
                                          "not in the weights");
  const auto shape = [&](std::string_view name) -> const std::vector<std::uint64_t>* {
    const auto it = by_name.find(name);
    return it == by_name.end() || it->second->shape.size() != 2 ? nullptr : &it->second->shape;
  };
  const auto* embed = shape("model.embed_tokens.weight");
  const auto* q = shape("model.layers.0.self_attn.q_proj.weight");
  const auto* k = shape("model.layers.0.self_attn.k_proj.weight");
  const auto* up = shape("model.layers.0.mlp.up_proj.weight");
  if (!embed || !q || !k || !up || layers == 0)
    return fail(ErrorKind::invalid_input,
                "cannot infer the architecture: no config.json beside the weights and the tensor names are not "
                "Llama-style (model.embed_tokens, model.layers.N.self_attn.q_proj, mlp.up_proj)");
  ModelArchitecture a;
  a.family = "llama";
  a.layers = layers;
  a.vocab_size = (*embed)[0];
  a.hidden_size = (*embed)[1];
  a.intermediate_size = (*up)[0];
  a.tied_embeddings = !by_name.contains("lm_head.weight");
  a.qkv_bias = by_name.contains("model.layers.0.self_attn.q_proj.bias");
  a.gated_ffn = by_name.contains("model.layers.0.mlp.gate_proj.weight");
  // Head counts are not in the shapes, only their products with head_dim.
  a.head_dim = (*q)[0] % 128 == 0 && (*k)[0] % 128 == 0 ? 128 : 64;
  a.attention_heads = static_cast<std::uint32_t>((*q)[0] / a.head_dim);
  a.kv_heads = static_cast<std::uint32_t>((*k)[0] / a.head_dim);
  notes.push_back(text::cat("no config.json beside the weights: architecture inferred from tensor shapes, head_dim "
                            "assumed to be ",
                            a.head_dim, " (heads and KV heads follow from it)"));
  return a;
}

Result<ModelDescription> describe_safetensors(const std::vector<SafetensorsTensor>& tensors,
                                              const std::filesystem::path& path, std::size_t shards) {
  std::vector<std::string> notes;
  StoredWeights stored;
  std::uint64_t params = 0;
  bool packed_int4 = false;
  std::map<std::string, std::uint64_t, std::less<>> params_by_dtype;
  for (const auto& t : tensors) {
    std::uint64_t p = t.elements;
    std::string_view dtype = t.dtype;
    // GPTQ/AWQ pack eight 4-bit weights in each int32 of qweight; their
    // scales, zeros and group indices are storage, not parameters.
    if (t.name.ends_with(".qweight")) {
      p = t.elements * 8;
      packed_int4 = true;
      dtype = "INT4 (packed)";
    } else if (t.name.ends_with(".scales") || t.name.ends_with(".qzeros") || t.name.ends_with(".g_idx")) {
      p = 0;
    }
    params += p;
    add_dtype(stored.by_dtype, dtype, p, t.bytes);
    params_by_dtype[std::string(dtype)] += p;
    if (const auto l = layer_of(t.name, "model.layers.")) {
      if (*l >= stored.layer_bytes.size()) stored.layer_bytes.resize(*l + 1, 0);
      stored.layer_bytes[*l] += t.bytes;
    } else if (t.name == "model.embed_tokens.weight") {
      stored.embedding_bytes += t.bytes;
    } else if (t.name == "lm_head.weight" || t.name == "model.norm.weight") {
      stored.head_bytes += t.bytes;
    } else {
      stored.other_bytes += t.bytes;
    }
  }
  if (params == 0) return fail(ErrorKind::invalid_input, text::cat(path.string(), ": no tensors"));
  sort_dtypes(stored.by_dtype);
  if (packed_int4) {
    stored.level = QuantizationLevel::int4;
  } else {
    std::string_view top;
    std::uint64_t most = 0;
    for (const auto& [dtype, p] : params_by_dtype)
      if (p > most) {
        most = p;
        top = dtype;
      }
    stored.level = level_of_safetensors_dtype(top);
  }

  // The architecture: config.json beside the weights, else inferred.
  const auto dir = path.parent_path();
  ModelDescription d;
  if (path_kind((dir / "config.json").string()) != PathKind::missing) {
    auto config = read_config_json(dir / "config.json");
    if (!config) return config;
    d = std::move(*config);
  } else {
    auto a = infer_architecture(tensors, notes);
    if (!a) return fail(Error{a.error().kind, text::cat(path.string(), ": ", a.error().message)});
    auto described = ModelDescription::from_architecture(path.filename().string(), std::move(*a));
    if (!described) return fail(Error{described.error().kind, text::cat(path.string(), ": ", described.error().message)});
    d = std::move(*described);
  }
  if (d.architecture.layers != stored.layer_bytes.size() && !stored.layer_bytes.empty())
    notes.push_back(text::cat("the weights hold ", stored.layer_bytes.size(), " layers, the config ", d.architecture.layers));
  // The files are authoritative for the count; the architecture's count is kept as active.
  if (params != d.parameters)
    notes.push_back(text::cat("parameter count from the weights (", params, ") differs from the config's architecture (",
                              d.parameters, "): extra or missing tensors"));
  if (d.parameters > 0 && d.active_parameters == d.parameters) d.active_parameters = params;
  d.parameters = params;
  d.exact_parameters = true;
  d.source = ModelSource::safetensors;
  d.origin = path.string();
  d.name = dir.filename().empty() ? path.filename().string() : dir.filename().string();
  d.stored = std::move(stored);
  if (shards > 1) notes.push_back(text::cat("read the headers of ", shards, " shards"));
  for (auto& n : notes) d.notes.push_back(std::move(n));
  return d;
}

Result<ModelDescription> read_safetensors_index(const std::filesystem::path& path) {
  const auto sized = regular_file_size(path.string());
  if (!sized) return fail(sized.error());
  const std::uint64_t size = *sized;
  if (size > max_safetensors_index_bytes)
    return fail(ErrorKind::invalid_input, text::cat(path.string(), " is ", size, " bytes; an index is at most ",
                                                    max_safetensors_index_bytes));
  auto opened = BinaryFile::open(path);
  if (!opened) return fail(opened.error());
  std::string json(size, '\0');
  if (auto r = opened->read_at(0, json.data(), size); !r) return fail(r.error());
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (const auto err = json_input::parse(parser, json).get(doc); err != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat(path.string(), " is not valid JSON: ", simdjson::error_message(err)));
  simdjson::dom::object weight_map;
  if (doc["weight_map"].get_object().get(weight_map) != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat(path.string(), ": missing \"weight_map\" object"));
  std::set<std::string> shards;
  for (auto [tensor, file] : weight_map) {
    std::string_view name;
    if (file.get_string().get(name) != simdjson::SUCCESS)
      return fail(ErrorKind::parse_error, text::cat(path.string(), ": weight_map values must be file names"));
    // Shards live beside the index: a path in a name would reach elsewhere.
    if (name.empty() || name.find('/') != std::string_view::npos || name.find('\\') != std::string_view::npos ||
        name == "." || name == "..")
      return fail(ErrorKind::parse_error, text::cat(path.string(), ": shard name '", text::excerpt(name),
                                                    "' is not a plain file name"));
    shards.insert(std::string(name));
    if (shards.size() > max_safetensors_shards)
      return fail(ErrorKind::invalid_input, text::cat(path.string(), ": more than ", max_safetensors_shards, " shards"));
  }
  if (shards.empty()) return fail(ErrorKind::parse_error, text::cat(path.string(), ": weight_map is empty"));
  std::vector<SafetensorsTensor> all;
  for (const auto& shard : shards) {
    auto tensors = read_safetensors_header(path.parent_path() / shard);
    if (!tensors) return fail(tensors.error());
    for (auto& t : *tensors) all.push_back(std::move(t));
  }
  return describe_safetensors(all, path, shards.size());
}

}  // namespace

Result<ModelDescription> read_safetensors(const std::filesystem::path& path) {
  const std::string name = path.filename().string();
  if (name.ends_with(".index.json")) return read_safetensors_index(path);
  auto tensors = read_safetensors_header(path);
  if (!tensors) return fail(tensors.error());
  return describe_safetensors(*tensors, path, 1);
}

}  // namespace hwaccel
