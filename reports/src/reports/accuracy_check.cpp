#include "pm2lat/reports/accuracy_check.h"

#include <algorithm>
#include <map>

#include "pm2lat/prediction_error.h"
#include "pm2lat/reports/eval/error_stats.h"
#include "pm2lat/reports/input_file.h"
#include "pm2lat/reports/run_summary.h"

namespace pm2lat::reports {

CheckResult check_accuracy(const RunTable& table, double max_mape_pct,
                           std::optional<KernelFamily> family) {
  struct Acc {
    ErrorStats stats;
    double measured = 0, predicted = 0;
  };
  Acc all;
  std::map<KernelFamily, Acc> by_family;
  for (std::size_t i = 0; i < table.size(); ++i) {
    const KernelRow& k = table.kernels()[i];
    if (family && k.family != *family) continue;
    const std::size_t own = table.own_target(i);
    if (!k.measured() || own == RunTable::npos || is_communication(table, i)) continue;
    const double p = table.predicted_us(i, own);
    if (std::isnan(p)) continue;
    for (Acc* a : {&all, &by_family[k.family]}) {
      a->stats.add(p, k.measured_us);
      a->measured += k.measured_us;
      a->predicted += p;
    }
  }
  if (all.stats.size() == 0) {
    throw InputError(
        family ? "no kernel of family '" + std::string(to_string(*family)) +
                     "' was both measured and predicted on the GPU it ran on"
               : "no kernel was both measured and predicted on the GPU it ran on (was the run "
                 "measured, and is its GPU known?)");
  }
  CheckResult r;
  r.kernels = all.stats.size();
  r.mape_pct = all.stats.summary().mape_pct;
  r.total_error_pct = error_pct(all.predicted, all.measured);
  for (const auto& [f, a] : by_family) {
    r.families.push_back(
        {f, a.stats.size(), a.stats.summary().mape_pct, error_pct(a.predicted, a.measured)});
  }
  std::stable_sort(
      r.families.begin(), r.families.end(),
      [](const FamilyAccuracy& a, const FamilyAccuracy& b) { return a.kernels > b.kernels; });
  r.passed = r.mape_pct <= max_mape_pct;
  return r;
}

}  // namespace pm2lat::reports
