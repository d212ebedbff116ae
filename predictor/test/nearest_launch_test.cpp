// The calibrated launch nearest an observed one (models/nearest_launch.h): the index answers
// what a scan of every point of the configuration answers, ties to the earliest point.
#include "pm2lat/models/nearest_launch.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

namespace pm2lat {
namespace {

// The answer by definition: every point of the group, the first of the nearest.
std::optional<std::uint32_t> scan(const std::vector<LaunchSize>& launches, std::uint32_t begin,
                                  std::uint32_t end, const LaunchSize& query) {
  std::optional<std::uint32_t> best;
  double best_apart = 0;
  for (std::uint32_t i = begin; i < end; ++i) {
    const double apart = launch_apart(launches[i], query);
    if (!best || apart < best_apart) {
      best = i;
      best_apart = apart;
    }
  }
  return best;
}

TEST(NearestLaunch, EquallyNearLaunchesGoToTheEarliestPoint) {
  // 8 and 2 blocks are both twice from 4: the earlier point (8 blocks) wins, whichever order
  // the index holds them in; the repeated 2-block launch answers its first point.
  const std::vector<LaunchSize> launches{{16, 1}, {8, 1}, {2, 1}, {2, 1}, {4, 2}};
  const std::vector<std::uint32_t> groups{0, 5};
  auto of = [&](std::uint32_t i) { return launches[i]; };
  const NearestLaunchIndex index(groups, of);
  EXPECT_EQ(index.nearest(0, {4, 1}, of), std::optional<std::uint32_t>(1));
  EXPECT_EQ(index.nearest(0, {1, 1}, of), std::optional<std::uint32_t>(2));
  EXPECT_EQ(index.nearest(0, {4, 2}, of), std::optional<std::uint32_t>(4));
  EXPECT_EQ(index.size(), 4u);  // one entry per distinct (split, blocks)
}

TEST(NearestLaunch, AnEmptyOrUnknownConfigurationHasNoLaunch) {
  const std::vector<LaunchSize> launches{{4, 1}};
  const std::vector<std::uint32_t> groups{0, 0, 1};  // group 0 empty, group 1 one point
  auto of = [&](std::uint32_t i) { return launches[i]; };
  const NearestLaunchIndex index(groups, of);
  EXPECT_FALSE(index.nearest(0, {4, 1}, of));
  EXPECT_EQ(index.nearest(1, {400, 3}, of), std::optional<std::uint32_t>(0));
  EXPECT_FALSE(index.nearest(2, {4, 1}, of));
  EXPECT_FALSE(NearestLaunchIndex().nearest(0, {4, 1}, of));
}

TEST(NearestLaunch, AnswersWhatAScanOfEveryPointAnswers) {
  // Launches as GEMM tables hold them: block counts on powers of two and between (equal
  // ratios either side are common), a few split-K factors, many repeats; groups of every size.
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> exponent(0, 14), jitter(0, 3), split(0, 4), size(0, 400);
  std::vector<LaunchSize> launches;
  std::vector<std::uint32_t> groups{0};
  for (int g = 0; g < 60; ++g) {
    const int n = g % 7 == 0 ? 0 : size(rng);
    for (int i = 0; i < n; ++i) {
      const double blocks = static_cast<double>((1 << exponent(rng)) * (1 + jitter(rng) % 2 * 2));
      launches.push_back({blocks, 1 << split(rng) / 2});
    }
    groups.push_back(static_cast<std::uint32_t>(launches.size()));
  }
  auto of = [&](std::uint32_t i) { return launches[i]; };
  const NearestLaunchIndex index(groups, of);
  for (std::size_t g = 0; g + 1 < groups.size(); ++g) {
    for (int q = 0; q < 300; ++q) {
      const LaunchSize query{static_cast<double>((1 << exponent(rng)) + jitter(rng)),
                             1 << split(rng)};
      ASSERT_EQ(index.nearest(g, query, of), scan(launches, groups[g], groups[g + 1], query))
          << "group " << g << " blocks " << query.blocks << " split " << query.split;
    }
  }
}

}  // namespace
}  // namespace pm2lat
