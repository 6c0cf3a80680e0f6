// Fleet basics: names, host lists, times and totals.
module;
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <ctime>
#if defined(_WIN32)
#include "posix_compat.hpp"  // gmtime_r
#endif
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>
module hwaccel.fleet;

namespace hwaccel {

namespace {

constexpr std::array<std::string_view, 6> node_error_names = {"timeout",     "failed",   "too_large",
                                                              "parse_error", "io_error", "no_answer"};

}  // namespace

std::string_view to_string(NodeErrorKind kind) noexcept { return node_error_names[static_cast<std::size_t>(kind)]; }

Result<NodeErrorKind> parse_node_error_kind(std::string_view name) {
  for (std::size_t i = 0; i < node_error_names.size(); ++i)
    if (node_error_names[i] == name) return static_cast<NodeErrorKind>(i);
  return fail(unknown_name("node error kind", name, text::join(node_error_names)));
}

std::string_view to_string(NodeChangeKind kind) noexcept {
  switch (kind) {
    case NodeChangeKind::added: return "added";
    case NodeChangeKind::gone: return "gone";
    case NodeChangeKind::stopped_answering: return "stopped_answering";
    case NodeChangeKind::answering_again: return "answering_again";
  }
  return "added";
}

const FleetNode* Fleet::find(std::string_view host) const noexcept {
  const auto it = std::lower_bound(nodes.begin(), nodes.end(), host,
                                   [](const FleetNode& n, std::string_view h) { return n.host < h; });
  return it != nodes.end() && it->host == host ? &*it : nullptr;
}

std::optional<std::string> host_name_problem(std::string_view name) {
  if (name.empty()) return std::string("a host name is empty");
  if (name.size() > 253) return text::cat("host name \"", text::excerpt(name, 40), "\" is longer than 253 characters");
  if (name.front() == '-')
    return text::cat("host name \"", text::excerpt(name), "\" starts with '-': a command would read it as an option");
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '-' || c == '_' || c == ':' || c == '@';
    if (!ok) {
      // Never echo control bytes back to a terminal.
      const auto byte = static_cast<unsigned char>(c);
      static constexpr char digits[] = "0123456789abcdef";
      const auto shown = byte < 0x20 || byte >= 0x7f ? text::cat("byte 0x", digits[byte >> 4], digits[byte & 0xf])
                                                     : text::cat("'", c, "'");
      return text::cat("host name has ", shown, ": allowed are letters, digits and . - _ : @");
    }
  }
  return std::nullopt;
}

Result<std::vector<std::string>> parse_host_list(std::string_view list) {
  std::vector<std::string> hosts;
  std::set<std::string, std::less<>> seen;
  std::size_t line_number = 0;
  for (std::string_view line : text::lines(list)) {
    ++line_number;
    if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    std::size_t i = 0;
    while (i < line.size()) {
      const auto separator = [](char c) { return c == ',' || c == ' ' || c == '\t' || c == '\r'; };
      while (i < line.size() && separator(line[i])) ++i;
      std::size_t end = i;
      while (end < line.size() && !separator(line[end])) ++end;
      if (end == i) break;
      const std::string_view host = line.substr(i, end - i);
      if (const auto problem = host_name_problem(host))
        return fail(ErrorKind::invalid_input, text::cat("host list line ", line_number, ": ", *problem));
      if (!seen.emplace(host).second)
        return fail(ErrorKind::invalid_input, text::cat("host list line ", line_number, ": \"", host, "\" is given twice"));
      hosts.emplace_back(host);
      i = end;
    }
  }
  return hosts;
}

FleetTotals fleet_totals(const Fleet& fleet) {
  FleetTotals totals;
  totals.nodes = fleet.nodes.size();
  std::map<std::string, FleetCount, std::less<>> models, specs, backends;
  const auto count = [](std::map<std::string, FleetCount, std::less<>>& into, std::string_view key,
                        const DeviceProfile& d, std::set<std::string, std::less<>>& seen_on_node) {
    auto it = into.find(key);
    if (it == into.end()) it = into.emplace(std::string(key), FleetCount{std::string(key)}).first;
    ++it->second.devices;
    it->second.memory_bytes += d.memory_bytes.value_or(0);
    if (seen_on_node.emplace(key).second) ++it->second.nodes;
  };
  for (const auto& node : fleet.nodes) {
    if (!node.registry) continue;
    ++totals.nodes_answered;
    std::set<std::string, std::less<>> models_here, specs_here, backends_here;
    for (const auto& d : node.registry->devices()) {
      if (d.backend == Backend::cpu) continue;
      ++totals.accelerators;
      totals.accelerator_memory_bytes += d.memory_bytes.value_or(0);
      count(models, d.name, d, models_here);
      if (d.spec_id) count(specs, *d.spec_id, d, specs_here);
      count(backends, to_string(d.backend), d, backends_here);
    }
  }
  const auto values = [](std::map<std::string, FleetCount, std::less<>>& m) {
    std::vector<FleetCount> out;
    out.reserve(m.size());
    for (auto& [key, c] : m) out.push_back(std::move(c));
    return out;
  };
  totals.by_model = values(models);
  totals.by_spec = values(specs);
  totals.by_backend = values(backends);
  return totals;
}

std::string format_utc_time(std::chrono::system_clock::time_point at) {
  const std::time_t t = std::chrono::system_clock::to_time_t(at);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buffer[32];
  const auto n = std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return std::string(buffer, n);
}

std::optional<std::chrono::system_clock::time_point> parse_utc_time(std::string_view s) noexcept {
  // YYYY-MM-DDTHH:MM:SSZ exactly: what format_utc_time writes.
  if (s.size() != 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != 'Z')
    return std::nullopt;
  const auto number = [&](std::size_t at, std::size_t n) -> std::optional<int> {
    int v = 0;
    for (std::size_t i = at; i < at + n; ++i) {
      if (s[i] < '0' || s[i] > '9') return std::nullopt;
      v = v * 10 + (s[i] - '0');
    }
    return v;
  };
  const auto year = number(0, 4), month = number(5, 2), day = number(8, 2), hour = number(11, 2),
             minute = number(14, 2), second = number(17, 2);
  if (!year || !month || !day || !hour || !minute || !second) return std::nullopt;
  const std::chrono::year_month_day date{std::chrono::year{*year}, std::chrono::month{static_cast<unsigned>(*month)},
                                         std::chrono::day{static_cast<unsigned>(*day)}};
  // Within what the clock holds (its nanoseconds since 1970 overflow near
  // 1677 and 2262); no scan happened before 1970 or lies that far ahead.
  if (*year < 1970 || *year > 2200) return std::nullopt;
  if (!date.ok() || *hour > 23 || *minute > 59 || *second > 60) return std::nullopt;
  return std::chrono::sys_days{date} + std::chrono::hours{*hour} + std::chrono::minutes{*minute} +
         std::chrono::seconds{*second};
}

namespace fleet_detail {

std::chrono::system_clock::time_point scan_time(const ScanOptions& options) {
  return std::chrono::floor<std::chrono::seconds>(options.now.value_or(std::chrono::system_clock::now()));
}

void for_each_index(std::size_t count, std::size_t workers, const std::function<void(std::size_t)>& body) {
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < count; i = next++) body(i);
  };
  workers = std::clamp<std::size_t>(workers, 1, std::max<std::size_t>(count, 1));
  if (workers == 1) return work();
  std::vector<std::jthread> threads;
  threads.reserve(workers);
  for (std::size_t t = 0; t < workers; ++t) threads.emplace_back(work);
}

void settle_nodes(Fleet& fleet) {
  // By host, then in the order given, so that a repeated host keeps its last entry.
  std::vector<std::size_t> order(fleet.nodes.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::tie(fleet.nodes[a].host, a) < std::tie(fleet.nodes[b].host, b);
  });
  std::vector<FleetNode> unique;
  unique.reserve(fleet.nodes.size());
  for (const std::size_t i : order) {
    FleetNode& node = fleet.nodes[i];
    if (!unique.empty() && unique.back().host == node.host) {
      fleet.warnings.push_back(text::cat("host ", node.host, " is given twice (", unique.back().source, ", ",
                                         node.source, "); the last is kept"));
      unique.back() = std::move(node);
    } else {
      unique.push_back(std::move(node));
    }
  }
  fleet.nodes = std::move(unique);
}

}  // namespace fleet_detail

}  // namespace hwaccel
