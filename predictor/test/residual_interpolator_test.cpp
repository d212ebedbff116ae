// The flat k-d tree search gives exactly what nanoflann's search over the same points gives:
// the same neighbours, in the same order, at the same distances (the forecasts depend on it).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <vector>

#include <nanoflann.hpp>

#include "pm2lat/models/residual_interpolator.h"

namespace pm2lat {
namespace {

template <std::size_t Dim>
struct Cloud {
  std::vector<std::array<double, Dim>> pts;
  std::size_t kdtree_get_point_count() const { return pts.size(); }
  double kdtree_get_pt(std::size_t i, std::size_t d) const { return pts[i][d]; }
  template <class BBox>
  bool kdtree_get_bbox(BBox& /*unused*/) const {
    return false;
  }
};

// How the test points are laid out. The index holds a point's coordinates as codes into
// per-dimension tables of distinct values when that is smaller, else as doubles; the search
// must give nanoflann's answer either way.
enum class Layout {
  kLatticeAndJittered,  // a coarse lattice, every third point jittered: codes
  kLattice,             // only lattice values (log2 shapes of a grid): codes
  kJittered,            // every coordinate distinct: doubles (codes would be larger)
  kWideFirstDimension,  // more distinct values in one dimension than a code names: doubles
  kPenaltyDimensions,   // the last two dimensions two values each (the GEMM selector's layout
                        // and alignment penalties), the others a lattice, every third jittered
};

// Points on a coarse lattice (many equal coordinates and equal distances, as log2 shapes
// give), some jittered as `layout` says; queries inside and around them.
template <std::size_t Dim>
void expect_same_neighbours_as_nanoflann(std::size_t n, unsigned seed,
                                         Layout layout = Layout::kLatticeAndJittered) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> lattice(0, 12);
  std::uniform_real_distribution<double> jitter(-0.5, 0.5);
  Cloud<Dim> cloud;
  std::vector<double> residuals;
  for (std::size_t i = 0; i < n; ++i) {
    const bool jittered =
        layout == Layout::kJittered ||
        ((layout == Layout::kLatticeAndJittered || layout == Layout::kPenaltyDimensions) &&
         i % 3 == 0);
    std::array<double, Dim> p{};
    for (auto& v : p) v = lattice(rng) + (jittered ? jitter(rng) : 0.0);
    if (layout == Layout::kPenaltyDimensions) {
      p[Dim - 2] = lattice(rng) % 2 == 0 ? 0.0 : 3.0;
      p[Dim - 1] = lattice(rng) % 3 == 0 ? 0.0 : 2.0;
    }
    // Two points per value: 2^16 + 1 values and more, and a lattice elsewhere.
    if (layout == Layout::kWideFirstDimension) {
      const std::size_t value = i / 2;
      p[0] = 12.0 * static_cast<double>(value) / static_cast<double>(n);
    }
    cloud.pts.push_back(p);
    residuals.push_back(jitter(rng));
  }
  using Tree = nanoflann::KDTreeSingleIndexAdaptor<nanoflann::L2_Simple_Adaptor<double, Cloud<Dim>>,
                                                   Cloud<Dim>, static_cast<int>(Dim), std::size_t>;
  Tree tree(static_cast<int>(Dim), cloud, nanoflann::KDTreeSingleIndexAdaptorParams(16));
  tree.buildIndex();
  const ResidualInterpolator<Dim> interp(cloud.pts, residuals, 8);
  // The same points with each node's box kept: the walk skips more, the answers are the same.
  std::vector<std::uint32_t> ids(n);
  for (std::size_t i = 0; i < n; ++i) ids[i] = static_cast<std::uint32_t>(i);
  const ResidualInterpolator<Dim> boxed(cloud.pts, ids,
                                        ResidualInterpolator<Dim>::NodeBoxes::kKept);
  std::uniform_real_distribution<double> where(-3, 15);
  for (int q = 0; q < 2000; ++q) {
    std::array<double, Dim> x{};
    for (auto& v : x) v = q % 2 == 0 ? std::round(where(rng)) : where(rng);
    if (layout == Layout::kPenaltyDimensions) {
      x[Dim - 2] = q % 3 == 0 ? 3.0 : 0.0;
      x[Dim - 1] = q % 5 < 2 ? 2.0 : 0.0;
    }
    for (std::size_t k : {std::size_t{1}, std::size_t{8}, std::size_t{16}}) {
      std::array<std::size_t, 16> want_i{}, got_i{};
      std::array<double, 16> want_d{}, got_d{};
      nanoflann::KNNResultSet<double, std::size_t> result(k);
      result.init(want_i.data(), want_d.data());
      tree.findNeighbors(result, x.data(), nanoflann::SearchParams(32, 0.5f));
      ASSERT_EQ(interp.nearest_k(x, k, got_i.data(), got_d.data()), result.size());
      for (std::size_t i = 0; i < result.size(); ++i) {
        ASSERT_EQ(got_i[i], want_i[i]) << "query " << q << " k " << k << " rank " << i;
        ASSERT_EQ(got_d[i], want_d[i]) << "query " << q << " k " << k << " rank " << i;
      }
      ASSERT_EQ(boxed.nearest_k(x, k, got_i.data(), got_d.data()), result.size());
      for (std::size_t i = 0; i < result.size(); ++i) {
        ASSERT_EQ(got_i[i], want_i[i]) << "boxes, query " << q << " k " << k << " rank " << i;
        ASSERT_EQ(got_d[i], want_d[i]) << "boxes, query " << q << " k " << k << " rank " << i;
      }
      // The neighbours' residuals instead of their indices: the same neighbours, in order.
      std::array<double, 16> got_r{}, got_rd{};
      ASSERT_EQ(interp.nearest_k_residuals(x, k, got_r.data(), got_rd.data()), result.size());
      for (std::size_t i = 0; i < result.size(); ++i) {
        ASSERT_EQ(got_r[i], residuals[want_i[i]]) << "query " << q << " k " << k << " rank " << i;
        ASSERT_EQ(got_rd[i], want_d[i]) << "query " << q << " k " << k << " rank " << i;
      }
    }
    // The correction: inverse-square weights of the 8 nearest residuals, capped at e^1.1.
    std::array<std::size_t, 8> idx{};
    std::array<double, 8> d2{};
    nanoflann::KNNResultSet<double, std::size_t> result(8);
    result.init(idx.data(), d2.data());
    tree.findNeighbors(result, x.data(), nanoflann::SearchParams(32, 0.5f));
    double wsum = 0, sum = 0;
    for (std::size_t i = 0; i < result.size(); ++i) {
      const double d = std::sqrt(d2[i]) + 0.3;
      wsum += 1.0 / (d * d);
      sum += 1.0 / (d * d) * residuals[idx[i]];
    }
    ASSERT_EQ(interp.correction(x), std::exp(std::clamp(sum / wsum, -1.1, 1.1))) << q;
  }
}

TEST(ResidualInterpolator, FindsExactlyWhatNanoflannFinds) {
  expect_same_neighbours_as_nanoflann<2>(3000, 1);
  expect_same_neighbours_as_nanoflann<5>(20000, 2);
  expect_same_neighbours_as_nanoflann<5>(40, 3);  // fewer points than a few leaves
}

TEST(ResidualInterpolator, FindsWhatNanoflannFindsWithPenaltyDimensions) {
  // The GEMM selector's keys: four log2 dimensions, then layout and alignment penalties.
  expect_same_neighbours_as_nanoflann<6>(20000, 7, Layout::kPenaltyDimensions);
  // The low-precision selector's keys: log2 m, n, k.
  expect_same_neighbours_as_nanoflann<3>(20000, 8);
}

TEST(ResidualInterpolator, FindsWhatNanoflannFindsWhateverHoldsTheCoordinates) {
  expect_same_neighbours_as_nanoflann<5>(20000, 4, Layout::kLattice);
  expect_same_neighbours_as_nanoflann<4>(5000, 5, Layout::kJittered);
  expect_same_neighbours_as_nanoflann<2>(140000, 6, Layout::kWideFirstDimension);
}

TEST(ResidualInterpolator, WithoutResidualsOrPointsCorrectsNothing) {
  const ResidualInterpolator<2> none;
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none.correction({1, 1}), 1.0);
  const ResidualInterpolator<2> zeros({{0, 0}, {1, 1}}, {}, 8);
  EXPECT_EQ(zeros.size(), 2u);
  EXPECT_EQ(zeros.correction({0.2, 0.1}), 1.0);
  EXPECT_EQ(zeros.nearest({0.9, 0.8}), 1u);
  std::array<double, 2> r{1, 1}, d2{};
  EXPECT_EQ(zeros.nearest_k_residuals({0.9, 0.8}, 2, r.data(), d2.data()), 2u);
  EXPECT_EQ(r[0], 0.0);
  EXPECT_EQ(r[1], 0.0);
  EXPECT_EQ(none.nearest_k_residuals({0.9, 0.8}, 2, r.data(), d2.data()), 0u);
}

// An index built with ids answers them; one built for residuals only corrects as the full
// index does and names no point.
TEST(ResidualInterpolator, AnswersIdsOrResidualsOnly) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> where(0, 10);
  std::vector<std::array<double, 3>> points(500);
  std::vector<double> residuals(points.size());
  std::vector<std::uint32_t> ids(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    for (auto& v : points[i]) v = std::round(where(rng));
    residuals[i] = where(rng) / 10 - 0.5;
    ids[i] = static_cast<std::uint32_t>(70000 + 3 * i);  // wider than 16 bits
  }
  const ResidualInterpolator<3> full(points, residuals, 8);
  const ResidualInterpolator<3> with_ids(points, ids);
  const auto only = ResidualInterpolator<3>::residuals_only(points, residuals, 8);
  EXPECT_EQ(only.size(), points.size());
  for (int q = 0; q < 200; ++q) {
    const std::array<double, 3> x{where(rng), where(rng), where(rng)};
    std::array<std::size_t, 8> want{}, got{};
    std::array<double, 8> want_d{}, got_d{}, want_r{}, got_r{};
    const std::size_t found = full.nearest_k(x, 8, want.data(), want_d.data());
    ASSERT_EQ(with_ids.nearest_k(x, 8, got.data(), got_d.data()), found);
    for (std::size_t i = 0; i < found; ++i) {
      EXPECT_EQ(got[i], ids[want[i]]);
      EXPECT_EQ(got_d[i], want_d[i]);
    }
    EXPECT_EQ(with_ids.nearest(x), ids[full.nearest(x)]);
    EXPECT_EQ(with_ids.correction(x), 1.0);
    EXPECT_EQ(only.correction(x), full.correction(x));
    ASSERT_EQ(only.nearest_k_residuals(x, 8, got_r.data(), got_d.data()),
              full.nearest_k_residuals(x, 8, want_r.data(), want_d.data()));
    for (std::size_t i = 0; i < found; ++i) EXPECT_EQ(got_r[i], want_r[i]);
    EXPECT_EQ(only.nearest_k(x, 8, got.data(), got_d.data()), 0u);
    EXPECT_EQ(only.nearest(x), only.size());
  }
}

}  // namespace
}  // namespace pm2lat
