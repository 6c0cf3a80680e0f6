// Importing pasted tool outputs as a fixture: an import manifest (a JSON file
// naming each output file's command, and the files and folders copied from
// the machine) or a terminal transcript ("$ command" lines, each followed by
// what the command printed). Either becomes a fixture folder that
// `hwaccel detect --fixture` replays: only what was pasted is in it, so every
// other command a detector asks for answers "not captured".
module;
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <simdjson.h>
#include <sys/stat.h>
#include <unistd.h>
#include "posix_compat.hpp"
#if defined(_WIN32)
#include <filesystem>  // posix_file.hpp's folders
#endif

#include "json_input.hpp"
module hwaccel.detect;

#include "manifest_json.hpp"
#include "posix_file.hpp"

namespace hwaccel {

namespace {

// Pasted outputs are small; a bound keeps a wrong path (a disk image) out.
constexpr std::size_t max_import_file = std::size_t{64} << 20;
constexpr std::size_t max_import_entries = 200'000;

// Pasted files are read as the live System reads any file: regular files
// only, with a cap (a wrong path to a disk image must not be slurped).
Result<std::string> read_whole(const System& files, const std::string& path) {
  auto content = files.read_file(path, max_import_file);
  if (!content) return fail(content.error());
  if (content->truncated)
    return fail(ErrorKind::invalid_input, text::cat(path, " is larger than ", max_import_file >> 20, " MiB; not a pasted output"));
  return std::move(content->data);
}

std::string parent_of(std::string_view path) {
  const auto slash = path.rfind('/');
  if (slash == std::string_view::npos) return ".";
  return slash == 0 ? std::string("/") : std::string(path.substr(0, slash));
}

std::string resolve(std::string_view base, std::string_view path) {
  if (!path.empty() && path.front() == '/') return std::string(path);
  return text::cat(base, "/", path);
}

// A path on the captured machine: absolute, no "..", no NUL.
bool machine_path(std::string_view p) {
  if (p.empty() || p.front() != '/' || p.find('\0') != std::string_view::npos) return false;
  std::string_view rest = p;
  while (!rest.empty())
    if (text::next_token(rest, '/') == "..") return false;
  return true;
}

/// Splits a command line into words as a POSIX shell would for plain words,
/// single and double quotes and backslashes; nullopt when a quote is left
/// open. Expansions ($VAR, globs) are not performed: a paste shows the words
/// as typed.
std::optional<std::vector<std::string>> split_command_line(std::string_view line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '\'') {
      const auto close = line.find('\'', i + 1);
      if (close == std::string_view::npos) return std::nullopt;
      word.append(line.substr(i + 1, close - i - 1));
      in_word = true;
      i = close;
    } else if (c == '"') {
      std::size_t j = i + 1;
      for (; j < line.size() && line[j] != '"'; ++j) {
        if (line[j] == '\\' && j + 1 < line.size() && std::string_view("\"\\$`").find(line[j + 1]) != std::string_view::npos) ++j;
        word.push_back(line[j]);
      }
      if (j >= line.size()) return std::nullopt;
      in_word = true;
      i = j;
    } else if (c == '\\' && i + 1 < line.size()) {
      word.push_back(line[++i]);
      in_word = true;
    } else if (text::is_space(c)) {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word.push_back(c);
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

// Shell syntax that makes a line more than one tool's run: its output is not
// what the tool alone prints.
bool has_shell_operators(std::string_view line) {
  bool single = false, dbl = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '\\' && !single) {
      ++i;
      continue;
    }
    if (c == '\'' && !dbl) single = !single;
    else if (c == '"' && !single) dbl = !dbl;
    else if (!single && !dbl && std::string_view("|;&<>`").find(c) != std::string_view::npos) return true;
    else if (!single && c == '$' && i + 1 < line.size() && line[i + 1] == '(') return true;
  }
  return false;
}

std::string tool_name(std::string_view argv0) {
  const auto slash = argv0.rfind('/');
  return std::string(slash == std::string_view::npos ? argv0 : argv0.substr(slash + 1));
}

Result<void> add_command(ImportedCapture& plan, ImportedCapture::Command cmd, std::string_view where) {
  if (!cmd.argv.empty()) cmd.argv[0] = tool_name(cmd.argv[0]);
  if (cmd.argv.empty() || cmd.argv[0].empty())
    return fail(ErrorKind::invalid_input, text::cat(where, ": empty command (no tool name)"));
  for (const auto& c : plan.commands)
    if (c.argv == cmd.argv) {
      plan.notes.push_back(text::cat(where, ": `", text::excerpt(cmd.argv[0]), " ...` appears twice; the first output is kept"));
      return {};
    }
  plan.commands.push_back(std::move(cmd));
  return {};
}

// ---- the manifest ----------------------------------------------------------

Result<ImportedCapture> plan_from_manifest(const System& files, const std::string& path, std::string_view json) {
  const std::string base = parent_of(path);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (const auto err = json_input::parse(parser, json).get(doc); err != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat(path, " is not valid JSON: ", simdjson::error_message(err)));
  simdjson::dom::object root;
  if (doc.get_object().get(root) != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat(path, " must hold a JSON object"));
  ImportedCapture plan;
  auto machine = manifest_json::string_field(root, "machine", path, false);
  if (!machine) return fail(machine.error());
  plan.machine = std::move(*machine);
  auto source = manifest_json::string_field(root, "source", path, false);
  if (!source) return fail(source.error());
  plan.source = std::move(*source);
  if (auto r = manifest_json::string_map_field(root, "env", path, plan.env); !r) return fail(r.error());

  const auto command = [&](simdjson::dom::object obj, std::string_view where) -> Result<void> {
    ImportedCapture::Command cmd;
    simdjson::dom::element argv;
    if (obj["argv"].get(argv) != simdjson::SUCCESS)
      return fail(ErrorKind::parse_error, text::cat(where, ": missing \"argv\" (an array of words, or one command line)"));
    if (std::string_view line; argv.get_string().get(line) == simdjson::SUCCESS) {
      auto words = split_command_line(line);
      if (!words) return fail(ErrorKind::parse_error, text::cat(where, ": \"argv\" has an unclosed quote"));
      cmd.argv = std::move(*words);
    } else if (simdjson::dom::array words; argv.get_array().get(words) == simdjson::SUCCESS) {
      for (auto w : words) {
        std::string_view word;
        if (w.get_string().get(word) != simdjson::SUCCESS)
          return fail(ErrorKind::parse_error, text::cat(where, ": \"argv\" must hold strings"));
        cmd.argv.emplace_back(word);
      }
    } else {
      return fail(ErrorKind::parse_error, text::cat(where, ": \"argv\" must be an array of words or a command line"));
    }
    auto out = manifest_json::string_field(obj, "stdout", where, false);
    if (!out) return fail(out.error());
    if (out->empty())
      return fail(ErrorKind::parse_error, text::cat(where, ": missing \"stdout\" (the file holding the output)"));
    auto text_out = read_whole(files, resolve(base, *out));
    if (!text_out) return fail(text_out.error());
    cmd.out = std::move(*text_out);
    auto err = manifest_json::string_field(obj, "stderr", where, false);
    if (!err) return fail(err.error());
    if (!err->empty()) {
      auto text_err = read_whole(files, resolve(base, *err));
      if (!text_err) return fail(text_err.error());
      cmd.err = std::move(*text_err);
    }
    if (simdjson::dom::element el; obj["exit"].get(el) == simdjson::SUCCESS) {
      std::int64_t code = 0;
      if (el.get_int64().get(code) != simdjson::SUCCESS || code < 0 || code > 255)
        return fail(ErrorKind::parse_error, text::cat(where, ": \"exit\" must be an integer from 0 to 255"));
      cmd.exit = static_cast<int>(code);
    }
    return add_command(plan, std::move(cmd), where);
  };
  if (auto r = manifest_json::for_each_object(root, "commands", path, command); !r) return fail(r.error());

  const auto file = [&](simdjson::dom::object obj, std::string_view where) -> Result<void> {
    auto at = manifest_json::string_field(obj, "path", where, false);
    if (!at) return fail(at.error());
    if (!machine_path(*at))
      return fail(ErrorKind::invalid_input,
                  text::cat(where, ": \"path\" must be an absolute path on the captured machine without \"..\""));
    auto from = manifest_json::string_field(obj, "from", where, false);
    if (!from) return fail(from.error());
    if (from->empty())
      return fail(ErrorKind::parse_error, text::cat(where, ": missing \"from\" (the copied file or folder)"));
    plan.copies.push_back({std::move(*at), resolve(base, *from)});
    return {};
  };
  if (auto r = manifest_json::for_each_object(root, "files", path, file); !r) return fail(r.error());
  if (plan.commands.empty() && plan.copies.empty())
    return fail(ErrorKind::invalid_input, text::cat(path, " names no command output and no file: nothing to import"));
  return plan;
}

// ---- the transcript --------------------------------------------------------

// The command of a prompt line: "$ nvidia-smi -L" -> "nvidia-smi -L". A root
// prompt "# " is not taken: in a paste it is far more often a comment.
std::optional<std::string_view> prompt_command(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (!line.starts_with("$ ")) return std::nullopt;
  return text::trim(line.substr(2));
}

}  // namespace

Result<ImportedCapture> parse_capture_transcript(std::string_view text, std::string_view path) {
  ImportedCapture plan;
  struct Block {
    std::string_view command;
    std::size_t line = 0;
    std::string output;
  };
  std::vector<Block> blocks;
  std::size_t number = 0;
  std::string_view rest = text;
  while (!rest.empty()) {
    const bool last_has_newline = rest.find('\n') != std::string_view::npos;
    const std::string_view line = text::next_line(rest);
    ++number;
    if (const auto cmd = prompt_command(line)) {
      blocks.push_back({*cmd, number, {}});
      continue;
    }
    if (blocks.empty()) continue;  // text before the first prompt: the reporter's words
    blocks.back().output.append(line);
    if (last_has_newline) blocks.back().output.push_back('\n');
  }
  if (blocks.empty())
    return fail(ErrorKind::parse_error,
                text::cat(path, " has no command line: a transcript gives each command on a line of its own starting "
                                "with \"$ \", followed by its output"));
  for (auto& b : blocks) {
    const std::string where = text::cat(path, ":", b.line);
    if (b.command.empty()) continue;
    if (has_shell_operators(b.command)) {
      plan.notes.push_back(text::cat(where, ": `", text::excerpt(b.command, 60),
                                     "` is a pipeline or redirection, not one tool's output; left out"));
      continue;
    }
    auto words = split_command_line(b.command);
    if (!words || words->empty()) {
      plan.notes.push_back(text::cat(where, ": `", text::excerpt(b.command, 60), "` cannot be split into words; left out"));
      continue;
    }
    std::vector<std::string>& argv = *words;
    if (argv[0] == "sudo") argv.erase(argv.begin());
    if (argv.empty() || tool_name(argv[0]).empty()) {
      plan.notes.push_back(text::cat(where, ": `", text::excerpt(b.command, 60), "` names no tool; left out"));
      continue;
    }
    // `cat FILE` shows a file of the machine: it becomes that file.
    if (tool_name(argv[0]) == "cat") {
      if (argv.size() == 2 && machine_path(argv[1])) plan.contents[argv[1]] = std::move(b.output);
      else plan.notes.push_back(text::cat(where, ": `", text::excerpt(b.command, 60),
                                          "` names no single absolute file; left out"));
      continue;
    }
    ImportedCapture::Command cmd;
    cmd.argv = std::move(argv);
    cmd.out = std::move(b.output);
    if (auto r = add_command(plan, std::move(cmd), where); !r) return fail(r.error());
  }
  if (plan.commands.empty() && plan.contents.empty())
    return fail(ErrorKind::invalid_input, text::cat(path, " holds no command output that can be replayed"));
  plan.source = text::cat("imported from the transcript ", path);
  return plan;
}

namespace {

// ---- writing ---------------------------------------------------------------

Result<void> copy_tree(const System& files, const std::string& from, const std::string& to, std::size_t& entries) {
  if (++entries > max_import_entries)
    return fail(ErrorKind::invalid_input, text::cat("more than ", max_import_entries, " files to copy; not a capture"));
  const auto status = files.status(from, false);
  if (!status) return fail(status.error());
  if (auto r = posix::make_dirs(parent_of(to)); !r) return r;
  switch (status->type) {
    case FileType::symlink: {
      // Kept as it was: replay resolves it inside the fixture and refuses one
      // that leaves it.
      const auto target = files.read_link(from);
      if (!target) return fail(target.error());
      if (::symlink(target->c_str(), to.c_str()) != 0)
        return fail(ErrorKind::io_error, text::cat("cannot create the link ", to, ": ", std::strerror(errno)));
      return {};
    }
    case FileType::directory: {
      if (auto r = posix::make_dirs(to); !r) return r;
      auto listing = files.list_dir(from);
      if (!listing) return fail(listing.error());
      std::sort(listing->begin(), listing->end(), [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
      for (const auto& e : *listing)
        if (auto r = copy_tree(files, from + "/" + e.name, to + "/" + e.name, entries); !r) return r;
      return {};
    }
    case FileType::regular: {
      auto data = read_whole(files, from);
      if (!data) return fail(data.error());
      return posix::write_all(to, *data);
    }
    default:
      return posix::write_all(to, {});  // a device node: its existence is what counts
  }
}

Result<ImportSummary> write_plan(const System& files, ImportedCapture& plan, std::string_view out_dir,
                                 std::string_view machine) {
  auto fresh = posix::fresh_output_dir(out_dir);
  if (!fresh) return fail(fresh.error());
  const std::string dir = std::move(*fresh);
  if (auto r = posix::make_dirs(dir + "/root"); !r) return fail(r.error());
  if (auto r = posix::make_dirs(dir + "/commands"); !r) return fail(r.error());
  const std::string root = dir + "/root";

  ImportSummary summary;
  std::size_t entries = 0;
  for (const auto& c : plan.copies) {
    if (auto r = copy_tree(files, c.from, root + c.machine_path, entries); !r) return fail(r.error());
    ++summary.files;
  }
  for (const auto& [at, content] : plan.contents) {
    if (auto r = posix::make_dirs(root + parent_of(at)); !r) return fail(r.error());
    if (auto r = posix::write_all(root + at, content); !r) return fail(r.error());
    ++summary.files;
  }

  FixtureManifest manifest;
  manifest.machine = !machine.empty() ? std::string(machine)
                     : !plan.machine.empty() ? plan.machine
                                             : std::string("imported from pasted tool outputs");
  manifest.source = plan.source.empty() ? std::string("imported from pasted tool outputs") : plan.source;
  // Pasted outputs are real captures, but nothing vouches that they are whole.
  manifest.synthetic = false;
  manifest.env = plan.env;
  std::set<std::string> tools;
  for (std::size_t i = 0; i < plan.commands.size(); ++i) {
    const auto& c = plan.commands[i];
    CommandRecord rec;
    rec.argv = c.argv;
    rec.exit = c.exit;
    if (auto r = posix::write_command_outputs(dir, i, rec, c.out, c.err ? std::string_view(*c.err) : std::string_view{}); !r)
      return fail(r.error());
    tools.insert(c.argv[0]);
    manifest.commands.push_back(std::move(rec));
  }
  manifest.tools.assign(tools.begin(), tools.end());
  summary.commands = manifest.commands.size();
  summary.notes = std::move(plan.notes);
  if (auto r = posix::write_all(dir + "/fixture.json", write_fixture_manifest(manifest)); !r) return fail(r.error());
  // The result must replay: a manifest this code wrote that the reader
  // refuses is a bug to report now, not at the user's next step.
  if (auto reopened = FixtureSystem::open(dir); !reopened)
    return fail(ErrorKind::invalid_input, text::cat("the imported fixture does not replay: ", reopened.error().message));
  return summary;
}

}  // namespace

Result<ImportSummary> import_capture(std::string_view source_text, std::string_view out_dir, std::string_view machine) {
  const auto files = make_live_system();
  std::string source(source_text);
  while (source.size() > 1 && source.back() == '/') source.pop_back();
  const auto status = files->status(source);
  if (!status) return fail(status.error());
  if (status->type == FileType::directory) source += "/import.json";
  auto content = read_whole(*files, source);
  if (!content) return fail(content.error());
  const std::string_view head = text::trim(std::string_view(*content).substr(0, 64));
  // JSON is a manifest, whatever it holds; anything else is read as a transcript.
  const bool manifest = head.starts_with("{") || head.starts_with("[") || source.ends_with(".json");
  auto plan = manifest ? plan_from_manifest(*files, source, *content) : parse_capture_transcript(*content, source);
  if (!plan) return fail(plan.error());
  return write_plan(*files, *plan, out_dir, machine);
}

}  // namespace hwaccel
