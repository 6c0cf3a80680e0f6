// fixture.json, a fixture folder's manifest (docs/fixtures.md): read with
// every field checked, and written canonically (`hwaccel capture`).
module;
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <simdjson.h>
#include "json_input.hpp"
module hwaccel.detect;

#include "manifest_json.hpp"

namespace hwaccel {

namespace {

// A path under commands/: relative, no ".." component, no NUL.
bool safe_relative_path(std::string_view p) {
  if (p.empty() || p.front() == '/' || p.find('\0') != std::string_view::npos) return false;
  for (std::size_t start = 0; start <= p.size();) {
    const std::size_t slash = std::min(p.find('/', start), p.size());
    if (p.substr(start, slash - start) == "..") return false;
    start = slash + 1;
  }
  return true;
}

}  // namespace

Result<FixtureManifest> parse_fixture_manifest(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (const auto err = json_input::parse(parser, json).get(doc); err != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, text::cat("fixture.json is not valid JSON: ", simdjson::error_message(err)));
  simdjson::dom::object root;
  if (doc.get_object().get(root) != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, "fixture.json must be a JSON object");

  FixtureManifest m;
  std::int64_t format = 0;
  if (root["format"].get_int64().get(format) != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, "fixture.json: missing or non-integer field \"format\"");
  if (format != 1)
    return fail(ErrorKind::parse_error, text::cat("fixture.json: unsupported format ", format, " (this version reads format 1)"));
  m.format = 1;
  auto machine = manifest_json::string_field(root, "machine", "fixture.json", true);
  if (!machine) return fail(machine.error());
  m.machine = std::move(*machine);
  auto source = manifest_json::string_field(root, "source", "fixture.json", true);
  if (!source) return fail(source.error());
  m.source = std::move(*source);
  if (root["synthetic"].get_bool().get(m.synthetic) != simdjson::SUCCESS)
    return fail(ErrorKind::parse_error, "fixture.json: missing or non-boolean field \"synthetic\"");

  simdjson::dom::element el;
  if (auto r = manifest_json::string_map_field(root, "env", "fixture.json", m.env); !r) return fail(r.error());
  if (root["tools"].get(el) == simdjson::SUCCESS) {
    simdjson::dom::array tools;
    if (el.get_array().get(tools) != simdjson::SUCCESS)
      return fail(ErrorKind::parse_error, "fixture.json: \"tools\" must be an array of strings");
    for (auto t : tools) {
      std::string_view name;
      if (t.get_string().get(name) != simdjson::SUCCESS || name.empty() || name.find('/') != std::string_view::npos)
        return fail(ErrorKind::parse_error, "fixture.json: every entry of \"tools\" must be a bare tool name");
      m.tools.emplace_back(name);
    }
  }
  const auto command = [&](simdjson::dom::object cmd, std::string_view where) -> Result<void> {
    simdjson::dom::element el;
    CommandRecord rec;
    simdjson::dom::array argv;
    if (cmd["argv"].get_array().get(argv) != simdjson::SUCCESS)
      return fail(ErrorKind::parse_error, text::cat(where, ": missing array field \"argv\""));
    for (auto a : argv) {
      std::string_view arg;
      if (a.get_string().get(arg) != simdjson::SUCCESS)
        return fail(ErrorKind::parse_error, text::cat(where, ": \"argv\" must hold strings"));
      rec.argv.emplace_back(arg);
    }
    if (rec.argv.empty() || rec.argv[0].find('/') != std::string::npos)
      return fail(ErrorKind::parse_error, text::cat(where, ": argv[0] must be a bare tool name"));
    auto out = manifest_json::string_field(cmd, "stdout", where, true);
    if (!out) return fail(out.error());
    if (!safe_relative_path(*out))
      return fail(ErrorKind::escapes_root, text::cat(where, ": stdout path \"", text::excerpt(*out), "\" leaves commands/"));
    rec.stdout_path = std::move(*out);
    if (cmd["stderr"].get(el) == simdjson::SUCCESS) {
      std::string_view p;
      if (el.get_string().get(p) != simdjson::SUCCESS || !safe_relative_path(p))
        return fail(ErrorKind::parse_error, text::cat(where, ": \"stderr\" must be a relative path under commands/"));
      rec.stderr_path = std::string(p);
    }
    std::int64_t exit_code = 0;
    if (cmd["exit"].get_int64().get(exit_code) != simdjson::SUCCESS || exit_code < 0 || exit_code > 255)
      return fail(ErrorKind::parse_error, text::cat(where, ": missing integer field \"exit\" (0-255)"));
    rec.exit = static_cast<int>(exit_code);
    if (cmd["signal"].get(el) == simdjson::SUCCESS) {
      std::int64_t sig = 0;
      if (el.get_int64().get(sig) != simdjson::SUCCESS || sig <= 0 || sig > 64)
        return fail(ErrorKind::parse_error, text::cat(where, ": \"signal\" must be a signal number"));
      rec.signal = static_cast<int>(sig);
    }
    if (cmd["duration_ms"].get(el) == simdjson::SUCCESS) {
      std::int64_t ms = 0;
      if (el.get_int64().get(ms) != simdjson::SUCCESS || ms < 0 || ms > 3'600'000)
        return fail(ErrorKind::parse_error, text::cat(where, ": \"duration_ms\" must be an integer between 0 and 3600000"));
      rec.duration_ms = static_cast<std::uint32_t>(ms);
    }
    if (cmd["hang"].get(el) == simdjson::SUCCESS && el.get_bool().get(rec.hang) != simdjson::SUCCESS)
      return fail(ErrorKind::parse_error, text::cat(where, ": \"hang\" must be a boolean"));
    m.commands.push_back(std::move(rec));
    return {};
  };
  if (auto r = manifest_json::for_each_object(root, "commands", "fixture.json", command); !r) return fail(r.error());

  // An id: a JSON integer in 0 .. 2^32-2 (2^32-1 is "no id"). It takes the lookup's result, not
  // an element where it is a lookup: converting a missing key's result to an element throws.
  const auto id_of = [](auto e, std::uint32_t& out) {
    std::uint64_t v = 0;
    if (e.get_uint64().get(v) != simdjson::SUCCESS || v >= 0xffffffffull) return false;
    out = static_cast<std::uint32_t>(v);
    return true;
  };
  if (root["identity"].get(el) == simdjson::SUCCESS) {
    simdjson::dom::object id;
    ProcessIdentity identity;
    simdjson::dom::array groups;
    if (el.get_object().get(id) != simdjson::SUCCESS || !id_of(id["uid"], identity.uid) || !id_of(id["gid"], identity.gid))
      return fail(ErrorKind::parse_error, "fixture.json: \"identity\" must be an object with integer \"uid\" and \"gid\"");
    if (id["groups"].get(el) == simdjson::SUCCESS) {
      if (el.get_array().get(groups) != simdjson::SUCCESS)
        return fail(ErrorKind::parse_error, "fixture.json: \"identity.groups\" must be an array of group ids");
      for (auto g : groups) {
        std::uint32_t gid = 0;
        if (!id_of(g, gid)) return fail(ErrorKind::parse_error, "fixture.json: \"identity.groups\" must be an array of group ids");
        identity.groups.push_back(gid);
      }
    }
    m.identity = std::move(identity);
  }
  if (root["permissions"].get(el) == simdjson::SUCCESS) {
    simdjson::dom::object perms;
    if (el.get_object().get(perms) != simdjson::SUCCESS)
      return fail(ErrorKind::parse_error, "fixture.json: \"permissions\" must be an object of paths");
    for (auto [path, value] : perms) {
      const auto where = text::cat("fixture.json: permissions of \"", text::excerpt(path), "\"");
      if (path.empty() || path.front() != '/') return fail(ErrorKind::parse_error, text::cat(where, ": the path must be absolute"));
      simdjson::dom::object o;
      std::string_view mode_text;
      FilePermissions fp;
      if (value.get_object().get(o) != simdjson::SUCCESS || o["mode"].get_string().get(mode_text) != simdjson::SUCCESS ||
          !id_of(o["uid"], fp.uid) || !id_of(o["gid"], fp.gid))
        return fail(ErrorKind::parse_error, text::cat(where, ": needs \"mode\" (octal text, \"0660\"), \"uid\" and \"gid\""));
      const auto mode = text::parse_u64(mode_text, 8);
      if (!mode || *mode > 07777) return fail(ErrorKind::parse_error, text::cat(where, ": \"mode\" must be octal, at most 7777"));
      fp.mode = static_cast<std::uint32_t>(*mode);
      m.permissions.insert_or_assign(std::string(path), fp);
    }
  }
  return m;
}

std::string write_fixture_manifest(const FixtureManifest& m) {
  json::Writer w(true);
  w.begin_object();
  w.field("format", m.format);
  w.field("machine", m.machine);
  w.field("source", m.source);
  w.field("synthetic", m.synthetic);
  w.field("env", m.env);
  w.field("tools", m.tools);
  w.key("commands").begin_array();
  for (const auto& c : m.commands) {
    w.begin_object();
    w.field("argv", c.argv);
    w.field("stdout", c.stdout_path);
    w.field("stderr", c.stderr_path);
    w.field("exit", c.exit);
    w.field("signal", c.signal);
    w.field("duration_ms", c.duration_ms);
    if (c.hang) w.field("hang", true);
    w.end_object();
  }
  w.end_array();
  if (m.identity) {
    w.key("identity").begin_object();
    w.field("uid", m.identity->uid);
    w.field("gid", m.identity->gid);
    w.field("groups", m.identity->groups);
    w.end_object();
  }
  if (!m.permissions.empty()) {
    w.key("permissions").begin_object();
    for (const auto& [path, fp] : m.permissions) {
      w.key(path).begin_object();
      w.field("mode", text::octal_mode(fp.mode));
      w.field("uid", fp.uid);
      w.field("gid", fp.gid);
      w.end_object();
    }
    w.end_object();
  }
  w.end_object();
  std::string out = std::move(w).take();
  out.push_back('\n');
  return out;
}

}  // namespace hwaccel
