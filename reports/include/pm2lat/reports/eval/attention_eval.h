// `pm2lat eval attention`: AIConfigurator-format attention tables (one framework attention
// call per row, device time) predicted on their own system from the backend, the shape and
// the calibrated profiles, never from the row's latency; error per system x backend, with
// the KV-cache type broken out.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "pm2lat/calibrate/attention_table.h"
#include "pm2lat/predictor.h"
#include "pm2lat/reports/eval/error_stats.h"

namespace pm2lat::reports {

struct AttentionEvalSlice {
  std::string kv_cache_dtype;
  ErrorSummary error;
};

struct AttentionEvalGroup {
  std::string device;   // catalogue name of the system
  std::string backend;  // the table's kernel_source; " [op]" appended for non-prefill ops
  ErrorSummary error;
  std::vector<AttentionEvalSlice> by_kv_cache;
  bool spec_scaled = false;    // some predictions came from another GPU's calibration
  bool config_chosen = false;  // some came from another implementation than the backend's
};

struct AttentionEvalResult {
  std::vector<AttentionEvalGroup> groups;
  ErrorSummary overall;
  std::size_t unknown_devices = 0;
};

AttentionEvalResult eval_attention(Predictor& predictor,
                                   const std::vector<calibrate::AttentionMeasurement>& rows);
void print_attention_eval(std::ostream& os, const AttentionEvalResult& r);
// {"groups":[{"device","backend","n","mape_pct","median_ape_pct",...}], "overall":{...}}
nlohmann::json attention_eval_json(const AttentionEvalResult& r);

}  // namespace pm2lat::reports
