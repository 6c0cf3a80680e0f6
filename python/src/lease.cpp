// hwaccel._native's leases: reserve() free devices for a job, the Lease that
// holds them, and the leases held on the node.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

import hwaccel;

#include "native_support.hpp"

namespace py = pybind11;

namespace hwaccel::python {
namespace {

py::dict holder_dict(const LeaseHolder& h) {
  py::dict d;
  d["device_id"] = h.device_id;
  d["identity"] = h.identity;
  d["user"] = h.user;
  d["uid"] = h.uid;
  d["pid"] = h.pid;
  d["pid_namespace"] = h.pid_namespace ? py::object(py::int_(*h.pid_namespace)) : py::object(py::none());
  d["command"] = h.command;
  d["since"] = h.since;
  return d;
}

template <class T>
std::optional<T> optional_item(const py::dict& d, const char* key) {
  if (!d.contains(key) || d[key].is_none()) return std::nullopt;
  return d[key].cast<T>();
}

}  // namespace

void bind_lease(py::module_& m) {
  py::class_<Lease>(m, "Lease")
      .def("devices",
           [](const Lease& l) {
             py::list out;
             for (const auto& h : l.devices()) out.append(holder_dict(h));
             return out;
           })
      .def("environment", &Lease::environment)
      .def("cleared_environment", &Lease::cleared_environment)
      .def("warnings", &Lease::warnings)
      .def("release", &Lease::release);

  m.def("reserve",
        [](const AcceleratorRegistry* registry, const std::optional<std::string>& fixture, const py::dict& request) {
          LeaseRequest r;
          r.count = optional_item<std::size_t>(request, "count").value_or(1);
          r.device_ids = optional_item<std::vector<std::string>>(request, "device_ids").value_or(std::vector<std::string>{});
          // A size as the CLI takes it ("40G", "512MiB"), or bytes.
          if (request.contains("min_free_memory") && !request["min_free_memory"].is_none()) {
            const py::object size = request["min_free_memory"];
            if (py::isinstance<py::str>(size)) {
              const auto text = size.cast<std::string>();
              r.min_free_memory_bytes = text::parse_memory_size(text);
              if (!r.min_free_memory_bytes) raise_argument("min_free_memory", text::cat("'", text, "' is not a size (40G, 512MiB)"));
            } else {
              r.min_free_memory_bytes = size.cast<std::uint64_t>();
            }
          }
          r.max_utilization = optional_item<double>(request, "max_utilization");
          r.same_domain = optional_item<bool>(request, "same_domain").value_or(false);
          r.lease_dir = optional_item<std::string>(request, "lease_dir").value_or("");
          r.usage_db = optional_item<std::string>(request, "usage_db").value_or("");
          r.quota_file = optional_item<std::string>(request, "quota_file").value_or("");
          r.command = optional_item<std::string>(request, "command").value_or("python");
          if (const auto wait = optional_item<double>(request, "wait_s"))
            r.wait = std::chrono::milliseconds(static_cast<std::int64_t>(*wait * 1000));
          std::unique_ptr<System> system;
          if (fixture) system = open_fixture(*fixture);
          Result<Lease> lease = fail(ErrorKind::io_error, "not reserved");
          {
            const py::gil_scoped_release unlocked;
            if (!system) system = make_live_system();
            const AcceleratorRegistry detected = registry ? *registry : DetectBuilder{}.detect(*system);
            lease = reserve(detected, *system, r);
          }
          return value_or_raise(std::move(lease));
        },
        py::arg("registry"), py::arg("fixture"), py::arg("request"));

  m.def("held_leases", [](const std::string& lease_dir) {
    py::list out;
    for (const auto& h : value_or_raise(held_leases(lease_dir))) out.append(holder_dict(h));
    return out;
  });
}

}  // namespace hwaccel::python
