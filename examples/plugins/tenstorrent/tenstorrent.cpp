// hwaccel plugin for Tenstorrent cards (Wormhole n150/n300, Blackhole
// p100a/p150): what the tt-kmd driver shows in sysfs, and what `tt-smi -s`
// adds where sysfs is silent. Everything is read through the plugin system
// table, so a fixture replays it (fixtures/, SOURCE.md cites the formats).
//
// Facts used (tt-kmd, docs/sysfs-attributes.md; tt-smi, tt_smi/log.py):
//   /sys/module/tenstorrent/version           driver version ("2.3.0")
//   /sys/class/tenstorrent/tenstorrent!N/     one folder per /dev/tenstorrent/N
//     device -> ../../../0000:BB:DD.F         the PCI function
//     tt_card_type, tt_serial, tt_asic_id, tt_fw_bundle_ver, tt_aiclk (MHz)
//   PCI ids 1e52:401e (Wormhole), 1e52:b140 (Blackhole)
//   hwmon of the PCI function: temp1_input (m°C), power1_input and power1_max (µW)
//   tt-smi -s: {"device_info": [{"board_info": {"bus_id", "board_type",
//              "dram_status", "dram_speed"}, "telemetry": {...}}]}
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <hwaccel/plugin.h>

#include "tt_smi_snapshot.hpp"

namespace {

using tenstorrent::SnapshotBoard;

std::string trimmed(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r' || s.back() == '\t')) s.remove_suffix(1);
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return std::string(s);
}

// JSON string contents for a value read from the machine.
std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (const unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      static const char* const hex = "0123456789abcdef";
      out += "\\u00";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

class Machine {
 public:
  explicit Machine(const hwaccel_plugin_system* s) : s_(s) {}

  std::optional<std::string> text(const std::string& path) const {
    hwaccel_plugin_bytes b{};
    int truncated = 0;
    if (s_->read_file(s_->context, path.c_str(), 4096, &b, &truncated) != HWACCEL_PLUGIN_OK) return std::nullopt;
    return trimmed(std::string_view(b.data, b.size));
  }
  std::optional<std::uint64_t> number(const std::string& path, int base = 10) const {
    const auto t = text(path);
    if (!t || t->empty()) return std::nullopt;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(t->c_str(), &end, base);
    if (!end || *end) return std::nullopt;
    return v;
  }
  std::vector<std::string> list(const std::string& path) const {
    const hwaccel_plugin_dir_entry* entries = nullptr;
    std::size_t count = 0;
    std::vector<std::string> out;
    if (s_->list_dir(s_->context, path.c_str(), &entries, &count) != HWACCEL_PLUGIN_OK) return out;
    for (std::size_t i = 0; i < count; ++i) out.emplace_back(entries[i].name);
    return out;
  }
  std::optional<std::string> link(const std::string& path) const {
    hwaccel_plugin_bytes b{};
    if (s_->read_link(s_->context, path.c_str(), &b) != HWACCEL_PLUGIN_OK) return std::nullopt;
    return std::string(b.data, b.size);
  }
  bool exists(const std::string& path) const {
    hwaccel_plugin_file_status st{};
    return s_->status(s_->context, path.c_str(), 1, &st) == HWACCEL_PLUGIN_OK;
  }
  // tt-smi -s, or why there is none.
  std::optional<std::string> snapshot(std::string& why) const {
    const char* argv[] = {"tt-smi", "-s", nullptr};
    hwaccel_plugin_tool_result r{};
    const int status = s_->run(s_->context, argv, 0, &r);
    if (status != HWACCEL_PLUGIN_OK) {
      why = status == HWACCEL_PLUGIN_NOT_FOUND ? "tt-smi is not on PATH" : std::string("tt-smi -s: ") + s_->last_error(s_->context);
      return std::nullopt;
    }
    if (r.signal != 0 || r.exit_code != 0) {
      why = "tt-smi -s exited with code " + std::to_string(r.exit_code);
      return std::nullopt;
    }
    return std::string(r.out.data, r.out.size);
  }

 private:
  const hwaccel_plugin_system* s_;
};

struct Card {
  std::uint32_t minor = 0;  // N of /dev/tenstorrent/N
  std::string bus_id;
  std::optional<std::uint16_t> device_id;
  std::string card_type;
  std::map<std::string, std::string> properties;
  std::string json;  // the fields written after id and index
};

std::string_view architecture_of(std::optional<std::uint16_t> device_id, std::string_view card_type) {
  if (device_id == 0x401e || card_type.starts_with("n1") || card_type.starts_with("n3")) return "Wormhole";
  if (device_id == 0xb140 || card_type.starts_with("p")) return "Blackhole";
  if (device_id == 0xfaca) return "Grayskull";
  return {};
}

// "n300 L" (tt-smi's Wormhole suffix: the local chip) -> "n300".
std::string card_type_of_board(std::string board_type) {
  if (board_type.ends_with(" L") || board_type.ends_with(" R")) board_type.resize(board_type.size() - 2);
  return board_type;
}

std::optional<double> link_speed(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text->c_str(), &end);
  if (end == text->c_str() || v <= 0) return std::nullopt;
  return v;
}

std::string number_text(double v) {
  std::string s = std::to_string(v);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

int detect(const hwaccel_plugin_system* s) {
  const Machine m(s);
  std::vector<std::string> warnings;
  const auto warn = [&](std::string_view kind, std::string_view message) {
    warnings.push_back("{\"backend\":\"tenstorrent\",\"kind\":" + quoted(kind) + ",\"message\":" + quoted(message) + "}");
  };
  const auto driver = m.text("/sys/module/tenstorrent/version");

  std::string why_no_snapshot;
  std::vector<SnapshotBoard> boards;
  if (const auto snapshot = m.snapshot(why_no_snapshot)) {
    std::string error;
    if (!tenstorrent::parse_snapshot(*snapshot, boards, error)) warn("parse_error", "tt-smi -s: " + error);
  }
  const auto board_at = [&](const std::string& bus) -> const SnapshotBoard* {
    for (const auto& b : boards)
      if (b.bus_id == bus) return &b;
    return nullptr;
  };

  std::vector<Card> cards;
  std::vector<std::string> names = m.list("/sys/class/tenstorrent");
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  for (const auto& name : names) {
    if (!name.starts_with("tenstorrent!")) continue;
    char* end = nullptr;
    const unsigned long minor = std::strtoul(name.c_str() + 12, &end, 10);
    if (!end || *end || end == name.c_str() + 12) continue;
    const std::string dir = "/sys/class/tenstorrent/" + name;
    Card card;
    card.minor = static_cast<std::uint32_t>(minor);
    if (const auto target = m.link(dir + "/device")) card.bus_id = target->substr(target->rfind('/') + 1);
    const std::string pci = "/sys/bus/pci/devices/" + card.bus_id;
    if (!card.bus_id.empty())
      if (const auto id = m.number(pci + "/device", 16)) card.device_id = static_cast<std::uint16_t>(*id);
    card.card_type = m.text(dir + "/tt_card_type").value_or("");
    const SnapshotBoard* board = board_at(card.bus_id);
    if ((card.card_type.empty() || card.card_type == "unknown") && board) card.card_type = card_type_of_board(board->board_type);
    const std::string_view arch = architecture_of(card.device_id, card.card_type);

    std::string name_text = "Tenstorrent";
    if (!arch.empty()) name_text += " " + std::string(arch);
    if (!card.card_type.empty() && card.card_type != "unknown") name_text += " " + card.card_type;
    std::string& j = card.json;
    j += ",\"name\":" + quoted(name_text) + ",\"vendor\":\"Tenstorrent\"";
    if (const auto serial = m.text(dir + "/tt_serial")) j += ",\"uuid\":" + quoted(*serial);
    if (!card.bus_id.empty()) j += ",\"pci_bus_id\":" + quoted(card.bus_id);
    if (const auto numa = m.text(pci + "/numa_node"); numa && *numa != "-1" && !numa->empty()) j += ",\"numa_node\":" + *numa;
    if (const auto cpus = m.text(pci + "/local_cpulist")) j += ",\"cpu_affinity\":" + quoted(*cpus);
    if (driver) j += ",\"driver_version\":" + quoted(*driver);
    if (const auto fw = m.text(dir + "/tt_fw_bundle_ver")) j += ",\"firmware_version\":" + quoted(*fw);
    if (!arch.empty()) j += ",\"architecture\":" + quoted(arch);
    const auto cur_speed = link_speed(m.text(pci + "/current_link_speed"));
    const auto max_speed = link_speed(m.text(pci + "/max_link_speed"));
    const auto cur_width = m.number(pci + "/current_link_width");
    const auto max_width = m.number(pci + "/max_link_width");
    if (cur_speed || max_speed || cur_width || max_width) {
      std::string p;
      const auto add = [&](std::string_view key, const std::string& v) { p += (p.empty() ? "" : ",") + quoted(key) + ":" + v; };
      if (cur_speed) add("current_speed_gts", number_text(*cur_speed));
      if (max_speed) add("max_speed_gts", number_text(*max_speed));
      if (cur_width) add("current_width", std::to_string(*cur_width));
      if (max_width) add("max_width", std::to_string(*max_width));
      j += ",\"pcie\":{" + p + "}";
    }
    // hwmon of the PCI function: power in µW, temperature in m°C.
    for (const auto& hw : m.list(pci + "/hwmon")) {
      const std::string h = pci + "/hwmon/" + hw;
      if (const auto uw = m.number(h + "/power1_input")) j += ",\"power_watts\":" + number_text(static_cast<double>(*uw) / 1e6);
      if (const auto uw = m.number(h + "/power1_max")) j += ",\"power_limit_watts\":" + number_text(static_cast<double>(*uw) / 1e6);
      if (const auto mc = m.number(h + "/temp1_input")) j += ",\"temperature_c\":" + number_text(static_cast<double>(*mc) / 1000);
      break;
    }
    bool available = true;
    if (!m.exists("/dev/tenstorrent/" + std::to_string(card.minor))) {
      available = false;
      warn("unsupported", "/dev/tenstorrent/" + std::to_string(card.minor) + " is missing: card " + card.bus_id +
                              " cannot be opened (reload the tenstorrent module, or pass --device /dev/tenstorrent to the container)");
    }
    if (board && !board->dram_trained) {
      available = false;
      warn("unsupported", "tt-smi -s says the DRAM of " + card.bus_id + " is not trained (dram_status false): reset the card with tt-smi -r");
    }
    j += ",\"memory_kind\":\"dedicated\",\"integrated\":false,\"available\":" + std::string(available ? "true" : "false");
    j += ",\"visible\":true";
    // tt-metal computes in bfloat16, and in fp16 on Wormhole's and Blackhole's matrix units.
    card.properties["compute_types"] = "bf16,fp16";
    card.properties["device_node"] = "/dev/tenstorrent/" + std::to_string(card.minor);
    card.properties["driver"] = "tenstorrent";
    if (!card.card_type.empty()) card.properties["card_type"] = card.card_type;
    if (card.device_id) {
      char id[16];
      std::snprintf(id, sizeof id, "0x%04x", *card.device_id);
      card.properties["pci_vendor_id"] = "0x1e52";
      card.properties["pci_device_id"] = id;
    }
    if (const auto asic = m.text(dir + "/tt_asic_id")) card.properties["asic_id"] = *asic;
    if (const auto clk = m.text(dir + "/tt_aiclk")) card.properties["aiclk_mhz"] = *clk;
    if (board && !board->dram_speed.empty()) card.properties["dram_speed"] = board->dram_speed;
    if (card.card_type == "n300") card.properties["chips"] = "2";
    cards.push_back(std::move(card));
  }
  if (names.empty() && boards.empty() && !why_no_snapshot.empty() && why_no_snapshot != "tt-smi is not on PATH")
    warn("tool_failed", why_no_snapshot);
  if (!cards.empty() && boards.empty() && !why_no_snapshot.empty())
    warn("degraded", why_no_snapshot + ": DRAM training state unknown");

  std::string doc = "{\"devices\":[";
  for (std::size_t i = 0; i < cards.size(); ++i) {
    if (i) doc += ",";
    doc += "{\"id\":\"tenstorrent:" + std::to_string(i) + "\",\"backend\":\"plugin\",\"family\":\"asic\",\"index\":" +
           std::to_string(i) + cards[i].json + ",\"properties\":{";
    bool first = true;
    for (const auto& [k, v] : cards[i].properties) {
      doc += (first ? "" : ",") + quoted(k) + ":" + quoted(v);
      first = false;
    }
    doc += "}}";
  }
  doc += "],\"warnings\":[";
  for (std::size_t i = 0; i < warnings.size(); ++i) doc += (i ? "," : "") + warnings[i];
  doc += "]}";
  return s->emit(s->context, doc.data(), doc.size()) == HWACCEL_PLUGIN_OK ? 0 : 1;
}

const char* const drivers[] = {"tenstorrent", nullptr};
const char* const device_nodes[] = {"tenstorrent", nullptr};
const char* const tools[] = {"tt-smi", nullptr};
const hwaccel_plugin_pci_id pci_ids[] = {{0x1e52, 0x401e}, {0x1e52, 0xb140}};

const hwaccel_plugin_descriptor descriptor{
    HWACCEL_PLUGIN_ABI_VERSION,
    "tenstorrent",
    "1.0.0",
    "Tenstorrent Wormhole and Blackhole cards (tt-kmd sysfs, tt-smi -s)",
    "Tenstorrent",
    "asic",
    drivers,
    nullptr,
    pci_ids,
    sizeof pci_ids / sizeof pci_ids[0],
    device_nodes,
    "TT_VISIBLE_DEVICES",
    tools,
    &detect,
};

}  // namespace

extern "C" HWACCEL_PLUGIN_EXPORT const hwaccel_plugin_descriptor* hwaccel_plugin_entry(void) { return &descriptor; }
