// The built-in data files read through the readers users' files go through:
// data/device-specs.json by read_device_specs, each entry equal, field by
// field, to the built-in table's; and the compiled-in text is the file's.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

import hwaccel;

namespace {

using namespace hwaccel;

std::filesystem::path data_file(std::string_view name) {
  const char* root = std::getenv("HWACCEL_SOURCE_DIR");
  return std::filesystem::path(root ? root : ".") / "data" / std::string(name);
}

std::string file_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Every field, so that a difference says which.
void expect_same_spec(const DeviceSpec& got, const DeviceSpec& want) {
  SCOPED_TRACE(want.id);
  EXPECT_EQ(got.id, want.id);
  EXPECT_EQ(got.name, want.name);
  EXPECT_EQ(got.product, want.product);
  EXPECT_EQ(got.vendor, want.vendor);
  EXPECT_EQ(got.backend, want.backend);
  EXPECT_EQ(got.family, want.family);
  EXPECT_EQ(got.architecture, want.architecture);
  EXPECT_EQ(got.compute_capability, want.compute_capability);
  EXPECT_EQ(got.memory_bytes, want.memory_bytes);
  EXPECT_EQ(got.memory_kind, want.memory_kind);
  EXPECT_EQ(got.memory_bandwidth_gbps, want.memory_bandwidth_gbps);
  EXPECT_EQ(got.fp32_tflops, want.fp32_tflops);
  EXPECT_EQ(got.bf16_tflops, want.bf16_tflops);
  EXPECT_EQ(got.fp16_tflops, want.fp16_tflops);
  EXPECT_EQ(got.fp8_tflops, want.fp8_tflops);
  EXPECT_EQ(got.int8_tops, want.int8_tops);
  ASSERT_EQ(got.fabric.has_value(), want.fabric.has_value());
  if (want.fabric) {
    EXPECT_EQ(got.fabric->kind, want.fabric->kind);
    EXPECT_EQ(got.fabric->name, want.fabric->name);
    EXPECT_EQ(got.fabric->bandwidth_gbps, want.fabric->bandwidth_gbps);
    EXPECT_EQ(got.fabric->domain_size, want.fabric->domain_size);
  }
  EXPECT_EQ(got.pcie_generation, want.pcie_generation);
  EXPECT_EQ(got.pcie_width, want.pcie_width);
  EXPECT_EQ(got.tdp_watts, want.tdp_watts);
  EXPECT_EQ(got.pci_vendor_id, want.pci_vendor_id);
  EXPECT_EQ(got.pci_device_ids, want.pci_device_ids);
  EXPECT_EQ(got.match, want.match);
  EXPECT_EQ(got.devices_per_package, want.devices_per_package);
  EXPECT_EQ(got.memory_options_gib, want.memory_options_gib);
  EXPECT_EQ(got.source, want.source);
  EXPECT_EQ(got.notes, want.notes);
  EXPECT_TRUE(got == want);
}

TEST(BuiltinData, DeviceSpecsFileIsTheBuiltInTable) {
  const auto path = data_file("device-specs.json");
  const auto set = read_device_specs(path.string());
  ASSERT_TRUE(set) << set.error().message;
  const auto builtin = device_specs();
  ASSERT_EQ(set->specs().size(), builtin.size());
  for (std::size_t i = 0; i < builtin.size(); ++i) expect_same_spec(set->specs()[i], builtin[i]);
  // What a copy of the file adds: nothing; listed once.
  EXPECT_EQ(device_specs_json(*set), device_specs_json());
  EXPECT_EQ(builtin_device_specs_json(), file_text(path)) << "the library was built from another device-specs.json";
}

}  // namespace
