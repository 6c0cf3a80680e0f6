// The processes on each device: nvidia-smi's list (the compute-apps query, or
// the `-q`/`-q -x` report where MIG instances need attributing), the DRM
// clients under /proc/PID/fdinfo for amdgpu, xe and i915 (and accel nodes),
// and who each process is from /proc/PID/{status,cmdline} and /etc/passwd.
module;
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>
module hwaccel.telemetry;
import :internals;

namespace hwaccel {
namespace {

// Enough for any real host; a bigger /proc is walked only this far, with a warning.
constexpr std::size_t max_pids = 32768;
constexpr std::size_t max_fds_per_pid = 4096;
constexpr std::size_t max_listed_processes = 16384;
constexpr std::size_t fdinfo_cap = 64 * 1024;
constexpr std::size_t cmdline_cap = 4096;
constexpr std::size_t process_problem_cap = 8;
// The inode of the initial PID namespace (PROC_PID_INIT_INO in the kernel).
constexpr std::uint64_t initial_pid_namespace = 4026531836;

void note_problem(std::vector<std::string>* problems, std::string message) {
  if (!problems) return;
  if (problems->size() < process_problem_cap) problems->push_back(std::move(message));
  else if (problems->size() == process_problem_cap) problems->emplace_back("further problems of this output are not listed");
}

// "pid:[4026531836]" -> 4026531836
std::optional<std::uint64_t> namespace_inode(std::string_view link) {
  const auto open = link.find(":[");
  if (open == std::string_view::npos || !link.ends_with(']')) return std::nullopt;
  return text::parse_u64(link.substr(open + 2, link.size() - open - 3));
}

std::string kind_of_nvidia_type(std::string_view type) {
  if (type == "C") return "compute";
  if (type == "G") return "graphics";
  if (type == "C+G") return "compute+graphics";
  if (type == "M" || type == "M+C") return "mps";
  return type.empty() ? "compute" : text::lower(type);
}

}  // namespace

std::vector<std::string> nvidia_compute_apps_argv() {
  return {"nvidia-smi", "--query-compute-apps=gpu_bus_id,gpu_uuid,pid,process_name,used_gpu_memory",
          "--format=csv,nounits"};
}

Result<std::vector<NvidiaComputeApp>> parse_nvidia_compute_apps(std::string_view csv, std::vector<std::string>* problems) {
  auto table = parsers::parse_nvidia_smi_csv(csv);
  if (!table) return fail(table.error());
  const auto pid = table->column("pid");
  if (!pid) return fail(ErrorKind::parse_error, "compute-apps query: the header names no pid column");
  for (const auto& p : table->problems) note_problem(problems, p.message);
  const auto bus = table->column("gpu_bus_id");
  const auto uuid = table->column("gpu_uuid");
  auto name = table->column("process_name");
  if (!name) name = table->column("name");
  auto memory = table->column("used_gpu_memory");
  if (!memory) memory = table->column("used_memory");
  const std::string_view memory_unit = memory ? table->units[*memory] : std::string_view();
  std::vector<NvidiaComputeApp> apps;
  for (std::size_t r = 0; r < table->row_count() && apps.size() < max_listed_processes; ++r) {
    const auto row = table->row(r);
    NvidiaComputeApp app;
    const auto id = text::parse_u64(row[*pid]);
    if (!id || *id == 0 || *id > (1u << 30)) {
      note_problem(problems, text::cat("compute-apps row ", r + 1, ": pid \"", text::excerpt(row[*pid], 20), "\" is not a process id"));
      continue;
    }
    app.pid = static_cast<std::uint32_t>(*id);
    if (bus)
      if (const auto v = parsers::nvidia_smi_value(row[*bus]))
        if (const auto pci = PciAddress::parse(*v)) app.pci_bus_id = pci->to_string();
    if (uuid) app.uuid = std::string(parsers::nvidia_smi_value(row[*uuid]).value_or(""));
    if (name) app.name = std::string(parsers::nvidia_smi_value(row[*name]).value_or(""));
    if (memory)
      if (const auto v = parsers::nvidia_smi_value(row[*memory])) {
        const auto n = text::parse_number_with_unit(*v);
        std::optional<std::uint64_t> bytes = n ? text::memory_size(*n) : std::nullopt;
        if (bytes && n->unit.empty()) {
          const auto scale = text::memory_unit_bytes(memory_unit.empty() ? "MiB" : text::trim(memory_unit));
          bytes = scale ? text::checked_mul(*bytes, *scale) : std::nullopt;
        }
        if (bytes && *bytes <= (std::uint64_t{16} << 40)) app.memory_used_bytes = bytes;
        else note_problem(problems, text::cat("compute-apps row ", r + 1, ": used memory \"", text::excerpt(*v, 20), "\" is not a size"));
      }
    if (app.pci_bus_id.empty() && app.uuid.empty()) {
      note_problem(problems, text::cat("compute-apps row ", r + 1, " names no GPU (bus id or UUID); left out"));
      continue;
    }
    apps.push_back(std::move(app));
  }
  return apps;
}

Result<DrmClient> parse_drm_fdinfo(std::string_view text, std::vector<std::string>* problems) {
  DrmClient client;
  bool drm = false;
  // Regions by kind of key, so that resident beats the older memory- beats total.
  std::map<std::string, std::uint64_t> resident, legacy, total;
  std::map<std::string, std::uint64_t> cycles, total_cycles;
  std::size_t lines = 0;
  while (!text.empty() && ++lines <= 1024) {
    const std::string_view line = text::next_line(text);
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = text::trim(line.substr(0, colon));
    const std::string_view value = text::trim(line.substr(colon + 1));
    if (!key.starts_with("drm-")) continue;
    if (key == "drm-driver") {
      drm = !value.empty();
      client.driver = std::string(text::excerpt(value, 32));
      continue;
    }
    if (key == "drm-pdev") {
      if (const auto pci = PciAddress::parse(value)) client.pdev = pci->to_string();
      else note_problem(problems, text::cat("drm-pdev \"", text::excerpt(value, 20), "\" is not a PCI address"));
      continue;
    }
    if (key == "drm-client-id") {
      client.client_id = text::parse_u64(value);
      if (!client.client_id) note_problem(problems, text::cat("drm-client-id \"", text::excerpt(value, 20), "\" is not a number"));
      continue;
    }
    // Region and engine names are short identifiers; anything else is garbage.
    const auto named = [&](std::string_view prefix) -> std::optional<std::string> {
      if (!key.starts_with(prefix)) return std::nullopt;
      const std::string_view name = key.substr(prefix.size());
      if (name.empty() || name.size() > 32) return std::nullopt;
      return std::string(name);
    };
    const auto number = [&](std::string_view v) -> std::optional<std::uint64_t> {
      const auto n = text::parse_u64(text::trim(text::next_token(v, ' ')));
      if (!n) note_problem(problems, text::cat(key, ": \"", text::excerpt(value, 20), "\" is not a number"));
      return n;
    };
    const auto size = [&]() -> std::optional<std::uint64_t> {
      const auto bytes = text::parse_memory_size(value);
      if (!bytes) note_problem(problems, text::cat(key, ": \"", text::excerpt(value, 20), "\" is not a size"));
      return bytes;
    };
    if (const auto n = named("drm-engine-capacity-")) {
      if (const auto v = number(value); v && *v >= 1 && *v <= 1024) client.engines[*n].capacity = static_cast<std::uint32_t>(*v);
    } else if (const auto n = named("drm-engine-")) {
      if (const auto v = number(value)) client.engines[*n].busy = *v;
    } else if (const auto n = named("drm-total-cycles-")) {
      if (const auto v = number(value)) total_cycles[*n] = *v;
    } else if (const auto n = named("drm-cycles-")) {
      if (const auto v = number(value)) cycles[*n] = *v;
    } else if (const auto n = named("drm-resident-")) {
      if (const auto v = size()) resident[*n] = *v;
    } else if (const auto n = named("drm-memory-")) {
      if (const auto v = size()) legacy[*n] = *v;
    } else if (const auto n = named("drm-total-")) {
      if (const auto v = size()) total[*n] = *v;
    }
  }
  if (!drm) return fail(ErrorKind::parse_error, "no drm-driver line: not a DRM file descriptor");
  for (const auto* from : {&total, &legacy, &resident})
    for (const auto& [region, bytes] : *from) client.memory_bytes[region] = bytes;
  for (const auto& [engine, busy] : cycles) {
    EngineCounter& c = client.engines[engine];
    c.busy = busy;
    if (const auto t = total_cycles.find(engine); t != total_cycles.end()) c.total = t->second;
  }
  if (client.engines.size() > 64 || client.memory_bytes.size() > 64)
    return fail(ErrorKind::parse_error, "more engines or memory regions than any driver has");
  return client;
}

std::optional<std::uint64_t> device_memory_of(const DrmClient& client) noexcept {
  std::optional<std::uint64_t> sum;
  for (const auto& [region, bytes] : client.memory_bytes)
    if (region.starts_with("vram") || region.starts_with("local")) sum = sum.value_or(0) + bytes;
  return sum;
}

Result<ProcessStatus> parse_proc_status(std::string_view text) {
  ProcessStatus status;
  bool has_pid = false;
  std::size_t lines = 0;
  while (!text.empty() && ++lines <= 256) {
    const std::string_view line = text::next_line(text);
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = line.substr(0, colon);
    const std::string_view value = text::trim(line.substr(colon + 1));
    if (key == "Name") status.name = std::string(text::excerpt(value, 64));
    else if (key == "Uid") {
      std::string_view rest = value;
      if (const auto uid = text::parse_u64(text::trim(text::next_token(rest, '\t'))); uid && *uid <= 0xffffffffu)
        status.uid = static_cast<std::uint32_t>(*uid);
    } else if (key == "Pid") {
      has_pid = text::parse_u64(value).has_value();
    } else if (key == "NSpid") {
      status.namespace_pids.clear();
      for (const auto word : text::words(value)) {
        const auto pid = text::parse_u64(word);
        if (!pid || *pid > 0xffffffffu || status.namespace_pids.size() >= 32) {
          status.namespace_pids.clear();
          break;
        }
        status.namespace_pids.push_back(static_cast<std::uint32_t>(*pid));
      }
    }
  }
  if (!has_pid && status.namespace_pids.empty()) return fail(ErrorKind::parse_error, "no Pid line: not a /proc/PID/status file");
  return status;
}

std::map<std::string, double> engine_use(const DeviceProcess& before, const DeviceProcess& after,
                                         std::chrono::nanoseconds elapsed) {
  std::map<std::string, double> use;
  for (const auto& [engine, now] : after.engines) {
    const auto then = before.engines.find(engine);
    if (then == before.engines.end() || now.busy < then->second.busy) continue;
    const double busy = static_cast<double>(now.busy - then->second.busy);
    double share = 0;
    if (now.total && then->second.total) {
      if (*now.total <= *then->second.total) continue;
      share = busy / static_cast<double>(*now.total - *then->second.total);
    } else {
      if (elapsed.count() <= 0) continue;
      share = busy / (static_cast<double>(elapsed.count()) * std::max<std::uint32_t>(now.capacity, 1));
    }
    use[engine] = std::clamp(share, 0.0, 1.0);
  }
  return use;
}

namespace telemetry_detail {
namespace {

bool same_gpu(const DeviceProfile& d, std::string_view bus, std::string_view uuid) {
  return (d.pci_bus_id && !bus.empty() && *d.pci_bus_id == bus) || (d.uuid && !uuid.empty() && *d.uuid == uuid);
}

const DeviceProfile* gpu_of(const AcceleratorRegistry& registry, std::string_view bus, std::string_view uuid) {
  for (const DeviceProfile& d : registry.devices())
    if (d.backend == Backend::cuda && same_gpu(d, bus, uuid)) return &d;
  return nullptr;
}

// The MIG instance a process runs in, by its GPU and compute instance ids.
std::string partition_of(const DeviceProfile& d, const parsers::NvidiaProcess& p) {
  if (!p.gpu_instance_id) return {};
  for (const DevicePartition& part : d.partitions)
    if (part.gpu_instance_id == p.gpu_instance_id &&
        (!p.compute_instance_id || !part.compute_instance_id || part.compute_instance_id == p.compute_instance_id))
      return part.id;
  return {};
}

}  // namespace

std::vector<DeviceProcess> nvidia_processes(const AcceleratorRegistry& registry, const parsers::NvidiaGpuTable& report,
                                            std::string_view view) {
  std::vector<DeviceProcess> out;
  for (const parsers::NvidiaGpu& g : report.gpus) {
    const DeviceProfile* d = gpu_of(registry, g.bus_id ? g.bus_id->to_string() : std::string(), g.uuid.value_or(""));
    if (!d) continue;
    for (const parsers::NvidiaProcess& p : g.processes) {
      DeviceProcess process;
      process.device_id = d->id;
      process.partition_id = partition_of(*d, p);
      process.driver_pid = p.pid;
      process.command = p.name;
      process.kind = kind_of_nvidia_type(p.type);
      process.memory_bytes = p.memory_used_bytes;
      process.source = std::string(view);
      out.push_back(std::move(process));
    }
  }
  return out;
}

Result<std::vector<DeviceProcess>> run_nvidia_compute_apps(const AcceleratorRegistry& registry, const System& system,
                                                           std::chrono::milliseconds timeout, std::vector<std::string>& problems) {
  ToolRequest request;
  request.argv = nvidia_compute_apps_argv();
  request.timeout = timeout;
  request.max_output_bytes = std::size_t{4} << 20;
  auto result = system.run(request);
  if (!result) return fail(result.error());
  if (!result->succeeded())
    return fail(ErrorKind::tool_failed, text::cat("nvidia-smi --query-compute-apps ", describe_exit(*result)));
  auto apps = parse_nvidia_compute_apps(result->out, &problems);
  if (!apps) return fail(apps.error().kind, text::cat("nvidia-smi --query-compute-apps: ", apps.error().message));
  std::vector<DeviceProcess> out;
  for (const NvidiaComputeApp& app : *apps) {
    const DeviceProfile* d = gpu_of(registry, app.pci_bus_id, app.uuid);
    if (!d) {
      note_problem(&problems, text::cat("compute-apps: process ", app.pid, " is on a GPU the inventory does not have (",
                                       app.pci_bus_id.empty() ? app.uuid : app.pci_bus_id, ")"));
      continue;
    }
    DeviceProcess process;
    process.device_id = d->id;
    process.driver_pid = app.pid;
    process.command = app.name;
    process.kind = "compute";
    process.memory_bytes = app.memory_used_bytes;
    process.source = "nvidia-smi --query-compute-apps";
    out.push_back(std::move(process));
  }
  return out;
}

std::vector<DeviceProcess> drm_processes(const AcceleratorRegistry& registry, const System& system,
                                         std::vector<Warning>& warnings) {
  // The devices a DRM client can name: those with a PCI address whose driver
  // keeps usage stats (NVIDIA's processes come from nvidia-smi instead).
  std::map<std::string, const DeviceProfile*> by_pdev;
  for (const DeviceProfile& d : registry.devices())
    if (d.pci_bus_id && d.backend != Backend::cuda && d.backend != Backend::cpu) by_pdev.emplace(*d.pci_bus_id, &d);
  std::vector<DeviceProcess> out;
  if (by_pdev.empty()) return out;
  auto proc = system.list_dir("/proc");
  if (!proc) {
    warnings.push_back(Warning{"processes", warning_kind_for(proc.error().kind),
                               text::cat("cannot list /proc: ", proc.error().message, "; no DRM clients are listed")});
    return out;
  }
  std::size_t pids = 0, hidden = 0, skipped_fds = 0;
  std::vector<std::string> problems;
  for (const DirEntry& entry : *proc) {
    const auto pid = text::parse_u64(entry.name);
    if (!pid || *pid == 0 || *pid > (1u << 30)) continue;
    if (++pids > max_pids) {
      warnings.push_back(Warning{"processes", WarningKind::truncated,
                                 text::cat("/proc has more than ", max_pids, " processes; the rest were not looked at")});
      break;
    }
    const std::string base = text::cat("/proc/", entry.name);
    auto fds = system.list_dir(base + "/fd");
    if (!fds) {
      // A process that exits while it is read is gone, not a problem.
      if (fds.error().kind == ErrorKind::permission_denied) ++hidden;
      continue;
    }
    // One client may be open through several descriptors; it counts once.
    std::map<std::tuple<std::string, std::uint64_t>, DrmClient> clients;
    std::size_t looked = 0;
    for (const DirEntry& fd : *fds) {
      if (++looked > max_fds_per_pid) {
        ++skipped_fds;
        break;
      }
      auto target = system.read_link(text::cat(base, "/fd/", fd.name));
      if (!target || !(target->starts_with("/dev/dri/") || target->starts_with("/dev/accel/"))) continue;
      auto info = system.read_file(text::cat(base, "/fdinfo/", fd.name), fdinfo_cap);
      if (!info) continue;
      std::vector<std::string> fd_problems;
      auto client = parse_drm_fdinfo(info->data, &fd_problems);
      for (auto& p : fd_problems) note_problem(&problems, text::cat(base, "/fdinfo/", fd.name, ": ", p));
      if (!client) continue;  // a DRM node without usage stats (an older kernel)
      // Without a client id each descriptor is its own client.
      const std::uint64_t id = client->client_id.value_or((std::uint64_t{1} << 63) | looked);
      clients.insert_or_assign({client->pdev, id}, std::move(*client));
    }
    // A process's clients of one device add up (each is its own context).
    std::map<std::string, DeviceProcess> per_device;
    for (auto& [key, client] : clients) {
      const auto d = by_pdev.find(client.pdev);
      if (d == by_pdev.end()) continue;
      DeviceProcess& p = per_device[d->second->id];
      p.device_id = d->second->id;
      p.pid = static_cast<std::uint32_t>(*pid);
      p.kind = "drm";
      p.source = "DRM fdinfo";
      if (const auto bytes = device_memory_of(client)) p.memory_bytes = p.memory_bytes.value_or(0) + *bytes;
      for (const auto& [engine, counter] : client.engines) {
        EngineCounter& c = p.engines[engine];
        c.busy += counter.busy;
        if (counter.total) c.total = std::max(c.total.value_or(0), *counter.total);
        c.capacity = std::max(c.capacity, counter.capacity);
      }
    }
    for (auto& [id, p] : per_device)
      if (out.size() < max_listed_processes) out.push_back(std::move(p));
  }
  for (auto& p : problems) warnings.push_back(Warning{"processes", WarningKind::parse_error, std::move(p)});
  if (hidden > 0)
    warnings.push_back(Warning{"processes", WarningKind::permission_denied,
                               text::cat(hidden, hidden == 1 ? " process's" : " processes'",
                                         " file descriptors are not readable by this user (root reads all): their DRM "
                                         "clients are not listed")});
  if (skipped_fds > 0)
    warnings.push_back(Warning{"processes", WarningKind::truncated,
                               text::cat(skipped_fds, " processes have more than ", max_fds_per_pid,
                                         " file descriptors; only their first were looked at")});
  return out;
}

void describe_processes(std::vector<DeviceProcess>& processes, const System& system, std::vector<Warning>& warnings) {
  if (processes.empty()) return;
  // nvidia-smi's PIDs are the host's: they name our processes only when we
  // share its PID namespace. Unknown (a fixture without the link, a
  // restricted /proc): the process's own name must then agree.
  std::optional<bool> initial_namespace;
  if (const auto self = system.read_link("/proc/self/ns/pid"))
    if (const auto inode = namespace_inode(*self)) initial_namespace = *inode == initial_pid_namespace;
  std::map<std::uint32_t, std::string> users;
  if (const auto passwd = system.read_file("/etc/passwd", std::size_t{1} << 20)) {
    std::string_view rest = passwd->data;
    while (!rest.empty()) {
      std::string_view line = text::next_line(rest);
      const std::string_view name = text::next_token(line, ':');
      text::next_token(line, ':');
      if (const auto uid = text::parse_u64(text::next_token(line, ':')); uid && !name.empty() && *uid <= 0xffffffffu)
        users.emplace(static_cast<std::uint32_t>(*uid), std::string(name));
    }
  }
  bool untranslated = false;
  std::size_t missing = 0;
  std::vector<std::string> mismatched;
  for (DeviceProcess& p : processes) {
    if (!p.pid && p.driver_pid) {
      if (initial_namespace == false) {
        untranslated = true;
        continue;
      }
      p.pid = p.driver_pid;
    }
    if (!p.pid) continue;
    const std::string base = text::cat("/proc/", *p.pid);
    auto status_file = system.read_file(base + "/status", 16 * 1024);
    if (!status_file) {
      if (p.driver_pid && status_file.error().kind == ErrorKind::not_found && !initial_namespace) {
        // Not here: it has just exited, or it is another namespace's.
        p.pid.reset();
        ++missing;
      }
      continue;
    }
    const auto status = parse_proc_status(status_file->data);
    if (!status) continue;
    // The kernel's name is the first 15 bytes of the program's file name.
    if (p.driver_pid && !initial_namespace && !p.command.empty() && !status->name.empty()) {
      std::string_view program = p.command;
      program = program.substr(program.find_last_of('/') == std::string_view::npos ? 0 : program.find_last_of('/') + 1);
      program = text::next_token(program, ' ');
      if (!program.starts_with(std::string_view(status->name).substr(0, std::min<std::size_t>(status->name.size(), 15))) &&
          !std::string_view(status->name).starts_with(program.substr(0, std::min<std::size_t>(program.size(), 15)))) {
        if (mismatched.size() < 4)
          mismatched.push_back(text::cat(*p.pid, " (", text::excerpt(status->name, 16), " here, ", text::excerpt(program, 32),
                                         " to nvidia-smi)"));
        p.pid.reset();
        continue;
      }
    }
    p.uid = status->uid;
    if (status->namespace_pids.size() > 1) p.container_pid = status->namespace_pids.back();
    if (const auto ns = system.read_link(base + "/ns/pid")) p.pid_namespace = namespace_inode(*ns);
    if (p.uid) {
      const auto user = users.find(*p.uid);
      p.user = user != users.end() ? user->second : text::cat(*p.uid);
    }
    if (const auto cmdline = system.read_file(base + "/cmdline", cmdline_cap); cmdline && !cmdline->data.empty()) {
      std::string command = cmdline->data;
      while (!command.empty() && command.back() == '\0') command.pop_back();
      std::replace(command.begin(), command.end(), '\0', ' ');
      if (cmdline->truncated) command += " ...";
      if (!command.empty()) p.command = std::move(command);
    } else if (p.command.empty()) {
      p.command = text::cat("[", status->name, "]");
    }
  }
  if (untranslated)
    warnings.push_back(Warning{"processes", WarningKind::unsupported,
                               "nvidia-smi reports the host's PIDs and hwaccel runs in another PID namespace (a "
                               "container): those processes are shown with the host's PID only, without user or command line"});
  if (missing > 0)
    warnings.push_back(Warning{"processes", WarningKind::inconsistent,
                               text::cat(missing, missing == 1 ? " of nvidia-smi's PIDs is" : " of nvidia-smi's PIDs are",
                                         " not in /proc here (exited since, or hwaccel runs in another PID namespace): shown "
                                         "as the driver's PIDs, without user or command line")});
  if (!mismatched.empty())
    warnings.push_back(Warning{"processes", WarningKind::inconsistent,
                               text::cat("nvidia-smi's PIDs name other processes here, so hwaccel does not share the "
                                         "driver's PID namespace; left untranslated: ",
                                         text::join(mismatched))});
}

void order_processes(const AcceleratorRegistry& registry, std::vector<DeviceProcess>& processes) {
  std::map<std::string, std::size_t, std::less<>> position;
  const auto devices = registry.devices();
  for (std::size_t i = 0; i < devices.size(); ++i) position.emplace(devices[i].id, i);
  const auto at = [&](const DeviceProcess& p) {
    const auto it = position.find(p.device_id);
    return it == position.end() ? devices.size() : it->second;
  };
  std::sort(processes.begin(), processes.end(), [&](const DeviceProcess& a, const DeviceProcess& b) {
    return std::forward_as_tuple(at(a), b.memory_bytes.value_or(0), a.pid.value_or(a.driver_pid.value_or(0)), a.partition_id, a.source) <
           std::forward_as_tuple(at(b), a.memory_bytes.value_or(0), b.pid.value_or(b.driver_pid.value_or(0)), b.partition_id, b.source);
  });
}

}  // namespace telemetry_detail
}  // namespace hwaccel
