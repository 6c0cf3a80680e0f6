// The CLI's failure messages, terminal detection, timestamps and whole-file I/O.
#include "common.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include <sys/stat.h>
#include <unistd.h>
#if defined(_WIN32)
#include "posix_compat.hpp"
#endif

namespace hwaccel::cli {

int fail_with(std::string_view command, std::string_view message, int exit_code) {
  note(command, message);
  return exit_code;
}

void note(std::string_view command, std::string_view message) {
  std::string line = "hwaccel";
  if (!command.empty()) line.append(" ").append(command);
  line.append(": ").append(message).append("\n");
  std::fwrite(line.data(), 1, line.size(), stderr);
}

bool is_terminal(int fd) { return ::isatty(fd) == 1; }

bool use_color(int fd) {
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color && *no_color) return false;
  const char* term = std::getenv("TERM");
  if (term && std::string_view(term) == "dumb") return false;
  return is_terminal(fd);
}

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

CommandResult<void> write_file(const std::string& path, std::string_view content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) out.write(content.data(), static_cast<std::streamsize>(content.size()));
  if (!out) return failure("cannot write " + path + ": " + std::strerror(errno));
  return {};
}

CommandResult<void> replace_file(const std::string& path, std::string_view content) {
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? std::string(".") : path.substr(0, std::max<std::size_t>(slash, 1));
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  std::string temporary = dir + "/." + name + ".XXXXXX";
  const int fd = ::mkstemp(temporary.data());
  if (fd < 0) return failure("cannot create a file in " + dir + ": " + std::strerror(errno));
  bool ok = ::fchmod(fd, 0644) == 0;
  std::size_t written = 0;
  while (ok && written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) written += static_cast<std::size_t>(n);
  }
  ok = ok && ::fsync(fd) == 0;
  const int saved = errno;
  ok = (::close(fd) == 0) && ok;
  if (ok && ::rename(temporary.c_str(), path.c_str()) == 0) return {};
  const std::string why = std::strerror(ok ? errno : saved);
  ::unlink(temporary.c_str());
  return failure("cannot write " + path + ": " + why);
}

CommandResult<std::string> read_file(const std::string& path, std::size_t cap) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return failure("cannot open " + path + ": " + std::strerror(errno));
  std::string content;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    content.append(buf, static_cast<std::size_t>(in.gcount()));
    if (content.size() > cap) return failure(path + " is larger than " + std::to_string(cap) + " bytes");
  }
  if (in.bad()) return failure("cannot read " + path + ": " + std::strerror(errno));
  return content;
}

std::string bytes_text(std::uint64_t b) {
  const double v = static_cast<double>(b);
  if (v >= 1024.0 * 1024 * 1024) return fmt::format("{:.1f} GiB", v / (1024.0 * 1024 * 1024));
  if (v >= 1024.0 * 1024) return fmt::format("{:.0f} MiB", v / (1024.0 * 1024));
  if (v >= 1024.0) return fmt::format("{:.0f} KiB", v / 1024.0);
  return fmt::format("{} B", b);
}

CommandResult<std::string> read_credentials(const std::string& file, std::string_view option) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return usage_error(std::string(option) + ": cannot read " + file);
  if (st.st_mode & 0077) return usage_error(std::string(option) + ": " + file + " is readable by others (chmod 600 it)");
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.pop_back();
  if (line.find(':') == std::string::npos || line.front() == ':')
    return usage_error(std::string(option) + ": the first line must be USER:PASSWORD");
  return line;
}

std::string local_time(std::chrono::system_clock::time_point at, const char* format) {
  const std::time_t t = std::chrono::system_clock::to_time_t(at);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buffer[64];
  return std::string(buffer, std::strftime(buffer, sizeof buffer, format, &tm));
}

}  // namespace hwaccel::cli
