// One profile's GEMM section as the GEMM predictor holds it after load: the calibration
// points grouped by kernel configuration, each configuration's residual interpolation, and
// per operand type the nearest-shape index that chooses configurations
// (models/gemm_predictor.cpp reads them; the profile itself stays the owner of the fits).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pm2lat/device_spec.h"
#include "pm2lat/kernel_launch.h"
#include "pm2lat/models/gemm_fit_range.h"
#include "pm2lat/models/gemm_neighbourhood.h"
#include "pm2lat/models/nearest_launch.h"
#include "pm2lat/models/residual_interpolator.h"
#include "pm2lat/profile.h"

namespace pm2lat {

// A configuration needs this many calibration points before its own fit is trusted for a
// kernel seen by name; with fewer the nearest-shape choice decides.
constexpr std::int32_t kMinConfigPoints = 3;

// What a prediction reads of a calibration point once the indexes are built: its shape and
// launch grid (not its operator or time; its configuration is where it lies in
// GemmCalibration::points). Dimensions are 32-bit (checked at build; 28 bytes a point instead
// of 48, for every calibrated GEMM a run holds).
struct GemmLaunchPoint {
  std::int32_t batch = 1, m = 0, n = 0, k = 0;
  Dim3 grid;
};

// One profile's GEMM section, indexed at load: per-config point lists, residual
// interpolations and, per operand type, the nearest-shape index that chooses configurations.
struct GemmCalibration {
  const Profile* profile = nullptr;
  const DeviceSpec* spec = nullptr;
  // The calibration points grouped by configuration (in profile order within one): config
  // c's are points[config_begin[c], config_begin[c + 1]).
  std::vector<GemmLaunchPoint> points;
  std::vector<std::uint32_t> config_begin;
  // Per configuration, its distinct calibrated launches (groups are configurations).
  NearestLaunchIndex launches;
  std::vector<ResidualInterpolator<5>> kernel_residual;  // per config
  std::vector<ResidualInterpolator<5>> call_residual;
  std::vector<std::int32_t> points_per_config;
  std::vector<GemmFitRange> fit_range;  // per config: the K loops its calibration covered
  // Per config: bytes per operand access its name states (models/narrow_operand_access.h).
  std::vector<std::uint8_t> access_bytes;
  // The operators whose call floor is their table's shortest calls' traffic (call_dispatch.h):
  // it holds no call of theirs (NeuSight's A100-PCIE-80GB `linear`, timed at model-like shapes
  // only: a floor of 198.8 us).
  std::set<std::string> traffic_floor;
  // Nearest calibrated shapes per operand type (a profile may calibrate several types; a
  // shape must only ever choose among configurations of its own type), answering the index
  // of the point in `points`.
  struct Selector {
    DType dtype = DType::kUnknown;
    // How its keys (and a query's) tell operands' alignments apart: by this GPU's table.
    SelectorAlignment alignment = SelectorAlignment::kVectors;
    ResidualInterpolator<6> index;
  };
  std::vector<Selector> selectors;
  std::unordered_map<std::string_view, std::int32_t> config_index;  // config name -> index

  // The configuration of point `i` of `points`.
  std::int32_t config_of(std::uint32_t i) const noexcept {
    const auto after = std::upper_bound(config_begin.begin(), config_begin.end(), i);
    return static_cast<std::int32_t>(after - config_begin.begin()) - 1;
  }

  // The launch point `i` ran (split-K and blocks from its grid and batch).
  LaunchSize launch_of(std::uint32_t i) const noexcept;

  // The calibrated launch of configuration `cfg` nearest `grid` (models/nearest_launch.h);
  // nullopt when the configuration has none.
  std::optional<std::uint32_t> nearest_launch(std::int32_t cfg, const Dim3& grid) const noexcept;

  const Selector* selector_for(DType t) const {
    for (const auto& s : selectors) {
      if (s.dtype == t) return &s;
    }
    return nullptr;
  }

  // The one lookup of a kernel by name: its configuration's index when this profile
  // calibrated it with enough points to trust its fit, else -1.
  std::int32_t trusted_config(std::string_view config) const {
    const auto it = config_index.find(config);
    if (it == config_index.end() ||
        points_per_config[static_cast<std::size_t>(it->second)] < kMinConfigPoints)
      return -1;
    return it->second;
  }

  std::size_t points_with_dtype(DType t) const {
    std::size_t n = 0;
    for (std::size_t c = 0; c < profile->gemm_configs.size(); ++c) {
      if (profile->gemm_configs[c].dtype == t) n += static_cast<std::size_t>(points_per_config[c]);
    }
    return n;
  }

  bool has_dtype(DType t) const {
    return std::ranges::any_of(profile->gemm_configs,
                               [t](const GemmConfigFit& c) { return c.dtype == t; });
  }
};

// Builds `d`'s points and indexes from d.profile (d.profile and d.spec set). Throws
// ProfileError for a point dimension over 2^31 - 1.
void build_indexes(GemmCalibration& d);

}  // namespace pm2lat
