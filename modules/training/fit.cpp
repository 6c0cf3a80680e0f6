// Whether a training run fits a registry's devices, and the fewest devices
// of one kind that hold it.
module;
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>
module hwaccel.training;

namespace hwaccel {
namespace {

using u64 = std::uint64_t;

// Metal lets a process use about 75 % of unified memory (recommendedMaxWorkingSetSize).
constexpr double apple_gpu_share = 0.75;
constexpr std::uint32_t max_devices = 1u << 20;


struct Candidate {
  const DeviceProfile* profile = nullptr;
  const DeviceSpec* spec = nullptr;
  u64 capacity = 0;
  std::string name;
};

std::vector<Candidate> accelerators(const AcceleratorRegistry& registry, double reserve) {
  std::vector<Candidate> out;
  for (const auto& d : registry.devices()) {
    if (d.family == Family::cpu || !d.available || !d.visible) continue;
    const DeviceSpec* spec = d.spec_id ? find_spec(*d.spec_id) : nullptr;
    if (!spec) spec = match_spec(d);
    const u64 memory = d.memory_bytes ? *d.memory_bytes : spec ? spec->memory_bytes : 0;
    if (memory == 0) continue;
    double usable = static_cast<double>(memory) * (1.0 - reserve);
    if (d.backend == Backend::apple && d.memory_kind == MemoryKind::unified) usable *= apple_gpu_share;
    out.push_back({&d, spec, static_cast<u64>(usable), spec ? std::string(spec->name) : d.name});
  }
  // Largest first; registry order among equals (std::stable_sort's temporary buffer is deprecated in this libstdc++).
  std::sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) {
    return a.capacity != b.capacity ? a.capacity > b.capacity : a.profile < b.profile;
  });
  return out;
}

const DeviceProfile* host_of(const AcceleratorRegistry& registry) {
  for (const auto& d : registry.devices())
    if (d.family == Family::cpu && d.available && (d.memory_free_bytes || d.memory_bytes)) return &d;
  return nullptr;
}

// Whether `host` holds what `devices` devices offload, `per_device` bytes each.
void check_host(FitCheck& fit, const DeviceProfile& host, u64 per_device, u64 devices, double reserve,
                std::string_view whose) {
  const u64 memory = host.memory_free_bytes ? *host.memory_free_bytes : *host.memory_bytes;
  fit.host_capacity_bytes = static_cast<u64>(static_cast<double>(memory) * (1.0 - reserve));
  const u64 need = per_device * devices;
  fit.host_fits = need <= *fit.host_capacity_bytes;
  if (!*fit.host_fits) {
    fit.fits = false;
    fit.reason += text::cat("; ", whose, " needs ", text::decimal_gb(need), " for offloaded states (", devices,
                            " devices), more than its ", text::decimal_gb(*fit.host_capacity_bytes), " usable");
  }
}

// The formats the run computes and stores in, for the device-support check.
std::vector<QuantizationLevel> formats_of(const TrainingSettings& s) {
  std::vector<QuantizationLevel> out;
  switch (s.precision) {
    case TrainingPrecision::bf16_mixed:
    case TrainingPrecision::bf16_pure: out.push_back(QuantizationLevel::bf16); break;
    case TrainingPrecision::fp16_mixed: out.push_back(QuantizationLevel::fp16); break;
    case TrainingPrecision::fp32: break;
  }
  for (const auto& level : {s.base_quantization, s.frozen_quantization})
    if (level && std::find(out.begin(), out.end(), *level) == out.end()) out.push_back(*level);
  return out;
}

}  // namespace

Result<MinimumDevices> minimum_devices(const ModelDescription& model, const TrainingSettings& settings,
                                       const AuxiliaryModels& aux, std::string device_name, std::uint64_t capacity,
                                       Backend backend) {
  if (auto v = settings.validate(); !v) return fail(v.error());
  MinimumDevices m;
  m.device_name = std::move(device_name);
  m.capacity_bytes = capacity;
  m.tensor_parallel = settings.tensor_parallel;
  m.pipeline_parallel = settings.pipeline_parallel;
  m.offload = settings.offload;
  const std::uint32_t per_replica = settings.tensor_parallel * settings.pipeline_parallel;
  const std::uint32_t max_dp = std::max<std::uint32_t>(max_devices / per_replica, 1);

  u64 smallest_need = 0;
  const auto need_at = [&](std::uint32_t dp, std::uint32_t stage) -> Result<u64> {
    TrainingSettings s = settings;
    s.data_parallel = dp;
    s.zero_stage = stage;
    auto e = estimate_training(model, s, aux, backend);
    if (!e) return fail(e.error());
    const u64 need = e->per_device.total_bytes;
    if (smallest_need == 0 || need < smallest_need) smallest_need = need;
    return need;
  };
  const std::uint32_t first_stage = settings.offload == OffloadMode::parameters ? 3 : settings.zero_stage;
  for (std::uint32_t stage = first_stage; stage <= 3; ++stage) {
    auto at_one = need_at(1, stage);
    if (!at_one) return fail(at_one.error());
    std::optional<std::uint32_t> found;
    if (*at_one <= capacity) {
      found = 1;
    } else if (stage > 0 && max_dp > 1) {
      // Per-device memory falls as the data-parallel degree grows (ZeRO shards), so bisect.
      auto at_max = need_at(max_dp, stage);
      if (!at_max) return fail(at_max.error());
      if (*at_max <= capacity) {
        std::uint32_t lo = 1, hi = max_dp;  // lo does not fit, hi fits
        while (hi - lo > 1) {
          const std::uint32_t mid = lo + (hi - lo) / 2;
          auto need = need_at(mid, stage);
          if (!need) return fail(need.error());
          (*need <= capacity ? hi : lo) = mid;
        }
        found = hi;
      }
    }
    if (!found) continue;
    auto at = need_at(*found, stage);
    if (!at) return fail(at.error());
    m.found = true;
    m.data_parallel = *found;
    m.zero_stage = stage;
    m.devices = static_cast<u64>(*found) * per_replica;
    m.per_device_bytes = *at;
    std::string layout;
    if (per_replica > 1 || *found > 1)
      layout = text::cat(" (data parallel ", *found, " x tensor parallel ", settings.tensor_parallel, " x pipeline parallel ",
                         settings.pipeline_parallel, ")");
    m.summary = text::cat(m.devices == 1 ? "fits on 1x " : text::cat("needs ", m.devices, "x "), m.device_name, layout);
    // With one data-parallel rank and no offload a ZeRO stage shards nothing: not worth naming.
    if (stage > 0 && (*found > 1 || settings.offload != OffloadMode::none)) m.summary += text::cat(" with ZeRO-", stage);
    if (settings.offload != OffloadMode::none) m.summary += text::cat(" and ", to_string(settings.offload), " offload");
    if (stage != settings.zero_stage)
      m.summary += text::cat(" (ZeRO-", settings.zero_stage, " as asked fits at no data-parallel degree)");
    m.summary += text::cat(": ", text::decimal_gb(*at), " per device of ", text::decimal_gb(capacity), " usable");
    return m;
  }
  m.summary = text::cat("does not fit on any number of ", m.device_name, " with tensor parallel ", settings.tensor_parallel,
                        " and pipeline parallel ", settings.pipeline_parallel, ": a device needs at least ", text::decimal_gb(smallest_need),
                        " of ", text::decimal_gb(capacity),
                        " usable (activations and buffers do not shrink with data parallelism); raise tensor or pipeline "
                        "parallelism, recompute activations, or offload");
  return m;
}

Result<TrainingEstimate> plan_training(const AcceleratorRegistry& registry, const ModelDescription& model,
                                       const TrainingSettings& settings, const AuxiliaryModels& aux) {
  if (auto v = settings.validate(); !v) return fail(v.error());
  const auto candidates = accelerators(registry, settings.reserve_fraction);
  const Backend backend = candidates.empty() ? Backend::cuda : candidates.front().profile->backend;
  auto est = estimate_training(model, settings, aux, backend);
  if (!est) return est;

  FitCheck fit;
  fit.devices_needed = settings.devices();
  fit.devices_available = candidates.size();
  if (candidates.empty()) {
    fit.reason = "no accelerator with a known memory size in the registry";
    est->fit = fit;
    return est;
  }
  const std::size_t used = std::min<std::size_t>(candidates.size(), fit.devices_needed);
  fit.capacity_bytes = candidates.front().capacity;
  for (std::size_t i = 0; i < used; ++i) fit.capacity_bytes = std::min(fit.capacity_bytes, candidates[i].capacity);
  fit.device_name = candidates[used - 1].name;
  if (candidates[used - 1].spec) fit.spec_id = std::string(candidates[used - 1].spec->id);
  const u64 need = est->per_device.total_bytes;
  const bool enough_devices = candidates.size() >= fit.devices_needed;
  fit.fits = enough_devices && need <= fit.capacity_bytes;
  if (!enough_devices)
    fit.reason = text::cat("needs ", fit.devices_needed, " devices (dp x tp x pp), the registry has ", candidates.size());
  else if (need > fit.capacity_bytes)
    fit.reason = text::cat("the most loaded device needs ", text::decimal_gb(need), ", more than the ", text::decimal_gb(fit.capacity_bytes),
                           " usable on ", fit.device_name);
  else
    fit.reason = text::cat("the most loaded device needs ", text::decimal_gb(need), " of the ", text::decimal_gb(fit.capacity_bytes), " usable on ",
                           fit.device_name);
  if (est->per_device.host_bytes > 0) {
    if (const DeviceProfile* host = host_of(registry)) {
      check_host(fit, *host, est->per_device.host_bytes, used, settings.reserve_fraction, "the host");
    } else {
      est->assumptions.push_back("host memory for offloaded states is not checked: the registry describes no host");
    }
  }
  est->fit = fit;
  est->assumptions.push_back(text::cat("usable memory: each device's memory less a ", settings.reserve_fraction * 100,
                                       "% reserve (allocator fragmentation, other processes)"));

  // Formats the devices must run.
  const Candidate& largest = candidates.front();
  DeviceTraits traits = traits_of(*largest.profile);
  if (traits.compute_capability.empty() && largest.spec) traits.compute_capability = largest.spec->compute_capability;
  for (const auto level : formats_of(est->settings)) {
    const auto support = quantization_support(level, traits);
    if (!support.usable())
      est->warnings.push_back(text::cat(to_string(level), " is ", to_string(support.level), " on ", largest.name, ": ",
                                        support.reason));
  }

  auto minimum = minimum_devices(model, settings, aux, largest.name, largest.capacity, backend);
  if (!minimum) return fail(minimum.error());
  if (largest.spec) minimum->spec_id = std::string(largest.spec->id);
  est->minimum = std::move(*minimum);
  return est;
}

Result<TrainingEstimate> plan_training(const Cluster& cluster, const ModelDescription& model,
                                       const TrainingSettings& settings, const AuxiliaryModels& aux) {
  if (cluster.nodes.empty()) return fail(ErrorKind::invalid_input, "the cluster has no nodes");
  if (cluster.nodes.size() == 1) return plan_training(cluster.nodes.front().registry, model, settings, aux);
  if (auto v = settings.validate(); !v) return fail(v.error());
  // The accelerators of every node in one registry ("node/cuda:0"); hosts
  // are checked node by node below, never pooled.
  Inventory pooled;
  std::size_t smallest_node = SIZE_MAX, widest_domain = 0;
  const AcceleratorRegistry* first_with_host = nullptr;
  for (const auto& node : cluster.nodes) {
    std::size_t count = 0;
    for (const auto& d : node.registry.devices()) {
      if (d.family == Family::cpu) continue;
      DeviceProfile copy = d;
      copy.id = text::cat(node.name, "/", d.id);
      pooled.devices.push_back(std::move(copy));
      ++count;
    }
    if (count > 0) smallest_node = std::min(smallest_node, count);
    for (const auto& domain : high_bandwidth_domains(node.registry)) widest_domain = std::max(widest_domain, domain.size());
    if (!first_with_host && host_of(node.registry)) first_with_host = &node.registry;
  }
  if (smallest_node == SIZE_MAX)
    return fail(ErrorKind::unsupported, text::cat("no accelerator on any of the ", cluster.nodes.size(), " nodes"));
  auto est = plan_training(AcceleratorRegistry(std::move(pooled)), model, settings, aux);
  if (!est) return est;
  std::erase_if(est->assumptions, [](const std::string& a) { return a.starts_with("host memory for offloaded states"); });
  FitCheck& fit = *est->fit;
  fit.devices_per_node = static_cast<std::uint32_t>(smallest_node);
  fit.nodes = static_cast<std::uint32_t>((fit.devices_needed + smallest_node - 1) / smallest_node);
  if (fit.nodes > cluster.nodes.size()) {
    fit.fits = false;
    fit.reason += text::cat("; it spans ", fit.nodes, " nodes of ", smallest_node, " devices, the cluster has ",
                            cluster.nodes.size());
  }
  const std::uint32_t tp = est->settings.tensor_parallel;
  if (tp > widest_domain)
    est->warnings.push_back(text::cat("tensor parallel (", tp, ") is wider than a node's high-bandwidth domain (",
                                      widest_domain, "): its all-reduces would cross PCIe or the network"));
  if (est->per_device.host_bytes > 0) {
    const u64 per_node = std::min<u64>(smallest_node, fit.devices_needed);
    if (first_with_host) {
      check_host(fit, *host_of(*first_with_host), est->per_device.host_bytes, per_node, settings.reserve_fraction,
                 "each node's host");
    } else {
      est->assumptions.push_back("host memory for offloaded states is not checked: no node's registry describes its host");
    }
  }
  const u64 nproc = std::min<u64>(smallest_node, fit.devices_needed);
  fit.torchrun = text::cat("torchrun --nnodes ", fit.nodes, " --nproc-per-node ", nproc,
                           " --rdzv-backend c10d --rdzv-endpoint $HEAD_ADDR:29400 --rdzv-id train YOUR_TRAINING_SCRIPT.py");
  est->assumptions.push_back(text::cat(
      "nodes: ", fit.nodes, " of ", cluster.nodes.size(), " (", smallest_node, " devices each); the ",
      est->settings.data_parallel, " data-parallel ranks and their ZeRO/FSDP shards span nodes, tensor parallelism (",
      tp, ") stays inside one, pipeline stages (", est->settings.pipeline_parallel, ") may cross them; each node's host "
      "holds what its own devices offload"));
  return est;
}

}  // namespace hwaccel
