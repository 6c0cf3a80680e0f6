// Registry queries and the detect builder.
#include <gtest/gtest.h>

#include <string>

import hwaccel;

namespace {

using namespace hwaccel;

DeviceProfile device(Backend b, std::uint32_t index, Family f, bool visible = true) {
  DeviceProfile d;
  d.backend = b;
  d.family = f;
  d.index = index;
  d.id = device_id(b, index);
  d.visible = visible;
  return d;
}

TEST(Registry, QueriesFilterByAvailabilityAndVisibility) {
  Inventory inv;
  inv.devices = {device(Backend::cpu, 0, Family::cpu), device(Backend::cuda, 0, Family::gpu),
                 device(Backend::cuda, 1, Family::gpu, false), device(Backend::tpu, 0, Family::tpu)};
  inv.devices[3].available = false;
  const AcceleratorRegistry r(inv);
  EXPECT_EQ(r.available().size(), 2u);
  EXPECT_EQ(r.by_family(Family::gpu).size(), 1u);
  EXPECT_EQ(r.by_backend(Backend::cuda).size(), 2u);
  EXPECT_TRUE(r.has_accelerator());
  ASSERT_TRUE(r.find("cuda:1"));
  EXPECT_FALSE(r.find("cuda:7"));
  Inventory cpu_only;
  cpu_only.devices = {device(Backend::cpu, 0, Family::cpu)};
  EXPECT_FALSE(AcceleratorRegistry(cpu_only).has_accelerator());
}

TEST(Registry, AddDeviceAssignsIdsAndRejectsDuplicates) {
  AcceleratorRegistry r;
  DeviceProfile d;
  d.backend = Backend::rocm;
  d.family = Family::gpu;
  ASSERT_TRUE(r.add_device(d));
  ASSERT_TRUE(r.add_device(d));
  EXPECT_EQ(r.devices()[1].id, "rocm:1");
  auto dup = r.add_device(r.devices()[0]);
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().kind, ErrorKind::invalid_input);
}

TEST(Builder, SelectsBackends) {
  auto b = DetectBuilder::none();
  EXPECT_TRUE(b.options().backends.none());
  b.with(Backend::cuda).with(Backend::rocm).without(Backend::cuda);
  EXPECT_FALSE(b.options().enabled(Backend::cuda));
  EXPECT_TRUE(b.options().enabled(Backend::rocm));
  EXPECT_FALSE(b.select("cuda,bogus"));
  EXPECT_TRUE(b.select("cpu"));
  EXPECT_TRUE(b.options().enabled(Backend::cpu));
  EXPECT_FALSE(b.options().enabled(Backend::rocm));
}

TEST(Builder, DetectsThisMachineWithACpu) {
  const auto registry = DetectBuilder{}.detect();
  ASSERT_FALSE(registry.devices().empty());
  EXPECT_EQ(registry.devices()[0].backend, Backend::cpu);
  ASSERT_TRUE(registry.system().cpu);
  EXPECT_GT(registry.system().cpu->memory_total_bytes.value_or(0), 0u);
  EXPECT_FALSE(registry.timings().empty());
}

TEST(Builder, NoBackendsMeansNoDevices) {
  const auto registry = DetectBuilder::none().system_probes(false).detect();
  EXPECT_TRUE(registry.devices().empty());
  EXPECT_TRUE(registry.timings().empty());
}

}  // namespace
