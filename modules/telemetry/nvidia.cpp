// NVIDIA telemetry: one `nvidia-smi --query-gpu` call for every GPU, within
// one deadline. Fields an older driver rejects are dropped (clock-event
// reasons fall back to their pre-R535 name, clocks_throttle_reasons) and the
// query is asked again, at most a few times. The reader of `nvidia-smi
// nvlink -e` is here too; tools.cpp runs it.
module;
#include <array>
#include <cctype>
#include <chrono>
#include <tuple>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.telemetry;
import :internals;

namespace hwaccel {
namespace {

constexpr std::array<std::string_view, 32> telemetry_fields = {
    "pci.bus_id",
    "uuid",
    "utilization.gpu",
    "utilization.memory",
    "utilization.encoder",
    "utilization.decoder",
    "memory.total",
    "memory.used",
    "memory.free",
    "temperature.gpu",
    "temperature.memory",
    "power.draw",
    "enforced.power.limit",
    "clocks.current.graphics",
    "clocks.current.sm",
    "clocks.current.memory",
    "clocks.current.video",
    "fan.speed",
    "pcie.link.gen.current",
    "pcie.link.width.current",
    "ecc.errors.corrected.volatile.total",
    "ecc.errors.uncorrected.volatile.total",
    "ecc.errors.corrected.aggregate.total",
    "ecc.errors.uncorrected.aggregate.total",
    "retired_pages.single_bit_ecc.count",
    "retired_pages.double_bit.count",
    "remapped_rows.correctable",
    "remapped_rows.uncorrectable",
    "remapped_rows.pending",
    "remapped_rows.failure",
    "clocks_event_reasons.supported",
    "clocks_event_reasons.active",
};

// NVML's clock-event reason bits (nvmlClocksEventReason*), as nvidia-smi
// prints them in clocks_event_reasons.active/supported.
constexpr std::array<std::pair<std::uint64_t, std::string_view>, 9> reason_bits = {{
    {0x1, "gpu_idle"},
    {0x2, "applications_clocks_setting"},
    {0x4, "sw_power_cap"},
    {0x8, "hw_slowdown"},
    {0x10, "sync_boost"},
    {0x20, "sw_thermal_slowdown"},
    {0x40, "hw_thermal_slowdown"},
    {0x80, "hw_power_brake_slowdown"},
    {0x100, "display_clock_setting"},
}};

constexpr std::size_t max_rows = 1024;
constexpr std::size_t max_problems = 8;

std::vector<std::string> argv_for(const std::vector<std::string>& fields) {
  std::string list = "--query-gpu=";
  for (std::size_t i = 0; i < fields.size(); ++i) list += text::cat(i ? "," : "", fields[i]);
  return {"nvidia-smi", std::move(list), "--format=csv,nounits"};
}

std::vector<std::string> split_csv(std::string_view line) {
  std::vector<std::string> cells;
  while (true) {
    const auto comma = line.find(',');
    cells.emplace_back(text::trim(line.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    line.remove_prefix(comma + 1);
  }
  return cells;
}

// A field's name without the header's unit ("memory.used [MiB]" -> "memory.used").
std::string_view field_name(std::string_view header) {
  if (const auto bracket = header.find(" ["); bracket != std::string_view::npos) header = header.substr(0, bracket);
  return text::trim(header);
}

bool absent(std::string_view v) noexcept {
  return v.empty() || (v.front() == '[' && v.back() == ']') || text::iequals(v, "N/A");
}

class RowReader {
 public:
  RowReader(const std::vector<std::string>& names, const std::vector<std::string>& cells, std::size_t row,
            std::vector<std::string>* problems)
      : names_(names), cells_(cells), row_(row), problems_(problems) {}

  std::optional<std::string_view> text_of(std::string_view field) const {
    for (std::size_t i = 0; i < names_.size() && i < cells_.size(); ++i)
      if (names_[i] == field) {
        if (absent(cells_[i])) return std::nullopt;
        return std::string_view(cells_[i]);
      }
    return std::nullopt;
  }

  std::optional<double> number(std::string_view field, double lo, double hi) {
    const auto v = text_of(field);
    if (!v) return std::nullopt;
    const auto n = text::parse_number_with_unit(*v);
    if (!n || !(n->value >= lo && n->value <= hi)) {
      problem(text::cat("row ", row_ + 1, ": ", field, " '", text::excerpt(*v, 40), "' is not a number in ", lo, "..", hi));
      return std::nullopt;
    }
    return n->value;
  }

  std::optional<std::uint64_t> count(std::string_view field) {
    const auto v = text_of(field);
    if (!v) return std::nullopt;
    const auto n = text::parse_u64(*v);
    if (!n) problem(text::cat("row ", row_ + 1, ": ", field, " '", text::excerpt(*v, 40), "' is not a count"));
    return n;
  }

  std::optional<bool> yes_no(std::string_view field) {
    const auto v = text_of(field);
    if (!v) return std::nullopt;
    if (text::iequals(*v, "Yes")) return true;
    if (text::iequals(*v, "No")) return false;
    problem(text::cat("row ", row_ + 1, ": ", field, " '", text::excerpt(*v, 40), "' is not Yes or No"));
    return std::nullopt;
  }

  std::optional<std::uint64_t> mask(std::string_view field) {
    auto v = text_of(field);
    if (!v) return std::nullopt;
    std::string_view digits = *v;
    if (digits.starts_with("0x") || digits.starts_with("0X")) digits.remove_prefix(2);
    const auto n = text::parse_u64(digits, 16);
    if (!n) problem(text::cat("row ", row_ + 1, ": ", field, " '", text::excerpt(*v, 40), "' is not a bit mask"));
    return n;
  }

  void problem(std::string message) {
    if (problems_ && problems_->size() < max_problems) problems_->push_back(std::move(message));
  }

 private:
  const std::vector<std::string>& names_;
  const std::vector<std::string>& cells_;
  std::size_t row_;
  std::vector<std::string>* problems_;
};

// "Field "temperature.memory" is not a valid field to query." -> the field.
std::optional<std::string> rejected_field(std::string_view said) {
  const auto at = said.find("Field \"");
  if (at == std::string_view::npos) return std::nullopt;
  said.remove_prefix(at + 7);
  const auto end = said.find('"');
  if (end == std::string_view::npos || end == 0 || end > 100) return std::nullopt;
  if (said.substr(end).find("is not a valid field") == std::string_view::npos) return std::nullopt;
  return std::string(said.substr(0, end));
}

}  // namespace

std::vector<std::string> nvidia_telemetry_argv() {
  return argv_for(std::vector<std::string>(telemetry_fields.begin(), telemetry_fields.end()));
}

Result<std::vector<NvidiaTelemetryRow>> parse_nvidia_telemetry(std::string_view csv, std::vector<std::string>* problems) {
  std::string_view rest = csv;
  std::string_view header;
  while (!rest.empty() && header.empty()) header = text::trim(text::next_line(rest));
  if (header.empty()) return fail(ErrorKind::parse_error, "nvidia-smi telemetry: no output");
  std::vector<std::string> names;
  for (const auto& h : split_csv(header)) names.emplace_back(field_name(h));
  const auto has = [&](std::string_view f) {
    for (const auto& n : names)
      if (n == f) return true;
    return false;
  };
  if (!has("pci.bus_id") && !has("uuid"))
    return fail(ErrorKind::parse_error,
                text::cat("nvidia-smi telemetry: the header names neither pci.bus_id nor uuid: '",
                          text::excerpt(header, 80), "'"));

  std::vector<NvidiaTelemetryRow> rows;
  while (!rest.empty()) {
    const std::string_view line = text::trim(text::next_line(rest));
    if (line.empty()) continue;
    if (rows.size() == max_rows) return fail(ErrorKind::parse_error, "nvidia-smi telemetry: more rows than any machine has GPUs");
    const auto cells = split_csv(line);
    RowReader r(names, cells, rows.size(), problems);
    if (cells.size() != names.size()) {
      r.problem(text::cat("row ", rows.size() + 1, " has ", cells.size(), " values for ", names.size(), " fields; skipped"));
      continue;
    }
    NvidiaTelemetryRow row;
    if (const auto bus = r.text_of("pci.bus_id")) {
      if (const auto pci = PciAddress::parse(*bus)) row.pci_bus_id = pci->to_string();
      else r.problem(text::cat("row ", rows.size() + 1, ": pci.bus_id '", text::excerpt(*bus, 40), "' is not a PCI address"));
    }
    if (const auto uuid = r.text_of("uuid")) row.uuid = std::string(*uuid);
    if (row.pci_bus_id.empty() && row.uuid.empty()) {
      r.problem(text::cat("row ", rows.size() + 1, " names no GPU (no bus id, no UUID); skipped"));
      continue;
    }
    DeviceTelemetry& t = row.telemetry;
    t.source = "nvidia-smi --query-gpu";
    if (const auto v = r.number("utilization.gpu", 0, 100)) t.utilization = *v / 100;
    for (const auto& [field, engine] : {std::pair{"utilization.memory", "memory"}, std::pair{"utilization.encoder", "encoder"},
                                        std::pair{"utilization.decoder", "decoder"}})
      if (const auto v = r.number(field, 0, 100)) t.engine_utilization[engine] = *v / 100;
    constexpr double mib = 1024.0 * 1024.0;
    constexpr double max_mib = 64.0 * 1024 * 1024;  // 64 TiB: beyond any device
    for (const auto& [field, target] : {std::pair{"memory.total", &t.memory_total_bytes}, std::pair{"memory.used", &t.memory_used_bytes},
                                        std::pair{"memory.free", &t.memory_free_bytes}})
      if (const auto v = r.number(field, 0, max_mib)) *target = static_cast<std::uint64_t>(*v * mib);
    if (const auto v = r.number("temperature.gpu", -50, 200)) t.temperatures.push_back({"gpu", *v, {}, {}});
    if (const auto v = r.number("temperature.memory", -50, 200)) t.temperatures.push_back({"memory", *v, {}, {}});
    t.power_watts = r.number("power.draw", 0, 100'000);
    t.power_limit_watts = r.number("enforced.power.limit", 0, 100'000);
    for (const auto& [field, clock] : {std::pair{"clocks.current.graphics", "graphics"}, std::pair{"clocks.current.sm", "sm"},
                                       std::pair{"clocks.current.memory", "memory"}, std::pair{"clocks.current.video", "video"}})
      if (const auto v = r.number(field, 0, 100'000)) t.clocks_mhz[clock] = *v;
    if (const auto v = r.number("fan.speed", 0, 100)) t.fan_speed_ratio = *v / 100;
    if (const auto v = r.number("pcie.link.gen.current", 1, 16)) t.pcie_generation = static_cast<std::uint32_t>(*v);
    if (const auto v = r.number("pcie.link.width.current", 1, 64)) t.pcie_width = static_cast<std::uint32_t>(*v);
    for (const auto& [type, scope, field] :
         {std::tuple{"corrected", "volatile", "ecc.errors.corrected.volatile.total"},
          std::tuple{"uncorrected", "volatile", "ecc.errors.uncorrected.volatile.total"},
          std::tuple{"corrected", "aggregate", "ecc.errors.corrected.aggregate.total"},
          std::tuple{"uncorrected", "aggregate", "ecc.errors.uncorrected.aggregate.total"}})
      if (const auto n = r.count(field)) t.ecc_errors.push_back({type, scope, "total", *n});
    t.retired_pages_single_bit = r.count("retired_pages.single_bit_ecc.count");
    t.retired_pages_double_bit = r.count("retired_pages.double_bit.count");
    t.remapped_rows_correctable = r.count("remapped_rows.correctable");
    t.remapped_rows_uncorrectable = r.count("remapped_rows.uncorrectable");
    t.remapped_rows_pending = r.yes_no("remapped_rows.pending");
    t.remapped_rows_failure = r.yes_no("remapped_rows.failure");
    auto supported = r.mask("clocks_event_reasons.supported");
    auto active = r.mask("clocks_event_reasons.active");
    if (!supported) supported = r.mask("clocks_throttle_reasons.supported");
    if (!active) active = r.mask("clocks_throttle_reasons.active");
    if (active) {
      for (const auto& [bit, name] : reason_bits)
        if (!supported || (*supported & bit)) t.clock_event_reasons[std::string(name)] = (*active & bit) != 0;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

Result<std::vector<NvlinkErrorBlock>> parse_nvlink_errors(std::string_view text, std::vector<std::string>* problems) {
  std::vector<NvlinkErrorBlock> blocks;
  const auto problem = [&](std::string message) {
    if (problems && problems->size() < max_problems) problems->push_back(std::move(message));
  };
  std::size_t line_no = 0;
  bool any_line = false;
  for (std::string_view line : text::lines(text)) {
    ++line_no;
    line = text::trim(line);
    if (line.empty()) continue;
    any_line = true;
    if (line.starts_with("GPU ")) {
      // "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-...)"
      std::string_view rest = line.substr(4);
      const auto colon = rest.find(':');
      const auto index = colon == std::string_view::npos ? std::nullopt : text::parse_u64(rest.substr(0, colon));
      if (!index || *index > 4096) {
        problem(text::cat("nvlink -e line ", line_no, ": '", text::excerpt(line, 60), "' is not a GPU header"));
        continue;
      }
      if (blocks.size() == max_rows) return fail(ErrorKind::parse_error, "nvlink -e: more GPUs than any machine has");
      NvlinkErrorBlock block;
      block.gpu_index = static_cast<std::uint32_t>(*index);
      if (const auto at = rest.find("(UUID: "); at != std::string_view::npos) {
        std::string_view uuid = rest.substr(at + 7);
        if (const auto close = uuid.find(')'); close != std::string_view::npos) block.uuid = std::string(text::trim(uuid.substr(0, close)));
      }
      blocks.push_back(std::move(block));
      continue;
    }
    // "Link 3: CRC Flit Errors: 5"
    const auto bad = [&] { problem(text::cat("nvlink -e line ", line_no, ": '", text::excerpt(line, 60), "' is not a link counter")); };
    if (!line.starts_with("Link ") || blocks.empty()) {
      bad();
      continue;
    }
    std::string_view rest = line.substr(5);
    const auto first = rest.find(':');
    const auto second = first == std::string_view::npos ? first : rest.find(':', first + 1);
    if (second == std::string_view::npos) {
      bad();
      continue;
    }
    const auto link = text::parse_u64(text::trim(rest.substr(0, first)));
    std::string_view name = text::trim(rest.substr(first + 1, second - first - 1));
    const auto count = text::parse_u64(text::trim(rest.substr(second + 1)));
    if (!link || *link > 1024 || !count || !name.ends_with(" Errors")) {
      bad();
      continue;
    }
    name.remove_suffix(7);
    std::string type;
    for (const char c : text::trim(name)) type += c == ' ' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (type.empty() || type.size() > 32) {
      bad();
      continue;
    }
    auto& counts = blocks.back().counts;
    if (counts.size() < 4096) counts.push_back({static_cast<std::uint32_t>(*link), std::move(type), *count});
  }
  if (any_line && blocks.empty()) return fail(ErrorKind::parse_error, "nvlink -e: no 'GPU N:' header");
  return blocks;
}

namespace telemetry_detail {

std::vector<NvidiaTelemetryRow> telemetry_rows(const parsers::NvidiaGpuTable& table, std::string_view source) {
  std::vector<NvidiaTelemetryRow> rows;
  for (const parsers::NvidiaGpu& g : table.gpus) {
    NvidiaTelemetryRow row;
    if (g.bus_id) row.pci_bus_id = g.bus_id->to_string();
    if (g.uuid) row.uuid = *g.uuid;
    if (row.pci_bus_id.empty() && row.uuid.empty()) continue;
    DeviceTelemetry& t = row.telemetry;
    t.source = std::string(source);
    if (g.utilization_percent) t.utilization = *g.utilization_percent / 100;
    t.memory_total_bytes = g.memory_total_bytes;
    t.memory_used_bytes = g.memory_used_bytes;
    t.memory_free_bytes = g.memory_free_bytes;
    if (g.temperature_c) t.temperatures.push_back({"gpu", *g.temperature_c, {}, {}});
    t.power_watts = g.power_draw_watts;
    t.power_limit_watts = g.power_limit_watts;
    t.pcie_generation = g.pcie_generation_current;
    t.pcie_width = g.pcie_width_current;
    rows.push_back(std::move(row));
  }
  return rows;
}

NvidiaRun run_nvidia_query(const System& system, std::chrono::milliseconds timeout) {
  NvidiaRun run;
  std::vector<std::string> fields(telemetry_fields.begin(), telemetry_fields.end());
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (int attempt = 0; attempt < 4; ++attempt) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      run.failure = Error{ErrorKind::timeout, "nvidia-smi telemetry: no time left for another query"};
      return run;
    }
    ToolRequest request;
    request.argv = argv_for(fields);
    request.timeout = left;
    request.max_output_bytes = std::size_t{4} << 20;
    auto result = system.run(request);
    if (!result) {
      run.failure = result.error();
      return run;
    }
    if (!result->succeeded()) {
      auto field = rejected_field(result->out);
      if (!field) field = rejected_field(result->err);
      if (field) {
        // Drop it; a pre-R535 driver knows the clock-event reasons by their old name.
        std::erase(fields, *field);
        if (field->starts_with("clocks_event_reasons."))
          fields.push_back(text::cat("clocks_throttle_reasons.", field->substr(21)));
        continue;
      }
      std::string_view said = text::trim(result->err);
      if (said.empty()) said = text::trim(result->out);
      run.failure = Error{ErrorKind::tool_failed,
                          text::cat("nvidia-smi telemetry query exited with code ", result->exit_code,
                                    said.empty() ? "" : ": ", text::excerpt(text::trim(text::next_line(said)), 200))};
      return run;
    }
    auto rows = parse_nvidia_telemetry(result->out, &run.problems);
    if (!rows) {
      run.failure = rows.error();
      return run;
    }
    run.rows = std::move(*rows);
    return run;
  }
  run.failure = Error{ErrorKind::tool_failed, "nvidia-smi telemetry: the driver rejected too many fields"};
  return run;
}

}  // namespace telemetry_detail
}  // namespace hwaccel
