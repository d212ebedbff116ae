#include "models/gemm_calibration.h"

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <utility>

#include "pm2lat/call_dispatch.h"
#include "pm2lat/classifier.h"
#include "pm2lat/models/gemm_neighbourhood.h"
#include "pm2lat/models/gemm_wave_model.h"
#include "pm2lat/models/narrow_operand_access.h"
#include "pm2lat/profile_error.h"

namespace pm2lat {
namespace {

using residual_interpolation::kNeighbours;

// Per operand type, the selector's calibrated shapes: where each is in GemmCalibration::points,
// and what its key is made of.
struct SelectorPoints {
  std::vector<std::uint32_t> at;
  std::vector<SelectorSample> samples;
  std::vector<std::array<std::int64_t, 3>> mnk;
};

// One selector per operand type, its alignment key as its table shows cuBLAS choosing.
std::vector<GemmCalibration::Selector> build_selectors(const std::map<DType, SelectorPoints>& sel) {
  std::vector<GemmCalibration::Selector> out;
  for (const auto& [dtype, sp] : sel) {
    GemmCalibration::Selector s;
    s.dtype = dtype;
    s.alignment = selector_alignment(sp.samples);
    std::vector<GemmSelectorKey> keys;
    keys.reserve(sp.samples.size());
    for (std::size_t i = 0; i < sp.samples.size(); ++i) {
      const auto [m, n, k] = sp.mnk[i];
      keys.push_back(gemm_selector_key(sp.samples[i].shape, m, n, k, false,
                                       sp.samples[i].transposed_weight, dtype, s.alignment));
    }
    s.index =
        ResidualInterpolator<6>(std::move(keys), sp.at, ResidualInterpolator<6>::NodeBoxes::kKept);
    out.push_back(std::move(s));
  }
  return out;
}

// A calibration point's dimension as GemmLaunchPoint holds it.
std::int32_t launch_point_dimension(const Profile& p, std::int64_t v, const char* field) {
  if (v > std::numeric_limits<std::int32_t>::max())
    throw ProfileError(p.file, std::string("gemm.points.") + field, "over 2^31 - 1");
  return static_cast<std::int32_t>(v);
}

}  // namespace

void build_indexes(GemmCalibration& d) {
  const Profile& p = *d.profile;
  const std::size_t nc = p.gemm_configs.size();
  std::vector<std::vector<GemmResidualKey>> kpts(nc), cpts(nc);
  std::vector<std::vector<double>> kres(nc), cres(nc);
  d.points_per_config.assign(nc, 0);
  d.fit_range.assign(nc, GemmFitRange{});
  d.access_bytes.clear();
  for (const GemmConfigFit& c : p.gemm_configs)
    d.access_bytes.push_back(
        static_cast<std::uint8_t>(operand_access_bytes(classify_kernel(c.config).gemm, c.dtype)));
  if (d.spec != nullptr) d.traffic_floor = traffic_floor_ops(p, ops_with_small_calls(p, *d.spec));
  for (const GemmPoint& pt : p.gemm_points)
    ++d.points_per_config[static_cast<std::size_t>(pt.config)];
  // Where each configuration's points start in d.points.
  d.config_begin.assign(nc + 1, 0);
  for (std::size_t c = 0; c < nc; ++c)
    d.config_begin[c + 1] = d.config_begin[c] + static_cast<std::uint32_t>(d.points_per_config[c]);
  std::vector<std::uint32_t> next(d.config_begin.begin(), d.config_begin.end() - 1);
  d.points.resize(p.gemm_points.size());
  std::map<DType, SelectorPoints> sel;
  for (const GemmPoint& pt : p.gemm_points) {
    const auto ci = static_cast<std::size_t>(pt.config);
    const std::uint32_t at = next[ci]++;
    d.points[at] = {launch_point_dimension(p, pt.batch, "batch"),
                    launch_point_dimension(p, pt.m, "m"), launch_point_dimension(p, pt.n, "n"),
                    launch_point_dimension(p, pt.k, "k"), pt.grid};
    const GemmConfigFit& c = p.gemm_configs[ci];
    GemmShape s;
    s.batch = pt.batch;
    s.m = pt.m;
    s.n = pt.n;
    s.k = pt.k;
    const LaunchSize launch = d.launch_of(at);
    const GemmWork w = gemm_work(c, s, launch.blocks, launch.split, dtype_bytes(c.dtype));
    const double kern = gemm_wave_kernel_us(c, *d.spec, w);
    const GemmShapeKey shape = gemm_shape_key(pt.batch, pt.m, pt.n, pt.k);
    const GemmResidualKey key = gemm_residual_key(shape, c, *d.spec, w.blocks);
    extend_fit_range(d.fit_range[ci], w);
    const CalibrationResiduals r = calibration_residuals(p, pt.op, d.traffic_floor, pt.us, kern);
    if (r.call) {
      cpts[ci].push_back(key);
      cres[ci].push_back(*r.call);
    }
    if (r.kernel) {
      kpts[ci].push_back(key);
      kres[ci].push_back(*r.kernel);
    }
    SelectorPoints& sp = sel[c.dtype];
    sp.at.push_back(at);
    sp.samples.push_back(
        {shape, pt.transposed_weight,
         operand_alignment_bytes(pt.m, pt.n, pt.k, false, pt.transposed_weight, c.dtype),
         static_cast<std::int32_t>(ci)});
    sp.mnk.push_back({pt.m, pt.n, pt.k});
  }
  for (std::size_t c = 0; c < nc; ++c) {
    d.kernel_residual.push_back(ResidualInterpolator<5>::residuals_only(
        std::move(kpts[c]), std::move(kres[c]), kNeighbours));
    d.call_residual.push_back(ResidualInterpolator<5>::residuals_only(
        std::move(cpts[c]), std::move(cres[c]), kNeighbours));
  }
  d.selectors = build_selectors(sel);
  for (std::size_t c = 0; c < nc; ++c)
    d.config_index.emplace(p.gemm_configs[c].config, static_cast<std::int32_t>(c));
  d.launches = NearestLaunchIndex(d.config_begin, [&d](std::uint32_t i) { return d.launch_of(i); });
}

LaunchSize GemmCalibration::launch_of(std::uint32_t i) const noexcept {
  const GemmLaunchPoint& pt = points[i];
  return {blocks_from_grid(pt.grid, pt.batch), split_k_from_grid(pt.grid, pt.batch)};
}

std::optional<std::uint32_t> GemmCalibration::nearest_launch(std::int32_t cfg,
                                                             const Dim3& grid) const noexcept {
  if (cfg < 0) return std::nullopt;
  const LaunchSize query{static_cast<double>(grid.volume()), split_k_from_grid(grid, 1)};
  return launches.nearest(static_cast<std::size_t>(cfg), query,
                          [this](std::uint32_t i) { return launch_of(i); });
}

}  // namespace pm2lat
