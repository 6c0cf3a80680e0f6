// Intel GPU backend: `xpu-smi discovery` (list, then `-d N` per device, in
// parallel) joined by PCI address with the DRM sysfs of i915 and xe cards.
// sysfs alone covers machines without xpu-smi and integrated GPUs.
module;
#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.detectors;

namespace hwaccel {
namespace parsers {

std::optional<std::string_view> XpuSmiDevice::get(std::string_view key) const {
  const auto it = fields.find(key);
  if (it == fields.end()) return std::nullopt;
  const std::string_view v = text::trim(it->second);
  if (v.empty() || text::iequals(v, "unknown") || v == "N/A") return std::nullopt;
  return v;
}

Result<std::vector<XpuSmiDevice>> parse_xpu_smi_discovery(std::string_view text_in) {
  std::vector<XpuSmiDevice> devices;
  bool box_seen = false;
  std::string_view rest = text_in;
  while (!rest.empty()) {
    std::string_view line = text::trim(text::next_line(rest));
    if (line.size() < 2 || line.front() != '|') continue;
    line.remove_prefix(1);
    if (line.back() == '|') line.remove_suffix(1);
    const auto bar = line.find('|');
    if (bar == std::string_view::npos) continue;
    const std::string_view id_cell = text::trim(line.substr(0, bar));
    const std::string_view info = text::trim(line.substr(bar + 1));
    if (id_cell == "Device ID") {
      box_seen = true;
      continue;
    }
    if (!box_seen) continue;
    if (!id_cell.empty()) {
      const auto id = text::parse_u64(id_cell);
      if (!id || *id > 65535)
        return fail(ErrorKind::parse_error, text::cat("xpu-smi discovery: Device ID '", text::excerpt(id_cell, 20), "' is not a number"));
      XpuSmiDevice d;
      d.device_id = static_cast<std::uint32_t>(*id);
      devices.push_back(std::move(d));
    }
    if (devices.empty() || info.empty()) continue;
    // "Key: Value"; wrapped continuations (no colon) belong to no key of interest.
    const auto colon = info.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = text::trim(info.substr(0, colon));
    if (key.empty()) continue;
    devices.back().fields.insert_or_assign(std::string(key), std::string(text::trim(info.substr(colon + 1))));
  }
  if (!box_seen) return fail(ErrorKind::parse_error, "xpu-smi printed no 'Device ID | Device Information' box");
  return devices;
}

Result<std::vector<XpuSmiDevice>> parse_xpu_smi_table(std::string_view text) {
  std::vector<XpuSmiDevice> devices;
  bool header = false;
  // A device takes two rows: "| 0  Intel(R) Arc(TM) B580  Off | 0000:03:00.0  Off | ..."
  // then "| N/A 25C 66W / 380W | 239MiB / 12216MiB | ...".
  bool expect_memory_row = false;
  for (std::string_view line : text::lines(text)) {
    line = text::trim(line);
    if (!line.starts_with("|")) {
      expect_memory_row = false;
      continue;
    }
    std::vector<std::string_view> cells = text::split_trimmed(line.substr(1), '|');
    if (!cells.empty() && cells.back().empty()) cells.pop_back();
    if (cells.empty()) continue;
    if (cells[0].starts_with("GPU") && text::icontains(cells[0], "Name")) {
      header = true;
      continue;
    }
    if (cells[0].starts_with("Processes")) break;
    if (!header) continue;
    if (expect_memory_row) {
      expect_memory_row = false;
      auto& fields = devices.back().fields;
      const auto keep = [&](std::string_view key, std::string_view value) {
        if (!value.empty() && value != "N/A") fields.insert_or_assign(std::string(key), std::string(value));
      };
      // "N/A    25C  66W / 380W": fan, temperature, power draw / cap.
      const auto sensors = text::words(cells[0]);
      if (sensors.size() >= 2) keep("GPU Temperature", sensors[1]);
      if (sensors.size() >= 5 && sensors[3] == "/") {
        keep("GPU Power", sensors[2]);
        keep("GPU Power Cap", sensors[4]);
      }
      if (cells.size() >= 2) {
        // "239MiB / 12216MiB": in use, then the total.
        const std::string_view usage = cells[1];
        const auto slash = usage.find('/');
        if (slash != std::string_view::npos) {
          const std::string_view total = text::trim(usage.substr(slash + 1));
          if (const auto bytes = text::parse_memory_size(total); bytes && *bytes > 0)
            fields.insert_or_assign("Memory Physical Size", text::cat(*bytes >> 20, " MiB"));
          if (const auto used = text::parse_memory_size(text::trim(usage.substr(0, slash))))
            fields.insert_or_assign("GPU Memory Used", text::cat(*used >> 20, " MiB"));
        }
      }
      // "0%        Default": utilization, then the compute mode.
      if (cells.size() >= 3)
        if (const auto util = text::words(cells[2]); !util.empty()) keep("GPU Utilization", util[0]);
      continue;
    }
    std::string_view first = cells[0];
    const std::string_view id_text = text::next_token(first, ' ');
    const auto id = text::parse_name_number(id_text);
    if (!id || cells.size() < 2) continue;
    XpuSmiDevice d;
    d.device_id = *id;
    // The name runs up to the persistence column ("Off"/"On") when it is there.
    std::string_view name = text::trim(first);
    for (std::string_view mode : {" Off", " On"})
      if (name.ends_with(mode)) name = text::trim(name.substr(0, name.size() - mode.size()));
    if (!name.empty()) d.fields.emplace("Device Name", std::string(name));
    std::string_view bus = cells[1];
    const std::string_view bdf = text::next_token(bus, ' ');
    if (PciAddress::parse(bdf)) d.fields.emplace("PCI BDF Address", std::string(bdf));
    devices.push_back(std::move(d));
    expect_memory_row = true;
  }
  if (!header) return fail(ErrorKind::parse_error, "no device table (no \"GPU  Name\" header row)");
  if (devices.empty()) return fail(ErrorKind::parse_error, "a device table header without device rows");
  return devices;
}

std::optional<IntelGpuModel> intel_gpu_model(std::uint16_t id) noexcept {
  struct Entry {
    std::uint16_t id;
    IntelGpuModel model;
  };
  constexpr std::string_view pvc = "Xe-HPC (Ponte Vecchio)";
  constexpr std::string_view alchemist = "Xe-HPG (Alchemist)";
  constexpr std::string_view battlemage = "Xe2-HPG (Battlemage)";
  // pci.ids (Intel 8086), Intel's intel-resource-drivers-for-kubernetes device tables.
  constexpr std::array<Entry, 24> table = {{
      {0x0b69, {"Intel Data Center GPU Max 1450", pvc}},
      {0x0bd5, {"Intel Data Center GPU Max 1550", pvc}},
      {0x0bd6, {"Intel Data Center GPU Max 1550", pvc}},
      {0x0bd7, {"Intel Data Center GPU Max 1350", pvc}},
      {0x0bd8, {"Intel Data Center GPU Max 1350", pvc}},
      {0x0bd9, {"Intel Data Center GPU Max 1100", pvc}},
      {0x0bda, {"Intel Data Center GPU Max 1100", pvc}},
      {0x0bdb, {"Intel Data Center GPU Max 1100", pvc}},
      {0x56c0, {"Intel Data Center GPU Flex 170", alchemist}},
      {0x56c1, {"Intel Data Center GPU Flex 140", alchemist}},
      {0x5690, {"Intel Arc A770M", alchemist}},
      {0x5691, {"Intel Arc A730M", alchemist}},
      {0x5692, {"Intel Arc A550M", alchemist}},
      {0x5693, {"Intel Arc A370M", alchemist}},
      {0x5694, {"Intel Arc A350M", alchemist}},
      {0x56a0, {"Intel Arc A770", alchemist}},
      {0x56a1, {"Intel Arc A750", alchemist}},
      {0x56a2, {"Intel Arc A580", alchemist}},
      {0x56a5, {"Intel Arc A380", alchemist}},
      {0x56a6, {"Intel Arc A310", alchemist}},
      {0x56b0, {"Intel Arc Pro A30M", alchemist}},
      {0x56b1, {"Intel Arc Pro A40/A50", alchemist}},
      {0xe20b, {"Intel Arc B580", battlemage}},
      {0xe211, {"Intel Arc Pro B60", battlemage}},
  }};
  for (const auto& e : table)
    if (e.id == id) return e.model;
  return std::nullopt;
}

bool is_placeholder_gpu_name(std::string_view name) noexcept {
  // "Intel(R) Graphics [0x020a]": a device id in brackets instead of a product.
  name = text::trim(name);
  return name.empty() || (name.ends_with("]") && name.find("[0x") != std::string_view::npos);
}

}  // namespace parsers

namespace {

constexpr std::uint16_t intel_vendor_id = 0x8086;

// One i915 or xe DRM card.
struct Card {
  std::string name;  // "card1"
  PciFunction pci;
  std::optional<std::uint64_t> local_memory_bytes;
  std::optional<std::uint64_t> local_memory_free_bytes;
  std::string memory_source;
  bool integrated = false;
  std::optional<PcieLink> link;
  std::optional<std::string> link_note;
};

std::optional<PciAddress> card_address(const System& sys, const std::string& dev_dir) {
  if (const auto link = sys.read_link(dev_dir))
    if (auto a = PciAddress::parse(base_name(*link))) return a;
  // Snapshots may hold `device` as a plain folder: its uevent names the slot.
  if (const auto uevent = read_text(sys, dev_dir + "/uevent")) {
    std::string_view rest = *uevent;
    while (!rest.empty()) {
      const std::string_view line = text::next_line(rest);
      if (line.starts_with("PCI_SLOT_NAME=")) return PciAddress::parse(line.substr(14));
    }
  }
  return std::nullopt;
}

// The link of a discrete card. Arc, Flex and Max cards carry a PCIe switch: the GPU
// function sits behind it on a switch-internal link that sysfs shows as 2.5 GT/s x1,
// while the slot link belongs to the switch's upstream port two bridges up.
void card_link(const System& sys, Card& card) {
  const PcieLink& own = card.pci.link;
  const bool internal = own.current_speed_gts == 2.5 && own.current_width == 1 &&
                        (!own.max_speed_gts || *own.max_speed_gts == 2.5);
  if (!internal || card.integrated) {
    if (own.current_speed_gts || own.max_speed_gts) card.link = own;
    return;
  }
  const auto bridges = pci_upstream_bridges(sys, card.pci.address);
  if (bridges.size() >= 2) {
    const PciFunction downstream = read_pci_function(sys, bridges[0]);
    const PciFunction upstream = read_pci_function(sys, bridges[1]);
    if (downstream.vendor_id == intel_vendor_id && upstream.vendor_id == intel_vendor_id &&
        (upstream.link.current_speed_gts || upstream.link.max_speed_gts)) {
      card.link = upstream.link;
      card.link_note = text::cat("upstream port ", upstream.address.to_string(),
                                 " of the card's PCIe switch (the GPU function shows the switch-internal 2.5 GT/s x1 link)");
      return;
    }
  }
  card.link_note = "not known: the GPU function shows the card switch's internal 2.5 GT/s x1 link and its upstream port "
                   "could not be read";
}

std::vector<Card> drm_cards(const System& sys) {
  std::vector<Card> cards;
  auto names = list_names(sys, "/sys/class/drm");
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) { return natural_less(a, b); });
  for (const auto& name : names) {
    // cardN only: connectors are "card0-DP-1", render nodes "renderD128".
    if (!name.starts_with("card") || !text::parse_name_number(std::string_view(name).substr(4))) continue;
    const std::string card_dir = "/sys/class/drm/" + name;
    const std::string dev_dir = card_dir + "/device";
    // The vendor first: one small read settles the other vendors' cards.
    if (const auto vendor = read_u64(sys, dev_dir + "/vendor", 16); vendor && *vendor != intel_vendor_id) continue;
    const auto addr = card_address(sys, dev_dir);
    if (!addr) continue;
    Card card;
    card.name = name;
    card.pci = read_pci_function_at(sys, dev_dir, *addr);
    if (card.pci.vendor_id != intel_vendor_id) continue;
    if (card.pci.driver != "i915" && card.pci.driver != "xe") continue;
    if (card.pci.class_code && (*card.pci.class_code >> 16) != 0x03) continue;
    if (card.pci.driver == "i915") {
      // Intel's out-of-tree i915 (the DKMS backport for Max and Flex) adds these to the
      // DRM minor; mainline i915 has no local-memory attribute.
      card.local_memory_bytes = read_u64(sys, card_dir + "/lmem_total_bytes");
      card.local_memory_free_bytes = read_u64(sys, card_dir + "/lmem_avail_bytes");
      if (card.local_memory_bytes) card.memory_source = card_dir + "/lmem_total_bytes";
    } else {
      // Some xe versions expose the VRAM of each tile (igt's xe_sysfs_tile reads it);
      // others expose no memory size at all, as a real B580 snapshot shows.
      std::uint64_t total = 0;
      bool any = false;
      for (const auto& entry : list_names(sys, dev_dir)) {
        if (!entry.starts_with("tile")) continue;
        if (const auto v = read_u64(sys, text::cat(dev_dir, "/", entry, "/physical_vram_size_bytes")); v && *v > 0) {
          total += *v;
          any = true;
        }
      }
      if (any) {
        card.local_memory_bytes = total;
        card.memory_source = dev_dir + "/tile*/physical_vram_size_bytes";
      }
    }
    // Intel's integrated GPU is always function 00:02.0 of the root bus.
    card.integrated = !card.local_memory_bytes && card.pci.address == PciAddress{0, 0, 2, 0};
    card_link(sys, card);
    cards.push_back(std::move(card));
  }
  return cards;
}

// A garbled listing that names one GPU twice must not count its memory twice:
// a repeated device id (here) or PCI address (when the devices are built)
// keeps the first entry.
void drop_repeated_ids(const DetectContext& ctx, DetectorOutput& out, std::vector<parsers::XpuSmiDevice>& listed) {
  std::set<std::uint32_t> seen;
  std::erase_if(listed, [&](const parsers::XpuSmiDevice& d) {
    if (seen.insert(d.device_id).second) return false;
    ctx.warn(out, WarningKind::inconsistent,
             text::cat("xpu-smi discovery lists device ", d.device_id, " twice; the first entry is kept"));
    return true;
  });
}

// xpu-smi's views: the `discovery` list, else the bare table (older
// releases and pasted outputs), then `discovery -d N` for each listed device.
std::vector<parsers::XpuSmiDevice> run_xpu_smi(const DetectContext& ctx, DetectorOutput& out) {
  const std::vector<std::string> list_argv = {"xpu-smi", "discovery"};
  const std::vector<std::string> table_argv = {"xpu-smi"};
  ToolViewWalk walk(ctx, out);
  const std::vector<std::string>* used = &list_argv;
  auto listed = walk.read(list_argv, parsers::parse_xpu_smi_discovery);
  if (!listed) {
    used = &table_argv;
    listed = walk.read(table_argv, parsers::parse_xpu_smi_table);
  }
  walk.finish(listed ? used : nullptr,
              used == &table_argv ? "the table, whose names may be cut, completed by discovery -d" : "");
  if (!listed || walk.stopped()) return {};
  drop_repeated_ids(ctx, out, *listed);
  std::vector<ToolRequest> requests;
  for (const auto& d : *listed) requests.push_back(ctx.request({"xpu-smi", "discovery", "-d", std::to_string(d.device_id)}));
  const auto details = ctx.run_concurrently(requests);
  for (std::size_t i = 0; i < details.size(); ++i) {
    auto& device = (*listed)[i];
    const auto& d = details[i];
    const std::string cmd = join_argv(requests[i].argv);
    if (!d) {
      ctx.warn(out, d.error());
      continue;
    }
    if (!d->succeeded()) {
      ctx.warn(out, WarningKind::tool_failed, text::cat(cmd, " ", describe_exit(*d)));
      continue;
    }
    auto parsed = parsers::parse_xpu_smi_discovery(d->out);
    if (!parsed || parsed->size() != 1 || (*parsed)[0].device_id != device.device_id) {
      ctx.warn(out, WarningKind::parse_error,
               text::cat(cmd, ": ", parsed ? std::string("does not describe exactly that device") : parsed.error().message));
      continue;
    }
    for (auto& [key, value] : (*parsed)[0].fields) device.fields.insert_or_assign(key, std::move(value));
  }
  return std::move(*listed);
}


// PCIe generation -> GT/s per lane.
std::optional<double> generation_speed(std::uint64_t gen) noexcept {
  constexpr std::array<double, 6> speeds = {2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
  if (gen < 1 || gen > speeds.size()) return std::nullopt;
  return speeds[gen - 1];
}

void apply_card(DeviceProfile& p, const Card& card) {
  p.pci_bus_id = card.pci.address.to_string();
  p.numa_node = card.pci.numa_node;
  p.cpu_affinity = card.pci.local_cpulist;
  p.integrated = card.integrated;
  if (card.integrated) {
    // The iGPU allocates from system RAM; its size is the host's business, not a device figure.
    p.memory_kind = MemoryKind::unified;
    p.properties["memory"] = "shares system memory with the CPU";
  }
  if (!p.memory_bytes && card.local_memory_bytes) {
    p.memory_bytes = card.local_memory_bytes;
    p.memory_free_bytes = card.local_memory_free_bytes;
    p.properties["memory_source"] = card.memory_source;
  }
  if (card.link) p.pcie = card.link;
  if (card.link_note) p.properties["pcie_link"] = *card.link_note;
  if (card.pci.driver) p.properties["driver"] = *card.pci.driver;
  p.properties["drm_card"] = card.name;
  if (card.pci.device_id) p.properties["pci_device_id"] = text::cat("0x", text::hex4(*card.pci.device_id));
}

std::string sysfs_name(const Card& card) {
  if (card.pci.device_id)
    if (const auto model = parsers::intel_gpu_model(*card.pci.device_id)) return std::string(model->name);
  const std::string ids = card.pci.device_id ? text::cat(" [8086:", text::hex4(*card.pci.device_id), "]") : std::string();
  return text::cat(card.integrated ? "Intel integrated GPU" : "Intel GPU", ids);
}

DeviceProfile oneapi_profile() {
  DeviceProfile p;
  p.backend = Backend::intel_oneapi;
  p.family = Family::gpu;
  p.vendor = "Intel";
  p.memory_kind = MemoryKind::dedicated;
  return p;
}

DetectorOutput detect_intel_oneapi(const DetectContext& ctx) {
  DetectorOutput out;
  const System& sys = ctx.system();
  const bool have_tool = sys.find_tool("xpu-smi").has_value();
  std::vector<Card> cards = drm_cards(sys);
  if (!have_tool && cards.empty()) return out;
  std::vector<parsers::XpuSmiDevice> listed;
  if (have_tool) listed = run_xpu_smi(ctx, out);

  std::vector<bool> card_used(cards.size(), false);
  std::uint32_t index = 0;
  std::set<PciAddress> listed_addresses;
  for (const auto& d : listed) {
    std::optional<PciAddress> bdf;
    if (const auto v = d.get("PCI BDF Address")) bdf = PciAddress::parse(*v);
    if (bdf && !listed_addresses.insert(*bdf).second) {
      ctx.warn(out, WarningKind::inconsistent,
               text::cat("xpu-smi discovery gives device ", d.device_id, " the PCI address ", bdf->to_string(),
                         " of an earlier device; the first is kept"));
      continue;
    }
    DeviceProfile p = oneapi_profile();
    p.index = index++;
    p.id = device_id(Backend::intel_oneapi, p.index);
    p.runtime_index = d.device_id;
    std::optional<std::uint16_t> pci_id;
    if (const auto v = d.get("PCI Device ID"))
      if (const auto n = text::parse_hex(*v); n && *n <= 0xffff) pci_id = static_cast<std::uint16_t>(*n);
    const Card* card = nullptr;
    for (std::size_t i = 0; i < cards.size() && bdf; ++i)
      if (cards[i].pci.address == *bdf) {
        card = &cards[i];
        card_used[i] = true;
      }
    if (!pci_id && card && card->pci.device_id) pci_id = card->pci.device_id;
    const auto model = pci_id ? parsers::intel_gpu_model(*pci_id) : std::nullopt;
    const auto name = d.get("Device Name");
    p.name = name && !parsers::is_placeholder_gpu_name(*name) ? std::string(*name)
             : model                                           ? std::string(model->name)
             : name                                            ? std::string(*name)
                                                               : std::string("Intel GPU");
    if (model) p.architecture = std::string(model->architecture);
    if (bdf) p.pci_bus_id = bdf->to_string();
    if (const auto v = d.get("Memory Physical Size")) {
      p.memory_bytes = text::parse_memory_size(*v);
      if (!p.memory_bytes)
        ctx.warn(out, WarningKind::parse_error,
                 text::cat("xpu-smi discovery -d ", d.device_id, ": Memory Physical Size '", text::excerpt(*v, 30), "' is not a size"));
    }
    if (const auto v = d.get("Driver Version")) p.driver_version = std::string(*v);  // may be a build hash
    for (std::string_view key : {"GFX Firmware Version", "Firmware Version"})
      if (!p.firmware_version)
        if (const auto v = d.get(key)) p.firmware_version = std::string(*v);
    for (std::string_view key : {"SOC UUID", "UUID"})
      if (!p.uuid)
        if (const auto v = d.get(key)) p.uuid = std::string(*v);
    if (const auto v = d.get("Serial Number")) p.properties["serial"] = std::string(*v);
    if (const auto v = d.get("Number of EUs"))
      if (const auto n = text::parse_u64(*v); n && *n > 0 && *n < 1'000'000) p.compute_units = static_cast<std::uint32_t>(*n);
    if (const auto v = d.get("Number of Tiles")) p.properties["tiles"] = std::string(*v);
    if (const auto v = d.get("Function Type")) p.properties["function_type"] = std::string(*v);
    if (const auto v = d.get("Device State")) p.properties["device_state"] = std::string(*v);
    if (const auto v = d.get("ECC State")) p.properties["ecc"] = std::string(*v);
    if (card) apply_card(p, *card);
    if (!p.pcie) {
      // xpu-smi's generation and width are the card's own link, switch or not.
      const auto gen = d.get("PCIe Generation");
      const auto width = d.get("PCIe Max Link Width");
      PcieLink link;
      if (gen)
        if (const auto g = text::parse_u64(*gen)) link.max_speed_gts = generation_speed(*g);
      if (width)
        if (const auto w = text::parse_u64(*width); w && *w > 0 && *w <= 64) link.max_width = static_cast<std::uint32_t>(*w);
      if (link.max_speed_gts || link.max_width) {
        p.pcie = link;
        p.properties["pcie_link"] = "maximum from xpu-smi (PCIe Generation, PCIe Max Link Width)";
      }
    }
    out.devices.push_back(std::move(p));
  }
  for (std::size_t i = 0; i < cards.size(); ++i) {
    if (card_used[i]) continue;
    const Card& card = cards[i];
    DeviceProfile p = oneapi_profile();
    p.index = index++;
    p.id = device_id(Backend::intel_oneapi, p.index);
    p.name = sysfs_name(card);
    if (card.pci.device_id)
      if (const auto model = parsers::intel_gpu_model(*card.pci.device_id)) p.architecture = std::string(model->architecture);
    apply_card(p, card);
    out.devices.push_back(std::move(p));
  }
  return out;
}

constexpr std::array<std::string_view, 1> oneapi_tools = {"xpu-smi"};

}  // namespace

constexpr std::string_view oneapi_drivers[] = {"i915", "xe"};
constexpr PciKind oneapi_pci[] = {{0x8086, 0x0300, "Intel GPU"}, {0x8086, 0x0380, "Intel GPU"}};
constexpr VisibilityVariable oneapi_visibility[] = {
    {"ZE_AFFINITY_MASK", VisibilityVariable::Role::other},
    {"ONEAPI_DEVICE_SELECTOR", VisibilityVariable::Role::other},
};
constexpr std::string_view oneapi_runtimes[] = {"vllm", "llama.cpp"};
constexpr ToolPackage oneapi_packages[] = {{"xpu-smi", "Intel XPU Manager"}};

const Detector intel_oneapi_detector{
    .name = "intel_oneapi",
    .backend = Backend::intel_oneapi,
    .tools = oneapi_tools,
    .detect = &detect_intel_oneapi,
    .facts = {.drivers = oneapi_drivers,
              .pci = oneapi_pci,
              .driver_remedy = "load the i915 or xe driver (sudo modprobe xe), or install a kernel that supports this GPU",
              .vendor = "Intel",
              .visibility_variables = oneapi_visibility,
              .lease_variable = "ZE_AFFINITY_MASK",  // Level Zero's: SYCL and every runtime over it
              .runtimes = oneapi_runtimes,
              .container_remedy = "start the container with --device /dev/dri",
              .tool_packages = oneapi_packages,
              .device_nodes_of = &render_nodes_of,
              .telemetry = "xe/i915 hwmon and GT frequencies (xpu-smi for the rest, when installed)",
              .merges_with_vulkan = true},
};

}  // namespace hwaccel
