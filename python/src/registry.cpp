// hwaccel._native's Registry: the library's AcceleratorRegistry with its
// queries and what-ifs, read from JSON, made of hypothetical devices, or the
// registry a planning call plans on.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

import hwaccel;

#include "native_support.hpp"

namespace py = pybind11;

namespace hwaccel::python {
namespace {

std::optional<std::string> id_of(const DeviceProfile* d) {
  if (!d) return std::nullopt;
  return d->id;
}

std::vector<std::string> ids_of(const std::vector<const DeviceProfile*>& devices) {
  std::vector<std::string> ids;
  ids.reserve(devices.size());
  for (const auto* d : devices) ids.push_back(d->id);
  return ids;
}

Family family_argument(const std::string& name) {
  const auto f = parse_family(name);
  if (!f) raise_argument("family", text::cat("'", name, "' is not cpu, gpu, npu, tpu or asic"));
  return *f;
}

DeviceClass device_class_argument(const std::string& name) {
  constexpr std::array classes = {DeviceClass::any_accelerator, DeviceClass::gpu,        DeviceClass::tpu,
                                  DeviceClass::gaudi,           DeviceClass::aws_neuron, DeviceClass::gpu_or_tpu,
                                  DeviceClass::npu,             DeviceClass::any};
  std::string known;
  for (const auto c : classes) {
    if (to_string(c) == name) return c;
    known += text::cat(known.empty() ? "" : ", ", to_string(c));
  }
  raise_argument("device_class", text::cat("'", name, "' is not one of ", known));
}

/// Devices given as registry-JSON device objects (Device.to_dict()), read
/// with the registry's own reader.
std::vector<DeviceProfile> devices_from_json(const std::string& devices_array) {
  const std::string document =
      text::cat("{\"schema_version\":", registry_schema_version, ",\"devices\":", devices_array,
                ",\"links\":[],\"interconnects\":[],\"system\":{},\"warnings\":[]}");
  auto registry = value_or_raise(registry_from_json(document), "devices");
  return registry.inventory().devices;
}

// What plan() and train() plan on when no devices are named: a fixture, or
// this machine ($HWACCEL_BACKENDS choosing the backends).
AcceleratorRegistry machine_registry(const std::optional<std::string>& fixture) {
  if (fixture) {
    const auto system = open_fixture(*fixture);
    return DetectBuilder{}.detect(*system);
  }
  return AcceleratorRegistry::detect();
}

}  // namespace

void bind_registry(py::module_& m) {
  py::class_<AcceleratorRegistry>(m, "Registry")
      .def("to_json", [](const AcceleratorRegistry& r, bool pretty, bool timings) {
             return to_json(r, JsonOptions{.pretty = pretty, .include_timings = timings});
           },
           py::arg("pretty") = false, py::arg("timings") = true)
      .def("summary_json", [](const AcceleratorRegistry& r, bool pretty) { return summary_json(r, pretty); },
           py::arg("pretty") = false)
      .def("best_id", [](const AcceleratorRegistry& r) { return id_of(r.best_available()); })
      .def("available_ids", [](const AcceleratorRegistry& r) { return ids_of(r.available()); })
      .def("family_ids", [](const AcceleratorRegistry& r, const std::string& family) {
        return ids_of(r.by_family(family_argument(family)));
      })
      .def("satisfying_ids",
           [](const AcceleratorRegistry& r, const std::string& device_class, std::int64_t min_devices,
              std::optional<std::int64_t> min_memory_bytes, std::optional<std::string> min_compute_capability,
              std::optional<std::string> dtype) {
             AcceleratorRequirement q = AcceleratorRequirement::of(device_class_argument(device_class),
                                                                   count_argument("min_devices", min_devices, 1, 1 << 20));
             if (min_memory_bytes) {
               if (*min_memory_bytes < 0) raise_argument("min_memory_bytes", text::cat(*min_memory_bytes, " is negative"));
               q.min_memory_bytes = static_cast<std::uint64_t>(*min_memory_bytes);
             }
             q.min_compute_capability = std::move(min_compute_capability);
             q.dtype = std::move(dtype);
             return ids_of(r.satisfying(q));
           })
      .def("has_accelerator", &AcceleratorRegistry::has_accelerator)
      .def("total_accelerator_memory", &AcceleratorRegistry::total_accelerator_memory)
      .def("total_memory_including_cpu", &AcceleratorRegistry::total_memory_including_cpu)
      .def("what_if_add_devices",
           [](const AcceleratorRegistry& r, const std::string& devices_array) {
             return value_or_raise(r.what_if_add(devices_from_json(devices_array)), "what_if_add");
           })
      .def("what_if_add_spec",
           [](const AcceleratorRegistry& r, const std::string& spec) {
             auto hypothetical = value_or_raise(hypothetical_registry(spec), "what_if_add");
             std::vector<DeviceProfile> added = hypothetical.inventory().devices;
             for (auto& d : added) d.id.clear();  // numbered after this registry's own devices
             return value_or_raise(r.what_if_add(std::move(added)), "what_if_add");
           })
      .def("what_if_remove",
           [](const AcceleratorRegistry& r, const std::vector<std::string>& ids) {
             return value_or_raise(r.what_if_remove(ids), "what_if_remove");
           })
      .def("__eq__", [](const AcceleratorRegistry& a, const AcceleratorRegistry& b) { return a == b; });

  m.def("registry_from_json",
        [](const std::string& text) { return value_or_raise(registry_from_json(text), "registry JSON"); },
        py::arg("text"));


  m.def("hypothetical", [](const std::string& devices) { return value_or_raise(hypothetical_registry(devices), "devices"); },
        py::arg("devices"));

  m.def("machine_registry", &machine_registry, py::arg("fixture"));
}

}  // namespace hwaccel::python
