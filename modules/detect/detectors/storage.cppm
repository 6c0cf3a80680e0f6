// Storage probe: block devices from /sys/block and the network or shared
// filesystems model files may be read from, with their read bandwidth.
// device-mapper and md volumes are not listed: a mount on one is attributed to
// the disks beneath it (docs/registry.md says why).
module;
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
export module hwaccel.detectors:storage;
import hwaccel.detect;

export namespace hwaccel::parsers {

/// One line of /proc/self/mountinfo.
struct MountEntry {
  std::uint32_t major = 0;
  std::uint32_t minor = 0;
  std::string root;         ///< the mounted subtree of the filesystem ("/" or a bind source)
  std::string mount_point;  ///< octal escapes (\040) decoded
  std::string fstype;       ///< "ext4", "nfs4", "fuse.s3fs"
  std::string source;       ///< "/dev/nvme0n1p2", "10.0.0.5:/export"

  friend bool operator==(const MountEntry&, const MountEntry&) = default;
};

struct MountInfo {
  std::vector<MountEntry> entries;
  std::size_t malformed_lines = 0;
};

/// Parses /proc/self/mountinfo (proc(5): "36 35 98:0 /mnt1 /mnt2 rw,noatime
/// master:1 - ext3 /dev/root rw"); malformed lines are counted and skipped.
MountInfo parse_mountinfo(std::string_view text);

/// Decodes the octal escapes the kernel writes in mount paths ("\040" is a blank).
std::string unescape_mount_field(std::string_view field);

/// The filesystem name to report when a mount is a network, cluster or
/// host-shared filesystem that model files may be read from (nfs, nfs4, cifs,
/// smb3, lustre, gpfs, ceph, beegfs, glusterfs, wekafs, 9p, virtiofs and the
/// FUSE object-store and network clients: s3fs, mountpoint-s3, goofys,
/// gcsfuse, blobfuse, rclone, juicefs, sshfs...); nullopt for local, virtual
/// and pseudo filesystems (and other FUSE mounts such as lxcfs or gvfs).
std::optional<std::string> network_filesystem(std::string_view fstype, std::string_view source);

/// Fraction of a PCIe link's bandwidth an NVMe drive can read at: the TLP and
/// DLLP overhead of the link; the fastest PCIe 3.0, 4.0 and 5.0 x4 drives
/// reach about this share of their link.
inline constexpr double nvme_link_efficiency = 0.94;
/// The fastest sequential read a single NVMe controller delivers (PCIe 5.0
/// drives, about 15 GB/s): a wide link does not make one controller faster.
inline constexpr double nvme_controller_cap_gbps = 15.0;

/// Sequential read bandwidth of an NVMe drive from its controller's PCIe
/// link (current link, else the maximum), in GB/s: an upper bound, since a
/// drive's flash may be slower than its link. Rounded to 0.01 GB/s; nullopt
/// without a link.
std::optional<double> nvme_read_bandwidth_gbps(const PcieLink& link) noexcept;

/// Class-default sequential read bandwidth in GB/s for a medium without a
/// measurable link: NVMe 3.0 (a PCIe 3.0 x4 drive), SATA/SAS SSD 0.55 (the
/// SATA 6 Gb/s ceiling), HDD 0.2 (a 7200 rpm disk's outer tracks), virtual
/// disk 0.5 (host-dependent); nullopt for network storage and unknown media,
/// whose speed depends on what is behind them.
std::optional<double> table_read_bandwidth_gbps(StorageKind kind) noexcept;

}  // namespace hwaccel::parsers

export namespace hwaccel {
extern const Detector storage_detector;
}
