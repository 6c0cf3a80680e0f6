// The registry's JSON form: canonical writer and simdjson reader.
module;
#include <chrono>
#include <climits>
#include <cstring>
#include <cstdint>
#include <limits>
#include <map>
#include <type_traits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>
#include "json_input.hpp"
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

void write_string_map(json::Writer& w, const std::map<std::string, std::string, std::less<>>& m) {
  w.begin_object();
  for (const auto& [k, v] : m) w.field(k, v);
  w.end_object();
}

void write_string_list(json::Writer& w, const std::vector<std::string>& items) {
  w.begin_array();
  for (const auto& s : items) w.value(s);
  w.end_array();
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
    w.key("properties");
    write_string_map(w, d.properties);
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
  w.key("isa_features");
  write_string_list(w, c.isa_features);
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
    w.key("visible_devices_env");
    write_string_map(w, e.visible_devices_env);
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
      w.key("mount_points");
      write_string_list(w, d.mount_points);
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
      w.key("near_devices");
      write_string_list(w, p.near_devices);
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
    w.key("device_ids");
    write_string_list(w, ic.device_ids);
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
  w.key("devices_by_family").begin_object();
  for (const auto& [name, n] : by_family) w.field(name, n);
  w.end_object();
  w.key("devices_by_backend").begin_object();
  for (const auto& [name, n] : by_backend) w.field(name, n);
  w.end_object();
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
  w.key("warnings_by_kind").begin_object();
  for (const auto& [name, n] : by_kind) w.field(name, n);
  w.end_object();
  w.end_object();
  return std::move(w).document();
}

// ---------------------------------------------------------------------------
// Reader. Every field is optional unless the writer always writes it; unknown
// fields are skipped so that a newer writer's output still reads.

namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

// Where a value sits in the document ("devices[3].pcie.max_width"), spelled
// out only when an error names it: reading a valid document builds no text.
struct Path {
  const Path* parent = nullptr;
  std::string_view name;  // a member's name; unused for an array element
  std::size_t index = 0;  // an array element's position
  bool is_element = false;

  std::string str() const {
    std::string out = parent ? parent->str() : std::string();
    if (is_element) {
      out += text::cat("[", index, "]");
    } else {
      if (!out.empty()) out += '.';
      out.append(name);
    }
    return out;
  }
};

Path at_member(const Path& parent, std::string_view name) { return Path{&parent, name, 0, false}; }

// A member's name against one of the schema's: with the length known when
// compiled, the bytes are compared inline rather than by a call to memcmp.
template <std::size_t N>
inline bool key_is(std::string_view key, const char (&name)[N]) noexcept {
  return key.size() == N - 1 && std::memcmp(key.data(), name, N - 1) == 0;
}
Path at_index(const Path& parent, std::size_t index) { return Path{&parent, {}, index, true}; }

class Reader {
 public:
  Error error;
  bool failed = false;

  bool fail_at(const Path& path, std::string_view what) {
    if (!failed) {
      failed = true;
      error = Error{ErrorKind::parse_error, text::cat("registry JSON: ", path.str(), " ", what)};
    }
    return false;
  }

  bool read(element e, const Path& path, std::string& out) {
    std::string_view v;
    if (e.get_string().get(v) != simdjson::SUCCESS) return fail_at(path, "must be a string");
    out.assign(v);
    return true;
  }
  bool read(element e, const Path& path, std::optional<std::string>& out) {
    std::string_view v;
    if (e.get_string().get(v) != simdjson::SUCCESS) return fail_at(path, "must be a string");
    out.emplace(v);
    return true;
  }
  bool read(element e, const Path& path, bool& out) {
    if (e.get_bool().get(out) != simdjson::SUCCESS) return fail_at(path, "must be true or false");
    return true;
  }
  template <class T>
    requires std::is_unsigned_v<T>
  bool read(element e, const Path& path, T& out) {
    std::uint64_t v = 0;
    if (e.get_uint64().get(v) != simdjson::SUCCESS || v > std::numeric_limits<T>::max())
      return fail_at(path, "must be an unsigned integer in range");
    out = static_cast<T>(v);
    return true;
  }
  bool read(element e, const Path& path, std::int32_t& out) {
    std::int64_t v = 0;
    if (e.get_int64().get(v) != simdjson::SUCCESS || v < INT32_MIN || v > INT32_MAX)
      return fail_at(path, "must be an integer in range");
    out = static_cast<std::int32_t>(v);
    return true;
  }
  bool read(element e, const Path& path, double& out) {
    if (e.get_double().get(out) != simdjson::SUCCESS) return fail_at(path, "must be a number");
    return true;
  }
  template <class T>
  bool read(element e, const Path& path, std::optional<T>& out) {
    if (e.is_null()) {
      out.reset();
      return true;
    }
    T v{};
    if (!read(e, path, v)) return false;
    out = std::move(v);
    return true;
  }
  bool read(element e, const Path& path, std::vector<std::string>& out) {
    array a;
    if (e.get_array().get(a) != simdjson::SUCCESS) return fail_at(path, "must be an array of strings");
    std::size_t i = 0;
    for (element item : a) {
      std::string s;
      if (!read(item, at_index(path, i++), s)) return false;
      out.push_back(std::move(s));
    }
    return true;
  }
  bool read(element e, const Path& path, std::map<std::string, std::string, std::less<>>& out) {
    object o;
    if (e.get_object().get(o) != simdjson::SUCCESS) return fail_at(path, "must be an object of strings");
    for (auto [k, v] : o) {
      std::string s;
      if (!read(v, at_member(path, k), s)) return false;
      out.insert_or_assign(std::string(k), std::move(s));
    }
    return true;
  }

  template <class Enum>
  bool read_enum(element e, const Path& path, Enum& out, std::optional<Enum> (*parse)(std::string_view) noexcept) {
    std::string_view v;
    if (e.get_string().get(v) != simdjson::SUCCESS) return fail_at(path, "must be a string");
    const auto parsed = parse(v);
    if (!parsed) return fail_at(path, text::cat("has unknown value \"", text::excerpt(v, 40), "\""));
    out = *parsed;
    return true;
  }

  bool object_of(element e, const Path& path, object& out) {
    if (e.get_object().get(out) != simdjson::SUCCESS) return fail_at(path, "must be an object");
    return true;
  }

  bool array_of(element e, const Path& path, array& out) {
    if (e.get_array().get(out) != simdjson::SUCCESS) return fail_at(path, "must be an array");
    return true;
  }

  bool pcie(element e, const Path& path, PcieLink& link) {
    object o;
    if (!object_of(e, path, o)) return false;
    for (auto [k, v] : o) {
      const Path p = at_member(path, k);
      if (key_is(k, "current_speed_gts")) read(v, p, link.current_speed_gts);
      else if (key_is(k, "max_speed_gts")) read(v, p, link.max_speed_gts);
      else if (key_is(k, "current_width")) read(v, p, link.current_width);
      else if (key_is(k, "max_width")) read(v, p, link.max_width);
      if (failed) return false;
    }
    return true;
  }

  bool partition(element e, const Path& path, DevicePartition& part) {
    object o;
    if (!object_of(e, path, o)) return false;
    for (auto [k, v] : o) {
      const Path p = at_member(path, k);
      if (key_is(k, "id")) read(v, p, part.id);
      else if (key_is(k, "index")) read(v, p, part.index);
      else if (key_is(k, "profile")) read(v, p, part.profile);
      else if (key_is(k, "uuid")) read(v, p, part.uuid);
      else if (key_is(k, "gpu_instance_id")) read(v, p, part.gpu_instance_id);
      else if (key_is(k, "compute_instance_id")) read(v, p, part.compute_instance_id);
      else if (key_is(k, "memory_bytes")) read(v, p, part.memory_bytes);
      else if (key_is(k, "compute_units")) read(v, p, part.compute_units);
      else if (key_is(k, "visible")) read(v, p, part.visible);
      else if (key_is(k, "runtime_index")) read(v, p, part.runtime_index);
      if (failed) return false;
    }
    return true;
  }

  bool device(element e, const Path& path, DeviceProfile& d) {
    object o;
    if (!object_of(e, path, o)) return false;
    bool has_id = false, has_backend = false;
    for (auto [k, v] : o) {
      const Path p = at_member(path, k);
      // By length first: most keys are told apart without comparing bytes.
      switch (k.size()) {
        case 2:
          if (key_is(k, "id")) has_id = read(v, p, d.id);
          break;
        case 4:
          if (key_is(k, "name")) read(v, p, d.name);
          else if (key_is(k, "uuid")) read(v, p, d.uuid);
          else if (key_is(k, "pcie") && !v.is_null()) pcie(v, p, d.pcie.emplace());
          break;
        case 5:
          if (key_is(k, "index")) read(v, p, d.index);
          break;
        case 6:
          if (key_is(k, "family")) read_enum(v, p, d.family, &parse_family);
          else if (key_is(k, "vendor")) read(v, p, d.vendor);
          break;
        case 7:
          if (key_is(k, "backend")) has_backend = read_enum(v, p, d.backend, &parse_backend);
          else if (key_is(k, "visible")) read(v, p, d.visible);
          else if (key_is(k, "spec_id")) read(v, p, d.spec_id);
          break;
        case 9:
          if (key_is(k, "numa_node")) read(v, p, d.numa_node);
          else if (key_is(k, "available")) read(v, p, d.available);
          break;
        case 10:
          if (key_is(k, "pci_bus_id")) read(v, p, d.pci_bus_id);
          else if (key_is(k, "integrated")) read(v, p, d.integrated);
          else if (key_is(k, "properties")) read(v, p, d.properties);
          else if (key_is(k, "partitions")) partitions(v, p, d.partitions);
          break;
        case 11:
          if (key_is(k, "memory_kind")) read_enum(v, p, d.memory_kind, &parse_memory_kind);
          else if (key_is(k, "power_watts")) read(v, p, d.power_watts);
          break;
        case 12:
          if (key_is(k, "cpu_affinity")) read(v, p, d.cpu_affinity);
          else if (key_is(k, "memory_bytes")) read(v, p, d.memory_bytes);
          else if (key_is(k, "architecture")) read(v, p, d.architecture);
          break;
        case 13:
          if (key_is(k, "compute_units")) read(v, p, d.compute_units);
          else if (key_is(k, "temperature_c")) read(v, p, d.temperature_c);
          else if (key_is(k, "runtime_index")) read(v, p, d.runtime_index);
          break;
        case 14:
          if (key_is(k, "driver_version")) read(v, p, d.driver_version);
          break;
        case 16:
          if (key_is(k, "firmware_version")) read(v, p, d.firmware_version);
          break;
        case 17:
          if (key_is(k, "memory_free_bytes")) read(v, p, d.memory_free_bytes);
          else if (key_is(k, "memory_used_bytes")) read(v, p, d.memory_used_bytes);
          else if (key_is(k, "power_limit_watts")) read(v, p, d.power_limit_watts);
          break;
        case 18:
          if (key_is(k, "compute_capability")) read(v, p, d.compute_capability);
          break;
        case 19:
          if (key_is(k, "shared_memory_bytes")) read(v, p, d.shared_memory_bytes);
          else if (key_is(k, "utilization_percent")) read(v, p, d.utilization_percent);
          break;
        case 21:
          if (key_is(k, "memory_bandwidth_gbps")) read(v, p, d.memory_bandwidth_gbps);
          break;
        default:
          break;  // a field of a newer schema
      }
      if (failed) return false;
    }
    if (!has_id) return fail_at(path, "has no \"id\"");
    if (!has_backend) return fail_at(path, "has no \"backend\"");
    return true;
  }

  bool partitions(element e, const Path& path, std::vector<DevicePartition>& out) {
    array a;
    if (!array_of(e, path, a)) return false;
    std::size_t i = 0;
    for (element item : a) {
      DevicePartition part;
      if (!partition(item, at_index(path, i++), part)) return false;
      out.push_back(std::move(part));
    }
    return true;
  }

  bool cpu(element e, const Path& path, CpuInfo& c) {
    object o;
    if (!object_of(e, path, o)) return false;
    for (auto [k, v] : o) {
      const Path p = at_member(path, k);
      if (key_is(k, "model_name")) read(v, p, c.model_name);
      else if (key_is(k, "vendor")) read(v, p, c.vendor);
      else if (key_is(k, "architecture")) read(v, p, c.architecture);
      else if (key_is(k, "sockets")) read(v, p, c.sockets);
      else if (key_is(k, "physical_cores")) read(v, p, c.physical_cores);
      else if (key_is(k, "logical_cores")) read(v, p, c.logical_cores);
      else if (key_is(k, "isa_features")) read(v, p, c.isa_features);
      else if (key_is(k, "numa_nodes")) {
        array a;
        if (array_of(v, p, a)) {
          std::size_t i = 0;
          for (element item : a) {
            const Path ip = at_index(p, i++);
            object no;
            if (!object_of(item, ip, no)) break;
            NumaNode n;
            for (auto [nk, nv] : no) {
              if (key_is(nk, "id")) read(nv, at_member(ip, "id"), n.id);
              else if (key_is(nk, "cpulist")) read(nv, at_member(ip, "cpulist"), n.cpulist);
              else if (key_is(nk, "memory_bytes")) read(nv, at_member(ip, "memory_bytes"), n.memory_bytes);
            }
            c.numa_nodes.push_back(std::move(n));
          }
        }
      } else if (key_is(k, "memory_total_bytes")) read(v, p, c.memory_total_bytes);
      else if (key_is(k, "memory_available_bytes")) read(v, p, c.memory_available_bytes);
      else if (key_is(k, "cgroup_memory_limit_bytes")) read(v, p, c.cgroup_memory_limit_bytes);
      if (failed) return false;
    }
    return true;
  }

  bool environment(element e, const Path& path, Environment& env) {
    object o;
    if (!object_of(e, path, o)) return false;
    for (auto [k, v] : o) {
      const Path p = at_member(path, k);
      if (key_is(k, "container")) read(v, p, env.container);
      else if (key_is(k, "kubernetes")) read(v, p, env.kubernetes);
      else if (key_is(k, "kubernetes_namespace")) read(v, p, env.kubernetes_namespace);
      else if (key_is(k, "wsl")) read(v, p, env.wsl);
      else if (key_is(k, "wsl_version")) read(v, p, env.wsl_version);
      else if (key_is(k, "gpu_paravirtualization")) read(v, p, env.gpu_paravirtualization);
      else if (key_is(k, "virtual_machine")) read(v, p, env.virtual_machine);
      else if (key_is(k, "hypervisor")) read(v, p, env.hypervisor);
      else if (key_is(k, "cloud")) {
        object co;
        if (object_of(v, p, co)) {
          CloudInstance cloud;
          for (auto [ck, cv] : co) {
            if (key_is(ck, "provider")) read(cv, at_member(p, "provider"), cloud.provider);
            else if (key_is(ck, "instance_type")) read(cv, at_member(p, "instance_type"), cloud.instance_type);
            else if (key_is(ck, "product_name")) read(cv, at_member(p, "product_name"), cloud.product_name);
          }
          env.cloud = std::move(cloud);
        }
      } else if (key_is(k, "visible_devices_env")) read(v, p, env.visible_devices_env);
      if (failed) return false;
    }
    return true;
  }

  bool system(element e, SystemInfo& s) {
    const Path path{nullptr, "system"};
    object o;
    if (!object_of(e, path, o)) return false;
    for (auto [k, v] : o) {
      if (key_is(k, "host")) {
        read(v, at_member(path, "host"), s.host);
      } else if (key_is(k, "cpu")) {
        s.cpu.emplace();
        cpu(v, at_member(path, "cpu"), *s.cpu);
      } else if (key_is(k, "environment")) {
        s.environment.emplace();
        environment(v, at_member(path, "environment"), *s.environment);
      } else if (key_is(k, "storage")) {
        array a;
        const Path storage = at_member(path, "storage");
        if (array_of(v, storage, a)) {
          std::size_t i = 0;
          for (element item : a) {
            const Path p = at_index(storage, i++);
            object so;
            if (!object_of(item, p, so)) break;
            StorageDevice d;
            for (auto [sk, sv] : so) {
              const Path sp = at_member(p, sk);
              if (key_is(sk, "name")) read(sv, sp, d.name);
              else if (key_is(sk, "kind")) read_enum(sv, sp, d.kind, &parse_storage_kind);
              else if (key_is(sk, "size_bytes")) read(sv, sp, d.size_bytes);
              else if (key_is(sk, "model")) read(sv, sp, d.model);
              else if (key_is(sk, "pci_bus_id")) read(sv, sp, d.pci_bus_id);
              else if (key_is(sk, "numa_node")) read(sv, sp, d.numa_node);
              else if (key_is(sk, "read_bandwidth_gbps")) read(sv, sp, d.read_bandwidth_gbps);
              else if (key_is(sk, "bandwidth_source")) read(sv, sp, d.bandwidth_source);
              else if (key_is(sk, "filesystem")) read(sv, sp, d.filesystem);
              else if (key_is(sk, "mount_points")) read(sv, sp, d.mount_points);
            }
            s.storage.push_back(std::move(d));
          }
        }
      } else if (key_is(k, "network")) {
        array a;
        const Path network = at_member(path, "network");
        if (array_of(v, network, a)) {
          std::size_t i = 0;
          for (element item : a) {
            const Path p = at_index(network, i++);
            object no;
            if (!object_of(item, p, no)) break;
            NetworkPort port;
            for (auto [nk, nv] : no) {
              const Path np = at_member(p, nk);
              if (key_is(nk, "device")) read(nv, np, port.device);
              else if (key_is(nk, "port")) read(nv, np, port.port);
              else if (key_is(nk, "kind")) read(nv, np, port.kind);
              else if (key_is(nk, "state")) read(nv, np, port.state);
              else if (key_is(nk, "rate_gbps")) read(nv, np, port.rate_gbps);
              else if (key_is(nk, "link_layer")) read(nv, np, port.link_layer);
              else if (key_is(nk, "pci_bus_id")) read(nv, np, port.pci_bus_id);
              else if (key_is(nk, "numa_node")) read(nv, np, port.numa_node);
              else if (key_is(nk, "netdev")) read(nv, np, port.netdev);
              else if (key_is(nk, "near_devices")) read(nv, np, port.near_devices);
              else if (key_is(nk, "affinity")) {
                LinkKind kind{};
                if (read_enum(nv, np, kind, &parse_link_kind)) port.affinity = kind;
              } else if (key_is(nk, "phys_state")) read(nv, np, port.phys_state);
              else if (key_is(nk, "driver")) read(nv, np, port.driver);
            }
            s.network.push_back(std::move(port));
          }
        }
      }
      if (failed) return false;
    }
    return true;
  }
};

}  // namespace

Result<AcceleratorRegistry> registry_from_json(std::string_view json) {
  // A parser per call allocates (and the kernel zero-fills) buffers a few
  // times the document's size: each thread keeps one for registries of the
  // usual size instead. A huge document gets its own, so that no thread
  // holds on to its memory.
  constexpr std::size_t reused_up_to = std::size_t{1} << 20;
  thread_local simdjson::dom::parser reused;
  std::optional<simdjson::dom::parser> own;
  simdjson::dom::parser& parser = json.size() <= reused_up_to ? reused : own.emplace();
  element doc;
  if (const auto err = json_input::parse(parser, json).get(doc); err != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat("registry JSON is not valid JSON: ", simdjson::error_message(err)));
  object root;
  if (doc.get_object().get(root) != simdjson::SUCCESS) return fail(ErrorKind::parse_error, "registry JSON must be an object");

  AcceleratorRegistry registry;
  Inventory& inv = registry.inventory_;
  Reader r;
  std::uint64_t version = 0;
  if (root["schema_version"].get_uint64().get(version) != simdjson::SUCCESS || version == 0 || version > 1'000'000)
    return fail(ErrorKind::parse_error, "registry JSON: missing or invalid \"schema_version\"");
  registry.schema_version_ = static_cast<std::uint32_t>(version);

  for (auto [key, value] : root) {
    if (key_is(key, "devices")) {
      array a;
      const Path path{nullptr, "devices"};
      if (r.array_of(value, path, a)) {
        inv.devices.reserve(a.size());
        std::size_t i = 0;
        for (element item : a)
          if (!r.device(item, at_index(path, i++), inv.devices.emplace_back())) break;
      }
    } else if (key_is(key, "links")) {
      array a;
      const Path path{nullptr, "links"};
      if (r.array_of(value, path, a)) {
        std::size_t i = 0;
        for (element item : a) {
          const Path p = at_index(path, i++);
          object o;
          if (!r.object_of(item, p, o)) break;
          DeviceLink l;
          for (auto [k, v] : o) {
            const Path lp = at_member(p, k);
            if (key_is(k, "a")) r.read(v, lp, l.a);
            else if (key_is(k, "b")) r.read(v, lp, l.b);
            else if (key_is(k, "kind")) r.read_enum(v, lp, l.kind, &parse_link_kind);
            else if (key_is(k, "lanes")) r.read(v, lp, l.lanes);
            else if (key_is(k, "hops")) r.read(v, lp, l.hops);
            else if (key_is(k, "bandwidth_gbps")) r.read(v, lp, l.bandwidth_gbps);
            else if (key_is(k, "source")) r.read(v, lp, l.source);
          }
          inv.links.push_back(std::move(l));
        }
      }
    } else if (key_is(key, "interconnects")) {
      array a;
      const Path path{nullptr, "interconnects"};
      if (r.array_of(value, path, a)) {
        std::size_t i = 0;
        for (element item : a) {
          const Path p = at_index(path, i++);
          object o;
          if (!r.object_of(item, p, o)) break;
          Interconnect ic;
          for (auto [k, v] : o) {
            const Path ip = at_member(p, k);
            if (key_is(k, "kind")) r.read(v, ip, ic.kind);
            else if (key_is(k, "name")) r.read(v, ip, ic.name);
            else if (key_is(k, "device_ids")) r.read(v, ip, ic.device_ids);
            else if (key_is(k, "bandwidth_gbps")) r.read(v, ip, ic.bandwidth_gbps);
            else if (key_is(k, "switch_count")) r.read(v, ip, ic.switch_count);
            else if (key_is(k, "source")) r.read(v, ip, ic.source);
          }
          inv.interconnects.push_back(std::move(ic));
        }
      }
    } else if (key_is(key, "system")) {
      r.system(value, inv.system);
    } else if (key_is(key, "warnings")) {
      array a;
      const Path path{nullptr, "warnings"};
      if (r.array_of(value, path, a)) {
        std::size_t i = 0;
        for (element item : a) {
          const Path p = at_index(path, i++);
          object o;
          if (!r.object_of(item, p, o)) break;
          Warning w;
          for (auto [k, v] : o) {
            if (key_is(k, "backend")) r.read(v, at_member(p, "backend"), w.backend);
            else if (key_is(k, "kind")) r.read_enum(v, at_member(p, "kind"), w.kind, &parse_warning_kind);
            else if (key_is(k, "message")) r.read(v, at_member(p, "message"), w.message);
          }
          inv.warnings.push_back(std::move(w));
        }
      }
    } else if (key_is(key, "timings_us")) {
      object o;
      const Path path{nullptr, "timings_us"};
      if (r.object_of(value, path, o)) {
        for (auto [k, v] : o) {
          std::uint64_t us = 0;
          if (!r.read(v, at_member(path, k), us)) break;
          inv.timings.push_back(BackendTiming{std::string(k), std::chrono::microseconds(static_cast<std::int64_t>(us))});
        }
      }
    }
    if (r.failed) return fail(r.error);
  }
  if (version > registry_schema_version)
    inv.warnings.push_back(Warning{"registry", WarningKind::unsupported,
                                   text::cat("registry JSON has schema_version ", version, ", newer than ",
                                             registry_schema_version, "; fields this version does not know were skipped")});
  return registry;
}

}  // namespace hwaccel
