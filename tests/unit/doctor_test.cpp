// hwaccel doctor's checks and diagnostic events.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "../test_support.hpp"

import hwaccel;

namespace {

using namespace hwaccel;

std::unique_ptr<FixtureSystem> open_fixture(const std::string& relative) {
  auto f = FixtureSystem::open((hwaccel::testing::fixtures_root() / relative).string());
  EXPECT_TRUE(f) << (f ? "" : f.error().message);
  return f ? std::move(*f) : nullptr;
}

TEST(Diagnostics, EventsFollowTheLevelAndNeverReachDetectionsResult) {
  auto f = open_fixture("machines/dgx-h100-8x-nvswitch");
  ASSERT_TRUE(f);
  std::mutex mutex;
  std::vector<std::string> info_events, trace_events;
  const auto quiet = DetectBuilder().system_probes(false).detect(*f);
  const auto info = DetectBuilder()
                        .system_probes(false)
                        .diagnostics(
                            [&](const DiagnosticEvent& e) {
                              std::lock_guard lock(mutex);
                              info_events.push_back(std::string(e.event));
                            },
                            LogLevel::info)
                        .detect(*f);
  EXPECT_EQ(to_json(info, {.include_timings = false}), to_json(quiet, {.include_timings = false}));
  EXPECT_TRUE(std::none_of(info_events.begin(), info_events.end(),
                           [](const std::string& e) { return e == "read_file" || e == "run_tool"; }));
  EXPECT_EQ(std::count(info_events.begin(), info_events.end(), "detection_done"), 1);
  EXPECT_GT(std::count(info_events.begin(), info_events.end(), "detector_done"), 10);

  std::vector<DiagnosticEvent> runs;
  DetectBuilder()
      .system_probes(false)
      .diagnostics(
          [&](const DiagnosticEvent& e) {
            std::lock_guard lock(mutex);
            if (e.event == "run_tool") runs.push_back(e);
            trace_events.push_back(std::string(e.event));
          },
          LogLevel::trace)
      .detect(*f);
  EXPECT_GT(std::count(trace_events.begin(), trace_events.end(), "read_file"), 0);
  ASSERT_FALSE(runs.empty());
  EXPECT_EQ(runs.front().backend, "cuda");
  EXPECT_EQ(runs.front().outcome, "exit 0");
  EXPECT_TRUE(runs.front().subject.starts_with("nvidia-smi "));
}

TEST(Diagnostics, ASinkThatThrowsLosesOnlyItsEvents) {
  auto f = open_fixture("machines/dgx-h100-8x-nvswitch");
  ASSERT_TRUE(f);
  std::atomic<int> calls = 0;
  const auto r = DetectBuilder()
                     .diagnostics([&](const DiagnosticEvent&) {
                       ++calls;
                       throw std::runtime_error("sink broke");
                     }, LogLevel::trace)
                     .detect(*f);
  EXPECT_GT(calls.load(), 0);
  EXPECT_EQ(r.by_backend(Backend::cuda).size(), 8u);
}

TEST(Doctor, NamesTheGroupThatWouldOpenKfd) {
  auto f = open_fixture("doctor/amd-kfd-not-readable");
  ASSERT_TRUE(f);
  const auto report = run_doctor(*f);
  EXPECT_FALSE(report.usable());
  const auto kfd = std::find_if(report.findings.begin(), report.findings.end(),
                                [](const DoctorFinding& x) { return x.subject == "/dev/kfd"; });
  ASSERT_NE(kfd, report.findings.end());
  EXPECT_EQ(kfd->backend, "rocm");
  EXPECT_TRUE(kfd->blocking);
  EXPECT_EQ(kfd->evidence.at("mode"), "0660");
  EXPECT_EQ(kfd->evidence.at("group"), "render (109)");
  EXPECT_EQ(kfd->evidence.at("user"), "alice (1000)");
  EXPECT_EQ(kfd->evidence.at("user_groups"), "alice (1000), video (44)");
  EXPECT_NE(kfd->remedy.find("usermod -aG render"), std::string::npos);
}

TEST(Doctor, AHealthyCaptureIsUsable) {
  auto f = open_fixture("machines/h200-sxm-firecracker-driver-580");
  ASSERT_TRUE(f);
  const auto report = run_doctor(*f);
  EXPECT_TRUE(report.usable()) << doctor_text(report);
  const auto cuda = std::find_if(report.backends.begin(), report.backends.end(),
                                 [](const DoctorBackend& b) { return b.backend == "cuda"; });
  ASSERT_NE(cuda, report.backends.end());
  EXPECT_EQ(cuda->devices, 1u);
  EXPECT_FALSE(cuda->tools.empty());
}

TEST(Doctor, BackendsNotSelectedAreNotExamined) {
  auto f = open_fixture("doctor/nvidia-driver-not-loaded");
  ASSERT_TRUE(f);
  const auto report = run_doctor(*f, DetectBuilder::none().with(Backend::rocm));
  ASSERT_EQ(report.backends.size(), 1u);
  EXPECT_EQ(report.backends[0].backend, "rocm");
}

}  // namespace
