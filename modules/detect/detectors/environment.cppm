// Environment probe: container, Kubernetes, WSL, hypervisor and cloud
// instance of this process, read from /proc, /sys, /run and the environment,
// and the visible-device resolution that the finalize pass applies.
module;
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
export module hwaccel.detectors:environment;
import hwaccel.detect;

export namespace hwaccel::parsers {

/// Container evidence found in /proc/self/mountinfo.
struct MountEvidence {
  /// Runtime whose storage holds the root filesystem or the files bind-mounted
  /// over /etc/hostname, /etc/hosts, /etc/resolv.conf: "docker", "containerd",
  /// or "containers-storage" (podman and CRI-O share that layout).
  std::optional<std::string> runtime;
  bool kubelet = false;          ///< kubelet bind-mounted files of a pod
  bool overlay_root = false;     ///< "/" is an overlay filesystem
  bool runtime_files = false;    ///< /etc/hostname, /etc/hosts or /etc/resolv.conf is a mount of its own
};

/// Reads /proc/<pid>/mountinfo ("36 35 98:0 /root /mnt rw - ext4 /dev/sda rw").
/// Only the root mount and the per-container files are looked at, so the
/// container mounts a host shows for its own containers are never evidence.
MountEvidence parse_container_mounts(std::string_view text);

/// Container evidence found in /proc/self/cgroup (cgroup v1 paths, or v2
/// paths of a process outside a cgroup namespace).
struct CgroupEvidence {
  std::optional<std::string> runtime;  ///< "docker", "containerd", "cri-o", "podman", "lxc", "systemd-nspawn"
  bool kubernetes = false;             ///< a kubepods cgroup
};

/// Reads /proc/self/cgroup. "0::/" (cgroup v2 in a namespace) says nothing.
CgroupEvidence parse_cgroup(std::string_view text);

/// Normalises a container manager name from /run/systemd/container or the
/// `container` variable ("lxc-libvirt" -> "lxc"); nullopt for "" and for
/// "wsl", which systemd uses for WSL rather than for a container.
std::optional<std::string> container_name(std::string_view value);

/// `engine="podman-4.9.3"` of /run/.containerenv -> "podman"; nullopt when
/// the file carries no engine (podman writes it only for --privileged).
std::optional<std::string> containerenv_engine(std::string_view text);

/// WSL version from /proc/sys/kernel/osrelease or /proc/version:
/// "5.15.167.4-microsoft-standard-WSL2" and the older "4.19.104-microsoft-standard"
/// are WSL 2, "4.4.0-19041-Microsoft" is WSL 1; nullopt otherwise.
std::optional<std::uint32_t> wsl_version(std::string_view kernel_release);

/// Whether the first `flags` line of /proc/cpuinfo has the x86 `hypervisor` bit.
bool cpuinfo_hypervisor_flag(std::string_view cpuinfo);

/// The strings of /sys/class/dmi/id the probe reads (trimmed; empty when absent).
struct Dmi {
  std::string sys_vendor;
  std::string product_name;
  std::string product_version;
  std::string board_vendor;
  std::string bios_vendor;
  std::string bios_version;
  std::string chassis_asset_tag;
};

/// Hypervisor product named by DMI ("kvm", "qemu", "vmware", "hyper-v",
/// "xen", "virtualbox", "parallels", "bhyve", "bochs"); nullopt when DMI
/// names none (bare metal, or a cloud whose DMI names the cloud instead).
std::optional<std::string> dmi_hypervisor(const Dmi& dmi);

/// Hypervisor named by the kernel's paravirtual clocks
/// (/sys/devices/system/clocksource/clocksource0/available_clocksource):
/// "kvm-clock" -> "kvm", "hyperv_clocksource_*" -> "hyper-v", "xen" -> "xen".
std::optional<std::string> clocksource_hypervisor(std::string_view available);

/// The cloud provider DMI identifies, never inferred from the hypervisor alone:
/// AWS ("Amazon EC2" vendor on Nitro; "amazon" in the Xen BIOS version, or a
/// /sys/hypervisor/uuid starting with "ec2", on older Xen instances), GCP
/// ("Google Compute Engine"), Azure (chassis asset tag 7783-7084-3265-9085...),
/// OCI (chassis asset tag "OracleCloud.com"), Alibaba ("Alibaba Cloud ECS").
/// `xen_uuid` is the content of /sys/hypervisor/uuid ("" when absent).
std::optional<CloudInstance> identify_cloud(const Dmi& dmi, std::string_view xen_uuid);

/// Whether an AWS instance type names a bare-metal size ("c5.metal", "u-6tb1.metal",
/// "m7i.metal-24xl").
bool aws_metal(std::string_view instance_type) noexcept;

}  // namespace hwaccel::parsers

export namespace hwaccel {

/// The probe for where this process runs (a host probe: Detector::backend is empty).
extern const Detector environment_detector;


/// Container facts alone, for callers that need them without the rest of the probe.
struct ContainerFacts {
  std::optional<std::string> runtime;
  bool kubernetes = false;
  std::optional<std::string> kubernetes_namespace;
  std::vector<Warning> warnings;  ///< filed under "environment"
};

/// Container runtime and Kubernetes pod of this process (docs/environment.md).
ContainerFacts detect_container(const System& system);


}  // namespace hwaccel
