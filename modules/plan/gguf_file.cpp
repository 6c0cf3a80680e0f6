// GGUF model files: the header read with bounds on every count and length
// (hostile-input-safe, tensor data never loaded), and the model it describes.
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

// --- GGUF --------------------------------------------------------------------

// Sequential little-endian reader over a GGUF header with a 1 MiB window.
// Every length read from the file is checked against what is left before it
// is used, so a hostile count or length is an error, never an allocation.
class GgufCursor {
 public:
  explicit GgufCursor(const BinaryFile& file) : file_(file) {}

  std::uint64_t position() const noexcept { return pos_; }
  std::uint64_t remaining() const noexcept { return file_.size() - pos_; }

  Result<void> need(std::uint64_t n, std::string_view what) const {
    if (n > remaining())
      return fail(ErrorKind::parse_error,
                  text::cat(file_.path(), ": truncated GGUF: ", what, " at offset ", pos_, " needs ", n,
                            " bytes, the file has ", remaining(), " left (", file_.size(), " bytes in all)"));
    if (pos_ + n > max_gguf_header_bytes)
      return fail(ErrorKind::invalid_input, text::cat(file_.path(), ": GGUF header is larger than ", max_gguf_header_bytes,
                                                      " bytes (at ", what, ")"));
    return {};
  }

  Result<void> read(char* dst, std::uint64_t n, std::string_view what) {
    if (auto r = need(n, what); !r) return r;
    while (n > 0) {
      if (pos_ < window_start_ || pos_ >= window_start_ + window_.size()) {
        // A header handed over alone (the page's file.slice) ends before
        // the file's size: the window holds what is there.
        const std::uint64_t len = std::min<std::uint64_t>(window_capacity, file_.size() - pos_);
        window_.resize(len);
        const auto got = file_.read_some(pos_, window_.data(), len);
        if (!got) return fail(got.error());
        window_.resize(*got);
        window_start_ = pos_;
      }
      const std::uint64_t in_window = window_start_ + window_.size() - pos_;
      const std::uint64_t take = std::min(n, in_window);
      std::memcpy(dst, window_.data() + (pos_ - window_start_), take);
      dst += take;
      n -= take;
      pos_ += take;
    }
    return {};
  }

  Result<void> skip(std::uint64_t n, std::string_view what) {
    if (auto r = need(n, what); !r) return r;
    pos_ += n;
    return {};
  }

  template <class T>
  Result<T> scalar(std::string_view what) {
    char bytes[sizeof(T)];
    if (auto r = read(bytes, sizeof(T), what); !r) return fail(r.error());
    T v;
    std::memcpy(&v, bytes, sizeof(T));  // GGUF is little-endian, as is every host this library builds for
    return v;
  }

  // A GGUF string; longer than `keep` is skipped and reported as nullopt.
  Result<std::optional<std::string>> string(std::string_view what, std::uint64_t keep) {
    auto len = scalar<std::uint64_t>(what);
    if (!len) return fail(len.error());
    if (auto r = need(*len, what); !r) return fail(r.error());
    if (*len > keep) {
      pos_ += *len;
      return std::optional<std::string>{};
    }
    std::string s(*len, '\0');
    if (auto r = read(s.data(), *len, what); !r) return fail(r.error());
    return std::optional<std::string>{std::move(s)};
  }

 private:
  static constexpr std::uint64_t window_capacity = 1 << 20;
  const BinaryFile& file_;
  std::uint64_t pos_ = 0;
  std::uint64_t window_start_ = 0;
  std::vector<char> window_;
};

enum GgufValueType : std::uint32_t {
  gguf_u8 = 0, gguf_i8 = 1, gguf_u16 = 2, gguf_i16 = 3, gguf_u32 = 4, gguf_i32 = 5, gguf_f32 = 6,
  gguf_bool = 7, gguf_string = 8, gguf_array = 9, gguf_u64 = 10, gguf_i64 = 11, gguf_f64 = 12,
};

std::optional<std::uint64_t> fixed_size(std::uint32_t type) {
  switch (type) {
    case gguf_u8: case gguf_i8: case gguf_bool: return 1;
    case gguf_u16: case gguf_i16: return 2;
    case gguf_u32: case gguf_i32: case gguf_f32: return 4;
    case gguf_u64: case gguf_i64: case gguf_f64: return 8;
    default: return std::nullopt;
  }
}

// What is kept of a metadata value: integers (and the largest element of an
// integer array, for per-layer fields), strings, and array lengths.
struct GgufValue {
  std::optional<std::uint64_t> integer;
  std::optional<std::string> text;
  std::optional<std::uint64_t> array_length;
};

constexpr std::uint64_t max_kept_array = 1 << 16;
constexpr int max_array_depth = 3;

Result<std::optional<std::uint64_t>> read_integer(GgufCursor& c, std::uint32_t type, std::string_view what) {
  switch (type) {
    case gguf_u8: { auto v = c.scalar<std::uint8_t>(what); if (!v) return fail(v.error()); return std::optional<std::uint64_t>{*v}; }
    case gguf_i8: { auto v = c.scalar<std::int8_t>(what); if (!v) return fail(v.error()); return *v < 0 ? std::optional<std::uint64_t>{} : std::optional<std::uint64_t>{static_cast<std::uint64_t>(*v)}; }
    case gguf_u16: { auto v = c.scalar<std::uint16_t>(what); if (!v) return fail(v.error()); return std::optional<std::uint64_t>{*v}; }
    case gguf_i16: { auto v = c.scalar<std::int16_t>(what); if (!v) return fail(v.error()); return *v < 0 ? std::optional<std::uint64_t>{} : std::optional<std::uint64_t>{static_cast<std::uint64_t>(*v)}; }
    case gguf_u32: { auto v = c.scalar<std::uint32_t>(what); if (!v) return fail(v.error()); return std::optional<std::uint64_t>{*v}; }
    case gguf_i32: { auto v = c.scalar<std::int32_t>(what); if (!v) return fail(v.error()); return *v < 0 ? std::optional<std::uint64_t>{} : std::optional<std::uint64_t>{static_cast<std::uint64_t>(*v)}; }
    case gguf_u64: { auto v = c.scalar<std::uint64_t>(what); if (!v) return fail(v.error()); return std::optional<std::uint64_t>{*v}; }
    case gguf_i64: { auto v = c.scalar<std::int64_t>(what); if (!v) return fail(v.error()); return *v < 0 ? std::optional<std::uint64_t>{} : std::optional<std::uint64_t>{static_cast<std::uint64_t>(*v)}; }
    default: break;
  }
  return std::optional<std::uint64_t>{};
}

bool is_integer_type(std::uint32_t type) {
  return type == gguf_u8 || type == gguf_i8 || type == gguf_u16 || type == gguf_i16 || type == gguf_u32 ||
         type == gguf_i32 || type == gguf_u64 || type == gguf_i64;
}

Result<GgufValue> read_value(GgufCursor& c, std::uint32_t type, const std::string& key, int depth) {
  GgufValue v;
  const std::string what = text::cat("value of ", text::excerpt(key));
  if (is_integer_type(type)) {
    auto i = read_integer(c, type, what);
    if (!i) return fail(i.error());
    v.integer = *i;
    return v;
  }
  switch (type) {
    case gguf_f32:
    case gguf_f64:
    case gguf_bool: {
      if (auto r = c.skip(*fixed_size(type), what); !r) return fail(r.error());
      return v;
    }
    case gguf_string: {
      auto s = c.string(what, max_gguf_string_bytes);
      if (!s) return fail(s.error());
      v.text = std::move(*s);
      return v;
    }
    case gguf_array: {
      if (depth >= max_array_depth)
        return fail(ErrorKind::parse_error, text::cat(c.position(), ": GGUF arrays nested deeper than ", max_array_depth,
                                                      " in ", text::excerpt(key)));
      auto elem = c.scalar<std::uint32_t>(what);
      auto count = elem ? c.scalar<std::uint64_t>(what) : Result<std::uint64_t>(fail(elem.error()));
      if (!count) return fail(count.error());
      v.array_length = *count;
      if (const auto size = fixed_size(*elem)) {
        const auto bytes = text::checked_mul(*count, *size);
        if (!bytes) return fail(ErrorKind::parse_error, text::cat("GGUF array ", text::excerpt(key), " of ", *count, " elements overflows"));
        if (auto r = c.need(*bytes, what); !r) return fail(r.error());
        if (is_integer_type(*elem) && *count <= max_kept_array) {
          // Per-layer integer arrays (head_count_kv of some models): keep the largest.
          std::uint64_t largest = 0;
          for (std::uint64_t i = 0; i < *count; ++i) {
            auto x = read_integer(c, *elem, what);
            if (!x) return fail(x.error());
            largest = std::max(largest, x->value_or(0));
          }
          if (*count > 0) v.integer = largest;
        } else if (auto r = c.skip(*bytes, what); !r) {
          return fail(r.error());
        }
        return v;
      }
      if (*elem == gguf_string || *elem == gguf_array) {
        // Each element needs at least 8 bytes: a length or a type and count.
        if (*count > c.remaining() / 8) return fail(c.need(*count * 8, what).error());
        for (std::uint64_t i = 0; i < *count; ++i) {
          if (*elem == gguf_string) {
            auto len = c.scalar<std::uint64_t>(what);
            if (!len) return fail(len.error());
            if (auto r = c.skip(*len, what); !r) return fail(r.error());
          } else if (auto r = read_value(c, gguf_array, key, depth + 1); !r) {
            return fail(r.error());
          }
        }
        return v;
      }
      return fail(ErrorKind::parse_error, text::cat("GGUF array ", text::excerpt(key), " has unknown element type ", *elem));
    }
    default: break;
  }
  return fail(ErrorKind::parse_error, text::cat("GGUF key ", text::excerpt(key), " has unknown value type ", type));
}

struct GgufTensor {
  std::string name;
  std::uint64_t parameters = 0;
  std::optional<std::uint64_t> bytes;  // empty for a type this library does not know
  std::uint32_t type = 0;
  std::uint64_t offset = 0;
};

struct GgufFile {
  std::uint32_t version = 0;
  std::map<std::string, GgufValue, std::less<>> kv;
  std::vector<GgufTensor> tensors;
};

Result<GgufFile> read_gguf_file(const std::filesystem::path& path) {
  auto opened = BinaryFile::open(path);
  if (!opened) return fail(opened.error());
  const BinaryFile& file = *opened;
  GgufCursor c(file);
  if (file.size() < 24)
    return fail(ErrorKind::parse_error, text::cat(path.string(), ": truncated GGUF: ", file.size(),
                                                  " bytes, the fixed header alone is 24"));
  char magic[4];
  if (auto r = c.read(magic, 4, "magic"); !r) return fail(r.error());
  if (std::string_view(magic, 4) != "GGUF")
    return fail(ErrorKind::parse_error, text::cat(path.string(), ": not a GGUF file (no GGUF magic)"));
  GgufFile g;
  auto version = c.scalar<std::uint32_t>("version");
  if (!version) return fail(version.error());
  g.version = *version;
  if (g.version == 1)
    return fail(ErrorKind::unsupported, text::cat(path.string(), ": GGUF version 1 (32-bit counts, 2023) is not supported; "
                                                                 "re-convert the model with a current llama.cpp"));
  if (g.version != 2 && g.version != 3) {
    const std::uint32_t swapped = __builtin_bswap32(g.version);
    if (swapped == 2 || swapped == 3)
      return fail(ErrorKind::unsupported, text::cat(path.string(), ": big-endian GGUF files are not supported"));
    return fail(ErrorKind::parse_error, text::cat(path.string(), ": unknown GGUF version ", g.version));
  }
  auto tensor_count = c.scalar<std::uint64_t>("tensor count");
  auto kv_count = tensor_count ? c.scalar<std::uint64_t>("metadata count") : Result<std::uint64_t>(fail(tensor_count.error()));
  if (!kv_count) return fail(kv_count.error());
  // A key-value pair takes at least 13 bytes, a tensor info at least 28.
  if (*kv_count > c.remaining() / 13)
    return fail(ErrorKind::parse_error, text::cat(path.string(), ": GGUF claims ", *kv_count,
                                                  " metadata entries, more than its ", file.size(), " bytes can hold"));
  if (*tensor_count > c.remaining() / 28)
    return fail(ErrorKind::parse_error, text::cat(path.string(), ": GGUF claims ", *tensor_count,
                                                  " tensors, more than its ", file.size(), " bytes can hold"));
  for (std::uint64_t i = 0; i < *kv_count; ++i) {
    auto key = c.string("metadata key", 1 << 16);
    if (!key) return fail(key.error());
    if (!*key) return fail(ErrorKind::parse_error, text::cat(path.string(), ": GGUF metadata key longer than 64 KiB"));
    auto type = c.scalar<std::uint32_t>("metadata type");
    if (!type) return fail(type.error());
    auto value = read_value(c, *type, **key, 0);
    if (!value) return fail(Error{value.error().kind, text::cat(path.string(), ": ", value.error().message)});
    g.kv.insert_or_assign(std::move(**key), std::move(*value));
  }
  g.tensors.reserve(static_cast<std::size_t>(*tensor_count));
  for (std::uint64_t i = 0; i < *tensor_count; ++i) {
    GgufTensor t;
    auto name = c.string("tensor name", 4096);
    if (!name) return fail(name.error());
    if (!*name) return fail(ErrorKind::parse_error, text::cat(path.string(), ": GGUF tensor name longer than 4 KiB"));
    t.name = std::move(**name);
    auto dims = c.scalar<std::uint32_t>("tensor dimensions");
    if (!dims) return fail(dims.error());
    if (*dims == 0 || *dims > max_gguf_dims)
      return fail(ErrorKind::parse_error, text::cat(path.string(), ": tensor ", text::excerpt(t.name), " has ", *dims,
                                                    " dimensions (1 to ", max_gguf_dims, " allowed)"));
    std::uint64_t ne[max_gguf_dims] = {1, 1, 1, 1};
    std::uint64_t count = 1;
    for (std::uint32_t d = 0; d < *dims; ++d) {
      auto n = c.scalar<std::uint64_t>("tensor shape");
      if (!n) return fail(n.error());
      ne[d] = *n;
      const auto product = text::checked_mul(count, *n);
      if (!product || *product > (1ull << 50))
        return fail(ErrorKind::parse_error, text::cat(path.string(), ": tensor ", text::excerpt(t.name), " has an absurd shape"));
      count = *product;
    }
    auto type = c.scalar<std::uint32_t>("tensor type");
    auto offset = type ? c.scalar<std::uint64_t>("tensor offset") : Result<std::uint64_t>(fail(type.error()));
    if (!offset) return fail(offset.error());
    t.parameters = count;
    t.type = *type;
    t.offset = *offset;
    if (const auto gt = ggml_type_from_value(*type)) {
      const auto enc = *ggml_encoding(*gt);
      if (ne[0] % enc.block_weights != 0)
        return fail(ErrorKind::parse_error, text::cat(path.string(), ": tensor ", text::excerpt(t.name), " row of ", ne[0],
                                                      " weights is not a whole number of ", to_string(*gt), " blocks"));
      t.bytes = ne[0] == 0 ? std::optional<std::uint64_t>(0) : enc.bytes(count / ne[0], ne[0]);
    }
    g.tensors.push_back(std::move(t));
  }
  // Tensor data follows at the next multiple of general.alignment.
  std::uint64_t alignment = 32;
  if (const auto it = g.kv.find("general.alignment"); it != g.kv.end() && it->second.integer) alignment = *it->second.integer;
  if (alignment == 0 || alignment > (1u << 20) || (alignment & (alignment - 1)) != 0)
    return fail(ErrorKind::parse_error, text::cat(path.string(), ": general.alignment ", alignment, " is not a power of two"));
  const std::uint64_t data_start = (c.position() + alignment - 1) / alignment * alignment;
  for (const auto& t : g.tensors) {
    if (!t.bytes) continue;
    const std::uint64_t end = data_start + t.offset + *t.bytes;
    if (t.offset > file.size() || end < t.offset || end > file.size())
      return fail(ErrorKind::parse_error,
                  text::cat(path.string(), ": truncated GGUF: tensor ", text::excerpt(t.name), " ends at byte ", end,
                            " but the file has ", file.size()));
  }
  return g;
}

const GgufValue* kv_find(const GgufFile& g, std::string_view key) {
  const auto it = g.kv.find(key);
  return it == g.kv.end() ? nullptr : &it->second;
}

std::optional<std::uint64_t> kv_int(const GgufFile& g, std::string_view key) {
  const auto* v = kv_find(g, key);
  return v ? v->integer : std::nullopt;
}

// "model-00001-of-00003.gguf" -> the names of all parts; nullopt for a single file.
std::optional<std::vector<std::filesystem::path>> split_parts(const std::filesystem::path& path, std::uint64_t count) {
  const std::string name = path.filename().string();
  const auto of = name.rfind("-of-");
  if (of == std::string::npos || of < 6 || name.size() < of + 4 + 5) return std::nullopt;
  const std::string prefix = name.substr(0, of - 5);
  const std::string suffix = name.substr(of + 4 + 5);
  if (count == 0 || count > 9999) return std::nullopt;
  std::vector<std::filesystem::path> parts;
  for (std::uint64_t i = 1; i <= count; ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "-%05llu-of-%05llu", static_cast<unsigned long long>(i),
                  static_cast<unsigned long long>(count));
    parts.push_back(path.parent_path() / (prefix + buf + suffix));
  }
  return parts;
}

}  // namespace

Result<ModelDescription> read_gguf(const std::filesystem::path& path) {
  auto first = read_gguf_file(path);
  if (!first) return fail(first.error());
  std::vector<GgufTensor> tensors = std::move(first->tensors);
  std::vector<std::string> notes;
  if (const auto parts = kv_int(*first, "split.count"); parts && *parts > 1) {
    const auto names = split_parts(path, *parts);
    if (!names)
      return fail(ErrorKind::invalid_input, text::cat(path.string(), ": a split GGUF (split.count = ", *parts,
                                                      ") whose name is not <model>-NNNNN-of-NNNNN.gguf"));
    for (const auto& part : *names) {
      if (part.filename() == path.filename()) continue;
      auto g = read_gguf_file(part);
      if (!g) return fail(g.error());
      for (auto& t : g->tensors) tensors.push_back(std::move(t));
    }
    notes.push_back(text::cat("read the headers of all ", *parts, " parts of a split GGUF"));
  }
  const GgufFile& g = *first;
  const auto* arch_value = kv_find(g, "general.architecture");
  if (!arch_value || !arch_value->text)
    return fail(ErrorKind::parse_error, text::cat(path.string(), ": GGUF metadata has no general.architecture"));
  const std::string arch = *arch_value->text;
  const auto key = [&](std::string_view suffix) { return text::cat(arch, '.', suffix); };
  const auto need = [&](std::string_view suffix) -> Result<std::uint64_t> {
    const auto v = kv_int(g, key(suffix));
    if (!v) return fail(ErrorKind::parse_error, text::cat(path.string(), ": GGUF metadata lacks ", key(suffix)));
    return *v;
  };
  const auto u32 = [](std::uint64_t v) { return v > UINT32_MAX ? 0u : static_cast<std::uint32_t>(v); };

  // Tensors: exact parameters, bytes by type, bytes by layer.
  StoredWeights stored;
  std::uint64_t params = 0;
  std::set<std::string> names;
  std::map<std::uint32_t, std::uint64_t> matrix_params_by_type;
  std::set<std::uint32_t> unknown_types;
  auto block_count = need("block_count");
  if (!block_count) return fail(block_count.error());
  for (const auto& t : tensors) {
    params += t.parameters;
    names.insert(t.name);
    const auto gt = ggml_type_from_value(t.type);
    if (!gt) unknown_types.insert(t.type);
    add_dtype(stored.by_dtype, gt ? to_string(*gt) : std::string_view("unknown"), t.parameters, t.bytes.value_or(0));
    const std::uint64_t bytes = t.bytes.value_or(0);
    if (const auto l = layer_of(t.name, "blk."); l && *l < *block_count) {
      if (*l >= stored.layer_bytes.size()) stored.layer_bytes.resize(*l + 1, 0);
      stored.layer_bytes[*l] += bytes;
    } else if (t.name == "token_embd.weight") {
      stored.embedding_bytes += bytes;
    } else if (t.name == "output.weight" || t.name == "output_norm.weight") {
      stored.head_bytes += bytes;
    } else {
      stored.other_bytes += bytes;
    }
    if (t.parameters >= (1u << 16)) matrix_params_by_type[t.type] += t.parameters;
  }
  sort_dtypes(stored.by_dtype);
  for (auto type : unknown_types)
    notes.push_back(text::cat("tensors of ggml type ", type, " are not known to this library: their bytes are not counted"));
  if (const auto ft = kv_int(g, "general.file_type")) {
    stored.level = quantization_from_gguf_file_type(static_cast<std::uint32_t>(*ft));
    if (!stored.level) notes.push_back(text::cat("general.file_type ", *ft, " is a llama.cpp type this library does not model"));
  }

  ModelArchitecture a;
  a.family = arch;
  a.layers = u32(*block_count);
  auto hidden = need("embedding_length");
  auto heads = hidden ? need("attention.head_count") : Result<std::uint64_t>(fail(hidden.error()));
  if (!heads) return fail(heads.error());
  a.hidden_size = *hidden;
  a.attention_heads = u32(*heads);
  a.kv_heads = u32(kv_int(g, key("attention.head_count_kv")).value_or(*heads));
  const auto key_length = kv_int(g, key("attention.key_length"));
  a.head_dim = u32(key_length.value_or(a.attention_heads ? a.hidden_size / a.attention_heads : 0));
  a.intermediate_size = kv_int(g, key("feed_forward_length")).value_or(0);
  a.max_context = u32(kv_int(g, key("context_length")).value_or(0));
  if (const auto w = kv_int(g, key("attention.sliding_window")); w && *w > 0) a.sliding_window = u32(*w);
  if (const auto v = kv_int(g, key("vocab_size"))) {
    a.vocab_size = *v;
  } else if (const auto* tokens = kv_find(g, "tokenizer.ggml.tokens"); tokens && tokens->array_length) {
    a.vocab_size = *tokens->array_length;
  }
  a.tied_embeddings = !names.contains("output.weight");
  a.qkv_bias = names.contains("blk.0.attn_q.bias");
  std::uint32_t norms = 0;
  for (const auto& n : names)
    if (n.starts_with("blk.0.") && n.ends_with("_norm.weight") && n.find("attn_q_a") == std::string::npos &&
        n.find("attn_kv_a") == std::string::npos)
      ++norms;
  if (norms > 0) a.norms_per_layer = norms;
  if (const auto experts = kv_int(g, key("expert_count")); experts && *experts > 0) {
    a.moe.experts = u32(*experts);
    a.moe.experts_per_token = u32(kv_int(g, key("expert_used_count")).value_or(0));
    a.moe.shared_experts = u32(kv_int(g, key("expert_shared_count")).value_or(0));
    a.moe.expert_intermediate_size = kv_int(g, key("expert_feed_forward_length")).value_or(a.intermediate_size);
    a.moe.first_dense_layers = u32(kv_int(g, key("leading_dense_block_count")).value_or(0));
    a.moe.layer_step = u32(kv_int(g, key("interleave_moe_layer_step")).value_or(0));
    a.moe.router_bias = names.contains(text::cat("blk.", a.moe.first_dense_layers, ".exp_probs_b.bias"));
  }
  if (const auto kv_lora = kv_int(g, key("attention.kv_lora_rank")); kv_lora && *kv_lora > 0) {
    LatentAttention m;
    m.kv_lora_rank = u32(*kv_lora);
    m.q_lora_rank = u32(kv_int(g, key("attention.q_lora_rank")).value_or(0));
    m.qk_rope_head_dim = u32(kv_int(g, key("rope.dimension_count")).value_or(0));
    m.qk_nope_head_dim = a.head_dim > m.qk_rope_head_dim ? a.head_dim - m.qk_rope_head_dim : 0;
    m.v_head_dim = u32(kv_int(g, key("attention.value_length")).value_or(m.qk_nope_head_dim));
    a.mla = m;
  }
  if (a.intermediate_size == 0 && a.has_dense_layers())
    return fail(ErrorKind::parse_error, text::cat(path.string(), ": GGUF metadata lacks ", key("feed_forward_length")));

  auto d = ModelDescription::from_architecture(path.filename().string(), std::move(a));
  if (!d) return fail(Error{d.error().kind, text::cat(path.string(), ": ", d.error().message)});
  if (params != d->parameters)
    notes.push_back(text::cat("the file's tensors hold ", params, " parameters, the architecture ", d->parameters,
                              " (tensors the architecture does not describe, e.g. rope factors)"));
  if (d->active_parameters == d->parameters) d->active_parameters = params;
  d->parameters = params;
  d->exact_parameters = true;
  d->source = ModelSource::gguf;
  d->origin = path.string();
  if (const auto* n = kv_find(g, "general.name"); n && n->text && !n->text->empty()) d->name = *n->text;
  d->stored = std::move(stored);
  d->notes = std::move(notes);
  return d;
}

}  // namespace hwaccel
