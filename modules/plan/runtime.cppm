// Runtime profiles: how close each inference runtime comes to a device's
// peak memory bandwidth and compute, and what it spends per token and per
// layer regardless of bytes. The parameters are fitted on public
// measurements (tests/data/speed/, docs/planning.md "Speed model").
module;
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>
export module hwaccel.plan:runtime;
import hwaccel.hardware;

export namespace hwaccel {

/// An inference runtime and the backend it drives.
enum class Runtime : std::uint8_t {
  llama_cpp_cuda,
  llama_cpp_rocm,
  llama_cpp_metal,
  llama_cpp_vulkan,
  llama_cpp_cpu,
  mlx,
  vllm,
  sglang,
  trtllm,
  vllm_rocm,  ///< vLLM on AMD GPUs: its own profile, fitted on its own measurements
};

/// "llama.cpp-cuda", "vllm", ...: the name `--runtime` takes.
std::string_view to_string(Runtime runtime) noexcept;

/// Parses a runtime name case-insensitively; also "llama.cpp" alone, which
/// needs a backend and so is refused with the list of names.
[[nodiscard]] Result<Runtime> parse_runtime(std::string_view name);

/// Every runtime, in the order of the enum.
std::span<const Runtime> all_runtimes() noexcept;

/// The speed parameters of one runtime. Decode time per token on a device
/// (or a pipeline stage) is
///   bytes read / (peak bandwidth x bandwidth_efficiency)
///   + quantized weights x dequant_ops_per_weight / the device's vector FP32 rate
///   + layers x layer_overhead_us
/// or, when the batch is large enough, FLOPs / (dense peak x
/// compute_efficiency), whichever is larger; plus the interconnect.
/// The parameters are data: data/runtime-profiles.json (the format of
/// docs/runtime-profiles.schema.json), compiled in and read by
/// parse_runtime_profiles; a runtime's identity (the enum and its name) is
/// code.
struct RuntimeProfile {
  Runtime runtime = Runtime::vllm;
  std::string_view name;  ///< to_string(runtime)
  std::string description;
  /// Share of peak memory bandwidth that weight and KV reads reach.
  double bandwidth_efficiency = 0.8;
  /// Vector operations per weight a quantized (integer or GGUF) matrix-vector
  /// product spends unpacking and scaling, over the device's FP32 rate.
  double dequant_ops_per_weight = 0;
  /// Per layer and decode step: kernel launches, synchronisation, sampling
  /// spread over the layers.
  double layer_overhead_us = 0;
  /// Share of the dense tensor peak that prefill and large batches reach.
  double compute_efficiency = 0.5;
  /// Attention reads the KV cache once per query head rather than once per
  /// KV head: ggml's matrix products broadcast a grouped-query KV head over
  /// its query heads when flash attention is off, so the KV bytes a token
  /// reads grow by heads / KV heads.
  bool kv_read_per_query_head = false;
  /// measured / predicted at the 10th and 90th percentiles of the
  /// cross-validated calibration residuals: the 80 % interval around a
  /// prediction.
  double interval_low = 0.7;
  double interval_high = 1.3;
  /// Calibration measurements the parameters were fitted on; 0 when the
  /// profile is an assumption (its interval is then a wide default).
  std::uint32_t calibration_points = 0;
  std::string calibrated_on;  ///< the sources, or why there are none

  // How the runtime lays out memory, where it differs from the default plan.
  /// Tokens its activation buffers are sized for: one prefill chunk (vLLM's
  /// max_num_batched_tokens, 8192; llama.cpp's physical batch -ub, 512;
  /// mlx-lm's prefill step, 2048).
  std::uint64_t prefill_chunk_tokens = 8192;
  /// The token embedding table stays in host memory, as llama.cpp keeps its
  /// input layer on the CPU: a device holds an untied embedding not at all,
  /// and a tied one only as the output head, beside the last layer.
  bool token_embedding_on_host = false;
  /// Devices that exchange activations hold NCCL/RCCL buffers (vLLM, SGLang,
  /// TensorRT-LLM); llama.cpp copies between devices without them.
  bool collective_buffers = true;
  /// llama.cpp's row split (--split-mode row): per split matrix product and
  /// per device beyond the main one, the time to hand that device the input
  /// and gather its rows back. 0 where the runtime has no row split.
  double row_split_sync_us = 0;
  /// Tensor parallelism also runs between devices that only PCIe joins:
  /// vLLM, SGLang and TensorRT-LLM shard a layer over such GPUs with NCCL
  /// (its all-reduce then goes through PCIe and the host bridges), where
  /// llama.cpp splits layers instead.
  bool tensor_parallel_over_pcie = false;

  bool calibrated() const noexcept { return calibration_points > 0; }
};

/// The profile of a runtime.
const RuntimeProfile& runtime_profile(Runtime runtime) noexcept;

/// The profile of a runtime among `profiles` (a runtime-profile file's, in
/// the order of the enum, as parse_runtime_profiles gives them); the built-in
/// one when `profiles` is empty.
const RuntimeProfile& runtime_profile(Runtime runtime, std::span<const RuntimeProfile> profiles) noexcept;

/// Every profile, in the order of the enum.
std::span<const RuntimeProfile> runtime_profiles() noexcept;

/// Reads a runtime-profile file (data/runtime-profiles.json's format,
/// docs/runtime-profiles.schema.json): {"format": "hwaccel-runtime-profiles",
/// "version": 1, "profiles": [...]}, one entry for every runtime, each field
/// stated; the result is in the order of the enum. Errors open with
/// `origin` and name the entry: parse_error for a wrong shape,
/// invalid_input for a value out of bounds or an unknown, repeated or
/// missing runtime.
[[nodiscard]] Result<std::vector<RuntimeProfile>> parse_runtime_profiles(std::string_view json,
                                                                        std::string_view origin);
/// Reads a runtime-profile file from disk: parse_runtime_profiles of its
/// text, its path the origin; a missing, unreadable or oversized file is an
/// error naming it.
[[nodiscard]] Result<std::vector<RuntimeProfile>> read_runtime_profiles(const std::string& path);

/// The text of the built-in file, data/runtime-profiles.json, compiled in.
std::string_view builtin_runtime_profiles_json() noexcept;

/// The runtime a plan assumes when none is given: llama.cpp on the
/// device's backend for GGUF levels and for a model read from a GGUF file
/// (Vulkan for GPUs it has no native backend for), MLX for other levels on
/// Apple GPUs, llama.cpp on the CPU for CPU-only plans, vLLM on ROCm for AMD
/// GPUs, vLLM otherwise.
Runtime default_runtime(Backend backend, QuantizationLevel level, bool gguf_file = false) noexcept;

/// One published (or a user's own) measurement of single-sequence decode
/// speed, for fitting and checking a profile.
struct DecodeMeasurement {
  Runtime runtime = Runtime::llama_cpp_cuda;
  std::string device;  ///< a `--devices` name: "M2-Ultra-76c", "RTX-4090"
  std::uint32_t devices = 1;
  std::string model;   ///< a catalogue id
  QuantizationLevel quantization = QuantizationLevel::q4_0;
  std::uint64_t prompt_tokens = 0;
  std::uint64_t generated_tokens = 128;
  double tokens_per_s = 0;
  bool flash_attention = false;  ///< llama.cpp ran with -fa 1 (InferenceSettings::flash_attention)
};

/// What a decode step of a measurement consists of, before a profile's
/// parameters are applied: the terms are linear in 1 / bandwidth_efficiency,
/// dequant_ops_per_weight and layer_overhead_us.
struct DecodeTerms {
  double memory_s_at_peak = 0;  ///< bytes read / peak bandwidth
  double dequant_s_per_op = 0;  ///< quantized weights / vector FP32 rate
  double layers = 0;            ///< layers run in sequence per token
  double fixed_s = 0;           ///< interconnect and pipeline hops
  double ceiling_tokens_per_s = 0;

  /// Seconds per token under a profile.
  double step_s(const RuntimeProfile& profile) const noexcept;
};

/// The decode terms of a measurement's setting (a hypothetical registry of
/// its devices, the catalogue model, the KV cache at the prompt plus half
/// the generated tokens); an error when the device or model is unknown or
/// the model does not fit.
[[nodiscard]] Result<DecodeTerms> decode_terms(const DecodeMeasurement& measurement);

/// A profile whose bandwidth_efficiency, dequant_ops_per_weight and
/// layer_overhead_us minimise the squared relative error over the
/// measurements (non-negative, efficiency at most 1), with its interval
/// from cross-validated residuals (each device's measurements predicted by
/// a fit on the other devices'). When every measurement is quantized (or none is),
/// bandwidth and dequantization cannot be told apart and the efficiency
/// stays at base's. Other fields come from `base`. An error when fewer than
/// 3 measurements plan.
[[nodiscard]] Result<RuntimeProfile> fit_decode_profile(const RuntimeProfile& base, std::span<const DecodeMeasurement> measurements);

}  // namespace hwaccel
