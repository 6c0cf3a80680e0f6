// Tool-output parsers on the largest inputs of the fixture tree: nvidia-smi's
// query CSV and topology matrix of an 8-GPU node, the KFD topology of an
// 8-GPU MI300X node, neuron-ls JSON of 16 devices, a full vulkaninfo report.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

import hwaccel;
import hwaccel.detectors;

namespace {

namespace fs = std::filesystem;
using namespace hwaccel;

fs::path machines_dir() {
  const char* v = std::getenv("HWACCEL_FIXTURES");
  return (v && *v ? fs::path(v) : fs::path("fixtures")) / "machines";
}

// The whole file, or an empty string (the benchmark then reports an error).
std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Runs `parse` over `input` read from the fixture tree, counting bytes.
template <class Parse>
void parse_file(benchmark::State& state, const fs::path& relative, Parse parse) {
  const std::string input = slurp(machines_dir() / relative);
  if (input.empty()) {
    state.SkipWithError(("cannot read " + relative.string()).c_str());
    return;
  }
  for (auto _ : state) {
    auto parsed = parse(input);
    benchmark::DoNotOptimize(parsed);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * input.size()));
}

void nvidia_query_csv_8gpu(benchmark::State& state) {
  parse_file(state, "dgx-h100-8x-nvswitch/commands/nvidia-smi-query-gpu.out",
             [](std::string_view text) { return parsers::parse_query_gpu(text); });
}

void nvidia_topology_matrix_8gpu(benchmark::State& state) {
  parse_file(state, "dgx-h100-8x-nvswitch/commands/nvidia-smi-topo-m.out",
             [](std::string_view text) { return parsers::parse_topology_matrix(text); });
}

void neuron_ls_json_16dev(benchmark::State& state) {
  parse_file(state, "trn1-32xlarge-16x-trainium-json/commands/neuron-ls-1.out",
             [](std::string_view text) { return parsers::parse_neuron_ls_json(text); });
}

void vulkaninfo_full_report(benchmark::State& state) {
  parse_file(state, "ryzen-7950x-rtx4090-vulkan/commands/vulkaninfo_1.out",
             [](std::string_view text) { return parsers::parse_vulkaninfo(text); });
}

// Every properties file of the KFD topology of an 8-GPU MI300X node (two CPU
// nodes and eight GPU nodes, with their io_links and memory banks), already
// in memory: the parsing the rocm detector does, without the file reads.
void kfd_topology_8gpu(benchmark::State& state) {
  const fs::path nodes_dir = machines_dir() / "amd-8x-mi300x-xgmi/root/sys/class/kfd/kfd/topology/nodes";
  struct NodeFiles {
    std::string properties;
    std::vector<std::string> links;
    std::vector<std::string> banks;
  };
  std::vector<NodeFiles> nodes;
  std::size_t bytes = 0;
  std::error_code ec;
  for (const auto& node : fs::directory_iterator(nodes_dir, ec)) {
    NodeFiles files;
    files.properties = slurp(node.path() / "properties");
    bytes += files.properties.size();
    for (const char* sub : {"io_links", "mem_banks"}) {
      for (const auto& entry : fs::directory_iterator(node.path() / sub, ec)) {
        auto text = slurp(entry.path() / "properties");
        bytes += text.size();
        (std::string_view(sub) == "io_links" ? files.links : files.banks).push_back(std::move(text));
      }
    }
    nodes.push_back(std::move(files));
  }
  if (nodes.size() != 10) {
    state.SkipWithError(("expected 10 KFD nodes under " + nodes_dir.string()).c_str());
    return;
  }
  for (auto _ : state) {
    for (const auto& node : nodes) {
      auto properties = parsers::parse_kfd_node_properties(node.properties);
      benchmark::DoNotOptimize(properties);
      for (const auto& link : node.links) {
        auto parsed = parsers::parse_kfd_link(link);
        benchmark::DoNotOptimize(parsed);
      }
      for (const auto& bank : node.banks) {
        auto parsed = parsers::parse_kfd_mem_bank(bank);
        benchmark::DoNotOptimize(parsed);
      }
    }
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}

}  // namespace

BENCHMARK(nvidia_query_csv_8gpu)->Unit(benchmark::kMicrosecond);
BENCHMARK(nvidia_topology_matrix_8gpu)->Unit(benchmark::kMicrosecond);
BENCHMARK(kfd_topology_8gpu)->Unit(benchmark::kMicrosecond);
BENCHMARK(neuron_ls_json_16dev)->Unit(benchmark::kMicrosecond);
BENCHMARK(vulkaninfo_full_report)->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
