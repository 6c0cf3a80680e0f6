// Describing a node to the schedulers: NFD labels (Kubernetes' label rules on
// every fixture machine) and Slurm's gres.conf and slurm.conf lines.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

import hwaccel;

#include "module_helpers.hpp"

namespace hwaccel {
namespace {

std::map<std::string, std::string> as_map(const std::vector<NodeLabel>& labels) {
  std::map<std::string, std::string> out;
  for (const auto& l : labels) out[l.name] = l.value;
  return out;
}

TEST(NodeLabelRules, AsKubernetesDocumentsThem) {
  EXPECT_FALSE(label_problem({"feature.node.kubernetes.io/hwaccel.accelerators", "8"}));
  EXPECT_FALSE(label_problem({"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}));
  EXPECT_FALSE(label_problem({"plain-name", ""}));
  EXPECT_TRUE(label_problem({"feature.node.kubernetes.io/" + std::string(64, 'a'), "1"}));
  EXPECT_FALSE(label_problem({"feature.node.kubernetes.io/" + std::string(63, 'a'), std::string(63, 'b')}));
  EXPECT_TRUE(label_problem({"x/name", std::string(64, 'b')}));
  EXPECT_TRUE(label_problem({"Feature.Node/name", "1"})) << "a prefix is lower case";
  EXPECT_TRUE(label_problem({"a..b/name", "1"}));
  EXPECT_TRUE(label_problem({"-a.b/name", "1"}));
  EXPECT_TRUE(label_problem({std::string(254, 'a') + "/name", "1"}));
  EXPECT_TRUE(label_problem({"/name", "1"}));
  EXPECT_TRUE(label_problem({"prefix/", "1"}));
  EXPECT_TRUE(label_problem({"name", "two words"}));
  EXPECT_TRUE(label_problem({"name", "-leading"}));
  EXPECT_TRUE(label_problem({"name", "trailing."}));
  EXPECT_TRUE(label_problem({"na/me/x", "1"}));
  EXPECT_TRUE(label_problem({" nvidia.com/gpu.count", "1"})) << "a prefix is never trimmed";
  EXPECT_TRUE(label_problem({"nvidia. com/gpu.count", "1"}));
}

TEST(NfdLabels, EveryFixtureMachineGivesValidLabels) {
  std::size_t machines = 0;
  for (const auto& entry : std::filesystem::directory_iterator(testing::fixtures_root() / "machines")) {
    if (!entry.is_directory()) continue;
    const std::string name = entry.path().filename().string();
    auto system = testing::open_machine(name);
    const auto registry = DetectBuilder{}.detect(*system);
    const auto labels = nfd_labels(registry, NfdOptions{.vendor_labels = true, .system = system.get()});
    ASSERT_FALSE(labels.empty()) << name;
    for (const auto& l : labels) {
      EXPECT_FALSE(label_problem(l)) << name << ": " << l.name << "=" << l.value << ": " << *label_problem(l);
      const bool known_prefix = l.name.starts_with("feature.node.kubernetes.io/hwaccel.") ||
                                l.name.starts_with("nvidia.com/") || l.name.starts_with("amd.com/") ||
                                l.name.starts_with("beta.amd.com/") || l.name.starts_with("gpu.intel.com/");
      EXPECT_TRUE(known_prefix) << name << ": " << l.name;
    }
    EXPECT_TRUE(std::is_sorted(labels.begin(), labels.end(),
                               [](const NodeLabel& a, const NodeLabel& b) { return a.name < b.name; }));
    const std::string file = nfd_feature_file(labels);
    EXPECT_EQ(static_cast<std::size_t>(std::count(file.begin(), file.end(), '\n')), labels.size() + 1) << name;
    ++machines;
  }
  EXPECT_GE(machines, 70u);
}

TEST(NfdLabels, EightH100sWithNvidiaNames) {
  auto system = testing::open_machine("dgx-h100-8x-nvswitch");
  const auto registry = DetectBuilder{}.detect(*system);
  const auto plain = as_map(nfd_labels(registry));
  EXPECT_EQ(plain.at("feature.node.kubernetes.io/hwaccel.accelerators"), "8");
  EXPECT_EQ(plain.at("feature.node.kubernetes.io/hwaccel.backend.cuda"), "8");
  EXPECT_EQ(plain.at("feature.node.kubernetes.io/hwaccel.family.gpu"), "8");
  EXPECT_EQ(plain.at("feature.node.kubernetes.io/hwaccel.spec.h100-sxm5-80gb"), "8");
  EXPECT_EQ(plain.at("feature.node.kubernetes.io/hwaccel.cuda.compute-capability"), "9.0");
  EXPECT_EQ(plain.at("feature.node.kubernetes.io/hwaccel.cuda.driver"), "565.57.01");
  EXPECT_EQ(plain.at("feature.node.kubernetes.io/hwaccel.interconnect.nvswitch"), "8");
  EXPECT_EQ(plain.at("feature.node.kubernetes.io/hwaccel.device-memory-gib.min"), "79");
  EXPECT_EQ(plain.at("feature.node.kubernetes.io/hwaccel.accelerator-numa-nodes"), "2");
  EXPECT_FALSE(plain.contains("nvidia.com/gpu.count")) << "vendor names only when asked";

  const auto vendor = as_map(nfd_labels(registry, NfdOptions{.vendor_labels = true}));
  EXPECT_EQ(vendor.at("nvidia.com/gpu.count"), "8");
  EXPECT_EQ(vendor.at("nvidia.com/gpu.product"), "NVIDIA-H100-80GB-HBM3");
  EXPECT_EQ(vendor.at("nvidia.com/gpu.memory"), "81559");
  EXPECT_EQ(vendor.at("nvidia.com/gpu.family"), "hopper");
  EXPECT_EQ(vendor.at("nvidia.com/gpu.compute.major"), "9");
  EXPECT_EQ(vendor.at("nvidia.com/gpu.compute.minor"), "0");
  EXPECT_EQ(vendor.at("nvidia.com/cuda.driver.major"), "565");
  EXPECT_EQ(vendor.at("nvidia.com/cuda.driver.minor"), "57");
  EXPECT_EQ(vendor.at("nvidia.com/cuda.driver.rev"), "01");
}

TEST(NfdLabels, AmdAndIntelLabellersNames) {
  auto mi300 = testing::open_machine("amd-8x-mi300x-xgmi");
  const auto amd = as_map(nfd_labels(DetectBuilder{}.detect(*mi300), NfdOptions{.vendor_labels = true}));
  EXPECT_EQ(amd.at("beta.amd.com/gpu.device-id.74a1"), "8");
  EXPECT_EQ(amd.at("beta.amd.com/gpu.vram.192G"), "8");
  EXPECT_EQ(amd.at("beta.amd.com/gpu.cu-count.304"), "8");
  EXPECT_EQ(amd.at("amd.com/gpu.device-id"), "74a1");
  EXPECT_EQ(amd.at("amd.com/gpu.product-name"), "AMD-Instinct-MI300X-OAM");

  auto arc = testing::open_machine("raptor-lake-igpu-arc-b580-xpu-smi");
  const auto registry = DetectBuilder{}.detect(*arc);
  const auto without_machine = as_map(nfd_labels(registry, NfdOptions{.vendor_labels = true}));
  const auto with_machine = as_map(nfd_labels(registry, NfdOptions{.vendor_labels = true, .system = arc.get()}));
  const auto intel = [](const std::map<std::string, std::string>& m) {
    return std::count_if(m.begin(), m.end(), [](const auto& kv) { return kv.first.starts_with("gpu.intel.com/"); });
  };
  EXPECT_EQ(intel(without_machine), 0) << "the PCI class is the machine's to tell";
  EXPECT_EQ(with_machine.at("gpu.intel.com/device-id.0300-e20b.count"), "1");  // the Arc B580, a VGA-class device
  EXPECT_EQ(with_machine.at("gpu.intel.com/device-id.0300-e20b.present"), "true");
  auto max = testing::open_machine("4x-max1550-i915-no-xpu-smi");
  const auto data_center = as_map(nfd_labels(DetectBuilder{}.detect(*max), NfdOptions{.vendor_labels = true, .system = max.get()}));
  EXPECT_EQ(data_center.at("gpu.intel.com/device-id.0380-0bd5.count"), "4");  // display-class: 0380, read, not assumed
}

TEST(NfdLabels, FeatureFileWithExpiry) {
  const std::vector<NodeLabel> labels = {{"feature.node.kubernetes.io/hwaccel.accelerators", "2"}};
  const auto at = std::chrono::sys_days{std::chrono::year{2026} / 12 / 1};
  EXPECT_EQ(nfd_feature_file(labels, at),
            "# Node labels from hwaccel (docs/fleet.md); Node Feature Discovery reads this features.d file.\n"
            "# +expiry-time=2026-12-01T00:00:00Z\n"
            "feature.node.kubernetes.io/hwaccel.accelerators=2\n");
}

std::vector<std::string> gres_lines(const SlurmNodeConfig& config) {
  std::vector<std::string> out;
  for (std::string_view line : text::lines(config.gres_conf))
    if (!line.empty() && line.front() != '#') out.emplace_back(line);
  return out;
}

TEST(SlurmGres, EightNvlinkGpusBoundToTheirSocket) {
  auto system = testing::open_machine("dgx-h100-8x-nvswitch");
  auto registry = DetectBuilder{}.detect(*system);
  registry.inventory().system.host = "dgx-01";
  const SlurmNodeConfig config = slurm_node_config(registry, *system);
  EXPECT_TRUE(config.warnings.empty()) << config.warnings.front();
  const auto lines = gres_lines(config);
  ASSERT_EQ(lines.size(), 8u) << config.gres_conf;
  // Two sockets of 56 cores; CPUs 0-55 and 112-167 are socket 0's first and
  // second threads: Slurm's cores 0-55.
  EXPECT_EQ(lines[0], "Name=gpu Type=h100_80gb_hbm3 File=/dev/nvidia0 Cores=0-55 Links=-1,18,18,18,18,18,18,18");
  EXPECT_EQ(lines[7].substr(0, 70), "Name=gpu Type=h100_80gb_hbm3 File=/dev/nvidia7 Cores=56-111 Links=18,1");
  EXPECT_TRUE(lines[7].ends_with("Links=18,18,18,18,18,18,18,-1")) << lines[7];
  EXPECT_EQ(config.node_line,
            "NodeName=dgx-01 CPUs=224 Boards=1 SocketsPerBoard=2 CoresPerSocket=56 ThreadsPerCore=2 RealMemory=" +
                std::to_string(*registry.system().cpu->memory_total_bytes >> 20) + " Gres=gpu:h100_80gb_hbm3:8");
  EXPECT_EQ(config.gres_types, "gpu");

  const auto shared = slurm_node_config(registry, *system, SlurmOptions{.node_name = "gpu-17", .node_name_in_gres = true});
  EXPECT_TRUE(gres_lines(shared)[0].starts_with("NodeName=gpu-17 Name=gpu ")) << shared.gres_conf;
  EXPECT_TRUE(shared.node_line.starts_with("NodeName=gpu-17 "));
}

TEST(SlurmGres, AmdComputePartitionsAreGpusOfTheirOwn) {
  auto system = testing::open_machine("amd-mi300x-cpx-vm");
  const auto registry = DetectBuilder{}.detect(*system);
  const SlurmNodeConfig config = slurm_node_config(registry, *system, SlurmOptions{.node_name = "mi300-cpx"});
  const auto lines = gres_lines(config);
  std::size_t partitions = 0;
  for (const auto& d : registry.devices()) partitions += d.backend == Backend::rocm ? d.partitions.size() : 0;
  ASSERT_EQ(lines.size(), partitions) << config.gres_conf;
  EXPECT_EQ(lines[0].substr(0, 72), "Name=gpu Type=instinct_mi300x_oam File=/dev/dri/renderD128");
  EXPECT_NE(config.node_line.find("Gres=gpu:instinct_mi300x_oam:" + std::to_string(partitions)), std::string::npos)
      << config.node_line;
}

TEST(SlurmGres, MigInstancesWithTheirCapabilityFiles) {
  auto system = testing::open_machine("a100-40gb-mig-enabled");
  const auto registry = DetectBuilder{}.detect(*system);
  const SlurmNodeConfig config = slurm_node_config(registry, *system, SlurmOptions{.node_name = "a2-mig"});
  const auto lines = gres_lines(config);
  ASSERT_EQ(lines.size(), 2u) << config.gres_conf;
  // GPU instances 1 and 2, compute instance 0 of each (the fixture's mig-minors).
  EXPECT_EQ(lines[0],
            "Name=gpu Type=a100-sxm4-40gb_3g.20gb MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/nvidia-cap12,"
            "/dev/nvidia-caps/nvidia-cap13");
  EXPECT_EQ(lines[1],
            "Name=gpu Type=a100-sxm4-40gb_3g.20gb MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/nvidia-cap21,"
            "/dev/nvidia-caps/nvidia-cap22");
  EXPECT_NE(config.node_line.find("Gres=gpu:a100-sxm4-40gb_3g.20gb:2"), std::string::npos) << config.node_line;
}

TEST(SlurmGres, WhatCannotBeKnownIsSaid) {
  // An Arm host: /proc/cpuinfo has no core ids, and the capture has no topology files.
  auto system = testing::open_machine("gh200-grace-hopper");
  auto registry = DetectBuilder{}.detect(*system);
  const SlurmNodeConfig config = slurm_node_config(registry, *system);
  EXPECT_FALSE(config.warnings.empty());
  for (const auto& line : gres_lines(config)) EXPECT_EQ(line.find("Cores="), std::string::npos) << line;
  EXPECT_TRUE(std::any_of(config.warnings.begin(), config.warnings.end(),
                          [](const std::string& w) { return w.find("Cores= is left out") != std::string::npos; }));
}

}  // namespace
}  // namespace hwaccel
