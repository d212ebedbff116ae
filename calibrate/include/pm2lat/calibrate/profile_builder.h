// Builds a device profile from measured calls of one GPU: per-operator call overheads,
// per kernel-configuration GEMM wave-model fits, per-operator memory-bound fits, and the
// calibration points themselves.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "pm2lat/calibrate/borrowed_dispatch.h"
#include "pm2lat/calibrate/neusight_table.h"
#include "pm2lat/device_spec.h"
#include "pm2lat/profile.h"

namespace pm2lat::calibrate {

struct BuildOptions {
  TimeBasis basis = TimeBasis::kCall;  // what the measurements time
  Provenance provenance;
  // Host dispatch (µs) to use instead of the table's own estimate, by operator: that of the
  // operators its calls cannot time (borrowed_dispatch.h). The fits then take kernels as
  // calls minus these. The call floor stays the table's own.
  std::map<std::string, double> borrowed_dispatch_us;
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

// The call overheads `calls` (one GPU's, call-timed) estimate on their own, and the operators
// with a call small enough to time the dispatch: what borrowed_dispatch_us() pools across
// tables.
TableOverheads estimate_table_overheads(const std::vector<const MeasuredCall*>& calls,
                                        const DeviceSpec& spec);

// Pieces exposed for tests.
// Lowest typical latency of a set of calls: the `q` quantile (host-dispatch floor).
double latency_floor(std::vector<double> latencies, double q = 0.02);

}  // namespace pm2lat::calibrate
