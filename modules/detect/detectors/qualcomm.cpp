// Qualcomm backend: one device per Cloud AI SoC (PCI function) bound to qaic,
// enriched with DRAM, NSP and status from `qaic-util -q`, joined by PCI
// address.
module;
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.detectors;

namespace hwaccel {
namespace parsers {

std::optional<std::string_view> qaic_product_name(std::uint16_t pci_device_id) noexcept {
  // PCI_DEV_AIC100 / PCI_DEV_AIC080 of drivers/accel/qaic/qaic_drv.c.
  switch (pci_device_id) {
    case 0xa100: return "Qualcomm Cloud AI 100";
    case 0xa080: return "Qualcomm Cloud AI 080";
    default: return std::nullopt;
  }
}

namespace {

std::optional<std::uint32_t> small_count(std::string_view value) {
  const auto n = text::parse_u64(value);
  if (!n || *n > 1'000'000) return std::nullopt;
  return static_cast<std::uint32_t>(*n);
}

std::optional<std::string> non_empty(std::string_view value) {
  if (value.empty()) return std::nullopt;
  return std::string(value);
}

}  // namespace

QaicUtilReport parse_qaic_util(std::string_view text) {
  QaicUtilReport report;
  QaicDevice* current = nullptr;
  while (!text.empty()) {
    const std::string_view line = text::trim(text::next_line(text));
    if (line.empty()) continue;
    if (line.starts_with("QID")) {
      const auto qid = small_count(line.substr(3));
      if (!qid) {
        current = nullptr;
        continue;
      }
      report.devices.push_back(QaicDevice{});
      current = &report.devices.back();
      current->qid = *qid;
      continue;
    }
    if (line.front() == '[') {
      // "[2024-03-01 10:00:00.000][error] ..." log lines of the runtime library.
      if (text::icontains(line, "error") && report.errors.size() < 8) report.errors.emplace_back(text::excerpt(line, 200));
      continue;
    }
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = text::trim(line.substr(0, colon));
    const std::string_view value = text::trim(line.substr(colon + 1));
    if (!current) {
      if (key == "Number of devices") report.device_count = small_count(value);
      continue;
    }
    if (key == "Status") current->status = non_empty(value);
    else if (key == "PCI Address") current->pci_address = PciAddress::parse(value);
    else if (key == "PCI Info") current->pci_info = non_empty(value);
    else if (key == "Dram Total") current->dram_total_bytes = text::parse_memory_size(value);
    else if (key == "Dram Free") current->dram_free_bytes = text::parse_memory_size(value);
    else if (key == "Nsp Total") current->nsp_total = small_count(value);
    else if (key == "Nsp Free") current->nsp_free = small_count(value);
    else if (key == "FW Version") current->fw_version = non_empty(value);
    else if (key == "HW Version") current->hw_version = non_empty(value);
  }
  return report;
}

}  // namespace parsers

namespace {

constexpr std::string_view qaic_driver = "qaic";
constexpr std::array<std::string_view, 1> qualcomm_tools = {"qaic-util"};

DeviceProfile new_qualcomm_device(std::uint32_t index) {
  DeviceProfile d;
  d.backend = Backend::qualcomm;
  d.family = Family::asic;
  d.index = index;
  d.id = device_id(d.backend, index);
  d.vendor = "Qualcomm";
  d.memory_kind = MemoryKind::dedicated;
  return d;
}

void apply_report(const DetectContext& ctx, DetectorOutput& out, const parsers::QaicDevice& q, DeviceProfile& d) {
  d.runtime_index = q.qid;
  d.properties.insert_or_assign("qid", text::cat(q.qid));
  if (q.dram_total_bytes) {
    d.memory_bytes = q.dram_total_bytes;
    if (q.dram_free_bytes && *q.dram_free_bytes <= *q.dram_total_bytes) {
      d.memory_free_bytes = q.dram_free_bytes;
      d.memory_used_bytes = *q.dram_total_bytes - *q.dram_free_bytes;
    }
  }
  if (q.nsp_total) d.compute_units = q.nsp_total;
  if (q.nsp_free) d.properties.insert_or_assign("nsp_free", text::cat(*q.nsp_free));
  if (q.fw_version) d.firmware_version = q.fw_version;
  if (q.hw_version) d.properties.insert_or_assign("hw_version", *q.hw_version);
  if (q.status) {
    d.properties.insert_or_assign("status", *q.status);
    if (*q.status != "Ready") {
      d.available = false;
      ctx.warn(out, WarningKind::unsupported,
               text::cat("qaic-util -q: QID ", q.qid, d.pci_bus_id ? text::cat(" (", *d.pci_bus_id, ")") : std::string(),
                         " reports Status:", text::excerpt(*q.status, 40), "; it cannot run work until it is reset"));
    }
  }
}

// Names a device known only from qaic-util (no sysfs view of it).
std::string name_from_report(const parsers::QaicDevice& q) {
  if (q.pci_info) {
    if (q.pci_info->ends_with("a100")) return "Qualcomm Cloud AI 100";
    if (q.pci_info->ends_with("a080")) return "Qualcomm Cloud AI 080";
  }
  return "Qualcomm Cloud AI accelerator";
}

void merge_report(const DetectContext& ctx, DetectorOutput& out, const parsers::QaicUtilReport& report) {
  const std::size_t from_sysfs = out.devices.size();
  std::vector<const parsers::QaicDevice*> unaddressed;
  std::set<std::uint32_t> qids;
  std::set<PciAddress> addresses;
  for (const auto& q : report.devices) {
    // A garbled report that names one SoC twice must not make two devices of
    // it, nor let the second block overwrite the first.
    if (!qids.insert(q.qid).second) {
      ctx.warn(out, WarningKind::inconsistent, text::cat("qaic-util -q lists QID ", q.qid, " twice; the first block is kept"));
      continue;
    }
    if (q.pci_address && !addresses.insert(*q.pci_address).second) {
      ctx.warn(out, WarningKind::inconsistent,
               text::cat("qaic-util -q gives QID ", q.qid, " the PCI address ", q.pci_address->to_string(),
                         " of an earlier block; the first is kept"));
      continue;
    }
    if (!q.pci_address) {
      unaddressed.push_back(&q);
      continue;
    }
    const std::string bus_id = q.pci_address->to_string();
    auto it = std::find_if(out.devices.begin(), out.devices.end(),
                           [&](const DeviceProfile& d) { return d.pci_bus_id == bus_id; });
    if (it == out.devices.end()) {
      // Seen by the runtime but not in sysfs (a container without /sys/bus/pci).
      out.devices.push_back(new_qualcomm_device(static_cast<std::uint32_t>(out.devices.size())));
      it = std::prev(out.devices.end());
      it->name = name_from_report(q);
      it->pci_bus_id = bus_id;
    }
    apply_report(ctx, out, q, *it);
  }
  if (unaddressed.empty()) return;
  if (from_sysfs == 0) {
    // Filtered output (`qaic-util -q | grep ...`) or no sysfs: the blocks are the devices.
    for (const auto* q : unaddressed) {
      out.devices.push_back(new_qualcomm_device(static_cast<std::uint32_t>(out.devices.size())));
      out.devices.back().name = name_from_report(*q);
      apply_report(ctx, out, *q, out.devices.back());
    }
  } else if (from_sysfs == 1 && report.devices.size() == 1) {
    apply_report(ctx, out, *unaddressed.front(), out.devices.front());
  } else {
    ctx.warn(out, WarningKind::inconsistent,
             text::cat("qaic-util -q printed ", unaddressed.size(), " QID block(s) without a PCI Address; with ",
                       from_sysfs, " cards in sysfs their DRAM and status cannot be attached to a card"));
  }
}

DetectorOutput detect_qualcomm(const DetectContext& ctx) {
  DetectorOutput out;
  const System& sys = ctx.system();
  for (const AccelFunction& function : accel_functions_of_driver(sys, qaic_driver)) {
    DeviceProfile d = new_qualcomm_device(static_cast<std::uint32_t>(out.devices.size()));
    const PciFunction pci = describe_accel_function(ctx, out, function, qaic_driver, d);
    const auto product = pci.device_id ? parsers::qaic_product_name(*pci.device_id) : std::nullopt;
    d.name = product ? std::string(*product) : std::string("Qualcomm Cloud AI accelerator");
    out.devices.push_back(std::move(d));
  }

  if (!sys.find_tool("qaic-util")) {
    if (!out.devices.empty())
      ctx.warn(out, WarningKind::tool_missing,
               "qaic-util is not on PATH (it ships in /opt/qti-aic/tools with the Qualcomm platform SDK): "
               "DRAM size, NSP count and device status are unknown");
    return out;
  }
  auto result = ctx.run({"qaic-util", "-q"});
  if (!result) {
    ctx.warn(out, result.error());
    return out;
  }
  if (!result->succeeded())
    ctx.warn(out, WarningKind::tool_failed,
             text::cat("qaic-util -q ", result->signal ? text::cat("was killed by signal ", *result->signal)
                                                      : text::cat("exited with code ", result->exit_code),
                       ": ", text::excerpt(text::trim(result->err.empty() ? result->out : result->err), 160)));
  if (result->out_truncated)
    ctx.warn(out, WarningKind::truncated, "qaic-util -q printed more than the output cap; the rest was dropped");
  const auto report = parsers::parse_qaic_util(result->out);
  if (report.devices.empty()) {
    // Output with nothing of qaic-util's in it is worth a warning even where
    // sysfs shows no card: the tool is there, and what it said is lost.
    const bool recognised = report.device_count || !report.errors.empty();
    const bool silent = text::trim(result->out).empty() && text::trim(result->err).empty();
    if (result->succeeded() && (!out.devices.empty() || (!recognised && !silent)))
      ctx.warn(out, WarningKind::parse_error,
               text::cat("qaic-util -q printed no QID block (",
                         text::trim(result->out).empty()
                             ? text::cat("nothing on stdout; stderr: ", text::excerpt(text::trim(result->err), 80))
                             : text::excerpt(text::trim(result->out), 80),
                         "); DRAM size and status are unknown"));
    return out;
  }
  if (!report.errors.empty())
    ctx.warn(out, WarningKind::tool_failed,
             text::cat("qaic-util -q logged ", report.errors.size(), " error line(s), the first: ", report.errors.front()));
  merge_report(ctx, out, report);
  return out;
}

}  // namespace

constexpr std::string_view qualcomm_drivers[] = {"qaic"};
constexpr PciKind qualcomm_pci[] = {{0x17cb, 0x1200, "Qualcomm Cloud AI 100"}};
constexpr VisibilityVariable qualcomm_visibility[] = {{"QAIC_VISIBLE_DEVICES", VisibilityVariable::Role::other}};
constexpr std::string_view qualcomm_runtimes[] = {"cloud-ai-sdk"};

const Detector qualcomm_detector{
    .name = "qualcomm",
    .backend = Backend::qualcomm,
    .tools = qualcomm_tools,
    .detect = &detect_qualcomm,
    .facts = {.drivers = qualcomm_drivers,
              .pci = qualcomm_pci,
              .accel_class = true,
              .driver_remedy = "load qaic (sudo modprobe qaic), or install a kernel of 6.4 or later",
              .vendor = "Qualcomm",
              .visibility_variables = qualcomm_visibility,
              .runtimes = qualcomm_runtimes,
              .container_remedy = "start the container with --device /dev/accel",
              .device_nodes_of = &accel_nodes_of},
};

}  // namespace hwaccel
