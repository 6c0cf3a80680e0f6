// MediaTek APU backend. The APUsys middleware of MediaTek's kernels registers
// a misc device named "apusys" (/dev/apusys, /sys/class/misc/apusys) that
// fronts the SoC's MDLA/VPU engines; the APU computes from system memory.
module;
#include <optional>
#include <span>
#include <string>
#include <string_view>
module hwaccel.detectors;

namespace hwaccel {
namespace {

DetectorOutput detect_mediatek_apu(const DetectContext& ctx) {
  DetectorOutput out;
  const System& sys = ctx.system();
  const bool node = sys.exists("/dev/apusys");
  if (!node && !sys.exists("/sys/class/misc/apusys")) return out;
  DeviceProfile p;
  p.backend = Backend::mediatek_apu;
  p.family = Family::npu;
  p.vendor = "MediaTek";
  p.index = 0;
  p.id = device_id(Backend::mediatek_apu, 0);
  p.name = "MediaTek APU";
  p.integrated = true;
  p.memory_kind = MemoryKind::unified;
  p.properties["memory"] = "shares system memory with the CPU";
  if (node) {
    p.properties["device_node"] = "/dev/apusys";
  } else {
    // The driver is loaded but this process (a container) was given no node.
    p.available = false;
    ctx.warn(out, WarningKind::unsupported, "the MediaTek APU driver is loaded (/sys/class/misc/apusys) but /dev/apusys is absent");
  }
  if (const auto compatible = sys.read_file("/proc/device-tree/compatible", 4096))
    if (const auto soc = compatible_entry(compatible->data, "mediatek,mt")) {
      p.properties["soc"] = *soc;
      p.name = text::cat("MediaTek APU (", *soc, ")");
    }
  out.devices.push_back(std::move(p));
  return out;
}

}  // namespace

constexpr std::string_view mediatek_apu_runtimes[] = {"neuropilot"};

const Detector mediatek_apu_detector{
    .name = "mediatek_apu",
    .backend = Backend::mediatek_apu,
    .tools = {},
    .detect = &detect_mediatek_apu,
    .facts = {.vendor = "MediaTek", .runtimes = mediatek_apu_runtimes},
};

}  // namespace hwaccel
