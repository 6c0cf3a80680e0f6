// Detections running at once on one shared System (fixture, live with fake
// tools, recording), as a model server's threads may start them. Every
// answer must equal the one-thread answer; ThreadSanitizer (build-tsan/)
// checks the rest.
#include <gtest/gtest.h>

#include <sys/types.h>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "../test_support.hpp"

import hwaccel;

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using hwaccel::testing::TempDir;
using hwaccel::testing::write_file;
using hwaccel::testing::write_script;

constexpr int threads = 8;
constexpr int rounds = 3;

std::string stable_json(const hwaccel::AcceleratorRegistry& registry) {
  hwaccel::JsonOptions options;
  options.include_timings = false;
  return hwaccel::to_json(registry, options);
}

// Runs `detect` on `threads` threads, `rounds` times each, all at once, and
// returns every answer.
template <class Detect>
std::vector<std::string> detect_concurrently(Detect detect) {
  std::vector<std::string> answers(threads * rounds);
  std::vector<std::jthread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      for (int r = 0; r < rounds; ++r) answers[static_cast<std::size_t>(t * rounds + r)] = detect();
    });
  workers.clear();
  return answers;
}

TEST(Concurrency, DetectionsShareOneFixtureSystem) {
  for (const char* machine : {"dgx-h100-8x-nvswitch", "amd-8x-mi300x-xgmi", "workstation-core-ultra-npu-cloud-ai-100-vulkan",
                              "tpu-v5e-8-gke-pod", "k8s-pod-containerd-xe9680"}) {
    const auto dir = hwaccel::testing::fixtures_root() / "machines" / machine;
    auto system = hwaccel::FixtureSystem::open(dir.string());
    ASSERT_TRUE(system) << machine << ": " << system.error().message;
    const auto detect = [&] { return stable_json(hwaccel::AcceleratorRegistry::builder().detect(**system)); };
    const std::string expected = detect();
    for (const auto& answer : detect_concurrently(detect)) ASSERT_EQ(answer, expected) << machine;
  }
}

TEST(Concurrency, DetectionsShareOneLiveSystemWithTools) {
  // Tools that answer like a two-GPU machine, on a PATH of their own; the
  // rest of the detection reads this machine's /sys.
  TempDir tools;
  write_script(tools.path() / "nvidia-smi", R"(case "$*" in
  --query-gpu=index,addressing_mode*) printf 'index, addressing_mode, c2c.mode\n0, None, Disabled\n1, None, Disabled\n' ;;
  --query-gpu=*) printf 'index, uuid, name, pci.bus_id, memory.total [MiB], memory.used [MiB], memory.free [MiB], compute_cap\n0, GPU-11111111-2222-3333-4444-555555555555, NVIDIA L40S, 00000000:01:00.0, 46068 MiB, 1 MiB, 45000 MiB, 8.9\n1, GPU-66666666-2222-3333-4444-555555555555, NVIDIA L40S, 00000000:02:00.0, 46068 MiB, 1 MiB, 45000 MiB, 8.9\n' ;;
  -L) printf 'GPU 0: NVIDIA L40S (UUID: GPU-11111111-2222-3333-4444-555555555555)\nGPU 1: NVIDIA L40S (UUID: GPU-66666666-2222-3333-4444-555555555555)\n' ;;
  "topo -m") printf '\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\nGPU0\t X \tSYS\t0-7\t0\nGPU1\tSYS\t X \t0-7\t0\n' ;;
  *) exit 6 ;;
esac)");
  write_script(tools.path() / "vulkaninfo", "echo 'ERROR: [Loader Message] Code 0 : vkCreateInstance failed' >&2; exit 1");
  hwaccel::LiveOptions options;
  options.search_path = tools.str();
  options.extra_tool_dirs.clear();
  const auto system = hwaccel::make_live_system(options);
  const auto builder = hwaccel::DetectBuilder::none()
                           .with(hwaccel::Backend::cuda)
                           .with(hwaccel::Backend::vulkan)
                           .system_probes(false)
                           .tool_timeout(10s)
                           .all_tools(true);  // this machine shows no NVIDIA GPU
  const auto detect = [&] { return stable_json(builder.detect(*system)); };
  const std::string expected = detect();
  ASSERT_NE(expected.find("GPU-66666666-2222-3333-4444-555555555555"), std::string::npos) << expected;
  for (const auto& answer : detect_concurrently(detect)) ASSERT_EQ(answer, expected);
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1) << "a tool process was left behind";
  EXPECT_EQ(errno, ECHILD);
}

TEST(Concurrency, RecordingSystemUnderConcurrentDetectors) {
  const auto dir = hwaccel::testing::fixtures_root() / "machines" / "dgx-a100-8x-nvswitch";
  auto fixture = hwaccel::FixtureSystem::open(dir.string());
  ASSERT_TRUE(fixture) << fixture.error().message;
  const auto builder = hwaccel::AcceleratorRegistry::builder();
  const std::string expected = stable_json(builder.detect(**fixture));

  // Several detections record through one RecordingSystem at the same time;
  // what it writes must replay to the same answer.
  hwaccel::RecordingSystem recording(**fixture);
  for (const auto& answer : detect_concurrently([&] { return stable_json(builder.detect(recording)); }))
    ASSERT_EQ(answer, expected);
  TempDir out;
  const auto written = recording.write((out.path() / "capture").string(), "concurrent capture", "concurrency test");
  ASSERT_TRUE(written) << written.error().message;
  auto replay = hwaccel::FixtureSystem::open((out.path() / "capture").string());
  ASSERT_TRUE(replay) << replay.error().message;
  EXPECT_EQ(stable_json(builder.detect(**replay)), expected);
}

TEST(Concurrency, RegistriesAreReadAndWrittenFromManyThreads) {
  auto fixture = hwaccel::FixtureSystem::open((hwaccel::testing::fixtures_root() / "machines" / "gh200-grace-hopper").string());
  ASSERT_TRUE(fixture) << fixture.error().message;
  const auto registry = hwaccel::AcceleratorRegistry::builder().detect(**fixture);
  const std::string expected = stable_json(registry);
  for (const auto& answer : detect_concurrently([&] {
         const auto back = hwaccel::registry_from_json(hwaccel::to_json(registry));
         return back ? stable_json(*back) : back.error().message;
       }))
    ASSERT_EQ(answer, expected);
}

}  // namespace
