// What a Windows machine says about its graphics adapters, in a form the
// System seam carries: the Windows live System answers DXGI's enumeration as
// the JSON file at dxgi_adapters_path, so that `hwaccel capture` records it
// like any other read and a fixture replays a Windows machine on Linux.
module;
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>
export module hwaccel.detect:windows_facts;
import hwaccel.hardware;

export namespace hwaccel {

/// The path at which a System answers DXGI's adapters (docs/windows.md).
/// Nothing lives there on Linux, so a Linux machine reads "not found".
inline constexpr std::string_view dxgi_adapters_path = "/windows/dxgi/adapters.json";
/// The folder holding it, listed by the Windows System.
inline constexpr std::string_view windows_facts_folder = "/windows";

/// One adapter IDXGIFactory1::EnumAdapters1 returned, with what
/// DXGI_ADAPTER_DESC1, IDXGIAdapter::CheckInterfaceSupport and
/// IDXGIAdapter3::QueryVideoMemoryInfo said about it. DXGI says nothing of
/// the adapter's PCI location: vendor tools' devices are joined by PCI ids.
struct DxgiAdapter {
  std::uint32_t index = 0;  ///< EnumAdapters1's index
  std::string description;  ///< DXGI_ADAPTER_DESC1::Description, in UTF-8
  std::uint32_t vendor_id = 0;
  std::uint32_t device_id = 0;
  std::uint32_t subsystem_id = 0;
  std::uint32_t revision = 0;
  std::uint64_t dedicated_video_memory = 0;   ///< bytes not shared with the CPU
  std::uint64_t dedicated_system_memory = 0;  ///< system RAM reserved for the adapter at boot
  std::uint64_t shared_system_memory = 0;     ///< system RAM the adapter may map
  std::optional<std::uint64_t> luid;          ///< HighPart << 32 | LowPart
  bool software = false;  ///< DXGI_ADAPTER_FLAG_SOFTWARE: WARP, the Basic Render Driver
  bool remote = false;    ///< DXGI_ADAPTER_FLAG_REMOTE: a remote desktop's adapter
  /// The user-mode driver's version ("31.0.15.3623"): CheckInterfaceSupport
  /// of IDXGIDevice, as dxdiag and OBS print it.
  std::optional<std::string> driver_version;
  /// QueryVideoMemoryInfo: what the OS lets this process use of the
  /// adapter's local (and non-local, system) memory, and what it uses.
  std::optional<std::uint64_t> local_budget;
  std::optional<std::uint64_t> local_usage;
  std::optional<std::uint64_t> non_local_budget;
  std::optional<std::uint64_t> non_local_usage;

  friend bool operator==(const DxgiAdapter&, const DxgiAdapter&) = default;
};

/// The path at which a System answers what Windows says of the machine's
/// processor and memory (the CPU detector's /proc/cpuinfo and /proc/meminfo).
inline constexpr std::string_view windows_system_path = "/windows/system.json";

/// The processor and memory of a Windows machine.
struct WindowsSystemFacts {
  /// The registry's ProcessorNameString (HKLM\HARDWARE\DESCRIPTION\System\CentralProcessor\0).
  std::string processor_name;
  std::optional<std::string> processor_vendor;  ///< its VendorIdentifier ("GenuineIntel")
  std::string architecture;                     ///< GetNativeSystemInfo: "x86_64", "aarch64"
  std::optional<std::uint32_t> logical_processors;  ///< GetActiveProcessorCount(ALL_PROCESSOR_GROUPS)
  std::optional<std::uint32_t> physical_cores;      ///< GetLogicalProcessorInformationEx's cores
  std::optional<std::uint32_t> sockets;             ///< its packages
  std::optional<std::uint64_t> memory_bytes;        ///< GlobalMemoryStatusEx: ullTotalPhys
  std::optional<std::uint64_t> memory_available_bytes;  ///< ullAvailPhys
  /// Instruction sets IsProcessorFeaturePresent reports ("avx2", "avx512f", "neon", "dotprod").
  std::vector<std::string> isa_features;
  std::optional<std::string> os_version;  ///< "10.0.26100"

  friend bool operator==(const WindowsSystemFacts&, const WindowsSystemFacts&) = default;
};

/// Reads the system document ({"format": "hwaccel-windows-system", "version":
/// 1, ...}); errors as parse_dxgi_adapters'.
[[nodiscard]] Result<WindowsSystemFacts> parse_windows_system(std::string_view json);
/// The document parse_windows_system reads, pretty-printed.
std::string format_windows_system(const WindowsSystemFacts& facts);

/// "00000000:0001a2b3": a LUID as HighPart:LowPart in hex, as the JSON holds it.
std::string dxgi_luid_text(std::uint64_t luid);

/// Reads the adapters document ({"format": "hwaccel-dxgi-adapters",
/// "version": 1, "adapters": [...]}, docs/windows.md). parse_error for a
/// document of the wrong shape, invalid_input for a value out of bounds
/// (memory above 1 PiB, ids above 32 bits, two adapters with one index),
/// each naming the adapter.
[[nodiscard]] Result<std::vector<DxgiAdapter>> parse_dxgi_adapters(std::string_view json);
/// The document parse_dxgi_adapters reads, pretty-printed.
std::string format_dxgi_adapters(std::span<const DxgiAdapter> adapters);

}  // namespace hwaccel
