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
#include <thread>
#include <utility>
#include <vector>
module hwaccel.detect;

namespace hwaccel {
namespace {

bool selected(const Detector& d, const DetectOptions& options) {
  return d.backend ? options.enabled(*d.backend) : options.system_probes;
}

// A detector whose tools are all absent cannot block on a process: running it
// inline saves a thread start, which costs more than most sysfs probes.
bool may_wait_on_tool(const Detector& d, const System& system) {
  return !system.runs_instantly() && std::any_of(d.tools.begin(), d.tools.end(), [&](std::string_view tool) {
           return system.find_tool(tool).has_value();
         });
}

struct Slot {
  DetectorOutput output;
  std::chrono::microseconds elapsed{0};
};

// A detector that throws (a parser bug on input nobody foresaw, or memory
// running out) must not take the caller's process down, nor the other
// backends' results: what it found is dropped and a warning says why. The
// words "stopped on an internal error" are what the fuzz targets look for.
DetectorOutput stopped_output(const DetectContext& ctx, std::string_view detector, std::string_view what) {
  DetectorOutput out;
  ctx.warn(out, WarningKind::parse_error,
           text::cat(detector, " stopped on an internal error (", text::excerpt(what, 200),
                     "); its findings are left out. Please report it with a capture (hwaccel capture)."));
  return out;
}

void run_one(const Detector& d, const System& system, const DetectOptions& options, Slot& slot) {
  const auto start = std::chrono::steady_clock::now();
  DetectContext ctx(system, options, d.name);
  try {
    slot.output = d.detect(ctx);
  } catch (const std::exception& e) {
    slot.output = stopped_output(ctx, d.name, e.what());
  } catch (...) {
    slot.output = stopped_output(ctx, d.name, "an exception that is not a std::exception");
  }
  slot.elapsed = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start);
}

template <class T>
void append(std::vector<T>& into, std::vector<T>&& from) {
  into.insert(into.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

}  // namespace

Inventory detect_inventory(const System& machine, const DetectOptions& options) {
  // Detectors share what they read: /proc/cpuinfo, mountinfo, the PCI list
  // and sysfs links are each read once per detection.
  std::optional<ReadCache> cache;
  if (!machine.reads_from_memory()) cache.emplace(machine);
  const System& system = cache ? static_cast<const System&>(*cache) : machine;
  const auto table = detector_table();
  std::vector<Slot> slots(table.size());
  std::vector<std::jthread> threads;

  // On a live machine every read is a system call. The host probes
  // (environment, storage, network) read the most files and run no tool:
  // with a second CPU they run on a thread of their own, started first,
  // beside the backends that run inline, which halves the wall time of a
  // detection without accelerators. A replayed fixture reads memory, where
  // a thread costs more than it saves.
  const bool probe_lane = cache.has_value() && std::thread::hardware_concurrency() > 1;
  if (probe_lane) {
    std::vector<std::size_t> probes;
    for (std::size_t i = 0; i < table.size(); ++i)
      if (!table[i]->backend && selected(*table[i], options)) probes.push_back(i);
    if (!probes.empty())
      threads.emplace_back([&, probes = std::move(probes)] {
        for (std::size_t i : probes) run_one(*table[i], system, options, slots[i]);
      });
  }
  std::vector<std::size_t> inline_ones;
  for (std::size_t i = 0; i < table.size(); ++i) {
    const Detector& d = *table[i];
    if (!selected(d, options) || (probe_lane && !d.backend)) continue;
    if (may_wait_on_tool(d, system))
      threads.emplace_back([&, i] { run_one(*table[i], system, options, slots[i]); });
    else
      inline_ones.push_back(i);
  }
  for (std::size_t i : inline_ones) run_one(*table[i], system, options, slots[i]);
  threads.clear();  // joins

  // Merge in table order, whatever order the threads finished in.
  Inventory inv;
  for (std::size_t i = 0; i < table.size(); ++i) {
    const Detector& d = *table[i];
    if (!selected(d, options)) continue;
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
  return inv;
}

}  // namespace hwaccel
