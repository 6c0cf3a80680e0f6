// Kernel notifications behind the System seam: the live stream (a NETLINK_KOBJECT_UEVENT socket and /dev/kmsg), woken by an
// eventfd, blocking in poll() between events: no busy polling.
module;
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
module hwaccel.detect;

#include "posix_file.hpp"

namespace hwaccel {

namespace {

using posix::FileDescriptor;

// The live stream. The socket joins the kernel's uevent group (1) only, and a
// message from any sender but the kernel (port id 0) is dropped: another
// process must not be able to forge a hot-plug.
class LiveEventStream final : public EventStream {
 public:
  static Result<std::unique_ptr<EventStream>> open(const EventStreamOptions& options) {
    auto stream = std::unique_ptr<LiveEventStream>(new LiveEventStream(options));
    stream->wake_ = FileDescriptor(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (stream->wake_.get() < 0)
      return fail(ErrorKind::io_error, text::cat("cannot create an eventfd: ", std::strerror(errno)));
    if (options.uevents) stream->open_netlink();
    if (options.kernel_log) stream->open_kmsg();
    if (stream->uevents_.get() < 0 && stream->kmsg_.get() < 0) {
      std::string why = stream->unavailable_.empty() ? std::string("no source was asked for") : stream->unavailable_[0];
      for (std::size_t i = 1; i < stream->unavailable_.size(); ++i) why += "; " + stream->unavailable_[i];
      return fail(ErrorKind::unsupported, text::cat("no kernel notifications here: ", why));
    }
    return std::unique_ptr<EventStream>(std::move(stream));
  }

  Result<EventBatch> wait(std::chrono::steady_clock::time_point deadline) override {
    EventBatch batch;
    drain(batch);
    if (!batch.events.empty() || batch.rescan) return batch;
    std::vector<pollfd> fds;
    fds.push_back(pollfd{wake_.get(), POLLIN, 0});
    if (uevents_.get() >= 0) fds.push_back(pollfd{uevents_.get(), POLLIN, 0});
    if (kmsg_.get() >= 0) fds.push_back(pollfd{kmsg_.get(), POLLIN, 0});
    const auto now = std::chrono::steady_clock::now();
    const auto left = deadline > now ? std::chrono::ceil<std::chrono::milliseconds>(deadline - now)
                                     : std::chrono::milliseconds(0);
    const int timeout = static_cast<int>(std::min<std::chrono::milliseconds::rep>(left.count(), 1 << 30));
    const int ready = ::poll(fds.data(), fds.size(), timeout);
    if (ready < 0 && errno != EINTR) return fail(ErrorKind::io_error, text::cat("poll: ", std::strerror(errno)));
    std::uint64_t count = 0;
    while (::read(wake_.get(), &count, sizeof count) > 0) {
    }
    drain(batch);
    return batch;
  }

  void wake() noexcept override {
    const std::uint64_t one = 1;
    // A full counter already wakes the reader: the write may fail harmlessly.
    [[maybe_unused]] const auto n = ::write(wake_.get(), &one, sizeof one);
  }

  std::vector<std::string> sources() const override { return sources_; }
  std::vector<std::string> unavailable() const override { return unavailable_; }

 private:
  explicit LiveEventStream(const EventStreamOptions& options) : options_(options) {}

  void open_netlink() {
    FileDescriptor fd(::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_KOBJECT_UEVENT));
    if (fd.get() < 0) {
      unavailable_.push_back(text::cat("uevent netlink socket: ", std::strerror(errno)));
      return;
    }
    // A driver reload sends hundreds of messages at once: a larger buffer
    // loses fewer (the FORCE variant works for root past rmem_max).
    const int size = 4 << 20;
    if (::setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) != 0)
      (void)::setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    const int on = 1;
    (void)::setsockopt(fd.get(), SOL_SOCKET, SO_PASSCRED, &on, sizeof on);
    sockaddr_nl address{};
    address.nl_family = AF_NETLINK;
    address.nl_groups = 1;  // the kernel's broadcasts; udev's are group 2
    if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
      unavailable_.push_back(text::cat("uevent netlink socket: bind: ", std::strerror(errno)));
      return;
    }
    uevents_ = std::move(fd);
    sources_.emplace_back("uevent netlink socket");
  }

  void open_kmsg() {
    FileDescriptor fd(::open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
    if (fd.get() < 0) {
      unavailable_.push_back(text::cat("/dev/kmsg: ", std::strerror(errno)));
      return;
    }
    // Only what happens from now on: the log's history is not news.
    if (::lseek(fd.get(), 0, SEEK_END) < 0) {
      unavailable_.push_back(text::cat("/dev/kmsg: cannot seek to its end: ", std::strerror(errno)));
      return;
    }
    kmsg_ = std::move(fd);
    sources_.emplace_back("/dev/kmsg");
  }

  // Reads what is waiting, without blocking, up to the batch limit.
  void drain(EventBatch& batch) {
    while (uevents_.get() >= 0 && batch.events.size() < options_.max_batch) {
      iovec io{receive_.data(), receive_.size()};
      sockaddr_nl from{};
      msghdr header{};
      header.msg_name = &from;
      header.msg_namelen = sizeof from;
      header.msg_iov = &io;
      header.msg_iovlen = 1;
      const ssize_t n = ::recvmsg(uevents_.get(), &header, 0);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == ENOBUFS) {  // the kernel dropped messages: only a re-scan knows what changed
          batch.rescan = true;
          continue;
        }
        break;
      }
      if (from.nl_pid != 0 || (header.msg_flags & MSG_TRUNC) != 0) continue;
      batch.events.push_back(KernelEvent{KernelEvent::Source::uevent, receive_.substr(0, static_cast<std::size_t>(n))});
    }
    while (kmsg_.get() >= 0 && batch.events.size() < options_.max_batch) {
      // One record per read; 8 KiB holds the longest the kernel writes.
      char record[8192];
      const ssize_t n = ::read(kmsg_.get(), record, sizeof record);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EPIPE) {  // records were overwritten before we read them
          batch.rescan = true;
          continue;
        }
        break;
      }
      if (n == 0) break;
      std::string_view text_read(record, static_cast<std::size_t>(n));
      while (!text_read.empty() && text_read.back() == '\n') text_read.remove_suffix(1);
      batch.events.push_back(KernelEvent{KernelEvent::Source::kernel_log, std::string(text_read)});
    }
  }

  EventStreamOptions options_;
  std::string receive_ = std::string(max_uevent_bytes + 1, '\0');  // one message; longer ones come MSG_TRUNC
  FileDescriptor wake_;
  FileDescriptor uevents_;
  FileDescriptor kmsg_;
  std::vector<std::string> sources_;
  std::vector<std::string> unavailable_;
};

}  // namespace

Result<std::unique_ptr<EventStream>> open_live_events(const EventStreamOptions& options) {
  return LiveEventStream::open(options);
}

}  // namespace hwaccel
