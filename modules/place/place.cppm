// hwaccel.place: plans over a fleet's nodes (docs/planning.md, "Several
// nodes"): a fleet document as a cluster to plan on, what a model still
// needs ("how many more nodes of this kind"), and the placement of many
// models' replicas onto the fleet's nodes and devices.
module;
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>
export module hwaccel.place;
export import hwaccel.hardware;
export import hwaccel.registry;
export import hwaccel.plan;
export import hwaccel.fleet;

export namespace hwaccel {

/// Devices, or whole nodes, of a fleet that are taken and must not be planned on.
struct BusyDevices {
  /// Host -> device ids taken there; an empty list takes the whole node.
  std::map<std::string, std::vector<std::string>, std::less<>> by_host;

  bool node_busy(std::string_view host) const;
  bool device_busy(std::string_view host, std::string_view device) const;
  bool empty() const noexcept { return by_host.empty(); }
  friend bool operator==(const BusyDevices&, const BusyDevices&) = default;
};

/// Reads `--busy`: a list ("gpu-07,gpu-08/cuda:0,gpu-08/cuda:1": a host
/// alone is the whole node, HOST/DEVICE one device; commas, blanks or new
/// lines between them), or a placement result (`hwaccel place --json`),
/// whose placed devices are busy. An invalid_input error for a bad host name
/// or a document that is neither.
[[nodiscard]] Result<BusyDevices> parse_busy(std::string_view text);

/// A node's kind from its available accelerators: "8xH100-SXM-80GB",
/// "4xL40S+1xRTX-4090" (the spec table's --devices names, else the device
/// names), or "no accelerators".
std::string node_kind(const AcceleratorRegistry& registry);

/// The answered nodes of a fleet as a cluster (host names kept; launch
/// commands name them), busy devices and nodes left out. `hosts` chooses
/// nodes by name (empty: all). The fabric is the one given, else what the
/// nodes' registries report. Errors: a host not in the fleet or without a
/// registry, no node left.
[[nodiscard]] Result<Cluster> cluster_from_fleet(const Fleet& fleet, const BusyDevices& busy = {},
                                   std::span<const std::string> hosts = {}, std::optional<Fabric> fabric = {});

// --- capacity ----------------------------------------------------------------------

struct CapacityOptions {
  /// The kind of node to count in: a hypothetical node ("8xH100-SXM-80GB",
  /// see `hwaccel specs`, or a device of the settings' device_specs file)
  /// or a kind of the fleet (node_kind's names). Empty:
  /// the fleet's most common kind of node with accelerators.
  std::string node_kind;
  BusyDevices busy;
  std::optional<Fabric> fabric;
  std::uint32_t max_nodes = 4096;  ///< the most nodes a plan is tried on
};

/// "How many more nodes of kind K does this model need?"
struct CapacityReport {
  std::string model_name;
  std::string node_kind;
  /// Nodes of the kind a plan needs; empty when even max_nodes do not hold it.
  std::optional<std::uint32_t> nodes_needed;
  std::uint32_t nodes_of_kind = 0;  ///< nodes of the kind in the fleet, answered
  std::uint32_t nodes_free = 0;     ///< of those, the ones with no busy device
  std::uint32_t nodes_missing = 0;  ///< nodes_needed - nodes_free, at least 0
  /// The plan on nodes_needed nodes of the kind (or on max_nodes, not fitting).
  Plan plan;
  /// "Llama 3.1 405B at BF16 needs 2 nodes of 8xH100-SXM-80GB; the fleet has 1 free (1 in all): 1 missing".
  std::string summary;
  friend bool operator==(const CapacityReport&, const CapacityReport&) = default;
};

/// Finds the fewest nodes of the kind that hold `model` (a binary search
/// over plans on that many copies of one node: fitting only gets easier with
/// more nodes) and compares with the fleet's free nodes of that kind.
[[nodiscard]] Result<CapacityReport> what_is_missing(const Fleet& fleet, const ModelDescription& model,
                                       const InferenceSettings& settings, const CapacityOptions& options = {});

std::string to_json(const CapacityReport& report, bool pretty = false);

// --- placement -------------------------------------------------------------------

/// One model to place: `replicas` copies, each planned alone.
struct Workload {
  std::string name;   ///< unique in the file; the model's name when not given
  std::string model;  ///< catalogue id, model file or folder (load_model)
  std::uint32_t replicas = 1;
  /// Empty: per node kind, the best level that fits one whole node.
  std::optional<QuantizationLevel> quantization;
  std::uint64_t context = 4096;
  std::uint32_t batch = 1;
  double reserve_fraction = 0.10;
  friend bool operator==(const Workload&, const Workload&) = default;
};

/// Reads a workloads file: {"workloads": [{"name", "model", "replicas",
/// "quantization", "context", "batch", "reserve"}]} (docs/planning.md).
/// Unknown keys, a missing model, a duplicate name, replicas outside
/// 1..10 000, more than 10 000 workloads or 100 000 replicas in all are
/// invalid_input errors.
[[nodiscard]] Result<std::vector<Workload>> parse_workloads(std::string_view json);

struct ReplicaPlacement {
  std::string workload;
  std::uint32_t replica = 0;
  std::vector<std::string> nodes;    ///< one node, or several for a replica spanning nodes
  std::vector<std::string> devices;  ///< "host/cuda:0"
  QuantizationLevel quantization = QuantizationLevel::bf16;
  std::uint32_t tensor_parallel = 1;
  std::uint32_t pipeline_parallel = 1;
  std::uint64_t bytes_per_device = 0;  ///< the most any of its devices holds
  /// What its devices draw decoding its batch (Plan::power); empty when a
  /// device has no power figure.
  std::optional<double> watts;
  friend bool operator==(const ReplicaPlacement&, const ReplicaPlacement&) = default;
};

struct UnplacedReplica {
  std::string workload;
  std::uint32_t replica = 0;
  std::string reason;
  friend bool operator==(const UnplacedReplica&, const UnplacedReplica&) = default;
};

struct PlacementOptions {
  BusyDevices busy;
  std::optional<Fabric> fabric;
  /// A user device-spec file's entries (read_device_specs), for nodes whose
  /// devices the built-in table does not know; must outlive the call.
  const DeviceSpecSet* device_specs = nullptr;
  /// A user runtime-profile file's profiles (read_runtime_profiles), in place
  /// of the built-in ones for each replica's plan; must outlive the call.
  std::span<const RuntimeProfile> runtime_profiles;
  /// Above these sizes the search is first-fit decreasing, not exact.
  std::size_t exact_max_replicas = 12;
  std::size_t exact_max_nodes = 12;
  /// Kilowatts the placed replicas may draw: on the whole fleet, and on each
  /// node (a replica over several nodes counts an equal share on each).
  /// Replicas past a budget are taken back, the last placed first, and
  /// listed as unplaced with what they would have drawn.
  std::optional<double> power_budget_kw;
  std::optional<double> node_power_budget_kw;
};

// --- settings by name ------------------------------------------------------------

/// Largest instance (replicas and nodes) a placement searches exactly.
inline constexpr std::size_t max_exact_placement = 64;

/// busy's value: a file when one is there (a list, or a placement result),
/// else the list itself (parse_busy).
[[nodiscard]] Result<BusyDevices> read_busy(std::string_view file_or_list);

/// The keys of CapacityOptions:
///   node-kind  text: a hypothetical node or a kind of the fleet; default the fleet's most common
///   busy       text: HOST,HOST/cuda:0,... or a file of them (read_busy)
///   fabric     text: the fabric between nodes (parse_fabric)
///   max-nodes  whole number 1..max_cluster_nodes, default 4096
std::span<const SettingKey<CapacityOptions>> capacity_setting_keys() noexcept;
[[nodiscard]] Result<CapacityOptions> read_capacity_options(std::span<const Setting> values);

/// The keys of PlacementOptions:
///   busy, fabric  as CapacityOptions'
///   exact-max     whole number 0..max_exact_placement, default 12: exact_max_replicas and exact_max_nodes
///   power-budget, node-power-budget  number (kW): power_budget_kw, node_power_budget_kw
std::span<const SettingKey<PlacementOptions>> placement_setting_keys() noexcept;
[[nodiscard]] Result<PlacementOptions> read_placement_options(std::span<const Setting> values);

struct PlacementResult {
  std::vector<ReplicaPlacement> placed;
  std::vector<UnplacedReplica> unplaced;
  std::size_t nodes_used = 0;
  /// A lower bound on the nodes any placement of as many replicas needs.
  std::size_t lower_bound = 0;
  std::string method;  ///< "exact" or "first-fit decreasing"
  bool search_complete = false;  ///< the exact search finished: nodes_used is the fewest possible
  std::vector<std::string> notes;
  friend bool operator==(const PlacementResult&, const PlacementResult&) = default;
};

/// Assigns every workload's replicas to the fleet's free devices: a
/// replica's tensor-parallel group inside one high-bandwidth domain of one
/// node, or whole free nodes of one kind for a replica that needs several;
/// as many replicas as fit, then the fewest nodes (docs/planning.md says
/// how). Each replica's devices hold what its plan says, within their
/// usable memory. More than 100 000 replicas in all is an invalid_input error.
[[nodiscard]] Result<PlacementResult> place_workloads(const Fleet& fleet, std::span<const Workload> workloads,
                                        const PlacementOptions& options = {});

std::string to_json(const PlacementResult& result, bool pretty = false);

}  // namespace hwaccel

