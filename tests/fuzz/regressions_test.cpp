// Runs every fuzz target on its seeds and on the inputs saved under
// tests/fuzz/regressions/<target>/ (inputs that once crashed a target or broke
// one of its invariants), in every build, sanitized or not; and checks that a
// fixture packed as machine text detects exactly like the fixture itself, so
// that the detector targets' seeds really are the machines of the fixture tree.
#include <gtest/gtest.h>

#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "../test_support.hpp"
#include "fuzz_support.hpp"
#include "fuzz_targets.inc"

import hwaccel;

#include "machine_text.hpp"

namespace {

namespace fs = std::filesystem;
using hwaccel::fuzz::Findings;
using hwaccel::fuzz::fuzz_targets;
using hwaccel::fuzz::TargetEntry;

fs::path source_root() { return hwaccel::testing::fixtures_root().parent_path(); }
fs::path regressions_root() { return source_root() / "tests" / "fuzz" / "regressions"; }

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += "\n  " + s;
  return out;
}

class FuzzTarget : public ::testing::TestWithParam<std::size_t> {
 protected:
  const TargetEntry& target() const { return fuzz_targets.at(GetParam()); }

  void expect_clean(std::string_view input, const std::string& origin) const {
    Findings findings;
    target().function(target().param, input, findings);
    EXPECT_TRUE(findings.violations().empty()) << target().name << " on " << origin << ":" << joined(findings.violations());
  }
};

TEST_P(FuzzTarget, AcceptsEverySeed) {
  const auto seeds = hwaccel::fuzz::seeds(source_root(), target().seed_specs, target().param, false);
  EXPECT_FALSE(seeds.empty()) << target().name << ": its seed specifications match nothing in the fixture tree";
  for (const auto& seed : seeds) expect_clean(seed.bytes, seed.origin);
}

TEST_P(FuzzTarget, SavedInputsStayFixed) {
  const fs::path dir = regressions_root() / target().name;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.is_regular_file()) expect_clean(hwaccel::testing::read_file(entry.path()), entry.path().string());
}

TEST_P(FuzzTarget, EmptyAndTinyInputs) {
  for (const std::string_view input : {std::string_view{}, std::string_view("\n"), std::string_view("\0", 1),
                                       std::string_view("@"), std::string_view("@run"), std::string_view("@file /\n"),
                                       std::string_view("{"), std::string_view("\xff\xfe")})
    expect_clean(input, "a tiny input");
}

std::vector<std::size_t> target_indices() {
  std::vector<std::size_t> out(fuzz_targets.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = i;
  return out;
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzTarget, ::testing::ValuesIn(target_indices()),
                         [](const ::testing::TestParamInfo<std::size_t>& info) {
                           return std::string(fuzz_targets.at(info.param).name);
                         });

TEST(FuzzRegressions, EverySavedInputFolderNamesATarget) {
  std::set<std::string, std::less<>> names;
  for (const auto& t : fuzz_targets) names.insert(t.name);
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(regressions_root(), ec))
    EXPECT_TRUE(names.contains(entry.path().filename().string()))
        << entry.path() << " is not named after a target of tests/fuzz/meson.build";
}

// What the detector targets run, on the fixture folder itself.
std::string detect_fixture(const fs::path& dir, std::string_view backends) {
  auto system = hwaccel::FixtureSystem::open(dir.string());
  if (!system) return "cannot open: " + system.error().message;
  auto builder = hwaccel::DetectBuilder::none();
  if (backends == "probes") {
    builder.system_probes(true);
  } else {
    builder.system_probes(false);
    if (!builder.select(backends)) return "bad backend list";
  }
  hwaccel::JsonOptions options;
  options.pretty = true;
  options.include_timings = false;
  return hwaccel::to_json(builder.detect(**system), options);
}

TEST(MachineText, PackedFixturesDetectLikeTheFixtures) {
  const auto fixtures = hwaccel::testing::machine_fixtures();
  ASSERT_FALSE(fixtures.empty());
  for (const auto& dir : fixtures) {
    const std::string packed = hwaccel::fuzz::pack_fixture(dir);
    for (const std::string_view backends : {"all", "probes"})
      EXPECT_EQ(hwaccel::fuzz::detect_machine_text(packed, backends), detect_fixture(dir, backends))
          << dir.filename() << " detected with " << backends;
  }
}

TEST(MachineText, RecordedReadsDetectLikeTheFixtures) {
  // The detector targets' seeds (tools/fuzz): only what a detection reads.
  for (const auto& dir : hwaccel::testing::machine_fixtures()) {
    for (const std::string_view backends : {"all", "probes"}) {
      const std::string packed = hwaccel::fuzz::pack_detection_reads(dir, backends);
      if (backends == "all") EXPECT_FALSE(packed.empty()) << dir.filename();
      EXPECT_EQ(hwaccel::fuzz::detect_machine_text(packed, backends), detect_fixture(dir, backends))
          << dir.filename() << " reduced to what a detection with " << backends << " reads";
    }
  }
}

TEST(MachineText, RecordsAndEscapes) {
  // A content line starting with '@' survives a pack; records after content,
  // files without a trailing newline and empty files keep their bytes.
  hwaccel::testing::FixtureBuilder f;
  f.file("/sys/a", "@file /etc/passwd\n@@x\n")
      .file("/sys/b", "no newline")
      .file("/sys/empty", "")
      .link("/sys/c", "a")
      .env("CUDA_VISIBLE_DEVICES", "1")
      .command({"tool", "--x"}, "out\n@run evil\n", 3, "err\n");
  const std::string packed = hwaccel::fuzz::pack_fixture(f.write());
  const auto system = hwaccel::FixtureSystem::open(f.path().string());
  ASSERT_TRUE(system);
  EXPECT_NE(packed.find("@file /sys/a\n@@file /etc/passwd\n@@@x\n\n"), std::string::npos) << packed;
  EXPECT_NE(packed.find("@file /sys/b\nno newline\n"), std::string::npos) << packed;
  EXPECT_NE(packed.find("@link /sys/c a\n"), std::string::npos) << packed;
  EXPECT_NE(packed.find("@env CUDA_VISIBLE_DEVICES=1\n"), std::string::npos) << packed;
  EXPECT_NE(packed.find("@run tool --x\nout\n@@run evil\n\n@stderr\nerr\n\n@exit 3\n"), std::string::npos) << packed;

  const auto decoded = hwaccel::fuzz::MemorySystem::decode(packed);
  EXPECT_EQ(decoded->read_file("/sys/a").value().data, "@file /etc/passwd\n@@x\n");
  EXPECT_EQ(decoded->read_file("/sys/b").value().data, "no newline");
  EXPECT_EQ(decoded->read_file("/sys/empty").value().data, "");
  EXPECT_EQ(decoded->read_file("/sys/c").value().data, "@file /etc/passwd\n@@x\n");
  EXPECT_FALSE(decoded->exists("/etc/passwd"));
  EXPECT_EQ(decoded->env("CUDA_VISIBLE_DEVICES"), "1");
  hwaccel::ToolRequest request;
  request.argv = {"tool", "--x"};
  const auto run = decoded->run(request);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->out, "out\n@run evil\n");
  EXPECT_EQ(run->err, "err\n");
  EXPECT_EQ(run->exit_code, 3);
  request.argv = {"evil"};
  EXPECT_EQ(decoded->run(request).error().kind, hwaccel::ErrorKind::tool_not_found);
}

TEST(MachineText, LinksResolveLikeTheKernel) {
  const auto system = hwaccel::fuzz::MemorySystem::decode(
      "@file /sys/devices/pci0000:00/0000:00:01.0/vendor\n0x10de\n"
      "@link /sys/bus/pci/devices/0000:00:01.0 ../../../devices/pci0000:00/0000:00:01.0\n"
      "@link /loop1 loop2\n@link /loop2 loop1\n@link /up ../../../sys\n@node /fifo fifo\n");
  EXPECT_EQ(system->read_file("/sys/bus/pci/devices/0000:00:01.0/vendor").value().data, "0x10de");
  EXPECT_EQ(system->read_file("/up/devices/pci0000:00/0000:00:01.0/vendor").value().data, "0x10de");
  EXPECT_EQ(system->read_file("/loop1").error().kind, hwaccel::ErrorKind::symlink_loop);
  EXPECT_EQ(system->read_file("/fifo").error().kind, hwaccel::ErrorKind::not_regular_file);
  EXPECT_EQ(system->read_file("/sys/bus/pci/devices/0000:00:01.0/vendor/x").error().kind, hwaccel::ErrorKind::not_found);
  const auto listing = system->list_dir("/");
  ASSERT_TRUE(listing);
  std::vector<std::string> names;
  for (const auto& e : *listing) names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{"fifo", "loop1", "loop2", "sys", "up"}));
}

TEST(MachineText, PreambleIsEveryToolsOutput) {
  const auto system = hwaccel::fuzz::MemorySystem::decode("GPU 0: NVIDIA H100 (UUID: GPU-1)\n");
  ASSERT_TRUE(system->find_tool("nvidia-smi"));
  hwaccel::ToolRequest request;
  request.argv = {"nvidia-smi", "-L"};
  EXPECT_EQ(system->run(request).value().out, "GPU 0: NVIDIA H100 (UUID: GPU-1)\n");
}

}  // namespace
