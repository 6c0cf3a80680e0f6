// Symlink resolution through the System and PCI paths of sysfs devices.
module;
#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
module hwaccel.detect;

namespace hwaccel {

// The path is resolved in one string: each component is appended, checked,
// and replaced by its link's target when it is one (storage resolves every
// disk's sysfs link this way at each detection).
Result<std::string> resolve_path(const System& system, std::string_view path) {
  if (path.empty() || path.front() != '/')
    return fail(ErrorKind::invalid_input, text::cat("cannot resolve relative path \"", text::excerpt(path), "\""));
  std::string done;                 // resolved so far; empty means "/"
  std::string todo(path);           // what is left to walk, from `next`
  std::size_t next = 0;
  int hops = 0;
  while (true) {
    while (next < todo.size() && todo[next] == '/') ++next;
    if (next == todo.size()) break;
    const std::size_t end = std::min(todo.find('/', next), todo.size());
    const std::string_view component = std::string_view(todo).substr(next, end - next);
    next = end;
    if (component == ".") continue;
    if (component == "..") {
      if (done.empty()) return fail(ErrorKind::escapes_root, text::cat(path, ": a link climbs above /"));
      done.resize(done.rfind('/'));
      continue;
    }
    const std::size_t parent = done.size();
    done += '/';
    done += component;
    const auto status = system.status(done, false);
    if (!status) return fail(status.error());
    if (status->type != FileType::symlink) continue;
    if (++hops > max_symlink_hops)
      return fail(ErrorKind::symlink_loop, text::cat(path, ": more than ", max_symlink_hops, " symbolic links"));
    const auto target = system.read_link(done);
    if (!target) return fail(target.error());
    done.resize(parent);
    if (!target->empty() && target->front() == '/') done.clear();
    // The link's target, then what followed the link.
    todo = text::cat(*target, "/", std::string_view(todo).substr(next));
    next = 0;
  }
  return done.empty() ? std::string("/") : done;
}

std::optional<PciPath> pci_path_of(std::string_view resolved) {
  constexpr std::string_view prefix = "/sys/devices/";
  if (!resolved.starts_with(prefix)) return std::nullopt;
  resolved.remove_prefix(prefix.size());
  const std::string_view bridge = text::next_token(resolved, '/');
  // "pci0000:16", or "pci10000:00" under an Intel VMD domain.
  if (!bridge.starts_with("pci") || bridge.find(':') == std::string_view::npos) return std::nullopt;
  PciPath path;
  path.host_bridge = std::string(bridge);
  while (!resolved.empty()) {
    const std::string_view c = text::next_token(resolved, '/');
    // Anything else on the path (SCSI "0:0:0:0", "host0", "nvme0") is no PCI function.
    if (const auto address = pci_address_of_name(c)) path.chain.push_back(*address);
  }
  if (path.chain.empty()) return std::nullopt;
  return path;
}

std::optional<PciPath> pci_path_of(const System& system, const PciAddress& address) {
  const auto resolved = resolve_path(system, "/sys/bus/pci/devices/" + address.to_string());
  if (!resolved) return std::nullopt;
  auto path = pci_path_of(*resolved);
  // The link must lead to the function it names, not to some other device.
  if (!path || path->chain.back() != address) return std::nullopt;
  return path;
}

std::optional<LinkKind> pci_proximity(const PciPath& a, const PciPath& b) noexcept {
  if (a.host_bridge != b.host_bridge) return std::nullopt;
  // Two functions below the same root port are behind a switch: a root port
  // has a single link. Any common bridge therefore means the traffic never
  // reaches the host bridge. A device's own function does not count.
  if (a.chain.size() > 1 && b.chain.size() > 1 && a.chain.front() == b.chain.front()) return LinkKind::pcie_switch;
  return LinkKind::host_bridge;
}

}  // namespace hwaccel
