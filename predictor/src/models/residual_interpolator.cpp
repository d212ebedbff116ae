#include "pm2lat/models/residual_interpolator.h"

#include <algorithm>
#include <cmath>

#include <nanoflann.hpp>

namespace pm2lat {
namespace {

// Corrections beyond a factor of 3 either way mean the model is wrong, not the shape: cap
// them so one odd calibration point cannot dominate a prediction.
constexpr double kMaxLogCorrection = 1.1;
// Distance offset of the inverse-square weights: a neighbour at distance 0 (the same shape)
// weighs 1/0.09, one octave away in one dimension 1/1.69.
constexpr double kDistanceOffset = 0.3;
constexpr std::size_t kMaxNeighbours = 16;
// Approximate search: neighbours within (1 + eps) of the true k-th distance are accepted.
// The interpolation weights fall with the square of the distance, so a slightly farther
// neighbour changes a correction little, and the search does far fewer leaf visits.
constexpr float kSearchEps = 0.5f;

}  // namespace

template <std::size_t Dim>
struct ResidualInterpolator<Dim>::Index {
  struct Cloud {
    std::vector<Point> pts;
    std::size_t kdtree_get_point_count() const { return pts.size(); }
    double kdtree_get_pt(std::size_t i, std::size_t d) const { return pts[i][d]; }
    template <class BBox>
    bool kdtree_get_bbox(BBox&) const {
      return false;
    }
  };
  using Tree = nanoflann::KDTreeSingleIndexAdaptor<nanoflann::L2_Simple_Adaptor<double, Cloud>,
                                                   Cloud, static_cast<int>(Dim), std::size_t>;

  Cloud cloud;
  std::vector<double> residuals;
  std::size_t k = 8;
  std::unique_ptr<Tree> tree;
};

template <std::size_t Dim>
ResidualInterpolator<Dim>::ResidualInterpolator() = default;

template <std::size_t Dim>
ResidualInterpolator<Dim>::ResidualInterpolator(std::vector<Point> points,
                                                std::vector<double> log_residuals,
                                                std::size_t neighbours)
    : index_(std::make_unique<Index>()) {
  index_->cloud.pts = std::move(points);
  index_->residuals = std::move(log_residuals);
  index_->residuals.resize(index_->cloud.pts.size(), 0.0);
  index_->k = std::clamp<std::size_t>(neighbours, 1, kMaxNeighbours);
  if (!index_->cloud.pts.empty()) {
    index_->tree = std::make_unique<typename Index::Tree>(
        static_cast<int>(Dim), index_->cloud, nanoflann::KDTreeSingleIndexAdaptorParams(16));
    index_->tree->buildIndex();
  }
}

template <std::size_t Dim>
ResidualInterpolator<Dim>::ResidualInterpolator(ResidualInterpolator&&) noexcept = default;
template <std::size_t Dim>
ResidualInterpolator<Dim>& ResidualInterpolator<Dim>::operator=(ResidualInterpolator&&) noexcept =
    default;
template <std::size_t Dim>
ResidualInterpolator<Dim>::~ResidualInterpolator() = default;

template <std::size_t Dim>
bool ResidualInterpolator<Dim>::empty() const noexcept {
  return !index_ || !index_->tree;
}

template <std::size_t Dim>
std::size_t ResidualInterpolator<Dim>::size() const noexcept {
  return index_ ? index_->cloud.pts.size() : 0;
}

template <std::size_t Dim>
double ResidualInterpolator<Dim>::correction(const Point& x) const noexcept {
  if (empty()) return 1.0;
  std::array<std::size_t, kMaxNeighbours> idx{};
  std::array<double, kMaxNeighbours> dist2{};
  const std::size_t k = std::min(index_->k, index_->cloud.pts.size());
  nanoflann::KNNResultSet<double, std::size_t> result(k);
  result.init(idx.data(), dist2.data());
  index_->tree->findNeighbors(result, x.data(), nanoflann::SearchParams(32, kSearchEps));
  double wsum = 0, sum = 0;
  for (std::size_t i = 0; i < result.size(); ++i) {
    const double d = std::sqrt(dist2[i]) + kDistanceOffset;
    const double w = 1.0 / (d * d);
    wsum += w;
    sum += w * index_->residuals[idx[i]];
  }
  if (wsum <= 0) return 1.0;
  return std::exp(std::clamp(sum / wsum, -kMaxLogCorrection, kMaxLogCorrection));
}

template <std::size_t Dim>
std::size_t ResidualInterpolator<Dim>::nearest(const Point& x) const noexcept {
  if (empty()) return size();
  std::size_t idx = 0;
  double dist2 = 0;
  nanoflann::KNNResultSet<double, std::size_t> result(1);
  result.init(&idx, &dist2);
  index_->tree->findNeighbors(result, x.data(), nanoflann::SearchParams(32, kSearchEps));
  return result.size() == 1 ? idx : size();
}

template <std::size_t Dim>
std::size_t ResidualInterpolator<Dim>::nearest_k(const Point& x, std::size_t k,
                                                 std::size_t* indices,
                                                 double* squared_distances) const noexcept {
  if (empty() || k == 0) return 0;
  k = std::min({k, kMaxNeighbours, index_->cloud.pts.size()});
  nanoflann::KNNResultSet<double, std::size_t> result(k);
  result.init(indices, squared_distances);
  index_->tree->findNeighbors(result, x.data(), nanoflann::SearchParams(32, kSearchEps));
  return result.size();
}

template class ResidualInterpolator<2>;
template class ResidualInterpolator<4>;
template class ResidualInterpolator<5>;

}  // namespace pm2lat
