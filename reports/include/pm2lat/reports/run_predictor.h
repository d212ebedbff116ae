// Predicting kernels of a run onto every target GPU: the run's TargetSet (each name resolved
// once, repeated records predicted once) filling a RunTable's prediction columns, one record
// at a time.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pm2lat/kernel_class.h"
#include "pm2lat/kernel_record.h"
#include "pm2lat/measured_guard.h"
#include "pm2lat/predictor.h"
#include "pm2lat/reports/run_table.h"
#include "pm2lat/target_set.h"

namespace pm2lat::reports {

class RunPredictor {
 public:
  // Distinct (kernel, shape) pairs a replay caches: a long trace has tens of thousands.
  static constexpr std::size_t kCacheEntries = std::size_t{1} << 18;

  // Resolves and adds the targets (UnknownDeviceError for an unknown GPU name).
  RunPredictor(Predictor& predictor, const std::vector<std::string>& targets);

  // Adds a target (resolving its name once); returns its index among this run's targets.
  std::size_t add_target(std::string_view gpu_name);
  std::size_t add_target(const DeviceSpec& spec);
  const std::vector<std::string>& target_names() const noexcept { return targets_.names(); }
  const TargetSet& targets() const noexcept { return targets_; }
  bool spec_scaled(std::size_t target) const;

  // Creates the table's columns for these targets (in this order, before other columns).
  void add_columns(RunTable& table) const;

  // The catalogue entry of the GPU records were observed on (nullptr when unknown): resolve
  // it once per run, not per record.
  const DeviceSpec* source_spec(std::string_view gpu) const noexcept;

  // Predicts `record` on every target into row `row` of `table`. `source` is the GPU the
  // record was observed on (nullptr = unknown). A measured record whose source is among the
  // targets goes through the measurement guard (pm2lat/measured_guard.h): its other targets'
  // forecasts are anchored when the model's prediction for the source disagrees with it.
  void predict(const KernelRecord& record, const KernelClass& cls, const DeviceSpec* source,
               RunTable& table, std::size_t row) const;

  const PredictionCache& cache() const noexcept { return targets_.cache(); }

  // The measurement guard's policy; none: the model's forecasts only.
  void set_guard(std::optional<GuardPolicy> guard) noexcept { guard_ = guard; }

 private:
  GuardVerdict judge(const KernelRecord& record, const KernelClass& cls, const DeviceSpec* source,
                     std::span<const Prediction> predictions) const;

  std::optional<GuardPolicy> guard_ = GuardPolicy{};
  mutable TargetSet targets_;                 // predicting fills its cache
  mutable std::vector<std::size_t> columns_;  // table column per target (set by add_columns)
};

}  // namespace pm2lat::reports
