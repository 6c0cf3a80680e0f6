// What the library's SQLite stores share (the fleet history, the lease
// accounting): the connection and statement handles, errors in the library's
// words, a transaction that rolls back unless committed. Included by their
// implementation units right after the `module` line; <sqlite3.h>, <memory>,
// <optional>, <string> and <string_view> come from their global module
// fragments. Everything is inline: each including module has its own copy.
#pragma once

namespace hwaccel::sqlite_support {

struct CloseDb {
  void operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }
};
struct FinalizeStatement {
  void operator()(sqlite3_stmt* s) const noexcept { sqlite3_finalize(s); }
};
using Db = std::unique_ptr<sqlite3, CloseDb>;

inline Error db_error(sqlite3* db, std::string_view path, std::string_view doing) {
  const int code = sqlite3_extended_errcode(db);
  const int primary = code & 0xff;
  std::string why = sqlite3_errmsg(db);
  ErrorKind kind = ErrorKind::io_error;
  if (primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT) {
    why = "the file is not a SQLite database, or it is corrupt";
    kind = ErrorKind::parse_error;
  } else if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED) {
    why = "the database stayed locked by another process past the wait";
    kind = ErrorKind::timeout;
  } else if (primary == SQLITE_READONLY) {
    why = "the database is read-only here (file or folder permissions, or a read-only mount)";
    kind = ErrorKind::permission_denied;
  } else if (primary == SQLITE_CANTOPEN) {
    why = text::cat("cannot open it (", why, ")");
  } else if (primary == SQLITE_FULL) {
    why = "the disk is full";
  }
  return Error{kind, text::cat(path, ": ", doing, ": ", why)};
}

// A prepared statement with typed binds and reads.
class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql) {
    sqlite3_stmt* raw = nullptr;
    status_ = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &raw, nullptr);
    stmt_.reset(raw);
  }
  bool ok() const noexcept { return status_ == SQLITE_OK; }
  Statement& bind(int i, std::string_view v) {
    sqlite3_bind_text(stmt_.get(), i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& bind(int i, std::int64_t v) {
    sqlite3_bind_int64(stmt_.get(), i, v);
    return *this;
  }
  Statement& bind_null(int i) {
    sqlite3_bind_null(stmt_.get(), i);
    return *this;
  }
  template <class T>
  Statement& bind(int i, const std::optional<T>& v) {
    return v ? bind(i, *v) : bind_null(i);
  }
  /// SQLITE_ROW, SQLITE_DONE or an error code.
  int step() { return status_ = sqlite3_step(stmt_.get()); }
  void reset() {
    sqlite3_reset(stmt_.get());
    sqlite3_clear_bindings(stmt_.get());
  }
  std::int64_t integer(int column) const { return sqlite3_column_int64(stmt_.get(), column); }
  bool is_null(int column) const { return sqlite3_column_type(stmt_.get(), column) == SQLITE_NULL; }
  std::string_view text_at(int column) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_.get(), column));
    return p ? std::string_view(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_.get(), column))) : std::string_view();
  }

 private:
  std::unique_ptr<sqlite3_stmt, FinalizeStatement> stmt_;
  int status_ = SQLITE_OK;
};

inline int exec(sqlite3* db, std::string_view sql) {
  return sqlite3_exec(db, std::string(sql).c_str(), nullptr, nullptr, nullptr);
}

inline std::optional<std::int64_t> pragma_integer(sqlite3* db, std::string_view pragma) {
  Statement s(db, text::cat("PRAGMA ", pragma));
  if (!s.ok() || s.step() != SQLITE_ROW) return std::nullopt;
  return s.integer(0);
}

// Rolls back unless committed, so that any early return leaves the database as it was.
class Transaction {
 public:
  explicit Transaction(sqlite3* db) : db_(db) {}
  int begin() { return exec(db_, "BEGIN IMMEDIATE"); }
  int commit() {
    const int rc = exec(db_, "COMMIT");
    if (rc == SQLITE_OK) db_ = nullptr;
    return rc;
  }
  ~Transaction() {
    if (db_) exec(db_, "ROLLBACK");
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

 private:
  sqlite3* db_;
};

}  // namespace hwaccel::sqlite_support
