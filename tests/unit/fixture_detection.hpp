// Detection over a FixtureBuilder's tree, for the unit tests: the tree opened
// as a System, one backend alone, the host probes alone, and one detector's
// warnings. Include after `import hwaccel;` (it uses the module's types).
#pragma once

#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "../test_support.hpp"

namespace hwaccel::testing {

/// The builder's tree as a fixture System; nullptr (and a test failure) when
/// it does not open.
inline std::unique_ptr<FixtureSystem> open_fixture(FixtureBuilder& builder) {
  auto system = FixtureSystem::open(builder.write());
  EXPECT_TRUE(system) << (system ? "" : system.error().message);
  return system ? std::move(*system) : nullptr;
}

/// Detection by `backend` alone (no host probes); an empty registry, and a
/// test failure, when the tree does not open.
inline AcceleratorRegistry detect_backend(FixtureBuilder& builder, Backend backend) {
  auto system = FixtureSystem::open(builder.write());
  EXPECT_TRUE(system) << (system ? "" : system.error().message);
  if (!system) return {};
  return DetectBuilder::none().with(backend).system_probes(false).detect(**system);
}

/// Detection with every backend off: the host probes alone.
inline Inventory probe(const System& system) {
  DetectOptions options;
  options.backends.reset();
  return detect_inventory(system, options);
}

/// The warnings `backend` (a probe's name) left in `inv`.
inline std::vector<Warning> warnings_of(const Inventory& inv, std::string_view backend) {
  std::vector<Warning> out;
  for (const auto& w : inv.warnings)
    if (w.backend == backend) out.push_back(w);
  return out;
}

}  // namespace hwaccel::testing
