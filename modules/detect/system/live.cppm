// The live System: this machine, read through the kernel and its tools.
module;
#include <memory>
#include <optional>
#include <string>
#include <vector>
export module hwaccel.detect:live;
import hwaccel.hardware;
import :system;

export namespace hwaccel {

/// Options of the live system.
struct LiveOptions {
  /// Directories searched for tools; PATH of the process when empty.
  std::optional<std::string> search_path;
  /// Vendor folders searched after PATH: tools are often installed there
  /// without being on PATH (ROCm, WSL's nvidia-smi, Neuron, Qualcomm AIC).
  std::vector<std::string> extra_tool_dirs = {"/usr/lib/wsl/lib", "/opt/rocm/bin", "/opt/aws/neuron/bin",
                                              "/opt/qti-aic/tools"};
  /// Variables removed from a tool's environment: they inject code into it.
  std::vector<std::string> stripped_env = {"LD_PRELOAD", "LD_AUDIT", "DYLD_INSERT_LIBRARIES"};
};

/// The machine this process runs on.
std::unique_ptr<System> make_live_system(LiveOptions options = {});

}  // namespace hwaccel

// Module-internal: the live System's kernel notifications (live_events.cpp).
namespace hwaccel {
[[nodiscard]] Result<std::unique_ptr<EventStream>> open_live_events(const EventStreamOptions& options);
}  // namespace hwaccel
