// A device profile: everything calibrated about one GPU (per kernel configuration wave
// coefficients, bandwidth curves, overhead floors) plus where it came from.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pm2lat/device_spec.h"
#include "pm2lat/kernel_record.h"
#include "pm2lat/profile_error.h"

namespace pm2lat {

inline constexpr int kProfileSchemaVersion = 1;

struct Provenance {
  std::string source;   // e.g. "neusight kernels.csv.gz (sitar-lab/NeuSight, MIT)"
  std::string tool;     // "pm2lat-calibrate import 0.1.0"
  std::string created;  // ISO-8601 date
  std::map<std::string, std::string> environment;  // driver, CUDA, cuBLAS versions, clocks
  std::string notes;
};

struct Profile {
  int version = kProfileSchemaVersion;
  std::string device;  // canonical catalogue name
  Provenance provenance;
  std::string file;    // where it was loaded from (not serialised)
};

}  // namespace pm2lat
