// Fuzz targets for the planner's data files: user device-spec files (hwaccel
// specs/plan/train/recommend --device-specs, $HWACCEL_DEVICE_SPECS) and
// runtime-profile files (data/runtime-profiles.json's format) and model
// catalogues (data/models.json's).
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_support.hpp"

import hwaccel;

namespace hwaccel::fuzz {

void device_specs(std::string_view, std::string_view input, Findings& findings) {
  const auto set = parse_device_specs(input, "fuzz");
  if (!set) {
    findings.check(!set.error().message.empty(), "device specs: an error without a message");
    return;
  }
  findings.check(!set->empty(), "device specs: an accepted file without devices");
  for (const auto& s : set->specs()) {
    findings.check(s.memory_bytes > 0 && s.memory_bytes <= (16ull << 40), "device specs: memory out of range");
    findings.check(std::isfinite(s.memory_bandwidth_gbps) && s.memory_bandwidth_gbps > 0 &&
                       s.memory_bandwidth_gbps <= 100000,
                   "device specs: bandwidth out of range");
    for (auto type : {ComputeType::fp32, ComputeType::bf16, ComputeType::fp16, ComputeType::fp8, ComputeType::int8})
      if (const auto p = s.peak_tflops(type))
        findings.check(std::isfinite(*p) && *p > 0 && *p <= 100000, "device specs: a throughput out of range");
    const DeviceSpec* builtin = find_spec(s.id);
    findings.check(!builtin || *builtin == s, "device specs: an entry that changes a built-in one");
    findings.check(find_spec(s.id, *set) == (builtin ? builtin : &s), "device specs: an entry its own id does not find");
    findings.check(find_spec(s.name, *set) == (builtin ? builtin : &s), "device specs: an entry its own name does not find");
    findings.check(set->contains(&s), "device specs: an entry the set does not contain");
    // What --devices makes of it, and the matcher and the derivation on such a device.
    if (set->specs().size() <= 16) {
      const auto registry = hypothetical_registry(text::cat("2x", s.name), *set);
      if (findings.check(registry.has_value(), "device specs: an entry --devices cannot name")) {
        for (const auto& d : registry->devices()) {
          (void)match_spec(d, *set);
          (void)derive_spec(d);
        }
      }
    }
  }
  const std::string json = device_specs_json(*set);
  findings.check(json.size() > 2 && json.front() == '[' && json.back() == ']', "device specs: JSON that is not an array");
}

void runtime_profiles(std::string_view, std::string_view input, Findings& findings) {
  const auto read = parse_runtime_profiles(input, "fuzz");
  if (!read) {
    findings.check(!read.error().message.empty(), "runtime profiles: an error without a message");
    return;
  }
  findings.check(read->size() == all_runtimes().size(), "runtime profiles: not one profile per runtime");
  for (std::size_t i = 0; i < read->size() && i < all_runtimes().size(); ++i) {
    const auto& p = (*read)[i];
    findings.check(p.runtime == all_runtimes()[i] && p.name == to_string(p.runtime),
                   "runtime profiles: a profile out of the enum's order or with another name");
    findings.check(p.bandwidth_efficiency > 0 && p.bandwidth_efficiency <= 1 && p.compute_efficiency > 0 &&
                       p.compute_efficiency <= 1,
                   "runtime profiles: an efficiency out of (0, 1]");
    findings.check(p.interval_low > 0 && p.interval_low <= p.interval_high && std::isfinite(p.interval_high),
                   "runtime profiles: an interval out of order");
    findings.check(std::isfinite(p.layer_overhead_us) && std::isfinite(p.dequant_ops_per_weight) &&
                       std::isfinite(p.row_split_sync_us) && p.prefill_chunk_tokens > 0,
                   "runtime profiles: a parameter out of range");
  }
}

void model_catalogue(std::string_view, std::string_view input, Findings& findings) {
  const auto read = parse_model_catalogue(input, "fuzz");
  if (!read) {
    findings.check(!read.error().message.empty(), "model catalogue: an error without a message");
    return;
  }
  for (const auto& e : *read) {
    findings.check(!e.id.empty() && !e.hf_repo.empty(), "model catalogue: an entry without an id or repository");
    // What the reader accepted must plan as a model: the description and its counts.
    const auto d = ModelDescription::from_architecture(e.id, e.architecture);
    findings.check(d.has_value(), "model catalogue: an accepted entry that is not a model");
    if (d) findings.check(d->active_parameters <= d->parameters, "model catalogue: more active than total parameters");
  }
}

}  // namespace hwaccel::fuzz
