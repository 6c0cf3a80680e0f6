// Reads what this plugin needs of `tt-smi -s` (tt_smi/log.py's snapshot):
// each device_info entry's board_info. A small JSON reader of its own, since a
// plugin links nothing but the C library; it refuses anything it cannot read
// instead of guessing.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tenstorrent {

/// One board_info of the snapshot.
struct SnapshotBoard {
  std::string bus_id;      ///< "0000:01:00.0"; "N/A" for a chip reached over another (n300's R chip)
  std::string board_type;  ///< "n150 L", "p150a", "tt-galaxy-wh L"
  std::string board_id;
  std::string dram_speed;  ///< "12G"
  bool dram_trained = true;  ///< dram_status
};

/// The boards of a snapshot's device_info, in its order; false (with
/// `error` set) when the text holds no JSON object with a device_info list.
/// The progress line tt-smi may print first ("Gathering Information ...")
/// is skipped: the document starts at the first '{'.
bool parse_snapshot(std::string_view text, std::vector<SnapshotBoard>& boards, std::string& error);

}  // namespace tenstorrent
