// hwaccel-plugin-host: runs one plugin in a process of its own, so that a
// plugin that crashes, hangs or floods costs hwaccel a warning and nothing
// else (docs/plugins.md, "Isolation").
//
//   hwaccel-plugin-host describe|detect PLUGIN OUTPUT_CAP
//
// hwaccel starts it with the protocol's pipes on stdin and stdout and the
// plugin file, already checked, open as PLUGIN (/proc/self/fd/3). Every
// system call the plugin makes becomes a request frame to hwaccel, which
// answers it from its System (the machine, a fixture, a recording), so the
// plugin sees exactly what a built-in detector would. The protocol is
// plugin_wire.hpp's.
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "hwaccel/plugin.h"
#include "plugin_wire.hpp"

namespace {

namespace wire = hwaccel::plugin_wire;

// The protocol's descriptors, moved off 0 and 1 so that what the plugin
// prints cannot be taken for a frame.
int requests_fd = -1;
int answers_fd = -1;

[[noreturn]] void quit(int code) { _exit(code); }

void send(const std::string& frame) {
  std::size_t done = 0;
  while (done < frame.size()) {
    const ssize_t n = write(requests_fd, frame.data() + done, frame.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) quit(3);  // hwaccel stopped listening
    done += static_cast<std::size_t>(n);
  }
}

bool read_exactly(char* into, std::size_t size) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = read(answers_fd, into + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// One answer frame from hwaccel; the host ends when hwaccel sends nonsense.
std::string receive_answer() {
  unsigned char header[4];
  if (!read_exactly(reinterpret_cast<char*>(header), 4)) quit(3);
  const std::uint32_t length = wire::frame_length(header);
  if (length == 0 || length > (std::uint32_t{1} << 30)) quit(3);
  std::string body(length, '\0');
  if (!read_exactly(body.data(), length)) quit(3);
  if (static_cast<wire::Op>(body[0]) != wire::Op::answer) quit(3);
  return body.substr(1);
}

// What the plugin is handed: hwaccel's answers, kept until detect returns.
struct Host {
  std::size_t output_cap = 0;
  std::string document;
  bool too_large = false;
  std::deque<std::string> kept;
  std::deque<std::vector<hwaccel_plugin_dir_entry>> listings;
  std::string last_error;

  const char* keep(std::string_view bytes) { return kept.emplace_back(bytes).c_str(); }

  // Sends a request and returns its answer's status, the reader placed on
  // what follows it.
  int ask(std::string frame, std::string& answer, wire::FrameReader& reader) {
    send(frame);
    answer = receive_answer();
    reader = wire::FrameReader(answer);
    const int status = reader.u8();
    if (!reader.ok()) quit(3);
    if (status != HWACCEL_PLUGIN_OK) {
      last_error.assign(reader.str());
      return status;
    }
    last_error.clear();
    return status;
  }
};

Host host;

hwaccel_plugin_bytes bytes_of(std::string_view kept) { return {host.keep(kept), kept.size()}; }

int host_read_file(void*, const char* path, std::size_t max_bytes, hwaccel_plugin_bytes* content, int* truncated) {
  if (!path || !content) return HWACCEL_PLUGIN_FAILED;
  std::string answer;
  wire::FrameReader r{{}};
  const int status = host.ask(wire::FrameWriter(wire::Op::read_file).str(path).u64(max_bytes).take(), answer, r);
  if (status != HWACCEL_PLUGIN_OK) return status;
  const bool cut = r.u8() != 0;
  *content = bytes_of(r.str());
  if (truncated) *truncated = cut ? 1 : 0;
  return r.ok() ? HWACCEL_PLUGIN_OK : HWACCEL_PLUGIN_FAILED;
}

int host_list_dir(void*, const char* path, const hwaccel_plugin_dir_entry** entries, std::size_t* count) {
  if (!path || !entries || !count) return HWACCEL_PLUGIN_FAILED;
  std::string answer;
  wire::FrameReader r{{}};
  const int status = host.ask(wire::FrameWriter(wire::Op::list_dir).str(path).take(), answer, r);
  if (status != HWACCEL_PLUGIN_OK) return status;
  const std::uint32_t n = r.u32();
  auto& listing = host.listings.emplace_back();
  for (std::uint32_t i = 0; i < n && r.ok(); ++i) {
    const auto type = static_cast<hwaccel_plugin_file_type>(r.u8());
    listing.push_back({host.keep(r.str()), type});
  }
  *entries = listing.data();
  *count = listing.size();
  return r.ok() ? HWACCEL_PLUGIN_OK : HWACCEL_PLUGIN_FAILED;
}

int host_read_link(void*, const char* path, hwaccel_plugin_bytes* target) {
  if (!path || !target) return HWACCEL_PLUGIN_FAILED;
  std::string answer;
  wire::FrameReader r{{}};
  const int status = host.ask(wire::FrameWriter(wire::Op::read_link).str(path).take(), answer, r);
  if (status != HWACCEL_PLUGIN_OK) return status;
  *target = bytes_of(r.str());
  return r.ok() ? HWACCEL_PLUGIN_OK : HWACCEL_PLUGIN_FAILED;
}

int host_status(void*, const char* path, int follow, hwaccel_plugin_file_status* out) {
  if (!path || !out) return HWACCEL_PLUGIN_FAILED;
  std::string answer;
  wire::FrameReader r{{}};
  const int status =
      host.ask(wire::FrameWriter(wire::Op::status).str(path).u8(follow ? 1 : 0).take(), answer, r);
  if (status != HWACCEL_PLUGIN_OK) return status;
  out->type = static_cast<hwaccel_plugin_file_type>(r.u8());
  out->size = r.u64();
  out->mode = r.u32();
  out->uid = r.u32();
  out->gid = r.u32();
  return r.ok() ? HWACCEL_PLUGIN_OK : HWACCEL_PLUGIN_FAILED;
}

int host_env(void*, const char* name, hwaccel_plugin_bytes* value) {
  if (!name || !value) return HWACCEL_PLUGIN_FAILED;
  std::string answer;
  wire::FrameReader r{{}};
  const int status = host.ask(wire::FrameWriter(wire::Op::env).str(name).take(), answer, r);
  if (status != HWACCEL_PLUGIN_OK) return status;
  *value = bytes_of(r.str());
  return r.ok() ? HWACCEL_PLUGIN_OK : HWACCEL_PLUGIN_FAILED;
}

int host_run(void*, const char* const* argv, std::uint32_t timeout_ms, hwaccel_plugin_tool_result* result) {
  if (!argv || !argv[0] || !result) return HWACCEL_PLUGIN_FAILED;
  std::vector<std::string> args;
  for (const char* const* a = argv; *a && args.size() < 4096; ++a) args.emplace_back(*a);
  std::string answer;
  wire::FrameReader r{{}};
  const int status = host.ask(wire::FrameWriter(wire::Op::run).u32(timeout_ms).strings(args).take(), answer, r);
  if (status != HWACCEL_PLUGIN_OK) return status;
  result->exit_code = r.i32();
  result->signal = r.i32();
  result->out_truncated = r.u8();
  result->err_truncated = r.u8();
  result->out = bytes_of(r.str());
  result->err = bytes_of(r.str());
  return r.ok() ? HWACCEL_PLUGIN_OK : HWACCEL_PLUGIN_FAILED;
}

// The document stays here until detect returns; past the cap nothing more is
// kept, and hwaccel is told it was too large.
int host_emit(void*, const char* data, std::size_t size) {
  if (host.too_large) return HWACCEL_PLUGIN_TOO_LARGE;
  if (!data && size) return HWACCEL_PLUGIN_FAILED;
  if (size > host.output_cap - host.document.size()) {
    host.too_large = true;
    host.document.clear();
    host.document.shrink_to_fit();
    return HWACCEL_PLUGIN_TOO_LARGE;
  }
  host.document.append(data, size);
  return HWACCEL_PLUGIN_OK;
}

const char* host_last_error(void*) { return host.last_error.c_str(); }

std::vector<std::string> list_of(const char* const* list) {
  std::vector<std::string> out;
  for (; list && *list && out.size() < 256; ++list) out.emplace_back(*list);
  return out;
}

std::string_view text_of(const char* s) { return s ? std::string_view(s, strnlen(s, 4096)) : std::string_view{}; }

std::string descriptor_frame(const hwaccel_plugin_descriptor& d) {
  wire::FrameWriter w(wire::Op::descriptor);
  w.u32(d.abi_version).str(text_of(d.name));
  if (d.abi_version != HWACCEL_PLUGIN_ABI_VERSION) return w.take();  // the rest is another version's layout
  w.str(text_of(d.version)).str(text_of(d.description)).str(text_of(d.vendor)).str(text_of(d.family));
  w.strings(list_of(d.drivers)).strings(list_of(d.kernel_modules));
  const std::size_t pci = d.pci_ids ? (d.pci_id_count < 256 ? d.pci_id_count : 256) : 0;
  w.u32(static_cast<std::uint32_t>(pci));
  for (std::size_t i = 0; i < pci; ++i) w.u32(std::uint32_t{d.pci_ids[i].vendor} << 16 | d.pci_ids[i].device);
  w.strings(list_of(d.device_nodes)).str(text_of(d.visibility_variable)).strings(list_of(d.tools));
  return w.take();
}

}  // namespace

int main(int argc, char** argv) {
  // Dies with hwaccel: a plugin host never outlives the detection it serves.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (getppid() == 1) return 3;
  if (argc != 4) return 2;
  const std::string_view mode = argv[1];
  char* end = nullptr;
  const unsigned long long cap = std::strtoull(argv[3], &end, 10);
  if ((mode != "describe" && mode != "detect") || !end || *end || cap == 0) return 2;
  host.output_cap = static_cast<std::size_t>(cap);

  requests_fd = fcntl(1, F_DUPFD_CLOEXEC, 10);
  answers_fd = fcntl(0, F_DUPFD_CLOEXEC, 10);
  const int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (requests_fd < 0 || answers_fd < 0 || null < 0) return 3;
  dup2(null, 0);
  dup2(null, 1);

  void* handle = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    send(wire::FrameWriter(wire::Op::load_failed).str(why ? why : "dlopen failed").take());
    quit(1);
  }
  const auto entry = reinterpret_cast<hwaccel_plugin_entry_fn>(dlsym(handle, HWACCEL_PLUGIN_ENTRY_NAME));
  if (!entry) {
    send(wire::FrameWriter(wire::Op::load_failed).str("it exports no " HWACCEL_PLUGIN_ENTRY_NAME "()").take());
    quit(1);
  }
  const hwaccel_plugin_descriptor* descriptor = entry();
  if (!descriptor) {
    send(wire::FrameWriter(wire::Op::load_failed).str(HWACCEL_PLUGIN_ENTRY_NAME "() returned no descriptor").take());
    quit(1);
  }
  send(descriptor_frame(*descriptor));
  if (mode == "describe" || descriptor->abi_version != HWACCEL_PLUGIN_ABI_VERSION || !descriptor->detect) {
    send(wire::FrameWriter(wire::Op::done).i32(0).str("").u8(0).take());
    quit(0);
  }

  const hwaccel_plugin_system system{HWACCEL_PLUGIN_ABI_VERSION, nullptr, &host_read_file, &host_list_dir,
                                     &host_read_link, &host_status, &host_env, &host_run, &host_emit,
                                     &host_last_error};
  const int rc = descriptor->detect(&system);
  send(wire::FrameWriter(wire::Op::done).i32(rc).str(host.document).u8(host.too_large ? 1 : 0).take());
  // _exit: a plugin's static destructors have nothing left to do for hwaccel.
  quit(0);
}
