// The tt-smi -s reader on the fixtures' snapshot and on what it must refuse.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../tt_smi_snapshot.hpp"

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAIL", what);
  if (!ok) ++failures;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  std::ifstream in(std::string(argv[1]) + "/n300-and-p150a/commands/tt-smi-s.out");
  std::stringstream text;
  text << in.rdbuf();
  std::vector<tenstorrent::SnapshotBoard> boards;
  std::string error;
  check(tenstorrent::parse_snapshot(text.str(), boards, error), "the fixture's snapshot reads");
  check(boards.size() == 3, "three chips: the n300's two and the p150a");
  check(boards.size() == 3 && boards[0].bus_id == "0000:01:00.0" && boards[0].board_type == "n300 L", "the n300's local chip");
  check(boards.size() == 3 && boards[1].bus_id == "N/A" && boards[1].board_type == "n300 R", "the n300's remote chip");
  check(boards.size() == 3 && boards[2].dram_speed == "16G" && boards[2].dram_trained, "the p150a's DRAM");
  check(tenstorrent::parse_snapshot("Gathering Information ━━ 100%\n" + text.str(), boards, error),
        "a progress line before the JSON is skipped");
  for (const char* bad : {"", "{", "{\"device_info\": [", "[]", "{\"device_info\": 3}", "{\"x\": 1}",
                          "{\"device_info\": [{\"board_info\": {\"bus_id\": \"0000:01:00.0\"}}], }"}) {
    check(!tenstorrent::parse_snapshot(bad, boards, error) && boards.empty(), bad);
  }
  std::string deep = "{\"device_info\": [";
  for (int i = 0; i < 200; ++i) deep += "[";
  check(!tenstorrent::parse_snapshot(deep, boards, error), "nesting beyond 64 is refused");
  return failures == 0 ? 0 : 1;
}
