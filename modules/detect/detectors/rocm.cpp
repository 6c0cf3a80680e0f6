// ROCm backend: AMD GPUs. The amdgpu DRM cards (/sys/class/drm/cardN, in
// numeric order) are joined to the KFD topology by PCI address; a board split
// into compute partitions (MI300 CPX/QPX/DPX) is one device with partitions.
// sysfs only: on a machine without AMD GPUs this costs one listing of
// /sys/class/drm, a readlink per card, and one failed lookup of the KFD
// topology.
module;
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>
module hwaccel.detectors;

namespace hwaccel {
namespace parsers {
namespace {

using enum AmdMemory;

// PCI device ids checked against pci.ids and libdrm's amdgpu.ids (which
// names products per device id AND revision: 0x73bf is the RX 6800, 6800 XT
// and 6900 XT). Rows for a revision come before the row for any revision.
// Integrated parts are the APUs; MI300A's HBM is the host's memory.
constexpr std::array<AmdProduct, 70> products = {{
    // Instinct (CDNA). MI300-class parts list their XCD count for CPX.
    {0x74a0, "", "AMD Instinct MI300A", "CDNA3", unified, 6},
    {0x74a1, "", "AMD Instinct MI300X", "CDNA3", dedicated, 8},
    {0x74a2, "", "AMD Instinct MI308X", "CDNA3", dedicated, 4},
    {0x74a5, "", "AMD Instinct MI325X", "CDNA3", dedicated, 8},
    {0x74a9, "", "AMD Instinct MI300X HF", "CDNA3", dedicated, 8},
    {0x74b5, "", "AMD Instinct MI300X VF", "CDNA3", dedicated, 8},
    {0x74b6, "", "AMD Instinct MI308X", "CDNA3", dedicated, 4},
    {0x74b9, "", "AMD Instinct MI325X VF", "CDNA3", dedicated, 8},
    {0x74bd, "", "AMD Instinct MI300X HF", "CDNA3", dedicated, 8},
    {0x7408, "", "AMD Instinct MI250X", "CDNA2", dedicated, 0},
    {0x740c, "", "AMD Instinct MI250X / MI250", "CDNA2", dedicated, 0},
    {0x740f, "", "AMD Instinct MI210", "CDNA2", dedicated, 0},
    {0x738c, "", "AMD Instinct MI100", "CDNA", dedicated, 0},
    {0x738e, "", "AMD Instinct MI100", "CDNA", dedicated, 0},
    {0x66a1, "06", "AMD Radeon Pro VII", "GCN5.1", dedicated, 0},
    {0x66a1, "", "AMD Instinct MI50 / MI60", "GCN5.1", dedicated, 0},
    {0x66af, "", "AMD Radeon VII", "GCN5.1", dedicated, 0},
    // Radeon PRO (RDNA3).
    {0x7448, "", "AMD Radeon PRO W7900", "RDNA3", dedicated, 0},
    {0x744a, "", "AMD Radeon PRO W7900 Dual Slot", "RDNA3", dedicated, 0},
    {0x7449, "", "AMD Radeon PRO W7800 48GB", "RDNA3", dedicated, 0},
    {0x745e, "", "AMD Radeon PRO W7800", "RDNA3", dedicated, 0},
    {0x7470, "", "AMD Radeon PRO W7700", "RDNA3", dedicated, 0},
    {0x7460, "", "AMD Radeon PRO V710", "RDNA3", dedicated, 0},
    // Radeon RX.
    {0x7550, "c0", "AMD Radeon RX 9070 XT", "RDNA4", dedicated, 0},
    {0x7550, "c3", "AMD Radeon RX 9070", "RDNA4", dedicated, 0},
    {0x7550, "", "AMD Radeon RX 9070 series (Navi 48)", "RDNA4", dedicated, 0},
    {0x744c, "c8", "AMD Radeon RX 7900 XTX", "RDNA3", dedicated, 0},
    {0x744c, "cc", "AMD Radeon RX 7900 XT", "RDNA3", dedicated, 0},
    {0x744c, "ce", "AMD Radeon RX 7900 GRE", "RDNA3", dedicated, 0},
    {0x744c, "cf", "AMD Radeon RX 7900M", "RDNA3", dedicated, 0},
    {0x744c, "", "AMD Radeon RX 7900 series (Navi 31)", "RDNA3", dedicated, 0},
    {0x747e, "c8", "AMD Radeon RX 7800 XT", "RDNA3", dedicated, 0},
    {0x747e, "ff", "AMD Radeon RX 7700 XT", "RDNA3", dedicated, 0},
    {0x747e, "", "AMD Radeon RX 7700 XT / 7800 XT (Navi 32)", "RDNA3", dedicated, 0},
    {0x7480, "c0", "AMD Radeon RX 7600 XT", "RDNA3", dedicated, 0},
    {0x7480, "cf", "AMD Radeon RX 7600", "RDNA3", dedicated, 0},
    {0x7480, "", "AMD Radeon RX 7600 series (Navi 33)", "RDNA3", dedicated, 0},
    {0x73a5, "c0", "AMD Radeon RX 6950 XT", "RDNA2", dedicated, 0},
    {0x73af, "c0", "AMD Radeon RX 6900 XT", "RDNA2", dedicated, 0},
    {0x73bf, "c0", "AMD Radeon RX 6900 XT", "RDNA2", dedicated, 0},
    {0x73bf, "c1", "AMD Radeon RX 6800 XT", "RDNA2", dedicated, 0},
    {0x73bf, "c3", "AMD Radeon RX 6800", "RDNA2", dedicated, 0},
    {0x73bf, "", "AMD Radeon RX 6800 / 6800 XT / 6900 XT (Navi 21)", "RDNA2", dedicated, 0},
    {0x73df, "c1 c5", "AMD Radeon RX 6700 XT", "RDNA2", dedicated, 0},
    {0x73df, "c0", "AMD Radeon RX 6750 XT", "RDNA2", dedicated, 0},
    {0x73ff, "c1", "AMD Radeon RX 6600 XT", "RDNA2", dedicated, 0},
    {0x73ff, "c7", "AMD Radeon RX 6600", "RDNA2", dedicated, 0},
    // APUs.
    {0x1586, "c1 d1", "AMD Radeon 8060S Graphics", "RDNA3.5", carve_out, 0},
    {0x1586, "c2 c4 d2 d4", "AMD Radeon 8050S Graphics", "RDNA3.5", carve_out, 0},
    {0x1586, "d5", "AMD Radeon 8040S Graphics", "RDNA3.5", carve_out, 0},
    {0x1586, "", "AMD Radeon 8000S Graphics (Strix Halo)", "RDNA3.5", carve_out, 0},
    {0x150e, "c1 c4 c5 c6 d1 d2 d3", "AMD Radeon 890M Graphics", "RDNA3.5", carve_out, 0},
    {0x150e, "", "AMD Radeon 880M / 890M Graphics (Strix Point)", "RDNA3.5", carve_out, 0},
    {0x1114, "c2 d2", "AMD Radeon 860M Graphics", "RDNA3.5", carve_out, 0},
    {0x1114, "c3 d3", "AMD Radeon 840M Graphics", "RDNA3.5", carve_out, 0},
    {0x1114, "", "AMD Radeon 840M / 860M Graphics (Krackan Point)", "RDNA3.5", carve_out, 0},
    {0x15bf, "00 02 c1 c2 c4 c6 c7 c9 cf d0 d1 d2 d3 d4 d7 d9 da dd", "AMD Radeon 780M Graphics", "RDNA3", carve_out, 0},
    {0x15bf, "01 03 c3 c8 cb cd d5 d6 db dc df f0", "AMD Radeon 760M Graphics", "RDNA3", carve_out, 0},
    {0x15bf, "c5 ca cc d8 de", "AMD Radeon 740M Graphics", "RDNA3", carve_out, 0},
    {0x15bf, "", "AMD Radeon 700M Graphics (Phoenix)", "RDNA3", carve_out, 0},
    {0x15c8, "", "AMD Radeon 740M Graphics", "RDNA3", carve_out, 0},
    {0x1900, "", "AMD Radeon 760M / 780M Graphics (Phoenix3)", "RDNA3", carve_out, 0},
    {0x1901, "", "AMD Radeon 740M Graphics", "RDNA3", carve_out, 0},
    {0x1681, "06 0a c7 c8", "AMD Radeon 680M", "RDNA2", carve_out, 0},
    {0x1681, "", "AMD Radeon 660M / 680M (Rembrandt)", "RDNA2", carve_out, 0},
    {0x164e, "", "AMD Radeon Graphics (Raphael)", "RDNA2", carve_out, 0},
    {0x1506, "", "AMD Radeon 610M", "RDNA2", carve_out, 0},
    {0x163f, "", "AMD Custom GPU 0405 (Van Gogh)", "RDNA2", carve_out, 0},
    {0x1636, "", "AMD Radeon Graphics (Renoir)", "GCN5", carve_out, 0},
    {0x1638, "", "AMD Radeon Graphics (Cezanne)", "GCN5", carve_out, 0},
}};

bool lists_revision(std::string_view revisions, std::uint8_t revision) {
  const std::string rev = text::hex_digits(revision, 2);
  for (const auto word : text::words(revisions))
    if (word == rev) return true;
  return false;
}

}  // namespace

const AmdProduct* amd_product(std::uint16_t device_id, std::optional<std::uint8_t> revision) noexcept {
  if (revision)
    for (const auto& p : products)
      if (p.device_id == device_id && !p.revisions.empty() && lists_revision(p.revisions, *revision)) return &p;
  for (const auto& p : products)
    if (p.device_id == device_id && p.revisions.empty()) return &p;
  return nullptr;
}

}  // namespace parsers

namespace {

using parsers::KfdNode;

constexpr std::string_view drm_class = "/sys/class/drm";
constexpr std::uint16_t amd_vendor = 0x1002;

// --- small readers ------------------------------------------------------------

// A sysfs attribute, trimmed (captures may pad it with NULs). Missing is
// silent; any other failure is a warning naming the file.
std::optional<std::string> attribute(const DetectContext& ctx, DetectorOutput& out, const std::string& path) {
  auto content = ctx.system().read_file(path, 64 * 1024);
  if (!content) {
    if (content.error().kind != ErrorKind::not_found) ctx.warn(out, content.error());
    return std::nullopt;
  }
  if (content->truncated) {
    ctx.warn(out, WarningKind::truncated, path + ": longer than a sysfs attribute can be; ignored");
    return std::nullopt;
  }
  return std::string(text::trim(content->data));
}

// An integer attribute; present but unparsable is a parse_error warning.
std::optional<std::uint64_t> number_attribute(const DetectContext& ctx, DetectorOutput& out, const std::string& path,
                                              int base = 10) {
  const auto value = attribute(ctx, out, path);
  if (!value) return std::nullopt;
  const auto n = text::parse_u64(*value, base);
  if (!n)
    ctx.warn(out, WarningKind::parse_error,
             text::cat(path, ": '", text::excerpt(*value, 40), "' is not ", base == 16 ? "a hexadecimal" : "an", " integer"));
  return n;
}

std::optional<std::int64_t> signed_attribute(const DetectContext& ctx, DetectorOutput& out, const std::string& path) {
  const auto value = attribute(ctx, out, path);
  if (!value) return std::nullopt;
  const auto n = text::parse_i64(*value);
  if (!n) ctx.warn(out, WarningKind::parse_error, text::cat(path, ": '", text::excerpt(*value, 40), "' is not an integer"));
  return n;
}

// "4 GiB", "29.27 GiB", "512 MiB": sizes in explanations people read.
std::string human_bytes(std::uint64_t bytes) {
  constexpr std::uint64_t mib = std::uint64_t{1} << 20;
  if (bytes % text::bytes_per_gib == 0) return text::cat(bytes / text::bytes_per_gib, " GiB");
  if (bytes < text::bytes_per_gib && bytes % mib == 0) return text::cat(bytes / mib, " MiB");
  return text::cat(std::round(static_cast<double>(bytes) / static_cast<double>(text::bytes_per_gib) * 100.0) / 100.0, " GiB");
}

// The UUID the ROCm runtime gives a GPU (ROCR/HIP_VISIBLE_DEVICES accept it).

std::string join_numbers(const std::vector<std::uint64_t>& values) {
  std::string s;
  for (const auto v : values) s += text::cat(s.empty() ? "" : ",", v);
  return s;
}

// --- DRM cards ------------------------------------------------------------------

// What a device's uevent says (DRIVER=, PCI_SLOT_NAME=): the identity source
// when sysfs snapshots lack the driver link or the device link is a folder.
struct Uevent {
  std::optional<std::string> driver;
  std::optional<PciAddress> slot;
};

Uevent read_uevent(const System& sys, const std::string& path) {
  Uevent u;
  const auto content = read_text(sys, path);
  if (!content) return u;
  std::string_view rest = *content;
  while (!rest.empty()) {
    const std::string_view line = text::trim(text::next_line(rest));
    if (line.starts_with("DRIVER=")) u.driver = std::string(line.substr(7));
    else if (line.starts_with("PCI_SLOT_NAME=")) u.slot = PciAddress::parse(line.substr(14));
  }
  return u;
}

struct DrmCard {
  std::string name;        ///< "card0"
  std::string device_dir;  ///< "/sys/class/drm/card0/device"
  std::optional<PciAddress> address;
};

// A card whose `device` link points nowhere: its driver cannot be known.
struct DanglingCard {
  std::string name;
  std::string target;
  std::optional<PciAddress> address;
};

bool is_card_name(std::string_view name) {
  // card0, card10; not connectors (card0-DP-1) nor render nodes.
  return name.starts_with("card") && text::parse_name_number(name.substr(4)).has_value();
}

// Returns how many DRM cards of any driver there are.
std::size_t find_amdgpu_cards(const System& sys, std::vector<DrmCard>& cards, std::vector<DanglingCard>& dangling) {
  std::vector<std::string> names;
  for (auto& n : list_names(sys, drm_class))
    if (is_card_name(n)) names.push_back(std::move(n));
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) { return natural_less(a, b); });
  for (auto& name : names) {
    const std::string device_dir = text::cat(drm_class, "/", name, "/device");
    std::optional<std::string> driver;
    if (const auto link = sys.read_link(device_dir + "/driver")) driver = std::string(base_name(*link));
    Uevent uevent;
    if (!driver) {
      uevent = read_uevent(sys, device_dir + "/uevent");
      driver = uevent.driver;
    }
    if (driver && *driver != "amdgpu") continue;
    const auto device_link = sys.read_link(device_dir);
    if (!driver) {
      if (device_link && !sys.exists(device_dir))
        dangling.push_back({name, *device_link, PciAddress::parse(base_name(*device_link))});
      continue;
    }
    DrmCard card{name, device_dir, std::nullopt};
    // The device link ends in the PCI address; partition (amdgpu_xcp) cards
    // end in a platform device name and are covered by the KFD nodes.
    if (device_link) card.address = PciAddress::parse(base_name(*device_link));
    if (!card.address) card.address = uevent.driver ? uevent.slot : read_uevent(sys, device_dir + "/uevent").slot;
    if (!card.address) continue;
    cards.push_back(std::move(card));
  }
  return names.size();
}

// The render minor of a card (device/drm/renderD128 -> 128).
std::optional<std::uint64_t> render_minor_of(const System& sys, const DrmCard& card) {
  for (const auto& n : list_names(sys, card.device_dir + "/drm"))
    if (n.starts_with("renderD"))
      if (const auto minor = text::parse_name_number(std::string_view(n).substr(7))) return minor;
  return std::nullopt;
}

// --- boards: a card and/or its KFD nodes -------------------------------------------

struct Board {
  std::optional<std::size_t> card;     ///< into the amdgpu cards
  std::vector<const KfdNode*> nodes;   ///< KFD GPU nodes, in partition order
  std::optional<std::size_t> dangling; ///< a card whose device link dangles
};

// The board address KFD implies: partitions OR their number into the
// function bits, so a partitioned board is function 0 of its first node.
std::optional<PciAddress> kfd_board_address(const Board& b) {
  if (b.nodes.empty() || !b.nodes.front()->address) return std::nullopt;
  PciAddress a = *b.nodes.front()->address;
  if (b.nodes.size() > 1) a.function = 0;
  return a;
}

bool same_slot(const PciAddress& a, const PciAddress& b, bool compare_domain) {
  return (!compare_domain || a.domain == b.domain) && a.bus == b.bus && a.device == b.device;
}

// Does KFD board `b` sit at PCI address `addr`? Old kernels print no domain.
bool board_at(const Board& b, const PciAddress& addr) {
  for (const KfdNode* n : b.nodes) {
    if (!n->address) continue;
    const bool with_domain = n->properties.domain.has_value();
    if (!same_slot(*n->address, addr, with_domain)) continue;
    if (b.nodes.size() > 1 || n->address->function == addr.function) return true;
  }
  return false;
}

// Groups KFD GPU nodes into boards: partitions of one board share unique_id
// and their PCI slot (bus and device; the function bits number the
// partition). Without a unique_id the slot alone groups them, when KFD
// names the PCI domain.
std::vector<Board> kfd_boards(const parsers::KfdTopology& topo) {
  std::vector<Board> boards;
  std::map<std::tuple<std::uint64_t, std::uint32_t, std::uint8_t, std::uint8_t>, std::size_t> by_key;
  for (const KfdNode& n : topo.nodes) {
    if (!n.properties.is_gpu()) continue;
    const std::uint64_t unique = n.properties.unique_id.value_or(0);
    if (n.address && (unique != 0 || n.properties.domain)) {
      const auto key = std::make_tuple(unique, n.address->domain, n.address->bus, n.address->device);
      if (const auto it = by_key.find(key); it != by_key.end()) {
        boards[it->second].nodes.push_back(&n);
        continue;
      }
      by_key.emplace(key, boards.size());
    }
    boards.push_back(Board{std::nullopt, {&n}, std::nullopt});
  }
  for (auto& b : boards)
    std::sort(b.nodes.begin(), b.nodes.end(), [](const KfdNode* x, const KfdNode* y) {
      if (x->address && y->address && *x->address != *y->address) return *x->address < *y->address;
      return x->id < y->id;
    });
  return boards;
}

// --- per-device facts --------------------------------------------------------------

std::optional<std::uint32_t> node_compute_units(const KfdNode& n) {
  const auto simds = n.properties.simd_count, per_cu = n.properties.simd_per_cu;
  if (!simds || !per_cu || *per_cu == 0 || *simds % *per_cu != 0 || *simds / *per_cu > 100000) return std::nullopt;
  return static_cast<std::uint32_t>(*simds / *per_cu);
}

// The PCI path of a function: ["pci0000:00", "0000:00:01.1", ..., "0000:03:00.0"],
// from the /sys/bus/pci/devices link; empty when sysfs does not say.
std::vector<std::string> pci_chain(const System& sys, const PciAddress& address) {
  const std::string self = address.to_string();
  const auto target = sys.read_link("/sys/bus/pci/devices/" + self);
  if (!target) return {};
  std::vector<std::string> chain;
  std::string_view rest = *target;
  while (!rest.empty()) {
    const std::string_view part = text::next_token(rest, '/');
    if (chain.empty() && !(part.size() > 3 && part.starts_with("pci") && part[3] >= '0' && part[3] <= '9')) continue;
    chain.emplace_back(part);
  }
  if (chain.empty() || chain.back() != self) return {};
  return chain;
}

bool is_bridge(const PciFunction& f) { return f.class_code && (*f.class_code >> 8) == 0x0604; }

std::string describe_link(const PcieLink& l) {
  std::string s;
  if (l.current_speed_gts) s += text::cat(*l.current_speed_gts, " GT/s");
  if (l.current_width) s += text::cat(s.empty() ? "" : " ", "x", *l.current_width);
  return s;
}

bool has_link(const PcieLink& l) { return l.current_speed_gts || l.current_width || l.max_speed_gts || l.max_width; }

struct Built {
  DeviceProfile device;
  std::vector<std::string> chain;          ///< PCI path, for PCIe link kinds
  std::optional<std::uint64_t> cpu_node;   ///< KFD CPU node of its PCIe link
  std::optional<std::uint64_t> hive_id;
};

class RocmDetection {
 public:
  RocmDetection(const DetectContext& ctx, DetectorOutput& out) : ctx_(ctx), out_(out), sys_(ctx.system()) {}

  void run();

 private:
  Built build(const Board& board, std::uint32_t index);
  void fill_from_card(Built& b, const DrmCard& card, const parsers::AmdProduct* product, bool awake);
  void fill_memory_from_kfd(DeviceProfile& d, const Board& board, bool integrated);
  bool fill_partitions(DeviceProfile& d, const Board& board, const DrmCard* card, const parsers::AmdProduct* product);
  void fill_pcie(Built& b, const PciFunction& pci);
  void fill_sensors(DeviceProfile& d, const DrmCard& card);
  void add_links(std::vector<Built>& built, const std::vector<Board>& boards);

  const DetectContext& ctx_;
  DetectorOutput& out_;
  const System& sys_;
  std::vector<DrmCard> cards_;
  std::vector<DanglingCard> dangling_;
  parsers::KfdTopology topo_;
  std::optional<std::string> driver_version_;
  bool dev_kfd_ = false;
};

void RocmDetection::run() {
  const std::size_t drm_cards = find_amdgpu_cards(sys_, cards_, dangling_);
  // Every KFD GPU is an amdgpu device with a DRM card: KFD is worth a look
  // when amdgpu has cards, or when there are no DRM cards to look at at all
  // (a container or a dump that exposes KFD alone).
  if (!cards_.empty() || !dangling_.empty() || drm_cards == 0) topo_ = parsers::read_kfd_topology(ctx_, out_);
  std::vector<Board> kfd = kfd_boards(topo_);
  if (cards_.empty() && kfd.empty()) {
    // Where sysfs shows the machine and no AMD GPU is in it, there is none.
    // The tools are asked where sysfs cannot tell: no /sys/class/drm (a
    // container without /sys, a pasted capture), or a /dev/kfd without a GPU
    // in sysfs.
    if ((drm_cards == 0 && !sys_.exists("/sys/class/drm")) || sys_.exists("/dev/kfd")) detect_rocm_from_tools(ctx_, out_);
    return;
  }

  // Join each card to its KFD board by PCI address; by render minor when KFD
  // gives no usable address.
  std::vector<Board> boards;
  std::vector<bool> taken(kfd.size(), false);
  for (std::size_t c = 0; c < cards_.size(); ++c) {
    Board board{c, {}, std::nullopt};
    std::optional<std::size_t> match;
    if (cards_[c].address)
      for (std::size_t k = 0; k < kfd.size() && !match; ++k)
        if (!taken[k] && board_at(kfd[k], *cards_[c].address)) match = k;
    if (!match && !kfd.empty())
      if (const auto minor = render_minor_of(sys_, cards_[c]))
        for (std::size_t k = 0; k < kfd.size() && !match; ++k)
          if (!taken[k] && !kfd_board_address(kfd[k]) && kfd[k].nodes.front()->properties.drm_render_minor == *minor)
            match = k;
    if (match) {
      taken[*match] = true;
      board.nodes = std::move(kfd[*match].nodes);
    }
    boards.push_back(std::move(board));
  }
  std::size_t kfd_only = 0;
  for (std::size_t k = 0; k < kfd.size(); ++k) {
    if (taken[k]) continue;
    Board& b = boards.emplace_back(std::move(kfd[k]));
    ++kfd_only;
    const auto addr = kfd_board_address(b);
    for (std::size_t d = 0; d < dangling_.size() && addr; ++d)
      if (dangling_[d].address && *dangling_[d].address == *addr) b.dangling = d;
  }
  if (kfd_only > 0 && cards_.empty())
    ctx_.warn(out_, WarningKind::inconsistent,
              text::cat("/sys/class/drm has no amdgpu card; ", kfd_only, kfd_only == 1 ? " GPU is" : " GPUs are",
                        " reported from the KFD topology alone (no memory use, temperature, power or PCIe link)"));

  driver_version_ = read_text(sys_, "/sys/module/amdgpu/version");
  if (driver_version_ && driver_version_->empty()) driver_version_.reset();
  dev_kfd_ = sys_.exists("/dev/kfd");

  std::vector<Built> built;
  for (std::size_t i = 0; i < boards.size(); ++i) built.push_back(build(boards[i], static_cast<std::uint32_t>(i)));
  add_links(built, boards);
  for (auto& b : built) out_.devices.push_back(std::move(b.device));
}

Built RocmDetection::build(const Board& board, std::uint32_t index) {
  Built b;
  DeviceProfile& d = b.device;
  d.backend = Backend::rocm;
  d.family = Family::gpu;
  d.index = index;
  d.id = device_id(Backend::rocm, index);
  d.vendor = "AMD";
  const DrmCard* card = board.card ? &cards_[*board.card] : nullptr;
  const KfdNode* primary = board.nodes.empty() ? nullptr : board.nodes.front();

  std::optional<PciAddress> address = card ? card->address : kfd_board_address(board);
  if (!card && board.dangling)
    ctx_.warn(out_, WarningKind::io_error,
              text::cat(drm_class, "/", dangling_[*board.dangling].name, "/device links to '",
                        dangling_[*board.dangling].target, "', which does not exist; ", d.id,
                        " is reported from the KFD topology alone"));
  else if (!card && !cards_.empty())
    ctx_.warn(out_, WarningKind::inconsistent,
              text::cat("KFD node ", primary->id, address ? text::cat(" (", address->to_string(), ")") : std::string(),
                        " has no amdgpu card in /sys/class/drm; ", d.id, " is reported from the KFD topology alone"));

  PciFunction pci;
  if (address) {
    d.pci_bus_id = address->to_string();
    pci = read_pci_function(sys_, *address);
    // A snapshot of /sys/class/drm alone, or a container that mounts only
    // that class, has no /sys/bus/pci tree: the card's device folder is the
    // same PCI function.
    if (!pci.vendor_id && !pci.device_id && card) pci = read_pci_function_at(sys_, card->device_dir, *address);
    d.numa_node = pci.numa_node;
    d.cpu_affinity = pci.local_cpulist;
    b.chain = pci_chain(sys_, *address);
  }

  // Identity: PCI ids from sysfs (uevent as fallback), else KFD's decimal ids.
  std::optional<std::uint16_t> pci_device = pci.device_id;
  if (!pci_device && primary && primary->properties.device_id && *primary->properties.device_id <= 0xffff)
    pci_device = static_cast<std::uint16_t>(*primary->properties.device_id);
  std::optional<std::uint8_t> revision;
  if (card)
    if (const auto rev = number_attribute(ctx_, out_, card->device_dir + "/revision", 16); rev && *rev <= 0xff)
      revision = static_cast<std::uint8_t>(*rev);
  const parsers::AmdProduct* product = pci_device ? parsers::amd_product(*pci_device, revision) : nullptr;
  if (pci_device) {
    d.properties["pci_id"] = text::hex_digits(pci.vendor_id.value_or(amd_vendor), 4) + ":" + text::hex_digits(*pci_device, 4);
    if (revision) d.properties["pci_revision"] = "0x" + text::hex_digits(*revision, 2);
  }
  std::optional<std::string> marketing;
  if (card)
    if (auto name = attribute(ctx_, out_, card->device_dir + "/product_name"); name && !name->empty()) {
      marketing = *name;
      d.properties["product_name"] = *name;
    }
  if (product) d.name = std::string(product->name);
  else if (marketing) d.name = *marketing;
  else if (d.properties.contains("pci_id")) d.name = text::cat("AMD GPU [", d.properties["pci_id"], "]");
  else d.name = "AMD GPU";
  d.integrated = product && product->integrated();
  if (product && product->memory == parsers::AmdMemory::unified) d.memory_kind = MemoryKind::unified;
  else if (d.integrated) d.memory_kind = MemoryKind::carve_out;

  // KFD: ISA target, compute units, hive, identity of the board.
  if (primary) {
    const auto& p = primary->properties;
    if (p.gfx_target_version) {
      d.compute_capability = parsers::gfx_target_name(*p.gfx_target_version);
      if (!d.compute_capability)
        ctx_.warn(out_, WarningKind::invalid_value,
                  text::cat("KFD node ", primary->id, ": gfx_target_version ", *p.gfx_target_version,
                            " does not name a gfx target"));
    }
    if (d.compute_capability) {
      const auto arch = parsers::gfx_architecture(*d.compute_capability);
      if (!arch.empty()) d.architecture = std::string(arch);
    }
    std::optional<std::uint32_t> cus = 0;
    std::uint64_t simds = 0, xcc = 0;
    std::vector<std::uint64_t> node_ids, minors;
    for (const KfdNode* n : board.nodes) {
      const auto c = node_compute_units(*n);
      cus = (cus && c) ? std::optional<std::uint32_t>(*cus + *c) : std::nullopt;
      simds += n->properties.simd_count.value_or(0);
      xcc += n->properties.num_xcc.value_or(0);
      node_ids.push_back(n->id);
      if (n->properties.drm_render_minor) minors.push_back(*n->properties.drm_render_minor);
    }
    d.compute_units = cus;
    d.properties["simd_count"] = text::cat(simds);
    if (xcc > 1) d.properties["xcc_count"] = text::cat(xcc);
    if (p.wave_front_size) d.properties["wavefront_size"] = text::cat(*p.wave_front_size);
    if (p.max_engine_clk_fcompute) d.properties["max_engine_clock_mhz"] = text::cat(*p.max_engine_clk_fcompute);
    d.properties["kfd_nodes"] = join_numbers(node_ids);
    if (!minors.empty()) d.properties["drm_render_minors"] = join_numbers(minors);
    if (p.unique_id && *p.unique_id != 0) d.uuid = amd_runtime_uuid(*p.unique_id);
    if (p.hive_id && *p.hive_id != 0) b.hive_id = p.hive_id;
    for (const auto& link : primary->io_links)
      if (link.type == parsers::kfd_link_type_pcie && link.node_to)
        for (const KfdNode& cpu : topo_.nodes)
          if (cpu.id == *link.node_to && !cpu.properties.is_gpu()) b.cpu_node = cpu.id;
  }
  if (product && product->device_id == 0x740c && d.compute_units) {
    // One id for both parts; each GCD has 110 CUs on MI250X, 104 on MI250.
    if (*d.compute_units == 110) d.name = "AMD Instinct MI250X";
    else if (*d.compute_units == 104) d.name = "AMD Instinct MI250";
  }
  if (!d.architecture && product && !product->architecture.empty()) d.architecture = std::string(product->architecture);
  if (card) d.properties["drm_card"] = card->name;

  // Runtime PM: reading a suspended GPU's dynamic attributes wakes it up.
  bool awake = true;
  if (card)
    if (const auto status = attribute(ctx_, out_, card->device_dir + "/power/runtime_status");
        status && (*status == "suspended" || *status == "suspending")) {
      awake = false;
      d.properties["runtime_pm"] = text::cat(*status,
          ": memory use, utilization, temperature and power were not read, so as not to wake the GPU");
    }
  if (card) fill_from_card(b, *card, product, awake);
  // A board with partitions missing from KFD has more memory than they add up to.
  const bool all_partitions = fill_partitions(d, board, card, product);
  if ((!card || !d.memory_bytes) && all_partitions) fill_memory_from_kfd(d, board, d.integrated);
  if (address) fill_pcie(b, pci);
  d.driver_version = driver_version_;

  if (b.hive_id) d.properties["xgmi_hive_id"] = text::cat(*b.hive_id);
  if (!board.nodes.empty())
    d.properties["rocm_compute"] = dev_kfd_ ? "available" : "unavailable: /dev/kfd is missing (not passed to this container?)";
  else if (!topo_.present)
    d.properties["rocm_compute"] = "unavailable: no KFD topology (amdgpu without ROCm compute support)";
  else
    d.properties["rocm_compute"] = "unavailable: the KFD topology has no node for this GPU";
  return b;
}

void RocmDetection::fill_from_card(Built& b, const DrmCard& card, const parsers::AmdProduct* product, bool awake) {
  DeviceProfile& d = b.device;
  const std::string& dir = card.device_dir;
  if (auto vbios = attribute(ctx_, out_, dir + "/vbios_version"); vbios && !vbios->empty()) d.firmware_version = std::move(vbios);

  // The board's serial-derived id: the ROCm UUID when KFD gives none.
  if (const auto uid = attribute(ctx_, out_, dir + "/unique_id"); uid && !uid->empty()) {
    const auto value = text::parse_hex(*uid);
    if (!value) {
      ctx_.warn(out_, WarningKind::parse_error, text::cat(dir, "/unique_id: '", text::excerpt(*uid, 40), "' is not hexadecimal"));
    } else if (*value != 0) {
      std::string uuid = amd_runtime_uuid(*value);
      if (!d.uuid) d.uuid = std::move(uuid);
      else if (*d.uuid != uuid)
        ctx_.warn(out_, WarningKind::inconsistent,
                  text::cat(dir, "/unique_id ", *uid, " differs from the KFD unique_id; ", *d.uuid, " is kept"));
    }
  }

  const auto vram = number_attribute(ctx_, out_, dir + "/mem_info_vram_total");
  const auto gtt = number_attribute(ctx_, out_, dir + "/mem_info_gtt_total");
  if (vram) {
    d.memory_bytes = vram;
    if (awake)
      if (const auto used = number_attribute(ctx_, out_, dir + "/mem_info_vram_used")) {
        if (*used <= *vram) {
          d.memory_used_bytes = used;
          d.memory_free_bytes = *vram - *used;
        } else {
          ctx_.warn(out_, WarningKind::invalid_value,
                    text::cat(dir, "/mem_info_vram_used: ", *used, " exceeds mem_info_vram_total ", *vram, "; ignored"));
        }
      }
  }
  if (d.integrated) {
    d.shared_memory_bytes = gtt;
    if (vram || gtt) {
      const bool unified = product && product->memory == parsers::AmdMemory::unified;
      std::string s = unified ? "HBM shared by the CPU and the GPU (unified memory): " : "";
      if (vram)
        s += text::cat(unified ? "VRAM is the " : "VRAM is a ", human_bytes(*vram),
                       unified ? " reserved for the GPU (mem_info_vram_total)" : " carve-out of system RAM reserved by the firmware (mem_info_vram_total)");
      if (gtt)
        s += text::cat(vram ? "; the GPU can also map up to " : "the GPU can map up to ", human_bytes(*gtt),
                       " of system memory through GTT (mem_info_gtt_total)");
      s += unified ? ". Both are the host's memory: what a workload can use is bounded by the memory the CPU leaves free"
                   : ". Both come out of the host's RAM, which the CPU shares: a workload can use at most carve-out + GTT, "
                     "bounded by the system memory left free";
      d.properties["shared_memory"] = std::move(s);
    }
  } else if (gtt) {
    d.properties["gtt_bytes"] = text::cat(*gtt);
  }

  // Partition-capable parts say how they are split.
  if (const auto mode = attribute(ctx_, out_, dir + "/current_compute_partition"); mode && !mode->empty())
    d.properties["compute_partition"] = *mode;
  if (const auto mode = attribute(ctx_, out_, dir + "/current_memory_partition"); mode && !mode->empty())
    d.properties["memory_partition"] = *mode;

  if (!b.hive_id)
    if (const auto hive = number_attribute(ctx_, out_, dir + "/xgmi_hive_info/xgmi_hive_id"); hive && *hive != 0)
      b.hive_id = hive;

  if (awake) fill_sensors(d, card);
}

void RocmDetection::fill_memory_from_kfd(DeviceProfile& d, const Board& board, bool integrated) {
  if (board.nodes.empty()) return;
  // KFD's local_mem_size is 0 on MI300-class nodes; the memory banks hold the
  // size. A partitioned board's memory is the sum of its partitions'.
  std::optional<std::uint64_t> total = 0;
  for (const KfdNode* n : board.nodes) {
    auto bytes = integrated ? n->bank_bytes() : n->frame_buffer_bytes();
    if (!bytes && n->properties.local_mem_size && *n->properties.local_mem_size > 0 && !integrated)
      bytes = n->properties.local_mem_size;
    total = (total && bytes) ? std::optional<std::uint64_t>(*total + *bytes) : std::nullopt;
  }
  if (!total || *total == 0) return;
  if (integrated) {
    if (d.shared_memory_bytes) return;
    d.shared_memory_bytes = total;
    d.properties["shared_memory"] = text::cat(
        "the KFD memory bank: ", human_bytes(*total),
        " of system RAM the GPU maps through GTT, shared with the CPU and bounded by the system memory left free "
        "(the VRAM carve-out is not known without the DRM sysfs)");
  } else {
    d.memory_bytes = total;
    d.properties["memory_source"] = "kfd mem_banks";
  }
}

// Reports the compute partitions of a board; false when KFD lists fewer than
// its partition mode makes.
bool RocmDetection::fill_partitions(DeviceProfile& d, const Board& board, const DrmCard* card,
                                    const parsers::AmdProduct* product) {
  const std::size_t count = board.nodes.size();
  const std::uint32_t xcds = product ? product->xcd_count : 0;
  std::optional<std::uint64_t> xcc_each = count > 0 ? board.nodes.front()->properties.num_xcc : std::nullopt;
  for (const KfdNode* n : board.nodes)
    if (n->properties.num_xcc != xcc_each) xcc_each.reset();

  std::string mode;
  if (const auto it = d.properties.find("compute_partition"); it != d.properties.end()) {
    mode = it->second;
    if (!parsers::partitions_in_mode(mode, std::max<std::uint32_t>(xcds, 1))) {
      ctx_.warn(out_, WarningKind::parse_error,
                text::cat(card ? card->device_dir : std::string("device"), "/current_compute_partition: '",
                          text::excerpt(mode, 20), "' is not a compute partition mode"));
      d.properties.erase(it);
      mode.clear();
    } else {
      d.properties["compute_partition_source"] = "current_compute_partition";
    }
  }
  if (const auto it = d.properties.find("memory_partition");
      it != d.properties.end() && !(it->second.starts_with("NPS") && text::parse_u64(std::string_view(it->second).substr(3)))) {
    ctx_.warn(out_, WarningKind::parse_error,
              text::cat(card ? card->device_dir : std::string("device"), "/current_memory_partition: '",
                        text::excerpt(it->second, 20), "' is not a memory partition mode"));
    d.properties.erase(it);
  }

  // Without the sysfs file the mode follows from the dies per KFD node.
  std::optional<std::uint32_t> expected;
  if (mode.empty() && count > 0 && xcc_each && *xcc_each > 0 && (xcds > 0 || count > 1)) {
    if (*xcc_each == 1 && count > 1) mode = "CPX";
    else if (xcds > 0 && xcds % *xcc_each == 0) {
      switch (xcds / *xcc_each) {
        case 1: mode = "SPX"; break;
        case 2: mode = "DPX"; break;
        case 3: mode = "TPX"; break;
        case 4: mode = "QPX"; break;
        default: break;
      }
    }
    if (!mode.empty()) {
      d.properties["compute_partition"] = mode;
      d.properties["compute_partition_source"] =
          text::cat("inferred from the KFD topology (", count, count == 1 ? " node of " : " nodes of ", *xcc_each,
                    *xcc_each == 1 ? " XCC)" : " XCCs)");
    }
  }
  if (!mode.empty()) expected = parsers::partitions_in_mode(mode, xcds);
  const bool complete = !(expected && count > 0 && count != *expected);
  if (!complete)
    ctx_.warn(out_, WarningKind::inconsistent,
              text::cat(d.id, " (", d.pci_bus_id.value_or("no PCI address"), ") is in ", mode, " mode, which makes ",
                        *expected, " partitions, but the KFD topology lists ", count,
                        "; the partitions it lists are reported"));
  if (count < 2) return complete;
  std::set<std::uint32_t> numbers;
  for (std::size_t i = 0; i < count; ++i) {
    const KfdNode& n = *board.nodes[i];
    DevicePartition part;
    // The partition number is in the address's function bits; a missing
    // partition leaves its number unused.
    part.index = n.address ? n.address->function : static_cast<std::uint32_t>(i);
    if (!numbers.insert(part.index).second) {
      // Two KFD nodes at one PCI function (a damaged or hand-made topology):
      // the first is kept, so that partition ids stay unique.
      ctx_.warn(out_, WarningKind::inconsistent,
                text::cat("KFD node ", n.id, " is a second partition numbered ", part.index, " of ", d.id,
                          "; it is left out"));
      continue;
    }
    part.id = text::cat(d.id, "/partition:", part.index);
    part.profile = mode;
    part.memory_bytes = d.integrated ? std::nullopt : n.frame_buffer_bytes();
    part.compute_units = node_compute_units(n);
    d.partitions.push_back(std::move(part));
  }
  return complete;
}

void RocmDetection::fill_pcie(Built& b, const PciFunction& pci) {
  DeviceProfile& d = b.device;
  if (!has_link(pci.link)) return;
  if (d.integrated) {
    d.properties["pcie_link"] = text::cat(describe_link(pci.link),
                                          " on the on-die fabric of an integrated GPU; not a slot link, so not reported as one");
    return;
  }
  // AMD boards put the GPU behind a PCIe switch of their own: the GPU
  // function's link is internal, the slot link is on the switch's upstream
  // port (the top AMD bridge above the GPU).
  std::optional<PciFunction> upstream;
  for (std::size_t i = b.chain.size(); i-- > 1;) {
    if (i + 1 == b.chain.size()) continue;  // the GPU itself
    const auto addr = PciAddress::parse(b.chain[i]);
    if (!addr) break;
    PciFunction f = read_pci_function(sys_, *addr);
    if (f.vendor_id != amd_vendor || !is_bridge(f)) break;
    upstream = std::move(f);
  }
  if (upstream && has_link(upstream->link)) {
    d.pcie = upstream->link;
    d.properties["pcie_link"] = text::cat("slot link of the card's PCIe switch upstream port ", upstream->address.to_string(),
                                          "; the GPU function's own link (", describe_link(pci.link), ") is internal to the card");
  } else {
    d.pcie = pci.link;
  }
}

void RocmDetection::fill_sensors(DeviceProfile& d, const DrmCard& card) {
  const std::string& dir = card.device_dir;
  if (const auto busy = number_attribute(ctx_, out_, dir + "/gpu_busy_percent")) {
    if (*busy <= 100) d.utilization_percent = static_cast<double>(*busy);
    else ctx_.warn(out_, WarningKind::invalid_value, text::cat(dir, "/gpu_busy_percent: ", *busy, " is not a percentage; ignored"));
  }
  std::vector<std::string> hwmons;
  for (auto& n : list_names(sys_, dir + "/hwmon"))
    if (n.starts_with("hwmon")) hwmons.push_back(std::move(n));
  if (hwmons.empty()) return;
  std::sort(hwmons.begin(), hwmons.end(), [](const std::string& a, const std::string& b) { return natural_less(a, b); });
  const std::string hw = text::cat(dir, "/hwmon/", hwmons.front());

  // Edge temperature where the board has it (Radeon, MI200); MI300 parts
  // report only junction and memory.
  std::optional<double> edge, junction, first;
  for (int i = 1; i <= 3; ++i) {
    const auto value = signed_attribute(ctx_, out_, text::cat(hw, "/temp", i, "_input"));
    if (!value) continue;
    const double c = static_cast<double>(*value) / 1000.0;
    if (c < -100 || c > 250) {
      ctx_.warn(out_, WarningKind::invalid_value, text::cat(hw, "/temp", i, "_input: ", *value, " m°C is implausible; ignored"));
      continue;
    }
    const auto label = read_text(sys_, text::cat(hw, "/temp", i, "_label"));
    if (!first) first = c;
    if (label == "edge") edge = c;
    else if (label == "junction") junction = c;
  }
  if (edge) {
    d.temperature_c = edge;
    d.properties["temperature_sensor"] = "edge";
  } else if (junction) {
    d.temperature_c = junction;
    d.properties["temperature_sensor"] = "junction";
  } else {
    d.temperature_c = first;
  }
  // Microwatts. power1_average is the smoothed board power; newer kernels
  // (and MI300) offer power1_input instead.
  auto power = number_attribute(ctx_, out_, hw + "/power1_average");
  if (!power) power = number_attribute(ctx_, out_, hw + "/power1_input");
  if (power) {
    if (*power < 10'000'000'000ull) d.power_watts = static_cast<double>(*power) / 1e6;
    else ctx_.warn(out_, WarningKind::invalid_value, text::cat(hw, ": power ", *power, " µW is implausible; ignored"));
  }
  if (const auto cap = number_attribute(ctx_, out_, hw + "/power1_cap"); cap && *cap > 0 && *cap < 10'000'000'000ull)
    d.power_limit_watts = static_cast<double>(*cap) / 1e6;
}

// The kind of a PCIe path between two boards from their PCI paths, else from
// NUMA nodes (sysfs, then the CPU node KFD links them to).
std::optional<LinkKind> pcie_kind(const Built& a, const Built& b, std::string& source) {
  if (!a.chain.empty() && !b.chain.empty()) {
    std::size_t common = 0;
    while (common < a.chain.size() - 1 && common < b.chain.size() - 1 && a.chain[common] == b.chain[common]) ++common;
    source = "sysfs PCI topology";
    if (common >= 2) return LinkKind::pcie_switch;  // a bridge below the root complex in common
    if (common == 1) return LinkKind::host_bridge;
  }
  if (a.device.numa_node && b.device.numa_node) {
    source = "sysfs numa_node";
    return *a.device.numa_node == *b.device.numa_node ? LinkKind::numa_node : LinkKind::system;
  }
  if (a.cpu_node && b.cpu_node) {
    source = "kfd io_links";
    return *a.cpu_node == *b.cpu_node ? LinkKind::numa_node : LinkKind::system;
  }
  return std::nullopt;
}

void RocmDetection::add_links(std::vector<Built>& built, const std::vector<Board>& boards) {
  std::map<std::uint32_t, std::size_t> board_of_node;
  for (std::size_t i = 0; i < boards.size(); ++i)
    for (const KfdNode* n : boards[i].nodes) board_of_node[n->id] = i;

  struct PairInfo {
    std::optional<std::uint32_t> hops;
    std::optional<std::uint64_t> bandwidth_mbps;
  };
  std::map<std::pair<std::size_t, std::size_t>, PairInfo> xgmi;
  for (std::size_t i = 0; i < boards.size(); ++i)
    for (const KfdNode* n : boards[i].nodes)
      for (const auto& link : n->io_links) {
        if (link.type != parsers::kfd_link_type_xgmi || !link.node_to) continue;
        const auto it = board_of_node.find(static_cast<std::uint32_t>(std::min<std::uint64_t>(*link.node_to, 0xffffffffu)));
        if (it == board_of_node.end() || it->second == i) continue;  // a CPU, or a sibling partition
        PairInfo& info = xgmi[{std::min(i, it->second), std::max(i, it->second)}];
        if (link.weight)
          if (const auto hops = parsers::xgmi_hops_from_weight(*link.weight); hops && (!info.hops || *hops < *info.hops))
            info.hops = hops;
        if (link.max_bandwidth_mbps && *link.max_bandwidth_mbps > 0)
          info.bandwidth_mbps = std::max(info.bandwidth_mbps.value_or(0), *link.max_bandwidth_mbps);
      }

  std::vector<std::optional<double>> xgmi_total(built.size(), 0.0);
  std::vector<bool> has_xgmi(built.size(), false);
  for (const auto& [pair, info] : xgmi) {
    DeviceLink l;
    l.a = built[pair.first].device.id;
    l.b = built[pair.second].device.id;
    l.kind = LinkKind::xgmi;
    l.hops = info.hops;
    if (info.bandwidth_mbps) l.bandwidth_gbps = static_cast<double>(*info.bandwidth_mbps) / 1000.0;
    l.source = "kfd io_links";
    for (const std::size_t side : {pair.first, pair.second}) {
      has_xgmi[side] = true;
      auto& total = xgmi_total[side];
      total = (total && l.bandwidth_gbps) ? std::optional<double>(*total + *l.bandwidth_gbps) : std::nullopt;
    }
    out_.links.push_back(std::move(l));
  }

  // PCIe paths between discrete boards that xGMI does not join.
  for (std::size_t i = 0; i < built.size(); ++i)
    for (std::size_t j = i + 1; j < built.size(); ++j) {
      if (built[i].device.integrated || built[j].device.integrated || xgmi.contains({i, j})) continue;
      std::string source;
      const auto kind = pcie_kind(built[i], built[j], source);
      if (!kind) continue;
      DeviceLink l;
      l.a = built[i].device.id;
      l.b = built[j].device.id;
      l.kind = *kind;
      l.source = std::move(source);
      out_.links.push_back(std::move(l));
    }

  // Hives: boards sharing a KFD (or amdgpu) hive id.
  std::map<std::uint64_t, std::vector<std::size_t>> hives;
  for (std::size_t i = 0; i < built.size(); ++i)
    if (built[i].hive_id) hives[*built[i].hive_id].push_back(i);
  for (const auto& [hive, members] : hives) {
    if (members.size() < 2) continue;
    Interconnect ic;
    ic.kind = "xgmi_hive";
    ic.name = text::cat("xGMI hive ", hive);
    ic.source = "kfd hive_id";
    std::optional<double> per_device;
    bool known = true;
    for (const std::size_t m : members) {
      ic.device_ids.push_back(built[m].device.id);
      if (!has_xgmi[m] || !xgmi_total[m]) known = false;
      else per_device = per_device ? std::min(*per_device, *xgmi_total[m]) : *xgmi_total[m];
    }
    if (known) ic.bandwidth_gbps = per_device;
    out_.interconnects.push_back(std::move(ic));
  }
}

DetectorOutput detect_rocm(const DetectContext& ctx) {
  DetectorOutput out;
  RocmDetection(ctx, out).run();
  return out;
}

}  // namespace

std::string amd_runtime_uuid(std::uint64_t unique_id) { return "GPU-" + text::hex_digits(unique_id, 16); }

constexpr std::array<std::string_view, 2> rocm_tools = {"rocm-smi", "rocminfo"};

constexpr std::string_view rocm_drivers[] = {"amdgpu"};
// 0x1022 is AMD's other vendor id, which some of its APUs' functions carry.
constexpr PciKind rocm_pci[] = {{0x1002, 0x0300, "AMD GPU"},
                                {0x1002, 0x0302, "AMD GPU"},
                                {0x1002, 0x0380, "AMD GPU"},
                                {0x1002, 0x1200, "AMD Instinct accelerator"},
                                {0x1022, 0, {}}};
constexpr std::string_view rocm_nodes[] = {"kfd"};
constexpr VisibilityVariable rocm_visibility[] = {
    {"HIP_VISIBLE_DEVICES", VisibilityVariable::Role::selects},
    {"ROCR_VISIBLE_DEVICES", VisibilityVariable::Role::selects},
    {"GPU_DEVICE_ORDINAL", VisibilityVariable::Role::other},
};
constexpr std::string_view rocm_runtimes[] = {"vllm", "sglang", "llama.cpp"};
// HIP's list renumbers within ROCR's, and HIP also reads the CUDA one.
constexpr std::string_view rocm_lease_clears[] = {"HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL"};
constexpr ToolPackage rocm_packages[] = {{"rocm-smi", "rocm-smi-lib (ROCm)"}};

std::vector<std::string> rocm_device_nodes(const System& system, const PciAddress& address) {
  std::vector<std::string> nodes{"/dev/kfd"};
  for (auto& node : render_nodes_of(system, address)) nodes.push_back(std::move(node));
  return nodes;
}

const Detector rocm_detector{
    .name = "rocm",
    .backend = Backend::rocm,
    .tools = rocm_tools,
    .detect = &detect_rocm,
    .facts = {.drivers = rocm_drivers,
              .pci = rocm_pci,
              .device_nodes = rocm_nodes,
              .driver_remedy = "load amdgpu (sudo modprobe amdgpu), or install the amdgpu-dkms package of ROCm",
              .vendor = "AMD",
              .visibility_variables = rocm_visibility,
              // Below HIP, so that every runtime on ROCm (HIP, OpenCL, HSA) obeys it.
              .lease_variable = "ROCR_VISIBLE_DEVICES",
              .lease_clears = rocm_lease_clears,
              .runtimes = rocm_runtimes,
              .container_remedy = "start the container with --device /dev/kfd --device /dev/dri (in Kubernetes, request amd.com/gpu)",
              .tool_packages = rocm_packages,
              .device_nodes_of = &rocm_device_nodes,
              .telemetry = "amdgpu sysfs and hwmon (rocm-smi -a --json where sysfs has nothing)",
              .merges_with_vulkan = true},
};

}  // namespace hwaccel
