// The registry's JSON form, written: canonical, fields in a fixed order
// (registry_json_read.cpp reads it back).
module;
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
module hwaccel.registry;

namespace hwaccel {

namespace {

void write_pcie(json::Writer& w, const PcieLink& link) {
  w.begin_object();
  w.field("current_generation", link.current_generation());
  w.field("max_generation", link.max_generation());
  w.field("current_speed_gts", link.current_speed_gts);
  w.field("max_speed_gts", link.max_speed_gts);
  w.field("current_width", link.current_width);
  w.field("max_width", link.max_width);
  w.field("max_bandwidth_gbps", link.max_bandwidth_gbps());
  w.end_object();
}

void write_device(json::Writer& w, const DeviceProfile& d) {
  w.begin_object();
  w.field("id", d.id);
  w.field("backend", to_string(d.backend));
  w.field("family", to_string(d.family));
  w.field("index", d.index);
  w.field("name", d.name);
  w.field("vendor", d.vendor);
  w.field("uuid", d.uuid);
  w.field("pci_bus_id", d.pci_bus_id);
  w.field("numa_node", d.numa_node);
  w.field("cpu_affinity", d.cpu_affinity);
  w.field("memory_bytes", d.memory_bytes);
  w.field("memory_free_bytes", d.memory_free_bytes);
  w.field("memory_used_bytes", d.memory_used_bytes);
  w.field("memory_kind", to_string(d.memory_kind));
  w.field("shared_memory_bytes", d.shared_memory_bytes);
  w.field("memory_bandwidth_gbps", d.memory_bandwidth_gbps);
  w.field("driver_version", d.driver_version);
  w.field("firmware_version", d.firmware_version);
  w.field("compute_capability", d.compute_capability);
  w.field("architecture", d.architecture);
  w.field("compute_units", d.compute_units);
  if (d.pcie) {
    w.key("pcie");
    write_pcie(w, *d.pcie);
  }
  w.field("power_watts", d.power_watts);
  w.field("power_limit_watts", d.power_limit_watts);
  w.field("temperature_c", d.temperature_c);
  w.field("utilization_percent", d.utilization_percent);
  w.field("integrated", d.integrated);
  w.field("available", d.available);
  w.field("visible", d.visible);
  w.field("runtime_index", d.runtime_index);
  if (!d.partitions.empty()) {
    w.key("partitions").begin_array();
    for (const auto& p : d.partitions) {
      w.begin_object();
      w.field("id", p.id);
      w.field("index", p.index);
      w.field("profile", p.profile);
      w.field("uuid", p.uuid);
      w.field("gpu_instance_id", p.gpu_instance_id);
      w.field("compute_instance_id", p.compute_instance_id);
      w.field("memory_bytes", p.memory_bytes);
      w.field("compute_units", p.compute_units);
      w.field("visible", p.visible);
      w.field("runtime_index", p.runtime_index);
      w.end_object();
    }
    w.end_array();
  }
  w.field("spec_id", d.spec_id);
  if (!d.properties.empty()) {
    w.field("properties", d.properties);
  }
  w.end_object();
}

void write_cpu(json::Writer& w, const CpuInfo& c) {
  w.begin_object();
  w.field("model_name", c.model_name);
  w.field("vendor", c.vendor);
  w.field("architecture", c.architecture);
  w.field("sockets", c.sockets);
  w.field("physical_cores", c.physical_cores);
  w.field("logical_cores", c.logical_cores);
  w.field("isa_features", c.isa_features);
  w.key("numa_nodes").begin_array();
  for (const auto& n : c.numa_nodes) {
    w.begin_object();
    w.field("id", n.id);
    w.field("cpulist", n.cpulist);
    w.field("memory_bytes", n.memory_bytes);
    w.end_object();
  }
  w.end_array();
  w.field("memory_total_bytes", c.memory_total_bytes);
  w.field("memory_available_bytes", c.memory_available_bytes);
  w.field("cgroup_memory_limit_bytes", c.cgroup_memory_limit_bytes);
  w.end_object();
}

void write_environment(json::Writer& w, const Environment& e) {
  w.begin_object();
  w.field("container", e.container);
  w.field("kubernetes", e.kubernetes);
  w.field("kubernetes_namespace", e.kubernetes_namespace);
  w.field("wsl", e.wsl);
  w.field("wsl_version", e.wsl_version);
  w.field("gpu_paravirtualization", e.gpu_paravirtualization);
  w.field("virtual_machine", e.virtual_machine);
  w.field("hypervisor", e.hypervisor);
  if (e.cloud) {
    w.key("cloud").begin_object();
    w.field("provider", e.cloud->provider);
    w.field("instance_type", e.cloud->instance_type);
    w.field("product_name", e.cloud->product_name);
    w.end_object();
  }
  if (!e.visible_devices_env.empty()) {
    w.field("visible_devices_env", e.visible_devices_env);
  }
  w.end_object();
}

void write_system(json::Writer& w, const SystemInfo& s) {
  w.begin_object();
  w.field("host", s.host);
  if (s.cpu) {
    w.key("cpu");
    write_cpu(w, *s.cpu);
  }
  if (s.environment) {
    w.key("environment");
    write_environment(w, *s.environment);
  }
  w.key("storage").begin_array();
  for (const auto& d : s.storage) {
    w.begin_object();
    w.field("name", d.name);
    w.field("kind", to_string(d.kind));
    w.field("size_bytes", d.size_bytes);
    w.field("model", d.model);
    w.field("pci_bus_id", d.pci_bus_id);
    w.field("numa_node", d.numa_node);
    w.field("read_bandwidth_gbps", d.read_bandwidth_gbps);
    if (!d.bandwidth_source.empty()) w.field("bandwidth_source", d.bandwidth_source);
    w.field("filesystem", d.filesystem);
    if (!d.mount_points.empty()) {
      w.field("mount_points", d.mount_points);
    }
    w.end_object();
  }
  w.end_array();
  w.key("network").begin_array();
  for (const auto& p : s.network) {
    w.begin_object();
    w.field("device", p.device);
    w.field("port", p.port);
    w.field("kind", p.kind);
    w.field("state", p.state);
    w.field("rate_gbps", p.rate_gbps);
    w.field("link_layer", p.link_layer);
    w.field("pci_bus_id", p.pci_bus_id);
    w.field("numa_node", p.numa_node);
    w.field("netdev", p.netdev);
    if (!p.near_devices.empty()) {
      w.field("near_devices", p.near_devices);
    }
    if (p.affinity) w.field("affinity", to_string(*p.affinity));
    w.field("phys_state", p.phys_state);
    w.field("driver", p.driver);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

}  // namespace

std::string to_json(const AcceleratorRegistry& registry, const JsonOptions& options) {
  json::Writer w(options.pretty, 1024 + registry.devices().size() * 1024);  // a device is ~700 bytes
  write_json(w, registry, options.include_timings);
  return std::move(w).document();
}

void write_json(json::Writer& w, const AcceleratorRegistry& registry, bool include_timings) {
  const Inventory& inv = registry.inventory();
  w.begin_object();
  w.field("schema_version", registry_schema_version);
  w.key("devices").begin_array();
  for (const auto& d : inv.devices) write_device(w, d);
  w.end_array();
  w.key("links").begin_array();
  for (const auto& l : inv.links) {
    w.begin_object();
    w.field("a", l.a);
    w.field("b", l.b);
    w.field("kind", to_string(l.kind));
    w.field("lanes", l.lanes);
    w.field("hops", l.hops);
    w.field("bandwidth_gbps", l.bandwidth_gbps);
    if (!l.source.empty()) w.field("source", l.source);
    w.end_object();
  }
  w.end_array();
  w.key("interconnects").begin_array();
  for (const auto& ic : inv.interconnects) {
    w.begin_object();
    w.field("kind", ic.kind);
    w.field("name", ic.name);
    w.field("device_ids", ic.device_ids);
    w.field("bandwidth_gbps", ic.bandwidth_gbps);
    w.field("switch_count", ic.switch_count);
    if (!ic.source.empty()) w.field("source", ic.source);
    w.end_object();
  }
  w.end_array();
  w.key("system");
  write_system(w, inv.system);
  w.key("warnings").begin_array();
  for (const auto& warning : inv.warnings) {
    w.begin_object();
    w.field("backend", warning.backend);
    w.field("kind", to_string(warning.kind));
    w.field("message", warning.message);
    w.end_object();
  }
  w.end_array();
  if (include_timings) {
    w.key("timings_us").begin_object();
    for (const auto& t : inv.timings) w.field(t.name, static_cast<std::int64_t>(t.elapsed.count()));
    w.end_object();
  }
  w.end_object();
}

std::string summary_json(const AcceleratorRegistry& registry, bool pretty) {
  // Counts by name (std::map), so that the output is canonical.
  std::map<std::string_view, std::uint64_t> by_family, by_backend, by_kind;
  for (const auto& d : registry.devices()) {
    ++by_family[to_string(d.family)];
    ++by_backend[to_string(d.backend)];
  }
  for (const auto& w : registry.warnings()) ++by_kind[to_string(w.kind)];
  json::Writer w(pretty);
  w.begin_object();
  w.field("summary_schema_version", summary_schema_version);
  w.field("version", library_version());
  w.field("schema_version", registry.schema_version());
  w.field("devices", static_cast<std::uint64_t>(registry.devices().size()));
  w.field("devices_by_family", by_family);
  w.field("devices_by_backend", by_backend);
  w.key("best_device");
  if (const DeviceProfile* best = registry.best_available()) {
    w.begin_object();
    w.field("id", best->id);
    w.field("name", best->name);
    w.field("family", to_string(best->family));
    w.field("memory_bytes", best->memory_bytes);
    w.end_object();
  } else {
    w.null();
  }
  w.field("total_memory_bytes", registry.total_memory_including_cpu());
  w.field("accelerator_memory_bytes", registry.total_accelerator_memory());
  w.field("warnings", static_cast<std::uint64_t>(registry.warnings().size()));
  w.field("warnings_by_kind", by_kind);
  w.end_object();
  return std::move(w).document();
}

}  // namespace hwaccel
