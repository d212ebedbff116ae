// Predicting kernels of a run onto every target GPU: resolves the target names users type
// and fills a RunTable's prediction columns, one record at a time.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pm2lat/kernel_class.h"
#include "pm2lat/kernel_record.h"
#include "pm2lat/predictor.h"
#include "pm2lat/reports/prediction_memo.h"
#include "pm2lat/reports/run_table.h"

namespace pm2lat::reports {

// The catalogue name of a GPU, or an InputError naming the closest known GPUs.
std::string canonical_gpu(const Predictor& predictor, std::string_view name);

class RunPredictor {
 public:
  // Resolves and adds the targets (InputError for an unknown GPU name).
  RunPredictor(Predictor& predictor, const std::vector<std::string>& targets);

  // Adds a target (resolving it); returns its index among this predictor's targets.
  std::size_t add_target(std::string_view gpu_name);
  const std::vector<std::string>& target_names() const noexcept { return names_; }
  bool spec_scaled(std::size_t target) const;

  // Creates the table's columns for these targets (in this order, before other columns).
  void add_columns(RunTable& table) const;

  // The catalogue entry of the GPU records were observed on (nullptr when unknown): resolve
  // it once per run, not per record.
  const DeviceSpec* source_spec(std::string_view gpu) const noexcept;

  // Predicts `record` on every target into row `row` of `table`. `source` is the GPU the
  // record was observed on (nullptr = unknown).
  // Repeated (kernel, shape) pairs are predicted once (prediction_memo.h).
  void predict(const KernelRecord& record, const KernelClass& cls, const DeviceSpec* source,
               RunTable& table, std::size_t row) const;

  const PredictionMemo& memo() const noexcept { return memo_; }

 private:
  Predictor& predictor_;
  std::vector<TargetId> ids_;
  std::vector<std::string> names_;
  mutable std::vector<std::size_t> columns_;  // table column per target (set by add_columns)
  mutable PredictionMemo memo_;
  mutable std::string key_;  // reused key buffer
};

}  // namespace pm2lat::reports
