// hwaccel.doctor: why a device that is in the machine was not reported, or
// cannot be used by this process, and what to do about it.
module;
#include <cstdint>
#include <map>
#include <string>
#include <vector>
export module hwaccel.doctor;
export import hwaccel.detect;
export import hwaccel.registry;

export namespace hwaccel {

/// One reason an accelerator is missing or unusable, with the evidence.
struct DoctorFinding {
  std::string backend;  ///< "cuda", "rocm", ...
  std::string subject;  ///< what it is about: a PCI address, a /dev node, a variable, a tool
  std::string cause;    ///< one sentence
  std::string remedy;   ///< one sentence
  /// The device cannot be used until this is fixed (doctor exits 1); a
  /// finding that is not blocking is a note (a tool missing while sysfs
  /// still reports the device, a device hidden on purpose).
  bool blocking = true;
  /// Facts behind the finding, by name: path, driver, mode, owner, group,
  /// user, user_groups, exit, stderr, variable, value.
  std::map<std::string, std::string> evidence;
};

/// What one backend looked at during the detection and what it found.
struct DoctorBackend {
  std::string backend;
  std::vector<std::string> looked_at;  ///< files and folders, each once, in the order first looked at
  std::vector<std::string> missing;    ///< those of looked_at that did not exist
  std::vector<std::string> tools;      ///< "nvidia-smi -L: exit 0", "hl-smi: not found"
  std::size_t devices = 0;
  std::vector<std::string> warnings;
};

struct DoctorReport {
  std::vector<DoctorBackend> backends;  ///< in detector-table order
  std::vector<DoctorFinding> findings;
  AcceleratorRegistry registry;         ///< what the detection reported

  /// No blocking finding: every accelerator found is usable here.
  bool usable() const noexcept;
};

/// Detects `system` with `builder`'s backends and limits, recording what each
/// detector looked at (DiagnosticEvent at trace level), then checks what
/// detection cannot report by itself: PCI functions of known accelerators
/// without a usable driver, device nodes that are missing (in a container:
/// not mounted) or that this user cannot open, visible-devices variables that
/// hide every device, and tools that failed or are missing. Reads everything
/// through `system`, so a fixture replays it.
DoctorReport run_doctor(const System& system, DetectBuilder builder = {});

/// The report as JSON (docs/doctor.md): canonical, one document.
std::string doctor_json(const DoctorReport& report, bool pretty = false);
/// The report for people: each backend in a line, then each finding with its
/// cause, remedy and evidence.
std::string doctor_text(const DoctorReport& report);

}  // namespace hwaccel
