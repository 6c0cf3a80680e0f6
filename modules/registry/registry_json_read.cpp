// The registry's JSON reader: each type's members are one table (the key and
// the member it fills), read by one object reader. Every field is optional
// unless its table says it is required; unknown fields are skipped so that a
// newer writer's output still reads.
module;
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <array>
#include <tuple>
#include <utility>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <simdjson.h>
#include "json_input.hpp"
module hwaccel.registry;

namespace hwaccel {

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
Path at_index(const Path& parent, std::size_t index) { return Path{&parent, {}, index, true}; }

// Keys are short (at most about 30 bytes): compared a word at a time, in
// line, the last word overlapping the one before it.
template <class Word>
inline Word word_at(const char* p) noexcept {
  Word w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

inline bool same_key(std::string_view a, std::string_view b) noexcept {
  const std::size_t n = a.size();
  if (n != b.size()) return false;
  const char* p = a.data();
  const char* q = b.data();
  if (n >= 8) {
    for (std::size_t i = 0; i + 8 < n; i += 8)
      if (word_at<std::uint64_t>(p + i) != word_at<std::uint64_t>(q + i)) return false;
    return word_at<std::uint64_t>(p + n - 8) == word_at<std::uint64_t>(q + n - 8);
  }
  if (n >= 4)
    return word_at<std::uint32_t>(p) == word_at<std::uint32_t>(q) &&
           word_at<std::uint32_t>(p + n - 4) == word_at<std::uint32_t>(q + n - 4);
  for (std::size_t i = 0; i < n; ++i)
    if (p[i] != q[i]) return false;
  return true;
}

template <class>
struct member_pointer;
template <class Owner, class M>
struct member_pointer<M Owner::*> {
  using owner = Owner;
  using type = M;
};
template <auto Field>
using owner_of = typename member_pointer<decltype(Field)>::owner;

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

enum class Need : bool { optional, required };

// A member read by the Reader's overload for its type.
template <auto Field>
struct Plain {
  std::string_view key;
  Need need = Need::optional;
  template <class Reader>
  bool read(Reader& r, element v, const Path& p, owner_of<Field>& out) const {
    return r.read(v, p, out.*Field);
  }
};

template <auto Field>
constexpr Plain<Field> field(std::string_view key, Need need = Need::optional) {
  return {key, need};
}

// A member holding an enum (or an optional one), read by its name parser.
template <auto Field, auto Parse>
struct Named {
  std::string_view key;
  Need need = Need::optional;
  template <class Reader>
  bool read(Reader& r, element v, const Path& p, owner_of<Field>& out) const {
    auto& member = out.*Field;
    if constexpr (is_optional<std::remove_reference_t<decltype(member)>>::value) {
      if (v.is_null()) {
        member.reset();
        return true;
      }
      return r.read_enum(v, p, member.emplace(), Parse);
    } else {
      return r.read_enum(v, p, member, Parse);
    }
  }
};

template <auto Field, auto Parse>
constexpr Named<Field, Parse> named(std::string_view key, Need need = Need::optional) {
  return {key, need};
}

// A key the writer derives from other members (a PCIe link's generation
// from its speed): not read back, named so that it is passed over in order.
template <class T>
struct Derived {
  std::string_view key;
  Need need = Need::optional;
  template <class Reader>
  bool read(Reader&, element, const Path&, T&) const {
    return true;
  }
};

// A type's members: each one's key, and what reads its value. The members
// are types of their own, so that the Reader's dispatch on a found key
// compiles to direct (inlined) reads rather than calls through pointers.
template <class T, class... Fields>
struct Table {
  std::tuple<Fields...> fields;
  std::array<std::string_view, sizeof...(Fields)> keys;
  std::uint64_t required = 0;  // bit i: the object must have keys[i]
};

template <class T, class... Fields>
constexpr Table<T, Fields...> table(Fields... fields) {
  static_assert(sizeof...(Fields) <= 64, "a table's required set is one 64-bit mask");
  std::uint64_t required = 0;
  std::size_t i = 0;
  ((required |= fields.need == Need::required ? std::uint64_t{1} << i : 0, ++i), ...);
  return {{fields...}, {fields.key...}, required};
}

constexpr auto pcie_table = table<PcieLink>(
    Derived<PcieLink>{"current_generation"},
    Derived<PcieLink>{"max_generation"},
    field<&PcieLink::current_speed_gts>("current_speed_gts"),
    field<&PcieLink::max_speed_gts>("max_speed_gts"),
    field<&PcieLink::current_width>("current_width"),
    field<&PcieLink::max_width>("max_width"),
    Derived<PcieLink>{"max_bandwidth_gbps"}
);

constexpr auto partition_table = table<DevicePartition>(
    field<&DevicePartition::id>("id"),
    field<&DevicePartition::index>("index"),
    field<&DevicePartition::profile>("profile"),
    field<&DevicePartition::uuid>("uuid"),
    field<&DevicePartition::gpu_instance_id>("gpu_instance_id"),
    field<&DevicePartition::compute_instance_id>("compute_instance_id"),
    field<&DevicePartition::memory_bytes>("memory_bytes"),
    field<&DevicePartition::compute_units>("compute_units"),
    field<&DevicePartition::visible>("visible"),
    field<&DevicePartition::runtime_index>("runtime_index")
);

// In the writer's order (write_device), which the lookup is fastest for.
constexpr auto device_table = table<DeviceProfile>(
    field<&DeviceProfile::id>("id", Need::required),
    named<&DeviceProfile::backend, &parse_backend>("backend", Need::required),
    named<&DeviceProfile::family, &parse_family>("family"),
    field<&DeviceProfile::index>("index"),
    field<&DeviceProfile::name>("name"),
    field<&DeviceProfile::vendor>("vendor"),
    field<&DeviceProfile::uuid>("uuid"),
    field<&DeviceProfile::pci_bus_id>("pci_bus_id"),
    field<&DeviceProfile::numa_node>("numa_node"),
    field<&DeviceProfile::cpu_affinity>("cpu_affinity"),
    field<&DeviceProfile::memory_bytes>("memory_bytes"),
    field<&DeviceProfile::memory_free_bytes>("memory_free_bytes"),
    field<&DeviceProfile::memory_used_bytes>("memory_used_bytes"),
    named<&DeviceProfile::memory_kind, &parse_memory_kind>("memory_kind"),
    field<&DeviceProfile::shared_memory_bytes>("shared_memory_bytes"),
    field<&DeviceProfile::memory_bandwidth_gbps>("memory_bandwidth_gbps"),
    field<&DeviceProfile::driver_version>("driver_version"),
    field<&DeviceProfile::firmware_version>("firmware_version"),
    field<&DeviceProfile::compute_capability>("compute_capability"),
    field<&DeviceProfile::architecture>("architecture"),
    field<&DeviceProfile::compute_units>("compute_units"),
    field<&DeviceProfile::pcie>("pcie"),
    field<&DeviceProfile::power_watts>("power_watts"),
    field<&DeviceProfile::power_limit_watts>("power_limit_watts"),
    field<&DeviceProfile::temperature_c>("temperature_c"),
    field<&DeviceProfile::utilization_percent>("utilization_percent"),
    field<&DeviceProfile::integrated>("integrated"),
    field<&DeviceProfile::available>("available"),
    field<&DeviceProfile::visible>("visible"),
    field<&DeviceProfile::runtime_index>("runtime_index"),
    field<&DeviceProfile::partitions>("partitions"),
    field<&DeviceProfile::spec_id>("spec_id"),
    field<&DeviceProfile::properties>("properties")
);

constexpr auto numa_table = table<NumaNode>(
    field<&NumaNode::id>("id"),
    field<&NumaNode::cpulist>("cpulist"),
    field<&NumaNode::memory_bytes>("memory_bytes")
);

constexpr auto cpu_table = table<CpuInfo>(
    field<&CpuInfo::model_name>("model_name"),
    field<&CpuInfo::vendor>("vendor"),
    field<&CpuInfo::architecture>("architecture"),
    field<&CpuInfo::sockets>("sockets"),
    field<&CpuInfo::physical_cores>("physical_cores"),
    field<&CpuInfo::logical_cores>("logical_cores"),
    field<&CpuInfo::isa_features>("isa_features"),
    field<&CpuInfo::numa_nodes>("numa_nodes"),
    field<&CpuInfo::memory_total_bytes>("memory_total_bytes"),
    field<&CpuInfo::memory_available_bytes>("memory_available_bytes"),
    field<&CpuInfo::cgroup_memory_limit_bytes>("cgroup_memory_limit_bytes")
);

constexpr auto cloud_table = table<CloudInstance>(
    field<&CloudInstance::provider>("provider"),
    field<&CloudInstance::instance_type>("instance_type"),
    field<&CloudInstance::product_name>("product_name")
);

constexpr auto environment_table = table<Environment>(
    field<&Environment::container>("container"),
    field<&Environment::kubernetes>("kubernetes"),
    field<&Environment::kubernetes_namespace>("kubernetes_namespace"),
    field<&Environment::wsl>("wsl"),
    field<&Environment::wsl_version>("wsl_version"),
    field<&Environment::gpu_paravirtualization>("gpu_paravirtualization"),
    field<&Environment::virtual_machine>("virtual_machine"),
    field<&Environment::hypervisor>("hypervisor"),
    field<&Environment::cloud>("cloud"),
    field<&Environment::visible_devices_env>("visible_devices_env")
);

constexpr auto storage_table = table<StorageDevice>(
    field<&StorageDevice::name>("name"),
    named<&StorageDevice::kind, &parse_storage_kind>("kind"),
    field<&StorageDevice::size_bytes>("size_bytes"),
    field<&StorageDevice::model>("model"),
    field<&StorageDevice::pci_bus_id>("pci_bus_id"),
    field<&StorageDevice::numa_node>("numa_node"),
    field<&StorageDevice::read_bandwidth_gbps>("read_bandwidth_gbps"),
    field<&StorageDevice::bandwidth_source>("bandwidth_source"),
    field<&StorageDevice::filesystem>("filesystem"),
    field<&StorageDevice::mount_points>("mount_points")
);

constexpr auto network_table = table<NetworkPort>(
    field<&NetworkPort::device>("device"),
    field<&NetworkPort::port>("port"),
    field<&NetworkPort::kind>("kind"),
    field<&NetworkPort::state>("state"),
    field<&NetworkPort::rate_gbps>("rate_gbps"),
    field<&NetworkPort::link_layer>("link_layer"),
    field<&NetworkPort::pci_bus_id>("pci_bus_id"),
    field<&NetworkPort::numa_node>("numa_node"),
    field<&NetworkPort::netdev>("netdev"),
    field<&NetworkPort::near_devices>("near_devices"),
    named<&NetworkPort::affinity, &parse_link_kind>("affinity"),
    field<&NetworkPort::phys_state>("phys_state"),
    field<&NetworkPort::driver>("driver")
);

constexpr auto system_table = table<SystemInfo>(
    field<&SystemInfo::host>("host"),
    field<&SystemInfo::cpu>("cpu"),
    field<&SystemInfo::environment>("environment"),
    field<&SystemInfo::storage>("storage"),
    field<&SystemInfo::network>("network")
);

constexpr auto link_table = table<DeviceLink>(
    field<&DeviceLink::a>("a"),
    field<&DeviceLink::b>("b"),
    named<&DeviceLink::kind, &parse_link_kind>("kind"),
    field<&DeviceLink::lanes>("lanes"),
    field<&DeviceLink::hops>("hops"),
    field<&DeviceLink::bandwidth_gbps>("bandwidth_gbps"),
    field<&DeviceLink::source>("source")
);

constexpr auto interconnect_table = table<Interconnect>(
    field<&Interconnect::kind>("kind"),
    field<&Interconnect::name>("name"),
    field<&Interconnect::device_ids>("device_ids"),
    field<&Interconnect::bandwidth_gbps>("bandwidth_gbps"),
    field<&Interconnect::switch_count>("switch_count"),
    field<&Interconnect::source>("source")
);

constexpr auto warning_table = table<Warning>(
    field<&Warning::backend>("backend"),
    named<&Warning::kind, &parse_warning_kind>("kind"),
    field<&Warning::message>("message")
);

// "timings_us": an object of backend name -> microseconds.
struct Timings {
  std::string_view key = "timings_us";
  Need need = Need::optional;
  template <class Reader>
  bool read(Reader& r, element e, const Path& path, Inventory& inv) const {
    object o;
    if (e.get_object().get(o) != simdjson::SUCCESS) return r.fail_at(path, "must be an object");
    for (auto [k, v] : o) {
      std::uint64_t us = 0;
      if (!r.read(v, at_member(path, k), us)) return false;
      inv.timings.push_back(BackendTiming{std::string(k), std::chrono::microseconds(static_cast<std::int64_t>(us))});
    }
    return true;
  }
};

constexpr auto inventory_table = table<Inventory>(
    field<&Inventory::devices>("devices"),
    field<&Inventory::links>("links"),
    field<&Inventory::interconnects>("interconnects"),
    field<&Inventory::system>("system"),
    field<&Inventory::warnings>("warnings"),
    Timings{}
);

constexpr const auto& table_of(std::type_identity<PcieLink>) { return pcie_table; }
constexpr const auto& table_of(std::type_identity<DevicePartition>) { return partition_table; }
constexpr const auto& table_of(std::type_identity<DeviceProfile>) { return device_table; }
constexpr const auto& table_of(std::type_identity<NumaNode>) { return numa_table; }
constexpr const auto& table_of(std::type_identity<CpuInfo>) { return cpu_table; }
constexpr const auto& table_of(std::type_identity<CloudInstance>) { return cloud_table; }
constexpr const auto& table_of(std::type_identity<Environment>) { return environment_table; }
constexpr const auto& table_of(std::type_identity<StorageDevice>) { return storage_table; }
constexpr const auto& table_of(std::type_identity<NetworkPort>) { return network_table; }
constexpr const auto& table_of(std::type_identity<SystemInfo>) { return system_table; }
constexpr const auto& table_of(std::type_identity<DeviceLink>) { return link_table; }
constexpr const auto& table_of(std::type_identity<Interconnect>) { return interconnect_table; }
constexpr const auto& table_of(std::type_identity<Warning>) { return warning_table; }
constexpr const auto& table_of(std::type_identity<Inventory>) { return inventory_table; }

template <class T>
concept Tabled = requires { table_of(std::type_identity<T>{}); };

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
  bool read(element e, const Path& path, bool& out) {
    if (e.get_bool().get(out) != simdjson::SUCCESS) return fail_at(path, "must be true or false");
    return true;
  }
  template <class T>
    requires(std::is_unsigned_v<T> && !std::is_same_v<T, bool>)
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
  bool read(element e, const Path& path, std::optional<std::string>& out) {
    if (e.is_null()) {
      out.reset();
      return true;
    }
    std::string_view v;
    if (e.get_string().get(v) != simdjson::SUCCESS) return fail_at(path, "must be a string");
    out.emplace(v);
    return true;
  }
  template <class T>
  bool read(element e, const Path& path, std::optional<T>& out) {
    if (e.is_null()) {
      out.reset();
      return true;
    }
    if (!read(e, path, out.emplace())) return false;
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
  template <class T>
  bool read(element e, const Path& path, std::vector<T>& out) {
    array a;
    if (e.get_array().get(a) != simdjson::SUCCESS)
      return fail_at(path, std::is_same_v<T, std::string> ? "must be an array of strings" : "must be an array");
    out.reserve(out.size() + a.size());
    std::size_t i = 0;
    for (element item : a)
      if (!read(item, at_index(path, i++), out.emplace_back())) return false;
    return true;
  }

  // An object's members in turn, each key and value taken off the tape once:
  // the in-order pass below tries several members against the same key.
  struct Cursor {
    object::iterator it, end;
    std::string_view key;
    element value;
    bool more = false;

    Cursor(object::iterator from, object::iterator to) : it(from), end(to) { load(); }
    void load() {
      more = it != end;
      if (more) {
        key = it.key();
        value = it.value();
      }
    }
    void next() {
      ++it;
      load();
    }
  };

  // An object of a type with a table. Writers give the keys in table order,
  // so each member in turn is matched against the next key, its own key a
  // constant; a key out of that order (or unknown) is then looked up.
  template <Tabled T>
  bool read(element e, const Path& path, T& out) {
    object o;
    if (e.get_object().get(o) != simdjson::SUCCESS) return fail_at(path, "must be an object");
    const auto& table = table_of(std::type_identity<T>{});
    constexpr std::size_t n = std::tuple_size_v<std::remove_cvref_t<decltype(table.fields)>>;
    std::uint64_t seen = 0;
    Cursor at(o.begin(), o.end());
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (read_in_order<I>(table, at, path, out, seen), ...);
    }(std::make_index_sequence<n>{});
    for (; !failed && at.more; at.next()) {
      for (std::size_t i = 0; i < n; ++i) {
        if (!same_key(table.keys[i], at.key)) continue;
        if (read_member<0, n>(i, table.fields, at.value, at_member(path, at.key), out)) seen |= std::uint64_t{1} << i;
        break;
      }  // a key no entry names is a field of a newer schema
    }
    if (failed) return false;
    if (const std::uint64_t missing = table.required & ~seen)
      for (std::size_t i = 0; i < n; ++i)
        if (missing & (std::uint64_t{1} << i)) return fail_at(path, text::cat("has no \"", table.keys[i], "\""));
    return true;
  }

  // Member I, when the next key is its own.
  template <std::size_t I, class Table, class T>
  void read_in_order(const Table& table, Cursor& at, const Path& path, T& out, std::uint64_t& seen) {
    if (failed || !at.more) return;
    const auto& member = std::get<I>(table.fields);
    if (!same_key(at.key, member.key)) return;
    if (member.read(*this, at.value, at_member(path, at.key), out)) seen |= std::uint64_t{1} << I;
    at.next();
  }

  // Reads the member at `i` of `fields`, chosen by halving [Lo, Hi): a few
  // compares, and each member's read inlined.
  template <std::size_t Lo, std::size_t Hi, class Fields, class T>
  bool read_member(std::size_t i, const Fields& fields, element v, const Path& p, T& out) {
    if constexpr (Hi - Lo == 1) {
      return std::get<Lo>(fields).read(*this, v, p, out);
    } else {
      constexpr std::size_t mid = (Lo + Hi) / 2;
      return i < mid ? read_member<Lo, mid>(i, fields, v, p, out) : read_member<mid, Hi>(i, fields, v, p, out);
    }
  }

  template <class Enum>
  bool read_enum(element e, const Path& path, Enum& out, Result<Enum> (*parse)(std::string_view)) {
    std::string_view v;
    if (e.get_string().get(v) != simdjson::SUCCESS) return fail_at(path, "must be a string");
    const auto parsed = parse(v);
    if (!parsed) return fail_at(path, text::cat("has unknown value \"", text::excerpt(v, 40), "\""));
    out = *parsed;
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
  std::uint64_t version = 0;
  if (root["schema_version"].get_uint64().get(version) != simdjson::SUCCESS || version == 0 || version > 1'000'000)
    return fail(ErrorKind::parse_error, "registry JSON: missing or invalid \"schema_version\"");
  registry.schema_version_ = static_cast<std::uint32_t>(version);

  Reader r;
  if (!r.read(doc, Path{}, registry.inventory_)) return fail(r.error);
  if (version > registry_schema_version)
    registry.inventory_.warnings.push_back(
        Warning{"registry", WarningKind::unsupported,
                text::cat("registry JSON has schema_version ", version, ", newer than ", registry_schema_version,
                          "; fields this version does not know were skipped")});
  return registry;
}

namespace plugin_detail {

Result<Inventory> read_inventory_object(std::string_view json, std::string_view what) {
  simdjson::dom::parser parser;
  element doc;
  if (const auto err = json_input::parse(parser, json).get(doc); err != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat(what, " is not valid JSON: ", simdjson::error_message(err)));
  if (!doc.is_object()) return fail(ErrorKind::parse_error, text::cat(what, " must be a JSON object"));
  Inventory inventory;
  Reader r;
  if (!r.read(doc, Path{}, inventory)) {
    r.error.message.replace(0, std::string_view("registry JSON").size(), what);
    return fail(r.error);
  }
  return inventory;
}

}  // namespace plugin_detail

}  // namespace hwaccel
