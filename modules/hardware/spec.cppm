// Published device specifications (vendor datasheets, dense figures) and the
// matcher that recognises a detected device as one of them.
module;
#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>
export module hwaccel.hardware:spec;
import :device;
import hwaccel.base;
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

  friend bool operator==(const FabricSpec&, const FabricSpec&) = default;
};

/// One product as its datasheet describes it. Figures are per device as
/// software sees it (an MI250X module is two devices, one per GCD) and dense:
/// the "with sparsity" figures datasheets lead with are halved away.
/// Memory is the datasheet capacity read in binary units (HBM and GDDR come
/// in powers of two: an "80 GB" H100 has 80 GiB); runtimes report slightly
/// less. Bandwidths are in GB/s (1e9 bytes/s). The built-in entries are the
/// records of data/device-specs.json, in the format of a user device-spec
/// file (parse_device_specs), which names these fields by their names
/// (memory_bytes as memory_gib).
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

  friend bool operator==(const DeviceSpec&, const DeviceSpec&) = default;
};

/// Every entry of the built-in table, in a stable order (vendor, then
/// generation): data/device-specs.json, compiled into the library and read
/// on first use, once (thread-safe), so that a program that never asks for
/// a spec never parses it.
std::span<const DeviceSpec> device_specs() noexcept;

/// The JSON text of the built-in table, data/device-specs.json (installed as
/// share/hwaccel/device-specs.json, a starting point for a user file).
std::string_view builtin_device_specs_json() noexcept;

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

/// Device specs read from a user file (`--device-specs FILE`,
/// $HWACCEL_DEVICE_SPECS; format in docs/planning.md, "Device specs"), for
/// products the built-in table does not know. Every string of its entries is
/// owned by the set: the DeviceSpec views, and every pointer find_spec() or
/// match_spec() returns into it, stay valid while the set (or any copy of it:
/// copies share one storage) lives. An empty set is the built-in table alone.
/// A file may restate a built-in entry exactly (a copy of the installed
/// device-specs.json with entries added reads); such an entry is in the set but never found or
/// matched there, since the built-in one comes first.
class DeviceSpecSet {
 public:
  /// What a set owns: the strings its entries view, and the entries.
  struct Storage {
    std::string origin;                // the file, as named
    std::deque<std::string> strings;   // a deque: elements never move as it grows
    std::vector<DeviceSpec> specs;
  };

  DeviceSpecSet() = default;
  explicit DeviceSpecSet(std::shared_ptr<const Storage> storage) noexcept : storage_(std::move(storage)) {}

  std::span<const DeviceSpec> specs() const noexcept {
    return storage_ ? std::span<const DeviceSpec>(storage_->specs) : std::span<const DeviceSpec>();
  }
  bool empty() const noexcept { return specs().empty(); }
  /// The file the entries came from; empty for an empty set.
  std::string_view origin() const noexcept { return storage_ ? std::string_view(storage_->origin) : std::string_view(); }
  /// Whether `spec` is one of this set's entries (not the built-in table's).
  bool contains(const DeviceSpec* spec) const noexcept {
    const auto all = specs();
    return spec && !all.empty() && spec >= all.data() && spec < all.data() + all.size();
  }

 private:
  std::shared_ptr<const Storage> storage_;
};

/// Largest device-spec file read, and most entries in one.
inline constexpr std::uint64_t max_device_specs_bytes = 4ull << 20;
inline constexpr std::size_t max_device_spec_entries = 4096;

/// A user device-spec file's text: {"devices": [{...}, ...]}. Strict: text
/// that is not JSON of that shape (an unknown or repeated key, a missing
/// required field, a value of the wrong JSON type) is parse_error; a value
/// out of range (negative or zero; bandwidth above 100,000 GB/s, a throughput
/// above 100,000 TFLOPS, memory above 16 TiB) or an id or name the built-in
/// table (unless the entry restates that built-in entry exactly) or an
/// earlier entry already has is invalid_input; every message names `origin`,
/// the entry and the field.
[[nodiscard]] Result<DeviceSpecSet> parse_device_specs(std::string_view json, std::string_view origin);
/// parse_device_specs of a file's contents: not_found when it cannot be
/// read, invalid_input above max_device_specs_bytes.
[[nodiscard]] Result<DeviceSpecSet> read_device_specs(const std::string& path);
/// A fresh read of builtin_device_specs_json() by the same reader, less the
/// check against the built-in table: what device_specs() does on first use,
/// and what that costs (benchmarks/data_bench.cpp).
[[nodiscard]] Result<DeviceSpecSet> parse_builtin_device_specs();

/// find_spec() over the built-in table and then `extra`'s entries.
const DeviceSpec* find_spec(std::string_view key, const DeviceSpecSet& extra) noexcept;
/// match_spec() over the built-in table first; `extra`'s entries, by the
/// same rules, only when no built-in entry matches (a user file adds
/// devices; it never overrides the table's match).
const DeviceSpec* match_spec(const SpecQuery& query, const DeviceSpecSet& extra) noexcept;
const DeviceSpec* match_spec(const DeviceProfile& device, const DeviceSpecSet& extra) noexcept;
/// device_specs_json() with `extra`'s entries after the table's, each with
/// "user_file": the file it came from (an entry that restates a built-in one
/// is not listed again).
std::string device_specs_json(const DeviceSpecSet& extra);

/// Figures estimated for a device no published spec matches and that
/// reports no bandwidth of its own, from the spec-table rows of its
/// architecture (its peers): each figure is the peers' median figure per GiB
/// of memory times the device's memory, clamped to the peers' range. Not a
/// datasheet value: planners label it "derived".
struct DerivedSpec {
  std::string basis;         ///< which peers: "compute capability 8.9 (Ada Lovelace)", "architecture RDNA3"
  std::size_t peers = 0;     ///< spec rows the figures come from
  double memory_bandwidth_gbps = 0;
  double bandwidth_low_gbps = 0;   ///< the peers' range the estimate was clamped to
  double bandwidth_high_gbps = 0;
  std::optional<double> fp32_tflops;
  std::optional<double> bf16_tflops;
  std::optional<double> fp16_tflops;
  std::optional<double> fp8_tflops;
  std::optional<double> int8_tops;

  std::optional<double> peak_tflops(ComputeType type) const noexcept;
  /// One line saying how the figures were made, for a plan's assumptions.
  std::string method() const;
};

/// DerivedSpec for `device` from `table`'s rows (default: the built-in
/// table): peers are rows of the device's backend and family with dedicated
/// memory and its exact compute capability ("8.9", "gfx1100"), else its
/// architecture name ("Ada Lovelace", "RDNA3", "Xe-HPG"). Empty for a CPU,
/// unified or carve-out memory, an unknown memory size, or no peer.
std::optional<DerivedSpec> derive_spec(const DeviceProfile& device, std::span<const DeviceSpec> table);
std::optional<DerivedSpec> derive_spec(const DeviceProfile& device);

}  // namespace hwaccel

namespace hwaccel {

/// Which file a device-spec text is: a user's, checked against the built-in
/// table, or the built-in table's own (spec.cpp), which is not.
enum class SpecFileKind : bool { user, builtin };
[[nodiscard]] Result<DeviceSpecSet> parse_device_spec_text(std::string_view json, std::string_view origin, SpecFileKind kind);

}  // namespace hwaccel
