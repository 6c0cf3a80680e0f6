// The fleet layer at scale: merging 1 000 and 10 000 node registries (JSON
// lines to a fleet document with its totals), a scan of 1 000 hosts through
// the command template, the diff of two 10 000-node scans, and a scan written
// to SQLite. Each reports the process's peak resident memory.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>
#include <unistd.h>
#include <string>
#include <vector>

import hwaccel;

namespace {

using namespace hwaccel;

std::filesystem::path machine(const char* name) {
  const char* root = std::getenv("HWACCEL_FIXTURES");
  return std::filesystem::path(root ? root : "fixtures") / "machines" / name;
}

const AcceleratorRegistry& eight_gpu_node() {
  static const AcceleratorRegistry registry = [] {
    auto f = FixtureSystem::open(machine("dgx-h100-8x-nvswitch").string());
    if (!f) throw std::runtime_error(f.error().message);
    return DetectBuilder{}.detect(**f);
  }();
  return registry;
}

std::string host_name(std::int64_t i) { return "node-" + std::to_string(100000 + i); }

// One registry per line, as `srun hwaccel detect --no-timings` prints them.
std::string json_lines(std::int64_t nodes) {
  AcceleratorRegistry node = eight_gpu_node();
  std::string out;
  for (std::int64_t i = 0; i < nodes; ++i) {
    node.inventory().system.host = host_name(i);
    out += to_json(node, JsonOptions{.include_timings = false});
    out += '\n';
  }
  return out;
}

void report_peak_memory(benchmark::State& state) {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  state.counters["peak_rss_mib"] = static_cast<double>(usage.ru_maxrss) / 1024.0;
}

void merge_registries(benchmark::State& state) {
  const std::string input = json_lines(state.range(0));
  for (auto _ : state) {
    const Fleet fleet = scan_lines(input);
    std::string document = to_json(fleet);
    benchmark::DoNotOptimize(document);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(input.size()));
  report_peak_memory(state);
}
BENCHMARK(merge_registries)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

// A head node asking 1 000 hosts: every "agent <host>" run answers with the
// 8-GPU registry at once, so that the scan's own work is what is timed.
class AnsweringHosts final : public System {
 public:
  AnsweringHosts() : answer_(to_json(eight_gpu_node(), JsonOptions{.include_timings = false})) {}
  Result<FileContent> read_file(std::string_view, std::size_t) const override { return fail(ErrorKind::not_found, "none"); }
  Result<std::vector<DirEntry>> list_dir(std::string_view) const override { return fail(ErrorKind::not_found, "none"); }
  Result<std::string> read_link(std::string_view) const override { return fail(ErrorKind::not_found, "none"); }
  Result<FileStatus> status(std::string_view, bool) const override { return fail(ErrorKind::not_found, "none"); }
  std::optional<std::string> env(std::string_view) const override { return std::nullopt; }
  std::optional<std::string> find_tool(std::string_view name) const override { return "/usr/bin/" + std::string(name); }
  Result<ToolResult> run(const ToolRequest&) const override {
    ToolResult r;
    r.out = answer_;
    return r;
  }

 private:
  std::string answer_;
};

void scan_thousand_hosts(benchmark::State& state) {
  const AnsweringHosts system;
  std::vector<std::string> hosts;
  for (std::int64_t i = 0; i < 1000; ++i) hosts.push_back(host_name(i));
  const auto command = CommandTemplate::parse("agent {host}").value();
  for (auto _ : state) {
    Fleet fleet = scan_hosts(system, hosts, command);
    benchmark::DoNotOptimize(fleet);
  }
  state.SetItemsProcessed(state.iterations() * 1000);
  report_peak_memory(state);
}
BENCHMARK(scan_thousand_hosts)->Unit(benchmark::kMillisecond);

Fleet fleet_of(std::int64_t nodes, bool damaged) {
  Fleet fleet = scan_lines(json_lines(nodes));
  if (damaged)
    // Every hundredth node lost a GPU; every fiftieth has a new driver.
    for (std::size_t i = 0; i < fleet.nodes.size(); ++i) {
      auto& inventory = fleet.nodes[i].registry->inventory();
      if (i % 100 == 0) inventory.devices.pop_back();
      if (i % 50 == 0) inventory.devices[1].driver_version = "570.86.15";
    }
  return fleet;
}

void diff_scans(benchmark::State& state) {
  const Fleet before = fleet_of(state.range(0), false);
  const Fleet after = fleet_of(state.range(0), true);
  std::size_t changes = 0;
  for (auto _ : state) {
    const FleetDiff diff = fleet_diff(before, after);
    changes = diff.devices.size();
    benchmark::DoNotOptimize(changes);
  }
  state.counters["changes"] = static_cast<double>(changes);
  state.SetItemsProcessed(state.iterations() * state.range(0));
  report_peak_memory(state);
}
BENCHMARK(diff_scans)->Arg(10000)->Unit(benchmark::kMillisecond);

void store_scan(benchmark::State& state) {
  const Fleet fleet = fleet_of(state.range(0), false);
  const auto folder = std::filesystem::temp_directory_path() / ("hwaccel-fleet-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  auto store = FleetStore::open((folder / "fleet.sqlite").string()).value();
  for (auto _ : state) {
    auto id = store.append(fleet);
    benchmark::DoNotOptimize(id);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  std::filesystem::remove_all(folder);
  report_peak_memory(state);
}
BENCHMARK(store_scan)->Arg(1000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
