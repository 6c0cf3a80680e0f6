// Requirements on devices: usable memory, compute capability ordering,
// native number formats.
module;
#include <algorithm>
#include <array>
#include <cmath>
#include <compare>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
module hwaccel.registry;

namespace hwaccel {
namespace {

constexpr std::array<std::string_view, 8> device_class_names = {"any_accelerator", "gpu", "tpu", "gaudi",
                                                                "aws_neuron", "gpu_or_tpu", "npu", "any"};

// --- compute capability schemes ----------------------------------------------

// NVIDIA "major.minor" as major * 100 + minor.
std::optional<std::uint32_t> nvidia_capability(std::string_view s) noexcept {
  s = text::trim(s);
  const auto dot = s.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const auto major = text::parse_u64(s.substr(0, dot));
  const auto minor = text::parse_u64(s.substr(dot + 1));
  if (!major || !minor || *major > 1000 || *minor > 99 || s.substr(dot + 1).empty()) return std::nullopt;
  return static_cast<std::uint32_t>(*major * 100 + *minor);
}

enum class GfxLine : std::uint8_t { gfx9, rdna };

struct GfxTarget {
  std::string_view name;
  GfxLine line;
  std::uint32_t generation;
};

// Generation within a line: GCN5 Vega 10, Vega 20 20, CDNA1 30, CDNA2 40,
// CDNA3 50, CDNA4 60; RDNA1 10, RDNA2 20, RDNA3 30, RDNA3.5 35, RDNA4 40.
constexpr std::array<GfxTarget, 31> gfx_targets = {{
    {"gfx900", GfxLine::gfx9, 10},  {"gfx902", GfxLine::gfx9, 10},  {"gfx904", GfxLine::gfx9, 10},
    {"gfx909", GfxLine::gfx9, 10},  {"gfx90c", GfxLine::gfx9, 10},  {"gfx906", GfxLine::gfx9, 20},
    {"gfx908", GfxLine::gfx9, 30},  {"gfx90a", GfxLine::gfx9, 40},  {"gfx940", GfxLine::gfx9, 50},
    {"gfx941", GfxLine::gfx9, 50},  {"gfx942", GfxLine::gfx9, 50},  {"gfx950", GfxLine::gfx9, 60},
    {"gfx1010", GfxLine::rdna, 10}, {"gfx1011", GfxLine::rdna, 10}, {"gfx1012", GfxLine::rdna, 10},
    {"gfx1013", GfxLine::rdna, 10}, {"gfx1030", GfxLine::rdna, 20}, {"gfx1031", GfxLine::rdna, 20},
    {"gfx1032", GfxLine::rdna, 20}, {"gfx1033", GfxLine::rdna, 20}, {"gfx1034", GfxLine::rdna, 20},
    {"gfx1035", GfxLine::rdna, 20}, {"gfx1036", GfxLine::rdna, 20}, {"gfx1100", GfxLine::rdna, 30},
    {"gfx1101", GfxLine::rdna, 30}, {"gfx1102", GfxLine::rdna, 30}, {"gfx1103", GfxLine::rdna, 30},
    {"gfx1150", GfxLine::rdna, 35}, {"gfx1151", GfxLine::rdna, 35}, {"gfx1200", GfxLine::rdna, 40},
    {"gfx1201", GfxLine::rdna, 40},
}};

// The bare target of "gfx942:sramecc+:xnack-", lower-cased.
std::string gfx_base(std::string_view s) {
  s = text::trim(s);
  return text::lower(s.substr(0, s.find(':')));
}

std::optional<GfxTarget> gfx_target(std::string_view s) {
  const std::string base = gfx_base(s);
  for (const auto& t : gfx_targets)
    if (t.name == base) return t;
  return std::nullopt;
}

// TPU generations; v5e ("v5litepod" in accelerator types) and v5p are the same
// generation but v5p is the larger chip.
constexpr std::array<std::pair<std::string_view, std::uint32_t>, 10> tpu_generations = {{
    {"v2", 20}, {"v3", 30}, {"v4", 40}, {"v5e", 50}, {"v5litepod", 50}, {"v5lite", 50}, {"v5p", 55}, {"v6e", 60},
    {"v7", 70}, {"v7x", 70},
}};

std::optional<std::uint32_t> tpu_generation(std::string_view s) {
  const std::string lower = text::lower(text::trim(s));
  for (const auto& [name, generation] : tpu_generations)
    if (name == lower) return generation;
  return std::nullopt;
}

std::string gib(std::uint64_t bytes) {
  const double value = static_cast<double>(bytes) / static_cast<double>(1ull << 30);
  return text::cat(std::round(value * 100) / 100, " GiB");
}

bool has_isa(const DeviceProfile& cpu, std::initializer_list<std::string_view> any_of) {
  const auto it = cpu.properties.find("isa");
  if (it == cpu.properties.end()) return false;
  std::string_view list = it->second;
  while (!list.empty()) {
    const std::string_view feature = text::next_token(list, ',');
    for (std::string_view wanted : any_of)
      if (feature == wanted) return true;
  }
  return false;
}

// Canonical dtype names; nullopt for names this version does not know.
std::optional<std::string_view> canonical_dtype(std::string_view dtype) {
  const std::string d = text::lower(text::trim(dtype));
  if (d == "fp32" || d == "float32" || d == "f32") return "fp32";
  if (d == "fp16" || d == "float16" || d == "f16" || d == "half") return "fp16";
  if (d == "bf16" || d == "bfloat16") return "bf16";
  if (d == "fp8" || d == "float8" || d == "f8" || d == "fp8_e4m3" || d == "fp8_e5m2") return "fp8";
  if (d == "int8" || d == "i8") return "int8";
  return std::nullopt;
}

bool accepts_class(DeviceClass c, const DeviceProfile& d) noexcept {
  switch (c) {
    case DeviceClass::any_accelerator: return d.family != Family::cpu;
    case DeviceClass::gpu: return d.family == Family::gpu;
    case DeviceClass::tpu: return d.family == Family::tpu;
    case DeviceClass::gaudi: return d.backend == Backend::gaudi;
    case DeviceClass::aws_neuron: return d.backend == Backend::aws_neuron;
    case DeviceClass::gpu_or_tpu: return d.family == Family::gpu || d.family == Family::tpu;
    case DeviceClass::npu: return d.family == Family::npu;
    case DeviceClass::any: return true;
  }
  return false;
}

}  // namespace

std::string_view to_string(DeviceClass c) noexcept {
  const auto i = static_cast<std::size_t>(c);
  return i < device_class_names.size() ? device_class_names[i] : std::string_view("unknown");
}

std::optional<std::uint64_t> usable_memory_bytes(const DeviceProfile& d) noexcept {
  if (d.family == Family::cpu) {
    if (!d.memory_bytes) return std::nullopt;
    const auto limit = d.properties.find("cgroup_memory_limit_bytes");
    if (limit != d.properties.end())
      if (const auto bytes = text::parse_u64(limit->second)) return std::min(*d.memory_bytes, *bytes);
    return d.memory_bytes;
  }
  if (d.memory_kind == MemoryKind::unified && d.shared_memory_bytes) return d.shared_memory_bytes;
  return d.memory_bytes;
}

std::partial_ordering compare_compute_capability(std::string_view a, std::string_view b) noexcept {
  if (const auto na = nvidia_capability(a), nb = nvidia_capability(b); na && nb) return *na <=> *nb;
  if (const auto ga = gfx_target(a), gb = gfx_target(b); ga && gb) {
    if (ga->line != gb->line) return std::partial_ordering::unordered;
    return ga->generation <=> gb->generation;
  }
  if (const auto ta = tpu_generation(a), tb = tpu_generation(b); ta && tb) return *ta <=> *tb;
  if (text::trim(a) == text::trim(b) && !text::trim(a).empty()) return std::partial_ordering::equivalent;
  return std::partial_ordering::unordered;
}

std::optional<bool> supports_dtype(const DeviceProfile& d, std::string_view dtype) noexcept {
  const auto type = canonical_dtype(dtype);
  if (!type) return std::nullopt;
  const std::string_view t = *type;
  switch (d.backend) {
    case Backend::cuda: {
      if (t == "fp32") return true;
      const auto cc = d.compute_capability ? nvidia_capability(*d.compute_capability) : std::nullopt;
      if (!cc) return std::nullopt;
      if (t == "fp16") return *cc >= 503;
      if (t == "bf16") return *cc >= 800;
      if (t == "fp8") return *cc >= 809;
      return *cc >= 601;  // int8: dp4a from Pascal GP10x
    }
    case Backend::rocm: {
      if (t == "fp32") return true;
      const auto target = d.compute_capability ? gfx_target(*d.compute_capability) : std::nullopt;
      if (!target) return std::nullopt;
      const bool gfx9 = target->line == GfxLine::gfx9;
      if (t == "fp16") return true;
      if (t == "bf16") return target->generation >= 30;  // CDNA matrix cores, RDNA3 WMMA
      if (t == "fp8") return target->generation >= (gfx9 ? 50u : 40u);
      return target->generation >= (gfx9 ? 20u : 30u);  // int8: gfx906 dot4, RDNA3 WMMA iu8
    }
    case Backend::cpu:
      if (t == "fp32") return true;
      if (d.properties.find("isa") == d.properties.end()) return std::nullopt;
      if (t == "bf16") return has_isa(d, {"avx512_bf16", "amx_bf16", "bf16"});
      if (t == "fp16") return has_isa(d, {"avx512_fp16", "amx_fp16", "fp16"});
      if (t == "int8") return has_isa(d, {"avx512_vnni", "avx_vnni", "amx_int8", "dotprod", "i8mm"});
      return false;  // no CPU computes fp8 natively
    case Backend::tpu:
      if (t == "fp32" || t == "bf16") return true;
      if (t == "fp16") return false;  // the MXU multiplies bf16; fp16 is converted
      return std::nullopt;
    case Backend::gaudi:
    case Backend::aws_neuron:
      if (t == "fp32" || t == "bf16" || t == "fp16") return true;
      return std::nullopt;  // fp8/int8 depend on the generation
    case Backend::apple:
    case Backend::intel_oneapi:
      if (d.family != Family::gpu) return std::nullopt;
      if (t == "fp32" || t == "fp16") return true;
      return std::nullopt;  // bf16 depends on the generation (Apple M2+, Intel XMX)
    default: return std::nullopt;
  }
}

AcceleratorRequirement AcceleratorRequirement::with_min_devices(std::uint32_t n) const {
  AcceleratorRequirement r = *this;
  r.min_devices = n;
  return r;
}

AcceleratorRequirement AcceleratorRequirement::with_min_memory(std::uint64_t bytes) const {
  AcceleratorRequirement r = *this;
  r.min_memory_bytes = bytes;
  return r;
}

AcceleratorRequirement AcceleratorRequirement::with_min_compute_capability(std::string capability) const {
  AcceleratorRequirement r = *this;
  r.min_compute_capability = std::move(capability);
  return r;
}

AcceleratorRequirement AcceleratorRequirement::with_dtype(std::string type) const {
  AcceleratorRequirement r = *this;
  r.dtype = std::move(type);
  return r;
}

std::optional<std::string> AcceleratorRequirement::rejection(const DeviceProfile& d) const {
  if (!accepts_class(device_class, d))
    return text::cat(d.id, " is a ", hwaccel::to_string(d.family), " (", hwaccel::to_string(d.backend), "), not ",
                     hwaccel::to_string(device_class));
  if (!d.available) return text::cat(d.id, " is not available");
  if (!d.visible) return text::cat(d.id, " is hidden from this process");
  if (min_memory_bytes) {
    const auto usable = usable_memory_bytes(d);
    if (!usable) return text::cat(d.id, " has no known memory size; ", gib(*min_memory_bytes), " required");
    if (*usable < *min_memory_bytes)
      return text::cat(d.id, " has ", gib(*usable), " usable; ", gib(*min_memory_bytes), " required");
  }
  if (min_compute_capability) {
    if (!d.compute_capability)
      return text::cat(d.id, " has no known compute capability; ", *min_compute_capability, " required");
    const auto order = compare_compute_capability(*d.compute_capability, *min_compute_capability);
    if (order == std::partial_ordering::unordered)
      return text::cat(d.id, " compute capability ", *d.compute_capability, " cannot be compared with ",
                       *min_compute_capability);
    if (order == std::partial_ordering::less)
      return text::cat(d.id, " compute capability ", *d.compute_capability, " is below ", *min_compute_capability);
  }
  if (dtype) {
    const auto supported = supports_dtype(d, *dtype);
    if (!supported) return text::cat("cannot tell whether ", d.id, " computes ", *dtype, " natively");
    if (!*supported) return text::cat(d.id, " does not compute ", *dtype, " natively");
  }
  return std::nullopt;
}

std::string AcceleratorRequirement::to_string() const {
  std::string out = min_devices > 1 ? text::cat(min_devices, "+ ", hwaccel::to_string(device_class))
                                    : std::string(hwaccel::to_string(device_class));
  if (min_memory_bytes) out += text::cat(", >= ", gib(*min_memory_bytes));
  if (min_compute_capability) out += text::cat(", compute capability >= ", *min_compute_capability);
  if (dtype) out += text::cat(", ", *dtype);
  return out;
}

}  // namespace hwaccel
