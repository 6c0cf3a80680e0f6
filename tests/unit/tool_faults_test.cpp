// Vendor tools that misbehave, run for real: through the live runner, and
// through whole detections whose tools (nvidia-smi, vulkaninfo, tpu-info,
// qaic-util, system_profiler) are fakes on a temporary PATH. Each fault must
// end within the deadline with a warning, leave the rest of the registry
// intact, and leave no zombie and no open descriptor behind.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "../test_support.hpp"

import hwaccel;

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using hwaccel::ErrorKind;
using hwaccel::WarningKind;
using hwaccel::testing::TempDir;
using hwaccel::testing::write_file;
using hwaccel::testing::write_script;

class Faults : public ::testing::Test {
 protected:
  void SetUp() override {
    hwaccel::LiveOptions options;
    options.search_path = tools_.str();
    options.extra_tool_dirs.clear();
    system_ = hwaccel::make_live_system(options);
    descriptors_before_ = hwaccel::testing::open_descriptor_count();
  }

  void TearDown() override {
    EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1) << "a child process was left behind";
    EXPECT_EQ(errno, ECHILD);
    EXPECT_EQ(hwaccel::testing::open_descriptor_count(), descriptors_before_) << "a descriptor leaked";
  }

  hwaccel::Result<hwaccel::ToolResult> run(std::string name, std::chrono::milliseconds timeout,
                                           std::size_t cap = hwaccel::default_output_cap) {
    hwaccel::ToolRequest request;
    request.argv = {std::move(name)};
    request.timeout = timeout;
    request.max_output_bytes = cap;
    return system_->run(request);
  }

  TempDir tools_;
  std::unique_ptr<hwaccel::System> system_;
  int descriptors_before_ = 0;
};

// ---- the runner ----------------------------------------------------------------

TEST_F(Faults, HundredMegabytesAreDrainedWithBoundedMemory) {
  write_script(tools_.path() / "flood", "head -c 104857600 /dev/zero; echo done >&2");
  const long before = hwaccel::testing::peak_rss_kib();
  const auto r = run("flood", 60s, std::size_t{1} << 20);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->out.size(), std::size_t{1} << 20);
  EXPECT_TRUE(r->out_truncated);
  EXPECT_EQ(r->err, "done\n");
  EXPECT_EQ(r->exit_code, 0);
  // The 99 MiB beyond the cap were read and dropped, never held.
  EXPECT_LT(hwaccel::testing::peak_rss_kib() - before, 64 * 1024) << "peak RSS grew by more than 64 MiB";
}

TEST_F(Faults, BinaryGarbageArrivesByteForByte) {
  write_script(tools_.path() / "garbage", R"(printf '\000\377\376\033[31m\r\n\000end')");
  const auto r = run("garbage", 5s);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->out, std::string("\0\xff\xfe\x1b[31m\r\n\0end", 14));
}

TEST_F(Faults, SleepingPastTheDeadlineIsATimeout) {
  write_script(tools_.path() / "late", "sleep 3; echo late");
  const auto start = std::chrono::steady_clock::now();
  const auto r = run("late", 300ms);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::timeout);
  EXPECT_NE(r.error().message.find("300 ms"), std::string::npos) << r.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2500ms) << "the runner waited for the tool";
}

TEST_F(Faults, ClosingStdoutEarlyKeepsStderrAndTheExitStatus) {
  write_script(tools_.path() / "closer", "echo partial; exec >&-; sleep 0.2; echo still here >&2; exit 4");
  const auto r = run("closer", 5s);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->out, "partial\n");
  EXPECT_EQ(r->err, "still here\n");
  EXPECT_EQ(r->exit_code, 4);
}

TEST_F(Faults, DeathByKillSignalIsReported) {
  write_script(tools_.path() / "killed", "echo before; kill -KILL $$");
  const auto r = run("killed", 5s);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->out, "before\n");
  ASSERT_TRUE(r->signal);
  EXPECT_EQ(*r->signal, SIGKILL);
  EXPECT_FALSE(r->succeeded());
}

TEST_F(Faults, GrandchildThatLeftTheGroupAndHoldsThePipeIsAbandoned) {
  // The tool starts a grandchild in a session of its own (out of reach of the
  // group kill) that keeps stdout open, then exits.
  const fs::path pid_file = tools_.path() / "grandchild.pid";
  // It waits until the grandchild has its own session (it writes its pid
  // after setsid), or the group kill could still catch it.
  write_script(tools_.path() / "escaper", "setsid sh -c 'echo $$ > " + pid_file.string() + "; exec sleep 60' &\n" +
                                              "while [ ! -s " + pid_file.string() + " ]; do sleep 0.01; done\necho answer");
  const auto start = std::chrono::steady_clock::now();
  const auto r = run("escaper", 10s);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  std::ifstream in(pid_file);
  pid_t grandchild = 0;
  ASSERT_TRUE(in >> grandchild);
  EXPECT_EQ(::kill(grandchild, SIGKILL), 0) << "the grandchild did not outlive the tool: the test tested nothing";
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->out, "answer\n");
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_LT(elapsed, 5s) << "the runner waited for the grandchild's end of the pipe";
}

TEST_F(Faults, GrandchildOfAHungToolDiesWithItsGroup) {
  const fs::path pid_file = tools_.path() / "grandchild.pid";
  write_script(tools_.path() / "hanger", "sh -c 'echo $$ > " + pid_file.string() + "; exec sleep 60' & sleep 60");
  const auto r = run("hanger", 300ms);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::timeout);
  for (int i = 0; i < 100 && !fs::exists(pid_file); ++i) std::this_thread::sleep_for(10ms);
  std::ifstream in(pid_file);
  pid_t grandchild = 0;
  ASSERT_TRUE(in >> grandchild);
  // Killed with the group: gone, or a zombie of init for a moment.
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    gone = ::kill(grandchild, 0) != 0;
    if (!gone) {
      std::ifstream stat("/proc/" + std::to_string(grandchild) + "/stat");
      std::string pid, comm, state;
      gone = (stat >> pid >> comm >> state) && state == "Z";
    }
    if (!gone) std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(gone) << "grandchild " << grandchild << " outlived its process group";
}

TEST_F(Faults, NotExecutableAndDirectoryAreNotTools) {
  write_file(tools_.path() / "plain", "#!/bin/sh\necho hi\n");
  ::chmod((tools_.path() / "plain").c_str(), 0644);
  fs::create_directory(tools_.path() / "folder");
  for (const char* name : {"plain", "folder"}) {
    EXPECT_FALSE(system_->find_tool(name)) << name;
    const auto r = run(name, 1s);
    ASSERT_FALSE(r) << name;
    EXPECT_EQ(r.error().kind, ErrorKind::tool_not_found) << name;
  }
}

// ---- whole detections ---------------------------------------------------------

struct Fault {
  const char* name;
  const char* script;  ///< body of the fake tool
  /// Kinds the warnings that name the tool may have (the first one is
  /// enough for the faults whose outcome does not depend on timing).
  std::vector<WarningKind> kinds;
  enum Kind { script_file, not_executable, directory } kind = script_file;
};

const Fault faults[] = {
    {"hang", "sleep 60", {WarningKind::timeout}},
    {"sleep_past_deadline", "sleep 2; echo late", {WarningKind::timeout}},
    // 40 MiB, over the 32 MiB output cap: cut, or (on a slow machine) not done in time.
    {"flood", "head -c 41943040 /dev/zero | tr '\\000' x",
     {WarningKind::timeout, WarningKind::truncated, WarningKind::parse_error}},
    {"binary_garbage", R"(printf '\177ELF\002\001\001\000\000\000\377\376'; head -c 4096 /dev/urandom)",
     {WarningKind::parse_error}},
    {"closes_stdout_early", "exec >&-; echo 'lost my output' >&2; sleep 0.1; exit 0", {WarningKind::parse_error}},
    {"killed_by_signal", "kill -SEGV $$", {WarningKind::tool_failed}},
    // The grandchild gets a session of its own, out of reach of the group
    // kill, and writes its pid (for the test to end it) once it has; the tool
    // waits for that, prints a little and exits.
    {"grandchild_holds_pipe",
     "pids=\"$(dirname \"$0\")/grandchild.$$\"; setsid sh -c 'echo $$ > \"$0\"; exec sleep 60' \"$pids\" &\n"
     "while [ ! -s \"$pids\" ]; do sleep 0.01; done; echo partial",
     {WarningKind::parse_error}},
    {"not_executable", "echo never", {}, Fault::not_executable},
    {"directory", "", {}, Fault::directory},
};

struct ToolBackend {
  hwaccel::Backend backend;
  const char* tool;
};

constexpr ToolBackend tool_backends[] = {
    {hwaccel::Backend::cuda, "nvidia-smi"},  {hwaccel::Backend::vulkan, "vulkaninfo"},
    {hwaccel::Backend::tpu, "tpu-info"},     {hwaccel::Backend::qualcomm, "qaic-util"},
    {hwaccel::Backend::apple, "system_profiler"},
};

constexpr auto detection_deadline = 700ms;

hwaccel::AcceleratorRegistry detect(const hwaccel::System& system, std::optional<hwaccel::Backend> backend) {
  // The fake tools answer for devices this machine does not have.
  auto builder = hwaccel::DetectBuilder::none()
                     .with(hwaccel::Backend::cpu)
                     .system_probes(false)
                     .tool_timeout(detection_deadline)
                     .all_tools(true);
  if (backend) builder.with(*backend);
  return builder.detect(system);
}

class FaultyToolDetection : public ::testing::TestWithParam<std::tuple<std::size_t, std::size_t>> {};

TEST_P(FaultyToolDetection, EndsInTimeWithAWarningAndTheRestIntact) {
  const Fault& fault = faults[std::get<0>(GetParam())];
  const ToolBackend& b = tool_backends[std::get<1>(GetParam())];
  TempDir tools;
  const fs::path tool = tools.path() / b.tool;
  switch (fault.kind) {
    case Fault::script_file: write_script(tool, fault.script); break;
    case Fault::not_executable:
      write_file(tool, std::string("#!/bin/sh\n") + fault.script + "\n");
      ::chmod(tool.c_str(), 0644);
      break;
    case Fault::directory: fs::create_directory(tool); break;
  }
  hwaccel::LiveOptions options;
  options.search_path = tools.str();
  options.extra_tool_dirs.clear();
  const auto system = hwaccel::make_live_system(options);
  const int descriptors_before = hwaccel::testing::open_descriptor_count();

  const auto baseline = detect(*system, std::nullopt);
  const auto start = std::chrono::steady_clock::now();
  const auto registry = detect(*system, b.backend);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  std::size_t escaped = 0;
  for (const auto& entry : fs::directory_iterator(tools.path())) {
    if (!entry.path().filename().string().starts_with("grandchild.")) continue;
    std::ifstream in(entry.path());
    pid_t pid = 0;
    if (in >> pid && pid > 1 && ::kill(pid, SIGKILL) == 0) ++escaped;
  }
  if (std::string_view(fault.name) == "grandchild_holds_pipe")
    EXPECT_GT(escaped, 0u) << "no grandchild was still alive holding the pipe: the test tested nothing";

  // Not a timing test (the warning kinds below show which deadline was hit):
  // a guard against a missed deadline on the tools that run for 60 s. A
  // detector may wait on its tool twice in a row (cuda asks `nvidia-smi -q`
  // after a failed query), and a loaded machine (sanitizers, parallel
  // suites) stretches each wait, so the bound is far from both.
  EXPECT_LT(elapsed, 4 * detection_deadline + 15s) << fault.name << " / " << b.tool;
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1) << "a child process was left behind";
  EXPECT_EQ(hwaccel::testing::open_descriptor_count(), descriptors_before) << "a descriptor leaked";

  // No device invented from the fault, and the CPU detector unaffected.
  EXPECT_TRUE(registry.by_backend(b.backend).empty()) << fault.name << " / " << b.tool;
  const auto* cpu = registry.find("cpu:0");
  const auto* cpu_before = baseline.find("cpu:0");
  ASSERT_TRUE(cpu && cpu_before);
  EXPECT_EQ(cpu->name, cpu_before->name);
  EXPECT_EQ(cpu->memory_bytes, cpu_before->memory_bytes);
  EXPECT_EQ(cpu->properties, cpu_before->properties);

  std::vector<hwaccel::Warning> from_backend;
  for (const auto& w : registry.warnings())
    if (w.backend == hwaccel::to_string(b.backend)) from_backend.push_back(w);
  if (fault.kind != Fault::script_file) {
    // Not a tool at all: the backend behaves as on a machine without it.
    EXPECT_TRUE(from_backend.empty()) << fault.name << " / " << b.tool << ": " << from_backend.front().message;
    return;
  }
  // Warnings about the faulty tool (the apple detector also runs sysctl, absent here).
  std::erase_if(from_backend, [&](const hwaccel::Warning& w) { return w.message.find(b.tool) == std::string::npos; });
  ASSERT_FALSE(from_backend.empty()) << fault.name << " / " << b.tool << " gave no warning naming the tool";
  for (const auto& w : from_backend) {
    EXPECT_NE(std::find(fault.kinds.begin(), fault.kinds.end(), w.kind), fault.kinds.end())
        << fault.name << " / " << b.tool << ": unexpected " << hwaccel::to_string(w.kind) << " warning: " << w.message;
    if (std::string_view(fault.name) == "killed_by_signal")
      EXPECT_NE(w.message.find("signal 11"), std::string::npos) << w.message;
  }
}

std::string fault_test_name(const ::testing::TestParamInfo<std::tuple<std::size_t, std::size_t>>& info) {
  std::string tool = tool_backends[std::get<1>(info.param)].tool;
  for (char& c : tool)
    if (c == '-') c = '_';
  return std::string(faults[std::get<0>(info.param)].name) + "__" + tool;
}

INSTANTIATE_TEST_SUITE_P(Tools, FaultyToolDetection,
                         ::testing::Combine(::testing::Range<std::size_t>(0, std::size(faults)),
                                            ::testing::Range<std::size_t>(0, std::size(tool_backends))),
                         fault_test_name);

}  // namespace
