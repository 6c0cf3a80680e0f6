// Fuzz targets for the parsers of sysfs, procfs and DMI values (KFD topology
// files, /proc/meminfo and cpuinfo, cgroup files, mountinfo, DMI strings,
// PCI link speeds, InfiniBand port values), the shared text primitives and
// the PCI-id tables, plus the System-based sysfs readers (PCI functions, the accel class, the KFD tree).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.hpp"

import hwaccel;
import hwaccel.detectors;

#include "machine_text.hpp"

namespace hwaccel::fuzz {

namespace {

// The input's first bytes as a little-endian integer (for the id tables).
std::uint64_t leading_u64(std::string_view input, std::size_t bytes) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < bytes && i < input.size(); ++i)
    v |= static_cast<std::uint64_t>(static_cast<unsigned char>(input[i])) << (8 * i);
  return v;
}

}  // namespace

// The Windows System's documents: what parses writes back to the same value,
// and the DXGI detector makes a device of every adapter without failing.
void dxgi_adapters(std::string_view, std::string_view input, Findings& findings) {
  const auto adapters = parse_dxgi_adapters(input);
  if (!adapters) return;
  const auto again = parse_dxgi_adapters(format_dxgi_adapters(*adapters));
  findings.check(again && *again == *adapters, "DXGI adapters: the written document reads back differently");
  std::uint32_t index = 0;
  for (const auto& a : *adapters) {
    const DeviceProfile d = parsers::dxgi_device(a, index++);
    findings.check(d.backend == Backend::dxgi && !d.name.empty(), "DXGI adapters: a device without a name");
    findings.check(!d.memory_bytes || *d.memory_bytes <= (std::uint64_t{1} << 51), "DXGI adapters: memory beyond the bound");
  }
}

void windows_system(std::string_view, std::string_view input, Findings& findings) {
  const auto facts = parse_windows_system(input);
  if (!facts) return;
  const auto again = parse_windows_system(format_windows_system(*facts));
  findings.check(again && *again == *facts, "Windows system: the written document reads back differently");
  findings.check(!facts->memory_bytes || !facts->memory_available_bytes || *facts->memory_available_bytes <= *facts->memory_bytes,
                 "Windows system: more memory available than there is");
}

void kfd_properties(std::string_view, std::string_view input, Findings& findings) {
  const auto node = parsers::parse_kfd_node_properties(input);
  for (const auto& key : node.invalid_keys) findings.check(!key.empty(), "KFD: an empty invalid key");
  if (node.gfx_target_version) {
    if (const auto name = parsers::gfx_target_name(*node.gfx_target_version)) {
      findings.check(name->starts_with("gfx") && name->size() >= 6, "KFD: malformed gfx target name");
      (void)parsers::gfx_architecture(*name);
    }
  }
  if (const auto address = parsers::kfd_pci_address(node.domain, node.location_id)) {
    const auto again = PciAddress::parse(address->to_string());
    findings.check(again && *again == *address, "KFD: PCI address does not read back");
  }
  const auto link = parsers::parse_kfd_link(input);
  if (link.weight) {
    if (const auto hops = parsers::xgmi_hops_from_weight(*link.weight)) findings.check(*hops < 1'000'000, "KFD: absurd hop count");
  }
  (void)parsers::parse_kfd_mem_bank(input);
  (void)parsers::gfx_architecture(input);
  (void)parsers::partitions_in_mode(input, static_cast<std::uint32_t>(leading_u64(input, 1) % 16));
}

void cpu_files(std::string_view, std::string_view input, Findings& findings) {
  const auto mem = parsers::parse_meminfo(input);
  if (mem.total_bytes) findings.check(input.find("MemTotal") != std::string_view::npos, "meminfo: total without MemTotal");
  const auto cpu = parsers::parse_cpuinfo(input);
  findings.check(std::is_sorted(cpu.isa_features.begin(), cpu.isa_features.end()) &&
                     std::adjacent_find(cpu.isa_features.begin(), cpu.isa_features.end()) == cpu.isa_features.end(),
                 "cpuinfo: ISA features not sorted and unique");
  (void)parsers::parse_cgroup_memory_limit(input);
  (void)parsers::arm_core_name(static_cast<std::uint32_t>(leading_u64(input, 1)),
                               static_cast<std::uint32_t>(leading_u64(input.substr(std::min<std::size_t>(1, input.size())), 2)));
}

void environment_files(std::string_view, std::string_view input, Findings& findings) {
  const auto mounts = parsers::parse_container_mounts(input);
  if (mounts.runtime)
    findings.check(*mounts.runtime == "docker" || *mounts.runtime == "containerd" || *mounts.runtime == "containers-storage",
                   "mountinfo: unknown runtime name");
  (void)parsers::parse_cgroup(input);
  (void)parsers::container_name(input);
  (void)parsers::containerenv_engine(input);
  if (const auto wsl = parsers::wsl_version(input)) findings.check(*wsl == 1 || *wsl == 2, "WSL version not 1 or 2");
  (void)parsers::cpuinfo_hypervisor_flag(input);
  (void)parsers::clocksource_hypervisor(input);
  (void)parsers::aws_metal(input);
}

void dmi(std::string_view, std::string_view input, Findings& findings) {
  // One DMI string per line, in the order of the Dmi fields; the rest is the Xen UUID.
  parsers::Dmi d;
  std::string_view rest = input;
  for (std::string* field : {&d.sys_vendor, &d.product_name, &d.product_version, &d.board_vendor, &d.bios_vendor,
                             &d.bios_version, &d.chassis_asset_tag})
    *field = std::string(text::next_line(rest));
  (void)parsers::dmi_hypervisor(d);
  if (const auto cloud = parsers::identify_cloud(d, rest)) {
    findings.check(!cloud->provider.empty(), "DMI: a cloud without a provider");
    if (cloud->instance_type) findings.check(cloud->instance_type->size() <= 64, "DMI: instance type too long");
  }
}

void text_primitives(std::string_view, std::string_view input, Findings& findings) {
  (void)text::parse_memory_size(input);
  (void)text::cpulist_count(input);
  if (const auto d = text::parse_double(input)) (void)*d;
  if (const auto speed = parse_link_speed(input)) findings.check(*speed > 0 && *speed <= 1000, "link speed out of range");
  if (const auto address = PciAddress::parse(input)) {
    const auto again = PciAddress::parse(address->to_string());
    findings.check(again && *again == *address, "PCI address does not read back");
  }
  if (const auto backends = parse_backend_list(input)) (void)backends->count();
  std::string json_text;
  json::append_string(json_text, input);
  findings.check(json_text.size() >= 2 && json_text.front() == '"' && json_text.back() == '"', "JSON string not quoted");
  const std::size_t half = input.size() / 2;
  const std::string_view a = input.substr(0, half), b = input.substr(half);
  findings.check(!natural_less(a, a), "natural_less is not irreflexive");
  findings.check(!(natural_less(a, b) && natural_less(b, a)), "natural_less is not asymmetric");
  std::string_view rest = input;
  std::size_t lines = 0;
  while (!rest.empty()) {
    (void)text::next_line(rest);
    ++lines;
  }
  findings.check(lines <= input.size(), "more lines than bytes");
  (void)base_name(input);
}

void id_tables(std::string_view, std::string_view input, Findings&) {
  const auto id = static_cast<std::uint16_t>(leading_u64(input, 2));
  const auto revision = static_cast<std::uint8_t>(leading_u64(input.substr(std::min<std::size_t>(2, input.size())), 1));
  (void)parsers::amd_product(id, revision);
  (void)parsers::amd_product(id, std::nullopt);
  (void)parsers::xdna_generation(id, revision);
  (void)parsers::intel_npu_generation(id);
  (void)parsers::tpu_version(id, static_cast<std::uint16_t>(leading_u64(input.substr(std::min<std::size_t>(3, input.size())), 2)));
  (void)parsers::qaic_product_name(id);
  (void)parsers::gfx_target_name(leading_u64(input, 8));
  (void)parsers::xgmi_hops_from_weight(leading_u64(input, 8));
  (void)parsers::kfd_pci_address(leading_u64(input, 4), leading_u64(input.substr(std::min<std::size_t>(4, input.size())), 4));
}

void sysfs_readers(std::string_view, std::string_view input, Findings& findings) {
  const auto system = MemorySystem::decode(input);
  const auto nodes = accel_nodes(*system);
  for (std::size_t i = 1; i < nodes.size(); ++i)
    findings.check(!natural_less(nodes[i].name, nodes[i - 1].name), "accel nodes out of order");
  for (const std::string_view driver : {"intel_vpu", "amdxdna", "qaic", "habanalabs", "nvidia", "amdgpu", "accel"}) {
    const auto functions = accel_functions_of_driver(*system, driver);
    for (std::size_t i = 1; i < functions.size(); ++i)
      findings.check(functions[i - 1].address < functions[i].address, "accel functions not sorted and unique");
    const auto addresses = pci_functions_of_driver(*system, driver);
    findings.check(std::is_sorted(addresses.begin(), addresses.end()), "PCI functions of a driver not sorted");
    for (const auto& address : addresses) {
      const auto function = read_pci_function(*system, address);
      if (function.link.current_speed_gts) findings.check(std::isfinite(*function.link.current_speed_gts), "link speed");
      if (function.numa_node) findings.check(*function.numa_node >= 0, "negative NUMA node");
    }
  }
  DetectOptions options;
  const DetectContext ctx(*system, options, "rocm");
  DetectorOutput out;
  const auto topology = parsers::read_kfd_topology(ctx, out);
  for (std::size_t i = 1; i < topology.nodes.size(); ++i)
    findings.check(topology.nodes[i - 1].id < topology.nodes[i].id, "KFD nodes not sorted by id");
  for (const auto& w : out.warnings) findings.check(w.backend == "rocm" && !w.message.empty(), "KFD warning without text");
}

void network_values(std::string_view, std::string_view input, Findings& findings) {
  if (const auto v = parsers::parse_numbered_value(input))
    findings.check(v->name.size() < input.size(), "infiniband: a name longer than its input");
  if (const auto rate = parsers::parse_ib_rate(input))
    findings.check(std::isfinite(*rate) && *rate >= 0, "infiniband: rate not finite or negative");
}

void storage_mounts(std::string_view, std::string_view input, Findings& findings) {
  const auto mounts = parsers::parse_mountinfo(input);
  for (const auto& m : mounts.entries) {
    (void)parsers::network_filesystem(m.fstype, m.source);
    findings.check(m.mount_point.size() <= input.size(), "mountinfo: a mount point longer than its input");
  }
  findings.check(parsers::unescape_mount_field(input).size() <= input.size(), "mountinfo: unescaping grew the text");
}

}  // namespace hwaccel::fuzz
