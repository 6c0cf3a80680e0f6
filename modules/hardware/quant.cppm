// Quantization levels: how weights are stored, their real size including block
// scales, and which devices can run them.
module;
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
export module hwaccel.hardware:quant;
import :device;
import hwaccel.base;

export namespace hwaccel {

/// Tensor element types of the GGUF format, with ggml's numeric values
/// (ggml.h `enum ggml_type`; 4, 5 and 31-33, 36-38 were removed from files).
enum class GgmlType : std::uint32_t {
  f32 = 0,
  f16 = 1,
  q4_0 = 2,
  q4_1 = 3,
  q5_0 = 6,
  q5_1 = 7,
  q8_0 = 8,
  q8_1 = 9,
  q2_k = 10,
  q3_k = 11,
  q4_k = 12,
  q5_k = 13,
  q6_k = 14,
  q8_k = 15,
  iq2_xxs = 16,
  iq2_xs = 17,
  iq3_xxs = 18,
  iq1_s = 19,
  iq4_nl = 20,
  iq3_s = 21,
  iq2_s = 22,
  iq4_xs = 23,
  i8 = 24,
  i16 = 25,
  i32 = 26,
  i64 = 27,
  f64 = 28,
  iq1_m = 29,
  bf16 = 30,
  tq1_0 = 34,
  tq2_0 = 35,
  mxfp4 = 39,
};

/// How one tensor's numbers are laid out: `block_weights` consecutive weights
/// of a row take `block_bytes` bytes, their scales included. Q4_0 is 32
/// weights in 18 bytes (16 of nibbles and an fp16 scale): 4.5 bits per weight.
struct TensorEncoding {
  std::string_view name;        ///< "Q4_K", "BF16", "INT4-G128"
  std::uint32_t block_weights = 1;
  std::uint32_t block_bytes = 2;
  /// Blocks run over the flattened tensor rather than each row (bitsandbytes
  /// quantizes `weight.flatten()`), so only the tensor's last block is partial.
  bool blocks_span_rows = false;

  constexpr double bits_per_weight() const noexcept {
    return 8.0 * static_cast<double>(block_bytes) / static_cast<double>(block_weights);
  }
  /// Bytes of a tensor of `rows` rows of `cols` weights, rows blocked along
  /// `cols` (a partial block at the end of a row takes a whole block, as in
  /// ggml) unless blocks span rows. nullopt on 64-bit overflow.
  std::optional<std::uint64_t> bytes(std::uint64_t rows, std::uint64_t cols) const noexcept;

  friend constexpr bool operator==(const TensorEncoding&, const TensorEncoding&) = default;
};

/// The encoding of a ggml tensor type (block sizes of ggml's type traits);
/// nullopt for a value this library does not know.
std::optional<TensorEncoding> ggml_encoding(GgmlType type) noexcept;
/// ggml's name of the type: "Q4_K", "BF16", "IQ4_XS".
std::string_view to_string(GgmlType type) noexcept;
/// The type of a numeric value read from a file; nullopt when unknown.
std::optional<GgmlType> ggml_type_from_value(std::uint32_t value) noexcept;

/// The arithmetic a matrix multiply runs in once the weights are loaded.
enum class ComputeType : std::uint8_t { fp32, bf16, fp16, fp8, int8 };

std::string_view to_string(ComputeType type) noexcept;

/// A way of storing a model's weights.
///
/// Floating levels keep every tensor in that format. The integer levels
/// (fp8, int8, int4, nf4) quantize the linear layers of the transformer
/// blocks and keep embeddings, the output head, norms and MoE routers in
/// 16-bit, as GPTQ/AWQ, bitsandbytes and FP8 checkpoints do. MXFP4 (OCP
/// microscaling: blocks of 32 FP4 E2M1 values with one E8M0 scale, 4.25
/// bits) is gpt-oss's checkpoint format: the routed experts of a MoE model
/// in MXFP4, every other tensor in bf16 (all linear layers for a dense
/// model). GGUF levels are
/// llama.cpp's file types: a per-tensor mix chosen by llama.cpp's quantizer
/// (Q4_K_M keeps half of attn_v/ffn_down and the output head in Q6_K).
enum class QuantizationLevel : std::uint8_t {
  fp32,
  bf16,
  fp16,
  fp8_e4m3,
  fp8_e5m2,
  int8,
  int4,
  nf4,
  mxfp4,
  q8_0,
  q6_k,
  q5_k_m,
  q5_k_s,
  q5_1,
  q5_0,
  q4_k_m,
  q4_k_s,
  q4_1,
  q4_0,
  iq4_xs,
  iq4_nl,
  q3_k_l,
  q3_k_m,
  q3_k_s,
  q2_k,
};

/// How a level stores weights.
enum class QuantizationFamily : std::uint8_t {
  floating,  ///< fp32, bf16, fp16, fp8, mxfp4: every quantized tensor in one float format
  integer,   ///< int8, int4, nf4: integer codes with per-row or per-group scales
  gguf,      ///< llama.cpp file types
};

std::string_view to_string(QuantizationFamily family) noexcept;

/// What a level is.
struct QuantizationInfo {
  QuantizationLevel level{};
  std::string_view name;          ///< canonical lower-case name: "q4_k_m", "bf16", "fp8_e4m3"
  std::string_view display_name;  ///< "Q4_K_M", "BF16", "FP8-E4M3"
  QuantizationFamily family{};
  /// Encoding of the bulk of the weights (Q4_K_M: Q4_K). Tensors a level keeps
  /// at higher precision are described by the level's recipe (hwaccel.plan).
  TensorEncoding encoding;
  /// Arithmetic of the matrix multiplies: weight-only levels dequantize to
  /// 16-bit and compute there.
  ComputeType compute{};
  bool weight_only = false;
  /// llama.cpp `general.file_type` (llama_ftype) for GGUF levels.
  std::optional<std::uint32_t> gguf_file_type;
  /// Higher is closer to the unquantized model; used to order suggestions.
  int quality_rank = 0;
  std::string_view description;   ///< one sentence: layout and scales

  /// Bits per weight of the bulk encoding, block scales included.
  constexpr double bits_per_weight() const noexcept { return encoding.bits_per_weight(); }
};

/// Every level, in declaration order (highest precision first).
std::span<const QuantizationInfo> all_quantizations() noexcept;
const QuantizationInfo& info(QuantizationLevel level) noexcept;
/// The canonical name ("q4_k_m").
std::string_view to_string(QuantizationLevel level) noexcept;
/// Parses a level name, case-insensitively, with the usual aliases ("FP16",
/// "float16", "half", "bfloat16", "fp8" = fp8_e4m3, "Q4_K_M", "q4_k" =
/// q4_k_m, "gptq"/"awq" = int4, "bnb4"). Anything else is an invalid_input
/// error that lists the valid names.
[[nodiscard]] Result<QuantizationLevel> parse_quantization(std::string_view name);
/// The GGUF level of a llama.cpp `general.file_type`, when it is one this
/// library models (1 = fp16, 0 = fp32, 32 = bf16, 15 = q4_k_m, ...).
std::optional<QuantizationLevel> quantization_from_gguf_file_type(std::uint32_t file_type) noexcept;

/// Bits one element of the KV cache takes when cached at `level`. Caches are
/// kept in fp32, fp16, bf16, fp8 (vLLM --kv-cache-dtype), int8, or the
/// llama.cpp cache types q8_0, q5_0, q5_1, q4_0, q4_1 and iq4_nl; any other
/// level is an invalid_input error.
[[nodiscard]] Result<double> kv_cache_bits(QuantizationLevel level);

/// How well a device runs a level.
enum class SupportLevel : std::uint8_t {
  native,       ///< the hardware computes in this format
  weight_only,  ///< stored in this format and dequantized in the kernel to a
                ///< format the hardware computes in (int4, GGUF; fp8 on Ampere)
  emulated,     ///< runs through slow software conversion
  unsupported,  ///< no runtime for this device handles it
};

std::string_view to_string(SupportLevel level) noexcept;

/// A verdict with the reason behind it ("bf16 needs compute capability 8.0;
/// this device is 7.5").
struct QuantizationSupport {
  SupportLevel level = SupportLevel::unsupported;
  std::string reason;

  /// Whether a planner should offer the level on the device: native or
  /// weight-only, not emulated.
  bool usable() const noexcept { return level == SupportLevel::native || level == SupportLevel::weight_only; }
};

/// What tells device generations apart, taken from a detected profile or a
/// published spec.
struct DeviceTraits {
  Backend backend = Backend::cpu;
  Family family = Family::cpu;
  std::string_view name;                ///< "NVIDIA H100 80GB HBM3", "Apple M2 Max"
  std::string_view compute_capability;  ///< "8.9", "gfx942", "v5e"; may be empty
  std::string_view architecture;        ///< "Hopper", "CDNA3"; may be empty
  std::string_view isa;                 ///< CPU ISA features, comma list ("avx512_bf16,amx_int8")
  /// A plugin device's properties["compute_types"]: the formats its runtime
  /// computes in, a comma list of quantization names ("bf16,fp8_e4m3,int8").
  std::string_view compute_types;
};

/// Traits of a detected device: its backend, family, name, compute
/// capability, architecture and (CPU) properties["isa"].
DeviceTraits traits_of(const DeviceProfile& device) noexcept;

/// Whether a device runs a level, and why. Rules (with the evidence they
/// need): NVIDIA bf16 needs compute capability >= 8.0 (T4 7.5 and V100 7.0
/// have none), fp8 >= 8.9 (Ada, Hopper; Ampere runs fp8 checkpoints
/// weight-only); AMD bf16 on CDNA (gfx908+) and RDNA3+, fp8 on gfx94x/gfx95x
/// (MI300/MI325/MI350) and RDNA4; MXFP4 natively on Blackwell (>= 10.0) and
/// CDNA4 (gfx950), weight-only (vLLM's Marlin/Triton kernels, llama.cpp)
/// on other CUDA and ROCm GPUs, Apple, Vulkan, SYCL and CPUs; TPUs compute in bf16 and int8 (fp8 on v5p
/// and later); Gaudi 2/3 in bf16/fp16/fp8; Neuron (Inferentia2/Trainium) in
/// bf16/fp16/cFP8; NPUs in fp16/int8 with int4 weights; GGUF runs where
/// llama.cpp has a backend (CPU, CUDA, ROCm, Metal, Vulkan, SYCL). A device
/// whose generation is unknown gets only what every generation of its
/// backend supports. A plugin's device runs what its compute_types list.
QuantizationSupport quantization_support(QuantizationLevel level, const DeviceTraits& device);
QuantizationSupport quantization_support(QuantizationLevel level, const DeviceProfile& device);

}  // namespace hwaccel
