// How every child of hwaccel starts (ChildSpawn): its own process group, no
// signal blocked or ignored although this process blocks and ignores some, only
// the descriptors it was given, and clear errors for a program that is not there.
#include <gtest/gtest.h>

#include <csignal>
#include <string>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

import hwaccel;
import hwaccel.spawn;

namespace spawn_test {

using namespace hwaccel;

// The child's standard output, read to its end, and its exit status.
struct Ran {
  std::string out;
  int status = -1;
};

Ran run_shell(const std::string& script) {
  int out[2];
  EXPECT_EQ(::pipe2(out, O_CLOEXEC), 0);
  ChildSpawn spawn;
  spawn.give_null(0, O_RDONLY).give(out[1], 1).give_null(2, O_WRONLY);
  const auto pid = spawn.start("sh", {"sh", "-c", script});
  ::close(out[1]);
  Ran ran;
  if (!pid) {
    ADD_FAILURE() << pid.error().message;
    ::close(out[0]);
    return ran;
  }
  char buf[4096];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) ran.out.append(buf, static_cast<std::size_t>(n));
  ::close(out[0]);
  ::waitpid(*pid, &ran.status, 0);
  return ran;
}

// The fields of /proc/self/status the child prints about itself.
std::string status_field(const std::string& status, const std::string& name) {
  const auto at = status.find(name + ":\t");
  if (at == std::string::npos) return {};
  const auto end = status.find('\n', at);
  return status.substr(at + name.size() + 2, end - at - name.size() - 2);
}

TEST(ChildSpawn, ChildHasItsOwnGroupAndDefaultSignals) {
  // This process blocks SIGUSR1 and ignores SIGPIPE, as host applications do.
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  sigset_t before;
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &usr1, &before), 0);
  const auto old_pipe = std::signal(SIGPIPE, SIG_IGN);

  const Ran ran = run_shell("echo pgid $(cut -d' ' -f5 /proc/$$/stat) pid $$; cat /proc/self/status");

  std::signal(SIGPIPE, old_pipe);
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  ASSERT_TRUE(WIFEXITED(ran.status) && WEXITSTATUS(ran.status) == 0) << ran.out;
  // The shell leads a group of its own; `cat`, its child, shows the signals.
  const std::string first_line = ran.out.substr(0, ran.out.find('\n'));
  const std::vector<std::string_view> words = text::words(first_line);
  ASSERT_EQ(words.size(), 4u) << ran.out;
  EXPECT_EQ(words[1], words[3]) << "the child leads its own process group";
  EXPECT_NE(words[1], std::to_string(::getpgrp()));
  // The masks as the kernel shows them (bit N-1 for signal N). glibc keeps
  // its own two real-time signals out of any set, so only the signals this
  // test changed are checked.
  const auto has = [&](const char* field, int signal) {
    const std::string mask = status_field(ran.out, field);
    EXPECT_FALSE(mask.empty()) << field << " missing from:\n" << ran.out;
    return mask.empty() || ((std::stoull(mask, nullptr, 16) >> (signal - 1)) & 1u) != 0;
  };
  EXPECT_FALSE(has("SigBlk", SIGUSR1)) << "SIGUSR1 stayed blocked";
  EXPECT_FALSE(has("SigIgn", SIGPIPE)) << "SIGPIPE stayed ignored";
}

TEST(ChildSpawn, OnlyTheGivenDescriptorsReachTheChild) {
  // Opened without O_CLOEXEC, as a careless host application does.
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(null_fd, 0);
  const int leaked = ::fcntl(null_fd, F_DUPFD, 50);
  ::close(null_fd);
  ASSERT_GE(leaked, 50);
  const Ran ran = run_shell(text::cat("test -e /proc/self/fd/", leaked, " && echo open || echo closed"));
  ::close(leaked);
  ASSERT_TRUE(WIFEXITED(ran.status) && WEXITSTATUS(ran.status) == 0) << ran.out;
  EXPECT_EQ(ran.out, "closed\n");
}

TEST(ChildSpawn, AProgramThatIsNotThereIsAClearError) {
  ChildSpawn by_name;
  const auto missing = by_name.start("hwaccel-no-such-tool", {"hwaccel-no-such-tool"});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::tool_not_found);
  EXPECT_EQ(missing.error().message, "No such file or directory");
  ChildSpawn by_path;
  const auto not_executable = by_path.start("/etc/hostname", {"/etc/hostname"});
  ASSERT_FALSE(not_executable);
  EXPECT_EQ(not_executable.error().kind, ErrorKind::tool_failed);
}

}  // namespace spawn_test
