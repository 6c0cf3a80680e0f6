// `hwaccel serve --advertise`: hwaccel-mdns publishing the exporter's
// services for as long as the server runs. The helper's standard input is
// the life-line: it withdraws the services when the pipe closes, so they go
// with this process however it ends (a crash, SIGKILL) and never outlive it.
module;
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>
module hwaccel.fleet;
import hwaccel.spawn;

namespace hwaccel {

namespace {

void close_fd(int& fd) noexcept {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Every line the helper prints (stdout and stderr share the pipe), handed on.
void read_lines(int fd, const std::function<void(std::string_view)>& on_message) {
  std::string pending;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(buf, static_cast<std::size_t>(n));
    for (std::size_t end; (end = pending.find('\n')) != std::string::npos; pending.erase(0, end + 1))
      if (on_message && end > 0) on_message(std::string_view(pending).substr(0, end));
    if (pending.size() > 65536) pending.clear();  // a line that never ends is not a message
  }
  if (on_message && !pending.empty()) on_message(pending);
}

}  // namespace

struct MdnsAdvertisement::Child {
  pid_t pid = -1;
  int life_line = -1;  // the write end of the helper's standard input
  int output = -1;     // the read end of its stdout and stderr
  std::thread reader;

  ~Child() {
    close_fd(life_line);
    if (pid > 0) {
      int status = 0;
      pid_t waited = 0;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      while ((waited = ::waitpid(pid, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (waited == 0) {
        ::kill(-pid, SIGKILL);
        ::waitpid(pid, &status, 0);
      }
    }
    if (reader.joinable()) reader.join();
    close_fd(output);
  }
};

MdnsAdvertisement::MdnsAdvertisement(std::unique_ptr<Child> child) : child_(std::move(child)) {}
MdnsAdvertisement::MdnsAdvertisement(MdnsAdvertisement&&) noexcept = default;
MdnsAdvertisement& MdnsAdvertisement::operator=(MdnsAdvertisement&&) noexcept = default;
MdnsAdvertisement::~MdnsAdvertisement() = default;

Result<MdnsAdvertisement> MdnsAdvertisement::start(Options options) {
  if (options.port == 0) return fail(Error{ErrorKind::invalid_input, "an mDNS advertisement needs the port"});
  if (options.name.empty() || options.name.size() > 63)
    return fail(Error{ErrorKind::invalid_input, "an mDNS service name has 1 to 63 bytes"});
  int input[2];
  int output[2];
  if (::pipe2(input, O_CLOEXEC) != 0)
    return fail(Error{ErrorKind::io_error, text::cat("no pipe for hwaccel-mdns: ", std::strerror(errno))});
  if (::pipe2(output, O_CLOEXEC) != 0) {
    ::close(input[0]);
    ::close(input[1]);
    return fail(Error{ErrorKind::io_error, text::cat("no pipe for hwaccel-mdns: ", std::strerror(errno))});
  }
  auto child = std::make_unique<Child>();
  child->life_line = input[1];
  child->output = output[0];

  const std::vector<std::string> args = {options.helper,
                                         "publish",
                                         "--name",
                                         options.name,
                                         "--port",
                                         std::to_string(options.port),
                                         std::string(mdns_registry_service),
                                         "path=/registry",
                                         text::cat("version=", library_version()),
                                         std::string(mdns_metrics_service),
                                         "path=/metrics"};
  // Its own process group (ChildSpawn): a terminal's Ctrl-C reaches the
  // server, which then withdraws the services in order instead of losing the
  // helper first.
  ChildSpawn spawn;
  spawn.give(input[0], 0).give(output[1], 1).give(output[1], 2);
  const auto started = spawn.start(options.helper, args);
  ::close(input[0]);
  ::close(output[1]);
  if (!started) {
    const bool missing = started.error().kind == ErrorKind::tool_not_found;
    return fail(Error{started.error().kind,
                      text::cat(options.helper, " cannot be started: ", started.error().message,
                                missing ? " (build with -Dmdns=enabled, or set HWACCEL_MDNS_HELPER)" : "")});
  }
  child->pid = *started;
  child->reader = std::thread(read_lines, child->output, std::move(options.on_message));
  return MdnsAdvertisement(std::move(child));
}

}  // namespace hwaccel
