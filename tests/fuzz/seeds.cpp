// Seed inputs of the fuzz targets, taken from the fixture tree (never stored
// twice in the repository): files, captured command outputs, whole machines.
#include <glob.h>

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.hpp"

import hwaccel;

namespace hwaccel::fuzz {

namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::vector<fs::path> glob_paths(const fs::path& root, std::string_view pattern) {
  const std::string full = (root / std::string(pattern)).string();
  glob_t matches{};
  std::vector<fs::path> out;
  if (::glob(full.c_str(), 0, nullptr, &matches) == 0)
    for (std::size_t i = 0; i < matches.gl_pathc; ++i) out.emplace_back(matches.gl_pathv[i]);
  ::globfree(&matches);
  return out;  // glob sorts
}

// "\n", "\t" and "\0" in a text: seed stand for a newline, a tab and a NUL
// (meson strings cannot hold raw ones comfortably; uevents are NUL-separated).
std::string unescape(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && (s[i + 1] == 'n' || s[i + 1] == 't' || s[i + 1] == '0')) {
      out += s[i + 1] == 'n' ? '\n' : s[i + 1] == 't' ? '\t' : '\0';
      ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

void command_seeds(const fs::path& source_root, std::string_view argv_prefix, std::vector<Seed>& out) {
  for (const auto& dir : glob_paths(source_root, "fixtures/machines/*")) {
    if (!fs::exists(dir / "fixture.json")) continue;
    const auto manifest = parse_fixture_manifest(slurp(dir / "fixture.json"));
    if (!manifest) throw std::runtime_error((dir / "fixture.json").string() + ": " + manifest.error().message);
    for (const auto& command : manifest->commands) {
      std::string argv;
      for (const auto& a : command.argv) argv += (argv.empty() ? "" : " ") + a;
      if (!argv.starts_with(argv_prefix)) continue;
      const fs::path output = dir / "commands" / command.stdout_path;
      if (fs::is_regular_file(output)) out.push_back(Seed{output.string(), slurp(output)});
    }
  }
}

}  // namespace

std::vector<Seed> seeds(const fs::path& source_root, const std::vector<std::string>& specs, std::string_view param,
                        bool reduce) {
  std::vector<Seed> out;
  for (const std::string_view spec : specs) {
    const std::size_t colon = spec.find(':');
    const std::string_view kind = spec.substr(0, colon);
    const std::string_view value = colon == std::string_view::npos ? std::string_view{} : spec.substr(colon + 1);
    if (kind == "file") {
      for (const auto& path : glob_paths(source_root, value))
        if (fs::is_regular_file(path)) out.push_back(Seed{path.string(), slurp(path)});
    } else if (kind == "command") {
      command_seeds(source_root, value, out);
    } else if (kind == "machine" || (kind == "reads" && !reduce)) {
      for (const auto& dir : glob_paths(source_root, value))
        if (fs::exists(dir / "fixture.json")) out.push_back(Seed{dir.string(), pack_fixture(dir)});
    } else if (kind == "reads") {
      for (const auto& dir : glob_paths(source_root, value)) {
        if (!fs::exists(dir / "fixture.json")) continue;
        if (std::string packed = pack_detection_reads(dir, param); !packed.empty())
          out.push_back(Seed{dir.string(), std::move(packed)});
      }
    } else if (kind == "text") {
      out.push_back(Seed{std::string(spec), unescape(value)});
    } else {
      throw std::runtime_error("unknown seed specification \"" + std::string(spec) +
                               "\" (file:, command:, machine:, reads: or text:)");
    }
  }
  return out;
}

}  // namespace hwaccel::fuzz
