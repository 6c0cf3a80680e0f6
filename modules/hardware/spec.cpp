// The published device-spec table (data/device-specs.json) and the device
// matcher.
module;
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>
module hwaccel.hardware;

namespace hwaccel {
namespace {

// The built-in table, read from data/device-specs.json (compiled in) on
// first use. A function-local static: the first caller parses it, once and
// thread-safely, and a program that never asks for a spec (`hwaccel detect`
// on a machine without accelerators) never parses it.
const DeviceSpecSet& builtin_spec_set() noexcept {
  static const DeviceSpecSet set = builtin_or_abort(parse_builtin_device_specs(), "device specs");
  return set;
}

// Lower-case words of a device name: "NVIDIA A100-SXM4-80GB" -> nvidia a100 sxm4 80gb.
std::vector<std::string> words_of(std::string_view s) {
  std::vector<std::string> words;
  std::string current;
  for (char c : s) {
    const char l = text::to_lower(c);
    if ((l >= 'a' && l <= 'z') || (l >= '0' && l <= '9')) {
      current.push_back(l);
    } else if (!current.empty()) {
      words.push_back(std::move(current));
      current.clear();
    }
  }
  if (!current.empty()) words.push_back(std::move(current));
  return words;
}

bool has_word(const std::vector<std::string>& words, std::string_view token) {
  const bool prefix = !token.empty() && token.back() == '*';
  if (prefix) token.remove_suffix(1);
  for (const auto& w : words)
    if (prefix ? std::string_view(w).substr(0, token.size()) == token : w == token) return true;
  return false;
}

// Number of positive tokens of the best alternative of `pattern` that
// `words` satisfy; 0 when none does.
std::size_t pattern_score(std::string_view pattern, const std::vector<std::string>& words) {
  std::size_t best = 0;
  while (!pattern.empty()) {
    std::string_view alternative = text::next_token(pattern, '|');
    std::size_t score = 0;
    bool ok = true;
    for (auto token : text::words(alternative)) {
      if (token.front() == '!') {
        if (has_word(words, token.substr(1))) ok = false;
      } else if (has_word(words, token)) {
        ++score;
      } else {
        ok = false;
      }
    }
    if (ok && score > best) best = score;
  }
  return best;
}

bool backend_compatible(const DeviceSpec& spec, const SpecQuery& q) {
  if (q.family && spec.family != *q.family) return false;
  const Backend backend = q.backend;
  if (spec.backend == backend) return true;
  // Vulkan and DXGI see the same discrete GPUs the vendor stacks do.
  return (backend == Backend::vulkan || backend == Backend::dxgi) && spec.family == Family::gpu &&
         spec.backend != Backend::apple;
}

bool has_pci_id(const DeviceSpec& spec, std::uint16_t vendor, std::uint16_t device) {
  if (spec.pci_vendor_id != vendor) return false;
  for (auto id : spec.pci_device_ids)
    if (id != 0 && id == device) return true;
  return false;
}

// Memory ratio the detected size must fall in: runtimes report a little less
// than the datasheet (ECC, firmware reservations: a 16 GB T4 shows 15 GiB).
constexpr double min_memory_ratio = 0.85;
constexpr double max_memory_ratio = 1.03;

std::optional<double> memory_ratio(const DeviceSpec& spec, std::optional<std::uint64_t> memory) {
  if (!memory || spec.memory_kind == MemoryKind::unified || spec.memory_bytes == 0) return std::nullopt;
  return static_cast<double>(*memory) / static_cast<double>(spec.memory_bytes);
}

bool memory_plausible(const DeviceSpec& spec, std::optional<std::uint64_t> memory) {
  const auto r = memory_ratio(spec, memory);
  return !r || (*r >= min_memory_ratio && *r <= max_memory_ratio);
}

std::optional<std::uint16_t> id_property(const DeviceProfile& d, std::string_view key) {
  const auto it = d.properties.find(key);
  if (it == d.properties.end()) return std::nullopt;
  const auto v = text::parse_hex(it->second);
  if (!v || *v > 0xffff) return std::nullopt;
  return static_cast<std::uint16_t>(*v);
}

}  // namespace

std::optional<double> DeviceSpec::peak_tflops(ComputeType type) const noexcept {
  switch (type) {
    case ComputeType::fp32: return fp32_tflops;
    case ComputeType::bf16: return bf16_tflops;
    case ComputeType::fp16: return fp16_tflops;
    case ComputeType::fp8: return fp8_tflops;
    case ComputeType::int8: return int8_tops;
  }
  return std::nullopt;
}

std::optional<double> DeviceSpec::host_link_gbps() const noexcept {
  if (pcie_generation == 0 || pcie_width == 0) return std::nullopt;
  constexpr double rates[] = {2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
  if (pcie_generation > std::size(rates)) return std::nullopt;
  PcieLink link;
  link.max_speed_gts = rates[pcie_generation - 1];
  link.max_width = pcie_width;
  return link.max_bandwidth_gbps();
}

std::span<const DeviceSpec> device_specs() noexcept { return builtin_spec_set().specs(); }

Result<DeviceSpecSet> parse_builtin_device_specs() {
  return parse_device_spec_text(builtin_device_specs_json(), "built-in device-specs.json", SpecFileKind::builtin);
}

const DeviceSpec* find_spec(std::string_view key) noexcept {
  key = text::trim(key);
  if (key.empty()) return nullptr;
  const auto specs = device_specs();
  for (const auto& s : specs)  // ids as stored in DeviceProfile::spec_id: the common case
    if (s.id == key) return &s;
  for (const auto& s : specs)
    if (text::same_identifier(s.id, key) || text::same_identifier(s.name, key)) return &s;
  return nullptr;
}

namespace {

// match_spec over one table (the built-in one, or a user file's entries).
const DeviceSpec* match_in(std::span<const DeviceSpec> table, const SpecQuery& q) noexcept {
  std::vector<const DeviceSpec*> candidates;
  if (q.pci_vendor_id && q.pci_device_id) {
    for (const auto& s : table)
      if (backend_compatible(s, q) && has_pci_id(s, *q.pci_vendor_id, *q.pci_device_id) &&
          memory_plausible(s, q.memory_bytes))
        candidates.push_back(&s);
    if (candidates.size() == 1) return candidates.front();
  }
  const auto words = words_of(text::cat(q.name, ' ', q.compute_capability));
  std::vector<std::pair<const DeviceSpec*, std::size_t>> scored;
  const auto consider = [&](const DeviceSpec& s) {
    if (!backend_compatible(s, q) || !memory_plausible(s, q.memory_bytes)) return;
    if (const auto score = pattern_score(s.match, words); score > 0) scored.emplace_back(&s, score);
  };
  if (!candidates.empty()) {
    for (const auto* s : candidates) consider(*s);
  } else {
    for (const auto& s : table) consider(s);
  }
  if (scored.empty()) return nullptr;
  std::size_t best_score = 0;
  for (const auto& [s, score] : scored) best_score = std::max(best_score, score);
  const DeviceSpec* best = nullptr;
  double best_distance = 0;
  bool ambiguous = false;
  for (const auto& [s, score] : scored) {
    if (score != best_score) continue;
    const auto r = memory_ratio(*s, q.memory_bytes);
    // Without a detected size, entries that differ only in memory cannot be told apart.
    const double distance = r ? std::abs(1.0 - *r) : 0.0;
    if (!best || distance < best_distance - 1e-9) {
      best = s;
      best_distance = distance;
      ambiguous = false;
    } else if (std::abs(distance - best_distance) <= 1e-9) {
      ambiguous = true;
    }
  }
  return ambiguous ? nullptr : best;
}

void write_spec(json::Writer& w, const DeviceSpec& s, std::string_view user_file) {
  w.begin_object();
  w.field("id", s.id).field("name", s.name).field("product", s.product).field("vendor", s.vendor);
  w.field("backend", to_string(s.backend)).field("family", to_string(s.family));
  w.field("architecture", s.architecture);
  if (!s.compute_capability.empty()) w.field("compute_capability", s.compute_capability);
  w.field("memory_bytes", s.memory_bytes).field("memory_kind", to_string(s.memory_kind));
  w.field("memory_bandwidth_gbps", s.memory_bandwidth_gbps);
  w.field("fp32_tflops", s.fp32_tflops).field("bf16_tflops", s.bf16_tflops).field("fp16_tflops", s.fp16_tflops);
  w.field("fp8_tflops", s.fp8_tflops).field("int8_tops", s.int8_tops);
  if (s.fabric) {
    w.key("fabric").begin_object();
    w.field("kind", s.fabric->kind).field("name", s.fabric->name).field("bandwidth_gbps", s.fabric->bandwidth_gbps);
    w.field("domain_size", s.fabric->domain_size);
    w.end_object();
  }
  w.field("devices_per_package", s.devices_per_package);
  w.field("source", s.source);
  if (!s.notes.empty()) w.field("notes", s.notes);
  if (!user_file.empty()) w.field("user_file", user_file);
  w.end_object();
}

}  // namespace

const DeviceSpec* match_spec(const SpecQuery& q) noexcept { return match_in(device_specs(), q); }

const DeviceSpec* match_spec(const SpecQuery& q, const DeviceSpecSet& extra) noexcept {
  if (const DeviceSpec* s = match_in(device_specs(), q)) return s;
  return extra.empty() ? nullptr : match_in(extra.specs(), q);
}

const DeviceSpec* match_spec(const DeviceProfile& d, const DeviceSpecSet& extra) noexcept {
  if (d.family == Family::cpu) return nullptr;
  return match_spec(spec_query_of(d), extra);
}

const DeviceSpec* find_spec(std::string_view key, const DeviceSpecSet& extra) noexcept {
  if (const DeviceSpec* s = find_spec(key)) return s;
  key = text::trim(key);
  if (key.empty()) return nullptr;
  for (const auto& s : extra.specs())
    if (s.id == key || text::same_identifier(s.id, key) || text::same_identifier(s.name, key)) return &s;
  return nullptr;
}

SpecQuery spec_query_of(const DeviceProfile& d) noexcept {
  SpecQuery q;
  q.backend = d.backend;
  q.family = d.family;
  q.name = d.name;
  if (d.compute_capability) q.compute_capability = *d.compute_capability;
  q.memory_bytes = d.memory_bytes;
  q.pci_vendor_id = id_property(d, "pci_vendor_id");
  q.pci_device_id = id_property(d, "pci_device_id");
  // "10de:2882", as lspci -n and most detectors write the pair.
  if (const auto ids = q.pci_device_id ? std::nullopt : pci_id_property(d)) {
    q.pci_vendor_id = ids->vendor;
    q.pci_device_id = ids->device;
  }
  return q;
}

const DeviceSpec* match_spec(const DeviceProfile& d) noexcept {
  if (d.family == Family::cpu) return nullptr;
  return match_spec(spec_query_of(d));
}

DeviceTraits traits_of(const DeviceSpec& s) noexcept {
  DeviceTraits t;
  t.backend = s.backend;
  t.family = s.family;
  t.name = s.product;
  t.compute_capability = s.compute_capability;
  t.architecture = s.architecture;
  return t;
}

std::string device_specs_json() { return device_specs_json(DeviceSpecSet()); }

std::string device_specs_json(const DeviceSpecSet& extra) {
  json::Writer w(false);
  w.begin_array();
  for (const auto& s : device_specs()) write_spec(w, s, {});
  for (const auto& s : extra.specs())
    if (!find_spec(s.id)) write_spec(w, s, extra.origin());  // a restated built-in entry is listed once, above
  w.end_array();
  return std::string(w.str());
}

}  // namespace hwaccel
