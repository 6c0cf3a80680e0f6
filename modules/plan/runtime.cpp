// The runtime-profile table and runtime names. The fitted parameters come
// from tests/data/speed/ through fit_decode_profile (the speed-model test
// refits them and fails when this table drifts from the data);
// docs/planning.md "Speed model" lists each source.
module;
#include <array>
#include <cctype>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
module hwaccel.plan;

namespace hwaccel {
namespace {

constexpr std::array<Runtime, 10> runtimes = {
    Runtime::llama_cpp_cuda, Runtime::llama_cpp_rocm, Runtime::llama_cpp_metal, Runtime::llama_cpp_vulkan,
    Runtime::llama_cpp_cpu,  Runtime::mlx,            Runtime::vllm,            Runtime::sglang,
    Runtime::trtllm,         Runtime::vllm_rocm,
};

#include "runtime_profiles.inc"

// A name without case or punctuation: "llama.cpp-cuda", "LlamaCpp_CUDA" and
// "llama-cpp-cuda" are the same runtime.
std::string folded(std::string_view name) {
  std::string out;
  for (char ch : name)
    if (std::isalnum(static_cast<unsigned char>(ch))) out += text::to_lower(ch);
  return out;
}

}  // namespace

std::string_view to_string(Runtime runtime) noexcept { return runtime_profile(runtime).name; }

std::span<const Runtime> all_runtimes() noexcept { return runtimes; }

std::span<const RuntimeProfile> runtime_profiles() noexcept { return profiles; }

const RuntimeProfile& runtime_profile(Runtime runtime) noexcept {
  return profiles[static_cast<std::size_t>(runtime)];
}

Result<Runtime> parse_runtime(std::string_view name) {
  const std::string key = folded(name);
  std::string names;
  for (const auto& p : profiles) {
    if (key == folded(p.name)) return p.runtime;
    names += names.empty() ? "" : ", ";
    names += p.name;
  }
  if (key == "tensorrtllm") return Runtime::trtllm;
  return fail(ErrorKind::invalid_input,
              text::cat("unknown runtime '", name, "'", key == "llamacpp" ? " (llama.cpp needs its backend)" : "",
                        "; valid: ", names));
}

Runtime default_runtime(Backend backend, QuantizationLevel level, bool gguf_file) noexcept {
  const bool gguf = gguf_file || info(level).family == QuantizationFamily::gguf;
  switch (backend) {
    case Backend::cuda: return gguf ? Runtime::llama_cpp_cuda : Runtime::vllm;
    case Backend::rocm: return gguf ? Runtime::llama_cpp_rocm : Runtime::vllm_rocm;
    case Backend::apple: return gguf ? Runtime::llama_cpp_metal : Runtime::mlx;
    case Backend::cpu: return Runtime::llama_cpp_cpu;
    default: return gguf ? Runtime::llama_cpp_vulkan : Runtime::vllm;
  }
}

}  // namespace hwaccel
