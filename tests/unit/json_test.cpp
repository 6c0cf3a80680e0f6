// Canonical JSON writing and the registry's JSON round trip.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <charconv>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

import hwaccel;

namespace {

using namespace hwaccel;

TEST(JsonWriter, EscapesAndRepairsStrings) {
  std::string out;
  json::append_string(out, "a\"b\\c\n\t\x01");
  EXPECT_EQ(out, R"("a\"b\\c\n\t\u0001")");
  out.clear();
  json::append_string(out, "caf\xc3\xa9");  // valid UTF-8 kept
  EXPECT_EQ(out, "\"caf\xc3\xa9\"");
  out.clear();
  json::append_string(out, std::string_view("\xff\xfe ok \xc3", 7));  // invalid bytes replaced
  EXPECT_EQ(out, "\"\xef\xbf\xbd\xef\xbf\xbd ok \xef\xbf\xbd\"");
  out.clear();
  json::append_string(out, "\xed\xa0\x80");  // a UTF-16 surrogate is not UTF-8
  EXPECT_EQ(out, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
}

TEST(JsonWriter, CompactAndPretty) {
  json::Writer compact;
  compact.begin_object().field("a", std::uint64_t{1}).key("b").begin_array().value(true).null().end_array().end_object();
  EXPECT_EQ(compact.str(), R"({"a":1,"b":[true,null]})");
  json::Writer pretty(true);
  pretty.begin_object().field("a", 2.5).key("e").begin_array().end_array().end_object();
  EXPECT_EQ(pretty.str(), "{\n  \"a\": 2.5,\n  \"e\": []\n}");
}

TEST(JsonWriter, NonFiniteNumbersBecomeNull) {
  json::Writer w;
  w.begin_array().value(std::numeric_limits<double>::infinity()).value(std::nan("")).value(0.1).end_array();
  EXPECT_EQ(w.str(), "[null,null,0.1]");
}

// The writer's own number formatting must give std::to_chars's text: the
// shortest that reads back, fixed or scientific as to_chars chooses.
std::string to_chars_text(double v) {
  char buf[64];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

template <class Int>
std::string to_chars_text(Int v) {
  char buf[32];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

std::string written(double v) {
  char buf[32];
  return std::string(buf, json::format_number(buf, v));
}

template <class Int>
std::string written(Int v) {
  char buf[32];
  return std::string(buf, json::format_number(buf, v));
}

TEST(JsonWriter, NumbersAreWrittenAsToCharsWritesThem) {
  std::mt19937_64 random(20261128);
  // Integers of every length, the edges of each power of ten and of the types.
  std::vector<std::uint64_t> unsigned_values{0, 1, 9, 10, 99, 100, 999, 1000, 9999, 10000, 99999999, 100000000,
                                             9999999999999999ull, 10000000000000000ull,
                                             std::numeric_limits<std::uint64_t>::max()};
  for (int digits = 1; digits <= 19; ++digits)
    for (int i = 0; i < 200; ++i) {
      std::uint64_t v = random() % 9 + 1;
      for (int d = 1; d < digits; ++d) v = v * 10 + random() % 10;
      unsigned_values.push_back(v);
    }
  for (const std::uint64_t v : unsigned_values) {
    ASSERT_EQ(written(v), to_chars_text(v)) << v;
    const auto signed_value = static_cast<std::int64_t>(v);
    ASSERT_EQ(written(signed_value), to_chars_text(signed_value)) << signed_value;
  }
  EXPECT_EQ(written(std::numeric_limits<std::int64_t>::min()), "-9223372036854775808");

  // Doubles: whole numbers, a few decimals (watts, GT/s), many decimals
  // (derived bandwidths), tiny and huge magnitudes, negative zero.
  std::vector<double> doubles{0.0, -0.0, 1.0, -1.0, 0.1, 0.5, 2.5, 16.0, 32.0, 71.2, 99999.0, 99999.9999, 100000.0,
                              1e5 + 0.5, 1e-7, 5e-324, 1.7976931348623157e308, 63.01538461538462, 478.116, 0.001,
                              0.0001, 123456789.0, 1e21, -71.25, 9.0005, 26.562};
  std::uniform_real_distribution<double> magnitude(-3, 7);
  for (int i = 0; i < 20000; ++i) {
    const double v = std::pow(10.0, magnitude(random));
    doubles.push_back(v);
    doubles.push_back(-v);
    for (const double scale : {1.0, 10.0, 100.0, 1000.0, 10000.0}) doubles.push_back(std::round(v * scale) / scale);
  }
  for (const double v : doubles) ASSERT_EQ(written(v), to_chars_text(v)) << to_chars_text(v);
  EXPECT_EQ(written(std::nan("")), "null");
}

TEST(JsonWriter, PlainStringsOfEveryLengthAreCopiedAndOthersEscaped) {
  // Strings of 0-40 bytes, plain and with one byte to escape or repair at
  // each position: the word-at-a-time copy and the byte-wise path agree.
  for (std::size_t n = 0; n <= 40; ++n) {
    std::string plain;
    for (std::size_t i = 0; i < n; ++i) plain += static_cast<char>('a' + i % 26);
    std::string out;
    json::append_string(out, plain);
    ASSERT_EQ(out, "\"" + plain + "\"");
    for (std::size_t at = 0; at < n; ++at)
      for (const auto& [bad, escaped] : std::vector<std::pair<char, std::string>>{
               {'"', "\\\""}, {'\\', "\\\\"}, {'\n', "\\n"}, {'\x01', "\\u0001"}, {'\xff', "\xef\xbf\xbd"}}) {
        std::string with = plain;
        with[at] = bad;
        out.clear();
        json::append_string(out, with);
        ASSERT_EQ(out, "\"" + plain.substr(0, at) + escaped + plain.substr(at + 1) + "\"") << n << " " << at;
      }
  }
}

Inventory rich_inventory() {
  Inventory inv;
  DeviceProfile gpu;
  gpu.id = "cuda:0";
  gpu.backend = Backend::cuda;
  gpu.family = Family::gpu;
  gpu.name = "NVIDIA H100 80GB HBM3";
  gpu.vendor = "NVIDIA";
  gpu.uuid = "GPU-4d6b1a5c-0000-0000-0000-000000000000";
  gpu.pci_bus_id = "0000:18:00.0";
  gpu.numa_node = 0;
  gpu.cpu_affinity = "0-47";
  gpu.memory_bytes = 85520809984ull;
  gpu.memory_free_bytes = 84500000000ull;
  gpu.memory_used_bytes = 1020809984ull;
  gpu.memory_kind = MemoryKind::dedicated;
  gpu.memory_bandwidth_gbps = 3352.3;
  gpu.driver_version = "565.57.01";
  gpu.compute_capability = "9.0";
  gpu.architecture = "Hopper";
  gpu.compute_units = 132;
  gpu.pcie = PcieLink{32.0, 32.0, 16, 16};
  gpu.power_watts = 71.5;
  gpu.power_limit_watts = 700;
  gpu.temperature_c = 31;
  gpu.utilization_percent = 0;
  gpu.runtime_index = 1;
  gpu.spec_id = "h100-sxm5-80gb";
  gpu.properties = {{"mig_mode", "Enabled"}};
  DevicePartition mig;
  mig.id = "cuda:0/mig:0";
  mig.profile = "3g.40gb";
  mig.uuid = "MIG-1234";
  mig.gpu_instance_id = 1;
  mig.compute_instance_id = 0;
  mig.memory_bytes = 40ull << 30;
  mig.compute_units = 60;
  gpu.partitions.push_back(mig);
  inv.devices.push_back(gpu);
  DeviceProfile cpu;
  cpu.id = "cpu:0";
  cpu.name = "Cpu \"quoted\" \xff";
  cpu.memory_bytes = 1ull << 40;
  inv.devices.insert(inv.devices.begin(), cpu);
  inv.links.push_back(DeviceLink{"cuda:0", "cuda:1", LinkKind::nvlink, 18, std::nullopt, 450.0, "nvidia-smi topo -m"});
  inv.interconnects.push_back(Interconnect{"nvswitch", "NVSwitch", {"cuda:0", "cuda:1"}, 450.0, 4, "sysfs"});
  CpuInfo ci;
  ci.model_name = "Intel(R) Xeon(R) Platinum 8480+";
  ci.vendor = "Intel";
  ci.architecture = "x86_64";
  ci.sockets = 2;
  ci.physical_cores = 112;
  ci.logical_cores = 224;
  ci.isa_features = {"amx_bf16", "avx512f"};
  ci.numa_nodes = {NumaNode{0, "0-55,112-167", 1ull << 39}, NumaNode{1, "56-111,168-223", std::nullopt}};
  ci.memory_total_bytes = 1ull << 40;
  ci.memory_available_bytes = 1ull << 39;
  ci.cgroup_memory_limit_bytes = 1ull << 34;
  inv.system.cpu = ci;
  Environment env;
  env.container = "docker";
  env.kubernetes = true;
  env.kubernetes_namespace = "ml";
  env.wsl = true;
  env.wsl_version = 2;
  env.gpu_paravirtualization = true;
  env.virtual_machine = true;
  env.hypervisor = "kvm";
  env.cloud = CloudInstance{"aws", "p5.48xlarge", "p5.48xlarge"};
  env.visible_devices_env = {{"CUDA_VISIBLE_DEVICES", "1,0"}};
  inv.system.environment = env;
  inv.system.storage.push_back(StorageDevice{"nvme0n1", StorageKind::nvme, 3840755982336ull, "SAMSUNG MZ", "0000:01:00.0", 0,
                                             6.9, "pcie_link", std::nullopt, {"/", "/models"}});
  inv.system.storage.push_back(StorageDevice{"10.0.0.10:/export/models", StorageKind::network, std::nullopt, std::nullopt,
                                             std::nullopt, std::nullopt, std::nullopt, "", "nfs4", {"/models/shared"}});
  NetworkPort port;
  port.device = "mlx5_0";
  port.port = 2;
  port.kind = "infiniband";
  port.state = "ACTIVE";
  port.rate_gbps = 400;
  port.link_layer = "InfiniBand";
  port.pci_bus_id = "0000:19:00.0";
  port.numa_node = 1;
  port.netdev = "ib0";
  port.near_devices = {"cuda:0"};
  port.phys_state = "LinkUp";
  port.driver = "mlx5_core";
  port.affinity = LinkKind::pcie_switch;
  inv.system.network.push_back(port);
  inv.warnings.push_back(Warning{"cuda", WarningKind::degraded, "nvidia-smi rejected compute_cap; retried without it"});
  inv.timings.push_back(BackendTiming{"cpu", std::chrono::microseconds(42)});
  inv.timings.push_back(BackendTiming{"cuda", std::chrono::microseconds(10345)});
  return inv;
}

TEST(RegistryJson, RoundTripsEveryField) {
  const AcceleratorRegistry registry(rich_inventory());
  const std::string text = to_json(registry);
  auto back = registry_from_json(text);
  ASSERT_TRUE(back) << back.error().message;
  // The invalid byte in the CPU name is repaired on the way out, so compare JSON.
  EXPECT_EQ(to_json(*back), text);
  EXPECT_EQ(back->devices()[1], registry.devices()[1]);
  EXPECT_EQ(back->system().environment, registry.system().environment);
  EXPECT_EQ(back->system().storage, registry.system().storage);
  EXPECT_EQ(back->system().network, registry.system().network);
  EXPECT_EQ(back->links()[0], registry.links()[0]);
  EXPECT_EQ(back->timings()[1].elapsed.count(), 10345);
  EXPECT_EQ(to_json(*back, JsonOptions{.pretty = true}), to_json(registry, JsonOptions{.pretty = true}));
}

// The same document with every object's members in reverse order (arrays
// keep theirs): the reader's in-order pass then matches nothing, and every
// member is found by looking its key up.
std::string with_members_reversed(simdjson::dom::element e) {
  if (e.is_object()) {
    // Held by name: a loop over get_object().value() would walk a temporary.
    const simdjson::dom::object fields = e.get_object().value();
    std::vector<std::string> members;
    for (auto [key, value] : fields) {
      EXPECT_EQ(std::string_view(key).find_first_of("\"\\"), std::string_view::npos) << key;
      members.push_back("\"" + std::string(key) + "\":" + with_members_reversed(value));
    }
    std::string out = "{";
    for (auto it = members.rbegin(); it != members.rend(); ++it) out += (it == members.rbegin() ? "" : ",") + *it;
    return out + "}";
  }
  if (e.is_array()) {
    std::string out = "[";
    bool first = true;
    const simdjson::dom::array items = e.get_array().value();
    for (auto item : items) {
      out += (first ? "" : ",") + with_members_reversed(item);
      first = false;
    }
    return out + "]";
  }
  return simdjson::minify(e);
}

TEST(RegistryJson, MembersInAnyOrderReadTheSame) {
  const AcceleratorRegistry registry(rich_inventory());
  const JsonOptions stable{.pretty = false, .include_timings = false};
  const std::string text = to_json(registry, stable);
  simdjson::dom::parser parser;
  const std::string reversed = with_members_reversed(parser.parse(text).value());
  ASSERT_NE(reversed, text);
  auto back = registry_from_json(reversed);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(to_json(*back, stable), text);
}

TEST(RegistryJson, OutputIsCanonical) {
  const AcceleratorRegistry registry(rich_inventory());
  const std::string a = to_json(registry, JsonOptions{.pretty = false, .include_timings = false});
  EXPECT_EQ(a.find("timings_us"), std::string::npos);
  EXPECT_EQ(a, to_json(AcceleratorRegistry(rich_inventory()), JsonOptions{.pretty = false, .include_timings = false}));
  EXPECT_LT(a.find("\"id\":\"cpu:0\""), a.find("\"id\":\"cuda:0\""));
  // Unknown values are left out rather than invented.
  EXPECT_EQ(a.find("\"uuid\":null"), std::string::npos);
}

TEST(RegistryJson, MalformedInputNamesTheField) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "not valid JSON"},
      {"[1]", "must be an object"},
      {R"({"devices": []})", "schema_version"},
      {R"({"schema_version": 1, "devices": {}})", "devices must be an array"},
      {R"({"schema_version": 1, "devices": [{"backend": "cuda"}]})", "devices[0] has no \"id\""},
      {R"({"schema_version": 1, "devices": [{"id": "x", "backend": "nvidia"}]})", "devices[0].backend has unknown value"},
      {R"({"schema_version": 1, "devices": [{"id": "x", "backend": "cuda", "memory_bytes": -1}]})", "devices[0].memory_bytes"},
      {R"({"schema_version": 1, "devices": [{"id": "x", "backend": "cuda", "numa_node": "zero"}]})", "devices[0].numa_node"},
      {R"({"schema_version": 1, "warnings": [{"kind": "exploded"}]})", "warnings[0].kind"},
      {R"({"schema_version": 1, "system": {"network": [{"affinity": "next door"}]}})",
       "system.network[0].affinity has unknown value"},
      {R"({"schema_version": 1, "system": {"storage": [{"mount_points": "/models"}]}})",
       "system.storage[0].mount_points must be an array of strings"},
  };
  for (const auto& [json, expected] : cases) {
    auto r = registry_from_json(json);
    ASSERT_FALSE(r) << json;
    EXPECT_EQ(r.error().kind, ErrorKind::parse_error);
    EXPECT_NE(r.error().message.find(expected), std::string::npos) << json << " -> " << r.error().message;
  }
}

TEST(RegistryJson, NewerSchemaReadsWithAWarningAndUnknownFieldsAreSkipped) {
  auto r = registry_from_json(
      R"({"schema_version": 7, "future": {"x": 1}, "devices": [{"id": "cuda:0", "backend": "cuda", "hologram": true, "memory_bytes": 1}]})");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->schema_version(), 7u);
  ASSERT_EQ(r->devices().size(), 1u);
  EXPECT_EQ(r->devices()[0].memory_bytes, 1u);
  ASSERT_EQ(r->warnings().size(), 1u);
  EXPECT_EQ(r->warnings()[0].kind, WarningKind::unsupported);
}

}  // namespace
