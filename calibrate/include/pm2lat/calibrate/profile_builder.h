// Builds a device profile from measured calls of one GPU: per-operator call overheads,
// per kernel-configuration GEMM wave-model fits, per-operator memory-bound fits, and the
// calibration points themselves.
#pragma once

#include <string>
#include <vector>

#include "pm2lat/calibrate/neusight_table.h"
#include "pm2lat/device_spec.h"
#include "pm2lat/profile.h"

namespace pm2lat::calibrate {

struct BuildOptions {
  TimeBasis basis = TimeBasis::kCall;  // what the measurements time
  Provenance provenance;
};

struct BuildReport {
  std::size_t gemm_rows = 0, gemm_configs = 0, vector_rows = 0, vector_fits = 0;
  std::size_t skipped_rows = 0;  // kernels of no modelled family (e.g. conv for now)
};

Profile build_profile(const std::vector<const MeasuredCall*>& calls, const DeviceSpec& spec,
                      const BuildOptions& options, BuildReport* report = nullptr);

// Appends GEMM configurations and points for the GEMM kernels among `calls` to `profile`
// (its basis must be set); used for kernel records of real runs (replayed traces).
void append_gemm_section(const std::vector<const MeasuredCall*>& calls, const DeviceSpec& spec,
                         Profile& profile, BuildReport* report = nullptr);

// Pieces exposed for tests.
// Lowest typical latency of a set of calls: the `q` quantile (host-dispatch floor).
double latency_floor(std::vector<double> latencies, double q = 0.02);

}  // namespace pm2lat::calibrate
