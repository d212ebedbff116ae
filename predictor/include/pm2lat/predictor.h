// The predictor: kernel record + target GPU -> predicted latency. The one entry point the
// runtime, the reports and the evaluation harnesses share.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pm2lat/device_catalogue.h"
#include "pm2lat/kernel_class.h"
#include "pm2lat/kernel_record.h"
#include "pm2lat/prediction.h"
#include "pm2lat/profile.h"

namespace pm2lat {

// A GPU predictions are made for: its spec and, when calibrated, its profile. A target with
// no profile of its own borrows the most similar calibrated GPU's profile and scales it by
// spec ratios (results flagged spec_scaled).
struct Target {
  std::string name;                          // canonical catalogue name
  const DeviceSpec* spec = nullptr;          // never null
  std::vector<const Profile*> profiles;      // own or borrowed profiles; empty = roofline only
  const DeviceSpec* profile_spec = nullptr;  // the GPU the profiles were calibrated on
  bool spec_scaled = false;                  // profiles belong to another GPU
};

using TargetId = std::size_t;

struct PredictOptions {
  // Kernel time (CUPTI-like) or whole-call time with host dispatch (CUDA events around a
  // framework call, as in the NeuSight tables).
  TimeBasis basis = TimeBasis::kKernel;
  // The GPU the record was observed on (canonical or forgiving name); empty = unknown.
  // When it is not the target, the target's own kernel configuration is chosen from its
  // profile instead of the one in the record.
  std::string_view source_device;
  // The same, already resolved (Predictor::catalogue().find): saves the name lookup on a hot
  // path. Takes precedence over source_device when set.
  const DeviceSpec* source_spec = nullptr;
  // Time per kernel as a replayed CUDA graph runs it back to back (the AIConfigurator
  // tables' timing) rather than as an isolated kernel (CUPTI in an eager program).
  bool graph_replay = false;
};

class Predictor {
 public:
  // Loads every profile (*.json) under `profile_dir` and the device catalogue shipped with
  // them. Throws ProfileError (naming file and field) on a bad profile.
  static Predictor from_directory(const std::filesystem::path& profile_dir);
  // The directory of the shipped profiles: $PM2LAT_PROFILES if set, else the install or
  // source-tree location compiled in.
  static std::filesystem::path default_profile_dir();

  Predictor(DeviceCatalogue catalogue, std::vector<Profile> profiles);
  Predictor(Predictor&&) noexcept;
  Predictor& operator=(Predictor&&) noexcept;
  ~Predictor();

  // Resolves a forgiving GPU name ("H100", "h100-sxm", "NVIDIA H100 80GB HBM3") and adds it
  // as a target. Throws UnknownDeviceError listing close matches.
  TargetId add_target(std::string_view gpu_name);
  const Target& target(TargetId id) const;
  std::size_t target_count() const noexcept;

  const DeviceCatalogue& catalogue() const noexcept;
  const std::vector<Profile>& profiles() const noexcept;

  // Thread-compatible: const calls may run concurrently.
  Prediction predict(const KernelRecord& record, const KernelClass& cls, TargetId target,
                     const PredictOptions& options = {}) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pm2lat
