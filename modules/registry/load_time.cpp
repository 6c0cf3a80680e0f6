// Model load time: how long reading a model's bytes from storage takes.
module;
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>
module hwaccel.registry;

namespace hwaccel {
namespace {

// Two decimals, for sentences.
double rounded(double v) { return std::round(v * 100) / 100; }

std::string describe_source(const StorageDevice& d) {
  if (d.bandwidth_source == "pcie_link") return "the ceiling of its PCIe link; the drive itself may be slower";
  if (d.bandwidth_source == "table") return text::cat("a class default for ", to_string(d.kind), " storage, not a measurement");
  return "as recorded in the registry";
}

// Whether `mount` is `path` or one of its parent folders.
bool mount_holds(std::string_view mount, std::string_view path) noexcept {
  if (mount == "/") return true;
  if (!path.starts_with(mount)) return false;
  return path.size() == mount.size() || path[mount.size()] == '/';
}

}  // namespace

Result<LoadTimeEstimate> estimate_load_time(const StorageDevice& device, std::uint64_t model_bytes) {
  if (model_bytes == 0) return fail(ErrorKind::invalid_input, "a model of 0 bytes has no load time");
  if (!device.read_bandwidth_gbps || !(*device.read_bandwidth_gbps > 0))
    return fail(ErrorKind::unsupported, text::cat("the read bandwidth of ", device.name, " (", to_string(device.kind),
                                                  ") is unknown: it depends on what is behind it"));
  LoadTimeEstimate e;
  e.read_bandwidth_gbps = *device.read_bandwidth_gbps;
  e.seconds = static_cast<double>(model_bytes) / (e.read_bandwidth_gbps * 1e9);
  e.storage = device.name;
  e.bandwidth_source = device.bandwidth_source;
  e.assumption = text::cat("a cold sequential read of ", rounded(static_cast<double>(model_bytes) / 1e9), " GB from ",
                           device.name, " at ", rounded(e.read_bandwidth_gbps), " GB/s (", describe_source(device),
                           ")");
  return e;
}

Result<LoadTimeEstimate> estimate_load_time(const AcceleratorRegistry& registry, std::uint64_t model_bytes,
                                            std::string_view model_path) {
  if (model_bytes == 0) return fail(ErrorKind::invalid_input, "a model of 0 bytes has no load time");
  const auto& storage = registry.system().storage;
  if (storage.empty()) return fail(ErrorKind::not_found, "no storage was detected");

  if (model_path.empty()) {
    const StorageDevice* fastest = nullptr;
    for (const auto& d : storage)
      if (d.kind != StorageKind::network && d.read_bandwidth_gbps &&
          (!fastest || *d.read_bandwidth_gbps > *fastest->read_bandwidth_gbps))
        fastest = &d;
    if (!fastest) return fail(ErrorKind::unsupported, "no local storage device has a known read bandwidth");
    auto e = estimate_load_time(*fastest, model_bytes);
    if (e) e->assumption += text::cat("; no model path was given, so the model is assumed to be on ", fastest->name,
                                      ", the fastest local device");
    return e;
  }

  if (model_path.front() != '/')
    return fail(ErrorKind::invalid_input, text::cat("model path \"", text::excerpt(model_path), "\" is not absolute"));
  // The mount holding the path is the longest mount point above it.
  std::string_view mount;
  for (const auto& d : storage)
    for (const auto& m : d.mount_points)
      if (mount_holds(m, model_path) && m.size() >= mount.size()) mount = m;
  if (mount.empty())
    return fail(ErrorKind::not_found, text::cat("no detected storage holds ", text::excerpt(model_path)));
  std::vector<const StorageDevice*> holders;
  for (const auto& d : storage)
    for (const auto& m : d.mount_points)
      if (m == mount) holders.push_back(&d);
  const StorageDevice* slowest = nullptr;
  for (const StorageDevice* d : holders) {
    if (!d->read_bandwidth_gbps) return estimate_load_time(*d, model_bytes);  // reports the unknown bandwidth
    if (!slowest || *d->read_bandwidth_gbps < *slowest->read_bandwidth_gbps) slowest = d;
  }
  auto e = estimate_load_time(*slowest, model_bytes);
  if (e && holders.size() > 1) {
    std::string names;
    for (const StorageDevice* d : holders) names += text::cat(names.empty() ? "" : ", ", d->name);
    e->assumption += text::cat("; ", mount, " is a volume over ", holders.size(), " devices (", names,
                               ") and the slowest is assumed, since striping is not modelled");
  }
  return e;
}

}  // namespace hwaccel
