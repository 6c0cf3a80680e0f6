// hwaccel._native's fleet functions (docs/fleet.md): scans, diffs and checks
// cross as the fleet document's JSON; FleetStore is the library's, one
// connection per object. Scans and database work release the GIL.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

import hwaccel;

#include "native_support.hpp"

namespace py = pybind11;

namespace hwaccel::python {
namespace {

Fleet fleet_argument(const std::string& json, std::string_view name) {
  return value_or_raise(fleet_from_json(json), name);
}

AcceleratorRegistry machine_registry(const std::optional<std::string>& fixture, std::unique_ptr<System>& system) {
  if (fixture) system = open_fixture(*fixture);
  const py::gil_scoped_release unlocked;
  if (!system) system = make_live_system();
  return DetectBuilder{}.detect(*system);
}

// id, scan time (seconds since the epoch), nodes, nodes answered, accelerators.
using ScanTuple = std::tuple<std::int64_t, std::int64_t, std::uint64_t, std::uint64_t, std::uint64_t>;

}  // namespace

void bind_fleet(py::module_& m) {
  m.attr("fleet_schema_version") = fleet_schema_version;

  m.def("fleet_scan_files",
        [](const std::vector<std::string>& paths, const py::dict& settings) {
          const ScanOptions options = value_or_raise(read_scan_options(settings_argument(settings)));
          const py::gil_scoped_release unlocked;
          return to_json(scan_files(paths, options));
        },
        py::arg("paths"), py::arg("settings"));
  m.def("fleet_scan_lines",
        [](const std::string& text) {
          const py::gil_scoped_release unlocked;
          return to_json(scan_lines(text));
        },
        py::arg("text"));
  m.def("fleet_scan_hosts",
        [](const std::vector<std::string>& hosts, const std::string& command, const py::dict& settings) {
          const ScanOptions options = value_or_raise(read_scan_options(settings_argument(settings)));
          // Each element is one host: never split or commented out as a host list's text would be.
          std::set<std::string_view> seen;
          for (const auto& h : hosts) {
            if (const auto problem = host_name_problem(h)) raise_argument("hosts", *problem);
            if (!seen.insert(h).second) raise_argument("hosts", text::cat("\"", h, "\" is given twice"));
          }
          const std::vector<std::string>& names = hosts;
          const auto parsed = value_or_raise(CommandTemplate::parse(command), "command");
          const py::gil_scoped_release unlocked;
          const auto system = make_live_system();
          return to_json(scan_hosts(*system, names, parsed, options));
        },
        py::arg("hosts"), py::arg("command"), py::arg("settings"));
  m.def("fleet_normalize", [](const std::string& json) { return to_json(fleet_argument(json, "fleet")); },
        py::arg("json"));
  m.def("fleet_diff",
        [](const std::string& before, const std::string& after) {
          return to_json(fleet_diff(fleet_argument(before, "before"), fleet_argument(after, "after")));
        },
        py::arg("before"), py::arg("after"));
  m.def("fleet_check",
        [](const std::string& baseline, const std::string& current, bool versions) {
          std::vector<std::tuple<std::string, std::string>> out;
          for (auto& f : fleet_check(fleet_argument(baseline, "baseline"), fleet_argument(current, "current"),
                                     CheckOptions{.versions = versions}))
            out.emplace_back(std::move(f.host), std::move(f.message));
          return out;
        },
        py::arg("baseline"), py::arg("current"), py::arg("versions"));

  py::class_<FleetStore>(m, "FleetStore")
      .def(py::init([](const std::string& path, bool read_only) {
             const py::gil_scoped_release unlocked;
             return value_or_raise(FleetStore::open(path, read_only ? FleetStore::Mode::read_only : FleetStore::Mode::read_write));
           }),
           py::arg("path"), py::arg("read_only"))
      .def("append",
           [](FleetStore& store, const std::string& json) {
             const Fleet fleet = fleet_argument(json, "fleet");
             const py::gil_scoped_release unlocked;
             return value_or_raise(store.append(fleet));
           })
      .def("scans",
           [](const FleetStore& store) {
             std::vector<ScanTuple> out;
             for (const auto& s : value_or_raise(store.scans()))
               out.emplace_back(s.id, std::chrono::duration_cast<std::chrono::seconds>(s.scanned_at.time_since_epoch()).count(),
                                s.nodes, s.nodes_answered, s.accelerators);
             return out;
           })
      .def("latest", [](const FleetStore& store) { return value_or_raise(store.latest()); })
      .def("previous", [](const FleetStore& store, std::int64_t id) { return value_or_raise(store.previous(id)); })
      .def("load",
           [](const FleetStore& store, std::int64_t id) {
             const py::gil_scoped_release unlocked;
             return to_json(value_or_raise(store.load(id)));
           })
      .def("prune",
           [](FleetStore& store, std::int64_t keep) {
             if (keep < 0) raise_argument("keep", "is negative");
             const py::gil_scoped_release unlocked;
             return value_or_raise(store.prune(static_cast<std::size_t>(keep)));
           })
      .def_property_readonly("schema_version", &FleetStore::schema_version);

  m.def("nfd_labels",
        [](const AcceleratorRegistry* registry, const std::optional<std::string>& fixture, bool vendor_labels) {
          std::unique_ptr<System> system;
          const AcceleratorRegistry detected = registry ? *registry : machine_registry(fixture, system);
          if (!system && fixture) system = open_fixture(*fixture);
          std::vector<std::tuple<std::string, std::string>> out;
          for (auto& l : nfd_labels(detected, NfdOptions{.vendor_labels = vendor_labels, .system = system.get()}))
            out.emplace_back(std::move(l.name), std::move(l.value));
          return out;
        },
        py::arg("registry"), py::arg("fixture"), py::arg("vendor_labels"));
  m.def("slurm_config",
        [](const std::optional<std::string>& fixture, const std::optional<std::string>& node_name) {
          std::unique_ptr<System> system;
          const AcceleratorRegistry detected = machine_registry(fixture, system);
          SlurmOptions options;
          options.node_name = node_name;
          SlurmNodeConfig c = slurm_node_config(detected, *system, options);
          return std::make_tuple(std::move(c.gres_conf), std::move(c.node_line), std::move(c.gres_types),
                                 std::move(c.warnings));
        },
        py::arg("fixture"), py::arg("node_name"));
}

}  // namespace hwaccel::python
