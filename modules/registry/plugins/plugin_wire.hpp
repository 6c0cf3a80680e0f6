// The pipe protocol between hwaccel and hwaccel-plugin-host, the child
// process an isolated plugin runs in (docs/plugins.md, "Isolation"). Shared
// by both sides and nothing else; plain C++ so that the host program needs no
// module of the library.
//
// Every message is a frame: a 4-byte little-endian length of what follows,
// an operation byte, then the operation's fields: integers little-endian,
// strings as a 4-byte length and their bytes. The host sends the plugin's
// descriptor first, then one request per system call the plugin makes, each
// answered before the next, then `done` with the plugin's document. Nothing
// in a frame is trusted by its reader: every read is bounds-checked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace hwaccel::plugin_wire {

/// Operations. Host -> hwaccel: descriptor, load_failed, requests, done;
/// hwaccel -> host: answer.
enum class Op : std::uint8_t {
  descriptor = 'D',   ///< the plugin's descriptor (fields below)
  load_failed = 'F',  ///< the plugin could not be loaded: string why
  read_file = 'r',    ///< string path, u64 max_bytes
  list_dir = 'l',     ///< string path
  read_link = 'k',    ///< string path
  status = 's',       ///< string path, u8 follow_symlinks
  env = 'e',          ///< string name
  run = 'x',          ///< u32 timeout_ms, u32 argc, argc strings
  done = 'z',         ///< i32 detect's return value, string document, u8 document_too_large
  answer = 'a',       ///< u8 status (hwaccel_plugin_status), then the request's fields or string error
};

/// The largest frame either side accepts beyond the output cap (descriptor,
/// paths, framing).
inline constexpr std::size_t frame_overhead = std::size_t{1} << 16;

/// Appends fields to a frame.
class FrameWriter {
 public:
  explicit FrameWriter(Op op) { bytes_.resize(4); bytes_.push_back(static_cast<char>(op)); }
  FrameWriter& u8(std::uint8_t v) {
    bytes_.push_back(static_cast<char>(v));
    return *this;
  }
  FrameWriter& u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) bytes_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    return *this;
  }
  FrameWriter& i32(std::int32_t v) { return u32(static_cast<std::uint32_t>(v)); }
  FrameWriter& u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) bytes_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    return *this;
  }
  FrameWriter& str(std::string_view s) {
    u32(static_cast<std::uint32_t>(s.size()));
    bytes_.append(s);
    return *this;
  }
  FrameWriter& strings(const std::vector<std::string>& list) {
    u32(static_cast<std::uint32_t>(list.size()));
    for (const auto& s : list) str(s);
    return *this;
  }
  /// The frame with its length filled in.
  std::string take() {
    const auto n = static_cast<std::uint32_t>(bytes_.size() - 4);
    for (int i = 0; i < 4; ++i) bytes_[static_cast<std::size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
    return std::move(bytes_);
  }

 private:
  std::string bytes_;
};

/// The length a frame's 4-byte header announces.
inline std::uint32_t frame_length(const unsigned char header[4]) noexcept {
  return static_cast<std::uint32_t>(header[0]) | static_cast<std::uint32_t>(header[1]) << 8 |
         static_cast<std::uint32_t>(header[2]) << 16 | static_cast<std::uint32_t>(header[3]) << 24;
}

/// Reads the fields of one frame's body (after the length). Each read fails
/// once the body is short, and every later read then fails too.
class FrameReader {
 public:
  explicit FrameReader(std::string_view body) noexcept : rest_(body) {}
  bool ok() const noexcept { return ok_; }
  bool finished() const noexcept { return ok_ && rest_.empty(); }

  std::uint8_t u8() noexcept {
    if (!take(1)) return 0;
    return static_cast<std::uint8_t>(last_[0]);
  }
  std::uint32_t u32() noexcept {
    if (!take(4)) return 0;
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(static_cast<unsigned char>(last_[static_cast<std::size_t>(i)])) << (8 * i);
    return v;
  }
  std::int32_t i32() noexcept { return static_cast<std::int32_t>(u32()); }
  std::uint64_t u64() noexcept {
    if (!take(8)) return 0;
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(static_cast<unsigned char>(last_[static_cast<std::size_t>(i)])) << (8 * i);
    return v;
  }
  std::string_view str() noexcept {
    const std::uint32_t n = u32();
    if (!take(n)) return {};
    return last_;
  }
  /// A list of strings; at most `max` of them.
  std::vector<std::string> strings(std::size_t max = 4096) {
    const std::uint32_t n = u32();
    std::vector<std::string> out;
    if (n > max || n > rest_.size() / 4) {
      ok_ = false;
      return out;
    }
    for (std::uint32_t i = 0; i < n && ok_; ++i) out.emplace_back(str());
    return out;
  }

 private:
  bool take(std::size_t n) noexcept {
    if (!ok_ || rest_.size() < n) {
      ok_ = false;
      last_ = {};
      return false;
    }
    last_ = rest_.substr(0, n);
    rest_.remove_prefix(n);
    return true;
  }
  std::string_view rest_;
  std::string_view last_;
  bool ok_ = true;
};

}  // namespace hwaccel::plugin_wire
