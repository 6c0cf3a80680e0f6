// Machine text: its decoder into an in-memory System, and its encoder from a
// fixture folder (the seeds of the detector targets).
#include <algorithm>
#include <stdlib.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz_support.hpp"

import hwaccel;

#include "machine_text.hpp"

namespace hwaccel::fuzz {

namespace {

constexpr std::string_view record_keywords[] = {"file", "link", "dir",  "node",   "env",  "tool",
                                                "run",  "stderr", "exit", "signal", "hang"};
constexpr int max_link_hops = 40;

// A record line: "@keyword" alone, or followed by a space and its arguments.
std::optional<std::pair<std::string_view, std::string_view>> record_line(std::string_view line) {
  if (line.size() < 2 || line[0] != '@') return std::nullopt;
  line.remove_prefix(1);
  const std::size_t space = line.find(' ');
  const std::string_view keyword = line.substr(0, space);
  if (std::find(std::begin(record_keywords), std::end(record_keywords), keyword) == std::end(record_keywords))
    return std::nullopt;
  return std::pair{keyword, space == std::string_view::npos ? std::string_view{} : line.substr(space + 1)};
}

struct Record {
  std::string_view keyword;
  std::string_view args;
  std::string content;
};

// Splits machine text into its preamble and records. A record's content is
// everything up to the newline before the next record line; "@@" at the start
// of a content line stands for "@".
std::vector<Record> split_records(std::string_view text, std::string& preamble) {
  std::vector<Record> records;
  std::string* content = &preamble;
  auto close = [&] {
    if (!records.empty() && !content->empty() && content->back() == '\n') content->pop_back();
  };
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end == std::string_view::npos ? text.size() : end);
    const std::string_view with_newline = text.substr(0, end == std::string_view::npos ? text.size() : end + 1);
    text.remove_prefix(with_newline.size());
    if (const auto record = record_line(line)) {
      if (records.empty() && !preamble.empty() && preamble.back() == '\n') preamble.pop_back();
      close();
      records.push_back(Record{record->first, record->second, {}});
      content = &records.back().content;
      continue;
    }
    content->append(line.starts_with("@@") ? with_newline.substr(1) : with_newline);
  }
  close();
  return records;
}

// "/a//b/./c" -> "/a/b/c"; nullopt for a relative path or one with "..".
std::optional<std::string> normalise(std::string_view path) {
  if (path.empty() || path.front() != '/') return std::nullopt;
  std::string out;
  while (!path.empty()) {
    const std::string_view c = text::next_token(path, '/');
    if (c.empty() || c == ".") continue;
    if (c == "..") return std::nullopt;
    out += '/';
    out += c;
  }
  return out.empty() ? std::string("/") : out;
}

std::optional<FileType> special_type(std::string_view name) {
  if (name == "fifo") return FileType::fifo;
  if (name == "socket") return FileType::socket;
  if (name == "char") return FileType::char_device;
  if (name == "block") return FileType::block_device;
  return std::nullopt;
}

std::string_view special_name(FileType type) {
  switch (type) {
    case FileType::fifo: return "fifo";
    case FileType::socket: return "socket";
    case FileType::char_device: return "char";
    case FileType::block_device: return "block";
    default: return "";
  }
}

std::optional<int> small_int(std::string_view s) {
  const auto v = text::parse_i64(s);
  if (!v || *v < -1'000'000 || *v > 1'000'000) return std::nullopt;
  return static_cast<int>(*v);
}

}  // namespace

std::unique_ptr<MemorySystem> MemorySystem::decode(std::string_view text) {
  auto system = std::make_unique<MemorySystem>();
  const std::vector<Record> records = split_records(text, system->preamble_);
  Run* last_run = nullptr;
  for (const Record& r : records) {
    const std::size_t space = r.args.find(' ');
    const std::string_view first = r.args.substr(0, space);
    const std::string_view rest = space == std::string_view::npos ? std::string_view{} : r.args.substr(space + 1);
    if (r.keyword == "file") {
      system->add(first, Node{FileType::regular, r.content});
    } else if (r.keyword == "link") {
      system->add(first, Node{FileType::symlink, std::string(rest)});
    } else if (r.keyword == "dir") {
      system->add(first, Node{FileType::directory, {}});
    } else if (r.keyword == "node") {
      if (const auto type = special_type(rest)) system->add(first, Node{*type, {}});
    } else if (r.keyword == "env") {
      const std::size_t eq = r.args.find('=');
      if (eq != std::string_view::npos && eq > 0)
        system->env_.emplace(std::string(r.args.substr(0, eq)), std::string(r.args.substr(eq + 1)));
    } else if (r.keyword == "tool") {
      if (!r.args.empty() && r.args.find('/') == std::string_view::npos) system->tools_.emplace_back(r.args);
    } else if (r.keyword == "run") {
      Run run;
      std::string_view argv = r.args;
      while (!argv.empty()) run.argv.emplace_back(text::next_token(argv, ' '));
      if (run.argv.empty() || run.argv[0].empty() || run.argv[0].find('/') != std::string::npos) {
        last_run = nullptr;
        continue;
      }
      run.out = r.content;
      system->tools_.push_back(run.argv[0]);
      system->runs_.push_back(std::move(run));
      last_run = &system->runs_.back();
    } else if (last_run) {
      if (r.keyword == "stderr") last_run->err = r.content;
      else if (r.keyword == "exit") last_run->exit = small_int(r.args).value_or(0);
      else if (r.keyword == "signal") last_run->signal = small_int(r.args);
      else if (r.keyword == "hang") last_run->hang = true;
    }
  }
  return system;
}

void MemorySystem::add(std::string_view raw_path, Node node) {
  const auto path = normalise(raw_path);
  if (!path || *path == "/") return;
  // Every parent must be (or become) a folder; a record under a file or a
  // link is dropped, as is a second record for the same path.
  for (std::size_t slash = path->find('/', 1); slash != std::string::npos; slash = path->find('/', slash + 1)) {
    const auto [it, inserted] = nodes_.try_emplace(path->substr(0, slash), Node{});
    if (!inserted && it->second.type != FileType::directory) return;
  }
  nodes_.try_emplace(*path, std::move(node));
}

Result<std::string> MemorySystem::resolve(std::string_view path, bool follow_last) const {
  if (path.empty() || path.front() != '/')
    return fail(ErrorKind::invalid_input, text::cat("path \"", text::excerpt(path), "\" is not absolute"));
  std::vector<std::string> resolved;
  std::vector<std::string> pending;  // back() is the next component
  auto push_components = [&pending](std::string_view p) {
    std::vector<std::string> parts;
    while (!p.empty())
      if (const std::string_view c = text::next_token(p, '/'); !c.empty() && c != ".") parts.emplace_back(c);
    pending.insert(pending.end(), std::make_move_iterator(parts.rbegin()), std::make_move_iterator(parts.rend()));
  };
  push_components(path);
  int hops = 0;
  std::string key;
  while (!pending.empty()) {
    std::string component = std::move(pending.back());
    pending.pop_back();
    if (component == "..") {
      if (!resolved.empty()) resolved.pop_back();
      continue;
    }
    resolved.push_back(std::move(component));
    key.clear();
    for (const auto& c : resolved) key += "/" + c;
    const auto it = nodes_.find(key);
    if (it == nodes_.end()) return fail(ErrorKind::not_found, text::cat(path, ": no such file or directory"));
    const bool last = pending.empty();
    if (it->second.type == FileType::symlink && (!last || follow_last)) {
      if (++hops > max_link_hops) return fail(ErrorKind::symlink_loop, text::cat(path, ": too many levels of symbolic links"));
      resolved.pop_back();
      if (!it->second.content.empty() && it->second.content.front() == '/') resolved.clear();
      push_components(it->second.content);
      continue;
    }
    if (!last && it->second.type != FileType::directory)
      return fail(ErrorKind::not_found, text::cat(path, ": a component is not a directory"));
  }
  key.clear();
  for (const auto& c : resolved) key += "/" + c;
  return key.empty() ? std::string("/") : key;
}

Result<FileContent> MemorySystem::read_file(std::string_view path, std::size_t max_bytes) const {
  const auto key = resolve(path, true);
  if (!key) return fail(key.error());
  const auto it = nodes_.find(*key);
  if (it == nodes_.end() || it->second.type == FileType::directory)
    return fail(ErrorKind::io_error, text::cat("cannot read ", path, ": it is a directory"));
  if (it->second.type != FileType::regular)
    return fail(ErrorKind::not_regular_file, text::cat("refusing to read ", path, ": not a regular file"));
  FileContent content;
  content.truncated = it->second.content.size() > max_bytes;
  content.data = it->second.content.substr(0, max_bytes);
  return content;
}

Result<std::vector<DirEntry>> MemorySystem::list_dir(std::string_view path) const {
  const auto key = resolve(path, true);
  if (!key) return fail(key.error());
  if (const auto it = nodes_.find(*key); it != nodes_.end() && it->second.type != FileType::directory)
    return fail(ErrorKind::not_found, text::cat("cannot list ", path, ": not a directory"));
  const std::string prefix = *key == "/" ? std::string("/") : *key + "/";
  std::vector<DirEntry> entries;
  for (auto it = nodes_.lower_bound(prefix); it != nodes_.end() && it->first.starts_with(prefix); ++it) {
    const std::string_view name = std::string_view(it->first).substr(prefix.size());
    if (!name.empty() && name.find('/') == std::string_view::npos) entries.push_back(DirEntry{std::string(name), it->second.type});
  }
  return entries;
}

Result<std::string> MemorySystem::read_link(std::string_view path) const {
  const auto key = resolve(path, false);
  if (!key) return fail(key.error());
  const auto it = nodes_.find(*key);
  if (it == nodes_.end() || it->second.type != FileType::symlink)
    return fail(ErrorKind::invalid_input, text::cat("cannot read link ", path, ": not a symbolic link"));
  return it->second.content;
}

Result<FileStatus> MemorySystem::status(std::string_view path, bool follow) const {
  const auto key = resolve(path, follow);
  if (!key) return fail(key.error());
  const auto it = nodes_.find(*key);
  if (it == nodes_.end()) return FileStatus{FileType::directory, 0, 0755};
  return FileStatus{it->second.type, it->second.content.size(), it->second.type == FileType::directory ? 0755u : 0644u};
}

std::optional<std::string> MemorySystem::env(std::string_view name) const {
  const auto it = env_.find(name);
  if (it == env_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> MemorySystem::find_tool(std::string_view name) const {
  if (name.empty() || name.find('/') != std::string_view::npos) return std::nullopt;
  if (preamble_.empty() && std::find(tools_.begin(), tools_.end(), name) == tools_.end()) return std::nullopt;
  return text::cat("/usr/bin/", name);
}

Result<ToolResult> MemorySystem::run(const ToolRequest& request) const {
  if (request.argv.empty()) return fail(ErrorKind::invalid_input, "empty command line");
  if (!find_tool(request.argv[0]))
    return fail(ErrorKind::tool_not_found, text::cat(request.argv[0], ": not found on PATH (or not executable)"));
  const auto it = std::find_if(runs_.begin(), runs_.end(), [&](const Run& r) { return r.argv == request.argv; });
  ToolResult result;
  if (it == runs_.end()) {
    if (preamble_.empty()) return fail(ErrorKind::not_captured, text::cat(request.argv[0], ": not captured"));
    result.out_truncated = preamble_.size() > request.max_output_bytes;
    result.out = preamble_.substr(0, request.max_output_bytes);
    return result;
  }
  if (it->hang)
    return fail(ErrorKind::timeout,
                text::cat(request.argv[0], ": no answer within ", request.timeout.count(), " ms; its process group was killed"));
  result.out_truncated = it->out.size() > request.max_output_bytes;
  result.out = it->out.substr(0, request.max_output_bytes);
  result.err_truncated = it->err.size() > request.max_output_bytes;
  result.err = it->err.substr(0, request.max_output_bytes);
  result.exit_code = it->exit;
  result.signal = it->signal;
  return result;
}

// ---- encoder -------------------------------------------------------------------

namespace {

bool representable(std::string_view s) {
  return s.find_first_of(" \n") == std::string_view::npos && !s.empty();
}

void append_content(std::string& out, std::string_view content) {
  while (!content.empty()) {
    const std::size_t end = content.find('\n');
    const std::string_view line = content.substr(0, end == std::string_view::npos ? content.size() : end + 1);
    if (line.front() == '@') out += '@';
    out.append(line);
    content.remove_prefix(line.size());
  }
  out += '\n';
}

void pack_tree(const System& system, const std::string& dir, std::string& out) {
  const auto entries = system.list_dir(dir.empty() ? "/" : dir);
  if (!entries) return;
  if (entries->empty() && !dir.empty()) out += text::cat("@dir ", dir, "\n");
  for (const auto& e : *entries) {
    if (!representable(e.name)) continue;
    const std::string path = dir + "/" + e.name;
    switch (e.type) {
      case FileType::directory: pack_tree(system, path, out); break;
      case FileType::symlink:
        if (const auto target = system.read_link(path); target && target->find('\n') == std::string::npos)
          out += text::cat("@link ", path, " ", *target, "\n");
        break;
      case FileType::regular:
        if (const auto content = system.read_file(path, std::size_t{16} << 20)) {
          out += text::cat("@file ", path, "\n");
          append_content(out, content->data);
        }
        break;
      default:
        if (const auto name = special_name(e.type); !name.empty()) out += text::cat("@node ", path, " ", name, "\n");
        break;
    }
  }
}

}  // namespace

std::string pack_fixture(const std::filesystem::path& fixture_dir) {
  auto fixture = FixtureSystem::open(fixture_dir.string());
  if (!fixture) throw std::runtime_error(fixture.error().message);
  const FixtureSystem& system = **fixture;
  std::string out;
  pack_tree(system, "", out);
  const FixtureManifest& manifest = system.manifest();
  for (const auto& [name, value] : manifest.env)
    if (name.find_first_of("=\n") == std::string::npos && value.find('\n') == std::string::npos)
      out += text::cat("@env ", name, "=", value, "\n");
  for (const auto& tool : manifest.tools) {
    const bool has_runs = std::any_of(manifest.commands.begin(), manifest.commands.end(),
                                      [&](const CommandRecord& c) { return c.argv[0] == tool; });
    if (!has_runs && representable(tool)) out += text::cat("@tool ", tool, "\n");
  }
  for (const auto& command : manifest.commands) {
    if (!std::all_of(command.argv.begin(), command.argv.end(), representable)) continue;
    ToolRequest request;
    request.argv = command.argv;
    request.max_output_bytes = std::size_t{64} << 20;
    const auto result = system.run(request);
    if (!result && result.error().kind != ErrorKind::timeout) continue;
    std::string argv;
    for (const auto& a : command.argv) argv += (argv.empty() ? "" : " ") + a;
    out += text::cat("@run ", argv, "\n");
    if (!result) {
      out += "\n@hang\n";
      continue;
    }
    append_content(out, result->out);
    if (!result->err.empty()) {
      out += "@stderr\n";
      append_content(out, result->err);
    }
    if (result->exit_code != 0) out += text::cat("@exit ", result->exit_code, "\n");
    if (result->signal) out += text::cat("@signal ", *result->signal, "\n");
  }
  return out;
}

namespace {

// The detection the detector targets run: `backends` alone, or "probes" for
// the host probes alone.
std::optional<DetectBuilder> target_builder(std::string_view backends) {
  DetectBuilder builder = DetectBuilder::none();
  if (backends == "probes") {
    builder.system_probes(true);
  } else {
    builder.system_probes(false);
    if (!builder.select(backends)) return std::nullopt;
  }
  return builder;
}

}  // namespace

std::string detect_machine_text(std::string_view machine_text, std::string_view backends) {
  const auto system = MemorySystem::decode(machine_text);
  const auto builder = target_builder(backends);
  if (!builder) return {};
  JsonOptions options;
  options.pretty = true;
  options.include_timings = false;
  return to_json(builder->detect(*system), options);
}

std::string pack_detection_reads(const std::filesystem::path& fixture_dir, std::string_view backends) {
  // Nothing preloaded: the detection reads a small part of the tree.
  FixtureOptions lazy;
  lazy.preload_file_bytes = 0;
  auto fixture = FixtureSystem::open(fixture_dir.string(), lazy);
  if (!fixture) throw std::runtime_error(fixture.error().message);
  const auto builder = target_builder(backends);
  if (!builder) throw std::runtime_error(text::cat("unknown backend list \"", backends, "\""));
  RecordingSystem recording(**fixture);
  (void)builder->detect(recording);
  std::string scratch = (std::filesystem::temp_directory_path() / "hwaccel-fuzz-XXXXXX").string();
  if (!::mkdtemp(scratch.data())) throw std::runtime_error("cannot create a scratch folder");
  std::string packed;
  if (auto written = recording.write(scratch + "/fixture", "recorded", "recorded"); written) packed = pack_fixture(scratch + "/fixture");
  std::error_code ec;
  std::filesystem::remove_all(scratch, ec);
  return packed;
}

}  // namespace hwaccel::fuzz
