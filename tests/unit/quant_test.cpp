// Quantization levels: real bits per weight (ggml block sizes), names, KV
// cache types and which devices run which level.
#include <gtest/gtest.h>

#include <string>

import hwaccel;

namespace {

using namespace hwaccel;

TEST(Quant, InfoTableIsIndexedByLevel) {
  const auto all = all_quantizations();
  ASSERT_EQ(all.size(), 25u);
  for (std::size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(static_cast<std::size_t>(all[i].level), i) << all[i].name;
    EXPECT_EQ(&info(all[i].level), &all[i]);
    EXPECT_EQ(parse_quantization(all[i].name).value(), all[i].level);
    EXPECT_EQ(parse_quantization(all[i].display_name).value(), all[i].level);
  }
}

// Block sizes from ggml-common.h: sizeof(block_q4_0) = 2 + 16 for 32 weights, etc.
TEST(Quant, GgmlBlockSizesGiveRealBitsPerWeight) {
  const auto bpw = [](GgmlType t) { return ggml_encoding(t)->bits_per_weight(); };
  EXPECT_DOUBLE_EQ(bpw(GgmlType::q4_0), 4.5);
  EXPECT_DOUBLE_EQ(bpw(GgmlType::q4_1), 5.0);
  EXPECT_DOUBLE_EQ(bpw(GgmlType::q5_0), 5.5);
  EXPECT_DOUBLE_EQ(bpw(GgmlType::q5_1), 6.0);
  EXPECT_DOUBLE_EQ(bpw(GgmlType::q8_0), 8.5);
  EXPECT_DOUBLE_EQ(bpw(GgmlType::q2_k), 2.625);
  EXPECT_DOUBLE_EQ(bpw(GgmlType::q3_k), 3.4375);
  EXPECT_DOUBLE_EQ(bpw(GgmlType::q4_k), 4.5);
  EXPECT_DOUBLE_EQ(bpw(GgmlType::q5_k), 5.5);
  EXPECT_DOUBLE_EQ(bpw(GgmlType::q6_k), 6.5625);
  EXPECT_DOUBLE_EQ(bpw(GgmlType::iq4_xs), 4.25);
  EXPECT_DOUBLE_EQ(bpw(GgmlType::iq4_nl), 4.5);
  EXPECT_DOUBLE_EQ(bpw(GgmlType::f16), 16.0);
  EXPECT_DOUBLE_EQ(bpw(GgmlType::bf16), 16.0);
  EXPECT_DOUBLE_EQ(bpw(GgmlType::f32), 32.0);
  EXPECT_EQ(ggml_type_from_value(12), GgmlType::q4_k);
  EXPECT_EQ(ggml_type_from_value(30), GgmlType::bf16);
  EXPECT_FALSE(ggml_type_from_value(4));   // Q4_2, removed from the format
  EXPECT_FALSE(ggml_type_from_value(999));
  EXPECT_EQ(to_string(GgmlType::iq4_xs), "IQ4_XS");
}

TEST(Quant, LevelsIncludeTheirScaleOverhead) {
  EXPECT_DOUBLE_EQ(info(QuantizationLevel::q4_0).bits_per_weight(), 4.5);
  EXPECT_DOUBLE_EQ(info(QuantizationLevel::q8_0).bits_per_weight(), 8.5);
  EXPECT_DOUBLE_EQ(info(QuantizationLevel::q4_k_m).bits_per_weight(), 4.5);
  EXPECT_DOUBLE_EQ(info(QuantizationLevel::q6_k).bits_per_weight(), 6.5625);
  EXPECT_DOUBLE_EQ(info(QuantizationLevel::q5_k_m).bits_per_weight(), 5.5);
  // NF4 with double quantization: 4 + 8/64 + 32/(64*256) bits.
  EXPECT_NEAR(info(QuantizationLevel::nf4).bits_per_weight(), 4.0 + 8.0 / 64 + 32.0 / (64 * 256), 1e-12);
  // GPTQ/AWQ group 128: fp16 scale and 4-bit zero per group.
  EXPECT_DOUBLE_EQ(info(QuantizationLevel::int4).bits_per_weight(), 4.0 + 16.0 / 128 + 4.0 / 128);
  EXPECT_DOUBLE_EQ(info(QuantizationLevel::bf16).bits_per_weight(), 16.0);
  EXPECT_DOUBLE_EQ(info(QuantizationLevel::fp8_e4m3).bits_per_weight(), 8.0);
}

TEST(Quant, TensorBytesRoundPartialBlocksUp) {
  const auto q4_k = *ggml_encoding(GgmlType::q4_k);
  EXPECT_EQ(q4_k.bytes(4096, 4096), 4096u * 16 * 144);
  EXPECT_EQ(q4_k.bytes(1, 257), 2u * 144);  // a partial super-block takes a whole one
  EXPECT_EQ(q4_k.bytes(0, 4096), 0u);
  EXPECT_FALSE(q4_k.bytes(UINT64_MAX, UINT64_MAX));
}

TEST(Quant, ParsesAliasesAndRejectsUnknownNames) {
  EXPECT_EQ(parse_quantization("Q4_K_M").value(), QuantizationLevel::q4_k_m);
  EXPECT_EQ(parse_quantization("q4-k-m").value(), QuantizationLevel::q4_k_m);
  EXPECT_EQ(parse_quantization("q4_k").value(), QuantizationLevel::q4_k_m);
  EXPECT_EQ(parse_quantization("bfloat16").value(), QuantizationLevel::bf16);
  EXPECT_EQ(parse_quantization(" FP16 ").value(), QuantizationLevel::fp16);
  EXPECT_EQ(parse_quantization("half").value(), QuantizationLevel::fp16);
  EXPECT_EQ(parse_quantization("fp8").value(), QuantizationLevel::fp8_e4m3);
  EXPECT_EQ(parse_quantization("awq").value(), QuantizationLevel::int4);
  EXPECT_EQ(parse_quantization("int4").value(), QuantizationLevel::int4);
  EXPECT_EQ(parse_quantization("nf4").value(), QuantizationLevel::nf4);
  for (const char* bad : {"", "q4_k_x", "int3", "fp64", "\xff\xfe"}) {
    const auto r = parse_quantization(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().kind, ErrorKind::invalid_input);
    EXPECT_NE(r.error().message.find("valid: fp32, bf16"), std::string::npos) << r.error().message;
  }
}

TEST(Quant, GgufFileTypes) {
  EXPECT_EQ(quantization_from_gguf_file_type(0), QuantizationLevel::fp32);
  EXPECT_EQ(quantization_from_gguf_file_type(1), QuantizationLevel::fp16);
  EXPECT_EQ(quantization_from_gguf_file_type(7), QuantizationLevel::q8_0);
  EXPECT_EQ(quantization_from_gguf_file_type(15), QuantizationLevel::q4_k_m);
  EXPECT_EQ(quantization_from_gguf_file_type(18), QuantizationLevel::q6_k);
  EXPECT_EQ(quantization_from_gguf_file_type(32), QuantizationLevel::bf16);
  EXPECT_FALSE(quantization_from_gguf_file_type(19));  // IQ2_XXS: not modelled
}

TEST(Quant, KvCacheTypes) {
  EXPECT_EQ(kv_cache_bits(QuantizationLevel::fp16).value(), 16.0);
  EXPECT_EQ(kv_cache_bits(QuantizationLevel::fp8_e4m3).value(), 8.0);
  EXPECT_EQ(kv_cache_bits(QuantizationLevel::q8_0).value(), 8.5);
  EXPECT_EQ(kv_cache_bits(QuantizationLevel::q4_0).value(), 4.5);
  const auto bad = kv_cache_bits(QuantizationLevel::q4_k_m);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().kind, ErrorKind::invalid_input);
}

DeviceTraits cuda(std::string_view cc, std::string_view name = "NVIDIA GPU") {
  DeviceTraits t;
  t.backend = Backend::cuda;
  t.family = Family::gpu;
  t.compute_capability = cc;
  t.name = name;
  return t;
}

TEST(Quant, NvidiaGenerations) {
  using enum SupportLevel;
  // T4 (7.5) and V100 (7.0) have no bf16; A100 (8.0) has; fp8 needs 8.9.
  EXPECT_EQ(quantization_support(QuantizationLevel::bf16, cuda("7.5")).level, unsupported);
  EXPECT_EQ(quantization_support(QuantizationLevel::bf16, cuda("7.0")).level, unsupported);
  EXPECT_NE(quantization_support(QuantizationLevel::bf16, cuda("7.5")).reason.find("8.0"), std::string::npos);
  EXPECT_EQ(quantization_support(QuantizationLevel::bf16, cuda("8.0")).level, native);
  EXPECT_EQ(quantization_support(QuantizationLevel::fp16, cuda("7.5")).level, native);
  EXPECT_EQ(quantization_support(QuantizationLevel::fp8_e4m3, cuda("9.0")).level, native);
  EXPECT_EQ(quantization_support(QuantizationLevel::fp8_e4m3, cuda("8.9")).level, native);
  EXPECT_EQ(quantization_support(QuantizationLevel::fp8_e4m3, cuda("8.0")).level, weight_only);
  EXPECT_EQ(quantization_support(QuantizationLevel::fp8_e4m3, cuda("7.5")).level, unsupported);
  EXPECT_EQ(quantization_support(QuantizationLevel::int4, cuda("7.5")).level, weight_only);
  EXPECT_EQ(quantization_support(QuantizationLevel::q4_k_m, cuda("7.0")).level, weight_only);
  // Unknown generation: only what every CUDA device runs.
  EXPECT_EQ(quantization_support(QuantizationLevel::bf16, cuda("")).level, unsupported);
  EXPECT_EQ(quantization_support(QuantizationLevel::fp16, cuda("")).level, native);
}

TEST(Quant, OtherFamilies) {
  using enum SupportLevel;
  DeviceTraits mi300{Backend::rocm, Family::gpu, "AMD Instinct MI300X", "gfx942", "", "", ""};
  DeviceTraits mi250{Backend::rocm, Family::gpu, "AMD Instinct MI250X", "gfx90a", "", "", ""};
  EXPECT_EQ(quantization_support(QuantizationLevel::fp8_e4m3, mi300).level, native);
  EXPECT_EQ(quantization_support(QuantizationLevel::fp8_e4m3, mi250).level, unsupported);
  EXPECT_EQ(quantization_support(QuantizationLevel::bf16, mi250).level, native);
  DeviceTraits v5e{Backend::tpu, Family::tpu, "TPU v5 lite", "v5e", "", "", ""};
  DeviceTraits v5p{Backend::tpu, Family::tpu, "TPU v5p", "v5p", "", "", ""};
  EXPECT_EQ(quantization_support(QuantizationLevel::bf16, v5e).level, native);
  EXPECT_EQ(quantization_support(QuantizationLevel::int8, v5e).level, native);
  EXPECT_EQ(quantization_support(QuantizationLevel::fp16, v5e).level, unsupported);
  EXPECT_EQ(quantization_support(QuantizationLevel::fp8_e4m3, v5e).level, unsupported);
  EXPECT_EQ(quantization_support(QuantizationLevel::fp8_e4m3, v5p).level, native);
  EXPECT_EQ(quantization_support(QuantizationLevel::q4_k_m, v5p).level, unsupported);
  DeviceTraits gaudi2{Backend::gaudi, Family::asic, "HL-225", "", "", "", ""};
  DeviceTraits gaudi_unknown{Backend::gaudi, Family::asic, "Habana device", "", "", "", ""};
  EXPECT_EQ(quantization_support(QuantizationLevel::fp8_e4m3, gaudi2).level, native);
  EXPECT_EQ(quantization_support(QuantizationLevel::fp8_e4m3, gaudi_unknown).level, unsupported);
  DeviceTraits npu{Backend::intel_npu, Family::npu, "Intel NPU", "", "", "", ""};
  EXPECT_EQ(quantization_support(QuantizationLevel::int8, npu).level, native);
  EXPECT_EQ(quantization_support(QuantizationLevel::int4, npu).level, weight_only);
  EXPECT_EQ(quantization_support(QuantizationLevel::bf16, npu).level, unsupported);
  DeviceTraits plugin{Backend::plugin, Family::asic, "Tenstorrent Wormhole n300", "", "", "", "bf16, fp8_e4m3"};
  DeviceTraits plugin_silent{Backend::plugin, Family::asic, "Some ASIC", "", "", "", ""};
  EXPECT_EQ(quantization_support(QuantizationLevel::bf16, plugin).level, native);
  EXPECT_EQ(quantization_support(QuantizationLevel::fp8_e4m3, plugin).level, native);
  EXPECT_EQ(quantization_support(QuantizationLevel::int8, plugin).level, unsupported);
  EXPECT_EQ(quantization_support(QuantizationLevel::bf16, plugin_silent).level, unsupported);
  DeviceTraits m1{Backend::apple, Family::gpu, "Apple M1", "", "", "", ""};
  DeviceTraits m3{Backend::apple, Family::gpu, "Apple M3 Max", "", "", "", ""};
  EXPECT_EQ(quantization_support(QuantizationLevel::bf16, m1).level, emulated);
  EXPECT_FALSE(quantization_support(QuantizationLevel::bf16, m1).usable());
  EXPECT_EQ(quantization_support(QuantizationLevel::bf16, m3).level, native);
  EXPECT_EQ(quantization_support(QuantizationLevel::q4_k_m, m3).level, weight_only);
}

TEST(Quant, CpuFollowsItsIsa) {
  using enum SupportLevel;
  DeviceProfile cpu;
  cpu.backend = Backend::cpu;
  cpu.family = Family::cpu;
  cpu.properties["isa"] = "avx2,fma";
  EXPECT_EQ(quantization_support(QuantizationLevel::bf16, cpu).level, emulated);
  EXPECT_EQ(quantization_support(QuantizationLevel::int8, cpu).level, weight_only);
  EXPECT_EQ(quantization_support(QuantizationLevel::q4_k_m, cpu).level, weight_only);
  cpu.properties["isa"] = "amx_bf16,amx_int8,avx512_bf16,avx512_vnni";
  EXPECT_EQ(quantization_support(QuantizationLevel::bf16, cpu).level, native);
  EXPECT_EQ(quantization_support(QuantizationLevel::int8, cpu).level, native);
  EXPECT_EQ(quantization_support(QuantizationLevel::fp8_e4m3, cpu).level, unsupported);
}

}  // namespace
