// Shared detector plumbing: warnings, tool requests, sysfs and PCI readers.
module;
#include <algorithm>
#include <bitset>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include "threads.hpp"
#include <vector>
module hwaccel.detect;

namespace hwaccel {

Result<std::bitset<backend_count>> parse_backend_list(std::string_view list) {
  std::bitset<backend_count> selected;
  list = text::trim(list);
  if (list.empty() || list == "none") return selected;
  while (!list.empty()) {
    const std::string_view name = text::trim(text::next_token(list, ','));
    if (name.empty()) continue;
    if (name == "all") {
      selected.set();
      continue;
    }
    const auto backend = parse_backend(name);
    if (!backend) {
      std::string valid;
      for (Backend b : all_backends) {
        if (!valid.empty()) valid += ", ";
        valid += to_string(b);
      }
      return fail(ErrorKind::invalid_input,
                  text::cat("unknown backend '", text::excerpt(name, 40), "'; valid names: all, none, ", valid));
    }
    selected.set(static_cast<std::size_t>(*backend));
  }
  return selected;
}

WarningKind warning_kind_for(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::permission_denied: return WarningKind::permission_denied;
    case ErrorKind::timeout: return WarningKind::timeout;
    case ErrorKind::not_captured: return WarningKind::not_captured;
    case ErrorKind::parse_error: return WarningKind::parse_error;
    case ErrorKind::tool_not_found: return WarningKind::tool_missing;
    case ErrorKind::tool_failed: return WarningKind::tool_failed;
    case ErrorKind::invalid_input: return WarningKind::invalid_value;
    case ErrorKind::unsupported: return WarningKind::unsupported;
    case ErrorKind::not_found:
    case ErrorKind::io_error:
    case ErrorKind::not_regular_file:
    case ErrorKind::escapes_root:
    case ErrorKind::symlink_loop: return WarningKind::io_error;
  }
  return WarningKind::io_error;
}

std::string_view to_string(LogLevel level) noexcept {
  switch (level) {
    case LogLevel::trace: return "trace";
    case LogLevel::debug: return "debug";
    case LogLevel::info: return "info";
    case LogLevel::warn: return "warn";
  }
  return "info";
}

void DetectOptions::report(const DiagnosticEvent& event) const noexcept {
  if (!wants(event.level)) return;
#if __cpp_exceptions
  try {
    (*sink)(event);
  } catch (...) {
    // A sink that throws loses its event, never the detection.
  }
#else
  (*sink)(event);
#endif
}

Result<LogLevel> parse_log_level(std::string_view text) {
  if (text == "trace") return LogLevel::trace;
  if (text == "debug") return LogLevel::debug;
  if (text == "info") return LogLevel::info;
  if (text == "warn" || text == "warning") return LogLevel::warn;
  return fail(unknown_name("log level", text, "trace, debug, info, warn"));
}

std::string join_argv(std::span<const std::string> argv) {
  std::string s;
  for (const auto& a : argv) {
    if (!s.empty()) s += ' ';
    s += a;
  }
  return s;
}

std::optional<ToolResult> ToolViewWalk::run(const std::vector<std::string>& argv, bool keep_failed) {
  if (stopped_) return std::nullopt;
  return take(argv, ctx_.run(argv), keep_failed);
}

std::optional<ToolResult> ToolViewWalk::take(const std::vector<std::string>& argv, Result<ToolResult> result,
                                             bool keep_failed) {
  if (stopped_) return std::nullopt;
  if (!result) {
    if (result.error().kind == ErrorKind::timeout) {
      ctx_.warn(out_, result.error());
      stopped_ = true;
      return std::nullopt;
    }
    if (result.error().kind != ErrorKind::not_captured) only_not_captured_ = false;
    skipped_.push_back(result.error().kind == ErrorKind::not_captured ? text::cat(join_argv(argv), ": not captured")
                                                                      : result.error().message);
    return std::nullopt;
  }
  if (result->out_truncated)
    ctx_.warn(out_, WarningKind::truncated,
              text::cat(join_argv(argv), ": output exceeded ", ctx_.options().tool_output_cap, " bytes and was cut"));
  if (!result->succeeded() && !(keep_failed && !text::trim(result->out).empty())) {
    only_not_captured_ = false;
    skipped_.push_back(text::cat(join_argv(argv), " ", describe_exit(*result)));
    return std::nullopt;
  }
  return std::move(*result);
}

void ToolViewWalk::reject(const std::vector<std::string>& argv, std::string_view why) {
  only_not_captured_ = false;
  unparsed_ = true;
  skipped_.push_back(text::cat(join_argv(argv), ": ", why));
}

void ToolViewWalk::finish(const std::vector<std::string>* used, std::string_view lost) {
  if (skipped_.empty()) return;
  std::string said;
  for (const auto& s : skipped_) said += text::cat(said.empty() ? "" : "; ", s);
  if (used) {
    // An older release refusing a newer form is routine when the form used
    // says the same: only a loss, or output that did not parse, is worth a word.
    if (!lost.empty())
      ctx_.warn(out_, WarningKind::degraded, text::cat(said, "; read ", join_argv(*used), " instead (", lost, ")"));
    else if (unparsed_)
      ctx_.warn(out_, WarningKind::parse_error, text::cat(said, "; read ", join_argv(*used), " instead"));
  } else if (!stopped_) {
    const WarningKind kind = unparsed_ ? WarningKind::parse_error
                             : only_not_captured_ ? WarningKind::not_captured
                                                  : WarningKind::tool_failed;
    ctx_.warn(out_, kind, skipped_.size() == 1 ? said : text::cat(said, "; no view answered"));
  }
  skipped_.clear();
  only_not_captured_ = true;
  unparsed_ = false;
}

std::string describe_exit(const ToolResult& r) {
  std::string s = r.signal ? text::cat("was killed by signal ", *r.signal) : text::cat("exited with code ", r.exit_code);
  std::string_view last;
  for (std::string_view stream : {std::string_view(r.err), std::string_view(r.out)}) {
    while (!stream.empty() && last.empty()) {
      const auto nl = stream.find_last_of('\n', stream.size() - 1);
      const std::string_view line = text::trim(nl == std::string_view::npos ? stream : stream.substr(nl + 1));
      stream = nl == std::string_view::npos ? std::string_view{} : stream.substr(0, nl);
      if (!line.empty()) last = line;
    }
    if (!last.empty()) break;
  }
  if (!last.empty()) s += text::cat(": ", text::excerpt(last, 160));
  return s;
}

void DetectContext::warn(DetectorOutput& out, WarningKind kind, std::string message) const {
  out.warnings.push_back(Warning{std::string(source_), kind, std::move(message)});
}

void DetectContext::warn(DetectorOutput& out, const Error& error) const {
  warn(out, warning_kind_for(error.kind), error.message);
}

ToolRequest DetectContext::request(std::vector<std::string> argv) const {
  ToolRequest req;
  req.argv = std::move(argv);
  req.timeout = options_.tool_timeout;
  req.max_output_bytes = options_.tool_output_cap;
  return req;
}

Result<ToolResult> DetectContext::run(std::vector<std::string> argv) const {
  return system_.run(request(std::move(argv)));
}

std::vector<Result<ToolResult>> DetectContext::run_concurrently(std::span<const ToolRequest> requests) const {
  std::vector<Result<ToolResult>> results(requests.size(), fail(ErrorKind::tool_failed, "not run"));
  if (requests.empty()) return results;
  if (!HWACCEL_HAS_THREADS || system_.runs_instantly()) {
    for (std::size_t i = 0; i < requests.size(); ++i) results[i] = system_.run(requests[i]);
    return results;
  }
#if HWACCEL_HAS_THREADS
  std::vector<std::jthread> workers;
  workers.reserve(requests.size() - 1);
  for (std::size_t i = 1; i < requests.size(); ++i)
    workers.emplace_back([&, i] { results[i] = system_.run(requests[i]); });
  results[0] = system_.run(requests[0]);
  workers.clear();  // joins
#endif
  return results;
}

std::optional<std::string> read_text(const System& system, std::string_view path, std::size_t cap) {
  auto content = system.read_file(path, cap);
  if (!content) return std::nullopt;
  const std::string_view trimmed = text::trim(content->data);
  if (trimmed.size() == content->data.size()) return std::move(content->data);
  return std::string(trimmed);
}

// A sysfs attribute is at most a page; snapshots have been seen padding every
// file to the page with NULs, which parse_u64 trims like blanks.
constexpr std::size_t number_file_cap = 4096;

std::optional<std::uint64_t> read_u64(const System& system, std::string_view path, int base) {
  const auto content = system.read_file(path, number_file_cap);
  if (!content || content->truncated) return std::nullopt;
  return text::parse_u64(content->data, base);
}

std::optional<std::int64_t> read_i64(const System& system, std::string_view path) {
  const auto content = system.read_file(path, number_file_cap);
  if (!content || content->truncated) return std::nullopt;
  return text::parse_i64(content->data);
}

std::vector<std::string> list_names(const System& system, std::string_view path) {
  std::vector<std::string> names;
  auto entries = system.list_dir(path);
  if (!entries) return names;
  names.reserve(entries->size());
  for (auto& e : *entries) names.push_back(std::move(e.name));
  return names;
}

std::optional<PciAddress> pci_address_of_name(std::string_view name) {
  auto address = PciAddress::parse(name);
  if (address && address->to_string() != name) address.reset();
  return address;
}

std::string_view base_name(std::string_view path) noexcept {
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool natural_less(std::string_view a, std::string_view b) noexcept {
  std::size_t i = 0, j = 0;
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      std::size_t ie = i, je = j;
      while (ie < a.size() && digit(a[ie])) ++ie;
      while (je < b.size() && digit(b[je])) ++je;
      std::string_view na = a.substr(i, ie - i), nb = b.substr(j, je - j);
      while (na.size() > 1 && na.front() == '0') na.remove_prefix(1);
      while (nb.size() > 1 && nb.front() == '0') nb.remove_prefix(1);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

std::optional<double> parse_link_speed(std::string_view s) noexcept {
  // "16.0 GT/s PCIe", "8 GT/s", "2.5 GT/s", older kernels "5 GT/s"; "Unknown" otherwise.
  const auto n = text::parse_number_with_unit(s);
  if (!n || n->value <= 0 || n->value > 1000 || !n->unit.starts_with("GT/s")) return std::nullopt;
  return n->value;
}

namespace {

std::optional<std::uint16_t> read_id16(const System& sys, const std::string& path) {
  const auto v = read_u64(sys, path, 16);
  if (!v || *v > 0xffff) return std::nullopt;
  return static_cast<std::uint16_t>(*v);
}

// "PCI_ID=1002:73BF" from uevent: the fallback when the `vendor`/`device`
// attributes are missing from a snapshot.
void ids_from_uevent(const System& sys, const std::string& dir, PciFunction& f) {
  const auto uevent = read_text(sys, dir + "/uevent");
  if (!uevent) return;
  std::string_view rest = *uevent;
  while (!rest.empty()) {
    std::string_view line = text::next_line(rest);
    if (line.starts_with("PCI_ID=")) {
      line.remove_prefix(7);
      const auto colon = line.find(':');
      if (colon == std::string_view::npos) continue;
      const auto v = text::parse_hex(line.substr(0, colon));
      const auto d = text::parse_hex(line.substr(colon + 1));
      if (!f.vendor_id && v && *v <= 0xffff) f.vendor_id = static_cast<std::uint16_t>(*v);
      if (!f.device_id && d && *d <= 0xffff) f.device_id = static_cast<std::uint16_t>(*d);
    } else if (line.starts_with("DRIVER=") && !f.driver) {
      f.driver = std::string(text::trim(line.substr(7)));
    }
  }
}

}  // namespace

namespace {

void read_numa_node(const System& sys, const std::string& dir, PciFunction& f) {
  if (const auto numa = read_i64(sys, dir + "/numa_node"); numa && *numa >= 0 && *numa < 65536)
    f.numa_node = static_cast<std::int32_t>(*numa);
}

void read_link_state(const System& sys, const std::string& dir, PciFunction& f) {
  if (const auto s = read_text(sys, dir + "/current_link_speed")) f.link.current_speed_gts = parse_link_speed(*s);
  if (const auto s = read_text(sys, dir + "/max_link_speed")) f.link.max_speed_gts = parse_link_speed(*s);
  if (const auto w = read_u64(sys, dir + "/current_link_width"); w && *w > 0 && *w <= 64)
    f.link.current_width = static_cast<std::uint32_t>(*w);
  if (const auto w = read_u64(sys, dir + "/max_link_width"); w && *w > 0 && *w <= 64)
    f.link.max_width = static_cast<std::uint32_t>(*w);
}

}  // namespace

PciFunction read_pci_function(const System& sys, const PciAddress& address) {
  return read_pci_function_at(sys, "/sys/bus/pci/devices/" + address.to_string(), address);
}

PciFunction read_pci_placement(const System& sys, const PciAddress& address) {
  PciFunction f;
  f.address = address;
  const std::string dir = "/sys/bus/pci/devices/" + address.to_string();
  read_numa_node(sys, dir, f);
  read_link_state(sys, dir, f);
  return f;
}

PciFunction read_pci_ids(const System& sys, const PciAddress& address) {
  PciFunction f;
  f.address = address;
  const std::string dir = "/sys/bus/pci/devices/" + address.to_string();
  f.vendor_id = read_id16(sys, dir + "/vendor");
  f.device_id = read_id16(sys, dir + "/device");
  if (!f.vendor_id || !f.device_id) ids_from_uevent(sys, dir, f);
  return f;
}

PciFunction read_pci_function_at(const System& sys, const std::string& dir, const PciAddress& address) {
  PciFunction f;
  f.address = address;
  f.vendor_id = read_id16(sys, dir + "/vendor");
  f.device_id = read_id16(sys, dir + "/device");
  f.subsystem_vendor_id = read_id16(sys, dir + "/subsystem_vendor");
  f.subsystem_device_id = read_id16(sys, dir + "/subsystem_device");
  if (const auto cls = read_u64(sys, dir + "/class", 16); cls && *cls <= 0xffffff)
    f.class_code = static_cast<std::uint32_t>(*cls);
  if (const auto rev = read_u64(sys, dir + "/revision", 16); rev && *rev <= 0xff)
    f.revision = static_cast<std::uint8_t>(*rev);
  if (const auto link = sys.read_link(dir + "/driver")) f.driver = std::string(base_name(*link));
  if (!f.vendor_id || !f.device_id || !f.driver) ids_from_uevent(sys, dir, f);
  read_numa_node(sys, dir, f);
  f.local_cpulist = read_text(sys, dir + "/local_cpulist");
  read_link_state(sys, dir, f);
  return f;
}

std::vector<ProcPciEntry> parse_proc_pci_devices(std::string_view content) {
  std::vector<ProcPciEntry> out;
  while (!content.empty()) {
    std::string_view line = text::next_line(content);
    const std::string_view bdf = text::next_token(line, '\t');
    const std::string_view ids = text::next_token(line, '\t');
    const auto bus_devfn = bdf.size() == 4 ? text::parse_hex(bdf) : std::nullopt;
    const auto vendor_device = ids.size() == 8 ? text::parse_hex(ids) : std::nullopt;
    if (!bus_devfn || !vendor_device) continue;
    ProcPciEntry e;
    e.bus = static_cast<std::uint8_t>(*bus_devfn >> 8);
    e.device = static_cast<std::uint8_t>((*bus_devfn >> 3) & 0x1f);
    e.function = static_cast<std::uint8_t>(*bus_devfn & 0x7);
    e.vendor_id = static_cast<std::uint16_t>(*vendor_device >> 16);
    e.device_id = static_cast<std::uint16_t>(*vendor_device & 0xffff);
    // irq, seven resource bases and seven sizes, then the driver name (empty when unbound).
    for (int field = 0; field < 15 && !line.empty(); ++field) text::next_token(line, '\t');
    if (const std::string_view driver = text::trim(line); !driver.empty()) e.driver = std::string(driver);
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<PciFunction> pci_functions_of_vendor(const System& sys, std::uint16_t vendor_id) {
  std::vector<PciFunction> out;
  const auto listing = sys.read_file("/proc/bus/pci/devices", 1 << 20);
  if (!listing) return out;
  std::vector<ProcPciEntry> matches;
  for (auto& e : parse_proc_pci_devices(listing->data))
    if (e.vendor_id == vendor_id) matches.push_back(std::move(e));
  if (matches.empty()) return out;
  // /proc has no PCI domain: take it from the sysfs name that ends in bus:device.function,
  // checking the ids where several domains reuse a bus number.
  const auto sysfs_names = list_names(sys, "/sys/bus/pci/devices");
  for (const auto& e : matches) {
    std::optional<PciFunction> found;
    for (const auto& name : sysfs_names) {
      const auto addr = pci_address_of_name(name);
      if (!addr || addr->bus != e.bus || addr->device != e.device || addr->function != e.function) continue;
      PciFunction f = read_pci_function(sys, *addr);
      if (f.vendor_id && *f.vendor_id != e.vendor_id) continue;
      found = std::move(f);
      break;
    }
    if (!found) {
      PciFunction f;
      f.address = PciAddress{0, e.bus, e.device, e.function};
      found = std::move(f);
    }
    if (!found->vendor_id) found->vendor_id = e.vendor_id;
    if (!found->device_id) found->device_id = e.device_id;
    if (!found->driver) found->driver = e.driver;
    out.push_back(std::move(*found));
  }
  std::sort(out.begin(), out.end(), [](const PciFunction& a, const PciFunction& b) { return a.address < b.address; });
  return out;
}

std::optional<std::string> compatible_entry(std::string_view compatible, std::string_view prefix) {
  while (!compatible.empty()) {
    const std::string_view entry = text::trim(text::next_token(compatible, '\0'));
    if (!entry.starts_with(prefix)) continue;
    const auto comma = entry.find(',');
    return std::string(comma == std::string_view::npos ? entry : entry.substr(comma + 1));
  }
  return std::nullopt;
}

std::vector<PciAddress> pci_upstream_bridges(const System& sys, const PciAddress& address) {
  std::vector<PciAddress> out;
  const auto link = sys.read_link("/sys/bus/pci/devices/" + address.to_string());
  if (!link) return out;
  // "../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:03:00.0"
  std::string_view rest = *link;
  while (!rest.empty()) {
    const std::string_view part = text::next_token(rest, '/');
    if (part.find(':') == std::string_view::npos || part.find('.') == std::string_view::npos) continue;
    if (const auto a = PciAddress::parse(part); a && *a != address) out.push_back(*a);
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::vector<PciAddress> pci_functions_of_driver(const System& sys, std::string_view driver) {
  std::vector<PciAddress> out;
  for (const auto& name : list_names(sys, text::cat("/sys/bus/pci/drivers/", driver)))
    if (const auto addr = pci_address_of_name(name)) out.push_back(*addr);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> render_nodes_of(const System& system, const PciAddress& address) {
  std::vector<std::string> nodes;
  for (const auto& name : list_names(system, text::cat("/sys/bus/pci/devices/", address.to_string(), "/drm")))
    if (name.starts_with("renderD")) nodes.push_back(text::cat("/dev/dri/", name));
  return nodes;
}

std::vector<std::string> accel_nodes_of(const System& system, const PciAddress& address) {
  std::vector<std::string> nodes;
  for (const auto& name : list_names(system, text::cat("/sys/bus/pci/devices/", address.to_string(), "/accel")))
    if (name.starts_with("accel")) nodes.push_back(text::cat("/dev/accel/", name));
  return nodes;
}

}  // namespace hwaccel
