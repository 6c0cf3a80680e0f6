// CPU backend parsers and detection through fixture trees.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "../test_support.hpp"

import hwaccel;
import hwaccel.detectors;

#include "module_helpers.hpp"

namespace {

namespace fs = std::filesystem;
using namespace hwaccel;
using hwaccel::testing::CountingSystem;
using hwaccel::testing::TempDir;
using hwaccel::testing::write_file;

constexpr const char* xeon_record = R"(processor	: 0
vendor_id	: GenuineIntel
cpu family	: 6
model		: 143
model name	: Intel(R) Xeon(R) Platinum 8480+
physical id	: 0
siblings	: 112
core id		: 0
cpu cores	: 56
flags		: fpu sse4_2 avx avx2 fma f16c avx512f avx512bw avx512vl avx512_vnni avx512_bf16 avx512_fp16 amx_bf16 amx_tile amx_int8 avx_vnni

processor	: 1
vendor_id	: GenuineIntel
model name	: Intel(R) Xeon(R) Platinum 8480+
)";

TEST(CpuParsers, Meminfo) {
  const auto m = parsers::parse_meminfo("MemTotal:       16318480 kB\nMemFree: 1 kB\nMemAvailable:   12000000 kB\n");
  EXPECT_EQ(m.total_bytes, 16318480ull * 1024);
  EXPECT_EQ(m.available_bytes, 12000000ull * 1024);
  EXPECT_FALSE(parsers::parse_meminfo("garbage\n\x01\x02").total_bytes);
  EXPECT_FALSE(parsers::parse_meminfo("MemTotal: lots kB\n").total_bytes);
}

TEST(CpuParsers, X86Record) {
  const auto s = parsers::parse_cpuinfo(xeon_record);
  EXPECT_EQ(s.model_name, "Intel(R) Xeon(R) Platinum 8480+");
  EXPECT_EQ(s.architecture, "x86_64");
  EXPECT_EQ(s.siblings, 112u);
  EXPECT_EQ(s.cores_per_package, 56u);
  EXPECT_EQ(s.processor_records, 2u);
  const std::vector<std::string> expected = {"amx_bf16", "amx_int8", "amx_tile", "avx", "avx2", "avx512_bf16",
                                             "avx512_fp16", "avx512_vnni", "avx512bw", "avx512f", "avx512vl",
                                             "avx_vnni", "f16c", "fma", "sse4_2"};
  EXPECT_EQ(s.isa_features, expected);
}

TEST(CpuParsers, X86RecordsAfterTheFirstAreCounted) {
  // Only the first record's fields are read; every "processor" line counts,
  // wherever the word "processor" appears otherwise.
  std::string text;
  for (int i = 0; i < 300; ++i)
    text += "processor\t: " + std::to_string(i) +
            "\nvendor_id\t: GenuineIntel\nmodel name\t: " + (i == 0 ? "Intel(R) Xeon(R) Gold 6430" : "processor ignored") +
            "\nflags\t\t: fpu avx2 processorx\nprocessor_note\t: not a record\nprocessor   : 9\n\n" + (i % 7 ? "" : "\n");
  text += "processor\t: 300";  // the last line without its newline
  const auto s = parsers::parse_cpuinfo(text);
  EXPECT_EQ(s.model_name, "Intel(R) Xeon(R) Gold 6430");
  EXPECT_EQ(s.processor_records, 300u * 2 + 1);
  EXPECT_EQ(s.isa_features, (std::vector<std::string>{"avx2"}));
}

TEST(CpuParsers, ArmRecordsWithTwoCoreTypes) {
  std::string text;
  for (int i = 0; i < 4; ++i)
    text += "processor\t: " + std::to_string(i) +
            "\nBogoMIPS\t: 2000.00\nFeatures\t: fp asimd asimddp asimdhp sve sve2 i8mm bf16\nCPU implementer\t: 0x41\n"
            "CPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: " + (i < 2 ? "0xd85" : "0xd87") + "\nCPU revision\t: 1\n\n";
  const auto s = parsers::parse_cpuinfo(text);
  EXPECT_EQ(s.model_name, "2x Cortex-X925 + 2x Cortex-A725");
  EXPECT_EQ(s.architecture, "aarch64");
  EXPECT_EQ(s.vendor, "ARM");
  const std::vector<std::string> expected = {"bf16", "dotprod", "fp16", "i8mm", "neon", "sve", "sve2"};
  EXPECT_EQ(s.isa_features, expected);
  EXPECT_EQ(parsers::arm_core_name(0x41, 0xd4f), "Neoverse V2");
  EXPECT_EQ(parsers::arm_core_name(0x99, 0x1), "");
}

TEST(CpuParsers, CgroupLimits) {
  EXPECT_FALSE(parsers::parse_cgroup_memory_limit("max\n"));
  EXPECT_EQ(parsers::parse_cgroup_memory_limit("17179869184\n"), 17179869184ull);
  EXPECT_FALSE(parsers::parse_cgroup_memory_limit("9223372036854771712"));  // v1 "unlimited"
  EXPECT_FALSE(parsers::parse_cgroup_memory_limit("lots"));
}

class CpuDetection : public ::testing::Test {
 protected:
  TempDir dir_;
  void file(const std::string& path, const std::string& content) { write_file(dir_.path() / "root" / path, content); }
  // What the last detect() asked of /proc/cpuinfo: how many reads, and the
  // most bytes one read asked for.
  int cpuinfo_reads_ = 0;
  std::size_t cpuinfo_bytes_ = 0;

  AcceleratorRegistry detect(bool host_probes = false) {
    write_file(dir_.path() / "fixture.json", R"({"format": 1, "machine": "m", "source": "s", "synthetic": true})");
    auto f = FixtureSystem::open(dir_.str());
    if (!f) {
      ADD_FAILURE() << f.error().message;
      return AcceleratorRegistry{};
    }
    const CountingSystem system(**f);
    auto registry = DetectBuilder::none().with(Backend::cpu).system_probes(host_probes).detect(system);
    cpuinfo_reads_ = system.reads("/proc/cpuinfo");
    cpuinfo_bytes_ = system.most_bytes_asked("/proc/cpuinfo");
    return registry;
  }
};

TEST_F(CpuDetection, TwoSocketServerInAContainer) {
  file("proc/meminfo", "MemTotal:       2113368064 kB\nMemAvailable:   2000000000 kB\n");
  std::string cpuinfo = xeon_record;
  file("proc/cpuinfo", cpuinfo);
  file("sys/devices/system/cpu/online", "0-223\n");
  file("sys/devices/system/node/online", "0-1\n");
  file("sys/devices/system/node/node0/cpulist", "0-55,112-167\n");
  file("sys/devices/system/node/node0/meminfo", "Node 0 MemTotal:       1056684032 kB\n");
  file("sys/devices/system/node/node1/cpulist", "56-111,168-223\n");
  file("sys/devices/system/node/node1/meminfo", "Node 1 MemTotal:       1056684032 kB\n");
  file("proc/self/cgroup", "0::/kubepods/pod1/abc\n");
  file("sys/fs/cgroup/kubepods/pod1/abc/memory.max", "68719476736\n");
  const auto r = detect();
  ASSERT_TRUE(r.system().cpu);
  const CpuInfo& cpu = *r.system().cpu;
  EXPECT_EQ(cpu.logical_cores, 224u);
  EXPECT_EQ(cpu.physical_cores, 112u);
  EXPECT_EQ(cpu.sockets, 2u);
  ASSERT_EQ(cpu.numa_nodes.size(), 2u);
  EXPECT_EQ(cpu.numa_nodes[1].cpulist, "56-111,168-223");
  EXPECT_EQ(cpu.numa_nodes[1].memory_bytes, 1056684032ull * 1024);
  EXPECT_EQ(cpu.cgroup_memory_limit_bytes, 64ull << 30);
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_EQ(r.devices()[0].memory_bytes, 2113368064ull * 1024);
  EXPECT_EQ(r.devices()[0].vendor, "Intel");
  EXPECT_TRUE(r.warnings().empty());
}

// 224 records of 1.5 KB, as a two-socket Xeon 8480+ node writes them.
std::string big_xeon_cpuinfo() {
  std::string text;
  for (int i = 0; i < 224; ++i)
    text += "processor\t: " + std::to_string(i) +
            "\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\nsiblings\t: 112\n"
            "cpu cores\t: 56\nflags\t\t: fpu sse4_2 avx avx2 fma avx512f hypervisor " +
            std::string(1300, 'x') + "\n\n";
  return text;
}

TEST_F(CpuDetection, X86ReadsOnlyThePageWithTheFirstRecord) {
  file("proc/meminfo", "MemTotal:       2113368064 kB\n");
  file("proc/cpuinfo", big_xeon_cpuinfo());
  file("sys/devices/system/cpu/online", "0-223\n");
  const auto r = detect();
  EXPECT_EQ(cpuinfo_reads_, 1);
  EXPECT_LE(cpuinfo_bytes_, 4096u);
  ASSERT_TRUE(r.system().cpu);
  EXPECT_EQ(r.system().cpu->model_name, "Intel(R) Xeon(R) Platinum 8480+");
  EXPECT_EQ(r.system().cpu->logical_cores, 224u);
  EXPECT_EQ(r.system().cpu->physical_cores, 112u);
  EXPECT_EQ(r.system().cpu->sockets, 2u);
  const std::vector<std::string> isa = {"avx", "avx2", "avx512f", "fma", "sse4_2"};
  EXPECT_EQ(r.system().cpu->isa_features, isa);
  EXPECT_TRUE(r.warnings().empty());
}

TEST_F(CpuDetection, TheHostProbesAskForNoMoreThanThePageEither) {
  file("proc/meminfo", "MemTotal:       2113368064 kB\n");
  file("proc/cpuinfo", big_xeon_cpuinfo());
  file("sys/devices/system/cpu/online", "0-223\n");
  const auto r = detect(/*host_probes=*/true);
  EXPECT_LE(cpuinfo_bytes_, 4096u);
  ASSERT_TRUE(r.system().environment);
  EXPECT_TRUE(r.system().environment->virtual_machine);  // the first record's "hypervisor" flag
}

TEST_F(CpuDetection, WithoutTheOnlineListX86CountsEveryRecord) {
  file("proc/meminfo", "MemTotal:       2113368064 kB\n");
  file("proc/cpuinfo", big_xeon_cpuinfo());
  const auto r = detect();
  EXPECT_EQ(cpuinfo_reads_, 2);
  ASSERT_TRUE(r.system().cpu);
  EXPECT_EQ(r.system().cpu->logical_cores, 224u);
  EXPECT_EQ(r.system().cpu->sockets, 2u);
}

TEST_F(CpuDetection, ArmReadsEveryCore) {
  // 40 cores of two types: more than a page, and every record is needed.
  std::string text;
  for (int i = 0; i < 40; ++i)
    text += "processor\t: " + std::to_string(i) +
            "\nBogoMIPS\t: 2000.00\nFeatures\t: fp asimd fphp asimdhp asimddp bf16 i8mm\n"
            "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: " +
            (i < 20 ? "0xd85" : "0xd87") + "\nCPU revision\t: 1\n\n";
  ASSERT_GT(text.size(), 4096u);
  file("proc/meminfo", "MemTotal:       128000000 kB\n");
  file("proc/cpuinfo", text);
  file("sys/devices/system/cpu/online", "0-39\n");
  const auto r = detect();
  EXPECT_EQ(cpuinfo_reads_, 2);
  ASSERT_TRUE(r.system().cpu);
  EXPECT_EQ(r.system().cpu->model_name, "20x Cortex-X925 + 20x Cortex-A725");
  EXPECT_EQ(r.system().cpu->logical_cores, 40u);
}

TEST_F(CpuDetection, GarbageAndMissingFilesGiveWarningsNotCrashes) {
  file("proc/meminfo", std::string("\x7f" "ELF\x02\x01\x01\0\0\0", 10));
  file("proc/cpuinfo", std::string(200000, '\xff'));
  file("sys/devices/system/cpu/online", "banana");
  file("sys/devices/system/node/online", "0-99999999");
  const auto r = detect();
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_FALSE(r.devices()[0].memory_bytes);
  EXPECT_EQ(r.devices()[0].name, "CPU");
  ASSERT_FALSE(r.warnings().empty());
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::parse_error);
}

// Found by fuzzing (tests/fuzz/regressions/detect_cpu/available-above-total).
TEST_F(CpuDetection, AvailableMemoryAboveTheTotalIsUnknown) {
  file("proc/meminfo", "MemTotal:       24683620 kB\nMemAvailable:   48542032 kB\n");
  file("proc/cpuinfo", "processor\t: 0\nmodel name\t: Test CPU\n");
  const auto r = detect();
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_EQ(r.devices()[0].memory_bytes, 24683620ull * 1024);
  EXPECT_FALSE(r.devices()[0].memory_free_bytes);
  EXPECT_FALSE(r.devices()[0].memory_used_bytes);
  ASSERT_TRUE(r.system().cpu);
  EXPECT_FALSE(r.system().cpu->memory_available_bytes);
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].kind, WarningKind::invalid_value);
  EXPECT_EQ(r.warnings()[0].message,
            "/proc/meminfo: MemAvailable (48542032 kB) exceeds MemTotal (24683620 kB); available memory is unknown");
}

TEST_F(CpuDetection, NoProcMeansAWarning) {
  const auto r = detect();
  ASSERT_EQ(r.devices().size(), 1u);
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_NE(r.warnings()[0].message.find("/proc/meminfo"), std::string::npos);
}

}  // namespace
