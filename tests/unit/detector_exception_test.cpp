// A detector that throws (here: its System throws while it reads) must not
// take the caller down: the orchestrator drops that detector's findings with a
// warning and keeps every other backend's.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "../test_support.hpp"

import hwaccel;

namespace {

using namespace hwaccel;

// Throws from every read below `poisoned`; forwards everything else.
class ThrowingSystem final : public System {
 public:
  ThrowingSystem(const System& inner, std::string poisoned) : inner_(inner), poisoned_(std::move(poisoned)) {}

  Result<FileContent> read_file(std::string_view path, std::size_t max_bytes) const override {
    check(path);
    return inner_.read_file(path, max_bytes);
  }
  Result<std::vector<DirEntry>> list_dir(std::string_view path) const override {
    check(path);
    return inner_.list_dir(path);
  }
  Result<std::string> read_link(std::string_view path) const override { return inner_.read_link(path); }
  Result<FileStatus> status(std::string_view path, bool follow) const override { return inner_.status(path, follow); }
  std::optional<std::string> env(std::string_view name) const override { return inner_.env(name); }
  std::optional<std::string> find_tool(std::string_view name) const override { return inner_.find_tool(name); }
  Result<ToolResult> run(const ToolRequest& request) const override { return inner_.run(request); }
  bool runs_instantly() const noexcept override { return true; }
  bool reads_from_memory() const noexcept override { return true; }

 private:
  void check(std::string_view path) const {
    if (path.starts_with(poisoned_)) throw std::runtime_error("injected failure reading " + std::string(path));
  }
  const System& inner_;
  std::string poisoned_;
};

TEST(DetectorException, OneDetectorThrowingLeavesTheOthersAndAWarning) {
  auto fixture = FixtureSystem::open((hwaccel::testing::fixtures_root() / "machines" / "amd-8x-mi300x-xgmi").string());
  ASSERT_TRUE(fixture) << fixture.error().message;
  const auto intact = DetectBuilder{}.detect(**fixture);
  ASSERT_FALSE(intact.devices().empty());

  const ThrowingSystem throwing(**fixture, "/sys/class/kfd");
  const auto r = DetectBuilder{}.detect(throwing);
  std::size_t rocm_devices = 0, cpu_devices = 0;
  for (const auto& d : r.devices()) {
    rocm_devices += d.backend == Backend::rocm;
    cpu_devices += d.backend == Backend::cpu;
  }
  EXPECT_EQ(rocm_devices, 0u);
  EXPECT_EQ(cpu_devices, 1u);
  bool warned = false;
  for (const auto& w : r.warnings())
    if (w.backend == "rocm" && w.message.find("stopped on an internal error") != std::string::npos &&
        w.message.find("injected failure reading /sys/class/kfd") != std::string::npos)
      warned = true;
  EXPECT_TRUE(warned);
}

}  // namespace
