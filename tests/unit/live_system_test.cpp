// The live System: bounded file reads and the tool runner, driven by fake
// tools that the tests write into a temporary PATH.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "../test_support.hpp"

import hwaccel;

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using hwaccel::testing::TempDir;
using hwaccel::testing::write_file;
using hwaccel::testing::write_script;

class LiveRunner : public ::testing::Test {
 protected:
  void SetUp() override {
    tools_ = std::make_unique<TempDir>();
    hwaccel::LiveOptions options;
    options.search_path = tools_->str();
    options.extra_tool_dirs.clear();
    system_ = hwaccel::make_live_system(options);
    descriptors_before_ = hwaccel::testing::open_descriptor_count();
  }

  void TearDown() override {
    // No zombie left behind and no descriptor leaked.
    EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);
    EXPECT_EQ(errno, ECHILD);
    EXPECT_EQ(hwaccel::testing::open_descriptor_count(), descriptors_before_);
  }

  void tool(const std::string& name, const std::string& body) { write_script(tools_->path() / name, body); }

  hwaccel::Result<hwaccel::ToolResult> run(std::vector<std::string> argv, std::chrono::milliseconds timeout = 5000ms,
                                           std::size_t cap = hwaccel::default_output_cap) {
    hwaccel::ToolRequest req;
    req.argv = std::move(argv);
    req.timeout = timeout;
    req.max_output_bytes = cap;
    return system_->run(req);
  }

  std::unique_ptr<TempDir> tools_;
  std::unique_ptr<hwaccel::System> system_;
  int descriptors_before_ = 0;
};

TEST_F(LiveRunner, CapturesStdoutStderrAndExitCode) {
  tool("hello", "echo out; echo err >&2; exit 0");
  auto r = run({"hello"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_FALSE(r->signal);
  EXPECT_TRUE(r->succeeded());
}

TEST_F(LiveRunner, PassesArgumentsWithoutAShell) {
  tool("args", R"(for a in "$@"; do printf '[%s]' "$a"; done)");
  auto r = run({"args", "a b", "$HOME", "*", ";true"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->out, "[a b][$HOME][*][;true]");
}

TEST_F(LiveRunner, NonZeroExitIsAResultNotAnError) {
  tool("fails", "echo 'NVIDIA-SMI has failed' >&2; exit 9");
  auto r = run({"fails"});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->exit_code, 9);
  EXPECT_FALSE(r->succeeded());
  EXPECT_EQ(r->err, "NVIDIA-SMI has failed\n");
}

TEST_F(LiveRunner, DeathBySignalIsReported) {
  tool("crash", "kill -SEGV $$");
  auto r = run({"crash"});
  ASSERT_TRUE(r);
  ASSERT_TRUE(r->signal);
  EXPECT_EQ(*r->signal, SIGSEGV);
}

TEST_F(LiveRunner, TenMegabytesDoNotDeadlock) {
  tool("big", "head -c 10485760 /dev/zero | tr '\\0' 'x'; head -c 3000000 /dev/zero | tr '\\0' 'e' >&2");
  auto r = run({"big"}, 20000ms);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->out.size(), 10485760u);
  EXPECT_EQ(r->err.size(), 3000000u);
  EXPECT_FALSE(r->out_truncated);
}

TEST_F(LiveRunner, OutputBeyondTheCapIsDrainedAndDropped) {
  tool("big", "head -c 5000000 /dev/zero");
  auto r = run({"big"}, 20000ms, 1000);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->out.size(), 1000u);
  EXPECT_TRUE(r->out_truncated);
  EXPECT_EQ(r->exit_code, 0);
}

TEST_F(LiveRunner, HungToolIsKilledAtTheDeadline) {
  tool("hang", "sleep 60");
  const auto start = std::chrono::steady_clock::now();
  auto r = run({"hang"}, 300ms);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, hwaccel::ErrorKind::timeout);
  EXPECT_LT(elapsed, 5s) << "the runner waited far past the deadline";
}

TEST_F(LiveRunner, ChildHoldingThePipeIsKilledWithTheGroup) {
  // The tool forks a child that inherits stdout and outlives it.
  tool("forker", "sleep 60 & echo started; wait");
  const auto start = std::chrono::steady_clock::now();
  auto r = run({"forker"}, 300ms);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, hwaccel::ErrorKind::timeout);
  EXPECT_LT(elapsed, 5s);
}

TEST_F(LiveRunner, ExitedToolWhoseChildKeepsThePipeStillReturns) {
  // The tool itself exits at once; its background child keeps stdout open.
  tool("leaver", "sleep 60 & echo done");
  const auto start = std::chrono::steady_clock::now();
  auto r = run({"leaver"}, 10000ms);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->out, "done\n");
  EXPECT_LT(elapsed, 5s);
}

TEST_F(LiveRunner, ToolThatClosesStdoutEarlyAndHangsTimesOut) {
  tool("closer", "exec >&- 2>&-; sleep 60");
  auto r = run({"closer"}, 300ms);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, hwaccel::ErrorKind::timeout);
}

TEST_F(LiveRunner, ToolWithoutExecBitIsNotFound) {
  write_file(tools_->path() / "noexec", "#!/bin/sh\necho hi\n");
  ::chmod((tools_->path() / "noexec").c_str(), 0644);
  EXPECT_FALSE(system_->find_tool("noexec"));
  auto r = run({"noexec"});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, hwaccel::ErrorKind::tool_not_found);
}

TEST_F(LiveRunner, DirectoryNamedLikeAToolIsNotATool) {
  fs::create_directory(tools_->path() / "nvidia-smi");
  EXPECT_FALSE(system_->find_tool("nvidia-smi"));
}

TEST_F(LiveRunner, ToolsAreFoundInFoldersNamedWithOrWithoutATrailingSlash) {
  TempDir slashed;
  write_script(slashed.path() / "second", "echo second");
  tool("first", "echo first");
  hwaccel::LiveOptions options;
  options.search_path = tools_->str() + ":" + slashed.str() + "/";
  options.extra_tool_dirs.clear();
  const auto system = hwaccel::make_live_system(options);
  EXPECT_EQ(system->find_tool("first").value_or(""), (tools_->path() / "first").string());
  EXPECT_EQ(system->find_tool("second").value_or(""), slashed.str() + "/second");
  // A name too long for any path is simply not found.
  EXPECT_FALSE(system->find_tool(std::string(5000, 'n')));
}

TEST_F(LiveRunner, MissingToolIsToolNotFound) {
  auto r = run({"no-such-tool-anywhere"});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, hwaccel::ErrorKind::tool_not_found);
}

TEST_F(LiveRunner, BareNamesAreLookedUpAndPathsTakenAsGiven) {
  tool("t", "true");
  EXPECT_TRUE(system_->find_tool("t"));
  // A name with a slash is that file (a command template's program), never
  // searched for on PATH: "../t" is relative to the working directory.
  EXPECT_FALSE(system_->find_tool("../t"));
  const std::string absolute = (tools_->path() / "t").string();
  EXPECT_EQ(system_->find_tool(absolute).value_or(""), absolute);
  EXPECT_FALSE(system_->find_tool(tools_->path().string()));  // a directory
  EXPECT_FALSE(system_->find_tool(""));
}

TEST_F(LiveRunner, ScriptWithBadInterpreterFailsToStart) {
  write_file(tools_->path() / "broken", "#!/nonexistent/interpreter\n");
  ::chmod((tools_->path() / "broken").c_str(), 0755);
  auto r = run({"broken"});
  // glibc reports the failed exec from posix_spawn; either way, no result.
  if (r) {
    EXPECT_FALSE(r->succeeded());
  } else {
    EXPECT_TRUE(r.error().kind == hwaccel::ErrorKind::tool_failed || r.error().kind == hwaccel::ErrorKind::tool_not_found)
        << r.error().message;
  }
}

TEST_F(LiveRunner, InjectionVariablesAreStrippedAndLocaleIsC) {
  ::setenv("LD_PRELOAD", "/nonexistent/evil.so", 1);
  tool("envdump", "echo \"P=${LD_PRELOAD:-unset} L=$LC_ALL\"");
  auto r = run({"envdump"});
  ::unsetenv("LD_PRELOAD");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->out, "P=unset L=C\n");
}

TEST_F(LiveRunner, StdinIsEmpty) {
  tool("reader", "cat; echo end");
  auto r = run({"reader"}, 3000ms);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->out, "end\n");
}

TEST_F(LiveRunner, ConcurrentRunsDoNotInterfere) {
  tool("echoer", "echo \"$1\"");
  std::vector<std::thread> threads;
  std::vector<std::string> outputs(16);
  for (int i = 0; i < 16; ++i)
    threads.emplace_back([&, i] {
      auto r = run({"echoer", std::to_string(i)});
      outputs[static_cast<std::size_t>(i)] = r ? r->out : "error";
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < 16; ++i) EXPECT_EQ(outputs[static_cast<std::size_t>(i)], std::to_string(i) + "\n");
}

// ---- files -----------------------------------------------------------------

class LiveFiles : public ::testing::Test {
 protected:
  TempDir dir_;
  std::unique_ptr<hwaccel::System> system_ = hwaccel::make_live_system();
};

TEST_F(LiveFiles, ReadsAreCapped) {
  write_file(dir_.path() / "f", std::string(1000, 'a'));
  auto r = system_->read_file((dir_.path() / "f").string(), 100);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->data.size(), 100u);
  EXPECT_TRUE(r->truncated);
  auto full = system_->read_file((dir_.path() / "f").string(), 1000);
  ASSERT_TRUE(full);
  EXPECT_EQ(full->data.size(), 1000u);
  EXPECT_FALSE(full->truncated);
}

TEST_F(LiveFiles, EveryLengthAroundThePageAndTheChunksReadsWhole) {
  // Reads go through a page on the stack, then growing chunks: every file
  // comes back byte for byte, capped exactly, at each boundary.
  for (const std::size_t length : {0u, 1u, 4095u, 4096u, 4097u, 8191u, 8192u, 8193u, 20'480u, 20'481u, 100'000u}) {
    std::string content(length, '\0');
    for (std::size_t i = 0; i < length; ++i) content[i] = static_cast<char>('a' + (i * 31) % 26);
    const auto file = dir_.path() / ("f" + std::to_string(length));
    write_file(file, content);
    for (const std::size_t cap : {length, length + 1, length > 0 ? length - 1 : 0, std::size_t{4096}, std::size_t{1} << 20}) {
      auto r = system_->read_file(file.string(), cap);
      ASSERT_TRUE(r) << length << " " << cap;
      EXPECT_EQ(r->data, content.substr(0, cap)) << length << " " << cap;
      EXPECT_EQ(r->truncated, length > cap) << length << " " << cap;
    }
  }
}

TEST_F(LiveFiles, ProcFilesThatReadInPiecesAreReadWhole) {
  // /proc files give a record or a page per read(), and report a size of 0.
  std::ifstream in("/proc/self/mountinfo");
  const std::string expected((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto r = system_->read_file("/proc/self/mountinfo");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->data, expected);
  EXPECT_FALSE(r->truncated);
}

TEST_F(LiveFiles, KernelFoldersAreRefusedAsFolders) {
  // sysfs and procfs files are read without an fstat first: a folder there
  // is still refused as a folder, not as a failed read.
  for (const char* path : {"/sys/class", "/proc/self", "/proc/sys"}) {
    auto r = system_->read_file(path);
    ASSERT_FALSE(r) << path;
    EXPECT_EQ(r.error().kind, hwaccel::ErrorKind::not_regular_file) << path;
    EXPECT_NE(r.error().message.find("directory"), std::string::npos) << r.error().message;
  }
}

TEST_F(LiveFiles, SysfsAttributesAndLargeProcFilesReadWhole) {
  // A sysfs attribute ends at its first short read; /proc/self/maps is a
  // seq_file that can pass a page; both come back as the kernel wrote them.
  const char* attribute = "/sys/kernel/mm/transparent_hugepage/enabled";
  for (const char* path : {"/sys/devices/system/cpu/online", "/sys/devices/system/cpu/possible", attribute}) {
    std::ifstream in(path);
    if (!in) continue;
    const std::string expected((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto r = system_->read_file(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->data, expected) << path;
  }
  auto maps = system_->read_file("/proc/self/maps");
  ASSERT_TRUE(maps);
  EXPECT_GT(maps->data.size(), 4096u);  // dozens of mappings in a test binary
  EXPECT_EQ(maps->data.back(), '\n');
}

TEST_F(LiveFiles, ProcPathsThroughAProcessRootAreCheckedLikeAnyFile) {
  // /proc/self/root leaves procfs: a FIFO reached through it is refused.
  const auto fifo = dir_.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  auto r = system_->read_file("/proc/self/root" + fifo.string());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, hwaccel::ErrorKind::not_regular_file);
}

TEST_F(LiveFiles, FifoIsRefusedWithoutBlocking) {
  const auto fifo = dir_.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  auto r = system_->read_file(fifo.string());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, hwaccel::ErrorKind::not_regular_file);
}

TEST_F(LiveFiles, DeviceNodeIsRefused) {
  auto r = system_->read_file("/dev/zero");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, hwaccel::ErrorKind::not_regular_file);
}

TEST_F(LiveFiles, SparseHugeFileReadsOnlyTheCap) {
  const auto big = dir_.path() / "sparse";
  { write_file(big, ""); }
  ASSERT_EQ(::truncate(big.c_str(), off_t{1} << 30), 0);
  auto r = system_->read_file(big.string(), 4096);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->data.size(), 4096u);
  EXPECT_TRUE(r->truncated);
}

TEST_F(LiveFiles, MissingFileIsNotFound) {
  auto r = system_->read_file((dir_.path() / "nope").string());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, hwaccel::ErrorKind::not_found);
}

TEST_F(LiveFiles, ListsSortedAndReadsLinks) {
  write_file(dir_.path() / "b", "");
  write_file(dir_.path() / "a", "");
  fs::create_symlink("a", dir_.path() / "c");
  auto entries = system_->list_dir(dir_.str());
  ASSERT_TRUE(entries);
  ASSERT_EQ(entries->size(), 3u);
  EXPECT_EQ((*entries)[0].name, "a");
  EXPECT_EQ((*entries)[2].type, hwaccel::FileType::symlink);
  EXPECT_EQ(system_->read_link((dir_.path() / "c").string()).value_or(""), "a");
  auto st = system_->status((dir_.path() / "c").string(), false);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->type, hwaccel::FileType::symlink);
}

TEST_F(LiveFiles, SymlinkLoopIsReported) {
  fs::create_symlink("loop2", dir_.path() / "loop1");
  fs::create_symlink("loop1", dir_.path() / "loop2");
  auto r = system_->read_file((dir_.path() / "loop1").string());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, hwaccel::ErrorKind::symlink_loop);
}

}  // namespace
