// The cloud instance catalogue: reading and checking data/instances.json or a
// user file in the same format.
module;
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <vector>

#include <simdjson.h>
#include "json_input.hpp"
module hwaccel.plan;


namespace hwaccel {
namespace {

using simdjson::dom::element;
using simdjson::dom::object;

// A listed memory size may differ from the spec's by rounding ("141 GB" for
// 141 GiB of HBM3e is the same part); more than this is another product.
constexpr double memory_tolerance = 0.03;

// Reads the fields of one entry, naming it in every error.
struct EntryReader {
  object entry;
  std::string where;  // `instances.json: instances[3] "p4d.24xlarge"`

  Error error(ErrorKind kind, std::string_view what) const {
    return Error{kind, text::cat(where, ": ", what)};
  }

  Result<std::string_view> string(std::string_view key, bool required = true) const {
    element e;
    if (entry[key].get(e) != simdjson::SUCCESS || e.is_null()) {
      if (!required) return std::string_view{};
      return fail(error(ErrorKind::parse_error, text::cat("missing \"", key, "\"")));
    }
    std::string_view v;
    if (e.get_string().get(v) != simdjson::SUCCESS)
      return fail(error(ErrorKind::parse_error, text::cat("\"", key, "\" must be a string")));
    if (required && text::trim(v).empty())
      return fail(error(ErrorKind::invalid_input, text::cat("\"", key, "\" is empty")));
    return v;
  }

  Result<double> number(std::string_view key) const {
    element e;
    if (entry[key].get(e) != simdjson::SUCCESS || e.is_null())
      return fail(error(ErrorKind::parse_error, text::cat("missing \"", key, "\"")));
    double v = 0;
    if (e.get_double().get(v) != simdjson::SUCCESS) {
      std::int64_t i = 0;
      std::uint64_t u = 0;
      if (e.get_int64().get(i) == simdjson::SUCCESS) v = static_cast<double>(i);
      else if (e.get_uint64().get(u) == simdjson::SUCCESS) v = static_cast<double>(u);
      else return fail(error(ErrorKind::parse_error, text::cat("\"", key, "\" must be a number")));
    }
    if (!std::isfinite(v)) return fail(error(ErrorKind::invalid_input, text::cat("\"", key, "\" must be finite")));
    return v;
  }

  // A whole number in [low, high].
  Result<std::uint64_t> count(std::string_view key, std::uint64_t low, std::uint64_t high,
                              std::optional<std::uint64_t> fallback = std::nullopt) const {
    element e;
    if ((entry[key].get(e) != simdjson::SUCCESS || e.is_null()) && fallback) return *fallback;
    auto v = number(key);
    if (!v) return fail(v.error());
    if (*v != std::floor(*v) || *v < static_cast<double>(low) || *v > static_cast<double>(high))
      return fail(error(ErrorKind::invalid_input,
                        text::cat("\"", key, "\" must be a whole number in ", low, "..", high, ", got ", *v)));
    return static_cast<std::uint64_t>(*v);
  }
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

Result<CloudInstanceType> read_entry(const EntryReader& r, const DeviceSpecSet& extra) {
  CloudInstanceType inst;
  auto provider = r.string("provider");
  if (!provider) return fail(provider.error());
  const auto p = parse_cloud_provider(*provider);
  if (!p)
    return fail(r.error(ErrorKind::invalid_input,
                        text::cat("unknown provider \"", text::excerpt(*provider), "\" (aws, gcp or azure)")));
  inst.provider = *p;
  auto name = r.string("name");
  if (!name) return fail(name.error());
  inst.name = std::string(*name);
  auto region = r.string("region");
  if (!region) return fail(region.error());
  inst.region = std::string(*region);

  auto accelerator = r.string("accelerator");
  if (!accelerator) return fail(accelerator.error());
  const DeviceSpec* spec = find_spec(*accelerator, extra);
  if (!spec)
    return fail(r.error(ErrorKind::invalid_input, text::cat("unknown accelerator \"", text::excerpt(*accelerator),
                                                            "\" (a spec id from `hwaccel specs`)")));
  inst.accelerator = std::string(spec->id);

  auto count = r.count("count", 1, max_instance_accelerators);
  if (!count) return fail(count.error());
  inst.count = static_cast<std::uint32_t>(*count);

  auto memory = r.number("memory_per_device_gib");
  if (!memory) return fail(memory.error());
  if (!(*memory > 0)) return fail(r.error(ErrorKind::invalid_input, "\"memory_per_device_gib\" must be positive"));
  const double spec_gib = static_cast<double>(spec->memory_bytes) / text::bytes_per_gib;
  if (std::abs(*memory - spec_gib) > memory_tolerance * spec_gib)
    return fail(r.error(ErrorKind::invalid_input,
                        text::cat("memory_per_device_gib ", *memory, " does not match ", spec->product, " (", spec->id,
                                  ": ", spec_gib, " GiB); is the accelerator right?")));
  inst.memory_per_device_bytes = static_cast<std::uint64_t>(std::llround(*memory * text::bytes_per_gib));

  auto interconnect = r.string("interconnect");
  if (!interconnect) return fail(interconnect.error());
  const auto ic = parse_instance_interconnect(*interconnect);
  if (!ic)
    return fail(r.error(ErrorKind::invalid_input,
                        text::cat("unknown interconnect \"", text::excerpt(*interconnect),
                                  "\" (pcie, nvlink, nvswitch, xgmi, ici or neuronlink)")));
  if (const auto needed = fabric_needed(*ic); !needed.empty() && (!spec->fabric || spec->fabric->kind != needed))
    return fail(r.error(ErrorKind::invalid_input, text::cat(spec->product, " has no ", to_string(*ic), " (its fabric: ",
                                                            spec->fabric ? spec->fabric->kind : "PCIe only", ")")));
  inst.interconnect = *ic;
  auto group = r.count("interconnect_group", 1, inst.count, inst.count);
  if (!group) return fail(group.error());
  inst.interconnect_group = static_cast<std::uint32_t>(*group);

  auto vcpus = r.count("vcpus", 1, 1u << 20);
  if (!vcpus) return fail(vcpus.error());
  inst.vcpus = static_cast<std::uint32_t>(*vcpus);
  auto host = r.number("host_memory_gib");
  if (!host) return fail(host.error());
  if (!(*host > 0) || *host > 1e9)
    return fail(r.error(ErrorKind::invalid_input, "\"host_memory_gib\" must be positive"));
  inst.host_memory_bytes = static_cast<std::uint64_t>(std::llround(*host * text::bytes_per_gib));

  auto price = r.number("price_usd_per_hour");
  if (!price) return fail(price.error());
  if (!(*price > 0) || *price > 1e6)
    return fail(r.error(ErrorKind::invalid_input,
                        text::cat("\"price_usd_per_hour\" must be a positive number of dollars, got ", *price)));
  inst.price_usd_per_hour = *price;
  auto date = r.string("price_date");
  if (!date) return fail(date.error());
  if (!valid_date(*date))
    return fail(r.error(ErrorKind::invalid_input,
                        text::cat("\"price_date\" must read YYYY-MM or YYYY-MM-DD, got \"", text::excerpt(*date), "\"")));
  inst.price_date = std::string(*date);
  auto source = r.string("price_source");
  if (!source) return fail(source.error());
  inst.price_source = std::string(*source);
  auto notes = r.string("notes", false);
  if (!notes) return fail(notes.error());
  inst.notes = std::string(*notes);
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

std::optional<CloudProvider> parse_cloud_provider(std::string_view name) noexcept {
  name = text::trim(name);
  if (text::iequals(name, "aws") || text::iequals(name, "amazon")) return CloudProvider::aws;
  if (text::iequals(name, "gcp") || text::iequals(name, "google")) return CloudProvider::gcp;
  if (text::iequals(name, "azure") || text::iequals(name, "microsoft")) return CloudProvider::azure;
  return std::nullopt;
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

std::optional<InstanceInterconnect> parse_instance_interconnect(std::string_view name) noexcept {
  for (auto ic : {InstanceInterconnect::pcie, InstanceInterconnect::nvlink, InstanceInterconnect::nvswitch,
                  InstanceInterconnect::xgmi, InstanceInterconnect::ici, InstanceInterconnect::neuronlink})
    if (text::iequals(text::trim(name), to_string(ic))) return ic;
  return std::nullopt;
}

Result<InstanceCatalogue> parse_instance_catalogue(std::string_view json, std::string_view origin) {
  return parse_instance_catalogue(json, origin, DeviceSpecSet());
}

Result<InstanceCatalogue> parse_instance_catalogue(std::string_view json, std::string_view origin,
                                                   const DeviceSpecSet& extra) {
  if (json.size() > max_instance_catalogue_bytes)
    return fail(ErrorKind::invalid_input, text::cat(origin, " is ", json.size(), " bytes; a catalogue is at most ",
                                                    max_instance_catalogue_bytes));
  simdjson::dom::parser parser;
  element doc;
  if (const auto err = json_input::parse(parser, json).get(doc); err != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat(origin, " is not valid JSON: ", simdjson::error_message(err)));
  object root;
  if (doc.get_object().get(root) != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat(origin, " must be a JSON object with an \"instances\" array"));
  std::string_view format;
  if (root["format"].get_string().get(format) != simdjson::SUCCESS || format != "hwaccel-instance-catalogue")
    return fail(ErrorKind::parse_error, text::cat(origin, ": \"format\" must be \"hwaccel-instance-catalogue\""));
  std::uint64_t version = 0;
  if (root["version"].get_uint64().get(version) != simdjson::SUCCESS || version != 1)
    return fail(ErrorKind::parse_error, text::cat(origin, ": \"version\" must be 1"));
  simdjson::dom::array entries;
  if (root["instances"].get_array().get(entries) != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat(origin, ": missing \"instances\" array"));

  InstanceCatalogue catalogue;
  catalogue.origin = std::string(origin);
  std::string_view prices;
  if (root["prices"].get_string().get(prices) == simdjson::SUCCESS) catalogue.prices = std::string(prices);
  std::set<std::tuple<CloudProvider, std::string, std::string>> seen;
  std::size_t index = 0;
  for (element e : entries) {
    EntryReader r;
    std::string_view name;
    if (e.get_object().get(r.entry) != simdjson::SUCCESS)
      return fail(ErrorKind::parse_error, text::cat(origin, ": instances[", index, "] must be an object"));
    r.where = r.entry["name"].get_string().get(name) == simdjson::SUCCESS
                  ? text::cat(origin, ": instances[", index, "] \"", text::excerpt(name), "\"")
                  : text::cat(origin, ": instances[", index, "]");
    auto inst = read_entry(r, extra);
    if (!inst) return fail(inst.error());
    if (!seen.emplace(inst->provider, inst->name, inst->region).second)
      return fail(r.error(ErrorKind::invalid_input, text::cat("listed twice for ", to_string(inst->provider), " ",
                                                             inst->region)));
    catalogue.instances.push_back(std::move(*inst));
    ++index;
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
