// How far a prediction is from the measurement: the one definition every evaluation, run
// summary, accuracy check and the runtime's drift monitor report.
//
//   error_pct = |predicted - measured| / measured * 100
//
// Absolute: a family over-predicted by 20 % and another under-predicted by 20 % are both
// 20 % off, and must not average to 0 % or pass a threshold. Which way a prediction errs is
// read from the predicted and measured times reported next to it. Applied to one kernel
// (per-kernel MAPE, median) or to summed times (a family's, a run's: the error of the total).
#pragma once

#include <cmath>

namespace pm2lat {

// NaN when nothing was measured (measured not positive).
inline double error_pct(double predicted, double measured) noexcept {
  if (!(measured > 0)) return std::nan("");
  return std::fabs(predicted - measured) / measured * 100.0;
}

}  // namespace pm2lat
