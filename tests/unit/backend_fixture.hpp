// Helpers for backend tests: sysfs PCI functions and one-backend detection over
// a FixtureBuilder. Header-only, included before `import hwaccel;`.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <utility>

#include "../test_support.hpp"

namespace hwaccel::testing {

/// A PCI function under /sys/bus/pci/devices/<address>, optionally bound to a
/// driver (listed under /sys/bus/pci/drivers/<driver>).
struct PciSpec {
  std::string address;  ///< "0000:33:00.0"
  unsigned vendor = 0;
  unsigned device = 0;
  std::string driver;
  int numa_node = -1;
  std::string speed;  ///< "16.0 GT/s PCIe"; empty for no link files
  unsigned width = 0;
  std::string cpulist;
  unsigned subsystem_vendor = 0;
  unsigned subsystem_device = 0;
  unsigned class_code = 0x120000;  ///< processing accelerator

  PciSpec(std::string addr, unsigned vendor_id, unsigned device_id)
      : address(std::move(addr)), vendor(vendor_id), device(device_id) {}
  PciSpec& bound(std::string name) { driver = std::move(name); return *this; }
  PciSpec& numa(int node) { numa_node = node; return *this; }
  PciSpec& link(std::string gts, unsigned lanes) { speed = std::move(gts); width = lanes; return *this; }
  PciSpec& cpus(std::string list) { cpulist = std::move(list); return *this; }
  PciSpec& subsystem(unsigned v, unsigned d) { subsystem_vendor = v; subsystem_device = d; return *this; }
  PciSpec& klass(unsigned c) { class_code = c; return *this; }
};

inline std::string hex_id(unsigned v, int digits = 4) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%0*x\n", digits, v);
  return buf;
}

inline FixtureBuilder& add_pci(FixtureBuilder& f, const PciSpec& s, std::string_view parent = "pci0000:00") {
  const std::string devices_dir = "/sys/devices/" + std::string(parent) + "/" + s.address;
  const std::string dir = "/sys/bus/pci/devices/" + s.address;
  f.link(dir, "../../../devices/" + std::string(parent) + "/" + s.address);
  f.file(devices_dir + "/vendor", hex_id(s.vendor));
  f.file(devices_dir + "/device", hex_id(s.device));
  f.file(devices_dir + "/class", hex_id(s.class_code, 6));
  f.file(devices_dir + "/numa_node", std::to_string(s.numa_node) + "\n");
  if (s.subsystem_vendor) f.file(devices_dir + "/subsystem_vendor", hex_id(s.subsystem_vendor));
  if (s.subsystem_device || s.subsystem_vendor) f.file(devices_dir + "/subsystem_device", hex_id(s.subsystem_device));
  if (!s.cpulist.empty()) f.file(devices_dir + "/local_cpulist", s.cpulist + "\n");
  if (!s.speed.empty()) {
    f.file(devices_dir + "/current_link_speed", s.speed + "\n");
    f.file(devices_dir + "/max_link_speed", s.speed + "\n");
    f.file(devices_dir + "/current_link_width", std::to_string(s.width) + "\n");
    f.file(devices_dir + "/max_link_width", std::to_string(s.width) + "\n");
  }
  if (!s.driver.empty()) {
    f.link(devices_dir + "/driver", "../../../bus/pci/drivers/" + s.driver);
    f.link("/sys/bus/pci/drivers/" + s.driver + "/" + s.address, "../../../../devices/" + std::string(parent) + "/" + s.address);
  }
  return f;
}

/// A /proc/bus/pci/devices line (the kernel's format: bus+devfn, vendor+device,
/// irq, seven bases, seven sizes, driver).
inline std::string proc_pci_line(unsigned bus, unsigned dev, unsigned fn, unsigned vendor, unsigned device,
                                 std::string_view driver) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%02x%02x\t%04x%04x\t%x", bus, (dev << 3) | fn, vendor, device, 0x20u);
  std::string line = buf;
  for (int i = 0; i < 14; ++i) line += "\t               0";
  line += "\t";
  line += driver;
  line += "\n";
  return line;
}

}  // namespace hwaccel::testing
