// Clusters: several nodes, each with its own registry, joined by an
// inter-node fabric (InfiniBand, RoCE, Ethernet, EFA). Plans over a cluster
// keep tensor parallelism inside a node's high-bandwidth domain and put
// pipeline stages across nodes (docs/planning.md, "Several nodes").
module;
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
export module hwaccel.plan:cluster;
import hwaccel.hardware;
import hwaccel.registry;

export namespace hwaccel {

/// How the nodes of a cluster reach each other.
struct Fabric {
  /// "infiniband", "roce", "ethernet" or "efa".
  std::string kind;
  double port_gbps = 0;             ///< line rate of one port, Gb/s
  std::uint32_t ports_per_node = 1; ///< ports a node uses for its accelerators' traffic
  double latency_us = 0;            ///< one small message between two nodes
  /// Where the figures come from: "--fabric ib-8x400g", "network probe of
  /// node0 (8 InfiniBand ports at 400 Gb/s)".
  std::string source;

  /// One port's bandwidth in GB/s, what a pipeline hop between two devices uses.
  double port_gb_per_s() const noexcept { return port_gbps / 8.0; }
  /// "InfiniBand 8 x 400 Gb/s".
  std::string describe() const;
  friend bool operator==(const Fabric&, const Fabric&) = default;
};

/// Reads `--fabric`: KIND-RATE or KIND-PORTSxRATE, the rate in Gb/s with a
/// trailing "g": "ib-400g", "ib-8x400g", "roce-200g", "ethernet-100g",
/// "efa-32x100g". KIND is ib|infiniband, roce, ethernet|eth or efa. Latency
/// comes from the kind (docs/planning.md). A rate of 0, more than 1 600 Gb/s
/// a port, or more than 64 ports is an invalid_input error.
[[nodiscard]] Result<Fabric> parse_fabric(std::string_view text);

/// The fabric a node's registry reports: its active RDMA ports
/// (system.network) of the most common kind, with their slowest rate. Empty
/// when the node has no active port with a known rate.
std::optional<Fabric> fabric_of(const AcceleratorRegistry& registry);

/// One node: a name and what it holds.
struct ClusterNode {
  std::string name;  ///< host name, or "node0".. for hypothetical nodes
  AcceleratorRegistry registry;
  friend bool operator==(const ClusterNode&, const ClusterNode&) = default;
};

/// Devices of different nodes that share one high-bandwidth domain (the
/// NVLink domain of a GB200 NVL72 rack spans 18 hosts).
struct SharedDomain {
  struct Member {
    std::uint32_t node = 0;
    std::string device;  ///< registry id on that node
    friend bool operator==(const Member&, const Member&) = default;
  };
  std::vector<Member> members;
  std::optional<double> bandwidth_gbps;  ///< per device, per direction
  friend bool operator==(const SharedDomain&, const SharedDomain&) = default;
};

/// Nodes to plan over. A cluster of one node plans exactly as its registry.
struct Cluster {
  std::vector<ClusterNode> nodes;
  /// Empty: taken from the nodes' registries (fabric_of), else unknown.
  std::optional<Fabric> fabric;
  std::vector<SharedDomain> shared_domains;
  /// The node names are host names the nodes answer to (a fleet's), so
  /// launch commands name them; otherwise they read $HEAD_ADDR.
  bool named_hosts = false;

  /// `count` copies of `node`, named "node0", "node1", ... (`--nodes N`);
  /// an invalid_input error beyond max_cluster_nodes or max_cluster_devices.
  [[nodiscard]] static Result<Cluster> replicate(const AcceleratorRegistry& node, std::uint32_t count);
  /// Accelerators over every node (CPUs not counted).
  std::size_t accelerator_count() const;
  /// The fabric planning uses: `fabric`, else the slowest any node reports.
  std::optional<Fabric> effective_fabric() const;
  friend bool operator==(const Cluster&, const Cluster&) = default;
};

/// Most nodes a cluster may have.
inline constexpr std::uint32_t max_cluster_nodes = 100'000;
/// Most devices (CPUs included) over all of a cluster's nodes: a bound on
/// the memory a plan over hypothetical or copied nodes may take.
inline constexpr std::uint64_t max_cluster_devices = 262'144;

/// A cluster of hypothetical nodes: "2x(8xH100-SXM-80GB)" (two nodes of
/// eight), "4x(8xMI300X)+2x(8xH200-SXM-141GB)", "18x(4xGB200)" (nodes of a
/// product whose fabric spans more devices than a node holds share its
/// domains: 72 GB200 per NVL72 domain). A plain device list
/// ("8xH100-SXM-80GB") is one node. Errors as hypothetical_registry's, and
/// for unbalanced parentheses, a node count of 0, or more than
/// max_cluster_nodes nodes or max_cluster_devices devices.
[[nodiscard]] Result<Cluster> hypothetical_cluster(std::string_view text);
/// hypothetical_cluster with the entries of a user device-spec file as well
/// as the table's (plan with InferenceSettings::device_specs = &extra).
[[nodiscard]] Result<Cluster> hypothetical_cluster(std::string_view text, const DeviceSpecSet& extra);

}  // namespace hwaccel
