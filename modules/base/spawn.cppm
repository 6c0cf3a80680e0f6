// How hwaccel starts a child process (a vendor tool, the plugin host, the
// mDNS helper), so that every child starts the same way:
// - in a process group of its own, so that a deadline ends the child and
//   everything it started, and a terminal's Ctrl-C reaches hwaccel first;
// - with no signal blocked and every signal at its default disposition: a
//   host application that blocks signals or ignores SIGPIPE must not pass
//   that on (a tool writing to a closed pipe would spin instead of ending);
// - with only the descriptors it is given: those the host application
//   opened without O_CLOEXEC stay out of it.
// Internal (not installed): POSIX builds only; Windows starts tools in
// system/windows.cpp, WebAssembly starts none.
module;
#include <string>
#include <vector>

#include <spawn.h>
#include <sys/types.h>
export module hwaccel.spawn;
import hwaccel.base;

export namespace hwaccel {

/// One child's start: say which descriptors it gets, then start() it once.
class ChildSpawn {
 public:
  ChildSpawn();
  ~ChildSpawn();
  ChildSpawn(const ChildSpawn&) = delete;
  ChildSpawn& operator=(const ChildSpawn&) = delete;

  /// The child's descriptor `child_fd` is a copy of our `fd`.
  ChildSpawn& give(int fd, int child_fd);
  /// The child's descriptor `child_fd` is /dev/null, opened with `flags`
  /// (O_RDONLY for an input, O_WRONLY for an output).
  ChildSpawn& give_null(int child_fd, int flags);

  /// Starts `program` (run as given when it holds a '/', else looked up on
  /// PATH) with `argv` (its first element the program's name) and `envp`
  /// (null-terminated; this process's environment when null). Its pid;
  /// tool_not_found when there is no such program, tool_failed when it
  /// cannot be started, each with strerror's text alone as the message (the
  /// caller names what it started).
  [[nodiscard]] Result<pid_t> start(const std::string& program, const std::vector<std::string>& argv,
                                    char* const* envp = nullptr);

 private:
  posix_spawnattr_t attributes_;
  posix_spawn_file_actions_t actions_;
  int highest_given_ = 2;
};

}  // namespace hwaccel
