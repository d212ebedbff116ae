// One CSV row per scored prediction, in the terms the error-band table groups by (family,
// model, flag group, same/cross GPU, time basis) with its measured and predicted time:
// scripts/build-error-bands.py estimates calibrate/profiles/error_bands.json from these rows
// of out-of-sample predictions (`pm2lat eval kernels --band-rows FILE`).
#pragma once

#include <iosfwd>
#include <string_view>

#include "pm2lat/kernel_class.h"
#include "pm2lat/prediction.h"

namespace pm2lat::reports {

class BandRows {
 public:
  // Writes the header line.
  explicit BandRows(std::ostream& out);
  // `shape`: the same for the same shape on every GPU (folds of the estimate split on it).
  void add(std::string_view shape, KernelFamily family, const Prediction& p, bool same_gpu,
           double measured_us);

 private:
  std::ostream& out_;
};

}  // namespace pm2lat::reports
