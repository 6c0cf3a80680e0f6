// hwaccel.fleet: many nodes' registries as one inventory (docs/fleet.md).
// Collects registries from files, JSON lines or a command run per host; keeps
// scans in SQLite and tells what changed between them or against a baseline;
// and describes a node to the schedulers in their own formats: Node Feature
// Discovery labels for Kubernetes, gres.conf and slurm.conf lines for Slurm.
module;
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
export module hwaccel.fleet;
export import hwaccel.hardware;
export import hwaccel.detect;
export import hwaccel.registry;

export namespace hwaccel {

/// Version of the fleet document (docs/fleet.schema.json).
inline constexpr std::uint32_t fleet_schema_version = 1;

/// Why a node has no registry in a scan.
enum class NodeErrorKind : std::uint8_t {
  timeout,       ///< no answer before the per-node deadline; its process group was killed
  failed,        ///< the command exited non-zero, by a signal, or could not start
  too_large,     ///< it printed more than the per-node output cap
  parse_error,   ///< what it printed (or the file) is not a registry
  io_error,      ///< the registry file could not be read
  no_answer,     ///< the node was expected (a baseline, a host list) and is absent
};

std::string_view to_string(NodeErrorKind kind) noexcept;
[[nodiscard]] Result<NodeErrorKind> parse_node_error_kind(std::string_view name);

struct NodeError {
  NodeErrorKind kind = NodeErrorKind::failed;
  std::string message;  ///< names the host or file and says what happened
  friend bool operator==(const NodeError&, const NodeError&) = default;
};

/// One node of a scan: its registry, or why there is none.
struct FleetNode {
  std::string host;
  std::chrono::system_clock::time_point scanned_at{};
  std::string source;  ///< "exec", "file:<path>", "stdin:<line>"
  std::chrono::milliseconds elapsed{0};  ///< how long the node took to answer (exec)
  std::optional<AcceleratorRegistry> registry;
  std::optional<NodeError> error;
  /// The node's Node Feature Discovery labels where the scan read them (a
  /// Kubernetes node list: feature.node.kubernetes.io/*, hwaccel's own from
  /// `hwaccel export nfd`), sorted by name; also for a node that did not answer.
  std::vector<std::pair<std::string, std::string>> labels;

  bool answered() const noexcept { return registry.has_value(); }
  friend bool operator==(const FleetNode&, const FleetNode&) = default;
};

/// Devices counted under one key (a model name, a spec id, a backend).
struct FleetCount {
  std::string key;
  std::uint64_t devices = 0;
  std::uint64_t nodes = 0;         ///< nodes with at least one such device
  std::uint64_t memory_bytes = 0;  ///< memory_bytes summed (devices of unknown size add 0)
  friend bool operator==(const FleetCount&, const FleetCount&) = default;
};

/// What the fleet holds, over the nodes that answered. The CPU devices are
/// left out of the device counts (every node has one).
struct FleetTotals {
  std::uint64_t nodes = 0;
  std::uint64_t nodes_answered = 0;
  std::uint64_t accelerators = 0;
  std::uint64_t accelerator_memory_bytes = 0;
  std::vector<FleetCount> by_model;    ///< by device name, sorted by key
  std::vector<FleetCount> by_spec;     ///< by spec_id; devices without one are not counted here
  std::vector<FleetCount> by_backend;  ///< by backend name
  friend bool operator==(const FleetTotals&, const FleetTotals&) = default;
};

/// A scan: the nodes (sorted by host, each host once) and what went wrong
/// that belongs to no node (a line naming no host, a host given twice).
struct Fleet {
  std::chrono::system_clock::time_point scanned_at{};
  std::vector<FleetNode> nodes;
  std::vector<std::string> warnings;

  const FleetNode* find(std::string_view host) const noexcept;
  friend bool operator==(const Fleet&, const Fleet&) = default;
};

FleetTotals fleet_totals(const Fleet& fleet);

/// A scan time as fleet documents write it: "2026-11-26T13:50:19Z" (UTC,
/// whole seconds).
std::string format_utc_time(std::chrono::system_clock::time_point at);
/// Reads that form only; nullopt for anything else or a year outside 1970..2200.
std::optional<std::chrono::system_clock::time_point> parse_utc_time(std::string_view text) noexcept;

/// The fleet document (docs/fleet.md): canonical, with its totals.
std::string to_json(const Fleet& fleet, bool pretty = false);
/// Reads a fleet document; a single registry document (what `hwaccel
/// detect` prints) is read as a fleet of one node, named by its system.host.
[[nodiscard]] Result<Fleet> fleet_from_json(std::string_view json);

/// Prometheus service discovery from a fleet: one target group per node that
/// answered, `HOST:PORT` of its exporter (`hwaccel serve`), labelled host,
/// backends (comma list), accelerators (their count), accelerator_models and
/// spec_ids (comma lists, sorted). The JSON is what file_sd_configs read from
/// a file and http_sd_configs from a URL (`hwaccel fleet targets`, `hwaccel
/// serve --fleet`'s GET /sd). Nodes that did not answer are left out: their
/// exporters may be there, but nothing is known to label them with.
std::string prometheus_targets(const Fleet& fleet, std::uint16_t port = 9464, bool pretty = false);

/// Why `name` cannot be a host name in a scan (empty, too long, a leading
/// '-' that a command would read as an option, a character outside
/// [A-Za-z0-9._-:@]), or nullopt when it can. The host is handed to a
/// command as one argument, never through a shell, but an ssh target that
/// starts with '-' is still an option.
std::optional<std::string> host_name_problem(std::string_view name);

/// Host names from a list: commas, blanks or new lines between them, '#'
/// comments. A bad name or a name given twice is an invalid_input error.
[[nodiscard]] Result<std::vector<std::string>> parse_host_list(std::string_view text);

// --- collecting registries ---------------------------------------------------------

/// Limits of a scan.
struct ScanOptions {
  std::chrono::milliseconds node_deadline{60'000};  ///< per node, for the command template
  std::size_t concurrency = 32;                     ///< commands running at once
  std::size_t max_output_bytes = std::size_t{16} << 20;  ///< per node; a registry is ~1 KB per device
  /// The scan's time (whole seconds); the clock's when empty (tests pin it).
  std::optional<std::chrono::system_clock::time_point> now;
};

/// The longest per-node deadline of a scan (an hour).
inline constexpr std::chrono::milliseconds max_node_deadline{3'600'000};
/// Most commands a scan runs at once.
inline constexpr std::size_t max_scan_concurrency = 4096;
/// Largest per-node output cap of a scan, in MiB.
inline constexpr std::size_t max_node_output_mib = 4096;

/// The keys of ScanOptions:
///   deadline-ms     whole number 1..3600000, default 60000: each node's deadline
///   concurrency     whole number 1..4096, default 32: commands running at once
///   max-output-mib  whole number 1..4096, default 16: each node's output cap
std::span<const SettingKey<ScanOptions>> scan_setting_keys() noexcept;

/// Reads scan options (read_settings over scan_setting_keys()).
[[nodiscard]] Result<ScanOptions> read_scan_options(std::span<const Setting> values);

/// Registry files, or folders of them (their *.json files). A node is named
/// by its registry's system.host, else by the file's name without .json.
/// A file that cannot be read or parsed is a node error, never a failure.
Fleet scan_files(std::span<const std::string> paths, const ScanOptions& options = {});

/// JSON lines, one registry per line (`srun hwaccel detect --no-timings`, a
/// DaemonSet's logs). Each registry names its node in system.host; a line
/// without one, or one that is not a registry, is a warning of the scan
/// (no node can be blamed). Blank lines are skipped; a host given twice
/// keeps its last registry, with a warning.
Fleet scan_lines(std::string_view text, const ScanOptions& options = {});

/// A command run once per host: words split as a shell would (single and
/// double quotes, backslash), but run without one; "{host}" is replaced in
/// every word. It must name {host} at least once, and not in its first word,
/// the program: a name looked up on PATH, or a path to it (absolute, or
/// relative to the working folder).
struct CommandTemplate {
  std::vector<std::string> words;
  [[nodiscard]] static Result<CommandTemplate> parse(std::string_view text);
  std::vector<std::string> argv_for(std::string_view host) const;
};

/// Runs the template for every host through `system` (the System seam:
/// fixtures replay it), `options.concurrency` at a time, each with the
/// per-node deadline and output cap. A host that times out, fails, prints
/// too much or prints no registry is a node error in the result.
Fleet scan_hosts(const System& system, std::span<const std::string> hosts, const CommandTemplate& command,
                 const ScanOptions& options = {});

/// A node as `kubectl get nodes -o json` lists it.
struct KubernetesNode {
  std::string name;
  std::optional<std::string> internal_ip;  ///< status.addresses of type InternalIP
  bool ready = false;                      ///< the Ready condition is True
  /// Its Node Feature Discovery labels (feature.node.kubernetes.io/*, and
  /// hwaccel's own from `hwaccel export nfd`), sorted by name.
  std::vector<std::pair<std::string, std::string>> feature_labels;
  friend bool operator==(const KubernetesNode&, const KubernetesNode&) = default;
};
/// A pod as `kubectl get pods -o json` lists it.
struct KubernetesPod {
  std::string name;
  std::string namespace_name;
  std::string node;   ///< spec.nodeName; empty while unscheduled
  std::string phase;  ///< status.phase: "Running", "Pending", ...
  friend bool operator==(const KubernetesPod&, const KubernetesPod&) = default;
};
/// Reads a NodeList (or a List of nodes). parse_error for anything else; at
/// most 100 000 items.
[[nodiscard]] Result<std::vector<KubernetesNode>> parse_kubectl_nodes(std::string_view json);
/// Reads a PodList (or a List of pods). parse_error for anything else.
[[nodiscard]] Result<std::vector<KubernetesPod>> parse_kubectl_pods(std::string_view json);

/// Where a Kubernetes scan looks.
struct KubernetesScan {
  std::string node_selector;                      ///< `kubectl get nodes -l`; empty: every node
  std::string namespace_name = "hwaccel";         ///< the exporter DaemonSet's namespace
  std::string pod_selector = "app.kubernetes.io/name=hwaccel-exporter";  ///< its pods' labels
  std::string kubectl = "kubectl";                ///< the program (a name on PATH, or a path)
  /// When set, each pod's `hwaccel serve` is asked GET /registry on this
  /// port through the API server's pod proxy (`kubectl get --raw
  /// /api/v1/namespaces/NS/pods/POD:PORT/proxy/registry`; RBAC: get on
  /// pods/proxy) instead of `kubectl exec` (create on pods/exec).
  std::optional<std::uint16_t> registry_port;
};

/// Lists the nodes (`kubectl get nodes -o json`) and the DaemonSet's pods
/// (`kubectl get pods -n NAMESPACE -l SELECTOR -o json`) through `system`,
/// then asks each node's running pod `kubectl exec -n NAMESPACE POD --
/// hwaccel detect --no-timings` (or its /registry, with registry_port; a pod
/// whose name or namespace is not a Kubernetes name is a node error, never
/// put in a path), options.concurrency at a time with the
/// per-node deadline and cap. A node without a running pod is a node error
/// (no_answer), never left out; a node that is not Ready says so in its
/// error when it fails. An error when kubectl cannot list the nodes or pods.
[[nodiscard]] Result<Fleet> scan_kubernetes(const System& system, const KubernetesScan& where, const ScanOptions& options = {});

/// What an exporter answered to GET /registry: the body, or why there is none.
struct FetchedRegistry {
  std::string body;
  std::optional<NodeError> error;
  bool nothing_there = false;  ///< the connection was refused or timed out: no exporter at the address
  std::chrono::milliseconds elapsed{0};
};
/// Asks one "HOST:PORT" for its registry, within the deadline and output cap
/// of `options` (the CLI's is HTTP(S) to `hwaccel serve`, with basic auth).
using RegistryFetcher = std::function<FetchedRegistry(const std::string& address, const ScanOptions& options)>;

/// Asks every address ("HOST:PORT") through `fetch`, options.concurrency at a
/// time; each node is named by the address's host. An answer that is not a
/// registry, or is over the cap, is a node error. With `skip_silent`
/// (a subnet sweep), addresses where nothing listens are left out and
/// counted in one warning instead of becoming node errors.
Fleet scan_exporters(std::span<const std::string> addresses, const RegistryFetcher& fetch, const ScanOptions& options = {},
                     bool skip_silent = false);

/// An exporter to ask and the node name its answer goes under.
struct ExporterTarget {
  std::string address;  ///< "HOST:PORT", "[V6]:PORT"
  std::string node;     ///< the node's name in the fleet
  friend bool operator==(const ExporterTarget&, const ExporterTarget&) = default;
};
/// As above, each answer under the target's node name.
Fleet scan_exporters(std::span<const ExporterTarget> targets, const RegistryFetcher& fetch, const ScanOptions& options = {},
                     bool skip_silent = false);

/// The largest subnet a sweep takes: a /16, 65 534 addresses.
inline constexpr unsigned min_subnet_prefix = 16;
/// "HOST:PORT" for every host address of an IPv4 subnet in CIDR form
/// ("127.0.0.0/28": 127.0.0.1 to 127.0.0.14; a /31 or /32 keeps every
/// address). invalid_input for a malformed CIDR, bits set beyond the prefix,
/// a port of 0, or a subnet larger than a /16.
[[nodiscard]] Result<std::vector<std::string>> subnet_addresses(std::string_view cidr, std::uint16_t port);

// --- DNS-SD (mDNS) ---------------------------------------------------------------

/// The service type `hwaccel serve --advertise` publishes for /registry
/// (TXT path=/registry), beside the community's _prometheus-http._tcp
/// (TXT path=/metrics) for Prometheus.
inline constexpr std::string_view mdns_registry_service = "_hwaccel._tcp";
inline constexpr std::string_view mdns_metrics_service = "_prometheus-http._tcp";
/// Longest a browse may wait for the daemon's answers.
inline constexpr std::chrono::milliseconds max_mdns_wait{600'000};

/// One resolved DNS-SD service, as hwaccel-mdns prints it: one per service,
/// interface and address family.
struct MdnsService {
  std::string name;       ///< the instance name ("hwaccel on node-7")
  std::string type;       ///< "_hwaccel._tcp"
  std::string domain;     ///< "local"
  std::string interface;  ///< "eth0"
  bool ipv6 = false;
  std::string host;       ///< "node-7.local"
  std::string address;    ///< "192.0.2.7", "fe80::1"
  std::uint16_t port = 0;
  std::vector<std::pair<std::string, std::string>> txt;  ///< in the order announced
  friend bool operator==(const MdnsService&, const MdnsService&) = default;
};

/// Reads hwaccel-mdns's browse output (JSON lines). parse_error naming the
/// line for anything that is not a service (a missing field, a port of 0 or
/// beyond 65535, a text field over 1 KiB); at most 4096 services.
[[nodiscard]] Result<std::vector<MdnsService>> parse_mdns_services(std::string_view json_lines);

/// What a browse asks for.
struct MdnsBrowse {
  std::string helper = "hwaccel-mdns";  ///< the program: a name on PATH, or a path
  std::string service_type = std::string(mdns_registry_service);
  std::chrono::milliseconds wait{3000};  ///< how long the daemon may take to answer
};
/// What a browse found, and what the helper warned of (a resolution that
/// failed, the wait ending before the daemon's "all for now").
struct MdnsFound {
  std::vector<MdnsService> services;
  std::vector<std::string> warnings;
};
/// Browses through `system` (the helper run with the wait as its timeout,
/// killed a second after it). io_error with the helper's own words when the
/// Avahi daemon cannot be reached; tool_not_found without the helper;
/// invalid_input for a wait of 0 or over max_mdns_wait.
[[nodiscard]] Result<MdnsFound> browse_mdns(const System& system, const MdnsBrowse& browse);

/// The exporters a browse found: one target per service instance (its IPv4
/// address when it has one, else its IPv6 address, bracketed, with the
/// interface for a link-local one), named by its host without ".local", or by
/// "HOST:PORT" where one host announces several. Services whose TXT path is
/// not /registry are left out.
std::vector<ExporterTarget> mdns_exporter_targets(std::span<const MdnsService> services);

/// The helper's path: $HWACCEL_MDNS_HELPER, else the installed one when it is
/// there, else hwaccel-mdns beside the running program, else the bare name
/// (looked up on PATH).
std::string mdns_helper(const System& system);

/// A running `hwaccel-mdns publish`: the services stay published while this
/// lives (its standard input is the helper's life-line, so they go with the
/// process however it ends). Not on Windows.
class MdnsAdvertisement {
 public:
  struct Options {
    std::string helper = "hwaccel-mdns";
    std::string name;        ///< the instance name; Avahi's alternative ("NAME #2") when taken
    std::uint16_t port = 0;
    /// Called from the helper's reader thread with each line it prints: the
    /// names established, and its warnings.
    std::function<void(std::string_view)> on_message;
  };
  /// Starts the helper publishing mdns_registry_service and mdns_metrics_service.
  [[nodiscard]] static Result<MdnsAdvertisement> start(Options options);
  MdnsAdvertisement(MdnsAdvertisement&&) noexcept;
  MdnsAdvertisement& operator=(MdnsAdvertisement&&) noexcept;
  /// Withdraws the services: closes the life-line, waits up to 2 s, then kills.
  ~MdnsAdvertisement();

  struct Child;

 private:
  explicit MdnsAdvertisement(std::unique_ptr<Child> child);
  std::unique_ptr<Child> child_;
};

// --- what changed --------------------------------------------------------------

struct DeviceChange {
  std::string host;
  ChangeKind kind = ChangeKind::changed;
  std::string identity;  ///< device_identity()
  std::string id;        ///< the registry id, in the scan it is seen in
  std::string name;
  std::vector<FieldChange> fields;  ///< for `changed`
  friend bool operator==(const DeviceChange&, const DeviceChange&) = default;
};

enum class NodeChangeKind : std::uint8_t { added, gone, stopped_answering, answering_again };
std::string_view to_string(NodeChangeKind kind) noexcept;

struct NodeChange {
  std::string host;
  NodeChangeKind kind = NodeChangeKind::added;
  std::string detail;  ///< the error of a node that stopped answering
  friend bool operator==(const NodeChange&, const NodeChange&) = default;
};

/// What changed from one scan to another, sorted by host.
struct FleetDiff {
  std::vector<NodeChange> nodes;
  std::vector<DeviceChange> devices;
  bool empty() const noexcept { return nodes.empty() && devices.empty(); }
  friend bool operator==(const FleetDiff&, const FleetDiff&) = default;
};

/// Devices are matched by device_identity within a node; CPUs compare like
/// any device (a CPU swap is a change). Live values (free memory, power,
/// temperature, utilization) are not changes.
FleetDiff fleet_diff(const Fleet& before, const Fleet& after);
std::string to_json(const FleetDiff& diff, bool pretty = false);
/// One line per change, for people.
std::string to_text(const FleetDiff& diff);

/// A node that does not match the baseline.
struct CheckFinding {
  std::string host;
  std::string message;  ///< "node-17: expected 8 NVIDIA H100 80GB HBM3, found 7; cuda:3 (0000:5d:00.0) missing"
  friend bool operator==(const CheckFinding&, const CheckFinding&) = default;
};

struct CheckOptions {
  /// Also driver and firmware versions (off by default: a fleet-wide
  /// upgrade would fail every node until the baseline is taken again).
  bool versions = false;
};

/// Compares every baseline node's accelerators with the current scan:
/// devices missing or extra (by identity, counted by model), unavailable,
/// or with a different memory size; a node that is gone or did not answer.
/// Nodes only in the current scan are not findings (a new node has no
/// baseline yet), nor are baseline nodes that did not answer then. Empty
/// when the fleet matches.
std::vector<CheckFinding> fleet_check(const Fleet& baseline, const Fleet& current, const CheckOptions& options = {});

// --- history in SQLite ----------------------------------------------------------

/// Version of the database's tables (PRAGMA user_version): a database of a
/// newer hwaccel is refused, an older one is migrated in one transaction.
inline constexpr int fleet_store_version = 1;

struct ScanRecord {
  std::int64_t id = 0;
  std::chrono::system_clock::time_point scanned_at{};
  std::uint64_t nodes = 0;
  std::uint64_t nodes_answered = 0;
  std::uint64_t accelerators = 0;
  friend bool operator==(const ScanRecord&, const ScanRecord&) = default;
};

/// Scans kept in a SQLite database. Each scan is written in one transaction:
/// an interrupted scan leaves the database as it was. Writers wait for each
/// other (up to `busy_timeout`), so two scans writing at once both land. A
/// file that is not a database, another program's database, a newer schema,
/// or a database that stays locked is an error that says so. One store is
/// one connection; threads sharing it take turns.
class FleetStore {
 public:
  enum class Mode : std::uint8_t { read_only, read_write };

  [[nodiscard]] static Result<FleetStore> open(const std::string& path, Mode mode = Mode::read_write,
                                 std::chrono::milliseconds busy_timeout = std::chrono::milliseconds{10'000});
  FleetStore(FleetStore&&) noexcept;
  FleetStore& operator=(FleetStore&&) noexcept;
  ~FleetStore();

  /// Appends a scan; returns its id.
  [[nodiscard]] Result<std::int64_t> append(const Fleet& fleet);
  /// The scans, oldest first.
  [[nodiscard]] Result<std::vector<ScanRecord>> scans() const;
  /// The newest scan's id, nullopt when there is none.
  [[nodiscard]] Result<std::optional<std::int64_t>> latest() const;
  /// The scan before `id`, nullopt when `id` is the first.
  [[nodiscard]] Result<std::optional<std::int64_t>> previous(std::int64_t id) const;
  [[nodiscard]] Result<Fleet> load(std::int64_t id) const;
  /// Deletes all but the newest `keep` scans; returns how many went.
  [[nodiscard]] Result<std::uint64_t> prune(std::size_t keep);
  /// PRAGMA user_version of the open database.
  int schema_version() const noexcept;

 private:
  struct State;
  explicit FleetStore(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// --- Kubernetes: Node Feature Discovery ---------------------------------------------

/// A node label: a name with an optional "prefix/" and its value.
struct NodeLabel {
  std::string name;
  std::string value;
  friend bool operator==(const NodeLabel&, const NodeLabel&) = default;
};

/// Why a label breaks Kubernetes' rules for label keys and values (name
/// segment ≤ 63 characters of [A-Za-z0-9._-] starting and ending
/// alphanumeric; prefix a DNS subdomain ≤ 253 characters; value empty or
/// like a name segment), or nullopt when it is valid.
std::optional<std::string> label_problem(const NodeLabel& label);

struct NfdOptions {
  /// Also the names vendors' own discovery uses (NVIDIA GPU feature
  /// discovery, Intel's GPU labeller, AMD's node labeller), so that node
  /// selectors written for them keep working.
  bool vendor_labels = false;
  /// The node itself, for what a registry does not keep (an Intel GPU's PCI
  /// class, which Intel's labels name); those labels are left out without it.
  const System* system = nullptr;
};

/// The node's labels, sorted by name: under feature.node.kubernetes.io/
/// (NFD's namespace for features.d files) hwaccel-* labels with device
/// counts per spec id, backend and family, memory, compute capability,
/// interconnect domains and NUMA facts. Every value passes label_problem.
std::vector<NodeLabel> nfd_labels(const AcceleratorRegistry& registry, const NfdOptions& options = {});

/// An NFD features.d file: "name=value" lines, with an expiry time comment
/// (NFD drops the labels when it passes) when `expiry` is set.
std::string nfd_feature_file(std::span<const NodeLabel> labels,
                             std::optional<std::chrono::system_clock::time_point> expiry = std::nullopt);

// --- Slurm ------------------------------------------------------------------

struct SlurmOptions {
  /// NodeName of the slurm.conf line (default: the registry's system.host).
  std::optional<std::string> node_name;
  /// Prefix every gres.conf line with NodeName=, for one file shared by nodes.
  bool node_name_in_gres = false;
};

struct SlurmNodeConfig {
  std::string gres_conf;   ///< gres.conf lines, with a comment per device
  std::string node_line;   ///< slurm.conf NodeName= line
  std::string gres_types;  ///< the GresTypes= value it needs ("gpu")
  std::vector<std::string> warnings;  ///< what could not be known (a core map, a device file)
};

/// gres.conf and slurm.conf lines for the node: one line per GPU (MIG
/// instances and AMD compute partitions as GPUs of their own), File= or
/// MultipleFiles= device files, Cores= in Slurm's logical core numbering
/// (cores numbered socket by socket, as `lstopo -l` does, never OS CPU
/// ids), and Links= from the link matrix in Slurm's device order (sorted by
/// PCI address). Device minors, the core map and render nodes are read
/// through `system` (the node's own System, or a fixture).
SlurmNodeConfig slurm_node_config(const AcceleratorRegistry& registry, const System& system,
                                  const SlurmOptions& options = {});

}  // namespace hwaccel

// Shared by the module's implementation units; not exported.
namespace hwaccel::fleet_detail {
/// The scan time of `options`, in whole seconds.
std::chrono::system_clock::time_point scan_time(const ScanOptions& options);
/// Sorts nodes by host and keeps each host's last entry, with a warning per duplicate.
void settle_nodes(Fleet& fleet);
/// Calls body(0) .. body(count - 1), on up to `workers` threads (at least
/// one, at most `count`) that take the next index as they finish one.
void for_each_index(std::size_t count, std::size_t workers, const std::function<void(std::size_t)>& body);
/// Runs `argv` through `system` for the node `host` (the per-node deadline
/// and output cap of `options`): its registry, or the node error.
FleetNode run_node(const System& system, const std::string& host, std::vector<std::string> argv,
                   const ScanOptions& options, std::chrono::system_clock::time_point now);
}  // namespace hwaccel::fleet_detail
