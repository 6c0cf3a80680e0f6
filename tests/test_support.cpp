// Test helpers: temporary folders, files, fixture locations.
#include "test_support.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

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

}  // namespace hwaccel::testing
