// The live System of a Windows machine (docs/windows.md): the environment,
// tools found on PATH with PATHEXT and run without a shell under a job
// object (the deadline kills the whole tree), and the Windows facts detectors
// read, answered as files below windows_facts_folder (DXGI's adapters at
// dxgi_adapters_path). Linux paths (/sys, /proc, /dev) do not exist here.
module;
#include <windows.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>
module hwaccel.detect;

namespace hwaccel {

namespace {

std::wstring widen(std::string_view s) {
  if (s.empty()) return {};
  const int n = ::MultiByteToWideChar(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), nullptr, 0);
  std::wstring out(static_cast<std::size_t>(std::max(n, 0)), L'\0');
  if (n > 0) ::MultiByteToWideChar(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), out.data(), n);
  return out;
}

std::string narrow(std::wstring_view s) {
  if (s.empty()) return {};
  const int n = ::WideCharToMultiByte(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), nullptr, 0, nullptr, nullptr);
  std::string out(static_cast<std::size_t>(std::max(n, 0)), '\0');
  if (n > 0) ::WideCharToMultiByte(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), out.data(), n, nullptr, nullptr);
  return out;
}

// "... (error 2: The system cannot find the file specified.)"
std::string last_error_text(DWORD code = ::GetLastError()) {
  wchar_t* message = nullptr;
  const DWORD n = ::FormatMessageW(FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS,
                                   nullptr, code, 0, reinterpret_cast<wchar_t*>(&message), 0, nullptr);
  std::string text = n && message ? narrow(std::wstring_view(message, n)) : std::string();
  if (message) ::LocalFree(message);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  return text::cat("error ", code, text.empty() ? "" : ": ", text);
}

struct CloseHandle {
  void operator()(HANDLE h) const noexcept {
    if (h && h != INVALID_HANDLE_VALUE) ::CloseHandle(h);
  }
};
using Handle = std::unique_ptr<void, CloseHandle>;

std::optional<std::string> environment_variable(std::string_view name) {
  const std::wstring wide = widen(name);
  const DWORD n = ::GetEnvironmentVariableW(wide.c_str(), nullptr, 0);
  if (n == 0) return ::GetLastError() == ERROR_ENVVAR_NOT_FOUND ? std::nullopt : std::optional<std::string>("");
  std::wstring value(n, L'\0');
  const DWORD got = ::GetEnvironmentVariableW(wide.c_str(), value.data(), n);
  value.resize(std::min<DWORD>(got, n));
  return narrow(value);
}

bool is_regular_file(const std::wstring& path) {
  const DWORD attributes = ::GetFileAttributesW(path.c_str());
  return attributes != INVALID_FILE_ATTRIBUTES && !(attributes & FILE_ATTRIBUTE_DIRECTORY);
}

bool has_extension(std::string_view name) {
  const auto slash = name.find_last_of("\\/");
  const auto dot = name.rfind('.');
  return dot != std::string_view::npos && (slash == std::string_view::npos || dot > slash);
}

// MSVCRT's rules for one argument of a command line (CommandLineToArgvW
// reads it back): quotes around it when it has a blank or a quote, a quote
// escaped with a backslash, and the backslashes before a quote doubled.
void append_argument(std::wstring& line, std::wstring_view arg) {
  if (!line.empty()) line.push_back(L' ');
  if (!arg.empty() && arg.find_first_of(L" \t\n\v\"") == std::wstring_view::npos) {
    line.append(arg);
    return;
  }
  line.push_back(L'"');
  std::size_t backslashes = 0;
  for (const wchar_t c : arg) {
    if (c == L'\\') {
      ++backslashes;
      continue;
    }
    if (c == L'"') line.append(backslashes * 2 + 1, L'\\');
    else line.append(backslashes, L'\\');
    backslashes = 0;
    line.push_back(c);
  }
  line.append(backslashes * 2, L'\\');
  line.push_back(L'"');
}

// A batch file runs in cmd.exe, which reads its command line by rules of its
// own (%VAR% expansion, & and | between commands): an argument holding any
// of its special characters could run something else, so none is passed.
constexpr std::string_view cmd_specials = "\"%^&|<>!()\r\n";

bool is_batch_file(std::string_view path) {
  const std::string l = text::lower(path);
  return l.ends_with(".bat") || l.ends_with(".cmd");
}

// Reads a pipe to its end, keeping at most `cap` bytes; the rest is drained
// so that the tool never blocks on a full pipe.
void read_pipe(HANDLE pipe, std::size_t cap, std::string& out, bool& truncated) {
  char buffer[16384];
  DWORD n = 0;
  while (::ReadFile(pipe, buffer, sizeof buffer, &n, nullptr) && n > 0) {
    const std::size_t keep = std::min<std::size_t>(n, cap - std::min(cap, out.size()));
    out.append(buffer, keep);
    if (keep < n) truncated = true;
  }
}

class WindowsSystem final : public System {
 public:
  explicit WindowsSystem(LiveOptions options) : options_(std::move(options)) {}

  Result<FileContent> read_file(std::string_view path, std::size_t max_bytes) const override {
    const auto capped = [max_bytes](const std::string& document) {
      return FileContent{document.substr(0, max_bytes), document.size() > max_bytes};
    };
    if (path == dxgi_adapters_path) {
      const auto& document = dxgi_document();
      if (!document) return fail(document.error());
      return capped(*document);
    }
    if (path == windows_system_path) return capped(system_document());
    if (status(path, true)) return fail(ErrorKind::not_regular_file, text::cat(path, " is a folder"));
    return fail(ErrorKind::not_found, text::cat(path, ": no such file (Windows has no Linux paths; its facts are below ",
                                               windows_facts_folder, ")"));
  }

  Result<std::vector<DirEntry>> list_dir(std::string_view path) const override {
    if (path == windows_facts_folder)
      return std::vector<DirEntry>{{"dxgi", FileType::directory}, {"system.json", FileType::regular}};
    if (path == text::cat(windows_facts_folder, "/dxgi")) return std::vector<DirEntry>{{"adapters.json", FileType::regular}};
    return fail(ErrorKind::not_found, text::cat(path, ": no such folder on Windows"));
  }

  Result<std::string> read_link(std::string_view path) const override {
    return fail(ErrorKind::not_found, text::cat(path, ": no such link on Windows"));
  }

  Result<FileStatus> status(std::string_view path, bool) const override {
    if (path == windows_facts_folder || path == text::cat(windows_facts_folder, "/dxgi"))
      return FileStatus{.type = FileType::directory, .mode = 0555};
    if (path == dxgi_adapters_path) {
      const auto& document = dxgi_document();
      return FileStatus{.type = FileType::regular, .size = document ? document->size() : 0, .mode = 0444};
    }
    if (path == windows_system_path)
      return FileStatus{.type = FileType::regular, .size = system_document().size(), .mode = 0444};
    return fail(ErrorKind::not_found, text::cat(path, ": no such file on Windows"));
  }

  std::optional<std::string> env(std::string_view name) const override { return environment_variable(name); }

  std::optional<std::string> find_tool(std::string_view name) const override {
    if (name.empty() || name == "." || name == "..") return std::nullopt;
    const std::vector<std::string> extensions = executable_extensions();
    const auto first_existing = [&](const std::string& base) -> std::optional<std::string> {
      if (has_extension(base) && is_regular_file(widen(base))) return base;
      for (const auto& ext : extensions)
        if (is_regular_file(widen(base + ext))) return base + ext;
      return std::nullopt;
    };
    if (name.find_first_of("\\/:") != std::string_view::npos) return first_existing(std::string(name));
    const std::string path = options_.search_path ? *options_.search_path : environment_variable("PATH").value_or("");
    std::vector<std::string> folders;
    for (const auto dir : text::split_trimmed(path, ';'))
      if (!dir.empty()) folders.emplace_back(dir);
    folders.insert(folders.end(), options_.extra_tool_dirs.begin(), options_.extra_tool_dirs.end());
    for (auto dir : folders) {
      if (dir.size() >= 2 && dir.front() == '"' && dir.back() == '"') dir = dir.substr(1, dir.size() - 2);
      if (dir.empty()) continue;
      if (const auto found = first_existing(text::cat(dir, dir.back() == '\\' || dir.back() == '/' ? "" : "\\", name)))
        return found;
    }
    return std::nullopt;
  }

  Result<ToolResult> run(const ToolRequest& request) const override {
    if (request.argv.empty()) return fail(ErrorKind::tool_failed, "empty command");
    const auto program = find_tool(request.argv[0]);
    if (!program) return fail(ErrorKind::tool_not_found, text::cat(request.argv[0], " is not on PATH"));
    std::wstring application = widen(*program);
    std::wstring line;
    if (is_batch_file(*program)) {
      for (std::size_t i = 1; i < request.argv.size(); ++i)
        if (request.argv[i].find_first_of(cmd_specials) != std::string::npos)
          return fail(ErrorKind::tool_failed,
                      text::cat(request.argv[0], " is a batch file, and its argument \"", request.argv[i],
                                "\" holds a character cmd.exe would interpret: not run"));
      const std::string shell = environment_variable("ComSpec").value_or("C:\\Windows\\System32\\cmd.exe");
      std::wstring inner = L"\"" + application + L"\"";
      for (std::size_t i = 1; i < request.argv.size(); ++i) append_argument(inner, widen(request.argv[i]));
      line = L"\"" + widen(shell) + L"\" /d /v:off /c \"" + inner + L"\"";
      application = widen(shell);
    } else {
      for (const auto& arg : request.argv) append_argument(line, widen(arg));
    }
    return run_process(application, line, request);
  }

 private:
  // PATHEXT, lower-cased (".com", ".exe", ".bat", ".cmd" when unset).
  std::vector<std::string> executable_extensions() const {
    const std::string pathext = environment_variable("PATHEXT").value_or(".COM;.EXE;.BAT;.CMD");
    std::vector<std::string> out;
    for (const auto ext : text::split_trimmed(pathext, ';'))
      if (ext.size() > 1 && ext.front() == '.') out.push_back(text::lower(ext));
    return out;
  }

  Result<ToolResult> run_process(const std::wstring& application, std::wstring line, const ToolRequest& request) const {
    const auto started = std::chrono::steady_clock::now();
    SECURITY_ATTRIBUTES inherit{sizeof(SECURITY_ATTRIBUTES), nullptr, TRUE};
    HANDLE out_read = nullptr, out_write = nullptr, err_read = nullptr, err_write = nullptr;
    if (!::CreatePipe(&out_read, &out_write, &inherit, 0))
      return fail(ErrorKind::tool_failed, text::cat("cannot make a pipe: ", last_error_text()));
    Handle out_r(out_read), out_w(out_write);
    if (!::CreatePipe(&err_read, &err_write, &inherit, 0))
      return fail(ErrorKind::tool_failed, text::cat("cannot make a pipe: ", last_error_text()));
    Handle err_r(err_read), err_w(err_write);
    ::SetHandleInformation(out_read, HANDLE_FLAG_INHERIT, 0);
    ::SetHandleInformation(err_read, HANDLE_FLAG_INHERIT, 0);
    Handle null_in(::CreateFileW(L"NUL", GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, &inherit, OPEN_EXISTING, 0, nullptr));

    // Only these three handles reach the tool: a pipe another thread's tool
    // inherited would keep this one's output open after it exits.
    HANDLE inherited[] = {null_in.get(), out_write, err_write};
    SIZE_T attribute_bytes = 0;
    ::InitializeProcThreadAttributeList(nullptr, 1, 0, &attribute_bytes);
    std::vector<unsigned char> attribute_storage(attribute_bytes);
    auto* attributes = reinterpret_cast<LPPROC_THREAD_ATTRIBUTE_LIST>(attribute_storage.data());
    const bool listed = ::InitializeProcThreadAttributeList(attributes, 1, 0, &attribute_bytes) &&
                        ::UpdateProcThreadAttribute(attributes, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, inherited,
                                                    sizeof inherited, nullptr, nullptr);
    STARTUPINFOEXW startup{};
    startup.StartupInfo.cb = sizeof startup;
    startup.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
    startup.StartupInfo.hStdInput = null_in.get();
    startup.StartupInfo.hStdOutput = out_write;
    startup.StartupInfo.hStdError = err_write;
    if (listed) startup.lpAttributeList = attributes;

    // The job holds the tool and everything it starts: terminating it at the
    // deadline, or when the tool has exited, ends the whole tree.
    Handle job(::CreateJobObjectW(nullptr, nullptr));
    if (!job) return fail(ErrorKind::tool_failed, text::cat("cannot make a job object: ", last_error_text()));
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits{};
    limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    ::SetInformationJobObject(job.get(), JobObjectExtendedLimitInformation, &limits, sizeof limits);

    PROCESS_INFORMATION process{};
    const DWORD flags = CREATE_SUSPENDED | CREATE_NO_WINDOW | CREATE_UNICODE_ENVIRONMENT |
                        (listed ? EXTENDED_STARTUPINFO_PRESENT : 0);
    const BOOL created = ::CreateProcessW(application.c_str(), line.data(), nullptr, nullptr, TRUE, flags, nullptr,
                                          nullptr, &startup.StartupInfo, &process);
    const DWORD create_error = ::GetLastError();
    if (listed) ::DeleteProcThreadAttributeList(attributes);
    if (!created)
      return fail(ErrorKind::tool_failed,
                  text::cat("cannot start ", request.argv[0], " (", narrow(application), "): ", last_error_text(create_error)));
    Handle process_handle(process.hProcess), thread_handle(process.hThread);
    // Without the job nothing could end the tool's children at the deadline,
    // and a child holding the pipes would hang the read: the tool, still
    // suspended, is ended instead of run.
    if (!::AssignProcessToJobObject(job.get(), process.hProcess)) {
      const DWORD assign_error = ::GetLastError();
      ::TerminateProcess(process.hProcess, 1);
      return fail(ErrorKind::tool_failed,
                  text::cat("cannot run ", request.argv[0], " inside a job object: ", last_error_text(assign_error)));
    }
    ::ResumeThread(process.hThread);
    out_w.reset();  // the tool holds the write ends now
    err_w.reset();

    ToolResult result;
    std::thread err_reader([&] { read_pipe(err_read, request.max_output_bytes, result.err, result.err_truncated); });
    std::thread out_reader([&] { read_pipe(out_read, request.max_output_bytes, result.out, result.out_truncated); });
    const auto timeout_ms = std::max<std::int64_t>(0, request.timeout.count());
    const DWORD waited = ::WaitForSingleObject(process.hProcess, static_cast<DWORD>(std::min<std::int64_t>(timeout_ms, INFINITE - 1)));
    // Whatever the tool left running (a child holding the pipes) ends with it.
    ::TerminateJobObject(job.get(), 1);
    out_reader.join();
    err_reader.join();
    result.elapsed = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started);
    if (waited == WAIT_TIMEOUT)
      return fail(ErrorKind::timeout, text::cat(join_argv(request.argv), " did not finish within ", request.timeout.count(),
                                                " ms; its process tree was ended"));
    DWORD code = 0;
    ::GetExitCodeProcess(process.hProcess, &code);
    result.exit_code = static_cast<int>(code);
    return result;
  }

  // DXGI's adapters, enumerated at the first read: one detection reads them
  // for its evidence and its detector. (A mutex, not std::call_once: the
  // static mingw-w64 libstdc++ lacks call_once's thread-local state.)
  const Result<std::string>& dxgi_document() const {
    const std::lock_guard lock(mutex_);
    if (!dxgi_) {
      auto adapters = enumerate_dxgi_adapters();
      dxgi_ = adapters ? Result<std::string>(format_dxgi_adapters(*adapters)) : Result<std::string>(fail(adapters.error()));
    }
    return *dxgi_;
  }

  const std::string& system_document() const {
    const std::lock_guard lock(mutex_);
    if (!system_) system_ = format_windows_system(read_windows_system());
    return *system_;
  }

  LiveOptions options_;
  mutable std::mutex mutex_;
  mutable std::optional<std::string> system_;
  mutable std::optional<Result<std::string>> dxgi_;
};

}  // namespace

std::unique_ptr<System> make_live_system(LiveOptions options) { return std::make_unique<WindowsSystem>(std::move(options)); }

Result<std::unique_ptr<EventStream>> open_live_events(const EventStreamOptions&) {
  return fail(ErrorKind::unsupported, "Windows sends no kernel uevents or kernel log records to read");
}

}  // namespace hwaccel
