// The accuracy gate for CI (`pm2lat check`): the mean absolute percentage error of single
// kernels, predicted vs measured on the GPU each ran on, against a threshold. Communication
// kernels are left out (run_summary.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pm2lat/kernel_class.h"
#include "pm2lat/reports/run_table.h"

namespace pm2lat::reports {

struct FamilyAccuracy {
  KernelFamily family = KernelFamily::kUnknown;
  std::size_t kernels = 0;
  double mape_pct = 0;
  double total_error_pct = 0;  // error of the family's summed time
};

struct CheckResult {
  std::size_t kernels = 0;  // kernels compared
  double mape_pct = 0;
  double total_error_pct = 0;            // error of the summed kernel time
  std::vector<FamilyAccuracy> families;  // by kernels compared, descending
  bool passed = false;
};

// `family`: compare only kernels of this family (nullopt: all). Throws InputError when no
// kernel was both measured and predicted on its own GPU (nothing to check).
CheckResult check_accuracy(const RunTable& table, double max_mape_pct,
                           std::optional<KernelFamily> family);

}  // namespace pm2lat::reports
