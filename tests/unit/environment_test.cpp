// Environment probe: its parsers, and whole detections over hand-made machines.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "../test_support.hpp"

import hwaccel;
import hwaccel.detectors;

namespace {

using namespace hwaccel;
using hwaccel::testing::FixtureBuilder;

// --- mountinfo ----------------------------------------------------------------

constexpr const char* docker_mountinfo =
    "1201 1003 0:152 / / rw,relatime master:620 - overlay overlay rw,lowerdir=/var/lib/docker/overlay2/l/AB:/var/lib/"
    "docker/overlay2/l/CD,upperdir=/var/lib/docker/overlay2/8a3c/diff,workdir=/var/lib/docker/overlay2/8a3c/work\n"
    "1202 1201 0:155 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw\n"
    "1210 1201 259:2 /var/lib/docker/containers/3f6c/hostname /etc/hostname rw,relatime - ext4 /dev/nvme0n1p2 rw\n"
    "1211 1201 259:2 /var/lib/docker/containers/3f6c/hosts /etc/hosts rw,relatime - ext4 /dev/nvme0n1p2 rw\n";

TEST(EnvironmentParsers, MountinfoOfADockerContainer) {
  const auto ev = parsers::parse_container_mounts(docker_mountinfo);
  EXPECT_EQ(ev.runtime, "docker");
  EXPECT_TRUE(ev.overlay_root);
  EXPECT_TRUE(ev.runtime_files);
  EXPECT_FALSE(ev.kubelet);
}

TEST(EnvironmentParsers, MountinfoOfAKubernetesPodOnContainerd) {
  const auto ev = parsers::parse_container_mounts(
      "3187 2960 0:412 / / rw,relatime master:1042 - overlay overlay rw,lowerdir=/var/lib/containerd/"
      "io.containerd.snapshotter.v1.overlayfs/snapshots/1824/fs,upperdir=/var/lib/containerd/"
      "io.containerd.snapshotter.v1.overlayfs/snapshots/1901/fs,workdir=/x/work\n"
      "3194 3187 259:1 /var/lib/kubelet/pods/5c0e/etc-hosts /etc/hosts rw,relatime - xfs /dev/nvme0n1p1 rw\n"
      "3196 3187 259:1 /var/lib/containerd/io.containerd.grpc.v1.cri/sandboxes/b7e1/hostname /etc/hostname rw - xfs "
      "/dev/nvme0n1p1 rw\n");
  EXPECT_EQ(ev.runtime, "containerd");
  EXPECT_TRUE(ev.kubelet);
}

TEST(EnvironmentParsers, MountinfoPrefersTheRuntimeFilesOverTheRootSnapshotter) {
  // Docker with the containerd image store: the root is a containerd snapshot,
  // /etc/hostname still comes from Docker's container folder.
  const auto ev = parsers::parse_container_mounts(
      "1 0 0:1 / / rw - overlay overlay rw,upperdir=/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs/"
      "snapshots/9/fs,workdir=/w\n"
      "2 1 8:1 /var/lib/docker/containers/abc/hostname /etc/hostname rw - ext4 /dev/sda1 rw\n");
  EXPECT_EQ(ev.runtime, "docker");
}

TEST(EnvironmentParsers, MountinfoOfRootlessPodman) {
  const auto ev = parsers::parse_container_mounts(
      "610 566 0:55 / / rw,nodev,relatime - overlay overlay rw,lowerdir=/home/u/.local/share/containers/storage/overlay/"
      "l/X,upperdir=/home/u/.local/share/containers/storage/overlay/77/diff,workdir=/home/u/.local/share/containers/"
      "storage/overlay/77/work,userxattr\n"
      "620 610 0:48 /containers/overlay-containers/ef01/userdata/hostname /etc/hostname rw,nosuid,nodev - tmpfs tmpfs "
      "rw,size=3274372k,mode=700,uid=1000,gid=1000\n");
  EXPECT_EQ(ev.runtime, "containers-storage");
}

TEST(EnvironmentParsers, AHostRunningContainersIsNoEvidence) {
  // The host sees its containers' overlay mounts and kubelet volumes, but
  // neither at "/" nor over /etc/hostname.
  const auto ev = parsers::parse_container_mounts(
      "26 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw\n"
      "900 26 0:152 / /var/lib/docker/overlay2/8a3c/merged rw,relatime shared:620 - overlay overlay rw,lowerdir=/var/"
      "lib/docker/overlay2/l/AB,upperdir=/var/lib/docker/overlay2/8a3c/diff,workdir=/var/lib/docker/overlay2/8a3c/work\n"
      "901 26 259:2 /var/lib/kubelet/pods/p/volumes/x /var/lib/kubelet/pods/p/volume-subpaths/x rw - ext4 /dev/"
      "nvme0n1p2 rw\n");
  EXPECT_FALSE(ev.runtime);
  EXPECT_FALSE(ev.kubelet);
  EXPECT_FALSE(ev.overlay_root);
  EXPECT_FALSE(ev.runtime_files);
}

TEST(EnvironmentParsers, MountinfoGarbageIsNoEvidence) {
  EXPECT_FALSE(parsers::parse_container_mounts("").runtime);
  EXPECT_FALSE(parsers::parse_container_mounts("1 2 3\n\x01\x02\x03 / / - \n - - - - - - - -\n").runtime);
  // Truncated in the middle of the root line's options.
  const auto ev = parsers::parse_container_mounts("1201 1003 0:152 / / rw,relatime - overlay overlay rw,lowerdir=/var/lib/doc");
  EXPECT_TRUE(ev.overlay_root);
  EXPECT_FALSE(ev.runtime);
  EXPECT_FALSE(parsers::parse_container_mounts(std::string(100000, 'x')).runtime);
}

// --- cgroup -------------------------------------------------------------------

TEST(EnvironmentParsers, CgroupPaths) {
  EXPECT_EQ(parsers::parse_cgroup("12:memory:/docker/3f6c2a9e\n11:cpu:/docker/3f6c2a9e\n").runtime, "docker");
  EXPECT_EQ(parsers::parse_cgroup("0::/system.slice/docker-3f6c2a9e.scope\n").runtime, "docker");
  const auto pod = parsers::parse_cgroup(
      "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod5c0e.slice/cri-containerd-e2d4.scope\n");
  EXPECT_EQ(pod.runtime, "containerd");
  EXPECT_TRUE(pod.kubernetes);
  const auto crio = parsers::parse_cgroup("0::/kubepods.slice/kubepods-pod1.slice/crio-77aa.scope\n");
  EXPECT_EQ(crio.runtime, "cri-o");
  EXPECT_TRUE(crio.kubernetes);
  const auto cgroupfs_pod = parsers::parse_cgroup("4:memory:/kubepods/burstable/pod5c0e/e2d4f6a8\n");
  EXPECT_FALSE(cgroupfs_pod.runtime);
  EXPECT_TRUE(cgroupfs_pod.kubernetes);
  EXPECT_EQ(parsers::parse_cgroup("0::/machine.slice/libpod-ef01.scope/container\n").runtime, "podman");
  EXPECT_EQ(parsers::parse_cgroup("0::/lxc.payload.web01/init.scope\n").runtime, "lxc");
  EXPECT_EQ(parsers::parse_cgroup("1:name=systemd:/lxc/web01\n").runtime, "lxc");
  EXPECT_EQ(parsers::parse_cgroup("0::/machine.slice/systemd-nspawn@deb.service/payload\n").runtime, "systemd-nspawn");
}

TEST(EnvironmentParsers, CgroupsOfHostsAndDaemonsAreNoEvidence) {
  EXPECT_FALSE(parsers::parse_cgroup("0::/\n").runtime);
  EXPECT_FALSE(parsers::parse_cgroup("0::/user.slice/user-1000.slice/session-4.scope\n").runtime);
  // The daemons themselves, and a sandbox's cgroup the probe knows nothing of.
  EXPECT_FALSE(parsers::parse_cgroup("0::/system.slice/docker.service\n").runtime);
  EXPECT_FALSE(parsers::parse_cgroup("0::/system.slice/containerd.service\n").runtime);
  EXPECT_FALSE(parsers::parse_cgroup("4:memory:/process_api/906a264773fbc25b\n0::/\n").runtime);
  EXPECT_FALSE(parsers::parse_cgroup("garbage\n::::\n").runtime);
}

// --- small parsers --------------------------------------------------------------

TEST(EnvironmentParsers, ContainerNames) {
  EXPECT_EQ(parsers::container_name("lxc\n"), "lxc");
  EXPECT_EQ(parsers::container_name("lxc-libvirt"), "lxc");
  EXPECT_EQ(parsers::container_name("systemd-nspawn"), "systemd-nspawn");
  EXPECT_EQ(parsers::container_name("Docker"), "docker");
  EXPECT_FALSE(parsers::container_name("wsl"));
  EXPECT_FALSE(parsers::container_name(""));
  EXPECT_FALSE(parsers::container_name("evil\"name"));
  EXPECT_FALSE(parsers::container_name(std::string(100, 'a')));
}

TEST(EnvironmentParsers, ContainerenvEngine) {
  EXPECT_EQ(parsers::containerenv_engine("engine=\"podman-4.9.3\"\nname=\"web\"\nrootless=1\n"), "podman");
  EXPECT_EQ(parsers::containerenv_engine("engine=\"cri-o-1.29.1\"\n"), "cri-o");
  EXPECT_FALSE(parsers::containerenv_engine(""));
  EXPECT_FALSE(parsers::containerenv_engine("name=\"web\"\n"));
}

TEST(EnvironmentParsers, WslVersions) {
  EXPECT_EQ(parsers::wsl_version("5.15.167.4-microsoft-standard-WSL2"), 2u);
  EXPECT_EQ(parsers::wsl_version("4.19.104-microsoft-standard"), 2u);
  EXPECT_EQ(parsers::wsl_version("6.6.36.6-microsoft-standard-WSL2+"), 2u);
  EXPECT_EQ(parsers::wsl_version("4.4.0-19041-Microsoft"), 1u);
  EXPECT_FALSE(parsers::wsl_version("6.5.0-1025-azure"));  // an Azure kernel is not WSL
  EXPECT_FALSE(parsers::wsl_version("6.8.0-45-generic"));
  EXPECT_FALSE(parsers::wsl_version(""));
}

TEST(EnvironmentParsers, CpuinfoHypervisorBit) {
  EXPECT_TRUE(parsers::cpuinfo_hypervisor_flag("processor\t: 0\nflags\t\t: fpu vme hypervisor lahf_lm\n"));
  EXPECT_FALSE(parsers::cpuinfo_hypervisor_flag("processor\t: 0\nflags\t\t: fpu vme vmx lahf_lm\n"));
  // Only the first record's flags are read.
  EXPECT_FALSE(parsers::cpuinfo_hypervisor_flag("flags\t: fpu\n\nflags\t: hypervisor\n"));
  // Arm has no such bit ("Features" line).
  EXPECT_FALSE(parsers::cpuinfo_hypervisor_flag("processor\t: 0\nFeatures\t: fp asimd\n"));
  EXPECT_FALSE(parsers::cpuinfo_hypervisor_flag(""));
}

parsers::Dmi dmi(std::string vendor, std::string product, std::string bios_vendor = "", std::string bios_version = "",
                 std::string chassis_asset_tag = "") {
  parsers::Dmi d;
  d.sys_vendor = std::move(vendor);
  d.product_name = std::move(product);
  d.bios_vendor = std::move(bios_vendor);
  d.bios_version = std::move(bios_version);
  d.chassis_asset_tag = std::move(chassis_asset_tag);
  return d;
}

TEST(EnvironmentParsers, HypervisorsNamedByDmi) {
  EXPECT_EQ(parsers::dmi_hypervisor(dmi("QEMU", "Standard PC (Q35 + ICH9, 2009)")), "qemu");
  EXPECT_EQ(parsers::dmi_hypervisor(dmi("Red Hat", "KVM")), "kvm");
  EXPECT_EQ(parsers::dmi_hypervisor(dmi("VMware, Inc.", "VMware Virtual Platform")), "vmware");
  EXPECT_EQ(parsers::dmi_hypervisor(dmi("innotek GmbH", "VirtualBox")), "virtualbox");
  EXPECT_EQ(parsers::dmi_hypervisor(dmi("Xen", "HVM domU", "Xen", "4.11.amazon")), "xen");
  EXPECT_EQ(parsers::dmi_hypervisor(dmi("Microsoft Corporation", "Virtual Machine")), "hyper-v");
  EXPECT_EQ(parsers::dmi_hypervisor(dmi("Parallels Software International Inc.", "Parallels Virtual Platform")), "parallels");
  // Bare metal, including Microsoft's own laptops and cloud firmware that names the cloud.
  EXPECT_FALSE(parsers::dmi_hypervisor(dmi("Microsoft Corporation", "Surface Laptop 5")));
  EXPECT_FALSE(parsers::dmi_hypervisor(dmi("Dell Inc.", "PowerEdge XE9680")));
  EXPECT_FALSE(parsers::dmi_hypervisor(dmi("Amazon EC2", "p5.48xlarge")));
  EXPECT_FALSE(parsers::dmi_hypervisor(dmi("Google", "Google Compute Engine")));
  EXPECT_FALSE(parsers::dmi_hypervisor(parsers::Dmi{}));
}

TEST(EnvironmentParsers, ParavirtualClocks) {
  EXPECT_EQ(parsers::clocksource_hypervisor("kvm-clock tsc hpet acpi_pm \n"), "kvm");
  EXPECT_EQ(parsers::clocksource_hypervisor("hyperv_clocksource_tsc_page acpi_pm"), "hyper-v");
  EXPECT_EQ(parsers::clocksource_hypervisor("xen tsc"), "xen");
  EXPECT_FALSE(parsers::clocksource_hypervisor("tsc hpet acpi_pm"));
  EXPECT_FALSE(parsers::clocksource_hypervisor("arch_sys_counter"));
}

TEST(EnvironmentParsers, CloudsIdentifiedFromDmi) {
  const auto nitro = parsers::identify_cloud(dmi("Amazon EC2", "p5.48xlarge", "Amazon EC2", "1.0"), "");
  ASSERT_TRUE(nitro);
  EXPECT_EQ(*nitro, (CloudInstance{"aws", "p5.48xlarge", "p5.48xlarge"}));
  const auto metal = parsers::identify_cloud(dmi("Amazon EC2", "c7i.metal-48xl"), "");
  ASSERT_TRUE(metal);
  EXPECT_EQ(metal->instance_type, "c7i.metal-48xl");
  // Pre-Nitro Xen instances: only Amazon's BIOS build, or the Xen UUID, says AWS.
  const auto xen_bios = parsers::identify_cloud(dmi("Xen", "HVM domU", "Xen", "4.11.amazon"), "");
  ASSERT_TRUE(xen_bios);
  EXPECT_EQ(*xen_bios, (CloudInstance{"aws", std::nullopt, "HVM domU"}));
  const auto xen_uuid = parsers::identify_cloud(dmi("Xen", "HVM domU", "Xen", "4.2"), "ec2cefac-dce1-eed5-4e48-83ad3ef51bfb\n");
  ASSERT_TRUE(xen_uuid);
  EXPECT_EQ(xen_uuid->provider, "aws");
  const auto gcp = parsers::identify_cloud(dmi("Google", "Google Compute Engine", "Google", "Google"), "");
  ASSERT_TRUE(gcp);
  EXPECT_EQ(*gcp, (CloudInstance{"gcp", std::nullopt, "Google Compute Engine"}));
  const auto azure =
      parsers::identify_cloud(dmi("Microsoft Corporation", "Virtual Machine", "Microsoft Corporation",
                                  "Hyper-V UEFI Release v4.1", "7783-7084-3265-9085-8269-3286-77"),
                              "");
  ASSERT_TRUE(azure);
  EXPECT_EQ(azure->provider, "azure");
  const auto oci = parsers::identify_cloud(dmi("QEMU", "Standard PC (i440FX + PIIX, 1996)", "SeaBIOS", "1.0", "OracleCloud.com"), "");
  ASSERT_TRUE(oci);
  EXPECT_EQ(oci->provider, "oci");
  EXPECT_EQ(parsers::identify_cloud(dmi("Alibaba Cloud", "Alibaba Cloud ECS"), "")->provider, "alibaba");
}

TEST(EnvironmentParsers, AHypervisorAloneIsNeverACloud) {
  // Any Xen guest is not AWS; any Hyper-V guest is not Azure; a KVM VM is no cloud.
  EXPECT_FALSE(parsers::identify_cloud(dmi("Xen", "HVM domU", "Xen", "4.16.2"), "3d2e0b1c-0000-4000-8000-000000000000"));
  EXPECT_FALSE(parsers::identify_cloud(
      dmi("Microsoft Corporation", "Virtual Machine", "Microsoft Corporation", "Hyper-V UEFI Release v4.1",
          "4817-2218-1283-9962-3402-8124-54"),
      ""));
  EXPECT_FALSE(parsers::identify_cloud(dmi("QEMU", "Standard PC (Q35 + ICH9, 2009)", "SeaBIOS"), ""));
  EXPECT_FALSE(parsers::identify_cloud(dmi("Supermicro", "AS -4124GS-TNR"), ""));
  EXPECT_FALSE(parsers::identify_cloud(parsers::Dmi{}, ""));
}

TEST(EnvironmentParsers, AwsInstanceTypeMustLookLikeOne) {
  const auto odd = parsers::identify_cloud(dmi("Amazon EC2", "Not Specified"), "");
  ASSERT_TRUE(odd);
  EXPECT_EQ(odd->provider, "aws");
  EXPECT_FALSE(odd->instance_type);
  EXPECT_TRUE(parsers::aws_metal("c5.metal"));
  EXPECT_TRUE(parsers::aws_metal("m7i.metal-24xl"));
  EXPECT_FALSE(parsers::aws_metal("p5.48xlarge"));
  EXPECT_FALSE(parsers::aws_metal("metal"));
}

// --- whole probe --------------------------------------------------------------------

Environment probe(FixtureBuilder& f, std::vector<Warning>* warnings = nullptr) {
  auto system = FixtureSystem::open(f.write());
  EXPECT_TRUE(system) << system.error().message;
  if (!system) return {};
  const AcceleratorRegistry r = DetectBuilder::none().detect(**system);
  // Other host probes (storage, network) read some of the same files: only
  // the environment probe's own findings matter here.
  if (warnings)
    for (const Warning& w : r.warnings())
      if (w.backend == "environment") warnings->push_back(w);
  EXPECT_TRUE(r.system().environment);
  return r.system().environment.value_or(Environment{});
}

TEST(EnvironmentProbe, AnEmptyMachineSaysNothing) {
  FixtureBuilder f;
  std::vector<Warning> warnings;
  EXPECT_EQ(probe(f, &warnings), Environment{});
  EXPECT_TRUE(warnings.empty());
}

TEST(EnvironmentProbe, DockerMarkerWithDockerMounts) {
  FixtureBuilder f;
  f.file("/.dockerenv", "").file("/proc/self/mountinfo", docker_mountinfo).file("/proc/self/cgroup", "0::/\n");
  EXPECT_EQ(probe(f).container, "docker");
}

TEST(EnvironmentProbe, DockerMarkerAloneWhenMountsAreUnreadable) {
  FixtureBuilder f;
  f.file("/.dockerenv", "");
  EXPECT_EQ(probe(f).container, "docker");
}

TEST(EnvironmentProbe, LeftoverDockerMarkerInAVmRootFilesystem) {
  // A microVM whose root filesystem was exported from a Docker image keeps /.dockerenv.
  FixtureBuilder f;
  f.file("/.dockerenv", "")
      .file("/proc/self/mountinfo",
            "26 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n21 26 0:20 / /proc rw,relatime - proc proc rw\n")
      .file("/proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu hypervisor\n")
      .file("/sys/devices/system/clocksource/clocksource0/available_clocksource", "kvm-clock \n");
  std::vector<Warning> warnings;
  const Environment env = probe(f, &warnings);
  EXPECT_FALSE(env.container);
  EXPECT_TRUE(env.virtual_machine);
  EXPECT_EQ(env.hypervisor, "kvm");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].backend, "environment");
  EXPECT_EQ(warnings[0].kind, WarningKind::inconsistent);
  EXPECT_NE(warnings[0].message.find("/.dockerenv"), std::string::npos);
}

TEST(EnvironmentProbe, LeftoverContainerenvToo) {
  FixtureBuilder f;
  f.file("/run/.containerenv", "").file("/proc/self/mountinfo", "26 1 8:1 / / rw,relatime - xfs /dev/sda1 rw\n");
  std::vector<Warning> warnings;
  EXPECT_FALSE(probe(f, &warnings).container);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].message.find("/run/.containerenv"), std::string::npos);
}

TEST(EnvironmentProbe, RootlessPodman) {
  FixtureBuilder f;
  f.file("/run/.containerenv", "")
      .file("/proc/self/mountinfo",
            "610 566 0:55 / / rw - overlay overlay rw,upperdir=/home/u/.local/share/containers/storage/overlay/77/diff\n");
  EXPECT_EQ(probe(f).container, "podman");
}

TEST(EnvironmentProbe, PrivilegedPodmanNamesItself) {
  FixtureBuilder f;
  f.file("/run/.containerenv", "engine=\"podman-5.2.2\"\nname=\"trainer\"\nrootless=0\n");
  EXPECT_EQ(probe(f).container, "podman");
}

TEST(EnvironmentProbe, CriOPod) {
  FixtureBuilder f;
  f.file("/run/.containerenv", "")
      .file("/proc/self/cgroup", "0::/\n")
      .file("/var/run/secrets/kubernetes.io/serviceaccount/namespace", "default")
      .env("KUBERNETES_SERVICE_HOST", "172.30.0.1");
  const Environment env = probe(f);
  EXPECT_EQ(env.container, "cri-o");
  EXPECT_TRUE(env.kubernetes);
  EXPECT_EQ(env.kubernetes_namespace, "default");
}

TEST(EnvironmentProbe, LxcAndNspawnFromSystemd) {
  FixtureBuilder lxc;
  lxc.file("/run/systemd/container", "lxc\n").file("/proc/self/cgroup", "0::/\n");
  EXPECT_EQ(probe(lxc).container, "lxc");
  FixtureBuilder nspawn;
  nspawn.file("/run/systemd/container", "systemd-nspawn\n");
  EXPECT_EQ(probe(nspawn).container, "systemd-nspawn");
  FixtureBuilder wsl;
  wsl.file("/run/systemd/container", "wsl\n");
  EXPECT_FALSE(probe(wsl).container);
}

TEST(EnvironmentProbe, ContainerVariableInheritedFromPid1) {
  FixtureBuilder f;
  f.env("container", "podman");
  EXPECT_EQ(probe(f).container, "podman");
}

TEST(EnvironmentProbe, PodWhoseRuntimeLeftNoTrace) {
  FixtureBuilder f;
  f.env("KUBERNETES_SERVICE_HOST", "10.0.0.1").file("/proc/self/cgroup", "0::/\n");
  const Environment env = probe(f);
  EXPECT_TRUE(env.kubernetes);
  EXPECT_EQ(env.container, "unknown");
  EXPECT_FALSE(env.kubernetes_namespace);
}

TEST(EnvironmentProbe, BadNamespaceFileIsAWarning) {
  FixtureBuilder f;
  f.file("/var/run/secrets/kubernetes.io/serviceaccount/namespace", std::string("\x7f" "ELF\x01\x02", 6));
  std::vector<Warning> warnings;
  const Environment env = probe(f, &warnings);
  EXPECT_TRUE(env.kubernetes);
  EXPECT_FALSE(env.kubernetes_namespace);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].kind, WarningKind::invalid_value);
  EXPECT_NE(warnings[0].message.find("/var/run/secrets/kubernetes.io/serviceaccount/namespace"), std::string::npos);
}

// An EC2 Xen guest as the hypervisor shows it, without its DMI strings.
FixtureBuilder& aws_xen_guest(FixtureBuilder& f) {
  return f.file("/sys/hypervisor/type", "xen\n")
      .file("/sys/hypervisor/uuid", "ec2cefac-dce1-eed5-4e48-83ad3ef51bfb\n")
      .file("/proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu hypervisor\n");
}

TEST(EnvironmentProbe, OldAwsXenInstance) {
  FixtureBuilder f;
  aws_xen_guest(f).file("/sys/class/dmi/id/sys_vendor", "Xen\n")
      .file("/sys/class/dmi/id/product_name", "HVM domU\n")
      .file("/sys/class/dmi/id/bios_vendor", "Xen\n")
      .file("/sys/class/dmi/id/bios_version", "4.2.amazon\n");
  const Environment env = probe(f);
  EXPECT_TRUE(env.virtual_machine);
  EXPECT_EQ(env.hypervisor, "xen");
  ASSERT_TRUE(env.cloud);
  EXPECT_EQ(*env.cloud, (CloudInstance{"aws", std::nullopt, "HVM domU"}));
}

TEST(EnvironmentProbe, DmiWithoutASystemVendorIsStillRead) {
  // The other strings are skipped only when the DMI folder itself is absent.
  FixtureBuilder f;
  aws_xen_guest(f)
      .file("/sys/class/dmi/id/product_name", "HVM domU\n")
      .file("/sys/class/dmi/id/bios_version", "4.2.amazon\n");
  const Environment env = probe(f);
  ASSERT_TRUE(env.cloud);
  EXPECT_EQ(*env.cloud, (CloudInstance{"aws", std::nullopt, "HVM domU"}));
}

TEST(EnvironmentProbe, AXenGuestElsewhereIsNotAws) {
  FixtureBuilder f;
  f.file("/sys/hypervisor/type", "xen\n")
      .file("/sys/hypervisor/uuid", "3d2e0b1c-5a6f-4d7e-8c9b-0a1b2c3d4e5f\n")
      .file("/sys/class/dmi/id/sys_vendor", "Xen\n")
      .file("/sys/class/dmi/id/product_name", "HVM domU\n")
      .file("/sys/class/dmi/id/bios_version", "4.17.3\n");
  const Environment env = probe(f);
  EXPECT_EQ(env.hypervisor, "xen");
  EXPECT_FALSE(env.cloud);
}

TEST(EnvironmentProbe, XenDom0IsTheHost) {
  FixtureBuilder f;
  f.file("/sys/hypervisor/type", "xen\n")
      .file("/proc/xen/capabilities", "control_d\n")
      .file("/sys/class/dmi/id/sys_vendor", "Supermicro\n");
  const Environment env = probe(f);
  EXPECT_FALSE(env.virtual_machine);
  EXPECT_FALSE(env.hypervisor);
}

TEST(EnvironmentProbe, HyperVGuestOutsideAzure) {
  FixtureBuilder f;
  f.file("/sys/class/dmi/id/sys_vendor", "Microsoft Corporation\n")
      .file("/sys/class/dmi/id/product_name", "Virtual Machine\n")
      .file("/sys/class/dmi/id/chassis_asset_tag", "4817-2218-1283-9962-3402-8124-54\n")
      .file("/proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu hypervisor\n");
  const Environment env = probe(f);
  EXPECT_EQ(env.hypervisor, "hyper-v");
  EXPECT_FALSE(env.cloud);
}

TEST(EnvironmentProbe, AwsBareMetalHasNoHypervisor) {
  FixtureBuilder f;
  f.file("/sys/class/dmi/id/sys_vendor", "Amazon EC2\n")
      .file("/sys/class/dmi/id/product_name", "c5.metal\n")
      .file("/proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu vmx\n")
      .file("/sys/devices/system/clocksource/clocksource0/available_clocksource", "tsc hpet acpi_pm\n");
  const Environment env = probe(f);
  ASSERT_TRUE(env.cloud);
  EXPECT_EQ(env.cloud->instance_type, "c5.metal");
  EXPECT_FALSE(env.virtual_machine);
  EXPECT_FALSE(env.hypervisor);
}

TEST(EnvironmentProbe, GravitonInstanceIsAVmWithoutACpuBit) {
  FixtureBuilder f;
  f.file("/sys/class/dmi/id/sys_vendor", "Amazon EC2\n")
      .file("/sys/class/dmi/id/product_name", "m7g.xlarge\n")
      .file("/proc/cpuinfo", "processor\t: 0\nFeatures\t: fp asimd sve\nCPU implementer\t: 0x41\nCPU part\t: 0xd40\n")
      .file("/sys/devices/system/clocksource/clocksource0/available_clocksource", "arch_sys_counter\n");
  const Environment env = probe(f);
  EXPECT_TRUE(env.virtual_machine);
  EXPECT_EQ(env.hypervisor, "nitro");
}

TEST(EnvironmentProbe, QemuWithoutKvmIsQemu) {
  FixtureBuilder f;
  f.file("/sys/class/dmi/id/sys_vendor", "QEMU\n")
      .file("/sys/class/dmi/id/product_name", "Standard PC (i440FX + PIIX, 1996)\n")
      .file("/sys/devices/system/clocksource/clocksource0/available_clocksource", "tsc acpi_pm\n");
  EXPECT_EQ(probe(f).hypervisor, "qemu");
}

TEST(EnvironmentProbe, Wsl1) {
  FixtureBuilder f;
  f.file("/proc/version", "Linux version 4.4.0-19041-Microsoft (Microsoft@Microsoft.com) (gcc version 5.4.0 (GCC) ) #1237-Microsoft\n");
  const Environment env = probe(f);
  EXPECT_TRUE(env.wsl);
  EXPECT_EQ(env.wsl_version, 1u);
  EXPECT_FALSE(env.gpu_paravirtualization);
  EXPECT_FALSE(env.virtual_machine);
}

TEST(EnvironmentProbe, DeviceSelectionVariablesAreRecorded) {
  FixtureBuilder f;
  f.env("CUDA_VISIBLE_DEVICES", "")
      .env("ROCR_VISIBLE_DEVICES", "GPU-4b2c1a9f8d3e6f7a")
      .env("NEURON_RT_VISIBLE_CORES", "0-3")
      .env("TPU_VISIBLE_CHIPS", "0,1")
      .env("HOME", "/root")
      .env("ZE_AFFINITY_MASK", std::string(10000, '0'));
  std::vector<Warning> warnings;
  const Environment env = probe(f, &warnings);
  const std::map<std::string, std::string, std::less<>> expected = {
      {"CUDA_VISIBLE_DEVICES", ""},                    // set and empty: no GPU, so it is kept
      {"NEURON_RT_VISIBLE_CORES", "0-3"},
      {"ROCR_VISIBLE_DEVICES", "GPU-4b2c1a9f8d3e6f7a"},
      {"TPU_VISIBLE_CHIPS", "0,1"},
      {"ZE_AFFINITY_MASK", std::string(4096, '0')},
  };
  EXPECT_EQ(env.visible_devices_env, expected);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].kind, WarningKind::truncated);
  EXPECT_NE(warnings[0].message.find("ZE_AFFINITY_MASK"), std::string::npos);
}

TEST(EnvironmentProbe, GarbageFilesGiveNoFalseClaims) {
  FixtureBuilder f;
  const std::string junk("\x00\xff\xfe binary \x01 garbage\n", 22);
  f.file("/proc/self/mountinfo", junk)
      .file("/proc/self/cgroup", junk)
      .file("/run/systemd/container", junk)
      .file("/proc/sys/kernel/osrelease", junk)
      .file("/proc/cpuinfo", junk)
      .file("/sys/class/dmi/id/sys_vendor", std::string(5000, 'A'))
      .file("/sys/class/dmi/id/product_name", junk)
      .file("/sys/hypervisor/type", junk);
  std::vector<Warning> warnings;
  const Environment env = probe(f, &warnings);
  EXPECT_EQ(env, Environment{});
  EXPECT_TRUE(warnings.empty());
}

TEST(EnvironmentProbe, HostProbesOffMeansNoEnvironment) {
  FixtureBuilder f;
  f.file("/.dockerenv", "");
  auto system = FixtureSystem::open(f.write());
  ASSERT_TRUE(system);
  const auto r = DetectBuilder::none().system_probes(false).detect(**system);
  EXPECT_FALSE(r.system().environment);
  EXPECT_TRUE(r.timings().empty());
}

}  // namespace
