// The k-nearest search behind the interpolation. nanoflann (1.4.3, Debian) builds the k-d
// tree; the tree is then held flat, with the points in leaf order and nothing else: no copy
// of the input, no per-node allocation, no slack of the vectors the points were collected in.
// The search below walks that tree exactly as nanoflann's approximate search does (same
// visiting order, same pruning, the same distance arithmetic), so every neighbour set, and
// every forecast built on one, is the one nanoflann gives (residual_interpolator_test).
// A node is 16 bytes: its split values (nanoflann's divlow and divhigh, which are coordinates
// of the points on either side) are held as indices into the index's table of values.
//
// Coordinates are held as 16-bit codes into each dimension's table of distinct values: the
// keys are logarithms of shapes measured on grids, so a dimension takes few distinct values,
// and a code names the exact double the point was built with (bit for bit), so distances and
// every neighbour set are unchanged. A point is then 2 bytes per dimension instead of 8 (the
// calibration indexes are most of what a run keeps resident). A dimension with more distinct
// values than a code can name keeps the points as doubles.
//
// An index may also keep each node's bounding box (in floats rounded outward): the search
// then does not enter a farther child whose box lies at or beyond the current k-th distance.
// Nothing under such a child could have been added, so the k-th distance after it, and so
// every later decision and the neighbour set, are what the full walk gives; the walk only
// skips work. It pays where queries often fall far from every point of their own kind (the
// GEMM selector: a shape's nearest calibrated shapes of the same layout and alignment may be
// several octaves away, and nanoflann's bound alone then visits most of the leaves around).
#include "pm2lat/models/residual_interpolator.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include <nanoflann.hpp>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace pm2lat {
namespace {

using residual_interpolation::kDistanceOffset;
using residual_interpolation::kMaxLogCorrection;
constexpr std::size_t kMaxNeighbours = 16;
// Approximate search: neighbours within (1 + eps) of the true k-th distance are accepted.
// The interpolation weights fall with the square of the distance, so a slightly farther
// neighbour changes a correction little, and the search does far fewer leaf visits.
constexpr float kSearchEps = 0.5f;
// Points per leaf of the tree (nanoflann's default).
constexpr std::size_t kLeafSize = 16;
constexpr std::uint32_t kNoChild = std::numeric_limits<std::uint32_t>::max();
// Distinct values a dimension may take for its points to be held as codes.
constexpr std::size_t kMaxCodedValues = std::size_t{std::numeric_limits<std::uint16_t>::max()} + 1;

// The k nearest so far, nearest first: nanoflann's KNNResultSet (ties keep arrival order).
// The k-th distance is "infinite" until k points are in. Held here, not in the caller's
// arrays, so that the insertion loop keeps them in registers (no aliasing to reload for).
class Neighbours {
 public:
  explicit Neighbours(std::size_t capacity) noexcept : capacity_(capacity) {}

  std::size_t count() const noexcept { return count_; }
  double worst() const noexcept { return worst_; }
  std::uint32_t position(std::size_t i) const noexcept { return positions_[i]; }
  double dist2(std::size_t i) const noexcept { return dist2_[i]; }

  // Inserts a point nearer than worst() (only such a point may be offered) after the points
  // at its distance or nearer; the k-th one drops out when k are in.
  void add(double d, std::uint32_t position) noexcept {
    std::size_t i = count_ < capacity_ ? count_++ : capacity_ - 1;
    for (; i > 0 && dist2_[i - 1] > d; --i) {
      dist2_[i] = dist2_[i - 1];
      positions_[i] = positions_[i - 1];
    }
    dist2_[i] = d;
    positions_[i] = position;
    if (count_ == capacity_) worst_ = dist2_[capacity_ - 1];
  }

 private:
  std::size_t capacity_;
  std::size_t count_ = 0;
  double worst_ = std::numeric_limits<double>::max();
  std::array<double, kMaxNeighbours> dist2_{};
  std::array<std::uint32_t, kMaxNeighbours> positions_{};
};

// The float at or below `v`, and at or above: box bounds that keep `v` inside.
float float_at_or_below(double v) {
  const auto f = static_cast<float>(v);
  return static_cast<double>(f) > v ? std::nextafter(f, -std::numeric_limits<float>::infinity())
                                    : f;
}
float float_at_or_above(double v) {
  const auto f = static_cast<float>(v);
  return static_cast<double>(f) < v ? std::nextafter(f, std::numeric_limits<float>::infinity()) : f;
}

#if defined(__SSE2__)
// The two floats at `f`, as doubles.
inline __m128d two_floats(const float* f) noexcept {
  return _mm_cvtps_pd(_mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(f))));
}
#endif

// The points as nanoflann reads them while it builds the tree.
template <std::size_t Dim>
struct PointCloud {
  const std::vector<std::array<double, Dim>>& pts;
  std::size_t kdtree_get_point_count() const { return pts.size(); }
  double kdtree_get_pt(std::size_t i, std::size_t d) const { return pts[i][d]; }
  template <class BBox>
  bool kdtree_get_bbox(BBox& /*unused*/) const {
    return false;  // nanoflann computes it
  }
};

}  // namespace

template <std::size_t Dim>
struct ResidualInterpolator<Dim>::Index {
  // A split or a leaf (child2 kNoChild, points [low, high) in leaf order). A split's divlow
  // and divhigh are values[low] and values[high]. Nodes are in pre-order, so a split's first
  // child is the node after it; only the second is stored.
  struct Node {
    std::uint32_t child2 = kNoChild;
    std::uint32_t low = 0, high = 0;
    std::uint32_t divfeat = 0;
  };
  std::vector<Node> nodes;  // nodes[0] is the root
  // The points in leaf order: codes (Dim per point) into `values`, where dimension d's
  // distinct values start at value_begin[d]; or, when a dimension has too many distinct
  // values, the points themselves in `raw` (and no codes). `values` also holds the split
  // values (for a raw index, only those).
  std::vector<std::uint16_t> codes;
  std::vector<double> values;
  std::array<std::uint32_t, Dim> value_begin{};
  std::array<std::uint32_t, Dim> value_end{};
  std::vector<Point> raw;
  std::size_t point_count = 0;
  std::vector<double> residuals;  // in leaf order; empty when all are zero
  // Leaf order -> the id nearest and nearest_k answer for the point (16 bits when every id
  // fits); neither when the index answers residuals only.
  std::vector<std::uint16_t> ids16;
  std::vector<std::uint32_t> ids32;
  Point low{}, high{};  // bounding box of all points
  std::size_t k = 8;
  // Per node, when kept: its points' bounding box, rounded outward to float (Dim lowest
  // coordinates, then Dim highest).
  std::vector<float> boxes;

  bool has_ids() const noexcept { return !ids16.empty() || !ids32.empty(); }
  std::size_t id(std::size_t position) const noexcept {
    return ids16.empty() ? ids32[position] : ids16[position];
  }

  // Index into `values` of dimension `d`'s value `v`, added to the table if not yet there.
  std::uint32_t value_index(std::size_t d, double v) {
    const auto first = values.begin() + value_begin[d];
    const auto last = values.begin() + value_end[d];
    const std::uint64_t bits = std::bit_cast<std::uint64_t>(v);
    const auto at = std::lower_bound(first, last, bits, [](double x, std::uint64_t b) {
      return std::bit_cast<std::uint64_t>(x) < b;
    });
    if (at != last && std::bit_cast<std::uint64_t>(*at) == bits)
      return static_cast<std::uint32_t>(at - values.begin());
    values.push_back(v);
    return static_cast<std::uint32_t>(values.size() - 1);
  }

  // Stores `points` in the leaf order `order`, as codes when every dimension allows it and
  // that is smaller.
  void store_points(const std::vector<Point>& points, const auto& order) {
    point_count = points.size();
    std::array<std::vector<std::uint64_t>, Dim> distinct;  // bit patterns, sorted
    std::size_t total = 0;
    bool coded = true;
    for (std::size_t d = 0; d < Dim && coded; ++d) {
      distinct[d].reserve(points.size());
      for (const Point& pt : points) distinct[d].push_back(std::bit_cast<std::uint64_t>(pt[d]));
      std::sort(distinct[d].begin(), distinct[d].end());
      distinct[d].erase(std::unique(distinct[d].begin(), distinct[d].end()), distinct[d].end());
      value_begin[d] = static_cast<std::uint32_t>(total);
      total += distinct[d].size();
      value_end[d] = static_cast<std::uint32_t>(total);
      coded = distinct[d].size() <= kMaxCodedValues;
    }
    // Few points with many distinct values (a small index) are smaller as doubles.
    coded = coded && total * sizeof(double) + point_count * Dim * sizeof(std::uint16_t) <
                         point_count * sizeof(Point);
    if (!coded) {
      value_begin.fill(0);
      value_end.fill(0);
      raw.reserve(point_count);
      for (std::size_t i = 0; i < point_count; ++i) raw.push_back(points[order[i]]);
      return;
    }
    values.reserve(total);
    for (std::size_t d = 0; d < Dim; ++d) {
      for (std::uint64_t bits : distinct[d]) values.push_back(std::bit_cast<double>(bits));
    }
    codes.reserve(point_count * Dim);
    for (std::size_t i = 0; i < point_count; ++i) {
      const Point& pt = points[order[i]];
      for (std::size_t d = 0; d < Dim; ++d) {
        const auto at = std::lower_bound(distinct[d].begin(), distinct[d].end(),
                                         std::bit_cast<std::uint64_t>(pt[d]));
        codes.push_back(static_cast<std::uint16_t>(at - distinct[d].begin()));
      }
    }
  }

  // Squared distances of the leaf's points [begin, end) to `q`, offered to `result` if
  // nearer than its current k-th distance (nanoflann compares with the k-th distance the leaf
  // began with, and its insertion ignores a point at or beyond the current one: the same).
  void scan_leaf(Neighbours& result, const double* q, std::uint32_t begin,
                 std::uint32_t end) const noexcept {
    if (codes.empty()) {
      for (std::uint32_t i = begin; i < end; ++i) {
        double d = 0;
        for (std::size_t j = 0; j < Dim; ++j) {
          const double diff = q[j] - raw[i][j];
          d += diff * diff;
        }
        if (d < result.worst()) result.add(d, i);
      }
      return;
    }
    std::array<const double*, Dim> table{};
    for (std::size_t j = 0; j < Dim; ++j) table[j] = values.data() + value_begin[j];
    const std::uint16_t* c = codes.data() + std::size_t{begin} * Dim;
    std::uint32_t i = begin;
#if defined(__SSE2__)
    // Two points at a time, each in its own lane: the same operations in the same order as
    // one at a time, so the same distances.
    for (; i + 2 <= end; i += 2, c += 2 * Dim) {
      __m128d d = _mm_setzero_pd();
      for (std::size_t j = 0; j < Dim; ++j) {
        const __m128d p = _mm_loadh_pd(_mm_load_sd(table[j] + c[j]), table[j] + c[Dim + j]);
        const __m128d diff = _mm_sub_pd(_mm_set1_pd(q[j]), p);
        d = _mm_add_pd(d, _mm_mul_pd(diff, diff));
      }
      const double first = _mm_cvtsd_f64(d);
      const double second = _mm_cvtsd_f64(_mm_unpackhi_pd(d, d));
      if (first < result.worst()) result.add(first, i);
      if (second < result.worst()) result.add(second, i + 1);
    }
#endif
    for (; i < end; ++i, c += Dim) {
      double d = 0;
      for (std::size_t j = 0; j < Dim; ++j) {
        const double diff = q[j] - table[j][c[j]];
        d += diff * diff;
      }
      if (d < result.worst()) result.add(d, i);
    }
  }

  // Copies nanoflann's node `node` and its subtree; returns its index.
  std::uint32_t flatten(const auto* node) {
    const auto id = static_cast<std::uint32_t>(nodes.size());
    nodes.emplace_back();
    if (node->child1 == nullptr && node->child2 == nullptr) {
      Node& leaf = nodes[id];
      leaf.low = static_cast<std::uint32_t>(node->node_type.lr.left);
      leaf.high = static_cast<std::uint32_t>(node->node_type.lr.right);
      return id;
    }
    flatten(node->child1);  // id + 1
    const std::uint32_t child2 = flatten(node->child2);
    const auto feat = static_cast<std::size_t>(node->node_type.sub.divfeat);
    const std::uint32_t divlow = value_index(feat, node->node_type.sub.divlow);
    const std::uint32_t divhigh = value_index(feat, node->node_type.sub.divhigh);
    Node& split = nodes[id];
    split.child2 = child2;
    split.divfeat = static_cast<std::uint32_t>(feat);
    split.low = divlow;
    split.high = divhigh;
    return id;
  }

  // The bounding box of every node's points. Children come after their parent.
  void build_boxes(const std::vector<Point>& points, const auto& order) {
    boxes.resize(nodes.size() * 2 * Dim);
    for (std::size_t id = nodes.size(); id-- > 0;) {
      const Node& n = nodes[id];
      float* box = boxes.data() + id * 2 * Dim;
      std::fill(box, box + Dim, std::numeric_limits<float>::max());
      std::fill(box + Dim, box + 2 * Dim, std::numeric_limits<float>::lowest());
      auto widen = [&](float lo, float hi, std::size_t j) {
        box[j] = std::min(box[j], lo);
        box[Dim + j] = std::max(box[Dim + j], hi);
      };
      if (n.child2 == kNoChild) {
        for (std::uint32_t i = n.low; i < n.high; ++i) {
          for (std::size_t j = 0; j < Dim; ++j) {
            const double v = points[order[i]][j];
            widen(float_at_or_below(v), float_at_or_above(v), j);
          }
        }
        continue;
      }
      for (const std::size_t child : {id + 1, std::size_t{n.child2}}) {
        const float* c = boxes.data() + child * 2 * Dim;
        for (std::size_t j = 0; j < Dim; ++j) widen(c[j], c[Dim + j], j);
      }
    }
  }

  // Whether node `id`'s box lies at or beyond `worst` from `q`, so that no point under it can
  // be added. In each dimension the rounded gap to the box is at most the rounded gap to any
  // of its points (rounding is monotone, and the bounds are at or outside them), and the
  // squares are summed in the order a point's are: the box's distance never exceeds a point's.
  bool box_beyond(std::uint32_t id, const double* q, double worst) const noexcept {
    const float* box = boxes.data() + std::size_t{id} * 2 * Dim;
    double d = 0;
    std::size_t j = 0;
#if defined(__SSE2__)
    // Two dimensions at a time, without a branch on each gap's sign (which would be
    // mispredicted about half the time); the squares are then summed one by one, in order.
    const __m128d zero = _mm_setzero_pd();
    for (; j + 2 <= Dim; j += 2) {
      const __m128d lo = two_floats(box + j);
      const __m128d hi = two_floats(box + Dim + j);
      const __m128d x = _mm_loadu_pd(q + j);
      const __m128d gap = _mm_max_pd(_mm_max_pd(_mm_sub_pd(lo, x), _mm_sub_pd(x, hi)), zero);
      const __m128d square = _mm_mul_pd(gap, gap);
      d += _mm_cvtsd_f64(square);
      d += _mm_cvtsd_f64(_mm_unpackhi_pd(square, square));
    }
#endif
    for (; j < Dim; ++j) {
      const double below = static_cast<double>(box[j]) - q[j];
      const double above = q[j] - static_cast<double>(box[Dim + j]);
      const double gap = std::max(std::max(below, above), 0.0);
      d += gap * gap;
    }
    return d >= worst;
  }

  // nanoflann's searchLevel: the nearer child first, the farther one unless the cell's
  // distance (times 1 + eps) exceeds the current k-th distance, or (kBoxes: the index keeps
  // boxes) the child's box lies at or beyond it.
  template <bool kBoxes>
  void search(Neighbours& result, const double* q, std::uint32_t id, double mindist2, double* dists,
              double eps_error) const noexcept {
    const Node& n = nodes[id];
    if (n.child2 == kNoChild) {
      scan_leaf(result, q, n.low, n.high);
      return;
    }
    const double value = q[n.divfeat];
    const double diff1 = value - values[n.low];
    const double diff2 = value - values[n.high];
    const bool low_first = diff1 + diff2 < 0;
    const std::uint32_t child1 = id + 1;
    const std::uint32_t nearer = low_first ? child1 : n.child2;
    const std::uint32_t farther = low_first ? n.child2 : child1;
    const double cut = low_first ? diff2 * diff2 : diff1 * diff1;
    search<kBoxes>(result, q, nearer, mindist2, dists, eps_error);
    const double saved = dists[n.divfeat];
    mindist2 = mindist2 + cut - saved;
    dists[n.divfeat] = cut;
    if (mindist2 * eps_error <= result.worst() &&
        !(kBoxes && box_beyond(farther, q, result.worst())))
      search<kBoxes>(result, q, farther, mindist2, dists, eps_error);
    dists[n.divfeat] = saved;
  }

  // Up to `count` nearest points (leaf positions and squared distances), nearest first.
  std::size_t nearest(const Point& q, std::size_t count, std::size_t* positions,
                      double* dist2) const noexcept {
    Neighbours result(count);
    std::array<double, Dim> dists{};
    double mindist2 = 0;
    for (std::size_t i = 0; i < Dim; ++i) {
      if (q[i] < low[i]) {
        dists[i] = (q[i] - low[i]) * (q[i] - low[i]);
        mindist2 += dists[i];
      }
      if (q[i] > high[i]) {
        dists[i] = (q[i] - high[i]) * (q[i] - high[i]);
        mindist2 += dists[i];
      }
    }
    if (boxes.empty()) {
      search<false>(result, q.data(), 0, mindist2, dists.data(), 1 + kSearchEps);
    } else {
      search<true>(result, q.data(), 0, mindist2, dists.data(), 1 + kSearchEps);
    }
    for (std::size_t i = 0; i < result.count(); ++i) {
      positions[i] = result.position(i);
      dist2[i] = result.dist2(i);
    }
    return result.count();
  }
};

template <std::size_t Dim>
ResidualInterpolator<Dim>::ResidualInterpolator() = default;

template <std::size_t Dim>
ResidualInterpolator<Dim>::ResidualInterpolator(std::vector<Point> points,
                                                std::vector<double> log_residuals,
                                                std::size_t neighbours) {
  std::vector<std::uint32_t> ids(points.size());
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::uint32_t>(i);
  build(points, log_residuals, &ids, neighbours, NodeBoxes::kNone);
}

template <std::size_t Dim>
ResidualInterpolator<Dim>::ResidualInterpolator(std::vector<Point> points,
                                                const std::vector<std::uint32_t>& ids,
                                                NodeBoxes boxes) {
  build(points, {}, &ids, 1, boxes);
}

template <std::size_t Dim>
ResidualInterpolator<Dim> ResidualInterpolator<Dim>::residuals_only(
    std::vector<Point> points, std::vector<double> log_residuals, std::size_t neighbours) {
  ResidualInterpolator index;
  index.build(points, log_residuals, nullptr, neighbours, NodeBoxes::kNone);
  return index;
}

template <std::size_t Dim>
void ResidualInterpolator<Dim>::build(const std::vector<Point>& points,
                                      const std::vector<double>& log_residuals,
                                      const std::vector<std::uint32_t>* ids, std::size_t neighbours,
                                      NodeBoxes boxes) {
  if (points.empty()) return;
  using Cloud = PointCloud<Dim>;
  using Tree = nanoflann::KDTreeSingleIndexAdaptor<nanoflann::L2_Simple_Adaptor<double, Cloud>,
                                                   Cloud, static_cast<int>(Dim), std::size_t>;
  const Cloud cloud{points};
  Tree tree(static_cast<int>(Dim), cloud, nanoflann::KDTreeSingleIndexAdaptorParams(kLeafSize));
  tree.buildIndex();

  index_ = std::make_unique<Index>();
  Index& x = *index_;
  x.k = std::clamp<std::size_t>(neighbours, 1, kMaxNeighbours);
  const std::size_t n = points.size();
  const bool any_residual =
      std::any_of(log_residuals.begin(), log_residuals.end(), [](double r) { return r != 0; });
  x.store_points(points, tree.vAcc);
  const bool narrow = ids != nullptr && std::all_of(ids->begin(), ids->end(), [](std::uint32_t id) {
                        return id <= std::numeric_limits<std::uint16_t>::max();
                      });
  if (ids != nullptr) {
    if (narrow) {
      x.ids16.reserve(n);
    } else {
      x.ids32.reserve(n);
    }
  }
  if (any_residual) x.residuals.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t from = tree.vAcc[i];
    if (ids != nullptr && narrow) x.ids16.push_back(static_cast<std::uint16_t>((*ids)[from]));
    if (ids != nullptr && !narrow) x.ids32.push_back((*ids)[from]);
    if (any_residual) x.residuals.push_back(from < log_residuals.size() ? log_residuals[from] : 0);
  }
  for (std::size_t d = 0; d < Dim; ++d) {
    x.low[d] = tree.root_bbox[d].low;
    x.high[d] = tree.root_bbox[d].high;
  }
  x.flatten(tree.root_node);
  x.nodes.shrink_to_fit();
  if (boxes == NodeBoxes::kKept) x.build_boxes(points, tree.vAcc);
  x.values.shrink_to_fit();
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
  return !index_;
}

template <std::size_t Dim>
std::size_t ResidualInterpolator<Dim>::size() const noexcept {
  return index_ ? index_->point_count : 0;
}

template <std::size_t Dim>
double ResidualInterpolator<Dim>::correction(const Point& x) const noexcept {
  if (empty() || index_->residuals.empty()) return 1.0;
  std::array<std::size_t, kMaxNeighbours> pos{};
  std::array<double, kMaxNeighbours> dist2{};
  const std::size_t k = std::min(index_->k, index_->point_count);
  const std::size_t found = index_->nearest(x, k, pos.data(), dist2.data());
  double wsum = 0, sum = 0;
  for (std::size_t i = 0; i < found; ++i) {
    const double d = std::sqrt(dist2[i]) + kDistanceOffset;
    const double w = 1.0 / (d * d);
    wsum += w;
    sum += w * index_->residuals[pos[i]];
  }
  if (wsum <= 0) return 1.0;
  return std::exp(std::clamp(sum / wsum, -kMaxLogCorrection, kMaxLogCorrection));
}

template <std::size_t Dim>
std::size_t ResidualInterpolator<Dim>::nearest(const Point& x) const noexcept {
  if (empty() || !index_->has_ids()) return size();
  std::size_t pos = 0;
  double dist2 = 0;
  return index_->nearest(x, 1, &pos, &dist2) == 1 ? index_->id(pos) : size();
}

template <std::size_t Dim>
std::size_t ResidualInterpolator<Dim>::nearest_k(const Point& x, std::size_t k,
                                                 std::size_t* indices,
                                                 double* squared_distances) const noexcept {
  if (empty() || k == 0 || !index_->has_ids()) return 0;
  k = std::min({k, kMaxNeighbours, index_->point_count});
  const std::size_t found = index_->nearest(x, k, indices, squared_distances);
  for (std::size_t i = 0; i < found; ++i) indices[i] = index_->id(indices[i]);
  return found;
}

template <std::size_t Dim>
std::size_t ResidualInterpolator<Dim>::nearest_k_residuals(
    const Point& x, std::size_t k, double* log_residuals,
    double* squared_distances) const noexcept {
  if (empty() || k == 0) return 0;
  k = std::min({k, kMaxNeighbours, index_->point_count});
  std::array<std::size_t, kMaxNeighbours> pos{};
  const std::size_t found = index_->nearest(x, k, pos.data(), squared_distances);
  for (std::size_t i = 0; i < found; ++i)
    log_residuals[i] = index_->residuals.empty() ? 0.0 : index_->residuals[pos[i]];
  return found;
}

template class ResidualInterpolator<2>;
template class ResidualInterpolator<3>;
template class ResidualInterpolator<4>;
template class ResidualInterpolator<5>;
template class ResidualInterpolator<6>;

}  // namespace pm2lat
