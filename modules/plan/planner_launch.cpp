// Launch hints for a plan: environment and command lines for the runtimes.
module;
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>
module hwaccel.plan;

namespace hwaccel::planner_detail {

std::string visible_devices_variable(Backend b) {
  switch (b) {
    case Backend::cuda: return "CUDA_VISIBLE_DEVICES";
    case Backend::rocm: return "HIP_VISIBLE_DEVICES";
    case Backend::gaudi: return "HABANA_VISIBLE_MODULES";
    case Backend::tpu: return "TPU_VISIBLE_CHIPS";
    default: return {};
  }
}

bool vllm_backend(Backend b) {
  return b == Backend::cuda || b == Backend::rocm || b == Backend::tpu || b == Backend::gaudi ||
         b == Backend::aws_neuron || b == Backend::intel_oneapi;
}

std::string model_argument(const ModelDescription& m) {
  if (m.source == ModelSource::catalogue)
    if (const auto* e = find_catalogue_model(m.origin)) return std::string(e->hf_repo);
  if (!m.origin.empty()) return m.origin;
  return "<model>";
}

LaunchHints launch_hints(const Fleet& f, const CostModel& c, const Layout& l, const InferenceSettings& s,
                         const ModelDescription& m, const Plan& plan) {
  LaunchHints h;
  if (l.replicas.empty()) return h;
  const Replica& r = l.replicas.front();
  std::vector<const Device*> gpus;
  for (const auto& st : r.stages)
    if (st.group)
      for (auto i : st.group->members) gpus.push_back(&f.accelerators[i]);
  if (!gpus.empty()) {
    const Backend b = gpus.front()->profile->backend;
    const std::string var = visible_devices_variable(b);
    bool same_backend = true;
    for (const auto* d : gpus) same_backend &= d->profile->backend == b;
    if (!var.empty() && same_backend) {
      std::string list;
      for (const auto* d : gpus) {
        if (!list.empty()) list += ',';
        text::append_uint(list, d->profile->runtime_index.value_or(d->profile->index));
      }
      h.visible_devices = var + "=" + list;
    }
    const QuantizationLevel q = plan.quantization;
    if (same_backend && vllm_backend(b) && info(q).family != QuantizationFamily::gguf && plan.strategy.cpu_offload_layers == 0) {
      std::string cmd = text::cat("vllm serve ", model_argument(m), " --tensor-parallel-size ", plan.strategy.tensor_parallel,
                                  " --pipeline-parallel-size ", plan.strategy.pipeline_parallel);
      if (plan.strategy.data_parallel > 1) cmd += text::cat(" --data-parallel-size ", plan.strategy.data_parallel);
      cmd += text::cat(" --max-model-len ", s.context, " --max-num-seqs ", s.batch, " --gpu-memory-utilization ",
                       std::round((1.0 - s.reserve_fraction) * 100) / 100);
      switch (q) {
        case QuantizationLevel::bf16: cmd += " --dtype bfloat16"; break;
        case QuantizationLevel::fp16: cmd += " --dtype float16"; break;
        case QuantizationLevel::fp32: cmd += " --dtype float32"; break;
        case QuantizationLevel::fp8_e4m3:
        case QuantizationLevel::fp8_e5m2: cmd += " --quantization fp8"; break;
        case QuantizationLevel::nf4: cmd += " --quantization bitsandbytes"; break;
        case QuantizationLevel::int4: cmd += "  # an AWQ or GPTQ checkpoint"; break;
        case QuantizationLevel::int8: cmd += "  # a W8A8 (compressed-tensors) checkpoint"; break;
        default: break;
      }
      if (plan.kv_cache_type == QuantizationLevel::fp8_e4m3) cmd += " --kv-cache-dtype fp8_e4m3";
      if (plan.kv_cache_type == QuantizationLevel::fp8_e5m2) cmd += " --kv-cache-dtype fp8_e5m2";
      h.vllm = std::move(cmd);
    }
  }
  const QuantizationLevel q = plan.quantization;
  const bool gguf_format = info(q).family == QuantizationFamily::gguf || q == QuantizationLevel::fp16 ||
                           q == QuantizationLevel::bf16 || q == QuantizationLevel::fp32;
  // llama.cpp runs on CPUs and on CUDA, ROCm, Metal, Vulkan and SYCL GPUs.
  bool llama_cpp_devices = true;
  for (const auto* d : gpus) {
    const Backend b = d->profile->backend;
    llama_cpp_devices &= b == Backend::cuda || b == Backend::rocm || b == Backend::apple || b == Backend::vulkan ||
                         b == Backend::intel_oneapi;
  }
  if (gguf_format && llama_cpp_devices && plan.strategy.tensor_parallel == 1) {
    std::uint64_t gpu_layers = 0;
    std::string split;
    for (const auto& st : r.stages) {
      if (!st.group) continue;
      gpu_layers += st.layer_count;
      if (!split.empty()) split += ',';
      text::append_uint(split, st.layer_count);
    }
    // -ngl counts the output layer too: one more than the blocks offloads everything.
    const bool all_on_gpu = !gpus.empty() && gpu_layers == c.layers();
    std::string cmd = text::cat("llama-server -m ", m.source == ModelSource::gguf ? m.origin : std::string("<model>.gguf"),
                                " -c ", s.context * s.batch, " -np ", s.batch, " -ngl ",
                                all_on_gpu ? gpu_layers + 1 : gpu_layers);
    if (r.stages.size() > 1 && gpus.size() > 1) cmd += " --split-mode layer --tensor-split " + split;
    if (plan.kv_cache_type != QuantizationLevel::fp16 && kv_cache_bits(plan.kv_cache_type) &&
        info(plan.kv_cache_type).family == QuantizationFamily::gguf)
      cmd += text::cat(" --cache-type-k ", to_string(plan.kv_cache_type), " --cache-type-v ", to_string(plan.kv_cache_type));
    h.llama_cpp = std::move(cmd);
  }
  return h;
}

}  // namespace hwaccel::planner_detail
