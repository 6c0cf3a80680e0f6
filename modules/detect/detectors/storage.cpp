// Storage probe: physical block devices from /sys/block (NVMe, SATA/SAS SSD,
// HDD, virtual disks), network and shared filesystems from
// /proc/self/mountinfo, and the read bandwidth of each with its source.
//
// Software block devices are not listed: loop, ram, zram, nbd and the
// device-mapper (LVM, dm-crypt) and md RAID volumes under
// /sys/devices/virtual/block. They are layers over the disks listed here, so
// listing them would count the same flash twice; instead a mount on such a
// volume is attributed to every disk beneath it (through slaves/), and a
// reader of the registry sees "/models is on nvme0n1 and nvme1n1".
module;
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.detectors;

namespace hwaccel {
namespace parsers {

std::string unescape_mount_field(std::string_view field) {
  // Most fields have no escape at all.
  if (field.find('\\') == std::string_view::npos) return std::string(field);
  std::string out;
  out.reserve(field.size());
  for (std::size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size()) {
      const std::string_view digits = field.substr(i + 1, 3);
      if (digits.size() == 3 && std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '7'; })) {
        const int value = (digits[0] - '0') * 64 + (digits[1] - '0') * 8 + (digits[2] - '0');
        if (value > 0 && value < 256) {
          out.push_back(static_cast<char>(value));
          i += 3;
          continue;
        }
      }
    }
    out.push_back(field[i]);
  }
  return out;
}

MountInfo parse_mountinfo(std::string_view text) {
  MountInfo info;
  info.entries.reserve(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1);
  std::vector<std::string_view> fields;
  fields.reserve(16);
  while (!text.empty()) {
    const std::string_view line = text::next_line(text);
    if (text::trim(line).empty()) continue;
    text::words_into(line, fields);
    // id parent major:minor root mount-point options [optional...] - fstype source super-options
    const auto separator = std::find(fields.begin(), fields.end(), std::string_view("-"));
    if (fields.size() < 6 || separator == fields.end() || separator - fields.begin() < 6 || fields.end() - separator < 3) {
      ++info.malformed_lines;
      continue;
    }
    std::string_view devno = fields[2];
    const auto major = text::parse_u64(text::next_token(devno, ':'));
    const auto minor = text::parse_u64(devno);
    if (!major || !minor || *major > 0xffffffffu || *minor > 0xffffffffu) {
      ++info.malformed_lines;
      continue;
    }
    MountEntry entry;
    entry.major = static_cast<std::uint32_t>(*major);
    entry.minor = static_cast<std::uint32_t>(*minor);
    entry.root = unescape_mount_field(fields[3]);
    entry.mount_point = unescape_mount_field(fields[4]);
    entry.fstype = std::string(separator[1]);
    entry.source = unescape_mount_field(separator[2]);
    info.entries.push_back(std::move(entry));
  }
  return info;
}

std::optional<std::string> network_filesystem(std::string_view fstype, std::string_view source) {
  // Kernel clients of network and cluster filesystems, and filesystems a
  // hypervisor shares with its guest.
  constexpr std::array<std::string_view, 13> kernel = {"nfs",    "nfs4",   "cifs",  "smb3",     "lustre",
                                                       "gpfs",   "ceph",   "beegfs", "wekafs",  "9p",
                                                       "virtiofs", "glusterfs", "orangefs"};
  // FUSE clients that read from object stores or the network. Other FUSE
  // filesystems (lxcfs, gvfsd-fuse, portal, snapfuse) are local plumbing.
  constexpr std::array<std::string_view, 15> fuse = {
      "s3fs",    "mountpoint-s3", "goofys",  "geesefs",   "gcsfuse", "blobfuse", "blobfuse2", "rclone",
      "juicefs", "sshfs",         "glusterfs", "ceph-fuse", "alluxio-fuse", "cvmfs2", "lustre"};
  if (std::find(kernel.begin(), kernel.end(), fstype) != kernel.end()) return std::string(fstype);
  if (fstype.starts_with("fuse.")) {
    const std::string_view subtype = fstype.substr(5);
    if (std::find(fuse.begin(), fuse.end(), subtype) != fuse.end()) return std::string(fstype);
    return std::nullopt;
  }
  // Some clients (mountpoint-s3) mount as plain "fuse" and name themselves in the source.
  if (fstype == "fuse" || fstype == "fuseblk") {
    if (std::find(fuse.begin(), fuse.end(), source) != fuse.end()) return text::cat("fuse.", source);
  }
  return std::nullopt;
}

std::optional<double> nvme_read_bandwidth_gbps(const PcieLink& link) noexcept {
  auto bandwidth = link.current_bandwidth_gbps();
  if (!bandwidth) bandwidth = link.max_bandwidth_gbps();
  if (!bandwidth) return std::nullopt;
  // Two decimals: the figure is a ceiling, not a measurement to the MB/s.
  return std::round(std::min(*bandwidth * nvme_link_efficiency, nvme_controller_cap_gbps) * 100) / 100;
}

std::optional<double> table_read_bandwidth_gbps(StorageKind kind) noexcept {
  switch (kind) {
    case StorageKind::nvme: return 3.0;
    case StorageKind::ssd: return 0.55;
    case StorageKind::hdd: return 0.2;
    case StorageKind::virtio: return 0.5;
    case StorageKind::network:
    case StorageKind::unknown: return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace parsers

namespace {

constexpr std::size_t mountinfo_cap = std::size_t{4} << 20;
constexpr int max_volume_depth = 8;

// Block devices that are software layers or not storage: skipped by name
// before anything else is read. Anything else under /sys/devices/virtual is
// skipped too once its path is resolved.
bool skipped_by_name(std::string_view name) noexcept {
  constexpr std::array<std::string_view, 9> prefixes = {"loop", "ram", "zram", "sr", "fd", "dm-", "md", "nbd", "zd"};
  for (std::string_view p : prefixes)
    if (name.starts_with(p)) return true;
  // eMMC boot and RPMB areas are not where files live.
  return name.starts_with("mmcblk") && (name.find("boot") != std::string_view::npos || name.find("rpmb") != std::string_view::npos);
}

// Mounts a container runtime or the kernel adds for plumbing (/etc/hosts
// bind mounts, Kubernetes' /dev/termination-log) are not where models live.
bool plumbing_mount(std::string_view mount_point) noexcept {
  constexpr std::array<std::string_view, 5> prefixes = {"/etc/", "/proc", "/sys", "/dev", "/run"};
  for (std::string_view p : prefixes)
    if (mount_point.starts_with(p)) return true;
  return false;
}

// Virtual disks a hypervisor or cloud presents, recognised by the model string
// they report (kind, model substring).
struct ModelRule {
  std::string_view model;
  StorageKind kind;
};
// Cloud block volumes are network-attached even when they appear as NVMe
// (EBS on Nitro, GCP Persistent Disk); their bandwidth is the volume's
// provisioned figure, not a medium's.
constexpr std::array<ModelRule, 7> model_rules = {{
    {"Amazon Elastic Block Store", StorageKind::network},
    {"PersistentDisk", StorageKind::network},
    {"nvme_card-pd", StorageKind::network},
    {"QEMU", StorageKind::virtio},
    {"VMware Virtual", StorageKind::virtio},
    {"Virtual Disk", StorageKind::virtio},
    {"VBOX HARDDISK", StorageKind::virtio},
}};

std::string_view parent_dir(std::string_view path) noexcept {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos || slash == 0 ? std::string_view("/") : path.substr(0, slash);
}

// Whole-disk names beneath a resolved block device folder: a partition's
// disk, the members of a dm or md volume (recursively), or the disk itself.
void disks_under(const System& sys, const std::string& dir, std::set<std::string>& out, int depth) {
  if (depth > max_volume_depth) return;
  if (sys.exists(dir + "/partition")) {
    out.emplace(base_name(parent_dir(dir)));
    return;
  }
  const auto slaves = list_names(sys, dir + "/slaves");
  if (slaves.empty()) {
    out.emplace(base_name(dir));
    return;
  }
  for (const auto& slave : slaves)
    if (const auto resolved = resolve_path(sys, dir + "/slaves/" + slave)) disks_under(sys, *resolved, out, depth + 1);
}

// The PCI function of the controller a resolved disk folder hangs off. A
// multipath NVMe namespace lives under /sys/devices/virtual/nvme-subsystem/;
// its controllers are the nvmeN links beside it (the first is taken).
std::optional<PciAddress> controller_of(const System& sys, std::string_view resolved) {
  if (const auto path = pci_path_of(resolved)) return path->chain.back();
  const std::string subsystem(parent_dir(resolved));
  if (subsystem.find("/nvme-subsystem/") == std::string::npos) return std::nullopt;
  auto names = list_names(sys, subsystem);
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) { return natural_less(a, b); });
  for (const auto& name : names) {
    if (!name.starts_with("nvme") || name.size() < 5 ||
        !std::all_of(name.begin() + 4, name.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    if (const auto controller = resolve_path(sys, subsystem + "/" + name))
      if (const auto path = pci_path_of(*controller)) return path->chain.back();
  }
  return std::nullopt;
}

StorageKind kind_of(const System& sys, std::string_view name, const std::string& dir,
                    const std::optional<std::string>& model) {
  if (model)
    for (const auto& rule : model_rules)
      if (model->find(rule.model) != std::string::npos) return rule.kind;
  if (name.starts_with("nvme")) return StorageKind::nvme;
  // virtio-blk and Xen disks often claim to be rotational; the name is the truth.
  if (name.starts_with("vd") || name.starts_with("xvd")) return StorageKind::virtio;
  if (name.starts_with("mmcblk") || name.starts_with("pmem")) return StorageKind::unknown;
  const auto rotational = read_u64(sys, dir + "/queue/rotational");
  if (!rotational) return StorageKind::unknown;
  return *rotational == 0 ? StorageKind::ssd : StorageKind::hdd;
}

void set_bandwidth(StorageDevice& device, const std::optional<PcieLink>& link) {
  if (device.kind == StorageKind::nvme && link) {
    if (const auto bw = parsers::nvme_read_bandwidth_gbps(*link)) {
      device.read_bandwidth_gbps = *bw;
      device.bandwidth_source = "pcie_link";
      return;
    }
  }
  if (const auto bw = parsers::table_read_bandwidth_gbps(device.kind)) {
    device.read_bandwidth_gbps = *bw;
    device.bandwidth_source = "table";
  }
}

std::optional<StorageDevice> read_block_device(const DetectContext& ctx, DetectorOutput& out, const std::string& name) {
  const System& sys = ctx.system();
  const std::string dir = "/sys/block/" + name;
  const auto resolved = resolve_path(sys, dir);
  if (!resolved) {
    ctx.warn(out, resolved.error());
    return std::nullopt;
  }
  if (resolved->starts_with("/sys/devices/virtual/block/")) return std::nullopt;
  // The per-path namespaces of a multipath NVMe device (nvme0c0n1) are hidden.
  if (read_u64(sys, dir + "/hidden") == 1u) return std::nullopt;

  const auto sectors = read_u64(sys, dir + "/size");
  if (!sectors) {
    ctx.warn(out, WarningKind::io_error, text::cat(dir, "/size: missing or not a number"));
    return std::nullopt;
  }
  // An empty card reader or a disconnected device: no medium, nothing to read from.
  if (*sectors == 0) return std::nullopt;

  StorageDevice device;
  device.name = name;
  // `size` counts 512-byte sectors whatever the device's logical block size.
  device.size_bytes = text::checked_mul(*sectors, 512);
  if (auto model = read_text(sys, dir + "/device/model", 256); model && !model->empty()) device.model = std::move(model);
  device.kind = kind_of(sys, name, dir, device.model);
  std::optional<PcieLink> link;
  if (const auto controller = controller_of(sys, *resolved)) {
    const PciFunction function = read_pci_placement(sys, *controller);
    device.pci_bus_id = controller->to_string();
    device.numa_node = function.numa_node;
    link = function.link;
  }
  set_bandwidth(device, link);
  return device;
}

void attach_mounts(const System& sys, const parsers::MountInfo& mounts, std::vector<StorageDevice>& devices) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::set<std::string>> disks_by_devno;
  for (const auto& m : mounts.entries) {
    if (m.major == 0 || plumbing_mount(m.mount_point)) continue;
    auto [it, inserted] = disks_by_devno.try_emplace({m.major, m.minor});
    if (inserted)
      if (const auto resolved = resolve_path(sys, text::cat("/sys/dev/block/", m.major, ":", m.minor)))
        disks_under(sys, *resolved, it->second, 0);
    for (const auto& disk : it->second)
      for (auto& device : devices)
        if (device.name == disk) device.mount_points.push_back(m.mount_point);
  }
  for (auto& device : devices) {
    std::sort(device.mount_points.begin(), device.mount_points.end());
    device.mount_points.erase(std::unique(device.mount_points.begin(), device.mount_points.end()), device.mount_points.end());
  }
}

std::vector<StorageDevice> network_mounts(const parsers::MountInfo& mounts) {
  std::map<std::pair<std::string, std::string>, std::set<std::string>> by_source;
  for (const auto& m : mounts.entries) {
    if (plumbing_mount(m.mount_point)) continue;
    if (auto fs = parsers::network_filesystem(m.fstype, m.source)) by_source[{m.source, std::move(*fs)}].insert(m.mount_point);
  }
  std::vector<StorageDevice> out;
  for (auto& [key, points] : by_source) {
    StorageDevice device;
    device.name = key.first;
    device.kind = StorageKind::network;
    device.filesystem = key.second;
    device.mount_points.assign(points.begin(), points.end());
    out.push_back(std::move(device));
  }
  return out;
}

DetectorOutput detect_storage(const DetectContext& ctx) {
  DetectorOutput out;
  const System& sys = ctx.system();

  parsers::MountInfo mounts;
  if (auto content = sys.read_file("/proc/self/mountinfo", mountinfo_cap)) {
    mounts = parsers::parse_mountinfo(content->data);
    if (content->truncated)
      ctx.warn(out, WarningKind::truncated,
               text::cat("/proc/self/mountinfo is longer than ", mountinfo_cap, " bytes; later mounts were not read"));
    if (mounts.malformed_lines > 0)
      ctx.warn(out, WarningKind::parse_error,
               text::cat("/proc/self/mountinfo: ", mounts.malformed_lines, " malformed line(s) skipped"));
  } else if (content.error().kind != ErrorKind::not_found) {
    ctx.warn(out, content.error());
  }

  if (auto entries = sys.list_dir("/sys/block")) {
    std::vector<std::string> names;
    for (auto& e : *entries)
      if (!skipped_by_name(e.name)) names.push_back(std::move(e.name));
    std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) { return natural_less(a, b); });
    for (const auto& name : names)
      if (auto device = read_block_device(ctx, out, name)) out.storage.push_back(std::move(*device));
  } else if (entries.error().kind != ErrorKind::not_found) {
    ctx.warn(out, entries.error());
  }

  attach_mounts(sys, mounts, out.storage);
  for (auto& device : network_mounts(mounts)) out.storage.push_back(std::move(device));
  return out;
}

}  // namespace

const Detector storage_detector{"storage", std::nullopt, {}, &detect_storage};

}  // namespace hwaccel
