// Scans of exporters over HTTP: a list of addresses or an IPv4 subnet swept,
// each asked for GET /registry through the caller's fetcher.
module;
#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.fleet;

namespace hwaccel {

namespace {

// The host of "HOST:PORT" or "[V6]:PORT" (the address itself without a port).
std::string exporter_host(std::string_view address) {
  if (address.starts_with('[')) {
    const auto close = address.find(']');
    return std::string(address.substr(1, close == std::string_view::npos ? address.size() - 1 : close - 1));
  }
  const auto colon = address.rfind(':');
  return std::string(colon == std::string_view::npos || address.find(':') != colon ? address : address.substr(0, colon));
}

std::optional<std::uint32_t> parse_ipv4_address(std::string_view text) {
  std::uint32_t value = 0;
  for (int octet = 0; octet < 4; ++octet) {
    const auto dot = text.find('.');
    const std::string_view part = octet < 3 ? text.substr(0, dot) : text;
    if ((octet < 3 && dot == std::string_view::npos) || part.empty() || part.size() > 3) return std::nullopt;
    unsigned n = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), n);
    if (ec != std::errc() || end != part.data() + part.size() || n > 255) return std::nullopt;
    value = value << 8 | n;
    if (octet < 3) text.remove_prefix(dot + 1);
  }
  return value;
}

std::string ipv4_address_text(std::uint32_t a) {
  return text::cat(a >> 24, ".", (a >> 16) & 255, ".", (a >> 8) & 255, ".", a & 255);
}

}  // namespace

Result<std::vector<std::string>> subnet_addresses(std::string_view cidr, std::uint16_t port) {
  const std::string_view given = text::trim(cidr);
  const auto bad = [&](std::string_view why) {
    return fail(ErrorKind::invalid_input, text::cat("subnet '", text::excerpt(given, 60), "': ", why));
  };
  if (port == 0) return bad("the port must be 1 to 65535");
  const auto slash = given.find('/');
  if (slash == std::string_view::npos) return bad("not ADDRESS/PREFIX (10.0.0.0/24)");
  const auto address = parse_ipv4_address(given.substr(0, slash));
  if (!address) return bad("not an IPv4 address before the '/'");
  const std::string_view prefix_text = given.substr(slash + 1);
  unsigned prefix = 0;
  const auto [end, ec] = std::from_chars(prefix_text.data(), prefix_text.data() + prefix_text.size(), prefix);
  if (prefix_text.empty() || ec != std::errc() || end != prefix_text.data() + prefix_text.size() || prefix > 32)
    return bad("the prefix must be 0 to 32");
  if (prefix < min_subnet_prefix)
    return bad(text::cat("larger than a /", min_subnet_prefix, " (", std::uint64_t{1} << (32 - prefix),
                         " addresses); sweep smaller subnets"));
  const std::uint32_t mask = prefix == 0 ? 0 : ~std::uint32_t{0} << (32 - prefix);
  if ((*address & ~mask) != 0) return bad(text::cat("bits set beyond the /", prefix, " (the network is ", ipv4_address_text(*address & mask), ")"));
  const std::uint64_t size = std::uint64_t{1} << (32 - prefix);
  // The network and broadcast addresses are no hosts, except in /31 and /32.
  const std::uint64_t first = size > 2 ? 1 : 0, last = size > 2 ? size - 2 : size - 1;
  std::vector<std::string> out;
  out.reserve(static_cast<std::size_t>(last - first + 1));
  for (std::uint64_t i = first; i <= last; ++i)
    out.push_back(text::cat(ipv4_address_text(*address + static_cast<std::uint32_t>(i)), ":", port));
  return out;
}

Fleet scan_exporters(std::span<const std::string> addresses, const RegistryFetcher& fetch, const ScanOptions& options,
                     bool skip_silent) {
  std::vector<ExporterTarget> targets;
  targets.reserve(addresses.size());
  for (const auto& a : addresses) targets.push_back({a, exporter_host(a)});
  return scan_exporters(std::span<const ExporterTarget>(targets), fetch, options, skip_silent);
}

Fleet scan_exporters(std::span<const ExporterTarget> targets, const RegistryFetcher& fetch, const ScanOptions& options,
                     bool skip_silent) {
  Fleet fleet;
  fleet.scanned_at = fleet_detail::scan_time(options);
  std::vector<std::optional<FleetNode>> nodes(targets.size());
  std::atomic<std::size_t> silent{0};
  fleet_detail::for_each_index(targets.size(), options.concurrency, [&](std::size_t i) {
      const std::string& address = targets[i].address;
      FleetNode node;
      node.host = targets[i].node;
      node.scanned_at = fleet.scanned_at;
      node.source = text::cat("http:", address);
      FetchedRegistry got = fetch(address, options);
      node.elapsed = got.elapsed;
      if (got.nothing_there && skip_silent) {
        ++silent;
        return;
      }
      if (got.error) {
        node.error = std::move(got.error);
      } else if (got.body.size() > options.max_output_bytes) {
        node.error = NodeError{NodeErrorKind::too_large, text::cat(address, ": answered more than ",
                                                                   options.max_output_bytes >> 20, " MiB; not a registry")};
      } else if (auto registry = registry_from_json(got.body)) {
        node.registry = std::move(*registry);
      } else {
        node.error = NodeError{NodeErrorKind::parse_error,
                               text::cat(address, ": not a registry: ", registry.error().message)};
      }
      nodes[i] = std::move(node);
  });
  for (auto& n : nodes)
    if (n) fleet.nodes.push_back(std::move(*n));
  if (silent > 0)
    fleet.warnings.push_back(text::cat(silent.load(), " of ", targets.size(),
                                       " addresses answered nothing (no exporter listening, or the deadline passed)"));
  fleet_detail::settle_nodes(fleet);
  return fleet;
}

}  // namespace hwaccel
