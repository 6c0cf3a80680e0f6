// Devices from pasted text: registry JSON as it is, tool output through the
// detectors (registry.cppm, registry_from_paste).
module;
#include <cstddef>
#include <string>
#include <string_view>
module hwaccel.registry;

namespace hwaccel {

Result<AcceleratorRegistry> registry_from_paste(std::string_view text) {
  if (text.size() > max_paste_bytes)
    return fail(ErrorKind::invalid_input, text::cat("the paste is ", text.size() >> 20, " MiB; tool output is at most ",
                                                    max_paste_bytes >> 20, " MiB (paste one tool's output)"));
  // Registry JSON names its schema version, anywhere in the object (a
  // pretty-printed registry may put it after the devices); no tool's JSON does.
  const std::string_view body = text::trim(text);
  if (body.starts_with("{") && body.find("\"schema_version\"") != std::string_view::npos) return registry_from_json(text);
  auto capture = capture_from_paste(text);
  if (!capture) return fail(capture.error());
  const auto system = make_pasted_system(std::move(*capture));
  return DetectBuilder{}.detect(*system);
}

}  // namespace hwaccel
