// The cloud instance catalogue: reading and checking data/instances.json or a
// user file in the same format.
module;
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <set>
#include <ranges>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>
module hwaccel.plan;
import hwaccel.json_fields;

namespace hwaccel {
namespace {

using json::Field;

// A listed memory size may differ from the spec's by rounding ("141 GB" for
// 141 GiB of HBM3e is the same part); more than this is another product.
constexpr double memory_tolerance = 0.03;
constexpr double no_upper_bound = std::numeric_limits<double>::infinity();

constexpr Field instance_root_fields[] = {
    Field::text("format", json::required),
    Field::whole("version", 0, std::numeric_limits<std::uint64_t>::max(), json::required),
    Field::text("description"),
    Field::text("prices"),
    Field::array("instances", json::Type::object, 100000, json::required),
};

constexpr Field instance_fields[] = {
    Field::text("provider", json::required),
    Field::text("name", json::required),
    Field::text("region", json::required),
    Field::text("accelerator", json::required),
    Field::whole("count", 1, max_instance_accelerators, json::required),
    Field::positive("memory_per_device_gib", no_upper_bound, json::required),
    Field::text("interconnect", json::required),
    Field::whole("interconnect_group", 1, max_instance_accelerators),
    Field::whole("vcpus", 1, 1u << 20, json::required),
    Field::positive("host_memory_gib", 1e9, json::required),
    Field::positive("price_usd_per_hour", 1e6, json::required),
    Field::text("price_date", json::required),
    Field::text("price_source", json::required),
    Field::text("notes"),
};

// "2025-03" or "2025-03-14".
bool valid_date(std::string_view s) {
  const auto digits = [&](std::size_t from, std::size_t n) {
    for (std::size_t i = from; i < from + n; ++i)
      if (i >= s.size() || s[i] < '0' || s[i] > '9') return false;
    return true;
  };
  if (s.size() != 7 && s.size() != 10) return false;
  if (!digits(0, 4) || s[4] != '-' || !digits(5, 2)) return false;
  const int month = (s[5] - '0') * 10 + (s[6] - '0');
  if (month < 1 || month > 12) return false;
  if (s.size() == 7) return true;
  if (s[7] != '-' || !digits(8, 2)) return false;
  const int day = (s[8] - '0') * 10 + (s[9] - '0');
  return day >= 1 && day <= 31;
}

// The fabric kind a product must have for an interconnect to make sense.
std::string_view fabric_needed(InstanceInterconnect ic) {
  switch (ic) {
    case InstanceInterconnect::pcie: return {};
    case InstanceInterconnect::nvlink:
    case InstanceInterconnect::nvswitch: return "nvlink";
    case InstanceInterconnect::xgmi: return "xgmi";
    case InstanceInterconnect::ici: return "ici";
    case InstanceInterconnect::neuronlink: return "neuronlink";
  }
  return {};
}

Result<CloudInstanceType> read_instance(const json::Object& o, const DeviceSpecSet& extra) {
  CloudInstanceType inst;
  const auto p = parse_cloud_provider(o.text("provider"));
  if (!p)
    return fail(o.error(text::cat("unknown provider \"", text::excerpt(o.text("provider")), "\" (aws, gcp or azure)")));
  inst.provider = *p;
  inst.name = std::string(o.text("name"));
  inst.region = std::string(o.text("region"));

  const std::string_view accelerator = o.text("accelerator");
  const DeviceSpec* spec = find_spec(accelerator, extra);
  if (!spec)
    return fail(o.error(text::cat("unknown accelerator \"", text::excerpt(accelerator), "\" (a spec id from `hwaccel specs`)")));
  inst.accelerator = std::string(spec->id);
  inst.count = static_cast<std::uint32_t>(*o.whole("count"));

  const double memory = *o.number("memory_per_device_gib");
  const double spec_gib = static_cast<double>(spec->memory_bytes) / text::bytes_per_gib;
  if (std::abs(memory - spec_gib) > memory_tolerance * spec_gib)
    return fail(o.error(text::cat("memory_per_device_gib ", memory, " does not match ", spec->product, " (", spec->id,
                                  ": ", spec_gib, " GiB); is the accelerator right?")));
  inst.memory_per_device_bytes = static_cast<std::uint64_t>(std::llround(memory * text::bytes_per_gib));

  const auto ic = parse_instance_interconnect(o.text("interconnect"));
  if (!ic) return fail(o.error(ic.error().message));
  if (const auto needed = fabric_needed(*ic); !needed.empty() && (!spec->fabric || spec->fabric->kind != needed))
    return fail(o.error(text::cat(spec->product, " has no ", to_string(*ic), " (its fabric: ",
                                  spec->fabric ? spec->fabric->kind : "PCIe only", ")")));
  inst.interconnect = *ic;
  const auto group = o.whole("interconnect_group").value_or(inst.count);
  if (group > inst.count)
    return fail(o.error("interconnect_group", text::cat("must be a whole number in 1..", inst.count, ", got ", group)));
  inst.interconnect_group = static_cast<std::uint32_t>(group);

  inst.vcpus = static_cast<std::uint32_t>(*o.whole("vcpus"));
  inst.host_memory_bytes = static_cast<std::uint64_t>(std::llround(*o.number("host_memory_gib") * text::bytes_per_gib));
  inst.price_usd_per_hour = *o.number("price_usd_per_hour");
  const std::string_view date = o.text("price_date");
  if (!valid_date(date))
    return fail(o.error("price_date", text::cat("must read YYYY-MM or YYYY-MM-DD, got \"", text::excerpt(date), "\"")));
  inst.price_date = std::string(date);
  inst.price_source = std::string(o.text("price_source"));
  inst.notes = std::string(o.text("notes"));
  return inst;
}

}  // namespace

std::string_view to_string(CloudProvider provider) noexcept {
  switch (provider) {
    case CloudProvider::aws: return "aws";
    case CloudProvider::gcp: return "gcp";
    case CloudProvider::azure: return "azure";
  }
  return "unknown";
}

Result<CloudProvider> parse_cloud_provider(std::string_view name) {
  name = text::trim(name);
  if (text::iequals(name, "aws") || text::iequals(name, "amazon")) return CloudProvider::aws;
  if (text::iequals(name, "gcp") || text::iequals(name, "google")) return CloudProvider::gcp;
  if (text::iequals(name, "azure") || text::iequals(name, "microsoft")) return CloudProvider::azure;
  return fail(unknown_name("cloud provider", name, "aws, gcp, azure"));
}

std::string_view to_string(InstanceInterconnect interconnect) noexcept {
  switch (interconnect) {
    case InstanceInterconnect::pcie: return "pcie";
    case InstanceInterconnect::nvlink: return "nvlink";
    case InstanceInterconnect::nvswitch: return "nvswitch";
    case InstanceInterconnect::xgmi: return "xgmi";
    case InstanceInterconnect::ici: return "ici";
    case InstanceInterconnect::neuronlink: return "neuronlink";
  }
  return "unknown";
}

Result<InstanceInterconnect> parse_instance_interconnect(std::string_view name) {
  static constexpr InstanceInterconnect all[] = {InstanceInterconnect::pcie, InstanceInterconnect::nvlink,
                                                 InstanceInterconnect::nvswitch, InstanceInterconnect::xgmi,
                                                 InstanceInterconnect::ici, InstanceInterconnect::neuronlink};
  for (auto ic : all)
    if (text::iequals(text::trim(name), to_string(ic))) return ic;
  return fail(unknown_name("interconnect", name, text::join(all | std::views::transform([](auto ic) { return to_string(ic); }))));
}

Result<InstanceCatalogue> parse_instance_catalogue(std::string_view json, std::string_view origin) {
  return parse_instance_catalogue(json, origin, DeviceSpecSet());
}

Result<InstanceCatalogue> parse_instance_catalogue(std::string_view json, std::string_view origin,
                                                   const DeviceSpecSet& extra) {
  auto file = json::read_data_file(json, origin, {"hwaccel-instance-catalogue", max_instance_catalogue_bytes, "a catalogue"},
                                   instance_root_fields);
  if (!file) return fail(file.error());
  const json::Object& root = file->root;

  InstanceCatalogue catalogue;
  catalogue.origin = std::string(origin);
  catalogue.prices = std::string(root.text("prices"));
  std::set<std::tuple<CloudProvider, std::string, std::string>> seen;
  const auto entries = root.values("instances");
  for (std::size_t index = 0; index < entries.size(); ++index) {
    auto o = json::Object::read(entries[index], instance_fields,
                                json::entry_where(origin, "instances", index, entries[index], "name"));
    if (!o) return fail(o.error());
    auto inst = read_instance(*o, extra);
    if (!inst) return fail(inst.error());
    if (!seen.emplace(inst->provider, inst->name, inst->region).second)
      return fail(o->error(text::cat("listed twice for ", to_string(inst->provider), " ", inst->region)));
    catalogue.instances.push_back(std::move(*inst));
  }
  if (catalogue.instances.empty()) return fail(ErrorKind::invalid_input, text::cat(origin, " lists no instances"));
  return catalogue;
}

Result<InstanceCatalogue> read_instance_catalogue(const std::filesystem::path& path) {
  return read_instance_catalogue(path, DeviceSpecSet());
}

Result<InstanceCatalogue> read_instance_catalogue(const std::filesystem::path& path, const DeviceSpecSet& extra) {
  const auto content = read_small_file(path.string(), max_instance_catalogue_bytes, "a catalogue");
  if (!content) return fail(content.error());
  return parse_instance_catalogue(*content, path.string(), extra);
}

Result<InstanceCatalogue> builtin_instance_catalogue() {
  return parse_instance_catalogue(builtin_instance_catalogue_json(), "built-in instances.json");
}

}  // namespace hwaccel
