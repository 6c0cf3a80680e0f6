// Plans carry the model's load time when the registry knows the storage:
// the device holding the model file's mount, or the fastest local device for
// a catalogue model; unknown bandwidths (network filesystems) say so.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "../test_support.hpp"

import hwaccel;

namespace {

using namespace hwaccel;

// One H100 and the given storage.
AcceleratorRegistry with_storage(std::vector<StorageDevice> storage) {
  const auto devices = hypothetical_registry("1xH100-SXM-80GB").value();
  Inventory inv;
  inv.devices.assign(devices.devices().begin(), devices.devices().end());
  inv.system.storage = std::move(storage);
  return AcceleratorRegistry(std::move(inv));
}

StorageDevice disk(std::string name, StorageKind kind, std::optional<double> gbps, std::string source,
                   std::vector<std::string> mounts) {
  StorageDevice d;
  d.name = std::move(name);
  d.kind = kind;
  d.read_bandwidth_gbps = gbps;
  d.bandwidth_source = std::move(source);
  d.mount_points = std::move(mounts);
  return d;
}

constexpr std::string_view tiny_llama_config =
    R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 256, "num_attention_heads": 4,
        "num_key_value_heads": 4, "intermediate_size": 512, "vocab_size": 1000, "max_position_embeddings": 4096})";

TEST(PlanLoadTime, FromTheFastestLocalDeviceOfACapturedMachine) {
  const auto dir = hwaccel::testing::fixtures_root() / "machines" / "xeon-ib-roce-nvme-nfs";
  auto system = FixtureSystem::open(dir.string());
  ASSERT_TRUE(system) << system.error().message;
  const auto registry = AcceleratorRegistry::builder().detect(**system);
  const auto plan = plan_inference(registry, catalogue_model("llama-3.1-8b").value()).value();
  ASSERT_TRUE(plan.load_time);
  // The machine's two NVMe drives: 7.4 and 14.81 GB/s PCIe-link ceilings.
  EXPECT_EQ(plan.load_time->storage, "nvme1n1");
  EXPECT_DOUBLE_EQ(plan.load_time->read_bandwidth_gbps, 14.81);
  EXPECT_EQ(plan.load_time->bandwidth_source, "pcie_link");
  EXPECT_EQ(plan.load_bytes, plan.memory.weights_bytes);
  EXPECT_DOUBLE_EQ(plan.load_time->seconds, static_cast<double>(plan.load_bytes) / 14.81e9);
  EXPECT_NE(plan.load_time->assumption.find("fastest local device"), std::string::npos);
  const std::string json = to_json(plan);
  EXPECT_NE(json.find(R"("load_time":{"seconds":)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("storage":"nvme1n1","read_bandwidth_gbps":14.81,"bandwidth_source":"pcie_link")"),
            std::string::npos)
      << json;
}

TEST(PlanLoadTime, FromTheDeviceHoldingTheModelFile) {
  hwaccel::testing::TempDir dir;
  hwaccel::testing::write_file(dir.path() / "tiny" / "config.json", tiny_llama_config);
  const auto model = load_model((dir.path() / "tiny").string()).value();
  const auto registry = with_storage({disk("nvme0n1", StorageKind::nvme, 7.0, "pcie_link", {"/"}),
                                      disk("sdb", StorageKind::hdd, 0.2, "table", {dir.str()})});
  const auto plan = plan_inference(registry, model).value();
  ASSERT_TRUE(plan.load_time);
  EXPECT_EQ(plan.load_time->storage, "sdb");  // the longest mount above the file, not the faster root disk
  EXPECT_EQ(plan.load_time->bandwidth_source, "table");
  EXPECT_NE(plan.load_time->assumption.find("a class default for hdd storage, not a measurement"), std::string::npos)
      << plan.load_time->assumption;
}

TEST(PlanLoadTime, UnknownBandwidthIsAnAssumptionNotAGuess) {
  hwaccel::testing::TempDir dir;
  hwaccel::testing::write_file(dir.path() / "tiny" / "config.json", tiny_llama_config);
  const auto model = load_model((dir.path() / "tiny" / "config.json").string()).value();
  StorageDevice nfs = disk("10.0.0.5:/models", StorageKind::network, std::nullopt, "", {dir.str()});
  nfs.filesystem = "nfs4";
  const auto plan = plan_inference(with_storage({nfs}), model).value();
  EXPECT_FALSE(plan.load_time);
  EXPECT_EQ(plan.load_bytes, 0u);
  bool said = false;
  for (const auto& a : plan.assumptions) said |= a.rfind("load time unknown: the read bandwidth of 10.0.0.5:/models", 0) == 0;
  EXPECT_TRUE(said);
  EXPECT_NE(to_json(plan).find(R"("load_time":null)"), std::string::npos);
}

TEST(PlanLoadTime, NoStorageNoEstimate) {
  const auto plan = plan_inference(hypothetical_registry("1xH100-SXM-80GB").value(),
                                   catalogue_model("llama-3.1-8b").value())
                        .value();
  EXPECT_FALSE(plan.load_time);
  for (const auto& a : plan.assumptions) EXPECT_EQ(a.find("load time"), std::string::npos) << a;
}

}  // namespace
