// A fixture with a timeline, replayed step by step (docs/fixtures.md).
module;
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
export module hwaccel.detect:timeline;
import hwaccel.hardware;
import :system;
import :fixture;

export namespace hwaccel {

/// One step of a fixture timeline (docs/fixtures.md): what the kernel said,
/// then the machine's state after it.
struct TimelineStep {
  std::string name;                   ///< "gpu-falls-off-bus", for messages
  std::vector<KernelEvent> events;    ///< in the order they arrived
  bool rescan = false;                ///< seen by a periodic re-scan, not an event
  /// The state: a folder (relative to the timeline) laid over the previous
  /// step's state: files under its root/ replace or add, `removed` paths go
  /// with everything below them, and its fixture.json, where it has one,
  /// replaces the manifest (commands then come from its commands/). With
  /// `complete`, the folder is a whole fixture instead (what capture writes).
  std::optional<std::string> state;
  std::vector<std::string> removed;
  bool complete = false;
};

/// timeline.json, format 1.
struct Timeline {
  int format = 1;
  std::vector<TimelineStep> steps;
};

/// Parses and validates a timeline (timeline.json); paths must stay inside
/// the fixture folder.
[[nodiscard]] Result<Timeline> parse_timeline(std::string_view json);
std::string write_timeline(const Timeline& timeline);

/// A fixture with a timeline replayed step by step: reads answer from the
/// state of the current step (the fixture itself before the first), and
/// open_events() returns a stream that delivers one step per wait(), moving
/// the state on as it does, then a quiet (empty) batch, then the next step,
/// and `ended` after the last. Every state is opened up front, so a broken
/// step fails open(), not the replay.
class TimelineSystem final : public System {
 public:
  /// `dir` is a fixture folder holding timeline.json.
  [[nodiscard]] static Result<std::unique_ptr<TimelineSystem>> open(std::string_view dir, FixtureOptions options = {});
  ~TimelineSystem() override;

  const Timeline& timeline() const noexcept;
  /// Steps delivered so far (0 before the first).
  std::size_t position() const noexcept;
  /// The state after `steps` steps (0: the fixture itself).
  const FixtureSystem& state(std::size_t steps) const;

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
  /// One stream per timeline: a second open while the first lives is refused.
  [[nodiscard]] Result<std::unique_ptr<EventStream>> open_events(const EventStreamOptions& options = {}) const override;

  struct State;

 private:
  explicit TimelineSystem(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

/// A fixture folder as a System: its TimelineSystem where it holds a
/// timeline.json (reads answer from its first state until the timeline is
/// replayed), its FixtureSystem otherwise. What every `--fixture` opens.
[[nodiscard]] Result<std::unique_ptr<System>> open_fixture_folder(std::string_view dir, FixtureOptions options = {});

}  // namespace hwaccel
