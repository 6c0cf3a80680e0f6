// A plugin run in hwaccel-plugin-host, a child process of its own: its system
// calls arrive over a socket and are answered from the detection's System;
// its crash, hang or flood ends the child, not hwaccel. The protocol is
// plugin_wire.hpp's.
module;
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hwaccel/plugin.h"
#include "plugin_wire.hpp"
module hwaccel.registry;
import hwaccel.spawn;

namespace hwaccel::plugin_detail {

namespace {

namespace wire = plugin_wire;
using Clock = std::chrono::steady_clock;

enum class Ended : std::uint8_t { ok, timeout, closed, too_large };

int millis_until(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 60'000));
}

// Waits for the socket to be ready for `events`; false at the deadline.
bool wait_for(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int left = millis_until(deadline);
    const int n = ::poll(&p, 1, left);
    if (n > 0) return true;
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 && left > 0) continue;  // the wait was cut at a minute
    return false;
  }
}

Ended receive_exactly(int fd, char* into, std::size_t size, Clock::time_point deadline) {
  std::size_t done = 0;
  while (done < size) {
    if (!wait_for(fd, POLLIN, deadline)) return Ended::timeout;
    const ssize_t n = ::recv(fd, into + done, size - done, MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n <= 0) return Ended::closed;
    done += static_cast<std::size_t>(n);
  }
  return Ended::ok;
}

Ended receive_frame(int fd, std::size_t max_body, Clock::time_point deadline, std::string& body) {
  unsigned char header[4];
  if (const auto e = receive_exactly(fd, reinterpret_cast<char*>(header), 4, deadline); e != Ended::ok) return e;
  const std::uint32_t length = wire::frame_length(header);
  if (length > max_body) return Ended::too_large;
  if (length == 0) return Ended::closed;
  body.assign(length, '\0');
  return receive_exactly(fd, body.data(), length, deadline);
}

Ended send_all(int fd, std::string_view frame, Clock::time_point deadline) {
  std::size_t done = 0;
  while (done < frame.size()) {
    if (!wait_for(fd, POLLOUT, deadline)) return Ended::timeout;
    const ssize_t n = ::send(fd, frame.data() + done, frame.size() - done, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n <= 0) return Ended::closed;
    done += static_cast<std::size_t>(n);
  }
  return Ended::ok;
}

// The child and every process it started share one process group: ending it
// ends them all.
struct HostProcess {
  pid_t pid = -1;
  int status = 0;
  bool reaped = false;

  void end() {
    if (pid <= 0 || reaped) return;
    ::kill(-pid, SIGKILL);
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    reaped = true;
  }
  ~HostProcess() { end(); }
};

std::string how_it_ended(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = ::strsignal(sig);
    return text::cat("was killed by signal ", sig, name ? text::cat(" (", name, ")") : std::string());
  }
  if (WIFEXITED(status)) return text::cat("exited with code ", WEXITSTATUS(status));
  return "ended";
}

// The descriptor's fields; its family as the plugin spelled it goes to `family`.
std::optional<PluginDescriptor> decode_descriptor(wire::FrameReader& r, std::string& family) {
  PluginDescriptor d;
  d.abi_version = r.u32();
  d.name.assign(r.str());
  if (!r.ok()) return std::nullopt;
  if (d.abi_version != plugin_abi_version) return d;  // the rest is another version's
  d.version.assign(r.str());
  d.description.assign(r.str());
  d.vendor.assign(r.str());
  family.assign(r.str());
  d.drivers = r.strings(256);
  d.kernel_modules = r.strings(256);
  const std::uint32_t pci = r.u32();
  for (std::uint32_t i = 0; i < pci && i < 256 && r.ok(); ++i) d.pci_ids.push_back(r.u32());
  d.device_nodes = r.strings(256);
  d.visibility_variable.assign(r.str());
  d.tools = r.strings(256);
  if (!r.finished()) return std::nullopt;
  return d;
}

// The answer to one request, made through `calls`; nullopt for a request
// that does not parse.
std::optional<std::string> answer(wire::Op op, wire::FrameReader& r, PluginCalls& calls) {
  const auto refused = [&](int status) {
    return wire::FrameWriter(wire::Op::answer).u8(static_cast<std::uint8_t>(status)).str(calls.error()).take();
  };
  switch (op) {
    case wire::Op::read_file: {
      const std::string path(r.str());
      const std::uint64_t max = r.u64();
      if (!r.finished()) return std::nullopt;
      FileContent content;
      if (const int s = calls.read_file(path, max, content); s != HWACCEL_PLUGIN_OK) return refused(s);
      return wire::FrameWriter(wire::Op::answer).u8(HWACCEL_PLUGIN_OK).u8(content.truncated ? 1 : 0).str(content.data).take();
    }
    case wire::Op::list_dir: {
      const std::string path(r.str());
      if (!r.finished()) return std::nullopt;
      std::vector<DirEntry> entries;
      if (const int s = calls.list_dir(path, entries); s != HWACCEL_PLUGIN_OK) return refused(s);
      wire::FrameWriter w(wire::Op::answer);
      w.u8(HWACCEL_PLUGIN_OK).u32(static_cast<std::uint32_t>(entries.size()));
      for (const auto& e : entries) w.u8(plugin_file_type(e.type)).str(e.name);
      return w.take();
    }
    case wire::Op::read_link: {
      const std::string path(r.str());
      if (!r.finished()) return std::nullopt;
      std::string target;
      if (const int s = calls.read_link(path, target); s != HWACCEL_PLUGIN_OK) return refused(s);
      return wire::FrameWriter(wire::Op::answer).u8(HWACCEL_PLUGIN_OK).str(target).take();
    }
    case wire::Op::status: {
      const std::string path(r.str());
      const bool follow = r.u8() != 0;
      if (!r.finished()) return std::nullopt;
      FileStatus st;
      if (const int s = calls.status(path, follow, st); s != HWACCEL_PLUGIN_OK) return refused(s);
      return wire::FrameWriter(wire::Op::answer)
          .u8(HWACCEL_PLUGIN_OK).u8(plugin_file_type(st.type)).u64(st.size).u32(st.mode).u32(st.uid).u32(st.gid).take();
    }
    case wire::Op::env: {
      const std::string name(r.str());
      if (!r.finished()) return std::nullopt;
      std::string value;
      if (const int s = calls.env(name, value); s != HWACCEL_PLUGIN_OK) return refused(s);
      return wire::FrameWriter(wire::Op::answer).u8(HWACCEL_PLUGIN_OK).str(value).take();
    }
    case wire::Op::run: {
      const std::uint32_t timeout_ms = r.u32();
      auto argv = r.strings(4096);
      if (!r.finished()) return std::nullopt;
      ToolResult result;
      if (const int s = calls.run(std::move(argv), timeout_ms, result); s != HWACCEL_PLUGIN_OK) return refused(s);
      return wire::FrameWriter(wire::Op::answer)
          .u8(HWACCEL_PLUGIN_OK).i32(result.exit_code).i32(result.signal.value_or(0))
          .u8(result.out_truncated ? 1 : 0).u8(result.err_truncated ? 1 : 0).str(result.out).str(result.err).take();
    }
    default: return std::nullopt;
  }
}

}  // namespace

PluginRun run_isolated(const PluginFile& file, const std::string& host, const DetectContext* ctx,
                       const PluginLimits& limits) {
  PluginRun run;
  const auto failure = [&](WarningKind kind, std::string message) {
    run.failure = Warning{"plugin", kind, std::move(message)};
    return run;
  };
  auto plugin_fd = open_plugin_file(file.path);
  if (!plugin_fd) return failure(WarningKind::permission_denied, plugin_fd.error().message);

  int sockets[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0)
    return failure(WarningKind::tool_failed, text::cat("plugin ", file.path, ": no socket for its host: ", std::strerror(errno)));
  OwnedFd ours(sockets[0]);
  OwnedFd theirs(sockets[1]);

  ChildSpawn spawn;
  spawn.give(theirs.get(), 0).give(theirs.get(), 1).give_null(2, O_WRONLY).give(plugin_fd->get(), 3);
  const std::string mode = ctx ? "detect" : "describe";
  HostProcess child;
  const auto started = spawn.start(host, {host, mode, "/proc/self/fd/3", std::to_string(limits.output_cap)});
  theirs = OwnedFd();
  if (!started)
    return failure(WarningKind::tool_failed, text::cat("plugin ", file.path, ": its host ", host, " cannot be started: ",
                                                       started.error().message));
  child.pid = *started;

  auto deadline = Clock::now() + limits.timeout;
  const std::size_t max_body = limits.output_cap + wire::frame_overhead;
  std::optional<PluginCalls> calls;
  std::chrono::microseconds tools_counted{0};
  std::string body;
  for (;;) {
    const Ended got = receive_frame(ours.get(), max_body, deadline, body);
    if (got == Ended::timeout) {
      child.end();
      return failure(WarningKind::timeout, text::cat(plugin_label(file, run.descriptor), " did not finish within ",
                                                     limits.timeout.count(), " ms of its own and was killed"));
    }
    if (got == Ended::too_large) {
      child.end();
      return failure(WarningKind::truncated, text::cat(plugin_label(file, run.descriptor), " wrote more than ",
                                                       limits.output_cap, " bytes; it was stopped and its output dropped"));
    }
    if (got == Ended::closed) {
      child.end();
      return failure(WarningKind::tool_failed, text::cat(plugin_label(file, run.descriptor), " ended before it finished: its host ",
                                                         how_it_ended(child.status)));
    }
    const auto op = static_cast<wire::Op>(body[0]);
    wire::FrameReader r(std::string_view(body).substr(1));
    if (op == wire::Op::load_failed) {
      const std::string why(text::excerpt(r.str(), 400));
      child.end();
      return failure(WarningKind::unsupported, text::cat("plugin ", file.path, " cannot be loaded: ", why));
    }
    if (op == wire::Op::descriptor && !run.descriptor) {
      std::string family;
      run.descriptor = decode_descriptor(r, family);
      if (!run.descriptor) {
        child.end();
        return failure(WarningKind::parse_error, text::cat("plugin ", file.path, ": its host sent a malformed descriptor"));
      }
      if (auto refused = accept_descriptor(*run.descriptor, family, file)) {
        child.end();
        run.failure = std::move(*refused);
        return run;
      }
      if (ctx) calls.emplace(*ctx, run.descriptor->name);
      continue;
    }
    if (op == wire::Op::done && run.descriptor) {
      run.detect_result = r.i32();
      run.document.assign(r.str());
      run.too_large = r.u8() != 0;
      run.detected = ctx != nullptr;
      if (!r.finished()) {
        child.end();
        return failure(WarningKind::parse_error, text::cat(plugin_label(file, run.descriptor), ": its host sent a malformed result"));
      }
      child.end();
      return run;
    }
    std::optional<std::string> reply;
    if (calls) reply = answer(op, r, *calls);
    if (!reply) {
      child.end();
      return failure(WarningKind::parse_error, text::cat(plugin_label(file, run.descriptor),
                                                         ": its host broke the protocol (operation ", static_cast<int>(op), ")"));
    }
    // Tool runs have deadlines of their own; the plugin's time is the rest.
    deadline += calls->tool_time() - tools_counted;
    tools_counted = calls->tool_time();
    if (send_all(ours.get(), *reply, deadline) != Ended::ok) {
      child.end();
      return failure(WarningKind::timeout, text::cat(plugin_label(file, run.descriptor), " stopped reading its answers and was killed"));
    }
  }
}

}  // namespace hwaccel::plugin_detail
