// Fleet history in a real SQLite database: scans, migrations, and databases
// that are corrupt, foreign, newer, read-only, locked or written by two at once.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

import hwaccel;

#include "module_helpers.hpp"

namespace hwaccel {
namespace {

using testing::TempDir;

Fleet sample_fleet(int nodes, std::chrono::system_clock::time_point at) {
  static const AcceleratorRegistry dgx = [] {
    auto system = testing::open_machine("dgx-h100-8x-nvswitch");
    return DetectBuilder{}.detect(*system);
  }();
  Fleet fleet;
  fleet.scanned_at = at;
  for (int i = 0; i < nodes; ++i) {
    FleetNode n;
    n.host = "node-" + std::to_string(100 + i);
    n.scanned_at = at;
    n.source = "exec";
    n.elapsed = std::chrono::milliseconds{40 + i};
    if (i % 5 == 4) n.error = NodeError{NodeErrorKind::timeout, n.host + ": no answer within 60000 ms"};
    else n.registry = dgx;
    fleet.nodes.push_back(std::move(n));
  }
  fleet.warnings = {"line 3: not a registry"};
  return fleet;
}

std::chrono::system_clock::time_point day(int d) {
  return std::chrono::sys_days{std::chrono::year{2026} / 11 / d} + std::chrono::hours{3};
}

// Runs SQL on a database with the SQLite library itself, as another program would.
void sql(const std::string& path, const std::string& statement) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  const int rc = sqlite3_exec(db, statement.c_str(), nullptr, nullptr, &error);
  const std::string message = error ? error : "";
  sqlite3_free(error);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << message;
}

TEST(FleetStore, ScansGoInAndComeBackAlike) {
  TempDir dir;
  const std::string path = (dir.path() / "fleet.sqlite").string();
  auto store = FleetStore::open(path);
  ASSERT_TRUE(store) << store.error().message;
  EXPECT_EQ(store->schema_version(), fleet_store_version);
  EXPECT_EQ(store->latest().value(), std::nullopt);

  const Fleet first = sample_fleet(10, day(1));
  const Fleet second = sample_fleet(7, day(2));
  const auto a = store->append(first);
  const auto b = store->append(second);
  ASSERT_TRUE(a && b);
  EXPECT_LT(*a, *b);
  EXPECT_EQ(store->latest().value(), *b);
  EXPECT_EQ(store->previous(*b).value(), *a);
  EXPECT_EQ(store->previous(*a).value(), std::nullopt);
  const auto loaded = store->load(*a);
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(*loaded, first);
  EXPECT_EQ(to_json(*loaded), to_json(first));

  const auto scans = store->scans();
  ASSERT_TRUE(scans);
  ASSERT_EQ(scans->size(), 2u);
  EXPECT_EQ((*scans)[0].nodes, 10u);
  EXPECT_EQ((*scans)[0].nodes_answered, 8u);
  EXPECT_EQ((*scans)[0].accelerators, 64u);
  EXPECT_EQ((*scans)[1].scanned_at, day(2));
  EXPECT_EQ(store->load(999).error().kind, ErrorKind::not_found);

  // The devices table is there for people's own SQL.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT count(*) FROM devices WHERE scan_id = ? AND name LIKE '%H100%'", -1, &st, nullptr),
            SQLITE_OK);
  sqlite3_bind_int64(st, 1, *a);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int64(st, 0), 64);
  sqlite3_finalize(st);
  sqlite3_close(db);

  // Reopened, read-only: same scans; writing is refused with a reason.
  auto reader = FleetStore::open(path, FleetStore::Mode::read_only);
  ASSERT_TRUE(reader) << reader.error().message;
  EXPECT_EQ(reader->load(*b).value(), second);
  const auto refused = reader->append(first);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::permission_denied);
}

TEST(FleetStore, PruneKeepsTheNewest) {
  TempDir dir;
  auto store = FleetStore::open((dir.path() / "f.sqlite").string());
  ASSERT_TRUE(store);
  std::vector<std::int64_t> ids;
  for (int d = 1; d <= 5; ++d) ids.push_back(store->append(sample_fleet(3, day(d))).value());
  EXPECT_EQ(store->prune(2).value(), 3u);
  const auto scans = store->scans().value();
  ASSERT_EQ(scans.size(), 2u);
  EXPECT_EQ(scans[0].id, ids[3]);
  EXPECT_EQ(scans[1].id, ids[4]);
  EXPECT_EQ(store->load(ids[0]).error().kind, ErrorKind::not_found);
  EXPECT_EQ(store->prune(10).value(), 0u);
  EXPECT_EQ(store->prune(0).value(), 2u);
  EXPECT_EQ(store->latest().value(), std::nullopt);
}

TEST(FleetStore, AFailedScanLeavesTheDatabaseAsItWas) {
  TempDir dir;
  auto store = FleetStore::open((dir.path() / "f.sqlite").string());
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->append(sample_fleet(3, day(1))));
  // Two nodes of one name break the nodes table's key halfway through the scan.
  Fleet broken = sample_fleet(4, day(2));
  broken.nodes[3].host = broken.nodes[0].host;
  const auto r = store->append(broken);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("cannot write node"), std::string::npos) << r.error().message;
  const auto scans = store->scans().value();
  ASSERT_EQ(scans.size(), 1u) << "the half-written scan was rolled back";
  EXPECT_EQ(store->load(scans[0].id).value(), sample_fleet(3, day(1)));
}

TEST(FleetStore, RefusesWhatIsNotItsDatabase) {
  TempDir dir;
  const auto path = [&](const char* name) { return (dir.path() / name).string(); };

  std::ofstream(path("garbage.sqlite"), std::ios::binary) << std::string(4096, 'x');
  const auto garbage = FleetStore::open(path("garbage.sqlite"));
  ASSERT_FALSE(garbage);
  EXPECT_NE(garbage.error().message.find("not a SQLite database, or it is corrupt"), std::string::npos)
      << garbage.error().message;

  // A real database whose pages were overwritten in the middle.
  {
    auto store = FleetStore::open(path("corrupt.sqlite"));
    ASSERT_TRUE(store);
    for (int d = 1; d <= 3; ++d) ASSERT_TRUE(store->append(sample_fleet(20, day(d))));
  }
  {
    std::fstream f(path("corrupt.sqlite"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(4096 * 3);
    const std::string noise(4096 * 4, '\xa5');
    f.write(noise.data(), static_cast<std::streamsize>(noise.size()));
  }
  auto corrupt = FleetStore::open(path("corrupt.sqlite"), FleetStore::Mode::read_only);
  if (corrupt) {
    // The header page survived: reading the scans meets the damage and says so.
    bool reported = false;
    if (const auto scans = corrupt->scans(); !scans) {
      reported = scans.error().message.find("corrupt") != std::string::npos;
    } else {
      for (const auto& s : *scans) {
        const auto loaded = corrupt->load(s.id);
        if (!loaded) reported = reported || !loaded.error().message.empty();
      }
    }
    EXPECT_TRUE(reported) << "overwritten pages must not read back as scans";
  }

  sql(path("foreign.sqlite"), "CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)");
  const auto foreign = FleetStore::open(path("foreign.sqlite"));
  ASSERT_FALSE(foreign);
  EXPECT_NE(foreign.error().message.find("another program"), std::string::npos) << foreign.error().message;

  // Most programs version their database with user_version alone.
  sql(path("versioned.sqlite"), "PRAGMA user_version = 1; CREATE TABLE scans (id INTEGER PRIMARY KEY, total REAL)");
  const auto versioned = FleetStore::open(path("versioned.sqlite"));
  ASSERT_FALSE(versioned);
  EXPECT_NE(versioned.error().message.find("another program"), std::string::npos) << versioned.error().message;

  { ASSERT_TRUE(FleetStore::open(path("newer.sqlite"))); }
  sql(path("newer.sqlite"), "PRAGMA user_version = 99");
  const auto newer = FleetStore::open(path("newer.sqlite"));
  ASSERT_FALSE(newer);
  EXPECT_EQ(newer.error().kind, ErrorKind::unsupported);
  EXPECT_NE(newer.error().message.find("newer hwaccel"), std::string::npos);

  const auto missing = FleetStore::open(path("absent.sqlite"), FleetStore::Mode::read_only);
  ASSERT_FALSE(missing);
  EXPECT_FALSE(std::filesystem::exists(path("absent.sqlite"))) << "reading never creates a database";
}

TEST(FleetStore, ALockedDatabaseIsAClearTimeout) {
  TempDir dir;
  const std::string path = (dir.path() / "f.sqlite").string();
  ASSERT_TRUE(FleetStore::open(path));
  sqlite3* holder = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &holder), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(holder, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  auto store = FleetStore::open(path, FleetStore::Mode::read_write, std::chrono::milliseconds{100});
  if (store) {
    const auto r = store->append(sample_fleet(2, day(1)));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().kind, ErrorKind::timeout);
    EXPECT_NE(r.error().message.find("locked"), std::string::npos) << r.error().message;
  } else {
    EXPECT_EQ(store.error().kind, ErrorKind::timeout) << store.error().message;
  }
  sqlite3_exec(holder, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(holder);
  auto after = FleetStore::open(path);
  ASSERT_TRUE(after);
  EXPECT_TRUE(after->append(sample_fleet(2, day(1)))) << "released, the same database takes the scan";
}

TEST(FleetStore, ThreadsSharingOneStoreTakeTurns) {
  TempDir dir;
  auto store = FleetStore::open((dir.path() / "f.sqlite").string());
  ASSERT_TRUE(store);
  std::vector<std::int64_t> ids(4, 0);
  {
    std::vector<std::jthread> writers;
    for (int w = 0; w < 4; ++w)
      writers.emplace_back([&, w] {
        if (auto id = store->append(sample_fleet(10, day(w + 1)))) ids[static_cast<std::size_t>(w)] = *id;
        (void)store->scans();
      });
  }
  EXPECT_TRUE(std::all_of(ids.begin(), ids.end(), [](std::int64_t id) { return id > 0; }));
  EXPECT_EQ(store->scans().value().size(), 4u);
}

TEST(FleetStore, TwoScansWritingAtOnceBothLand) {
  TempDir dir;
  const std::string path = (dir.path() / "f.sqlite").string();
  std::vector<std::int64_t> ids(4, 0);
  {
    std::vector<std::jthread> writers;
    for (int w = 0; w < 4; ++w)
      writers.emplace_back([&, w] {
        auto store = FleetStore::open(path);
        if (!store) return;
        if (auto id = store->append(sample_fleet(30, day(w + 1)))) ids[static_cast<std::size_t>(w)] = *id;
      });
  }
  EXPECT_TRUE(std::all_of(ids.begin(), ids.end(), [](std::int64_t id) { return id > 0; }));
  auto store = FleetStore::open(path, FleetStore::Mode::read_only);
  ASSERT_TRUE(store);
  const auto scans = store->scans().value();
  ASSERT_EQ(scans.size(), 4u);
  for (const auto& s : scans) EXPECT_EQ(store->load(s.id).value().nodes.size(), 30u);
}

}  // namespace
}  // namespace hwaccel
