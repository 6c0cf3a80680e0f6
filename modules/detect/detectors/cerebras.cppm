// Cerebras backend: CS-2/CS-3 systems are network appliances, so a host has
// no local Cerebras device to report; the detector says so when the cluster
// client is installed.
module;
export module hwaccel.detectors:cerebras;
import hwaccel.detect;

export namespace hwaccel {
extern const Detector cerebras_detector;
}
