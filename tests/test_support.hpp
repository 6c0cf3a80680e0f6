// Helpers shared by the test executables: temporary folders, file writers,
// paths of the fixture trees. No module types here (included before imports).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace hwaccel::testing {

/// A fresh folder under $TMPDIR, removed (recursively) on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const noexcept { return path_; }
  std::string str() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

/// Writes `content` to `path`, creating parent folders.
void write_file(const std::filesystem::path& path, std::string_view content);
/// Writes an executable shell script (mode 0755).
void write_script(const std::filesystem::path& path, std::string_view body);
std::string read_file(const std::filesystem::path& path);

/// fixtures/ of this source tree ($HWACCEL_FIXTURES).
std::filesystem::path fixtures_root();
/// The shared real captures ($HWACCEL_SHARED_FIXTURES); may not exist.
std::filesystem::path shared_fixtures_root();
/// Machine fixture folders under fixtures/machines, sorted.
std::vector<std::filesystem::path> machine_fixtures();

/// Number of open file descriptors of this process.
int open_descriptor_count();

}  // namespace hwaccel::testing
