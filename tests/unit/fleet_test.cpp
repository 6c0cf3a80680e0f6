// The fleet layer: host lists, scans from files, lines and commands, the fleet
// document, diffs and baseline checks (docs/fleet.md).
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <sys/stat.h>

import hwaccel;

#include "module_helpers.hpp"

namespace hwaccel {
namespace {

using testing::FixtureBuilder;
using testing::TempDir;

AcceleratorRegistry machine_registry(const std::string& name, const std::string& host) {
  auto system = testing::open_machine(name);
  auto registry = DetectBuilder{}.detect(*system);
  registry.inventory().system.host = host;
  return registry;
}

std::string compact(const AcceleratorRegistry& r) { return to_json(r, JsonOptions{.include_timings = false}); }

void write(const std::filesystem::path& path, std::string_view content) {
  std::ofstream(path, std::ios::binary) << content;
}

const FleetNode& node(const Fleet& fleet, std::string_view host) {
  const FleetNode* n = fleet.find(host);
  if (!n) throw std::runtime_error("no node " + std::string(host));
  return *n;
}

ScanOptions pinned() {
  ScanOptions options;
  options.now = std::chrono::sys_days{std::chrono::year{2026} / 11 / 26} + std::chrono::hours{12};
  return options;
}

TEST(FleetHosts, NamesThatACommandCannotMisread) {
  EXPECT_FALSE(host_name_problem("node-17.cluster.local"));
  EXPECT_FALSE(host_name_problem("user@gpu-3"));
  EXPECT_FALSE(host_name_problem("10.0.0.7"));
  EXPECT_TRUE(host_name_problem(""));
  EXPECT_TRUE(host_name_problem("-oProxyCommand=touch x"));
  EXPECT_TRUE(host_name_problem("a b"));
  EXPECT_TRUE(host_name_problem("a;rm"));
  EXPECT_TRUE(host_name_problem(std::string(254, 'a')));
  const auto control = host_name_problem("a\x1b[2Jb");
  ASSERT_TRUE(control);
  EXPECT_NE(control->find("0x1b"), std::string::npos) << *control;
  EXPECT_EQ(control->find('\x1b'), std::string::npos);
}

TEST(FleetHosts, ListsWithCommasLinesAndComments) {
  const auto hosts = parse_host_list("# rack 1\nnode-1, node-2\n\nnode-3 # spare\r\nnode-4\tnode-5\n");
  ASSERT_TRUE(hosts) << hosts.error().message;
  EXPECT_EQ(*hosts, (std::vector<std::string>{"node-1", "node-2", "node-3", "node-4", "node-5"}));
  const auto twice = parse_host_list("a,b\na");
  ASSERT_FALSE(twice);
  EXPECT_NE(twice.error().message.find("line 2"), std::string::npos) << twice.error().message;
  EXPECT_FALSE(parse_host_list("ok,-bad"));
}

TEST(FleetCommand, SplitsLikeAShellButRunsWithoutOne) {
  const auto c = CommandTemplate::parse(R"(ssh -o 'BatchMode=yes' {host} "hwaccel detect --host \"{host}\"" x\ y)");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->argv_for("n1"),
            (std::vector<std::string>{"ssh", "-o", "BatchMode=yes", "n1", "hwaccel detect --host \"n1\"", "x y"}));
  EXPECT_EQ(CommandTemplate::parse("srun -w {host}{host} x")->argv_for("a"), (std::vector<std::string>{"srun", "-w", "aa", "x"}));
  EXPECT_FALSE(CommandTemplate::parse(""));
  EXPECT_FALSE(CommandTemplate::parse("hwaccel detect"));  // no {host}
  EXPECT_FALSE(CommandTemplate::parse("ssh '{host}"));
  EXPECT_FALSE(CommandTemplate::parse("ssh \"{host}"));
  EXPECT_FALSE(CommandTemplate::parse("ssh {host} \\"));
  EXPECT_FALSE(CommandTemplate::parse("'' {host}"));          // no program
  EXPECT_FALSE(CommandTemplate::parse("{host}-agent {host}"));  // a host name never chooses the program
  EXPECT_FALSE(CommandTemplate::parse("./{host} x"));
  // The program is a name looked up on PATH or a path to it, run as it is
  // (no shell: a ';' or '$(...)' in a word is that word's text).
  EXPECT_EQ(CommandTemplate::parse("/opt/hwaccel/bin/hwaccel detect --host {host}")->argv_for("n1"),
            (std::vector<std::string>{"/opt/hwaccel/bin/hwaccel", "detect", "--host", "n1"}));
  EXPECT_EQ(CommandTemplate::parse("./bin/agent {host};$(reboot)")->argv_for("n1"),
            (std::vector<std::string>{"./bin/agent", "n1;$(reboot)"}));
}

TEST(FleetCommand, AProgramNamedByItsPathRunsWithoutAPathLookup) {
  TempDir dir;
  const auto agent = dir.path() / "agent";
  testing::write_script(agent, "cat \"$(dirname \"$0\")/$1.json\"");
  write(dir.path() / "gpu-01.json", compact(machine_registry("dgx-h100-8x-nvswitch", "gpu-01")));
  const auto command = CommandTemplate::parse(agent.string() + " {host}");
  ASSERT_TRUE(command) << command.error().message;
  LiveOptions no_path;
  no_path.search_path = "";
  const auto system = make_live_system(no_path);
  const std::vector<std::string> hosts = {"gpu-01"};
  const Fleet fleet = scan_hosts(*system, hosts, *command, pinned());
  ASSERT_EQ(fleet.nodes.size(), 1u);
  EXPECT_TRUE(fleet.nodes.front().answered()) << (fleet.nodes.front().error ? fleet.nodes.front().error->message : "");
  // A path that is no executable file is a node error, not a PATH search.
  const auto missing = CommandTemplate::parse((dir.path() / "no-such-agent").string() + " {host}");
  ASSERT_TRUE(missing);
  const Fleet failed = scan_hosts(*system, hosts, *missing, pinned());
  ASSERT_TRUE(failed.nodes.front().error);
  EXPECT_NE(failed.nodes.front().error->message.find("not an executable file"), std::string::npos)
      << failed.nodes.front().error->message;
}

TEST(FleetScan, FolderOfRegistriesWithBrokenFiles) {
  TempDir dir;
  write(dir.path() / "dgx.json", compact(machine_registry("dgx-h100-8x-nvswitch", "dgx-01")));
  write(dir.path() / "mi300.json", compact(machine_registry("amd-8x-mi300x-xgmi", "mi300-01")));
  AcceleratorRegistry unnamed = machine_registry("dual-xeon-8480-no-accel", "x");
  unnamed.inventory().system.host.reset();
  write(dir.path() / "cpu-node-7.json", compact(unnamed));
  write(dir.path() / "garbage.json", "\x7f" "ELF not json at all");
  write(dir.path() / "truncated.json", compact(unnamed).substr(0, 200));
  write(dir.path() / "notes.txt", "not a registry and not .json: ignored");
  ScanOptions options = pinned();
  options.max_output_bytes = 1 << 20;
  write(dir.path() / "huge.json", std::string((1 << 20) + 1, ' '));

  const Fleet fleet = scan_files(std::vector<std::string>{dir.path().string()}, options);
  ASSERT_EQ(fleet.nodes.size(), 6u);
  EXPECT_TRUE(node(fleet, "dgx-01").answered());
  EXPECT_EQ(node(fleet, "dgx-01").registry->devices().size(), 9u);
  EXPECT_TRUE(node(fleet, "mi300-01").answered());
  EXPECT_TRUE(node(fleet, "cpu-node-7").answered()) << "a registry without a host is named by its file";
  EXPECT_EQ(node(fleet, "garbage").error->kind, NodeErrorKind::parse_error);
  EXPECT_EQ(node(fleet, "truncated").error->kind, NodeErrorKind::parse_error);
  EXPECT_EQ(node(fleet, "huge").error->kind, NodeErrorKind::too_large);
  EXPECT_EQ(fleet.scanned_at, *options.now);

  // A dangling link is that entry's problem; a file named like no host, whose
  // registry names none, is left out with a warning.
  std::filesystem::create_symlink(dir.path() / "gone", dir.path() / "dangling.json");
  write(dir.path() / "node 7.json", compact(unnamed));
  const Fleet more = scan_files(std::vector<std::string>{dir.path().string()}, options);
  EXPECT_EQ(more.nodes.size(), 6u);
  EXPECT_TRUE(std::any_of(more.warnings.begin(), more.warnings.end(), [](const std::string& w) {
    return w.find("node 7.json") != std::string::npos && w.find("left out") != std::string::npos;
  })) << (more.warnings.empty() ? "" : more.warnings.front());
  std::filesystem::remove(dir.path() / "node 7.json");

  // A FIFO is never opened for reading (it would block): skipped in a folder,
  // an I/O error when named.
  const auto fifo = dir.path() / "pipe.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(scan_files(std::vector<std::string>{dir.path().string()}, options).nodes.size(), 6u);
  const Fleet named = scan_files(std::vector<std::string>{fifo.string()}, options);
  ASSERT_EQ(named.nodes.size(), 1u);
  EXPECT_EQ(named.nodes[0].error->kind, NodeErrorKind::io_error);

  const FleetTotals totals = fleet_totals(fleet);
  EXPECT_EQ(totals.nodes, 6u);
  EXPECT_EQ(totals.nodes_answered, 3u);
  EXPECT_EQ(totals.accelerators, 16u);
  const auto h100 = std::find_if(totals.by_model.begin(), totals.by_model.end(),
                                 [](const FleetCount& c) { return c.key == "NVIDIA H100 80GB HBM3"; });
  ASSERT_NE(h100, totals.by_model.end());
  EXPECT_EQ(h100->devices, 8u);
  EXPECT_EQ(h100->nodes, 1u);
  const auto rocm = std::find_if(totals.by_backend.begin(), totals.by_backend.end(),
                                 [](const FleetCount& c) { return c.key == "rocm"; });
  ASSERT_NE(rocm, totals.by_backend.end());
  EXPECT_EQ(rocm->devices, 8u);
}

TEST(FleetScan, JsonLinesNameTheirNodes) {
  const std::string dgx = compact(machine_registry("dgx-h100-8x-nvswitch", "dgx-01"));
  const std::string mi300 = compact(machine_registry("amd-8x-mi300x-xgmi", "mi300-01"));
  AcceleratorRegistry unnamed = machine_registry("dual-xeon-8480-no-accel", "x");
  unnamed.inventory().system.host.reset();
  const std::string input = "12: " + dgx + "\n\n" + "[pod/agent-x/hwaccel] " + mi300 + "\n" + compact(unnamed) + "\n" +
                            "garbage line\n" + dgx + "\n" + mi300.substr(0, 100);
  const Fleet fleet = scan_lines(input, pinned());
  ASSERT_EQ(fleet.nodes.size(), 2u);
  EXPECT_TRUE(node(fleet, "dgx-01").answered());
  EXPECT_TRUE(node(fleet, "mi300-01").answered());
  EXPECT_EQ(node(fleet, "dgx-01").source, "stdin:6") << "a host given twice keeps its last line";
  const auto has = [&](std::string_view text) {
    return std::any_of(fleet.warnings.begin(), fleet.warnings.end(),
                       [&](const std::string& w) { return w.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(has("line 4: the registry names no host"));
  EXPECT_TRUE(has("line 5: not a registry"));
  EXPECT_TRUE(has("line 7: not a registry"));
  EXPECT_TRUE(has("host dgx-01 is given twice"));
}

TEST(FleetScan, CommandPerHostWithFailingNodes) {
  const std::string good = compact(machine_registry("dgx-h100-8x-nvswitch", "ignored"));
  FixtureBuilder machine("fleet head node");
  machine.command({"node-agent", "good-1"}, good)
      .command({"node-agent", "good-2"}, "Warning: Permanently added 'good-2'\n" + good)
      .command({"node-agent", "hangs"}, "", 0, {}, /*hang=*/true)
      .command({"node-agent", "fails"}, "", 255, "ssh: connect to host fails port 22: Connection refused\n")
      .command({"node-agent", "garbage"}, "Last login: yesterday\n\x01\x02 binary")
      .command({"node-agent", "floods"}, std::string(3 << 20, '{'))
      .command({"node-agent", "chatty"},
               "Welcome to \"gpu-cluster\" {managed by ops}; see https://wiki/x for the rules of this cluster, "
               "which are long enough to exceed any short prefix that a parser might skip without looking.\n"
               "Last login: yesterday\n" + good);
  auto system = FixtureSystem::open(machine.write());
  ASSERT_TRUE(system) << system.error().message;
  const auto command = CommandTemplate::parse("node-agent {host}");
  ASSERT_TRUE(command);
  ScanOptions options = pinned();
  options.node_deadline = std::chrono::milliseconds{200};
  options.max_output_bytes = 1 << 20;
  const std::vector<std::string> hosts = {"good-1", "good-2", "hangs",   "fails",
                                          "garbage", "floods", "unknown", "chatty", "-oProxyCommand=touch x"};
  const Fleet fleet = scan_hosts(**system, hosts, *command, options);
  ASSERT_EQ(fleet.nodes.size(), hosts.size() - 1) << "a host a command would misread is never asked";
  ASSERT_EQ(fleet.warnings.size(), 1u);
  EXPECT_NE(fleet.warnings[0].find("not asked"), std::string::npos);
  EXPECT_TRUE(node(fleet, "chatty").answered()) << "a login banner before the document is skipped";
  EXPECT_TRUE(node(fleet, "good-1").answered());
  EXPECT_EQ(node(fleet, "good-1").host, "good-1") << "the host list names the node, not the registry";
  EXPECT_TRUE(node(fleet, "good-2").answered()) << "a banner before the document is skipped";
  EXPECT_EQ(node(fleet, "hangs").error->kind, NodeErrorKind::timeout);
  EXPECT_EQ(node(fleet, "fails").error->kind, NodeErrorKind::failed);
  EXPECT_NE(node(fleet, "fails").error->message.find("status 255: ssh: connect to host fails port 22: Connection refused"),
            std::string::npos)
      << node(fleet, "fails").error->message;
  EXPECT_EQ(node(fleet, "garbage").error->kind, NodeErrorKind::parse_error);
  EXPECT_EQ(node(fleet, "floods").error->kind, NodeErrorKind::too_large);
  EXPECT_EQ(node(fleet, "unknown").error->kind, NodeErrorKind::failed);
}

TEST(FleetDocument, RoundTripsAndReadsASingleRegistry) {
  TempDir dir;
  write(dir.path() / "a.json", compact(machine_registry("dgx-h100-8x-nvswitch", "dgx-01")));
  write(dir.path() / "b.json", "not json");
  Fleet fleet = scan_files(std::vector<std::string>{dir.path().string()}, pinned());
  fleet.warnings.push_back("a warning");
  const std::string json = to_json(fleet, true);
  const auto back = fleet_from_json(json);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, fleet);
  EXPECT_EQ(to_json(*back, true), json);
  EXPECT_NE(json.find("\"fleet_schema_version\": 1"), std::string::npos);
  EXPECT_NE(json.find("\"scanned_at\": \"2026-11-26T12:00:00Z\""), std::string::npos);

  const auto single = fleet_from_json(compact(machine_registry("amd-8x-mi300x-xgmi", "mi300-01")));
  ASSERT_TRUE(single) << single.error().message;
  ASSERT_EQ(single->nodes.size(), 1u);
  EXPECT_EQ(single->nodes.front().host, "mi300-01");

  for (const std::string bad : {"", "[]", "{}", R"({"fleet_schema_version":1})",
                                R"({"fleet_schema_version":1,"nodes":[{"host":"-x","error":{"kind":"failed"}}]})",
                                R"({"fleet_schema_version":1,"nodes":[{"host":"a"}]})",
                                R"({"fleet_schema_version":1,"nodes":[{"host":"a","error":{"kind":"exploded"}}]})",
                                R"({"fleet_schema_version":1,"scanned_at":"yesterday","nodes":[]})",
                                R"({"fleet_schema_version":1,"scanned_at":"1013-11-26T14:13:07Z","nodes":[]})",
                                R"({"fleet_schema_version":1,"scanned_at":"2026-02-30T00:00:00Z","nodes":[]})",
                                R"({"fleet_schema_version":1,"nodes":[{"host":"a","registry":{"devices":[]}}]})"}) {
    const auto r = fleet_from_json(bad);
    EXPECT_FALSE(r) << bad;
    if (!r) EXPECT_EQ(r.error().kind, ErrorKind::parse_error) << bad;
  }
}

Fleet fleet_of(std::vector<std::pair<std::string, AcceleratorRegistry>> nodes) {
  Fleet fleet;
  for (auto& [host, registry] : nodes) {
    FleetNode n;
    n.host = host;
    n.source = "test";
    n.registry = std::move(registry);
    fleet.nodes.push_back(std::move(n));
  }
  std::sort(fleet.nodes.begin(), fleet.nodes.end(), [](const FleetNode& a, const FleetNode& b) { return a.host < b.host; });
  return fleet;
}

TEST(FleetDiff, DevicesByIdentityNodesByName) {
  const AcceleratorRegistry dgx = machine_registry("dgx-h100-8x-nvswitch", "node-17");
  const std::string lost_bus = *dgx.find("cuda:3")->pci_bus_id;
  AcceleratorRegistry degraded = dgx.what_if_remove_if([](const DeviceProfile& d) { return d.id == "cuda:3"; });
  for (auto& d : degraded.inventory().devices)
    if (d.id == "cuda:0") d.driver_version = "570.86.15";
  const Fleet before = fleet_of({{"node-17", dgx}, {"node-18", dgx}, {"node-19", dgx}});
  Fleet after = fleet_of({{"node-17", degraded}, {"node-18", dgx}, {"node-20", dgx}});
  after.nodes[1].registry.reset();
  after.nodes[1].error = NodeError{NodeErrorKind::timeout, "node-18: no answer within 60000 ms"};

  const FleetDiff diff = fleet_diff(before, after);
  ASSERT_EQ(diff.nodes.size(), 3u);
  EXPECT_EQ(diff.nodes[0], (NodeChange{"node-18", NodeChangeKind::stopped_answering, "node-18: no answer within 60000 ms"}));
  EXPECT_EQ(diff.nodes[1], (NodeChange{"node-19", NodeChangeKind::gone, {}}));
  EXPECT_EQ(diff.nodes[2], (NodeChange{"node-20", NodeChangeKind::added, {}}));
  ASSERT_EQ(diff.devices.size(), 2u);
  const auto removed = std::find_if(diff.devices.begin(), diff.devices.end(),
                                    [](const DeviceChange& c) { return c.kind == ChangeKind::removed; });
  ASSERT_NE(removed, diff.devices.end());
  EXPECT_EQ(removed->identity, lost_bus);
  EXPECT_EQ(removed->id, "cuda:3");
  const auto changed = std::find_if(diff.devices.begin(), diff.devices.end(),
                                    [](const DeviceChange& c) { return c.kind == ChangeKind::changed; });
  ASSERT_NE(changed, diff.devices.end());
  ASSERT_EQ(changed->fields.size(), 1u);
  EXPECT_EQ(changed->fields[0], (FieldChange{"driver_version", "565.57.01", "570.86.15"}));
  const std::string text = to_text(diff);
  EXPECT_NE(text.find("node-17: cuda:0 (" + *dgx.find("cuda:0")->pci_bus_id + ") driver_version: 565.57.01 -> 570.86.15"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("node-17: cuda:3 (" + lost_bus + ") NVIDIA H100 80GB HBM3 removed"), std::string::npos) << text;
  EXPECT_TRUE(fleet_diff(before, before).empty());
  EXPECT_NE(to_json(diff).find(R"("change":"stopped_answering")"), std::string::npos);
}

TEST(FleetCheck, SaysWhatIsMissingAndWhere) {
  const AcceleratorRegistry dgx = machine_registry("dgx-h100-8x-nvswitch", "node-17");
  const std::string bus = *dgx.find("cuda:3")->pci_bus_id;
  const AcceleratorRegistry seven = dgx.what_if_remove_if([](const DeviceProfile& d) { return d.id == "cuda:3"; });
  const Fleet baseline = fleet_of({{"node-16", dgx}, {"node-17", dgx}, {"node-18", dgx}});
  Fleet current = fleet_of({{"node-16", dgx}, {"node-17", seven}, {"node-18", dgx}, {"node-99", seven}});
  EXPECT_TRUE(fleet_check(baseline, baseline).empty());

  auto findings = fleet_check(baseline, current);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].message, "node-17: expected 8 NVIDIA H100 80GB HBM3, found 7; cuda:3 (" + bus + ") missing");

  current.nodes[2].registry.reset();
  current.nodes[2].error = NodeError{NodeErrorKind::failed, "node-18: exited with status 255"};
  current.nodes.erase(current.nodes.begin());
  findings = fleet_check(baseline, current);
  ASSERT_EQ(findings.size(), 3u);
  EXPECT_EQ(findings[0].message, "node-16: not in the scan");
  EXPECT_EQ(findings[2].message, "node-18: did not answer: node-18: exited with status 255");

  AcceleratorRegistry upgraded = dgx;
  for (auto& d : upgraded.inventory().devices) d.driver_version = "570.86.15";
  const Fleet after_upgrade = fleet_of({{"node-16", upgraded}, {"node-17", upgraded}, {"node-18", upgraded}});
  EXPECT_TRUE(fleet_check(baseline, after_upgrade).empty()) << "versions are compared only when asked";
  EXPECT_EQ(fleet_check(baseline, after_upgrade, CheckOptions{.versions = true}).size(), 3u);
}

// file_sd / http_sd targets: one group per answering node, labelled from its registry.
TEST(FleetTargets, OneGroupPerAnsweringNodeWithItsLabels) {
  Fleet fleet = testing::hypothetical_fleet({{"gpu-a", "8xH100-SXM-80GB"}, {"gpu-b", "2xRTX-4090+1xRTX-3090"}});
  FleetNode down;
  down.host = "gpu-c";
  down.error = NodeError{};
  fleet.nodes.push_back(down);
  FleetNode v6;
  v6.host = "fd00::7";
  v6.registry = hypothetical_registry("1xL4-24GB").value();
  fleet.nodes.push_back(v6);
  const std::string text = prometheus_targets(fleet, 9464);
  simdjson::dom::parser parser;
  const auto doc = parser.parse(text);
  ASSERT_EQ(doc.error(), simdjson::SUCCESS) << text;
  const simdjson::dom::array groups = doc.get_array().value();
  ASSERT_EQ(groups.size(), 3u) << text;  // gpu-c did not answer
  const auto first = groups.at(0).value();
  EXPECT_EQ(std::string_view(first["targets"].at(0).get_string().value()), "gpu-a:9464");
  EXPECT_EQ(std::string_view(first["labels"]["host"].get_string().value()), "gpu-a");
  EXPECT_EQ(std::string_view(first["labels"]["backends"].get_string().value()), "cuda");
  EXPECT_EQ(std::string_view(first["labels"]["accelerators"].get_string().value()), "8");
  EXPECT_EQ(std::string_view(first["labels"]["spec_ids"].get_string().value()), "h100-sxm5-80gb");
  const auto second = groups.at(1).value();
  EXPECT_EQ(std::string_view(second["labels"]["accelerators"].get_string().value()), "3");
  EXPECT_EQ(std::string_view(second["labels"]["spec_ids"].get_string().value()), "rtx-3090-24gb,rtx-4090-24gb");
  EXPECT_EQ(std::string_view(groups.at(2).value()["targets"].at(0).get_string().value()), "[fd00::7]:9464");
}

TEST(FleetSubnet, HostAddressesOfACidrAndWhatIsRefused) {
  const auto small = subnet_addresses("127.0.0.0/28", 9464).value();
  ASSERT_EQ(small.size(), 14u);
  EXPECT_EQ(small.front(), "127.0.0.1:9464");
  EXPECT_EQ(small.back(), "127.0.0.14:9464");
  EXPECT_EQ(subnet_addresses("10.0.0.7/32", 80).value(), std::vector<std::string>{"10.0.0.7:80"});
  EXPECT_EQ(subnet_addresses("10.0.0.6/31", 80).value().size(), 2u);
  EXPECT_EQ(subnet_addresses("10.1.0.0/16", 9464).value().size(), 65534u);
  for (const char* bad : {"10.0.0.0/15", "10.0.0.0/8", "0.0.0.0/0", "10.0.0.1/24", "10.0.0.0", "10.0.0/24", "256.1.1.0/24",
                          "10.0.0.0/33", "10.0.0.0/-1", "10.0.0.0/2a", "a.b.c.d/24", ""}) {
    const auto r = subnet_addresses(bad, 9464);
    EXPECT_FALSE(r.has_value()) << bad;
    if (!r) EXPECT_EQ(r.error().kind, ErrorKind::invalid_input) << bad;
  }
  EXPECT_FALSE(subnet_addresses("10.0.0.0/24", 0).has_value());
}

TEST(FleetScanExporters, AnswersRefusalsAndGarbage) {
  const std::string registry = to_json(hypothetical_registry("1xH100-SXM-80GB").value());
  const RegistryFetcher fetch = [&](const std::string& address, const ScanOptions&) {
    FetchedRegistry r;
    if (address.starts_with("10.0.0.1:")) r.body = registry;
    else if (address.starts_with("10.0.0.2:")) r.body = "<html>not json</html>";
    else if (address.starts_with("10.0.0.3:")) r.body = std::string(2 << 20, ' ');
    else {
      r.nothing_there = true;
      r.error = NodeError{NodeErrorKind::failed, address + ": Connection refused"};
    }
    return r;
  };
  ScanOptions options;
  options.max_output_bytes = 1 << 20;
  const auto addresses = subnet_addresses("10.0.0.0/29", 9464).value();
  const Fleet swept = scan_exporters(addresses, fetch, options, /*skip_silent=*/true);
  ASSERT_EQ(swept.nodes.size(), 3u);
  EXPECT_EQ(swept.nodes[0].host, "10.0.0.1");
  EXPECT_TRUE(swept.nodes[0].registry.has_value());
  EXPECT_EQ(swept.nodes[1].error->kind, NodeErrorKind::parse_error);
  EXPECT_EQ(swept.nodes[2].error->kind, NodeErrorKind::too_large);
  ASSERT_EQ(swept.warnings.size(), 1u);
  EXPECT_EQ(swept.warnings[0], "3 of 6 addresses answered nothing (no exporter listening, or the deadline passed)");
  const std::vector<std::string> listed = {"10.0.0.1:9464", "10.0.0.9:9464"};
  const Fleet asked = scan_exporters(listed, fetch, options);
  ASSERT_EQ(asked.nodes.size(), 2u);
  EXPECT_TRUE(asked.nodes[1].error.has_value());  // listed by hand: a refusal is a node error
  EXPECT_TRUE(asked.warnings.empty());
}

// The real kubectl outputs of tests/fleet/kubernetes/ (SOURCE.md there): a
// node with NFD labels and no exporter pod, and DaemonSet pods on nodes the
// list leaves out.
TEST(FleetKubernetes, RealNodeAndPodListsThatDoNotMeet) {
  const auto dir = testing::fixtures_root().parent_path() / "tests" / "fleet" / "kubernetes";
  const std::string nodes_json = testing::read_file(dir / "nodes.json");
  const std::string pods_json = testing::read_file(dir / "pods.json");
  const auto nodes = parse_kubectl_nodes(nodes_json);
  ASSERT_TRUE(nodes) << nodes.error().message;
  ASSERT_EQ(nodes->size(), 1u);
  EXPECT_EQ(nodes->front().name, "nori");
  EXPECT_TRUE(nodes->front().ready);
  EXPECT_EQ(nodes->front().internal_ip, std::optional<std::string>("0.202.61.70"));
  const auto& labels = nodes->front().feature_labels;
  EXPECT_NE(std::find(labels.begin(), labels.end(), std::pair<std::string, std::string>{
                                                         "feature.node.kubernetes.io/pci-10de.present", "true"}),
            labels.end());
  const auto pods = parse_kubectl_pods(pods_json);
  ASSERT_TRUE(pods) << pods.error().message;
  ASSERT_EQ(pods->size(), 3u);
  EXPECT_EQ(pods->front().node, "epm-node2");
  EXPECT_EQ(pods->front().phase, "Running");
  EXPECT_FALSE(parse_kubectl_nodes(pods_json));  // a pod list is no node list
  EXPECT_FALSE(parse_kubectl_pods(nodes_json));

  KubernetesScan where;
  where.namespace_name = "kube-system";
  where.pod_selector = "k8s-app=calico-node";
  FixtureBuilder f;
  f.command({"kubectl", "get", "nodes", "-o", "json"}, nodes_json);
  f.command({"kubectl", "get", "pods", "-n", "kube-system", "-l", "k8s-app=calico-node", "-o", "json"}, pods_json);
  const auto system = FixtureSystem::open(f.write());
  ASSERT_TRUE(system) << system.error().message;
  const auto fleet = scan_kubernetes(**system, where);
  ASSERT_TRUE(fleet) << fleet.error().message;
  ASSERT_EQ(fleet->nodes.size(), 1u);
  ASSERT_TRUE(fleet->nodes[0].error.has_value());
  EXPECT_EQ(fleet->nodes[0].error->kind, NodeErrorKind::no_answer);
  EXPECT_EQ(fleet->nodes[0].error->message, "nori: no running pod of k8s-app=calico-node in namespace kube-system");
  ASSERT_EQ(fleet->warnings.size(), 1u);
  EXPECT_EQ(fleet->warnings[0], "3 running pod(s) of k8s-app=calico-node are on nodes the node list (and its selector) leaves out");
}

// With a registry port, each pod's hwaccel serve is asked GET /registry
// through the API server's pod proxy; a pod name that could change the
// path is never put in it.
TEST(FleetKubernetes, PodsAskedForTheirRegistryThroughTheApiServer) {
  const std::string nodes = R"({"kind": "NodeList", "items": [
      {"kind": "Node", "metadata": {"name": "gpu-a"}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}},
      {"kind": "Node", "metadata": {"name": "gpu-b"}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}]})";
  const std::string pods = R"({"kind": "PodList", "items": [
      {"kind": "Pod", "metadata": {"name": "hwaccel-exporter-x1", "namespace": "hwaccel"}, "spec": {"nodeName": "gpu-a"},
       "status": {"phase": "Running"}},
      {"kind": "Pod", "metadata": {"name": "../../secrets/x", "namespace": "hwaccel"}, "spec": {"nodeName": "gpu-b"},
       "status": {"phase": "Running"}}]})";
  FixtureBuilder f;
  f.command({"kubectl", "get", "nodes", "-o", "json"}, nodes);
  f.command({"kubectl", "get", "pods", "-n", "hwaccel", "-l", "app.kubernetes.io/name=hwaccel-exporter", "-o", "json"}, pods);
  f.command({"kubectl", "get", "--raw", "/api/v1/namespaces/hwaccel/pods/hwaccel-exporter-x1:9464/proxy/registry"},
            to_json(hypothetical_registry("8xH100-SXM-80GB").value()));
  const auto system = FixtureSystem::open(f.write());
  ASSERT_TRUE(system) << system.error().message;
  KubernetesScan where;
  where.registry_port = 9464;
  const auto fleet = scan_kubernetes(**system, where);
  ASSERT_TRUE(fleet) << fleet.error().message;
  ASSERT_EQ(fleet->nodes.size(), 2u);
  ASSERT_TRUE(fleet->nodes[0].registry.has_value()) << fleet->nodes[0].error->message;
  EXPECT_EQ(fleet->nodes[0].registry->devices().size(), 8u);
  EXPECT_EQ(fleet->nodes[0].source, "kubernetes:hwaccel-exporter-x1:9464/registry");
  ASSERT_TRUE(fleet->nodes[1].error.has_value());
  EXPECT_EQ(fleet->nodes[1].error->message,
            "gpu-b: pod \"../../secrets/x\" in \"hwaccel\" is not a Kubernetes name; not asked");
}

// Nodes and pods that meet (hand-written in the same shape): each node asked
// through its pod with kubectl exec; one pod's exec fails, one node has none.
TEST(FleetKubernetes, EachNodeAskedThroughItsPod) {
  const auto node = [](const char* name) {
    return text::cat(R"({"kind": "Node", "metadata": {"name": ")", name,
                     R"(", "labels": {"feature.node.kubernetes.io/pci-10de.present": "true", "kubernetes.io/os": "linux"}},)",
                     R"( "status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],)",
                     R"( "conditions": [{"type": "Ready", "status": "True"}]}})");
  };
  const auto pod = [](const char* name, const char* on, const char* phase) {
    return text::cat(R"({"kind": "Pod", "metadata": {"name": ")", name, R"(", "namespace": "hwaccel"}, "spec": {"nodeName": ")",
                     on, R"("}, "status": {"phase": ")", phase, R"("}})");
  };
  const std::string nodes = text::cat(R"({"apiVersion": "v1", "kind": "List", "items": [)", node("gpu-a"), ", ", node("gpu-b"),
                                      ", ", node("gpu-c"), "]}");
  const std::string pods = text::cat(R"({"apiVersion": "v1", "kind": "List", "items": [)",
                                     pod("hwaccel-exporter-x1", "gpu-a", "Running"), ", ",
                                     pod("hwaccel-exporter-x2", "gpu-b", "Running"), ", ",
                                     pod("hwaccel-exporter-x3", "gpu-c", "Pending"), "]}");
  FixtureBuilder f;
  f.command({"kubectl", "get", "nodes", "-o", "json", "-l", "nvidia.com/gpu.present=true"}, nodes);
  f.command({"kubectl", "get", "pods", "-n", "hwaccel", "-l", "app.kubernetes.io/name=hwaccel-exporter", "-o", "json"}, pods);
  f.command({"kubectl", "exec", "-n", "hwaccel", "hwaccel-exporter-x1", "--", "hwaccel", "detect", "--no-timings"},
            to_json(hypothetical_registry("8xH100-SXM-80GB").value()));
  f.command({"kubectl", "exec", "-n", "hwaccel", "hwaccel-exporter-x2", "--", "hwaccel", "detect", "--no-timings"}, "", 1,
            "error: unable to upgrade connection: container not found (\"hwaccel\")\n");
  const auto system = FixtureSystem::open(f.write());
  ASSERT_TRUE(system) << system.error().message;
  KubernetesScan where;
  where.node_selector = "nvidia.com/gpu.present=true";
  const auto fleet = scan_kubernetes(**system, where);
  ASSERT_TRUE(fleet) << fleet.error().message;
  ASSERT_EQ(fleet->nodes.size(), 3u);
  EXPECT_EQ(fleet->nodes[0].host, "gpu-a");
  ASSERT_TRUE(fleet->nodes[0].registry.has_value());
  EXPECT_EQ(fleet->nodes[0].source, "kubernetes:hwaccel-exporter-x1");
  EXPECT_EQ(fleet->nodes[0].registry->devices().size(), 8u);
  // The node list's NFD labels travel with the node, through the document too.
  const std::vector<std::pair<std::string, std::string>> nfd{{"feature.node.kubernetes.io/pci-10de.present", "true"}};
  EXPECT_EQ(fleet->nodes[0].labels, nfd);
  EXPECT_EQ(fleet->nodes[2].labels, nfd);  // also for a node that did not answer
  const auto reread = fleet_from_json(to_json(*fleet));
  ASSERT_TRUE(reread) << reread.error().message;
  EXPECT_EQ(reread->nodes[0].labels, nfd);
  ASSERT_TRUE(fleet->nodes[1].error.has_value());
  EXPECT_EQ(fleet->nodes[1].error->kind, NodeErrorKind::failed);
  EXPECT_NE(fleet->nodes[1].error->message.find("container not found"), std::string::npos) << fleet->nodes[1].error->message;
  ASSERT_TRUE(fleet->nodes[2].error.has_value());  // its pod is Pending
  EXPECT_EQ(fleet->nodes[2].error->kind, NodeErrorKind::no_answer);
  EXPECT_TRUE(fleet->warnings.empty());

  // kubectl that cannot list is an error of the scan, not a fleet.
  FixtureBuilder broken;
  broken.command({"kubectl", "get", "nodes", "-o", "json"}, "", 1, "error: You must be logged in to the server (Unauthorized)\n");
  const auto refused = FixtureSystem::open(broken.write());
  ASSERT_TRUE(refused);
  const auto none = scan_kubernetes(**refused, KubernetesScan{});
  ASSERT_FALSE(none.has_value());
  EXPECT_NE(none.error().message.find("Unauthorized"), std::string::npos) << none.error().message;
}

}  // namespace
}  // namespace hwaccel
