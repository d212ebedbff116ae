// What the fitted model leaves unexplained, interpolated from the calibration points near a
// shape: the distance-weighted mean log(measured / modelled) of the k nearest calibrated
// shapes of the same kernel configuration, in log-shape space. This is PM2Lat's "light
// interpolation" on top of the analytic model: it never replaces the model (far from any
// point the correction fades to the neighbours' mean, and it is bounded), it only absorbs the
// smooth shape effects no four-coefficient model captures (L2 reuse, alignment, clocks).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace pm2lat {

namespace residual_interpolation {
// Calibrated neighbours a correction is interpolated from (every model's interpolation).
inline constexpr std::size_t kNeighbours = 8;
// Corrections beyond a factor of 3 either way mean the model is wrong, not the shape: cap
// them so one odd calibration point cannot dominate a prediction.
inline constexpr double kMaxLogCorrection = 1.1;
// Distance offset of the inverse-square weights: a neighbour at distance 0 (the same shape)
// weighs 1/0.09, one octave away in one dimension 1/1.69.
inline constexpr double kDistanceOffset = 0.3;
}  // namespace residual_interpolation

template <std::size_t Dim>
class ResidualInterpolator {
 public:
  using Point = std::array<double, Dim>;
  // Whether the index also keeps each node's bounding box (2 Dim floats a node): the search
  // then skips a farther subtree whose box lies at or beyond the k-th distance. The answers
  // are the same; it pays where queries often fall far from the points.
  enum class NodeBoxes : bool { kNone, kKept };

  ResidualInterpolator();
  // `points` with their log residuals (missing ones are 0); nearest and nearest_k answer
  // indices into `points`.
  ResidualInterpolator(std::vector<Point> points, std::vector<double> log_residuals,
                       std::size_t neighbours);
  // `points` without residuals, nearest and nearest_k answering ids[i] for points[i] (what
  // a point stands for: a calibration point, a configuration). `ids` is parallel to `points`.
  ResidualInterpolator(std::vector<Point> points, const std::vector<std::uint32_t>& ids,
                       NodeBoxes boxes = NodeBoxes::kNone);
  // An index for corrections and neighbours' residuals only: it keeps no index per point, so
  // nearest and nearest_k find nothing.
  static ResidualInterpolator residuals_only(std::vector<Point> points,
                                             std::vector<double> log_residuals,
                                             std::size_t neighbours);
  ResidualInterpolator(ResidualInterpolator&&) noexcept;
  ResidualInterpolator& operator=(ResidualInterpolator&&) noexcept;
  ~ResidualInterpolator();

  bool empty() const noexcept;
  std::size_t size() const noexcept;

  // Multiplicative correction exp(weighted mean log residual) at `x`; 1 when empty.
  // Allocation-free.
  double correction(const Point& x) const noexcept;

  // Id (by default the index into the points given at construction) of the nearest point, or
  // size() if empty or built residuals only.
  std::size_t nearest(const Point& x) const noexcept;

  // The up to `k` (<= 16) nearest points: ids and squared distances, nearest first.
  // Returns how many were found (none for an index built residuals only). Allocation-free.
  std::size_t nearest_k(const Point& x, std::size_t k, std::size_t* indices,
                        double* squared_distances) const noexcept;

  // The same neighbours as nearest_k, with their log residuals (0 for an index built without
  // any) instead of their indices: for interpolations other than the weighted mean, without
  // a second copy of the residuals. Allocation-free.
  std::size_t nearest_k_residuals(const Point& x, std::size_t k, double* log_residuals,
                                  double* squared_distances) const noexcept;

 private:
  void build(const std::vector<Point>& points, const std::vector<double>& log_residuals,
             const std::vector<std::uint32_t>* ids, std::size_t neighbours, NodeBoxes boxes);

  struct Index;
  std::unique_ptr<Index> index_;
};

extern template class ResidualInterpolator<2>;
extern template class ResidualInterpolator<3>;
extern template class ResidualInterpolator<4>;
extern template class ResidualInterpolator<5>;
extern template class ResidualInterpolator<6>;

}  // namespace pm2lat
