// Fuzz targets for documents hwaccel reads from others: registry JSON (caches,
// registry_from_json), fixture manifests, and the device-selection variables
// (*_VISIBLE_DEVICES) resolved against a fixed set of GPUs.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz_support.hpp"

import hwaccel;

namespace hwaccel::fuzz {

void registry_json(std::string_view, std::string_view input, Findings& findings) {
  const auto registry = registry_from_json(input);
  if (!registry) return;
  const std::string once = to_json(*registry);
  const auto reread = registry_from_json(once);
  if (!findings.check(reread.has_value(), "registry JSON: what to_json wrote does not read back")) return;
  findings.check(to_json(*reread) == once, "registry JSON: a second round trip differs");
}

// What a plugin emits (docs/plugins.md): whatever it says, each device kept is
// the plugin's own, with a name, a family other than cpu, a unique id.
void plugin_document(std::string_view, std::string_view input, Findings& findings) {
  PluginDescriptor descriptor;
  descriptor.abi_version = plugin_abi_version;
  descriptor.name = "tenstorrent";
  const auto out = read_plugin_document(input, descriptor);
  if (!out) return;
  findings.check(out->devices.size() <= max_plugin_devices, "plugin document: more devices than the cap");
  std::set<std::string> ids;
  for (const auto& d : out->devices) {
    findings.check(d.backend == Backend::plugin && d.id.starts_with("tenstorrent:"), "plugin document: another backend's device kept");
    findings.check(d.family != Family::cpu && !d.name.empty(), "plugin document: a CPU or nameless device kept");
    findings.check(ids.insert(d.id).second, "plugin document: an id kept twice");
    findings.check(d.properties.contains("plugin"), "plugin document: a device without its plugin's name");
  }
  for (const auto& w : out->warnings) findings.check(w.backend == "tenstorrent", "plugin document: a warning filed under another backend");
}

void fixture_manifest(std::string_view, std::string_view input, Findings& findings) {
  const auto manifest = parse_fixture_manifest(input);
  if (!manifest) return;
  const std::string written = write_fixture_manifest(*manifest);
  const auto again = parse_fixture_manifest(written);
  if (!findings.check(again.has_value(), "fixture.json: what write_fixture_manifest wrote does not parse")) return;
  findings.check(write_fixture_manifest(*again) == written, "fixture.json: a second round trip differs");
  findings.check(again->commands.size() == manifest->commands.size(), "fixture.json: commands lost in a round trip");
}

namespace {

DeviceProfile gpu(Backend backend, std::uint32_t index, std::string uuid, std::string bus, std::string capability) {
  DeviceProfile d;
  d.backend = backend;
  d.family = Family::gpu;
  d.index = index;
  d.id = device_id(backend, index);
  d.name = backend == Backend::cuda ? (capability == "9.0" ? "NVIDIA H100" : "NVIDIA A100") : "AMD Instinct MI300X";
  d.uuid = std::move(uuid);
  d.pci_bus_id = std::move(bus);
  d.compute_capability = std::move(capability);
  return d;
}

DevicePartition partition(const DeviceProfile& parent, std::uint32_t index, std::string uuid, std::string profile) {
  DevicePartition p;
  p.id = text::cat(parent.id, parent.backend == Backend::cuda ? "/mig:" : "/partition:", index);
  p.index = index;
  p.uuid = std::move(uuid);
  p.profile = std::move(profile);
  p.gpu_instance_id = index + 1;
  p.compute_instance_id = 0;
  return p;
}

// Four CUDA GPUs of two models (one in MIG mode with two MIG devices, one in
// MIG mode without any) and three ROCm devices (one split into partitions).
std::vector<DeviceProfile> visibility_devices() {
  std::vector<DeviceProfile> d;
  d.push_back(gpu(Backend::cuda, 0, "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6", "0000:07:00.0", "8.0"));
  d.push_back(gpu(Backend::cuda, 1, "GPU-8932f9a1-0000-4106-c12f-20bd9faed9f6", "0000:0f:00.0", "8.0"));
  d.push_back(gpu(Backend::cuda, 2, "GPU-1a2b3c4d-0000-0000-0000-000000000002", "0000:47:00.0", "9.0"));
  d.push_back(gpu(Backend::cuda, 3, "GPU-1a2b3c4d-0000-0000-0000-000000000003", "0000:4e:00.0", "9.0"));
  d[1].properties.emplace("mig_mode", "Enabled");
  d[1].partitions.push_back(partition(d[1], 0, "MIG-11111111-2222-3333-4444-555555555555", "3g.40gb"));
  d[1].partitions.push_back(partition(d[1], 1, "MIG-66666666-7777-8888-9999-000000000000", "3g.40gb"));
  d[3].properties.emplace("mig_mode", "Enabled");
  d.push_back(gpu(Backend::rocm, 0, "GPU-a1b2c3d4e5f60718", "0000:0c:00.0", "gfx942"));
  d.push_back(gpu(Backend::rocm, 1, "GPU-a1b2c3d4e5f60719", "0000:22:00.0", "gfx942"));
  d.push_back(gpu(Backend::rocm, 2, "GPU-0011223344556677", "0000:38:00.0", "gfx942"));
  for (std::uint32_t i = 0; i < 4; ++i) d[6].partitions.push_back(partition(d[6], i, "GPU-0011223344556677", "CPX"));
  return d;
}

}  // namespace

void visibility(std::string_view, std::string_view input, Findings& findings) {
  // "NAME=VALUE" lines; a line "container" says the process runs in one.
  VisibilityInputs inputs;
  std::string_view rest = input;
  while (!rest.empty()) {
    const std::string_view line = text::next_line(rest);
    if (line == "container") {
      inputs.in_container = true;
      continue;
    }
    const std::size_t eq = line.find('=');
    if (eq != std::string_view::npos) inputs.env.insert_or_assign(std::string(line.substr(0, eq)), std::string(line.substr(eq + 1)));
  }
  auto devices = visibility_devices();
  std::vector<Warning> warnings;
  resolve_visibility(devices, inputs, warnings);
  // The runtime numbers what it exposes 0, 1, 2, ... without gaps or repeats,
  // and only visible devices get a number.
  for (const Backend backend : {Backend::cuda, Backend::rocm}) {
    std::set<std::uint32_t> numbers;
    std::size_t numbered = 0;
    for (const auto& d : devices) {
      if (d.backend != backend) continue;
      if (d.runtime_index) {
        findings.check(d.visible, "visibility: a hidden device has a runtime index");
        numbers.insert(*d.runtime_index);
        ++numbered;
      }
      for (const auto& p : d.partitions)
        if (p.runtime_index) {
          findings.check(d.visible, "visibility: a partition of a hidden device has a runtime index");
          numbers.insert(*p.runtime_index);
          ++numbered;
        }
    }
    findings.check(numbers.size() == numbered, "visibility: a runtime index is used twice");
    findings.check(numbers.empty() || *numbers.rbegin() + 1 == numbers.size(), "visibility: runtime indices have gaps");
  }
  for (const auto& w : warnings) findings.check(!w.message.empty(), "visibility: a warning without a message");
}

}  // namespace hwaccel::fuzz
