// Quantization levels: encodings, names, KV cache sizes and device support rules.
module;
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
module hwaccel.hardware;

namespace hwaccel {

std::optional<std::uint64_t> TensorEncoding::bytes(std::uint64_t rows, std::uint64_t cols) const noexcept {
  if (block_weights == 0) return std::nullopt;
  if (blocks_span_rows) {
    const auto weights = text::checked_mul(rows, cols);
    if (!weights) return std::nullopt;
    const std::uint64_t blocks = *weights / block_weights + (*weights % block_weights != 0 ? 1 : 0);
    return text::checked_mul(blocks, block_bytes);
  }
  const std::uint64_t blocks_per_row = cols / block_weights + (cols % block_weights != 0 ? 1 : 0);
  const auto row_bytes = text::checked_mul(blocks_per_row, block_bytes);
  if (!row_bytes) return std::nullopt;
  return text::checked_mul(*row_bytes, rows);
}

namespace {

struct GgmlTypeEntry {
  GgmlType type;
  TensorEncoding encoding;
};

// Block sizes of ggml's type traits: QK_K = 256 for the K-quants and most IQ
// types, 32 for the legacy quants; sizes are sizeof(block_*) in ggml-common.h.
constexpr std::array<GgmlTypeEntry, 32> ggml_types = {{
    {GgmlType::f32, {"F32", 1, 4}},
    {GgmlType::f16, {"F16", 1, 2}},
    {GgmlType::q4_0, {"Q4_0", 32, 18}},
    {GgmlType::q4_1, {"Q4_1", 32, 20}},
    {GgmlType::q5_0, {"Q5_0", 32, 22}},
    {GgmlType::q5_1, {"Q5_1", 32, 24}},
    {GgmlType::q8_0, {"Q8_0", 32, 34}},
    {GgmlType::q8_1, {"Q8_1", 32, 36}},
    {GgmlType::q2_k, {"Q2_K", 256, 84}},
    {GgmlType::q3_k, {"Q3_K", 256, 110}},
    {GgmlType::q4_k, {"Q4_K", 256, 144}},
    {GgmlType::q5_k, {"Q5_K", 256, 176}},
    {GgmlType::q6_k, {"Q6_K", 256, 210}},
    {GgmlType::q8_k, {"Q8_K", 256, 292}},
    {GgmlType::iq2_xxs, {"IQ2_XXS", 256, 66}},
    {GgmlType::iq2_xs, {"IQ2_XS", 256, 74}},
    {GgmlType::iq3_xxs, {"IQ3_XXS", 256, 98}},
    {GgmlType::iq1_s, {"IQ1_S", 256, 50}},
    {GgmlType::iq4_nl, {"IQ4_NL", 32, 18}},
    {GgmlType::iq3_s, {"IQ3_S", 256, 110}},
    {GgmlType::iq2_s, {"IQ2_S", 256, 82}},
    {GgmlType::iq4_xs, {"IQ4_XS", 256, 136}},
    {GgmlType::i8, {"I8", 1, 1}},
    {GgmlType::i16, {"I16", 1, 2}},
    {GgmlType::i32, {"I32", 1, 4}},
    {GgmlType::i64, {"I64", 1, 8}},
    {GgmlType::f64, {"F64", 1, 8}},
    {GgmlType::iq1_m, {"IQ1_M", 256, 56}},
    {GgmlType::bf16, {"BF16", 1, 2}},
    {GgmlType::tq1_0, {"TQ1_0", 256, 54}},
    {GgmlType::tq2_0, {"TQ2_0", 256, 66}},
    {GgmlType::mxfp4, {"MXFP4", 32, 17}},
}};

constexpr TensorEncoding enc(GgmlType t) {
  for (const auto& e : ggml_types)
    if (e.type == t) return e.encoding;
  return {};
}

using Q = QuantizationLevel;
using F = QuantizationFamily;

// GPTQ/AWQ int4: per group of 128 weights, 64 bytes of nibbles, an fp16 scale
// and a 4-bit zero point; two groups make a whole number of bytes (133 / 256).
constexpr TensorEncoding int4_g128{"INT4-G128", 256, 133};
// bitsandbytes NF4 with double quantization: blocks of 64 weights (32 bytes)
// whose absmax is itself quantized to 8 bits in groups of 256 blocks with one
// fp32 constant: 256 * 33 + 4 = 8452 bytes per 16384 weights (4.127 bits).
// The blocks run over the flattened weight, not along each row.
constexpr TensorEncoding nf4_double_quant{"NF4-DQ", 16384, 8452, true};

// OCP Microscaling MXFP4: 32 FP4 (E2M1) values in 16 bytes and one shared
// E8M0 (power-of-two) scale byte: 17 bytes per 32 weights, 4.25 bits.
constexpr TensorEncoding mxfp4_block{"MXFP4", 32, 17};

constexpr std::array<QuantizationInfo, 25> levels = {{
    {Q::fp32, "fp32", "FP32", F::floating, enc(GgmlType::f32), ComputeType::fp32, false, 0u, 100,
     "32-bit IEEE float for every tensor"},
    {Q::bf16, "bf16", "BF16", F::floating, enc(GgmlType::bf16), ComputeType::bf16, false, 32u, 90,
     "bfloat16 (8 exponent bits) for every tensor: the format most checkpoints are published in"},
    {Q::fp16, "fp16", "FP16", F::floating, enc(GgmlType::f16), ComputeType::fp16, false, 1u, 90,
     "IEEE half precision for every tensor"},
    {Q::fp8_e4m3, "fp8_e4m3", "FP8-E4M3", F::floating, {"FP8-E4M3", 1, 1}, ComputeType::fp8, false, std::nullopt, 80,
     "8-bit float (4 exponent, 3 mantissa bits) with per-tensor fp32 scales for the linear layers; "
     "embeddings, head and norms in 16-bit"},
    {Q::fp8_e5m2, "fp8_e5m2", "FP8-E5M2", F::floating, {"FP8-E5M2", 1, 1}, ComputeType::fp8, false, std::nullopt, 75,
     "8-bit float (5 exponent, 2 mantissa bits) with per-tensor scales for the linear layers"},
    {Q::int8, "int8", "INT8", F::integer, {"INT8", 1, 1}, ComputeType::int8, false, std::nullopt, 78,
     "8-bit integer weights with one fp32 scale per output channel (W8A8, SmoothQuant); the per-row "
     "scales add under 0.1%"},
    {Q::int4, "int4", "INT4", F::integer, int4_g128, ComputeType::fp16, true, std::nullopt, 55,
     "4-bit integer weights in groups of 128 with an fp16 scale and a 4-bit zero point (GPTQ/AWQ): "
     "4.156 bits per weight, dequantized to fp16 in the kernel"},
    {Q::nf4, "nf4", "NF4", F::integer, nf4_double_quant, ComputeType::fp16, true, std::nullopt, 52,
     "bitsandbytes 4-bit NormalFloat in blocks of 64 with double-quantized absmax scales: 4.127 bits "
     "per weight"},
    {Q::mxfp4, "mxfp4", "MXFP4", F::floating, mxfp4_block, ComputeType::bf16, true, 38u, 57,
     "OCP microscaling FP4: blocks of 32 E2M1 values with an E8M0 scale (4.25 bits per weight) for the routed "
     "experts of a MoE model (all linear layers of a dense one), bf16 elsewhere: gpt-oss's checkpoint format, and "
     "llama.cpp's MXFP4_MOE file type (38)"},
    {Q::q8_0, "q8_0", "Q8_0", F::gguf, enc(GgmlType::q8_0), ComputeType::fp16, true, 7u, 79,
     "llama.cpp Q8_0: blocks of 32 int8 weights with an fp16 scale (8.5 bits per weight)"},
    {Q::q6_k, "q6_k", "Q6_K", F::gguf, enc(GgmlType::q6_k), ComputeType::fp16, true, 18u, 70,
     "llama.cpp Q6_K: 256-weight super-blocks of 6-bit weights with 8-bit sub-block scales (6.5625 bits)"},
    {Q::q5_k_m, "q5_k_m", "Q5_K_M", F::gguf, enc(GgmlType::q5_k), ComputeType::fp16, true, 17u, 66,
     "llama.cpp Q5_K_M: Q5_K (5.5 bits) with Q6_K for the output and part of attn_v/ffn_down"},
    {Q::q5_k_s, "q5_k_s", "Q5_K_S", F::gguf, enc(GgmlType::q5_k), ComputeType::fp16, true, 16u, 64,
     "llama.cpp Q5_K_S: Q5_K (5.5 bits) with a Q6_K output"},
    {Q::q5_1, "q5_1", "Q5_1", F::gguf, enc(GgmlType::q5_1), ComputeType::fp16, true, 9u, 63,
     "llama.cpp Q5_1: blocks of 32 5-bit weights with fp16 scale and minimum (6 bits)"},
    {Q::q5_0, "q5_0", "Q5_0", F::gguf, enc(GgmlType::q5_0), ComputeType::fp16, true, 8u, 62,
     "llama.cpp Q5_0: blocks of 32 5-bit weights with an fp16 scale (5.5 bits)"},
    {Q::q4_k_m, "q4_k_m", "Q4_K_M", F::gguf, enc(GgmlType::q4_k), ComputeType::fp16, true, 15u, 58,
     "llama.cpp Q4_K_M: Q4_K (4.5 bits) with Q6_K for the output and half of attn_v/ffn_down"},
    {Q::q4_k_s, "q4_k_s", "Q4_K_S", F::gguf, enc(GgmlType::q4_k), ComputeType::fp16, true, 14u, 56,
     "llama.cpp Q4_K_S: Q4_K (4.5 bits) with Q5_K for the first attn_v and ffn_down layers"},
    {Q::q4_1, "q4_1", "Q4_1", F::gguf, enc(GgmlType::q4_1), ComputeType::fp16, true, 3u, 51,
     "llama.cpp Q4_1: blocks of 32 4-bit weights with fp16 scale and minimum (5 bits)"},
    {Q::q4_0, "q4_0", "Q4_0", F::gguf, enc(GgmlType::q4_0), ComputeType::fp16, true, 2u, 50,
     "llama.cpp Q4_0: blocks of 32 4-bit weights with an fp16 scale (4.5 bits)"},
    {Q::iq4_xs, "iq4_xs", "IQ4_XS", F::gguf, enc(GgmlType::iq4_xs), ComputeType::fp16, true, 30u, 54,
     "llama.cpp IQ4_XS: non-linear 4-bit codes in 256-weight super-blocks (4.25 bits)"},
    {Q::iq4_nl, "iq4_nl", "IQ4_NL", F::gguf, enc(GgmlType::iq4_nl), ComputeType::fp16, true, 25u, 53,
     "llama.cpp IQ4_NL: non-linear 4-bit codes in blocks of 32 (4.5 bits)"},
    {Q::q3_k_l, "q3_k_l", "Q3_K_L", F::gguf, enc(GgmlType::q3_k), ComputeType::fp16, true, 13u, 45,
     "llama.cpp Q3_K_L: Q3_K (3.4375 bits) with Q5_K attn_v, attn_output and ffn_down"},
    {Q::q3_k_m, "q3_k_m", "Q3_K_M", F::gguf, enc(GgmlType::q3_k), ComputeType::fp16, true, 12u, 43,
     "llama.cpp Q3_K_M: Q3_K (3.4375 bits) with Q4_K/Q5_K for attn_v, attn_output and ffn_down"},
    {Q::q3_k_s, "q3_k_s", "Q3_K_S", F::gguf, enc(GgmlType::q3_k), ComputeType::fp16, true, 11u, 40,
     "llama.cpp Q3_K_S: Q3_K (3.4375 bits) throughout, Q6_K output"},
    {Q::q2_k, "q2_k", "Q2_K", F::gguf, enc(GgmlType::q2_k), ComputeType::fp16, true, 10u, 30,
     "llama.cpp Q2_K: Q2_K (2.625 bits) with Q3_K/Q4_K for attn_v, attn_output and ffn_down"},
}};

struct Alias {
  std::string_view name;
  QuantizationLevel level;
};

constexpr std::array<Alias, 29> aliases = {{
    {"f32", Q::fp32},       {"float32", Q::fp32},      {"float", Q::fp32},     {"bfloat16", Q::bf16},
    {"f16", Q::fp16},       {"float16", Q::fp16},      {"half", Q::fp16},      {"fp8", Q::fp8_e4m3},
    {"e4m3", Q::fp8_e4m3},  {"float8_e4m3fn", Q::fp8_e4m3}, {"f8_e4m3", Q::fp8_e4m3}, {"e5m2", Q::fp8_e5m2},
    {"float8_e5m2", Q::fp8_e5m2}, {"f8_e5m2", Q::fp8_e5m2}, {"i8", Q::int8},   {"w8a8", Q::int8},
    {"i4", Q::int4},        {"gptq", Q::int4},         {"awq", Q::int4},       {"w4a16", Q::int4},
    {"bnb4", Q::nf4},       {"bnb_nf4", Q::nf4},       {"q4_k", Q::q4_k_m},    {"q5_k", Q::q5_k_m},
    {"q3_k", Q::q3_k_m},    {"bf_16", Q::bf16},        {"fp_16", Q::fp16},     {"fp_32", Q::fp32},
    {"mx_fp4", Q::mxfp4},
}};

// Lower case, '-' and ' ' read as '_'.
std::string normalize_name(std::string_view s) {
  std::string out;
  for (char c : text::trim(s)) out.push_back(c == '-' || c == ' ' ? '_' : text::to_lower(c));
  return out;
}

}  // namespace

std::optional<TensorEncoding> ggml_encoding(GgmlType type) noexcept {
  for (const auto& e : ggml_types)
    if (e.type == type) return e.encoding;
  return std::nullopt;
}

std::string_view to_string(GgmlType type) noexcept {
  for (const auto& e : ggml_types)
    if (e.type == type) return e.encoding.name;
  return "unknown";
}

std::optional<GgmlType> ggml_type_from_value(std::uint32_t value) noexcept {
  for (const auto& e : ggml_types)
    if (static_cast<std::uint32_t>(e.type) == value) return e.type;
  return std::nullopt;
}

std::string_view to_string(ComputeType type) noexcept {
  constexpr std::array<std::string_view, 5> names = {"fp32", "bf16", "fp16", "fp8", "int8"};
  const auto i = static_cast<std::size_t>(type);
  return i < names.size() ? names[i] : "unknown";
}

std::string_view to_string(QuantizationFamily family) noexcept {
  constexpr std::array<std::string_view, 3> names = {"floating", "integer", "gguf"};
  const auto i = static_cast<std::size_t>(family);
  return i < names.size() ? names[i] : "unknown";
}

std::span<const QuantizationInfo> all_quantizations() noexcept { return levels; }

const QuantizationInfo& info(QuantizationLevel level) noexcept {
  const auto i = static_cast<std::size_t>(level);
  return i < levels.size() ? levels[i] : levels[0];
}

std::string_view to_string(QuantizationLevel level) noexcept { return info(level).name; }

Result<QuantizationLevel> parse_quantization(std::string_view name) {
  const std::string key = normalize_name(name);
  for (const auto& l : levels)
    if (l.name == key) return l.level;
  for (const auto& a : aliases)
    if (a.name == key) return a.level;
  std::string valid;
  for (const auto& l : levels) {
    if (!valid.empty()) valid += ", ";
    valid += l.name;
  }
  return fail(ErrorKind::invalid_input,
              text::cat("unknown quantization '", text::excerpt(name), "'; valid: ", valid));
}

std::optional<QuantizationLevel> quantization_from_gguf_file_type(std::uint32_t file_type) noexcept {
  if (file_type == 0) return Q::fp32;
  for (const auto& l : levels)
    if (l.gguf_file_type && *l.gguf_file_type == file_type) return l.level;
  return std::nullopt;
}

Result<double> kv_cache_bits(QuantizationLevel level) {
  switch (level) {
    case Q::fp32: return 32.0;
    case Q::bf16:
    case Q::fp16: return 16.0;
    case Q::fp8_e4m3:
    case Q::fp8_e5m2:
    case Q::int8: return 8.0;
    case Q::q8_0:
    case Q::q5_0:
    case Q::q5_1:
    case Q::q4_0:
    case Q::q4_1:
    case Q::iq4_nl: return info(level).bits_per_weight();
    default: break;
  }
  return fail(ErrorKind::invalid_input,
              text::cat("'", to_string(level),
                        "' is not a KV cache type; use fp32, fp16, bf16, fp8_e4m3, fp8_e5m2, int8, q8_0, q5_1, "
                        "q5_0, q4_1, q4_0 or iq4_nl"));
}

std::string_view to_string(SupportLevel level) noexcept {
  constexpr std::array<std::string_view, 4> names = {"native", "weight_only", "emulated", "unsupported"};
  const auto i = static_cast<std::size_t>(level);
  return i < names.size() ? names[i] : "unknown";
}

DeviceTraits traits_of(const DeviceProfile& d) noexcept {
  DeviceTraits t;
  t.backend = d.backend;
  t.family = d.family;
  t.name = d.name;
  if (d.compute_capability) t.compute_capability = *d.compute_capability;
  if (d.architecture) t.architecture = *d.architecture;
  if (const auto it = d.properties.find("isa"); it != d.properties.end()) t.isa = it->second;
  if (const auto it = d.properties.find("compute_types"); it != d.properties.end()) t.compute_types = it->second;
  return t;
}

namespace {

struct Version {
  std::uint32_t major = 0;
  std::uint32_t minor = 0;
};

// "8.9" -> {8, 9}
std::optional<Version> cuda_capability(std::string_view cc) {
  cc = text::trim(cc);
  const auto dot = cc.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const auto major = text::parse_u64(cc.substr(0, dot));
  const auto minor = text::parse_u64(cc.substr(dot + 1));
  if (!major || !minor || *major > 99 || *minor > 99) return std::nullopt;
  return Version{static_cast<std::uint32_t>(*major), static_cast<std::uint32_t>(*minor)};
}

// AMD gfx targets: "gfx942" -> {9, 4}, "gfx90a" -> {9, 0}, "gfx1100" -> {11, 0}.
// The last character is the stepping (hex), the one before it the minor.
std::optional<Version> amd_gfx(std::string_view target) {
  target = text::trim(target);
  if (target.size() < 6 || !text::iequals(target.substr(0, 3), "gfx")) return std::nullopt;
  const std::string_view digits = target.substr(3);
  const auto major = text::parse_u64(digits.substr(0, digits.size() - 2));
  const auto minor = text::parse_u64(digits.substr(digits.size() - 2, 1), 16);
  if (!major || !minor) return std::nullopt;
  return Version{static_cast<std::uint32_t>(*major), static_cast<std::uint32_t>(*minor)};
}

bool has_isa(std::string_view isa, std::string_view feature) {
  while (!isa.empty()) {
    if (text::trim(text::next_token(isa, ',')) == feature) return true;
  }
  return false;
}

bool name_has(const DeviceTraits& d, std::string_view token) {
  return text::icontains(d.name, token) || text::icontains(d.compute_capability, token) ||
         text::icontains(d.architecture, token);
}

QuantizationSupport verdict(SupportLevel level, std::string reason) { return {level, std::move(reason)}; }

QuantizationSupport native(std::string reason = {}) { return verdict(SupportLevel::native, std::move(reason)); }
QuantizationSupport weight_only(std::string reason) { return verdict(SupportLevel::weight_only, std::move(reason)); }
QuantizationSupport emulated(std::string reason) { return verdict(SupportLevel::emulated, std::move(reason)); }
QuantizationSupport unsupported(std::string reason) { return verdict(SupportLevel::unsupported, std::move(reason)); }

bool is_gguf(QuantizationLevel level) { return info(level).family == F::gguf; }
bool is_4bit_integer(QuantizationLevel level) { return level == Q::int4 || level == Q::nf4; }

QuantizationSupport cuda_support(QuantizationLevel level, const DeviceTraits& d) {
  const auto cc = cuda_capability(d.compute_capability);
  const std::string cc_text = cc ? text::cat(cc->major, '.', cc->minor) : std::string("unknown");
  const auto at_least = [&](std::uint32_t major, std::uint32_t minor) {
    return cc && (cc->major > major || (cc->major == major && cc->minor >= minor));
  };
  switch (level) {
    case Q::fp32: return native();
    case Q::fp16: return native();
    case Q::bf16:
      if (at_least(8, 0)) return native();
      if (!cc) return unsupported("bf16 needs compute capability 8.0 (Ampere); this device's is unknown");
      return unsupported(text::cat("bf16 needs compute capability 8.0 (Ampere); this device is ", cc_text,
                                   " (use fp16)"));
    case Q::fp8_e4m3:
    case Q::fp8_e5m2:
      if (at_least(8, 9)) return native();
      if (at_least(8, 0))
        return weight_only(text::cat("compute capability ", cc_text,
                                     " has no fp8 arithmetic: fp8 weights are dequantized to 16-bit (Marlin)"));
      return unsupported(text::cat("fp8 needs compute capability 8.9 (Ada/Hopper), 8.0 for weight-only; this device is ",
                                   cc_text));
    case Q::int8:
      if (at_least(7, 5)) return native();
      if (at_least(6, 1)) return weight_only(text::cat("compute capability ", cc_text, " has no int8 tensor cores"));
      return unsupported(text::cat("int8 needs compute capability 6.1; this device is ", cc_text));
    case Q::int4:
    case Q::nf4:
      if (!cc || at_least(6, 0)) return weight_only("4-bit weights are dequantized to fp16 in the kernel");
      return unsupported(text::cat("4-bit kernels need compute capability 6.0; this device is ", cc_text));
    case Q::mxfp4:
      if (at_least(10, 0)) return native("Blackwell tensor cores compute in MXFP4");
      if (at_least(8, 0))
        return weight_only(text::cat("compute capability ", cc_text, " has no FP4 arithmetic: vLLM's Marlin/Triton "
                                     "kernels dequantize MXFP4 to bf16"));
      return weight_only("llama.cpp's CUDA backend dequantizes MXFP4 blocks");
    default: break;
  }
  return weight_only("llama.cpp CUDA backend dequantizes GGUF blocks in its kernels");
}

QuantizationSupport rocm_support(QuantizationLevel level, const DeviceTraits& d) {
  std::optional<Version> gfx = amd_gfx(d.compute_capability);
  if (!gfx) gfx = amd_gfx(d.architecture);
  // Instinct names when the gfx target is not reported.
  if (!gfx) {
    if (name_has(d, "MI300") || name_has(d, "MI325")) gfx = Version{9, 4};
    else if (name_has(d, "MI350") || name_has(d, "MI355")) gfx = Version{9, 5};
    else if (name_has(d, "MI250") || name_has(d, "MI210")) gfx = Version{9, 0};
  }
  const bool cdna = gfx && gfx->major == 9;
  const bool cdna3_plus = cdna && gfx->minor >= 4;
  const bool rdna3_plus = gfx && gfx->major >= 11;
  const bool rdna4_plus = gfx && gfx->major >= 12;
  switch (level) {
    case Q::fp32:
    case Q::fp16: return native();
    case Q::bf16:
      if (cdna || rdna3_plus) return native();
      if (!gfx) return unsupported("bf16 matrix arithmetic needs CDNA or RDNA3; this device's gfx target is unknown");
      return emulated("this gfx target has no bf16 matrix instructions; bf16 runs through fp32");
    case Q::fp8_e4m3:
    case Q::fp8_e5m2:
      if (cdna3_plus || rdna4_plus) return native();
      return unsupported("fp8 needs CDNA3 (MI300/MI325) or RDNA4");
    case Q::int8: return gfx ? native() : weight_only("int8 weights on an unknown gfx target");
    case Q::int4:
    case Q::nf4: return weight_only("4-bit weights are dequantized to fp16 in the kernel");
    case Q::mxfp4:
      if (cdna && gfx->minor >= 5) return native("CDNA4 (MI350/MI355) computes in MXFP4");
      return weight_only("MXFP4 weights are dequantized to bf16 in the kernel (vLLM Triton, llama.cpp HIP)");
    default: break;
  }
  return weight_only("llama.cpp HIP backend dequantizes GGUF blocks in its kernels");
}

QuantizationSupport apple_support(QuantizationLevel level, const DeviceTraits& d) {
  if (d.family == Family::npu) {  // the Neural Engine (Core ML)
    if (level == Q::fp16) return native();
    if (level == Q::int8) return weight_only("Core ML stores int8 weights and computes in fp16 on the Neural Engine");
    if (is_4bit_integer(level)) return weight_only("Core ML 4-bit palettized weights, computed in fp16");
    return unsupported("the Neural Engine computes in fp16 (int8/4-bit weights via Core ML)");
  }
  const bool m1 = name_has(d, "M1");
  switch (level) {
    case Q::fp32:
    case Q::fp16: return native();
    case Q::bf16:
      if (m1) return emulated("the M1 GPU has no bf16 arithmetic; Metal converts through fp32");
      return native();
    case Q::fp8_e4m3:
    case Q::fp8_e5m2: return unsupported("Apple GPUs have no fp8 arithmetic");
    case Q::int8:
    case Q::int4: return weight_only("MLX/llama.cpp dequantize integer weights in Metal kernels");
    case Q::nf4: return unsupported("bitsandbytes NF4 has no Metal backend");
    default: break;
  }
  return weight_only("llama.cpp Metal backend dequantizes GGUF blocks in its kernels");
}

QuantizationSupport tpu_support(QuantizationLevel level, const DeviceTraits& d) {
  const bool v5p_or_later = name_has(d, "v5p") || name_has(d, "v7");
  switch (level) {
    case Q::fp32: return native("the MXUs run fp32 matmuls as several bf16 passes");
    case Q::bf16: return native();
    case Q::int8: return native();
    case Q::fp16: return unsupported("TPUs compute in bf16, not fp16");
    case Q::fp8_e4m3:
    case Q::fp8_e5m2:
      if (v5p_or_later) return native();
      return unsupported("fp8 arithmetic arrived with TPU v5p; this TPU computes in bf16 and int8");
    case Q::int4: return unsupported("no TPU runtime serves 4-bit GPTQ/AWQ weights");
    case Q::mxfp4: return unsupported("no TPU runtime serves MXFP4 weights");
    default: break;
  }
  return unsupported("llama.cpp has no TPU backend");
}

QuantizationSupport gaudi_support(QuantizationLevel level, const DeviceTraits& d) {
  const bool gen2_plus = name_has(d, "gaudi2") || name_has(d, "gaudi 2") || name_has(d, "gaudi3") ||
                         name_has(d, "gaudi 3") || name_has(d, "HL-225") || name_has(d, "HL-325") ||
                         name_has(d, "HL-2080") || name_has(d, "HL-388");
  switch (level) {
    case Q::fp32:
    case Q::bf16:
    case Q::fp16: return native();
    case Q::fp8_e4m3:
    case Q::fp8_e5m2:
      if (gen2_plus) return native();
      return unsupported("fp8 needs Gaudi 2 or later; this Gaudi's generation is unknown or first-generation");
    case Q::int4: return weight_only("Gaudi 2/3 run GPTQ 4-bit weights dequantized to bf16 (optimum-habana)");
    case Q::int8: return unsupported("Gaudi's matrix engines compute in fp8/bf16/fp16/fp32; use fp8");
    default: break;
  }
  if (level == Q::mxfp4) return unsupported("no Gaudi runtime serves MXFP4 weights");
  return unsupported(is_gguf(level) ? "llama.cpp has no Gaudi backend" : "bitsandbytes has no Gaudi backend");
}

QuantizationSupport neuron_support(QuantizationLevel level, const DeviceTraits& d) {
  const bool gen2_plus = name_has(d, "inferentia2") || name_has(d, "trainium") || name_has(d, "inf2") ||
                         name_has(d, "trn");
  switch (level) {
    case Q::fp32:
    case Q::bf16:
    case Q::fp16: return native();
    case Q::fp8_e4m3:
    case Q::fp8_e5m2:
      if (gen2_plus) return native("NeuronCore-v2/v3 compute in configurable fp8 (cFP8)");
      return unsupported("fp8 needs Inferentia2 or Trainium; this Neuron device's generation is unknown");
    case Q::int8: return weight_only("Neuron stores int8 weights and computes in bf16");
    default: break;
  }
  return unsupported("the Neuron SDK serves 16-bit, fp8 and int8 weights only");
}

QuantizationSupport cpu_support(QuantizationLevel level, const DeviceTraits& d) {
  const bool bf16 = has_isa(d.isa, "avx512_bf16") || has_isa(d.isa, "amx_bf16") || has_isa(d.isa, "bf16");
  const bool fp16 = has_isa(d.isa, "avx512_fp16") || has_isa(d.isa, "fphp") || has_isa(d.isa, "asimdhp") ||
                    has_isa(d.isa, "fp16");
  const bool int8 = has_isa(d.isa, "avx512_vnni") || has_isa(d.isa, "avx_vnni") || has_isa(d.isa, "amx_int8") ||
                    has_isa(d.isa, "i8mm") || has_isa(d.isa, "asimddp");
  switch (level) {
    case Q::fp32: return native();
    case Q::bf16:
      if (bf16) return native();
      return emulated("this CPU has no bf16 instructions (avx512_bf16/amx_bf16/bf16); bf16 runs through fp32");
    case Q::fp16:
      if (fp16) return native();
      return emulated("this CPU has no fp16 arithmetic (avx512_fp16/asimdhp); fp16 runs through fp32");
    case Q::fp8_e4m3:
    case Q::fp8_e5m2: return unsupported("CPUs have no fp8 arithmetic and CPU runtimes do not serve fp8 checkpoints");
    case Q::int8:
      if (int8) return native();
      return weight_only("no int8 dot-product instructions (VNNI/AMX/i8mm); int8 weights are dequantized");
    case Q::int4: return weight_only("4-bit weights are dequantized in the kernel");
    case Q::nf4: return weight_only("bitsandbytes CPU backend dequantizes NF4");
    default: break;
  }
  return weight_only("llama.cpp CPU backend: GGUF blocks are unpacked in its dot products");
}

QuantizationSupport npu_support(QuantizationLevel level, const DeviceTraits& d) {
  switch (level) {
    case Q::fp16: return native();
    case Q::int8: return native();
    case Q::int4: return weight_only("NPU runtimes (OpenVINO, Ryzen AI) store int4 weights and compute in int8/fp16");
    case Q::bf16:
      if (d.backend == Backend::amd_xdna) return native();
      return unsupported("this NPU computes in fp16 and int8");
    default: break;
  }
  return unsupported("NPUs run fp16, int8 and int4-weight models");
}

QuantizationSupport vulkan_support(QuantizationLevel level) {
  switch (level) {
    case Q::fp32:
    case Q::fp16: return native();
    case Q::bf16: return unsupported("Vulkan compute runtimes do not run bf16 models");
    case Q::fp8_e4m3:
    case Q::fp8_e5m2:
    case Q::int8:
    case Q::int4:
    case Q::nf4: return unsupported("Vulkan runtimes (llama.cpp) load GGUF files, not fp8/int8/GPTQ/NF4 checkpoints");
    default: break;
  }
  return weight_only("llama.cpp Vulkan backend dequantizes GGUF blocks in its shaders");
}

QuantizationSupport oneapi_support(QuantizationLevel level) {
  switch (level) {
    case Q::fp32:
    case Q::bf16:
    case Q::fp16:
    case Q::int8: return native();
    case Q::fp8_e4m3:
    case Q::fp8_e5m2: return weight_only("Intel GPUs before Xe3 have no fp8 arithmetic; fp8 weights are dequantized");
    case Q::int4: return weight_only("IPEX dequantizes int4 weights to fp16 on XMX");
    case Q::nf4: return unsupported("bitsandbytes NF4 has no SYCL backend");
    default: break;
  }
  return weight_only("llama.cpp SYCL backend dequantizes GGUF blocks in its kernels");
}

QuantizationSupport asic_support(QuantizationLevel level, const DeviceTraits& d) {
  switch (d.backend) {
    case Backend::qualcomm:
      if (level == Q::fp16 || level == Q::int8) return native();
      return unsupported("Cloud AI 100 runs fp16 and int8 models");
    case Backend::cerebras:
      if (level == Q::fp16 || level == Q::bf16 || level == Q::fp32) return native();
      return unsupported("Cerebras serves 16-bit weights");
    case Backend::graphcore:
      if (level == Q::fp16 || level == Q::fp32) return native();
      return unsupported("IPUs compute in fp16 and fp32");
    case Backend::groq:
      if (level == Q::fp16 || level == Q::int8) return native();
      return unsupported("Groq LPUs serve fp16 and int8 models");
    case Backend::plugin: {
      // What the plugin says its runtime computes in; nothing is assumed.
      if (d.compute_types.empty()) return unsupported("the plugin lists no compute_types for this device");
      for (const auto name : text::split_trimmed(d.compute_types, ','))
        if (const auto listed = parse_quantization(name); listed && *listed == level) return native();
      return unsupported(text::cat("the plugin lists only ", d.compute_types));
    }
    default: break;
  }
  return unsupported("no runtime for this device serves this format");
}

}  // namespace

QuantizationSupport quantization_support(QuantizationLevel level, const DeviceTraits& d) {
  switch (d.backend) {
    case Backend::cpu: return cpu_support(level, d);
    case Backend::cuda: return cuda_support(level, d);
    case Backend::rocm: return rocm_support(level, d);
    case Backend::apple: return apple_support(level, d);
    // A DXGI adapter no vendor backend reports is served by llama.cpp's
    // Vulkan backend, as any Vulkan GPU is.
    case Backend::vulkan:
    case Backend::dxgi: return vulkan_support(level);
    case Backend::intel_oneapi: return oneapi_support(level);
    case Backend::tpu: return tpu_support(level, d);
    case Backend::gaudi: return gaudi_support(level, d);
    case Backend::aws_neuron: return neuron_support(level, d);
    case Backend::intel_npu:
    case Backend::amd_xdna:
    case Backend::samsung_npu:
    case Backend::mediatek_apu: return npu_support(level, d);
    default: break;
  }
  return asic_support(level, d);
}

QuantizationSupport quantization_support(QuantizationLevel level, const DeviceProfile& device) {
  return quantization_support(level, traits_of(device));
}

}  // namespace hwaccel
