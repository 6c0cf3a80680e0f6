// --plugins-in-process: a plugin loaded into this process with dlopen and
// handed the C system table directly. Faster than a host process (no spawn,
// no pipe per call), and a plugin's crash or hang is then hwaccel's.
module;
#include <dlfcn.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hwaccel/plugin.h"
module hwaccel.registry;

namespace hwaccel::plugin_detail {

static_assert(HWACCEL_PLUGIN_ABI_VERSION == plugin_abi_version, "plugin.h and the library speak one ABI version");

namespace {

std::vector<std::string> in_process_list(const char* const* list) {
  std::vector<std::string> out;
  for (; list && *list && out.size() < 256; ++list) out.emplace_back(*list, ::strnlen(*list, 4096));
  return out;
}

std::string in_process_text(const char* s) { return s ? std::string(s, ::strnlen(s, 4096)) : std::string(); }

// What the callbacks hand the plugin stays here until detect returns.
struct InProcessCalls {
  PluginCalls calls;
  std::size_t output_cap = 0;
  std::string document;
  bool too_large = false;
  std::deque<std::string> kept;
  std::deque<std::vector<hwaccel_plugin_dir_entry>> listings;

  hwaccel_plugin_bytes keep(std::string bytes) {
    const auto& s = kept.emplace_back(std::move(bytes));
    return {s.data(), s.size()};
  }
};

InProcessCalls& calls_of(void* context) { return *static_cast<InProcessCalls*>(context); }

int in_process_read_file(void* context, const char* path, std::size_t max_bytes, hwaccel_plugin_bytes* content,
                         int* truncated) {
  if (!path || !content) return HWACCEL_PLUGIN_FAILED;
  auto& c = calls_of(context);
  FileContent file;
  const int status = c.calls.read_file(path, max_bytes, file);
  if (status != HWACCEL_PLUGIN_OK) return status;
  if (truncated) *truncated = file.truncated ? 1 : 0;
  *content = c.keep(std::move(file.data));
  return status;
}

int in_process_list_dir(void* context, const char* path, const hwaccel_plugin_dir_entry** entries, std::size_t* count) {
  if (!path || !entries || !count) return HWACCEL_PLUGIN_FAILED;
  auto& c = calls_of(context);
  std::vector<DirEntry> listed;
  const int status = c.calls.list_dir(path, listed);
  if (status != HWACCEL_PLUGIN_OK) return status;
  auto& listing = c.listings.emplace_back();
  for (auto& e : listed)
    listing.push_back({c.keep(std::move(e.name)).data, static_cast<hwaccel_plugin_file_type>(plugin_file_type(e.type))});
  *entries = listing.data();
  *count = listing.size();
  return status;
}

int in_process_read_link(void* context, const char* path, hwaccel_plugin_bytes* target) {
  if (!path || !target) return HWACCEL_PLUGIN_FAILED;
  auto& c = calls_of(context);
  std::string link;
  const int status = c.calls.read_link(path, link);
  if (status == HWACCEL_PLUGIN_OK) *target = c.keep(std::move(link));
  return status;
}

int in_process_status(void* context, const char* path, int follow, hwaccel_plugin_file_status* out) {
  if (!path || !out) return HWACCEL_PLUGIN_FAILED;
  FileStatus st;
  const int status = calls_of(context).calls.status(path, follow != 0, st);
  if (status == HWACCEL_PLUGIN_OK)
    *out = {static_cast<hwaccel_plugin_file_type>(plugin_file_type(st.type)), st.size, st.mode, st.uid, st.gid};
  return status;
}

int in_process_env(void* context, const char* name, hwaccel_plugin_bytes* value) {
  if (!name || !value) return HWACCEL_PLUGIN_FAILED;
  auto& c = calls_of(context);
  std::string v;
  const int status = c.calls.env(name, v);
  if (status == HWACCEL_PLUGIN_OK) *value = c.keep(std::move(v));
  return status;
}

int in_process_run(void* context, const char* const* argv, std::uint32_t timeout_ms, hwaccel_plugin_tool_result* result) {
  if (!argv || !argv[0] || !result) return HWACCEL_PLUGIN_FAILED;
  auto& c = calls_of(context);
  std::vector<std::string> args;
  for (const char* const* a = argv; *a && args.size() < 4096; ++a) args.emplace_back(*a);
  ToolResult r;
  const int status = c.calls.run(std::move(args), timeout_ms, r);
  if (status != HWACCEL_PLUGIN_OK) return status;
  result->exit_code = r.exit_code;
  result->signal = r.signal.value_or(0);
  result->out_truncated = r.out_truncated;
  result->err_truncated = r.err_truncated;
  result->out = c.keep(std::move(r.out));
  result->err = c.keep(std::move(r.err));
  return status;
}

int in_process_emit(void* context, const char* data, std::size_t size) {
  auto& c = calls_of(context);
  if (c.too_large) return HWACCEL_PLUGIN_TOO_LARGE;
  if (!data && size) return HWACCEL_PLUGIN_FAILED;
  if (size > c.output_cap - c.document.size()) {
    c.too_large = true;
    c.document = {};
    return HWACCEL_PLUGIN_TOO_LARGE;
  }
  c.document.append(data, size);
  return HWACCEL_PLUGIN_OK;
}

const char* in_process_last_error(void* context) { return calls_of(context).calls.error().c_str(); }

// dlclose when done: a plugin's code stays loaded no longer than its run.
struct LoadedPlugin {
  void* handle = nullptr;
  ~LoadedPlugin() {
    if (handle) ::dlclose(handle);
  }
};

}  // namespace

PluginRun run_in_process(const PluginFile& file, const DetectContext* ctx, const PluginLimits& limits) {
  PluginRun run;
  const auto failure = [&](WarningKind kind, std::string message) {
    run.failure = Warning{"plugin", kind, std::move(message)};
    return run;
  };
  auto fd = open_plugin_file(file.path);
  if (!fd) return failure(WarningKind::permission_denied, fd.error().message);
  // Loaded through the descriptor that was checked, not the path again.
  const std::string through = text::cat("/proc/self/fd/", fd->get());
  LoadedPlugin loaded{::dlopen(through.c_str(), RTLD_NOW | RTLD_LOCAL)};
  if (!loaded.handle) {
    const char* why = ::dlerror();
    return failure(WarningKind::unsupported, text::cat("plugin ", file.path, " cannot be loaded: ", why ? why : "dlopen failed"));
  }
  const auto entry = reinterpret_cast<hwaccel_plugin_entry_fn>(::dlsym(loaded.handle, HWACCEL_PLUGIN_ENTRY_NAME));
  if (!entry) return failure(WarningKind::unsupported, text::cat("plugin ", file.path, " exports no " HWACCEL_PLUGIN_ENTRY_NAME "()"));
  const hwaccel_plugin_descriptor* d = entry();
  if (!d) return failure(WarningKind::unsupported, text::cat("plugin ", file.path, ": " HWACCEL_PLUGIN_ENTRY_NAME "() returned no descriptor"));

  PluginDescriptor& desc = run.descriptor.emplace();
  desc.abi_version = d->abi_version;
  desc.name = in_process_text(d->name);
  std::string family;
  if (d->abi_version == HWACCEL_PLUGIN_ABI_VERSION) {
    family = in_process_text(d->family);
    desc.version = in_process_text(d->version);
    desc.description = in_process_text(d->description);
    desc.vendor = in_process_text(d->vendor);
    desc.drivers = in_process_list(d->drivers);
    desc.kernel_modules = in_process_list(d->kernel_modules);
    for (std::size_t i = 0; d->pci_ids && i < d->pci_id_count && i < 256; ++i)
      desc.pci_ids.push_back(std::uint32_t{d->pci_ids[i].vendor} << 16 | d->pci_ids[i].device);
    desc.device_nodes = in_process_list(d->device_nodes);
    desc.visibility_variable = in_process_text(d->visibility_variable);
    desc.tools = in_process_list(d->tools);
  }
  if (auto refused = accept_descriptor(desc, family, file)) {
    run.failure = std::move(*refused);
    return run;
  }
  if (!ctx || !d->detect) return run;

  InProcessCalls calls{PluginCalls(*ctx, desc.name), limits.output_cap, {}, false, {}, {}};
  const hwaccel_plugin_system system{HWACCEL_PLUGIN_ABI_VERSION, &calls, &in_process_read_file, &in_process_list_dir,
                                     &in_process_read_link, &in_process_status, &in_process_env, &in_process_run,
                                     &in_process_emit, &in_process_last_error};
  run.detect_result = d->detect(&system);
  run.detected = true;
  run.too_large = calls.too_large;
  run.document = std::move(calls.document);
  return run;
}

}  // namespace hwaccel::plugin_detail
