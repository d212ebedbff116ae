// The calibrated launch of a kernel configuration nearest to an observed launch, by block
// count and split-K: what stands in for the K of a GEMM launch recorded without its shape
// (models/gemm_predictor.cpp). Nearness is |log block ratio| + |log split ratio|, compared as
// the product of the two ratios taken >= 1 (the same order without two logarithms a point);
// of launches equally near, the earliest point (in profile order) wins.
//
// A scan of every point of the configuration gives that answer, but a configuration may hold
// thousands of points (NeuSight's A100 table: 15,119 for one kernel), and a forecast of a
// trace without shapes asks once per kernel. The index holds, per configuration, the first
// point of each distinct (split, blocks) launch, ordered by split then blocks: 4 bytes per
// distinct launch (45,748 over the shipped profiles' 264,975 points). Within one split the
// nearest block counts are the two around the query (a ratio grows strictly with the distance
// between two distinct integer counts), so a query reads two launches per distinct split and
// finds the scan's answer (nearest_launch_test compares them).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <tuple>
#include <vector>

namespace pm2lat {

// A launch as nearness sees it: the blocks it runs and its split-K factor.
struct LaunchSize {
  double blocks = 1;
  std::int32_t split = 1;
};

// How far apart two launches are: the product of their block and split ratios, each >= 1.
inline double launch_apart(const LaunchSize& a, const LaunchSize& b) noexcept {
  auto ratio = [](double x, double y) { return x > y ? x / y : y / x; };
  return ratio(a.blocks, b.blocks) *
         ratio(static_cast<double>(a.split), static_cast<double>(b.split));
}

class NearestLaunchIndex {
 public:
  NearestLaunchIndex() = default;

  // Groups (configurations) of points: group g's are points [group_begin[g],
  // group_begin[g + 1]); launch_of(i) gives point i's LaunchSize.
  template <class LaunchOf>
  NearestLaunchIndex(std::span<const std::uint32_t> group_begin, LaunchOf&& launch_of) {
    begin_.reserve(group_begin.size());
    begin_.push_back(0);
    std::vector<std::uint32_t> group;
    for (std::size_t g = 0; g + 1 < group_begin.size(); ++g) {
      group.clear();
      for (std::uint32_t i = group_begin[g]; i < group_begin[g + 1]; ++i) group.push_back(i);
      // By split, then blocks, then profile order; the first of each launch is kept.
      auto key = [&](std::uint32_t i) {
        const LaunchSize l = launch_of(i);
        return std::tuple(l.split, l.blocks, i);
      };
      std::ranges::sort(group, [&](std::uint32_t a, std::uint32_t b) { return key(a) < key(b); });
      for (std::size_t j = 0; j < group.size(); ++j) {
        if (j > 0) {
          const LaunchSize prev = launch_of(group[j - 1]), here = launch_of(group[j]);
          if (prev.split == here.split && prev.blocks == here.blocks) continue;
        }
        order_.push_back(group[j]);
      }
      begin_.push_back(static_cast<std::uint32_t>(order_.size()));
    }
    order_.shrink_to_fit();
  }

  // The point of group `g` whose launch is nearest `query` (ties: the earliest point);
  // nullopt when the group has none. Launches and the query run at least one block (a ratio
  // to none is infinite for every launch alike). launch_of as at construction.
  // Allocation-free.
  template <class LaunchOf>
  std::optional<std::uint32_t> nearest(std::size_t g, const LaunchSize& query,
                                       LaunchOf&& launch_of) const noexcept {
    if (g + 1 >= begin_.size()) return std::nullopt;
    const std::uint32_t* first = order_.data() + begin_[g];
    const std::uint32_t* const last = order_.data() + begin_[g + 1];
    std::optional<std::uint32_t> best;
    double best_apart = 0;
    auto offer = [&](std::uint32_t i) {
      const double apart = launch_apart(launch_of(i), query);
      if (!best || apart < best_apart || (apart == best_apart && i < *best)) {
        best = i;
        best_apart = apart;
      }
    };
    while (first != last) {
      const std::int32_t split = launch_of(*first).split;
      const std::uint32_t* const split_end = std::partition_point(
          first, last, [&](std::uint32_t i) { return launch_of(i).split == split; });
      const std::uint32_t* const above = std::partition_point(
          first, split_end, [&](std::uint32_t i) { return launch_of(i).blocks < query.blocks; });
      if (above != split_end) offer(*above);
      if (above != first) offer(*(above - 1));
      first = split_end;
    }
    return best;
  }

  // Distinct launches held, over every group.
  std::size_t size() const noexcept { return order_.size(); }

 private:
  std::vector<std::uint32_t> order_;  // per group, one point per distinct launch, by split, blocks
  std::vector<std::uint32_t> begin_;  // group g's are order_[begin_[g], begin_[g + 1])
};

}  // namespace pm2lat
