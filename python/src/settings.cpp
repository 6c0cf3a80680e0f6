// hwaccel._native's settings: Python keyword arguments as the library's
// key/value settings (the CLI's options and the C API's request keys read
// through the same tables, with the same error text), and the tables
// themselves for the package's tests and introspection.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <span>
#include <string>
#include <string_view>
#include <vector>

import hwaccel;

#include "native_support.hpp"

namespace py = pybind11;

namespace hwaccel::python {
namespace {

// A value as text, as the CLI would have been given it.
std::string setting_text(std::string_view key, const py::handle& value) {
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>() ? "true" : "false";
  if (py::isinstance<py::int_>(value)) return py::str(value).cast<std::string>();
  if (py::isinstance<py::float_>(value)) return py::repr(value).cast<std::string>();
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (py::hasattr(value, "__fspath__")) return py::module_::import("os").attr("fspath")(value).cast<std::string>();
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    std::string joined;
    for (const auto& item : value) joined += (joined.empty() ? "" : ",") + setting_text(key, item);
    return joined;
  }
  raise_argument(key, text::cat("a ", py::str(value.get_type().attr("__name__")).cast<std::string>(),
                                " is not a setting's value (a number, a bool, a str or a path)"));
}

template <class Settings>
py::list describe(std::string_view table, std::span<const SettingKey<Settings>> keys) {
  py::list out;
  for (const auto& k : keys) {
    py::dict d;
    d["table"] = std::string(table);
    d["name"] = std::string(k.name);
    d["type"] = std::string(to_string(k.type));
    d["default"] = std::string(k.default_text);
    d["low"] = k.low;
    d["high"] = k.high;
    d["env"] = std::string(k.env);
    d["help"] = std::string(k.help);
    out.append(d);
  }
  return out;
}

}  // namespace

std::vector<Setting> settings_argument(const py::dict& keywords) {
  std::vector<Setting> values;
  values.reserve(keywords.size());
  for (const auto& [key, value] : keywords) {
    if (value.is_none()) continue;
    const std::string name = py::str(key).cast<std::string>();
    values.push_back(Setting{name, setting_text(name, value)});
  }
  return values;
}

void bind_settings(py::module_& m) {
  // Every settings table, one dict per key, for the package's tests.
  m.def("setting_keys", [] {
    py::list all;
    const auto extend = [&](const py::list& more) {
      for (const auto& item : more) all.append(item);
    };
    extend(describe("detect", detect_setting_keys()));
    extend(describe("inference", inference_setting_keys()));
    extend(describe("planning", planning_input_keys()));
    extend(describe("recommend", recommend_setting_keys()));
    extend(describe("training", training_setting_keys()));
    extend(describe("training-models", training_model_keys()));
    extend(describe("scan", scan_setting_keys()));
    extend(describe("capacity", capacity_setting_keys()));
    extend(describe("placement", placement_setting_keys()));
    return all;
  });
}

}  // namespace hwaccel::python
