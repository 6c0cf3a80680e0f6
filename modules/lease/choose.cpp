// reserve(): which devices are free (no lease, no other process on them by
// telemetry, enough memory, not too busy), in one domain where asked, and
// the lease on them with the variables that make a runtime use them.
module;
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <unistd.h>
module hwaccel.lease;
import :internals;

namespace hwaccel {

struct Lease::State {
  std::vector<LeaseHolder> holders;
  std::vector<lease_detail::LockFile> locks;
  std::vector<std::pair<std::string, std::string>> environment;
  std::vector<std::string> cleared;
  std::vector<std::string> warnings;
  std::unique_ptr<lease_detail::UsageLog> usage;
  bool released = false;
};

Lease::Lease(std::unique_ptr<State> state) : state_(std::move(state)) {}
Lease::Lease(Lease&&) noexcept = default;
Lease& Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    release();
    state_ = std::move(other.state_);
  }
  return *this;
}
Lease::~Lease() { release(); }

const std::vector<LeaseHolder>& Lease::devices() const noexcept { return state_->holders; }
std::vector<std::pair<std::string, std::string>> Lease::environment() const { return state_->environment; }
const std::vector<std::string>& Lease::cleared_environment() const noexcept { return state_->cleared; }
const std::vector<std::string>& Lease::warnings() const noexcept { return state_->warnings; }

void Lease::release() noexcept {
  if (!state_ || state_->released) return;
  state_->released = true;
  if (state_->usage) state_->usage->finish(state_->warnings);
  state_->locks.clear();  // closes the files: the kernel drops the locks
}

namespace {

// What can be leased: a device, or each partition of a partitioned one.
struct Unit {
  std::string id;
  std::string identity;
  const DeviceProfile* device = nullptr;
  const DevicePartition* partition = nullptr;
};

std::vector<Unit> units_of(const AcceleratorRegistry& registry) {
  std::vector<Unit> units;
  for (const DeviceProfile& d : registry.devices()) {
    if (d.backend == Backend::cpu) continue;
    const std::string identity = device_identity(d);
    if (d.partitions.empty()) {
      units.push_back({d.id, identity, &d, nullptr});
      continue;
    }
    for (const DevicePartition& p : d.partitions)
      units.push_back({p.id, p.uuid ? *p.uuid : text::cat(identity, "/", p.id.substr(p.id.find('/') + 1)), &d, &p});
  }
  return units;
}

std::string gib(std::uint64_t bytes) { return text::cat(static_cast<double>(bytes * 10 / (std::uint64_t{1} << 30)) / 10, " GiB"); }

// Why a unit is not free by telemetry, or nullopt.
std::optional<std::string> busy_reason(const Unit& u, const TelemetrySample& sample, const LeaseRequest& request) {
  std::size_t processes = 0;
  for (const DeviceProcess& p : sample.processes)
    if (u.partition ? p.partition_id == u.id : p.device_id == u.id) ++processes;
  if (processes > 0) return text::cat(processes, processes == 1 ? " process uses it" : " processes use it");
  const DeviceTelemetry* t = nullptr;
  for (const DeviceTelemetry& x : sample.devices)
    if (x.device_id == u.device->id) t = &x;
  std::optional<std::uint64_t> total, used;
  if (t && !u.partition) {
    total = t->memory_total_bytes;
    used = t->memory_used_bytes;
    if (!used && total && t->memory_free_bytes && *t->memory_free_bytes <= *total) used = *total - *t->memory_free_bytes;
  } else if (t) {
    for (const auto& pt : t->partitions)
      if (pt.partition_id == u.id) {
        total = pt.memory_total_bytes;
        used = pt.memory_used_bytes;
      }
  }
  // Memory held with no process to name: a process hwaccel cannot see (another container's, another PID namespace).
  if (used && total && *used >= std::max<std::uint64_t>(std::uint64_t{1} << 30, *total / 20))
    return text::cat(gib(*used), " of its memory is in use by processes hwaccel cannot list");
  if (request.min_free_memory_bytes) {
    if (!total || !used) return std::string("its free memory is not known, and --min-free-memory was asked");
    const std::uint64_t free = *total > *used ? *total - *used : 0;
    if (free < *request.min_free_memory_bytes)
      return text::cat(gib(free), " free, ", gib(*request.min_free_memory_bytes), " asked");
  }
  if (request.max_utilization && t && t->utilization && *t->utilization > *request.max_utilization)
    return text::cat("utilization ", static_cast<int>(*t->utilization * 100), "% is above ",
                     static_cast<int>(*request.max_utilization * 100), "%");
  return std::nullopt;
}

// The domain of each device: its interconnect, else its NVLink/xGMI component.
std::map<std::string, std::size_t> domains_of(const AcceleratorRegistry& registry) {
  std::map<std::string, std::size_t> domain;
  std::size_t next = 0;
  for (const Interconnect& ic : registry.interconnects()) {
    const std::size_t id = next++;
    for (const auto& d : ic.device_ids) domain.emplace(d, id);
  }
  // Union over direct links, for bridges the registry does not list as a fabric.
  std::map<std::string, std::string> parent;
  const auto find = [&](std::string x) {
    while (parent.contains(x) && parent[x] != x) x = parent[x];
    return x;
  };
  for (const DeviceLink& l : registry.links()) {
    if (l.kind != LinkKind::nvlink && l.kind != LinkKind::xgmi) continue;
    parent.try_emplace(l.a, l.a);
    parent.try_emplace(l.b, l.b);
    parent[find(l.a)] = find(l.b);
  }
  std::map<std::string, std::size_t> component;
  for (const DeviceProfile& d : registry.devices()) {
    if (domain.contains(d.id)) continue;
    if (!parent.contains(d.id)) {
      domain.emplace(d.id, next++);
      continue;
    }
    const auto root = find(d.id);
    const auto [it, fresh] = component.try_emplace(root, next);
    if (fresh) ++next;
    domain.emplace(d.id, it->second);
  }
  return domain;
}

// Who holds a lock another process took: its own record says, without
// walking the whole lease directory for each refused device.
std::string holder_text(const std::string& dir, const Unit& u) {
  const auto h = lease_detail::holder_of(dir, u.identity);
  if (!h || h->pid == 0) return "held by another lease";
  char when[32] = {};
  const std::time_t t = h->since;
  std::tm tm{};
  localtime_r(&t, &tm);
  std::strftime(when, sizeof when, "%H:%M:%S", &tm);
  return text::cat("held by ", h->user, " (PID ", h->pid, ") since ", when);
}


struct LeaseEnvironment {
  std::vector<std::pair<std::string, std::string>> set;
  std::vector<std::string> cleared;
  std::vector<std::string> warnings;
};

LeaseEnvironment environment_of(const std::vector<Unit>& units) {
  LeaseEnvironment env;
  std::map<std::string, std::string> lists;
  std::vector<std::string> order;
  for (const Unit& u : units) {
    const Backend b = u.device->backend;
    const BackendFacts& facts = facts_of(b);
    const std::string var(facts.leasing_variable());
    if (var.empty()) {
      env.warnings.push_back(text::cat("no variable selects ", to_string(b), " devices: the command sees every one, and ",
                                       u.id, " is only reserved for it"));
      continue;
    }
    std::string item;
    if (facts.lease_by_uuid) {
      if (u.partition && u.partition->uuid) item = *u.partition->uuid;
      else if (!u.partition && u.device->uuid) item = *u.device->uuid;
    }
    if (item.empty()) {
      const auto index = u.partition ? u.partition->runtime_index.value_or(u.partition->index)
                                     : u.device->runtime_index.value_or(u.device->index);
      item = text::cat(index);
    }
    auto [it, fresh] = lists.try_emplace(var, item);
    if (fresh) order.push_back(var);
    else it->second += "," + item;
    for (const std::string_view name : facts.lease_clears)
      if (std::find(env.cleared.begin(), env.cleared.end(), name) == env.cleared.end()) env.cleared.emplace_back(name);
  }
  for (const auto& var : order) env.set.emplace_back(var, lists[var]);
  std::erase_if(env.cleared, [&](const std::string& name) { return lists.contains(name); });
  return env;
}

struct Attempt {
  std::vector<Unit> chosen;
  std::vector<lease_detail::LockFile> locks;
  std::vector<DeviceRefusal> refused;
  std::optional<Error> error;  // fatal: not worth waiting for
};

Attempt attempt(const AcceleratorRegistry& registry, const System& system, const LeaseRequest& request,
                const std::string& dir) {
  Attempt a;
  const auto units = units_of(registry);
  std::vector<const Unit*> wanted;
  if (!request.device_ids.empty()) {
    for (const std::string& id : request.device_ids) {
      const auto u = std::find_if(units.begin(), units.end(), [&](const Unit& x) { return x.id == id || x.identity == id; });
      if (u == units.end()) {
        const DeviceProfile* d = registry.find(id);
        a.error = Error{ErrorKind::invalid_input,
                        d && !d->partitions.empty()
                            ? text::cat(id, " is partitioned (", d->partitions.size(), " instances): lease its instances (",
                                        d->partitions.front().id, ", ...)")
                            : text::cat("no device ", id, " here (", units.size(), " leasable: ",
                                        units.empty() ? std::string("none") : units.front().id + ", ...", ")")};
        return a;
      }
      if (std::find(wanted.begin(), wanted.end(), &*u) == wanted.end()) wanted.push_back(&*u);
    }
  } else {
    for (const Unit& u : units) wanted.push_back(&u);
  }
  const std::size_t count = request.device_ids.empty() ? request.count : wanted.size();
  if (count == 0) {
    a.error = Error{ErrorKind::invalid_input, "no device was asked for"};
    return a;
  }
  if (wanted.size() < count) {
    a.error = Error{ErrorKind::invalid_input, text::cat(count, " devices asked, and this machine has ", wanted.size(),
                                                        wanted.size() == 1 ? " that can be leased" : " that can be leased")};
    return a;
  }
  TelemetryOptions options;
  options.processes = true;
  const TelemetrySample sample = sample_telemetry(registry, system, options);
  std::vector<const Unit*> free;
  for (const Unit* u : wanted) {
    if (const auto why = busy_reason(*u, sample, request)) a.refused.push_back({u->id, *why});
    else free.push_back(u);
  }
  // Candidate groups: one per domain with same_domain, else all the free units.
  std::vector<std::vector<const Unit*>> groups;
  if (request.same_domain) {
    const auto domain = domains_of(registry);
    std::map<std::size_t, std::vector<const Unit*>> by;
    for (const Unit* u : free) by[domain.at(u->device->id)].push_back(u);
    for (auto& [id, members] : by) groups.push_back(std::move(members));
  } else {
    groups.push_back(free);
  }
  for (const auto& group : groups) {
    if (group.size() < count) continue;
    std::vector<lease_detail::LockFile> locks;
    std::vector<Unit> chosen;
    for (const Unit* u : group) {
      if (chosen.size() == count) break;
      auto lock = lease_detail::lock_device(dir, u->identity);
      if (!lock) {
        if (lock.error().kind == ErrorKind::timeout) a.refused.push_back({u->id, holder_text(dir, *u)});
        else {
          a.error = lock.error();
          return a;
        }
        continue;
      }
      locks.push_back(std::move(*lock));
      chosen.push_back(*u);
    }
    if (chosen.size() == count) {
      a.chosen = std::move(chosen);
      a.locks = std::move(locks);
      return a;
    }
    // Not enough in this group: its locks go, and the next group is tried.
  }
  return a;
}

}  // namespace

Result<Lease> reserve(const AcceleratorRegistry& registry, const System& system, const LeaseRequest& request,
                      std::vector<DeviceRefusal>* refused) {
  const std::string dir = lease_detail::lease_directory(request.lease_dir);
  if (auto ok = lease_detail::check_lease_directory(dir, true); !ok) return fail(ok.error());
  if (request.max_utilization && !(*request.max_utilization >= 0 && *request.max_utilization <= 1))
    return fail(ErrorKind::invalid_input, "the utilization limit must be between 0 and 1");
  const std::int64_t now = static_cast<std::int64_t>(std::time(nullptr));
  if (!request.quota_file.empty()) {
    if (request.usage_db.empty()) return fail(ErrorKind::invalid_input, "a quota needs the usage database it is counted in");
    auto text = read_small_file(request.quota_file, std::uint64_t{1} << 20, "a quota file");
    if (!text) return fail(text.error().kind, text::cat("the quota file ", request.quota_file, ": ", text.error().message));
    auto quota = parse_quota(*text);
    if (!quota) return fail(quota.error().kind, text::cat(request.quota_file, ": ", quota.error().message));
    const std::size_t devices = request.device_ids.empty() ? request.count : request.device_ids.size();
    if (const auto no = lease_detail::quota_refusal(*quota, request.usage_db, ::getuid(), lease_detail::user_name(::getuid()), devices, now))
      return fail(ErrorKind::invalid_input, *no);
  }
  const auto deadline = std::chrono::steady_clock::now() + request.wait;
  for (int round = 0;; ++round) {
    Attempt a = attempt(registry, system, request, dir);
    if (a.error) return fail(*a.error);
    if (!a.chosen.empty()) {
      auto state = std::make_unique<Lease::State>();
      for (std::size_t i = 0; i < a.chosen.size(); ++i) {
        LeaseHolder h = lease_detail::this_process(a.chosen[i].id, a.chosen[i].identity, request.command);
        if (auto written = lease_detail::write_record(a.locks[i], h); !written) state->warnings.push_back(written.error().message);
        state->holders.push_back(std::move(h));
      }
      state->locks = std::move(a.locks);
      LeaseEnvironment env = environment_of(a.chosen);
      state->environment = std::move(env.set);
      state->cleared = std::move(env.cleared);
      for (auto& w : env.warnings) state->warnings.push_back(std::move(w));
      if (!request.usage_db.empty())
        state->usage = std::make_unique<lease_detail::UsageLog>(request.usage_db, text::cat(dir, "/usage-pending.", ::getuid(), ".jsonl"),
                                                                state->holders, state->warnings);
      if (refused) *refused = std::move(a.refused);
      return Lease(std::move(state));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      std::string why;
      for (const auto& r : a.refused) why += text::cat(why.empty() ? "" : "; ", r.device_id, ": ", r.reason);
      const std::size_t count = request.device_ids.empty() ? request.count : request.device_ids.size();
      if (refused) *refused = std::move(a.refused);
      return fail(ErrorKind::timeout, text::cat("not enough free devices for ", count, request.same_domain ? " in one domain" : "",
                                                request.wait.count() > 0 ? " before the wait ended" : "", why.empty() ? "" : " (", why,
                                                why.empty() ? "" : ")"));
    }
    // Leases end at any moment; telemetry changes slowly: look again shortly.
    std::this_thread::sleep_for(std::chrono::milliseconds(50 + (::getpid() * 7 + round * 13) % 100));
  }
}

Result<Lease> reserve(const AcceleratorRegistry& registry, const System& system, std::string_view device_id, std::string_view owner) {
  LeaseRequest request;
  request.device_ids = {std::string(device_id)};
  request.command = std::string(owner);
  return reserve(registry, system, request);
}

}  // namespace hwaccel
