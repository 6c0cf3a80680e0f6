// Pasted tool outputs as a machine read in memory: the same capture that
// `hwaccel capture --import` writes as a fixture folder, replayed without
// the folder, and pasted text recognised by its shape when it has no "$ "
// prompts to say which command printed it.
module;
#include <algorithm>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.detect;

#include "not_captured.hpp"

namespace hwaccel {

namespace {

constexpr std::string_view query_gpu_flag = "--query-gpu=";

bool is_query_gpu(const std::vector<std::string>& argv) {
  return argv.size() >= 2 && argv[0] == "nvidia-smi" && argv[1].starts_with(query_gpu_flag);
}

class PastedSystem final : public System {
 public:
  explicit PastedSystem(ImportedCapture capture) : capture_(std::move(capture)) {
    for (const auto& c : capture_.commands) tools_.insert(c.argv[0]);
    for (const auto& [path, content] : capture_.contents) {
      // Every folder above a pasted file exists and lists it.
      std::string_view p = path;
      while (true) {
        const auto slash = p.rfind('/');
        if (slash == std::string_view::npos) break;
        const std::string parent(slash == 0 ? std::string_view("/") : p.substr(0, slash));
        const std::string name(p.substr(slash + 1));
        if (!name.empty()) folders_[parent].insert(name);
        if (slash == 0) break;
        p = p.substr(0, slash);
      }
    }
  }

  Result<FileContent> read_file(std::string_view path, std::size_t max_bytes) const override {
    if (const auto it = capture_.contents.find(std::string(path)); it != capture_.contents.end()) {
      FileContent c;
      c.truncated = it->second.size() > max_bytes;
      c.data.assign(it->second, 0, std::min(max_bytes, it->second.size()));
      return c;
    }
    if (folders_.contains(std::string(path))) return fail(ErrorKind::io_error, text::cat("cannot read ", path, ": it is a directory"));
    return fail(ErrorKind::not_found, text::cat(path, ": no such file or directory"));
  }

  Result<std::vector<DirEntry>> list_dir(std::string_view path) const override {
    const auto it = folders_.find(std::string(path));
    if (it == folders_.end()) return fail(ErrorKind::not_found, text::cat(path, ": no such file or directory"));
    std::vector<DirEntry> out;
    for (const auto& name : it->second) {
      const std::string child = path == "/" ? text::cat("/", name) : text::cat(path, "/", name);
      out.push_back(DirEntry{name, folders_.contains(child) ? FileType::directory : FileType::regular});
    }
    return out;
  }

  Result<std::string> read_link(std::string_view path) const override {
    return fail(ErrorKind::invalid_input, text::cat("cannot read link ", path, ": not a symbolic link"));
  }

  Result<FileStatus> status(std::string_view path, bool) const override {
    if (const auto it = capture_.contents.find(std::string(path)); it != capture_.contents.end())
      return FileStatus{FileType::regular, it->second.size(), 0444};
    if (folders_.contains(std::string(path)) || path == "/") return FileStatus{FileType::directory, 0, 0555};
    return fail(ErrorKind::not_found, text::cat(path, ": no such file or directory"));
  }

  std::optional<std::string> env(std::string_view name) const override {
    const auto it = capture_.env.find(name);
    if (it == capture_.env.end()) return std::nullopt;
    return it->second;
  }

  std::optional<std::string> find_tool(std::string_view name) const override {
    if (!tools_.contains(std::string(name))) return std::nullopt;
    return text::cat("/usr/bin/", name);
  }

  Result<ToolResult> run(const ToolRequest& request) const override {
    if (request.argv.empty()) return fail(ErrorKind::invalid_input, "empty command line");
    if (!find_tool(request.argv[0]))
      return fail(ErrorKind::tool_not_found, text::cat(request.argv[0], ": not found on PATH (or not executable)"));
    const auto& commands = capture_.commands;
    auto it = std::find_if(commands.begin(), commands.end(), [&](const auto& c) { return c.argv == request.argv; });
    // A pasted GPU query answers the detector's: nvidia-smi's CSV is read by column name.
    if (it == commands.end() && capture_.any_gpu_query && is_query_gpu(request.argv))
      it = std::find_if(commands.begin(), commands.end(), [](const auto& c) { return is_query_gpu(c.argv); });
    if (it == commands.end())
      return replayed::not_captured(request.argv);
    ToolResult result;
    result.exit_code = it->exit;
    result.out.assign(it->out, 0, std::min(it->out.size(), request.max_output_bytes));
    result.out_truncated = it->out.size() > request.max_output_bytes;
    if (it->err) {
      result.err.assign(*it->err, 0, std::min(it->err->size(), request.max_output_bytes));
      result.err_truncated = it->err->size() > request.max_output_bytes;
    }
    return result;
  }

  bool runs_instantly() const noexcept override { return true; }
  bool reads_from_memory() const noexcept override { return true; }

 private:
  ImportedCapture capture_;
  std::set<std::string, std::less<>> tools_;
  std::map<std::string, std::set<std::string>, std::less<>> folders_;
};

bool has_line_starting(std::string_view text, std::string_view prefix) {
  std::string_view rest = text;
  while (!rest.empty()) {
    std::string_view line = text::next_line(rest);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.starts_with(prefix)) return true;
  }
  return false;
}

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

// The field list of a --query-gpu CSV's header ("index, name, memory.total [MiB]").
std::optional<std::string> query_fields(std::string_view text) {
  std::string_view rest = text;
  const std::string_view header = text::trim(text::next_line(rest));
  if (!contains(header, ",") || !(contains(header, "name") || contains(header, "index") || contains(header, "pci.bus_id") ||
                                  contains(header, "uuid")))
    return std::nullopt;
  std::string fields;
  std::string_view cells = header;
  while (!cells.empty()) {
    std::string_view cell = text::trim(text::next_token(cells, ','));
    if (const auto unit = cell.find(" ["); unit != std::string_view::npos) cell = cell.substr(0, unit);
    if (cell.empty() || cell.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789._") != std::string_view::npos)
      return std::nullopt;
    fields += text::cat(fields.empty() ? "" : ",", cell);
  }
  return fields;
}

// The command that printed `text`, from its shape; nullopt when none fits.
std::optional<std::vector<std::string>> command_of(std::string_view text) {
  const std::string_view head = text::trim(text.substr(0, 4096));
  if (head.starts_with("<?xml") || contains(head, "<nvidia_smi_log")) return std::vector<std::string>{"nvidia-smi", "-q", "-x"};
  if (contains(head, "==============NVSMI LOG==============")) return std::vector<std::string>{"nvidia-smi", "-q"};
  if (contains(head, "NVIDIA-SMI") && contains(head, "+---")) return std::vector<std::string>{"nvidia-smi"};
  if (head.starts_with("GPU 0:") && contains(head, "(UUID: ")) {
    // `nvlink -s` heads each GPU's links with the line `-L` prints for it.
    if (contains(head, " Link 0: ")) return std::vector<std::string>{"nvidia-smi", "nvlink", "-s"};
    return std::vector<std::string>{"nvidia-smi", "-L"};
  }
  if (const auto fields = query_fields(head))
    return std::vector<std::string>{"nvidia-smi", text::cat(query_gpu_flag, *fields), "--format=csv"};
  if (head.starts_with("{") && contains(head, "SPDisplaysDataType"))
    return std::vector<std::string>{"system_profiler", "SPDisplaysDataType", "-json"};
  if (head.starts_with("{") && contains(head, "\"card")) return std::vector<std::string>{"rocm-smi", "-a", "--json"};
  if (contains(head, "ROCm System Management Interface") || contains(head, "ROCm SMI")) {
    if (contains(text, "Weight between")) return std::vector<std::string>{"rocm-smi", "--showtopo"};
    if (contains(text, "Card Series") || contains(text, "Card series")) return std::vector<std::string>{"rocm-smi", "-a"};
    return std::vector<std::string>{"rocm-smi"};
  }
  if (contains(head, "HSA Agents") || contains(head, "ROCk module")) return std::vector<std::string>{"rocminfo"};
  if (contains(head, "| Device ID | Device Information")) return std::vector<std::string>{"xpu-smi", "discovery"};
  if (contains(head, "HL-SMI")) return std::vector<std::string>{"hl-smi"};
  if (contains(head, "NEURON") && contains(head, "DEVICE")) return std::vector<std::string>{"neuron-ls"};
  if (contains(head, "VULKANINFO") || contains(head, "Vulkan Instance Version")) {
    if (contains(text, "Devices:\n========") && !contains(text, "VkPhysicalDeviceProperties"))
      return std::vector<std::string>{"vulkaninfo", "--summary"};
    return std::vector<std::string>{"vulkaninfo"};
  }
  return std::nullopt;
}

}  // namespace

std::unique_ptr<System> make_pasted_system(ImportedCapture capture) {
  return std::make_unique<PastedSystem>(std::move(capture));
}

Result<ImportedCapture> capture_from_paste(std::string_view text) {
  if (text::trim(text).empty()) return fail(ErrorKind::invalid_input, "the paste is empty");
  if (has_line_starting(text, "$ ")) return parse_capture_transcript(text, "the paste");
  auto argv = command_of(text);
  if (!argv)
    return fail(ErrorKind::parse_error,
                text::cat("the paste is not a tool output hwaccel reads (it starts with \"", text::excerpt(text::trim(text), 60),
                          "\"): paste nvidia-smi (its table, -L, --query-gpu CSV, -q or -q -x), rocm-smi, rocminfo, "
                          "system_profiler SPDisplaysDataType -json, xpu-smi, hl-smi, neuron-ls or vulkaninfo output, "
                          "hwaccel detect JSON, or a terminal transcript with \"$ command\" lines"));
  ImportedCapture capture;
  capture.any_gpu_query = is_query_gpu(*argv);
  capture.source = text::cat("pasted output of `", text::join(*argv, " "), "`");
  capture.commands.push_back(ImportedCapture::Command{std::move(*argv), std::string(text), std::nullopt, 0});
  return capture;
}

}  // namespace hwaccel
