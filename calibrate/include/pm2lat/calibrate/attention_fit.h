// Calibration of the attention model (predictor/include/pm2lat/models/attention_model.h):
// groups one GPU's attention measurements by kernel configuration (implementation, head
// dimension, KV type, windowed or not), chooses per configuration the CTA tile, CTAs per SM
// and GQA packing that explain the measurements best, fits the five coefficients by
// non-negative least squares on relative error, and keeps the measurements as calibration
// points for the residual interpolation.
#pragma once

#include <cstddef>
#include <vector>

#include "pm2lat/calibrate/attention_table.h"
#include "pm2lat/device_spec.h"
#include "pm2lat/profile.h"

namespace pm2lat::calibrate {

struct AttentionBuildReport {
  std::size_t rows = 0, configs = 0;
  double fit_mape_pct = 0;  // over all rows, of the fitted model without interpolation
};

// Appends the attention section built from `rows` (all of one GPU) to `profile`.
void build_attention_section(const std::vector<const AttentionMeasurement*>& rows,
                             const DeviceSpec& spec, Profile& profile,
                             AttentionBuildReport* report = nullptr);

}  // namespace pm2lat::calibrate
