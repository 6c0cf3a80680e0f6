// Placement: many models' replicas onto a fleet's free devices, fewest nodes.
module;
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <span>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>
module hwaccel.place;

#define HWACCEL_PACKING_NO_STD_INCLUDES
#include "packing.hpp"

namespace hwaccel {
namespace {

// Nodes alike in what a replica needs: the same accelerators in the same domains.
struct Kind {
  std::string label;  // node_kind()
  const AcceleratorRegistry* sample = nullptr;
  std::vector<std::vector<std::string>> domains;  // of the sample
  std::uint32_t nodes = 0;
};

// One node of the fleet as the packer sees it, with its free device ids.
struct Bin {
  const FleetNode* node = nullptr;
  std::uint32_t kind = 0;
  std::vector<std::vector<std::string>> free_ids;  // per domain
  std::vector<std::string> all_ids;               // every accelerator, for whole-node replicas
};

// How a workload's replica runs on nodes of one kind.
struct Fit {
  packing::Option option;
  QuantizationLevel level = QuantizationLevel::bf16;
  std::uint32_t tp = 1, pp = 1;
  std::uint64_t bytes_per_device = 0;
  std::optional<double> watts;  // the replica's devices, decoding (Plan::power)
};

struct WorkloadFits {
  std::vector<Fit> fits;  // one per kind it fits, in kind order
  std::string reason;     // why it fits no kind
};

std::uint64_t largest_shard(const Plan& plan) {
  std::uint64_t most = 0;
  for (const auto& s : plan.shards)
    if (s.replica == 0) most = std::max(most, s.total_bytes);
  return most;
}

Fit fit_of(const Plan& plan, packing::Option option) {
  Fit fit;
  fit.option = option;
  fit.level = plan.quantization;
  fit.tp = plan.strategy.tensor_parallel;
  fit.pp = plan.strategy.pipeline_parallel;
  fit.bytes_per_device = largest_shard(plan);
  if (plan.power) fit.watts = plan.power->watts / std::max<std::uint32_t>(plan.strategy.data_parallel, 1);
  return fit;
}

std::string gib_text(std::uint64_t bytes) {
  return text::cat(std::round(static_cast<double>(bytes) / (1024.0 * 1024 * 1024) * 10) / 10, " GiB");
}

InferenceSettings settings_of(const Workload& w, const PlacementOptions& options = {}) {
  InferenceSettings s;
  s.device_specs = options.device_specs;
  s.runtime_profiles = options.runtime_profiles;
  s.context = w.context;
  s.batch = w.batch;
  s.reserve_fraction = w.reserve_fraction;
  s.allow_cpu_offload = false;  // a placed replica lives on its accelerators
  return s;
}

// The fewest devices of one domain, else the fewest whole nodes, of `kind`
// that hold a replica.
Result<std::optional<Fit>> fit_on(const Kind& kind, std::uint32_t kind_index, const ModelDescription& model,
                                  const Workload& w, const PlacementOptions& options, std::string& why) {
  InferenceSettings s = settings_of(w, options);
  if (w.quantization) {
    s.quantization = w.quantization;
  } else {
    auto level = suggest_quantization(*kind.sample, model, s);
    s.quantization = level ? *level : QuantizationLevel::bf16;
  }
  std::size_t largest = 0;
  for (const auto& d : kind.domains) largest = std::max(largest, d.size());
  const std::vector<std::string>* widest = nullptr;
  for (const auto& d : kind.domains)
    if (d.size() == largest) {
      widest = &d;
      break;
    }
  std::optional<Plan> last;
  if (widest) {
    std::vector<std::size_t> sizes;
    for (std::size_t t = 1; t <= largest; t *= 2) sizes.push_back(t);
    for (const auto& d : kind.domains) sizes.push_back(d.size());
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    for (const std::size_t t : sizes) {
      const std::span<const std::string> keep(widest->data(), t);
      const AcceleratorRegistry group = kind.sample->what_if_remove_if([&](const DeviceProfile& d) {
        return d.family != Family::cpu && std::find(keep.begin(), keep.end(), d.id) == keep.end();
      });
      auto plan = plan_inference(group, model, s);
      if (!plan) return fail(plan.error());
      if (plan->fits && plan->strategy.cpu_offload_layers == 0)
        return std::optional<Fit>(fit_of(*plan, packing::Option{kind_index, static_cast<std::uint32_t>(t), 0}));
      last = std::move(*plan);
    }
  }
  // Whole nodes (a pipeline over a node's domains, then over several
  // nodes), up to as many as the fleet has of the kind.
  auto fewest = fewest_nodes(*kind.sample, model, s, kind.nodes, options.fabric);  // else the node's own fabric
  if (!fewest) return fail(fewest.error());
  if (fewest->nodes && fewest->plan.strategy.cpu_offload_layers == 0)
    return std::optional<Fit>(fit_of(fewest->plan, packing::Option{kind_index, 0, *fewest->nodes}));
  last = std::move(fewest->plan);
  why = text::cat(kind.nodes, " node(s) of ", kind.label, " cannot hold it at ", info(*s.quantization).display_name,
                  last ? text::cat(" (a replica needs ", gib_text(last->memory.total_bytes), ")") : std::string());
  return std::optional<Fit>();
}

// Takes back placed replicas, the last placed first, until the fleet and
// each node draw within their budgets; a replica of unknown draw cannot be
// kept under a budget.
void apply_power_budgets(const PlacementOptions& options, PlacementResult& result) {
  if (!options.power_budget_kw && !options.node_power_budget_kw) return;
  const auto kw = [](double watts) { return std::round(watts / 10) / 100; };
  std::map<std::string, double> node_watts;
  double fleet_watts = 0;
  const auto add = [&](const ReplicaPlacement& p, double sign) {
    const double w = p.watts.value_or(0) * sign;
    fleet_watts += w;
    for (const auto& n : p.nodes) node_watts[n] += w / static_cast<double>(p.nodes.size());
  };
  for (const auto& p : result.placed) add(p, 1);
  std::size_t taken_back = 0;
  for (std::size_t i = result.placed.size(); i-- > 0;) {
    const ReplicaPlacement& p = result.placed[i];
    std::string reason;
    if (!p.watts) {
      reason = "power budget: its devices have no power figure (no TDP in the spec table, no enforced cap), so it "
               "cannot be kept within the budget";
    } else if (options.power_budget_kw && fleet_watts > *options.power_budget_kw * 1e3) {
      reason = text::cat("power budget: the fleet's placed replicas would draw ", kw(fleet_watts), " kW of its ",
                         *options.power_budget_kw, " kW; this one draws ", kw(*p.watts), " kW");
    } else if (options.node_power_budget_kw) {
      for (const auto& n : p.nodes)
        if (node_watts[n] > *options.node_power_budget_kw * 1e3) {
          reason = text::cat("power budget: node ", n, "'s placed replicas would draw ", kw(node_watts[n]), " kW of its ",
                             *options.node_power_budget_kw, " kW; this one draws ", kw(*p.watts), " kW");
          break;
        }
    }
    if (reason.empty()) continue;
    add(p, -1);
    result.unplaced.push_back(UnplacedReplica{p.workload, p.replica, std::move(reason)});
    result.placed.erase(result.placed.begin() + static_cast<std::ptrdiff_t>(i));
    ++taken_back;
  }
  std::set<std::string> used;
  for (const auto& p : result.placed) used.insert(p.nodes.begin(), p.nodes.end());
  result.nodes_used = used.size();
  if (taken_back > 0) {
    result.search_complete = false;  // the budget was applied after the search, not inside it
    result.notes.push_back(text::cat("power budget: ", taken_back,
                                     " replica(s) taken back after packing, the last placed first; the placed ones draw ",
                                     kw(fleet_watts), " kW"));
  } else {
    result.notes.push_back(text::cat("power budget: the placed replicas draw ", kw(fleet_watts), " kW, within it"));
  }
}

}  // namespace

Result<PlacementResult> place_workloads(const Fleet& fleet, std::span<const Workload> workloads,
                                        const PlacementOptions& options) {
  PlacementResult result;
  // Kinds and bins.
  std::vector<Kind> kinds;
  std::map<std::string, std::uint32_t> kind_of_key;
  std::vector<Bin> bins;
  std::vector<packing::Node> nodes;
  for (const auto& node : fleet.nodes) {
    if (!node.registry) continue;
    auto domains = options.device_specs ? high_bandwidth_domains(*node.registry, *options.device_specs)
                                        : high_bandwidth_domains(*node.registry);
    if (domains.empty()) continue;
    std::string label = node_kind(*node.registry);
    std::string key = label;
    for (const auto& d : domains) key += text::cat("|", d.size());
    auto [it, fresh] = kind_of_key.try_emplace(key, static_cast<std::uint32_t>(kinds.size()));
    if (fresh) kinds.push_back(Kind{label, &*node.registry, domains, 0});
    ++kinds[it->second].nodes;
    Bin bin;
    bin.node = &node;
    bin.kind = it->second;
    packing::Node packed;
    packed.kind = it->second;
    for (const auto& d : domains) {
      auto& free = bin.free_ids.emplace_back();
      for (const auto& id : d) {
        bin.all_ids.push_back(id);
        if (!options.busy.device_busy(node.host, id)) free.push_back(id);
      }
      packed.free.push_back(static_cast<std::uint32_t>(free.size()));
      packed.devices += static_cast<std::uint32_t>(d.size());
    }
    bins.push_back(std::move(bin));
    nodes.push_back(std::move(packed));
  }
  if (bins.empty()) return fail(ErrorKind::unsupported, "no node of the fleet has an accelerator to place on");

  std::uint64_t replicas = 0;
  for (const auto& w : workloads) replicas += w.replicas;
  if (replicas > 100'000)
    return fail(ErrorKind::invalid_input, text::cat(replicas, " replicas in all, more than 100000"));
  // What each workload needs on each kind.
  std::map<std::string, ModelDescription> models;
  std::vector<WorkloadFits> fits(workloads.size());
  std::vector<packing::Item> items;
  std::vector<std::pair<std::size_t, std::uint32_t>> item_owner;  // workload, replica
  for (std::size_t wi = 0; wi < workloads.size(); ++wi) {
    const Workload& w = workloads[wi];
    auto found = models.find(w.model);
    if (found == models.end()) {
      auto model = load_model(w.model);
      if (!model) return fail(model.error().kind, text::cat("workload '", w.name, "': ", model.error().message));
      found = models.emplace(w.model, std::move(*model)).first;
    }
    if (auto valid = settings_of(w).validate(found->second); !valid)
      return fail(ErrorKind::invalid_input, text::cat("workload '", w.name, "': ", valid.error().message));
    std::vector<std::string> reasons;
    for (std::uint32_t k = 0; k < kinds.size(); ++k) {
      std::string why;
      auto fit = fit_on(kinds[k], k, found->second, w, options, why);
      if (!fit) return fail(fit.error().kind, text::cat("workload '", w.name, "': ", fit.error().message));
      if (*fit) {
        fits[wi].fits.push_back(**fit);
        const Fit& f = **fit;
        result.notes.push_back(text::cat(w.name, " on ", kinds[k].label, ": ",
                                         f.option.devices ? text::cat(f.option.devices, " device(s) of one domain")
                                                          : text::cat(f.option.whole_nodes, " whole nodes"),
                                         ", ", info(f.level).display_name, ", tensor parallel ", f.tp,
                                         f.pp > 1 ? text::cat(" x pipeline parallel ", f.pp) : std::string(), ", up to ",
                                         gib_text(f.bytes_per_device), " per device"));
      } else {
        reasons.push_back(std::move(why));
      }
    }
    for (std::size_t i = 0; i < reasons.size(); ++i) fits[wi].reason += (i ? "; " : "") + reasons[i];
    packing::Item item;
    for (const auto& f : fits[wi].fits) item.options.push_back(f.option);
    for (std::uint32_t r = 0; r < w.replicas; ++r) {
      items.push_back(item);
      item_owner.emplace_back(wi, r);
    }
  }

  packing::Limits limits;
  limits.exact_max_items = options.exact_max_replicas;
  limits.exact_max_nodes = options.exact_max_nodes;
  const packing::Packing packed = packing::pack(nodes, items, limits);
  result.nodes_used = packed.nodes_used;
  result.lower_bound = packed.lower_bound;
  result.method = packed.method == packing::Method::exact ? "exact" : "first-fit decreasing";
  result.search_complete = packed.search_complete;

  // Devices for each placement: the first free ids of the domain it was given.
  std::vector<std::vector<std::size_t>> taken(bins.size());  // per bin, per domain: ids handed out
  for (std::size_t b = 0; b < bins.size(); ++b) taken[b].assign(bins[b].free_ids.size(), 0);
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto [wi, replica] = item_owner[i];
    const Workload& w = workloads[wi];
    const auto& placement = packed.placements[i];
    if (!placement) {
      std::string reason = fits[wi].fits.empty()
                               ? text::cat("fits no node kind of the fleet: ", fits[wi].reason)
                               : std::string("no free devices left where it fits (a high-bandwidth domain with enough "
                                             "free devices, or enough entirely free nodes)");
      result.unplaced.push_back(UnplacedReplica{w.name, replica, std::move(reason)});
      continue;
    }
    const Fit& fit = fits[wi].fits[placement->option];
    ReplicaPlacement out;
    out.workload = w.name;
    out.replica = replica;
    out.quantization = fit.level;
    out.tensor_parallel = fit.tp;
    out.pipeline_parallel = fit.pp;
    out.bytes_per_device = fit.bytes_per_device;
    out.watts = fit.watts;
    for (const auto n : placement->nodes) {
      const Bin& bin = bins[n];
      out.nodes.push_back(bin.node->host);
      if (fit.option.devices > 0) {
        auto& cursor = taken[n][placement->domain];
        const auto& ids = bin.free_ids[placement->domain];
        for (std::uint32_t k = 0; k < fit.option.devices && cursor < ids.size(); ++k)
          out.devices.push_back(text::cat(bin.node->host, "/", ids[cursor++]));
      } else {
        for (const auto& id : bin.all_ids) out.devices.push_back(text::cat(bin.node->host, "/", id));
      }
    }
    result.placed.push_back(std::move(out));
  }
  apply_power_budgets(options, result);
  if (result.lower_bound > 0)
    result.notes.push_back(text::cat(result.nodes_used, " node(s) used, at least ", result.lower_bound,
                                     " needed: ratio ", std::round(static_cast<double>(result.nodes_used) /
                                                                   static_cast<double>(result.lower_bound) * 1000) / 1000));
  return result;
}

}  // namespace hwaccel
