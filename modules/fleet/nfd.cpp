// Node labels for Kubernetes, written as a Node Feature Discovery features.d file.
module;
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.fleet;

namespace hwaccel {

namespace {

constexpr std::string_view nfd_prefix = "feature.node.kubernetes.io/";

bool alphanumeric(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

// A label name segment or value: [A-Za-z0-9] at both ends, [-_.A-Za-z0-9] inside, at most 63.
std::optional<std::string> segment_problem(std::string_view s, std::string_view what) {
  if (s.size() > 63) return text::cat(what, " \"", text::excerpt(s, 40), "\" is longer than 63 characters");
  if (s.empty()) return text::cat(what, " is empty");
  if (!alphanumeric(s.front()) || !alphanumeric(s.back()))
    return text::cat(what, " \"", text::excerpt(s), "\" must begin and end with a letter or digit");
  for (char c : s)
    if (!alphanumeric(c) && c != '-' && c != '_' && c != '.')
      return text::cat(what, " \"", text::excerpt(s), "\" has a character outside [A-Za-z0-9._-]");
  return std::nullopt;
}

// Any text as a label value (or a name part): other characters become '-',
// runs of them one, ends trimmed to alphanumerics, at most `max` long.
std::string label_text(std::string_view s, std::size_t max = 63) {
  std::string out;
  for (char c : s) {
    const char k = alphanumeric(c) || c == '.' || c == '_' ? c : '-';
    if (k == '-' && (out.empty() || out.back() == '-')) continue;
    out.push_back(k);
  }
  if (out.size() > max) out.resize(max);
  while (!out.empty() && !alphanumeric(out.back())) out.pop_back();
  std::size_t start = 0;
  while (start < out.size() && !alphanumeric(out[start])) ++start;
  return out.substr(start);
}

std::string lower_label_text(std::string_view s, std::size_t max = 63) { return text::lower(label_text(s, max)); }

class Labels {
 public:
  void add(std::string name, std::string value) {
    labels_.insert_or_assign(std::move(name), std::move(value));
  }
  void add(std::string name, std::uint64_t value) { add(std::move(name), text::cat(value)); }
  void hwaccel(std::string_view name, std::string value) { add(text::cat(nfd_prefix, "hwaccel.", name), std::move(value)); }
  void hwaccel(std::string_view name, std::uint64_t value) { hwaccel(name, text::cat(value)); }

  std::vector<NodeLabel> take() && {
    std::vector<NodeLabel> out;
    out.reserve(labels_.size());
    for (auto& [name, value] : labels_) {
      NodeLabel label{name, std::move(value)};
      // A value the rules refuse is left out rather than written for the
      // kubelet to reject the whole file over.
      if (!label_problem(label)) out.push_back(std::move(label));
    }
    return out;
  }

 private:
  std::map<std::string, std::string> labels_;
};


// "9.0" -> {9, 0}; "gfx942" and friends are not ordered.
std::optional<std::pair<std::uint32_t, std::uint32_t>> capability_number(std::string_view s) {
  const auto dot = s.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const auto major = text::parse_u64(s.substr(0, dot));
  const auto minor = text::parse_u64(s.substr(dot + 1));
  if (!major || !minor || *major > 1000 || *minor > 1000) return std::nullopt;
  return std::pair{static_cast<std::uint32_t>(*major), static_cast<std::uint32_t>(*minor)};
}

template <class Key>
void counted(Labels& labels, std::string_view prefix, const std::map<Key, std::uint64_t>& counts) {
  for (const auto& [key, n] : counts) labels.add(text::cat(prefix, key), n);
}

// NVIDIA GPU feature discovery's names (github.com/NVIDIA/gpu-feature-discovery,
// docs/fleet.md): product and memory of the first GPU, as it labels them.
void nvidia_labels(Labels& labels, const std::vector<const DeviceProfile*>& gpus) {
  if (gpus.empty()) return;
  const DeviceProfile& first = *gpus.front();
  labels.add("nvidia.com/gpu.count", gpus.size());
  std::string product = first.name;
  std::replace(product.begin(), product.end(), ' ', '-');
  labels.add("nvidia.com/gpu.product", label_text(product));
  if (first.memory_bytes) labels.add("nvidia.com/gpu.memory", *first.memory_bytes >> 20);
  if (first.architecture) labels.add("nvidia.com/gpu.family", lower_label_text(*first.architecture));
  if (first.compute_capability)
    if (const auto cc = capability_number(*first.compute_capability)) {
      labels.add("nvidia.com/gpu.compute.major", cc->first);
      labels.add("nvidia.com/gpu.compute.minor", cc->second);
    }
  if (first.driver_version) {
    const auto parts = text::split_trimmed(*first.driver_version, '.');
    if (parts.size() >= 2) {
      labels.add("nvidia.com/cuda.driver.major", label_text(parts[0]));
      labels.add("nvidia.com/cuda.driver.minor", label_text(parts[1]));
      labels.add("nvidia.com/cuda.driver.rev", parts.size() > 2 ? label_text(parts[2]) : std::string());
    }
  }
}

// AMD's node labeller (github.com/ROCm/k8s-device-plugin, cmd/k8s-node-labeller):
// counts per value under beta.amd.com/gpu.<property>.<value>, and the value
// itself under amd.com/gpu.<property> where every GPU agrees.
void amd_labels(Labels& labels, const std::vector<const DeviceProfile*>& gpus) {
  if (gpus.empty()) return;
  std::map<std::string, std::uint64_t> device_ids, vram, cu, simd;
  std::set<std::string> products;
  for (const DeviceProfile* d : gpus) {
    if (const auto it = d->properties.find("pci_id"); it != d->properties.end() && it->second.size() == 9)
      ++device_ids[it->second.substr(5)];
    // Rounded to whole GiB with a "G", as the labeller writes it.
    if (d->memory_bytes) ++vram[text::cat((*d->memory_bytes + text::bytes_per_gib / 2) / text::bytes_per_gib, "G")];
    if (d->compute_units) ++cu[text::cat(*d->compute_units)];
    if (const auto it = d->properties.find("simd_count"); it != d->properties.end()) ++simd[it->second];
    if (const auto it = d->properties.find("product_name"); it != d->properties.end()) products.insert(it->second);
  }
  counted(labels, "beta.amd.com/gpu.device-id.", device_ids);
  counted(labels, "beta.amd.com/gpu.vram.", vram);
  counted(labels, "beta.amd.com/gpu.cu-count.", cu);
  counted(labels, "beta.amd.com/gpu.simd-count.", simd);
  const auto single = [&](std::string_view name, const std::map<std::string, std::uint64_t>& values) {
    if (values.size() == 1 && values.begin()->second == gpus.size()) labels.add(text::cat("amd.com/gpu.", name), values.begin()->first);
  };
  single("device-id", device_ids);
  single("vram", vram);
  single("cu-count", cu);
  single("simd-count", simd);
  if (products.size() == 1 && gpus.size() > 0) labels.add("amd.com/gpu.product-name", label_text(*products.begin()));
}

// Intel's GPU labels (github.com/intel/intel-device-plugins-for-kubernetes,
// its NFD rules): gpu.intel.com/device-id.<class>-<device>.present / .count,
// which need the PCI class that only the machine knows.
void intel_labels(Labels& labels, const std::vector<const DeviceProfile*>& gpus, const System* system) {
  if (gpus.empty() || !system) return;
  std::map<std::string, std::uint64_t> ids;
  for (const DeviceProfile* d : gpus) {
    if (!d->pci_bus_id) continue;
    const auto base = text::cat("/sys/bus/pci/devices/", *d->pci_bus_id);
    const auto pci_class = read_text(*system, text::cat(base, "/class"));
    const auto device = read_text(*system, text::cat(base, "/device"));
    if (!pci_class || !device || pci_class->size() != 8 || device->size() != 6) continue;  // "0x030000", "0xe20b"
    ++ids[text::lower(text::cat(pci_class->substr(2, 4), "-", device->substr(2)))];
  }
  for (const auto& [id, n] : ids) {
    labels.add(text::cat("gpu.intel.com/device-id.", id, ".present"), std::string("true"));
    labels.add(text::cat("gpu.intel.com/device-id.", id, ".count"), n);
  }
}

}  // namespace

std::optional<std::string> label_problem(const NodeLabel& label) {
  std::string_view name = label.name;
  if (const auto slash = name.find('/'); slash != std::string_view::npos) {
    const std::string_view prefix = name.substr(0, slash);
    name = name.substr(slash + 1);
    if (prefix.empty() || prefix.size() > 253)
      return text::cat("label prefix \"", text::excerpt(prefix, 40), "\" must be 1 to 253 characters");
    // Each dot-separated part, untrimmed: " nvidia.com" is no subdomain.
    for (std::size_t start = 0, dot = 0; dot != std::string_view::npos; start = dot + 1) {
      dot = prefix.find('.', start);
      const std::string_view part = prefix.substr(start, dot == std::string_view::npos ? dot : dot - start);
      const bool lower_alnum_ends = !part.empty() && part.size() <= 63 &&
                                    ((part.front() >= 'a' && part.front() <= 'z') || (part.front() >= '0' && part.front() <= '9')) &&
                                    ((part.back() >= 'a' && part.back() <= 'z') || (part.back() >= '0' && part.back() <= '9'));
      const bool chars = std::all_of(part.begin(), part.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
      });
      if (!lower_alnum_ends || !chars)
        return text::cat("label prefix \"", text::excerpt(prefix, 60), "\" is not a DNS subdomain (lower-case letters, digits, '-', '.')");
    }
    if (prefix.find("..") != std::string_view::npos || prefix.front() == '.' || prefix.back() == '.')
      return text::cat("label prefix \"", text::excerpt(prefix, 60), "\" is not a DNS subdomain");
  }
  if (auto problem = segment_problem(name, "label name")) return problem;
  if (!label.value.empty())
    if (auto problem = segment_problem(label.value, text::cat("value of ", label.name))) return problem;
  return std::nullopt;
}

std::vector<NodeLabel> nfd_labels(const AcceleratorRegistry& registry, const NfdOptions& options) {
  Labels labels;
  std::vector<const DeviceProfile*> accelerators;
  std::uint64_t unavailable = 0;
  for (const auto& d : registry.devices()) {
    if (d.backend == Backend::cpu) continue;
    if (!d.available) ++unavailable;
    else accelerators.push_back(&d);
  }
  std::map<std::string, std::uint64_t> by_backend, by_family, by_spec;
  std::map<Backend, std::set<std::string>> capabilities, drivers;
  std::set<std::int32_t> numa;
  std::uint64_t memory = 0, partitions = 0;
  std::optional<std::uint64_t> smallest;
  bool mig = false;
  for (const DeviceProfile* d : accelerators) {
    ++by_backend[std::string(to_string(d->backend))];
    ++by_family[std::string(to_string(d->family))];
    if (d->spec_id) ++by_spec[lower_label_text(*d->spec_id, 63 - 13)];
    if (d->memory_bytes) {
      memory += *d->memory_bytes;
      smallest = std::min(smallest.value_or(*d->memory_bytes), *d->memory_bytes);
    }
    if (d->compute_capability) capabilities[d->backend].insert(*d->compute_capability);
    if (d->driver_version) drivers[d->backend].insert(*d->driver_version);
    if (d->numa_node && *d->numa_node >= 0) numa.insert(*d->numa_node);
    partitions += d->partitions.size();
    if (const auto it = d->properties.find("mig_mode"); it != d->properties.end() && it->second == "enabled") mig = true;
  }
  labels.hwaccel("accelerators", accelerators.size());
  if (unavailable > 0) labels.hwaccel("accelerators-unavailable", unavailable);
  if (!accelerators.empty()) {
    labels.hwaccel("accelerator-memory-gib", memory / text::bytes_per_gib);
    if (smallest) labels.hwaccel("device-memory-gib.min", *smallest / text::bytes_per_gib);
  }
  for (const auto& [backend, n] : by_backend) labels.hwaccel(text::cat("backend.", backend), n);
  for (const auto& [family, n] : by_family) labels.hwaccel(text::cat("family.", family), n);
  for (const auto& [spec, n] : by_spec) labels.hwaccel(text::cat("spec.", spec), n);
  for (const auto& [backend, values] : capabilities) {
    const std::string name = text::cat(to_string(backend), ".compute-capability");
    if (values.size() == 1) {
      labels.hwaccel(name, label_text(*values.begin()));
      continue;
    }
    // Mixed devices: the lowest, which every device of the node reaches.
    std::optional<std::pair<std::uint32_t, std::uint32_t>> lowest;
    for (const auto& v : values)
      if (const auto n = capability_number(v)) lowest = lowest ? std::min(*lowest, *n) : *n;
    if (lowest) labels.hwaccel(text::cat(name, ".min"), text::cat(lowest->first, ".", lowest->second));
  }
  for (const auto& [backend, values] : drivers)
    if (values.size() == 1) labels.hwaccel(text::cat(to_string(backend), ".driver"), label_text(*values.begin()));
  // The largest domain of each kind: how many devices one job can span over it.
  std::map<std::string, std::uint64_t> domains;
  for (const auto& ic : registry.interconnects()) {
    auto& largest = domains[lower_label_text(ic.kind, 40)];
    largest = std::max<std::uint64_t>(largest, ic.device_ids.size());
  }
  for (const auto& [kind, size] : domains) labels.hwaccel(text::cat("interconnect.", kind), size);
  if (partitions > 0) labels.hwaccel("partitions", partitions);
  if (mig) labels.hwaccel("mig", std::string("enabled"));
  if (const auto& cpu = registry.system().cpu) {
    if (!cpu->numa_nodes.empty()) labels.hwaccel("numa-nodes", cpu->numa_nodes.size());
    if (cpu->sockets) labels.hwaccel("cpu-sockets", *cpu->sockets);
  }
  if (!numa.empty()) labels.hwaccel("accelerator-numa-nodes", numa.size());

  if (options.vendor_labels) {
    std::vector<const DeviceProfile*> nvidia, amd, intel;
    for (const DeviceProfile* d : accelerators) {
      if (d->backend == Backend::cuda) nvidia.push_back(d);
      else if (d->backend == Backend::rocm && d->family == Family::gpu) amd.push_back(d);
      else if (d->backend == Backend::intel_oneapi && d->family == Family::gpu) intel.push_back(d);
    }
    nvidia_labels(labels, nvidia);
    amd_labels(labels, amd);
    intel_labels(labels, intel, options.system);
  }
  return std::move(labels).take();
}

std::string nfd_feature_file(std::span<const NodeLabel> labels,
                             std::optional<std::chrono::system_clock::time_point> expiry) {
  std::string out = "# Node labels from hwaccel (docs/fleet.md); Node Feature Discovery reads this features.d file.\n";
  if (expiry) out += text::cat("# +expiry-time=", format_utc_time(*expiry), "\n");
  for (const auto& label : labels) out += text::cat(label.name, "=", label.value, "\n");
  return out;
}

}  // namespace hwaccel
