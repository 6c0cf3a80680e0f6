// Requirements, capability ordering, native number formats, best device and
// memory totals.
#include <gtest/gtest.h>

#include <compare>
#include <optional>
#include <string>
#include <vector>

#include "../test_support.hpp"

import hwaccel;

namespace {

using namespace hwaccel;

using hwaccel::testing::GiB;
using hwaccel::testing::MiB;

DeviceProfile device(Backend backend, std::uint32_t index, std::string name, std::optional<std::uint64_t> memory,
                     std::optional<std::string> capability = std::nullopt, std::optional<double> bandwidth = std::nullopt) {
  DeviceProfile d;
  d.backend = backend;
  d.family = default_family(backend);
  d.index = index;
  d.id = device_id(backend, index);
  d.name = std::move(name);
  d.memory_bytes = memory;
  d.compute_capability = std::move(capability);
  d.memory_bandwidth_gbps = bandwidth;
  return d;
}

DeviceProfile cpu(std::uint64_t memory, std::string isa = "") {
  DeviceProfile d = device(Backend::cpu, 0, "Xeon", memory);
  if (!isa.empty()) d.properties.emplace("isa", std::move(isa));
  return d;
}

std::vector<std::string> ids(const std::vector<const DeviceProfile*>& devices) {
  std::vector<std::string> out;
  for (const auto* d : devices) out.push_back(d->id);
  return out;
}

TEST(UsableMemory, ByMemoryKind) {
  EXPECT_EQ(usable_memory_bytes(device(Backend::cuda, 0, "H100", 80 * GiB)), 80 * GiB);
  EXPECT_EQ(usable_memory_bytes(device(Backend::cuda, 0, "?", std::nullopt)), std::nullopt);
  DeviceProfile apple = device(Backend::apple, 0, "M2 Ultra GPU", 192 * GiB);
  apple.memory_kind = MemoryKind::unified;
  EXPECT_EQ(usable_memory_bytes(apple), 192 * GiB);
  apple.shared_memory_bytes = 144 * GiB;  // the GPU-usable share
  EXPECT_EQ(usable_memory_bytes(apple), 144 * GiB);
  DeviceProfile apu = device(Backend::rocm, 0, "Radeon 780M", 4 * GiB);
  apu.memory_kind = MemoryKind::carve_out;
  apu.shared_memory_bytes = 32 * GiB;  // GTT: the CPU's RAM too
  EXPECT_EQ(usable_memory_bytes(apu), 4 * GiB);
  DeviceProfile host = cpu(512 * GiB);
  host.properties.emplace("cgroup_memory_limit_bytes", std::to_string(64 * GiB));
  EXPECT_EQ(usable_memory_bytes(host), 64 * GiB);
}

TEST(ComputeCapability, Ordering) {
  using std::partial_ordering;
  EXPECT_EQ(compare_compute_capability("8.0", "8.9"), partial_ordering::less);
  EXPECT_EQ(compare_compute_capability("9.0", "9.0"), partial_ordering::equivalent);
  EXPECT_EQ(compare_compute_capability("10.0", "9.0"), partial_ordering::greater);  // numeric, not text
  EXPECT_EQ(compare_compute_capability("12.0", "8.9"), partial_ordering::greater);
  EXPECT_EQ(compare_compute_capability("gfx942", "gfx90a"), partial_ordering::greater);
  EXPECT_EQ(compare_compute_capability("gfx942:sramecc+:xnack-", "gfx942"), partial_ordering::equivalent);
  EXPECT_EQ(compare_compute_capability("gfx90c", "gfx90a"), partial_ordering::less);  // Renoir APU, not CDNA2
  EXPECT_EQ(compare_compute_capability("gfx1100", "gfx90a"), partial_ordering::unordered);  // RDNA vs CDNA
  EXPECT_EQ(compare_compute_capability("gfx1201", "gfx1030"), partial_ordering::greater);
  EXPECT_EQ(compare_compute_capability("v5p", "v5e"), partial_ordering::greater);
  EXPECT_EQ(compare_compute_capability("v6e", "v5p"), partial_ordering::greater);
  EXPECT_EQ(compare_compute_capability("v5litepod", "v5e"), partial_ordering::equivalent);
  EXPECT_EQ(compare_compute_capability("8.0", "gfx90a"), partial_ordering::unordered);
  EXPECT_EQ(compare_compute_capability("gfx9999", "gfx9999"), partial_ordering::equivalent);
  EXPECT_EQ(compare_compute_capability("gfx9999", "gfx942"), partial_ordering::unordered);
  EXPECT_EQ(compare_compute_capability("", ""), partial_ordering::unordered);
  EXPECT_EQ(compare_compute_capability("8.", "8.0"), partial_ordering::unordered);
}

TEST(Dtype, NativeFormats) {
  const auto t4 = device(Backend::cuda, 0, "Tesla T4", 16 * GiB, "7.5");
  EXPECT_EQ(supports_dtype(t4, "bf16"), false);  // the reference design recommends a T4 for BF16
  EXPECT_EQ(supports_dtype(t4, "fp16"), true);
  EXPECT_EQ(supports_dtype(t4, "int8"), true);
  const auto a100 = device(Backend::cuda, 1, "A100", 80 * GiB, "8.0");
  EXPECT_EQ(supports_dtype(a100, "bfloat16"), true);
  EXPECT_EQ(supports_dtype(a100, "fp8"), false);
  EXPECT_EQ(supports_dtype(device(Backend::cuda, 2, "L4", 24 * GiB, "8.9"), "fp8"), true);
  EXPECT_EQ(supports_dtype(device(Backend::cuda, 3, "H100", 80 * GiB, "9.0"), "FP8"), true);
  EXPECT_EQ(supports_dtype(device(Backend::cuda, 4, "?", 8 * GiB), "bf16"), std::nullopt);  // no capability known
  EXPECT_EQ(supports_dtype(device(Backend::cuda, 4, "?", 8 * GiB), "fp32"), true);
  EXPECT_EQ(supports_dtype(device(Backend::rocm, 0, "MI300X", 192 * GiB, "gfx942"), "fp8"), true);
  EXPECT_EQ(supports_dtype(device(Backend::rocm, 1, "MI210", 64 * GiB, "gfx90a"), "bf16"), true);
  EXPECT_EQ(supports_dtype(device(Backend::rocm, 1, "MI210", 64 * GiB, "gfx90a"), "fp8"), false);
  EXPECT_EQ(supports_dtype(device(Backend::rocm, 2, "RX 6900 XT", 16 * GiB, "gfx1030"), "bf16"), false);
  EXPECT_EQ(supports_dtype(device(Backend::rocm, 3, "RX 7900 XTX", 24 * GiB, "gfx1100"), "bf16"), true);
  EXPECT_EQ(supports_dtype(device(Backend::tpu, 0, "TPU v5e", 16 * GiB, "v5e"), "bf16"), true);
  EXPECT_EQ(supports_dtype(device(Backend::tpu, 0, "TPU v5e", 16 * GiB, "v5e"), "fp16"), false);
  EXPECT_EQ(supports_dtype(device(Backend::gaudi, 0, "Gaudi 2", 96 * GiB), "bf16"), true);
  EXPECT_EQ(supports_dtype(cpu(64 * GiB, "amx_bf16,amx_int8,avx512f"), "bf16"), true);
  EXPECT_EQ(supports_dtype(cpu(64 * GiB, "avx2,fma"), "bf16"), false);
  EXPECT_EQ(supports_dtype(cpu(64 * GiB, "avx2,avx_vnni"), "int8"), true);
  EXPECT_EQ(supports_dtype(cpu(64 * GiB), "bf16"), std::nullopt);  // ISA unknown
  EXPECT_EQ(supports_dtype(cpu(64 * GiB), "int3"), std::nullopt);  // not a format this version knows
  EXPECT_EQ(supports_dtype(device(Backend::intel_npu, 0, "NPU", std::nullopt), "fp16"), std::nullopt);
}

AcceleratorRegistry mixed() {
  Inventory inv;
  inv.devices = {cpu(1024 * GiB, "amx_bf16"),
                 device(Backend::cuda, 0, "Tesla T4", 15360 * MiB, "7.5", 320),
                 device(Backend::cuda, 1, "A100-SXM4-80GB", 81920 * MiB, "8.0", 2039),
                 device(Backend::rocm, 0, "MI300X", 196592 * MiB, "gfx942", 5300),
                 device(Backend::tpu, 0, "TPU v5e", 16 * GiB, "v5e"),
                 device(Backend::tpu, 1, "TPU v5e", 16 * GiB, "v5e"),
                 device(Backend::tpu, 2, "TPU v5e", 16 * GiB, "v5e"),
                 device(Backend::gaudi, 0, "HL-225", 96 * GiB),
                 device(Backend::aws_neuron, 0, "Trainium2", 96 * GiB)};
  DeviceProfile broken = device(Backend::cuda, 2, "A100 in error", 81920 * MiB, "8.0");
  broken.available = false;
  DeviceProfile hidden = device(Backend::cuda, 3, "A100 hidden", 81920 * MiB, "8.0");
  hidden.visible = false;
  inv.devices.push_back(broken);
  inv.devices.push_back(hidden);
  return AcceleratorRegistry(inv);
}

TEST(Requirement, ClassesAndCounts) {
  const auto r = mixed();
  EXPECT_EQ(ids(r.satisfying(AcceleratorRequirement::gpu())), (std::vector<std::string>{"cuda:0", "cuda:1", "rocm:0"}));
  EXPECT_EQ(ids(r.satisfying(AcceleratorRequirement::tpu(3))), (std::vector<std::string>{"tpu:0", "tpu:1", "tpu:2"}));
  EXPECT_TRUE(r.satisfying(AcceleratorRequirement::tpu(4)).empty());  // a 4-chip slice is not here
  EXPECT_FALSE(r.satisfies(AcceleratorRequirement::tpu(4)));
  EXPECT_EQ(ids(r.satisfying(AcceleratorRequirement::gaudi())), std::vector<std::string>{"gaudi:0"});
  EXPECT_EQ(ids(r.satisfying(AcceleratorRequirement::aws_neuron())), std::vector<std::string>{"aws_neuron:0"});
  EXPECT_EQ(r.satisfying(AcceleratorRequirement::gpu_or_tpu()).size(), 6u);
  EXPECT_EQ(r.satisfying(AcceleratorRequirement::any_accelerator()).size(), 8u);
  EXPECT_EQ(r.satisfying(AcceleratorRequirement::of(DeviceClass::any)).size(), 9u);
  EXPECT_TRUE(r.satisfying(AcceleratorRequirement::of(DeviceClass::npu)).empty());
}

TEST(Requirement, MemoryCapabilityAndDtype) {
  const auto r = mixed();
  // BF16 needs Ampere or later: the T4 is out, the MI300X computes bf16 too.
  EXPECT_EQ(ids(r.satisfying(AcceleratorRequirement::gpu().with_dtype("bf16"))),
            (std::vector<std::string>{"cuda:1", "rocm:0"}));
  // An NVIDIA capability does not compare with a gfx target.
  EXPECT_EQ(ids(r.satisfying(AcceleratorRequirement::gpu().with_min_compute_capability("8.0"))),
            std::vector<std::string>{"cuda:1"});
  EXPECT_EQ(ids(r.satisfying(AcceleratorRequirement::gpu().with_min_compute_capability("gfx90a"))),
            std::vector<std::string>{"rocm:0"});
  EXPECT_EQ(ids(r.satisfying(AcceleratorRequirement::any_accelerator().with_min_memory(90 * GiB))),
            (std::vector<std::string>{"rocm:0", "gaudi:0", "aws_neuron:0"}));
  EXPECT_EQ(ids(r.satisfying(AcceleratorRequirement::tpu(2).with_min_compute_capability("v5e").with_dtype("bf16"))),
            (std::vector<std::string>{"tpu:0", "tpu:1", "tpu:2"}));
  EXPECT_TRUE(r.satisfying(AcceleratorRequirement::tpu(1).with_min_compute_capability("v5p")).empty());
}

TEST(Requirement, RejectionsSayWhy) {
  const auto r = mixed();
  const auto req = AcceleratorRequirement::gpu().with_min_memory(24 * GiB).with_min_compute_capability("8.0").with_dtype("bf16");
  EXPECT_EQ(req.rejection(*r.find("cuda:0")), "cuda:0 has 15 GiB usable; 24 GiB required");
  EXPECT_EQ(req.rejection(*r.find("cuda:1")), std::nullopt);
  EXPECT_EQ(req.rejection(*r.find("cuda:2")), "cuda:2 is not available");
  EXPECT_EQ(req.rejection(*r.find("cuda:3")), "cuda:3 is hidden from this process");
  EXPECT_EQ(req.rejection(*r.find("rocm:0")), "rocm:0 compute capability gfx942 cannot be compared with 8.0");
  EXPECT_EQ(req.rejection(*r.find("tpu:0")), "tpu:0 is a tpu (tpu), not gpu");
  const auto t4_only = AcceleratorRequirement::gpu().with_dtype("bf16");
  EXPECT_EQ(t4_only.rejection(*r.find("cuda:0")), "cuda:0 does not compute bf16 natively");
  const auto unknown = device(Backend::cuda, 9, "?", std::nullopt);
  EXPECT_EQ(AcceleratorRequirement::gpu().with_min_memory(GiB).rejection(unknown),
            "cuda:9 has no known memory size; 1 GiB required");
  EXPECT_EQ(t4_only.rejection(unknown), "cannot tell whether cuda:9 computes bf16 natively");
  EXPECT_EQ(req.to_string(), "gpu, >= 24 GiB, compute capability >= 8.0, bf16");
  EXPECT_EQ(AcceleratorRequirement::tpu(4).to_string(), "4+ tpu");
}

TEST(Best, ByCapabilityNeverByVendor) {
  // A GTX 1050 must never beat an MI300X, whatever the order.
  Inventory inv;
  inv.devices = {cpu(2048 * GiB), device(Backend::cuda, 0, "GeForce GTX 1050", 2 * GiB, "6.1", 112),
                 device(Backend::rocm, 0, "MI300X", 196592 * MiB, "gfx942", 5300)};
  EXPECT_EQ(AcceleratorRegistry(inv).best_available()->id, "rocm:0");
  std::swap(inv.devices[1], inv.devices[2]);
  EXPECT_EQ(AcceleratorRegistry(inv).best_available()->id, "rocm:0");

  // An 81559 MiB H100 and an 81920 MiB A100 hold the same models: bandwidth decides.
  Inventory same;
  same.devices = {device(Backend::cuda, 0, "A100-SXM4-80GB", 81920 * MiB, "8.0", 2039),
                  device(Backend::cuda, 1, "H100 80GB HBM3", 81559 * MiB, "9.0", 3352)};
  EXPECT_EQ(AcceleratorRegistry(same).best_available()->id, "cuda:1");
  // Unknown bandwidth: a tie, kept in registry order.
  same.devices[1].memory_bandwidth_gbps.reset();
  EXPECT_EQ(AcceleratorRegistry(same).best_available()->id, "cuda:0");

  // The CPU is the fallback, however much RAM it has; unavailable devices never win.
  Inventory fallback;
  fallback.devices = {cpu(2048 * GiB), device(Backend::cuda, 0, "MI300X in error", 192 * GiB)};
  fallback.devices[1].available = false;
  EXPECT_EQ(AcceleratorRegistry(fallback).best_available()->id, "cpu:0");
  fallback.devices[1].available = true;
  EXPECT_EQ(AcceleratorRegistry(fallback).best_available()->id, "cuda:0");
  EXPECT_EQ(AcceleratorRegistry().best_available(), nullptr);
}

TEST(Totals, SayWhetherTheCpuIsIncluded) {
  Inventory inv;
  inv.devices = {cpu(512 * GiB), device(Backend::cuda, 0, "H100", 80 * GiB), device(Backend::cuda, 1, "H100", 80 * GiB),
                 device(Backend::cuda, 2, "unknown size", std::nullopt)};
  DeviceProfile hidden = device(Backend::cuda, 3, "hidden", 80 * GiB);
  hidden.visible = false;
  inv.devices.push_back(hidden);
  const AcceleratorRegistry r(inv);
  EXPECT_EQ(r.total_accelerator_memory(), 160 * GiB);
  EXPECT_EQ(r.total_memory_including_cpu(), 672 * GiB);

  // Unified memory is the host's RAM: counted once.
  Inventory mac;
  mac.devices = {cpu(192 * GiB), device(Backend::apple, 0, "M2 Ultra GPU", 192 * GiB)};
  mac.devices[1].memory_kind = MemoryKind::unified;
  mac.devices[1].shared_memory_bytes = 144 * GiB;
  EXPECT_EQ(AcceleratorRegistry(mac).total_accelerator_memory(), 144 * GiB);
  EXPECT_EQ(AcceleratorRegistry(mac).total_memory_including_cpu(), 192 * GiB);
  // Without a CPU device, the unified memory is the only count of it.
  mac.devices.erase(mac.devices.begin());
  EXPECT_EQ(AcceleratorRegistry(mac).total_memory_including_cpu(), 144 * GiB);
}

}  // namespace
