// Samsung Exynos NPU backend: the NPU's vision4linux node /dev/vertex10 on
// Exynos kernels, and the SoC from the device tree.
module;
export module hwaccel.detectors:samsung_npu;
import hwaccel.detect;

export namespace hwaccel {
extern const Detector samsung_npu_detector;
}
