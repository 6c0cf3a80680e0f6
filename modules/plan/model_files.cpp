// Model files: GGUF and safetensors headers (bounded, hostile-input-safe
// readers that never load tensor data), and load_model's dispatch.
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

#include <simdjson.h>
#include "json_input.hpp"
module hwaccel.plan;

namespace hwaccel {
namespace {

// --- a regular file read at offsets ------------------------------------------

class BinaryFile {
 public:
  static Result<BinaryFile> open(const std::filesystem::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
      const int e = errno;
      const ErrorKind kind = e == ENOENT ? ErrorKind::not_found : e == EACCES ? ErrorKind::permission_denied : ErrorKind::io_error;
      return fail(kind, text::cat("cannot open ", path.string(), ": ", std::strerror(e)));
    }
    BinaryFile f(fd, path.string());
    struct stat st {};
    if (::fstat(fd, &st) != 0) return fail(ErrorKind::io_error, text::cat("cannot stat ", path.string()));
    // A FIFO or device would block or never end: only regular files are read.
    if (!S_ISREG(st.st_mode)) return fail(ErrorKind::not_regular_file, text::cat(path.string(), " is not a regular file"));
    f.size_ = static_cast<std::uint64_t>(st.st_size);
    return f;
  }
  BinaryFile(BinaryFile&& o) noexcept : fd_(std::exchange(o.fd_, -1)), path_(std::move(o.path_)), size_(o.size_) {}
  BinaryFile& operator=(BinaryFile&&) = delete;
  BinaryFile(const BinaryFile&) = delete;
  ~BinaryFile() {
    if (fd_ >= 0) ::close(fd_);
  }

  std::uint64_t size() const noexcept { return size_; }
  const std::string& path() const noexcept { return path_; }

  // Reads exactly n bytes at offset; the caller has checked the range.
  Result<void> read_at(std::uint64_t offset, char* dst, std::size_t n) const {
    while (n > 0) {
      const ssize_t got = ::pread(fd_, dst, n, static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return fail(ErrorKind::io_error, text::cat("read error in ", path_, " at offset ", offset));
      dst += got;
      n -= static_cast<std::size_t>(got);
      offset += static_cast<std::uint64_t>(got);
    }
    return {};
  }

 private:
  BinaryFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::string path_;
  std::uint64_t size_ = 0;
};

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
        const std::uint64_t len = std::min<std::uint64_t>(window_capacity, file_.size() - pos_);
        window_.resize(len);
        if (auto r = file_.read_at(pos_, window_.data(), len); !r) return r;
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

// Layer index of "blk.12.attn_q.weight"; nullopt for other names.
std::optional<std::uint32_t> layer_of(std::string_view name, std::string_view prefix) {
  if (name.substr(0, prefix.size()) != prefix) return std::nullopt;
  name.remove_prefix(prefix.size());
  const auto dot = name.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const auto n = text::parse_u64(name.substr(0, dot));
  if (!n || *n > 1'000'000) return std::nullopt;
  return static_cast<std::uint32_t>(*n);
}

void add_dtype(std::vector<DtypeCount>& counts, std::string_view dtype, std::uint64_t parameters, std::uint64_t bytes) {
  for (auto& c : counts)
    if (c.dtype == dtype) {
      ++c.tensors;
      c.parameters += parameters;
      c.bytes += bytes;
      return;
    }
  counts.push_back({std::string(dtype), 1, parameters, bytes});
}

void sort_dtypes(std::vector<DtypeCount>& counts) {
  std::sort(counts.begin(), counts.end(), [](const DtypeCount& a, const DtypeCount& b) { return a.dtype < b.dtype; });
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

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
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
    if (ends_with(t.name, ".qweight")) {
      p = t.elements * 8;
      packed_int4 = true;
      dtype = "INT4 (packed)";
    } else if (ends_with(t.name, ".scales") || ends_with(t.name, ".qzeros") || ends_with(t.name, ".g_idx")) {
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
  std::error_code ec;
  if (std::filesystem::exists(dir / "config.json", ec)) {
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
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return fail(ErrorKind::not_found, text::cat("cannot read ", path.string(), ": ", ec.message()));
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
    if (n.starts_with("blk.0.") && ends_with(n, "_norm.weight") && n.find("attn_q_a") == std::string::npos &&
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

Result<ModelDescription> read_safetensors(const std::filesystem::path& path) {
  const std::string name = path.filename().string();
  if (ends_with(name, ".index.json")) return read_safetensors_index(path);
  auto tensors = read_safetensors_header(path);
  if (!tensors) return fail(tensors.error());
  return describe_safetensors(*tensors, path, 1);
}

namespace {

// A model folder: safetensors (an index or a single file, with config.json
// beside it when there is one), a config.json alone, or a single .gguf.
Result<ModelDescription> read_model_folder(const std::filesystem::path& path) {
  std::error_code ec;
  for (const char* index : {"model.safetensors.index.json", "model.safetensors"})
    if (std::filesystem::exists(path / index, ec)) return read_safetensors(path / index);
  if (std::filesystem::exists(path / "config.json", ec)) return read_config_json(path / "config.json");
  std::vector<std::filesystem::path> ggufs;
  for (const auto& entry : std::filesystem::directory_iterator(path, ec))
    if (entry.path().extension() == ".gguf") ggufs.push_back(entry.path());
  if (ggufs.size() == 1) return read_gguf(ggufs.front());
  if (ggufs.size() > 1) {
    std::sort(ggufs.begin(), ggufs.end());
    std::string names;
    for (std::size_t i = 0; i < ggufs.size() && i < 8; ++i) names += text::cat(i ? ", " : "", ggufs[i].filename().string());
    if (ggufs.size() > 8) names += text::cat(" and ", ggufs.size() - 8, " more");
    return fail(ErrorKind::invalid_input, text::cat(path.string(), ": the folder holds ", ggufs.size(),
                                                    " .gguf files (", names, "): pass the one to plan for as a file"));
  }
  return fail(ErrorKind::invalid_input,
              text::cat(path.string(), ": a model folder needs config.json, model.safetensors(.index.json) or a "
                                       "single .gguf file"));
}

// Whether a name that is not a file means a Hugging Face repo: one '/'
// before any '@revision', and not written as a path (absolute, ./, ../ or
// ~). Several '/' read as a missing file's path, as before.
bool meant_as_hf_repo(std::string_view name) {
  const std::string_view repo = name.substr(0, name.find('@'));
  if (std::count(repo.begin(), repo.end(), '/') != 1) return false;
  return !(name.starts_with('/') || name.starts_with('.') || name.starts_with('~'));
}

// A name that is not a file or folder: a catalogue id, else a repo in the
// local Hugging Face cache. A repo in the cache is read from its files even
// when the catalogue knows it (they are the model itself: its exact tensors
// and dtypes); the catalogue answers when the cache does not have it.
Result<ModelDescription> load_named_model(std::string_view name) {
  const CatalogueEntry* entry = find_catalogue_model(name);
  if (!meant_as_hf_repo(name)) {
    if (entry) return catalogue_model(name);
    auto r = catalogue_model(name);
    return fail(ErrorKind::not_found,
                text::cat("'", text::excerpt(name), "' is neither a file nor a catalogue model; ", r.error().message));
  }
  auto repo = parse_hf_repo_id(text::trim(name));
  if (!repo) {
    if (entry) return catalogue_model(name);
    return fail(ErrorKind::invalid_input, text::cat("no file or folder named '", text::excerpt(name),
                                                    "', and it is not a catalogue model; ", repo.error().message));
  }
  const auto root = hf_hub_cache_root();
  if (!root) {
    if (entry && !repo->revision_given) return catalogue_model(name);
    return fail(ErrorKind::not_found,
                text::cat("'", text::excerpt(name), "' is not a file or a catalogue model, and no Hugging Face cache to look "
                          "in: none of HF_HUB_CACHE, HF_HOME, XDG_CACHE_HOME and HOME is set"));
  }
  const auto snapshot = find_hf_snapshot(*repo, root->path);
  const auto from_cache = [&](const std::filesystem::path& folder) -> Result<ModelDescription> {
    auto d = read_model_folder(folder);
    if (!d) return d;
    d->name = repo->revision_given ? text::cat(repo->repo(), "@", repo->revision) : repo->repo();
    d->notes.insert(d->notes.begin(), text::cat("read from the local Hugging Face cache: ", folder.string()));
    return d;
  };
  if (snapshot) {
    auto d = from_cache(*snapshot);
    if (d || !entry || repo->revision_given) return d;
    // A catalogue model whose cached copy cannot be read: the catalogue's
    // architecture, saying why the local files were not used.
    auto c = catalogue_model(name);
    if (c) c->notes.push_back(text::cat("the local Hugging Face cache copy was not used: ", d.error().message));
    return c;
  }
  if (entry && !repo->revision_given) {
    if (snapshot.error().kind == ErrorKind::not_found) return catalogue_model(name);
    auto c = catalogue_model(name);
    if (c) c->notes.push_back(text::cat("the local Hugging Face cache copy was not used: ", snapshot.error().message));
    return c;
  }
  return fail(Error{snapshot.error().kind,
                    snapshot.error().kind == ErrorKind::not_found
                        ? text::cat("'", text::excerpt(name), "' is not a file or a catalogue model: ", snapshot.error().message,
                                    " (the cache root comes from ", root->from, ")")
                        : snapshot.error().message});
}

}  // namespace

Result<ModelDescription> load_model(std::string_view file_or_name) {
  if (text::trim(file_or_name).empty()) return fail(ErrorKind::invalid_input, "no model given");
  const std::filesystem::path path{std::string(file_or_name)};
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) return load_named_model(file_or_name);
  if (std::filesystem::is_directory(status)) return read_model_folder(path);
  const std::string name = path.filename().string();
  if (ends_with(name, ".gguf")) return read_gguf(path);
  if (ends_with(name, ".safetensors") || ends_with(name, ".safetensors.index.json")) return read_safetensors(path);
  if (ends_with(name, ".json")) return read_config_json(path);
  // No telling extension: look at the first bytes.
  auto file = BinaryFile::open(path);
  if (!file) return fail(file.error());
  char magic[4] = {};
  if (file->size() >= 4 && file->read_at(0, magic, 4) && std::string_view(magic, 4) == "GGUF") return read_gguf(path);
  return fail(ErrorKind::invalid_input,
              text::cat(path.string(), ": not a recognised model file (.gguf, .safetensors, *.index.json or config.json)"));
}

}  // namespace hwaccel
