// Accounting: each lease's start and end in a per-node SQLite database (WAL,
// one transaction per event), a journal for what could not be written then,
// device-hours reports, and quotas checked against them.
module;
#include <sqlite3.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>
module hwaccel.lease;
import hwaccel.json_fields;
import :internals;

#include "sqlite_support.hpp"

namespace hwaccel {
namespace {

using namespace sqlite_support;

// PRAGMA application_id "hwau": the file is hwaccel's usage database.
constexpr std::int64_t usage_application_id = 0x68776175;
constexpr std::string_view schema = R"sql(
CREATE TABLE IF NOT EXISTS leases (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  token TEXT NOT NULL UNIQUE,
  identity TEXT NOT NULL,
  device_id TEXT NOT NULL,
  user TEXT NOT NULL,
  uid INTEGER NOT NULL,
  pid INTEGER NOT NULL,
  command TEXT NOT NULL,
  started_at INTEGER NOT NULL,
  ended_at INTEGER
);
CREATE INDEX IF NOT EXISTS leases_by_start ON leases(started_at);
)sql";

Result<Db> open_usage(const std::string& path, bool write) {
  sqlite3* raw = nullptr;
  const int flags = write ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags | SQLITE_OPEN_NOFOLLOW, nullptr);
  Db db(raw);
  if (rc != SQLITE_OK) return fail(db_error(db.get(), path, "opening the usage database"));
  sqlite3_busy_timeout(db.get(), 5000);
  const auto app = pragma_integer(db.get(), "application_id");
  if (!app) return fail(db_error(db.get(), path, "reading the usage database"));
  if (*app != 0 && *app != usage_application_id)
    return fail(ErrorKind::parse_error, text::cat(path, ": not hwaccel's usage database (another program's SQLite file)"));
  if (write) {
    if (*app == 0) {
      // A new file, or an empty one: make it ours. Anything else in it is refused.
      const auto tables = [&] {
        Statement s(db.get(), "SELECT count(*) FROM sqlite_master");
        return s.ok() && s.step() == SQLITE_ROW ? s.integer(0) : -1;
      }();
      if (tables != 0) return fail(ErrorKind::parse_error, text::cat(path, ": not hwaccel's usage database (it has other tables)"));
      if (exec(db.get(), text::cat("PRAGMA application_id = ", usage_application_id)) != SQLITE_OK)
        return fail(db_error(db.get(), path, "creating the usage database"));
    }
    if (exec(db.get(), "PRAGMA journal_mode = WAL") != SQLITE_OK || exec(db.get(), schema) != SQLITE_OK)
      return fail(db_error(db.get(), path, "preparing the usage database"));
  } else if (*app == 0) {
    return fail(ErrorKind::not_found, text::cat(path, ": no usage recorded yet"));
  }
  return db;
}

std::string token_of(const LeaseHolder& h) {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return text::cat(host, ":", h.pid_namespace.value_or(0), ":", h.pid, ":", h.start_time.value_or(0), ":", h.since, ":", h.identity);
}

struct Event {
  bool start = true;
  std::string token;
  LeaseHolder holder;  // for a start
  std::int64_t at = 0;
};

std::string event_json(const Event& e) {
  json::Writer w(false);
  w.begin_object().field("op", e.start ? "start" : "end").field("token", e.token).field("at", e.at);
  if (e.start) {
    w.field("identity", e.holder.identity).field("device_id", e.holder.device_id).field("user", e.holder.user);
    w.field("uid", e.holder.uid).field("pid", e.holder.pid).field("command", e.holder.command);
  }
  w.end_object();
  return std::string(w.str()) + "\n";
}

std::optional<Event> parse_event(std::string_view line) {
  auto doc = json::Document::parse(line, "a usage journal line");
  if (!doc) return std::nullopt;
  const json::Value r = doc->root();
  const auto str = [&](std::string_view k) {
    const auto v = r.member(k);
    return v && v->kind() == json::Value::Kind::string ? std::string(v->string()) : std::string();
  };
  const auto whole = [&](std::string_view k) {
    const auto v = r.member(k);
    return v ? v->whole().value_or(0) : 0;
  };
  Event e;
  const std::string op = str("op");
  if (op != "start" && op != "end") return std::nullopt;
  e.start = op == "start";
  e.token = str("token");
  e.at = static_cast<std::int64_t>(whole("at"));
  if (e.token.empty() || e.at <= 0) return std::nullopt;
  e.holder.identity = str("identity");
  e.holder.device_id = str("device_id");
  e.holder.user = str("user");
  e.holder.uid = static_cast<std::uint32_t>(whole("uid") & 0xffffffffu);
  e.holder.pid = static_cast<std::uint32_t>(whole("pid") & 0xffffffffu);
  e.holder.command = str("command");
  if (e.start && e.holder.identity.empty()) return std::nullopt;
  return e;
}

// One transaction for the events; a start already there (a replayed journal) is kept as it was.
Result<void> apply(sqlite3* db, const std::string& path, const std::vector<Event>& events) {
  Transaction tx(db);
  if (tx.begin() != SQLITE_OK) return fail(db_error(db, path, "starting a transaction"));
  Statement start(db,
                  "INSERT OR IGNORE INTO leases (token, identity, device_id, user, uid, pid, command, started_at) "
                  "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  Statement end(db, "UPDATE leases SET ended_at = ?2 WHERE token = ?1 AND ended_at IS NULL");
  if (!start.ok() || !end.ok()) return fail(db_error(db, path, "preparing the usage statements"));
  for (const Event& e : events) {
    Statement& s = e.start ? start : end;
    s.reset();
    if (e.start) {
      start.bind(1, e.token).bind(2, e.holder.identity).bind(3, e.holder.device_id).bind(4, e.holder.user);
      start.bind(5, static_cast<std::int64_t>(e.holder.uid)).bind(6, static_cast<std::int64_t>(e.holder.pid));
      start.bind(7, e.holder.command).bind(8, e.at);
    } else {
      end.bind(1, e.token).bind(2, e.at);
    }
    if (s.step() != SQLITE_DONE) return fail(db_error(db, path, "recording a lease"));
  }
  if (tx.commit() != SQLITE_OK) return fail(db_error(db, path, "committing"));
  return {};
}

Result<void> append_journal(const std::string& journal, const std::vector<Event>& events) {
  const int fd = ::open(journal.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return fail(ErrorKind::io_error, text::cat("cannot keep the usage records in ", journal, ": ", std::strerror(errno)));
  std::string text;
  for (const Event& e : events) text += event_json(e);
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!ok) return fail(ErrorKind::io_error, text::cat("cannot keep the usage records in ", journal));
  return {};
}

// The journal's events go in, then the journal is emptied.
void flush_journal(sqlite3* db, const std::string& path, const std::string& journal, std::vector<std::string>& warnings) {
  const int fd = ::open(journal.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_uid != ::getuid() || st.st_size > (64 << 20)) {
    ::close(fd);
    return;
  }
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  const ssize_t n = ::pread(fd, text.data(), text.size(), 0);
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  std::vector<Event> events;
  std::size_t bad = 0;
  std::string_view rest = text;
  while (!rest.empty()) {
    const std::string_view line = text::trim(text::next_line(rest));
    if (line.empty()) continue;
    if (auto e = parse_event(line)) events.push_back(std::move(*e));
    else ++bad;
  }
  if (auto applied = apply(db, path, events); applied) {
    if (::ftruncate(fd, 0) != 0) warnings.push_back(text::cat("cannot empty ", journal, " after writing its records"));
    if (!events.empty()) warnings.push_back(text::cat(events.size(), " usage records kept in ", journal, " were written to ", path));
    if (bad > 0) warnings.push_back(text::cat(bad, " lines of ", journal, " were not usage records and were dropped"));
  }
  ::close(fd);
}

// Records left open by a holder that died before it could close them (run
// killed with SIGKILL): a record whose lease nobody holds any more ends now,
// an upper bound of its use, so that it stops counting.
void close_abandoned(sqlite3* db, const std::string& path, const std::string& lease_dir, std::vector<std::string>& warnings) {
  auto held = held_leases(lease_dir);
  if (!held) return;
  Statement open(db, "SELECT token, identity, pid FROM leases WHERE ended_at IS NULL");
  if (!open.ok()) return;
  std::vector<Event> ends;
  const auto now = static_cast<std::int64_t>(std::time(nullptr));
  while (open.step() == SQLITE_ROW) {
    const std::string_view identity = open.text_at(1);
    const auto pid = static_cast<std::uint32_t>(open.integer(2));
    const bool still = std::any_of(held->begin(), held->end(), [&](const LeaseHolder& h) { return h.identity == identity && h.pid == pid; });
    if (still) continue;
    Event e;
    e.start = false;
    e.token = std::string(open.text_at(0));
    e.at = now;
    ends.push_back(std::move(e));
  }
  if (ends.empty()) return;
  if (apply(db, path, ends))
    warnings.push_back(text::cat(ends.size(), ends.size() == 1 ? " lease was" : " leases were",
                                 " left open by a holder that died unrecorded; closed now (their device-hours are an upper bound)"));
}

}  // namespace

namespace lease_detail {

struct UsageLog::State {
  std::string path;
  std::string journal;
  std::vector<std::string> tokens;
  bool finished = false;
};

UsageLog::UsageLog(std::string db_path, std::string journal_path, const std::vector<LeaseHolder>& holders,
                   std::vector<std::string>& warnings)
    : state_(std::make_unique<State>()) {
  state_->path = std::move(db_path);
  state_->journal = std::move(journal_path);
  std::vector<Event> events;
  for (const LeaseHolder& h : holders) {
    Event e;
    e.token = token_of(h);
    e.holder = h;
    e.at = h.since;
    state_->tokens.push_back(e.token);
    events.push_back(std::move(e));
  }
  auto db = open_usage(state_->path, true);
  if (db) {
    flush_journal(db->get(), state_->path, state_->journal, warnings);
    // The journal lives in the lease directory.
    close_abandoned(db->get(), state_->path, state_->journal.substr(0, state_->journal.rfind('/')), warnings);
    if (auto applied = apply(db->get(), state_->path, events); applied) return;
    else warnings.push_back(applied.error().message + "; the records are kept in " + state_->journal);
  } else {
    warnings.push_back(db.error().message + "; the records are kept in " + state_->journal + " until it can be written");
  }
  if (auto kept = append_journal(state_->journal, events); !kept) warnings.push_back(kept.error().message);
}

UsageLog::~UsageLog() {
  std::vector<std::string> ignored;
  finish(ignored);
}

void UsageLog::finish(std::vector<std::string>& warnings) noexcept {
  if (!state_ || state_->finished) return;
  state_->finished = true;
  std::vector<Event> events;
  const auto now = static_cast<std::int64_t>(std::time(nullptr));
  for (const auto& token : state_->tokens) {
    Event e;
    e.start = false;
    e.token = token;
    e.at = now;
    events.push_back(std::move(e));
  }
  auto db = open_usage(state_->path, true);
  if (db) {
    flush_journal(db->get(), state_->path, state_->journal, warnings);
    if (apply(db->get(), state_->path, events)) return;
  }
  warnings.push_back(text::cat("the end of the lease could not be written to ", state_->path, "; it is kept in ", state_->journal));
  (void)append_journal(state_->journal, events);
}

std::optional<std::string> quota_refusal(const Quota& quota, const std::string& db_path, std::uint32_t uid, const std::string& user,
                                         std::size_t devices, std::int64_t now) {
  const std::int64_t since = now - quota.period_seconds;
  auto records = usage_records(db_path, since);
  std::vector<UsageRecord> all = records ? std::move(*records) : std::vector<UsageRecord>{};
  if (!records && records.error().kind != ErrorKind::not_found)
    return text::cat("the quota cannot be checked: ", records.error().message);
  const auto hours = [&](auto&& counts) {
    double h = 0;
    for (const UsageRecord& r : all)
      if (counts(r)) {
        const std::int64_t start = std::max(r.started_at, since);
        const std::int64_t end = std::min(r.ended_at.value_or(now), now);
        if (end > start) h += static_cast<double>(end - start) / 3600.0;
      }
    return h;
  };
  const std::string period = text::cat(quota.period_seconds / 86400, " days");
  const auto refuse = [&](std::string_view who, double used, double limit) {
    return text::cat(who, " has used ", std::round(used * 10) / 10, " of ", limit, " device-hours in the last ", period,
                     " (the quota file's limit): no lease for ", devices, " more device", devices == 1 ? "" : "s");
  };
  if (const auto it = quota.users.find(user); it != quota.users.end()) {
    const double used = hours([&](const UsageRecord& r) { return r.uid == uid; });
    if (used >= it->second) return refuse(text::cat("user ", user), used, it->second);
  } else if (quota.others) {
    const double used = hours([&](const UsageRecord& r) { return r.uid == uid; });
    if (used >= *quota.others) return refuse(text::cat("user ", user, " (as everyone not named)"), used, *quota.others);
  }
  // A group's limit is its members' sum.
  for (const auto& [group, limit] : quota.groups) {
    const struct group* g = ::getgrnam(group.c_str());
    if (!g) continue;
    std::set<std::string> members;
    for (char** m = g->gr_mem; m && *m; ++m) members.insert(*m);
    const gid_t gid = g->gr_gid;
    const auto in_group = [&](const std::string& name) {
      if (members.contains(name)) return true;
      const struct passwd* pw = ::getpwnam(name.c_str());
      return pw && pw->pw_gid == gid;
    };
    if (!in_group(user)) continue;
    const double used = hours([&](const UsageRecord& r) { return in_group(r.user); });
    if (used >= limit) return refuse(text::cat("group ", group), used, limit);
  }
  return std::nullopt;
}

}  // namespace lease_detail

Result<std::vector<UsageRecord>> usage_records(std::string_view path, std::int64_t since) {
  auto db = open_usage(std::string(path), false);
  if (!db) return fail(db.error());
  Statement s(db->get(),
              "SELECT id, identity, device_id, user, uid, pid, command, started_at, ended_at FROM leases "
              "WHERE ended_at IS NULL OR ended_at >= ?1 ORDER BY started_at, id");
  if (!s.ok()) return fail(db_error(db->get(), std::string(path), "reading the usage database"));
  s.bind(1, since);
  std::vector<UsageRecord> out;
  int rc = 0;
  while ((rc = s.step()) == SQLITE_ROW) {
    UsageRecord r;
    r.id = s.integer(0);
    r.identity = std::string(s.text_at(1));
    r.device_id = std::string(s.text_at(2));
    r.user = std::string(s.text_at(3));
    r.uid = static_cast<std::uint32_t>(s.integer(4));
    r.pid = static_cast<std::uint32_t>(s.integer(5));
    r.command = std::string(s.text_at(6));
    r.started_at = s.integer(7);
    if (!s.is_null(8)) r.ended_at = s.integer(8);
    out.push_back(std::move(r));
  }
  if (rc != SQLITE_DONE) return fail(db_error(db->get(), std::string(path), "reading the usage database"));
  return out;
}

std::vector<UsageLine> usage_by(const std::vector<UsageRecord>& records, UsageGrouping by, std::int64_t since, std::int64_t now) {
  std::map<std::string, UsageLine> lines;
  for (const UsageRecord& r : records) {
    const std::int64_t start = std::max(r.started_at, since);
    const std::int64_t end = std::min(r.ended_at.value_or(now), now);
    if (end <= start && !(r.started_at >= since && end == start)) continue;
    const auto add = [&](const std::string& key, std::int64_t a, std::int64_t b) {
      UsageLine& l = lines[key];
      l.key = key;
      l.device_hours += static_cast<double>(std::max<std::int64_t>(0, b - a)) / 3600.0;
    };
    if (by == UsageGrouping::day) {
      // Split at UTC midnights.
      for (std::int64_t day = start - start % 86400; day < std::max(end, start + 1); day += 86400) {
        char key[16] = {};
        const std::time_t t = day;
        std::tm tm{};
        gmtime_r(&t, &tm);
        std::strftime(key, sizeof key, "%Y-%m-%d", &tm);
        add(key, std::max(start, day), std::min(end, day + 86400));
      }
      char key[16] = {};
      const std::time_t t = r.started_at;
      std::tm tm{};
      gmtime_r(&t, &tm);
      std::strftime(key, sizeof key, "%Y-%m-%d", &tm);
      if (r.started_at >= since) ++lines[key].leases, lines[key].key = key;
    } else {
      const std::string key = by == UsageGrouping::user ? r.user : r.device_id;
      add(key, start, end);
      ++lines[key].leases;
    }
  }
  std::vector<UsageLine> out;
  for (auto& [key, line] : lines) out.push_back(std::move(line));
  return out;
}

Result<Quota> parse_quota(std::string_view text) {
  auto doc = json::Document::parse(text, "the quota file");
  if (!doc) return fail(ErrorKind::invalid_input, doc.error().message);
  const json::Value root = doc->root();
  if (root.kind() != json::Value::Kind::object) return fail(ErrorKind::invalid_input, "the quota file is not a JSON object");
  Quota q;
  const auto hours = [](const json::Value& v, std::string_view where) -> Result<double> {
    const auto n = v.number();
    if (!n || !std::isfinite(*n) || *n < 0 || *n > 1e9) return fail(ErrorKind::invalid_input, text::cat(where, " is not a number of device-hours (0 to 1e9)"));
    return *n;
  };
  for (const auto& [key, value] : root.members()) {
    if (key == "period_days") {
      const auto n = value.number();
      if (!n || !(*n >= 1.0 / 24) || *n > 3660) return fail(ErrorKind::invalid_input, "\"period_days\" is not a number of days (1 hour to 10 years)");
      q.period_seconds = static_cast<std::int64_t>(*n * 86400);
    } else if (key == "users" || key == "groups") {
      if (value.kind() != json::Value::Kind::object) return fail(ErrorKind::invalid_input, text::cat("\"", key, "\" is not an object of names"));
      auto& into = key == "users" ? q.users : q.groups;
      for (const auto& [name, limit] : value.members()) {
        if (name.empty() || name.size() > 64) return fail(ErrorKind::invalid_input, text::cat("\"", key, "\" has an empty or long name"));
        auto h = hours(limit, text::cat(key, ".", name));
        if (!h) return fail(h.error());
        into[std::string(name)] = *h;
      }
    } else if (key == "others") {
      auto h = hours(value, "\"others\"");
      if (!h) return fail(h.error());
      q.others = *h;
    } else {
      return fail(ErrorKind::invalid_input, text::cat("unknown key \"", text::excerpt(key, 40), "\" (period_days, users, groups, others)"));
    }
  }
  return q;
}

}  // namespace hwaccel
