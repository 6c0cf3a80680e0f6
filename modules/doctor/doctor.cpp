// `hwaccel doctor`: the detection's own record of what it looked at, and the
// checks of what it cannot report by itself (docs/doctor.md).
module;
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>
module hwaccel.doctor;

namespace hwaccel {
namespace {

// The accelerator a PCI function is, by the detector table's PCI kinds that
// name a vendor and a class (BackendFacts::pci; a kind of any class only
// says whose a vendor's functions may be, which is no doctor's finding).
struct KnownAccelerator {
  Backend backend;
  const PciKind* kind;
};

std::optional<KnownAccelerator> known_accelerator(const PciFunction& f) {
  if (!f.vendor_id || !f.class_code) return std::nullopt;
  const auto prefix = static_cast<std::uint16_t>(*f.class_code >> 8);
  for (const Backend b : all_backends)
    for (const PciKind& k : facts_of(b).pci)
      if (k.class_prefix != 0 && k.vendor == *f.vendor_id && k.class_prefix == prefix) return KnownAccelerator{b, &k};
  return std::nullopt;
}

// The events of one detection, kept for the checks.
struct EventLog {
  std::mutex mutex;
  std::vector<DiagnosticEvent> events;
};

// name -> id from /etc/group or /etc/passwd ("name:x:id:..."), read through
// the System so that a fixture can hold them.
std::map<std::uint32_t, std::string> names_by_id(const System& system, std::string_view path) {
  std::map<std::uint32_t, std::string> out;
  const auto text = read_text(system, path, 1 << 20);
  if (!text) return out;
  std::string_view rest = *text;
  while (!rest.empty()) {
    const auto line = text::next_token(rest, '\n');
    std::string_view fields = line;
    const auto name = text::next_token(fields, ':');
    text::next_token(fields, ':');
    const auto id = text::parse_u64(text::next_token(fields, ':'));
    if (!name.empty() && id && *id < 0xffffffffull) out.emplace(static_cast<std::uint32_t>(*id), std::string(name));
  }
  return out;
}

std::string with_name(std::uint32_t id, const std::map<std::uint32_t, std::string>& names) {
  const auto it = names.find(id);
  return it == names.end() ? std::to_string(id) : text::cat(it->second, " (", id, ")");
}

class Checks {
 public:
  Checks(const System& system, DoctorReport& report) : system_(system), report_(report) {}

  void run() {
    const auto& env = report_.registry.system().environment;
    in_container_ = env && env->container;
    identity_ = system_.identity();
    check_pci_functions();
    for (const Backend b : all_backends)
      for (const auto& v : facts_of(b).visibility_variables)
        if (v.role == VisibilityVariable::Role::selects) check_visibility(b, v.name);
    for (const auto& d : report_.registry.devices())
      if (!d.visible)
        add({std::string(to_string(d.backend)), d.id, text::cat(d.name, " is hidden from this process by a visible-devices variable"),
             "list it in the variable (or unset the variable) if this process should use it", false,
             {{"device", d.id}, {"pci_bus_id", d.pci_bus_id.value_or("-")}}});
  }

  void check_tools(const std::vector<DiagnosticEvent>& events) {
    // One finding per tool and complaint: the views a detector walks often
    // fail the same way.
    std::set<std::string> seen;
    for (const auto& e : events) {
      // A fixture's "not captured" is the fixture's gap, not the machine's.
      if (e.event != "run_tool" || e.outcome == "exit 0" || e.outcome == "not_captured") continue;
      const std::string tool = e.subject.substr(0, e.subject.find(' '));
      if (!seen.insert(text::cat(e.backend, "\n", tool, "\n", e.outcome, "\n", e.detail)).second) continue;
      const std::string backend(e.backend);
      const bool found_some = std::any_of(report_.registry.devices().begin(), report_.registry.devices().end(),
                                          [&](const DeviceProfile& d) { return to_string(d.backend) == backend && d.available; });
      std::string cause = text::cat("`", e.subject, "` ", e.outcome == "timeout" ? "did not answer in time" : e.outcome);
      if (!e.detail.empty()) cause += text::cat(": ", e.detail);
      // A driver that does not answer makes the device unusable even where
      // sysfs still lists it.
      const bool driver_down = e.detail.find("couldn't communicate with the NVIDIA driver") != std::string::npos ||
                               e.detail.find("Driver/library version mismatch") != std::string::npos;
      add({backend, e.subject, std::move(cause), tool_remedy(e), driver_down || !found_some,
           {{"command", e.subject}, {"outcome", e.outcome}, {"message", e.detail.empty() ? "-" : e.detail}}});
    }
  }

 private:
  void add(DoctorFinding f) { report_.findings.push_back(std::move(f)); }

  static std::string tool_remedy(const DiagnosticEvent& e) {
    const std::string_view d = e.detail;
    if (d.find("couldn't communicate with the NVIDIA driver") != std::string_view::npos)
      return "the NVIDIA kernel driver is not loaded or does not match this nvidia-smi: load it (sudo modprobe nvidia), "
             "or reboot after a driver update";
    if (d.find("Driver/library version mismatch") != std::string_view::npos)
      return "the kernel driver and the user-space libraries come from different driver releases: reboot, or reload "
             "the nvidia modules";
    if (d.find("No devices were found") != std::string_view::npos)
      return "the driver sees no device: check that it is on the bus (lspci) and bound to the vendor's driver";
    if (e.outcome == "timeout")
      return "the tool hung, which usually means a wedged device or driver: look for errors in the kernel log (dmesg)";
    return text::cat("run `", e.subject, "` by hand to see the whole error; reinstall the tool if it does not match the driver");
  }

  // Device nodes a backend's device needs, by the PCI function's sysfs folder.
  void check_pci_functions() {
    for (const auto& name : list_names(system_, "/sys/bus/pci/devices")) {
      const auto address = pci_address_of_name(name);
      if (!address) continue;
      const PciFunction f = read_pci_function(system_, *address);
      const auto k = known_accelerator(f);
      if (!k) continue;
      const BackendFacts& facts = facts_of(k->backend);
      const std::string addr = address->to_string();
      const std::string path = text::cat("/sys/bus/pci/devices/", addr);
      const std::string backend(to_string(k->backend));
      pci_backends_.insert(backend);
      const std::string what =
          text::cat(k->kind->what, " ", addr, " (", pci_id_text(*f.vendor_id, f.device_id.value_or(0)), ")");
      if (!f.driver) {
        add({backend, addr, text::cat(what, " has no kernel driver bound to it"), std::string(facts.driver_remedy), true,
             {{"path", path}, {"driver", "(none)"}}});
        continue;
      }
      if (*f.driver == "vfio-pci") {
        add({backend, addr, text::cat(what, " is bound to vfio-pci, reserved for passing it through to a virtual machine"),
             text::cat("if this host should use it, give it back to its driver (sudo driverctl unset-override ", addr, ")"),
             true, {{"path", path}, {"driver", *f.driver}}});
        continue;
      }
      if (std::find(facts.drivers.begin(), facts.drivers.end(), *f.driver) == facts.drivers.end()) {
        add({backend, addr,
             text::cat(what, " is bound to ", *f.driver, ", not to the driver its runtime needs (", facts.drivers.front(), ")"),
             std::string(facts.driver_remedy), true, {{"path", path}, {"driver", *f.driver}}});
        continue;
      }
      check_nodes(k->backend, *address, what);
    }
  }

  void check_nodes(Backend owner, const PciAddress& address, const std::string& what) {
    // A view of the machine without /dev (a fixture that never looked
    // there) cannot tell a missing node from one nobody recorded.
    if (!system_.status("/dev")) return;
    const BackendFacts& facts = facts_of(owner);
    if (!facts.device_nodes_of) return;
    const std::string backend(to_string(owner));
    for (const auto& node : facts.device_nodes_of(system_, address)) {
      if (!checked_nodes_.insert(node).second) continue;  // /dev/nvidiactl serves every GPU
      const auto st = system_.status(node);
      if (!st) {
        if (in_container_)
          add({backend, node,
               text::cat(what, " is in this machine, but ", node, " is not: the container was started without its device nodes"),
               std::string(facts.container_remedy), true, {{"path", node}, {"container", "yes"}}});
        else
          add({backend, node, text::cat(what, " has its driver, but ", node, " does not exist"),
               std::string(facts.missing_node_remedy), true, {{"path", node}}});
        continue;
      }
      if (may_read_write(*st, identity_)) continue;
      if (groups_.empty()) groups_ = names_by_id(system_, "/etc/group");
      if (users_.empty()) users_ = names_by_id(system_, "/etc/passwd");
      std::string user_groups;
      for (auto g : identity_.groups) user_groups += (user_groups.empty() ? "" : ", ") + with_name(g, groups_);
      const auto group_name = groups_.contains(st->gid) ? groups_.at(st->gid) : std::to_string(st->gid);
      add({backend, node, text::cat(node, " is not readable and writable by this user"),
           (st->mode & 060) == 060
               ? text::cat("add the user to group ", group_name, " (sudo usermod -aG ", group_name, " $USER), then log in again")
               : text::cat("make it readable and writable by a group of the user (a udev rule with MODE=\"0660\" GROUP=\"",
                           group_name, "\")"),
           true,
           {{"path", node},
            {"mode", text::octal_mode(st->mode)},
            {"owner", with_name(st->uid, users_)},
            {"group", with_name(st->gid, groups_)},
            {"user", with_name(identity_.uid, users_)},
            {"user_groups", user_groups.empty() ? "-" : user_groups}}});
    }
  }

  void check_visibility(Backend owner, std::string_view variable) {
    const std::string backend(to_string(owner));
    const std::string_view vendor = facts_of(owner).vendor;
    const auto value = system_.env(variable);
    if (!value) return;
    const std::string_view v = text::trim(*value);
    if (!(v.empty() || v == "-1" || v == "NoDevFiles" || v == "none" || v == "void")) return;
    const bool present =
        std::any_of(report_.registry.devices().begin(), report_.registry.devices().end(),
                    [&](const DeviceProfile& d) { return to_string(d.backend) == backend; }) ||
        std::any_of(report_.findings.begin(), report_.findings.end(), [&](const DoctorFinding& f) { return f.backend == backend; }) ||
        pci_backends_.contains(backend);
    if (!present) return;
    add({std::string(backend), std::string(variable),
         text::cat(variable, " is set to \"", v, "\": programs in this environment see no ", vendor, " device"),
         text::cat("unset ", variable, ", or list the devices to use (", variable, "=0,1)"), true,
         {{"variable", std::string(variable)}, {"value", std::string(v)}}});
  }


  const System& system_;
  DoctorReport& report_;
  bool in_container_ = false;
  ProcessIdentity identity_;
  std::map<std::uint32_t, std::string> groups_, users_;
  std::set<std::string> checked_nodes_;
  std::set<std::string, std::less<>> pci_backends_;  // backends with a PCI function here, usable or not
};

// A missing vendor tool while its device is bound: detection then reads only
// sysfs. Not blocking: the device is reported, with less detail.
void check_missing_tools(const std::vector<DiagnosticEvent>& events, DoctorReport& report) {
  // The package of a backend's tool (BackendFacts::tool_packages).
  const auto package_of = [](std::string_view backend, std::string_view tool) -> std::optional<std::string_view> {
    const auto b = parse_backend(backend);
    if (!b) return std::nullopt;
    for (const auto& p : facts_of(*b).tool_packages)
      if (p.tool == tool) return p.package;
    return std::nullopt;
  };
  std::set<std::string> seen;
  for (const auto& e : events) {
    if (e.event != "find_tool" || e.outcome != "not found") continue;
    const auto package = package_of(e.backend, e.subject);
    if (!package) continue;
    const std::string backend(e.backend);
    const bool has_device = std::any_of(report.registry.devices().begin(), report.registry.devices().end(),
                                        [&](const DeviceProfile& d) { return to_string(d.backend) == backend; });
    if (!has_device || !seen.insert(e.subject).second) continue;
    report.findings.push_back(DoctorFinding{backend, e.subject,
                                            text::cat(e.subject, " is not installed: ", backend,
                                                      " devices were read from sysfs alone, with less detail"),
                                            text::cat("install ", *package), false,
                                            {{"tool", e.subject}, {"outcome", "not found on PATH"}}});
  }
}

std::vector<DoctorBackend> backends_of(const std::vector<DiagnosticEvent>& events, const AcceleratorRegistry& registry,
                                       const DetectOptions& options) {
  std::vector<DoctorBackend> out;
  for (const Detector* d : detector_table()) {
    if (!d->backend || !options.enabled(*d->backend)) continue;
    // The plugin backend is examined where some plugin is installed.
    if (*d->backend == Backend::plugin && (!options.plugins || options.plugins->empty())) continue;
    DoctorBackend b;
    b.backend = std::string(d->name);
    std::set<std::string> looked, tools;
    for (const auto& e : events) {
      if (e.backend != d->name) continue;
      if (e.event == "read_file" || e.event == "list_dir" || e.event == "read_link" || e.event == "status") {
        if (looked.insert(e.subject).second) {
          b.looked_at.push_back(e.subject);
          if (e.outcome == "not_found") b.missing.push_back(e.subject);
        }
      } else if (e.event == "run_tool" || (e.event == "find_tool" && e.outcome == "not found")) {
        const std::string line = text::cat(e.subject, ": ", e.outcome);
        if (tools.insert(line).second) b.tools.push_back(line);
      } else if (e.event == "warning") {
        b.warnings.push_back(e.detail);
      }
    }
    for (const auto& dev : registry.devices())
      if (to_string(dev.backend) == d->name) ++b.devices;
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace

bool DoctorReport::usable() const noexcept {
  return std::none_of(findings.begin(), findings.end(), [](const DoctorFinding& f) { return f.blocking; });
}

DoctorReport run_doctor(const System& system, DetectBuilder builder) {
  auto log = std::make_shared<EventLog>();
  builder.diagnostics(
      [log](const DiagnosticEvent& e) {
        std::lock_guard lock(log->mutex);
        log->events.push_back(e);
      },
      LogLevel::trace);
  DoctorReport report;
  report.registry = builder.detect(system);
  std::vector<DiagnosticEvent> events;
  {
    std::lock_guard lock(log->mutex);
    events = log->events;
  }
  report.backends = backends_of(events, report.registry, builder.options());
  Checks checks(system, report);
  checks.run();
  checks.check_tools(events);
  check_missing_tools(events, report);
  // Only the backends asked about (--backends) are examined.
  std::erase_if(report.findings, [&](const DoctorFinding& f) {
    const auto backend = parse_backend(f.backend);
    return backend && !builder.options().enabled(*backend);
  });
  // Blocking findings first, then by backend and subject, so that output is
  // stable whatever order threads finished in.
  std::sort(report.findings.begin(), report.findings.end(), [](const DoctorFinding& a, const DoctorFinding& b) {
    return std::tie(b.blocking, a.backend, a.subject, a.cause) < std::tie(a.blocking, b.backend, b.subject, b.cause);
  });
  return report;
}

std::string doctor_json(const DoctorReport& report, bool pretty) {
  json::Writer w(pretty);
  w.begin_object();
  w.field("doctor_schema_version", std::uint32_t{1});
  w.field("usable", report.usable());
  w.key("backends").begin_array();
  for (const auto& b : report.backends) {
    w.begin_object();
    w.field("backend", b.backend);
    w.field("devices", static_cast<std::uint64_t>(b.devices));
    w.field("looked_at", b.looked_at);
    w.field("missing", b.missing);
    w.field("tools", b.tools);
    w.field("warnings", b.warnings);
    w.end_object();
  }
  w.end_array();
  w.key("findings").begin_array();
  for (const auto& f : report.findings) {
    w.begin_object();
    w.field("backend", f.backend);
    w.field("subject", f.subject);
    w.field("blocking", f.blocking);
    w.field("cause", f.cause);
    w.field("remedy", f.remedy);
    w.field("evidence", f.evidence);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return std::move(w).document();
}

std::string doctor_text(const DoctorReport& report) {
  std::string out;
  std::size_t blocking = 0;
  for (const auto& f : report.findings) blocking += f.blocking ? 1 : 0;
  out += blocking == 0 ? std::string("hwaccel doctor: every accelerator found is usable\n")
                       : text::cat("hwaccel doctor: ", blocking, " problem(s) keep accelerators from being used\n");
  out += "\nBackends\n";
  for (const auto& b : report.backends) {
    out += text::cat("  ", b.backend, ": looked at ", b.looked_at.size(), " path(s)");
    if (!b.missing.empty()) out += text::cat(" (", b.missing.size(), " missing)");
    out += text::cat(", found ", b.devices, " device(s)\n");
    for (const auto& t : b.tools) out += text::cat("      ", t, "\n");
  }
  if (!report.findings.empty()) {
    out += "\nFindings\n";
    for (const auto& f : report.findings) {
      out += text::cat("  [", f.backend, "] ", f.blocking ? "" : "(note) ", f.cause, "\n");
      out += text::cat("      remedy:   ", f.remedy, "\n");
      std::string evidence;
      for (const auto& [k, v] : f.evidence) evidence += text::cat(evidence.empty() ? "" : "; ", k, ": ", v);
      out += text::cat("      evidence: ", evidence, "\n");
    }
  }
  return out;
}

}  // namespace hwaccel
