// ChildSpawn on posix_spawn (spawn.cppm says what every child gets).
module;
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/types.h>
#include <unistd.h>
module hwaccel.spawn;

extern "C" char** environ;

namespace hwaccel {

ChildSpawn::ChildSpawn() {
  ::posix_spawnattr_init(&attributes_);
  ::posix_spawn_file_actions_init(&actions_);
  ::posix_spawnattr_setpgroup(&attributes_, 0);
  sigset_t none;
  sigset_t every;
  sigemptyset(&none);
  sigfillset(&every);
  ::posix_spawnattr_setsigmask(&attributes_, &none);
  ::posix_spawnattr_setsigdefault(&attributes_, &every);
  ::posix_spawnattr_setflags(&attributes_, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
}

ChildSpawn::~ChildSpawn() {
  ::posix_spawn_file_actions_destroy(&actions_);
  ::posix_spawnattr_destroy(&attributes_);
}

ChildSpawn& ChildSpawn::give(int fd, int child_fd) {
  ::posix_spawn_file_actions_adddup2(&actions_, fd, child_fd);
  highest_given_ = std::max(highest_given_, child_fd);
  return *this;
}

ChildSpawn& ChildSpawn::give_null(int child_fd, int flags) {
  ::posix_spawn_file_actions_addopen(&actions_, child_fd, "/dev/null", flags, 0);
  highest_given_ = std::max(highest_given_, child_fd);
  return *this;
}

Result<pid_t> ChildSpawn::start(const std::string& program, const std::vector<std::string>& argv, char* const* envp) {
  // After the descriptors given, so that a given one above 2 stays open.
  ::posix_spawn_file_actions_addclosefrom_np(&actions_, highest_given_ + 1);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  char* const* environment = envp ? envp : environ;
  pid_t pid = -1;
  const int rc = program.find('/') != std::string::npos
                     ? ::posix_spawn(&pid, program.c_str(), &actions_, &attributes_, args.data(), environment)
                     : ::posix_spawnp(&pid, program.c_str(), &actions_, &attributes_, args.data(), environment);
  if (rc != 0) return fail(rc == ENOENT ? ErrorKind::tool_not_found : ErrorKind::tool_failed, std::strerror(rc));
  return pid;
}

}  // namespace hwaccel
