// Samsung Exynos NPU backend. Samsung's Exynos kernels register the NPU as
// minor 10 of the vision4linux class (major 82), so its node is /dev/vertex10
// whatever the SoC. The NPU computes from system memory: there is no device
// memory to report.
module;
#include <optional>
#include <span>
#include <string>
#include <string_view>
module hwaccel.detectors;

namespace hwaccel {
namespace {

constexpr std::string_view npu_node = "/dev/vertex10";

DetectorOutput detect_samsung_npu(const DetectContext& ctx) {
  DetectorOutput out;
  const System& sys = ctx.system();
  if (!sys.exists(npu_node)) return out;
  DeviceProfile p;
  p.backend = Backend::samsung_npu;
  p.family = Family::npu;
  p.vendor = "Samsung";
  p.index = 0;
  p.id = device_id(Backend::samsung_npu, 0);
  p.name = "Samsung Exynos NPU";
  p.integrated = true;
  p.memory_kind = MemoryKind::unified;
  p.properties["device_node"] = std::string(npu_node);
  p.properties["memory"] = "shares system memory with the CPU";
  if (const auto compatible = sys.read_file("/proc/device-tree/compatible", 4096)) {
    // Exynos SoCs appear as "samsung,exynos2100" or, newer, "samsung,s5e9925".
    auto soc = compatible_entry(compatible->data, "samsung,exynos");
    if (!soc) soc = compatible_entry(compatible->data, "samsung,s5e");
    if (soc) {
      p.properties["soc"] = *soc;
      p.name = text::cat("Samsung Exynos NPU (", *soc, ")");
    }
  }
  out.devices.push_back(std::move(p));
  return out;
}

}  // namespace

constexpr std::string_view samsung_npu_runtimes[] = {"enn-sdk"};

const Detector samsung_npu_detector{
    .name = "samsung_npu",
    .backend = Backend::samsung_npu,
    .tools = {},
    .detect = &detect_samsung_npu,
    .facts = {.vendor = "Samsung", .runtimes = samsung_npu_runtimes},
};

}  // namespace hwaccel
