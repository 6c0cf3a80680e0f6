// Detection in parts: lazily, one family's backends at a time, each run at
// most once and the parts joined on request; and again for only the backends
// a hot-plug concerns, joined with what the previous registry had.
module;
#include <algorithm>
#include <array>
#include <bitset>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>
module hwaccel.registry;

namespace hwaccel {
namespace {

enum class Run : unsigned char { pending, running, done };

std::bitset<backend_count> mask_of(std::span<const Backend> backends) {
  std::bitset<backend_count> mask;
  for (Backend b : backends) mask.set(static_cast<std::size_t>(b));
  return mask;
}

// Position of a detector or probe name in the registration table, for
// ordering warnings and timings as one detection would.
std::size_t table_position(std::string_view name) {
  const auto table = detector_table();
  for (std::size_t i = 0; i < table.size(); ++i)
    if (table[i]->name == name) return i;
  return table.size();
}

template <class T>
void append(std::vector<T>& into, std::vector<T>&& from) {
  into.insert(into.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

// Joins `part` into `into` as one more detector's output.
void join(Inventory& into, Inventory&& part) {
  append(into.devices, std::move(part.devices));
  append(into.links, std::move(part.links));
  append(into.interconnects, std::move(part.interconnects));
  append(into.warnings, std::move(part.warnings));
  append(into.timings, std::move(part.timings));
  append(into.system.storage, std::move(part.system.storage));
  append(into.system.network, std::move(part.system.network));
  if (part.system.cpu) into.system.cpu = std::move(part.system.cpu);
  if (part.system.environment) into.system.environment = std::move(part.system.environment);
}

// Finalizes joined parts as one detection, reporting in table order.
AcceleratorRegistry finalize_joined(Inventory all, const System& system, const DetectOptions& options) {
  finalize_inventory(all, system, options);
  stable_sort_by(all.warnings, [](const Warning& w) { return table_position(w.backend); });
  stable_sort_by(all.timings, [](const BackendTiming& t) { return table_position(t.name); });
  return AcceleratorRegistry(std::move(all));
}

// Backends that report the same GPUs and are merged by finalize: Vulkan and
// those whose GPUs are Vulkan devices too.
std::bitset<backend_count> merging_backends() {
  std::bitset<backend_count> mask;
  mask.set(static_cast<std::size_t>(Backend::vulkan));
  for (const Backend b : all_backends)
    if (facts_of(b).merges_with_vulkan) mask.set(static_cast<std::size_t>(b));
  return mask;
}

}  // namespace

AcceleratorRegistry redetect_backends(const AcceleratorRegistry& previous, const System& system,
                                      const DetectOptions& options, std::bitset<backend_count> backends) {
  const auto merging = merging_backends();
  if ((backends & merging).any()) backends |= merging;
  backends &= options.backends;
  if (backends == options.backends) return AcceleratorRegistry(detect_inventory(system, options));
  DetectOptions run = options;
  run.backends = backends;
  run.system_probes = false;
  Inventory part = detect_inventory(system, run);

  Inventory kept = previous.inventory();
  const auto redetected = [&](Backend b) { return backends.test(static_cast<std::size_t>(b)); };
  const auto named_redetected = [&](std::string_view name) {
    const auto b = parse_backend(name);
    return b && redetected(*b);
  };
  std::vector<std::string> gone;
  for (const auto& d : kept.devices)
    if (redetected(d.backend)) gone.push_back(d.id);
  std::sort(gone.begin(), gone.end());
  const auto is_gone = [&](const std::string& id) { return std::binary_search(gone.begin(), gone.end(), id); };
  std::erase_if(kept.devices, [&](const DeviceProfile& d) { return redetected(d.backend); });
  std::erase_if(kept.links, [&](const DeviceLink& l) { return is_gone(l.a) || is_gone(l.b); });
  std::erase_if(kept.interconnects, [&](const Interconnect& i) {
    return std::any_of(i.device_ids.begin(), i.device_ids.end(), is_gone);
  });
  std::erase_if(kept.warnings, [&](const Warning& w) { return named_redetected(w.backend); });
  std::erase_if(kept.timings, [&](const BackendTiming& t) { return named_redetected(t.name); });
  for (auto& nic : kept.system.network) std::erase_if(nic.near_devices, is_gone);
  join(kept, std::move(part));
  return finalize_joined(std::move(kept), system, options);
}

struct LazyRegistry::State {
  State(std::unique_ptr<System> own, const System& sys, DetectOptions o)
      : owned(std::move(own)), system(sys), options(o) {
    backends.fill(Run::pending);
  }

  std::unique_ptr<System> owned;
  const System& system;
  DetectOptions options;

  std::mutex mutex;
  std::condition_variable finished;
  std::array<Run, backend_count> backends{};
  Run host_probes = Run::pending;
  std::vector<Inventory> parts;

  // Runs what of `wanted` (and the host probes when `probes`) nobody has run
  // or is running, then waits until all of it is done. Detection runs
  // without the lock; concurrent callers share runs instead of repeating them.
  void ensure(std::bitset<backend_count> wanted, bool probes) {
    wanted &= options.backends;
    std::unique_lock lock(mutex);
    std::bitset<backend_count> mine;
    for (std::size_t i = 0; i < backend_count; ++i)
      if (wanted.test(i) && backends[i] == Run::pending) {
        backends[i] = Run::running;
        mine.set(i);
      }
    const bool my_probes = probes && host_probes == Run::pending;
    if (my_probes) host_probes = Run::running;
    if (mine.any() || my_probes) {
      lock.unlock();
      DetectOptions run = options;
      run.backends = mine;
      run.system_probes = my_probes;
      Inventory part;
      try {
        part = detect_inventory(system, run);
      } catch (const std::exception& e) {
        // Detectors do not throw; this is allocation failure or worse. The
        // backends are still marked done so that no caller waits forever.
        part = Inventory{};
        part.warnings.push_back(Warning{"detect", WarningKind::tool_failed, text::cat("lazy detection failed: ", e.what())});
      } catch (...) {
        part = Inventory{};
        part.warnings.push_back(Warning{"detect", WarningKind::tool_failed, "lazy detection failed"});
      }
      lock.lock();
      parts.push_back(std::move(part));
      for (std::size_t i = 0; i < backend_count; ++i)
        if (mine.test(i)) backends[i] = Run::done;
      if (my_probes) host_probes = Run::done;
      finished.notify_all();
    }
    finished.wait(lock, [&] {
      for (std::size_t i = 0; i < backend_count; ++i)
        if (wanted.test(i) && backends[i] == Run::running) return false;
      return !(probes && host_probes == Run::running);
    });
  }
};

LazyRegistry::LazyRegistry(DetectOptions options) {
  auto live = make_live_system();
  const System& system = *live;
  state_ = std::make_unique<State>(std::move(live), system, options);
}

LazyRegistry::LazyRegistry(const System& system, DetectOptions options)
    : state_(std::make_unique<State>(nullptr, system, options)) {}

LazyRegistry::~LazyRegistry() = default;

std::vector<DeviceProfile> LazyRegistry::by_family(Family family) {
  State& s = *state_;
  s.ensure(mask_of(backends_of(family)), false);
  std::vector<DeviceProfile> out;
  {
    std::lock_guard lock(s.mutex);
    for (const auto& part : s.parts)
      for (const auto& d : part.devices)
        if (d.family == family) out.push_back(d);
  }
  std::sort(out.begin(), out.end(), [](const DeviceProfile& a, const DeviceProfile& b) {
    return std::tie(a.backend, a.index) < std::tie(b.backend, b.index);
  });
  return out;
}

std::bitset<backend_count> LazyRegistry::probed() const {
  State& s = *state_;
  std::lock_guard lock(s.mutex);
  std::bitset<backend_count> done;
  for (std::size_t i = 0; i < backend_count; ++i)
    if (s.backends[i] == Run::done) done.set(i);
  return done;
}

AcceleratorRegistry LazyRegistry::registry() {
  State& s = *state_;
  s.ensure(std::bitset<backend_count>{}.set(), s.options.system_probes);
  Inventory all;
  {
    std::lock_guard lock(s.mutex);
    for (const Inventory& part : s.parts) join(all, Inventory(part));
  }
  // Parts ran in the order families were asked for; report in table order.
  return finalize_joined(std::move(all), s.system, s.options);
}

}  // namespace hwaccel
