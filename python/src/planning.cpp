// hwaccel._native's planners: plan(), train() and recommend(), the plans
// over a fleet's nodes, and the spec table and model catalogue they name.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
#include <unistd.h>

import hwaccel;

#include "native_support.hpp"

namespace py = pybind11;

namespace hwaccel::python {
namespace {

/// A model named the Python way: a parameter count (int), or a catalogue id,
/// a path, or a count written as text ("70B", "7e9").
ModelDescription model_argument(std::string_view argument, const py::object& model) {
  if (py::isinstance<py::bool_>(model)) raise_argument(argument, "a model is a catalogue id, a path or a parameter count, not a bool");
  if (py::isinstance<py::int_>(model)) {
    if (PyObject_RichCompareBool(model.ptr(), py::int_(0).ptr(), Py_LE) == 1)
      raise_argument(argument, text::cat(py::str(model).cast<std::string>(), " is not a positive parameter count"));
    std::uint64_t n = 0;
    try {
      n = model.cast<std::uint64_t>();
    } catch (const py::cast_error&) {
      raise_argument(argument, text::cat(py::str(model).cast<std::string>(), " is too large a parameter count"));
    }
    return value_or_raise(ModelDescription::from_parameter_count(n), argument);
  }
  std::string name;
  if (py::isinstance<py::str>(model)) {
    name = model.cast<std::string>();
  } else if (py::hasattr(model, "__fspath__")) {
    name = py::module_::import("os").attr("fspath")(model).cast<std::string>();
  } else {
    raise_argument(argument, "a model is a catalogue id, a path or a parameter count");
  }
  if (name.empty()) raise_argument(argument, "the model name is empty");
  auto loaded = load_model(name);
  if (loaded) return std::move(*loaded);
  // Not a catalogue id or a file: perhaps a count written as text.
  if (::access(name.c_str(), F_OK) != 0)
    if (const auto n = parse_parameter_count(name)) return value_or_raise(ModelDescription::from_parameter_count(*n), argument);
  raise(loaded.error().kind, text::cat(argument, ": ", loaded.error().message));
}

// Settings and inputs of a plan: the keyword arguments read through the
// library's tables (the CLI's and the C API's), the model the Python way.
struct PlanRequest {
  std::vector<Setting> values;
  PlanningInputs inputs;
  DeviceSpecSet specs;
  std::vector<RuntimeProfile> profiles;  // runtime-profiles; empty: the built-in ones
};

// `with_profiles`: the call has a speed model, so the runtime-profile file
// (or $HWACCEL_RUNTIME_PROFILES) is read.
PlanRequest plan_request(const py::dict& settings, bool with_profiles = false) {
  PlanRequest r;
  r.values = settings_argument(settings);
  r.inputs = value_or_raise(read_planning_inputs(r.values));
  r.specs = value_or_raise(r.inputs.load_device_specs());
  if (with_profiles) r.profiles = value_or_raise(r.inputs.load_runtime_profiles());
  return r;
}

InferenceSettings inference_settings(const PlanRequest& r, const ModelDescription& model) {
  InferenceSettings s = value_or_raise(read_inference_settings(r.values));
  if (auto v = s.validate(model); !v) raise(v.error());
  if (!r.specs.empty()) s.device_specs = &r.specs;
  s.runtime_profiles = r.profiles;
  return s;
}

}  // namespace

void bind_planning(py::module_& m) {
  // `registry`: what to plan on when the settings name no devices (the
  // caller's, a fixture's or this machine's); the settings are plan()'s
  // keyword arguments (docs/python.md).
  m.def(
      "plan",
      [](const AcceleratorRegistry* registry, const py::object& model_arg, const py::dict& settings, bool pretty) {
        const PlanRequest r = plan_request(settings, true);
        const ModelDescription model = model_argument("model", model_arg);
        const InferenceSettings s = inference_settings(r, model);
        const Cluster cluster = value_or_raise(r.inputs.cluster(registry, r.specs));
        const py::gil_scoped_release unlocked;
        return to_json(value_or_raise(plan_inference(cluster, model, s)), pretty);
      },
      py::arg("registry").none(true), py::arg("model"), py::arg("settings"), py::arg("pretty") = false);

  m.def(
      "train",
      [](const AcceleratorRegistry* registry, const py::object& model_arg, const py::dict& settings,
         const py::object& teacher, const py::object& reward_model, bool pretty) {
        const PlanRequest r = plan_request(settings);
        const TrainingSettings s = value_or_raise(read_training_settings(r.values));
        const ModelDescription model = model_argument("model", model_arg);
        AuxiliaryModels aux;
        if (!teacher.is_none()) aux.teacher = model_argument("teacher", teacher);
        if (!reward_model.is_none()) aux.reward = model_argument("reward-model", reward_model);
        const Cluster cluster = value_or_raise(r.inputs.cluster(registry, r.specs));
        const py::gil_scoped_release unlocked;
        return to_json(value_or_raise(plan_training(cluster, model, s, aux)), pretty);
      },
      py::arg("registry").none(true), py::arg("model"), py::arg("settings"), py::arg("teacher"),
      py::arg("reward_model"), py::arg("pretty") = false);

  // Plans over a fleet's nodes (docs/planning.md, "Several nodes"): fleets
  // and results cross as JSON, like the other fleet functions.
  m.def(
      "fleet_place",
      [](const std::string& fleet_json, const std::string& workloads_json, const py::dict& settings) {
        const Fleet fleet = value_or_raise(fleet_from_json(fleet_json), "fleet");
        const auto workloads = value_or_raise(parse_workloads(workloads_json), "workloads");
        const PlanRequest r = plan_request(settings, true);
        PlacementOptions options = value_or_raise(read_placement_options(r.values));
        if (!r.specs.empty()) options.device_specs = &r.specs;
        options.runtime_profiles = r.profiles;
        const py::gil_scoped_release unlocked;
        return to_json(value_or_raise(place_workloads(fleet, workloads, options)));
      },
      py::arg("fleet"), py::arg("workloads"), py::arg("settings"));

  m.def(
      "fleet_what_is_missing",
      [](const std::string& fleet_json, const py::object& model_arg, const py::dict& settings) {
        const Fleet fleet = value_or_raise(fleet_from_json(fleet_json), "fleet");
        const PlanRequest r = plan_request(settings, true);
        const ModelDescription model = model_argument("model", model_arg);
        const InferenceSettings s = inference_settings(r, model);
        const CapacityOptions options = value_or_raise(read_capacity_options(r.values));
        const py::gil_scoped_release unlocked;
        return to_json(value_or_raise(what_is_missing(fleet, model, s, options)));
      },
      py::arg("fleet"), py::arg("model"), py::arg("settings"));

  m.def(
      "recommend",
      [](const py::object& model_arg, const py::dict& settings, bool pretty) {
        const PlanRequest r = plan_request(settings, true);
        RecommendOptions options = value_or_raise(read_recommend_options(r.values));
        const ModelDescription model = model_argument("model", model_arg);
        if (auto v = options.settings.validate(model); !v) raise(v.error());
        if (!r.specs.empty()) options.settings.device_specs = &r.specs;
        options.settings.runtime_profiles = r.profiles;
        const InstanceCatalogue catalogue = value_or_raise(options.load_catalogue(r.specs));
        const py::gil_scoped_release unlocked;
        return to_json(value_or_raise(recommend_instances(model, options, catalogue)), pretty);
      },
      py::arg("model"), py::arg("settings"), py::arg("pretty") = false);

  // The published specs, then a device-spec file's entries (device-specs,
  // else $HWACCEL_DEVICE_SPECS).
  m.def(
      "specs_json",
      [](const py::dict& settings) {
        const PlanRequest r = plan_request(settings);
        return r.specs.empty() ? device_specs_json() : device_specs_json(r.specs);
      },
      py::arg("settings"));
  m.def("models_json", [] { return model_catalogue_json(); });
}

}  // namespace hwaccel::python
