// Fuzz targets for the files hwaccel's planning reads: Hugging Face
// config.json, GGUF headers, safetensors headers, and a user's instance
// catalogue (hwaccel recommend --catalogue); and the Hugging Face repo ids
// `--model org/name` takes, which become paths in the hub cache.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

#include "fuzz_support.hpp"

import hwaccel;

namespace hwaccel::fuzz {

namespace {

void check_model(const ModelDescription& m, Findings& findings, std::string_view source) {
  findings.check(m.parameters > 0, source);
  findings.check(m.active_parameters <= m.parameters, "model: more active than total parameters");
  findings.check(m.architecture.layers > 0, "model: an accepted model without layers");
  if (m.stored) {
    std::uint64_t layers = 0;
    for (const auto b : m.stored->layer_bytes) layers += b;
    findings.check(m.stored->total_bytes() >= layers, "model: stored bytes below the sum of its layers");
  }
}

// The model readers take a path: each process writes its inputs to a folder
// of its own (no config.json beside them, so safetensors infers the shape),
// removed when the process exits.
struct ScratchFolder {
  std::filesystem::path path = std::filesystem::temp_directory_path() / ("hwaccel-fuzz-" + std::to_string(::getpid()));
  ScratchFolder() { std::filesystem::create_directories(path); }
  ~ScratchFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
};

std::filesystem::path scratch_file(std::string_view name) {
  static const ScratchFolder folder;
  return folder.path / name;
}

std::optional<std::filesystem::path> write_scratch(std::string_view name, std::string_view input) {
  const auto path = scratch_file(name);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(input.data(), static_cast<std::streamsize>(input.size()));
  if (!out) return std::nullopt;
  return path;
}

}  // namespace

void config_json(std::string_view, std::string_view input, Findings& findings) {
  const auto model = model_from_config_json(input);
  if (!model) return;
  check_model(*model, findings, "config.json: a model without parameters");
  // What was accepted must plan without crashing at its native precision.
  (void)weight_layout(*model, QuantizationLevel::bf16);
}

void gguf(std::string_view, std::string_view input, Findings& findings) {
  const auto path = write_scratch("input.gguf", input);
  if (!path) return;
  const auto model = read_gguf(*path);
  if (!model) return;
  check_model(*model, findings, "GGUF: a model without parameters");
}

void safetensors(std::string_view, std::string_view input, Findings& findings) {
  const auto path = write_scratch("model.safetensors", input);
  if (!path) return;
  const auto model = read_safetensors(*path);
  if (!model) return;
  check_model(*model, findings, "safetensors: a model without parameters");
}

void hf_repo_id(std::string_view, std::string_view input, Findings& findings) {
  const auto id = parse_hf_repo_id(input);
  if (!id) {
    findings.check(id.error().kind == ErrorKind::invalid_input, "hf repo id: a rejection that is not invalid_input");
    return;
  }
  // What is accepted can only name a folder directly below the cache root and
  // a file directly below refs/: one plain component each.
  const auto plain = [](std::string_view part) {
    return !part.empty() && part != "." && part != ".." && part.find("..") == std::string_view::npos &&
           std::all_of(part.begin(), part.end(), [](char c) {
             return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                    c == '-';
           });
  };
  findings.check(plain(id->org) && plain(id->name) && plain(id->revision), "hf repo id: a part that is not a plain name");
  findings.check(plain(id->cache_folder()), "hf repo id: a cache folder that is not a plain name");
  findings.check(id->org.find("--") == std::string::npos && id->name.find("--") == std::string::npos,
                 "hf repo id: \"--\" in a part makes the cache folder ambiguous");
  const std::string again = id->revision_given ? id->repo() + "@" + id->revision : id->repo();
  findings.check(again == input, "hf repo id: does not spell the input back");
  const auto reparsed = parse_hf_repo_id(again);
  findings.check(reparsed && *reparsed == *id, "hf repo id: not stable when parsed again");
}

void instance_catalogue(std::string_view, std::string_view input, Findings& findings) {
  const auto catalogue = parse_instance_catalogue(input, "fuzz");
  if (!catalogue) return;
  for (const auto& i : catalogue->instances) {
    findings.check(i.count > 0 && i.count <= max_instance_accelerators, "catalogue: accelerator count out of range");
    findings.check(i.memory_per_device_bytes > 0, "catalogue: an instance without device memory");
    findings.check(std::isfinite(i.price_usd_per_hour) && i.price_usd_per_hour > 0,
                   "catalogue: a price that is not a positive number");
  }
  // What was accepted must be judged without crashing; a verdict for every
  // instance, and every rejection says why.
  if (catalogue->instances.size() > 64) return;  // keeps an execution in milliseconds
  static const auto model = ModelDescription::from_parameter_count(7'000'000'000);
  if (!model) return;
  RecommendOptions options;
  options.settings.quantization = QuantizationLevel::bf16;
  const auto r = recommend_instances(*model, options, *catalogue);
  if (!r) return;
  findings.check(r->recommended.size() + r->rejected.size() == catalogue->instances.size(),
                 "recommend: an instance without a verdict");
  for (const auto& v : r->rejected)
    findings.check(v.rejection.has_value() && !v.reason.empty(), "recommend: a rejection without a reason");
  (void)to_json(*r);
}

}  // namespace hwaccel::fuzz
