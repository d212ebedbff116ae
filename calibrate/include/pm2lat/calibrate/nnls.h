// Non-negative least squares on relative error, for the small (<= 6 coefficient) linear
// models the calibrator fits: minimise sum(((x_i . c) - y_i) / y_i)^2 subject to c >= 0.
#pragma once

#include <optional>
#include <vector>

namespace pm2lat::calibrate {

struct NnlsResult {
  std::vector<double> coef;
  double mape_pct = 0;  // mean |x_i . c - y_i| / y_i over the rows, in percent
};

// rows[i] are the regressors of observation i, y[i] > 0 the target. Exact: every subset of
// active coefficients is solved and the best feasible one kept (2^n small systems).
// Returns nullopt when there are no rows or no feasible solution.
std::optional<NnlsResult> nnls_relative(const std::vector<std::vector<double>>& rows,
                                        const std::vector<double>& y);

}  // namespace pm2lat::calibrate
