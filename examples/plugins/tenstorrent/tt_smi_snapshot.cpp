// A strict reader of JSON as tt-smi writes it (RFC 8259 values), depth- and
// size-limited, keeping only the board_info members this plugin uses.
#include "tt_smi_snapshot.hpp"

#include <cstddef>

namespace tenstorrent {

namespace {

class Reader {
 public:
  explicit Reader(std::string_view text) : t_(text) {}

  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }

  void blank() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\n' || t_[i_] == '\r' || t_[i_] == '\t')) ++i_;
  }
  bool at(char c) {
    blank();
    return i_ < t_.size() && t_[i_] == c;
  }
  bool take(char c) {
    if (!at(c)) return fail(std::string("expected '") + c + "' at byte " + std::to_string(i_));
    ++i_;
    return true;
  }
  bool fail(std::string why) {
    if (error_.empty()) error_ = std::move(why);
    return false;
  }
  bool done() {
    blank();
    return i_ == t_.size();
  }

  bool string(std::string& out) {
    if (!take('"')) return false;
    out.clear();
    while (i_ < t_.size()) {
      const char c = t_[i_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return fail("a control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= t_.size()) break;
      const char e = t_[i_++];
      switch (e) {
        case '"': case '\\': case '/': out += e; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u':
          if (i_ + 4 > t_.size()) return fail("a short \\u escape");
          i_ += 4;
          out += '?';  // none of the members read here holds one
          break;
        default: return fail("an unknown escape in a string");
      }
    }
    return fail("an unterminated string");
  }

  // Skips any value; `depth` bounds nesting.
  bool skip(int depth = 0) {
    if (depth > 64) return fail("nesting deeper than 64");
    blank();
    if (i_ >= t_.size()) return fail("a value is missing at the end");
    const char c = t_[i_];
    if (c == '"') {
      std::string ignored;
      return string(ignored);
    }
    if (c == '{') return object(depth, [&](const std::string&) { return skip(depth + 1); });
    if (c == '[') return array(depth, [&] { return skip(depth + 1); });
    const std::size_t start = i_;
    while (i_ < t_.size() && std::string_view("+-.0123456789eEtruefalsn").find(t_[i_]) != std::string_view::npos) ++i_;
    const std::string_view word = t_.substr(start, i_ - start);
    if (word.empty()) return fail("an unexpected character at byte " + std::to_string(start));
    if (word == "true" || word == "false" || word == "null") return true;
    if (word.find_first_not_of("+-.0123456789eE") != std::string_view::npos) return fail("a malformed literal");
    return true;
  }

  template <class Member>
  bool object(int depth, Member&& member) {
    if (depth > 64) return fail("nesting deeper than 64");
    if (!take('{')) return false;
    if (at('}')) return take('}');
    for (;;) {
      std::string key;
      if (!string(key) || !take(':') || !member(key)) return false;
      if (at(',')) {
        ++i_;
        continue;
      }
      return take('}');
    }
  }

  template <class Element>
  bool array(int depth, Element&& element) {
    if (depth > 64) return fail("nesting deeper than 64");
    if (!take('[')) return false;
    if (at(']')) return take(']');
    for (;;) {
      if (!element()) return false;
      if (at(',')) {
        ++i_;
        continue;
      }
      return take(']');
    }
  }

  // A string, or a JSON literal kept as its text (pcie_speed is a number).
  bool scalar(std::string& out) {
    if (at('"')) return string(out);
    const std::size_t start = i_;
    if (!skip(64)) return false;
    out.assign(t_.substr(start, i_ - start));
    return true;
  }

  std::size_t position() const { return i_; }
  void seek(std::size_t i) { i_ = i; }

 private:
  std::string_view t_;
  std::size_t i_ = 0;
  std::string error_;
};

}  // namespace

bool parse_snapshot(std::string_view text, std::vector<SnapshotBoard>& boards, std::string& error) {
  boards.clear();
  if (text.size() > (std::size_t{64} << 20)) {
    error = "the snapshot is larger than 64 MiB";
    return false;
  }
  const std::size_t open = text.find('{');
  if (open == std::string_view::npos) {
    error = "no JSON object in its output";
    return false;
  }
  Reader r(text.substr(open));
  bool saw_devices = false;
  const bool ok = r.object(0, [&](const std::string& key) {
    if (key != "device_info") return r.skip(1);
    saw_devices = true;
    return r.array(1, [&] {
      SnapshotBoard board;
      const bool read = r.object(2, [&](const std::string& section) {
        if (section != "board_info") return r.skip(3);
        return r.object(3, [&](const std::string& field) {
          std::string value;
          if (field == "dram_status") {
            if (!r.scalar(value)) return false;
            board.dram_trained = value == "true";
            return true;
          }
          std::string* into = field == "bus_id" ? &board.bus_id
                              : field == "board_type" ? &board.board_type
                              : field == "board_id" ? &board.board_id
                              : field == "dram_speed" ? &board.dram_speed
                                                      : nullptr;
          if (!into) return r.skip(4);
          return r.scalar(*into);
        });
      });
      if (read) boards.push_back(std::move(board));
      return read;
    });
  });
  if (!ok) {
    error = r.error();
    boards.clear();
    return false;
  }
  if (!saw_devices) {
    error = "the snapshot has no device_info";
    return false;
  }
  if (boards.size() > 4096) {
    error = "more than 4096 devices";
    boards.clear();
    return false;
  }
  return true;
}

}  // namespace tenstorrent
