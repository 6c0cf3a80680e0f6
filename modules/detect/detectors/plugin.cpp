// The plugin backend's detector: hands the detection to the plugins the
// options carry. Every plugin's facts are its own descriptor's, not the row's.
module;
#include <span>
module hwaccel.detectors;

namespace hwaccel {

namespace {

DetectorOutput detect_plugins(const DetectContext& ctx) {
  if (!ctx.options().plugins) return {};
  return ctx.options().plugins->detect(ctx);
}

constexpr Family plugin_families[] = {Family::gpu, Family::npu, Family::tpu};

}  // namespace

const Detector plugin_detector{
    .name = "plugin",
    .backend = Backend::plugin,
    .tools = {},
    .detect = &detect_plugins,
    .facts = {.other_families = plugin_families, .vendor = "a plugin's vendor"},
};

}  // namespace hwaccel
