// The one place the runtime talks to the predictor: load profiles and targets, classify a
// kernel name, predict a record for every target. Everything the shim needs from
// predictor/ goes through here, so a change in that API touches this file only.
#pragma once

#include <cstdint>
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

// One device of the run as the driver names and describes it; a run's devices are listed by
// ordinal (the `device` of each record).
struct RunDevice {
  std::string name;  // "" when the driver did not say
  GpuHardware hardware;
};

class PredictorAdapter {
 public:
  // Loads the profiles (PM2LAT_PROFILES or the shipped ones) and resolves `targets` plus the
  // GPU of each of the run's `devices` (by ordinal), each distinct one once; a GPU the
  // catalogue does not list is scored as what DeviceCatalogue::stand_in finds, said in
  // `problems` once. A record is scored against the GPU of the device it ran on, so a process
  // driving GPUs of two models (or only its second device) is never compared with another
  // GPU's forecast.
  // Problems (a bad profile, an unknown target) are returned in `problems`, one clear line
  // each; the adapter then predicts for what it could load, or for nothing.
  PredictorAdapter(const std::vector<std::string>& targets, const std::vector<RunDevice>& devices,
                   std::vector<std::string>* problems);
  ~PredictorAdapter();

  bool available() const noexcept;
  // Canonical names of the targets predictions are made for: the requested ones in order, then
  // the GPU of each of the run's devices (in ordinal order, each once) the catalogue knows.
  const std::vector<std::string>& target_names() const noexcept { return names_; }
  // Canonical catalogue name of the GPU of device `device`; "" when unknown (not described,
  // or no catalogue GPU stands in for it).
  const std::string& device_gpu(std::int32_t device) const noexcept;
  // The GPUs of the run's devices, each once, in ordinal order (one on the usual machine).
  std::vector<std::string> device_models() const;

  static KernelClass classify(std::string_view kernel_name) noexcept;

  // One prediction per target, in target_names() order; a record seen before (same kernel,
  // launch and context) is served from the target set's prediction cache. Never throws: a
  // record a model cannot handle gets no predictions. One caller at a time (the worker).
  void predict(const KernelRecord& record, const KernelClass& cls,
               std::vector<std::pair<std::string, Prediction>>& out) const;

  // The physical lower bound of the record's work on the GPU it ran on (the measurement
  // guard's "could not have moved in the measured time"); 0 when unknown.
  double source_lower_bound_us(const KernelRecord& record, const KernelClass& cls) const noexcept;
  // How many times device `device`'s GPU's time a kernel can take on target `name`
  // (measured_guard.h): what an anchored forecast's ratio stays within. Any ratio when either
  // GPU is unknown.
  GpuTimeRatioRange time_ratio_range(std::string_view name, std::int32_t device) const noexcept;

 private:
  static constexpr std::size_t kNoTarget = static_cast<std::size_t>(-1);
  // The target a device's GPU is (kNoTarget: none), and that target's spec (null: none).
  std::size_t target_of(std::int32_t device) const noexcept;
  const DeviceSpec* spec_of(std::int32_t device) const noexcept;

  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<std::string> names_;
  // By device ordinal: the index in names_ of the GPU it is predicted and scored as.
  std::vector<std::size_t> device_targets_;
};

}  // namespace pm2lat::shim
