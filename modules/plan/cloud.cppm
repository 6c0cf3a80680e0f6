// Cloud instances with accelerators (a catalogue shipped as data, replaceable
// by a user file) and the recommendation of the cheapest ones a model's plan
// fits on, device by device.
module;
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
export module hwaccel.plan:cloud;
import hwaccel.hardware;
import hwaccel.registry;
import :model;
import :memory;
import :planner;

export namespace hwaccel {

enum class CloudProvider : std::uint8_t { aws, gcp, azure };

std::string_view to_string(CloudProvider provider) noexcept;
/// "aws", "gcp", "azure", case-insensitively ("google" and "microsoft" too).
[[nodiscard]] Result<CloudProvider> parse_cloud_provider(std::string_view name);

/// How the accelerators of one instance talk to each other.
enum class InstanceInterconnect : std::uint8_t {
  pcie,        ///< through the host's PCIe: no tensor parallelism across devices
  nvlink,      ///< NVLink point to point (bridged pairs, V100 cube-mesh)
  nvswitch,    ///< NVLink through NVSwitch: every GPU to every GPU
  xgmi,        ///< AMD Infinity Fabric
  ici,         ///< Google TPU inter-chip interconnect
  neuronlink,  ///< AWS Trainium/Inferentia NeuronLink
};

std::string_view to_string(InstanceInterconnect interconnect) noexcept;
/// A name to_string gives, case-insensitively.
[[nodiscard]] Result<InstanceInterconnect> parse_instance_interconnect(std::string_view name);

/// One instance type as a provider sells it.
struct CloudInstanceType {
  CloudProvider provider = CloudProvider::aws;
  std::string name;         ///< "p5.48xlarge", "a3-highgpu-8g", "Standard_ND96isr_MI300X_v5"
  std::string region;       ///< the region the price is for
  std::string accelerator;  ///< published-spec id (`hwaccel specs`): "h100-sxm5-80gb"
  std::uint32_t count = 0;  ///< accelerators (chips for TPUs and Neuron devices)
  std::uint64_t memory_per_device_bytes = 0;  ///< as listed, checked against the spec
  InstanceInterconnect interconnect = InstanceInterconnect::pcie;
  /// Devices joined by `interconnect` in each group (NVLink-bridged pairs:
  /// 2); the whole instance unless the catalogue says otherwise.
  std::uint32_t interconnect_group = 0;
  std::uint32_t vcpus = 0;
  std::uint64_t host_memory_bytes = 0;
  double price_usd_per_hour = 0;  ///< indicative on-demand price
  std::string price_date;         ///< "2025-03": when the price was read
  std::string price_source;       ///< the provider's pricing page
  std::string notes;

  friend bool operator==(const CloudInstanceType&, const CloudInstanceType&) = default;
};

/// A catalogue: the built-in one (data/instances.json, compiled in) or a
/// user file in the same format (docs/planning.md).
struct InstanceCatalogue {
  std::string origin;  ///< "built-in" or the file read
  std::string prices;  ///< what the prices are (the file's "prices" text)
  std::vector<CloudInstanceType> instances;

  friend bool operator==(const InstanceCatalogue&, const InstanceCatalogue&) = default;
};

/// Upper limits a catalogue is checked against.
inline constexpr std::uint64_t max_instance_catalogue_bytes = 16ull << 20;
inline constexpr std::uint32_t max_instance_accelerators = 4096;

/// Parses a catalogue. Every entry is checked: a known provider, a spec id
/// from the published-spec table, a count of 1..4096, memory per device
/// within 3 % of the spec's, an interconnect the product has (no NVSwitch on
/// an L4), a positive finite price with its date and source, no duplicate
/// provider/name/region. Any failure is a parse_error (malformed JSON, an
/// unknown, repeated or missing key, a wrong type) or invalid_input (a bad
/// value) naming `origin` and the entry:
/// `instances.json: instances[3] "p4d.24xlarge": "count" must be a whole
/// number in 1..4096, got 0`.
[[nodiscard]] Result<InstanceCatalogue> parse_instance_catalogue(std::string_view json, std::string_view origin);
/// Reads and parses a catalogue file (at most 16 MiB); not_found or io_error
/// when it cannot be read.
[[nodiscard]] Result<InstanceCatalogue> read_instance_catalogue(const std::filesystem::path& path);
/// The same, where an accelerator may also be an id of `extra`, a user
/// device-spec file (recommend then needs InferenceSettings::device_specs = &extra).
[[nodiscard]] Result<InstanceCatalogue> parse_instance_catalogue(std::string_view json, std::string_view origin,
                                                   const DeviceSpecSet& extra);
[[nodiscard]] Result<InstanceCatalogue> read_instance_catalogue(const std::filesystem::path& path, const DeviceSpecSet& extra);
/// The catalogue compiled into the library from data/instances.json.
[[nodiscard]] Result<InstanceCatalogue> builtin_instance_catalogue();
/// The JSON text of the built-in catalogue (installed as
/// share/hwaccel/instances.json, a starting point for a user file).
std::string_view builtin_instance_catalogue_json() noexcept;

/// What to recommend for.
struct RecommendOptions {
  /// Planner settings; `quantization` is required (prices compare only at
  /// one level). CPU offload is never used: an instance is judged on its
  /// accelerators.
  InferenceSettings settings;
  std::vector<CloudProvider> providers;  ///< empty: every provider
  /// Instances a model may span (a multi-node plan over copies of one
  /// instance type); 1: each instance alone.
  std::uint32_t max_instances = 1;
  /// A catalogue file replacing the built-in one; empty: the built-in one.
  std::string catalogue_file;
  /// The most power, in kilowatts, the accelerators of one recommendation
  /// (every instance it spans) may draw: the plan's watts plus the idle draw
  /// of devices it leaves unused. Empty: no budget.
  std::optional<double> power_budget_kw;

  /// The catalogue to recommend from: `catalogue_file` read (its
  /// accelerators may be ids of `extra`, a user device-spec file; errors
  /// prefixed "catalogue: "), else the built-in one.
  [[nodiscard]] Result<InstanceCatalogue> load_catalogue(const DeviceSpecSet& extra = DeviceSpecSet()) const;
};

/// Why an instance was not recommended.
enum class RejectionKind : std::uint8_t {
  dtype,             ///< its accelerator cannot run the quantization
  interconnect,      ///< it would fit with tensor parallelism its interconnect cannot carry
  device_memory,     ///< some device cannot hold its share, whatever the split
  planner,           ///< the planner could not plan on it (the message says why)
  power_budget,      ///< it fits, but draws more than RecommendOptions::power_budget_kw (or its draw is unknown)
};

std::string_view to_string(RejectionKind kind) noexcept;

/// The verdict on one instance.
struct InstanceVerdict {
  CloudInstanceType instance;
  std::uint32_t instances = 1;  ///< copies of the instance the plan spans (RecommendOptions::max_instances)
  bool recommended = false;
  std::optional<RejectionKind> rejection;
  std::string reason;        ///< one sentence for rejections; empty otherwise
  /// Raw accelerator memory of the instance, and whether it would hold the
  /// model's weights, KV cache and activations if memory could be pooled
  /// (what a total-memory comparison would conclude).
  std::uint64_t summed_memory_bytes = 0;
  bool summed_memory_fits = false;
  /// The plan on the instance's devices (absent when the planner refused).
  std::optional<Plan> plan;
  /// Price per million decoded tokens at the plan's total decode rate, for
  /// all `instances` together.
  std::optional<double> usd_per_million_tokens;
  /// What its accelerators draw in all, in watts: the plan's, plus the idle
  /// draw of its unused devices; empty when a device has no power figure.
  std::optional<double> accelerator_watts;

  friend bool operator==(const InstanceVerdict&, const InstanceVerdict&) = default;
};

/// Instances judged for one model, cheapest first.
struct InstanceRecommendation {
  std::string model_name;
  QuantizationLevel quantization = QuantizationLevel::bf16;
  std::uint64_t context = 0;
  std::uint32_t batch = 0;
  std::string catalogue_origin;
  std::string prices;
  std::vector<InstanceVerdict> recommended;  ///< ascending price, then name
  std::vector<InstanceVerdict> rejected;     ///< ascending price, then name

  friend bool operator==(const InstanceRecommendation&, const InstanceRecommendation&) = default;
};

/// Runs the planner on each instance's devices (from the spec table, joined
/// as the catalogue's interconnect says) and keeps the instances where the
/// plan fits device by device with the accelerator running the level
/// natively or weight-only. An instance whose devices are joined by PCIe is
/// planned again as if they shared a fabric: when that would fit, it is
/// rejected for its interconnect rather than for memory. An invalid_input
/// error when no quantization is given or the settings are out of range.
[[nodiscard]] Result<InstanceRecommendation> recommend_instances(const ModelDescription& model, const RecommendOptions& options,
                                                   const InstanceCatalogue& catalogue);

/// The accelerators of an instance as a registry of hypothetical devices
/// (property "instance" names it); what recommend_instances plans on.
[[nodiscard]] Result<AcceleratorRegistry> instance_registry(const CloudInstanceType& instance);

/// Canonical JSON of a recommendation (docs/planning.md): every rejected
/// instance with its reason, each verdict with its plan's strategy, memory
/// per device and throughput.
std::string to_json(const InstanceRecommendation& recommendation, bool pretty = false);

}  // namespace hwaccel
