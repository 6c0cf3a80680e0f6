// CPU backend: host processor, memory and NUMA layout from /proc and /sys.
module;
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
export module hwaccel.detectors:cpu;
import hwaccel.detect;

export namespace hwaccel::parsers {

/// The fields of /proc/meminfo that matter here, in bytes.
struct MemInfo {
  std::optional<std::uint64_t> total_bytes;
  std::optional<std::uint64_t> available_bytes;
};

/// Parses /proc/meminfo ("MemTotal:  16318480 kB"). Values in kB are
/// multiplied by 1024 as the kernel means them.
MemInfo parse_meminfo(std::string_view text);

/// What /proc/cpuinfo says about the processor (only the first record is
/// needed on x86; Arm lists a record per core with different parts).
struct CpuInfoSummary {
  std::string model_name;
  std::optional<std::string> vendor;
  std::string architecture;  ///< inferred from the record format
  std::vector<std::string> isa_features;  ///< normalised and sorted
  std::optional<std::uint32_t> siblings;   ///< logical CPUs per package (x86)
  std::optional<std::uint32_t> cores_per_package;
  std::uint32_t processor_records = 0;
};

CpuInfoSummary parse_cpuinfo(std::string_view text);

/// Name of an Arm core from its MIDR implementer and part numbers, e.g.
/// (0x41, 0xd4f) -> "Neoverse V2"; empty when unknown.
std::string_view arm_core_name(std::uint32_t implementer, std::uint32_t part) noexcept;

/// Cgroup memory limit: the value of memory.max (v2) or
/// memory.limit_in_bytes (v1); nullopt for "max" and for v1's "no limit"
/// sentinel (a page-aligned value near 2^63).
std::optional<std::uint64_t> parse_cgroup_memory_limit(std::string_view text) noexcept;

}  // namespace hwaccel::parsers

export namespace hwaccel {
extern const Detector cpu_detector;
}
