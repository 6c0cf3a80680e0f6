// Published device specifications (vendor datasheets, dense figures) and the
// matcher that recognises a detected device as one of them.
module;
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
export module hwaccel.hardware:spec;
import :device;
import :quant;

export namespace hwaccel {

/// A device-to-device fabric a product ships with.
struct FabricSpec {
  /// "nvlink", "xgmi", "ici", "neuronlink" or "roce" (Gaudi's on-chip Ethernet).
  std::string_view kind;
  std::string_view name;  ///< "NVLink 4 via NVSwitch", "Infinity Fabric (7 xGMI links)"
  /// Per device, per direction, in GB/s; empty when the vendor does not publish it.
  std::optional<double> bandwidth_gbps;
  /// Devices joined at that bandwidth in the product's usual system: 8 for an
  /// HGX/OAM board, 2 for a bridged pair, a pod or slice for TPUs.
  std::uint32_t domain_size = 1;
};

/// One product as its datasheet describes it. Figures are per device as
/// software sees it (an MI250X module is two devices, one per GCD) and dense:
/// the "with sparsity" figures datasheets lead with are halved away.
/// Memory is the datasheet capacity read in binary units (HBM and GDDR come
/// in powers of two: an "80 GB" H100 has 80 GiB); runtimes report slightly
/// less. Bandwidths are in GB/s (1e9 bytes/s).
struct DeviceSpec {
  std::string_view id;       ///< stable key, e.g. "h100-sxm5-80gb" (DeviceProfile::spec_id)
  std::string_view name;     ///< the name `--devices` takes, e.g. "H100-SXM-80GB"
  std::string_view product;  ///< "NVIDIA H100 SXM5 80GB"
  std::string_view vendor;
  Backend backend = Backend::cuda;
  Family family = Family::gpu;
  std::string_view architecture;        ///< "Hopper", "CDNA3", "TPU v5p"
  std::string_view compute_capability;  ///< as detectors report it: "9.0", "gfx942", "v5p"; may be empty
  std::uint64_t memory_bytes = 0;       ///< per device; for unified memory the largest configuration
  MemoryKind memory_kind = MemoryKind::dedicated;
  double memory_bandwidth_gbps = 0;
  std::optional<double> fp32_tflops;  ///< non-tensor FP32
  std::optional<double> bf16_tflops;  ///< dense, FP32 accumulate
  std::optional<double> fp16_tflops;  ///< dense, FP32 accumulate
  std::optional<double> fp8_tflops;   ///< dense
  std::optional<double> int8_tops;    ///< dense
  std::optional<FabricSpec> fabric;   ///< empty: devices talk over PCIe only
  std::uint8_t pcie_generation = 0;   ///< host link; 0 when not PCIe-attached
  std::uint8_t pcie_width = 0;
  std::optional<double> tdp_watts;
  std::uint16_t pci_vendor_id = 0;
  std::array<std::uint16_t, 4> pci_device_ids{};  ///< 0 = unused slot
  /// Name patterns a detected device matches: alternatives separated by '|',
  /// each a set of words that must all appear in the device name (a trailing
  /// '*' matches a word prefix, a leading '!' forbids the word).
  std::string_view match;
  std::uint32_t devices_per_package = 1;  ///< MI250X: 2 (one device per GCD)
  /// Unified-memory configurations sold, in GiB (Apple); empty for fixed memory.
  std::array<std::uint16_t, 6> memory_options_gib{};
  std::string_view source;  ///< datasheet title and address
  std::string_view notes;   ///< what a figure means where it is not obvious

  /// Dense peak for an arithmetic type (TOPS for int8); empty when unpublished
  /// or unsupported.
  std::optional<double> peak_tflops(ComputeType type) const noexcept;
  /// PCIe bandwidth to the host per direction in GB/s, from generation and width.
  std::optional<double> host_link_gbps() const noexcept;
};

/// Every entry, in a stable order (vendor, then generation).
std::span<const DeviceSpec> device_specs() noexcept;

/// Every entry as a JSON array (`hwaccel specs --json`, hwaccel.specs() in
/// Python): id, name, product, vendor, backend, family, architecture,
/// memory, bandwidth, dense TFLOPS per type, fabric and source.
std::string device_specs_json();

/// The entry whose id or `--devices` name is `key`, case-insensitively and
/// with '_' read as '-'; nullptr when there is none.
const DeviceSpec* find_spec(std::string_view key) noexcept;

/// What a matcher knows about a device.
struct SpecQuery {
  Backend backend = Backend::cuda;
  /// When set, only entries of this family match (an Apple Neural Engine is
  /// not its chip's GPU).
  std::optional<Family> family;
  std::string_view name;
  std::string_view compute_capability;
  std::optional<std::uint64_t> memory_bytes;
  std::optional<std::uint16_t> pci_vendor_id;
  std::optional<std::uint16_t> pci_device_id;
};

/// The published spec a device is, or nullptr when none matches or the match
/// is ambiguous. A PCI device id narrows the candidates first; then the name
/// patterns; then memory size, which must lie within 85-103 % of the spec's
/// (a 40 GB and an 80 GB A100 share a name, and runtimes report a little
/// less than the datasheet). Unified-memory specs ignore memory size.
/// Vulkan devices may match any GPU entry.
const DeviceSpec* match_spec(const SpecQuery& query) noexcept;

/// match_spec for a detected device: its backend, name, compute capability,
/// memory, and PCI ids when properties["pci_vendor_id"]/["pci_device_id"]
/// hold them ("0x10de").
const DeviceSpec* match_spec(const DeviceProfile& device) noexcept;

/// The query match_spec(device) runs: the device's backend, family, name,
/// compute capability, memory size and recorded PCI ids. Callers that can
/// find the PCI ids elsewhere (sysfs) fill the gaps before matching.
SpecQuery spec_query_of(const DeviceProfile& device) noexcept;

/// Traits of a spec, for quantization_support().
DeviceTraits traits_of(const DeviceSpec& spec) noexcept;

}  // namespace hwaccel
