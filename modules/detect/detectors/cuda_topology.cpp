// Readers of nvidia-smi's topology outputs: the `topo -m` link matrix and
// `nvlink -s` link states.
module;
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.detectors;

#include "nvidia_smi_values.hpp"

namespace hwaccel::parsers {
using nvidia_smi::add_problem;
using nvidia_smi::max_lines;

namespace {

constexpr std::size_t max_columns = 1024;

// nvidia-smi underlines the header with SGR codes ("\x1b[4m" ... "\x1b[0m")
// even when stdout is a file: drop every CSI sequence.
std::string strip_ansi(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '\x1b' && i + 1 < in.size() && in[i + 1] == '[') {
      std::size_t j = i + 2;
      while (j < in.size() && ((in[j] >= '0' && in[j] <= '9') || in[j] == ';' || in[j] == '?')) ++j;
      i = j;  // skips the final byte too
      continue;
    }
    out.push_back(in[i]);
  }
  return out;
}

// A token of a matrix line and the display column it starts at, with TABs
// expanded to 8-column stops (what a terminal shows, and what pasted copies hold).
struct Token {
  std::string_view text;
  std::size_t column = 0;
};

// TAB-separated cells (empty cells kept), as nvidia-smi prints them.
std::vector<Token> tab_cells(std::string_view line) {
  std::vector<Token> cells;
  cells.reserve(static_cast<std::size_t>(std::count(line.begin(), line.end(), '\t')) + 1);
  std::size_t column = 0;
  std::size_t start = 0, start_column = 0;
  for (std::size_t i = 0; i <= line.size(); ++i) {
    if (i == line.size() || line[i] == '\t') {
      const std::string_view raw = line.substr(start, i - start);
      const std::string_view trimmed = text::trim(raw);
      const std::size_t lead = trimmed.empty() ? 0 : static_cast<std::size_t>(trimmed.data() - raw.data());
      cells.push_back(Token{trimmed, start_column + lead});
      if (i < line.size()) column = (column / 8 + 1) * 8;
      start = i + 1;
      start_column = column;
    } else {
      ++column;
    }
  }
  return cells;
}

// Blank-separated words of a space-aligned copy.
std::vector<Token> words_with_columns(std::string_view line) {
  std::vector<Token> out;
  std::size_t column = 0, i = 0;
  while (i < line.size()) {
    if (line[i] == ' ' || line[i] == '\t' || line[i] == '\r') {
      column = line[i] == '\t' ? (column / 8 + 1) * 8 : column + 1;
      ++i;
      continue;
    }
    const std::size_t start = i, start_column = column;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') {
      ++i;
      ++column;
    }
    out.push_back(Token{line.substr(start, i - start), start_column});
  }
  return out;
}

constexpr std::array<std::string_view, 3> affinity_labels = {"CPU Affinity", "NUMA Affinity", "GPU NUMA ID"};

bool is_affinity_label(std::string_view s) noexcept {
  return std::find(affinity_labels.begin(), affinity_labels.end(), s) != affinity_labels.end();
}

// Header words with the multi-word labels joined back ("CPU" "Affinity").
std::vector<std::pair<std::string, std::size_t>> header_labels(std::string_view line) {
  const auto words = words_with_columns(line);
  std::vector<std::pair<std::string, std::size_t>> labels;
  for (std::size_t i = 0; i < words.size(); ++i) {
    bool joined = false;
    for (std::string_view label : affinity_labels) {
      // The label's words, one at a time, against the header's from i.
      std::string_view rest = label;
      std::size_t count = 0;
      bool match = true;
      while (match && !rest.empty()) {
        match = i + count < words.size() && words[i + count].text == text::next_token(rest, ' ');
        ++count;
      }
      if (match) {
        labels.emplace_back(std::string(label), words[i].column);
        i += count - 1;
        joined = true;
        break;
      }
    }
    if (!joined) labels.emplace_back(std::string(words[i].text), words[i].column);
  }
  return labels;
}

bool is_gpu_label(std::string_view s) noexcept {
  return s.size() > 3 && s.starts_with("GPU") && text::parse_u64(s.substr(3)).has_value();
}

std::optional<NvidiaTopologyCell> parse_cell(std::string_view code, std::vector<ParseProblem>& problems,
                                             std::string_view row, std::string_view column) {
  if (code == "X") return std::nullopt;
  if (code.starts_with("NV")) {
    const auto n = text::parse_u64(code.substr(2));
    if (n && *n > 0 && *n <= 1024) return NvidiaTopologyCell{LinkKind::nvlink, static_cast<std::uint32_t>(*n)};
  }
  if (code == "PIX" || code == "PXB") return NvidiaTopologyCell{LinkKind::pcie_switch, std::nullopt};
  if (code == "PHB") return NvidiaTopologyCell{LinkKind::host_bridge, std::nullopt};
  if (code == "NODE") return NvidiaTopologyCell{LinkKind::numa_node, std::nullopt};
  // Drivers before R384 said SOC for what is now SYS.
  if (code == "SYS" || code == "SOC") return NvidiaTopologyCell{LinkKind::system, std::nullopt};
  add_problem(problems, WarningKind::parse_error,
              text::cat("unknown connection code \"", text::excerpt(code, 20), "\" between ", row, " and ", column));
  return std::nullopt;
}

}  // namespace

Result<NvidiaTopology> parse_topology_matrix(std::string_view raw) {
  const std::string clean = strip_ansi(raw);
  std::string_view rest = clean;
  NvidiaTopology topo;
  std::vector<std::pair<std::string, std::size_t>> affinity_columns;  // (label, display column)
  bool in_matrix = false, in_nic_legend = false;
  std::size_t line_no = 0;

  while (!rest.empty() && ++line_no <= max_lines) {
    const std::string_view line = text::next_line(rest);
    const std::string_view trimmed = text::trim(line);
    if (!in_matrix && topo.columns.empty()) {
      // The header is indented (its first cell is empty) and names GPU0...
      if (trimmed.empty() || !(line.front() == ' ' || line.front() == '\t')) continue;
      auto labels = header_labels(line);
      if (labels.empty() || !is_gpu_label(labels.front().first)) continue;
      for (auto& [label, column] : labels) {
        if (is_affinity_label(label)) affinity_columns.emplace_back(label, column);
        else if (topo.columns.size() < max_columns) topo.columns.push_back(label);
      }
      in_matrix = true;
      continue;
    }
    if (in_matrix) {
      if (trimmed.empty() || trimmed.starts_with("Legend")) {
        in_matrix = false;
        continue;
      }
      const bool tabs = line.find('\t') != std::string_view::npos;
      std::vector<Token> cells = tabs ? tab_cells(line) : words_with_columns(line);
      if (cells.empty() || cells.front().text.empty()) continue;
      NvidiaTopologyRow row;
      row.label = std::string(cells.front().text);
      const std::size_t n = topo.columns.size();
      std::size_t next = 1;
      for (std::size_t c = 0; c < n; ++c, ++next) {
        if (next >= cells.size()) {
          row.cells.emplace_back();
          continue;
        }
        row.cells.push_back(parse_cell(cells[next].text, topo.problems, row.label, topo.columns[c]));
      }
      // Affinity values: nvidia-smi pads them with a varying number of TABs,
      // so in-order assignment is used when every column has a value, and the
      // header's columns decide otherwise.
      std::vector<Token> values;
      for (std::size_t i = next; i < cells.size(); ++i)
        if (!cells[i].text.empty()) values.push_back(cells[i]);
      std::vector<std::optional<std::string_view>> assigned(affinity_columns.size());
      if (values.size() == affinity_columns.size()) {
        for (std::size_t i = 0; i < values.size(); ++i) assigned[i] = values[i].text;
      } else {
        for (const Token& v : values) {
          std::size_t best = 0;
          for (std::size_t a = 0; a < affinity_columns.size(); ++a)
            if (affinity_columns[a].second <= v.column + 1) best = a;
          if (best < assigned.size() && !assigned[best]) assigned[best] = v.text;
        }
      }
      for (std::size_t a = 0; a < affinity_columns.size(); ++a) {
        if (!assigned[a]) continue;
        const auto value = nvidia_smi_value(*assigned[a]);
        if (!value) continue;
        const std::string_view label = affinity_columns[a].first;
        if (label == "CPU Affinity") row.cpu_affinity = std::string(*value);
        else if (label == "NUMA Affinity") row.numa_affinity = std::string(*value);
        else row.gpu_numa_id = std::string(*value);
      }
      topo.rows.push_back(std::move(row));
      continue;
    }
    if (trimmed.starts_with("NIC Legend")) {
      in_nic_legend = true;
      continue;
    }
    if (in_nic_legend && trimmed.starts_with("NIC")) {
      // "  NIC0: mlx5_0"
      const auto colon = trimmed.find(':');
      if (colon != std::string_view::npos && topo.nic_names.size() < max_columns)
        topo.nic_names.emplace(std::string(trimmed.substr(0, colon)), std::string(text::trim(trimmed.substr(colon + 1))));
    }
  }
  if (topo.columns.empty())
    return fail(ErrorKind::parse_error, text::cat("output has no GPU matrix header (it starts with \"",
                                                  text::excerpt(text::trim(raw), 60), "\")"));
  return topo;
}

std::vector<NvidiaNvlinkStatus> parse_nvlink_status(std::string_view text) {
  std::vector<NvidiaNvlinkStatus> gpus;
  std::size_t lines = 0;
  while (!text.empty() && ++lines <= 64 * max_lines) {
    const std::string_view line = text::trim(text::next_line(text));
    if (line.starts_with("GPU ")) {
      // "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-ff8a40d4-...)"
      const std::string_view rest = line.substr(4);
      const auto colon = rest.find(':');
      const auto index = colon == std::string_view::npos ? std::nullopt : text::parse_u64(rest.substr(0, colon));
      if (!index || *index > 1024 || gpus.size() >= 1024) continue;
      NvidiaNvlinkStatus s;
      s.gpu_index = static_cast<std::uint32_t>(*index);
      if (const auto u = line.rfind("(UUID: "); u != std::string_view::npos && line.back() == ')')
        s.uuid = std::string(text::trim(line.substr(u + 7, line.size() - u - 8)));
      gpus.push_back(std::move(s));
      continue;
    }
    if (gpus.empty()) continue;
    NvidiaNvlinkStatus& s = gpus.back();
    if (line.starts_with("Link ")) {
      // "Link 0: 26.562 GB/s", "Link 3: <inactive>"
      const auto colon = line.find(':');
      if (colon == std::string_view::npos || s.active_links + s.inactive_links >= 256) continue;
      const std::string_view value = text::trim(line.substr(colon + 1));
      if (text::icontains(value, "inactive")) {
        ++s.inactive_links;
        continue;
      }
      const auto n = text::parse_number_with_unit(value);
      if (!n || n->unit != "GB/s" || !(n->value > 0 && n->value < 10000)) continue;
      ++s.active_links;
      s.total_gbps += n->value;
      s.link_gbps = s.link_gbps ? std::min(*s.link_gbps, n->value) : n->value;
      continue;
    }
    if (text::icontains(line, "not supported for Devices in MIG mode")) s.unsupported_in_mig = true;
  }
  for (auto& s : gpus) s.total_gbps = std::round(s.total_gbps * 1000.0) / 1000.0;
  return gpus;
}

}  // namespace hwaccel::parsers
