// `hwaccel specs`: the published device specs `--devices` accepts, and the
// entries of a user device-spec file.
#include "commands.hpp"

#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <optional>
#include <string>

import hwaccel;

#include "setting_options.hpp"

namespace hwaccel::cli {
namespace {

struct SpecsArgs {
  bool json = false;
  SettingTexts settings;  ///< --device-specs (planning_input_keys())
};

std::string optional_number(const std::optional<double>& v) { return v ? fmt::format("{:g}", *v) : std::string("-"); }

std::string spec_line(const DeviceSpec& s, bool from_file) {
  std::string fabric = "PCIe only";
  if (s.fabric)
    fabric = fmt::format("{} {} x {}", s.fabric->kind,
                         s.fabric->bandwidth_gbps ? fmt::format("{:g}", *s.fabric->bandwidth_gbps) : "?",
                         s.fabric->domain_size);
  return fmt::format("{:<16} {:<17} {:>8} {:>9g} {:>9} {:>9} {:>9}  {}{}\n", s.name, s.id, bytes_text(s.memory_bytes),
                     s.memory_bandwidth_gbps, optional_number(s.bf16_tflops), optional_number(s.fp16_tflops),
                     optional_number(s.fp8_tflops), fabric, from_file ? "  [file]" : "");
}

int run_specs(const SpecsArgs& a) {
  auto inputs = checked(read_planning_inputs(settings_of(a.settings)));
  if (!inputs) return fail_with("specs", inputs.error());
  const auto extra = inputs->load_device_specs();
  if (!extra) return fail_with("specs", extra.error().message, exit_failure);
  if (a.json) {
    std::cout << device_specs_json(*extra) << "\n";
    return 0;
  }
  std::cout << fmt::format("{:<16} {:<17} {:>8} {:>9} {:>9} {:>9} {:>9}  {}\n", "NAME", "ID", "MEMORY", "GB/s",
                           "BF16 TF", "FP16 TF", "FP8 TF", "FABRIC (GB/s per direction x domain)");
  for (const auto& s : device_specs()) std::cout << spec_line(s, false);
  for (const auto& s : extra->specs())
    if (!find_spec(s.id)) std::cout << spec_line(s, true);  // a restated built-in entry is listed once, above
  std::cout << "\nDense datasheet figures, per device. Use a NAME with --devices, e.g. "
               "`hwaccel plan --model llama-3.1-70b --devices 8xH100-SXM-80GB`.\n";
  if (!extra->empty())
    std::cout << "[file]: from " << extra->origin() << " (--device-specs or $HWACCEL_DEVICE_SPECS), not the built-in table.\n";
  std::cout.flush();
  return std::cout.good() ? 0 : exit_failure;
}

}  // namespace

Command add_specs_command(CLI::App& app) {
  auto args = std::make_shared<SpecsArgs>();
  auto* cmd = app.add_subcommand("specs", "List the published device specs `--devices` accepts");
  cmd->add_flag("--json", args->json, "JSON output");
  add_setting_options(*cmd, planning_input_keys(), args->settings, {"device-specs"});
  return {cmd, [args] { return run_specs(*args); }};
}

}  // namespace hwaccel::cli
