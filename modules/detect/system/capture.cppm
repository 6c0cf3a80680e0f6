// Fixtures made from a machine: recording a live detection, importing pasted tool outputs.
module;
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
export module hwaccel.detect:capture;
import hwaccel.hardware;
import :system;

export namespace hwaccel {

/// Tool outputs and files pasted from a machine, before they become a fixture.
struct ImportedCapture {
  std::string machine;
  std::string source;
  std::map<std::string, std::string, std::less<>> env;
  struct Command {
    std::vector<std::string> argv;  ///< argv[0] a bare tool name
    std::string out;
    std::optional<std::string> err;
    int exit = 0;
  };
  std::vector<Command> commands;  ///< each argv once: a repeat keeps the first output
  struct FileCopy {
    std::string machine_path;  ///< where it lived: "/sys/class/drm/card0"
    std::string from;          ///< where it is now, a file or a folder
  };
  std::vector<FileCopy> copies;
  std::map<std::string, std::string> contents;  ///< machine path -> text (`cat FILE` in a transcript)
  std::vector<std::string> notes;               ///< what was left out, and why
  /// A pasted `nvidia-smi --query-gpu` CSV without its command line answers
  /// any GPU query (its columns are found by name); with its command line,
  /// only that command, as in a fixture.
  bool any_gpu_query = false;
};

/// Reads a terminal transcript: each command on a line of its own starting
/// with "$ ", followed by what it printed. Pipelines and redirections are left
/// out with a note (their output is not one tool's); `sudo` is dropped;
/// `cat /absolute/file` becomes that file. `path` names the transcript in
/// messages. parse_error when no line is a command.
[[nodiscard]] Result<ImportedCapture> parse_capture_transcript(std::string_view text, std::string_view path);

/// The machine that pasted outputs describe, read in memory: what
/// import_capture would write as a fixture folder, replayed without the folder
/// (the WebAssembly build has none). A command runs when its argv was pasted
/// (and any GPU query with `any_gpu_query`); every other command answers
/// "not captured", every other file "no such file". The pasted files' folders
/// exist; there are no links or device nodes.
[[nodiscard]] std::unique_ptr<System> make_pasted_system(ImportedCapture capture);

/// Pasted text as a capture: a terminal transcript ("$ command" lines:
/// parse_capture_transcript), or one tool's output alone, recognised by its
/// shape: nvidia-smi's default table, `-L`, `--query-gpu` CSV, `-q` and
/// `-q -x`; rocm-smi (its table, `--showproductname`, `--json`); rocminfo;
/// `system_profiler SPDisplaysDataType -json`; xpu-smi (its table and
/// `discovery`); hl-smi; neuron-ls; vulkaninfo (full and `--summary`).
/// parse_error naming what it looked for when the text is none of these.
[[nodiscard]] Result<ImportedCapture> capture_from_paste(std::string_view text);

/// What import_capture wrote.
struct ImportSummary {
  std::size_t commands = 0;
  std::size_t files = 0;
  std::vector<std::string> notes;
};

/// Turns pasted tool outputs into a fixture folder at `out_dir` (which must
/// not exist, or be empty) that `FixtureSystem` replays. `source` is an import
/// manifest (a JSON file, or a folder holding import.json: docs/fixtures.md)
/// or a terminal transcript (parse_capture_transcript). `machine`, when not
/// empty, describes the machine in fixture.json. Only what was pasted is in
/// the fixture: every other command answers "not captured".
[[nodiscard]] Result<ImportSummary> import_capture(std::string_view source, std::string_view out_dir, std::string_view machine = {});

/// Wraps another System and records everything read and run through it, so
/// that the same detection can be replayed later from a fixture folder.
class RecordingSystem final : public System {
 public:
  explicit RecordingSystem(const System& inner);
  ~RecordingSystem() override;

  [[nodiscard]] Result<FileContent> read_file(std::string_view path, std::size_t max_bytes = default_read_cap) const override;
  [[nodiscard]] Result<std::vector<DirEntry>> list_dir(std::string_view path) const override;
  [[nodiscard]] Result<std::string> read_link(std::string_view path) const override;
  [[nodiscard]] Result<FileStatus> status(std::string_view path, bool follow_symlinks = true) const override;
  std::optional<std::string> env(std::string_view name) const override;
  ProcessIdentity identity() const override { return inner_.identity(); }
  std::optional<std::string> find_tool(std::string_view name) const override;
  [[nodiscard]] Result<ToolResult> run(const ToolRequest& request) const override;

  /// Writes the fixture folder (fixture.json, root/, commands/) to `dir`,
  /// which must not exist yet or be empty.
  [[nodiscard]] Result<void> write(std::string_view dir, std::string_view machine, std::string_view source) const;

  struct State;

 private:
  const System& inner_;
  std::unique_ptr<State> state_;
};

}  // namespace hwaccel
