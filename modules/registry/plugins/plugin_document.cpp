// What a plugin says, read without trusting it: its descriptor's rules and
// the document it emits (fuzzed: tests/fuzz/fuzz_plugin_document.cpp).
module;
#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.registry;

namespace hwaccel {

namespace plugin_detail {

std::string plugin_label(const PluginFile& file, const std::optional<PluginDescriptor>& descriptor) {
  if (descriptor && !descriptor->name.empty()) return text::cat("plugin '", text::excerpt(descriptor->name, 40), "' (", file.path, ")");
  return text::cat("plugin ", file.path);
}

std::optional<Warning> accept_descriptor(PluginDescriptor& d, std::string_view family, const PluginFile& file) {
  if (d.abi_version == plugin_abi_version) {
    const auto parsed = family.empty() ? Result<Family>(Family::asic) : parse_family(family);
    if (!parsed || *parsed == Family::cpu)
      return Warning{"plugin", WarningKind::invalid_value,
                     text::cat("plugin '", text::excerpt(d.name, 40), "' (", file.path, ") names family \"",
                               text::excerpt(family, 40), "\" (one of gpu, npu, tpu, asic)")};
    d.family = *parsed;
  }
  if (auto ok = check_descriptor(d, file.path); !ok)
    return Warning{"plugin", ok.error().kind == ErrorKind::unsupported ? WarningKind::unsupported : WarningKind::invalid_value,
                   ok.error().message};
  return std::nullopt;
}

}  // namespace plugin_detail

Result<void> check_descriptor(const PluginDescriptor& d, std::string_view path) {
  const std::string who = d.name.empty() ? text::cat("plugin ", path) : text::cat("plugin '", text::excerpt(d.name, 40), "' (", path, ")");
  if (d.abi_version != plugin_abi_version)
    return fail(ErrorKind::unsupported, text::cat(who, " was built for plugin ABI version ", d.abi_version,
                                                  "; this hwaccel loads version ", plugin_abi_version));
  const bool well_formed = !d.name.empty() && d.name.size() <= 32 && d.name.front() >= 'a' && d.name.front() <= 'z' &&
                           std::all_of(d.name.begin(), d.name.end(), [](char c) {
                             return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
                           });
  if (!well_formed)
    return fail(ErrorKind::invalid_input,
                text::cat(who, " has a name that is not 1-32 of [a-z0-9_] starting with a letter"));
  if (parse_backend(d.name)) return fail(ErrorKind::invalid_input, text::cat(who, " takes the name of a built-in backend"));
  return {};
}

Result<DetectorOutput> read_plugin_document(std::string_view json, const PluginDescriptor& descriptor) {
  const std::string& name = descriptor.name;
  auto inventory = plugin_detail::read_inventory_object(json, text::cat("plugin '", name, "' output"));
  if (!inventory) return fail(inventory.error());
  DetectorOutput out;
  for (auto& w : inventory->warnings) {
    w.backend = name;  // a plugin speaks for itself only
    w.message = text::excerpt(w.message, 1000);
    out.warnings.push_back(std::move(w));
  }
  const auto drop = [&](const DeviceProfile& d, std::string_view why) {
    out.warnings.push_back(Warning{name, WarningKind::invalid_value,
                                   text::cat("plugin '", name, "' device \"", text::excerpt(d.id, 60), "\" dropped: ", why)});
  };
  std::set<std::string, std::less<>> ids;
  for (auto& d : inventory->devices) {
    if (out.devices.size() == max_plugin_devices) {
      out.warnings.push_back(Warning{name, WarningKind::truncated,
                                     text::cat("plugin '", name, "' reported more than ", max_plugin_devices,
                                               " devices; the rest were dropped")});
      break;
    }
    if (d.backend != Backend::plugin) {
      drop(d, text::cat("its backend is \"", to_string(d.backend), "\", not \"plugin\""));
      continue;
    }
    if (d.id != text::cat(name, ":", d.index)) {
      drop(d, text::cat("its id is not \"", name, ":", d.index, "\" (the plugin's name and the device's index)"));
      continue;
    }
    if (d.family == Family::cpu) {
      drop(d, "a plugin's device cannot be the host CPU (is \"family\" missing?)");
      continue;
    }
    if (d.name.empty()) {
      drop(d, "it has no name");
      continue;
    }
    if (!ids.insert(d.id).second) {
      drop(d, "its id is taken by an earlier device");
      continue;
    }
    if (d.memory_bytes && *d.memory_bytes > max_plausible_device_memory) {
      out.warnings.push_back(Warning{name, WarningKind::invalid_value,
                                     text::cat("plugin '", name, "' device ", d.id, " reports ", *d.memory_bytes,
                                               " bytes of memory; the figure was discarded")});
      d.memory_bytes.reset();
    }
    d.properties.insert_or_assign("plugin", name);
    out.devices.push_back(std::move(d));
  }
  return out;
}

}  // namespace hwaccel
