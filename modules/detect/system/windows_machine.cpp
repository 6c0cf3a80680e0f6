// What Windows says of this machine's processor and memory, for the Windows
// System (windows.cpp), which answers it at windows_system_path.
module;
#include <windows.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <optional>
#include <string>
#include <vector>
module hwaccel.detect;

namespace hwaccel {

namespace {

std::optional<std::string> processor_registry_value(const wchar_t* name) {
  wchar_t value[256] = {};
  DWORD bytes = sizeof value - sizeof(wchar_t);
  if (::RegGetValueW(HKEY_LOCAL_MACHINE, L"HARDWARE\\DESCRIPTION\\System\\CentralProcessor\\0", name, RRF_RT_REG_SZ,
                     nullptr, value, &bytes) != ERROR_SUCCESS)
    return std::nullopt;
  const int n = ::WideCharToMultiByte(CP_UTF8, 0, value, -1, nullptr, 0, nullptr, nullptr);
  if (n <= 1) return std::nullopt;
  std::string out(static_cast<std::size_t>(n), '\0');
  ::WideCharToMultiByte(CP_UTF8, 0, value, -1, out.data(), n, nullptr, nullptr);
  out.pop_back();
  const auto trimmed = text::trim(out);
  return trimmed.empty() ? std::nullopt : std::optional<std::string>(trimmed);
}

// Cores and packages from GetLogicalProcessorInformationEx.
void count_cores(WindowsSystemFacts& facts) {
  for (const auto relation : {RelationProcessorCore, RelationProcessorPackage}) {
    DWORD bytes = 0;
    ::GetLogicalProcessorInformationEx(relation, nullptr, &bytes);
    if (bytes == 0) continue;
    std::vector<unsigned char> buffer(bytes);
    if (!::GetLogicalProcessorInformationEx(
            relation, reinterpret_cast<PSYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX>(buffer.data()), &bytes))
      continue;
    std::uint32_t count = 0;
    for (DWORD offset = 0; offset < bytes;) {
      const auto* info = reinterpret_cast<const SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX*>(buffer.data() + offset);
      if (info->Size == 0) break;
      ++count;
      offset += info->Size;
    }
    if (count == 0) continue;
    (relation == RelationProcessorCore ? facts.physical_cores : facts.sockets) = count;
  }
}

// IsProcessorFeaturePresent's numbers (winnt.h; older SDKs lack the names).
struct Feature {
  DWORD id;
  const char* name;
};
constexpr Feature x86_features[] = {{39, "avx"}, {40, "avx2"}, {41, "avx512f"}, {36, "sse4_2"}};
constexpr Feature arm_features[] = {{29, "neon"}, {43, "dotprod"}};

}  // namespace

WindowsSystemFacts read_windows_system() {
  WindowsSystemFacts facts;
  facts.processor_name = processor_registry_value(L"ProcessorNameString").value_or("CPU");
  facts.processor_vendor = processor_registry_value(L"VendorIdentifier");
  SYSTEM_INFO info{};
  ::GetNativeSystemInfo(&info);
  const bool arm = info.wProcessorArchitecture == PROCESSOR_ARCHITECTURE_ARM64;
  facts.architecture = arm ? "aarch64" : info.wProcessorArchitecture == PROCESSOR_ARCHITECTURE_AMD64 ? "x86_64" : "x86";
  if (const DWORD n = ::GetActiveProcessorCount(ALL_PROCESSOR_GROUPS)) facts.logical_processors = n;
  count_cores(facts);
  MEMORYSTATUSEX memory{};
  memory.dwLength = sizeof memory;
  if (::GlobalMemoryStatusEx(&memory)) {
    facts.memory_bytes = memory.ullTotalPhys;
    facts.memory_available_bytes = memory.ullAvailPhys;
  }
  for (const auto& f : arm ? std::span<const Feature>(arm_features) : std::span<const Feature>(x86_features))
    if (::IsProcessorFeaturePresent(f.id)) facts.isa_features.emplace_back(f.name);
  // The kernel's own version: GetVersionEx answers what the manifest asks for.
  using RtlGetVersion = LONG(WINAPI*)(PRTL_OSVERSIONINFOW);
  if (const HMODULE ntdll = ::GetModuleHandleW(L"ntdll.dll"))
    if (const auto get = reinterpret_cast<RtlGetVersion>(reinterpret_cast<void*>(::GetProcAddress(ntdll, "RtlGetVersion")))) {
      RTL_OSVERSIONINFOW version{};
      version.dwOSVersionInfoSize = sizeof version;
      if (get(&version) == 0)
        facts.os_version = text::cat(version.dwMajorVersion, ".", version.dwMinorVersion, ".", version.dwBuildNumber);
    }
  std::sort(facts.isa_features.begin(), facts.isa_features.end());
  return facts;
}

}  // namespace hwaccel
