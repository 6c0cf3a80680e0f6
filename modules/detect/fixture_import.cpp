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

#include <dirent.h>
#include <fcntl.h>
#include <simdjson.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json_input.hpp"
module hwaccel.detect;

#include "posix_file.hpp"

namespace hwaccel {

namespace {

// Pasted outputs are small; a bound keeps a wrong path (a disk image) out.
constexpr std::size_t max_import_file = std::size_t{64} << 20;
constexpr std::size_t max_import_entries = 200'000;

Result<std::string> read_whole(const std::string& path) {
  posix::FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    const ErrorKind kind = errno == ENOENT ? ErrorKind::not_found
                           : errno == EACCES ? ErrorKind::permission_denied
                                             : ErrorKind::io_error;
    return fail(kind, text::cat("cannot read ", path, ": ", std::strerror(errno)));
  }
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
    return fail(ErrorKind::not_regular_file, text::cat(path, " is not a regular file"));
  std::string data;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(ErrorKind::io_error, text::cat("cannot read ", path, ": ", std::strerror(errno)));
    }
    if (n == 0) break;
    if (data.size() + static_cast<std::size_t>(n) > max_import_file)
      return fail(ErrorKind::invalid_input, text::cat(path, " is larger than ", max_import_file >> 20, " MiB; not a pasted output"));
    data.append(buffer, static_cast<std::size_t>(n));
  }
  return data;
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

// "03-nvidia-smi.stdout": the same naming as `hwaccel capture`.
std::string output_file_name(std::size_t index, std::string_view tool, std::string_view stream) {
  std::string safe;
  for (const char c : tool) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    safe.push_back(plain ? c : '_');
  }
  return text::cat(index < 10 ? "0" : "", index, "-", safe, ".", stream);
}

Result<void> add_command(ImportedCapture& plan, ImportedCapture::Command cmd, std::string_view where) {
  if (cmd.argv.empty() || cmd.argv[0].empty())
    return fail(ErrorKind::invalid_input, text::cat(where, ": empty command"));
  cmd.argv[0] = tool_name(cmd.argv[0]);
  for (const auto& c : plan.commands)
    if (c.argv == cmd.argv) {
      plan.notes.push_back(text::cat(where, ": `", text::excerpt(cmd.argv[0]), " ...` appears twice; the first output is kept"));
      return {};
    }
  plan.commands.push_back(std::move(cmd));
  return {};
}

// ---- the manifest ----------------------------------------------------------

Result<std::string> optional_string(simdjson::dom::object obj, std::string_view key, std::string_view where) {
  simdjson::dom::element el;
  if (obj[key].get(el) != simdjson::SUCCESS) return std::string();
  std::string_view v;
  if (el.get_string().get(v) != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat(where, ": \"", key, "\" must be a string"));
  return std::string(v);
}

Result<ImportedCapture> plan_from_manifest(const std::string& path, std::string_view json) {
  const std::string base = parent_of(path);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (const auto err = json_input::parse(parser, json).get(doc); err != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat(path, " is not valid JSON: ", simdjson::error_message(err)));
  simdjson::dom::object root;
  if (doc.get_object().get(root) != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat(path, " must hold a JSON object"));
  ImportedCapture plan;
  auto machine = optional_string(root, "machine", path);
  if (!machine) return fail(machine.error());
  plan.machine = std::move(*machine);
  auto source = optional_string(root, "source", path);
  if (!source) return fail(source.error());
  plan.source = std::move(*source);

  simdjson::dom::element el;
  if (root["env"].get(el) == simdjson::SUCCESS) {
    simdjson::dom::object env;
    if (el.get_object().get(env) != simdjson::SUCCESS)
      return fail(ErrorKind::parse_error, text::cat(path, ": \"env\" must be an object of strings"));
    for (auto [k, v] : env) {
      std::string_view value;
      if (v.get_string().get(value) != simdjson::SUCCESS)
        return fail(ErrorKind::parse_error, text::cat(path, ": env \"", k, "\" must be a string"));
      plan.env.emplace(std::string(k), std::string(value));
    }
  }
  if (root["commands"].get(el) == simdjson::SUCCESS) {
    simdjson::dom::array commands;
    if (el.get_array().get(commands) != simdjson::SUCCESS)
      return fail(ErrorKind::parse_error, text::cat(path, ": \"commands\" must be an array"));
    std::size_t i = 0;
    for (auto c : commands) {
      const std::string where = text::cat(path, ": commands[", i++, "]");
      simdjson::dom::object obj;
      if (c.get_object().get(obj) != simdjson::SUCCESS) return fail(ErrorKind::parse_error, where + " must be an object");
      ImportedCapture::Command cmd;
      simdjson::dom::element argv;
      if (obj["argv"].get(argv) != simdjson::SUCCESS)
        return fail(ErrorKind::parse_error, where + ": missing \"argv\" (an array of words, or one command line)");
      if (std::string_view line; argv.get_string().get(line) == simdjson::SUCCESS) {
        auto words = split_command_line(line);
        if (!words) return fail(ErrorKind::parse_error, text::cat(where, ": \"argv\" has an unclosed quote"));
        cmd.argv = std::move(*words);
      } else if (simdjson::dom::array words; argv.get_array().get(words) == simdjson::SUCCESS) {
        for (auto w : words) {
          std::string_view word;
          if (w.get_string().get(word) != simdjson::SUCCESS)
            return fail(ErrorKind::parse_error, where + ": \"argv\" must hold strings");
          cmd.argv.emplace_back(word);
        }
      } else {
        return fail(ErrorKind::parse_error, where + ": \"argv\" must be an array of words or a command line");
      }
      auto out = optional_string(obj, "stdout", where);
      if (!out) return fail(out.error());
      if (out->empty()) return fail(ErrorKind::parse_error, where + ": missing \"stdout\" (the file holding the output)");
      auto text_out = read_whole(resolve(base, *out));
      if (!text_out) return fail(text_out.error());
      cmd.out = std::move(*text_out);
      auto err = optional_string(obj, "stderr", where);
      if (!err) return fail(err.error());
      if (!err->empty()) {
        auto text_err = read_whole(resolve(base, *err));
        if (!text_err) return fail(text_err.error());
        cmd.err = std::move(*text_err);
      }
      if (obj["exit"].get(el) == simdjson::SUCCESS) {
        std::int64_t code = 0;
        if (el.get_int64().get(code) != simdjson::SUCCESS || code < 0 || code > 255)
          return fail(ErrorKind::parse_error, where + ": \"exit\" must be an integer from 0 to 255");
        cmd.exit = static_cast<int>(code);
      }
      if (auto r = add_command(plan, std::move(cmd), where); !r) return fail(r.error());
    }
  }
  if (root["files"].get(el) == simdjson::SUCCESS) {
    simdjson::dom::array files;
    if (el.get_array().get(files) != simdjson::SUCCESS)
      return fail(ErrorKind::parse_error, text::cat(path, ": \"files\" must be an array"));
    std::size_t i = 0;
    for (auto f : files) {
      const std::string where = text::cat(path, ": files[", i++, "]");
      simdjson::dom::object obj;
      if (f.get_object().get(obj) != simdjson::SUCCESS) return fail(ErrorKind::parse_error, where + " must be an object");
      auto at = optional_string(obj, "path", where);
      if (!at) return fail(at.error());
      if (!machine_path(*at))
        return fail(ErrorKind::invalid_input,
                    text::cat(where, ": \"path\" must be an absolute path on the captured machine without \"..\""));
      auto from = optional_string(obj, "from", where);
      if (!from) return fail(from.error());
      if (from->empty()) return fail(ErrorKind::parse_error, where + ": missing \"from\" (the copied file or folder)");
      plan.copies.push_back({std::move(*at), resolve(base, *from)});
    }
  }
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
    if (argv.empty()) continue;
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

Result<void> copy_tree(const std::string& from, const std::string& to, std::size_t& entries) {
  if (++entries > max_import_entries)
    return fail(ErrorKind::invalid_input, text::cat("more than ", max_import_entries, " files to copy; not a capture"));
  struct stat st{};
  if (::lstat(from.c_str(), &st) != 0)
    return fail(errno == ENOENT ? ErrorKind::not_found : ErrorKind::io_error,
                text::cat("cannot read ", from, ": ", std::strerror(errno)));
  if (auto r = posix::make_dirs(parent_of(to)); !r) return r;
  if (S_ISLNK(st.st_mode)) {
    std::string target(4096, '\0');
    const ssize_t n = ::readlink(from.c_str(), target.data(), target.size());
    if (n < 0) return fail(ErrorKind::io_error, text::cat("cannot read the link ", from, ": ", std::strerror(errno)));
    target.resize(static_cast<std::size_t>(n));
    // Kept as it was: replay resolves it inside the fixture and refuses one
    // that leaves it.
    if (::symlink(target.c_str(), to.c_str()) != 0)
      return fail(ErrorKind::io_error, text::cat("cannot create the link ", to, ": ", std::strerror(errno)));
    return {};
  }
  if (S_ISDIR(st.st_mode)) {
    if (auto r = posix::make_dirs(to); !r) return r;
    DIR* dir = ::opendir(from.c_str());
    if (!dir) return fail(ErrorKind::io_error, text::cat("cannot list ", from, ": ", std::strerror(errno)));
    std::vector<std::string> names;
    while (const dirent* e = ::readdir(dir)) {
      const std::string_view name = e->d_name;
      if (name != "." && name != "..") names.emplace_back(name);
    }
    ::closedir(dir);
    std::sort(names.begin(), names.end());
    for (const auto& name : names)
      if (auto r = copy_tree(from + "/" + name, to + "/" + name, entries); !r) return r;
    return {};
  }
  if (!S_ISREG(st.st_mode)) return posix::write_all(to, {});  // a device node: its existence is what counts
  auto data = read_whole(from);
  if (!data) return fail(data.error());
  return posix::write_all(to, *data);
}

Result<ImportSummary> write_plan(ImportedCapture& plan, std::string_view out_dir, std::string_view machine) {
  auto fresh = posix::fresh_output_dir(out_dir);
  if (!fresh) return fail(fresh.error());
  const std::string dir = std::move(*fresh);
  if (auto r = posix::make_dirs(dir + "/root"); !r) return fail(r.error());
  if (auto r = posix::make_dirs(dir + "/commands"); !r) return fail(r.error());
  const std::string root = dir + "/root";

  ImportSummary summary;
  std::size_t entries = 0;
  for (const auto& c : plan.copies) {
    if (auto r = copy_tree(c.from, root + c.machine_path, entries); !r) return fail(r.error());
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
    rec.stdout_path = output_file_name(i, c.argv[0], "stdout");
    if (auto r = posix::write_all(dir + "/commands/" + rec.stdout_path, c.out); !r) return fail(r.error());
    if (c.err) {
      rec.stderr_path = output_file_name(i, c.argv[0], "stderr");
      if (auto r = posix::write_all(dir + "/commands/" + *rec.stderr_path, *c.err); !r) return fail(r.error());
    }
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
  std::string source(source_text);
  while (source.size() > 1 && source.back() == '/') source.pop_back();
  struct stat st{};
  if (::stat(source.c_str(), &st) != 0)
    return fail(errno == ENOENT ? ErrorKind::not_found : ErrorKind::io_error,
                text::cat("cannot read ", source, ": ", std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) source += "/import.json";
  auto content = read_whole(source);
  if (!content) return fail(content.error());
  const std::string_view head = text::trim(std::string_view(*content).substr(0, 64));
  // JSON is a manifest, whatever it holds; anything else is read as a transcript.
  const bool manifest = head.starts_with("{") || head.starts_with("[") || source.ends_with(".json");
  auto plan = manifest ? plan_from_manifest(source, *content) : parse_capture_transcript(*content, source);
  if (!plan) return fail(plan.error());
  return write_plan(*plan, out_dir, machine);
}

}  // namespace hwaccel
