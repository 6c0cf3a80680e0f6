// hwaccel doctor's checks, diagnostic events, and the fixture fields they rest on
// (identity, permissions).
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

TEST(MayReadWrite, FollowsOwnerGroupAndOtherBits) {
  const ProcessIdentity alice{1000, 1000, {1000, 44}};
  EXPECT_TRUE(may_read_write(FileStatus{FileType::char_device, 0, 0600, 1000, 0}, alice));
  EXPECT_FALSE(may_read_write(FileStatus{FileType::char_device, 0, 0400, 1000, 0}, alice));
  EXPECT_TRUE(may_read_write(FileStatus{FileType::char_device, 0, 0660, 0, 44}, alice));
  EXPECT_FALSE(may_read_write(FileStatus{FileType::char_device, 0, 0660, 0, 109}, alice));
  EXPECT_TRUE(may_read_write(FileStatus{FileType::char_device, 0, 0666, 0, 109}, alice));
  // The owner's bits decide for the owner, even when others may.
  EXPECT_FALSE(may_read_write(FileStatus{FileType::char_device, 0, 0066, 1000, 0}, alice));
  EXPECT_TRUE(may_read_write(FileStatus{FileType::char_device, 0, 0000, 0, 0}, ProcessIdentity{}));
}

TEST(FixtureManifest, IdentityAndPermissionsReadBack) {
  const std::string json = R"({"format": 1, "machine": "m", "source": "s", "synthetic": true,
    "identity": {"uid": 1000, "gid": 1000, "groups": [1000, 44]},
    "permissions": {"/dev/kfd": {"mode": "0660", "uid": 0, "gid": 109}}})";
  auto m = parse_fixture_manifest(json);
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_TRUE(m->identity);
  EXPECT_EQ(*m->identity, (ProcessIdentity{1000, 1000, {1000, 44}}));
  ASSERT_EQ(m->permissions.count("/dev/kfd"), 1u);
  EXPECT_EQ(m->permissions.at("/dev/kfd"), (FilePermissions{0660, 0, 109}));
  auto again = parse_fixture_manifest(write_fixture_manifest(*m));
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->identity, m->identity);
  EXPECT_EQ(again->permissions, m->permissions);
}

TEST(FixtureManifest, BadIdentityAndPermissionsAreErrors) {
  const auto base = std::string(R"({"format": 1, "machine": "m", "source": "s", "synthetic": true, )");
  for (const std::string bad : {R"("identity": {"uid": -1, "gid": 0}})", R"("identity": {"uid": 1, "gid": 0, "groups": ["a"]}})",
                                R"("identity": [1]})", R"("permissions": {"dev/kfd": {"mode": "0660", "uid": 0, "gid": 0}}})",
                                R"("permissions": {"/dev/kfd": {"mode": "0999", "uid": 0, "gid": 0}}})",
                                R"("permissions": {"/dev/kfd": {"mode": "17777", "uid": 0, "gid": 0}}})",
                                R"("permissions": {"/dev/kfd": {"mode": 660, "uid": 0, "gid": 0}}})"}) {
    auto m = parse_fixture_manifest(base + bad);
    ASSERT_FALSE(m) << bad;
    EXPECT_EQ(m.error().kind, ErrorKind::parse_error) << bad;
  }
}

TEST(FixtureSystem, PermissionsAndIdentityComeFromTheManifest) {
  auto f = open_fixture("doctor/amd-kfd-not-readable");
  ASSERT_TRUE(f);
  const auto st = f->status("/dev/kfd");
  ASSERT_TRUE(st);
  EXPECT_EQ(st->mode, 0660u);
  EXPECT_EQ(st->gid, 109u);
  EXPECT_EQ(f->identity(), (ProcessIdentity{1000, 1000, {1000, 44}}));
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
