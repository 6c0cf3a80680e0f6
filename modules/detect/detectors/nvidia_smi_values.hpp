// What the readers of nvidia-smi's outputs share (the CSV query, `-q` text
// and `-q -x` XML carry the same facts): limits, placeholder-free flags, PCI
// ids and the checked value reader. Included by cuda_parsers.cpp,
// cuda_xml.cpp and cuda_topology.cpp right after `module hwaccel.detect;`;
// the headers it needs (<optional>, <string>, <string_view>, <vector>) come
// from their global module fragments. Functions are inline: several units of
// the module include it.
#pragma once

namespace hwaccel::parsers::nvidia_smi {

// Enough for any machine (nvidia-smi handles at most a few dozen GPUs); a
// bigger output is garbage and is not parsed further.
inline constexpr std::size_t max_lines = 4096;
inline constexpr std::size_t max_gpus = 1024;
// A GPU runs a few hundred contexts at most (MPS allows 48 clients per GPU).
inline constexpr std::size_t max_processes = 4096;
// Hostile output must not turn into thousands of warnings.
inline constexpr std::size_t max_problems = 8;

inline void add_problem(std::vector<ParseProblem>& problems, WarningKind kind, std::string message) {
  if (problems.size() < max_problems) problems.push_back(ParseProblem{kind, std::move(message)});
  else if (problems.size() == max_problems)
    problems.push_back(ParseProblem{kind, "further problems of this output are not listed"});
}

inline bool is_enabled(std::string_view v) noexcept { return text::iequals(v, "Enabled") || text::iequals(v, "On"); }
inline bool is_disabled(std::string_view v) noexcept { return text::iequals(v, "Disabled") || text::iequals(v, "Off"); }

inline std::optional<bool> enabled_flag(std::optional<std::string_view> v) noexcept {
  if (!v) return std::nullopt;
  if (is_enabled(*v)) return true;
  if (is_disabled(*v)) return false;
  return std::nullopt;
}

// Accumulates typed values for one GPU, recording what had to be discarded.
class ValueReader {
 public:
  inline ValueReader(std::vector<ParseProblem>& problems, std::string who) : problems_(problems), who_(std::move(who)) {}

  // A number with an optional unit ("69.85 W", "41", "0 %"); `unit` is the
  // header's unit, used when the value has none (`nounits`).
  inline std::optional<double> number(std::string_view field, std::optional<std::string_view> value, double lo,
                                      double hi, std::string_view expected_unit = {}) {
    if (!value) return std::nullopt;
    const auto n = text::parse_number_with_unit(*value);
    const bool unit_ok = !n || n->unit.empty() || expected_unit.empty() || text::iequals(n->unit, expected_unit);
    if (!n || !unit_ok || !(n->value >= lo && n->value <= hi)) {
      bad(field, *value);
      return std::nullopt;
    }
    return n->value;
  }

  inline std::optional<std::uint32_t> integer(std::string_view field, std::optional<std::string_view> value,
                                              std::uint32_t lo, std::uint32_t hi) {
    if (!value) return std::nullopt;
    std::string_view v = *value;
    if (v.ends_with('x')) v.remove_suffix(1);  // "-q" link widths: "16x"
    const auto n = text::parse_u64(v);
    if (!n || *n < lo || *n > hi) {
      bad(field, *value);
      return std::nullopt;
    }
    return static_cast<std::uint32_t>(*n);
  }

  // "81559 MiB", or "81559" with the unit from the header.
  inline std::optional<std::uint64_t> memory(std::string_view field, std::optional<std::string_view> value,
                                             std::string_view header_unit) {
    if (!value) return std::nullopt;
    const auto n = text::parse_number_with_unit(*value);
    auto bytes = n ? text::memory_size(*n) : std::nullopt;
    if (bytes && n->unit.empty()) {
      // A bare number: nvidia-smi's unit is MiB unless the header says otherwise.
      const auto scale = text::memory_unit_bytes(header_unit.empty() ? "MiB" : text::trim(header_unit));
      bytes = scale ? text::checked_mul(*bytes, *scale) : std::nullopt;
    }
    constexpr std::uint64_t max_plausible = std::uint64_t{16} << 40;  // 16 TiB
    if (!bytes || *bytes > max_plausible) {
      bad(field, *value);
      return std::nullopt;
    }
    return bytes;
  }

  inline void bad(std::string_view field, std::string_view value) {
    add_problem(problems_, WarningKind::invalid_value,
                text::cat(who_, ": ", field, " value \"", text::excerpt(value, 60), "\" is not plausible; ignored"));
  }

 private:
  std::vector<ParseProblem>& problems_;
  std::string who_;
};

// pci.device_id "0x233010DE": device id in the high half, vendor in the low.
inline std::optional<std::uint16_t> device_id_of(std::optional<std::string_view> v) noexcept {
  if (!v) return std::nullopt;
  const auto id = text::parse_hex(*v);
  if (!id || *id > 0xffffffffULL || (*id & 0xffff) != 0x10de) return std::nullopt;
  return static_cast<std::uint16_t>(*id >> 16);
}



}  // namespace hwaccel::parsers::nvidia_smi
