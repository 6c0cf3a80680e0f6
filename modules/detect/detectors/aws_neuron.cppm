// AWS Neuron backend (Inferentia, Trainium): neuron-ls JSON and table forms,
// the /dev/neuron* nodes and the neuron driver's sysfs as the fallback.
module;
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
export module hwaccel.detectors:aws_neuron;
import hwaccel.detect;

export namespace hwaccel::parsers {

/// One Neuron device as neuron-ls reports it.
struct NeuronLsDevice {
  std::uint32_t index = 0;  ///< NEURON DEVICE / neuron_device
  std::optional<PciAddress> bus_id;
  /// NeuronCores as the runtime addresses them: logical cores when
  /// logical-neuroncore-config > 1 (trn2 with LNC=2 shows 4 of 8).
  std::optional<std::uint32_t> neuroncores;
  /// Physical NeuronCores where a release prints both ("NEURON CORES" next to "LOGICAL NC").
  std::optional<std::uint32_t> physical_neuroncores;
  std::optional<std::uint32_t> logical_neuroncore_config;
  std::optional<std::uint64_t> memory_bytes;
  std::optional<std::string> cpu_affinity;
  std::optional<std::int32_t> numa_node;
  std::vector<std::uint32_t> connected_to;
  std::optional<std::string> neuroncore_ids;  ///< "0-3"
  std::uint32_t process_count = 0;
};

/// What one neuron-ls run said.
struct NeuronLsReport {
  std::vector<NeuronLsDevice> devices;
  std::optional<std::string> instance_type;  ///< "trn2n.48xlarge"
  std::optional<std::string> instance_id;
  std::optional<std::uint32_t> logical_neuroncore_config;
  std::vector<std::string> problems;  ///< entries that could not be read, each named
};

/// Parses neuron-ls JSON: the array of `--json-output` / `-j` (keys neuron_device,
/// bdf, cpu_affinity, numa_node as a string, connected_to, nc_count,
/// logical_neuroncore_config, memory_size in bytes, neuroncore_ids, neuron_processes),
/// or the object of `--output-format json`, where the same device entries sit under a
/// member next to instance-wide fields. Invalid JSON is a parse_error.
[[nodiscard]] Result<NeuronLsReport> parse_neuron_ls_json(std::string_view json);

/// Parses the default neuron-ls table by its (two-line) column names, with any
/// banner or warning text and `key: value` header lines before it. Columns change
/// per release (NEURON CORE IDS, LOGICAL NC, CPU AFFINITY, NUMA NODE, PID...).
/// No table is a parse_error.
[[nodiscard]] Result<NeuronLsReport> parse_neuron_ls_table(std::string_view text);

/// A Neuron chip generation and its published per-chip figures (AWS documentation;
/// never measurements).
struct NeuronChip {
  std::string_view name;            ///< "Trainium2"
  std::string_view neuroncore;      ///< "NeuronCore-v3"
  std::string_view instance_family; ///< "trn2"
  std::optional<std::uint32_t> published_neuroncores;
  std::optional<std::uint64_t> published_memory_bytes;
  std::string_view published_note;  ///< what the figures mean for the runtime, if anything
};

/// Chip of an instance type ("inf1.6xlarge", "trn2n.48xlarge").
std::optional<NeuronChip> neuron_chip_from_instance_type(std::string_view instance_type) noexcept;
/// Chip of a PCI device id under vendor 0x1d0f (aws-neuron driver table).
std::optional<NeuronChip> neuron_chip_from_pci(std::uint16_t device_id) noexcept;
/// Chip of the driver's sysfs device name ("Inferentia2", "Trainium1", "Trainium2").
std::optional<NeuronChip> neuron_chip_from_name(std::string_view name) noexcept;

}  // namespace hwaccel::parsers

export namespace hwaccel {
extern const Detector aws_neuron_detector;
}
