// `hwaccel specs`: the published device specs `--devices` accepts.
#include "commands.hpp"

#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <optional>
#include <string>

import hwaccel;

namespace hwaccel::cli {
namespace {

std::string optional_number(const std::optional<double>& v) { return v ? fmt::format("{:g}", *v) : std::string("-"); }

int run_specs(bool json_output) {
  if (json_output) {
    std::cout << device_specs_json() << "\n";
    return 0;
  }
  std::cout << fmt::format("{:<16} {:<17} {:>8} {:>9} {:>9} {:>9} {:>9}  {}\n", "NAME", "ID", "MEMORY", "GB/s",
                           "BF16 TF", "FP16 TF", "FP8 TF", "FABRIC (GB/s per direction x domain)");
  for (const auto& s : device_specs()) {
    std::string fabric = "PCIe only";
    if (s.fabric)
      fabric = fmt::format("{} {} x {}", s.fabric->kind,
                           s.fabric->bandwidth_gbps ? fmt::format("{:g}", *s.fabric->bandwidth_gbps) : "?",
                           s.fabric->domain_size);
    std::cout << fmt::format("{:<16} {:<17} {:>8} {:>9g} {:>9} {:>9} {:>9}  {}\n", s.name, s.id,
                             bytes_text(s.memory_bytes), s.memory_bandwidth_gbps, optional_number(s.bf16_tflops),
                             optional_number(s.fp16_tflops), optional_number(s.fp8_tflops), fabric);
  }
  std::cout << "\nDense datasheet figures, per device. Use a NAME with --devices, e.g. "
               "`hwaccel plan --model llama-3.1-70b --devices 8xH100-SXM-80GB`.\n";
  return 0;
}

}  // namespace

Command add_specs_command(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("specs", "List the published device specs `--devices` accepts");
  cmd->add_flag("--json", *json, "JSON output");
  return {cmd, [json] { return run_specs(*json); }};
}

}  // namespace hwaccel::cli
