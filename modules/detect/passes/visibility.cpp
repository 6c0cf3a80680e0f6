// Visible-device resolution: which CUDA and ROCm devices this process can use
// and the index each runtime gives them, from the device-selection variables
// (docs/environment.md has the rules and the sources they come from).
module;
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.detect;
import hwaccel.detectors;

namespace hwaccel {
namespace {

Warning warning_for(Backend backend, WarningKind kind, std::string message) {
  return Warning{std::string(to_string(backend)), kind, std::move(message)};
}

std::optional<std::string_view> variable(const VisibilityInputs& inputs, std::string_view name) {
  const auto it = inputs.env.find(name);
  if (it == inputs.env.end()) return std::nullopt;
  return std::string_view(it->second);
}

std::string quoted_excerpt(std::string_view s) { return text::cat("\"", text::excerpt(s, 60), "\""); }

bool is_decimal(std::string_view s) noexcept {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<std::uint32_t> small_decimal(std::string_view s) noexcept {
  if (!is_decimal(s) || s.size() > 9) return std::nullopt;
  return static_cast<std::uint32_t>(*text::parse_u64(s));
}

// CUDA reads each index like strtoul: blanks, an optional sign, digits, and
// whatever follows the digits is ignored ("1gpu" is 1). nullopt: no digits.
std::optional<long long> leading_integer(std::string_view s) noexcept {
  s = text::trim(s);
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  long long value = 0;
  std::size_t digits = 0;
  for (char c : s) {
    if (c < '0' || c > '9') break;
    if (value < 1'000'000'000'000LL) value = value * 10 + (c - '0');  // saturates: out of range anyway
    ++digits;
  }
  if (digits == 0) return std::nullopt;
  return negative ? -value : value;
}

std::vector<std::string_view> comma_list(std::string_view value) {
  std::vector<std::string_view> items;
  while (true) {
    const auto comma = value.find(',');
    items.push_back(value.substr(0, comma));
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return items;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return out;
}

// "-1", "-2": a negative index, the documented way to end a list on purpose.
bool negative_number(std::string_view s) noexcept { return s.size() > 1 && s.front() == '-' && is_decimal(s.substr(1)); }

bool starts_with_ci(std::string_view s, std::string_view prefix) noexcept {
  return s.size() >= prefix.size() && text::iequals(s.substr(0, prefix.size()), prefix);
}

// ============================================================================
// CUDA

bool mig_enabled(const DeviceProfile& d) {
  if (!d.partitions.empty()) return true;
  const auto it = d.properties.find("mig_mode");
  return it != d.properties.end() && text::iequals(text::trim(it->second), "enabled");
}

// nvidia-smi (and NVML, and CUDA_DEVICE_ORDER=PCI_BUS_ID) order: by PCI bus id;
// devices without one keep their enumeration index order after those with one.
bool pci_order(const DeviceProfile* a, const DeviceProfile* b) {
  const auto pa = a->pci_bus_id ? PciAddress::parse(*a->pci_bus_id) : std::nullopt;
  const auto pb = b->pci_bus_id ? PciAddress::parse(*b->pci_bus_id) : std::nullopt;
  if (pa && pb && *pa != *pb) return *pa < *pb;
  if (pa.has_value() != pb.has_value()) return pa.has_value();
  return a->index < b->index;
}

// "9.0" -> 90; unknown capabilities sort last.
int capability_rank(const DeviceProfile& d) {
  if (!d.compute_capability) return -1;
  std::string_view cc = *d.compute_capability;
  const auto dot = cc.find('.');
  const auto major = text::parse_u64(cc.substr(0, dot));
  const auto minor = dot == std::string_view::npos ? std::optional<std::uint64_t>(0) : text::parse_u64(cc.substr(dot + 1));
  if (!major || !minor || *major > 100 || *minor > 99) return -1;
  return static_cast<int>(*major * 100 + *minor);
}

// One whole GPU, or one MIG partition of it (its position in `partitions`).
struct CudaPick {
  DeviceProfile* device = nullptr;
  std::optional<std::size_t> partition;
};

// Which partitions of a GPU are inside the container: none listed = all of them.
using PartitionLimits = std::map<const DeviceProfile*, std::set<std::size_t>>;

struct CudaSelection {
  std::vector<DeviceProfile*> container;  // GPUs the container exposes, PCI order
  PartitionLimits mig_limits;
};

std::optional<std::size_t> partition_by_uuid(const DeviceProfile& d, std::string_view uuid) {
  for (std::size_t i = 0; i < d.partitions.size(); ++i)
    if (d.partitions[i].uuid && text::iequals(*d.partitions[i].uuid, uuid)) return i;
  return std::nullopt;
}

// A GPU, or one of its MIG devices, named in NVIDIA_VISIBLE_DEVICES.
struct Named {
  DeviceProfile* gpu = nullptr;
  std::optional<std::size_t> partition;
};

// "MIG-<uuid>" (R470 and later) or "MIG-GPU-<gpu uuid>/<gi>/<ci>", matched whole
// (the container runtime resolves full identifiers through NVML).
std::optional<Named> container_mig_device(const std::vector<DeviceProfile*>& gpus, std::string_view entry) {
  const std::string_view rest = entry.substr(4);
  if (starts_with_ci(rest, "GPU-") && rest.find('/') != std::string_view::npos) {
    std::string_view ids = rest;
    const std::string_view gpu_uuid = text::next_token(ids, '/');
    const auto gi = small_decimal(text::next_token(ids, '/'));
    const auto ci = small_decimal(ids);
    if (!gi || !ci) return std::nullopt;
    for (DeviceProfile* d : gpus) {
      if (!d->uuid || !text::iequals(*d->uuid, gpu_uuid)) continue;
      for (std::size_t i = 0; i < d->partitions.size(); ++i)
        if (d->partitions[i].gpu_instance_id == gi && d->partitions[i].compute_instance_id == ci) return Named{d, i};
    }
    return std::nullopt;
  }
  for (DeviceProfile* d : gpus)
    if (const auto p = partition_by_uuid(*d, entry)) return Named{d, p};
  return std::nullopt;
}

// NVIDIA_VISIBLE_DEVICES: what the NVIDIA container runtime gave this
// container. Inside it, nvidia-smi already shows only those GPUs, renumbered
// from 0; when the detection shows more (read from sysfs, which is not
// namespaced), host indices are mapped onto PCI order as the host numbers them.
CudaSelection container_gpus(std::vector<DeviceProfile*> gpus, const VisibilityInputs& inputs,
                             std::vector<Warning>& warnings) {
  CudaSelection sel;
  std::sort(gpus.begin(), gpus.end(), pci_order);
  sel.container = gpus;
  const auto nvd = variable(inputs, "NVIDIA_VISIBLE_DEVICES");
  if (!nvd || !inputs.in_container) return sel;
  const std::string_view value = text::trim(*nvd);
  // "void" and "" make the runtime behave like runc: it exposes nothing, and
  // GPUs present got in another way (CDI, --device), so the variable says nothing.
  if (value.empty() || text::iequals(value, "all") || text::iequals(value, "void")) return sel;
  if (text::iequals(value, "none")) {
    sel.container.clear();
    return sel;
  }

  std::vector<Named> named;
  std::set<std::string> gpu_keys;  // distinct GPUs the list names
  std::vector<std::pair<std::uint32_t, std::optional<std::uint32_t>>> host_indices;
  for (std::string_view entry : comma_list(value)) {
    entry = text::trim(entry);
    if (entry.empty()) continue;
    if (starts_with_ci(entry, "GPU-")) {
      gpu_keys.insert(text::lower(entry));
      const auto it = std::find_if(gpus.begin(), gpus.end(),
                                   [&](const DeviceProfile* d) { return d->uuid && text::iequals(*d->uuid, entry); });
      if (it == gpus.end())
        warnings.push_back(warning_for(Backend::cuda, WarningKind::invalid_value,
                                       text::cat("NVIDIA_VISIBLE_DEVICES names ", quoted_excerpt(entry), ", which no detected GPU has")));
      else
        named.push_back({*it, std::nullopt});
      continue;
    }
    if (starts_with_ci(entry, "MIG-")) {
      const std::optional<Named> found = container_mig_device(gpus, entry);
      if (!found) {
        gpu_keys.insert(text::lower(entry));
        warnings.push_back(warning_for(Backend::cuda, WarningKind::invalid_value,
                                       text::cat("NVIDIA_VISIBLE_DEVICES names ", quoted_excerpt(entry), ", which no detected MIG device has")));
        continue;
      }
      gpu_keys.insert(found->gpu->uuid ? text::lower(*found->gpu->uuid) : found->gpu->id);
      named.push_back(*found);
      continue;
    }
    // "<gpu index>" or "<gpu index>:<mig index>", host numbering.
    const auto colon = entry.find(':');
    const auto gpu_index = small_decimal(entry.substr(0, colon));
    const auto mig_index = colon == std::string_view::npos ? std::nullopt : small_decimal(entry.substr(colon + 1));
    if (!gpu_index || (colon != std::string_view::npos && !mig_index)) {
      warnings.push_back(warning_for(Backend::cuda, WarningKind::invalid_value,
                                     text::cat("NVIDIA_VISIBLE_DEVICES entry ", quoted_excerpt(entry),
                                               " is not an index, a GPU or MIG UUID, or <gpu>:<mig>; ignored")));
      continue;
    }
    gpu_keys.insert(text::cat("#", *gpu_index));
    host_indices.emplace_back(*gpu_index, mig_index);
  }

  // The runtime applied the list when the container shows no more GPUs than it
  // names: host indices cannot be mapped then, and need not be.
  const bool already_applied = gpus.size() <= gpu_keys.size();
  if (!already_applied) {
    // Otherwise the detection saw the host's GPUs (sysfs is not namespaced):
    // host indices follow the host's PCI order.
    for (const auto& [gpu_index, mig_index] : host_indices) {
      if (gpu_index >= gpus.size()) {
        warnings.push_back(warning_for(Backend::cuda, WarningKind::invalid_value,
                                       text::cat("NVIDIA_VISIBLE_DEVICES names GPU ", gpu_index, " but the host has ",
                                                 gpus.size(), " GPUs; ignored")));
        continue;
      }
      DeviceProfile* d = gpus[gpu_index];
      if (!mig_index) {
        named.push_back({d, std::nullopt});
        continue;
      }
      const auto it = std::find_if(d->partitions.begin(), d->partitions.end(),
                                   [&](const DevicePartition& p) { return p.index == *mig_index; });
      if (it == d->partitions.end())
        warnings.push_back(warning_for(Backend::cuda, WarningKind::invalid_value,
                                       text::cat("NVIDIA_VISIBLE_DEVICES names MIG device ", gpu_index, ":", *mig_index,
                                                 ", which ", d->id, " does not have; ignored")));
      else
        named.push_back({d, static_cast<std::size_t>(it - d->partitions.begin())});
    }
    // A list that names no detected GPU is not trusted to hide them all
    // (a running container's list always names real GPUs); it was warned about.
    if (!named.empty()) {
      std::vector<DeviceProfile*> inside;
      for (DeviceProfile* d : gpus)
        if (std::any_of(named.begin(), named.end(), [&](const Named& n) { return n.gpu == d; })) inside.push_back(d);
      sel.container = std::move(inside);
    }
  }
  // A GPU named only through MIG devices brings only those into the container.
  for (DeviceProfile* d : sel.container) {
    bool whole = false;
    std::set<std::size_t> parts;
    bool any = false;
    for (const Named& n : named) {
      if (n.gpu != d) continue;
      any = true;
      if (n.partition) parts.insert(*n.partition);
      else whole = true;
    }
    if (any && !whole) sel.mig_limits.emplace(d, std::move(parts));
  }
  return sel;
}

// CUDA's enumeration order of the container's GPUs (CUDA_DEVICE_ORDER).
std::vector<DeviceProfile*> cuda_order(std::vector<DeviceProfile*> gpus, const VisibilityInputs& inputs,
                                       std::vector<Warning>& warnings) {
  std::sort(gpus.begin(), gpus.end(), pci_order);
  const auto order = variable(inputs, "CUDA_DEVICE_ORDER");
  const std::string_view value = order ? text::trim(*order) : std::string_view{};
  if (value == "PCI_BUS_ID") return gpus;
  if (!value.empty() && value != "FASTEST_FIRST")
    warnings.push_back(warning_for(Backend::cuda, WarningKind::invalid_value,
                                   text::cat("CUDA_DEVICE_ORDER is ", quoted_excerpt(value),
                                             "; CUDA knows FASTEST_FIRST (the default, assumed here) and PCI_BUS_ID")));
  // FASTEST_FIRST: identical GPUs tie and keep PCI order. Between different
  // models CUDA's heuristic is not documented; we assume it ranks by compute
  // capability, then PCI bus id, and say so.
  const bool identical = std::all_of(gpus.begin(), gpus.end(), [&](const DeviceProfile* d) {
    return d->name == gpus.front()->name && d->compute_capability == gpus.front()->compute_capability;
  });
  if (identical) return gpus;
  std::sort(gpus.begin(), gpus.end(), [](const DeviceProfile* a, const DeviceProfile* b) {
    const int ra = capability_rank(*a), rb = capability_rank(*b);
    return ra != rb ? ra > rb : pci_order(a, b);
  });
  std::string names;
  for (const DeviceProfile* d : gpus) names += text::cat(names.empty() ? "" : ", ", d->id, " ", d->name);
  warnings.push_back(warning_for(
      Backend::cuda, WarningKind::degraded,
      text::cat("CUDA_DEVICE_ORDER is FASTEST_FIRST (the default) and the GPUs differ (", names,
                "): runtime indices assume CUDA ranks them by compute capability, then PCI bus id; set "
                "CUDA_DEVICE_ORDER=PCI_BUS_ID to make them certain")));
  return gpus;
}

// CUDA_VISIBLE_DEVICES over `order`. Returns nullopt when the variable is
// unset (every GPU, in order).
std::optional<std::vector<CudaPick>> cuda_visible_list(const std::vector<DeviceProfile*>& order,
                                                       const PartitionLimits& limits, std::string_view value,
                                                       std::vector<Warning>& warnings) {
  std::vector<CudaPick> picks;
  const auto warn = [&](std::string message) {
    warnings.push_back(warning_for(Backend::cuda, WarningKind::invalid_value, std::move(message)));
  };
  const auto partition_allowed = [&](const DeviceProfile* d, std::size_t p) {
    const auto it = limits.find(d);
    return it == limits.end() || it->second.contains(p);
  };
  if (text::trim(value).empty()) return picks;  // set but empty: no GPU
  const auto items = comma_list(value);
  const std::string_view first = text::trim(items.front());
  // The first entry decides how the list is read (as PyTorch mirrors CUDA):
  // a list of GPU UUIDs, of MIG UUIDs, or of indices; an entry of another
  // kind ends it.
  const bool gpu_uuids = first.starts_with("GPU-");
  const bool mig_uuids = first.starts_with("MIG-");
  for (std::size_t n = 0; n < items.size(); ++n) {
    const std::string_view entry = text::trim(items[n]);
    const auto stop = [&](std::string_view why) {
      warn(text::cat("CUDA_VISIBLE_DEVICES entry ", n + 1, " (", quoted_excerpt(entry), ") ", why,
                     ": CUDA ignores it and every entry after it"));
    };
    CudaPick pick;
    if (gpu_uuids || mig_uuids) {
      if (!entry.starts_with(gpu_uuids ? "GPU-" : "MIG-")) {
        stop(gpu_uuids ? "is not a GPU UUID like the first entry" : "is not a MIG UUID like the first entry");
        break;
      }
      // A UUID may be shortened to any prefix that names one device.
      std::vector<CudaPick> matches;
      for (DeviceProfile* d : order) {
        if (gpu_uuids) {
          if (d->uuid && d->uuid->starts_with(entry)) matches.push_back({d, std::nullopt});
          continue;
        }
        if (entry.starts_with("MIG-GPU-") && entry.find('/') != std::string_view::npos) {
          std::string_view ids = entry.substr(4);
          const std::string_view gpu_uuid = text::next_token(ids, '/');
          const auto gi = small_decimal(text::next_token(ids, '/'));
          const auto ci = small_decimal(ids);
          if (!d->uuid || *d->uuid != gpu_uuid) continue;
          for (std::size_t i = 0; i < d->partitions.size(); ++i)
            if (gi && ci && d->partitions[i].gpu_instance_id == gi && d->partitions[i].compute_instance_id == ci &&
                partition_allowed(d, i))
              matches.push_back({d, i});
          continue;
        }
        for (std::size_t i = 0; i < d->partitions.size(); ++i)
          if (d->partitions[i].uuid && d->partitions[i].uuid->starts_with(entry) && partition_allowed(d, i))
            matches.push_back({d, i});
      }
      if (matches.size() != 1) {
        stop(matches.empty() ? "names no device this process can see" : "matches more than one device");
        break;
      }
      pick = matches.front();
    } else {
      const auto index = leading_integer(entry);
      if (!index) {
        stop(text::iequals(entry, "all") ? "is not a device index (\"all\" means every GPU only in NVIDIA_VISIBLE_DEVICES)"
                                         : "is not a device index");
        break;
      }
      // A negative index is the documented way to end the list ("-1" hides every GPU).
      if (*index < 0) break;
      if (static_cast<unsigned long long>(*index) >= order.size()) {
        stop(text::cat("is past the last of the ", order.size(), " GPUs this process can see"));
        break;
      }
      pick = {order[static_cast<std::size_t>(*index)], std::nullopt};
    }
    const bool repeated = std::any_of(picks.begin(), picks.end(), [&](const CudaPick& p) {
      return p.device == pick.device && p.partition == pick.partition;
    });
    if (repeated) {
      warn(text::cat("CUDA_VISIBLE_DEVICES names ", pick.device->id, " twice: CUDA then exposes no GPU at all"));
      return std::vector<CudaPick>{};
    }
    picks.push_back(pick);
  }
  return picks;
}

void resolve_cuda(std::vector<DeviceProfile*> gpus, const VisibilityInputs& inputs, std::vector<Warning>& warnings) {
  for (DeviceProfile* d : gpus) {
    d->visible = false;
    d->runtime_index.reset();
    for (auto& p : d->partitions) {
      p.visible = false;
      p.runtime_index.reset();
    }
  }
  CudaSelection sel = container_gpus(gpus, inputs, warnings);
  const std::vector<DeviceProfile*> order = cuda_order(sel.container, inputs, warnings);
  const auto cvd = variable(inputs, "CUDA_VISIBLE_DEVICES");
  std::vector<CudaPick> picks;
  if (cvd) {
    if (const auto list = cuda_visible_list(order, sel.mig_limits, *cvd, warnings)) picks = *list;
  } else {
    for (DeviceProfile* d : order) picks.push_back({d, std::nullopt});
  }

  // CUDA 11 and 12 enumerate one MIG device per process, at the place of its
  // GPU; a MIG-enabled GPU is never a CUDA device itself.
  std::uint32_t next = 0;
  bool mig_taken = false;
  for (const CudaPick& pick : picks) {
    DeviceProfile& d = *pick.device;
    if (!mig_enabled(d)) {
      d.visible = true;
      d.runtime_index = next++;
      continue;
    }
    std::optional<std::size_t> part = pick.partition;
    if (!part) {
      // Selected as a whole GPU: CUDA uses its first MIG device (of those the container has).
      const auto limit = sel.mig_limits.find(&d);
      for (std::size_t i = 0; i < d.partitions.size(); ++i) {
        const bool allowed = limit == sel.mig_limits.end() || limit->second.contains(i);
        if (allowed && (!part || d.partitions[i].index < d.partitions[*part].index)) part = i;
      }
    }
    if (!part) {
      warnings.push_back(warning_for(Backend::cuda, WarningKind::unsupported,
                                     text::cat(d.id, " is in MIG mode without MIG devices: CUDA cannot use it")));
      continue;
    }
    DevicePartition& p = d.partitions[*part];
    if (mig_taken) {
      const std::string what = pick.partition && !p.id.empty() ? p.id : text::cat(d.id, " (in MIG mode)");
      warnings.push_back(warning_for(Backend::cuda, WarningKind::unsupported,
                                     text::cat("CUDA enumerates one MIG device per process: ", what, " is not visible")));
      continue;
    }
    mig_taken = true;
    d.visible = true;  // usable through the partition, which carries the index
    p.visible = true;
    p.runtime_index = next++;
  }
}

// ============================================================================
// ROCm

// A ROCr GPU agent: a KFD compute node. A partitioned GPU (CPX, ...) has one
// per partition, all sharing the board's unique id.
struct Agent {
  DeviceProfile* device = nullptr;
  std::optional<std::size_t> partition;

  const std::optional<std::string>& uuid() const {
    return partition && device->partitions[*partition].uuid ? device->partitions[*partition].uuid : device->uuid;
  }
  std::string id() const {
    return partition && !device->partitions[*partition].id.empty() ? device->partitions[*partition].id : device->id;
  }
};

// The 16 hex digits of a "GPU-<hex>" UUID, in the given case; empty when the
// device has none (ROCr then reports "GPU-XX", which no token can select).
std::string agent_uuid(const Agent& a, bool upper_case) {
  const auto& uuid = a.uuid();
  if (!uuid || !starts_with_ci(*uuid, "GPU-") || uuid->size() <= 4) return {};
  const std::string_view hex = std::string_view(*uuid).substr(4);
  return "GPU-" + (upper_case ? upper(hex) : text::lower(hex));
}

// strtol(token, &end, 0) consuming the whole token: decimal, 0x hex or 0 octal;
// "" is 0 (strtol reads nothing and stops at the terminator).
std::optional<long long> strtol_whole(const std::string& token) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(token.c_str(), &end, 0);
  if (*end != '\0') return std::nullopt;
  if (errno == ERANGE) return LLONG_MAX;
  return v;
}

// ROCR_VISIBLE_DEVICES, as ROCr's device filter reads it: tokens are upper-cased
// and trimmed; only as many tokens as there are GPUs are read; a UUID token is
// a unique prefix of "GPU-<16 hex>"; an index is read by strtol base 0; an
// invalid, out-of-range or repeated token ends the list; the list order is
// the enumeration order.
std::vector<Agent> rocr_filter(const std::vector<Agent>& agents, std::string_view value, std::vector<Warning>& warnings) {
  std::vector<Agent> out;
  if (value.empty()) return out;
  // std::getline splitting: a trailing empty field is not a token.
  std::vector<std::string> tokens;
  for (std::string_view t : comma_list(value)) tokens.push_back(upper(text::trim(t)));
  if (!tokens.empty() && value.back() == ',') tokens.pop_back();
  const auto stop = [&](std::size_t n, const std::string& token, std::string_view why) {
    warnings.push_back(warning_for(Backend::rocm, WarningKind::invalid_value,
                                   text::cat("ROCR_VISIBLE_DEVICES entry ", n + 1, " (", quoted_excerpt(token), ") ", why,
                                             ": ROCr ignores it and every entry after it")));
  };
  std::set<std::size_t> seen;
  const std::size_t count = std::min(agents.size(), tokens.size());
  for (std::size_t n = 0; n < count; ++n) {
    const std::string& token = tokens[n];
    long long index = -1;
    if (!token.empty() && token.front() == 'G') {
      int matches = 0;
      if (token.size() >= 5 && token.size() <= 20)
        for (std::size_t i = 0; i < agents.size(); ++i) {
          const std::string uuid = agent_uuid(agents[i], true);
          if (!uuid.empty() && uuid.starts_with(token)) {
            ++matches;
            index = static_cast<long long>(i);
          }
        }
      if (matches != 1) {
        stop(n, token, matches == 0 ? "names no GPU" : "matches more than one GPU (partitions share their board's UUID)");
        break;
      }
    } else {
      const auto v = strtol_whole(token);
      if (!v) {
        stop(n, token, "is not a device index");
        break;
      }
      index = *v;
      if (index < 0) break;  // "-1": the deliberate end of the list
    }
    if (index >= static_cast<long long>(agents.size())) {
      stop(n, token, text::cat("is past the last of the ", agents.size(), " GPUs"));
      break;
    }
    if (!seen.insert(static_cast<std::size_t>(index)).second) {
      stop(n, token, "repeats a GPU");
      break;
    }
    out.push_back(agents[static_cast<std::size_t>(index)]);
  }
  return out;
}

// HIP (ROCclr): HIP_VISIBLE_DEVICES, or CUDA_VISIBLE_DEVICES when that is
// empty, over the agents ROCr exposes. A token holding "GPU-" is replaced by
// the index of the first agent whose UUID contains it; a token must then be
// exactly a decimal index in range; the first bad one ends the list; a
// repeated index is skipped. An empty value selects nothing, i.e. all.
std::vector<Agent> hip_filter(const std::vector<Agent>& agents, std::string_view name, std::string_view ordinals,
                              std::vector<Warning>& warnings) {
  std::vector<Agent> out;
  std::set<std::size_t> seen;
  std::size_t pos = 0;
  std::size_t n = 0;
  do {
    auto end = ordinals.find(',', pos);
    if (end == std::string_view::npos) end = ordinals.size();
    std::string token(ordinals.substr(pos, end - pos));
    const std::string original = token;
    if (token.find("GPU-") != std::string::npos) {
      for (std::size_t i = 0; i < agents.size(); ++i) {
        const std::string uuid = agent_uuid(agents[i], false);
        if (!uuid.empty() && uuid.find(token) != std::string::npos) {
          token = std::to_string(i);
          break;
        }
      }
    }
    // ROCclr uses atoi; strtoll reads the same digits without atoi's overflow.
    const long long index = std::strtoll(token.c_str(), nullptr, 10);
    const bool valid = index >= 0 && static_cast<unsigned long long>(index) < agents.size() && token == std::to_string(index);
    if (!valid) {
      if (!negative_number(token))
        warnings.push_back(warning_for(
            Backend::rocm, WarningKind::invalid_value,
            text::cat(name, " entry ", n + 1, " (", quoted_excerpt(original), ") ",
                      original.find("GPU-") != std::string::npos ? "names no GPU" : "is not a device index in range",
                      ": HIP ignores it and every entry after it")));
      break;
    }
    if (seen.insert(static_cast<std::size_t>(index)).second) out.push_back(agents[static_cast<std::size_t>(index)]);
    pos = end + 1;
    ++n;
  } while (pos < ordinals.size());
  return out;
}

void resolve_rocm(std::vector<DeviceProfile*> gpus, const VisibilityInputs& inputs, std::vector<Warning>& warnings) {
  std::sort(gpus.begin(), gpus.end(), [](const DeviceProfile* a, const DeviceProfile* b) { return a->index < b->index; });
  std::vector<Agent> agents;
  for (DeviceProfile* d : gpus) {
    d->visible = false;
    d->runtime_index.reset();
    std::vector<std::size_t> parts(d->partitions.size());
    for (std::size_t i = 0; i < parts.size(); ++i) {
      parts[i] = i;
      d->partitions[i].visible = false;
      d->partitions[i].runtime_index.reset();
    }
    std::sort(parts.begin(), parts.end(),
              [&](std::size_t a, std::size_t b) { return d->partitions[a].index < d->partitions[b].index; });
    if (parts.empty()) agents.push_back({d, std::nullopt});
    for (std::size_t i : parts) agents.push_back({d, i});
  }

  if (const auto rvd = variable(inputs, "ROCR_VISIBLE_DEVICES")) agents = rocr_filter(agents, *rvd, warnings);
  const auto hip = variable(inputs, "HIP_VISIBLE_DEVICES");
  const auto cuda = variable(inputs, "CUDA_VISIBLE_DEVICES");
  if (hip && !hip->empty()) agents = hip_filter(agents, "HIP_VISIBLE_DEVICES", *hip, warnings);
  else if (cuda && !cuda->empty()) agents = hip_filter(agents, "CUDA_VISIBLE_DEVICES", *cuda, warnings);

  std::uint32_t next = 0;
  for (const Agent& a : agents) {
    a.device->visible = true;
    if (a.partition) {
      a.device->partitions[*a.partition].visible = true;
      a.device->partitions[*a.partition].runtime_index = next++;
    } else {
      a.device->runtime_index = next++;
    }
  }
}

}  // namespace

VisibilityInputs visibility_inputs(const System& system, const std::optional<Environment>& environment) {
  VisibilityInputs inputs;
  for (std::string_view name : device_selection_variables())
    if (auto value = system.env(name)) inputs.env.emplace(std::string(name), std::move(*value));
  if (environment) {
    inputs.in_container = environment->container.has_value() || environment->kubernetes;
  } else {
    const ContainerFacts facts = detect_container(system);
    inputs.in_container = facts.runtime.has_value() || facts.kubernetes;
  }
  // The device plugin's volume-mounts strategy: the variable names a folder
  // whose entries are the device indices or UUIDs.
  const auto nvd = inputs.env.find("NVIDIA_VISIBLE_DEVICES");
  if (nvd != inputs.env.end() && text::trim(nvd->second).starts_with('/')) {
    std::string list;
    for (const std::string& name : list_names(system, text::trim(nvd->second))) list += text::cat(list.empty() ? "" : ",", name);
    nvd->second = list.empty() ? "none" : list;
  }
  return inputs;
}

void resolve_visibility(std::vector<DeviceProfile>& devices, const VisibilityInputs& inputs,
                        std::vector<Warning>& warnings) {
  std::vector<DeviceProfile*> cuda;
  std::vector<DeviceProfile*> rocm;
  for (DeviceProfile& d : devices) {
    if (d.backend == Backend::cuda) cuda.push_back(&d);
    else if (d.backend == Backend::rocm) rocm.push_back(&d);
  }
  if (!cuda.empty()) resolve_cuda(std::move(cuda), inputs, warnings);
  if (!rocm.empty()) resolve_rocm(std::move(rocm), inputs, warnings);
}

}  // namespace hwaccel
