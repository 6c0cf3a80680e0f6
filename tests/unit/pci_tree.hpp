// Builds sysfs trees of PCI functions (and their accel-class nodes) in a
// FixtureBuilder, shaped as the kernel lays them out: the device folder
// under /sys/devices, and links to it from /sys/bus/pci/devices, the
// driver's folder and /sys/class/accel.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "../test_support.hpp"

namespace hwaccel::testing {

/// One PCI function to write.
struct PciFunctionSpec {
  std::string bdf;             ///< "0000:02:05.0"
  std::string vendor;          ///< "0x8086"
  std::string device;          ///< "0x7d1d"
  std::string class_code = "0x120000";
  std::optional<std::string> revision;          ///< "0x04"
  std::optional<std::string> subsystem_device;  ///< "0x004e"
  std::optional<std::string> driver;            ///< bound driver, or none
  std::optional<unsigned> accel_minor;          ///< DRM accel node accelN
  bool dev_node = true;                         ///< write /dev/accel/accelN
  std::string numa_node = "-1";
};

/// Folder of the function under /sys/devices.
inline std::string pci_device_dir(std::string_view bdf) { return "/sys/devices/pci0000:00/" + std::string(bdf); }

inline void add_pci_function(FixtureBuilder& f, const PciFunctionSpec& s) {
  const std::string dir = pci_device_dir(s.bdf);
  f.file(dir + "/vendor", s.vendor + "\n")
      .file(dir + "/device", s.device + "\n")
      .file(dir + "/class", s.class_code + "\n")
      .file(dir + "/numa_node", s.numa_node + "\n")
      .link("/sys/bus/pci/devices/" + s.bdf, "../../../devices/pci0000:00/" + s.bdf);
  if (s.revision) f.file(dir + "/revision", *s.revision + "\n");
  if (s.subsystem_device) f.file(dir + "/subsystem_device", *s.subsystem_device + "\n");
  if (s.driver) {
    f.link(dir + "/driver", "../../../bus/pci/drivers/" + *s.driver)
        .link("/sys/bus/pci/drivers/" + *s.driver + "/" + s.bdf, "../../../../devices/pci0000:00/" + s.bdf);
  }
  if (s.accel_minor) {
    const std::string node = "accel" + std::to_string(*s.accel_minor);
    f.file(dir + "/accel/" + node + "/dev", "261:" + std::to_string(*s.accel_minor) + "\n")
        .link(dir + "/accel/" + node + "/device", "../../../" + s.bdf)
        .link("/sys/class/accel/" + node, "../../devices/pci0000:00/" + s.bdf + "/accel/" + node);
    if (s.dev_node) f.file("/dev/accel/" + node, "");
  }
}

}  // namespace hwaccel::testing
