// The one place the runtime talks to the predictor: load profiles and targets, classify a
// kernel name, predict a record for every target. Everything the shim needs from
// predictor/ goes through here, so a change in that API touches this file only.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pm2lat/device_catalogue.h"
#include "pm2lat/kernel_class.h"
#include "pm2lat/kernel_record.h"
#include "pm2lat/measured_guard.h"
#include "pm2lat/prediction.h"

namespace pm2lat::shim {

class PredictorAdapter {
 public:
  // Loads the profiles (PM2LAT_PROFILES or the shipped ones) and resolves `targets` plus the
  // GPU the program runs on (`source_device`, the driver's name for it, and what the driver
  // reports of it), each name once; a GPU the catalogue does not list is scored as what
  // DeviceCatalogue::stand_in finds, said in `problems`.
  // Problems (a bad profile, an unknown target) are returned in `problems`, one clear line
  // each; the adapter then predicts for what it could load, or for nothing.
  PredictorAdapter(const std::vector<std::string>& targets, const std::string& source_device,
                   GpuHardware hardware, std::vector<std::string>* problems);
  ~PredictorAdapter();

  bool available() const noexcept;
  // Canonical names of the targets predictions are made for: the requested ones in order, then
  // the GPU the program runs on when the catalogue knows it.
  const std::vector<std::string>& target_names() const noexcept { return names_; }
  // Canonical catalogue name of the GPU the program runs on; "" when unknown.
  const std::string& source_name() const noexcept { return source_name_; }

  static KernelClass classify(std::string_view kernel_name) noexcept;

  // One prediction per target, in target_names() order; a record seen before (same kernel,
  // launch and context) is served from the target set's prediction cache. Never throws: a
  // record a model cannot handle gets no predictions. One caller at a time (the worker).
  void predict(const KernelRecord& record, const KernelClass& cls,
               std::vector<std::pair<std::string, Prediction>>& out) const;

  // The physical lower bound of the record's work on the GPU the program runs on (the
  // measurement guard's "could not have moved in the measured time"); 0 when unknown.
  double source_lower_bound_us(const KernelRecord& record, const KernelClass& cls) const noexcept;
  // How many times the run's GPU's time a kernel can take on target `name` (measured_guard.h):
  // what an anchored forecast's ratio stays within. Any ratio when either GPU is unknown.
  GpuTimeRatioRange time_ratio_range(std::string_view name) const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<std::string> names_;
  std::string source_name_;
};

}  // namespace pm2lat::shim
