// The live System of a build with no machine to read (WebAssembly: no files,
// no processes, no kernel). Every read says so, so a detection there finds
// nothing and says why; devices come from pasted tool output instead
// (docs/web.md).
module;
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
module hwaccel.detect;

namespace hwaccel {

namespace {

constexpr std::string_view no_machine = "this build (WebAssembly) has no machine to read; paste tool output instead";

class NoMachine final : public System {
 public:
  Result<FileContent> read_file(std::string_view, std::size_t) const override { return fail(ErrorKind::unsupported, std::string(no_machine)); }
  Result<std::vector<DirEntry>> list_dir(std::string_view) const override { return fail(ErrorKind::unsupported, std::string(no_machine)); }
  Result<std::string> read_link(std::string_view) const override { return fail(ErrorKind::unsupported, std::string(no_machine)); }
  Result<FileStatus> status(std::string_view, bool) const override { return fail(ErrorKind::unsupported, std::string(no_machine)); }
  std::optional<std::string> env(std::string_view) const override { return std::nullopt; }
  std::optional<std::string> find_tool(std::string_view) const override { return std::nullopt; }
  Result<ToolResult> run(const ToolRequest&) const override { return fail(ErrorKind::unsupported, std::string(no_machine)); }
  bool runs_instantly() const noexcept override { return true; }
  bool reads_from_memory() const noexcept override { return true; }
};

}  // namespace

std::unique_ptr<System> make_live_system(LiveOptions) { return std::make_unique<NoMachine>(); }

Result<std::unique_ptr<EventStream>> open_live_events(const EventStreamOptions&) {
  return fail(ErrorKind::unsupported, std::string(no_machine));
}

}  // namespace hwaccel
