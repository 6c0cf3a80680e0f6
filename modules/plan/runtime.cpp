// Runtime names and the runtime-profile table. The table's parameters are
// data (data/runtime-profiles.json, compiled in); the fitted ones come from
// tests/data/speed/ through fit_decode_profile (the speed-model test refits
// them and fails when the file drifts from the data); docs/planning.md
// "Speed model" lists each source.
module;
#include <array>
#include <cctype>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>
module hwaccel.plan;
import hwaccel.json_fields;

namespace hwaccel {
namespace {

constexpr std::array<Runtime, 10> runtimes = {
    Runtime::llama_cpp_cuda, Runtime::llama_cpp_rocm, Runtime::llama_cpp_metal, Runtime::llama_cpp_vulkan,
    Runtime::llama_cpp_cpu,  Runtime::mlx,            Runtime::vllm,            Runtime::sglang,
    Runtime::trtllm,         Runtime::vllm_rocm,
};

// The name `--runtime` takes and a profile file's "runtime" names, in the
// order of the enum.
constexpr std::array<std::string_view, runtimes.size()> runtime_names = {
    "llama.cpp-cuda", "llama.cpp-rocm", "llama.cpp-metal", "llama.cpp-vulkan", "llama.cpp-cpu",
    "mlx",            "vllm",           "sglang",          "trtllm",           "vllm-rocm",
};

// A name without case or punctuation: "llama.cpp-cuda", "LlamaCpp_CUDA" and
// "llama-cpp-cuda" are the same runtime.
std::string folded(std::string_view name) {
  std::string out;
  for (char ch : name)
    if (std::isalnum(static_cast<unsigned char>(ch))) out += text::to_lower(ch);
  return out;
}

std::optional<Runtime> runtime_named(std::string_view name) {
  const std::string key = folded(name);
  for (std::size_t i = 0; i < runtimes.size(); ++i)
    if (key == folded(runtime_names[i])) return runtimes[i];
  return std::nullopt;
}

// A profile file is a few kilobytes; this bounds what a hostile one costs.
constexpr std::size_t max_runtime_profiles_bytes = 1 << 20;

constexpr std::array profile_file_fields = {
    json::Field::text("format", json::required),
    json::Field::whole("version", 0, UINT64_MAX, json::required),
    json::Field::text("description"),
    json::Field::array("profiles", json::Type::object, 64, json::required),
};

// Bounds: shares of a peak in (0, 1]; the 80 % interval's ends on either
// side of 1; overheads and tokens within what any runtime spends.
constexpr std::array profile_fields = {
    json::Field::text("runtime", json::required, 64),
    json::Field::text("description", json::required),
    json::Field::positive("bandwidth_efficiency", 1, json::required),
    json::Field::number("dequant_ops_per_weight", 0, 1000, json::required),
    json::Field::number("layer_overhead_us", 0, 1e6, json::required),
    json::Field::positive("compute_efficiency", 1, json::required),
    json::Field::boolean("kv_read_per_query_head", json::required),
    json::Field::whole("prefill_chunk_tokens", 1, 1 << 24, json::required),
    json::Field::boolean("token_embedding_on_host", json::required),
    json::Field::boolean("collective_buffers", json::required),
    json::Field::number("row_split_sync_us", 0, 1e6, json::required),
    json::Field::boolean("tensor_parallel_over_pcie", json::required),
    json::Field::positive("interval_low", 1, json::required),
    json::Field::number("interval_high", 1, 100, json::required),
    json::Field::whole("calibration_points", 0, 1000000, json::required),
    json::Field::text("calibrated_on", json::required),
};

RuntimeProfile profile_of(const json::Object& o, Runtime runtime) {
  RuntimeProfile p;
  p.runtime = runtime;
  p.name = runtime_names[static_cast<std::size_t>(runtime)];
  p.description = std::string(o.text("description"));
  p.bandwidth_efficiency = *o.number("bandwidth_efficiency");
  p.dequant_ops_per_weight = *o.number("dequant_ops_per_weight");
  p.layer_overhead_us = *o.number("layer_overhead_us");
  p.compute_efficiency = *o.number("compute_efficiency");
  p.kv_read_per_query_head = *o.boolean("kv_read_per_query_head");
  p.prefill_chunk_tokens = *o.whole("prefill_chunk_tokens");
  p.token_embedding_on_host = *o.boolean("token_embedding_on_host");
  p.collective_buffers = *o.boolean("collective_buffers");
  p.row_split_sync_us = *o.number("row_split_sync_us");
  p.tensor_parallel_over_pcie = *o.boolean("tensor_parallel_over_pcie");
  p.interval_low = *o.number("interval_low");
  p.interval_high = *o.number("interval_high");
  p.calibration_points = static_cast<std::uint32_t>(*o.whole("calibration_points"));
  p.calibrated_on = std::string(o.text("calibrated_on"));
  return p;
}

const std::vector<RuntimeProfile>& builtin_profiles() noexcept {
  static const std::vector<RuntimeProfile> table =
      builtin_or_abort(parse_runtime_profiles(builtin_runtime_profiles_json(), "built-in runtime-profiles.json"),
                       "runtime profiles");
  return table;
}

}  // namespace

Result<std::vector<RuntimeProfile>> parse_runtime_profiles(std::string_view json, std::string_view origin) {
  auto file = json::read_data_file(json, origin,
                                   {"hwaccel-runtime-profiles", max_runtime_profiles_bytes, "a runtime-profile file"},
                                   profile_file_fields);
  if (!file) return fail(file.error());
  const json::Object& root = file->root;

  std::array<std::optional<RuntimeProfile>, runtimes.size()> read;
  const auto entries = root.values("profiles");
  for (std::size_t index = 0; index < entries.size(); ++index) {
    auto o = json::Object::read(entries[index], profile_fields,
                                json::entry_where(origin, "profiles", index, entries[index], "runtime"));
    if (!o) return fail(o.error());
    const auto runtime = runtime_named(o->text("runtime"));
    if (!runtime)
      return fail(o->error("runtime", text::cat("is not a runtime hwaccel knows; known: ", text::join(runtime_names))));
    auto& slot = read[static_cast<std::size_t>(*runtime)];
    if (slot) return fail(o->error("runtime", "repeats an earlier entry"));
    if (*o->number("interval_low") > *o->number("interval_high"))
      return fail(o->error("interval_low", "is above interval_high"));
    slot = profile_of(*o, *runtime);
  }
  std::vector<RuntimeProfile> out;
  out.reserve(runtimes.size());
  for (std::size_t i = 0; i < runtimes.size(); ++i) {
    if (!read[i])
      return fail(root.error("profiles", text::cat("has no entry for runtime ", runtime_names[i])));
    out.push_back(std::move(*read[i]));
  }
  return out;
}

std::string_view to_string(Runtime runtime) noexcept { return runtime_names[static_cast<std::size_t>(runtime)]; }

std::span<const Runtime> all_runtimes() noexcept { return runtimes; }

std::span<const RuntimeProfile> runtime_profiles() noexcept { return builtin_profiles(); }

const RuntimeProfile& runtime_profile(Runtime runtime) noexcept {
  return builtin_profiles()[static_cast<std::size_t>(runtime)];
}

const RuntimeProfile& runtime_profile(Runtime runtime, std::span<const RuntimeProfile> profiles) noexcept {
  const auto at = static_cast<std::size_t>(runtime);
  return at < profiles.size() ? profiles[at] : runtime_profile(runtime);
}

Result<std::vector<RuntimeProfile>> read_runtime_profiles(const std::string& path) {
  auto content = read_small_file(path, max_runtime_profiles_bytes, "a runtime-profile file");
  if (!content) return fail(content.error());
  return parse_runtime_profiles(*content, path);
}

Result<Runtime> parse_runtime(std::string_view name) {
  if (const auto runtime = runtime_named(name)) return *runtime;
  const std::string key = folded(name);
  if (key == "tensorrtllm") return Runtime::trtllm;
  return fail(ErrorKind::invalid_input,
              text::cat("unknown runtime '", name, "'", key == "llamacpp" ? " (llama.cpp needs its backend)" : "",
                        "; valid: ", text::join(runtime_names)));
}

Runtime default_runtime(Backend backend, QuantizationLevel level, bool gguf_file) noexcept {
  const bool gguf = gguf_file || info(level).family == QuantizationFamily::gguf;
  switch (backend) {
    case Backend::cuda: return gguf ? Runtime::llama_cpp_cuda : Runtime::vllm;
    case Backend::rocm: return gguf ? Runtime::llama_cpp_rocm : Runtime::vllm_rocm;
    case Backend::apple: return gguf ? Runtime::llama_cpp_metal : Runtime::mlx;
    case Backend::cpu: return Runtime::llama_cpp_cpu;
    // A GPU only DXGI reports is served through llama.cpp's Vulkan backend.
    case Backend::dxgi: return Runtime::llama_cpp_vulkan;
    default: return gguf ? Runtime::llama_cpp_vulkan : Runtime::vllm;
  }
}

}  // namespace hwaccel
