// The live System: this machine, read through the kernel and its tools.
module;
#include <memory>
#include <optional>
#include <string>
#include <vector>
export module hwaccel.detect:live;
import hwaccel.hardware;
import :system;
import :windows_facts;

export namespace hwaccel {

/// Options of the live system.
struct LiveOptions {
  /// Directories searched for tools; PATH of the process when empty.
  std::optional<std::string> search_path;
  /// Vendor folders searched after PATH: tools are often installed there
  /// without being on PATH (ROCm, WSL's nvidia-smi, Neuron, Qualcomm AIC).
#if defined(_WIN32)
  /// Older NVIDIA drivers install nvidia-smi.exe off PATH.
  std::vector<std::string> extra_tool_dirs = {"C:\\Program Files\\NVIDIA Corporation\\NVSMI"};
#else
  std::vector<std::string> extra_tool_dirs = {"/usr/lib/wsl/lib", "/opt/rocm/bin", "/opt/aws/neuron/bin",
                                              "/opt/qti-aic/tools"};
#endif
  /// Variables removed from a tool's environment: they inject code into it.
  std::vector<std::string> stripped_env = {"LD_PRELOAD", "LD_AUDIT", "DYLD_INSERT_LIBRARIES"};
};

/// The machine this process runs on.
std::unique_ptr<System> make_live_system(LiveOptions options = {});

}  // namespace hwaccel

// Module-internal: the live System's kernel notifications (live_events.cpp).
namespace hwaccel {
[[nodiscard]] Result<std::unique_ptr<EventStream>> open_live_events(const EventStreamOptions& options);
#if defined(_WIN32)
/// The adapters DXGI enumerates on this Windows machine (dxgi_adapters.cpp).
[[nodiscard]] Result<std::vector<DxgiAdapter>> enumerate_dxgi_adapters();
/// This Windows machine's processor and memory (windows_machine.cpp).
WindowsSystemFacts read_windows_system();
#endif
}  // namespace hwaccel
