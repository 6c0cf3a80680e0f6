// Registry caching: TTL, single-flight refresh under many threads,
// invalidation, exceptions, and the on-disk cache (atomic writes, age from the
// recorded time, corrupt and foreign files). Clocks and detection are injected.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <utime.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../test_support.hpp"

import hwaccel;

namespace {

namespace fs = std::filesystem;
using namespace hwaccel;
using namespace std::chrono_literals;
using hwaccel::testing::TempDir;

AcceleratorRegistry numbered(int n) {
  Inventory inv;
  DeviceProfile d;
  d.id = "cpu:0";
  d.name = "detection " + std::to_string(n);
  d.memory_bytes = 1024;
  inv.devices.push_back(d);
  inv.timings.push_back(BackendTiming{"cpu", std::chrono::microseconds(10 * n)});
  return AcceleratorRegistry(inv);
}

std::string name_of(const std::shared_ptr<const AcceleratorRegistry>& r) {
  return r && !r->devices().empty() ? r->devices()[0].name : std::string("<none>");
}

// A steady clock the test moves by hand.
struct FakeSteady {
  std::shared_ptr<std::atomic<std::int64_t>> ns = std::make_shared<std::atomic<std::int64_t>>(1'000'000'000);
  SteadyClock clock() const {
    return [ns = ns] { return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(ns->load())); };
  }
  void advance(std::chrono::nanoseconds d) const { ns->fetch_add(d.count()); }
};

// A wall clock far from the real one, so that nothing can pass by reading
// file modification times instead of the recorded time.
struct FakeWall {
  std::shared_ptr<std::atomic<std::int64_t>> ms = std::make_shared<std::atomic<std::int64_t>>(1'000'000'000'000);
  WallClock clock() const {
    return [ms = ms] { return std::chrono::system_clock::time_point(std::chrono::milliseconds(ms->load())); };
  }
  void advance(std::chrono::milliseconds d) const { ms->fetch_add(d.count()); }
};

struct Counter {
  std::shared_ptr<std::atomic<int>> count = std::make_shared<std::atomic<int>>(0);
  DetectFunction detect() const {
    return [count = count] { return numbered(++*count); };
  }
};

TEST(CachedRegistry, DetectsOncePerTtl) {
  FakeSteady steady;
  Counter counter;
  CachedRegistry cache(CacheOptions{.ttl = 10s, .detect = counter.detect(), .clock = steady.clock(), .disk = {}});
  EXPECT_EQ(cache.ttl(), 10s);
  const auto first = cache.get();
  EXPECT_EQ(name_of(first), "detection 1");
  steady.advance(9999ms);
  EXPECT_EQ(cache.get(), first);  // the same object, not a copy
  steady.advance(1ms);            // exactly one TTL later: expired
  EXPECT_EQ(name_of(cache.get()), "detection 2");
  EXPECT_EQ(cache.detections(), 2u);
  cache.invalidate();
  EXPECT_EQ(name_of(cache.get()), "detection 3");
}

TEST(CachedRegistry, SingleFlightUnderManyThreads) {
  FakeSteady steady;
  constexpr int threads = 16;
  std::atomic<int> detections{0};
  std::atomic<int> started{0};
  CacheOptions options;
  options.ttl = 1min;
  options.clock = steady.clock();
  options.detect = [&] {
    const int n = ++detections;
    // Hold the detection until every caller has asked, so that they pile up
    // behind it (bounded: the test never hangs).
    for (int i = 0; i < 10'000 && started.load() < threads; ++i) std::this_thread::sleep_for(1ms);
    return numbered(n);
  };
  CachedRegistry cache(options);
  for (int round = 1; round <= 2; ++round) {
    started = 0;
    std::vector<std::shared_ptr<const AcceleratorRegistry>> results(threads);
    {
      std::vector<std::jthread> pool;
      for (int i = 0; i < threads; ++i)
        pool.emplace_back([&, i] {
          ++started;
          results[i] = cache.get();
        });
    }
    EXPECT_EQ(detections.load(), round) << "exactly one detection per expiry";
    for (const auto& r : results) {
      EXPECT_EQ(r, results[0]);
      EXPECT_EQ(name_of(r), "detection " + std::to_string(round));
    }
    steady.advance(1min);
  }
  EXPECT_EQ(cache.detections(), 2u);
}

TEST(CachedRegistry, InvalidateDuringARefresh) {
  FakeSteady steady;
  std::atomic<int> detections{0};
  std::atomic<bool> entered{false}, go{false};
  CacheOptions options;
  options.ttl = 1h;
  options.clock = steady.clock();
  options.detect = [&] {
    const int n = ++detections;
    entered = true;
    for (int i = 0; i < 10'000 && !go.load(); ++i) std::this_thread::sleep_for(1ms);
    return numbered(n);
  };
  CachedRegistry cache(options);
  std::shared_ptr<const AcceleratorRegistry> during;
  std::jthread caller([&] { during = cache.get(); });
  for (int i = 0; i < 10'000 && !entered.load(); ++i) std::this_thread::sleep_for(1ms);
  cache.invalidate();
  go = true;
  caller.join();
  EXPECT_EQ(name_of(during), "detection 1");  // its caller still gets it...
  EXPECT_EQ(name_of(cache.get()), "detection 2");  // ...but it was not kept
  EXPECT_EQ(name_of(cache.get()), "detection 2");
}

TEST(CachedRegistry, AnExceptionBecomesAWarningAndIsNotCached) {
  FakeSteady steady;
  int calls = 0;
  CacheOptions options;
  options.clock = steady.clock();
  options.detect = [&]() -> AcceleratorRegistry {
    if (++calls == 1) throw std::runtime_error("boom");
    return numbered(calls);
  };
  CachedRegistry cache(options);
  const auto failed = cache.get();
  ASSERT_TRUE(failed);
  EXPECT_TRUE(failed->devices().empty());
  ASSERT_EQ(failed->warnings().size(), 1u);
  EXPECT_EQ(failed->warnings()[0].backend, "cache");
  EXPECT_EQ(failed->warnings()[0].kind, WarningKind::tool_failed);
  EXPECT_EQ(failed->warnings()[0].message, "detection failed: boom");
  EXPECT_EQ(name_of(cache.get()), "detection 2");
  EXPECT_EQ(cache.detections(), 2u);
}

// --- disk ---------------------------------------------------------------------

class DiskCacheTest : public ::testing::Test {
 protected:
  TempDir tmp_;
  FakeWall wall_;
  FakeSteady steady_;
  Counter counter_;

  std::string folder() const { return (tmp_.path() / "cache" / "hwaccel").string(); }

  DiskCacheOptions disk_options(DetectOptions options = {}) const {
    return DiskCacheOptions{.directory = folder(), .options = options, .clock = wall_.clock()};
  }

  std::unique_ptr<CachedRegistry> cache(std::chrono::milliseconds ttl = 1min) const {
    return std::make_unique<CachedRegistry>(
        CacheOptions{.ttl = ttl, .detect = counter_.detect(), .clock = steady_.clock(), .disk = disk_options()});
  }

  // The cache file (with the folder given, the System's environment is not consulted).
  std::string path() const {
    const auto live = make_live_system();
    return DiskCache::open(disk_options(), *live)->path();
  }

  std::vector<Warning> cache_warnings(const AcceleratorRegistry& r) const {
    std::vector<Warning> out;
    for (const auto& w : r.warnings())
      if (w.backend == "cache") out.push_back(w);
    return out;
  }
};

TEST_F(DiskCacheTest, SharedBetweenProcessesAndAgedByTheRecordedTime) {
  const auto first = cache()->get();
  EXPECT_EQ(*counter_.count, 1);
  // One file, no temporary left behind, private folder.
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(folder())) names.push_back(e.path().filename().string());
  ASSERT_EQ(names.size(), 1u);
  EXPECT_EQ(folder() + "/" + names[0], path());
  EXPECT_EQ(fs::status(folder()).permissions() & fs::perms::all, fs::perms::owner_all);

  // Another process 30 s later reads it instead of detecting.
  wall_.advance(30s);
  const auto second = cache()->get();
  EXPECT_EQ(*counter_.count, 1);
  EXPECT_EQ(to_json(*second), to_json(*first));

  // The file's modification time says nothing: an ancient mtime is still fresh
  // by the recorded time...
  ::utimbuf ancient{0, 0};
  ASSERT_EQ(::utime(path().c_str(), &ancient), 0);
  EXPECT_EQ(name_of(cache()->get()), "detection 1");
  // ...and once the recorded time is a TTL old, a fresh mtime does not help.
  wall_.advance(30s);
  ASSERT_EQ(::utime(path().c_str(), nullptr), 0);
  EXPECT_EQ(name_of(cache()->get()), "detection 2");
  EXPECT_EQ(*counter_.count, 2);
}

TEST_F(DiskCacheTest, InMemoryAgeStartsFromTheRecordedTime) {
  EXPECT_EQ(name_of(cache()->get()), "detection 1");
  wall_.advance(50s);
  auto reader = cache();  // loads a registry that is already 50 s old
  EXPECT_EQ(name_of(reader->get()), "detection 1");
  steady_.advance(20s);   // 70 s in all: expired, even though this process read it 20 s ago
  wall_.advance(20s);
  EXPECT_EQ(name_of(reader->get()), "detection 2");
}

TEST_F(DiskCacheTest, CorruptFileMeansDetectAgainWithAWarning) {
  fs::create_directories(folder());
  hwaccel::testing::write_file(path(), "{\"cache_format\": 1, \"library_ver");
  ::chmod(path().c_str(), 0600);
  const auto r = cache()->get();
  EXPECT_EQ(name_of(r), "detection 1");
  const auto w = cache_warnings(*r);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].kind, WarningKind::parse_error);
  EXPECT_NE(w[0].message.find(path()), std::string::npos) << w[0].message;
  // The file was rewritten; the next process reads it, and warnings about the
  // old file are not part of what was stored.
  const auto next = cache()->get();
  EXPECT_EQ(*counter_.count, 1);
  EXPECT_TRUE(cache_warnings(*next).empty());
}

TEST_F(DiskCacheTest, ForeignOrUntrustedFilesAreNotRead) {
  struct Case {
    std::string content;
    WarningKind kind;
    std::string says;
  };
  const std::string good_header = std::string("{\"cache_format\":1,\"library_version\":\"") +
                                  std::string(library_version()) + "\",\"schema_version\":" +
                                  std::to_string(registry_schema_version) + ",\"options\":\"";
  const std::vector<Case> cases = {
      {"{\"cache_format\":2}\n{}", WarningKind::unsupported, "cache format 2"},
      {"{\"cache_format\":1,\"library_version\":\"0.0.1\",\"schema_version\":1,\"options\":\"x\",\"written_at_unix_ms\":1}\n{}",
       WarningKind::unsupported, "written by hwaccel 0.0.1"},
      {good_header + "backends=cuda\",\"written_at_unix_ms\":1}\n{}", WarningKind::unsupported, "other detection options"},
      {"no header line at all", WarningKind::parse_error, "no header line"},
      {"[1,2]\n{}", WarningKind::parse_error, "not a JSON object"},
      {"{\"cache_format\":1}\n{}", WarningKind::parse_error, "lacks"},
  };
  for (const auto& c : cases) {
    fs::create_directories(folder());
    hwaccel::testing::write_file(path(), c.content);
    ::chmod(path().c_str(), 0600);
    const auto r = cache()->get();
    const auto w = cache_warnings(*r);
    ASSERT_EQ(w.size(), 1u) << c.content;
    EXPECT_EQ(w[0].kind, c.kind) << c.content << ": " << w[0].message;
    EXPECT_NE(w[0].message.find(c.says), std::string::npos) << w[0].message;
    fs::remove(path());
  }

  // A file others could have written, or a link planted at the path, is not trusted.
  cache()->get();
  ::chmod(path().c_str(), 0666);
  auto w = cache_warnings(*cache()->get());
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].kind, WarningKind::unsupported);
  EXPECT_NE(w[0].message.find("writable by other users"), std::string::npos);
  fs::remove(path());
  hwaccel::testing::write_file(tmp_.path() / "elsewhere", "x");
  fs::create_symlink(tmp_.path() / "elsewhere", path());
  w = cache_warnings(*cache()->get());
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].message.find("symbolic link"), std::string::npos);
}

TEST_F(DiskCacheTest, AFileFromTheFutureIsNotTrusted) {
  wall_.advance(1h);
  cache()->get();
  wall_.advance(-2h);
  const auto r = cache()->get();
  EXPECT_EQ(*counter_.count, 2);
  const auto w = cache_warnings(*r);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].kind, WarningKind::invalid_value);
}

TEST_F(DiskCacheTest, FileNameIsKeyedByVersionSchemaAndOptions) {
  const auto live = make_live_system();
  DetectOptions no_probes;
  no_probes.system_probes = false;
  DetectOptions cuda_only;
  cuda_only.backends.reset();
  cuda_only.backends.set(static_cast<std::size_t>(Backend::cuda));
  const auto a = DiskCache::open(disk_options(), *live)->path();
  EXPECT_EQ(DiskCache::open(disk_options(), *live)->path(), a);
  EXPECT_NE(DiskCache::open(disk_options(no_probes), *live)->path(), a);
  EXPECT_NE(DiskCache::open(disk_options(cuda_only), *live)->path(), a);
  EXPECT_NE(a.find(std::string("registry-") + std::string(library_version()) + "-schema" +
                   std::to_string(registry_schema_version) + "-"),
            std::string::npos)
      << a;
  EXPECT_TRUE(a.starts_with(folder() + "/")) << a;
}

TEST_F(DiskCacheTest, ConcurrentCallersShareOneDetectionAndOneFile) {
  auto shared = cache();
  std::vector<std::shared_ptr<const AcceleratorRegistry>> results(8);
  {
    std::vector<std::jthread> pool;
    for (std::size_t i = 0; i < results.size(); ++i) pool.emplace_back([&, i] { results[i] = shared->get(); });
  }
  EXPECT_EQ(*counter_.count, 1);
  for (const auto& r : results) EXPECT_EQ(r, results[0]);
  EXPECT_EQ(std::distance(fs::directory_iterator(folder()), fs::directory_iterator()), 1);
}

TEST(DiskCacheFolder, FromTheEnvironmentNeverATemporaryFolder) {
  const auto folder_for = [](std::vector<std::pair<std::string, std::string>> env) {
    hwaccel::testing::FixtureBuilder f;
    for (auto& [k, v] : env) f.env(k, v);
    auto system = FixtureSystem::open(f.write());
    return default_cache_directory(**system);
  };
  EXPECT_EQ(folder_for({{"XDG_CACHE_HOME", "/var/cache/u"}, {"HOME", "/home/u"}}), "/var/cache/u/hwaccel");
  EXPECT_EQ(folder_for({{"XDG_CACHE_HOME", "relative/cache"}, {"HOME", "/home/u"}}), "/home/u/.cache/hwaccel");
  EXPECT_EQ(folder_for({{"HOME", "/home/u"}}), "/home/u/.cache/hwaccel");
  EXPECT_EQ(folder_for({{"HOME", "home"}}), std::nullopt);
  EXPECT_EQ(folder_for({}), std::nullopt);

  hwaccel::testing::FixtureBuilder empty;
  auto system = FixtureSystem::open(empty.write());
  const auto opened = DiskCache::open(DiskCacheOptions{}, **system);
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().kind, ErrorKind::unsupported);
  const auto relative = DiskCache::open(DiskCacheOptions{.directory = "cache", .options = {}, .clock = {}}, **system);
  EXPECT_EQ(relative.error().kind, ErrorKind::invalid_input);
}

}  // namespace
