// The POSIX names the library's file code uses that mingw-w64's C library
// lacks, with the meaning they must have there (docs/windows.md): every file
// is opened as bytes (no CRLF translation) and kept from child processes,
// Windows has no symbolic-link or socket file types in stat(), and reads at
// an offset go through ReadFile with an OVERLAPPED offset. Nothing here
// exists outside a Windows build. Include in a global module fragment, after
// <fcntl.h>, <sys/stat.h> and <unistd.h>.
#pragma once

#if defined(_WIN32)
#include <direct.h>
#include <fcntl.h>
#include <io.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <windows.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <ctime>

#define O_CLOEXEC (_O_NOINHERIT | _O_BINARY)
#define O_NONBLOCK 0
#define O_NOFOLLOW 0
#define O_NOCTTY 0
#ifndef S_ISLNK
#define S_ISLNK(mode) 0
#endif
#ifndef S_ISSOCK
#define S_ISSOCK(mode) 0
#endif
#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/// open() of a path Windows spells in UTF-16 (std::filesystem::path::c_str()).
inline int open(const wchar_t* path, int flags, int mode = 0) { return ::_wopen(path, flags, mode); }

inline int mkdir(const char* path, int /*mode: Windows folders have ACLs*/) { return ::_mkdir(path); }

/// pread(): a read at `offset` that leaves the descriptor's position alone.
inline ssize_t pread(int fd, void* buffer, size_t count, off_t offset) {
  const auto handle = reinterpret_cast<HANDLE>(::_get_osfhandle(fd));
  if (handle == INVALID_HANDLE_VALUE) {
    errno = EBADF;
    return -1;
  }
  OVERLAPPED at{};
  at.Offset = static_cast<DWORD>(static_cast<unsigned long long>(offset) & 0xffffffffu);
  at.OffsetHigh = static_cast<DWORD>(static_cast<unsigned long long>(offset) >> 32);
  DWORD got = 0;
  const DWORD ask = count > 0x7fffffffu ? 0x7fffffffu : static_cast<DWORD>(count);
  if (!::ReadFile(handle, buffer, ask, &got, &at)) {
    if (::GetLastError() == ERROR_HANDLE_EOF) return 0;
    errno = EIO;
    return -1;
  }
  return static_cast<ssize_t>(got);
}

inline char* realpath(const char* path, char* resolved) { return ::_fullpath(resolved, path, PATH_MAX); }

inline struct tm* gmtime_r(const std::time_t* t, struct tm* out) { return ::gmtime_s(out, t) == 0 ? out : nullptr; }
inline struct tm* localtime_r(const std::time_t* t, struct tm* out) {
  return ::localtime_s(out, t) == 0 ? out : nullptr;
}
/// The computer's name (winsock's gethostname needs WSAStartup first).
inline int gethostname(char* name, size_t length) {
  DWORD size = static_cast<DWORD>(length);
  return ::GetComputerNameA(name, &size) ? 0 : -1;
}
/// Windows links need a privilege most users lack; a System there never
/// reports one, so a capture never records one.
inline int symlink(const char*, const char*) {
  errno = ENOSYS;
  return -1;
}
/// stat() on Windows reports every file as owned by uid 0.
inline short geteuid() { return 0; }  // the type of its st_uid
inline int fsync(int fd) { return ::_commit(fd); }
/// Windows files have ACLs, not mode bits: the file keeps its folder's.
inline int fchmod(int, int) { return 0; }
#endif
