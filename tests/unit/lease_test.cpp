// Leases: the choice of free devices on the fixture machines, lock files in
// a temporary lease directory, the variables per vendor, quotas and the
// device-hours reports.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <sys/stat.h>

#include "../test_support.hpp"

import hwaccel;

#include "module_helpers.hpp"

namespace lease_test {

using namespace hwaccel;
namespace support = hwaccel::testing;
namespace fs = std::filesystem;

struct Machine {
  std::unique_ptr<FixtureSystem> system;
  AcceleratorRegistry registry;
};
Machine machine(const std::string& name) {
  Machine m{support::open_machine(name), {}};
  m.registry = DetectBuilder{}.detect(*m.system);
  return m;
}

std::string value_of(const Lease& lease, std::string_view name) {
  for (const auto& [k, v] : lease.environment())
    if (k == name) return v;
  return {};
}

TEST(Lease, TheBusyDgxGivesItsIdleGpuOnce) {
  const auto m = machine("dgx-h100-busy-containers");
  support::TempDir dir;
  LeaseRequest request;
  request.lease_dir = (dir.path() / "leases").string();
  std::vector<DeviceRefusal> refused;
  auto first = reserve(m.registry, *m.system, request, &refused);
  ASSERT_TRUE(first) << first.error().message;
  ASSERT_EQ(first->devices().size(), 1u);
  EXPECT_EQ(first->devices()[0].device_id, "cuda:4");
  EXPECT_EQ(value_of(*first, "CUDA_VISIBLE_DEVICES"), "GPU-2c8a5c6d-bf3e-4d9a-ab4c-8e7f6a5b4c32");
  EXPECT_EQ(refused.size(), 7u);  // the seven GPUs with processes
  // The lease directory is shared: mode 1777.
  struct stat st {};
  ASSERT_EQ(::stat(request.lease_dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 01777);
  auto held = held_leases(request.lease_dir);
  ASSERT_TRUE(held);
  ASSERT_EQ(held->size(), 1u);
  EXPECT_EQ((*held)[0].device_id, "cuda:4");
  EXPECT_TRUE((*held)[0].start_time);
  // Held: nobody else gets it, and the reason says who holds it.
  auto second = reserve(m.registry, *m.system, request, &refused);
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().kind, ErrorKind::timeout);
  EXPECT_NE(second.error().message.find("cuda:4: held by"), std::string::npos) << second.error().message;
  first->release();
  EXPECT_TRUE(held_leases(request.lease_dir)->empty());
  EXPECT_TRUE(reserve(m.registry, *m.system, request));
}

TEST(Lease, NamedDevicesAndPartitions) {
  const auto m = machine("a100-40gb-mig-enabled");
  support::TempDir dir;
  LeaseRequest request;
  request.lease_dir = dir.path().string();
  request.device_ids = {"cuda:0/mig:0", "cuda:0/mig:1"};
  auto both = reserve(m.registry, *m.system, request);
  ASSERT_TRUE(both) << both.error().message;
  const std::string cvd = value_of(*both, "CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(std::count(cvd.begin(), cvd.end(), ','), 1);
  EXPECT_EQ(cvd.rfind("MIG-", 0), 0u);
  both->release();
  request.device_ids = {"cuda:0"};
  auto whole = reserve(m.registry, *m.system, request);
  ASSERT_FALSE(whole);
  EXPECT_EQ(whole.error().kind, ErrorKind::invalid_input);
  request.device_ids = {"cuda:9"};
  EXPECT_EQ(reserve(m.registry, *m.system, request).error().kind, ErrorKind::invalid_input);
}

TEST(Lease, AmdSetsRocrAndClearsHip) {
  const auto m = machine("amd-2x-mi210-pcie");
  support::TempDir dir;
  LeaseRequest request;
  request.lease_dir = dir.path().string();
  request.count = 2;
  request.same_domain = false;
  auto lease = reserve(m.registry, *m.system, request);
  ASSERT_TRUE(lease) << lease.error().message;
  EXPECT_EQ(value_of(*lease, "ROCR_VISIBLE_DEVICES"), "0,1");
  const auto& cleared = lease->cleared_environment();
  EXPECT_NE(std::find(cleared.begin(), cleared.end(), "HIP_VISIBLE_DEVICES"), cleared.end());
  // The two MI210s have no xGMI bridge: no domain holds both.
  lease->release();
  request.same_domain = true;
  EXPECT_FALSE(reserve(m.registry, *m.system, request));
}

TEST(Lease, UnsafeDirectoriesAreRefused) {
  const auto m = machine("amd-2x-mi210-pcie");
  support::TempDir dir;
  const fs::path loose = dir.path() / "loose";
  fs::create_directory(loose);
  ::chmod(loose.c_str(), 0777);
  LeaseRequest request;
  request.lease_dir = loose.string();
  auto lease = reserve(m.registry, *m.system, request);
  ASSERT_FALSE(lease);
  EXPECT_EQ(lease.error().kind, ErrorKind::unsupported);
  fs::create_directory_symlink(dir.path(), dir.path() / "link");
  request.lease_dir = (dir.path() / "link").string();
  EXPECT_EQ(reserve(m.registry, *m.system, request).error().kind, ErrorKind::unsupported);
}

TEST(Quota, ReadsItsKeysAndRefusesGarbage) {
  const auto q = parse_quota(R"({"period_days": 7, "users": {"alice": 200}, "groups": {"lab": 1000}, "others": 5})");
  ASSERT_TRUE(q) << q.error().message;
  EXPECT_EQ(q->period_seconds, 7 * 86400);
  EXPECT_DOUBLE_EQ(q->users.at("alice"), 200);
  EXPECT_DOUBLE_EQ(q->groups.at("lab"), 1000);
  EXPECT_EQ(q->others, 5.0);
  for (const char* bad : {"[]", "{\"users\": {\"a\": -1}}", "{\"users\": {\"a\": \"x\"}}", "{\"period\": 3}", "{\"period_days\": 0}",
                          "{\"users\": []}", "not json"}) {
    const auto r = parse_quota(bad);
    EXPECT_FALSE(r) << bad;
    if (!r) EXPECT_EQ(r.error().kind, ErrorKind::invalid_input) << bad;
  }
}

TEST(Usage, DeviceHoursByUserDeviceAndDay) {
  std::vector<UsageRecord> records;
  UsageRecord a;
  a.user = "alice";
  a.device_id = "cuda:0";
  a.started_at = 86400 * 10 - 3600;  // an hour before midnight (UTC)
  a.ended_at = 86400 * 10 + 3600;    // to an hour after
  records.push_back(a);
  UsageRecord b = a;
  b.user = "bob";
  b.device_id = "cuda:1";
  b.started_at = 86400 * 10;
  b.ended_at.reset();  // still held
  records.push_back(b);
  const std::int64_t now = 86400 * 10 + 7200;
  const auto by_user = usage_by(records, UsageGrouping::user, 0, now);
  ASSERT_EQ(by_user.size(), 2u);
  EXPECT_DOUBLE_EQ(by_user[0].device_hours, 2.0);  // alice
  EXPECT_DOUBLE_EQ(by_user[1].device_hours, 2.0);  // bob, until now
  const auto by_day = usage_by(records, UsageGrouping::day, 0, now);
  ASSERT_EQ(by_day.size(), 2u);
  EXPECT_EQ(by_day[0].key, "1970-01-10");
  EXPECT_DOUBLE_EQ(by_day[0].device_hours, 1.0);
  EXPECT_DOUBLE_EQ(by_day[1].device_hours, 3.0);
  // Since half an hour after midnight: only what came after.
  const auto later = usage_by(records, UsageGrouping::device, 86400 * 10 + 1800, now);
  EXPECT_DOUBLE_EQ(later[0].device_hours, 0.5);
  EXPECT_DOUBLE_EQ(later[1].device_hours, 1.5);
}

}  // namespace lease_test
