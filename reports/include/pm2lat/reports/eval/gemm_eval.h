// `pm2lat eval gemm`: AIConfigurator-format GEMM tables (one framework linear call per row,
// device time) predicted on their own system, per system x dtype.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "pm2lat/calibrate/neusight_table.h"
#include "pm2lat/predictor.h"
#include "pm2lat/reports/eval/error_stats.h"

namespace pm2lat::reports {

struct GemmEvalGroup {
  std::string device, dtype;
  ErrorSummary error;
  bool spec_scaled = false;  // the system has no profile: predicted from the most similar GPU
};

struct GemmEvalResult {
  std::vector<GemmEvalGroup> devices;
  ErrorSummary overall;
  std::size_t unknown_devices = 0;
};

GemmEvalResult eval_gemm(Predictor& predictor, const std::vector<calibrate::MeasuredCall>& calls);
void print_gemm_eval(std::ostream& out, const GemmEvalResult& r);
nlohmann::json gemm_eval_json(const GemmEvalResult& r);

}  // namespace pm2lat::reports
