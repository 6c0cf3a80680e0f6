// Test helpers for kernel events and fixture timelines, shared by the watch,
// uevent and timeline tests: a uevent message as the kernel sends it, and a
// timeline built step by step over a copy of a fixture machine.
// Include after `import hwaccel;`.
#pragma once

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../test_support.hpp"

namespace hwaccel::testing {

namespace fs = std::filesystem;

inline std::string uevent_message(std::string_view action, std::string_view devpath,
                                  std::vector<std::pair<std::string, std::string>> vars) {
  Uevent e{std::string(action), std::string(devpath), {}};
  e.variables.emplace_back("ACTION", std::string(action));
  e.variables.emplace_back("DEVPATH", std::string(devpath));
  for (auto& v : vars) e.variables.push_back(std::move(v));
  return format_uevent(e);
}

inline std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_text(const fs::path& p, std::string_view content) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << content;
}

// A fixture timeline built in a temporary folder: a copy of a machine of
// fixtures/machines, then steps whose states are overlays on it.
class TimelineBuilder {
 public:
  explicit TimelineBuilder(const std::string& machine) {
    fs::copy(fixtures_root() / "machines" / machine, dir_.path(), fs::copy_options::recursive |
                                                                               fs::copy_options::copy_symlinks);
    fs::remove(dir_.path() / "expected.json");
  }

  const fs::path& path() const { return dir_.path(); }
  std::string command_output(const std::string& file) const { return read_text(dir_.path() / "commands" / file); }

  struct Step {
    std::string name{};
    std::vector<KernelEvent> events{};
    bool rescan = false;
    std::map<std::string, std::string> files{};     // machine path -> content
    std::map<std::string, std::string> commands{};  // commands/ file -> new output (others as the base's)
    std::vector<std::string> removed{};
  };

  // Command outputs changed by a step stay changed in later ones.
  TimelineBuilder& step(Step s) {
    TimelineStep t;
    t.name = s.name;
    t.events = s.events;
    t.rescan = s.rescan;
    t.removed = s.removed;
    if (!s.files.empty() || !s.commands.empty()) {
      const std::string folder = "steps/" + std::to_string(timeline_.steps.size() + 1);
      const fs::path state = dir_.path() / folder;
      for (const auto& [path, content] : s.files) write_text(state / "root" / path.substr(1), content);
      if (!s.commands.empty()) {
        for (const auto& [file, content] : s.commands) current_commands_[file] = content;
        fs::create_directories(state / "commands");
        fs::copy(dir_.path() / "fixture.json", state / "fixture.json");
        for (const auto& entry : fs::directory_iterator(dir_.path() / "commands"))
          fs::copy(entry.path(), state / "commands" / entry.path().filename());
        for (const auto& [file, content] : current_commands_) write_text(state / "commands" / file, content);
      }
      t.state = folder;
    }
    timeline_.steps.push_back(std::move(t));
    return *this;
  }

  std::string write() {
    write_text(dir_.path() / "timeline.json", write_timeline(timeline_));
    return dir_.str();
  }

 private:
  TempDir dir_;
  Timeline timeline_;
  std::map<std::string, std::string> current_commands_;
};

}  // namespace hwaccel::testing
