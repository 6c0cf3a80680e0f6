// Diagnostic logging of the CLI: the library's events, one a line on stderr,
// as text for people or JSON for log collectors. Data stays on stdout.
#include "commands.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

import hwaccel;

#include "detect_builder.hpp"

namespace hwaccel::cli {
namespace {

// "2026-11-26T03:40:00.123456Z"
std::string precise_utc_now() {
  const auto now = std::chrono::system_clock::now();
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(us / 1'000'000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<long long>(us % 1'000'000));
  return buf;
}

std::string json_line(const DiagnosticEvent& e) {
  json::Writer w(false, 256);
  w.begin_object();
  w.field("time", precise_utc_now());
  w.field("level", to_string(e.level));
  w.field("event", e.event);
  if (!e.backend.empty()) w.field("backend", e.backend);
  if (!e.subject.empty()) w.field("subject", e.subject);
  if (!e.outcome.empty()) w.field("outcome", e.outcome);
  if (!e.detail.empty()) w.field("detail", e.detail);
  if (e.count >= 0) w.field("count", e.count);
  if (e.elapsed.count() >= 0) w.field("elapsed_us", static_cast<std::int64_t>(e.elapsed.count()));
  w.end_object();
  std::string line = std::move(w).take();
  line.push_back('\n');
  return line;
}

std::string text_line(const DiagnosticEvent& e) {
  std::string line = "hwaccel: [" + std::string(to_string(e.level)) + "] ";
  if (!e.backend.empty()) line += std::string(e.backend) + " ";
  line += e.event;
  if (!e.subject.empty()) line += " " + e.subject;
  if (!e.outcome.empty()) line += ": " + e.outcome;
  if (e.count >= 0) line += " (" + std::to_string(e.count) + ")";
  if (e.elapsed.count() >= 0) line += " in " + std::to_string(e.elapsed.count()) + " us";
  if (!e.detail.empty()) line += " -- " + e.detail;
  line.push_back('\n');
  return line;
}

}  // namespace

void add_log_options(CLI::App& cmd, LogArgs& args) {
  cmd.add_flag("-v,--verbose", args.verbosity,
               "Diagnostic events on stderr: -v what each backend found, -vv also the tools run, -vvv every file "
               "read (or HWACCEL_LOG=warn|info|debug|trace)");
  cmd.add_option("--log-format", args.format, "Diagnostic events as text (default) or json, one a line on stderr")
      ->check(CLI::IsMember({"text", "json"}));
}

void install_log_sink(DetectBuilder& builder, LogLevel level, const LogArgs& args) {
  // One line per write, whole, even when detectors log from several threads.
  auto mutex = std::make_shared<std::mutex>();
  const bool as_json = args.format == "json";
  builder.diagnostics(
      [mutex, as_json](const DiagnosticEvent& e) {
        const std::string line = as_json ? json_line(e) : text_line(e);
        std::lock_guard lock(*mutex);
        std::fwrite(line.data(), 1, line.size(), stderr);
      },
      level);
}

}  // namespace hwaccel::cli
