// The packing core of `hwaccel place`: hand-made cases, the exact search
// against an independent exhaustive reference, and the heuristic at fleet
// scale.
#include <gtest/gtest.h>

#include "../../modules/place/packing.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace hwaccel::packing {
namespace {

/// A node of `domains` domains of `domain_size` devices, all free.
Node node(std::uint32_t kind, std::uint32_t domains, std::uint32_t domain_size) {
  return Node{.kind = kind, .free = std::vector<std::uint32_t>(domains, domain_size), .devices = domains * domain_size};
}

Option on(std::uint32_t kind, std::uint32_t devices) {
  return Option{.kind = kind, .devices = devices, .whole_nodes = 0};
}

Option whole(std::uint32_t kind, std::uint32_t node_count) {
  return Option{.kind = kind, .devices = 0, .whole_nodes = node_count};
}

Item replica(std::vector<Option> options) { return Item{.options = std::move(options)}; }

std::uint64_t sum(const std::vector<std::uint32_t>& values) {
  std::uint64_t total = 0;
  for (const std::uint32_t v : values) total += v;
  return total;
}

/// Replays `packing` on the fleet: every placement must use one of its item's options, on nodes of the
/// option's kind, never take more devices than a domain has free, and take whole nodes only when nothing
/// else touches them and they were entirely free; the counts must match the placements.
::testing::AssertionResult valid(const std::vector<Node>& nodes, const std::vector<Item>& items,
                                 const Packing& packing) {
  if (packing.placements.size() != items.size()) return ::testing::AssertionFailure() << "placements size";
  std::vector<std::vector<std::uint32_t>> free;
  for (const Node& n : nodes) free.push_back(n.free);
  std::vector<bool> touched(nodes.size(), false);
  std::vector<bool> consumed(nodes.size(), false);
  std::size_t placed = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto& p = packing.placements[i];
    if (!p) continue;
    ++placed;
    if (p->option >= items[i].options.size()) return ::testing::AssertionFailure() << "item " << i << ": option";
    const Option& option = items[i].options[p->option];
    if (option.devices > 0) {
      if (p->nodes.size() != 1) return ::testing::AssertionFailure() << "item " << i << ": one node expected";
      const std::size_t n = p->nodes[0];
      if (n >= nodes.size() || nodes[n].kind != option.kind || consumed[n] || p->domain >= free[n].size() ||
          p->devices != option.devices || free[n][p->domain] < option.devices) {
        return ::testing::AssertionFailure() << "item " << i << ": bad device placement on node " << n;
      }
      free[n][p->domain] -= option.devices;
      touched[n] = true;
    } else if (option.whole_nodes > 0) {
      if (p->nodes.size() != option.whole_nodes) return ::testing::AssertionFailure() << "item " << i << ": count";
      std::uint64_t devices = 0;
      for (const std::uint32_t n : p->nodes) {
        if (n >= nodes.size() || nodes[n].kind != option.kind || touched[n] || sum(nodes[n].free) != nodes[n].devices) {
          return ::testing::AssertionFailure() << "item " << i << ": bad whole node " << n;
        }
        touched[n] = true;
        consumed[n] = true;
        devices += nodes[n].devices;
      }
      if (p->devices != devices) return ::testing::AssertionFailure() << "item " << i << ": whole devices";
    } else {
      return ::testing::AssertionFailure() << "item " << i << ": placed with an empty option";
    }
  }
  std::size_t used = 0;
  for (const bool t : touched) used += t ? 1 : 0;
  if (placed != packing.placed) return ::testing::AssertionFailure() << "placed " << packing.placed << " vs " << placed;
  if (used != packing.nodes_used) {
    return ::testing::AssertionFailure() << "nodes_used " << packing.nodes_used << " vs " << used;
  }
  if (packing.lower_bound > packing.nodes_used) return ::testing::AssertionFailure() << "lower bound above result";
  if (packing.placed == 0 && packing.lower_bound != 0) return ::testing::AssertionFailure() << "bound of nothing";
  return ::testing::AssertionSuccess();
}

// --- Hand-made cases -------------------------------------------------------------------------------------------

TEST(Packing, TwoHalfBoardReplicasShareOneNvlinkDomain) {
  const std::vector<Node> nodes = {node(0, 1, 8), node(0, 1, 8)};
  const std::vector<Item> items = {replica({on(0, 4)}), replica({on(0, 4)})};
  const Packing p = pack(nodes, items);
  ASSERT_TRUE(valid(nodes, items, p));
  EXPECT_EQ(p.placed, 2u);
  EXPECT_EQ(p.nodes_used, 1u);
  EXPECT_EQ(p.lower_bound, 1u);
  EXPECT_EQ(p.placements[0]->nodes, p.placements[1]->nodes);
  EXPECT_EQ(p.method, Method::exact);
  EXPECT_TRUE(p.search_complete);
}

TEST(Packing, TwoReplicasOfFiveNeedTwoBoards) {
  const std::vector<Node> nodes = {node(0, 1, 8), node(0, 1, 8), node(0, 1, 8)};
  const std::vector<Item> items = {replica({on(0, 5)}), replica({on(0, 5)})};
  const Packing p = pack(nodes, items);
  ASSERT_TRUE(valid(nodes, items, p));
  EXPECT_EQ(p.placed, 2u);
  EXPECT_EQ(p.nodes_used, 2u);
  EXPECT_NE(p.placements[0]->nodes, p.placements[1]->nodes);
}

TEST(Packing, TensorParallelGroupNeverSpansPcieDomains) {
  const std::vector<Node> pcie = {node(0, 4, 1)};  // 4 GPUs, no NVLink: 4 domains of 1
  const std::vector<Item> pair = {replica({on(0, 2)})};
  const Packing p = pack(pcie, pair);
  ASSERT_TRUE(valid(pcie, pair, p));
  EXPECT_EQ(p.placed, 0u);
  EXPECT_FALSE(p.placements[0].has_value());
  EXPECT_EQ(p.nodes_used, 0u);
  EXPECT_EQ(p.lower_bound, 0u);

  const std::vector<Item> singles(4, replica({on(0, 1)}));
  const Packing q = pack(pcie, singles);
  ASSERT_TRUE(valid(pcie, singles, q));
  EXPECT_EQ(q.placed, 4u);
  EXPECT_EQ(q.nodes_used, 1u);
  std::set<std::uint32_t> domains;
  for (const auto& placement : q.placements) domains.insert(placement->domain);
  EXPECT_EQ(domains.size(), 4u);
}

TEST(Packing, WholeNodeItemsTakeOnlyEntirelyFreeNodes) {
  std::vector<Node> nodes = {node(0, 1, 8), node(0, 1, 8), node(0, 1, 8), node(1, 1, 8)};
  nodes[0].free = {7};  // one device busy
  const std::vector<Item> items = {
      replica({whole(0, 2)}),  // nodes 1 and 2 are the only entirely free nodes of kind 0
      replica({on(0, 7)}),     // fits the busy node's 7 free devices
  };
  const Packing p = pack(nodes, items);
  ASSERT_TRUE(valid(nodes, items, p));
  ASSERT_TRUE(p.placements[0].has_value());
  EXPECT_EQ(p.placements[0]->nodes, (std::vector<std::uint32_t>{1, 2}));
  EXPECT_EQ(p.placements[0]->devices, 16u);
  ASSERT_TRUE(p.placements[1].has_value());
  EXPECT_EQ(p.placements[1]->nodes, (std::vector<std::uint32_t>{0}));
  EXPECT_EQ(p.placed, 2u);
  EXPECT_EQ(p.nodes_used, 3u);
  EXPECT_EQ(p.lower_bound, 3u);  // the whole-node item alone needs 2, and 23 devices need 3 boards

  // Neither a busy node nor one of another kind is taken whole.
  const std::vector<Node> busy = {nodes[0], nodes[3]};
  const std::vector<Item> one_whole = {replica({whole(0, 1)})};
  const Packing q = pack(busy, one_whole);
  ASSERT_TRUE(valid(busy, one_whole, q));
  EXPECT_EQ(q.placed, 0u);

  // A node hosting a replica is no longer entirely free.
  const std::vector<Node> one = {node(0, 2, 4)};
  const std::vector<Item> both = {replica({on(0, 1)}), replica({whole(0, 1)})};
  const Packing r = pack(one, both);
  ASSERT_TRUE(valid(one, both, r));
  EXPECT_EQ(r.placed, 1u);
  const Packing h = pack(one, both, Limits{.exact_max_items = 0, .exact_max_nodes = 0, .exact_max_steps = 0});
  ASSERT_TRUE(valid(one, both, h));
  EXPECT_EQ(h.placed, 1u);
  EXPECT_TRUE(h.placements[1].has_value());  // whole-node items go first
}

TEST(Packing, BusyDevicesAreRespected) {
  std::vector<Node> nodes = {node(0, 2, 4)};
  nodes[0].free = {3, 1};
  const std::vector<Item> items = {replica({on(0, 4)}), replica({on(0, 3)}), replica({on(0, 2)})};
  const Packing p = pack(nodes, items);
  ASSERT_TRUE(valid(nodes, items, p));
  EXPECT_FALSE(p.placements[0].has_value());  // no domain has 4 free
  ASSERT_TRUE(p.placements[1].has_value());
  EXPECT_EQ(p.placements[1]->domain, 0u);
  EXPECT_FALSE(p.placements[2].has_value());  // 0 and 1 free left
  EXPECT_EQ(p.placed, 1u);
}

TEST(Packing, ItemWithoutOptionsIsUnplaced) {
  const std::vector<Node> nodes = {node(0, 1, 8)};
  const std::vector<Item> items = {replica({}), replica({on(0, 8)}), replica({on(5, 1)})};  // kind 5 absent
  const Packing p = pack(nodes, items);
  ASSERT_TRUE(valid(nodes, items, p));
  EXPECT_FALSE(p.placements[0].has_value());
  EXPECT_TRUE(p.placements[1].has_value());
  EXPECT_FALSE(p.placements[2].has_value());
  EXPECT_EQ(p.placed, 1u);
  EXPECT_EQ(p.nodes_used, 1u);
}

TEST(Packing, OptionDependsOnTheNodeKind) {
  // A 70B model: 4 GPUs on an 8xH100 board (kind 0), all 8 on an 8xA100-40GB board (kind 1).
  const std::vector<Node> nodes = {node(1, 1, 8), node(1, 1, 8), node(0, 1, 8)};
  const std::vector<Item> items(3, replica({on(0, 4), on(1, 8)}));
  const Packing p = pack(nodes, items);
  ASSERT_TRUE(valid(nodes, items, p));
  EXPECT_EQ(p.placed, 3u);
  EXPECT_EQ(p.nodes_used, 2u);
  std::size_t on_h100 = 0;
  for (const auto& placement : p.placements) {
    const std::uint32_t kind = nodes[placement->nodes[0]].kind;
    EXPECT_EQ(items[0].options[placement->option].kind, kind);
    on_h100 += kind == 0 ? 1 : 0;
  }
  EXPECT_EQ(on_h100, 2u);

  // The heuristic opens the kind asking the fewest devices first.
  const Packing h = pack(nodes, items, Limits{.exact_max_items = 0, .exact_max_nodes = 0, .exact_max_steps = 0});
  ASSERT_TRUE(valid(nodes, items, h));
  EXPECT_EQ(h.method, Method::first_fit_decreasing);
  EXPECT_FALSE(h.search_complete);
  EXPECT_EQ(h.placements[0]->nodes, (std::vector<std::uint32_t>{2}));
  EXPECT_EQ(h.nodes_used, 2u);
}

TEST(Packing, ExactBeatsFirstFitDecreasing) {
  // 4+3 then 3+2+2 then 2 is three boards by first fit decreasing; 4+2+2 and 3+3+2 is two.
  const std::vector<Node> nodes(3, node(0, 1, 8));
  std::vector<Item> items;
  for (const std::uint32_t devices : {2u, 3u, 4u, 2u, 3u, 2u}) items.push_back(replica({on(0, devices)}));
  const Packing heuristic =
      pack(nodes, items, Limits{.exact_max_items = 0, .exact_max_nodes = 0, .exact_max_steps = 0});
  ASSERT_TRUE(valid(nodes, items, heuristic));
  EXPECT_EQ(heuristic.method, Method::first_fit_decreasing);
  EXPECT_EQ(heuristic.placed, 6u);
  EXPECT_EQ(heuristic.nodes_used, 3u);

  const Packing exact = pack(nodes, items);
  ASSERT_TRUE(valid(nodes, items, exact));
  EXPECT_EQ(exact.method, Method::exact);
  EXPECT_TRUE(exact.search_complete);
  EXPECT_EQ(exact.placed, 6u);
  EXPECT_EQ(exact.nodes_used, 2u);
  EXPECT_EQ(exact.lower_bound, 2u);

  // One step is not enough to improve on the heuristic: its packing is kept and said to be its own.
  const Packing cut = pack(nodes, items, Limits{.exact_max_items = 12, .exact_max_nodes = 12, .exact_max_steps = 1});
  ASSERT_TRUE(valid(nodes, items, cut));
  EXPECT_FALSE(cut.search_complete);
  EXPECT_EQ(cut.method, Method::first_fit_decreasing);
  EXPECT_EQ(cut.nodes_used, 3u);
}

TEST(Packing, ContentionLeavesPlaceableItemsOut) {
  const std::vector<Node> nodes = {node(0, 1, 4), node(0, 1, 4)};
  const std::vector<Item> items(3, replica({on(0, 3)}));
  const Packing p = pack(nodes, items);
  ASSERT_TRUE(valid(nodes, items, p));
  EXPECT_EQ(p.placed, 2u);
  EXPECT_EQ(p.nodes_used, 2u);
  EXPECT_EQ(p.lower_bound, 2u);
  EXPECT_TRUE(p.search_complete);
  EXPECT_FALSE(p.placements[2].has_value());  // identical items: the last ones stay out

  const Packing cut = pack(nodes, items, Limits{.exact_max_items = 12, .exact_max_nodes = 12, .exact_max_steps = 1});
  ASSERT_TRUE(valid(nodes, items, cut));
  EXPECT_FALSE(cut.search_complete);
  EXPECT_EQ(cut.method, Method::first_fit_decreasing);
}

TEST(Packing, EmptyInputs) {
  const Packing nothing = pack({}, {});
  EXPECT_TRUE(nothing.placements.empty());
  EXPECT_EQ(nothing.nodes_used, 0u);
  EXPECT_TRUE(nothing.search_complete);
  const std::vector<Item> items = {replica({on(0, 1)})};
  const Packing no_nodes = pack({}, items);
  ASSERT_TRUE(valid({}, items, no_nodes));
  EXPECT_EQ(no_nodes.placed, 0u);
}

// --- Exactness against an exhaustive reference ------------------------------------------------------------------

/// Uniform in [low, high], the same on every standard library (unlike std::uniform_int_distribution).
std::uint32_t pick(std::mt19937& rng, std::uint32_t low, std::uint32_t high) {
  return low + static_cast<std::uint32_t>(rng() % (high - low + 1));  // mt19937 yields 32 bits in a wider type
}

struct Instance {
  std::vector<Node> nodes;
  std::vector<Item> items;
};

/// Nodes of 1 or 2 kinds (1, 2, 4 or 8 devices in domains of 1, 2, 4 or 8), some with busy devices; items of
/// 1 or 2 options, some whole-node, a few with none or with a kind no node has.
Instance random_small_instance(std::mt19937& rng, std::uint32_t max_items, std::uint32_t max_nodes,
                               std::uint32_t min_items = 0, std::uint32_t min_nodes = 1) {
  struct Shape {
    std::uint32_t domains = 0;
    std::uint32_t domain_size = 0;
  };
  const std::uint32_t kinds = pick(rng, 1, 2);
  std::vector<Shape> shapes;
  for (std::uint32_t k = 0; k < kinds; ++k) {
    const std::uint32_t devices = 1u << pick(rng, 0, 3);
    const std::uint32_t domain_size = 1u << pick(rng, 0, 3);
    const std::uint32_t size = domain_size <= devices ? domain_size : devices;
    shapes.push_back(Shape{.domains = devices / size, .domain_size = size});
  }
  Instance instance;
  const std::uint32_t node_count = pick(rng, min_nodes, max_nodes);
  for (std::uint32_t i = 0; i < node_count; ++i) {
    const std::uint32_t kind = pick(rng, 0, kinds - 1);
    Node n = node(kind, shapes[kind].domains, shapes[kind].domain_size);
    if (pick(rng, 0, 3) == 0) {
      auto& domain = n.free[pick(rng, 0, static_cast<std::uint32_t>(n.free.size() - 1))];
      domain -= pick(rng, 1, domain);
    }
    instance.nodes.push_back(std::move(n));
  }
  const std::uint32_t item_count = pick(rng, min_items, max_items);
  for (std::uint32_t i = 0; i < item_count; ++i) {
    Item item;
    if (pick(rng, 0, 15) != 0) {
      const std::uint32_t option_count = pick(rng, 1, 2);
      for (std::uint32_t o = 0; o < option_count; ++o) {
        const std::uint32_t kind = pick(rng, 0, 19) == 0 ? 7 : pick(rng, 0, kinds - 1);
        if (pick(rng, 0, 5) == 0) {
          item.options.push_back(whole(kind, pick(rng, 1, 2)));
        } else {
          static constexpr std::uint32_t demands[] = {1, 1, 2, 2, 3, 4, 4, 6, 8};
          item.options.push_back(on(kind, demands[pick(rng, 0, 8)]));
        }
      }
    }
    instance.items.push_back(std::move(item));
  }
  return instance;
}

/// The best (placed, nodes used) over every assignment of every item to "unplaced", to every domain of every
/// node of a device option's kind, or to every set of nodes a whole-node option could take; memoised on
/// (item, fleet state), which only spares re-exploring equal states.
class Exhaustive {
 public:
  Exhaustive(const std::vector<Node>& nodes, const std::vector<Item>& items) : nodes_(nodes), items_(items) {
    for (const Node& n : nodes) free_.push_back(n.free);
    used_.assign(nodes.size(), 0);
  }

  std::pair<std::size_t, std::size_t> best() { return best_from(0); }

 private:
  using Score = std::pair<std::size_t, std::size_t>;  // placed, nodes used

  static bool better(const Score& a, const Score& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  }

  Score best_from(std::size_t item) {
    if (item == items_.size()) return {0, 0};
    std::vector<std::uint32_t> key = {static_cast<std::uint32_t>(item)};
    for (std::size_t n = 0; n < nodes_.size(); ++n) {
      key.insert(key.end(), free_[n].begin(), free_[n].end());
      key.push_back(used_[n]);
    }
    if (const auto known = memo_.find(key); known != memo_.end()) return known->second;

    Score best = best_from(item + 1);  // unplaced
    const auto consider = [&](Score rest, std::size_t opened) {
      const Score candidate{rest.first + 1, rest.second + opened};
      if (better(candidate, best)) best = candidate;
    };
    for (const Option& option : items_[item].options) {
      if (option.devices > 0) {
        for (std::size_t n = 0; n < nodes_.size(); ++n) {
          if (nodes_[n].kind != option.kind) continue;
          for (std::size_t d = 0; d < free_[n].size(); ++d) {
            if (free_[n][d] < option.devices) continue;
            const std::uint32_t was_used = used_[n];
            free_[n][d] -= option.devices;
            used_[n] = 1;
            consider(best_from(item + 1), was_used ? 0 : 1);
            used_[n] = was_used;
            free_[n][d] += option.devices;
          }
        }
      } else if (option.whole_nodes > 0) {
        const std::size_t subsets = std::size_t{1} << nodes_.size();
        for (std::size_t mask = 0; mask < subsets; ++mask) {
          std::vector<std::size_t> chosen;
          bool fits = true;
          for (std::size_t n = 0; n < nodes_.size(); ++n) {
            if ((mask >> n & 1u) == 0) continue;
            chosen.push_back(n);
            fits = fits && nodes_[n].kind == option.kind && !used_[n] && sum(free_[n]) == nodes_[n].devices;
          }
          if (!fits || chosen.size() != option.whole_nodes) continue;
          for (const std::size_t n : chosen) {
            used_[n] = 1;
            std::fill(free_[n].begin(), free_[n].end(), 0u);
          }
          consider(best_from(item + 1), chosen.size());
          for (const std::size_t n : chosen) {
            used_[n] = 0;
            free_[n] = nodes_[n].free;
          }
        }
      }
    }
    memo_.emplace(std::move(key), best);
    return best;
  }

  const std::vector<Node>& nodes_;
  const std::vector<Item>& items_;
  std::vector<std::vector<std::uint32_t>> free_;
  std::vector<std::uint32_t> used_;
  std::map<std::vector<std::uint32_t>, Score> memo_;
};

TEST(PackingExact, MatchesExhaustiveReferenceOnRandomSmallInstances) {
  std::mt19937 rng(20240611);
  std::size_t improved_on_heuristic = 0;
  std::size_t with_whole_nodes = 0;
  for (int round = 0; round < 400; ++round) {
    const Instance instance = random_small_instance(rng, 6, 4);
    const Packing p = pack(instance.nodes, instance.items);
    ASSERT_TRUE(valid(instance.nodes, instance.items, p)) << "round " << round;
    ASSERT_TRUE(p.search_complete) << "round " << round;
    ASSERT_EQ(p.method, Method::exact) << "round " << round;
    const auto [placed, nodes_used] = Exhaustive(instance.nodes, instance.items).best();
    ASSERT_EQ(p.placed, placed) << "round " << round;
    ASSERT_EQ(p.nodes_used, nodes_used) << "round " << round;

    const Packing h =
        pack(instance.nodes, instance.items, Limits{.exact_max_items = 0, .exact_max_nodes = 0, .exact_max_steps = 0});
    ASSERT_TRUE(valid(instance.nodes, instance.items, h)) << "round " << round;
    ASSERT_TRUE(h.placed < placed || (h.placed == placed && h.nodes_used >= nodes_used)) << "round " << round;
    if (h.placed != placed || h.nodes_used != nodes_used) ++improved_on_heuristic;
    for (const Item& item : instance.items) {
      for (const Option& option : item.options) with_whole_nodes += option.whole_nodes > 0 ? 1 : 0;
    }
  }
  // The instances must exercise what they are meant to.
  EXPECT_GT(improved_on_heuristic, 0u);
  EXPECT_GT(with_whole_nodes, 20u);
}

TEST(PackingExact, LargerInstancesStayValidWithinTheStepLimit) {
  std::mt19937 rng(7);
  std::size_t complete = 0;
  std::uint64_t most_steps = 0;
  for (int round = 0; round < 40; ++round) {
    const Instance instance = random_small_instance(rng, 12, 12, 8, 6);
    const Packing p = pack(instance.nodes, instance.items);
    ASSERT_TRUE(valid(instance.nodes, instance.items, p)) << "round " << round;
    EXPECT_LE(p.search_steps, Limits{}.exact_max_steps + 1);
    EXPECT_EQ(p.method == Method::first_fit_decreasing, !p.search_complete && p.method != Method::exact);
    complete += p.search_complete ? 1 : 0;
    most_steps = std::max(most_steps, p.search_steps);
    EXPECT_EQ(pack(instance.nodes, instance.items).placements, p.placements);  // deterministic
  }
  std::cout << "[ search   ] " << complete << " of 40 searches complete, at most " << most_steps << " steps\n";
  EXPECT_GT(complete, 0u);
}

// --- The heuristic at fleet scale ------------------------------------------------------------------------------

Instance random_fleet(std::mt19937& rng) {
  // Kinds: 8xH100 HGX (one domain of 8), 8xA100-40GB HGX, 8xL40S PCIe (8 domains of 1), 2x4 NVLink pairs.
  const std::vector<std::pair<std::uint32_t, std::uint32_t>> shapes = {{1, 8}, {1, 8}, {8, 1}, {2, 4}};
  Instance instance;
  for (int i = 0; i < 1000; ++i) {
    const std::uint32_t kind = pick(rng, 0, 3);
    Node n = node(kind, shapes[kind].first, shapes[kind].second);
    if (pick(rng, 0, 9) == 0) {
      auto& domain = n.free[pick(rng, 0, static_cast<std::uint32_t>(n.free.size() - 1))];
      domain -= pick(rng, 1, domain);
    }
    instance.nodes.push_back(std::move(n));
  }
  for (int workload = 0; workload < 100; ++workload) {
    Item item;
    if (pick(rng, 0, 19) == 0) {
      const std::uint32_t kind = pick(rng, 0, 1);  // sequenced: argument evaluation order is unspecified
      item.options.push_back(whole(kind, pick(rng, 1, 2)));
    } else {
      const std::uint32_t h100 = 1u << pick(rng, 0, 2);
      item.options.push_back(on(0, h100));
      item.options.push_back(on(1, h100 * 2 > 8 ? 8 : h100 * 2));
      if (h100 == 1) item.options.push_back(on(2, 1));
      if (h100 <= 4) item.options.push_back(on(3, h100));
    }
    for (int r = 0; r < 64; ++r) instance.items.push_back(item);
  }
  return instance;
}

TEST(PackingHeuristic, FleetScaleIsValidBoundedAndDeterministic) {
  std::mt19937 rng(42);
  const Instance instance = random_fleet(rng);
  ASSERT_EQ(instance.items.size(), 6400u);
  const auto start = std::chrono::steady_clock::now();
  const Packing p = pack(instance.nodes, instance.items);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "[ timing   ] 1000 nodes x 6400 replicas packed in " << seconds * 1000 << " ms (" << p.placed
            << " placed on " << p.nodes_used << " nodes, lower bound " << p.lower_bound << ")\n";
  ASSERT_TRUE(valid(instance.nodes, instance.items, p));
  EXPECT_EQ(p.method, Method::first_fit_decreasing);
  EXPECT_FALSE(p.search_complete);
  EXPECT_GT(p.placed, 0u);
  EXPECT_LT(p.placed, instance.items.size());  // the fleet is oversubscribed
  EXPECT_GE(p.nodes_used, p.lower_bound);
  EXPECT_GT(p.lower_bound, 0u);

  const Packing again = pack(instance.nodes, instance.items);
  EXPECT_EQ(again.placements, p.placements);
  EXPECT_EQ(again.nodes_used, p.nodes_used);
  EXPECT_EQ(again.lower_bound, p.lower_bound);
}

TEST(PackingHeuristic, DivisibleReplicasFillTheFleetExactly) {
  // Every domain tiled by replicas of power-of-two sizes: sizes divide each other and every domain of a kind
  // is as large, so first fit decreasing must place them all, on every node; the bound is tight too.
  std::mt19937 rng(9);
  const std::vector<std::pair<std::uint32_t, std::uint32_t>> shapes = {{1, 8}, {2, 4}, {8, 1}, {4, 2}};
  std::vector<Node> nodes;
  std::vector<Item> items;
  for (int i = 0; i < 1000; ++i) {
    const std::uint32_t kind = pick(rng, 0, 3);
    nodes.push_back(node(kind, shapes[kind].first, shapes[kind].second));
    for (std::uint32_t domain = 0; domain < shapes[kind].first; ++domain) {
      for (std::uint32_t left = shapes[kind].second; left > 0;) {
        std::uint32_t size = 1u << pick(rng, 0, 3);
        while (size > left) size /= 2;
        items.push_back(replica({on(kind, size)}));
        left -= size;
      }
    }
  }
  for (std::size_t i = items.size() - 1; i > 0; --i) {  // shuffle (std::shuffle's output differs by library)
    std::swap(items[i], items[pick(rng, 0, static_cast<std::uint32_t>(i))]);
  }
  const Packing p = pack(nodes, items);
  ASSERT_TRUE(valid(nodes, items, p));
  EXPECT_EQ(p.method, Method::first_fit_decreasing);
  EXPECT_EQ(p.placed, items.size());
  EXPECT_EQ(p.nodes_used, nodes.size());
  EXPECT_EQ(p.lower_bound, nodes.size());
}

}  // namespace
}  // namespace hwaccel::packing
