// Symlink resolution through the System and PCI paths of sysfs devices.
module;
#include <algorithm>
#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
module hwaccel.detect;

namespace hwaccel {
namespace {

constexpr int max_symlink_hops = 40;

void push_components(std::deque<std::string>& todo, std::string_view path) {
  // Components of `path` go in front of what is left, in order.
  std::vector<std::string_view> parts;
  while (!path.empty()) {
    const std::string_view c = text::next_token(path, '/');
    if (!c.empty() && c != ".") parts.push_back(c);
  }
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) todo.emplace_front(*it);
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) {
    out.push_back('/');
    out += p;
  }
  return out.empty() ? std::string("/") : out;
}

}  // namespace

Result<std::string> resolve_path(const System& system, std::string_view path) {
  if (path.empty() || path.front() != '/')
    return fail(ErrorKind::invalid_input, text::cat("cannot resolve relative path \"", text::excerpt(path), "\""));
  std::deque<std::string> todo;
  push_components(todo, path);
  std::vector<std::string> done;
  int hops = 0;
  while (!todo.empty()) {
    std::string component = std::move(todo.front());
    todo.pop_front();
    if (component == "..") {
      if (done.empty()) return fail(ErrorKind::escapes_root, text::cat(path, ": a link climbs above /"));
      done.pop_back();
      continue;
    }
    done.push_back(std::move(component));
    const std::string here = join(done);
    const auto status = system.status(here, false);
    if (!status) return fail(status.error());
    if (status->type != FileType::symlink) continue;
    if (++hops > max_symlink_hops)
      return fail(ErrorKind::symlink_loop, text::cat(path, ": more than ", max_symlink_hops, " symbolic links"));
    const auto target = system.read_link(here);
    if (!target) return fail(target.error());
    done.pop_back();
    if (!target->empty() && target->front() == '/') done.clear();
    push_components(todo, *target);
  }
  return join(done);
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
