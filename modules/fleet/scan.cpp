// Collecting one registry per node: from files, JSON lines, or a command per host.
module;
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#if !defined(_WIN32)
#include <sys/resource.h>
#endif
module hwaccel.fleet;

namespace hwaccel {

namespace {

namespace fs = std::filesystem;

std::string mib(std::size_t bytes) { return text::cat(bytes >> 20, " MiB"); }

// A registry from a node's output. What a node prints before the document
// (an ssh banner, a login script's echo, `srun --label`'s "12: ", `kubectl
// logs --prefix`'s "[pod/x] ") is skipped: the document is tried from each
// line that begins with '{' (or from the first '{' of the first line), the
// first that parses wins.
Result<AcceleratorRegistry> registry_of_output(std::string_view out) {
  out = text::trim(out);
  if (out.empty()) return fail(ErrorKind::parse_error, "nothing but blanks");
  std::vector<std::size_t> starts;
  if (out.front() == '{') starts.push_back(0);
  const auto first_line_end = out.find('\n');
  if (const auto brace = out.find('{'); brace != std::string_view::npos && brace > 0 && brace < first_line_end &&
                                        out.substr(0, brace).find('"') == std::string_view::npos)
    starts.push_back(brace);
  // A few lines of banner at most: each try reads the rest of the output.
  constexpr std::size_t max_tries = 8;
  for (std::size_t at = out.find("\n{"); at != std::string_view::npos && starts.size() < max_tries;
       at = out.find("\n{", at + 1))
    starts.push_back(at + 1);
  if (starts.empty()) return fail(ErrorKind::parse_error, text::cat("printed no JSON: \"", text::excerpt(out, 60), "\""));
  Result<AcceleratorRegistry> first = registry_from_json(out.substr(starts.front()));
  if (first) return first;
  for (std::size_t i = 1; i < starts.size(); ++i)
    if (auto later = registry_from_json(out.substr(starts[i]))) return later;
  return first;
}

FleetNode file_node(const fs::path& path, const ScanOptions& options, std::chrono::system_clock::time_point now) {
  FleetNode node;
  node.scanned_at = now;
  node.source = text::cat("file:", path.string());
  node.host = path.stem().string();
  std::error_code ec;
  // Never opened for a blocking read: a FIFO or a device node is no registry.
  if (!fs::is_regular_file(path, ec)) {
    node.error = NodeError{NodeErrorKind::io_error,
                           text::cat(path.string(), ec ? text::cat(": ", ec.message()) : std::string(": not a regular file"))};
    return node;
  }
  const auto size = fs::file_size(path, ec);
  std::string content;
  if (!ec && size > options.max_output_bytes) {
    node.error = NodeError{NodeErrorKind::too_large,
                           text::cat(path.string(), ": ", size, " bytes, more than the ", mib(options.max_output_bytes),
                                     " a registry may have")};
    return node;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in || ec) {
    node.error = NodeError{NodeErrorKind::io_error, text::cat(path.string(), ": cannot be read")};
    return node;
  }
  content.resize(static_cast<std::size_t>(size));
  in.read(content.data(), static_cast<std::streamsize>(content.size()));
  content.resize(static_cast<std::size_t>(in.gcount()));
  auto registry = registry_of_output(content);
  if (!registry) {
    node.error = NodeError{NodeErrorKind::parse_error, text::cat(path.string(), ": not a registry: ", registry.error().message)};
    return node;
  }
  if (registry->system().host && !host_name_problem(*registry->system().host)) node.host = *registry->system().host;
  node.registry = std::move(*registry);
  return node;
}

// A node named by a file whose name is no host name cannot be keyed: it is
// left out with a warning that says why.
void add_file_node(Fleet& fleet, FleetNode node) {
  if (const auto problem = host_name_problem(node.host)) {
    fleet.warnings.push_back(text::cat(node.source.substr(5), ": ", *problem,
                                       " (the registry names no host, so its file name would); left out"));
    return;
  }
  fleet.nodes.push_back(std::move(node));
}

}  // namespace

Fleet scan_files(std::span<const std::string> paths, const ScanOptions& options) {
  Fleet fleet;
  fleet.scanned_at = fleet_detail::scan_time(options);
  for (const auto& given : paths) {
    const fs::path path(given);
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      std::vector<fs::path> files;
      for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
        // A dangling link or an unreadable entry is that entry's problem, not the folder's.
        std::error_code entry_error;
        if (it->path().extension() == ".json" && it->is_regular_file(entry_error)) files.push_back(it->path());
      }
      if (ec) fleet.warnings.push_back(text::cat(given, ": cannot list the folder: ", ec.message()));
      std::sort(files.begin(), files.end());
      if (files.empty() && !ec) fleet.warnings.push_back(text::cat(given, ": no .json file in the folder"));
      for (const auto& f : files) add_file_node(fleet, file_node(f, options, fleet.scanned_at));
    } else {
      add_file_node(fleet, file_node(path, options, fleet.scanned_at));
    }
  }
  fleet_detail::settle_nodes(fleet);
  return fleet;
}

Fleet scan_lines(std::string_view input, const ScanOptions& options) {
  Fleet fleet;
  fleet.scanned_at = fleet_detail::scan_time(options);
  std::size_t line_number = 0;
  std::string_view rest = input;
  while (!rest.empty()) {
    const std::string_view line = text::next_line(rest);
    ++line_number;
    if (text::trim(line).empty()) continue;
    if (line.size() > options.max_output_bytes) {
      fleet.warnings.push_back(text::cat("line ", line_number, ": longer than ", mib(options.max_output_bytes), "; skipped"));
      continue;
    }
    auto registry = registry_of_output(line);
    if (!registry) {
      fleet.warnings.push_back(text::cat("line ", line_number, ": not a registry (", registry.error().message, "); skipped"));
      continue;
    }
    const auto& host = registry->system().host;
    if (!host) {
      fleet.warnings.push_back(text::cat("line ", line_number,
                                         ": the registry names no host (system.host: run `hwaccel detect --host NAME`); "
                                         "skipped, since a line's position names no node"));
      continue;
    }
    if (const auto problem = host_name_problem(*host)) {
      fleet.warnings.push_back(text::cat("line ", line_number, ": ", *problem, "; skipped"));
      continue;
    }
    FleetNode node;
    node.host = *host;
    node.scanned_at = fleet.scanned_at;
    node.source = text::cat("stdin:", line_number);
    node.registry = std::move(*registry);
    fleet.nodes.push_back(std::move(node));
  }
  fleet_detail::settle_nodes(fleet);
  return fleet;
}

Result<CommandTemplate> CommandTemplate::parse(std::string_view input) {
  CommandTemplate command;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < input.size(); ++i) {
    const char c = input[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) command.words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else if (c == '\'') {
      const auto close = input.find('\'', i + 1);
      if (close == std::string_view::npos) return fail(ErrorKind::invalid_input, "command template: a ' is not closed");
      word.append(input.substr(i + 1, close - i - 1));
      in_word = true;
      i = close;
    } else if (c == '"') {
      std::size_t j = i + 1;
      for (; j < input.size() && input[j] != '"'; ++j) {
        if (input[j] == '\\' && j + 1 < input.size() && std::string_view("\"\\$`").find(input[j + 1]) != std::string_view::npos)
          ++j;
        word.push_back(input[j]);
      }
      if (j >= input.size()) return fail(ErrorKind::invalid_input, "command template: a \" is not closed");
      in_word = true;
      i = j;
    } else if (c == '\\') {
      if (i + 1 >= input.size()) return fail(ErrorKind::invalid_input, "command template: it ends with a backslash");
      word.push_back(input[++i]);
      in_word = true;
    } else {
      word.push_back(c);
      in_word = true;
    }
  }
  if (in_word) command.words.push_back(std::move(word));
  if (command.words.empty()) return fail(ErrorKind::invalid_input, "command template is empty");
  // The program is run without a shell: a name looked up on PATH, or a path
  // to it ("/opt/hwaccel/bin/hwaccel", "./node-agent"). A host name never
  // chooses it.
  const std::string& program = command.words.front();
  if (program.empty()) return fail(ErrorKind::invalid_input, "command template: the program's name is empty");
  if (program.find("{host}") != std::string::npos)
    return fail(ErrorKind::invalid_input,
                text::cat("command template: the program \"", text::excerpt(program), "\" may not name {host}"));
  if (std::none_of(command.words.begin(), command.words.end(),
                   [](const std::string& w) { return w.find("{host}") != std::string::npos; }))
    return fail(ErrorKind::invalid_input, "command template does not name {host}: every node would run the same command");
  return command;
}

std::vector<std::string> CommandTemplate::argv_for(std::string_view host) const {
  std::vector<std::string> argv;
  argv.reserve(words.size());
  for (const auto& w : words) {
    std::string out;
    std::size_t from = 0;
    for (auto at = w.find("{host}"); at != std::string::npos; at = w.find("{host}", from)) {
      out.append(w, from, at - from);
      out.append(host);
      from = at + 6;
    }
    out.append(w, from);
    argv.push_back(std::move(out));
  }
  return argv;
}

namespace fleet_detail {

FleetNode run_node(const System& system, const std::string& host, std::vector<std::string> argv,
                   const ScanOptions& options, std::chrono::system_clock::time_point now) {
  FleetNode node;
  node.host = host;
  node.scanned_at = now;
  node.source = "exec";
  ToolRequest request{std::move(argv), options.node_deadline, options.max_output_bytes};
  const auto started = std::chrono::steady_clock::now();
  auto run = system.run(request);
  node.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  if (!run) {
    const NodeErrorKind kind = run.error().kind == ErrorKind::timeout ? NodeErrorKind::timeout : NodeErrorKind::failed;
    node.error = NodeError{kind, text::cat(host, ": ", run.error().message)};
    return node;
  }
  const ToolResult& result = *run;
  if (result.elapsed.count() > 0) node.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(result.elapsed);
  if (result.out_truncated) {
    node.error = NodeError{NodeErrorKind::too_large,
                           text::cat(host, ": printed more than ", mib(options.max_output_bytes), "; not a registry")};
    return node;
  }
  if (!result.succeeded()) {
    const auto last_line = [](std::string_view err) {
      err = text::trim(err);
      const auto nl = err.rfind('\n');
      return text::excerpt(nl == std::string_view::npos ? err : err.substr(nl + 1), 160);
    };
    std::string how = result.signal ? text::cat("was killed by signal ", *result.signal)
                                    : text::cat("exited with status ", result.exit_code);
    const std::string said = last_line(result.err);
    node.error = NodeError{NodeErrorKind::failed,
                           said.empty() ? text::cat(host, ": ", how) : text::cat(host, ": ", how, ": ", said)};
    return node;
  }
  auto registry = registry_of_output(result.out);
  if (!registry) {
    node.error = NodeError{NodeErrorKind::parse_error, text::cat(host, ": not a registry: ", registry.error().message)};
    return node;
  }
  node.registry = std::move(*registry);
  return node;
}

}  // namespace fleet_detail

Fleet scan_hosts(const System& system, std::span<const std::string> hosts, const CommandTemplate& command,
                 const ScanOptions& options) {
  Fleet fleet;
  fleet.scanned_at = fleet_detail::scan_time(options);
  // A name a command would misread ("-oProxyCommand=...") is never handed to it.
  std::vector<std::string_view> asked;
  asked.reserve(hosts.size());
  for (const auto& host : hosts) {
    if (const auto problem = host_name_problem(host)) fleet.warnings.push_back(text::cat(*problem, "; not asked"));
    else asked.push_back(host);
  }
  std::vector<FleetNode> nodes(asked.size());

  // Each running command holds about five descriptors (two pipes, a pidfd,
  // the ends being closed): more workers than the limit allows would turn
  // healthy nodes into "cannot create a pipe" failures.
  std::size_t by_descriptors = options.concurrency;
#if !defined(_WIN32)  // Windows has no such limit on handles
  if (rlimit limit{}; ::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    by_descriptors = std::max<std::size_t>(1, (static_cast<std::size_t>(limit.rlim_cur) > 64
                                                   ? static_cast<std::size_t>(limit.rlim_cur) - 64
                                                   : 8) / 6);
#endif
  fleet_detail::for_each_index(asked.size(), system.runs_instantly() ? 1 : std::min(options.concurrency, by_descriptors),
                               [&](std::size_t i) {
                                 nodes[i] = fleet_detail::run_node(system, std::string(asked[i]),
                                                                   command.argv_for(asked[i]), options, fleet.scanned_at);
                               });
  fleet.nodes = std::move(nodes);
  fleet_detail::settle_nodes(fleet);
  return fleet;
}

}  // namespace hwaccel
