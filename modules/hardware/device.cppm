// The device model: what a detected accelerator is, independent of how it was found.
module;
#include <array>
#include <chrono>
#include <compare>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
export module hwaccel.hardware:device;
import hwaccel.base;

export namespace hwaccel {

/// A detection backend: one vendor interface. The declaration order is the
/// canonical order of devices, warnings and timings in every output.
enum class Backend : std::uint8_t {
  cpu,
  cuda,
  rocm,
  apple,
  vulkan,
  intel_npu,
  amd_xdna,
  tpu,
  gaudi,
  aws_neuron,
  intel_oneapi,
  qualcomm,
  cerebras,
  graphcore,
  groq,
  samsung_npu,
  mediatek_apu,
  /// Graphics adapters Windows enumerates through DXGI (docs/windows.md),
  /// kept where no vendor backend reports the same GPU.
  dxgi,
  /// Devices a third-party plugin reports (docs/plugins.md); each device's
  /// properties["plugin"] names the plugin.
  plugin,
};

/// Every backend with its snake_case name (JSON, the command line,
/// HWACCEL_BACKENDS), in canonical order: the one list of them.
inline constexpr std::pair<Backend, std::string_view> backend_table[] = {
    {Backend::cpu, "cpu"},
    {Backend::cuda, "cuda"},
    {Backend::rocm, "rocm"},
    {Backend::apple, "apple"},
    {Backend::vulkan, "vulkan"},
    {Backend::intel_npu, "intel_npu"},
    {Backend::amd_xdna, "amd_xdna"},
    {Backend::tpu, "tpu"},
    {Backend::gaudi, "gaudi"},
    {Backend::aws_neuron, "aws_neuron"},
    {Backend::intel_oneapi, "intel_oneapi"},
    {Backend::qualcomm, "qualcomm"},
    {Backend::cerebras, "cerebras"},
    {Backend::graphcore, "graphcore"},
    {Backend::groq, "groq"},
    {Backend::samsung_npu, "samsung_npu"},
    {Backend::mediatek_apu, "mediatek_apu"},
    {Backend::dxgi, "dxgi"},
    {Backend::plugin, "plugin"},
};

inline constexpr std::size_t backend_count = std::size(backend_table);

/// Every backend, in canonical order.
inline constexpr std::array<Backend, backend_count> all_backends = [] {
  std::array<Backend, backend_count> out{};
  for (std::size_t i = 0; i < backend_count; ++i) out[i] = backend_table[i].first;
  return out;
}();

static_assert([] {
  for (std::size_t i = 0; i < backend_count; ++i)
    if (static_cast<std::size_t>(backend_table[i].first) != i) return false;
  return static_cast<std::size_t>(Backend::plugin) + 1 == backend_count;
}(), "backend_table lists every Backend once, in the enum's order");

/// snake_case name used in JSON, on the command line and in HWACCEL_BACKENDS.
std::string_view to_string(Backend backend) noexcept;
/// Inverse of to_string(Backend).
[[nodiscard]] Result<Backend> parse_backend(std::string_view name);

/// Broad class of a device, used by queries and planning.
enum class Family : std::uint8_t { cpu, gpu, npu, tpu, asic };

std::string_view to_string(Family family) noexcept;
[[nodiscard]] Result<Family> parse_family(std::string_view name);

/// How a device's memory relates to the host's.
enum class MemoryKind : std::uint8_t {
  dedicated,  ///< on-package or on-board memory owned by the device (HBM, GDDR)
  unified,    ///< the same physical memory as the CPU's (Apple, GB10, Jetson) or
              ///< coherently shared with it (Grace Hopper)
  carve_out,  ///< a firmware-reserved slice of system RAM (APU "VRAM"); more can
              ///< be mapped from system RAM (see DeviceProfile::shared_memory_bytes)
};

std::string_view to_string(MemoryKind kind) noexcept;
[[nodiscard]] Result<MemoryKind> parse_memory_kind(std::string_view name);

/// A PCI function address, domain:bus:device.function.
struct PciAddress {
  std::uint32_t domain = 0;
  std::uint8_t bus = 0;
  std::uint8_t device = 0;
  std::uint8_t function = 0;

  /// Accepts the forms tools print: "0000:17:00.0", nvidia-smi's
  /// "00000000:17:00.0", domain-less "17:00.0", any hex case, surrounding blanks.
  static std::optional<PciAddress> parse(std::string_view text) noexcept;
  /// Canonical lower-case form with a 4-digit domain (wider when needed).
  std::string to_string() const;

  friend constexpr auto operator<=>(const PciAddress&, const PciAddress&) = default;
};

/// PCIe generation for a link speed in GT/s (2.5 -> 1 ... 64 -> 6).
std::optional<std::uint32_t> pcie_generation(double speed_gts) noexcept;

/// A PCIe link as sysfs or the vendor tool reports it.
struct PcieLink {
  std::optional<double> current_speed_gts;
  std::optional<double> max_speed_gts;
  std::optional<std::uint32_t> current_width;
  std::optional<std::uint32_t> max_width;

  std::optional<std::uint32_t> current_generation() const noexcept;
  std::optional<std::uint32_t> max_generation() const noexcept;
  /// Usable bandwidth per direction in GB/s after line encoding
  /// (8b/10b up to gen 2, 128b/130b for gen 3-5, FLIT 242/256 for gen 6).
  std::optional<double> current_bandwidth_gbps() const noexcept;
  std::optional<double> max_bandwidth_gbps() const noexcept;

  friend bool operator==(const PcieLink&, const PcieLink&) = default;
};

/// A hardware partition of a device that software sees as a device of its
/// own: an NVIDIA MIG instance, an AMD compute partition.
struct DevicePartition {
  std::string id;       ///< stable id, e.g. "cuda:0/mig:1"
  std::uint32_t index = 0;
  std::string profile;  ///< "3g.40gb", "CPX"
  std::optional<std::string> uuid;
  std::optional<std::uint32_t> gpu_instance_id;
  std::optional<std::uint32_t> compute_instance_id;
  std::optional<std::uint64_t> memory_bytes;
  std::optional<std::uint32_t> compute_units;
  bool visible = true;  ///< false when this process cannot use the partition
  /// Device index the runtime gives the partition (a CUDA MIG device, a ROCm
  /// agent of a partitioned GPU); see docs/environment.md.
  std::optional<std::uint32_t> runtime_index;

  friend bool operator==(const DevicePartition&, const DevicePartition&) = default;
};

/// One detected device. Optional fields are empty when the machine did not
/// say; nothing is filled in from guesses. Published figures for a known
/// product are referenced through `spec_id`, never copied into measured fields.
struct DeviceProfile {
  std::string id;  ///< "<backend>:<index>", unique in a registry
  Backend backend = Backend::cpu;
  Family family = Family::cpu;
  std::uint32_t index = 0;  ///< enumeration order within the backend
  std::string name;
  std::optional<std::string> vendor;
  std::optional<std::string> uuid;
  std::optional<std::string> pci_bus_id;  ///< canonical PciAddress form
  std::optional<std::int32_t> numa_node;
  std::optional<std::string> cpu_affinity;  ///< cpulist, e.g. "0-47,96-143"

  std::optional<std::uint64_t> memory_bytes;
  std::optional<std::uint64_t> memory_free_bytes;
  std::optional<std::uint64_t> memory_used_bytes;
  MemoryKind memory_kind = MemoryKind::dedicated;
  /// Additional system memory the device can map (AMD GTT, the GPU-usable
  /// share of Apple unified memory); its meaning is in properties["shared_memory"].
  std::optional<std::uint64_t> shared_memory_bytes;
  std::optional<double> memory_bandwidth_gbps;  ///< from the device's own clocks

  std::optional<std::string> driver_version;
  std::optional<std::string> firmware_version;
  std::optional<std::string> compute_capability;  ///< "9.0", "gfx942", "v5p"
  std::optional<std::string> architecture;        ///< "Hopper", "CDNA3"
  std::optional<std::uint32_t> compute_units;     ///< SMs, CUs, NeuronCores, tiles

  std::optional<PcieLink> pcie;
  std::optional<double> power_watts;
  std::optional<double> power_limit_watts;
  std::optional<double> temperature_c;
  std::optional<double> utilization_percent;

  bool integrated = false;  ///< shares the die or package with the CPU
  bool available = true;    ///< false when present but unusable (error state)
  bool visible = true;      ///< false when *_VISIBLE_DEVICES hides it from this process
  /// Index the vendor runtime gives it (CUDA ordinal, HIP device id); empty
  /// when hidden, or when the runtime sees its partitions instead (MIG, CPX).
  /// Rules in docs/environment.md.
  std::optional<std::uint32_t> runtime_index;

  std::vector<DevicePartition> partitions;
  std::optional<std::string> spec_id;  ///< key into the published spec table
  /// Backend-specific facts ("gfx_target", "xgmi_hive_id", ...), sorted by key.
  std::map<std::string, std::string, std::less<>> properties;

  friend bool operator==(const DeviceProfile&, const DeviceProfile&) = default;
};

/// A PCI function's vendor and device ids.
struct PciIds {
  std::uint16_t vendor = 0;
  std::uint16_t device = 0;
  friend bool operator==(const PciIds&, const PciIds&) = default;
};
/// A device's "pci_id" property ("10de:2330", as lspci -n and most detectors
/// write the pair); nullopt when it has none or it is malformed.
std::optional<PciIds> pci_id_property(const DeviceProfile& device) noexcept;

/// Kind of connection between two devices, from fastest to slowest.
enum class LinkKind : std::uint8_t {
  nvlink,       ///< NVLink (direct or through NVSwitch)
  xgmi,         ///< AMD Infinity Fabric / xGMI
  ici,          ///< Google TPU inter-chip interconnect
  neuronlink,   ///< AWS NeuronLink
  pcie_switch,  ///< same PCIe switch (nvidia-smi PIX/PXB)
  host_bridge,  ///< through one CPU's host bridge (PHB)
  numa_node,    ///< across host bridges within a NUMA node (NODE)
  system,       ///< across NUMA nodes / sockets (SYS)
};

std::string_view to_string(LinkKind kind) noexcept;
[[nodiscard]] Result<LinkKind> parse_link_kind(std::string_view name);

/// A connection between two devices of the registry (by id), a <= b.
struct DeviceLink {
  std::string a;
  std::string b;
  LinkKind kind = LinkKind::system;
  std::optional<std::uint32_t> lanes;  ///< NVLink/xGMI link count (NV12 -> 12)
  std::optional<std::uint32_t> hops;   ///< xGMI/PCIe hop count where reported
  std::optional<double> bandwidth_gbps;  ///< per direction, where reported
  std::string source;                    ///< "nvidia-smi topo -m", "kfd io_links"

  friend bool operator==(const DeviceLink&, const DeviceLink&) = default;
};

/// A fabric that joins several devices: an NVSwitch system, an xGMI hive,
/// a TPU ICI slice.
struct Interconnect {
  std::string kind;  ///< "nvswitch", "nvlink_bridge", "xgmi_hive", "ici", "neuronlink"
  std::string name;
  std::vector<std::string> device_ids;
  std::optional<double> bandwidth_gbps;  ///< per device, per direction
  std::optional<std::uint32_t> switch_count;
  std::string source;

  friend bool operator==(const Interconnect&, const Interconnect&) = default;
};

/// One NUMA node of the host.
struct NumaNode {
  std::uint32_t id = 0;
  std::string cpulist;
  std::optional<std::uint64_t> memory_bytes;

  friend bool operator==(const NumaNode&, const NumaNode&) = default;
};

/// The host processor and memory.
struct CpuInfo {
  std::string model_name;
  std::optional<std::string> vendor;
  std::string architecture;  ///< "x86_64", "aarch64", "ppc64le"
  std::optional<std::uint32_t> sockets;
  std::optional<std::uint32_t> physical_cores;
  std::optional<std::uint32_t> logical_cores;
  std::vector<std::string> isa_features;  ///< normalised, sorted: "amx_bf16", "avx2", "sve"...
  std::vector<NumaNode> numa_nodes;
  std::optional<std::uint64_t> memory_total_bytes;
  std::optional<std::uint64_t> memory_available_bytes;
  std::optional<std::uint64_t> cgroup_memory_limit_bytes;

  friend bool operator==(const CpuInfo&, const CpuInfo&) = default;
};

/// A cloud instance identified from DMI, without network calls.
struct CloudInstance {
  std::string provider;  ///< "aws", "gcp", "azure", "oci", "alibaba"
  std::optional<std::string> instance_type;  ///< where DMI carries it (AWS Nitro: "p5.48xlarge")
  std::optional<std::string> product_name;   ///< DMI product_name as the firmware reports it

  friend bool operator==(const CloudInstance&, const CloudInstance&) = default;
};

/// Where this process runs (docs/environment.md says which file tells what).
struct Environment {
  /// Container runtime: "docker", "podman", "containerd", "cri-o", "lxc",
  /// "systemd-nspawn", ...; "unknown" in a Kubernetes pod whose runtime left no trace.
  std::optional<std::string> container;
  bool kubernetes = false;
  std::optional<std::string> kubernetes_namespace;
  bool wsl = false;
  std::optional<std::uint32_t> wsl_version;  ///< 1 or 2 when `wsl`
  /// /dev/dxg exists: GPUs reach this system through WSL2's DirectX
  /// paravirtualization (dxgkrnl) and do not appear in PCI sysfs.
  bool gpu_paravirtualization = false;
  /// Evidence of running under a hypervisor was found (CPU flag, DMI,
  /// paravirtual clock); false means none was found.
  bool virtual_machine = false;
  std::optional<std::string> hypervisor;  ///< "kvm", "qemu", "xen", "hyper-v", "vmware", "nitro", ...
  std::optional<CloudInstance> cloud;
  /// The device-selection variables this process sees (name -> value), sorted.
  std::map<std::string, std::string, std::less<>> visible_devices_env;

  friend bool operator==(const Environment&, const Environment&) = default;
};

/// Storage medium class.
enum class StorageKind : std::uint8_t { nvme, ssd, hdd, virtio, network, unknown };

std::string_view to_string(StorageKind kind) noexcept;
[[nodiscard]] Result<StorageKind> parse_storage_kind(std::string_view name);

/// A block device or network filesystem where model files may live.
struct StorageDevice {
  std::string name;  ///< "nvme0n1", "sda", or a network mount's source "10.0.0.5:/models"
  StorageKind kind = StorageKind::unknown;
  std::optional<std::uint64_t> size_bytes;
  std::optional<std::string> model;
  std::optional<std::string> pci_bus_id;
  std::optional<std::int32_t> numa_node;
  /// Sequential read bandwidth in GB/s and where the figure comes from
  /// ("pcie_link" when derived from the device's link, "table" for a class default).
  std::optional<double> read_bandwidth_gbps;
  std::string bandwidth_source;
  /// Filesystem type of a network mount ("nfs4", "lustre", "fuse.s3fs").
  std::optional<std::string> filesystem;
  /// Where the device's filesystems are mounted, sorted; a mount on an LVM,
  /// dm-crypt or md volume is listed on each disk beneath it.
  std::vector<std::string> mount_points;

  friend bool operator==(const StorageDevice&, const StorageDevice&) = default;
};

/// One port of an RDMA-capable NIC.
struct NetworkPort {
  std::string device;  ///< "mlx5_0"
  std::uint32_t port = 1;
  /// "infiniband"; "roce_v2" (a RoCE v2 GID exists), "roce_v1" (only RoCE v1
  /// GIDs), "roce" (Ethernet link layer, GID types unreadable); "iwarp"
  /// (node type RNIC); "efa" (AWS Elastic Fabric Adapter); "unknown".
  std::string kind;
  std::optional<std::string> state;      ///< "ACTIVE", "DOWN", "INIT", "ARMED"
  std::optional<double> rate_gbps;       ///< link rate in Gb/s; only for a port whose link is up
  std::optional<std::string> link_layer; ///< "InfiniBand", "Ethernet"
  std::optional<std::string> pci_bus_id;
  std::optional<std::int32_t> numa_node;
  std::optional<std::string> netdev;
  /// Accelerators that share this NIC's PCIe switch (or, failing that, NUMA node).
  std::vector<std::string> near_devices;
  std::optional<std::string> phys_state;  ///< physical link state: "LinkUp", "Disabled", "Polling"
  std::optional<std::string> driver;      ///< kernel driver of the NIC: "mlx5_core", "efa", "irdma"
  /// Which rule chose near_devices: pcie_switch (a common PCIe bridge below
  /// the host bridge, NCCL's PIX/PXB), host_bridge (same root complex, PHB) or
  /// numa_node (same NUMA node, NODE). Empty when no accelerator is near.
  std::optional<LinkKind> affinity;

  friend bool operator==(const NetworkPort&, const NetworkPort&) = default;
};

/// Host-level facts that are not accelerators.
struct SystemInfo {
  /// The node's name: the kernel's host name, or what the caller set (`hwaccel
  /// detect --host`, a Kubernetes node name). Fleet scans key nodes by it.
  std::optional<std::string> host;
  std::optional<CpuInfo> cpu;
  std::optional<Environment> environment;
  std::vector<StorageDevice> storage;
  std::vector<NetworkPort> network;

  friend bool operator==(const SystemInfo&, const SystemInfo&) = default;
};

/// Why a backend could only report part of what it looked for.
enum class WarningKind : std::uint8_t {
  tool_missing,   ///< the hardware is present but its tool is not on PATH
  tool_failed,    ///< the tool ran and exited non-zero or by a signal
  timeout,        ///< the tool did not finish before its deadline
  parse_error,    ///< output or file content did not have the expected form
  io_error,       ///< a file could not be read
  permission_denied,
  not_captured,   ///< fixture replay: the detector asked for something the capture lacks
  truncated,      ///< output exceeded its cap and was cut
  degraded,       ///< retried with less (older driver); some fields are missing
  inconsistent,   ///< two sources disagree; the note says which one was kept
  unsupported,    ///< present but not usable in this configuration
  invalid_value,  ///< a value outside its plausible range was discarded
};

std::string_view to_string(WarningKind kind) noexcept;
[[nodiscard]] Result<WarningKind> parse_warning_kind(std::string_view name);

/// A non-fatal problem found during detection.
struct Warning {
  std::string backend;  ///< backend or probe name ("cuda", "environment")
  WarningKind kind = WarningKind::parse_error;
  std::string message;  ///< names the file or command and what was wrong

  friend bool operator==(const Warning&, const Warning&) = default;
};

/// How long one backend or probe took.
struct BackendTiming {
  std::string name;
  std::chrono::microseconds elapsed{0};

  friend bool operator==(const BackendTiming&, const BackendTiming&) = default;
};

/// Everything one detection found: the plain data a registry is built from.
struct Inventory {
  std::vector<DeviceProfile> devices;
  std::vector<DeviceLink> links;
  std::vector<Interconnect> interconnects;
  SystemInfo system;
  std::vector<Warning> warnings;
  std::vector<BackendTiming> timings;

  friend bool operator==(const Inventory&, const Inventory&) = default;
};

/// The family a backend's devices usually belong to (Apple reports a GPU and
/// an NPU; each device carries its own family).
Family default_family(Backend backend) noexcept;

/// "<backend>:<index>"
std::string device_id(Backend backend, std::uint32_t index);

}  // namespace hwaccel
