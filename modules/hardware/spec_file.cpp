// Device-spec files: users' own (`--device-specs FILE`, $HWACCEL_DEVICE_SPECS),
// products the built-in table does not know, in the table's own terms; and
// the built-in table itself, data/device-specs.json, in the same format.
module;
#include <cmath>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.hardware;
import hwaccel.json_fields;

namespace hwaccel {
namespace {

using json::Field;

constexpr double max_memory_gib = 16384;       // 16 TiB
constexpr double max_bandwidth_gbps = 100000;  // 100 TB/s
constexpr double max_tflops = 100000;
constexpr double max_tdp_watts = 100000;
constexpr std::size_t max_identifier = 64;     // id, name, compute_capability, fabric kind

constexpr Field spec_root_fields[] = {
    Field::text("format"),
    Field::whole("version"),
    Field::text("description"),
    Field::array("devices", json::Type::object, max_device_spec_entries, json::required),
};

// Every key an entry may hold; anything else is refused (a typo would
// otherwise drop a figure without a word).
constexpr Field spec_entry_fields[] = {
    Field::text("id", json::required, max_identifier),
    Field::text("name", json::required, max_identifier),
    Field::text("product"),
    Field::text("vendor", json::required),
    Field::text("backend", json::required),
    Field::text("family"),
    Field::text("architecture", json::required),
    Field::text("compute_capability", json::Need::optional, max_identifier),
    Field::positive("memory_gib", max_memory_gib, json::required),
    Field::text("memory_kind"),
    Field::positive("memory_bandwidth_gbps", max_bandwidth_gbps, json::required),
    Field::positive("fp32_tflops", max_tflops),
    Field::positive("bf16_tflops", max_tflops),
    Field::positive("fp16_tflops", max_tflops),
    Field::positive("fp8_tflops", max_tflops),
    Field::positive("int8_tops", max_tflops),
    Field::object("fabric"),
    Field::whole("pcie_generation", 1, 6),
    Field::whole("pcie_width", 1, 32),
    Field::positive("tdp_watts", max_tdp_watts),
    Field::hex("pci_vendor_id", 1, 0xffff),
    Field::array("pci_device_ids", json::Type::hex, 4, json::Need::optional, 1, 0xffff),
    Field::text("match"),
    Field::whole("devices_per_package", 1, 64),
    Field::array("memory_options_gib", json::Type::whole, 6, json::Need::optional, 1, 65535),
    Field::text("source"),
    Field::text("notes"),
};

constexpr Field spec_fabric_fields[] = {
    Field::text("kind", json::required, max_identifier),
    Field::text("name"),
    Field::positive("bandwidth_gbps", max_bandwidth_gbps),
    Field::whole("domain_size", 1, 65536),
};
constexpr std::string_view fabric_kinds[] = {"nvlink", "xgmi", "ici", "neuronlink", "roce"};

// The pattern of an entry without "match": chosen only by name (`--devices
// M3-Max-30c`); no detected name satisfies it, since a name's words never
// hold '(' or '-'.
constexpr std::string_view name_only_pattern = "(by-name-only)";

// Letters, digits, '.', '_' and '-', starting with a letter: what `--devices`
// can name without its own separators ('+', ',', "8x", parentheses).
bool valid_spec_identifier(std::string_view s) {
  if (s.empty() || s.size() > max_identifier) return false;
  const auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (!letter(s.front())) return false;
  for (char c : s)
    if (!letter(c) && !(c >= '0' && c <= '9') && c != '.' && c != '_' && c != '-') return false;
  return true;
}

// One entry, its strings kept in `strings`.
Result<DeviceSpec> read_spec_entry(const json::Object& o, std::deque<std::string>& strings) {
  const auto own = [&](std::string_view s) -> std::string_view { return s.empty() ? s : strings.emplace_back(s); };
  DeviceSpec s;
  for (const std::string_view key : {"id", "name"})
    if (!valid_spec_identifier(o.text(key)))
      return fail(o.error(key, "must start with a letter and hold only letters, digits, '.', '_' and '-'"));
  s.id = own(o.text("id"));
  s.name = own(o.text("name"));
  s.product = o.has("product") ? own(o.text("product")) : s.name;
  s.vendor = own(o.text("vendor"));

  const std::string_view backend = o.text("backend");
  const auto b = parse_backend(backend);
  if (!b || *b == Backend::cpu)
    return fail(o.error("backend", text::cat("\"", text::excerpt(backend), "\" is not an accelerator backend (cuda, rocm, ...)")));
  s.backend = *b;
  if (o.has("family")) {
    const auto f = parse_family(o.text("family"));
    if (!f || *f == Family::cpu) return fail(o.error("family", "must be gpu, npu, tpu or asic"));
    s.family = *f;
  }
  s.architecture = own(o.text("architecture"));
  s.compute_capability = own(o.text("compute_capability"));

  s.memory_bytes = static_cast<std::uint64_t>(std::llround(*o.number("memory_gib") * text::bytes_per_gib));
  if (o.has("memory_kind")) {
    const auto k = parse_memory_kind(o.text("memory_kind"));
    if (!k) return fail(o.error("memory_kind", "must be dedicated, unified or carve_out"));
    s.memory_kind = *k;
  }
  s.memory_bandwidth_gbps = *o.number("memory_bandwidth_gbps");
  s.fp32_tflops = o.number("fp32_tflops");
  s.bf16_tflops = o.number("bf16_tflops");
  s.fp16_tflops = o.number("fp16_tflops");
  s.fp8_tflops = o.number("fp8_tflops");
  s.int8_tops = o.number("int8_tops");

  if (const auto fabric = o.value("fabric")) {
    auto f = json::Object::read(*fabric, spec_fabric_fields, text::cat(o.where(), ": fabric"));
    if (!f) return fail(f.error());
    const std::string_view kind = f->text("kind");
    bool known = false;
    for (auto k : fabric_kinds) known |= kind == k;
    if (!known) return fail(f->error("kind", "must be nvlink, xgmi, ici, neuronlink or roce"));
    const std::string_view fkind = own(kind);
    s.fabric = FabricSpec{fkind, f->has("name") ? own(f->text("name")) : fkind, f->number("bandwidth_gbps"),
                          static_cast<std::uint32_t>(f->whole("domain_size").value_or(1))};
  }
  s.pcie_generation = static_cast<std::uint8_t>(o.whole("pcie_generation").value_or(0));
  s.pcie_width = static_cast<std::uint8_t>(o.whole("pcie_width").value_or(0));
  s.tdp_watts = o.number("tdp_watts");
  s.pci_vendor_id = static_cast<std::uint16_t>(o.whole("pci_vendor_id").value_or(0));
  const auto ids = o.wholes("pci_device_ids");
  for (std::size_t i = 0; i < ids.size(); ++i) s.pci_device_ids[i] = static_cast<std::uint16_t>(ids[i]);
  if (!ids.empty() && s.pci_vendor_id == 0) return fail(o.error("pci_device_ids", "needs \"pci_vendor_id\""));

  // A pattern as the table writes them, lower-case; none: chosen by name only.
  s.match = o.has("match") ? own(text::lower(o.text("match"))) : name_only_pattern;
  s.devices_per_package = static_cast<std::uint32_t>(o.whole("devices_per_package").value_or(1));
  const auto options = o.wholes("memory_options_gib");
  for (std::size_t i = 0; i < options.size(); ++i) s.memory_options_gib[i] = static_cast<std::uint16_t>(options[i]);
  if (!options.empty() && s.memory_kind != MemoryKind::unified)
    return fail(o.error("memory_options_gib", "needs \"memory_kind\": \"unified\" (fixed memory has one size)"));
  s.source = own(o.text("source"));
  s.notes = own(o.text("notes"));
  return s;
}

}  // namespace

Result<DeviceSpecSet> parse_device_spec_text(std::string_view json, std::string_view origin, SpecFileKind kind) {
  auto file = json::read_data_file(json, origin, {"hwaccel-device-specs", max_device_specs_bytes, "a device-spec file"},
                                   spec_root_fields);
  if (!file) return fail(file.error());
  const json::Object& root = file->root;

  auto storage = std::make_shared<DeviceSpecSet::Storage>();
  storage->origin = std::string(origin);
  const auto entries = root.values("devices");
  storage->specs.reserve(entries.size());
  std::map<std::string, std::size_t, std::less<>> owner;  // every id's and name's key -> the entry it names
  for (std::size_t index = 0; index < entries.size(); ++index) {
    auto o = json::Object::read(entries[index], spec_entry_fields,
                                json::entry_where(origin, "devices", index, entries[index], "id"));
    if (!o) return fail(o.error());
    auto spec = read_spec_entry(*o, storage->strings);
    if (!spec) return fail(spec.error());
    const std::pair<std::string_view, std::string_view> identifiers[] = {{"id", spec->id}, {"name", spec->name}};
    if (kind == SpecFileKind::user) {
      // A file adds devices; it may restate a built-in entry (a copy of the
      // installed table), never change one.
      for (const auto& [field, value] : identifiers)
        if (const DeviceSpec* builtin = find_spec(value); builtin && !(*builtin == *spec))
          return fail(o->error(field, text::cat("\"", value, "\" is the built-in ", builtin->id, " (", builtin->product,
                                                "); a file adds devices, it does not replace them")));
    }
    for (const auto& [field, value] : identifiers)
      if (const auto [it, inserted] = owner.try_emplace(text::identifier_key(value), storage->specs.size());
          !inserted && it->second != storage->specs.size())
        return fail(o->error(field, text::cat("\"", value, "\" is already entry ", storage->specs[it->second].id,
                                              " of this file")));
    storage->specs.push_back(*spec);
  }
  if (storage->specs.empty()) return fail(ErrorKind::invalid_input, text::cat(origin, " lists no devices"));
  return DeviceSpecSet(std::move(storage));
}

Result<DeviceSpecSet> parse_device_specs(std::string_view json, std::string_view origin) {
  return parse_device_spec_text(json, origin, SpecFileKind::user);
}

Result<DeviceSpecSet> read_device_specs(const std::string& path) {
  auto content = read_small_file(path, max_device_specs_bytes, "a device-spec file");
  if (!content) return fail(content.error());
  return parse_device_specs(*content, path);
}

}  // namespace hwaccel
