// A GPU predictions are made for, as the predictor resolved it once.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "pm2lat/device_spec.h"
#include "pm2lat/profile.h"

namespace pm2lat {

// A target's spec and, when calibrated, its profiles. A target with no profile of its own
// borrows the most similar calibrated GPU's profiles and scales them by spec ratios (results
// flagged spec_scaled).
struct Target {
  std::string name;                  // canonical catalogue name
  const DeviceSpec* spec = nullptr;  // never null
  // Own or borrowed profiles; empty = roofline only. Their fits and overheads, not their
  // calibration points: a predictor keeps what the models built from those.
  std::vector<const Profile*> profiles;
  const DeviceSpec* profile_spec = nullptr;  // the GPU the profiles were calibrated on
  bool spec_scaled = false;                  // profiles belong to another GPU
  // A MIG partition (DeviceSpec::partition_of): the target of its whole GPU, added with it. A
  // share of a GPU is never faster than the GPU: its forecasts are at least the whole's.
  static constexpr std::size_t kNoWhole = static_cast<std::size_t>(-1);
  std::size_t whole = kNoWhole;
};

// A target's number in the predictor that added it (and in every model of that predictor).
using TargetId = std::size_t;

}  // namespace pm2lat
