// The cloud instance catalogue (checked against the spec table, bad files
// refused naming the entry) and instance recommendations: per-device memory,
// dtype support, interconnect, price order, a user catalogue replacing the
// built-in one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../test_support.hpp"

import hwaccel;

#include "module_helpers.hpp"

namespace {

using namespace hwaccel;

using hwaccel::testing::GiB;

InstanceCatalogue builtin() { return builtin_instance_catalogue().value(); }
using hwaccel::testing::model;

const CloudInstanceType& find(const InstanceCatalogue& c, std::string_view name) {
  for (const auto& i : c.instances)
    if (i.name == name) return i;
  ADD_FAILURE() << name << " is not in the catalogue";
  static const CloudInstanceType none;
  return none;
}

RecommendOptions options_at(QuantizationLevel level) {
  RecommendOptions o;
  o.settings.quantization = level;
  return o;
}

const InstanceVerdict* verdict_of(const InstanceRecommendation& r, std::string_view name) {
  for (const auto* list : {&r.recommended, &r.rejected})
    for (const auto& v : *list)
      if (v.instance.name == name) return &v;
  return nullptr;
}

// One entry of a user catalogue: an 8 x L4 instance, with fields replaced
// or added by the test (values are raw JSON).
using Fields = std::vector<std::pair<std::string_view, std::string_view>>;

std::string entry(const Fields& overrides = {}, std::string_view name = "test.8xl4") {
  const std::string quoted_name = text::cat("\"", name, "\"");
  Fields fields = {{"provider", "\"aws\""},         {"name", quoted_name},
                   {"region", "\"us-east-1\""},     {"accelerator", "\"l4-24gb\""},
                   {"count", "8"},                  {"memory_per_device_gib", "24"},
                   {"interconnect", "\"pcie\""},    {"vcpus", "192"},
                   {"host_memory_gib", "768"},      {"price_usd_per_hour", "13.35"},
                   {"price_date", "\"2025-03\""},   {"price_source", "\"test\""}};
  for (const auto& [key, value] : overrides) {
    auto it = std::find_if(fields.begin(), fields.end(), [&](const auto& f) { return f.first == key; });
    if (it != fields.end()) it->second = value;
    else fields.emplace_back(key, value);
  }
  std::string e = "{";
  for (const auto& [key, value] : fields) e += text::cat(e.size() > 1 ? ", " : "", "\"", key, "\": ", value);
  return e + "}";
}

std::string catalogue_json(std::string_view entries) {
  return text::cat(R"({"format": "hwaccel-instance-catalogue", "version": 1, "prices": "test prices", )",
                   R"("instances": [)", entries, "]}");
}

Error parse_error_of(std::string_view json) {
  auto c = parse_instance_catalogue(json, "user.json");
  EXPECT_FALSE(c) << "accepted: " << json;
  return c ? Error{} : c.error();
}

// --- the built-in catalogue ----------------------------------------------------

TEST(InstanceCatalogue, BuiltInEntriesMatchTheSpecTable) {
  const auto c = builtin();
  EXPECT_EQ(c.origin, "built-in instances.json");
  EXPECT_NE(c.prices.find("Indicative"), std::string::npos);
  ASSERT_GE(c.instances.size(), 40u);
  for (const auto& i : c.instances) {
    SCOPED_TRACE(i.name);
    const DeviceSpec* spec = find_spec(i.accelerator);
    ASSERT_NE(spec, nullptr);
    EXPECT_EQ(spec->id, i.accelerator);  // stored as the canonical id
    EXPECT_EQ(i.memory_per_device_bytes, spec->memory_bytes);
    EXPECT_GE(i.count, 1u);
    EXPECT_GE(i.interconnect_group, 1u);
    EXPECT_LE(i.interconnect_group, i.count);
    EXPECT_GT(i.price_usd_per_hour, 0.0);
    EXPECT_EQ(i.price_date.size(), 7u);
    EXPECT_FALSE(i.price_source.empty());
    EXPECT_GT(i.host_memory_bytes, 0u);
    if (i.interconnect != InstanceInterconnect::pcie) ASSERT_TRUE(spec->fabric.has_value());
  }
  for (auto p : {CloudProvider::aws, CloudProvider::gcp, CloudProvider::azure})
    EXPECT_TRUE(std::any_of(c.instances.begin(), c.instances.end(), [p](const auto& i) { return i.provider == p; }));
}

TEST(InstanceCatalogue, WellKnownInstancesHoldWhatTheProvidersSay) {
  const auto c = builtin();
  struct Expect {
    std::string_view name, accelerator;
    std::uint32_t count;
    std::uint64_t memory_gib;
    InstanceInterconnect interconnect;
  };
  using IC = InstanceInterconnect;
  for (const auto& e : std::vector<Expect>{
           {"p4d.24xlarge", "a100-sxm4-40gb", 8, 40, IC::nvswitch},
           {"p4de.24xlarge", "a100-sxm4-80gb", 8, 80, IC::nvswitch},
           {"p5.48xlarge", "h100-sxm5-80gb", 8, 80, IC::nvswitch},
           {"p5en.48xlarge", "h200-sxm-141gb", 8, 141, IC::nvswitch},
           {"g5.xlarge", "a10g-24gb", 1, 24, IC::pcie},
           {"g6.48xlarge", "l4-24gb", 8, 24, IC::pcie},
           {"g6e.48xlarge", "l40s-48gb", 8, 48, IC::pcie},
           {"g4dn.xlarge", "t4-16gb", 1, 16, IC::pcie},
           {"trn1.32xlarge", "trainium-32gb", 16, 32, IC::neuronlink},
           {"inf2.48xlarge", "inferentia2-32gb", 12, 32, IC::neuronlink},
           {"a2-highgpu-8g", "a100-sxm4-40gb", 8, 40, IC::nvswitch},
           {"a2-ultragpu-8g", "a100-sxm4-80gb", 8, 80, IC::nvswitch},
           {"a3-highgpu-8g", "h100-sxm5-80gb", 8, 80, IC::nvswitch},
           {"g2-standard-4", "l4-24gb", 1, 24, IC::pcie},
           {"ct5lp-hightpu-4t", "tpu-v5e", 4, 16, IC::ici},
           {"ct5p-hightpu-4t", "tpu-v5p", 4, 95, IC::ici},
           {"ct6e-standard-8t", "tpu-v6e", 8, 32, IC::ici},
           {"Standard_ND96asr_v4", "a100-sxm4-40gb", 8, 40, IC::nvswitch},
           {"Standard_ND96isr_H100_v5", "h100-sxm5-80gb", 8, 80, IC::nvswitch},
           {"Standard_NC24ads_A100_v4", "a100-pcie-80gb", 1, 80, IC::pcie},
           {"Standard_NC4as_T4_v3", "t4-16gb", 1, 16, IC::pcie},
       }) {
    SCOPED_TRACE(e.name);
    const auto& i = find(c, e.name);
    EXPECT_EQ(i.accelerator, e.accelerator);
    EXPECT_EQ(i.count, e.count);
    EXPECT_EQ(i.memory_per_device_bytes, e.memory_gib * GiB);
    EXPECT_EQ(i.interconnect, e.interconnect);
  }
}

TEST(InstanceCatalogue, TheMi300xInstanceIsReallyMi300xAndTheA100SizeIsAnA100) {
  const auto c = builtin();
  const auto& mi300x = find(c, "Standard_ND96isr_MI300X_v5");
  EXPECT_EQ(mi300x.provider, CloudProvider::azure);
  EXPECT_EQ(mi300x.accelerator, "mi300x-192gb");
  EXPECT_EQ(find_spec(mi300x.accelerator)->vendor, "AMD");
  EXPECT_EQ(mi300x.count, 8u);
  EXPECT_EQ(mi300x.memory_per_device_bytes, 192 * GiB);
  EXPECT_EQ(mi300x.interconnect, InstanceInterconnect::xgmi);
  // The A100 80GB size the reference labelled MI300X.
  const auto& a100 = find(c, "Standard_ND96amsr_A100_v4");
  EXPECT_EQ(a100.accelerator, "a100-sxm4-80gb");
  EXPECT_EQ(find_spec(a100.accelerator)->vendor, "NVIDIA");
  // Every instance whose name says MI300X holds MI300X, and only those.
  for (const auto& i : c.instances)
    EXPECT_EQ(text::icontains(i.name, "mi300x"), i.accelerator == "mi300x-192gb") << i.name;
}

TEST(InstanceCatalogue, InstanceRegistryJoinsDevicesAsTheCatalogueSays) {
  const auto c = builtin();
  const auto mi300x = instance_registry(find(c, "Standard_ND96isr_MI300X_v5")).value();
  ASSERT_EQ(mi300x.devices().size(), 8u);
  EXPECT_EQ(mi300x.devices()[0].spec_id, "mi300x-192gb");
  EXPECT_EQ(mi300x.devices()[0].backend, Backend::rocm);
  ASSERT_EQ(mi300x.interconnects().size(), 1u);
  EXPECT_EQ(mi300x.interconnects()[0].kind, "xgmi_hive");
  EXPECT_EQ(mi300x.interconnects()[0].device_ids.size(), 8u);
  const auto l4 = instance_registry(find(c, "g6.48xlarge")).value();
  EXPECT_EQ(l4.devices().size(), 8u);
  EXPECT_TRUE(l4.interconnects().empty());
  const auto nvl = instance_registry(find(c, "Standard_NC80adis_H100_v5")).value();
  ASSERT_EQ(nvl.interconnects().size(), 1u);
  EXPECT_EQ(nvl.interconnects()[0].kind, "nvlink");
}

// --- bad catalogues ---------------------------------------------------------------

TEST(InstanceCatalogue, ReadsAValidUserFile) {
  const auto c = parse_instance_catalogue(
      catalogue_json(entry() + ", " + entry({{"interconnect_group", "4"}, {"notes", "\"n\""}}, "other")), "user.json");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->origin, "user.json");
  EXPECT_EQ(c->prices, "test prices");
  ASSERT_EQ(c->instances.size(), 2u);
  EXPECT_EQ(c->instances[0].interconnect_group, 8u);  // the whole instance by default
  EXPECT_EQ(c->instances[1].interconnect_group, 4u);
  EXPECT_EQ(c->instances[1].notes, "n");
  EXPECT_EQ(c->instances[0].memory_per_device_bytes, 24 * GiB);
  EXPECT_DOUBLE_EQ(c->instances[0].price_usd_per_hour, 13.35);
}

TEST(InstanceCatalogue, MalformedFilesAreParseErrors) {
  for (std::string_view bad : {std::string_view("{"), std::string_view("[]"), std::string_view("not json"),
                               std::string_view(R"({"format": "other", "version": 1, "instances": []})"),
                               std::string_view(R"({"format": "hwaccel-instance-catalogue", "version": 2, "instances": []})"),
                               std::string_view(R"({"format": "hwaccel-instance-catalogue", "version": 1})"),
                               std::string_view(R"({"format": "hwaccel-instance-catalogue", "version": 1, "instances": [7]})")}) {
    const Error e = parse_error_of(bad);
    EXPECT_EQ(e.kind, ErrorKind::parse_error) << bad;
    EXPECT_NE(e.message.find("user.json"), std::string::npos) << e.message;
  }
}

TEST(InstanceCatalogue, BadEntriesAreErrorsNamingTheEntry) {
  struct Case {
    std::string_view key, value;
    ErrorKind kind;
    std::string_view says;
  };
  for (const auto& c : std::vector<Case>{
           {"accelerator", "\"a100-sxm9-999gb\"", ErrorKind::invalid_input, "unknown accelerator"},
           {"count", "0", ErrorKind::invalid_input, "\"count\" must be a whole number in 1..4096"},
           {"count", "2.5", ErrorKind::invalid_input, "\"count\""},
           {"count", "\"8\"", ErrorKind::parse_error, "\"count\" must be a number"},
           {"price_usd_per_hour", "-1.5", ErrorKind::invalid_input, "price_usd_per_hour"},
           {"price_usd_per_hour", "0", ErrorKind::invalid_input, "price_usd_per_hour"},
           {"memory_per_device_gib", "192", ErrorKind::invalid_input, "does not match NVIDIA L4"},
           {"interconnect", "\"nvswitch\"", ErrorKind::invalid_input, "has no nvswitch"},
           {"interconnect", "\"carrier-pigeon\"", ErrorKind::invalid_input, "unknown interconnect"},
           {"interconnect_group", "9", ErrorKind::invalid_input, "interconnect_group"},
           {"provider", "\"oracle\"", ErrorKind::invalid_input, "unknown provider"},
           {"price_date", "\"March 2025\"", ErrorKind::invalid_input, "price_date"},
           {"price_date", "\"2025-13\"", ErrorKind::invalid_input, "price_date"},
           {"region", "\"\"", ErrorKind::invalid_input, "\"region\" is empty"},
           {"price_source", "null", ErrorKind::parse_error, "missing \"price_source\""},
           {"host_memory_gib", "-4", ErrorKind::invalid_input, "host_memory_gib"},
           {"gpus", "8", ErrorKind::parse_error, "unknown field \"gpus\""},
       }) {
    const Error err = parse_error_of(catalogue_json(entry({}, "first") + ", " + entry({{c.key, c.value}})));
    EXPECT_EQ(err.kind, c.kind) << c.key << "=" << c.value << ": " << err.message;
    EXPECT_NE(err.message.find("user.json: instances[1] \"test.8xl4\""), std::string::npos) << err.message;
    EXPECT_NE(err.message.find(c.says), std::string::npos) << err.message;
  }
}

TEST(InstanceCatalogue, DuplicatesAndEmptyListsAreRefused) {
  const Error dup = parse_error_of(catalogue_json(entry() + ", " + entry()));
  EXPECT_EQ(dup.kind, ErrorKind::invalid_input);
  EXPECT_NE(dup.message.find("instances[1] \"test.8xl4\": listed twice"), std::string::npos) << dup.message;
  EXPECT_EQ(parse_error_of(catalogue_json("")).kind, ErrorKind::invalid_input);
}

TEST(InstanceCatalogue, UnreadableFileIsNotFound) {
  const auto c = read_instance_catalogue("/nonexistent/instances.json");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().kind, ErrorKind::not_found);
  hwaccel::testing::TempDir dir;
  hwaccel::testing::write_file(dir.path() / "i.json", catalogue_json(entry()));
  const auto ok = read_instance_catalogue(dir.path() / "i.json");
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->origin, (dir.path() / "i.json").string());
}

// --- recommendations ---------------------------------------------------------------

TEST(Recommend, NeedsAQuantizationLevel) {
  const auto r = recommend_instances(model("llama-3.1-8b"), RecommendOptions{}, builtin());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::invalid_input);
}

TEST(Recommend, CheapestFirstAndEveryRejectionExplained) {
  const auto r = recommend_instances(model("llama-3.1-70b"), options_at(QuantizationLevel::bf16), builtin()).value();
  ASSERT_FALSE(r.recommended.empty());
  EXPECT_EQ(r.model_name, "llama-3.1-70b");
  EXPECT_EQ(r.quantization, QuantizationLevel::bf16);
  for (const auto* list : {&r.recommended, &r.rejected})
    for (std::size_t i = 1; i < list->size(); ++i)
      EXPECT_LE((*list)[i - 1].instance.price_usd_per_hour, (*list)[i].instance.price_usd_per_hour);
  for (const auto& v : r.recommended) {
    SCOPED_TRACE(v.instance.name);
    EXPECT_TRUE(v.recommended);
    EXPECT_FALSE(v.rejection);
    ASSERT_TRUE(v.plan);
    EXPECT_TRUE(v.plan->fits);
    EXPECT_EQ(v.plan->strategy.cpu_offload_layers, 0u);
    for (const auto& s : v.plan->shards) EXPECT_LE(s.total_bytes, s.capacity_bytes) << s.device;
    ASSERT_TRUE(v.usd_per_million_tokens);
    EXPECT_NEAR(*v.usd_per_million_tokens,
                v.instance.price_usd_per_hour / (*v.plan->throughput.decode_tokens_per_s_total * 3600) * 1e6, 1e-9);
  }
  for (const auto& v : r.rejected) {
    EXPECT_FALSE(v.recommended);
    EXPECT_TRUE(v.rejection) << v.instance.name;
    EXPECT_FALSE(v.reason.empty()) << v.instance.name;
  }
  EXPECT_EQ(r.recommended.size() + r.rejected.size(), builtin().instances.size());
  // A 70B model in bf16 (about 134 GiB) never lands on a single 80 GB GPU.
  EXPECT_EQ(verdict_of(r, "a2-ultragpu-1g")->rejection, RejectionKind::device_memory);
}

TEST(Recommend, Bf16NeverGoesToT4OrV100) {
  for (std::string_view id : {"llama-3.2-1b", "llama-3.1-8b", "mistral-7b", "qwen2.5-14b"}) {
    SCOPED_TRACE(id);
    const auto r = recommend_instances(model(id), options_at(QuantizationLevel::bf16), builtin()).value();
    for (const auto& v : r.recommended) {
      const DeviceSpec* spec = find_spec(v.instance.accelerator);
      EXPECT_NE(spec->architecture, "Turing") << v.instance.name;
      EXPECT_NE(spec->architecture, "Volta") << v.instance.name;
    }
    for (std::string_view name : {"g4dn.xlarge", "Standard_NC4as_T4_v3", "p3.2xlarge", "p3dn.24xlarge"}) {
      const auto* v = verdict_of(r, name);
      ASSERT_NE(v, nullptr) << name;
      EXPECT_EQ(v->rejection, RejectionKind::dtype) << name;
      EXPECT_NE(v->reason.find("BF16 is unsupported"), std::string::npos) << v->reason;
    }
  }
  // In fp16 the T4 runs a 1B model.
  const auto fp16 = recommend_instances(model("llama-3.2-1b"), options_at(QuantizationLevel::fp16), builtin()).value();
  EXPECT_TRUE(verdict_of(fp16, "g4dn.xlarge")->recommended);
}

// Mixtral 8x7B in bf16 is about 87 GiB: 4 x L4 (96 GiB) hold it if memory
// could be pooled, but split by layers over PCIe the last stage holds 8 layers
// and the output head, more than one L4's 21.6 usable GiB; and 4 x 21.6 GiB is
// too little even if tensor parallelism were possible.
TEST(Recommend, SummedMemoryWouldFitButPerDeviceMemoryDoesNot) {
  const auto r = recommend_instances(model("mixtral-8x7b"), options_at(QuantizationLevel::bf16), builtin()).value();
  for (std::string_view name : {"g6.12xlarge", "g2-standard-48", "g5.12xlarge"}) {
    SCOPED_TRACE(name);
    const auto* v = verdict_of(r, name);
    ASSERT_NE(v, nullptr);
    EXPECT_FALSE(v->recommended);
    EXPECT_EQ(v->rejection, RejectionKind::device_memory);
    EXPECT_EQ(v->summed_memory_bytes, 96 * GiB);
    EXPECT_TRUE(v->summed_memory_fits);
    ASSERT_TRUE(v->plan);
    EXPECT_FALSE(v->plan->fits);
    EXPECT_TRUE(std::any_of(v->plan->shards.begin(), v->plan->shards.end(),
                            [](const Shard& s) { return s.total_bytes > s.capacity_bytes; }));
    EXPECT_NE(v->reason.find("a device cannot use its neighbour's memory"), std::string::npos) << v->reason;
  }
}

// Gemma 2 27B in fp16 on 4 x T4 (64 GiB). vLLM (the default runtime)
// shards each layer over the four cards through PCIe; llama.cpp splits
// layers only.
TEST(Recommend, PcieInstancesUseTensorParallelismUnderServingRuntimes) {
  const auto served = recommend_instances(model("gemma-2-27b"), options_at(QuantizationLevel::fp16), builtin()).value();
  for (std::string_view name : {"g4dn.12xlarge", "Standard_NC64as_T4_v3"}) {
    SCOPED_TRACE(name);
    const auto* v = verdict_of(served, name);
    ASSERT_NE(v, nullptr);
    EXPECT_TRUE(v->recommended) << v->reason;
    ASSERT_TRUE(v->plan);
    EXPECT_EQ(v->plan->strategy.tensor_parallel, 4u);
    EXPECT_TRUE(std::any_of(v->plan->assumptions.begin(), v->plan->assumptions.end(),
                            [](const std::string& a) { return a.find("over PCIe") != std::string::npos; }));
  }
  // llama.cpp on the same cards splits layers, which its smaller buffers
  // (no NCCL, a 512-token batch, the token embedding in host memory) fit.
  RecommendOptions layered = options_at(QuantizationLevel::fp16);
  layered.settings.runtime = Runtime::llama_cpp_cuda;
  const auto r = recommend_instances(model("gemma-2-27b"), layered, builtin()).value();
  for (std::string_view name : {"g4dn.12xlarge", "Standard_NC64as_T4_v3"}) {
    SCOPED_TRACE(name);
    const auto* v = verdict_of(r, name);
    ASSERT_NE(v, nullptr);
    ASSERT_TRUE(v->plan);
    EXPECT_EQ(v->plan->strategy.tensor_parallel, 1u);
    EXPECT_EQ(v->plan->strategy.pipeline_parallel, 4u);
  }
  // The same devices joined by NVLink (p3.8xlarge: 4 x V100 16GB) fit with tensor parallelism.
  const auto* nvlink = verdict_of(served, "p3.8xlarge");
  ASSERT_NE(nvlink, nullptr);
  EXPECT_TRUE(nvlink->recommended) << nvlink->reason;
  EXPECT_EQ(nvlink->plan->strategy.tensor_parallel, 4u);
}

TEST(Recommend, ProviderFilter) {
  RecommendOptions o = options_at(QuantizationLevel::int4);
  o.providers = {CloudProvider::gcp};
  const auto r = recommend_instances(model("llama-3.1-8b"), o, builtin()).value();
  ASSERT_FALSE(r.recommended.empty());
  for (const auto* list : {&r.recommended, &r.rejected})
    for (const auto& v : *list) EXPECT_EQ(v.instance.provider, CloudProvider::gcp) << v.instance.name;
}

TEST(Recommend, AUserCatalogueReplacesTheBuiltInOne) {
  const auto c = parse_instance_catalogue(
      catalogue_json(entry() + ", " +
                     entry({{"accelerator", "\"h100-sxm5-80gb\""},
                            {"memory_per_device_gib", "80"},
                            {"interconnect", "\"nvswitch\""}},
                           "mine.8xh100")),
      "user.json");
  ASSERT_TRUE(c) << c.error().message;
  const auto r = recommend_instances(model("llama-3.1-405b"), options_at(QuantizationLevel::fp8_e4m3), *c).value();
  EXPECT_EQ(r.catalogue_origin, "user.json");
  EXPECT_EQ(r.prices, "test prices");
  ASSERT_EQ(r.recommended.size() + r.rejected.size(), 2u);
  ASSERT_EQ(r.recommended.size(), 1u);
  EXPECT_EQ(r.recommended[0].instance.name, "mine.8xh100");
  ASSERT_EQ(r.rejected.size(), 1u);  // L4 runs fp8, but 405B in fp8 is twice 8 x 24 GB
  EXPECT_EQ(r.rejected[0].instance.name, "test.8xl4");
}

TEST(Recommend, JsonListsRejectionsWithReasons) {
  const auto r = recommend_instances(model("llama-3.1-8b"), options_at(QuantizationLevel::bf16), builtin()).value();
  const std::string json = to_json(r);
  EXPECT_EQ(json.rfind(R"({"model":"llama-3.1-8b","quantization":"bf16","context":4096,"batch":1,)", 0), 0u) << json;
  EXPECT_NE(json.find(R"("name":"g4dn.xlarge")"), std::string::npos);
  EXPECT_NE(json.find(R"("rejection":"dtype","reason":"BF16 is unsupported on the NVIDIA T4)"), std::string::npos);
  EXPECT_NE(json.find(R"("recommended":true,"rejection":null)"), std::string::npos);
}

// A model too large for any one instance: with --max-instances it spans
// copies of one type, priced and ordered as all of them together.
TEST(Recommend, SeveralInstancesForAModelNoneHolds) {
  const auto m = model("llama-3.1-405b");
  RecommendOptions o = options_at(QuantizationLevel::bf16);
  o.providers = {CloudProvider::aws};
  const auto alone = recommend_instances(m, o, builtin()).value();
  for (const auto& v : alone.recommended) EXPECT_EQ(v.instances, 1u) << v.instance.name;
  bool p5_rejected = false;
  for (const auto& v : alone.rejected) p5_rejected |= v.instance.name == "p5.48xlarge";
  EXPECT_TRUE(p5_rejected);  // 8 x 80 GB cannot hold 810 GB
  o.max_instances = 4;
  const auto spanning = recommend_instances(m, o, builtin()).value();
  const InstanceVerdict* p5 = nullptr;
  for (const auto& v : spanning.recommended)
    if (v.instance.name == "p5.48xlarge") p5 = &v;
  ASSERT_NE(p5, nullptr);
  EXPECT_EQ(p5->instances, 2u);  // TP 8 x PP 2, as on two DGX H100
  ASSERT_TRUE(p5->plan.has_value());
  EXPECT_EQ(p5->plan->strategy.nodes, 2u);
  EXPECT_EQ(p5->plan->strategy.tensor_parallel, 8u);
  for (std::size_t k = 1; k < spanning.recommended.size(); ++k) {
    const auto& a = spanning.recommended[k - 1];
    const auto& b = spanning.recommended[k];
    EXPECT_LE(a.instance.price_usd_per_hour * a.instances, b.instance.price_usd_per_hour * b.instances);
  }
  EXPECT_NE(to_json(spanning).find("\"instances\":2"), std::string::npos);
}

}  // namespace
