// The plugin backend's runner: every plugin found, run one after another
// (in hwaccel-plugin-host unless asked otherwise), its document read and its
// devices joined to the detection; whatever goes wrong is a warning.
module;
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.registry;

namespace hwaccel {

namespace {

// The variable a plugin's runtime reads to choose devices: a comma list of
// device numbers (the N of "NAME:N") or PCI bus ids. Devices it leaves out
// are not visible; those it lists are numbered in its order.
void apply_plugin_visibility(std::vector<DeviceProfile>& devices, const PluginDescriptor& d, const System& system) {
  if (d.visibility_variable.empty()) return;
  const auto value = system.env(d.visibility_variable);
  if (!value) return;
  const auto listed = text::split_trimmed(*value, ',');
  // Each entry's canonical bus id, read once (device.pci_bus_id is canonical).
  std::vector<std::string> buses;
  for (const auto entry : listed) {
    const auto address = PciAddress::parse(entry);
    buses.push_back(address ? address->to_string() : std::string());
  }
  for (auto& device : devices) {
    const std::string_view number = std::string_view(device.id).substr(d.name.size() + 1);
    std::optional<std::uint32_t> position;
    for (std::uint32_t i = 0; i < listed.size(); ++i) {
      const bool same_bus = device.pci_bus_id && !buses[i].empty() && buses[i] == *device.pci_bus_id;
      if (listed[i] == number || same_bus) {
        position = i;
        break;
      }
    }
    device.visible = position.has_value();
    device.runtime_index = position;
  }
}

class PluginSetRunner final : public PluginRunner {
 public:
  explicit PluginSetRunner(PluginSettings settings) : settings_(std::move(settings)) {}

  // Plugins are looked for at each detection: one installed since is found.
  bool empty() const override { return find_plugins(settings_).empty(); }

  DetectorOutput detect(const DetectContext& ctx) const override {
    DetectorOutput out;
    const auto files = find_plugins(settings_);
    const auto warn = [&](std::string backend, WarningKind kind, std::string message) {
      out.warnings.push_back(Warning{std::move(backend), kind, std::move(message)});
    };
    std::optional<std::string> host;
    if (!settings_.in_process) {
      host = find_plugin_host(settings_);
      if (!host) {
        warn("plugin", WarningKind::tool_missing,
             text::cat(files.size(), " plugin(s) not run: no hwaccel-plugin-host ",
                       settings_.host.empty() ? text::cat("beside this program or in ", plugin_host_installed_path())
                                              : text::cat("at ", settings_.host),
                       " (set HWACCEL_PLUGIN_HOST, or run them with --plugins-in-process)"));
        return out;
      }
    }
    const plugin_detail::PluginLimits limits{ctx.options().tool_timeout, ctx.options().tool_output_cap};
    std::set<std::string, std::less<>> names;
    std::uint32_t next_index = 0;
    for (const auto& file : files) {
      if (file.refused) {
        warn("plugin", WarningKind::permission_denied, text::cat("plugin ", file.path, " refused: ", *file.refused));
        continue;
      }
      auto run = host ? plugin_detail::run_isolated(file, *host, &ctx, limits)
                      : plugin_detail::run_in_process(file, &ctx, limits);
      const std::string who = plugin_detail::plugin_label(file, run.descriptor);
      const std::string backend = run.descriptor && !run.failure ? run.descriptor->name : std::string("plugin");
      if (run.failure) {
        if (run.descriptor && check_descriptor(*run.descriptor, file.path)) run.failure->backend = run.descriptor->name;
        out.warnings.push_back(std::move(*run.failure));
        continue;
      }
      if (!names.insert(run.descriptor->name).second) {
        warn("plugin", WarningKind::inconsistent, text::cat(who, " was not run: an earlier plugin has its name"));
        continue;
      }
      if (!run.detected) continue;
      if (run.too_large) {
        warn(backend, WarningKind::truncated,
             text::cat(who, " wrote more than ", limits.output_cap, " bytes; its output was dropped"));
        continue;
      }
      if (run.detect_result != 0)
        warn(backend, WarningKind::tool_failed, text::cat(who, " could not look (its detect returned ", run.detect_result, ")"));
      if (run.document.empty()) continue;
      auto document = read_plugin_document(run.document, *run.descriptor);
      if (!document) {
        warn(backend, WarningKind::parse_error, text::cat(who, ": ", document.error().message));
        continue;
      }
      apply_plugin_visibility(document->devices, *run.descriptor, ctx.system());
      for (auto& d : document->devices) {
        d.index = next_index++;  // the backend's order: plugin by plugin, each in its own order
        out.devices.push_back(std::move(d));
      }
      for (auto& w : document->warnings) out.warnings.push_back(std::move(w));
    }
    return out;
  }

 private:
  PluginSettings settings_;
};

}  // namespace

std::shared_ptr<const PluginRunner> plugin_runner(const PluginSettings& settings) {
  return std::make_shared<const PluginSetRunner>(settings);
}

std::vector<PluginDescription> describe_plugins(const PluginSettings& settings, std::chrono::milliseconds timeout) {
  std::vector<PluginDescription> out;
  const auto host = settings.in_process ? std::nullopt : find_plugin_host(settings);
  const plugin_detail::PluginLimits limits{timeout, default_output_cap};
  for (auto& file : find_plugins(settings)) {
    PluginDescription d{file, std::nullopt, file.refused};
    if (!d.problem) {
      if (!settings.in_process && !host) {
        d.problem = "no hwaccel-plugin-host to run it in (set HWACCEL_PLUGIN_HOST)";
      } else {
        auto run = host ? plugin_detail::run_isolated(file, *host, nullptr, limits)
                        : plugin_detail::run_in_process(file, nullptr, limits);
        d.descriptor = std::move(run.descriptor);
        if (run.failure) d.problem = std::move(run.failure->message);
      }
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace hwaccel
