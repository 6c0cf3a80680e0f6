// Processes per device: nvidia-smi's compute-apps CSV and the reports'
// process lists (real MIG capture under load), DRM fdinfo, /proc status, and
// the sampler on the fixture machines with processes (containers, MIG
// instances, DRM clients), a PID namespace of our own and hostile /proc.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../test_support.hpp"

import hwaccel;
import hwaccel.detectors;

#include "module_helpers.hpp"

namespace {

using namespace hwaccel;
namespace support = hwaccel::testing;

// The section of an nvidia_gpu_exporter capture file that `command` printed in `state` ("idle", "load").
std::string capture_section(const std::string& text, std::string_view state, std::string_view command) {
  const std::string header = std::string("# ") + std::string(state) + " :: ";
  for (std::size_t at = text.find(header); at != std::string::npos; at = text.find(header, at + 1)) {
    const std::size_t line_end = text.find('\n', at);
    const std::size_t dollar = text.find("# $ ", line_end);
    if (dollar == std::string::npos) break;
    const std::size_t dollar_end = text.find('\n', dollar);
    if (text.compare(dollar + 4, dollar_end - dollar - 4, command) != 0) continue;
    const std::size_t body = text.find('\n', dollar_end + 1) + 1;  // past the #### rule
    const std::size_t next = text.find("\n####", body);
    return text.substr(body, next == std::string::npos ? std::string::npos : next - body + 1);
  }
  return {};
}

support::SampledMachine sample_with_processes(const std::string& name) {
  support::SampledMachine m{support::open_machine(name), {}, {}};
  m.registry = DetectBuilder{}.detect(*m.system);
  TelemetryOptions options;
  options.processes = true;
  m.sample = sample_telemetry(m.registry, *m.system, options);
  return m;
}

std::string warnings_of(const TelemetrySample& s) {
  std::string out;
  for (const auto& w : s.warnings) out += w.backend + ": " + w.message + "\n";
  return out;
}

TEST(NvidiaProcesses, ReadTheRealMigCaptureUnderLoad) {
  const auto file = support::shared_capture("nvidia/nge-linux-h100-mig-590.48.01/linux-x86_64__nvidia-h100-mig__590.48.01.txt");
  if (file.empty()) GTEST_SKIP() << "shared MIG capture not available";
  const std::string text = support::read_file(file);
  // -q: three processes in GPU instance 2, compute instance 0.
  const auto report = parsers::parse_query_text(capture_section(text, "load", "nvidia-smi -q"));
  ASSERT_TRUE(report) << report.error().message;
  const auto& processes = report->gpus.at(0).processes;
  ASSERT_EQ(processes.size(), 3u);
  const std::vector<std::uint32_t> pids = {21180, 21181, 21198};
  const std::vector<std::uint64_t> mib = {2296, 1272, 7484};
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(processes[i].pid, pids[i]);
    EXPECT_EQ(processes[i].type, "C");
    EXPECT_EQ(processes[i].gpu_instance_id, 2u);
    EXPECT_EQ(processes[i].compute_instance_id, 0u);
    EXPECT_EQ(processes[i].memory_used_bytes, mib[i] << 20);
  }
  EXPECT_EQ(processes[2].name, "./gpu_burn");
  // Idle: "Processes : None".
  const auto idle = parsers::parse_query_text(capture_section(text, "idle", "nvidia-smi -q"));
  ASSERT_TRUE(idle);
  EXPECT_TRUE(idle->gpus.at(0).processes.empty());
  // The compute-apps CSV of the same moment (with a timestamp and units in the cells).
  const std::string csv = capture_section(
      text, "load",
      "nvidia-smi --query-compute-apps=timestamp,gpu_name,gpu_bus_id,gpu_serial,gpu_uuid,pid,process_name,used_gpu_memory --format=csv");
  ASSERT_FALSE(csv.empty());
  std::vector<std::string> problems;
  const auto apps = parse_nvidia_compute_apps(csv, &problems);
  ASSERT_TRUE(apps) << apps.error().message;
  EXPECT_TRUE(problems.empty()) << problems.front();
  ASSERT_EQ(apps->size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ((*apps)[i].pid, pids[i]);
    EXPECT_EQ((*apps)[i].pci_bus_id, "0000:00:09.0");
    EXPECT_EQ((*apps)[i].memory_used_bytes, mib[i] << 20);
  }
  EXPECT_EQ((*apps)[0].name, "/root/tools/memhog");
  // No process: a header alone.
  const auto none = parse_nvidia_compute_apps(capture_section(
      text, "idle",
      "nvidia-smi --query-compute-apps=timestamp,gpu_name,gpu_bus_id,gpu_serial,gpu_uuid,pid,process_name,used_gpu_memory --format=csv"));
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_TRUE(none->empty());
}

TEST(NvidiaProcesses, TheXmlReportListsProcesses) {
  const auto file = support::shared_capture("nvidia/telegraf-grid-p4-1q-vgpu-513/nvidia-smi-q-x.xml");
  if (file.empty()) GTEST_SKIP() << "shared vGPU capture not available";
  const auto report = parsers::parse_query_xml(support::read_file(file));
  ASSERT_TRUE(report) << report.error().message;
  const auto& processes = report->gpus.at(0).processes;
  ASSERT_GE(processes.size(), 4u);
  EXPECT_EQ(processes[0].pid, 1188u);
  EXPECT_EQ(processes[0].type, "C+G");
  EXPECT_TRUE(processes[0].name.empty());  // a vGPU guest is not told
  EXPECT_FALSE(processes[0].memory_used_bytes);
  EXPECT_FALSE(processes[0].gpu_instance_id);
}

TEST(NvidiaProcesses, BadComputeAppsRowsAreProblems) {
  std::vector<std::string> problems;
  const auto apps = parse_nvidia_compute_apps(
      "gpu_bus_id, gpu_uuid, pid, process_name, used_gpu_memory [MiB]\n"
      "00000000:18:00.0, GPU-1, 77, python, 100\n"
      "00000000:18:00.0, GPU-1, seventy, python, 100\n"
      "00000000:18:00.0, GPU-1, 78, python, lots\n"
      "[N/A], [N/A], 79, python, 5\n",
      &problems);
  ASSERT_TRUE(apps);
  ASSERT_EQ(apps->size(), 2u);
  EXPECT_EQ((*apps)[0].memory_used_bytes, 100ull << 20);
  EXPECT_FALSE((*apps)[1].memory_used_bytes);
  EXPECT_EQ(problems.size(), 3u);
  EXPECT_FALSE(parse_nvidia_compute_apps("No devices were found\n"));
  EXPECT_FALSE(parse_nvidia_compute_apps("index, name\n0, x\n"));
}

TEST(DrmFdinfo, ReadsBothKeySetsOfAmdgpu) {
  const auto legacy = parse_drm_fdinfo(
      "pos:\t0\ndrm-driver:\tamdgpu\ndrm-client-id:\t118\ndrm-pdev:\t0000:23:00.0\ndrm-memory-vram:\t4456448 KiB\n"
      "drm-memory-gtt: \t2048 KiB\ndrm-engine-gfx:\t1523400771 ns\ndrm-engine-compute:\t98765432100 ns\n");
  ASSERT_TRUE(legacy) << legacy.error().message;
  EXPECT_EQ(legacy->driver, "amdgpu");
  EXPECT_EQ(legacy->pdev, "0000:23:00.0");
  EXPECT_EQ(legacy->client_id, 118u);
  EXPECT_EQ(legacy->memory_bytes.at("vram"), 4456448ull << 10);
  EXPECT_EQ(device_memory_of(*legacy), 4456448ull << 10);
  EXPECT_EQ(legacy->engines.at("compute").busy, 98765432100u);
  const auto modern = parse_drm_fdinfo(
      "drm-driver:\tamdgpu\ndrm-pdev:\t0000:63:00.0\ndrm-total-vram:\t3153920 KiB\ndrm-resident-vram:\t3145728 KiB\n"
      "drm-shared-vram:\t0\ndrm-total-gtt:\t4096 KiB\n");
  ASSERT_TRUE(modern);
  EXPECT_EQ(device_memory_of(*modern), 3145728ull << 10);  // resident, not total
  // xe counts cycles.
  const auto xe = parse_drm_fdinfo(
      "drm-driver:\txe\ndrm-pdev:\t0000:03:00.0\ndrm-total-system0:\t8 MiB\ndrm-resident-vram0:\t512 MiB\n"
      "drm-cycles-rcs:\t1000\ndrm-total-cycles-rcs:\t5000\ndrm-engine-capacity-ccs:\t4\ndrm-cycles-ccs:\t0\n");
  ASSERT_TRUE(xe);
  EXPECT_EQ(device_memory_of(*xe), 512ull << 20);
  EXPECT_EQ(xe->engines.at("rcs").total, 5000u);
  EXPECT_EQ(xe->engines.at("ccs").capacity, 4u);
  // Integrated: no device memory region.
  const auto igpu = parse_drm_fdinfo("drm-driver:\ti915\ndrm-total-system0:\t8 MiB\n");
  ASSERT_TRUE(igpu);
  EXPECT_FALSE(device_memory_of(*igpu));
  // Not a DRM descriptor, and garbage values.
  EXPECT_FALSE(parse_drm_fdinfo("pos:\t0\nflags:\t02\n"));
  std::vector<std::string> problems;
  const auto bad = parse_drm_fdinfo("drm-driver:\tamdgpu\ndrm-pdev:\tnowhere\ndrm-engine-gfx:\tforever ns\ndrm-memory-vram:\tlots\n",
                                    &problems);
  ASSERT_TRUE(bad);
  EXPECT_EQ(problems.size(), 3u);
  EXPECT_TRUE(bad->engines.empty());
}

TEST(ProcStatus, NamespacesAndUsers) {
  const auto status = parse_proc_status("Name:\tpython3\nPid:\t41021\nUid:\t1001\t1001\t1001\t1001\nNSpid:\t41021\t27\n");
  ASSERT_TRUE(status);
  EXPECT_EQ(status->name, "python3");
  EXPECT_EQ(status->uid, 1001u);
  EXPECT_EQ(status->namespace_pids, (std::vector<std::uint32_t>{41021, 27}));
  EXPECT_FALSE(parse_proc_status("garbage\n\x01\x02"));
}

TEST(EngineUse, BetweenTwoSamples) {
  DeviceProcess before, after;
  before.engines["gfx"] = {1'000'000'000, std::nullopt, 1};
  after.engines["gfx"] = {1'500'000'000, std::nullopt, 1};
  before.engines["rcs"] = {1000, 5000, 1};
  after.engines["rcs"] = {1500, 6000, 1};
  before.engines["compute"] = {900, std::nullopt, 1};
  after.engines["compute"] = {100, std::nullopt, 1};  // reopened: went backwards
  const auto use = engine_use(before, after, std::chrono::seconds(1));
  EXPECT_DOUBLE_EQ(use.at("gfx"), 0.5);
  EXPECT_DOUBLE_EQ(use.at("rcs"), 0.5);
  EXPECT_FALSE(use.contains("compute"));
  EXPECT_TRUE(engine_use(before, after, std::chrono::nanoseconds(0)).count("gfx") == 0);
}

// Two containers and a host user on a DGX; one listed process has exited.
TEST(ProcessSample, ContainersOnTheBusyDgx) {
  const auto m = sample_with_processes("dgx-h100-busy-containers");
  EXPECT_TRUE(m.sample.warnings.empty()) << warnings_of(m.sample);
  ASSERT_EQ(m.sample.processes.size(), 9u);
  const DeviceProcess& first = m.sample.processes[0];
  EXPECT_EQ(first.device_id, "cuda:0");
  EXPECT_EQ(first.pid, 41021u);
  EXPECT_EQ(first.driver_pid, 41021u);
  EXPECT_EQ(first.container_pid, 27u);
  EXPECT_EQ(first.pid_namespace, 4026532451u);
  EXPECT_EQ(first.user, "alice");
  EXPECT_EQ(first.memory_bytes, 70660ull << 20);
  EXPECT_EQ(first.command, "/usr/bin/python3 -u train.py --config llama-8b-sft.yaml --local-rank=0");
  // The notebook on the host shares GPU 0, after the bigger training rank.
  EXPECT_EQ(m.sample.processes[1].pid, 3310u);
  EXPECT_FALSE(m.sample.processes[1].container_pid);
  EXPECT_EQ(m.sample.processes[1].user, "carol");
  std::size_t on_gpu4 = 0;
  for (const auto& p : m.sample.processes) on_gpu4 += p.device_id == "cuda:4";
  EXPECT_EQ(on_gpu4, 0u);
  const DeviceProcess& gone = m.sample.processes.back();
  EXPECT_EQ(gone.device_id, "cuda:7");
  EXPECT_EQ(gone.driver_pid, 61877u);
  EXPECT_TRUE(gone.user.empty());
  EXPECT_FALSE(gone.memory_bytes);
}

TEST(ProcessSample, MigInstancesGetTheirProcesses) {
  const auto m = sample_with_processes("a100-40gb-mig-processes");
  EXPECT_TRUE(m.sample.warnings.empty()) << warnings_of(m.sample);
  ASSERT_EQ(m.sample.processes.size(), 3u);
  EXPECT_EQ(m.sample.processes[0].partition_id, "cuda:0/mig:0");
  EXPECT_EQ(m.sample.processes[0].container_pid, 1u);
  EXPECT_EQ(m.sample.processes[0].user, "svc-infer");
  EXPECT_EQ(m.sample.processes[0].source, "nvidia-smi -q");
  EXPECT_EQ(m.sample.processes[1].partition_id, "cuda:0/mig:1");
  EXPECT_EQ(m.sample.processes[2].partition_id, "cuda:0/mig:1");
  EXPECT_EQ(m.sample.processes[2].user, "grace");
}

TEST(ProcessSample, DrmClientsOfAmdGpus) {
  const auto m = sample_with_processes("amd-2x-mi210-busy-fdinfo");
  EXPECT_TRUE(m.sample.warnings.empty()) << warnings_of(m.sample);
  ASSERT_EQ(m.sample.processes.size(), 3u);
  const DeviceProcess& job = m.sample.processes[0];
  EXPECT_EQ(job.device_id, "rocm:0");
  EXPECT_EQ(job.pid, 7412u);
  EXPECT_EQ(job.user, "dana");
  EXPECT_EQ(job.kind, "drm");
  // Two descriptors of client 118 count once.
  EXPECT_EQ(job.memory_bytes, (4ull << 30) + (256ull << 20));
  EXPECT_EQ(job.engines.at("compute").busy, 98765432100u);
  EXPECT_EQ(m.sample.processes[1].device_id, "rocm:0");
  EXPECT_EQ(m.sample.processes[1].pid, 8120u);
  EXPECT_EQ(m.sample.processes[2].device_id, "rocm:1");
  EXPECT_EQ(m.sample.processes[2].memory_bytes, (3ull << 30) + (8ull << 20));
}

// The busy DGX seen from inside another PID namespace, with a /proc that fails.
class ElsewhereSystem final : public System {
 public:
  explicit ElsewhereSystem(const System& inner) : inner_(inner) {}
  Result<FileContent> read_file(std::string_view path, std::size_t max_bytes) const override {
    if (path.starts_with("/proc/41021/")) return fail(ErrorKind::not_found, "exited");
    return inner_.read_file(path, max_bytes);
  }
  Result<std::vector<DirEntry>> list_dir(std::string_view path) const override {
    if (path.ends_with("/fd")) return fail(ErrorKind::permission_denied, "not yours");
    return inner_.list_dir(path);
  }
  Result<std::string> read_link(std::string_view path) const override {
    if (path == "/proc/self/ns/pid") return std::string("pid:[4026532999]");
    return inner_.read_link(path);
  }
  Result<FileStatus> status(std::string_view path, bool follow) const override { return inner_.status(path, follow); }
  std::optional<std::string> env(std::string_view name) const override { return inner_.env(name); }
  std::optional<std::string> find_tool(std::string_view name) const override { return inner_.find_tool(name); }
  Result<ToolResult> run(const ToolRequest& request) const override { return inner_.run(request); }

 private:
  const System& inner_;
};

TEST(ProcessSample, InAnotherPidNamespaceHostPidsStayUntranslated) {
  const auto fixture = support::open_machine("dgx-h100-busy-containers");
  const ElsewhereSystem elsewhere(*fixture);
  const auto registry = DetectBuilder{}.detect(elsewhere);
  TelemetryOptions options;
  options.processes = true;
  const auto sample = sample_telemetry(registry, elsewhere, options);
  ASSERT_EQ(sample.processes.size(), 9u);
  for (const auto& p : sample.processes) {
    EXPECT_FALSE(p.pid) << *p.driver_pid;
    EXPECT_TRUE(p.user.empty());
  }
  EXPECT_NE(warnings_of(sample).find("another PID namespace"), std::string::npos) << warnings_of(sample);
}

TEST(ProcessSample, UnreadableDescriptorsAreCountedNotGuessed) {
  const auto fixture = support::open_machine("amd-2x-mi210-busy-fdinfo");
  const ElsewhereSystem elsewhere(*fixture);
  const auto registry = DetectBuilder{}.detect(*fixture);
  TelemetryOptions options;
  options.processes = true;
  const auto sample = sample_telemetry(registry, elsewhere, options);
  EXPECT_TRUE(sample.processes.empty());
  EXPECT_NE(warnings_of(sample).find("3 processes' file descriptors are not readable"), std::string::npos) << warnings_of(sample);
}

// Without options.processes nothing under /proc/PID is read.
TEST(ProcessSample, OffByDefault) {
  const auto m = support::sample_machine("dgx-h100-busy-containers");
  EXPECT_TRUE(m.sample.processes.empty());
  EXPECT_TRUE(m.sample.warnings.empty());
}

}  // namespace

namespace {

// What serve's /telemetry writes, top --hosts reads back unchanged.
TEST(TelemetryJson, SamplesWithProcessesReadBack) {
  for (const char* name : {"dgx-h100-busy-containers", "amd-2x-mi210-busy-fdinfo", "a100-40gb-mig-processes"}) {
    const auto m = sample_with_processes(name);
    const auto back = telemetry_from_json(to_json(m.sample));
    ASSERT_TRUE(back) << name << ": " << back.error().message;
    EXPECT_EQ(back->devices, m.sample.devices) << name;
    EXPECT_EQ(back->processes, m.sample.processes) << name;
    EXPECT_EQ(back->warnings, m.sample.warnings) << name;
    EXPECT_EQ(back->host, m.sample.host) << name;
  }
}

TEST(TelemetryJson, BadValuesAreLeftOutWithAWarning) {
  const auto s = telemetry_from_json(
      R"({"devices": [{"device_id": "cuda:0", "utilization": 7, "memory_total_bytes": -1, "power_watts": "a lot"},
                       {"utilization": 0.5}],
          "processes": [{"device_id": "cuda:0"}, {"device_id": "cuda:0", "pid": 12, "engines": {"gfx": 3}}]})");
  ASSERT_TRUE(s) << s.error().message;
  ASSERT_EQ(s->devices.size(), 1u);
  EXPECT_FALSE(s->devices[0].utilization);
  EXPECT_FALSE(s->devices[0].memory_total_bytes);
  EXPECT_FALSE(s->devices[0].power_watts);
  ASSERT_EQ(s->processes.size(), 1u);
  EXPECT_TRUE(s->processes[0].engines.empty());
  EXPECT_GE(s->warnings.size(), 4u);
  EXPECT_FALSE(telemetry_from_json("[1, 2]"));
  EXPECT_FALSE(telemetry_from_json("{\"registry\": 1}"));
  EXPECT_FALSE(telemetry_from_json("{\"devices\": [{\"device_id\": \"cuda:0\"}"));
}

}  // namespace
