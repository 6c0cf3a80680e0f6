// MediaTek APU backend: the APUsys middleware's misc device (/dev/apusys) on
// Dimensity and Genio kernels, and the SoC from the device tree.
module;
export module hwaccel.detectors:mediatek_apu;
import hwaccel.detect;

export namespace hwaccel {
extern const Detector mediatek_apu_detector;
}
