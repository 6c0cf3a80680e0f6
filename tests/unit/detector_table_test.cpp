// The detector table: one row per backend, and every fact a backend must
// state there (BackendFacts), so that a new backend cannot leave the doctor,
// the watcher, telemetry or the planners guessing.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <string_view>

import hwaccel;

namespace {

using namespace hwaccel;

TEST(DetectorTable, EveryBackendHasOneRowNamedAfterIt) {
  std::set<Backend> seen;
  for (const Detector* d : detector_table()) {
    if (!d->backend) continue;
    EXPECT_TRUE(seen.insert(*d->backend).second) << d->name << " has two rows";
    EXPECT_EQ(d->name, to_string(*d->backend));
    EXPECT_EQ(&detector_for(*d->backend), d);
  }
  EXPECT_EQ(seen.size(), backend_count);
}

TEST(DetectorTable, HostProbesComeAfterTheBackends) {
  bool probes = false;
  for (const Detector* d : detector_table()) {
    if (!d->backend) probes = true;
    else EXPECT_FALSE(probes) << d->name << " comes after a host probe";
    EXPECT_NE(d->detect, nullptr) << d->name;
  }
}

TEST(DetectorTable, EveryAcceleratorBackendStatesItsFacts) {
  for (const Backend b : all_backends) {
    // A plugin's facts are its descriptor's (plugin_test.cpp), not the row's.
    if (b == Backend::cpu || b == Backend::plugin) continue;
    const Detector& row = detector_for(b);
    const BackendFacts& f = row.facts;
    SCOPED_TRACE(std::string(row.name));
    // Vulkan devices are any vendor's.
    if (b != Backend::vulkan) EXPECT_FALSE(f.vendor.empty()) << "who makes its devices";
    EXPECT_FALSE(f.runtimes.empty()) << "what serves models on its devices";
    // Its tools are only looked for where the kernel shows a trace of its
    // devices, so a backend with tools must say what that trace is.
    if (!row.tools.empty() && !row.tools_without_evidence)
      EXPECT_TRUE(!f.drivers.empty() || !f.modules.empty() || !f.pci.empty() || !f.device_nodes.empty() ||
                  !f.shared_device_nodes.empty())
          << "the kernel's trace of its devices";
    for (const PciKind& k : f.pci) {
      EXPECT_NE(k.vendor, 0);
      if (k.class_prefix == 0) continue;
      // A kind with a class is one the doctor checks: it must be able to say
      // what the device is, which driver it needs and how to get it loaded.
      EXPECT_FALSE(k.what.empty());
      EXPECT_FALSE(f.drivers.empty());
      EXPECT_FALSE(f.driver_remedy.empty());
      EXPECT_NE(f.device_nodes_of, nullptr) << "the nodes the doctor checks";
      EXPECT_FALSE(f.container_remedy.empty());
    }
    for (const auto& p : f.tool_packages)
      EXPECT_NE(std::find(row.tools.begin(), row.tools.end(), p.tool), row.tools.end()) << p.tool << " is not its tool";
  }
}

TEST(DetectorTable, AVariableBelongsToOneBackend) {
  std::set<std::string_view> names;
  for (const Backend b : all_backends)
    for (const auto& v : facts_of(b).visibility_variables) EXPECT_TRUE(names.insert(v.name).second) << v.name;
  const auto listed = device_selection_variables();
  EXPECT_EQ(std::set<std::string_view>(listed.begin(), listed.end()), names);
  // What a launch sets, for the backends whose runtimes take device indices.
  EXPECT_EQ(facts_of(Backend::cuda).launch_variable(), "CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(facts_of(Backend::rocm).launch_variable(), "HIP_VISIBLE_DEVICES");
  EXPECT_EQ(facts_of(Backend::aws_neuron).launch_variable(), "") << "Neuron's variable lists cores";
}

TEST(DetectorTable, TelemetrySourcesAreTheRowsThatNameOne) {
  std::set<Backend> named;
  for (const Backend b : all_backends)
    if (!facts_of(b).telemetry.empty()) named.insert(b);
  const auto read = telemetry_backends();
  EXPECT_EQ(std::set<Backend>(read.begin(), read.end()), named);
}

TEST(DetectorTable, EveryBackendBelongsToAFamily) {
  for (const Backend b : all_backends) {
    const auto members = backends_of(default_family(b));
    EXPECT_NE(std::find(members.begin(), members.end(), b), members.end()) << to_string(b);
  }
  const auto npu = backends_of(Family::npu);
  EXPECT_NE(std::find(npu.begin(), npu.end(), Backend::apple), npu.end()) << "Apple reports its Neural Engine";
}

}  // namespace
