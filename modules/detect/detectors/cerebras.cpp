// Cerebras backend. CS-2 and CS-3 systems are appliances on the network: they
// have no PCI function, device node or driver on the hosts that submit work to
// them, so no local device is ever reported. Where the cluster client (csctl)
// is installed the registry says why no Cerebras device appears; csctl itself
// is not run, as it would query the remote cluster.
module;
#include <span>
#include <string>
#include <string_view>
module hwaccel.detectors;

namespace hwaccel {
namespace {

DetectorOutput detect_cerebras(const DetectContext& ctx) {
  DetectorOutput out;
  if (const auto csctl = ctx.system().find_tool("csctl"))
    ctx.warn(out, WarningKind::unsupported,
             text::cat("Cerebras cluster client found (", *csctl,
                       "): CS systems are network-attached and not enumerated as local devices"));
  return out;
}

}  // namespace

constexpr std::string_view cerebras_runtimes[] = {"cerebras-pytorch"};
constexpr std::string_view cerebras_tools[] = {"csctl"};

const Detector cerebras_detector{
    .name = "cerebras",
    .backend = Backend::cerebras,
    .tools = cerebras_tools,
    .detect = &detect_cerebras,
    .facts = {.vendor = "Cerebras", .runtimes = cerebras_runtimes},
    // The appliance is on the network: this kernel never shows a trace of it.
    .tools_without_evidence = true,
};

}  // namespace hwaccel
