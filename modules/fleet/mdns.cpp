// DNS-SD as a fleet source: what hwaccel-mdns's browse prints, read into
// services and turned into exporters to ask. The browse itself runs the
// helper through the System seam, so a recorded browse replays the scan.
module;
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <simdjson.h>

#include "hwaccel_install_paths.h"
#include "json_input.hpp"
module hwaccel.fleet;

namespace hwaccel {

namespace {

constexpr std::size_t max_mdns_services = 4096;
constexpr std::size_t max_mdns_text = 1024;
constexpr std::size_t max_txt_pairs = 64;
// 4096 services of a few hundred bytes each.
constexpr std::size_t max_browse_output = std::size_t{4} << 20;

Error line_error(std::size_t line, std::string_view why) {
  return Error{ErrorKind::parse_error, text::cat("hwaccel-mdns browse, line ", line, ": ", why)};
}

Result<std::string> text_field(simdjson::dom::element e, std::string_view key, std::size_t line) {
  std::string_view v;
  if (e[key].get_string().get(v) != simdjson::SUCCESS) return fail(line_error(line, text::cat("no \"", key, "\" text")));
  if (v.size() > max_mdns_text) return fail(line_error(line, text::cat("\"", key, "\" over ", max_mdns_text, " bytes")));
  return std::string(v);
}

Result<MdnsService> parse_service(simdjson::dom::element e, std::size_t line) {
  if (!e.is_object()) return fail(line_error(line, "not an object"));
  MdnsService s;
  for (auto [key, field] : {std::pair{"name", &s.name}, std::pair{"type", &s.type}, std::pair{"domain", &s.domain},
                            std::pair{"interface", &s.interface}, std::pair{"host", &s.host},
                            std::pair{"address", &s.address}}) {
    auto v = text_field(e, key, line);
    if (!v) return fail(v.error());
    *field = std::move(*v);
  }
  auto protocol = text_field(e, "protocol", line);
  if (!protocol) return fail(protocol.error());
  if (*protocol != "ipv4" && *protocol != "ipv6")
    return fail(line_error(line, text::cat("protocol \"", text::excerpt(*protocol, 20), "\" is neither ipv4 nor ipv6")));
  s.ipv6 = *protocol == "ipv6";
  // Addresses and interfaces become URLs: only what avahi prints for them.
  const auto only = [](std::string_view text, std::string_view allowed) {
    return !text.empty() && std::all_of(text.begin(), text.end(), [&](char c) {
      return (c >= '0' && c <= '9') || allowed.find(c) != std::string_view::npos;
    });
  };
  if (!only(s.address, s.ipv6 ? "abcdefABCDEF:." : "."))
    return fail(line_error(line, text::cat("\"", text::excerpt(s.address, 40), "\" is no ", *protocol, " address")));
  if (!only(s.interface, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ._-@"))
    return fail(line_error(line, text::cat("interface \"", text::excerpt(s.interface, 40), "\" is no interface name")));
  std::uint64_t port = 0;
  if (e["port"].get_uint64().get(port) != simdjson::SUCCESS || port == 0 || port > 65535)
    return fail(line_error(line, "no port from 1 to 65535"));
  s.port = static_cast<std::uint16_t>(port);
  simdjson::dom::object txt;
  if (e["txt"].get_object().get(txt) != simdjson::SUCCESS) return fail(line_error(line, "no \"txt\" object"));
  for (auto [key, value] : txt) {
    if (s.txt.size() == max_txt_pairs) return fail(line_error(line, text::cat("more than ", max_txt_pairs, " TXT pairs")));
    std::string_view v;  // a key without a value ("flag") is null
    if (!value.is_null() && value.get_string().get(v) != simdjson::SUCCESS)
      return fail(line_error(line, "a TXT value that is not text"));
    if (key.size() > max_mdns_text || v.size() > max_mdns_text)
      return fail(line_error(line, text::cat("a TXT pair over ", max_mdns_text, " bytes")));
    s.txt.emplace_back(std::string(key), std::string(v));
  }
  return s;
}

std::optional<std::string_view> txt_value(const MdnsService& s, std::string_view key) {
  for (const auto& [k, v] : s.txt)
    if (k == key) return v;
  return std::nullopt;
}

std::string_view without_local(std::string_view host) {
  if (host.ends_with('.')) host.remove_suffix(1);
  if (host.ends_with(".local")) host.remove_suffix(6);
  return host;
}

}  // namespace

Result<std::vector<MdnsService>> parse_mdns_services(std::string_view json_lines) {
  std::vector<MdnsService> out;
  simdjson::dom::parser parser;
  std::size_t line_number = 0;
  while (!json_lines.empty()) {
    const auto end = json_lines.find('\n');
    std::string_view line = json_lines.substr(0, end);
    json_lines.remove_prefix(end == std::string_view::npos ? json_lines.size() : end + 1);
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    if (out.size() == max_mdns_services)
      return fail(line_error(line_number, text::cat("more than ", max_mdns_services, " services")));
    simdjson::dom::element doc;
    if (const auto err = json_input::parse(parser, line).get(doc); err != simdjson::SUCCESS)
      return fail(line_error(line_number, text::cat("not JSON (", simdjson::error_message(err), ")")));
    auto service = parse_service(doc, line_number);
    if (!service) return fail(service.error());
    out.push_back(std::move(*service));
  }
  return out;
}

Result<MdnsFound> browse_mdns(const System& system, const MdnsBrowse& browse) {
  if (browse.wait <= std::chrono::milliseconds(0) || browse.wait > max_mdns_wait)
    return fail(Error{ErrorKind::invalid_input, text::cat("an mDNS wait of 1 to ", max_mdns_wait.count(), " ms")});
  ToolRequest request;
  request.argv = {browse.helper, "browse", browse.service_type, "--timeout-ms", std::to_string(browse.wait.count())};
  request.timeout = browse.wait + std::chrono::seconds(1);
  request.max_output_bytes = max_browse_output;
  auto ran = system.run(request);
  if (!ran) return fail(ran.error());
  const std::string said(text::trim(ran->err));
  if (!ran->succeeded())
    return fail(Error{ErrorKind::io_error,
                      said.empty() ? text::cat(browse.helper, " browse failed (exit ", ran->exit_code, ")") : said});
  if (ran->out_truncated)
    return fail(Error{ErrorKind::parse_error, text::cat("hwaccel-mdns browse printed more than ", max_browse_output >> 20, " MiB")});
  auto services = parse_mdns_services(ran->out);
  if (!services) return fail(services.error());
  MdnsFound found{std::move(*services), {}};
  for (const auto line : text::split_trimmed(ran->err, '\n'))
    if (!line.empty()) found.warnings.push_back(text::cat("mDNS: ", text::excerpt(line, 300)));
  return found;
}

std::vector<ExporterTarget> mdns_exporter_targets(std::span<const MdnsService> services) {
  // One address per instance: IPv4 first, then IPv6 (global before link-local).
  std::map<std::pair<std::string, std::string>, const MdnsService*> chosen;  // (type, name) -> service
  const auto rank = [](const MdnsService& s) {
    return !s.ipv6 ? 0 : (s.address.starts_with("fe80:") || s.address.starts_with("FE80:")) ? 2 : 1;
  };
  for (const auto& s : services) {
    if (const auto path = txt_value(s, "path"); path && *path != "/registry") continue;
    auto& slot = chosen[{s.type, s.name}];
    if (!slot || rank(s) < rank(*slot)) slot = &s;
  }
  // A host name from the network that a fleet document cannot hold (spaces,
  // a leading '-', bytes beyond ASCII) gives way to the address.
  const auto node_host = [](const MdnsService& s) {
    const std::string host(without_local(s.host));
    return host_name_problem(host) || host_name_problem(s.address) ? std::string() : host;
  };
  std::vector<std::pair<const MdnsService*, std::string>> hosts;
  std::map<std::string, std::size_t> per_host;
  for (const auto& [key, s] : chosen) ++per_host[hosts.emplace_back(s, node_host(*s)).second];
  std::vector<ExporterTarget> targets;
  for (const auto& [s, host] : hosts) {
    std::string address = !s->ipv6 ? text::cat(s->address, ":", s->port)
                          : rank(*s) == 2 ? text::cat("[", s->address, "%", s->interface, "]:", s->port)
                                          : text::cat("[", s->address, "]:", s->port);
    std::string node = host.empty() ? text::cat(s->address, ":", s->port)
                       : per_host[host] > 1 ? text::cat(host, ":", s->port)
                                            : host;
    targets.push_back({std::move(address), std::move(node)});
  }
  std::sort(targets.begin(), targets.end(), [](const auto& a, const auto& b) { return a.node < b.node; });
  return targets;
}

std::string mdns_helper(const System& system) {
  if (auto set = system.env("HWACCEL_MDNS_HELPER"); set && !set->empty()) return *set;
  if (system.find_tool(HWACCEL_MDNS_HELPER_INSTALLED)) return HWACCEL_MDNS_HELPER_INSTALLED;
  return "hwaccel-mdns";
}

}  // namespace hwaccel
