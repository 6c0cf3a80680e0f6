// A captured machine replayed from a fixture folder (docs/fixtures.md).
module;
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>
export module hwaccel.detect:fixture;
import hwaccel.hardware;
import :system;

export namespace hwaccel {

/// One captured tool run of a fixture manifest.
struct CommandRecord {
  std::vector<std::string> argv;
  std::string stdout_path;  ///< relative to commands/
  std::optional<std::string> stderr_path;
  int exit = 0;
  std::optional<int> signal;
  std::optional<std::uint32_t> duration_ms;
  bool hang = false;
};

/// Permission bits and owner of a path, where a fixture says them
/// (device nodes are plain files in a fixture's root/).
struct FilePermissions {
  std::uint32_t mode = 0;
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;

  friend bool operator==(const FilePermissions&, const FilePermissions&) = default;
};

/// fixture.json, format 1 (docs/fixtures.md).
struct FixtureManifest {
  int format = 1;
  std::string machine;
  std::string source;
  bool synthetic = true;
  std::map<std::string, std::string, std::less<>> env;
  std::vector<std::string> tools;
  std::vector<CommandRecord> commands;
  /// The process that was detecting; root when absent.
  std::optional<ProcessIdentity> identity;
  /// Permissions of paths (device nodes), by machine path.
  std::map<std::string, FilePermissions, std::less<>> permissions;
};

/// Parses and validates a fixture manifest.
[[nodiscard]] Result<FixtureManifest> parse_fixture_manifest(std::string_view json);
/// Writes a manifest in canonical form.
std::string write_fixture_manifest(const FixtureManifest& manifest);

struct FixtureOptions {
  /// Sleep for each command's recorded duration_ms, and until the deadline
  /// for a hung one (latency benchmarks). Off: replies come at once.
  bool simulate_durations = false;
  /// File contents up to this size are loaded when the fixture is opened, so
  /// that replay touches no disk; larger files are read on demand.
  std::size_t preload_file_bytes = std::size_t{1} << 20;
  /// Upper bound on everything preloaded.
  std::size_t preload_total_bytes = std::size_t{256} << 20;
  /// Upper bound on entries in root/ (a hostile fixture cannot exhaust memory).
  std::size_t max_entries = 1'000'000;
};

/// A captured machine replayed from a fixture folder.
class FixtureSystem final : public System {
 public:
  /// Opens `dir` (holding fixture.json, root/, commands/). Fails with a clear
  /// error on a malformed manifest or a root that cannot be read.
  [[nodiscard]] static Result<std::unique_ptr<FixtureSystem>> open(std::string_view dir, FixtureOptions options = {});
  /// Opens `dir` with `layers` laid over it in order (see TimelineStep::state):
  /// each layer's `removed` paths go, then the files under its folder's root/
  /// replace or add, and its fixture.json, when present, replaces the
  /// manifest. A layer with an empty `dir` only removes.
  struct Layer {
    std::string dir;
    std::vector<std::string> removed;
  };
  [[nodiscard]] static Result<std::unique_ptr<FixtureSystem>> open_layered(std::string_view dir, std::span<const Layer> layers,
                                                             FixtureOptions options = {});
  ~FixtureSystem() override;

  const FixtureManifest& manifest() const noexcept;

  [[nodiscard]] Result<FileContent> read_file(std::string_view path, std::size_t max_bytes = default_read_cap) const override;
  [[nodiscard]] Result<std::vector<DirEntry>> list_dir(std::string_view path) const override;
  [[nodiscard]] Result<std::string> read_link(std::string_view path) const override;
  [[nodiscard]] Result<FileStatus> status(std::string_view path, bool follow_symlinks = true) const override;
  std::optional<std::string> env(std::string_view name) const override;
  ProcessIdentity identity() const override;
  std::optional<std::string> find_tool(std::string_view name) const override;
  [[nodiscard]] Result<ToolResult> run(const ToolRequest& request) const override;
  bool runs_instantly() const noexcept override;
  bool reads_from_memory() const noexcept override { return true; }

  struct State;

 private:
  explicit FixtureSystem(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace hwaccel

// Module-internal: the fixture's bounded read of one of its own files (fixture.cpp).
namespace hwaccel {
/// At most `cap` bytes of the regular file at `path`, refusing a link or a
/// FIFO as its last component; `shown` names it in messages.
[[nodiscard]] Result<FileContent> read_fixture_file(const std::string& path, std::size_t cap, std::string_view shown);
}  // namespace hwaccel
