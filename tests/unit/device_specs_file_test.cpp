// User device-spec files (--device-specs, $HWACCEL_DEVICE_SPECS) and the
// figures derived for detected devices no spec matches.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
#include <iostream>

#include "../test_support.hpp"

import hwaccel;

namespace {

using namespace hwaccel;

using hwaccel::testing::GiB;

constexpr std::string_view one_device = R"({"devices": [
  {"id": "my-gpu-48gb", "name": "MyGPU-48GB", "product": "Example MyGPU 48GB", "vendor": "Example",
   "backend": "cuda", "family": "gpu", "architecture": "Ada Lovelace", "compute_capability": "8.9",
   "memory_gib": 48, "memory_bandwidth_gbps": 960, "bf16_tflops": 180, "fp16_tflops": 180, "fp8_tflops": 360,
   "int8_tops": 360, "fp32_tflops": 90,
   "fabric": {"kind": "nvlink", "name": "NVLink bridge", "bandwidth_gbps": 56, "domain_size": 2},
   "match": "MyGPU", "pci_vendor_id": "0x10de", "pci_device_ids": ["0x1234"], "source": "https://example.com/mygpu"}]})";

DeviceSpecSet parse(std::string_view json) {
  auto r = parse_device_specs(json, "test.json");
  EXPECT_TRUE(r) << r.error().message;
  return r ? std::move(*r) : DeviceSpecSet();
}

// The error a one-entry file gives with `field` set to `value` (raw JSON).
// (The entry's own value of `field` is left out, unless `twice`.)
Error error_with(std::string_view field, std::string_view value, bool twice = false) {
  const std::pair<std::string_view, std::string_view> base[] = {
      {"id", "\"x-gpu\""},         {"name", "\"X-GPU\""},  {"vendor", "\"X\""},
      {"backend", "\"rocm\""},     {"architecture", "\"RDNA3\""}, {"memory_gib", "24"},
      {"memory_bandwidth_gbps", "800"}};
  std::string json = R"({"devices": [{)";
  for (const auto& [k, v] : base)
    if (k != field || twice) json += text::cat(json.back() == '{' ? "" : ", ", "\"", k, "\": ", v);
  json += text::cat(", \"", field, "\": ", value);
  json += "}]}";
  auto r = parse_device_specs(json, "test.json");
  EXPECT_FALSE(r) << field << " = " << value;
  return r ? Error{} : r.error();
}

TEST(DeviceSpecFile, ReadsEntriesThatOutliveTheText) {
  DeviceSpecSet set;
  {
    std::string text(one_device);  // gone before the set is used
    set = parse(text);
  }
  ASSERT_EQ(set.specs().size(), 1u);
  const DeviceSpec& s = set.specs()[0];
  EXPECT_EQ(s.id, "my-gpu-48gb");
  EXPECT_EQ(s.name, "MyGPU-48GB");
  EXPECT_EQ(s.product, "Example MyGPU 48GB");
  EXPECT_EQ(s.backend, Backend::cuda);
  EXPECT_EQ(s.memory_bytes, 48 * GiB);
  EXPECT_EQ(s.memory_bandwidth_gbps, 960);
  EXPECT_EQ(s.bf16_tflops, 180);
  EXPECT_EQ(s.fp8_tflops, 360);
  EXPECT_EQ(s.match, "mygpu");  // patterns match lower-case words
  EXPECT_EQ(s.pci_vendor_id, 0x10de);
  EXPECT_EQ(s.pci_device_ids[0], 0x1234);
  ASSERT_TRUE(s.fabric);
  EXPECT_EQ(s.fabric->domain_size, 2u);
  EXPECT_EQ(set.origin(), "test.json");
  // Copies share the storage: views stay valid after the original is gone.
  DeviceSpecSet copy;
  {
    DeviceSpecSet original = parse(one_device);
    copy = original;
  }
  EXPECT_EQ(copy.specs()[0].product, "Example MyGPU 48GB");

  EXPECT_EQ(find_spec("my-gpu-48gb", set), &s);
  EXPECT_EQ(find_spec("mygpu_48gb", set), &s);
  EXPECT_EQ(find_spec("my-gpu-48gb"), nullptr);  // not in the built-in table
  EXPECT_EQ(find_spec("H100-SXM-80GB", set), find_spec("H100-SXM-80GB"));
  EXPECT_TRUE(set.contains(&s));
  EXPECT_FALSE(set.contains(find_spec("H100-SXM-80GB")));

  const std::string json = device_specs_json(set);
  EXPECT_NE(json.find(R"("id":"my-gpu-48gb")"), std::string::npos);
  EXPECT_NE(json.find(R"("user_file":"test.json")"), std::string::npos);
  EXPECT_EQ(json.find("user_file"), json.rfind("user_file"));  // only the file's entry says so
  EXPECT_EQ(device_specs_json(), device_specs_json(DeviceSpecSet()));
}

TEST(DeviceSpecFile, MinimalEntryGetsDefaults) {
  const auto set = parse(R"({"format": "hwaccel-device-specs", "version": 1, "devices": [{"id": "x-gpu", "name": "X-GPU",
    "vendor": "X", "backend": "rocm", "architecture": "RDNA3", "memory_gib": 24, "memory_bandwidth_gbps": 800}]})");
  ASSERT_EQ(set.specs().size(), 1u);
  const auto& s = set.specs()[0];
  EXPECT_EQ(s.product, "X-GPU");
  EXPECT_EQ(s.family, Family::gpu);
  EXPECT_FALSE(s.bf16_tflops);
  EXPECT_EQ(s.devices_per_package, 1u);
  // No pattern: chosen by name only, never matched to a detected device.
  SpecQuery q;
  q.backend = Backend::rocm;
  q.name = "X GPU x-gpu by-name-only";
  EXPECT_EQ(match_spec(q, set), nullptr);
}

TEST(DeviceSpecFile, BadEntriesAreErrorsNamingTheEntryAndField) {
  // The wrong shape (an unknown or repeated key, a wrong JSON type, a missing
  // field) is a parse_error; a bad value of the right type is invalid_input.
  constexpr ErrorKind shape = ErrorKind::parse_error, value = ErrorKind::invalid_input;
  struct Case {
    std::string_view field, value, says;
    ErrorKind kind;
    bool twice = false;
  };
  for (const Case& c : {
           Case{"colour", "\"red\"", "unknown field \"colour\"", shape},
           Case{"memory_bandwidth_gbps", "-5", "\"memory_bandwidth_gbps\" must be a positive number", value},
           Case{"memory_gib", "\"24\"", "\"memory_gib\" must be a number", shape},
           Case{"memory_gib", "17000", "\"memory_gib\" must be a positive number at most 16384", value},
           Case{"bf16_tflops", "200000", "\"bf16_tflops\" must be a positive number at most 100000", value},
           Case{"fp8_tflops", "0", "\"fp8_tflops\" must be a positive number", value},
           Case{"backend", "\"cpu\"", "\"backend\" \"cpu\" is not an accelerator backend", value},
           Case{"backend", "7", "\"backend\" must be a string", shape},
           Case{"family", "\"fpga\"", "\"family\" must be gpu, npu, tpu or asic", value},
           Case{"pci_device_ids", "[\"0x1\"]", "\"pci_device_ids\" needs \"pci_vendor_id\"", value},
           Case{"pci_vendor_id", "\"zz\"", "\"pci_vendor_id\" must be a hex id", value},
           Case{"fabric", "{\"kind\": \"wifi\"}", "\"kind\" must be nvlink", value},
           Case{"fabric", "{\"kind\": \"nvlink\", \"speed\": 5}", "fabric: unknown field \"speed\"", shape},
           Case{"memory_gib", "12", "\"memory_gib\" given twice", shape, true},
           Case{"memory_options_gib", "[16, 32]", "\"memory_options_gib\" needs \"memory_kind\"", value},
           Case{"memory_options_gib", "[16, 0]", "\"memory_options_gib\"[1] must be a whole number in 1..65535", value},
       }) {
    const Error e = error_with(c.field, c.value, c.twice);
    EXPECT_EQ(e.kind, c.kind) << e.message;
    EXPECT_NE(e.message.find("test.json: devices[0] \"x-gpu\""), std::string::npos) << e.message;
    EXPECT_NE(e.message.find(c.says), std::string::npos) << c.field << ": " << e.message;
  }
  // Missing required fields.
  auto r = parse_device_specs(R"({"devices": [{"id": "x-gpu", "name": "X-GPU"}]})", "test.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, shape);
  EXPECT_NE(r.error().message.find("devices[0] \"x-gpu\": missing \"vendor\""), std::string::npos) << r.error().message;
}

TEST(DeviceSpecFile, BuiltInAndRepeatedIdsAreRefused) {
  auto r = parse_device_specs(R"({"devices": [{"id": "h100-sxm5-80gb", "name": "Mine", "vendor": "X", "backend": "cuda",
    "architecture": "Hopper", "memory_gib": 80, "memory_bandwidth_gbps": 3000}]})", "test.json");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("\"id\" \"h100-sxm5-80gb\" is the built-in h100-sxm5-80gb"), std::string::npos)
      << r.error().message;
  r = parse_device_specs(R"({"devices": [{"id": "mine", "name": "h100_sxm_80gb", "vendor": "X", "backend": "cuda",
    "architecture": "Hopper", "memory_gib": 80, "memory_bandwidth_gbps": 3000}]})", "test.json");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("\"name\""), std::string::npos) << r.error().message;
  r = parse_device_specs(R"({"devices": [
    {"id": "a-gpu", "name": "A-GPU", "vendor": "X", "backend": "cuda", "architecture": "Hopper", "memory_gib": 80, "memory_bandwidth_gbps": 3000},
    {"id": "b-gpu", "name": "a_gpu", "vendor": "X", "backend": "cuda", "architecture": "Hopper", "memory_gib": 80, "memory_bandwidth_gbps": 3000}]})",
                              "test.json");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("devices[1] \"b-gpu\": \"name\" \"a_gpu\" is already entry a-gpu"), std::string::npos)
      << r.error().message;
  // Names --devices could not take.
  r = parse_device_specs(R"({"devices": [{"id": "8x-gpu", "name": "X", "vendor": "X", "backend": "cuda",
    "architecture": "Hopper", "memory_gib": 80, "memory_bandwidth_gbps": 3000}]})", "test.json");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("\"id\" must start with a letter"), std::string::npos) << r.error().message;
}

// An entry may restate a built-in one exactly (a copy of the installed
// table with devices added reads), never change it.
TEST(DeviceSpecFile, ABuiltInEntryMayBeRestatedNotChanged) {
  const std::string h100 = R"json({"id": "h100-sxm5-80gb", "name": "H100-SXM-80GB", "product": "NVIDIA H100 SXM5 80GB",
    "vendor": "NVIDIA", "backend": "cuda", "family": "gpu", "architecture": "Hopper", "compute_capability": "9.0",
    "memory_gib": 80, "memory_bandwidth_gbps": 3350, "fp32_tflops": 67, "bf16_tflops": 989.4, "fp16_tflops": 989.4,
    "fp8_tflops": 1978.9, "int8_tops": 1978.9,
    "fabric": {"kind": "nvlink", "name": "NVLink 4 through NVSwitch (900 GB/s bidirectional)", "bandwidth_gbps": 450,
               "domain_size": 8},
    "pcie_generation": 5, "pcie_width": 16, "tdp_watts": 700, "pci_vendor_id": "0x10de", "pci_device_ids": ["0x2330"],
    "match": "h100 !pcie !nvl",
    "source": "NVIDIA H100 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/h100/"})json";
  const auto mine = std::string(R"({"id": "my-gpu-48gb", "name": "MyGPU-48GB", "vendor": "X", "backend": "cuda",
    "architecture": "Ada Lovelace", "memory_gib": 48, "memory_bandwidth_gbps": 960})");
  const auto set = parse(R"({"devices": [)" + h100 + ", " + mine + "]}");
  ASSERT_EQ(set.specs().size(), 2u);
  EXPECT_EQ(set.specs()[0], *find_spec("h100-sxm5-80gb"));
  // The built-in entry is the one found, matched and listed.
  EXPECT_EQ(find_spec("h100-sxm5-80gb", set), find_spec("h100-sxm5-80gb"));
  const std::string json = device_specs_json(set);
  EXPECT_EQ(json.find(R"("id":"h100-sxm5-80gb")"), json.rfind(R"("id":"h100-sxm5-80gb")"));
  EXPECT_NE(json.find(R"("id":"my-gpu-48gb")"), std::string::npos);

  std::string changed = h100;
  changed.replace(changed.find("3350"), 4, "3000");
  auto r = parse_device_specs(R"({"devices": [)" + changed + "]}", "test.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::invalid_input);
  EXPECT_NE(r.error().message.find("\"id\" \"h100-sxm5-80gb\" is the built-in h100-sxm5-80gb"), std::string::npos)
      << r.error().message;
}

TEST(DeviceSpecFile, UnifiedMemoryEntriesListTheirConfigurations) {
  const auto set = parse(R"({"devices": [{"id": "my-soc", "name": "My-SoC", "vendor": "X", "backend": "apple",
    "architecture": "Apple M9", "memory_gib": 64, "memory_kind": "unified", "memory_bandwidth_gbps": 400,
    "memory_options_gib": [32, 48, 64]}]})");
  ASSERT_EQ(set.specs().size(), 1u);
  const auto& s = set.specs()[0];
  EXPECT_EQ(s.memory_kind, MemoryKind::unified);
  EXPECT_EQ(s.memory_options_gib, (std::array<std::uint16_t, 6>{32, 48, 64, 0, 0, 0}));
  EXPECT_EQ(s.match, "(by-name-only)");
}

TEST(DeviceSpecFile, MalformedFilesAreErrors) {
  for (std::string_view text : {"", "{", "[]", R"({"devices": 3})", R"({"devices": [3]})", R"({"devices": []})",
                                R"({"devices": [], "extra": 1})", R"({"format": "other", "devices": []})"}) {
    auto r = parse_device_specs(text, "test.json");
    ASSERT_FALSE(r) << text;
    EXPECT_TRUE(r.error().kind == ErrorKind::parse_error || r.error().kind == ErrorKind::invalid_input) << text;
    EXPECT_EQ(r.error().message.rfind("test.json", 0), 0u) << r.error().message;
  }
  auto missing = read_device_specs("/nonexistent/devices.json");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::not_found);
  hwaccel::testing::TempDir dir;
  const std::string path = (dir.path() / "devices.json").string();
  std::ofstream(path) << one_device;
  auto read = read_device_specs(path);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->origin(), path);
  EXPECT_FALSE(read_device_specs(dir.path().string()));  // a folder
}

TEST(DeviceSpecFile, FileEntriesMatchDevicesTheTableDoesNot) {
  const auto set = parse(one_device);
  const DeviceSpec* mine = &set.specs()[0];
  DeviceProfile d;
  d.backend = Backend::cuda;
  d.family = Family::gpu;
  d.name = "Example MyGPU";
  d.memory_bytes = 47 * GiB;
  EXPECT_EQ(match_spec(d), nullptr);
  EXPECT_EQ(match_spec(d, set), mine);
  // By PCI id, whatever the name.
  d.name = "Some Board";
  d.properties["pci_vendor_id"] = "0x10de";
  d.properties["pci_device_id"] = "0x1234";
  EXPECT_EQ(match_spec(d, set), mine);
  // Memory far from the entry's: not this product.
  d.name = "Example MyGPU";
  d.properties.clear();
  d.memory_bytes = 24 * GiB;
  EXPECT_EQ(match_spec(d, set), nullptr);
  // The table wins where it matches: a file adds devices, never overrides one.
  const auto greedy = parse(R"({"devices": [{"id": "any-h200", "name": "Any-H200", "vendor": "X", "backend": "cuda",
    "architecture": "Hopper", "memory_gib": 141, "memory_bandwidth_gbps": 1000, "match": "h200"}]})");
  DeviceProfile h100;
  h100.backend = Backend::cuda;
  h100.family = Family::gpu;
  h100.name = "NVIDIA H200";
  h100.memory_bytes = 141 * GiB;
  ASSERT_NE(match_spec(h100), nullptr);
  EXPECT_EQ(match_spec(h100, greedy), match_spec(h100));
}

TEST(DeviceSpecFile, HypotheticalDevicesAndPlansUseTheFile) {
  const auto set = parse(one_device);
  EXPECT_FALSE(hypothetical_registry("2xMyGPU-48GB"));
  auto r = hypothetical_registry("2xMyGPU-48GB", set);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->devices().size(), 2u);
  EXPECT_EQ(r->devices()[0].spec_id, "my-gpu-48gb");
  EXPECT_EQ(r->devices()[0].memory_bytes, 48 * GiB);
  ASSERT_EQ(r->interconnects().size(), 1u);  // its bridge joins the pair
  EXPECT_NE(r->interconnects()[0].source.find("device-spec file test.json"), std::string::npos);
  auto mixed = hypothetical_registry("1xMyGPU-48GB+1xRTX-4090", set);
  ASSERT_TRUE(mixed) << mixed.error().message;
  auto unknown = hypothetical_registry("1xOther-GPU", set);
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("MyGPU-48GB (test.json)"), std::string::npos);

  const auto model = catalogue_model("llama-3.1-8b").value();
  InferenceSettings s;
  s.quantization = QuantizationLevel::bf16;
  // Without the set the planner knows no published figure for the device:
  // it derives them from its architecture (compute capability 8.9).
  const auto blind = plan_inference(*r, model, s).value();
  EXPECT_EQ(blind.throughput.bandwidth_source, "derived from the architecture (not published)");
  s.device_specs = &set;
  const auto p = plan_inference(*r, model, s).value();
  ASSERT_TRUE(p.throughput.decode_tokens_per_s);
  EXPECT_EQ(p.throughput.bandwidth_source, "published spec");
  ASSERT_TRUE(p.throughput.prefill_tokens_per_s);
  // ~16 GB of bf16 weights at 960 GB/s x 0.8: at most ~48 tokens/s, well above 20.
  EXPECT_LT(*p.throughput.decode_tokens_per_s, 60);
  EXPECT_GT(*p.throughput.decode_tokens_per_s, 20);
  ASSERT_FALSE(p.shards.empty());
  EXPECT_EQ(p.shards[0].spec_id, "my-gpu-48gb");
}

// Devices of the file in clusters (NODESx(...)), capacity (--what-is-missing)
// and placement, as --device-specs gives them to `plan` and `place`.
TEST(DeviceSpecFile, ClustersCapacityAndPlacementUseTheFile) {
  const auto set = parse(one_device);
  EXPECT_FALSE(hypothetical_cluster("2x(2xMyGPU-48GB)"));
  const auto cluster = hypothetical_cluster("2x(2xMyGPU-48GB)", set);
  ASSERT_TRUE(cluster) << cluster.error().message;
  ASSERT_EQ(cluster->nodes.size(), 2u);
  EXPECT_EQ(cluster->nodes[1].registry.devices()[0].spec_id, "my-gpu-48gb");

  // Llama 3.1 70B in bf16 (141 GB) needs both nodes' four 48 GB cards.
  const auto model = catalogue_model("llama-3.1-70b").value();
  InferenceSettings s;
  s.quantization = QuantizationLevel::bf16;
  s.device_specs = &set;
  const auto plan = plan_inference(*cluster, model, s);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_TRUE(plan->fits);
  EXPECT_EQ(plan->strategy.nodes, 2u);
  EXPECT_EQ(plan->throughput.bandwidth_source, "published spec");

  // How many such nodes the model needs, with none in the fleet.
  CapacityOptions capacity;
  capacity.node_kind = "2xMyGPU-48GB";
  Fleet empty;
  InferenceSettings without = s;
  without.device_specs = nullptr;
  EXPECT_FALSE(what_is_missing(empty, model, without, capacity));
  const auto missing = what_is_missing(empty, model, s, capacity);
  ASSERT_TRUE(missing) << missing.error().message;
  EXPECT_EQ(missing->nodes_needed, 2u);
  EXPECT_EQ(missing->nodes_missing, 2u);

  // Detected cards that report no memory size: only the file's entry,
  // matched by name, says how much they hold.
  Fleet fleet;
  for (const char* host : {"n1", "n2"}) {
    FleetNode node;
    node.host = host;
    AcceleratorRegistry r;
    for (std::uint32_t i = 0; i < 2; ++i) {
      DeviceProfile d;
      d.backend = Backend::cuda;
      d.family = Family::gpu;
      d.index = i;
      d.id = text::cat("cuda:", i);
      d.name = "Example MyGPU";
      ASSERT_TRUE(r.add_device(d));
    }
    node.registry = std::move(r);
    fleet.nodes.push_back(std::move(node));
  }
  Workload w;
  w.name = "chat";
  w.model = "llama-3.1-8b";
  w.replicas = 2;
  w.quantization = QuantizationLevel::bf16;
  const std::vector<Workload> workloads = {w};
  const auto blind = place_workloads(fleet, workloads);
  ASSERT_FALSE(blind);
  EXPECT_NE(blind.error().message.find("no node of the fleet has an accelerator"), std::string::npos);
  PlacementOptions options;
  options.device_specs = &set;
  const auto placed = place_workloads(fleet, workloads, options);
  ASSERT_TRUE(placed) << placed.error().message;
  EXPECT_EQ(placed->placed.size(), 2u);
  EXPECT_TRUE(placed->unplaced.empty());
}

// --- Derived figures ---------------------------------------------------------

DeviceProfile unknown_device(const DeviceSpec& like) {
  DeviceProfile d;
  d.id = device_id(like.backend, 0);
  d.backend = like.backend;
  d.family = like.family;
  d.name = "Mystery Accelerator Board";
  d.memory_bytes = like.memory_bytes;
  if (!like.compute_capability.empty()) d.compute_capability = std::string(like.compute_capability);
  d.architecture = std::string(like.architecture);
  return d;
}

// The table without `id`: what derive_spec sees for a product it lacks.
std::vector<DeviceSpec> table_without(std::string_view id) {
  std::vector<DeviceSpec> out;
  for (const auto& s : device_specs())
    if (s.id != id) out.push_back(s);
  return out;
}

double relative_error(double estimate, double truth) { return std::abs(estimate / truth - 1); }

TEST(DerivedSpec, ProductsLeftOutOfTheTableComeOutWithin35Percent) {
  // Real products, each removed from the table in turn, seen as a device no
  // name pattern matches: its architecture's other rows give its figures.
  // Compute is checked over the whole table below, not per product: per GiB
  // of memory it is the rougher of the two estimates.
  for (std::string_view id : {"h100-sxm5-80gb", "rtx-3090-24gb", "a10-24gb", "l40s-48gb", "rtx-4060-ti-16gb",
                              "rtx-5090-32gb", "v100-sxm2-32gb", "mi300x-192gb", "rx-7900-xtx-24gb"}) {
    const DeviceSpec* truth = find_spec(id);
    ASSERT_NE(truth, nullptr) << id;
    const auto table = table_without(id);
    const DeviceProfile d = unknown_device(*truth);
    ASSERT_EQ(match_spec(spec_query_of(d)), nullptr) << id;
    const auto derived = derive_spec(d, table);
    ASSERT_TRUE(derived) << id;
    EXPECT_LE(relative_error(derived->memory_bandwidth_gbps, truth->memory_bandwidth_gbps), 0.35)
        << id << ": derived " << derived->memory_bandwidth_gbps << " GB/s, datasheet " << truth->memory_bandwidth_gbps
        << " (" << derived->basis << ")";
    EXPECT_TRUE(derived->bf16_tflops) << id;
    EXPECT_GE(derived->peers, 1u);
    EXPECT_NE(derived->method().find("derived from the architecture (not published)"), std::string::npos);
  }
}

TEST(DerivedSpec, FlagshipsOfACrowdedArchitectureComeOutFarOff) {
  // The limits docs/planning.md states: the median per GiB follows an
  // architecture's many mid-range rows, so its fastest memory systems come
  // out low (RTX 4090: about 430 against 1008 GB/s) and a product whose
  // peers are faster comes out high (H100 PCIe: 3350 against 2000 GB/s,
  // the SXM part's figure, the top of Hopper's range).
  for (auto [id, low] : {std::pair<std::string_view, bool>{"rtx-4090-24gb", true}, {"h100-pcie-80gb", false}}) {
    const DeviceSpec* truth = find_spec(id);
    ASSERT_NE(truth, nullptr) << id;
    const auto derived = derive_spec(unknown_device(*truth), table_without(id));
    ASSERT_TRUE(derived) << id;
    if (low) EXPECT_LT(derived->memory_bandwidth_gbps, 0.6 * truth->memory_bandwidth_gbps) << id;
    else EXPECT_GT(derived->memory_bandwidth_gbps, 1.5 * truth->memory_bandwidth_gbps) << id;
  }
}

TEST(DerivedSpec, TheWholeTableLeftOneOutSupportsTheDocumentedAccuracy) {
  // docs/planning.md and DerivedSpec::method() quote these figures.
  std::vector<double> bandwidth_errors, compute_errors;
  for (const auto& s : device_specs()) {
    if ((s.backend != Backend::cuda && s.backend != Backend::rocm) || s.compute_capability.empty() ||
        s.memory_kind != MemoryKind::dedicated)
      continue;
    const auto derived = derive_spec(unknown_device(s), table_without(s.id));
    if (!derived) continue;
    bandwidth_errors.push_back(relative_error(derived->memory_bandwidth_gbps, s.memory_bandwidth_gbps));
    const auto truth = s.bf16_tflops ? s.bf16_tflops : s.fp16_tflops;
    if (truth && derived->bf16_tflops) compute_errors.push_back(relative_error(*derived->bf16_tflops, *truth));
  }
  ASSERT_GE(bandwidth_errors.size(), 80u);
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const auto share_within = [](const std::vector<double>& v, double limit) {
    return static_cast<double>(std::count_if(v.begin(), v.end(), [&](double e) { return e <= limit; })) /
           static_cast<double>(v.size());
  };
  EXPECT_LE(median(bandwidth_errors), 0.15);
  EXPECT_GE(share_within(bandwidth_errors, 0.35), 0.70);
  EXPECT_LE(median(compute_errors), 0.22);
  EXPECT_GE(share_within(compute_errors, 0.35), 0.70);
  std::cout << "derived bandwidth: " << bandwidth_errors.size() << " rows, median error " << median(bandwidth_errors)
            << ", within 35 %: " << share_within(bandwidth_errors, 0.35) << "; BF16: " << compute_errors.size()
            << " rows, median error " << median(compute_errors) << ", within 35 %: " << share_within(compute_errors, 0.35)
            << "\n";
}

TEST(DerivedSpec, NothingToDeriveFrom) {
  DeviceProfile d;
  d.backend = Backend::cuda;
  d.family = Family::gpu;
  d.name = "Mystery";
  d.memory_bytes = 24 * GiB;
  EXPECT_FALSE(derive_spec(d));  // no compute capability, no architecture
  d.compute_capability = "42.0";
  EXPECT_FALSE(derive_spec(d));  // none in the table
  d.compute_capability = "8.9";
  EXPECT_TRUE(derive_spec(d));
  d.memory_bytes.reset();
  EXPECT_FALSE(derive_spec(d));  // nothing to scale by
  d.memory_bytes = 24 * GiB;
  d.memory_kind = MemoryKind::unified;
  EXPECT_FALSE(derive_spec(d));
  d.memory_kind = MemoryKind::dedicated;
  d.compute_capability.reset();
  d.architecture = "RDNA3";
  EXPECT_FALSE(derive_spec(d));  // RDNA3 rows are ROCm, not CUDA
  d.backend = Backend::rocm;
  const auto rdna3 = derive_spec(d);
  ASSERT_TRUE(rdna3);
  EXPECT_EQ(rdna3->basis, "architecture RDNA3");
  // Clamped to the architecture's range: a 1 TiB Ada card is no faster than the fastest Ada row.
  d.backend = Backend::cuda;
  d.architecture.reset();
  d.compute_capability = "8.9";
  d.memory_bytes = 1024 * GiB;
  const auto huge = derive_spec(d);
  ASSERT_TRUE(huge);
  EXPECT_EQ(huge->memory_bandwidth_gbps, huge->bandwidth_high_gbps);
}

AcceleratorRegistry registry_of(DeviceProfile d) {
  Inventory inv;
  d.id = device_id(d.backend, 0);
  inv.devices.push_back(std::move(d));
  return AcceleratorRegistry(std::move(inv));
}

TEST(DerivedSpec, PlansSayTheFiguresAreDerived) {
  DeviceProfile d;
  d.backend = Backend::cuda;
  d.family = Family::gpu;
  d.name = "NVIDIA Engineering Sample";
  d.memory_bytes = 24 * GiB;
  d.compute_capability = "8.9";
  d.architecture = "Ada Lovelace";
  const auto registry = registry_of(d);
  const auto model = catalogue_model("llama-3.1-8b").value();
  InferenceSettings s;
  s.quantization = QuantizationLevel::bf16;
  const auto planned = plan_inference(registry, model, s);
  ASSERT_TRUE(planned) << planned.error().message;
  const Plan& p = *planned;
  EXPECT_EQ(p.throughput.bandwidth_source, "derived from the architecture (not published)");
  ASSERT_TRUE(p.throughput.decode_tokens_per_s);
  ASSERT_TRUE(p.throughput.prefill_tokens_per_s);
  bool said = false;
  for (const auto& a : p.assumptions)
    said |= a.find("cuda:0 (no published spec matches): NVIDIA Engineering Sample: derived from the architecture") !=
            std::string::npos;
  EXPECT_TRUE(said);
  // A bandwidth the device reports is used as it is: nothing derived.
  d.memory_bandwidth_gbps = 500;
  const auto reported_plan = plan_inference(registry_of(d), model, s);
  ASSERT_TRUE(reported_plan) << reported_plan.error().message;
  const Plan& reported = *reported_plan;
  EXPECT_EQ(reported.throughput.bandwidth_source, "reported by the device");
  // Nothing to derive from (compute capability 8.7, Orin's, has no
  // dedicated-memory row; no architecture name): still unknown.
  d.memory_bandwidth_gbps.reset();
  d.compute_capability = "8.7";
  d.architecture.reset();
  const auto blind_plan = plan_inference(registry_of(d), model, s);
  ASSERT_TRUE(blind_plan) << blind_plan.error().message;
  const Plan& blind = *blind_plan;
  EXPECT_EQ(blind.throughput.bandwidth_source, "unknown");
  EXPECT_FALSE(blind.throughput.decode_tokens_per_s);
}

}  // namespace
