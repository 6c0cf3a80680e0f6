// The planner's view of the devices: usable memory, bandwidth and peak compute
// by quantization level, and the high-bandwidth domains they form.
module;
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>
module hwaccel.plan;
import :internals;

namespace hwaccel::planner_detail {

struct UnionFind {
  std::vector<std::uint32_t> parent;
  explicit UnionFind(std::size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0u); }
  std::uint32_t find(std::uint32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void join(std::uint32_t a, std::uint32_t b) {
    a = find(a);
    b = find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
};

bool high_bandwidth_interconnect(std::string_view kind) {
  for (std::string_view k : {"nvswitch", "nvlink", "nvlink_bridge", "xgmi", "xgmi_hive", "ici", "neuronlink", "roce"})
    if (kind == k) return true;
  return false;
}

bool high_bandwidth_link(LinkKind kind) {
  return kind == LinkKind::nvlink || kind == LinkKind::xgmi || kind == LinkKind::ici || kind == LinkKind::neuronlink;
}

ComputeType compute_type_on(QuantizationLevel level, const DeviceTraits& traits) {
  const QuantizationInfo& q = info(level);
  if (q.compute == ComputeType::fp8 || q.compute == ComputeType::int8) {
    if (quantization_support(level, traits).level == SupportLevel::native) return q.compute;
    return ComputeType::bf16;
  }
  return q.compute;
}

std::optional<double> peak_for(const DeviceSpec* spec, ComputeType type) {
  if (!spec) return std::nullopt;
  if (auto p = spec->peak_tflops(type)) return p;
  // 16-bit work runs at whichever 16-bit rate the datasheet gives.
  if (type == ComputeType::fp16) return spec->peak_tflops(ComputeType::bf16);
  if (type == ComputeType::bf16) return spec->peak_tflops(ComputeType::fp16);
  return std::nullopt;
}

// What gather() works out once per kind of device: fleets are made of many
// identical devices, and spec lookups and support rules are not free.
struct DeviceKind {
  const DeviceProfile* sample = nullptr;
  const DeviceSpec* spec = nullptr;
  // No spec and no bandwidth of its own: figures from its architecture's spec rows.
  std::optional<DerivedSpec> derived;
  std::string derived_note;
  QuantizationSupport support;
  ComputeType compute = ComputeType::bf16;
};

// Devices the support rules cannot tell apart (properties matter for CPUs only: their ISA).
bool same_kind(const DeviceProfile& a, const DeviceProfile& b) {
  return a.backend == b.backend && a.family == b.family && a.memory_bytes == b.memory_bytes &&
         a.spec_id == b.spec_id && a.compute_capability == b.compute_capability && a.name == b.name &&
         a.architecture == b.architecture && (a.family != Family::cpu || a.properties == b.properties);
}

Fleet gather(const AcceleratorRegistry& registry, QuantizationLevel level, double reserve, const DeviceSpecSet* extra) {
  Fleet f;
  const auto devices = registry.devices();
  // Registry ids are "<backend>:<index>": a table by backend and index finds
  // them without hashing; other ids fall back to a map built on demand.
  std::array<std::vector<std::uint32_t>, backend_count> by_index;
  f.accelerators.reserve(devices.size());
  std::vector<DeviceKind> kinds;
  // NPUs join a plan only on machines without other accelerators: next to a
  // GPU they add little, and on Apple silicon they share its unified memory.
  bool other_accelerators = false;
  for (const auto& d : devices)
    other_accelerators |= d.available && d.visible && d.family != Family::cpu && d.family != Family::npu;
  for (const auto& d : devices) {
    if (!d.available || !d.visible) continue;
    if (d.family == Family::npu && other_accelerators) {
      f.skipped.add(d, "NPUs are not combined with other accelerators in one plan");
      continue;
    }
    const DeviceKind* kind = nullptr;
    for (const auto& k : kinds)
      if (same_kind(*k.sample, d)) kind = &k;
    DeviceKind uncached;
    if (!kind) {
      DeviceKind k;
      k.sample = &d;
      // The built-in table first, then a user file's entries (hypothetical
      // devices of a user entry carry its id).
      if (extra) {
        k.spec = d.spec_id ? find_spec(*d.spec_id, *extra) : nullptr;
        if (!k.spec) k.spec = match_spec(d, *extra);
      } else {
        k.spec = d.spec_id ? find_spec(*d.spec_id) : nullptr;
        if (!k.spec) k.spec = match_spec(d);
      }
      if (!k.spec && d.family != Family::cpu && !(d.memory_bandwidth_gbps && *d.memory_bandwidth_gbps > 0)) {
        k.derived = derive_spec(d);
        if (k.derived) k.derived_note = text::cat(d.name.empty() ? std::string("device") : d.name, ": ", k.derived->method());
      }
      DeviceTraits traits = traits_of(d);
      if (traits.compute_capability.empty() && k.spec) traits.compute_capability = k.spec->compute_capability;
      k.support = quantization_support(level, traits);
      k.compute = compute_type_on(level, traits);
      // A registry of thousands of different devices must not make this quadratic.
      if (kinds.size() < 64) {
        kinds.push_back(std::move(k));
        kind = &kinds.back();
      } else {
        uncached = std::move(k);
        kind = &uncached;
      }
    }
    const DeviceSpec* spec = kind->spec;
    if (d.family == Family::cpu) {
      if (f.host) continue;
      Device h;
      h.profile = &d;
      const std::optional<std::uint64_t> mem = d.memory_free_bytes ? d.memory_free_bytes : d.memory_bytes;
      if (!mem) continue;
      h.memory = *mem;
      h.capacity = static_cast<std::uint64_t>(static_cast<double>(*mem) * (1.0 - reserve));
      if (d.memory_bandwidth_gbps) {
        h.bandwidth_gbps = d.memory_bandwidth_gbps;
        h.bandwidth_reported = true;
      }
      f.host = h;
      continue;
    }
    const QuantizationSupport& support = kind->support;
    if (!support.usable()) {
      f.skipped.add(d, text::cat(to_string(level), " is ", to_string(support.level), " there (", support.reason, ")"));
      continue;
    }
    Device x;
    x.profile = &d;
    x.spec = spec;
    if (d.memory_bytes) x.memory = *d.memory_bytes;
    else if (spec) x.memory = spec->memory_bytes;
    if (x.memory == 0) {
      f.skipped.add(d, "memory size unknown and no published spec matches");
      continue;
    }
    double usable = static_cast<double>(x.memory) * (1.0 - reserve);
    if (d.backend == Backend::apple && d.memory_kind == MemoryKind::unified) usable *= apple_gpu_share;
    x.capacity = static_cast<std::uint64_t>(usable);
    if (d.memory_bandwidth_gbps && *d.memory_bandwidth_gbps > 0) {
      x.bandwidth_gbps = d.memory_bandwidth_gbps;
      x.bandwidth_reported = true;
    } else if (spec) {
      x.bandwidth_gbps = spec->memory_bandwidth_gbps;
    } else if (kind->derived) {
      x.bandwidth_gbps = kind->derived->memory_bandwidth_gbps;
      x.bandwidth_derived = true;
    }
    x.peak_tflops = peak_for(spec, kind->compute);
    if (spec) x.vector_tflops = spec->fp32_tflops;
    else if (kind->derived) x.vector_tflops = kind->derived->fp32_tflops;
    if (!spec && kind->derived) {
      x.peak_tflops = kind->derived->peak_tflops(kind->compute);
      f.derived[kind->derived_note].push_back(d.id);
    }
    f.unified_memory |= d.memory_kind == MemoryKind::unified;
    if (d.index < (1u << 20)) {
      auto& table = by_index[static_cast<std::size_t>(d.backend)];
      if (table.size() <= d.index) table.resize(d.index + 1, UINT32_MAX);
      table[d.index] = static_cast<std::uint32_t>(f.accelerators.size());
    }
    f.accelerators.push_back(x);
  }
  f.indices.resize(f.accelerators.size());
  std::iota(f.indices.begin(), f.indices.end(), 0u);
  // High-bandwidth domains from the registry's links and interconnects.
  UnionFind uf(f.accelerators.size());
  std::vector<std::pair<std::uint32_t, double>> bandwidths;  // device, link bandwidth
  std::optional<std::unordered_map<std::string_view, std::uint32_t>> by_id;
  std::string_view last_prefix;  // ids come in runs of one backend: parse its name once
  std::optional<Backend> last_backend;
  const auto lookup = [&](std::string_view id) -> std::optional<std::uint32_t> {
    if (const auto colon = id.find(':'); colon != std::string_view::npos) {
      if (id.substr(0, colon) != last_prefix) {
        last_prefix = id.substr(0, colon);
        const auto parsed = parse_backend(last_prefix);
        last_backend = parsed ? std::optional<Backend>(*parsed) : std::nullopt;
      }
      const auto backend = last_backend;
      const auto number = text::parse_u64(id.substr(colon + 1));
      if (backend && number) {
        const auto& table = by_index[static_cast<std::size_t>(*backend)];
        if (*number < table.size() && table[*number] != UINT32_MAX &&
            f.accelerators[table[*number]].profile->id == id)
          return table[*number];
      }
    }
    if (!by_id) {
      by_id.emplace();
      for (std::uint32_t i = 0; i < f.accelerators.size(); ++i) by_id->emplace(f.accelerators[i].profile->id, i);
    }
    const auto it = by_id->find(id);
    return it == by_id->end() ? std::nullopt : std::optional<std::uint32_t>(it->second);
  };
  for (const auto& l : registry.links()) {
    if (!high_bandwidth_link(l.kind)) continue;
    const auto a = lookup(l.a), b = lookup(l.b);
    if (!a || !b) continue;
    uf.join(*a, *b);
    if (l.bandwidth_gbps) bandwidths.emplace_back(*a, *l.bandwidth_gbps);
  }
  for (const auto& ic : registry.interconnects()) {
    if (!high_bandwidth_interconnect(ic.kind)) continue;
    std::optional<std::uint32_t> first;
    for (const auto& id : ic.device_ids) {
      const auto i = lookup(id);
      if (!i) continue;
      if (first) uf.join(*first, *i);
      else first = i;
      if (ic.bandwidth_gbps) bandwidths.emplace_back(*i, *ic.bandwidth_gbps);
    }
  }
  std::vector<std::uint32_t> domain_of_root(f.accelerators.size(), UINT32_MAX);
  std::vector<std::uint32_t> domain_sizes;
  for (std::uint32_t i = 0; i < f.accelerators.size(); ++i) {
    auto& domain = domain_of_root[uf.find(i)];
    if (domain == UINT32_MAX) {
      domain = static_cast<std::uint32_t>(domain_sizes.size());
      domain_sizes.push_back(0);
    }
    f.accelerators[i].domain = domain;
    ++domain_sizes[domain];
  }
  f.domains.resize(domain_sizes.size());
  for (std::size_t d = 0; d < domain_sizes.size(); ++d) f.domains[d].members.reserve(domain_sizes[d]);
  for (std::uint32_t i = 0; i < f.accelerators.size(); ++i) f.domains[f.accelerators[i].domain].members.push_back(i);
  for (const auto& [device, bw] : bandwidths) {
    auto& link = f.domains[f.accelerators[device].domain].link_gbps;
    link = link ? std::min(*link, bw) : bw;
  }
  for (auto& dom : f.domains) {
    if (dom.link_gbps || dom.members.size() < 2) continue;
    // No bandwidth in the registry: the products' published fabric, if all have one.
    std::optional<double> bw;
    for (auto m : dom.members) {
      const DeviceSpec* s = f.accelerators[m].spec;
      if (!s || !s->fabric || !s->fabric->bandwidth_gbps) {
        bw.reset();
        break;
      }
      bw = bw ? std::min(*bw, *s->fabric->bandwidth_gbps) : *s->fabric->bandwidth_gbps;
    }
    dom.link_gbps = bw;
  }
  return f;
}

Machines machines_of(const AcceleratorRegistry& registry) {
  Machines m;
  m.registries.push_back(&registry);
  return m;
}

Machines machines_of(const Cluster& cluster) {
  Machines m;
  m.registries.reserve(cluster.nodes.size());
  for (const auto& node : cluster.nodes) {
    m.registries.push_back(&node.registry);
    m.names.push_back(node.name);
  }
  if (cluster.nodes.size() > 1) m.fabric = cluster.effective_fabric();
  m.shared = &cluster.shared_domains;
  m.named_hosts = cluster.named_hosts;
  return m;
}

void join_pcie_domains(Fleet& f, const RuntimeProfile& runtime) {
  if (!runtime.tensor_parallel_over_pcie || f.accelerators.size() < 2) return;
  // Identical devices of one node: tensor parallelism runs at the pace of
  // the slowest rank, so mixed cards keep splitting layers.
  using Key = std::tuple<std::uint32_t, Backend, std::string_view, std::uint64_t>;  // node, backend, name, memory
  const auto key_of = [&](const Domain& d) {
    const Device& dev = f.accelerators[d.members.front()];
    return Key{dev.node, dev.profile->backend, dev.profile->name, dev.memory};
  };
  std::map<Key, std::uint32_t> singles;
  for (const auto& d : f.domains)
    if (d.members.size() == 1) ++singles[key_of(d)];
  if (std::none_of(singles.begin(), singles.end(), [](const auto& kv) { return kv.second > 1; })) return;
  // A GPU's link at idle often trains down to a slower speed: the maximum is what it runs at.
  const auto host_link = [&](std::uint32_t i) -> std::optional<double> {
    const Device& dev = f.accelerators[i];
    if (dev.profile->pcie)
      if (auto bw = dev.profile->pcie->max_bandwidth_gbps()) return bw;
    return dev.spec ? dev.spec->host_link_gbps() : std::nullopt;
  };
  std::vector<Domain> joined;
  joined.reserve(f.domains.size());
  std::vector<std::uint32_t> new_index(f.domains.size());
  std::map<Key, std::uint32_t> pcie_domain;
  for (std::size_t d = 0; d < f.domains.size(); ++d) {
    Domain& dom = f.domains[d];
    if (dom.members.size() != 1 || singles[key_of(dom)] < 2) {
      new_index[d] = static_cast<std::uint32_t>(joined.size());
      joined.push_back(std::move(dom));
      continue;
    }
    const auto [it, first] = pcie_domain.emplace(key_of(dom), static_cast<std::uint32_t>(joined.size()));
    if (first) joined.push_back(Domain{.members = {}, .link_gbps = std::nullopt, .pcie = true});
    Domain& into = joined[it->second];
    const std::uint32_t member = dom.members.front();
    into.members.push_back(member);
    if (const auto link = host_link(member)) into.link_gbps = into.link_gbps ? std::min(*into.link_gbps, *link) : *link;
    new_index[d] = it->second;
  }
  for (auto& dev : f.accelerators) dev.domain = new_index[dev.domain];
  f.domains = std::move(joined);
}

std::uint32_t node_of(const Fleet& f, const Stage& st) {
  return st.group ? f.accelerators[st.group->members.front()].node : 0;
}

// Several nodes: each node gathered alone, then laid end to end, node by
// node, so the layout search meets a node's domains together and a
// pipeline fills one node before the next. No host joins: offload to one
// node's memory does not serve stages on others.
Fleet gather(const Machines& machines, QuantizationLevel level, double reserve, const DeviceSpecSet* extra) {
  if (!machines.several()) {
    Fleet f = gather(*machines.registries.front(), level, reserve, extra);
    if (!machines.names.empty()) f.node_names = machines.names;
    if (f.node_names.size() == 1) f.node_names.clear();
    return f;
  }
  Fleet f;
  f.node_names = machines.names;
  f.fabric = machines.fabric;
  f.named_hosts = machines.named_hosts;
  std::vector<std::unordered_map<std::string_view, std::uint32_t>> index_of(machines.registries.size());
  for (std::uint32_t n = 0; n < machines.registries.size(); ++n) {
    Fleet one = gather(*machines.registries[n], level, reserve, extra);
    const auto device_offset = static_cast<std::uint32_t>(f.accelerators.size());
    const auto domain_offset = static_cast<std::uint32_t>(f.domains.size());
    for (auto& d : one.accelerators) {
      d.domain += domain_offset;
      d.node = n;
      index_of[n].emplace(d.profile->id, static_cast<std::uint32_t>(f.accelerators.size()));
      f.accelerators.push_back(d);
    }
    for (auto& dom : one.domains) {
      for (auto& m : dom.members) m += device_offset;
      f.domains.push_back(std::move(dom));
    }
    for (auto& [reason, ids] : one.skipped.by_reason) {
      auto& out = f.skipped.by_reason[reason];
      for (auto& id : ids) out.push_back(text::cat(machines.names[n], "/", id));
    }
    for (auto& [how, ids] : one.derived) {
      auto& out = f.derived[how];
      for (auto& id : ids) out.push_back(text::cat(machines.names[n], "/", id));
    }
    f.unified_memory |= one.unified_memory;
  }
  f.indices.resize(f.accelerators.size());
  std::iota(f.indices.begin(), f.indices.end(), 0u);
  if (!machines.shared || machines.shared->empty()) return f;
  // Domains that span hosts: merge the node domains their members are in.
  UnionFind uf(f.domains.size());
  std::vector<std::optional<double>> shared_bw(f.domains.size());
  for (const auto& shared : *machines.shared) {
    std::optional<std::uint32_t> first;
    for (const auto& m : shared.members) {
      if (m.node >= index_of.size()) continue;
      const auto it = index_of[m.node].find(m.device);
      if (it == index_of[m.node].end()) continue;
      const std::uint32_t dom = f.accelerators[it->second].domain;
      if (first) uf.join(*first, dom);
      else first = dom;
    }
    if (first && shared.bandwidth_gbps) shared_bw[*first] = shared.bandwidth_gbps;
  }
  std::vector<std::uint32_t> new_index(f.domains.size(), UINT32_MAX);
  std::vector<Domain> merged;
  for (std::uint32_t d = 0; d < f.domains.size(); ++d) {
    const std::uint32_t root = uf.find(d);
    if (new_index[root] == UINT32_MAX) {
      new_index[root] = static_cast<std::uint32_t>(merged.size());
      merged.emplace_back();
    }
    Domain& into = merged[new_index[root]];
    into.members.insert(into.members.end(), f.domains[d].members.begin(), f.domains[d].members.end());
    const std::optional<double> bw = f.domains[d].link_gbps ? f.domains[d].link_gbps : shared_bw[d];
    if (bw) into.link_gbps = into.link_gbps ? std::min(*into.link_gbps, *bw) : *bw;
  }
  for (std::uint32_t d = 0; d < f.domains.size(); ++d) {
    if (!shared_bw[d]) continue;
    auto& link = merged[new_index[uf.find(d)]].link_gbps;
    link = link ? std::min(*link, *shared_bw[d]) : *shared_bw[d];
  }
  for (auto& dev : f.accelerators) dev.domain = new_index[uf.find(dev.domain)];
  f.domains = std::move(merged);
  return f;
}

}  // namespace hwaccel::planner_detail

namespace hwaccel {

std::vector<std::vector<std::string>> high_bandwidth_domains(const AcceleratorRegistry& registry) {
  return high_bandwidth_domains(registry, DeviceSpecSet());
}

std::vector<std::vector<std::string>> high_bandwidth_domains(const AcceleratorRegistry& registry,
                                                             const DeviceSpecSet& extra) {
  // Every accelerator that is usable at all is usable at fp16.
  const planner_detail::Fleet f =
      planner_detail::gather(registry, QuantizationLevel::fp16, 0.0, extra.empty() ? nullptr : &extra);
  std::vector<std::vector<std::string>> out;
  out.reserve(f.domains.size());
  for (const auto& dom : f.domains) {
    auto& ids = out.emplace_back();
    for (auto m : dom.members) ids.push_back(f.accelerators[m].profile->id);
  }
  return out;
}

}  // namespace hwaccel
