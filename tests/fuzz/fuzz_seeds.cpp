// Writes the seed corpus of a fuzz target (tools/fuzz runs it):
//   fuzz-seeds --list                      the target names, one per line
//   fuzz-seeds SOURCE_ROOT TARGET OUT_DIR  the target's seeds, one file each
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.hpp"
#include "fuzz_targets.inc"

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  using hwaccel::fuzz::fuzz_targets;
  if (argc == 2 && std::string_view(argv[1]) == "--list") {
    for (const auto& t : fuzz_targets) std::printf("%s\n", t.name);
    return 0;
  }
  if (argc != 4) {
    std::fprintf(stderr, "usage: fuzz-seeds --list | fuzz-seeds SOURCE_ROOT TARGET OUT_DIR\n");
    return 2;
  }
  for (const auto& t : fuzz_targets) {
    if (t.name != std::string_view(argv[2])) continue;
    try {
      const fs::path out_dir = argv[3];
      fs::create_directories(out_dir);
      std::size_t n = 0;
      for (const auto& seed : hwaccel::fuzz::seeds(argv[1], t.seed_specs, t.param)) {
        std::ofstream out(out_dir / ("seed-" + std::to_string(n++) + "-" + std::to_string(std::hash<std::string>{}(seed.bytes))),
                          std::ios::binary);
        out.write(seed.bytes.data(), static_cast<std::streamsize>(seed.bytes.size()));
      }
      std::printf("%zu\n", n);
      return 0;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "fuzz-seeds: %s\n", e.what());
      return 1;
    }
  }
  std::fprintf(stderr, "fuzz-seeds: no fuzz target named %s\n", argv[2]);
  return 2;
}
