// `pm2lat eval gemm`: AIConfigurator-format GEMM tables (one framework linear call per row,
// device time) predicted on their own system, per system x type ("bf16", "fp8", "fp8_block",
// "nvfp4": the operand type with its scaling) and per system.
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
  std::string device, dtype;  // dtype: "" for a device's total over its types
  ErrorSummary error;
  bool spec_scaled = false;  // the system has no profile: predicted from the most similar GPU
};

struct GemmEvalResult {
  std::vector<GemmEvalGroup> groups;   // per system x type
  std::vector<GemmEvalGroup> devices;  // per system, all types
  ErrorSummary overall;
  std::size_t unknown_devices = 0;
};

// `rows_out`, when given, receives one CSV line per call: system, dtype, m, n, k, measured and
// predicted µs, the configuration used and the prediction's flags.
GemmEvalResult eval_gemm(Predictor& predictor, const std::vector<calibrate::MeasuredCall>& calls,
                         std::ostream* rows_out = nullptr);
void print_gemm_eval(std::ostream& os, const GemmEvalResult& r);
// {"groups": [{"device", "dtype", "n", "mape_pct", "median_ape_pct", "p90_ape_pct",
//  "spec_scaled"}], "devices": [{"device", "n", ...}], "overall": {...}}
nlohmann::json gemm_eval_json(const GemmEvalResult& r);

// The type label of a GEMM call ("bf16", "fp8", "fp8_block", "nvfp4", ...).
std::string gemm_call_type(const calibrate::MeasuredCall& call);

}  // namespace pm2lat::reports
