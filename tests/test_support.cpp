// Test helpers: temporary folders, files, fixture locations.
#include "test_support.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <cstring>

#include <sys/resource.h>

namespace hwaccel::testing {

namespace fs = std::filesystem;

TempDir::TempDir() {
  std::random_device rd;
  const fs::path base = fs::temp_directory_path();
  for (int attempt = 0; attempt < 100; ++attempt) {
    fs::path candidate = base / ("hwaccel-test-" + std::to_string(rd()));
    std::error_code ec;
    if (fs::create_directory(candidate, ec)) {
      path_ = candidate;
      return;
    }
  }
  throw std::runtime_error("cannot create a temporary folder");
}

TempDir::~TempDir() {
  std::error_code ec;
  // Make everything removable again (tests chmod things away).
  for (auto it = fs::recursive_directory_iterator(path_, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec)) fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
  }
  fs::remove_all(path_, ec);
}

long peak_rss_kib() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

void write_file(const fs::path& path, std::string_view content) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

void write_script(const fs::path& path, std::string_view body) {
  write_file(path, std::string("#!/bin/sh\n") + std::string(body) + "\n");
  fs::permissions(path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec);
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

static fs::path env_path(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? fs::path(v) : fs::path(fallback);
}

fs::path fixtures_root() { return env_path("HWACCEL_FIXTURES", "fixtures"); }
fs::path shared_fixtures_root() { return env_path("HWACCEL_SHARED_FIXTURES", "../shared/fixtures/real"); }

std::vector<fs::path> machine_fixtures() {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fixtures_root() / "machines", ec))
    if (e.is_directory() && fs::exists(e.path() / "fixture.json")) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

int open_descriptor_count() {
  int n = 0;
  std::error_code ec;
  for (auto it = fs::directory_iterator("/proc/self/fd", ec); !ec && it != fs::directory_iterator(); it.increment(ec)) ++n;
  return n;
}

namespace {

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

fs::path under_root(const fs::path& dir, std::string_view machine_path) {
  std::string_view p = machine_path;
  while (!p.empty() && p.front() == '/') p.remove_prefix(1);
  return dir / "root" / std::string(p);
}

}  // namespace

FixtureBuilder::FixtureBuilder(std::string machine, std::string source)
    : machine_(std::move(machine)), source_(std::move(source)) {
  fs::create_directories(dir_.path() / "root");
  fs::create_directories(dir_.path() / "commands");
}

FixtureBuilder& FixtureBuilder::file(std::string_view machine_path, std::string_view content) {
  write_file(under_root(dir_.path(), machine_path), content);
  return *this;
}

FixtureBuilder& FixtureBuilder::link(std::string_view machine_path, std::string_view target) {
  const fs::path p = under_root(dir_.path(), machine_path);
  fs::create_directories(p.parent_path());
  fs::create_symlink(std::string(target), p);
  return *this;
}

FixtureBuilder& FixtureBuilder::tree(const fs::path& from, std::string_view machine_path) {
  const fs::path to = under_root(dir_.path(), machine_path);
  fs::create_directories(to);
  fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::copy_symlinks | fs::copy_options::overwrite_existing);
  return *this;
}

FixtureBuilder& FixtureBuilder::env(std::string name, std::string value) {
  env_.emplace_back(std::move(name), std::move(value));
  return *this;
}

FixtureBuilder& FixtureBuilder::tool(std::string name) {
  if (std::find(tools_.begin(), tools_.end(), name) == tools_.end()) tools_.push_back(std::move(name));
  return *this;
}

FixtureBuilder& FixtureBuilder::command(std::vector<std::string> argv, std::string_view out, int exit,
                                        std::string_view err, bool hang) {
  const std::size_t n = commands_.size();
  Command c;
  c.out_file = std::to_string(n) + ".out";
  write_file(dir_.path() / "commands" / c.out_file, out);
  if (!err.empty()) {
    c.err_file = std::to_string(n) + ".err";
    write_file(dir_.path() / "commands" / c.err_file, err);
  }
  tool(argv.at(0));
  c.argv = std::move(argv);
  c.exit = exit;
  c.hang = hang;
  commands_.push_back(std::move(c));
  return *this;
}

std::string FixtureBuilder::write() {
  std::string j = "{\"format\": 1, \"machine\": " + json_string(machine_) + ", \"source\": " + json_string(source_) +
                  ", \"synthetic\": true, \"env\": {";
  for (std::size_t i = 0; i < env_.size(); ++i)
    j += (i ? ", " : "") + json_string(env_[i].first) + ": " + json_string(env_[i].second);
  j += "}, \"tools\": [";
  for (std::size_t i = 0; i < tools_.size(); ++i) j += (i ? ", " : "") + json_string(tools_[i]);
  j += "], \"commands\": [";
  for (std::size_t i = 0; i < commands_.size(); ++i) {
    const auto& c = commands_[i];
    j += i ? ", {\"argv\": [" : "{\"argv\": [";
    for (std::size_t a = 0; a < c.argv.size(); ++a) j += (a ? ", " : "") + json_string(c.argv[a]);
    j += "], \"stdout\": " + json_string(c.out_file);
    if (!c.err_file.empty()) j += ", \"stderr\": " + json_string(c.err_file);
    j += ", \"exit\": " + std::to_string(c.exit);
    if (c.hang) j += ", \"hang\": true";
    j += "}";
  }
  j += "]}\n";
  write_file(dir_.path() / "fixture.json", j);
  return dir_.str();
}

fs::path shared_capture(std::string_view relative) {
  const fs::path p = shared_fixtures_root() / std::string(relative);
  std::error_code ec;
  return fs::exists(p, ec) ? p : fs::path();
}

std::filesystem::path write_safetensors(const std::filesystem::path& path, const std::vector<SafetensorsTensor>& tensors) {
  std::string header = "{\"__metadata__\":{\"format\":\"pt\"}";
  std::uint64_t offset = 0;
  for (const auto& t : tensors) {
    std::uint64_t n = t.dtype == "F32" || t.dtype == "I32" ? 4 : t.dtype == "F8_E4M3" ? 1 : 2;
    for (auto d : t.shape) n *= d;
    header += ",\"" + t.name + "\":{\"dtype\":\"" + t.dtype + "\",\"shape\":[";
    for (std::size_t i = 0; i < t.shape.size(); ++i) header += (i ? "," : "") + std::to_string(t.shape[i]);
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + n) + "]}";
    offset += n;
  }
  header += "}";
  std::string bytes(8, '\0');
  const std::uint64_t len = header.size();
  std::memcpy(bytes.data(), &len, 8);
  write_file(path, bytes + header);
  std::filesystem::resize_file(path, 8 + header.size() + offset);
  return path;
}

}  // namespace hwaccel::testing
