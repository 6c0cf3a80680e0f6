// The plugin backend's row: third-party backends loaded from plugin folders
// (include/hwaccel/plugin.h, docs/plugins.md). The row runs what
// DetectOptions::plugins holds; loading and running plugins is
// hwaccel.registry's (plugins/).
export module hwaccel.detectors:plugin;
import hwaccel.detect;

export namespace hwaccel {
extern const Detector plugin_detector;
}
