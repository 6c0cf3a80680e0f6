// User device-spec files (`--device-specs FILE`, $HWACCEL_DEVICE_SPECS):
// products the built-in table does not know, in the table's own terms.
module;
#include <cmath>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <simdjson.h>
#include "json_input.hpp"
module hwaccel.hardware;


namespace hwaccel {
namespace {

using simdjson::dom::element;
using simdjson::dom::object;

constexpr double max_memory_gib = 16384;         // 16 TiB
constexpr double max_bandwidth_gbps = 100000;    // 100 TB/s
constexpr double max_tflops = 100000;
constexpr std::size_t max_text = 4096;           // source, notes, match
constexpr std::size_t max_identifier = 64;       // id, name

// Every key an entry may hold; anything else is refused (a typo would
// otherwise drop a figure without a word).
constexpr std::string_view entry_keys[] = {
    "id",          "name",         "product",       "vendor",        "backend",           "family",
    "architecture", "compute_capability", "memory_gib", "memory_kind", "memory_bandwidth_gbps",
    "fp32_tflops", "bf16_tflops",  "fp16_tflops",   "fp8_tflops",    "int8_tops",         "fabric",
    "match",       "pci_vendor_id", "pci_device_ids", "devices_per_package", "pcie_generation", "pcie_width",
    "tdp_watts",   "source",       "notes"};
constexpr std::string_view fabric_keys[] = {"kind", "name", "bandwidth_gbps", "domain_size"};
constexpr std::string_view fabric_kinds[] = {"nvlink", "xgmi", "ici", "neuronlink", "roce"};

template <std::size_t N>
bool known(const std::string_view (&keys)[N], std::string_view key) {
  for (auto k : keys)
    if (k == key) return true;
  return false;
}

// Reads one entry's fields, naming the entry and field in every error, and
// keeps the strings it returns in the set's storage.
struct EntryReader {
  object entry;
  std::string where;  // `devices.json: devices[3] "my-gpu-48gb"`
  std::deque<std::string>& strings;

  Error error(ErrorKind kind, std::string_view field, std::string_view what) const {
    return Error{kind, text::cat(where, ": \"", field, "\" ", what)};
  }

  std::optional<element> get(std::string_view key) const {
    element e;
    if (entry[key].get(e) != simdjson::SUCCESS || e.is_null()) return std::nullopt;
    return e;
  }

  std::string_view own(std::string_view s) { return strings.emplace_back(s); }

  // A string field; an empty view when optional and absent.
  Result<std::string_view> string(std::string_view key, bool required, std::size_t max = max_text) {
    const auto e = get(key);
    if (!e) {
      if (!required) return std::string_view{};
      return fail(Error{ErrorKind::invalid_input, text::cat(where, ": missing \"", key, "\"")});
    }
    std::string_view v;
    if (e->get_string().get(v) != simdjson::SUCCESS)
      return fail(error(ErrorKind::invalid_input, key, "must be a string"));
    v = text::trim(v);
    if (v.empty()) return fail(error(ErrorKind::invalid_input, key, "is empty"));
    if (v.size() > max) return fail(error(ErrorKind::invalid_input, key, text::cat("is longer than ", max, " characters")));
    for (char c : v)
      if (static_cast<unsigned char>(c) < 0x20) return fail(error(ErrorKind::invalid_input, key, "holds a control character"));
    return own(v);
  }

  // A number in (0, high]; empty when optional and absent.
  Result<std::optional<double>> number(std::string_view key, double high, bool required) const {
    const auto e = get(key);
    if (!e) {
      if (!required) return std::optional<double>();
      return fail(Error{ErrorKind::invalid_input, text::cat(where, ": missing \"", key, "\"")});
    }
    double v = 0;
    std::int64_t i = 0;
    std::uint64_t u = 0;
    if (e->get_double().get(v) == simdjson::SUCCESS) {
    } else if (e->get_int64().get(i) == simdjson::SUCCESS) {
      v = static_cast<double>(i);
    } else if (e->get_uint64().get(u) == simdjson::SUCCESS) {
      v = static_cast<double>(u);
    } else {
      return fail(error(ErrorKind::invalid_input, key, "must be a number"));
    }
    if (!std::isfinite(v) || !(v > 0) || v > high)
      return fail(error(ErrorKind::invalid_input, key, text::cat("must be a positive number at most ", static_cast<std::uint64_t>(high), ", got ", v)));
    return std::optional<double>(v);
  }

  // A whole number in [low, high]; `fallback` when absent.
  Result<std::uint64_t> whole(std::string_view key, std::uint64_t low, std::uint64_t high, std::uint64_t fallback) const {
    const auto e = get(key);
    if (!e) return fallback;
    std::uint64_t u = 0;
    if (e->get_uint64().get(u) != simdjson::SUCCESS || u < low || u > high)
      return fail(error(ErrorKind::invalid_input, key, text::cat("must be a whole number in ", low, "..", high)));
    return u;
  }

  // A 16-bit PCI id, "0x10de" or 4318; nonzero.
  Result<std::uint16_t> pci_id(std::string_view key, element e) const {
    std::uint64_t u = 0;
    std::string_view s;
    if (e.get_string().get(s) == simdjson::SUCCESS) {
      const auto v = text::parse_hex(s);
      if (!v) return fail(error(ErrorKind::invalid_input, key, text::cat("must be a hex id like \"0x10de\", got \"", text::excerpt(s), "\"")));
      u = *v;
    } else if (e.get_uint64().get(u) != simdjson::SUCCESS) {
      return fail(error(ErrorKind::invalid_input, key, "must be a hex string like \"0x10de\""));
    }
    if (u == 0 || u > 0xffff) return fail(error(ErrorKind::invalid_input, key, "must be a PCI id in 0x0001..0xffff"));
    return static_cast<std::uint16_t>(u);
  }
};

// Letters, digits, '.', '_' and '-', starting with a letter: what `--devices`
// can name without its own separators ('+', ',', "8x", parentheses).
bool valid_identifier(std::string_view s) {
  if (s.empty() || s.size() > max_identifier) return false;
  const auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (!letter(s.front())) return false;
  for (char c : s)
    if (!letter(c) && !(c >= '0' && c <= '9') && c != '.' && c != '_' && c != '-') return false;
  return true;
}

// Rejects duplicate keys and keys outside `keys` in `o`.
template <std::size_t N>
Result<void> check_keys(object o, const std::string_view (&keys)[N], std::string_view where) {
  std::set<std::string_view> seen;
  for (auto field : o) {
    const std::string_view key = field.key;
    if (!known(keys, key))
      return fail(ErrorKind::invalid_input, text::cat(where, ": unknown field \"", text::excerpt(key), "\""));
    if (!seen.insert(key).second)
      return fail(ErrorKind::invalid_input, text::cat(where, ": \"", text::excerpt(key), "\" given twice"));
  }
  return {};
}

Result<DeviceSpec> read_entry(EntryReader& r) {
  if (auto keys = check_keys(r.entry, entry_keys, r.where); !keys) return fail(keys.error());
  DeviceSpec s;
  auto id = r.string("id", true, max_identifier);
  if (!id) return fail(id.error());
  if (!valid_identifier(*id))
    return fail(r.error(ErrorKind::invalid_input, "id", "must start with a letter and hold only letters, digits, '.', '_' and '-'"));
  s.id = *id;
  auto name = r.string("name", true, max_identifier);
  if (!name) return fail(name.error());
  if (!valid_identifier(*name))
    return fail(r.error(ErrorKind::invalid_input, "name", "must start with a letter and hold only letters, digits, '.', '_' and '-'"));
  s.name = *name;
  const std::pair<std::string_view, std::string_view> identifiers[] = {{"id", s.id}, {"name", s.name}};
  for (const auto& [field, value] : identifiers)
    if (const DeviceSpec* builtin = find_spec(value))
      return fail(r.error(ErrorKind::invalid_input, field,
                          text::cat("\"", value, "\" is the built-in ", builtin->id, " (", builtin->product,
                                    "); a file adds devices, it does not replace them")));

  auto product = r.string("product", false);
  if (!product) return fail(product.error());
  s.product = product->empty() ? s.name : *product;
  auto vendor = r.string("vendor", true);
  if (!vendor) return fail(vendor.error());
  s.vendor = *vendor;

  auto backend = r.string("backend", true);
  if (!backend) return fail(backend.error());
  const auto b = parse_backend(*backend);
  if (!b || *b == Backend::cpu)
    return fail(r.error(ErrorKind::invalid_input, "backend",
                        text::cat("\"", text::excerpt(*backend), "\" is not an accelerator backend (cuda, rocm, ...)")));
  s.backend = *b;
  auto family = r.string("family", false);
  if (!family) return fail(family.error());
  if (!family->empty()) {
    const auto f = parse_family(*family);
    if (!f || *f == Family::cpu)
      return fail(r.error(ErrorKind::invalid_input, "family", "must be gpu, npu, tpu or asic"));
    s.family = *f;
  }
  auto architecture = r.string("architecture", true);
  if (!architecture) return fail(architecture.error());
  s.architecture = *architecture;
  auto cc = r.string("compute_capability", false, max_identifier);
  if (!cc) return fail(cc.error());
  s.compute_capability = *cc;

  auto memory = r.number("memory_gib", max_memory_gib, true);
  if (!memory) return fail(memory.error());
  s.memory_bytes = static_cast<std::uint64_t>(std::llround(**memory * text::bytes_per_gib));
  auto kind = r.string("memory_kind", false);
  if (!kind) return fail(kind.error());
  if (!kind->empty()) {
    const auto k = parse_memory_kind(*kind);
    if (!k) return fail(r.error(ErrorKind::invalid_input, "memory_kind", "must be dedicated, unified or carve_out"));
    s.memory_kind = *k;
  }
  auto bandwidth = r.number("memory_bandwidth_gbps", max_bandwidth_gbps, true);
  if (!bandwidth) return fail(bandwidth.error());
  s.memory_bandwidth_gbps = **bandwidth;

  const std::pair<std::string_view, std::optional<double>*> rates[] = {{"fp32_tflops", &s.fp32_tflops},
                                                                        {"bf16_tflops", &s.bf16_tflops},
                                                                        {"fp16_tflops", &s.fp16_tflops},
                                                                        {"fp8_tflops", &s.fp8_tflops},
                                                                        {"int8_tops", &s.int8_tops}};
  for (const auto& [key, out] : rates) {
    auto v = r.number(key, max_tflops, false);
    if (!v) return fail(v.error());
    *out = *v;
  }

  if (const auto f = r.get("fabric")) {
    object fo;
    if (f->get_object().get(fo) != simdjson::SUCCESS)
      return fail(r.error(ErrorKind::invalid_input, "fabric", "must be an object"));
    const std::string where = text::cat(r.where, ": fabric");
    if (auto keys = check_keys(fo, fabric_keys, where); !keys) return fail(keys.error());
    EntryReader fr{fo, where, r.strings};
    auto fkind = fr.string("kind", true, max_identifier);
    if (!fkind) return fail(fkind.error());
    bool ok = false;
    for (auto k : fabric_kinds) ok |= *fkind == k;
    if (!ok) return fail(fr.error(ErrorKind::invalid_input, "kind", "must be nvlink, xgmi, ici, neuronlink or roce"));
    auto fname = fr.string("name", false);
    if (!fname) return fail(fname.error());
    auto fbw = fr.number("bandwidth_gbps", max_bandwidth_gbps, false);
    if (!fbw) return fail(fbw.error());
    auto domain = fr.whole("domain_size", 1, 65536, 1);
    if (!domain) return fail(domain.error());
    s.fabric = FabricSpec{*fkind, fname->empty() ? *fkind : *fname, *fbw, static_cast<std::uint32_t>(*domain)};
  }

  // A pattern as the table writes them, lower-case; none: chosen by name only.
  auto match = r.string("match", false);
  if (!match) return fail(match.error());
  s.match = match->empty() ? std::string_view("(by-name-only)") : r.own(text::lower(*match));

  if (const auto v = r.get("pci_vendor_id")) {
    auto id16 = r.pci_id("pci_vendor_id", *v);
    if (!id16) return fail(id16.error());
    s.pci_vendor_id = *id16;
  }
  if (const auto v = r.get("pci_device_ids")) {
    simdjson::dom::array ids;
    if (v->get_array().get(ids) != simdjson::SUCCESS)
      return fail(r.error(ErrorKind::invalid_input, "pci_device_ids", "must be an array of hex ids"));
    std::size_t n = 0;
    for (element e : ids) {
      if (n == s.pci_device_ids.size())
        return fail(r.error(ErrorKind::invalid_input, "pci_device_ids", text::cat("holds more than ", s.pci_device_ids.size(), " ids")));
      auto id16 = r.pci_id("pci_device_ids", e);
      if (!id16) return fail(id16.error());
      s.pci_device_ids[n++] = *id16;
    }
    if (n > 0 && s.pci_vendor_id == 0)
      return fail(r.error(ErrorKind::invalid_input, "pci_device_ids", "needs \"pci_vendor_id\""));
  }

  auto per_package = r.whole("devices_per_package", 1, 64, 1);
  if (!per_package) return fail(per_package.error());
  s.devices_per_package = static_cast<std::uint32_t>(*per_package);
  auto generation = r.whole("pcie_generation", 1, 6, 0);
  if (!generation) return fail(generation.error());
  s.pcie_generation = static_cast<std::uint8_t>(*generation);
  auto width = r.whole("pcie_width", 1, 32, 0);
  if (!width) return fail(width.error());
  s.pcie_width = static_cast<std::uint8_t>(*width);
  auto tdp = r.number("tdp_watts", 100000, false);
  if (!tdp) return fail(tdp.error());
  s.tdp_watts = *tdp;
  auto source = r.string("source", false);
  if (!source) return fail(source.error());
  s.source = *source;
  auto notes = r.string("notes", false);
  if (!notes) return fail(notes.error());
  s.notes = *notes;
  return s;
}

constexpr std::string_view root_keys[] = {"format", "version", "devices"};

}  // namespace

Result<DeviceSpecSet> parse_device_specs(std::string_view json, std::string_view origin) {
  if (json.size() > max_device_specs_bytes)
    return fail(ErrorKind::invalid_input, text::cat(origin, " is ", json.size(), " bytes; a device-spec file is at most ",
                                                    max_device_specs_bytes));
  simdjson::dom::parser parser;
  element doc;
  if (const auto err = json_input::parse(parser, json).get(doc); err != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat(origin, " is not valid JSON: ", simdjson::error_message(err)));
  object root;
  if (doc.get_object().get(root) != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat(origin, " must be a JSON object with a \"devices\" array"));
  if (auto keys = check_keys(root, root_keys, origin); !keys) return fail(keys.error());
  element e;
  if (root["format"].get(e) == simdjson::SUCCESS) {
    std::string_view format;
    if (e.get_string().get(format) != simdjson::SUCCESS || format != "hwaccel-device-specs")
      return fail(ErrorKind::invalid_input, text::cat(origin, ": \"format\" must be \"hwaccel-device-specs\""));
  }
  if (root["version"].get(e) == simdjson::SUCCESS) {
    std::uint64_t version = 0;
    if (e.get_uint64().get(version) != simdjson::SUCCESS || version != 1)
      return fail(ErrorKind::invalid_input, text::cat(origin, ": \"version\" must be 1"));
  }
  simdjson::dom::array entries;
  if (root["devices"].get_array().get(entries) != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat(origin, ": missing \"devices\" array"));

  auto storage = std::make_shared<DeviceSpecSet::Storage>();
  storage->origin = std::string(origin);
  std::size_t index = 0;
  for (element entry : entries) {
    if (index == max_device_spec_entries)
      return fail(ErrorKind::invalid_input, text::cat(origin, ": more than ", max_device_spec_entries, " devices"));
    EntryReader r{{}, {}, storage->strings};
    if (entry.get_object().get(r.entry) != simdjson::SUCCESS)
      return fail(ErrorKind::invalid_input, text::cat(origin, ": devices[", index, "] must be an object"));
    std::string_view id;
    r.where = r.entry["id"].get_string().get(id) == simdjson::SUCCESS
                  ? text::cat(origin, ": devices[", index, "] \"", text::excerpt(id), "\"")
                  : text::cat(origin, ": devices[", index, "]");
    auto spec = read_entry(r);
    if (!spec) return fail(spec.error());
    const std::pair<std::string_view, std::string_view> identifiers[] = {{"id", spec->id}, {"name", spec->name}};
    for (const auto& earlier : storage->specs)
      for (const auto& [field, value] : identifiers)
        if (text::same_identifier(earlier.id, value) || text::same_identifier(earlier.name, value))
          return fail(r.error(ErrorKind::invalid_input, field,
                              text::cat("\"", value, "\" is already entry ", earlier.id, " of this file")));
    storage->specs.push_back(*spec);
    ++index;
  }
  if (storage->specs.empty()) return fail(ErrorKind::invalid_input, text::cat(origin, " lists no devices"));
  return DeviceSpecSet(std::move(storage));
}

Result<DeviceSpecSet> read_device_specs(const std::string& path) {
  auto content = read_small_file(path, max_device_specs_bytes, "a device-spec file");
  if (!content) return fail(content.error());
  return parse_device_specs(*content, path);
}

}  // namespace hwaccel
