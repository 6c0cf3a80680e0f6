// One detection's reads of a System, each asked once and then answered from memory.
module;
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
export module hwaccel.detect:read_cache;
import hwaccel.hardware;
import :system;

export namespace hwaccel {

/// Wraps another System for the span of one detection and answers each
/// repeated question from memory: every file, directory listing, link and
/// status is asked of the wrapped System once (several detectors read
/// /proc/cpuinfo, /proc/self/mountinfo and /proc/bus/pci/devices, and walk
/// the same sysfs links). Environment, PATH lookups and tool runs go
/// straight through. Thread-safe. It takes the machine as unchanging while
/// it lives, so keep it for one detection, never longer.
class ReadCache final : public System {
 public:
  explicit ReadCache(const System& inner);
  ~ReadCache() override;

  [[nodiscard]] Result<FileContent> read_file(std::string_view path, std::size_t max_bytes = default_read_cap) const override;
  [[nodiscard]] Result<std::vector<DirEntry>> list_dir(std::string_view path) const override;
  [[nodiscard]] Result<std::string> read_link(std::string_view path) const override;
  [[nodiscard]] Result<FileStatus> status(std::string_view path, bool follow_symlinks = true) const override;
  std::optional<std::string> env(std::string_view name) const override;
  ProcessIdentity identity() const override { return inner_.identity(); }
  std::optional<std::string> find_tool(std::string_view name) const override;
  [[nodiscard]] Result<ToolResult> run(const ToolRequest& request) const override;
  bool runs_instantly() const noexcept override;
  bool reads_from_memory() const noexcept override { return true; }

  struct State;

 private:
  const System& inner_;
  std::unique_ptr<State> state_;
};

}  // namespace hwaccel
