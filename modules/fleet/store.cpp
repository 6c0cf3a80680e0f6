// Scans kept in SQLite: one transaction per scan, versioned migrations.
module;
#include <simdjson.h>
#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "json_input.hpp"
module hwaccel.fleet;

#include "sqlite_support.hpp"

namespace hwaccel {

using namespace sqlite_support;

namespace {

// PRAGMA application_id: marks a file as hwaccel's ("hwac"), so that another
// program's database is refused rather than written into.
constexpr std::int64_t application_id = 0x68776163;

// Migration k takes a database from user_version k to k + 1.
constexpr std::array<std::string_view, fleet_store_version> migrations = {
    R"sql(
CREATE TABLE scans (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  scanned_at TEXT NOT NULL,
  nodes INTEGER NOT NULL,
  nodes_answered INTEGER NOT NULL,
  accelerators INTEGER NOT NULL,
  warnings TEXT NOT NULL
);
CREATE TABLE nodes (
  scan_id INTEGER NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
  host TEXT NOT NULL,
  scanned_at TEXT NOT NULL,
  source TEXT NOT NULL,
  elapsed_ms INTEGER NOT NULL,
  registry TEXT,
  error_kind TEXT,
  error_message TEXT,
  PRIMARY KEY (scan_id, host)
);
CREATE TABLE devices (
  scan_id INTEGER NOT NULL,
  host TEXT NOT NULL,
  identity TEXT NOT NULL,
  id TEXT NOT NULL,
  backend TEXT NOT NULL,
  name TEXT NOT NULL,
  spec_id TEXT,
  memory_bytes INTEGER,
  driver_version TEXT,
  firmware_version TEXT,
  PRIMARY KEY (scan_id, host, identity),
  FOREIGN KEY (scan_id, host) REFERENCES nodes(scan_id, host) ON DELETE CASCADE
);
CREATE INDEX devices_by_name ON devices(name);
)sql",
};

std::string warnings_json(const std::vector<std::string>& warnings) {
  json::Writer w(false, 256);
  w.value(warnings);
  return std::move(w).take();
}

}  // namespace

struct FleetStore::State {
  // One connection: calls from several threads take turns (a transaction
  // must not interleave with another thread's statements).
  mutable std::mutex mutex;
  Db db;
  std::string path;
  int version = 0;
  bool read_only = false;
};

FleetStore::FleetStore(std::unique_ptr<State> state) : state_(std::move(state)) {}
FleetStore::FleetStore(FleetStore&&) noexcept = default;
FleetStore& FleetStore::operator=(FleetStore&&) noexcept = default;
FleetStore::~FleetStore() = default;

int FleetStore::schema_version() const noexcept { return state_->version; }

Result<FleetStore> FleetStore::open(const std::string& path, Mode mode, std::chrono::milliseconds busy_timeout) {
  auto state = std::make_unique<State>();
  state->path = path;
  state->read_only = mode == Mode::read_only;
  sqlite3* raw = nullptr;
  const int flags = (state->read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
                    SQLITE_OPEN_NOMUTEX;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  state->db.reset(raw);
  if (rc != SQLITE_OK) {
    if (!raw) return fail(ErrorKind::io_error, text::cat(path, ": cannot open the database (out of memory)"));
    return fail(db_error(raw, path, "cannot open the database"));
  }
  sqlite3* db = state->db.get();
  sqlite3_busy_timeout(db, static_cast<int>(std::min<std::int64_t>(busy_timeout.count(), 1 << 30)));
  sqlite3_extended_result_codes(db, 1);
  exec(db, "PRAGMA foreign_keys = ON");

  // SQLite opens a file it may not write read-only without a word; a scan
  // must learn that before it asks a thousand hosts, not when it stores them.
  if (!state->read_only && sqlite3_db_readonly(db, "main") == 1)
    return fail(ErrorKind::permission_denied,
                text::cat(path, ": the database is read-only here (file or folder permissions, or a read-only mount)"));

  // The first read tells a database from any other file.
  const auto version = pragma_integer(db, "user_version");
  const auto app = pragma_integer(db, "application_id");
  if (!version || !app) return fail(db_error(db, path, "cannot read the database"));
  const auto foreign = [&] {
    return fail(ErrorKind::invalid_input,
                text::cat(path, ": a SQLite database of another program, not an hwaccel fleet database"));
  };
  // hwaccel sets its application_id with the first table: any versioned
  // database without it (most programs set only user_version) is another's.
  if (*app != application_id && (*app != 0 || *version != 0)) return foreign();
  if (*version > fleet_store_version)
    return fail(ErrorKind::unsupported, text::cat(path, ": written by a newer hwaccel (schema ", *version,
                                                  "; this one knows up to ", fleet_store_version, ")"));
  state->version = static_cast<int>(*version);
  if (state->version < fleet_store_version) {
    if (state->read_only) {
      if (state->version == 0)
        return fail(ErrorKind::not_found, text::cat(path, ": no fleet database here (no scan was written to it)"));
      return fail(ErrorKind::unsupported, text::cat(path, ": an older fleet database (schema ", state->version,
                                                    "); open it for writing once to migrate it"));
    }
    Transaction tx(db);
    if (tx.begin() != SQLITE_OK) return fail(db_error(db, path, "cannot start the migration"));
    // Read again inside the transaction: another process may have created or
    // migrated it meanwhile.
    const auto now_version = pragma_integer(db, "user_version");
    const auto now_app = pragma_integer(db, "application_id");
    if (!now_version || !now_app) return fail(db_error(db, path, "cannot read the database"));
    if (*now_app != application_id && (*now_app != 0 || *now_version != 0)) return foreign();
    if (*now_app == 0 && *now_version == 0) {
      Statement tables(db, "SELECT count(*) FROM sqlite_master");
      if (!tables.ok() || tables.step() != SQLITE_ROW) return fail(db_error(db, path, "cannot read the database"));
      if (tables.integer(0) > 0) return foreign();
    }
    const int now = static_cast<int>(std::min<std::int64_t>(*now_version, fleet_store_version));
    for (int v = now; v < fleet_store_version; ++v)
      if (exec(db, migrations[static_cast<std::size_t>(v)]) != SQLITE_OK)
        return fail(db_error(db, path, text::cat("cannot migrate the database to schema ", v + 1)));
    if (exec(db, text::cat("PRAGMA user_version = ", fleet_store_version)) != SQLITE_OK ||
        exec(db, text::cat("PRAGMA application_id = ", application_id)) != SQLITE_OK || tx.commit() != SQLITE_OK)
      return fail(db_error(db, path, "cannot migrate the database"));
    state->version = fleet_store_version;
  }
  return FleetStore(std::move(state));
}

Result<std::int64_t> FleetStore::append(const Fleet& fleet) {
  const std::lock_guard lock(state_->mutex);
  sqlite3* db = state_->db.get();
  const std::string& path = state_->path;
  if (state_->read_only) return fail(ErrorKind::permission_denied, text::cat(path, ": opened read-only"));
  Transaction tx(db);
  if (tx.begin() != SQLITE_OK) return fail(db_error(db, path, "cannot start writing the scan"));
  const FleetTotals totals = fleet_totals(fleet);
  Statement scan(db, "INSERT INTO scans (scanned_at, nodes, nodes_answered, accelerators, warnings) VALUES (?, ?, ?, ?, ?)");
  if (!scan.ok()) return fail(db_error(db, path, "cannot write the scan"));
  scan.bind(1, format_utc_time(fleet.scanned_at))
      .bind(2, static_cast<std::int64_t>(totals.nodes))
      .bind(3, static_cast<std::int64_t>(totals.nodes_answered))
      .bind(4, static_cast<std::int64_t>(totals.accelerators))
      .bind(5, warnings_json(fleet.warnings));
  if (scan.step() != SQLITE_DONE) return fail(db_error(db, path, "cannot write the scan"));
  const std::int64_t id = sqlite3_last_insert_rowid(db);

  Statement node(db,
                 "INSERT INTO nodes (scan_id, host, scanned_at, source, elapsed_ms, registry, error_kind, error_message) "
                 "VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  Statement device(db,
                   "INSERT OR IGNORE INTO devices (scan_id, host, identity, id, backend, name, spec_id, memory_bytes, "
                   "driver_version, firmware_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (!node.ok() || !device.ok()) return fail(db_error(db, path, "cannot write the scan"));
  for (const auto& n : fleet.nodes) {
    node.reset();
    node.bind(1, id)
        .bind(2, n.host)
        .bind(3, format_utc_time(n.scanned_at))
        .bind(4, n.source)
        .bind(5, static_cast<std::int64_t>(n.elapsed.count()));
    if (n.registry) node.bind(6, to_json(*n.registry, JsonOptions{.include_timings = !n.registry->timings().empty()}));
    else node.bind_null(6);
    if (n.error) node.bind(7, to_string(n.error->kind)).bind(8, n.error->message);
    else node.bind_null(7).bind_null(8);
    if (node.step() != SQLITE_DONE) return fail(db_error(db, path, text::cat("cannot write node ", n.host)));
    if (!n.registry) continue;
    for (const auto& d : n.registry->devices()) {
      device.reset();
      device.bind(1, id)
          .bind(2, n.host)
          .bind(3, device_identity(d))
          .bind(4, d.id)
          .bind(5, to_string(d.backend))
          .bind(6, d.name)
          .bind(7, d.spec_id)
          .bind(8, d.memory_bytes ? std::optional<std::int64_t>(static_cast<std::int64_t>(*d.memory_bytes)) : std::nullopt)
          .bind(9, d.driver_version)
          .bind(10, d.firmware_version);
      if (device.step() != SQLITE_DONE)
        return fail(db_error(db, path, text::cat("cannot write the devices of node ", n.host)));
    }
  }
  if (tx.commit() != SQLITE_OK) return fail(db_error(db, path, "cannot commit the scan"));
  return id;
}

Result<std::vector<ScanRecord>> FleetStore::scans() const {
  const std::lock_guard lock(state_->mutex);
  sqlite3* db = state_->db.get();
  Statement s(db, "SELECT id, scanned_at, nodes, nodes_answered, accelerators FROM scans ORDER BY id");
  if (!s.ok()) return fail(db_error(db, state_->path, "cannot list the scans"));
  std::vector<ScanRecord> out;
  int rc;
  while ((rc = s.step()) == SQLITE_ROW) {
    ScanRecord r;
    r.id = s.integer(0);
    r.scanned_at = parse_utc_time(s.text_at(1)).value_or(std::chrono::system_clock::time_point{});
    r.nodes = static_cast<std::uint64_t>(s.integer(2));
    r.nodes_answered = static_cast<std::uint64_t>(s.integer(3));
    r.accelerators = static_cast<std::uint64_t>(s.integer(4));
    out.push_back(r);
  }
  if (rc != SQLITE_DONE) return fail(db_error(db, state_->path, "cannot list the scans"));
  return out;
}

Result<std::optional<std::int64_t>> FleetStore::latest() const {
  const std::lock_guard lock(state_->mutex);
  sqlite3* db = state_->db.get();
  Statement s(db, "SELECT max(id) FROM scans");
  if (!s.ok() || s.step() != SQLITE_ROW) return fail(db_error(db, state_->path, "cannot read the scans"));
  if (s.is_null(0)) return std::optional<std::int64_t>{};
  return std::optional<std::int64_t>{s.integer(0)};
}

Result<std::optional<std::int64_t>> FleetStore::previous(std::int64_t id) const {
  const std::lock_guard lock(state_->mutex);
  sqlite3* db = state_->db.get();
  Statement s(db, "SELECT max(id) FROM scans WHERE id < ?");
  if (!s.ok()) return fail(db_error(db, state_->path, "cannot read the scans"));
  s.bind(1, id);
  if (s.step() != SQLITE_ROW) return fail(db_error(db, state_->path, "cannot read the scans"));
  if (s.is_null(0)) return std::optional<std::int64_t>{};
  return std::optional<std::int64_t>{s.integer(0)};
}

Result<Fleet> FleetStore::load(std::int64_t id) const {
  const std::lock_guard lock(state_->mutex);
  sqlite3* db = state_->db.get();
  const std::string& path = state_->path;
  Statement scan(db, "SELECT scanned_at, warnings FROM scans WHERE id = ?");
  if (!scan.ok()) return fail(db_error(db, path, "cannot read the scan"));
  scan.bind(1, id);
  const int found = scan.step();
  if (found == SQLITE_DONE) return fail(ErrorKind::not_found, text::cat(path, ": there is no scan ", id));
  if (found != SQLITE_ROW) return fail(db_error(db, path, text::cat("cannot read scan ", id)));
  Fleet fleet;
  const auto at = parse_utc_time(scan.text_at(0));
  if (!at) return fail(ErrorKind::parse_error, text::cat(path, ": scan ", id, " has no valid time"));
  fleet.scanned_at = *at;
  {
    simdjson::dom::parser parser;
    simdjson::dom::array warnings;
    if (json_input::parse(parser, scan.text_at(1)).get_array().get(warnings) == simdjson::SUCCESS)
      for (simdjson::dom::element w : warnings) {
        std::string_view s;
        if (w.get_string().get(s) == simdjson::SUCCESS) fleet.warnings.emplace_back(s);
      }
  }

  Statement nodes(db,
                  "SELECT host, scanned_at, source, elapsed_ms, registry, error_kind, error_message FROM nodes "
                  "WHERE scan_id = ? ORDER BY host");
  if (!nodes.ok()) return fail(db_error(db, path, text::cat("cannot read scan ", id)));
  nodes.bind(1, id);
  int rc;
  while ((rc = nodes.step()) == SQLITE_ROW) {
    FleetNode n;
    n.host = std::string(nodes.text_at(0));
    n.scanned_at = parse_utc_time(nodes.text_at(1)).value_or(fleet.scanned_at);
    n.source = std::string(nodes.text_at(2));
    n.elapsed = std::chrono::milliseconds{nodes.integer(3)};
    if (!nodes.is_null(4)) {
      auto registry = registry_from_json(nodes.text_at(4));
      if (!registry)
        return fail(ErrorKind::parse_error, text::cat(path, ": scan ", id, ", node ", n.host,
                                                      ": the stored registry is unreadable: ", registry.error().message));
      n.registry = std::move(*registry);
    }
    if (!nodes.is_null(5)) {
      const auto kind = parse_node_error_kind(nodes.text_at(5));
      n.error = NodeError{kind.value_or(NodeErrorKind::failed), std::string(nodes.text_at(6))};
    }
    if (!n.registry && !n.error)
      return fail(ErrorKind::parse_error, text::cat(path, ": scan ", id, ", node ", n.host, ": neither a registry nor an error"));
    fleet.nodes.push_back(std::move(n));
  }
  if (rc != SQLITE_DONE) return fail(db_error(db, path, text::cat("cannot read scan ", id)));
  return fleet;
}

Result<std::uint64_t> FleetStore::prune(std::size_t keep) {
  const std::lock_guard lock(state_->mutex);
  sqlite3* db = state_->db.get();
  const std::string& path = state_->path;
  if (state_->read_only) return fail(ErrorKind::permission_denied, text::cat(path, ": opened read-only"));
  Transaction tx(db);
  if (tx.begin() != SQLITE_OK) return fail(db_error(db, path, "cannot start pruning"));
  Statement s(db, "DELETE FROM scans WHERE id NOT IN (SELECT id FROM scans ORDER BY id DESC LIMIT ?)");
  if (!s.ok()) return fail(db_error(db, path, "cannot prune"));
  s.bind(1, static_cast<std::int64_t>(std::min<std::size_t>(keep, std::size_t{1} << 62)));
  if (s.step() != SQLITE_DONE) return fail(db_error(db, path, "cannot prune"));
  const auto removed = static_cast<std::uint64_t>(sqlite3_changes(db));
  if (tx.commit() != SQLITE_OK) return fail(db_error(db, path, "cannot commit the pruning"));
  return removed;
}

}  // namespace hwaccel
