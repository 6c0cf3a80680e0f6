// hwaccel._native: the library as Python sees it. A thin layer: every call
// maps its arguments onto the library's own types and parsers (the ones the
// CLI uses), releases the GIL while the library works, and hands results
// back as registries or as the library's canonical JSON, which the
// pure-Python layer (hwaccel/_records.py) turns into objects. Errors become
// the exception classes of hwaccel/_errors.py, one per ErrorKind.
#include <pybind11/pybind11.h>

#include <chrono>
#include <exception>
#include <string>

import hwaccel;

#include "native_support.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_native, m) {
  using namespace hwaccel;
  using namespace hwaccel::python;
  m.doc() = "The hwaccel library's binding; use the hwaccel package, not this module.";

  // Library errors become hwaccel.<Kind> exceptions; the classes live in
  // hwaccel._errors so that they can also derive from ValueError, OSError...
  // The translator runs with the GIL held, so the lookup needs no lock; the
  // mapping is kept for the interpreter's lifetime (never released, so that
  // no Python object is destroyed after the interpreter has gone).
  py::register_exception_translator([](std::exception_ptr p) {
    if (!p) return;
    try {
      std::rethrow_exception(p);
    } catch (const LibraryError& e) {
      static PyObject* const by_kind = py::object(py::module_::import("hwaccel._errors").attr("BY_KIND")).release().ptr();
      const py::object cls = py::reinterpret_borrow<py::dict>(by_kind)[py::str(std::string(to_string(e.error.kind)))];
      PyErr_SetObject(cls.ptr(), py::str(e.error.message).ptr());
    }
  });

  m.def("version", [] { return std::string(library_version()); });
  m.attr("registry_schema_version") = registry_schema_version;

  bind_settings(m);
  bind_registry(m);
  bind_detect(m);
  bind_planning(m);
  bind_telemetry(m);
  bind_fleet(m);
  bind_watch(m);
  bind_lease(m);
}
