// The packing core of `hwaccel place`: model replicas (items) onto the nodes of
// a fleet (bins), where a replica's tensor-parallel group must stay inside one
// high-bandwidth domain of one node, or takes whole nodes of one kind.
//
// Header-only so that it can be tested without the module build. Included
// right after `module hwaccel.place;`: that unit includes <algorithm>,
// <cstddef>, <cstdint>, <functional>, <numeric>, <optional>, <tuple>,
// <utility> and <vector> in its global module fragment and defines
// HWACCEL_PACKING_NO_STD_INCLUDES, because standard headers may not be
// included inside a module's purview.
#pragma once

#ifndef HWACCEL_PACKING_NO_STD_INCLUDES
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <numeric>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>
#endif

namespace hwaccel::packing {

/// A bin: one node of the fleet.
struct Node {
  /// Index of the node's kind (its hardware: an 8xH100 HGX board, a 4xL40S PCIe box, ...).
  std::uint32_t kind = 0;
  /// Free devices in each of its high-bandwidth domains (an NVLink island is one domain; a GPU without a
  /// peer link is a domain of one).
  std::vector<std::uint32_t> free = {};
  /// All its accelerators, busy or free. The node is "entirely free" when the sum of `free` equals this.
  std::uint32_t devices = 0;
};

/// One way to host a replica on nodes of `kind`. `devices` wins when both counts are set; an option with
/// neither fits nowhere.
struct Option {
  std::uint32_t kind = 0;
  /// > 0: this many devices inside one domain of one node.
  std::uint32_t devices = 0;
  /// > 0 (with devices == 0): this many entirely free nodes of the kind, consumed completely.
  std::uint32_t whole_nodes = 0;

  friend bool operator==(const Option&, const Option&) = default;
};

/// A replica: the ways it can be hosted, typically one per node kind. No options: it fits nowhere.
struct Item {
  std::vector<Option> options = {};

  friend bool operator==(const Item&, const Item&) = default;
};

/// Where one replica went.
struct Placement {
  /// The node hosting a device option; for a whole-node option, the nodes it consumed, ascending.
  std::vector<std::uint32_t> nodes = {};
  /// The domain of `nodes[0]` holding its devices; 0 for a whole-node option.
  std::uint32_t domain = 0;
  /// Devices it took: the option's devices, or the sum of the consumed nodes' devices.
  std::uint32_t devices = 0;
  /// Index into the item's options of the option used.
  std::size_t option = 0;

  friend bool operator==(const Placement&, const Placement&) = default;
};

enum class Method {
  exact,                 ///< branch-and-bound over every placement (optimal when search_complete)
  first_fit_decreasing,  ///< the heuristic; no optimality claim
};

/// When the exact search is attempted, and how long it may run.
struct Limits {
  std::size_t exact_max_items = 12;
  std::size_t exact_max_nodes = 12;
  /// Search nodes (one per item decision) the exact search may visit before it gives up.
  std::uint64_t exact_max_steps = 2'000'000;
};

/// The result of pack().
struct Packing {
  /// Per item, in input order; nullopt = not placed.
  std::vector<std::optional<Placement>> placements = {};
  std::size_t placed = 0;
  /// Nodes hosting at least one placed item.
  std::size_t nodes_used = 0;
  /// A lower bound on the nodes used by ANY packing that places `placed` items (so also by any packing
  /// placing more: the bound grows with the count). Let an item's demand be, over its options that could
  /// fit on the empty fleet, the fewest devices (a whole-node option counts the devices of the smallest
  /// `whole_nodes` entirely free nodes of its kind) and separately the fewest nodes (1, or whole_nodes).
  /// With D the sum of the `placed` smallest device demands among placeable items, the bound is the larger
  /// of: the fewest nodes whose free devices (largest first) add up to D, and the `placed`-th smallest node
  /// demand (one item alone needs that many). 0 when nothing is placed. When every placeable item is placed
  /// it bounds placing every placeable item.
  std::size_t lower_bound = 0;
  /// exact: the branch-and-bound produced this result (optimal iff search_complete);
  /// first_fit_decreasing: the heuristic did, either because the instance exceeded the exact limits or
  /// because the search ran out of steps before beating it.
  Method method = Method::exact;
  /// True when the exact search finished (or met the lower bound), so the result is optimal.
  bool search_complete = false;
  /// Search nodes the exact search visited; 0 when it did not run or the heuristic already met the bound.
  std::uint64_t search_steps = 0;
};

namespace detail {

inline constexpr std::size_t npos = static_cast<std::size_t>(-1);

inline std::uint64_t total_free(const std::vector<std::uint32_t>& free) {
  return std::accumulate(free.begin(), free.end(), std::uint64_t{0});
}

inline std::uint32_t largest_domain(const std::vector<std::uint32_t>& free) {
  return free.empty() ? 0 : *std::max_element(free.begin(), free.end());
}

inline bool entirely_free(const Node& node) { return total_free(node.free) == node.devices; }

/// What every method needs to know about the fleet as given.
struct Fleet {
  /// The distinct node kinds, ascending; a kind's position here is its dense index.
  std::vector<std::uint32_t> kinds = {};
  /// Dense kind of each node.
  std::vector<std::size_t> kind_of = {};
  /// Per dense kind: its entirely free nodes, by (devices, index), the candidates of whole-node options.
  std::vector<std::vector<std::size_t>> entirely_free = {};
  /// Per dense kind: the largest free domain of any of its nodes.
  std::vector<std::uint32_t> largest_domain = {};
  /// Free devices of each node, largest first.
  std::vector<std::uint64_t> capacities = {};

  /// Dense index of `kind`, or npos when no node has it.
  std::size_t dense(std::uint32_t kind) const {
    const auto found = std::lower_bound(kinds.begin(), kinds.end(), kind);
    return found != kinds.end() && *found == kind ? static_cast<std::size_t>(found - kinds.begin()) : npos;
  }
};

inline Fleet describe_fleet(const std::vector<Node>& nodes) {
  Fleet fleet;
  for (const Node& node : nodes) fleet.kinds.push_back(node.kind);
  std::sort(fleet.kinds.begin(), fleet.kinds.end());
  fleet.kinds.erase(std::unique(fleet.kinds.begin(), fleet.kinds.end()), fleet.kinds.end());
  fleet.entirely_free.resize(fleet.kinds.size());
  fleet.largest_domain.assign(fleet.kinds.size(), 0);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const std::size_t kind = fleet.dense(nodes[i].kind);
    fleet.kind_of.push_back(kind);
    fleet.largest_domain[kind] = std::max(fleet.largest_domain[kind], largest_domain(nodes[i].free));
    if (entirely_free(nodes[i])) fleet.entirely_free[kind].push_back(i);
    fleet.capacities.push_back(total_free(nodes[i].free));
  }
  for (auto& candidates : fleet.entirely_free) {
    std::sort(candidates.begin(), candidates.end(), [&](std::size_t a, std::size_t b) {
      return std::pair(nodes[a].devices, a) < std::pair(nodes[b].devices, b);
    });
  }
  std::sort(fleet.capacities.begin(), fleet.capacities.end(), std::greater<>());
  return fleet;
}

/// What an item needs at least, whichever of its options is used; options that cannot fit on the fleet as
/// given are ignored, since free devices only shrink as items are placed.
struct Demand {
  bool placeable = false;
  std::uint64_t devices = 0;
  std::size_t nodes = 0;
};

inline Demand demand_of(const Fleet& fleet, const std::vector<Node>& nodes, const Item& item) {
  Demand demand;
  for (const Option& option : item.options) {
    const std::size_t kind = fleet.dense(option.kind);
    if (kind == npos) continue;
    std::uint64_t devices = 0;
    std::size_t node_count = 0;
    if (option.devices > 0) {
      if (fleet.largest_domain[kind] < option.devices) continue;
      devices = option.devices;
      node_count = 1;
    } else if (option.whole_nodes > 0) {
      const auto& candidates = fleet.entirely_free[kind];
      if (candidates.size() < option.whole_nodes) continue;
      for (std::size_t i = 0; i < option.whole_nodes; ++i) devices += nodes[candidates[i]].devices;
      node_count = option.whole_nodes;
    } else {
      continue;
    }
    demand.devices = demand.placeable ? std::min(demand.devices, devices) : devices;
    demand.nodes = demand.placeable ? std::min(demand.nodes, node_count) : node_count;
    demand.placeable = true;
  }
  return demand;
}

/// The lower bound documented at Packing::lower_bound.
inline std::size_t node_lower_bound(const Fleet& fleet, const std::vector<Demand>& demands, std::size_t placed) {
  std::vector<std::uint64_t> devices;
  std::vector<std::size_t> node_counts;
  for (const Demand& demand : demands) {
    if (!demand.placeable) continue;
    devices.push_back(demand.devices);
    node_counts.push_back(demand.nodes);
  }
  placed = std::min(placed, devices.size());
  if (placed == 0) return 0;
  std::sort(devices.begin(), devices.end());
  std::sort(node_counts.begin(), node_counts.end());
  const std::uint64_t needed = std::accumulate(devices.begin(), devices.begin() + static_cast<std::ptrdiff_t>(placed),
                                               std::uint64_t{0});
  // Any packing of `placed` items uses nodes holding at least `needed` free devices.
  std::size_t covering = 0;
  std::uint64_t covered = 0;
  while (covered < needed && covering < fleet.capacities.size()) covered += fleet.capacities[covering++];
  return std::max(covering, node_counts[placed - 1]);
}

/// Items worth placing, largest demand first: whole-node items (most nodes first), then by devices, both
/// taken as the largest any option asks. Ties keep input order, or, with `group_identical`, put items with
/// equal options next to each other (the exact search breaks symmetry between such neighbours).
inline std::vector<std::size_t> decreasing_order(const std::vector<Item>& items, const std::vector<Demand>& demands,
                                                 bool group_identical) {
  std::vector<std::size_t> order;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> key(items.size(), {0, 0});
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (!demands[i].placeable) continue;
    order.push_back(i);
    for (const Option& option : items[i].options) {
      if (option.devices > 0) {
        key[i].second = std::max(key[i].second, option.devices);
      } else {
        key[i].first = std::max(key[i].first, option.whole_nodes);
      }
    }
  }
  // std::sort with the index as the last key, not std::stable_sort: its temporary buffer is deprecated in
  // the libstdc++ this builds against, which clang reports.
  const auto option_key = [](const Option& o) { return std::tie(o.kind, o.devices, o.whole_nodes); };
  const auto option_less = [&](const Option& x, const Option& y) { return option_key(x) < option_key(y); };
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (key[a] != key[b]) return key[a] > key[b];
    if (group_identical && items[a].options != items[b].options) {
      return std::lexicographical_compare(items[a].options.begin(), items[a].options.end(),
                                          items[b].options.begin(), items[b].options.end(), option_less);
    }
    return a < b;
  });
  return order;
}

/// The domain with the fewest free devices that still holds `devices` (lowest index on ties), or npos.
inline std::size_t best_fit_domain(const std::vector<std::uint32_t>& free, std::uint32_t devices) {
  std::size_t best = npos;
  for (std::size_t domain = 0; domain < free.size(); ++domain) {
    if (free[domain] >= devices && (best == npos || free[domain] < free[best])) best = domain;
  }
  return best;
}

/// A max segment tree over positions, answering "the leftmost position whose value is at least v" in
/// O(log n): how the heuristic finds the first node that fits without scanning them all.
class MaxTree {
 public:
  explicit MaxTree(std::size_t size) : size_(size) {
    while (leaves_ < size) leaves_ *= 2;
    max_.assign(2 * leaves_, 0);
  }

  void set(std::size_t position, std::uint32_t value) {
    std::size_t at = position + leaves_;
    max_[at] = value;
    for (at /= 2; at > 0; at /= 2) max_[at] = std::max(max_[2 * at], max_[2 * at + 1]);
  }

  /// Leftmost position holding at least `value` (> 0), or npos.
  std::size_t first_at_least(std::uint32_t value) const {
    if (value == 0 || max_[1] < value) return npos;
    std::size_t at = 1;
    while (at < leaves_) at = max_[2 * at] >= value ? 2 * at : 2 * at + 1;
    return at - leaves_ < size_ ? at - leaves_ : npos;
  }

 private:
  std::size_t size_ = 0;
  std::size_t leaves_ = 1;
  std::vector<std::uint32_t> max_ = {};
};

/// Positions 0..size-1 that can be taken once each; find(p) is the first not taken at or after p (size when
/// none), in near-constant amortized time (a union-find with path halving).
class NextAvailable {
 public:
  explicit NextAvailable(std::size_t size) : next_(size + 1) { std::iota(next_.begin(), next_.end(), std::size_t{0}); }

  std::size_t find(std::size_t position) {
    while (next_[position] != position) {
      next_[position] = next_[next_[position]];
      position = next_[position];
    }
    return position;
  }

  void take(std::size_t position) { next_[position] = position + 1; }

  std::size_t end() const { return next_.size() - 1; }

 private:
  std::vector<std::size_t> next_ = {};
};

/// A packing without the bookkeeping of Packing.
struct Assignment {
  std::vector<std::optional<Placement>> placements = {};
  std::size_t placed = 0;
  std::size_t nodes_used = 0;
};

/// First-fit decreasing over `order`. An item goes to the first node opened (in opening order) that has a
/// domain fitting one of its device options, into the best-fitting domain of it; failing that it opens the
/// untouched node (or, for whole-node options, the nodes) whose option asks the fewest devices, ties to the
/// node with the fewest free devices, then the lowest index. O(items x options x log nodes + items x domains
/// + nodes log nodes): per kind, segment trees over the opened nodes (in opening order) and over the
/// untouched ones (by free devices, index) find those nodes without a scan.
inline Assignment first_fit_decreasing(const std::vector<Node>& nodes, const std::vector<Item>& items,
                                       const Fleet& fleet, const std::vector<std::size_t>& order) {
  const std::size_t kind_count = fleet.kinds.size();
  Assignment out;
  out.placements.resize(items.size());
  std::vector<std::vector<std::uint32_t>> free;
  free.reserve(nodes.size());
  std::vector<std::uint64_t> initial_free;
  initial_free.reserve(nodes.size());
  for (const Node& node : nodes) {
    free.push_back(node.free);
    initial_free.push_back(total_free(node.free));
  }

  std::vector<std::vector<std::size_t>> untouched(kind_count);
  for (std::size_t node = 0; node < nodes.size(); ++node) untouched[fleet.kind_of[node]].push_back(node);
  std::vector<std::size_t> untouched_position(nodes.size(), npos);
  std::vector<MaxTree> untouched_tree;
  std::vector<MaxTree> opened_tree;
  std::vector<NextAvailable> whole_candidates;
  for (std::size_t kind = 0; kind < kind_count; ++kind) {
    auto& list = untouched[kind];
    std::sort(list.begin(), list.end(), [&](std::size_t a, std::size_t b) {
      return std::pair(initial_free[a], a) < std::pair(initial_free[b], b);
    });
    untouched_tree.emplace_back(list.size());
    opened_tree.emplace_back(list.size());
    whole_candidates.emplace_back(fleet.entirely_free[kind].size());
    for (std::size_t position = 0; position < list.size(); ++position) {
      untouched_position[list[position]] = position;
      untouched_tree[kind].set(position, largest_domain(free[list[position]]));
    }
  }
  std::vector<std::size_t> whole_position(nodes.size(), npos);
  for (std::size_t kind = 0; kind < kind_count; ++kind) {
    for (std::size_t position = 0; position < fleet.entirely_free[kind].size(); ++position) {
      whole_position[fleet.entirely_free[kind][position]] = position;
    }
  }
  std::vector<std::vector<std::size_t>> opened(kind_count);
  std::vector<std::size_t> opened_position(nodes.size(), npos);
  std::vector<std::size_t> open_sequence(nodes.size(), npos);

  const auto open = [&](std::size_t node) {
    const std::size_t kind = fleet.kind_of[node];
    untouched_tree[kind].set(untouched_position[node], 0);
    if (whole_position[node] != npos) whole_candidates[kind].take(whole_position[node]);
    opened_position[node] = opened[kind].size();
    opened[kind].push_back(node);
    opened_tree[kind].set(opened_position[node], largest_domain(free[node]));
    open_sequence[node] = out.nodes_used++;
  };
  const auto put = [&](std::size_t item, std::size_t node, std::size_t option) {
    const std::uint32_t devices = items[item].options[option].devices;
    const std::size_t domain = best_fit_domain(free[node], devices);
    free[node][domain] -= devices;
    opened_tree[fleet.kind_of[node]].set(opened_position[node], largest_domain(free[node]));
    out.placements[item] = Placement{.nodes = {static_cast<std::uint32_t>(node)},
                                     .domain = static_cast<std::uint32_t>(domain),
                                     .devices = devices,
                                     .option = option};
    ++out.placed;
  };

  std::vector<std::size_t> whole;
  std::vector<std::size_t> chosen_whole;
  for (const std::size_t item : order) {
    const auto& options = items[item].options;
    // First fit among the nodes already opened.
    std::size_t host = npos;
    std::size_t host_option = npos;
    for (std::size_t o = 0; o < options.size(); ++o) {
      const std::size_t kind = fleet.dense(options[o].kind);
      if (options[o].devices == 0 || kind == npos) continue;
      const std::size_t position = opened_tree[kind].first_at_least(options[o].devices);
      if (position == npos) continue;
      const std::size_t node = opened[kind][position];
      if (host == npos || open_sequence[node] < open_sequence[host] ||
          (node == host && options[o].devices < options[host_option].devices)) {
        host = node;
        host_option = o;
      }
    }
    if (host != npos) {
      put(item, host, host_option);
      continue;
    }

    // Open the node(s) of the option asking the fewest devices.
    struct Choice {
      std::uint64_t devices = 0;
      std::uint64_t free = 0;
      std::size_t node = 0;
      std::size_t option = 0;
    };
    std::optional<Choice> best;
    for (std::size_t o = 0; o < options.size(); ++o) {
      const std::size_t kind = fleet.dense(options[o].kind);
      if (kind == npos) continue;
      Choice choice{.devices = 0, .free = 0, .node = 0, .option = o};
      if (options[o].devices > 0) {
        const std::size_t position = untouched_tree[kind].first_at_least(options[o].devices);
        if (position == npos) continue;
        choice.node = untouched[kind][position];
        choice.devices = options[o].devices;
        choice.free = initial_free[choice.node];
      } else if (options[o].whole_nodes > 0) {
        whole.clear();
        auto& candidates = whole_candidates[kind];
        for (std::size_t at = candidates.find(0); at < candidates.end() && whole.size() < options[o].whole_nodes;
             at = candidates.find(at + 1)) {
          whole.push_back(fleet.entirely_free[kind][at]);
        }
        if (whole.size() < options[o].whole_nodes) continue;
        for (const std::size_t node : whole) choice.devices += nodes[node].devices;
        choice.free = choice.devices;
        choice.node = *std::min_element(whole.begin(), whole.end());
      } else {
        continue;
      }
      if (!best || std::tie(choice.devices, choice.free, choice.node, choice.option) <
                       std::tie(best->devices, best->free, best->node, best->option)) {
        best = choice;
        chosen_whole = options[o].devices > 0 ? std::vector<std::size_t>{} : whole;
      }
    }
    if (!best) continue;  // nothing left that fits: unplaced
    if (options[best->option].devices > 0) {
      open(best->node);
      put(item, best->node, best->option);
      continue;
    }
    Placement placement{.nodes = {}, .domain = 0, .devices = 0, .option = best->option};
    for (const std::size_t node : chosen_whole) {
      open(node);
      std::fill(free[node].begin(), free[node].end(), 0u);
      opened_tree[fleet.kind_of[node]].set(opened_position[node], 0);
      placement.nodes.push_back(static_cast<std::uint32_t>(node));
      placement.devices += nodes[node].devices;
    }
    std::sort(placement.nodes.begin(), placement.nodes.end());
    out.placements[item] = std::move(placement);
    ++out.placed;
  }
  return out;
}

/// Depth-first branch-and-bound over the items of `order`, each tried on every distinct target, starting
/// from an incumbent (the heuristic's packing) so that pruning bites from the first step.
///
/// Symmetries cut: untouched nodes of equal kind, devices and free vector are interchangeable, so only the
/// first of them is tried (and whole-node options choose how many of each such class, not which); domains
/// of one node with equal free devices are interchangeable, so only the first is tried; of identical items
/// next to each other in `order`, the unplaced ones are the last (if one is unplaced, so are its followers).
class ExactSearch {
 public:
  ExactSearch(const std::vector<Node>& nodes, const std::vector<Item>& items, const Fleet& fleet,
              std::vector<std::size_t> order, const std::vector<Demand>& demands, Assignment incumbent,
              std::size_t node_lower_bound, std::uint64_t max_steps)
      : nodes_(nodes),
        items_(items),
        fleet_(fleet),
        order_(std::move(order)),
        best_(std::move(incumbent)),
        node_lower_bound_(node_lower_bound),
        max_steps_(max_steps) {
    suffix_devices_.assign(order_.size() + 1, 0);
    for (std::size_t depth = order_.size(); depth-- > 0;) {
      suffix_devices_[depth] = suffix_devices_[depth + 1] + demands[order_[depth]].devices;
    }
    largest_capacity_ = fleet_.capacities.empty() ? 0 : fleet_.capacities.front();
    for (std::size_t node = 0; node < nodes_.size(); ++node) {
      std::size_t found = npos;
      for (std::size_t c = 0; c < classes_.size() && found == npos; ++c) {
        const Node& first = nodes_[classes_[c].front()];
        if (fleet_.kind_of[classes_[c].front()] == fleet_.kind_of[node] && first.devices == nodes_[node].devices &&
            first.free == nodes_[node].free) {
          found = c;
        }
      }
      if (found == npos) {
        found = classes_.size();
        classes_.emplace_back();
      }
      classes_[found].push_back(node);
      free_.push_back(nodes_[node].free);
    }
    used_.assign(nodes_.size(), 0);
    current_.resize(items_.size());
  }

  void run() {
    proven_optimal_ = meets_lower_bound();
    descend(0);
  }

  /// The search finished, or met the lower bound: the best packing is optimal.
  bool complete() const { return proven_optimal_ || !aborted_; }
  /// The search found a packing better than the incumbent.
  bool improved() const { return improved_; }
  const Assignment& best() const { return best_; }
  std::uint64_t steps() const { return steps_; }

 private:
  bool meets_lower_bound() const { return best_.placed == order_.size() && best_.nodes_used <= node_lower_bound_; }

  void descend(std::size_t depth) {
    if (aborted_ || proven_optimal_) return;
    if (++steps_ > max_steps_) {
      aborted_ = true;
      return;
    }
    const std::size_t remaining = order_.size() - depth;
    if (placed_ + remaining < best_.placed) return;
    if (placed_ + remaining == best_.placed) {
      // Only by placing every remaining item on fewer nodes than the best can this branch win.
      if (nodes_used_ >= best_.nodes_used) return;
      const std::uint64_t needed = suffix_devices_[depth];
      if (needed > used_free_ && largest_capacity_ > 0) {
        const std::uint64_t extra = (needed - used_free_ + largest_capacity_ - 1) / largest_capacity_;
        if (nodes_used_ + extra >= best_.nodes_used) return;
      }
    }
    if (depth == order_.size()) {
      record();
      return;
    }

    const std::size_t item = order_[depth];
    const auto& options = items_[item].options;
    const bool follows_unplaced_twin =
        depth > 0 && !current_[order_[depth - 1]] && items_[order_[depth - 1]].options == options;
    if (!follows_unplaced_twin) {
      // Nodes already used first: they cost nothing more.
      for (std::size_t o = 0; o < options.size(); ++o) {
        const std::size_t kind = fleet_.dense(options[o].kind);
        if (options[o].devices == 0 || kind == npos || repeats_earlier_option(options, o)) continue;
        for (std::size_t node = 0; node < nodes_.size(); ++node) {
          if (used_[node] && fleet_.kind_of[node] == kind) try_domains(depth, node, o);
        }
      }
      for (std::size_t o = 0; o < options.size(); ++o) {
        const std::size_t kind = fleet_.dense(options[o].kind);
        if (options[o].devices == 0 || kind == npos || repeats_earlier_option(options, o)) continue;
        for (const auto& members : classes_) {
          if (fleet_.kind_of[members.front()] != kind) continue;
          const std::size_t node = first_untouched(members);
          if (node != npos) try_domains(depth, node, o);
        }
      }
      for (std::size_t o = 0; o < options.size(); ++o) {
        const std::size_t kind = fleet_.dense(options[o].kind);
        if (options[o].devices > 0 || options[o].whole_nodes == 0 || kind == npos ||
            repeats_earlier_option(options, o)) {
          continue;
        }
        std::vector<std::size_t> candidate_classes;
        for (std::size_t c = 0; c < classes_.size(); ++c) {
          if (fleet_.kind_of[classes_[c].front()] == kind && entirely_free(nodes_[classes_[c].front()])) {
            candidate_classes.push_back(c);
          }
        }
        std::vector<std::size_t> chosen;
        try_whole(depth, o, candidate_classes, 0, options[o].whole_nodes, chosen);
      }
    }
    descend(depth + 1);  // leave it unplaced
  }

  static bool repeats_earlier_option(const std::vector<Option>& options, std::size_t o) {
    return std::find(options.begin(), options.begin() + static_cast<std::ptrdiff_t>(o), options[o]) !=
           options.begin() + static_cast<std::ptrdiff_t>(o);
  }

  std::size_t first_untouched(const std::vector<std::size_t>& members) const {
    for (const std::size_t node : members) {
      if (!used_[node]) return node;
    }
    return npos;
  }

  /// Tries the item's device option `o` on each domain of `node` with a distinct free count that fits.
  void try_domains(std::size_t depth, std::size_t node, std::size_t o) {
    const std::size_t item = order_[depth];
    const std::uint32_t devices = items_[item].options[o].devices;
    auto& free = free_[node];
    for (std::size_t domain = 0; domain < free.size(); ++domain) {
      if (free[domain] < devices) continue;
      const auto end_of_earlier = free.begin() + static_cast<std::ptrdiff_t>(domain);
      if (std::find(free.begin(), end_of_earlier, free[domain]) != end_of_earlier) continue;
      const bool opens = !used_[node];
      free[domain] -= devices;
      if (opens) {
        used_[node] = 1;
        ++nodes_used_;
        used_free_ += total_free(free);
      } else {
        used_free_ -= devices;
      }
      ++placed_;
      current_[item] = Placement{.nodes = {static_cast<std::uint32_t>(node)},
                                 .domain = static_cast<std::uint32_t>(domain),
                                 .devices = devices,
                                 .option = o};
      descend(depth + 1);
      current_[item].reset();
      --placed_;
      if (opens) {
        used_free_ -= total_free(free);
        --nodes_used_;
        used_[node] = 0;
      } else {
        used_free_ += devices;
      }
      free[domain] += devices;
    }
  }

  /// Chooses how many untouched nodes of each class in `classes` (from `next` on) the whole-node option `o`
  /// takes, `left` still to choose, then tries the choice.
  void try_whole(std::size_t depth, std::size_t o, const std::vector<std::size_t>& classes, std::size_t next,
                 std::size_t left, std::vector<std::size_t>& chosen) {
    if (left == 0) {
      take_whole(depth, o, chosen);
      return;
    }
    if (next == classes.size()) return;
    std::vector<std::size_t> untouched;
    for (const std::size_t node : classes_[classes[next]]) {
      if (!used_[node] && untouched.size() < left) untouched.push_back(node);
    }
    for (std::size_t count = untouched.size() + 1; count-- > 0;) {
      chosen.insert(chosen.end(), untouched.begin(), untouched.begin() + static_cast<std::ptrdiff_t>(count));
      try_whole(depth, o, classes, next + 1, left - count, chosen);
      chosen.resize(chosen.size() - count);
    }
  }

  void take_whole(std::size_t depth, std::size_t o, const std::vector<std::size_t>& chosen) {
    const std::size_t item = order_[depth];
    Placement placement{.nodes = {}, .domain = 0, .devices = 0, .option = o};
    for (const std::size_t node : chosen) {
      used_[node] = 1;
      std::fill(free_[node].begin(), free_[node].end(), 0u);
      placement.nodes.push_back(static_cast<std::uint32_t>(node));
      placement.devices += nodes_[node].devices;
    }
    std::sort(placement.nodes.begin(), placement.nodes.end());
    nodes_used_ += chosen.size();
    ++placed_;
    current_[item] = std::move(placement);
    descend(depth + 1);
    current_[item].reset();
    --placed_;
    nodes_used_ -= chosen.size();
    for (const std::size_t node : chosen) {
      used_[node] = 0;
      free_[node] = nodes_[node].free;  // untouched until now, so its free devices were the given ones
    }
  }

  void record() {
    if (placed_ < best_.placed || (placed_ == best_.placed && nodes_used_ >= best_.nodes_used)) return;
    best_.placements = current_;
    best_.placed = placed_;
    best_.nodes_used = nodes_used_;
    improved_ = true;
    proven_optimal_ = meets_lower_bound();
  }

  const std::vector<Node>& nodes_;
  const std::vector<Item>& items_;
  const Fleet& fleet_;
  std::vector<std::size_t> order_;
  Assignment best_;
  std::size_t node_lower_bound_ = 0;
  std::uint64_t max_steps_ = 0;
  /// Fewest devices the items of order_[depth..] need in all.
  std::vector<std::uint64_t> suffix_devices_ = {};
  std::uint64_t largest_capacity_ = 0;
  /// Nodes with equal kind, devices and free vector, ascending.
  std::vector<std::vector<std::size_t>> classes_ = {};

  // The branch being explored.
  std::vector<std::vector<std::uint32_t>> free_ = {};
  std::vector<char> used_ = {};
  std::vector<std::optional<Placement>> current_ = {};
  std::size_t placed_ = 0;
  std::size_t nodes_used_ = 0;
  /// Free devices left on the used nodes.
  std::uint64_t used_free_ = 0;

  std::uint64_t steps_ = 0;
  bool aborted_ = false;
  bool proven_optimal_ = false;
  bool improved_ = false;
};

}  // namespace detail

/// Places as many of `items` as possible on `nodes`, then on as few nodes as possible (lexicographic).
/// Exact (branch-and-bound, seeded with the heuristic's packing) when there are at most
/// limits.exact_max_items items and limits.exact_max_nodes nodes and the search finishes within
/// limits.exact_max_steps; otherwise the best packing found, which may be the first-fit-decreasing one.
/// Deterministic: equal inputs give equal outputs.
///
/// The heuristic costs O(I x O x log N + I x D + N log N) for I items of O options, N nodes of D domains;
/// the exact search is exponential and bounded by its step limit.
inline Packing pack(const std::vector<Node>& nodes, const std::vector<Item>& items, const Limits& limits = {}) {
  const detail::Fleet fleet = detail::describe_fleet(nodes);
  std::vector<detail::Demand> demands;
  demands.reserve(items.size());
  for (const Item& item : items) demands.push_back(detail::demand_of(fleet, nodes, item));
  const std::size_t placeable = static_cast<std::size_t>(
      std::count_if(demands.begin(), demands.end(), [](const detail::Demand& d) { return d.placeable; }));

  detail::Assignment heuristic =
      detail::first_fit_decreasing(nodes, items, fleet, detail::decreasing_order(items, demands, false));
  Packing packing;
  if (items.size() <= limits.exact_max_items && nodes.size() <= limits.exact_max_nodes) {
    detail::ExactSearch search(nodes, items, fleet, detail::decreasing_order(items, demands, true), demands,
                               std::move(heuristic), detail::node_lower_bound(fleet, demands, placeable),
                               limits.exact_max_steps);
    search.run();
    packing.placements = search.best().placements;
    packing.placed = search.best().placed;
    packing.nodes_used = search.best().nodes_used;
    packing.search_complete = search.complete();
    packing.method = search.complete() || search.improved() ? Method::exact : Method::first_fit_decreasing;
    packing.search_steps = search.steps();
  } else {
    packing.placements = std::move(heuristic.placements);
    packing.placed = heuristic.placed;
    packing.nodes_used = heuristic.nodes_used;
    packing.method = Method::first_fit_decreasing;
  }
  packing.lower_bound = detail::node_lower_bound(fleet, demands, packing.placed);
  return packing;
}

}  // namespace hwaccel::packing
