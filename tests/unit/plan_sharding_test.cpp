// The planner: quantization suggestions, tensor/pipeline/data parallel plans,
// heterogeneous splits, CPU offload, throughput bounds, and the invariants
// every plan keeps (TP divides the heads, every layer placed exactly once).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "../test_support.hpp"

import hwaccel;

#include "module_helpers.hpp"

namespace {

using namespace hwaccel;

using hwaccel::testing::GiB;

AcceleratorRegistry devices(std::string_view spec) { return hypothetical_registry(spec).value(); }
using hwaccel::testing::model;

// What must hold for every plan.
void check_invariants(const Plan& p) {
  ASSERT_FALSE(p.shards.empty());
  const auto& s = p.strategy;
  EXPECT_GE(s.tensor_parallel, 1u);
  // Every replica covers each layer exactly once, in order, per tensor-parallel rank.
  std::uint32_t replica = 0;
  std::vector<std::uint32_t> coverage(p.layers, 0);
  const auto close_replica = [&] {
    for (std::uint32_t l = 0; l < p.layers; ++l) {
      const std::uint32_t ranks = coverage[l];
      EXPECT_GE(ranks, 1u) << "layer " << l << " of replica " << replica << " is not placed";
      EXPECT_TRUE(ranks == 1 || ranks == s.tensor_parallel) << "layer " << l << " held by " << ranks << " devices";
    }
    std::fill(coverage.begin(), coverage.end(), 0);
  };
  for (const auto& sh : p.shards) {
    if (sh.replica != replica) {
      close_replica();
      replica = sh.replica;
    }
    for (std::uint32_t l = sh.first_layer; l < sh.first_layer + sh.layer_count; ++l) {
      ASSERT_LT(l, p.layers);
      ++coverage[l];
    }
    EXPECT_EQ(sh.total_bytes, sh.weights_bytes + sh.kv_cache_bytes + sh.activation_bytes + sh.overhead_bytes);
    if (p.fits) EXPECT_LE(sh.total_bytes, sh.capacity_bytes) << sh.device;
  }
  close_replica();
  EXPECT_EQ(replica + 1, s.data_parallel);
  EXPECT_EQ(p.memory.total_bytes,
            p.memory.weights_bytes + p.memory.kv_cache_bytes + p.memory.activation_bytes + p.memory.overhead_bytes);
  if (p.throughput.decode_tokens_per_s) {
    ASSERT_TRUE(p.throughput.decode_ceiling_tokens_per_s);
    EXPECT_LE(*p.throughput.decode_tokens_per_s, *p.throughput.decode_ceiling_tokens_per_s);
    EXPECT_GT(*p.throughput.decode_tokens_per_s, 0);
  }
  EXPECT_FALSE(p.assumptions.empty());
}

TEST(PlanSharding, HypotheticalDevices) {
  const auto r = devices("8xH100-SXM-80GB");
  ASSERT_EQ(r.devices().size(), 8u);
  EXPECT_EQ(r.devices()[7].id, "cuda:7");
  EXPECT_EQ(r.devices()[0].spec_id, "h100-sxm5-80gb");
  EXPECT_EQ(r.devices()[0].memory_bytes, 80 * GiB);
  ASSERT_EQ(r.interconnects().size(), 1u);
  EXPECT_EQ(r.interconnects()[0].kind, "nvswitch");
  EXPECT_EQ(r.interconnects()[0].device_ids.size(), 8u);
  const auto mixed = devices("2xRTX-4090 + 1xRTX-3090,1xMI250X");
  EXPECT_EQ(mixed.devices().size(), 5u);  // an MI250X is two GCDs
  EXPECT_EQ(mixed.devices()[4].id, "rocm:1");
  EXPECT_EQ(devices("M2-Ultra-64GB").devices()[0].memory_bytes, 64 * GiB);
  EXPECT_EQ(devices("TPU-v5e").devices()[0].family, Family::tpu);
  for (const char* bad : {"", "8x", "0xH100-SXM-80GB", "8xH999", "H100-SXM-80GB+", "8yH100-SXM-80GB",
                          "M2-Ultra-100GB", "2000000xL4-24GB"}) {
    const auto e = hypothetical_registry(bad);
    ASSERT_FALSE(e) << bad;
    EXPECT_EQ(e.error().kind, ErrorKind::invalid_input) << bad;
  }
  EXPECT_NE(hypothetical_registry("8xH999").error().message.find("hwaccel specs"), std::string::npos);
}

TEST(PlanSharding, SingleDeviceWhenItFits) {
  const auto p = plan_inference(devices("1xH100-SXM-80GB"), model("llama-3.1-8b")).value();
  check_invariants(p);
  EXPECT_TRUE(p.fits);
  EXPECT_EQ(p.quantization, QuantizationLevel::bf16);
  EXPECT_TRUE(p.quantization_suggested);
  EXPECT_EQ(p.strategy, (ParallelStrategy{1, 1, 1, 0}));
  EXPECT_EQ(p.strategy.name(), "none");
  ASSERT_EQ(p.shards.size(), 1u);
  EXPECT_EQ(p.shards[0].first_layer, 0u);
  EXPECT_EQ(p.shards[0].layer_count, 32u);
  EXPECT_TRUE(p.shards[0].embedding && p.shards[0].head);
  EXPECT_EQ(p.throughput.decode_bottleneck, "memory_bandwidth");
  EXPECT_EQ(p.throughput.prefill_bottleneck, "compute");
  EXPECT_EQ(p.throughput.bandwidth_source, "published spec");
  EXPECT_EQ(p.launch.visible_devices, "CUDA_VISIBLE_DEVICES=0");
  EXPECT_NE(p.launch.vllm.find("--tensor-parallel-size 1"), std::string::npos);
}

// Decode is bandwidth-bound: ~16 GB read per token (13.5 GB of fp16 weights
// and 2 GiB of KV cache at 4096 tokens) over 3.35 TB/s.
TEST(PlanSharding, DecodeIsBoundedByBandwidth) {
  InferenceSettings s;
  s.quantization = QuantizationLevel::fp16;
  const auto p = plan_inference(devices("1xH100-SXM-80GB"), model("llama-2-7b"), s).value();
  check_invariants(p);
  // The embedding table is looked up, not read: one row per token.
  const double bytes = 2.0 * (6'738'415'616 - 32000 * 4096) + 2.0 * GiB;
  EXPECT_NEAR(*p.throughput.decode_ceiling_tokens_per_s, 3350e9 / bytes, 0.5);
  EXPECT_NEAR(*p.throughput.decode_tokens_per_s, 0.8 * 3350e9 / bytes, 1.0);
  // Prefill is compute-bound: 4096 tokens x 2 x 6.7e9 FLOPs (+ attention) at half of 989 TFLOPS.
  EXPECT_GT(*p.throughput.prefill_tokens_per_s, 10'000);
  EXPECT_LT(*p.throughput.prefill_tokens_per_s, 989.4e12 * 0.5 / (2 * 6.5e9));
  // A slower memory decodes proportionally slower.
  const auto l4 = plan_inference(devices("1xL4-24GB"), model("llama-2-7b"), s).value();
  EXPECT_NEAR(*l4.throughput.decode_tokens_per_s / *p.throughput.decode_tokens_per_s, 300.0 / 3350.0, 0.01);
}

TEST(PlanSharding, TensorParallelInsideNvlinkDomains) {
  const auto r = devices("8xH100-SXM-80GB");
  const auto p = plan_inference(r, model("llama-3.1-70b")).value();
  check_invariants(p);
  EXPECT_EQ(p.quantization, QuantizationLevel::bf16);
  // 141 GB of weights need two H100s; the other six make three more replicas.
  EXPECT_EQ(p.strategy, (ParallelStrategy{2, 1, 4, 0}));
  EXPECT_EQ(p.strategy.name(), "tensor parallel (2) x data parallel (4)");
  EXPECT_EQ(p.shards.size(), 8u);
  EXPECT_EQ(64u % p.strategy.tensor_parallel, 0u);
  EXPECT_NEAR(*p.throughput.decode_tokens_per_s_total, 4 * *p.throughput.decode_tokens_per_s, 1e-6);
  // Latency: the widest group the heads allow.
  InferenceSettings fast;
  fast.objective = PlanObjective::latency;
  const auto l = plan_inference(r, model("llama-3.1-70b"), fast).value();
  check_invariants(l);
  EXPECT_EQ(l.strategy, (ParallelStrategy{8, 1, 1, 0}));
  EXPECT_GT(*l.throughput.decode_tokens_per_s, *p.throughput.decode_tokens_per_s);
  EXPECT_NE(l.launch.vllm.find("--tensor-parallel-size 8"), std::string::npos);
  EXPECT_EQ(l.launch.visible_devices, "CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7");
}

TEST(PlanSharding, TensorParallelDegreeDividesHeads) {
  // Gemma 2 27B: 32 heads, 16 KV heads; Phi-3 medium: 40 heads, 10 KV heads.
  InferenceSettings fast;
  fast.objective = PlanObjective::latency;
  for (const char* id : {"gemma-2-27b", "phi-3-medium", "qwen2.5-7b", "llama-3.1-70b"}) {
    const auto m = model(id);
    const auto p = plan_inference(devices("8xH100-SXM-80GB"), m, fast).value();
    check_invariants(p);
    const std::uint32_t t = p.strategy.tensor_parallel;
    EXPECT_EQ(m.architecture.attention_heads % t, 0u) << id;
    EXPECT_TRUE(m.architecture.kv_heads % t == 0 || t % m.architecture.kv_heads == 0) << id;
  }
  // Qwen2.5 7B has 28 heads and 4 KV heads: 8 does not divide 28, 4 does.
  EXPECT_EQ(plan_inference(devices("8xH100-SXM-80GB"), model("qwen2.5-7b"), fast)->strategy.tensor_parallel, 4u);
}

TEST(PlanSharding, PipelineAcrossDomains) {
  // 405B in bf16 (812 GB) needs more than one 8-GPU NVSwitch board.
  const auto p = plan_inference(devices("16xH100-SXM-80GB"), model("llama-3.1-405b")).value();
  check_invariants(p);
  EXPECT_TRUE(p.fits);
  EXPECT_EQ(p.strategy, (ParallelStrategy{8, 2, 1, 0}));
  EXPECT_EQ(p.shards[0].first_layer, 0u);
  EXPECT_EQ(p.shards[8].first_layer, p.shards[0].layer_count);
  EXPECT_EQ(p.shards[0].layer_count + p.shards[8].layer_count, 126u);
  EXPECT_TRUE(p.shards[0].embedding);
  EXPECT_TRUE(p.shards[15].head);
}

TEST(PlanSharding, PcieOnlyDevicesSplitLayersByFreeMemory) {
  InferenceSettings s;
  s.quantization = QuantizationLevel::fp16;
  // 26 GB of Llama 2 13B over an RTX 4090 and a T4: no NVLink, so layers, not tensors.
  const auto p = plan_inference(devices("1xT4-16GB+1xRTX-4090"), model("llama-2-13b"), s).value();
  check_invariants(p);
  EXPECT_TRUE(p.fits);
  EXPECT_EQ(p.strategy, (ParallelStrategy{1, 2, 1, 0}));
  ASSERT_EQ(p.shards.size(), 2u);
  // The larger device comes first and takes more layers, in proportion to its free memory.
  EXPECT_EQ(p.shards[0].device, "cuda:1");
  EXPECT_GT(p.shards[0].layer_count, p.shards[1].layer_count);
  const double free0 = static_cast<double>(p.shards[0].capacity_bytes - p.shards[0].overhead_bytes - p.shards[0].activation_bytes);
  const double free1 = static_cast<double>(p.shards[1].capacity_bytes - p.shards[1].overhead_bytes - p.shards[1].activation_bytes);
  EXPECT_NEAR(p.shards[0].layer_count / 40.0, free0 / (free0 + free1), 0.06);
  bool pcie_note = false;
  for (const auto& a : p.assumptions) pcie_note |= a.find("PCIe-only") != std::string::npos;
  EXPECT_TRUE(pcie_note);
  EXPECT_NE(p.launch.vllm.find("--pipeline-parallel-size 2"), std::string::npos) << p.launch.vllm;
  EXPECT_NE(p.launch.llama_cpp.find("--split-mode layer --tensor-split " + std::to_string(p.shards[0].layer_count) + "," +
                                    std::to_string(p.shards[1].layer_count)),
            std::string::npos)
      << p.launch.llama_cpp;
  EXPECT_EQ(p.launch.visible_devices, "CUDA_VISIBLE_DEVICES=1,0");
}

TEST(PlanSharding, ServingRuntimesShardTensorsOverPcie) {
  // Llama 3.1 70B in FP8 (70 GB) on four L40S, which no NVLink joins.
  InferenceSettings s;
  s.quantization = QuantizationLevel::fp8_e4m3;
  s.objective = PlanObjective::latency;
  s.runtime = Runtime::trtllm;
  const auto registry = devices("4xL40S-48GB");
  const auto served = plan_inference(registry, model("llama-3.1-70b"), s).value();
  check_invariants(served);
  // TensorRT-LLM (like vLLM and SGLang) shards each layer over PCIe with NCCL.
  EXPECT_EQ(served.strategy.tensor_parallel, 4u);
  EXPECT_EQ(served.strategy.pipeline_parallel, 1u);
  bool over_pcie = false;
  for (const auto& a : served.assumptions)
    over_pcie |= a.find("over PCIe (NCCL all-reduce 40 us") != std::string::npos && a.find("31.5 GB/s") != std::string::npos;
  EXPECT_TRUE(over_pcie) << ::testing::PrintToString(served.assumptions);

  // Each token pays 2 all-reduces per layer at PCIe latency: 80 layers x 2 x 40 us.
  ASSERT_TRUE(served.throughput.decode_tokens_per_s);
  EXPECT_LT(*served.throughput.decode_tokens_per_s, 1.0 / (80 * 2 * 40e-6));

  // llama.cpp splits layers on the same cards.
  s.runtime = Runtime::llama_cpp_cuda;
  s.quantization = QuantizationLevel::q8_0;
  const auto layered = plan_inference(registry, model("llama-3.1-70b"), s).value();
  check_invariants(layered);
  EXPECT_EQ(layered.strategy.tensor_parallel, 1u);
  EXPECT_GT(layered.strategy.pipeline_parallel, 1u);

  // Mixed cards keep splitting layers, whatever the runtime.
  s.runtime = Runtime::vllm;
  s.quantization = QuantizationLevel::fp16;
  const auto mixed = plan_inference(devices("1xT4-16GB+1xRTX-4090"), model("llama-2-13b"), s).value();
  EXPECT_EQ(mixed.strategy.tensor_parallel, 1u);
}

AcceleratorRegistry with_host(AcceleratorRegistry r, std::uint64_t memory) {
  DeviceProfile cpu;
  cpu.backend = Backend::cpu;
  cpu.family = Family::cpu;
  cpu.name = "Test CPU";
  cpu.memory_bytes = memory;
  cpu.memory_free_bytes = memory;
  cpu.properties["isa"] = "avx2,fma";
  EXPECT_TRUE(r.add_device(cpu));
  return r;
}

TEST(PlanSharding, CpuOffloadAsLastResort) {
  InferenceSettings s;
  s.quantization = QuantizationLevel::q4_k_m;
  const auto r = with_host(devices("1xRTX-4090"), 128 * GiB);
  const auto p = plan_inference(r, model("llama-3.1-70b"), s).value();
  check_invariants(p);
  EXPECT_TRUE(p.fits);
  EXPECT_GT(p.strategy.cpu_offload_layers, 0u);
  EXPECT_LT(p.strategy.cpu_offload_layers, 80u);
  ASSERT_EQ(p.shards.size(), 2u);
  EXPECT_EQ(p.shards[1].device, "cpu:0");
  EXPECT_TRUE(p.shards[1].cpu_offload);
  EXPECT_TRUE(p.shards[1].embedding);
  EXPECT_EQ(p.shards[0].layer_count + p.shards[1].layer_count, 80u);
  EXPECT_NE(p.launch.llama_cpp.find(text::cat("-ngl ", p.shards[0].layer_count)), std::string::npos)
      << p.launch.llama_cpp;
  // The host's bandwidth is unknown here: no decode figure rather than a guess.
  EXPECT_FALSE(p.throughput.decode_tokens_per_s);
  // Offload forbidden: it does not fit, and says why.
  s.allow_cpu_offload = false;
  const auto no = plan_inference(r, model("llama-3.1-70b"), s).value();
  EXPECT_FALSE(no.fits);
  EXPECT_NE(no.assumptions.back().find("does not fit"), std::string::npos);
}

std::string suggested(std::string_view spec, std::string_view id) {
  const auto r = suggest_quantization(devices(spec), model(id));
  return r ? std::string(to_string(*r)) : "error: " + r.error().message;
}

TEST(PlanSharding, SuggestsTheBestLevelTheDevicesRun) {
  EXPECT_EQ(suggested("1xH100-SXM-80GB", "llama-3.1-8b"), "bf16");
  // 70B: bf16 needs two H100s; one H100 runs it in fp8.
  EXPECT_EQ(suggested("1xH100-SXM-80GB", "llama-3.1-70b"), "fp8_e4m3");
  EXPECT_EQ(suggested("2xH100-SXM-80GB", "llama-3.1-70b"), "bf16");
  // A T4 has no bf16 and 16 GB: fp16 does not fit, fp8 does not exist, int8 does.
  EXPECT_EQ(suggested("1xT4-16GB", "llama-3.1-8b"), "int8");
  // Multi-device aware: four T4s hold 8B in fp16 together.
  EXPECT_EQ(suggested("4xT4-16GB", "llama-3.1-8b"), "fp16");
  // Apple GPUs get llama.cpp levels.
  EXPECT_EQ(suggested("M2-Max-32GB", "llama-3.1-70b"), "error: no quantization level fits llama-3.1-70b "
                                                        "(70553706496 parameters) with 4096 tokens x 1 sequence(s) on "
                                                        "these devices");
  EXPECT_EQ(suggested("M2-Max-96GB", "llama-3.1-70b"), "q6_k");
  EXPECT_EQ(suggested("M2-Ultra-192GB", "llama-3.1-70b"), "q8_0");
  // Nothing fits: an error, not a silent INT4.
  const auto none = suggest_quantization(devices("1xL4-24GB"), model("llama-3.1-405b"));
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().kind, ErrorKind::unsupported);
}

TEST(PlanSharding, SeedEntryPoints) {
  const auto r = devices("2xA100-SXM-80GB");
  EXPECT_EQ(suggest_quantization(r, 7'000'000'000).value(), QuantizationLevel::bf16);
  const auto p = plan_sharding(r, 70'000'000'000, QuantizationLevel::bf16).value();
  check_invariants(p);
  EXPECT_TRUE(p.architecture_assumed);
  EXPECT_EQ(p.parameters, 70'000'000'000u);
  EXPECT_EQ(p.layers, 80u);
  EXPECT_EQ(plan_sharding(r, 0, QuantizationLevel::bf16).error().kind, ErrorKind::invalid_input);
  EXPECT_EQ(suggest_quantization(r, 0).error().kind, ErrorKind::invalid_input);
}

TEST(PlanSharding, BadInputIsAClearError) {
  const auto r = devices("1xH100-SXM-80GB");
  InferenceSettings s;
  s.context = 0;
  EXPECT_EQ(plan_inference(r, model("llama-2-7b"), s).error().kind, ErrorKind::invalid_input);
  s.context = 1ull << 40;
  EXPECT_EQ(plan_inference(r, model("llama-2-7b"), s).error().kind, ErrorKind::invalid_input);
  s.context = 8192;  // Llama 2 was trained for 4096
  EXPECT_NE(plan_inference(r, model("llama-2-7b"), s).error().message.find("4096"), std::string::npos);
  s = {};
  s.batch = 0;
  EXPECT_EQ(plan_inference(r, model("llama-2-7b"), s).error().kind, ErrorKind::invalid_input);
  s = {};
  s.reserve_fraction = 1.5;
  EXPECT_EQ(plan_inference(r, model("llama-2-7b"), s).error().kind, ErrorKind::invalid_input);
  s = {};
  s.kv_cache_type = QuantizationLevel::q4_k_m;
  EXPECT_EQ(plan_inference(r, model("llama-2-7b"), s).error().kind, ErrorKind::invalid_input);
  // A TPU cannot run GGUF and there is no host to fall back to.
  s = {};
  s.quantization = QuantizationLevel::q4_k_m;
  const auto tpu = plan_inference(devices("4xTPU-v5e"), model("llama-2-7b"), s);
  ASSERT_FALSE(tpu);
  EXPECT_EQ(tpu.error().kind, ErrorKind::unsupported);
  EXPECT_EQ(plan_inference(AcceleratorRegistry{}, model("llama-2-7b")).error().kind, ErrorKind::unsupported);
}

TEST(PlanSharding, CpuOnlyMachineFromAFixture) {
  const auto fixture = FixtureSystem::open((hwaccel::testing::fixtures_root() / "machines/dual-xeon-8480-no-accel").string());
  ASSERT_TRUE(fixture);
  const auto registry = DetectBuilder{}.detect(**fixture);
  const auto p = plan_inference(registry, model("llama-3.1-70b")).value();
  check_invariants(p);
  EXPECT_TRUE(p.fits);
  EXPECT_EQ(p.quantization, QuantizationLevel::bf16);  // AMX/AVX-512 BF16, 2 TB of RAM
  ASSERT_EQ(p.shards.size(), 1u);
  EXPECT_EQ(p.shards[0].device, "cpu:0");
  EXPECT_FALSE(p.shards[0].cpu_offload);
  EXPECT_FALSE(p.throughput.decode_tokens_per_s);
  EXPECT_EQ(p.throughput.decode_bottleneck, "unknown");
}

TEST(PlanSharding, ScalesTo128And10000Devices) {
  for (const char* spec : {"128xH100-SXM-80GB", "10000xH100-SXM-80GB"}) {
    const auto r = devices(spec);
    const auto p = plan_inference(r, model("llama-3.1-70b")).value();
    check_invariants(p);
    EXPECT_EQ(p.strategy.tensor_parallel, 2u) << spec;
    EXPECT_EQ(p.strategy.data_parallel, r.devices().size() / 2) << spec;
    EXPECT_EQ(p.shards.size(), r.devices().size()) << spec;
  }
  // 405B over 10 000 devices: replicas of 2 boards, the rest idle and said so.
  const auto big = plan_inference(devices("10000xH100-SXM-80GB"), model("llama-3.1-405b")).value();
  check_invariants(big);
  EXPECT_EQ(big.strategy.tensor_parallel, 8u);
  EXPECT_EQ(big.strategy.pipeline_parallel, 2u);
  EXPECT_EQ(big.strategy.data_parallel, 625u);
}

TEST(PlanSharding, MixtureOfExpertsDecodeReadsActiveExperts) {
  InferenceSettings s;
  s.quantization = QuantizationLevel::bf16;
  const auto p = plan_inference(devices("2xH100-SXM-80GB"), model("mixtral-8x7b"), s).value();
  check_invariants(p);
  // Batch 1 reads 2 of 8 experts: faster than reading all 93 GB.
  EXPECT_GT(*p.throughput.decode_ceiling_tokens_per_s, 2 * 3350e9 / (2.0 * 46.7e9) * 1.5);
  s.batch = 64;
  const auto wide = plan_inference(devices("2xH100-SXM-80GB"), model("mixtral-8x7b"), s).value();
  EXPECT_LT(*wide.throughput.decode_tokens_per_s, *p.throughput.decode_tokens_per_s);
}

TEST(PlanSharding, NpusStayOutNextToGpus) {
  // Apple silicon: the GPU and the Neural Engine share one unified memory.
  auto r = devices("M2-Max-96GB");
  DeviceProfile ane;
  ane.backend = Backend::apple;
  ane.family = Family::npu;
  ane.name = "Apple Neural Engine";
  ane.memory_bytes = 96 * GiB;
  ane.memory_kind = MemoryKind::unified;
  ASSERT_TRUE(r.add_device(ane));
  InferenceSettings s;
  s.quantization = QuantizationLevel::fp16;
  const auto p = plan_inference(r, model("llama-3.1-8b"), s).value();
  check_invariants(p);
  ASSERT_EQ(p.shards.size(), 1u);
  EXPECT_EQ(p.shards[0].device, "apple:0");
  bool noted = false;
  for (const auto& a : p.assumptions) noted |= a.find("apple:1 not used: NPUs") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(PlanSharding, IdleDevicesAreNamed) {
  InferenceSettings s;
  s.quantization = QuantizationLevel::q4_k_m;
  // 26 GiB of Mixtral needs two 24 GB cards; the third cannot hold a replica alone.
  const auto p = plan_inference(devices("2xRTX-4090+1xRTX-3090"), model("mixtral-8x7b"), s).value();
  check_invariants(p);
  EXPECT_EQ(p.strategy, (ParallelStrategy{1, 2, 1, 0}));
  bool named = false;
  for (const auto& a : p.assumptions) named |= a == "cuda:2 left idle: too few for another replica";
  EXPECT_TRUE(named);
}

TEST(PlanSharding, GgufFilesKeepTheirLevel) {
  auto m = model("llama-2-7b");
  m.source = ModelSource::gguf;
  m.origin = "/models/llama-2-7b.Q4_K_M.gguf";
  m.stored = StoredWeights{};
  m.stored->level = QuantizationLevel::q4_k_m;
  const auto p = plan_inference(devices("1xRTX-4090"), m).value();
  EXPECT_EQ(p.quantization, QuantizationLevel::q4_k_m);
  EXPECT_FALSE(p.quantization_suggested);
  EXPECT_NE(p.launch.llama_cpp.find("llama-server -m /models/llama-2-7b.Q4_K_M.gguf"), std::string::npos);
  EXPECT_NE(p.launch.llama_cpp.find("-ngl 33"), std::string::npos) << p.launch.llama_cpp;
  EXPECT_TRUE(p.launch.vllm.empty());
}

TEST(PlanSharding, JsonHasEveryPart) {
  const auto p = plan_inference(devices("2xH100-SXM-80GB"), model("llama-3.1-70b")).value();
  const std::string j = to_json(p);
  for (const char* key : {"\"model\":{", "\"params\":70553706496", "\"layers\":80", "\"quantization\":{",
                          "\"weights_bytes\":", "\"kv_cache_bytes\":", "\"activation_bytes\":", "\"overhead_bytes\":",
                          "\"total_bytes\":", "\"strategy\":{", "\"tp\":2", "\"pp\":1", "\"dp\":1", "\"shards\":[",
                          "\"layers\":[0,79]", "\"decode_tokens_per_s\":", "\"prefill_tokens_per_s\":",
                          "\"bottleneck\":\"memory_bandwidth\"", "\"fits\":true", "\"assumptions\":["})
    EXPECT_NE(j.find(key), std::string::npos) << key << "\n" << j;
  EXPECT_EQ(to_json(p), to_json(p));
  EXPECT_NE(to_json(p, true).find("\n  \"model\": {"), std::string::npos);
}

}  // namespace
