// Environment probe: where this process runs. A handful of small file reads
// (no tool, no network): container markers, cgroup and mountinfo, the
// Kubernetes service account, WSL's kernel and /dev/dxg, DMI strings, the
// cpuinfo hypervisor bit and the paravirtual clocks. docs/environment.md
// lists every file and what it decides.
module;
#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.detectors;

namespace hwaccel {
namespace parsers {
namespace {

using text::icontains;
using text::iequals;

bool istarts_with(std::string_view s, std::string_view prefix) noexcept {
  return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

// Mount points a container runtime fills with bind mounts of its own files.
constexpr std::array<std::string_view, 4> runtime_file_mounts = {"/etc/hostname", "/etc/hosts", "/etc/resolv.conf",
                                                                 "/dev/termination-log"};

// The runtime whose storage a host path belongs to. Only ever applied to the
// sources of the root mount and of the runtime_file_mounts.
std::optional<std::string> runtime_of_storage_path(std::string_view path) {
  // Docker: /var/lib/docker/containers/<id>/hostname, /var/lib/docker/overlay2/<id>/diff.
  if (path.find("/docker/containers/") != std::string_view::npos ||
      path.find("/docker/overlay2/") != std::string_view::npos ||
      path.find("/var/lib/docker/") != std::string_view::npos)
    return "docker";
  // containerd (and the kubelet's CRI plugin, k3s, nerdctl):
  // /var/lib/containerd/io.containerd.grpc.v1.cri/sandboxes/<id>/hostname,
  // .../io.containerd.snapshotter.v1.overlayfs/snapshots/<n>/fs, /var/lib/nerdctl/.
  if (path.find("io.containerd.") != std::string_view::npos || path.find("/nerdctl/") != std::string_view::npos)
    return "containerd";
  // containers/storage (podman and CRI-O):
  // /var/lib/containers/storage/overlay-containers/<id>/userdata/hostname,
  // rootless runroot /run/user/<uid>/containers/overlay-containers/...,
  // /var/lib/containers/storage/overlay/<id>/diff.
  if (path.find("/overlay-containers/") != std::string_view::npos ||
      path.find("/containers/storage/overlay/") != std::string_view::npos)
    return "containers-storage";
  return std::nullopt;
}

}  // namespace

MountEvidence parse_container_mounts(std::string_view text) {
  MountEvidence ev;
  std::optional<std::string> root_runtime;
  std::optional<std::string> files_runtime;
  std::vector<std::string_view> fields;  // one vector for every line
  while (!text.empty()) {
    const std::string_view line = text::next_line(text);
    text::words_into(line, fields);
    // id parent major:minor root mount-point options [optional...] - fstype source super-options
    if (fields.size() < 7) continue;
    const auto dash = std::find(fields.begin() + 6, fields.end(), std::string_view("-"));
    if (dash == fields.end() || dash + 2 >= fields.end()) continue;
    const std::string_view root = fields[3];
    const std::string_view mount_point = fields[4];
    const std::string_view fstype = *(dash + 1);
    const std::string_view super_options = dash + 3 < fields.end() ? *(dash + 3) : std::string_view{};
    if (mount_point == "/") {
      // A later mount of "/" hides an earlier one: the last one wins.
      ev.overlay_root = fstype == "overlay";
      root_runtime.reset();
      if (ev.overlay_root) {
        std::string_view opts = super_options;
        while (!opts.empty()) {
          const std::string_view opt = text::next_token(opts, ',');
          if (opt.starts_with("upperdir=")) root_runtime = runtime_of_storage_path(opt.substr(9));
        }
      }
      continue;
    }
    if (std::find(runtime_file_mounts.begin(), runtime_file_mounts.end(), mount_point) == runtime_file_mounts.end())
      continue;
    ev.runtime_files = true;
    if (root.find("/kubelet/pods/") != std::string_view::npos) ev.kubelet = true;
    if (const auto r = runtime_of_storage_path(root); r && !files_runtime) files_runtime = r;
  }
  // The files bind-mounted from the runtime's own folder name it more surely
  // than the root filesystem: Docker can keep images in containerd's snapshotter.
  ev.runtime = files_runtime ? files_runtime : root_runtime;
  return ev;
}

CgroupEvidence parse_cgroup(std::string_view text) {
  CgroupEvidence ev;
  while (!text.empty()) {
    std::string_view line = text::next_line(text);
    // "hierarchy-id:controllers:path"
    text::next_token(line, ':');
    text::next_token(line, ':');
    const std::string_view path = line;
    if (path.find("/kubepods") != std::string_view::npos || path.find("kubepods-") != std::string_view::npos ||
        path.find("kubepods.slice") != std::string_view::npos)
      ev.kubernetes = true;
    if (ev.runtime) continue;
    // cgroupfs driver: /docker/<id>; systemd driver: docker-<id>.scope. The
    // daemons' own units (docker.service, containerd.service) never match.
    if (path.find("/docker/") != std::string_view::npos ||
        (path.find("docker-") != std::string_view::npos && path.find(".scope") != std::string_view::npos))
      ev.runtime = "docker";
    else if (path.find("cri-containerd-") != std::string_view::npos || path.find("nerdctl-") != std::string_view::npos)
      ev.runtime = "containerd";
    else if (path.find("crio-") != std::string_view::npos)
      ev.runtime = "cri-o";
    else if (path.find("libpod-") != std::string_view::npos || path.find("/libpod_parent/") != std::string_view::npos)
      ev.runtime = "podman";
    else if (path.find("/lxc/") != std::string_view::npos || path.find("/lxc.payload") != std::string_view::npos)
      ev.runtime = "lxc";
    else if (path.find("systemd-nspawn@") != std::string_view::npos)
      ev.runtime = "systemd-nspawn";
  }
  return ev;
}

std::optional<std::string> container_name(std::string_view value) {
  value = text::trim(value);
  if (value.empty() || value.size() > 64 || iequals(value, "wsl")) return std::nullopt;
  if (istarts_with(value, "lxc")) return "lxc";  // lxc, lxc-libvirt
  std::string name;
  for (char c : value) {
    const char l = text::to_lower(c);
    const bool ok = (l >= 'a' && l <= 'z') || (l >= '0' && l <= '9') || l == '-' || l == '_' || l == '.';
    if (!ok) return std::nullopt;
    name.push_back(l);
  }
  return name;
}

std::optional<std::string> containerenv_engine(std::string_view text) {
  while (!text.empty()) {
    std::string_view line = text::trim(text::next_line(text));
    if (!line.starts_with("engine=")) continue;
    line.remove_prefix(7);
    if (line.size() >= 2 && line.front() == '"' && line.back() == '"') line = line.substr(1, line.size() - 2);
    // "podman-4.9.3" -> "podman"; "cri-o" has a dash of its own.
    if (istarts_with(line, "cri-o")) return "cri-o";
    const std::string_view name = line.substr(0, line.find('-'));
    return container_name(name);
  }
  return std::nullopt;
}

std::optional<std::uint32_t> wsl_version(std::string_view release) {
  // WSL 2 kernels are Microsoft builds of Linux ("-microsoft-standard", with
  // "-WSL2" since 5.10); WSL 1 emulates a kernel named "4.4.0-<build>-Microsoft".
  if (icontains(release, "microsoft-standard") || icontains(release, "WSL2")) return 2u;
  if (release.find("-Microsoft") != std::string_view::npos) return 1u;
  return std::nullopt;
}

bool cpuinfo_hypervisor_flag(std::string_view cpuinfo) {
  while (!cpuinfo.empty()) {
    const std::string_view line = text::next_line(cpuinfo);
    if (!line.starts_with("flags")) continue;
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    for (std::string_view flag : text::words(line.substr(colon + 1)))
      if (flag == "hypervisor") return true;
    return false;  // the first record answers for all
  }
  return false;
}

std::optional<std::string> dmi_hypervisor(const Dmi& dmi) {
  struct Vendor {
    std::string_view prefix;
    std::string_view name;
  };
  // DMI strings hypervisors put in their virtual firmware (systemd's
  // detect-virt table, plus Hyper-V's "Virtual Machine" below).
  constexpr std::array<Vendor, 11> vendors = {{
      {"KVM", "kvm"},
      {"KubeVirt", "kvm"},
      {"QEMU", "qemu"},
      {"VMware", "vmware"},
      {"VMW", "vmware"},
      {"innotek GmbH", "virtualbox"},
      {"VirtualBox", "virtualbox"},
      {"Xen", "xen"},
      {"Bochs", "bochs"},
      {"Parallels", "parallels"},
      {"BHYVE", "bhyve"},
  }};
  // product_name first: KVM guests can say "KVM" there and "QEMU" as vendor.
  for (const std::string* field : {&dmi.product_name, &dmi.sys_vendor, &dmi.board_vendor, &dmi.bios_vendor})
    for (const auto& v : vendors)
      if (istarts_with(*field, v.prefix)) return std::string(v.name);
  // Hyper-V (and Azure) guests: "Microsoft Corporation" / "Virtual Machine".
  // The vendor alone is not enough: Surface laptops say Microsoft Corporation too.
  if (iequals(dmi.sys_vendor, "Microsoft Corporation") && iequals(dmi.product_name, "Virtual Machine"))
    return "hyper-v";
  return std::nullopt;
}

std::optional<std::string> clocksource_hypervisor(std::string_view available) {
  for (std::string_view source : text::words(available)) {
    if (source == "kvm-clock") return "kvm";
    if (source.starts_with("hyperv_clocksource")) return "hyper-v";
    if (source == "xen") return "xen";
  }
  return std::nullopt;
}

bool aws_metal(std::string_view instance_type) noexcept {
  return instance_type.ends_with(".metal") || instance_type.find(".metal-") != std::string_view::npos;
}

std::optional<CloudInstance> identify_cloud(const Dmi& dmi, std::string_view xen_uuid) {
  CloudInstance cloud;
  if (!dmi.product_name.empty()) cloud.product_name = dmi.product_name;
  // AWS Nitro (virtual and metal): every DMI vendor field says "Amazon EC2"
  // and product_name is the instance type.
  if (iequals(dmi.sys_vendor, "Amazon EC2") || iequals(dmi.board_vendor, "Amazon EC2") ||
      iequals(dmi.bios_vendor, "Amazon EC2")) {
    cloud.provider = "aws";
    const std::string_view type = dmi.product_name;
    const bool plausible = type.find('.') != std::string_view::npos && type.size() <= 64 &&
                           std::all_of(type.begin(), type.end(), [](char c) {
                             return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
                           });
    if (plausible) cloud.instance_type = dmi.product_name;
    return cloud;
  }
  // AWS on Xen (pre-Nitro): DMI says Xen / "HVM domU"; only Amazon's BIOS
  // build ("4.2.amazon", "4.11.amazon") or the "ec2" prefix of the Xen
  // domain UUID tells it apart from any other Xen guest.
  const bool amazon_xen_bios = icontains(dmi.bios_version, "amazon") || icontains(dmi.product_version, "amazon");
  if (amazon_xen_bios || istarts_with(text::trim(xen_uuid), "ec2")) {
    cloud.provider = "aws";
    return cloud;
  }
  if (iequals(dmi.product_name, "Google Compute Engine") || iequals(dmi.sys_vendor, "Google")) {
    cloud.provider = "gcp";
    return cloud;
  }
  // Azure's fixed chassis asset tag; a Hyper-V guest elsewhere has another.
  if (dmi.chassis_asset_tag.starts_with("7783-7084-3265-9085")) {
    cloud.provider = "azure";
    return cloud;
  }
  if (iequals(dmi.chassis_asset_tag, "OracleCloud.com")) {
    cloud.provider = "oci";
    return cloud;
  }
  if (iequals(dmi.product_name, "Alibaba Cloud ECS")) {
    cloud.provider = "alibaba";
    return cloud;
  }
  return std::nullopt;
}

}  // namespace parsers

namespace {

constexpr std::string_view dmi_dir = "/sys/class/dmi/id";

// DMI strings are at most 255 bytes (SMBIOS string table); anything longer or
// binary is not a firmware string.
std::string dmi_string(const System& sys, std::string_view name) {
  const auto value = read_text(sys, text::cat(dmi_dir, "/", name), 4096);
  if (!value || value->size() > 255) return {};
  return text::excerpt(*value, 255);
}

parsers::Dmi read_dmi(const System& sys) {
  parsers::Dmi dmi;
  dmi.sys_vendor = dmi_string(sys, "sys_vendor");
  // Without the folder (no DMI: most ARM boards, many containers) the other
  // six reads would each fail the same way.
  if (dmi.sys_vendor.empty() && !sys.status(dmi_dir)) return dmi;
  dmi.product_name = dmi_string(sys, "product_name");
  dmi.product_version = dmi_string(sys, "product_version");
  dmi.board_vendor = dmi_string(sys, "board_vendor");
  dmi.bios_vendor = dmi_string(sys, "bios_vendor");
  dmi.bios_version = dmi_string(sys, "bios_version");
  dmi.chassis_asset_tag = dmi_string(sys, "chassis_asset_tag");
  return dmi;
}

// A Kubernetes namespace is a DNS label (RFC 1123): anything else in the file
// is not one.
bool valid_namespace(std::string_view ns) noexcept {
  if (ns.empty() || ns.size() > 63 || ns.front() == '-' || ns.back() == '-') return false;
  return std::all_of(ns.begin(), ns.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
}

constexpr std::string_view service_account_dir = "/var/run/secrets/kubernetes.io/serviceaccount";
constexpr std::size_t env_value_cap = 4096;

Warning environment_warning(WarningKind kind, std::string message) {
  return Warning{"environment", kind, std::move(message)};
}

DetectorOutput detect_environment(const DetectContext& ctx) {
  DetectorOutput out;
  const System& sys = ctx.system();
  Environment env;

  ContainerFacts container = detect_container(sys);
  env.container = std::move(container.runtime);
  env.kubernetes = container.kubernetes;
  env.kubernetes_namespace = std::move(container.kubernetes_namespace);
  for (auto& w : container.warnings) out.warnings.push_back(std::move(w));

  // WSL: the kernel release names Microsoft's build; /dev/dxg is the GPU
  // paravirtualization device that CUDA and DirectML use there.
  auto release = read_text(sys, "/proc/sys/kernel/osrelease", 4096);
  if (!release) release = read_text(sys, "/proc/version", 4096);
  if (release) env.wsl_version = parsers::wsl_version(*release);
  env.wsl = env.wsl_version.has_value();
  env.gpu_paravirtualization = sys.exists("/dev/dxg");

  // Hypervisor: a Xen guest has /sys/hypervisor (dom0 too: its capabilities
  // say control_d), x86 guests have the cpuinfo bit, DMI names the product,
  // the paravirtual clocks name the hypervisor family.
  const parsers::Dmi dmi = read_dmi(sys);
  const auto xen_type = read_text(sys, "/sys/hypervisor/type", 256);
  const bool xen_dom0 = xen_type && read_text(sys, "/proc/xen/capabilities", 4096).value_or("").find("control_d") != std::string::npos;
  const bool xen_guest = xen_type && *xen_type == "xen" && !xen_dom0;
  // The first record's flags answer for every CPU, and the kernel writes the
  // file a CPU at a time as it is read: one page, as the cpu backend reads it.
  bool cpu_flag = false;
  if (const auto cpuinfo = sys.read_file("/proc/cpuinfo", 4096)) cpu_flag = parsers::cpuinfo_hypervisor_flag(cpuinfo->data);
  const auto clock = parsers::clocksource_hypervisor(
      read_text(sys, "/sys/devices/system/clocksource/clocksource0/available_clocksource", 4096).value_or(""));
  auto dmi_hv = parsers::dmi_hypervisor(dmi);
  // QEMU's firmware says "QEMU" whether or not KVM accelerates it; the KVM
  // paravirtual clock tells which.
  if (dmi_hv == "qemu" && clock == "kvm") dmi_hv = "kvm";

  env.cloud = parsers::identify_cloud(dmi, xen_guest ? read_text(sys, "/sys/hypervisor/uuid", 256).value_or("") : "");
  // Nitro instances carry their type in DMI; ".metal" sizes have no hypervisor.
  // Arm guests have no cpuinfo bit, so the type is what says "virtual" there.
  const bool aws_nitro = env.cloud && env.cloud->provider == "aws" && env.cloud->instance_type;
  const bool aws_virtual = aws_nitro && !parsers::aws_metal(*env.cloud->instance_type);

  env.virtual_machine =
      cpu_flag || xen_guest || dmi_hv.has_value() || clock.has_value() || env.wsl_version == 2u || aws_virtual;
  if (xen_guest) env.hypervisor = "xen";
  else if (dmi_hv) env.hypervisor = dmi_hv;
  else if (aws_virtual) env.hypervisor = "nitro";  // AWS's KVM-based hypervisor
  else if (env.wsl_version == 2u) env.hypervisor = "hyper-v";            // WSL 2 is a Hyper-V utility VM
  else if (clock && env.virtual_machine) env.hypervisor = clock;

  for (std::string_view name : device_selection_variables()) {
    auto value = sys.env(name);
    if (!value) continue;
    if (value->size() > env_value_cap) {
      ctx.warn(out, WarningKind::truncated,
               text::cat(name, " is ", value->size(), " bytes long; recorded its first ", env_value_cap));
      value->resize(env_value_cap);
    }
    env.visible_devices_env.emplace(std::string(name), std::move(*value));
  }
  out.environment = std::move(env);
  return out;
}

}  // namespace

ContainerFacts detect_container(const System& sys) {
  ContainerFacts facts;
  const auto mountinfo = sys.read_file("/proc/self/mountinfo", 1 << 20);
  const auto mounts = mountinfo ? parsers::parse_container_mounts(mountinfo->data) : parsers::MountEvidence{};
  const auto cgroup_text = read_text(sys, "/proc/self/cgroup", 64 * 1024);
  const auto cgroup = cgroup_text ? parsers::parse_cgroup(*cgroup_text) : parsers::CgroupEvidence{};

  // Kubernetes: the kubelet sets KUBERNETES_SERVICE_HOST in every pod and
  // mounts the service account (unless automountServiceAccountToken is off).
  const auto service_host = sys.env("KUBERNETES_SERVICE_HOST");
  const bool service_account = sys.exists(service_account_dir);
  facts.kubernetes = (service_host && !service_host->empty()) || service_account || mounts.kubelet || cgroup.kubernetes;
  if (service_account) {
    if (const auto ns = read_text(sys, text::cat(service_account_dir, "/namespace"), 4096)) {
      if (valid_namespace(*ns)) facts.kubernetes_namespace = *ns;
      else
        facts.warnings.push_back(environment_warning(
            WarningKind::invalid_value,
            text::cat(service_account_dir, "/namespace holds \"", text::excerpt(*ns, 64), "\", which is not a namespace name")));
    }
  }

  // A marker file is the runtime's own statement, but images exported to
  // build a VM's root filesystem keep it: when mountinfo is readable and shows
  // neither an overlay root nor runtime-managed /etc files, the marker is a
  // leftover of the image, not a container.
  const bool mounts_say_host = mountinfo && !mounts.overlay_root && !mounts.runtime_files && !mounts.runtime;
  const auto marker = [&](std::string_view path) {
    if (!sys.exists(path)) return false;
    if (!mounts_say_host) return true;
    facts.warnings.push_back(environment_warning(
        WarningKind::inconsistent,
        text::cat(path, " exists but /proc/self/mountinfo shows no container mounts (no overlay root, no "
                        "runtime-managed /etc/hostname): taken as a leftover of the image this root filesystem was built from")));
    return false;
  };
  std::optional<std::string> runtime;
  if (marker("/.dockerenv")) runtime = "docker";
  if (!runtime && marker("/run/.containerenv")) {
    // Written by podman and, since 1.23, CRI-O; podman names itself only for
    // --privileged containers.
    runtime = parsers::containerenv_engine(read_text(sys, "/run/.containerenv", 64 * 1024).value_or(""));
    if (!runtime) {
      if (cgroup.runtime == "cri-o" || facts.kubernetes) runtime = "cri-o";
      else runtime = "podman";
    }
  }
  if (!runtime) {
    // systemd copies PID 1's $container here (LXC, nspawn, podman, docker with systemd inside).
    if (const auto c = read_text(sys, "/run/systemd/container", 256)) runtime = parsers::container_name(*c);
  }
  if (!runtime) runtime = cgroup.runtime;
  if (!runtime && mounts.runtime) {
    if (*mounts.runtime == "containers-storage") runtime = facts.kubernetes ? "cri-o" : "podman";
    else runtime = mounts.runtime;
  }
  if (!runtime) {
    // Container managers set $container for PID 1; it reaches us when inherited.
    if (const auto c = sys.env("container")) runtime = parsers::container_name(*c);
  }
  if (!runtime && facts.kubernetes) runtime = "unknown";
  facts.runtime = std::move(runtime);
  return facts;
}

const Detector environment_detector{"environment", std::nullopt, {}, &detect_environment};

}  // namespace hwaccel
