// Figures for a device no published spec matches, estimated from the spec
// table's rows of its architecture.
module;
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>
module hwaccel.hardware;

namespace hwaccel {
namespace {


double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

bool usable_peer(const DeviceSpec& s, const DeviceProfile& d) {
  return s.backend == d.backend && s.family == d.family && s.memory_kind == MemoryKind::dedicated &&
         s.memory_bytes > 0 && s.memory_bandwidth_gbps > 0;
}

// The peers' median figure per GiB times `gib`, clamped to their range;
// empty when no peer publishes the figure.
template <class Get>
std::optional<double> scaled(const std::vector<const DeviceSpec*>& peers, double gib, Get get,
                             double* low = nullptr, double* high = nullptr) {
  std::vector<double> per_gib;
  double lo = 0, hi = 0;
  for (const DeviceSpec* p : peers) {
    const std::optional<double> v = get(*p);
    if (!v || !(*v > 0)) continue;
    per_gib.push_back(*v / (static_cast<double>(p->memory_bytes) / text::bytes_per_gib));
    lo = per_gib.size() == 1 ? *v : std::min(lo, *v);
    hi = per_gib.size() == 1 ? *v : std::max(hi, *v);
  }
  if (per_gib.empty()) return std::nullopt;
  if (low) *low = lo;
  if (high) *high = hi;
  // Three significant figures (an estimate, not a datasheet value), then
  // within the peers' range.
  double v = median(std::move(per_gib)) * gib;
  if (v > 0) {
    const double scale = std::pow(10.0, std::floor(std::log10(v)) - 2);
    v = std::round(v / scale) * scale;
  }
  return std::clamp(v, lo, hi);
}

}  // namespace

std::optional<double> DerivedSpec::peak_tflops(ComputeType type) const noexcept {
  switch (type) {
    case ComputeType::fp32: return fp32_tflops;
    case ComputeType::bf16: return bf16_tflops ? bf16_tflops : fp16_tflops;
    case ComputeType::fp16: return fp16_tflops ? fp16_tflops : bf16_tflops;
    case ComputeType::fp8: return fp8_tflops;
    case ComputeType::int8: return int8_tops;
  }
  return std::nullopt;
}

std::string DerivedSpec::method() const {
  std::string out = text::cat("derived from the architecture (not published): ", memory_bandwidth_gbps,
                              " GB/s memory bandwidth");
  if (const auto p = peak_tflops(ComputeType::bf16)) out += text::cat(" and ", *p, " dense 16-bit TFLOPS");
  out += text::cat(" = the median per GiB of memory of the ", peers, " spec-table row(s) of ", basis,
                   " times this device's memory, kept within those rows' ", bandwidth_low_gbps, "-",
                   bandwidth_high_gbps, " GB/s; the table's own products come out within 35 % of their datasheet "
                   "for about 3 in 4 (median error 11 % for bandwidth, 17 % for compute)");
  return out;
}

std::optional<DerivedSpec> derive_spec(const DeviceProfile& d, std::span<const DeviceSpec> table) {
  if (d.family == Family::cpu || d.memory_kind != MemoryKind::dedicated || !d.memory_bytes || *d.memory_bytes == 0)
    return std::nullopt;
  std::vector<const DeviceSpec*> peers;
  DerivedSpec out;
  if (d.compute_capability && !d.compute_capability->empty()) {
    for (const auto& s : table)
      if (usable_peer(s, d) && text::iequals(s.compute_capability, *d.compute_capability)) peers.push_back(&s);
    if (!peers.empty())
      out.basis = text::cat("compute capability ", *d.compute_capability, " (", peers.front()->architecture, ")");
  }
  if (peers.empty() && d.architecture && !d.architecture->empty()) {
    for (const auto& s : table)
      if (usable_peer(s, d) && text::iequals(s.architecture, *d.architecture)) peers.push_back(&s);
    if (!peers.empty()) out.basis = text::cat("architecture ", *d.architecture);
  }
  if (peers.empty()) return std::nullopt;
  const double gib = static_cast<double>(*d.memory_bytes) / text::bytes_per_gib;
  out.peers = peers.size();
  const auto bandwidth = scaled(
      peers, gib, [](const DeviceSpec& s) { return std::optional<double>(s.memory_bandwidth_gbps); },
      &out.bandwidth_low_gbps, &out.bandwidth_high_gbps);
  if (!bandwidth) return std::nullopt;
  out.memory_bandwidth_gbps = *bandwidth;
  out.fp32_tflops = scaled(peers, gib, [](const DeviceSpec& s) { return s.fp32_tflops; });
  out.bf16_tflops = scaled(peers, gib, [](const DeviceSpec& s) { return s.bf16_tflops ? s.bf16_tflops : s.fp16_tflops; });
  out.fp16_tflops = scaled(peers, gib, [](const DeviceSpec& s) { return s.fp16_tflops ? s.fp16_tflops : s.bf16_tflops; });
  out.fp8_tflops = scaled(peers, gib, [](const DeviceSpec& s) { return s.fp8_tflops; });
  out.int8_tops = scaled(peers, gib, [](const DeviceSpec& s) { return s.int8_tops; });
  return out;
}

std::optional<DerivedSpec> derive_spec(const DeviceProfile& d) { return derive_spec(d, device_specs()); }

}  // namespace hwaccel
