// Plugins where there are no processes or shared objects (WebAssembly), or
// where their loader is not ported (Windows: no dlopen, no posix_spawn): none
// is ever found, so the plugin backend never runs.
module;
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
module hwaccel.registry;

namespace hwaccel {

std::string_view system_plugin_folder() noexcept { return {}; }

std::string_view plugin_host_installed_path() noexcept { return {}; }

std::optional<std::string> find_plugin_host(const PluginSettings&) { return std::nullopt; }

std::vector<PluginFile> find_plugins(const PluginSettings&) { return {}; }

std::vector<PluginDescription> describe_plugins(const PluginSettings&, std::chrono::milliseconds) { return {}; }

std::shared_ptr<const PluginRunner> plugin_runner(const PluginSettings&) { return nullptr; }

}  // namespace hwaccel
