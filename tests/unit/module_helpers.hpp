// Helpers over the library's types for the unit tests. Unlike the other test
// headers, this one needs the module's names: include it after `import hwaccel;`.
#pragma once

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../test_support.hpp"

namespace hwaccel::testing {

/// A model of the built-in catalogue, by id (throws for an unknown id).
inline ModelDescription model(std::string_view id) { return catalogue_model(id).value(); }

/// The component of a device's memory called `name` (of the model `model`
/// when given: "student", "teacher"), or null.
inline const MemoryComponent* find(const DeviceMemory& d, std::string_view name, std::string_view model = {}) {
  for (const auto& c : d.components)
    if (c.name == name && (model.empty() || c.model == model)) return &c;
  return nullptr;
}

/// Auxiliary models with `teacher` set (distillation).
inline AuxiliaryModels with_teacher(ModelDescription teacher) {
  AuxiliaryModels aux;
  aux.teacher = std::move(teacher);
  return aux;
}

/// A fixture machine of fixtures/machines, opened or thrown.
inline std::unique_ptr<FixtureSystem> open_machine(const std::string& name) {
  auto f = FixtureSystem::open((fixtures_root() / "machines" / name).string());
  if (!f) throw std::runtime_error(f.error().message);
  return std::move(*f);
}

/// A fleet of hypothetical nodes, {host, "8xH100-SXM-80GB"} each, kept
/// sorted by host as a fleet is.
inline Fleet hypothetical_fleet(std::initializer_list<std::pair<const char*, const char*>> nodes) {
  Fleet fleet;
  for (const auto& [host, devices] : nodes) {
    FleetNode n;
    n.host = host;
    n.registry = hypothetical_registry(devices).value();
    fleet.nodes.push_back(std::move(n));
  }
  std::sort(fleet.nodes.begin(), fleet.nodes.end(), [](const FleetNode& a, const FleetNode& b) { return a.host < b.host; });
  return fleet;
}

/// A fixture machine, its detected registry and one telemetry sample of it.
struct SampledMachine {
  std::unique_ptr<FixtureSystem> system;
  AcceleratorRegistry registry;
  TelemetrySample sample;
};
inline SampledMachine sample_machine(const std::string& name) {
  SampledMachine m{open_machine(name), {}, {}};
  m.registry = DetectBuilder{}.detect(*m.system);
  m.sample = sample_telemetry(m.registry, *m.system);
  return m;
}

/// A device's entry of a telemetry sample, or nullptr.
inline const DeviceTelemetry* find_telemetry(const TelemetrySample& sample, std::string_view device_id) {
  for (const auto& d : sample.devices)
    if (d.device_id == device_id) return &d;
  return nullptr;
}

/// Another System, counting the files it reads (by path), with the most
/// bytes asked of each, and the tools it runs (by program name). Thread-safe.
class CountingSystem final : public System {
 public:
  explicit CountingSystem(const System& inner) : inner_(inner) {}

  Result<FileContent> read_file(std::string_view path, std::size_t max_bytes) const override {
    count(reads_, std::string(path));
    {
      const std::lock_guard lock(mutex_);
      auto& most = most_bytes_[std::string(path)];
      most = std::max(most, max_bytes);
    }
    return inner_.read_file(path, max_bytes);
  }
  Result<std::vector<DirEntry>> list_dir(std::string_view path) const override { return inner_.list_dir(path); }
  Result<std::string> read_link(std::string_view path) const override { return inner_.read_link(path); }
  Result<FileStatus> status(std::string_view path, bool follow) const override { return inner_.status(path, follow); }
  std::optional<std::string> env(std::string_view name) const override { return inner_.env(name); }
  std::optional<std::string> find_tool(std::string_view name) const override { return inner_.find_tool(name); }
  Result<ToolResult> run(const ToolRequest& request) const override {
    count(runs_, request.argv.empty() ? std::string() : request.argv.front());
    return inner_.run(request);
  }

  int reads(const std::string& path) const { return counted(reads_, path); }
  int runs(const std::string& program) const { return counted(runs_, program); }
  /// The largest max_bytes any read of `path` asked for (0 when never read).
  std::size_t most_bytes_asked(const std::string& path) const {
    const std::lock_guard lock(mutex_);
    const auto it = most_bytes_.find(path);
    return it == most_bytes_.end() ? 0 : it->second;
  }

 private:
  void count(std::map<std::string, int>& counts, std::string key) const {
    const std::lock_guard lock(mutex_);
    ++counts[std::move(key)];
  }
  int counted(const std::map<std::string, int>& counts, const std::string& key) const {
    const std::lock_guard lock(mutex_);
    const auto it = counts.find(key);
    return it == counts.end() ? 0 : it->second;
  }

  const System& inner_;
  mutable std::mutex mutex_;
  mutable std::map<std::string, int> reads_;
  mutable std::map<std::string, int> runs_;
  mutable std::map<std::string, std::size_t> most_bytes_;
};

}  // namespace hwaccel::testing
