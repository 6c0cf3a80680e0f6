// What fuzz targets share with the programs that drive them (libFuzzer's entry
// point, the seed extractor, the regression test). Standard types only, so it
// can be included before `import hwaccel;`.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace hwaccel::fuzz {

/// What a target found wrong with the library's answer to one input. Crashes,
/// leaks and undefined behaviour are the sanitizers' to find; this holds the
/// broken invariants (a round trip that differs, unsorted output, free memory
/// above total memory, ...).
class Findings {
 public:
  /// Records `what` when `ok` is false; returns `ok`.
  bool check(bool ok, std::string_view what) {
    if (!ok) violations_.emplace_back(what);
    return ok;
  }
  void add(std::string what) { violations_.push_back(std::move(what)); }
  const std::vector<std::string>& violations() const noexcept { return violations_; }

 private:
  std::vector<std::string> violations_;
};

/// A fuzz target: feeds `input` to the code under test and checks what it
/// answered. `param` comes from the target's line in tests/fuzz/meson.build
/// (the backend of a detector target, empty for most). Never throws.
using Target = void (*)(std::string_view param, std::string_view input, Findings& findings);

/// Registry JSON as `detect --no-timings` writes it for the machine that
/// `machine_text` describes, detected with the backends of `backends` ("cuda",
/// "all", "probes" for the host probes alone). Empty when `machine_text`
/// does not decode. The regression test compares it with the same fixture
/// replayed from its folder, which shows the seeds really are the machines.
std::string detect_machine_text(std::string_view machine_text, std::string_view backends);

/// One seed input and where it came from.
struct Seed {
  std::string origin;  ///< a fixture file, command or folder, for messages
  std::string bytes;
};

/// The seed inputs of a target, from its seed specifications (the fourth item
/// of its line in tests/fuzz/meson.build; docs/fuzzing.md):
///   file:GLOB      every regular file matching GLOB (relative to `source_root`;
///                  `*` matches within one path component)
///   command:ARGV   the stdout of every fixture command whose argv, joined by
///                  spaces, starts with ARGV
///   machine:GLOB   each fixture folder matching GLOB, as one machine-text input
///   reads:GLOB     each fixture folder matching GLOB, reduced to what a
///                  detection with the backends `param` reads and runs (small
///                  inputs fuzz faster); folders where it reads nothing are left out
///   text:LITERAL   LITERAL itself (for targets whose input no fixture holds)
/// With `reduce` false, reads: gives the whole machines, like machine: (the
/// reduction records each detection through a fixture folder on disk, too
/// slow for a test that runs in every build). Throws std::runtime_error on an
/// unknown kind or an unreadable fixture.
std::vector<Seed> seeds(const std::filesystem::path& source_root, const std::vector<std::string>& specs,
                        std::string_view param = {}, bool reduce = true);

/// Encodes a fixture folder as one machine-text input (docs/fuzzing.md): every
/// file, folder, link and special node of root/, the environment, the tools and
/// every captured command with its output, exit status and signal. Throws
/// std::runtime_error when the fixture does not open.
std::string pack_fixture(const std::filesystem::path& fixture_dir);

/// What a detection with `backends` (as detect_machine_text) reads and runs on
/// the fixture, recorded through a RecordingSystem and encoded as machine text.
/// Empty when the detection touches nothing but the listing of "/".
std::string pack_detection_reads(const std::filesystem::path& fixture_dir, std::string_view backends);

}  // namespace hwaccel::fuzz
