// Every row of the device-spec table: dense figures plausible for its
// architecture, a source address, unique keys, and a typical detected name of
// its product that matches that row and no other.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "../test_support.hpp"

import hwaccel;

namespace {

using namespace hwaccel;

using hwaccel::testing::MiB;
using hwaccel::testing::GiB;

// A closed range a published figure must fall in; {0, 0}: the figure must be
// absent (the architecture has no such arithmetic, or the vendor gives none).
struct Range {
  double lo = 0;
  double hi = 0;
};
constexpr Range none{0, 0};

struct ArchLimits {
  Range bandwidth;  // GB/s
  Range fp32;
  Range bf16;
  Range fp16;
  Range fp8;
  Range int8;
};

// Per architecture, the dense figures of its products. The upper bounds sit
// below twice the fastest product's dense figure, so a "with sparsity" figure
// slipped into a row falls outside.
const std::map<std::string, ArchLimits, std::less<>>& limits() {
  static const std::map<std::string, ArchLimits, std::less<>> table = {
      // NVIDIA
      {"Pascal", {{300, 750}, {5, 13}, none, none, none, {20, 50}}},
      {"Volta", {{800, 1000}, {10, 20}, none, {100, 130}, none, none}},
      {"Turing", {{150, 700}, {5, 17}, none, {20, 70}, none, {60, 240}}},
      {"Ampere", {{190, 2100}, {4, 41}, {15, 320}, {15, 320}, none, {30, 640}}},
      {"Ada Lovelace", {{200, 1010}, {10, 92}, {25, 400}, {25, 400}, {50, 800}, {90, 800}}},
      {"Hopper", {{2000, 5000}, {40, 70}, {140, 1000}, {140, 1000}, {290, 2000}, {290, 2000}}},
      // GB10 (DGX Spark): 273 GB/s of LPDDR5x shared with its CPU.
      {"Blackwell", {{250, 8000}, {19, 130}, {35, 2600}, {35, 2600}, {70, 5200}, {150, 5200}}},
      // AMD
      {"GCN5.1", {{1000, 1030}, {13, 15}, none, {26, 30}, none, {50, 60}}},
      {"CDNA", {{1200, 1300}, {20, 25}, {90, 95}, {180, 190}, none, {180, 190}}},
      {"CDNA2", {{1600, 1700}, {20, 25}, {170, 200}, {170, 200}, none, {170, 200}}},
      {"CDNA3", {{5000, 6100}, {40, 170}, {340, 1320}, {340, 1320}, {680, 2650}, {680, 2650}}},
      {"CDNA4", {{7900, 8100}, {140, 160}, {2300, 2550}, {2300, 2550}, {4600, 5100}, {4600, 5100}}},
      {"RDNA2", {{250, 580}, {10, 24}, none, {20, 48}, none, none}},
      {"RDNA3", {{280, 970}, {20, 62}, {40, 125}, {40, 125}, none, none}},
      {"RDNA3.5", {{100, 260}, {10, 30}, {20, 60}, {20, 60}, none, none}},
      {"RDNA4", {{300, 650}, {25, 50}, {100, 200}, {100, 200}, {200, 400}, {200, 400}}},
      // Intel
      {"Xe-HPG", {{160, 600}, {3.5, 18}, {30, 140}, {30, 140}, none, {60, 280}}},
      {"Xe2-HPG", {{350, 460}, {10, 15}, {100, 120}, {100, 120}, none, {200, 240}}},
      {"Xe-HPC", {{1200, 1650}, {20, 27}, {350, 420}, {350, 420}, none, {700, 840}}},
      {"Gaudi 2", {{2400, 2500}, none, {430, 440}, none, {860, 870}, none}},
      {"Gaudi 3", {{3600, 3800}, none, {1800, 1850}, none, {1800, 1850}, none}},
      // Google
      {"TPU v2", {{590, 610}, none, {44, 46}, none, none, none}},
      {"TPU v3", {{890, 910}, none, {120, 125}, none, none, none}},
      {"TPU v4", {{1190, 1210}, none, {270, 280}, none, none, {270, 280}}},
      {"TPU v5e", {{810, 830}, none, {195, 200}, none, none, {390, 400}}},
      {"TPU v5p", {{2700, 2800}, none, {455, 465}, none, {455, 465}, {910, 925}}},
      {"TPU v6e", {{1600, 1700}, none, {910, 925}, none, none, {1820, 1850}}},
      {"TPU v7", {{7300, 7400}, none, {2300, 2320}, none, {4600, 4630}, none}},
      // AWS
      {"NeuronCore-v1", {{45, 55}, none, {60, 70}, {60, 70}, none, {120, 130}}},
      {"NeuronCore-v2", {{800, 840}, {45, 50}, {185, 195}, {185, 195}, {185, 195}, {370, 390}}},
      {"NeuronCore-v3", {{2800, 3000}, {175, 185}, {660, 670}, {660, 670}, {1290, 1310}, none}},
      // MXFP8 runs at 3.75x BF16 on NeuronCore-v4 (dense, per the Trainium3 page).
      {"NeuronCore-v4", {{4700, 5000}, {180, 185}, {665, 675}, {665, 675}, {2500, 2530}, none}},
      // Qualcomm
      {"Cloud AI 100", {{130, 140}, none, none, {70, 130}, none, {210, 380}}},
      // Apple: fp16 (and bf16 from M2) at the fp32 rate; no published figures from M3 on.
      {"Apple M1", {{60, 820}, {2, 22}, none, {2, 22}, none, none}},
      {"Apple M2", {{95, 820}, {2.5, 28}, {2.5, 28}, {2.5, 28}, none, none}},
      {"Apple M3", {{95, 820}, none, none, none, none, none}},
      {"Apple M4", {{115, 550}, none, none, none, none, none}},
      {"Apple M5", {{150, 160}, none, none, none, none, none}},
  };
  return table;
}

// Entries whose FP8 rate is more than twice BF16 for a documented reason.
bool fp8_beyond_twice_bf16(std::string_view id) { return id == "trainium3-144gb"; }

void expect_in(const DeviceSpec& s, std::string_view what, std::optional<double> value, Range r) {
  if (r.hi == 0) {
    EXPECT_FALSE(value) << s.id << ": " << what << " should be empty for " << s.architecture;
    return;
  }
  if (!value) return;  // a figure the vendor does not publish
  EXPECT_GE(*value, r.lo) << s.id << ": " << what;
  EXPECT_LE(*value, r.hi) << s.id << ": " << what << " (a sparse figure?)";
}

TEST(SpecTable, FiguresArePlausibleForTheArchitecture) {
  for (const auto& s : device_specs()) {
    const auto it = limits().find(s.architecture);
    ASSERT_NE(it, limits().end()) << s.id << ": no limits for architecture \"" << s.architecture << "\"";
    const ArchLimits& l = it->second;
    EXPECT_GE(s.memory_bandwidth_gbps, l.bandwidth.lo) << s.id;
    EXPECT_LE(s.memory_bandwidth_gbps, l.bandwidth.hi) << s.id;
    expect_in(s, "fp32", s.fp32_tflops, l.fp32);
    expect_in(s, "bf16", s.bf16_tflops, l.bf16);
    expect_in(s, "fp16", s.fp16_tflops, l.fp16);
    expect_in(s, "fp8", s.fp8_tflops, l.fp8);
    expect_in(s, "int8", s.int8_tops, l.int8);
    if (s.fp8_tflops && s.bf16_tflops && !fp8_beyond_twice_bf16(s.id))
      EXPECT_LE(*s.fp8_tflops, 2.05 * *s.bf16_tflops) << s.id;
    if (s.bf16_tflops && s.fp16_tflops) EXPECT_LE(*s.bf16_tflops, *s.fp16_tflops * 1.001) << s.id;
    if (s.fp32_tflops && s.fp16_tflops) EXPECT_LE(*s.fp32_tflops, *s.fp16_tflops * 1.001) << s.id;
    EXPECT_GT(s.memory_bytes, 0u) << s.id;
    EXPECT_EQ(s.memory_bytes % GiB, 0u) << s.id << ": memory is whole GiB";
    EXPECT_NE(s.source.find("https://"), std::string_view::npos) << s.id << ": source has no address";
    EXPECT_FALSE(s.product.empty()) << s.id;
    EXPECT_FALSE(s.vendor.empty()) << s.id;
    if (s.memory_kind == MemoryKind::unified && s.backend == Backend::apple) {
      // The largest configuration sold is the entry's memory.
      std::uint64_t largest = 0;
      for (auto gib : s.memory_options_gib) largest = std::max<std::uint64_t>(largest, gib);
      EXPECT_EQ(largest * GiB, s.memory_bytes) << s.id;
    }
    for (auto id : s.pci_device_ids)
      if (id != 0) EXPECT_NE(s.pci_vendor_id, 0) << s.id << ": a device id without a vendor id";
    if (s.fabric) EXPECT_GE(s.fabric->domain_size, 2u) << s.id;
  }
}

TEST(SpecTable, KeysAreUniqueAndFindable) {
  std::set<std::string> ids, names;
  for (const auto& s : device_specs()) {
    EXPECT_TRUE(ids.insert(text::lower(s.id)).second) << "duplicate id " << s.id;
    EXPECT_TRUE(names.insert(text::lower(s.name)).second) << "duplicate name " << s.name;
  }
  for (const auto& s : device_specs()) {
    // No name is another entry's id, nor the other way round.
    if (text::lower(s.name) != text::lower(s.id)) EXPECT_FALSE(ids.contains(text::lower(s.name))) << s.name;
    EXPECT_EQ(find_spec(s.id), &s) << s.id;
    EXPECT_EQ(find_spec(s.name), &s) << s.name;
    EXPECT_EQ(find_spec(text::lower(s.name)), &s) << s.name;
  }
  EXPECT_GE(device_specs().size(), 190u);
}

// What a detector reports for the product of an entry, where its product text
// is not already that (nvidia-smi, rocm-smi, Level Zero, qaic-util and the
// TPU and Neuron detectors name devices so).
const std::map<std::string, std::string, std::less<>>& detected_names() {
  static const std::map<std::string, std::string, std::less<>> names = {
      {"h100-sxm5-80gb", "NVIDIA H100 80GB HBM3"},
      {"h200-sxm-141gb", "NVIDIA H200"},
      {"a100-sxm4-80gb", "NVIDIA A100-SXM4-80GB"},
      {"a100-sxm4-40gb", "NVIDIA A100-SXM4-40GB"},
      {"a100-pcie-80gb", "NVIDIA A100 80GB PCIe"},
      {"a100-pcie-40gb", "NVIDIA A100-PCIE-40GB"},
      {"v100-sxm2-32gb", "Tesla V100-SXM2-32GB"},
      {"v100-sxm2-16gb", "Tesla V100-SXM2-16GB"},
      {"v100-pcie-32gb", "Tesla V100-PCIE-32GB"},
      {"v100-pcie-16gb", "Tesla V100-PCIE-16GB"},
      {"t4-16gb", "Tesla T4"},
      {"a10g-24gb", "NVIDIA A10G"},
      {"a16-gpu-16gb", "NVIDIA A16"},
      {"gh200-96gb", "NVIDIA GH200 480GB"},
      {"gh200-144gb", "NVIDIA GH200 144G HBM3e"},
      {"b200-sxm-180gb", "NVIDIA B200"},
      {"b300-sxm-288gb", "NVIDIA B300 SXM6 AC"},
      {"gb200-186gb", "NVIDIA GB200"},
      {"gb300-288gb", "NVIDIA GB300"},
      {"rtx-3060-12gb", "NVIDIA GeForce RTX 3060"},
      {"rtx-3060-8gb", "NVIDIA GeForce RTX 3060"},
      {"rtx-3080-12gb", "NVIDIA GeForce RTX 3080"},
      {"rtx-2060-12gb", "NVIDIA GeForce RTX 2060"},
      {"rtx-4060-ti-8gb", "NVIDIA GeForce RTX 4060 Ti"},
      {"rtx-4060-ti-16gb", "NVIDIA GeForce RTX 4060 Ti"},
      {"rtx-5060-ti-8gb", "NVIDIA GeForce RTX 5060 Ti"},
      {"rtx-5060-ti-16gb", "NVIDIA GeForce RTX 5060 Ti"},
      {"mi250x-gcd-64gb", "AMD Instinct MI250X / MI250"},
      {"mi250-gcd-64gb", "AMD Instinct MI250"},
      {"mi50-16gb", "AMD Instinct MI50 / MI60"},
      {"mi50-32gb", "AMD Radeon Instinct MI50"},
      {"mi60-32gb", "AMD Radeon Instinct MI60"},
      {"rx-9060-xt-8gb", "AMD Radeon RX 9060 XT"},
      {"rx-9060-xt-16gb", "AMD Radeon RX 9060 XT"},
      {"radeon-8060s", "AMD Radeon 8060S Graphics"},
      {"radeon-890m", "AMD Radeon 890M Graphics"},
      {"arc-a770-8gb", "Intel(R) Arc(TM) A770 Graphics"},
      {"arc-a770-16gb", "Intel(R) Arc(TM) A770 Graphics"},
      {"arc-b580-12gb", "Intel(R) Arc(TM) B580 Graphics"},
      {"max-1550-stack-64gb", "Intel(R) Data Center GPU Max 1550"},
      {"flex-140-gpu-6gb", "Intel(R) Data Center GPU Flex 140"},
      {"gaudi3-128gb", "HL-325L"},
      {"gaudi2-96gb", "HL-225"},
      {"tpu-v7", "Google TPU v7"},
      {"tpu-v6e", "Google TPU v6e"},
      {"tpu-v5p", "Google TPU v5p"},
      {"tpu-v5e", "Google TPU v5e"},
      {"tpu-v4", "Google TPU v4"},
      {"tpu-v3", "Google TPU v3"},
      {"tpu-v2", "Google TPU v2"},
      {"cloud-ai-100-standard-16gb", "Qualcomm Cloud AI 100"},
      {"cloud-ai-100-pro-32gb", "Qualcomm Cloud AI 100"},
      {"cloud-ai-100-ultra-soc-32gb", "Qualcomm Cloud AI 100"},
      {"apple-m3-max", "Apple M3 Max GPU"},
      {"apple-m5", "Apple M5 GPU"},
  };
  return names;
}

// Entries no detected name can pick: a 32 GB Cloud AI 100 SoC is a Pro or one
// of an Ultra's four, and the name does not say which.
bool unmatched_by_design(const DeviceSpec& s) {
  return s.id == "cloud-ai-100-pro-32gb" || s.id == "cloud-ai-100-ultra-soc-32gb";
}

bool name_only(const DeviceSpec& s) { return s.match.find('(') != std::string_view::npos; }

SpecQuery query_for(const DeviceSpec& s, std::string_view name) {
  SpecQuery q;
  q.backend = s.backend;
  q.family = s.family;
  q.name = name;
  // Runtimes report a little less than the datasheet; unified memory is whatever the machine has.
  q.memory_bytes = s.memory_kind == MemoryKind::unified ? 24 * GiB : s.memory_bytes / 100 * 97;
  return q;
}

TEST(SpecTable, EveryProductMatchesItsOwnEntry) {
  for (const auto& s : device_specs()) {
    const auto it = detected_names().find(s.id);
    const std::string name = it != detected_names().end() ? it->second : std::string(s.product);
    const SpecQuery q = query_for(s, name);
    const DeviceSpec* got = match_spec(q);
    if (unmatched_by_design(s)) {
      EXPECT_EQ(got, nullptr) << s.id << " <- \"" << name << "\" matched " << (got ? got->id : "");
      continue;
    }
    if (name_only(s)) {
      // A GPU-core variant: the chip's name finds the chip's base entry, never the variant.
      ASSERT_NE(got, nullptr) << s.id << " <- \"" << name << "\"";
      EXPECT_FALSE(name_only(*got)) << s.id << " <- \"" << name << "\" matched " << got->id;
      EXPECT_EQ(got->architecture, s.architecture) << s.id;
      continue;
    }
    EXPECT_EQ(got, &s) << s.id << " <- \"" << name << "\" matched " << (got ? got->id : "(none)");
    // Vulkan sees the same discrete and integrated GPUs under the same names.
    if (s.family == Family::gpu && s.backend != Backend::apple) {
      SpecQuery v = q;
      v.backend = Backend::vulkan;
      EXPECT_EQ(match_spec(v), &s) << s.id << " through Vulkan";
    }
  }
}

std::string_view matched(Backend backend, std::string_view name, std::optional<std::uint64_t> memory) {
  SpecQuery q;
  q.backend = backend;
  q.family = default_family(backend);
  q.name = name;
  q.memory_bytes = memory;
  const auto* s = match_spec(q);
  return s ? s->id : std::string_view{"(none)"};
}

TEST(SpecTable, NearMissesStayApart) {
  const auto cuda = Backend::cuda;
  // GeForce tiers share their leading words.
  EXPECT_EQ(matched(cuda, "NVIDIA GeForce RTX 4070", 12282 * MiB), "rtx-4070-12gb");
  EXPECT_EQ(matched(cuda, "NVIDIA GeForce RTX 4070 SUPER", 12282 * MiB), "rtx-4070-super-12gb");
  EXPECT_EQ(matched(cuda, "NVIDIA GeForce RTX 4070 Ti", 12282 * MiB), "rtx-4070-ti-12gb");
  EXPECT_EQ(matched(cuda, "NVIDIA GeForce RTX 4070 Ti SUPER", 16376 * MiB), "rtx-4070-ti-super-16gb");
  EXPECT_EQ(matched(cuda, "NVIDIA GeForce RTX 4080 SUPER", 16376 * MiB), "rtx-4080-super-16gb");
  EXPECT_EQ(matched(cuda, "NVIDIA GeForce RTX 4080", 16376 * MiB), "rtx-4080-16gb");
  EXPECT_EQ(matched(cuda, "NVIDIA GeForce RTX 2080 Ti", 11264 * MiB), "rtx-2080-ti-11gb");
  EXPECT_EQ(matched(cuda, "NVIDIA GeForce RTX 2080 SUPER", 8192 * MiB), "rtx-2080-super-8gb");
  EXPECT_EQ(matched(cuda, "NVIDIA GeForce RTX 2080", 8192 * MiB), "rtx-2080-8gb");
  EXPECT_EQ(matched(cuda, "NVIDIA GeForce RTX 3090 Ti", 24564 * MiB), "rtx-3090-ti-24gb");
  EXPECT_EQ(matched(cuda, "NVIDIA GeForce RTX 3090", 24576 * MiB), "rtx-3090-24gb");
  // One name, two memory sizes.
  EXPECT_EQ(matched(cuda, "NVIDIA GeForce RTX 4060 Ti", 8188 * MiB), "rtx-4060-ti-8gb");
  EXPECT_EQ(matched(cuda, "NVIDIA GeForce RTX 4060 Ti", 16380 * MiB), "rtx-4060-ti-16gb");
  EXPECT_EQ(matched(cuda, "NVIDIA GeForce RTX 4060 Ti", std::nullopt), "(none)");
  EXPECT_EQ(matched(cuda, "NVIDIA GeForce RTX 3060", 8192 * MiB), "rtx-3060-8gb");
  EXPECT_EQ(matched(cuda, "NVIDIA GeForce RTX 3060", 12288 * MiB), "rtx-3060-12gb");
  EXPECT_EQ(matched(cuda, "NVIDIA GeForce RTX 3060 Ti", 8192 * MiB), "rtx-3060-ti-8gb");
  EXPECT_EQ(matched(cuda, "NVIDIA GeForce RTX 3080", 10240 * MiB), "rtx-3080-10gb");
  EXPECT_EQ(matched(cuda, "NVIDIA GeForce RTX 3080", 12288 * MiB), "rtx-3080-12gb");
  EXPECT_EQ(matched(cuda, "NVIDIA RTX A2000", 6138 * MiB), "rtx-a2000-6gb");
  EXPECT_EQ(matched(cuda, "NVIDIA RTX A2000 12GB", 12282 * MiB), "rtx-a2000-12gb");
  // Laptop parts share names with desktop ones and are not them.
  EXPECT_EQ(matched(cuda, "NVIDIA GeForce RTX 4060 Laptop GPU", 8188 * MiB), "(none)");
  EXPECT_EQ(matched(cuda, "NVIDIA GeForce RTX 5080 Laptop GPU", 16303 * MiB), "(none)");
  EXPECT_EQ(matched(cuda, "NVIDIA GeForce RTX 2080 Super with Max-Q Design", 8192 * MiB), "(none)");
  EXPECT_EQ(matched(cuda, "NVIDIA RTX 5000 Ada Generation Laptop GPU", 16376 * MiB), "(none)");
  // Data-center names that are words of one another.
  EXPECT_EQ(matched(cuda, "NVIDIA A40", 46068 * MiB), "a40-48gb");
  EXPECT_EQ(matched(cuda, "NVIDIA RTX A4000", 16376 * MiB), "rtx-a4000-16gb");
  EXPECT_EQ(matched(cuda, "NVIDIA A2", 15356 * MiB), "a2-16gb");
  EXPECT_EQ(matched(cuda, "NVIDIA A16", 15356 * MiB), "a16-gpu-16gb");
  EXPECT_EQ(matched(cuda, "NVIDIA A10", 23028 * MiB), "a10-24gb");
  EXPECT_EQ(matched(cuda, "NVIDIA A30", 24576 * MiB), "a30-24gb");
  EXPECT_EQ(matched(cuda, "NVIDIA L4", 23034 * MiB), "l4-24gb");
  EXPECT_EQ(matched(cuda, "NVIDIA L40", 46068 * MiB), "l40-48gb");
  EXPECT_EQ(matched(cuda, "NVIDIA L40S", 46068 * MiB), "l40s-48gb");
  EXPECT_EQ(matched(cuda, "NVIDIA L20", 46068 * MiB), "l20-48gb");
  EXPECT_EQ(matched(cuda, "NVIDIA H20", 97871 * MiB), "h20-96gb");
  EXPECT_EQ(matched(cuda, "NVIDIA H200", 143771 * MiB), "h200-sxm-141gb");
  EXPECT_EQ(matched(cuda, "NVIDIA H20-3e", 143771 * MiB), "(none)");
  EXPECT_EQ(matched(cuda, "NVIDIA GH200 480GB", 97871 * MiB), "gh200-96gb");
  EXPECT_EQ(matched(cuda, "NVIDIA GH200 144G HBM3e", 146081 * MiB), "gh200-144gb");
  EXPECT_EQ(matched(cuda, "NVIDIA B200", 183359 * MiB), "b200-sxm-180gb");
  EXPECT_EQ(matched(cuda, "NVIDIA B300 SXM6 AC", 275040 * MiB), "b300-sxm-288gb");
  EXPECT_EQ(matched(cuda, "NVIDIA GB200", 189471 * MiB), "gb200-186gb");
  EXPECT_EQ(matched(cuda, "NVIDIA GB300", 284208 * MiB), "gb300-288gb");
  EXPECT_EQ(matched(cuda, "NVIDIA GB10", 122572 * MiB), "gb10-128gb");
  EXPECT_EQ(matched(cuda, "NVIDIA A800-SXM4-80GB", 81920 * MiB), "a800-sxm4-80gb");
  EXPECT_EQ(matched(cuda, "NVIDIA A100-SXM4-80GB", 81920 * MiB), "a100-sxm4-80gb");
  EXPECT_EQ(matched(cuda, "NVIDIA RTX 4000 Ada Generation", 20475 * MiB), "rtx-4000-ada-20gb");
  EXPECT_EQ(matched(cuda, "NVIDIA RTX 4000 SFF Ada Generation", 20475 * MiB), "rtx-4000-sff-ada-20gb");
  EXPECT_EQ(matched(cuda, "NVIDIA RTX 6000 Ada Generation", 49140 * MiB), "rtx-6000-ada-48gb");
  EXPECT_EQ(matched(cuda, "NVIDIA RTX PRO 6000 Blackwell Server Edition", 97887 * MiB), "rtx-pro-6000-server-96gb");
  EXPECT_EQ(matched(cuda, "NVIDIA RTX PRO 6000 Blackwell Workstation Edition", 97887 * MiB),
            "rtx-pro-6000-workstation-96gb");
  EXPECT_EQ(matched(cuda, "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", 97887 * MiB), "(none)");
  // DGX Spark: nvidia-smi prints no memory size for its unified memory.
  EXPECT_EQ(matched(cuda, "NVIDIA GB10", 0), "gb10-128gb");

  const auto rocm = Backend::rocm;
  EXPECT_EQ(matched(rocm, "AMD Instinct MI300X", 196592 * MiB), "mi300x-192gb");
  EXPECT_EQ(matched(rocm, "AMD Instinct MI300A", 128 * GiB), "mi300a-128gb");
  EXPECT_EQ(matched(rocm, "AMD Instinct MI308X", 196592 * MiB), "mi308x-192gb");
  EXPECT_EQ(matched(rocm, "AMD Instinct MI325X", 262128 * MiB), "mi325x-256gb");
  EXPECT_EQ(matched(rocm, "AMD Instinct MI350X", 294896 * MiB), "mi350x-288gb");
  EXPECT_EQ(matched(rocm, "AMD Instinct MI355X", 294896 * MiB), "mi355x-288gb");
  EXPECT_EQ(matched(rocm, "AMD Instinct MI250X / MI250", 65520 * MiB), "mi250x-gcd-64gb");
  EXPECT_EQ(matched(rocm, "AMD Instinct MI250", 65520 * MiB), "mi250-gcd-64gb");
  EXPECT_EQ(matched(rocm, "AMD Instinct MI210", 65520 * MiB), "mi210-64gb");
  EXPECT_EQ(matched(rocm, "AMD Instinct MI100", 32752 * MiB), "mi100-32gb");
  EXPECT_EQ(matched(rocm, "AMD Instinct MI50 / MI60", 16368 * MiB), "mi50-16gb");
  EXPECT_EQ(matched(rocm, "AMD Instinct MI50 / MI60", 32752 * MiB), "(none)");
  EXPECT_EQ(matched(rocm, "AMD Radeon AI PRO R9700", 32624 * MiB), "radeon-ai-pro-r9700-32gb");
  EXPECT_EQ(matched(rocm, "AMD Radeon AI PRO R9600D", 32624 * MiB), "(none)");
  EXPECT_EQ(matched(rocm, "AMD Radeon RX 7900 XTX", 24560 * MiB), "rx-7900-xtx-24gb");
  EXPECT_EQ(matched(rocm, "AMD Radeon RX 7900 XT", 20464 * MiB), "rx-7900-xt-20gb");
  EXPECT_EQ(matched(rocm, "AMD Radeon RX 7900 GRE", 16368 * MiB), "rx-7900-gre-16gb");
  EXPECT_EQ(matched(rocm, "AMD Radeon RX 7900 series (Navi 31)", 24560 * MiB), "(none)");
  EXPECT_EQ(matched(rocm, "AMD Radeon RX 6800", 16368 * MiB), "rx-6800-16gb");
  EXPECT_EQ(matched(rocm, "AMD Radeon RX 6800 XT", 16368 * MiB), "rx-6800-xt-16gb");
  EXPECT_EQ(matched(rocm, "AMD Radeon RX 6800 / 6800 XT / 6900 XT (Navi 21)", 16368 * MiB), "(none)");
  EXPECT_EQ(matched(rocm, "AMD Radeon RX 7700 XT / 7800 XT (Navi 32)", 16368 * MiB), "rx-7800-xt-16gb");
  EXPECT_EQ(matched(rocm, "AMD Radeon RX 9070", 16368 * MiB), "rx-9070-16gb");
  EXPECT_EQ(matched(rocm, "AMD Radeon RX 9070 XT", 16368 * MiB), "rx-9070-xt-16gb");
  EXPECT_EQ(matched(rocm, "AMD Radeon RX 9070 series (Navi 48)", 16368 * MiB), "(none)");
  EXPECT_EQ(matched(rocm, "AMD Radeon RX 7600", 8176 * MiB), "rx-7600-8gb");
  EXPECT_EQ(matched(rocm, "AMD Radeon RX 7600 XT", 16368 * MiB), "(none)");
  EXPECT_EQ(matched(rocm, "AMD Radeon PRO W7800 48GB", 49136 * MiB), "(none)");
  EXPECT_EQ(matched(rocm, "AMD Radeon 890M Graphics", 512 * MiB), "radeon-890m");
  EXPECT_EQ(matched(rocm, "AMD Radeon 880M / 890M Graphics (Strix Point)", 512 * MiB), "(none)");
  EXPECT_EQ(matched(rocm, "AMD Radeon 8060S Graphics", 96 * GiB), "radeon-8060s");
  EXPECT_EQ(matched(rocm, "AMD Radeon 8050S Graphics", 96 * GiB), "(none)");
  EXPECT_EQ(matched(Backend::vulkan, "AMD Radeon RX 7800 XT (RADV NAVI32)", 16368 * MiB), "rx-7800-xt-16gb");

  const auto xpu = Backend::intel_oneapi;
  EXPECT_EQ(matched(xpu, "Intel(R) Arc(TM) A770 Graphics", 16256 * MiB), "arc-a770-16gb");
  EXPECT_EQ(matched(xpu, "Intel(R) Arc(TM) A770 Graphics", 8128 * MiB), "arc-a770-8gb");
  EXPECT_EQ(matched(xpu, "Intel(R) Arc(TM) A750 Graphics", 8128 * MiB), "arc-a750-8gb");
  EXPECT_EQ(matched(xpu, "Intel(R) Arc(TM) B580 Graphics", 12216 * MiB), "arc-b580-12gb");
  EXPECT_EQ(matched(xpu, "Intel(R) Arc(TM) B570 Graphics", 10180 * MiB), "arc-b570-10gb");
  EXPECT_EQ(matched(xpu, "Intel(R) Data Center GPU Max 1100", 49152 * MiB), "max-1100-48gb");
  EXPECT_EQ(matched(xpu, "Intel(R) Data Center GPU Flex 170", 16256 * MiB), "flex-170-16gb");

  // Accelerators.
  EXPECT_EQ(matched(Backend::tpu, "Google TPU v7", 192 * GiB), "tpu-v7");
  EXPECT_EQ(matched(Backend::tpu, "Google TPU v2", 16 * GiB), "tpu-v2");
  EXPECT_EQ(matched(Backend::tpu, "Google TPU v3", 32 * GiB), "tpu-v3");
  EXPECT_EQ(matched(Backend::tpu, "Google TPU v4", 32 * GiB), "tpu-v4");
  EXPECT_EQ(matched(Backend::aws_neuron, "AWS Inferentia", 8 * GiB), "inferentia-8gb");
  EXPECT_EQ(matched(Backend::aws_neuron, "AWS Inferentia2", 32 * GiB), "inferentia2-32gb");
  EXPECT_EQ(matched(Backend::aws_neuron, "AWS Trainium", 32 * GiB), "trainium-32gb");
  EXPECT_EQ(matched(Backend::aws_neuron, "AWS Trainium3", 144 * GiB), "trainium3-144gb");
  EXPECT_EQ(matched(Backend::qualcomm, "Qualcomm Cloud AI 100", 16 * GiB), "cloud-ai-100-standard-16gb");
  EXPECT_EQ(matched(Backend::qualcomm, "Qualcomm Cloud AI 100", 32 * GiB), "(none)");

  // Apple: the detected chip is its base entry, whatever the memory; variants go by name.
  EXPECT_EQ(matched(Backend::apple, "Apple M3 Max GPU", 36 * GiB), "apple-m3-max");
  EXPECT_EQ(matched(Backend::apple, "Apple M4 Max GPU", 36 * GiB), "apple-m4-max");
  EXPECT_EQ(matched(Backend::apple, "Apple M2 Ultra GPU", 192 * GiB), "apple-m2-ultra");
  EXPECT_EQ(matched(Backend::apple, "Apple M5 GPU", 16 * GiB), "apple-m5");
  EXPECT_EQ(matched(Backend::apple, "Apple M1 GPU", 16 * GiB), "apple-m1");
}

TEST(SpecTable, PciIdsNarrowThenNamesDecide) {
  SpecQuery q;
  q.backend = Backend::cuda;
  q.family = Family::gpu;
  q.memory_bytes = 15356 * MiB;
  q.pci_vendor_id = 0x10de;
  q.pci_device_id = 0x25b6;  // shared by the A16 and the A2
  q.name = "NVIDIA A16";
  ASSERT_TRUE(match_spec(q));
  EXPECT_EQ(match_spec(q)->id, "a16-gpu-16gb");
  q.name = "NVIDIA A2";
  ASSERT_TRUE(match_spec(q));
  EXPECT_EQ(match_spec(q)->id, "a2-16gb");
  q.pci_device_id = 0x2803;  // both RTX 4060 Ti sizes: memory decides
  q.name = "NVIDIA Graphics Device";
  q.memory_bytes = 16380 * MiB;
  ASSERT_TRUE(match_spec(q));
  EXPECT_EQ(match_spec(q)->id, "rtx-4060-ti-16gb");
  SpecQuery r;
  r.backend = Backend::rocm;
  r.family = Family::gpu;
  r.memory_bytes = 65520 * MiB;
  r.pci_vendor_id = 0x1002;
  r.pci_device_id = 0x740c;  // "MI250X / MI250"
  r.name = "AMD Instinct MI250X / MI250";
  ASSERT_TRUE(match_spec(r));
  EXPECT_EQ(match_spec(r)->id, "mi250x-gcd-64gb");
}

TEST(SpecTable, AppleVariantsByName) {
  struct Expect {
    std::string_view name;
    double bandwidth;
    std::string_view base;
  };
  for (const auto& e : {Expect{"M1-Max-24c", 400, "M1-Max"}, Expect{"M1-Max-32c", 400, "M1-Max"},
                        Expect{"M2-Ultra-60c", 800, "M2-Ultra"}, Expect{"M2-Ultra-76c", 800, "M2-Ultra"},
                        Expect{"M3-Max-30c", 300, "M3-Max"}, Expect{"M3-Max-40c", 400, "M3-Max"},
                        Expect{"M4-Max-32c", 410, "M4-Max"}, Expect{"M4-Max-40c", 546, "M4-Max"},
                        Expect{"M3-Pro-14c", 150, "M3-Pro"}, Expect{"M4-Pro-16c", 273, "M4-Pro"}}) {
    const auto* v = find_spec(e.name);
    ASSERT_TRUE(v) << e.name;
    EXPECT_EQ(v->memory_bandwidth_gbps, e.bandwidth) << e.name;
    EXPECT_EQ(v->memory_kind, MemoryKind::unified) << e.name;
    const auto* base = find_spec(e.base);
    ASSERT_TRUE(base) << e.base;
    EXPECT_EQ(v->architecture, base->architecture) << e.name;
  }
  // The core count scales the M1/M2 figures Apple publishes; the base entries keep theirs.
  EXPECT_DOUBLE_EQ(*find_spec("M2-Ultra-76c")->fp32_tflops, *find_spec("M2-Ultra")->fp32_tflops);
  EXPECT_LT(*find_spec("M2-Ultra-60c")->fp32_tflops, *find_spec("M2-Ultra-76c")->fp32_tflops);
  EXPECT_EQ(find_spec("M5")->memory_bandwidth_gbps, 153);
  EXPECT_EQ(find_spec("m3_max_30c"), find_spec("M3-Max-30c"));
}

}  // namespace
