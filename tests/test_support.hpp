// Helpers shared by the test executables: temporary folders, file writers,
// paths of the fixture trees. No module types here (included before imports).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hwaccel::testing {

/// Binary size units, for expected values written as published ("80 * GiB").
inline constexpr std::uint64_t KiB = 1024;
inline constexpr std::uint64_t MiB = 1024 * KiB;
inline constexpr std::uint64_t GiB = 1024 * MiB;

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

/// The process's peak resident set so far, in KiB (getrusage's ru_maxrss).
long peak_rss_kib();

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

/// Builds a fixture folder (docs/fixtures.md) in a temporary directory, for
/// tests that replay hand-made or real-capture pieces through the detectors.
///
///   FixtureBuilder f;
///   f.file("/proc/meminfo", "MemTotal: 1024 kB\n")
///    .command({"nvidia-smi", "-L"}, "GPU 0: ...\n")
///    .env("CUDA_VISIBLE_DEVICES", "0");
///   auto system = hwaccel::FixtureSystem::open(f.write());
class FixtureBuilder {
 public:
  explicit FixtureBuilder(std::string machine = "test machine", std::string source = "built by a test");

  /// A file under root/ at its machine path ("/sys/...").
  FixtureBuilder& file(std::string_view machine_path, std::string_view content);
  /// A symbolic link under root/ ("/sys/class/drm/card0" -> "../../devices/...").
  FixtureBuilder& link(std::string_view machine_path, std::string_view target);
  /// Copies a captured tree (files, folders, links as links) to a machine path.
  FixtureBuilder& tree(const std::filesystem::path& from, std::string_view machine_path);
  FixtureBuilder& env(std::string name, std::string value);
  /// Puts a tool on PATH without any recorded command.
  FixtureBuilder& tool(std::string name);
  /// A recorded command; its tool is put on PATH.
  FixtureBuilder& command(std::vector<std::string> argv, std::string_view out, int exit = 0,
                          std::string_view err = {}, bool hang = false);

  /// Writes fixture.json and returns the folder (valid while the builder lives).
  std::string write();
  const std::filesystem::path& path() const noexcept { return dir_.path(); }

 private:
  TempDir dir_;
  std::string machine_;
  std::string source_;
  std::vector<std::pair<std::string, std::string>> env_;
  std::vector<std::string> tools_;
  struct Command {
    std::vector<std::string> argv;
    std::string out_file;
    std::string err_file;
    int exit = 0;
    bool hang = false;
  };
  std::vector<Command> commands_;
};

/// A file or folder of the shared real captures; empty when they are not
/// available (callers GTEST_SKIP with the returned path in the message).
std::filesystem::path shared_capture(std::string_view relative);

/// One tensor of a safetensors file write_safetensors makes.
struct SafetensorsTensor {
  std::string name;
  std::string dtype = "BF16";  ///< "BF16", "F16", "F32", "I32", "F8_E4M3"
  std::vector<std::uint64_t> shape;
};

/// Writes a safetensors file with these tensors' header and zero-filled
/// (sparse) data, as the readers see a real checkpoint; returns `path`.
std::filesystem::path write_safetensors(const std::filesystem::path& path, const std::vector<SafetensorsTensor>& tensors);

}  // namespace hwaccel::testing
