// Runs the selected detectors, concurrently where they may wait on a tool,
// and merges their findings into one deterministic inventory.
module;
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include "threads.hpp"
#include <utility>
#include <vector>
module hwaccel.detect;

namespace hwaccel {
namespace {

bool has_plugins(const DetectOptions& options) { return options.plugins && !options.plugins->empty(); }

// The plugin backend's row runs only when some plugin is loaded: a detection
// without plugins reports no empty timing for it.
bool selected(const Detector& d, const DetectOptions& options) {
  if (d.backend == Backend::plugin) return options.enabled(Backend::plugin) && has_plugins(options);
  return d.backend ? options.enabled(*d.backend) : options.system_probes;
}

// A detector whose tools are all absent cannot block on a process: running it
// inline saves a thread start, which costs more than most sysfs probes.
[[maybe_unused]] bool may_wait_on_tool(const Detector& d, const System& system, bool tools_looked_for) {
  return tools_looked_for && !system.runs_instantly() &&
         std::any_of(d.tools.begin(), d.tools.end(), [&](std::string_view tool) { return system.find_tool(tool).has_value(); });
}

// The machine as a detector whose backend leaves no trace in the kernel sees
// it: its own tools are not looked for (looks_for_tools), everything else
// goes through.
class WithoutTools final : public System {
 public:
  WithoutTools(const System& inner, const Detector& detector, const DetectOptions& diagnostics) noexcept
      : inner_(inner), detector_(detector), diagnostics_(diagnostics) {}

  Result<FileContent> read_file(std::string_view path, std::size_t max_bytes) const override {
    return inner_.read_file(path, max_bytes);
  }
  Result<std::vector<DirEntry>> list_dir(std::string_view path) const override { return inner_.list_dir(path); }
  Result<std::string> read_link(std::string_view path) const override { return inner_.read_link(path); }
  Result<FileStatus> status(std::string_view path, bool follow_symlinks) const override {
    return inner_.status(path, follow_symlinks);
  }
  std::optional<std::string> env(std::string_view name) const override { return inner_.env(name); }
  ProcessIdentity identity() const override { return inner_.identity(); }
  std::optional<std::string> find_tool(std::string_view name) const override {
    if (!own(name)) return inner_.find_tool(name);
    if (diagnostics_.wants(LogLevel::debug))
      diagnostics_.report(DiagnosticEvent{LogLevel::debug, "find_tool", detector_.name, std::string(name),
                                        "not looked for: no trace of its devices in /sys/module, /dev or PCI", {}, -1,
                                        std::chrono::microseconds{-1}});
    return std::nullopt;
  }
  Result<ToolResult> run(const ToolRequest& request) const override {
    if (!request.argv.empty() && own(request.argv[0]))
      return fail(ErrorKind::tool_not_found,
                  text::cat(request.argv[0], " was not looked for: no trace of ", detector_.name, " devices in the kernel"));
    return inner_.run(request);
  }
  bool runs_instantly() const noexcept override { return inner_.runs_instantly(); }
  bool reads_from_memory() const noexcept override { return inner_.reads_from_memory(); }

 private:
  bool own(std::string_view tool) const noexcept {
    return std::find(detector_.tools.begin(), detector_.tools.end(), tool) != detector_.tools.end();
  }

  const System& inner_;
  const Detector& detector_;
  const DetectOptions& diagnostics_;
};

struct Slot {
  DetectorOutput output;
  std::chrono::microseconds elapsed{0};
};

using Clock = std::chrono::steady_clock;

std::chrono::microseconds since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start);
}

// The first line of a tool's complaint, for an event's detail.
std::string first_line(std::string_view text) {
  while (!text.empty() && (text.front() == '\n' || text.front() == '\r' || text.front() == ' ')) text.remove_prefix(1);
  return text::excerpt(text.substr(0, text.find('\n')), 200);
}

// One detector's view of the machine when diagnostics are on: every call is
// passed to the System detection reads and reported as an event of that
// detector (what was looked at, how it went, how long it took).
class ObservingSystem final : public System {
 public:
  ObservingSystem(const System& inner, const DetectOptions& diagnostics, std::string_view backend) noexcept
      : inner_(inner), diagnostics_(diagnostics), backend_(backend) {}

  Result<FileContent> read_file(std::string_view path, std::size_t max_bytes) const override {
    const auto start = Clock::now();
    auto r = inner_.read_file(path, max_bytes);
    if (diagnostics_.wants(LogLevel::trace))
      report(LogLevel::trace, "read_file", std::string(path), r, start,
             r ? static_cast<std::int64_t>(r->data.size()) : -1);
    return r;
  }
  Result<std::vector<DirEntry>> list_dir(std::string_view path) const override {
    const auto start = Clock::now();
    auto r = inner_.list_dir(path);
    if (diagnostics_.wants(LogLevel::trace))
      report(LogLevel::trace, "list_dir", std::string(path), r, start, r ? static_cast<std::int64_t>(r->size()) : -1);
    return r;
  }
  Result<std::string> read_link(std::string_view path) const override {
    const auto start = Clock::now();
    auto r = inner_.read_link(path);
    if (diagnostics_.wants(LogLevel::trace)) report(LogLevel::trace, "read_link", std::string(path), r, start, -1);
    return r;
  }
  Result<FileStatus> status(std::string_view path, bool follow_symlinks) const override {
    const auto start = Clock::now();
    auto r = inner_.status(path, follow_symlinks);
    if (diagnostics_.wants(LogLevel::trace)) report(LogLevel::trace, "status", std::string(path), r, start, -1);
    return r;
  }
  std::optional<std::string> env(std::string_view name) const override { return inner_.env(name); }
  ProcessIdentity identity() const override { return inner_.identity(); }
  std::optional<std::string> find_tool(std::string_view name) const override {
    auto found = inner_.find_tool(name);
    if (diagnostics_.wants(LogLevel::debug))
      diagnostics_.report(DiagnosticEvent{LogLevel::debug, "find_tool", backend_, std::string(name),
                                        found ? text::cat("found ", *found) : std::string("not found"), {}, -1,
                                        std::chrono::microseconds{-1}});
    return found;
  }
  Result<ToolResult> run(const ToolRequest& request) const override {
    const auto start = Clock::now();
    auto r = inner_.run(request);
    if (diagnostics_.wants(LogLevel::debug)) {
      DiagnosticEvent e{LogLevel::debug, "run_tool", backend_, join_argv(request.argv), {}, {}, -1, since(start)};
      if (!r) {
        e.outcome = std::string(to_string(r.error().kind));
        e.detail = r.error().message;
      } else {
        e.outcome = r->signal ? text::cat("signal ", *r->signal) : text::cat("exit ", r->exit_code);
        // What a failed tool said: its first line of stderr, else of stdout
        // (nvidia-smi prints its errors there).
        if (!r->succeeded()) e.detail = first_line(r->err.find_first_not_of(" \r\n") != std::string::npos ? r->err : r->out);
        e.count = static_cast<std::int64_t>(r->out.size());
      }
      diagnostics_.report(e);
    }
    return r;
  }
  bool runs_instantly() const noexcept override { return inner_.runs_instantly(); }
  bool reads_from_memory() const noexcept override { return inner_.reads_from_memory(); }

 private:
  template <class T>
  void report(LogLevel level, std::string_view event, std::string subject, const Result<T>& r, Clock::time_point start,
              std::int64_t count) const {
    diagnostics_.report(DiagnosticEvent{level, event, backend_, std::move(subject),
                                      r ? std::string("ok") : std::string(to_string(r.error().kind)), {}, count,
                                      since(start)});
  }

  const System& inner_;
  const DetectOptions& diagnostics_;
  std::string_view backend_;
};

// A detector that throws (a parser bug on input nobody foresaw, or memory
// running out) must not take the caller's process down, nor the other
// backends' results: what it found is dropped and a warning says why. The
// words "stopped on an internal error" are what the fuzz targets look for.
[[maybe_unused]] DetectorOutput stopped_output(const DetectContext& ctx, std::string_view detector, std::string_view what) {
  DetectorOutput out;
  ctx.warn(out, WarningKind::parse_error,
           text::cat(detector, " stopped on an internal error (", text::excerpt(what, 200),
                     "); its findings are left out. Please report it with a capture (hwaccel capture)."));
  return out;
}

void run_one(const Detector& d, const System& machine, const DetectOptions& options, bool tools_looked_for, Slot& slot) {
  const auto start = Clock::now();
  // Reads are reported at trace and tool runs at debug: below debug, the
  // detector reads the machine directly. The observer sits under the tool
  // filter, so a tool that is not looked for is reported once, with why.
  std::optional<ObservingSystem> observed;
  if (options.wants(LogLevel::debug)) observed.emplace(machine, options, d.name);
  const System& seen = observed ? static_cast<const System&>(*observed) : machine;
  std::optional<WithoutTools> without_tools;
  if (!tools_looked_for) without_tools.emplace(seen, d, options);
  const System& system = without_tools ? static_cast<const System&>(*without_tools) : seen;
  if (options.wants(LogLevel::debug))
    options.report(DiagnosticEvent{LogLevel::debug, "detector_start", d.name, {}, {}, {}, -1, std::chrono::microseconds{-1}});
  DetectContext ctx(system, options, d.name);
#if __cpp_exceptions
  try {
    slot.output = d.detect(ctx);
  } catch (const std::exception& e) {
    slot.output = stopped_output(ctx, d.name, e.what());
  } catch (...) {
    slot.output = stopped_output(ctx, d.name, "an exception that is not a std::exception");
  }
#else
  slot.output = d.detect(ctx);  // without exceptions, an internal error ends the program
#endif
  slot.elapsed = since(start);
  if (options.wants(LogLevel::info))
    options.report(DiagnosticEvent{LogLevel::info, "detector_done", d.name, {},
                                   slot.output.warnings.empty() ? std::string("ok")
                                                                : text::cat(slot.output.warnings.size(), " warning(s)"),
                                   {}, static_cast<std::int64_t>(slot.output.devices.size()), slot.elapsed});
  if (options.wants(LogLevel::warn))
    for (const auto& w : slot.output.warnings)
      options.report(DiagnosticEvent{LogLevel::warn, "warning", d.name, {}, std::string(to_string(w.kind)), w.message,
                                     -1, std::chrono::microseconds{-1}});
}

template <class T>
void append(std::vector<T>& into, std::vector<T>&& from) {
  into.insert(into.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

}  // namespace

Inventory detect_inventory(const System& machine, const DetectOptions& options) {
  const auto started = Clock::now();
  // Detectors share what they read: /proc/cpuinfo, mountinfo, the PCI list
  // and sysfs links are each read once per detection.
  std::optional<ReadCache> cache;
  if (!machine.reads_from_memory()) cache.emplace(machine);
  const System& system = cache ? static_cast<const System&>(*cache) : machine;
  const auto table = detector_table();
  std::vector<Slot> slots(table.size());
#if HWACCEL_HAS_THREADS
  std::vector<std::jthread> threads;
#endif

  // Settled once: whether the plugin row runs means looking for plugins.
  std::vector<char> chosen(table.size());
  for (std::size_t i = 0; i < table.size(); ++i) chosen[i] = selected(*table[i], options);
  // The kernel's traces decide whose tools are looked for; read only when
  // they decide for a selected detector.
  bool traces_decide = false;
  for (std::size_t i = 0; i < table.size(); ++i) traces_decide |= chosen[i] && tools_need_evidence(*table[i], options);
  const KernelTraces traces = traces_decide ? read_kernel_traces(system) : KernelTraces{};
  std::vector<std::size_t> inline_ones;
  std::vector<char> tools_looked_for(table.size(), 1);
  for (std::size_t i = 0; i < table.size(); ++i) {
    const Detector& d = *table[i];
    if (!chosen[i]) continue;
    tools_looked_for[i] = looks_for_tools(d, traces, options);
#if HWACCEL_HAS_THREADS
    // A plugin waits on its host process, or on tools of its own.
    if (d.backend == Backend::plugin || may_wait_on_tool(d, system, tools_looked_for[i])) {
      threads.emplace_back([&, i] { run_one(*table[i], system, options, tools_looked_for[i], slots[i]); });
      continue;
    }
#endif
    inline_ones.push_back(i);
  }
  for (std::size_t i : inline_ones) run_one(*table[i], system, options, tools_looked_for[i], slots[i]);
#if HWACCEL_HAS_THREADS
  threads.clear();  // joins
#endif

  // Merge in table order, whatever order the threads finished in.
  Inventory inv;
  for (std::size_t i = 0; i < table.size(); ++i) {
    const Detector& d = *table[i];
    if (!chosen[i]) continue;
    DetectorOutput& out = slots[i].output;
    append(inv.devices, std::move(out.devices));
    append(inv.links, std::move(out.links));
    append(inv.interconnects, std::move(out.interconnects));
    append(inv.warnings, std::move(out.warnings));
    append(inv.system.storage, std::move(out.storage));
    append(inv.system.network, std::move(out.network));
    if (out.cpu) inv.system.cpu = std::move(out.cpu);
    if (out.environment) inv.system.environment = std::move(out.environment);
    inv.timings.push_back(BackendTiming{std::string(d.name), slots[i].elapsed});
  }
  finalize_inventory(inv, system, options);
  if (options.wants(LogLevel::info))
    options.report(DiagnosticEvent{LogLevel::info, "detection_done", {}, {}, text::cat(inv.warnings.size(), " warning(s)"),
                                     {}, static_cast<std::int64_t>(inv.devices.size()), since(started)});
  return inv;
}

}  // namespace hwaccel
