// The built-in data files read through the readers users' files go through:
// data/device-specs.json by read_device_specs, each entry equal, field by
// field, to the built-in table's; data/runtime-profiles.json by
// parse_runtime_profiles and data/models.json by parse_model_catalogue (each
// entry's config by the config.json reader: tests/cli/catalogue_as_config.py
// plans every one both ways); and the compiled-in text is each file's. And
// what the runtime-profile and catalogue readers refuse.
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

void expect_same_profile(const RuntimeProfile& got, const RuntimeProfile& want) {
  SCOPED_TRACE(std::string(want.name));
  EXPECT_EQ(got.runtime, want.runtime);
  EXPECT_EQ(got.name, want.name);
  EXPECT_EQ(got.description, want.description);
  EXPECT_EQ(got.bandwidth_efficiency, want.bandwidth_efficiency);
  EXPECT_EQ(got.dequant_ops_per_weight, want.dequant_ops_per_weight);
  EXPECT_EQ(got.layer_overhead_us, want.layer_overhead_us);
  EXPECT_EQ(got.compute_efficiency, want.compute_efficiency);
  EXPECT_EQ(got.kv_read_per_query_head, want.kv_read_per_query_head);
  EXPECT_EQ(got.interval_low, want.interval_low);
  EXPECT_EQ(got.interval_high, want.interval_high);
  EXPECT_EQ(got.calibration_points, want.calibration_points);
  EXPECT_EQ(got.calibrated_on, want.calibrated_on);
  EXPECT_EQ(got.prefill_chunk_tokens, want.prefill_chunk_tokens);
  EXPECT_EQ(got.token_embedding_on_host, want.token_embedding_on_host);
  EXPECT_EQ(got.collective_buffers, want.collective_buffers);
  EXPECT_EQ(got.row_split_sync_us, want.row_split_sync_us);
  EXPECT_EQ(got.tensor_parallel_over_pcie, want.tensor_parallel_over_pcie);
}

TEST(BuiltinData, RuntimeProfilesFileIsTheBuiltInTable) {
  const auto path = data_file("runtime-profiles.json");
  const std::string text = file_text(path);
  const auto read = parse_runtime_profiles(text, path.string());
  ASSERT_TRUE(read) << read.error().message;
  const auto builtin = runtime_profiles();
  ASSERT_EQ(read->size(), all_runtimes().size());
  ASSERT_EQ(builtin.size(), all_runtimes().size());
  for (std::size_t i = 0; i < builtin.size(); ++i) {
    EXPECT_EQ(builtin[i].runtime, all_runtimes()[i]);
    EXPECT_EQ(builtin[i].name, to_string(all_runtimes()[i]));
    expect_same_profile((*read)[i], builtin[i]);
  }
  EXPECT_EQ(builtin_runtime_profiles_json(), text) << "the library was built from another runtime-profiles.json";
}

// A built-in file with one edit: `from` (which must occur) replaced by `to`.
std::string edited(std::string_view builtin, std::string_view from, std::string_view to) {
  std::string text(builtin);
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

std::string edited_profiles(std::string_view from, std::string_view to) {
  return edited(builtin_runtime_profiles_json(), from, to);
}

std::string edited_catalogue(std::string_view from, std::string_view to) {
  return edited(builtin_model_catalogue_json(), from, to);
}

// A file a reader must refuse: the error's kind, and what its message says
// (after the file's name, which opens it).
struct FaultCase {
  std::string text;
  ErrorKind kind;
  std::string_view says;
};

template <class Reader, std::size_t N>
void expect_refused_by_name(Reader read_file, const FaultCase (&cases)[N]) {
  for (const auto& c : cases) {
    const auto read = read_file(c.text, "memo.json");
    ASSERT_FALSE(read) << c.says;
    EXPECT_EQ(read.error().kind, c.kind) << read.error().message;
    EXPECT_NE(read.error().message.find(std::string(c.says)), std::string::npos) << read.error().message;
    EXPECT_EQ(read.error().message.rfind("memo.json", 0), 0u) << read.error().message;
  }
}

TEST(BuiltinData, RuntimeProfileFilesWithFaultsAreRefusedByName) {
  const FaultCase cases[] = {
      {"", ErrorKind::parse_error, "not valid JSON"},
      {"[]", ErrorKind::parse_error, "memo.json"},
      {edited_profiles("\"hwaccel-runtime-profiles\"", "\"hwaccel-device-specs\""), ErrorKind::parse_error,
       "must be \"hwaccel-runtime-profiles\""},
      {edited_profiles("\"version\": 1", "\"version\": 2"), ErrorKind::parse_error, "must be 1"},
      {edited_profiles("\"runtime\": \"mlx\"", "\"runtime\": \"mlx-metal\""), ErrorKind::invalid_input,
       "is not a runtime hwaccel knows"},
      {edited_profiles("\"runtime\": \"sglang\"", "\"runtime\": \"vllm\""), ErrorKind::invalid_input,
       "repeats an earlier entry"},
      {edited_profiles("\"bandwidth_efficiency\": 0.89", "\"bandwidth_efficiency\": 1.89"), ErrorKind::invalid_input,
       "bandwidth_efficiency"},
      {edited_profiles("\"interval_low\": 0.6888", "\"interval_low\": 0.99, \"x\": 1"), ErrorKind::parse_error, "\"x\""},
      {edited_profiles("\"calibration_points\": 12,", ""), ErrorKind::parse_error, "calibration_points"},
      {edited_profiles("\"collective_buffers\": false", "\"collective_buffers\": 0"), ErrorKind::parse_error,
       "collective_buffers"},
  };
  expect_refused_by_name([](std::string_view text, std::string_view origin) { return parse_runtime_profiles(text, origin); },
                         cases);
  // Names match as --runtime does, without case or punctuation; the profile
  // keeps the canonical name.
  const auto spelled = parse_runtime_profiles(edited_profiles("\"runtime\": \"sglang\"", "\"runtime\": \"SGLang\""),
                                              "memo.json");
  ASSERT_TRUE(spelled) << spelled.error().message;
  EXPECT_EQ((*spelled)[static_cast<std::size_t>(Runtime::sglang)].name, "sglang");
  // A runtime left out is named.
  const std::string text(builtin_runtime_profiles_json());
  const auto mlx = text.find("{\n   \"runtime\": \"mlx\"");
  ASSERT_NE(mlx, std::string::npos);
  const auto mlx_end = text.find("},", mlx);
  ASSERT_NE(mlx_end, std::string::npos);
  const auto without_mlx = text.substr(0, mlx) + text.substr(mlx_end + 2);
  const auto read = parse_runtime_profiles(without_mlx, "memo.json");
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message.find("has no entry for runtime mlx"), std::string::npos) << read.error().message;
}

TEST(BuiltinData, ModelsFileIsTheBuiltInCatalogue) {
  const auto path = data_file("models.json");
  const std::string text = file_text(path);
  const auto read = parse_model_catalogue(text, path.string());
  ASSERT_TRUE(read) << read.error().message;
  const auto builtin = model_catalogue();
  ASSERT_EQ(read->size(), builtin.size());
  for (std::size_t i = 0; i < builtin.size(); ++i) {
    SCOPED_TRACE(builtin[i].id);
    EXPECT_EQ((*read)[i].id, builtin[i].id);
    EXPECT_EQ((*read)[i].aliases, builtin[i].aliases);
    EXPECT_EQ((*read)[i].family, builtin[i].architecture.family);
    EXPECT_EQ(count_parameters((*read)[i].architecture)->total, count_parameters(builtin[i].architecture)->total);
  }
  EXPECT_EQ(builtin_model_catalogue_json(), text) << "the library was built from another models.json";
}

TEST(BuiltinData, ModelCataloguesWithFaultsAreRefusedByName) {
  const FaultCase cases[] = {
      {"{}", ErrorKind::parse_error, "\"format\""},
      {edited_catalogue("\"hwaccel-models\"", "\"hwaccel-runtime-profiles\""), ErrorKind::parse_error,
       "must be \"hwaccel-models\""},
      // An id that another entry answers to (llama-2-13b's alias is not llama2-7b).
      {edited_catalogue("\"llama2-13b\"", "\"llama2-7b\""), ErrorKind::invalid_input, "already names llama-2-7b"},
      {edited_catalogue("\"num_hidden_layers\": 32", "\"num_hidden_layers\": 0"), ErrorKind::invalid_input,
       "llama-2-7b"},
      {edited_catalogue("\"num_hidden_layers\": 32", "\"num_hidden_layers\": \"32\""), ErrorKind::parse_error,
       "num_hidden_layers"},
      {edited_catalogue("\"hf_repo\": \"meta-llama/Llama-2-7b-hf\",", ""), ErrorKind::parse_error, "hf_repo"},
      {edited_catalogue("\"source\":", "\"sauce\":"), ErrorKind::parse_error, "sauce"},
  };
  expect_refused_by_name([](std::string_view text, std::string_view origin) { return parse_model_catalogue(text, origin); },
                         cases);
}

}  // namespace
