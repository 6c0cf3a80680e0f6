// The DXGI adapters document: read with the library's field tables (every
// value bounded), written with its JSON writer.
module;
#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>
module hwaccel.detect;
import hwaccel.json_fields;

namespace hwaccel {
namespace {

// A machine has a handful of adapters; this bounds what a hostile file costs.
constexpr std::size_t max_dxgi_document_bytes = 1 << 20;
constexpr std::size_t max_dxgi_adapters = 64;
// Larger than any adapter's memory, small enough that sums cannot overflow.
constexpr std::uint64_t max_adapter_bytes = std::uint64_t{1} << 50;
constexpr std::uint64_t max_u32 = 0xffffffffu;

constexpr json::Field dxgi_file_fields[] = {
    json::Field::text("format", json::required),
    json::Field::whole("version", 0, UINT64_MAX, json::required),
    json::Field::text("source"),
    json::Field::array("adapters", json::Type::object, max_dxgi_adapters, json::required),
};

constexpr json::Field dxgi_adapter_fields[] = {
    json::Field::whole("index", 0, max_u32, json::required),
    json::Field::text("description", json::required, 128),
    json::Field::hex("vendor_id", 0, max_u32, json::required),
    json::Field::hex("device_id", 0, max_u32, json::required),
    json::Field::hex("subsystem_id", 0, max_u32),
    json::Field::hex("revision", 0, max_u32),
    json::Field::whole("dedicated_video_memory", 0, max_adapter_bytes, json::required),
    json::Field::whole("dedicated_system_memory", 0, max_adapter_bytes),
    json::Field::whole("shared_system_memory", 0, max_adapter_bytes),
    json::Field::text("luid", json::Need::optional, 17),
    json::Field::boolean("software"),
    json::Field::boolean("remote"),
    json::Field::text("driver_version", json::Need::optional, 64),
    json::Field::whole("local_budget", 0, max_adapter_bytes),
    json::Field::whole("local_usage", 0, max_adapter_bytes),
    json::Field::whole("non_local_budget", 0, max_adapter_bytes),
    json::Field::whole("non_local_usage", 0, max_adapter_bytes),
};

constexpr json::Field windows_system_fields[] = {
    json::Field::text("format", json::required),
    json::Field::whole("version", 0, UINT64_MAX, json::required),
    json::Field::text("source"),
    json::Field::text("processor_name", json::required, 128),
    json::Field::text("processor_vendor", json::Need::optional, 64),
    json::Field::text("architecture", json::required, 32),
    json::Field::whole("logical_processors", 1, 1u << 16),
    json::Field::whole("physical_cores", 1, 1u << 16),
    json::Field::whole("sockets", 1, 1024),
    json::Field::whole("memory_bytes", 1, max_adapter_bytes),
    json::Field::whole("memory_available_bytes", 0, max_adapter_bytes),
    json::Field::array("isa_features", json::Type::text, 64, json::Need::optional, 0, 32),
    json::Field::text("os_version", json::Need::optional, 64),
};

std::optional<std::uint64_t> parse_luid(std::string_view text) {
  const auto colon = text.find(':');
  if (colon != 8 || text.size() != 17) return std::nullopt;
  const auto high = text::parse_hex(text.substr(0, 8));
  const auto low = text::parse_hex(text.substr(9));
  if (!high || !low) return std::nullopt;
  return *high << 32 | *low;
}

Result<DxgiAdapter> read_adapter(json::Value value, std::size_t position) {
  const std::string where = json::entry_where(dxgi_adapters_path, "adapters", position, value, "description");
  auto o = json::Object::read(value, dxgi_adapter_fields, where);
  if (!o) return fail(o.error());
  DxgiAdapter a;
  a.index = static_cast<std::uint32_t>(*o->whole("index"));
  a.description = std::string(o->text("description"));
  a.vendor_id = static_cast<std::uint32_t>(*o->whole("vendor_id"));
  a.device_id = static_cast<std::uint32_t>(*o->whole("device_id"));
  a.subsystem_id = static_cast<std::uint32_t>(o->whole("subsystem_id").value_or(0));
  a.revision = static_cast<std::uint32_t>(o->whole("revision").value_or(0));
  a.dedicated_video_memory = *o->whole("dedicated_video_memory");
  a.dedicated_system_memory = o->whole("dedicated_system_memory").value_or(0);
  a.shared_system_memory = o->whole("shared_system_memory").value_or(0);
  if (o->has("luid")) {
    const auto luid = parse_luid(o->text("luid"));
    if (!luid) return fail(o->error("luid", "is not HIGH:LOW in 8 hex digits each (\"00000000:0001a2b3\")"));
    a.luid = *luid;
  }
  a.software = o->boolean("software").value_or(false);
  a.remote = o->boolean("remote").value_or(false);
  if (o->has("driver_version")) a.driver_version = std::string(o->text("driver_version"));
  a.local_budget = o->whole("local_budget");
  a.local_usage = o->whole("local_usage");
  a.non_local_budget = o->whole("non_local_budget");
  a.non_local_usage = o->whole("non_local_usage");
  return a;
}

}  // namespace

std::string dxgi_luid_text(std::uint64_t luid) {
  return text::cat(text::hex_digits(luid >> 32, 8), ":", text::hex_digits(luid & 0xffffffffu, 8));
}

Result<std::vector<DxgiAdapter>> parse_dxgi_adapters(std::string_view json) {
  auto file = json::read_data_file(json, dxgi_adapters_path,
                                   {"hwaccel-dxgi-adapters", max_dxgi_document_bytes, "a DXGI adapter list"},
                                   dxgi_file_fields);
  if (!file) return fail(file.error());
  const auto entries = file->root.values("adapters");
  std::vector<DxgiAdapter> adapters;
  adapters.reserve(entries.size());
  std::set<std::uint32_t> indices;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    auto a = read_adapter(entries[i], i);
    if (!a) return fail(a.error());
    if (!indices.insert(a->index).second)
      return fail(ErrorKind::invalid_input,
                  text::cat(json::entry_where(dxgi_adapters_path, "adapters", i, entries[i], "description"),
                            ": \"index\" ", a->index, " is another adapter's"));
    adapters.push_back(std::move(*a));
  }
  return adapters;
}

Result<WindowsSystemFacts> parse_windows_system(std::string_view json) {
  auto file = json::read_data_file(json, windows_system_path,
                                   {"hwaccel-windows-system", max_dxgi_document_bytes, "a Windows system description"},
                                   windows_system_fields);
  if (!file) return fail(file.error());
  const json::Object& o = file->root;
  WindowsSystemFacts f;
  f.processor_name = std::string(o.text("processor_name"));
  if (o.has("processor_vendor")) f.processor_vendor = std::string(o.text("processor_vendor"));
  f.architecture = std::string(o.text("architecture"));
  const auto u32 = [&](std::string_view key) -> std::optional<std::uint32_t> {
    if (const auto v = o.whole(key)) return static_cast<std::uint32_t>(*v);
    return std::nullopt;
  };
  f.logical_processors = u32("logical_processors");
  f.physical_cores = u32("physical_cores");
  f.sockets = u32("sockets");
  f.memory_bytes = o.whole("memory_bytes");
  f.memory_available_bytes = o.whole("memory_available_bytes");
  if (f.memory_bytes && f.memory_available_bytes && *f.memory_available_bytes > *f.memory_bytes)
    return fail(o.error("memory_available_bytes", "is more than memory_bytes"));
  for (const auto feature : o.texts("isa_features")) f.isa_features.emplace_back(feature);
  std::sort(f.isa_features.begin(), f.isa_features.end());
  if (o.has("os_version")) f.os_version = std::string(o.text("os_version"));
  return f;
}

std::string format_windows_system(const WindowsSystemFacts& f) {
  json::Writer w(true);
  w.begin_object();
  w.field("format", "hwaccel-windows-system");
  w.field("version", std::uint64_t{1});
  w.field("source", "GetNativeSystemInfo, GetLogicalProcessorInformationEx, GlobalMemoryStatusEx, "
                    "IsProcessorFeaturePresent, the registry's CentralProcessor key");
  w.field("processor_name", f.processor_name);
  w.field("processor_vendor", f.processor_vendor);
  w.field("architecture", f.architecture);
  w.field("logical_processors", f.logical_processors);
  w.field("physical_cores", f.physical_cores);
  w.field("sockets", f.sockets);
  w.field("memory_bytes", f.memory_bytes);
  w.field("memory_available_bytes", f.memory_available_bytes);
  w.field("isa_features", f.isa_features);
  w.field("os_version", f.os_version);
  w.end_object();
  return std::move(w).document();
}

std::string format_dxgi_adapters(std::span<const DxgiAdapter> adapters) {
  json::Writer w(true);
  w.begin_object();
  w.field("format", "hwaccel-dxgi-adapters");
  w.field("version", std::uint64_t{1});
  w.field("source", "IDXGIFactory1::EnumAdapters1, IDXGIAdapter3::QueryVideoMemoryInfo");
  w.key("adapters").array(adapters, [](json::Writer& out, const DxgiAdapter& a) {
    out.begin_object();
    out.field("index", a.index);
    out.field("description", a.description);
    out.field("vendor_id", text::cat("0x", text::hex_at_least(a.vendor_id, 4)));
    out.field("device_id", text::cat("0x", text::hex_at_least(a.device_id, 4)));
    out.field("subsystem_id", text::cat("0x", text::hex_at_least(a.subsystem_id, 8)));
    out.field("revision", text::cat("0x", text::hex_at_least(a.revision, 2)));
    out.field("dedicated_video_memory", a.dedicated_video_memory);
    out.field("dedicated_system_memory", a.dedicated_system_memory);
    out.field("shared_system_memory", a.shared_system_memory);
    if (a.luid) out.field("luid", dxgi_luid_text(*a.luid));
    out.field("software", a.software);
    out.field("remote", a.remote);
    out.field("driver_version", a.driver_version);
    out.field("local_budget", a.local_budget);
    out.field("local_usage", a.local_usage);
    out.field("non_local_budget", a.non_local_budget);
    out.field("non_local_usage", a.non_local_usage);
    out.end_object();
  });
  w.end_object();
  return std::move(w).document();
}

}  // namespace hwaccel
