// DNS-SD as a fleet source (modules/fleet/mdns.cpp): hwaccel-mdns's browse
// output read, turned into exporters, and a browse replayed through the
// System seam. The daemons themselves: tests/fleet/fleet_mdns.py.
#include <gtest/gtest.h>

#include <chrono>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

import hwaccel;

#include "module_helpers.hpp"

namespace hwaccel {
namespace fleet_mdns_test {

using testing::FixtureBuilder;

std::string recorded_browse() {
  return testing::read_file(testing::fixtures_root().parent_path() / "tests" / "fleet" / "mdns" / "browse.jsonl");
}

std::string service_line(std::string_view name, std::string_view protocol, std::string_view address, int port,
                         std::string_view host = "gpu-node-7.local", std::string_view txt = R"({"path":"/registry"})") {
  return text::cat(R"({"name":")", name, R"(","type":"_hwaccel._tcp","domain":"local","interface":"eth0","protocol":")",
                   protocol, R"(","host":")", host, R"(","address":")", address, R"(","port":)", port, R"(,"txt":)", txt,
                   "}\n");
}

// The real browse: two exporters on one host, the second renamed by Avahi.
TEST(FleetMdns, RecordedBrowseIsTwoExportersOnOneHost) {
  const auto services = parse_mdns_services(recorded_browse());
  ASSERT_TRUE(services) << services.error().message;
  ASSERT_EQ(services->size(), 2u);
  EXPECT_EQ((*services)[0].name, "hwaccel on gpu-node-7 #2");
  EXPECT_EQ((*services)[0].type, "_hwaccel._tcp");
  EXPECT_EQ((*services)[0].interface, "lo");
  EXPECT_FALSE((*services)[0].ipv6);
  EXPECT_EQ((*services)[0].port, 9465);
  const std::vector<std::pair<std::string, std::string>> txt{{"version", "0.1.0"}, {"path", "/registry"}};
  EXPECT_EQ((*services)[0].txt, txt);
  const auto targets = mdns_exporter_targets(*services);
  // One host announcing two: each node named by host and port.
  const std::vector<ExporterTarget> want{{"127.0.0.1:9464", "gpu-node-7:9464"}, {"127.0.0.1:9465", "gpu-node-7:9465"}};
  EXPECT_EQ(targets, want);
}

TEST(FleetMdns, OneAddressPerInstanceIpv4First) {
  const std::string lines = service_line("hwaccel on a", "ipv6", "fe80::1", 9464, "a.local") +
                            service_line("hwaccel on a", "ipv4", "192.0.2.1", 9464, "a.local") +
                            service_line("hwaccel on b", "ipv6", "fe80::2", 9464, "b.local") +
                            service_line("hwaccel on c", "ipv6", "fe80::3", 9464, "c.local") +
                            service_line("hwaccel on c", "ipv6", "2001:db8::3", 9464, "c.local") +
                            service_line("metrics only", "ipv4", "192.0.2.4", 9100, "d.local", R"({"path":"/metrics"})") +
                            service_line("no txt", "ipv4", "192.0.2.5", 9464, "e.local", "{}");
  const auto services = parse_mdns_services(lines);
  ASSERT_TRUE(services) << services.error().message;
  ASSERT_EQ(services->size(), 7u);
  const std::vector<ExporterTarget> want{{"192.0.2.1:9464", "a"},
                                         {"[fe80::2%eth0]:9464", "b"},  // link-local: with its interface
                                         {"[2001:db8::3]:9464", "c"},   // global before link-local
                                         {"192.0.2.5:9464", "e"}};      // no path: taken as /registry
  EXPECT_EQ(mdns_exporter_targets(*services), want);

  // A host name a fleet document cannot hold gives way to the address.
  const auto odd = parse_mdns_services(service_line("x", "ipv4", "192.0.2.9", 9464, "-rf evil.local"));
  ASSERT_TRUE(odd) << odd.error().message;
  EXPECT_EQ(mdns_exporter_targets(*odd), (std::vector<ExporterTarget>{{"192.0.2.9:9464", "192.0.2.9:9464"}}));
}

TEST(FleetMdns, HostileLinesAreErrorsThatNameTheLine) {
  const std::string good = service_line("hwaccel on a", "ipv4", "192.0.2.1", 9464);
  const auto expect_error = [&](const std::string& bad, std::string_view says) {
    const auto parsed = parse_mdns_services(good + "\n" + bad);
    ASSERT_FALSE(parsed) << bad;
    EXPECT_EQ(parsed.error().kind, ErrorKind::parse_error);
    EXPECT_NE(parsed.error().message.find("line 3"), std::string::npos) << parsed.error().message;
    EXPECT_NE(parsed.error().message.find(says), std::string::npos) << parsed.error().message;
  };
  expect_error("{\"name\": \"x\"", "not JSON");
  expect_error("[1, 2]", "not an object");
  expect_error(service_line("x", "ipv4", "192.0.2.1", 0), "no port from 1 to 65535");
  expect_error(service_line("x", "ipv4", "192.0.2.1", 65536), "no port from 1 to 65535");
  expect_error(service_line("x", "ipx", "192.0.2.1", 1), "neither ipv4 nor ipv6");
  expect_error(R"({"name":"x","type":"_hwaccel._tcp"})", "no \"domain\" text");
  expect_error(service_line("x", "ipv4", "192.0.2.1/evil", 1), "is no ipv4 address");
  expect_error(service_line("x", "ipv6", "fe80::1]:1@", 1), "is no ipv6 address");
  expect_error(service_line(std::string(2000, 'n'), "ipv4", "192.0.2.1", 1), "over 1024 bytes");
  expect_error(service_line("x", "ipv4", "192.0.2.1", 1, "h.local", R"({"path":7})"), "not text");
  // A flag without a value is null, which reads as an empty value.
  const auto flag = parse_mdns_services(service_line("x", "ipv4", "192.0.2.1", 1, "h.local", R"({"tls":null})"));
  ASSERT_TRUE(flag) << flag.error().message;
  EXPECT_EQ(flag->front().txt.front(), (std::pair<std::string, std::string>{"tls", ""}));
  EXPECT_TRUE(parse_mdns_services("")->empty());
  EXPECT_TRUE(parse_mdns_services("\n  \n")->empty());
}

TEST(FleetMdns, BrowseReplaysThroughTheSystem) {
  FixtureBuilder f;
  f.command({"hwaccel-mdns", "browse", "_hwaccel._tcp", "--timeout-ms", "2500"}, recorded_browse(), 0,
            "hwaccel-mdns: service \"x\" on lo not resolved: Timeout reached\n");
  f.command({"hwaccel-mdns", "browse", "_hwaccel._tcp", "--timeout-ms", "100"}, "", 1,
            "hwaccel-mdns: cannot reach the Avahi daemon (avahi-daemon, over the D-Bus system bus): Daemon not running\n");
  f.env("HWACCEL_MDNS_HELPER", "/opt/hwaccel/libexec/hwaccel-mdns");
  const auto system = FixtureSystem::open(f.write());
  ASSERT_TRUE(system) << system.error().message;
  EXPECT_EQ(mdns_helper(**system), "/opt/hwaccel/libexec/hwaccel-mdns");

  MdnsBrowse browse;
  browse.wait = std::chrono::milliseconds(2500);
  const auto found = browse_mdns(**system, browse);
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(found->services.size(), 2u);
  const std::vector<std::string> warned{"mDNS: hwaccel-mdns: service \"x\" on lo not resolved: Timeout reached"};
  EXPECT_EQ(found->warnings, warned);

  browse.wait = std::chrono::milliseconds(100);
  const auto refused = browse_mdns(**system, browse);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::io_error);
  EXPECT_EQ(refused.error().message,
            "hwaccel-mdns: cannot reach the Avahi daemon (avahi-daemon, over the D-Bus system bus): Daemon not running");

  browse.wait = std::chrono::milliseconds(0);
  ASSERT_FALSE(browse_mdns(**system, browse));
  EXPECT_EQ(browse_mdns(**system, browse).error().kind, ErrorKind::invalid_input);
}

TEST(FleetMdns, ExportersAskedUnderTheirNodeNames) {
  const std::vector<ExporterTarget> targets{{"192.0.2.1:9464", "a"}, {"192.0.2.2:9464", "b"}};
  const auto registry = to_json(hypothetical_registry("8xH100-SXM-80GB").value());
  const RegistryFetcher fetch = [&](const std::string& address, const ScanOptions&) {
    FetchedRegistry got;
    if (address == "192.0.2.1:9464") got.body = registry;
    else got.error = NodeError{NodeErrorKind::failed, "connection refused"};
    return got;
  };
  const Fleet fleet = scan_exporters(std::span<const ExporterTarget>(targets), fetch);
  ASSERT_EQ(fleet.nodes.size(), 2u);
  EXPECT_EQ(fleet.nodes[0].host, "a");
  EXPECT_EQ(fleet.nodes[0].source, "http:192.0.2.1:9464");
  ASSERT_TRUE(fleet.nodes[0].registry.has_value());
  EXPECT_EQ(fleet.nodes[1].host, "b");
  EXPECT_TRUE(fleet.nodes[1].error.has_value());
}

}  // namespace fleet_mdns_test
}  // namespace hwaccel
