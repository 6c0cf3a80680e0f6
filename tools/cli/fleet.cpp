// `hwaccel fleet`: scan many nodes, keep scans in SQLite, show, diff and check them.
#include "commands.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <sys/resource.h>

import hwaccel;

#include "detect_builder.hpp"
#include "http_client.hpp"
#include "setting_options.hpp"

namespace hwaccel::cli {
namespace {

// `fleet diff` and `fleet check` tell a difference (1) from a comparison
// that could not be made (3).
constexpr int exit_cannot_check = 3;

struct ScanArgs {
  std::vector<std::string> paths;
  bool from_stdin = false;
  std::string hosts;
  std::string exec;
  std::string urls;    // exporters: a file of HOST:PORT lines, or a,b,c
  std::string subnet;  // exporters: every host address of a CIDR, at --port
  int port = 9464;
  bool https = false;
  std::string basic_auth_file;
  std::string ca_file;
  bool kubernetes = false;  // nodes from kubectl, asked through the exporter DaemonSet's pods
  KubernetesScan k8s;
  bool mdns = false;  // exporters that announce _hwaccel._tcp (hwaccel serve --advertise)
  int mdns_wait_ms = 3000;
  SettingTexts settings;  ///< --deadline-ms, --concurrency, --max-output-mib (scan_setting_keys())
  std::string db;
  bool pretty = false;
  bool table = false;
  bool json = false;
  bool quiet = false;
};

struct ViewArgs {
  std::string db;
  std::string scan;  // id in --db, or a file
  bool json = false;
  bool pretty = false;
};

struct TargetsArgs {
  ViewArgs view;
  int port = 9464;
  std::string output;
};

struct DiffArgs {
  std::string db;
  std::vector<std::string> scans;
  bool json = false;
  bool pretty = false;
};

struct CheckArgs {
  std::string baseline;
  std::string db;
  std::string current;
  bool versions = false;
  bool json = false;
  DetectArgs detect;
};

struct PruneArgs {
  std::string db;
  int keep = 30;
};

// Every fleet subcommand speaks as "hwaccel fleet": its failures name the
// database, file or host they concern.
constexpr std::string_view fleet_command = "fleet";

void say(std::string_view message) { note(fleet_command, message); }

bool all_digits(std::string_view s) {
  return !s.empty() && s.size() < 19 && s.find_first_not_of("0123456789") == std::string_view::npos;
}

CommandResult<FleetStore> open_store(const std::string& path, FleetStore::Mode mode) {
  auto store = FleetStore::open(path, mode);
  if (!store) return failure(store.error().message);
  return std::move(*store);
}

// The database --db names, opened; none without --db.
CommandResult<std::optional<FleetStore>> optional_store(const std::string& path, FleetStore::Mode mode) {
  if (path.empty()) return std::optional<FleetStore>();
  auto store = open_store(path, mode);
  if (!store) return tl::unexpected(store.error());
  return std::optional<FleetStore>(std::move(*store));
}

// A scan named on the command line: an id in the database, "latest", or a
// fleet (or registry) file.
CommandResult<Fleet> load_scan(const std::optional<FleetStore>& store, const std::string& name) {
  if (store && (all_digits(name) || name == "latest")) {
    std::int64_t id = 0;
    if (name == "latest") {
      const auto latest = store->latest();
      if (!latest) return failure(latest.error().message);
      if (!*latest) return failure("the database holds no scan yet");
      id = **latest;
    } else {
      id = std::stoll(name);
    }
    auto fleet = store->load(id);
    if (!fleet) return failure(fleet.error().message);
    return std::move(*fleet);
  }
  auto content = read_file(name, std::size_t{4} << 30);
  if (!content) return tl::unexpected(content.error());
  auto fleet = fleet_from_json(*content);
  if (!fleet) return failure(name + ": " + fleet.error().message);
  return std::move(*fleet);
}

std::string accelerator_summary(const AcceleratorRegistry& registry) {
  std::map<std::string, int> by_name;
  for (const auto& d : registry.devices())
    if (d.backend != Backend::cpu) ++by_name[d.name];
  std::string out;
  for (const auto& [name, n] : by_name) out += fmt::format("{}{}x {}", out.empty() ? "" : ", ", n, name);
  return out.empty() ? std::string("no accelerator") : out;
}

std::string fleet_table(const Fleet& fleet) {
  std::string out = fmt::format("{:<24} {:<6} {:>10} {:<16} {}\n", "HOST", "STATUS", "MEMORY", "DRIVER", "ACCELERATORS");
  for (const auto& node : fleet.nodes) {
    if (!node.registry) {
      out += fmt::format("{:<24} {:<6} {:>10} {:<16} {}\n", node.host, "error", "-", "-",
                         node.error ? node.error->message : std::string());
      continue;
    }
    std::string driver = "-";
    for (const auto& d : node.registry->devices())
      if (d.backend != Backend::cpu && d.driver_version) {
        driver = *d.driver_version;
        break;
      }
    out += fmt::format("{:<24} {:<6} {:>10} {:<16} {}\n", node.host, "ok",
                       bytes_text(node.registry->total_accelerator_memory()), driver, accelerator_summary(*node.registry));
  }
  const FleetTotals totals = fleet_totals(fleet);
  out += fmt::format("\n{} node(s), {} answered, {} accelerator(s), {} of accelerator memory\n", totals.nodes,
                     totals.nodes_answered, totals.accelerators, bytes_text(totals.accelerator_memory_bytes));
  for (const auto& c : totals.by_model) out += fmt::format("  {:>5}x {} on {} node(s)\n", c.devices, c.key, c.nodes);
  for (const auto& w : fleet.warnings) out += fmt::format("warning: {}\n", w);
  return out;
}

bool print(const std::string& text) {
  std::cout << text;
  std::cout.flush();
  return std::cout.good();
}

// GET /registry from one exporter (`hwaccel serve`), as the scan's fetcher.
FetchedRegistry fetch_registry(const std::string& address, const ScanOptions& options, const ScanArgs& args,
                               const std::optional<std::string>& credentials) {
  HttpGetRequest request;
  request.url = node_url(args.https ? "https://" + address : address, "/registry");
  request.timeout = options.node_deadline;
  request.max_body_bytes = options.max_output_bytes;
  request.credentials = credentials;
  request.ca_file = args.ca_file;
  FetchedRegistry out;
  const auto started = std::chrono::steady_clock::now();
  auto reply = http_get(request);
  out.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  if (!reply) {
    const bool timeout = reply.error().kind == ErrorKind::timeout;
    out.nothing_there = timeout || reply.error().message.find("Connection refused") != std::string::npos;
    out.error = NodeError{timeout ? NodeErrorKind::timeout : NodeErrorKind::failed, reply.error().message};
  } else if (reply->status != 200) {
    out.error = NodeError{NodeErrorKind::failed, fmt::format("GET {}: HTTP status {}", request.url, reply->status)};
  } else {
    out.body = std::move(reply->body);
  }
  return out;
}

// The USER:PASSWORD of --basic-auth-file, when one is given.
CommandResult<std::optional<std::string>> optional_credentials(const std::string& file) {
  if (file.empty()) return std::optional<std::string>();
  auto read = read_credentials(file, "--basic-auth-file");
  if (!read) return tl::unexpected<CommandError>(read.error());
  return std::optional<std::string>(std::move(*read));
}

int run_scan(const ScanArgs& args) {
  const int sources = (!args.paths.empty() ? 1 : 0) + (args.from_stdin ? 1 : 0) + (!args.hosts.empty() ? 1 : 0) +
                      (!args.urls.empty() ? 1 : 0) + (!args.subnet.empty() ? 1 : 0) + (args.kubernetes ? 1 : 0) +
                      (args.mdns ? 1 : 0);
  if (sources != 1)
    return fail_with(fleet_command,
                     "give exactly one source: registry files or folders, --stdin, --hosts with --exec, --urls, "
                     "--subnet, --kubernetes, or --mdns",
                     exit_usage);
  if (args.k8s.registry_port && !args.kubernetes)
    return fail_with(fleet_command, "--registry-port goes with --kubernetes", exit_usage);
  if (!args.hosts.empty() && args.exec.empty())
    return fail_with(fleet_command,
                     "--hosts needs --exec 'COMMAND {host} ...' (e.g. 'ssh -o BatchMode=yes {host} hwaccel detect "
                     "--no-timings')",
                     exit_usage);
  // Opened first: a database that cannot take the scan fails before any host is asked.
  auto opened = optional_store(args.db, FleetStore::Mode::read_write);
  if (!opened) return fail_with(fleet_command, opened.error());
  std::optional<FleetStore> store = std::move(*opened);

  auto read = read_scan_options(settings_of(args.settings));
  if (!read) return fail_with(fleet_command, read.error().message, exit_usage);
  const ScanOptions options = std::move(*read);
  Fleet fleet;
  if (args.kubernetes) {
    const auto system = make_live_system();
    auto scanned = scan_kubernetes(*system, args.k8s, options);
    if (!scanned) return fail_with(fleet_command, scanned.error().message, exit_failure);
    fleet = std::move(*scanned);
  } else if (args.mdns) {
    const auto system = make_live_system();
    MdnsBrowse browse;
    browse.helper = mdns_helper(*system);
    browse.wait = std::chrono::milliseconds(args.mdns_wait_ms);
    auto found = browse_mdns(*system, browse);
    if (!found) return fail_with(fleet_command, found.error().message, exit_failure);
    const auto targets = mdns_exporter_targets(found->services);
    auto credentials = optional_credentials(args.basic_auth_file);
    if (!credentials) return fail_with(fleet_command, credentials.error());
    fleet = scan_exporters(
        std::span<const ExporterTarget>(targets),
        [&](const std::string& address, const ScanOptions& o) { return fetch_registry(address, o, args, *credentials); },
        options);
    fleet.warnings.insert(fleet.warnings.begin(), found->warnings.begin(), found->warnings.end());
    if (targets.empty())
      fleet.warnings.push_back(text::cat("no ", mdns_registry_service, " service answered the browse within ",
                                         args.mdns_wait_ms, " ms (hwaccel serve --advertise publishes one)"));
  } else if (!args.urls.empty() || !args.subnet.empty()) {
    std::vector<std::string> addresses;
    if (!args.subnet.empty()) {
      auto swept = subnet_addresses(args.subnet, static_cast<std::uint16_t>(args.port));
      if (!swept) return fail_with(fleet_command, swept.error().message, exit_usage);
      addresses = std::move(*swept);
    } else {
      std::string list;
      if (auto file = read_file(args.urls)) list = std::move(*file);
      else if (args.urls.find('/') != std::string::npos) return fail_with(fleet_command, file.error());
      else list = args.urls;
      auto parsed = parse_host_list(list);
      if (!parsed) return fail_with(fleet_command, parsed.error().message, exit_usage);
      for (auto& a : *parsed) addresses.push_back(a.find(':') == std::string::npos ? fmt::format("{}:{}", a, args.port) : a);
    }
    auto credentials = optional_credentials(args.basic_auth_file);
    if (!credentials) return fail_with(fleet_command, credentials.error());
    fleet = scan_exporters(
        addresses,
        [&](const std::string& address, const ScanOptions& o) { return fetch_registry(address, o, args, *credentials); },
        options, /*skip_silent=*/!args.subnet.empty());
  } else if (args.from_stdin) {
    const std::string input{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
    fleet = scan_lines(input, options);
  } else if (!args.paths.empty()) {
    fleet = scan_files(args.paths, options);
  } else {
    // A file when one is there (or the value names a path), else the hosts themselves.
    std::string list;
    if (auto file = read_file(args.hosts)) {
      list = std::move(*file);
    } else {
      if (args.hosts.find('/') != std::string::npos) return fail_with(fleet_command, file.error());
      if (args.hosts.find(',') == std::string::npos)
        say("--hosts " + args.hosts + ": no such file; taken as one host name");
      list = args.hosts;
    }
    auto hosts = parse_host_list(list);
    if (!hosts) return fail_with(fleet_command, hosts.error().message, exit_usage);
    auto command = CommandTemplate::parse(args.exec);
    if (!command) return fail_with(fleet_command, command.error().message, exit_usage);
    // Every running command holds a few descriptors: the soft limit (often
    // 1024) is raised to the hard one so that --concurrency is what runs.
    if (rlimit limit{}; ::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
      limit.rlim_cur = limit.rlim_max;
      ::setrlimit(RLIMIT_NOFILE, &limit);
    }
    const auto system = make_live_system();
    fleet = scan_hosts(*system, *hosts, *command, options);
  }
  if (store) {
    const auto id = store->append(fleet);
    if (!id) return fail_with(fleet_command, id.error().message, exit_failure);
    if (!args.quiet) say(fmt::format("scan {} stored in {}", *id, args.db));
  }
  if (args.quiet) return 0;
  return print(args.table ? fleet_table(fleet) : to_json(fleet, args.pretty) + (args.pretty ? "" : "\n")) ? 0 : exit_failure;
}

int run_show(const ViewArgs& args) {
  auto opened = optional_store(args.db, FleetStore::Mode::read_only);
  if (!opened) return fail_with(fleet_command, opened.error());
  const std::optional<FleetStore> store = std::move(*opened);
  if (!store && args.scan.empty())
    return fail_with(fleet_command, "give a fleet file, or --db with a scan id (default: latest)", exit_usage);
  const auto fleet = load_scan(store, args.scan.empty() ? std::string("latest") : args.scan);
  if (!fleet) return fail_with(fleet_command, fleet.error());
  return print(args.json ? to_json(*fleet, args.pretty) + (args.pretty ? "" : "\n") : fleet_table(*fleet)) ? 0 : exit_failure;
}

// Prometheus file_sd targets of a scan: printed, or replacing a file
// atomically (Prometheus re-reads it on change and never sees half of it).
int run_targets(const TargetsArgs& args) {
  auto opened = optional_store(args.view.db, FleetStore::Mode::read_only);
  if (!opened) return fail_with(fleet_command, opened.error());
  const std::optional<FleetStore> store = std::move(*opened);
  if (!store && args.view.scan.empty())
    return fail_with(fleet_command, "give a fleet file, or --db with a scan id (default: latest)", exit_usage);
  const auto fleet = load_scan(store, args.view.scan.empty() ? std::string("latest") : args.view.scan);
  if (!fleet) return fail_with(fleet_command, fleet.error());
  std::string text = prometheus_targets(*fleet, static_cast<std::uint16_t>(args.port), args.view.pretty);
  if (!text.ends_with('\n')) text += '\n';
  if (args.output.empty()) return print(text) ? 0 : exit_failure;
  if (auto written = replace_file(args.output, text); !written) return fail_with(fleet_command, written.error());
  return 0;
}

int run_history(const ViewArgs& args) {
  auto store = open_store(args.db, FleetStore::Mode::read_only);
  if (!store) return fail_with(fleet_command, store.error());
  const auto scans = store->scans();
  if (!scans) return fail_with(fleet_command, scans.error().message, exit_failure);
  if (args.json) {
    json::Writer w(args.pretty);
    w.begin_array();
    for (const auto& s : *scans) {
      w.begin_object();
      w.field("id", s.id);
      w.field("scanned_at", format_utc_time(s.scanned_at));
      w.field("nodes", s.nodes);
      w.field("nodes_answered", s.nodes_answered);
      w.field("accelerators", s.accelerators);
      w.end_object();
    }
    w.end_array();
    return print(std::string(w.str()) + "\n") ? 0 : exit_failure;
  }
  std::string out = fmt::format("{:>6} {:<21} {:>6} {:>9} {:>13}\n", "SCAN", "TIME", "NODES", "ANSWERED", "ACCELERATORS");
  for (const auto& s : *scans)
    out += fmt::format("{:>6} {:<21} {:>6} {:>9} {:>13}\n", s.id, format_utc_time(s.scanned_at), s.nodes, s.nodes_answered,
                       s.accelerators);
  return print(out) ? 0 : exit_failure;
}

int run_diff(const DiffArgs& args) {
  auto opened = optional_store(args.db, FleetStore::Mode::read_only);
  if (!opened) return fail_with(fleet_command, opened.error().message, exit_cannot_check);
  const std::optional<FleetStore> store = std::move(*opened);
  std::vector<std::string> names = args.scans;
  if (names.size() > 2) return fail_with(fleet_command, "give at most two scans", exit_usage);
  if (names.size() < 2) {
    if (!store)
      return fail_with(fleet_command, "give two fleet files, or --db (the latest scan against the one before it)",
                       exit_usage);
    if (names.empty()) {
      const auto latest = store->latest();
      if (!latest) return fail_with(fleet_command, latest.error().message, exit_cannot_check);
      if (!*latest) return fail_with(fleet_command, "the database holds no scan yet", exit_cannot_check);
      names.push_back(std::to_string(**latest));
    }
    if (!all_digits(names.front()))
      return fail_with(fleet_command, "with one scan, name it by its id in --db", exit_usage);
    const auto before = store->previous(std::stoll(names.front()));
    if (!before) return fail_with(fleet_command, before.error().message, exit_cannot_check);
    if (!*before)
      return fail_with(fleet_command, "scan " + names.front() + " is the first: nothing to compare it with",
                       exit_cannot_check);
    names.insert(names.begin(), std::to_string(**before));
  }
  const auto from = load_scan(store, names[0]);
  if (!from) return fail_with(fleet_command, from.error().message, exit_cannot_check);
  const auto to = load_scan(store, names[1]);
  if (!to) return fail_with(fleet_command, to.error().message, exit_cannot_check);
  const FleetDiff diff = fleet_diff(*from, *to);
  if (!print(args.json ? to_json(diff, args.pretty) + (args.pretty ? "" : "\n") : to_text(diff))) return exit_cannot_check;
  return diff.empty() ? 0 : 1;
}

int run_check(const CheckArgs& args) {
  auto opened = optional_store(args.db, FleetStore::Mode::read_only);
  if (!opened) return fail_with(fleet_command, opened.error().message, exit_cannot_check);
  const std::optional<FleetStore> store = std::move(*opened);
  auto baseline = load_scan(store, args.baseline);
  if (!baseline) return fail_with(fleet_command, baseline.error().message, exit_cannot_check);
  Fleet current;
  if (!args.current.empty() || store) {
    auto loaded = load_scan(store, args.current.empty() ? std::string("latest") : args.current);
    if (!loaded) return fail_with(fleet_command, loaded.error().message, exit_cannot_check);
    current = std::move(*loaded);
  } else {
    // This node, checked against its own entry of the baseline (a Slurm
    // HealthCheckProgram, a cron job).
    auto machine = detect_machine(args.detect);
    if (!machine)
      return fail_with(fleet_command, machine.error().message,
                       machine.error().exit_code == exit_usage ? exit_usage : exit_cannot_check);
    FleetNode node;
    node.host = machine->registry.system().host.value_or("localhost");
    node.source = "this machine";
    node.registry = std::move(machine->registry);
    current.nodes.push_back(std::move(node));
    // This machine against its own entry, whatever each calls itself when
    // the baseline holds one node only.
    const std::string& host = current.nodes.front().host;
    if (const FleetNode* mine = baseline->find(host)) {
      FleetNode kept = *mine;
      baseline->nodes = {std::move(kept)};
    } else if (baseline->nodes.size() == 1) {
      baseline->nodes.front().host = host;
    } else {
      return fail_with(fleet_command, "the baseline has no node " + host + " (give --host NAME)",
                       exit_cannot_check);
    }
  }
  const auto findings = fleet_check(*baseline, current, CheckOptions{.versions = args.versions});
  if (args.json) {
    json::Writer w(false);
    w.begin_object();
    w.field("matches", findings.empty());
    w.key("findings").begin_array();
    for (const auto& f : findings) {
      w.begin_object();
      w.field("host", f.host);
      w.field("message", f.message);
      w.end_object();
    }
    w.end_array();
    w.end_object();
    if (!print(std::string(w.str()) + "\n")) return exit_failure;
  } else {
    std::string out;
    for (const auto& f : findings) out += f.message + "\n";
    if (findings.empty())
      out = fmt::format("{} node(s) match the baseline\n", baseline->nodes.size());
    if (!print(out)) return exit_failure;
  }
  return findings.empty() ? 0 : 1;
}

int run_prune(const PruneArgs& args) {
  auto store = open_store(args.db, FleetStore::Mode::read_write);
  if (!store) return fail_with(fleet_command, store.error());
  const auto removed = store->prune(static_cast<std::size_t>(args.keep));
  if (!removed) return fail_with(fleet_command, removed.error().message, exit_failure);
  say(fmt::format("removed {} scan(s); kept the newest {}", *removed, args.keep));
  return 0;
}

}  // namespace

Command add_fleet_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("fleet", "Inventory many nodes: scan them, keep the scans in SQLite, diff and check them");
  cmd->require_subcommand(1);
  cmd->footer(
      "A fleet is one registry per node (docs/fleet.md). `scan` collects them from registry files, from\n"
      "JSON lines on stdin, or by running a command per host; `--db` keeps each scan in SQLite, where\n"
      "`history`, `show`, `diff` and `check` read them.\n"
      "\n"
      "Examples:\n"
      "  hwaccel fleet scan --hosts nodes.txt --exec 'ssh -o BatchMode=yes {host} hwaccel detect --no-timings' --db fleet.sqlite\n"
      "  srun -N64 hwaccel detect --no-timings | hwaccel fleet scan --stdin --db fleet.sqlite\n"
      "  hwaccel fleet diff --db fleet.sqlite\n"
      "  hwaccel fleet check --baseline baseline.json       (this node; exit 1 when it differs)\n"
      "\n"
      "Exit status: as for every command (docs/cli.md); `diff` exits 1 when the scans differ, `check`\n"
      "exits 1 when a node differs from the baseline; both exit 3 when they could not compare.");

  auto scan = std::make_shared<ScanArgs>();
  auto* s = cmd->add_subcommand("scan", "Collect one registry per node into a fleet document (JSON by default)");
  s->add_option("paths", scan->paths, "Registry files, or folders of *.json registry files");
  s->add_flag("--stdin", scan->from_stdin, "JSON lines on stdin, one registry per line, each naming its host (system.host)");
  s->add_option("--hosts", scan->hosts, "Host list: a file (one per line, # comments) or a,b,c");
  s->add_option("--exec", scan->exec,
                "Command run per host, without a shell; {host} is replaced; the program is a name looked up on PATH "
                "or a path: 'ssh -o BatchMode=yes {host} hwaccel detect --no-timings', 'srun -w {host} hwaccel "
                "detect', 'kubectl exec {host} -- hwaccel detect', '/opt/hwaccel/bin/node-agent {host}'");
  s->add_option("--urls", scan->urls,
                "Exporters (hwaccel serve) to read GET /registry from: a file of HOST[:PORT] lines, or a,b:9464,c");
  s->add_option("--subnet", scan->subnet, "Every host address of an IPv4 subnet (at most a /16), at --port");
  s->add_option("--port", scan->port, "The exporters' port for --subnet, and for --urls entries without one")
      ->check(CLI::Range(1, 65535))->capture_default_str();
  s->add_flag("--https", scan->https, "--urls and --subnet over TLS (verified against the system's CAs or --ca-file)");
  s->add_option("--ca-file", scan->ca_file, "With --https: the CAs to trust");
  s->add_option("--basic-auth-file", scan->basic_auth_file, "With --urls or --subnet: a file holding USER:PASSWORD");
  s->add_flag("--kubernetes", scan->kubernetes,
              "The cluster's nodes (kubectl get nodes), each asked through its hwaccel DaemonSet pod (kubectl exec)");
  s->add_option("--selector", scan->k8s.node_selector, "With --kubernetes: only the nodes with these labels (kubectl -l)");
  s->add_option("--namespace", scan->k8s.namespace_name, "With --kubernetes: the DaemonSet's namespace")
      ->capture_default_str();
  s->add_option("--pod-selector", scan->k8s.pod_selector, "With --kubernetes: the DaemonSet pods' labels")
      ->capture_default_str();
  s->add_option("--registry-port", scan->k8s.registry_port,
                "With --kubernetes: ask each pod's hwaccel serve GET /registry on this port through the API server's "
                "pod proxy (kubectl get --raw; RBAC get on pods/proxy) instead of kubectl exec")
      ->check(CLI::Range(1, 65535));
  s->add_flag("--mdns", scan->mdns,
              "The exporters that announce _hwaccel._tcp on the local network (hwaccel serve --advertise), found "
              "through the Avahi daemon");
  s->add_option("--mdns-wait-ms", scan->mdns_wait_ms, "With --mdns: how long the browse waits for answers")
      ->check(CLI::Range(1, static_cast<int>(max_mdns_wait.count())))->capture_default_str();
  add_setting_options(*s, scan_setting_keys(), scan->settings);
  s->add_option("--db", scan->db, "Append the scan to this SQLite database (created when missing)");
  s->add_flag("--pretty", scan->pretty, "Indent the JSON");
  auto* scan_table = s->add_flag("--table", scan->table, "A table for people instead of the fleet document");
  add_json_default_flag(*s, scan->json);
  scan_table->excludes(s->get_option("--json"));
  s->add_flag("--quiet", scan->quiet, "Print nothing (with --db)");

  auto show = std::make_shared<ViewArgs>();
  auto* sh = cmd->add_subcommand("show", "Show a scan: a table, or the fleet document with --json");
  sh->add_option("scan", show->scan, "Scan id in --db (default: latest), or a fleet file");
  sh->add_option("--db", show->db, "SQLite database of scans");
  sh->add_flag("--json", show->json, "The fleet document");
  sh->add_flag("--pretty", show->pretty, "Indent the JSON");

  auto targets = std::make_shared<TargetsArgs>();
  auto* t = cmd->add_subcommand("targets", "Prometheus file_sd targets of a scan: each answering node's exporter, "
                                           "labelled with its backends, accelerators and spec ids");
  t->add_option("scan", targets->view.scan, "Scan id in --db (default: latest), or a fleet file");
  t->add_option("--db", targets->view.db, "SQLite database of scans");
  t->add_option("--port", targets->port, "The exporters' port (hwaccel serve --listen)")->check(CLI::Range(1, 65535))
      ->capture_default_str();
  t->add_option("--output", targets->output, "Replace this file atomically instead of printing (a file_sd_configs file)");
  t->add_flag("--pretty", targets->view.pretty, "Indent the JSON");
  add_json_default_flag(*t, targets->view.json);

  auto history = std::make_shared<ViewArgs>();
  auto* h = cmd->add_subcommand("history", "List the scans of a database");
  h->add_option("--db", history->db, "SQLite database of scans")->required();
  h->add_flag("--json", history->json, "JSON instead of a table");
  h->add_flag("--pretty", history->pretty, "Indent the JSON");

  auto diff = std::make_shared<DiffArgs>();
  auto* d = cmd->add_subcommand("diff", "What changed between two scans (exit 1 when anything did)");
  d->add_option("scans", diff->scans,
                "Two fleet files, two scan ids in --db, or one id (against the scan before it); default: the latest "
                "scan against the one before it");
  d->add_option("--db", diff->db, "SQLite database of scans");
  d->add_flag("--json", diff->json, "JSON instead of one line per change");
  d->add_flag("--pretty", diff->pretty, "Indent the JSON");

  auto check = std::make_shared<CheckArgs>();
  auto* c = cmd->add_subcommand("check", "Nodes whose accelerators differ from a baseline (exit 1 when any does)");
  c->add_option("--baseline", check->baseline, "Scan id in --db, or a fleet or registry file")->required();
  c->add_option("--db", check->db, "SQLite database of scans (the current fleet is its latest scan)");
  c->add_option("--current", check->current, "The current fleet: a scan id in --db, or a fleet or registry file "
                                             "(default: the latest scan in --db, else this machine)");
  c->add_flag("--versions", check->versions, "Also compare driver and firmware versions");
  c->add_flag("--json", check->json, "JSON instead of one line per node");
  add_machine_options(*c, check->detect, "Check a captured machine (fixture folder) instead of this one");
  add_host_option(*c, check->detect);

  auto prune = std::make_shared<PruneArgs>();
  auto* p = cmd->add_subcommand("prune", "Delete old scans, keeping the newest N");
  p->add_option("--db", prune->db, "SQLite database of scans")->required();
  p->add_option("--keep", prune->keep, "How many of the newest scans to keep")->required()->check(CLI::Range(0, 1'000'000));

  return {cmd, [=] {
    if (s->parsed()) return run_scan(*scan);
    if (sh->parsed()) return run_show(*show);
    if (t->parsed()) return run_targets(*targets);
    if (h->parsed()) return run_history(*history);
    if (d->parsed()) return run_diff(*diff);
    if (c->parsed()) return run_check(*check);
    return run_prune(*prune);
  }};
}

}  // namespace hwaccel::cli
