// Which operators' host dispatch a call-timed profile measured: a call whose kernel would take
// less than a couple of microseconds at the GPU's peak rate times its dispatch, not its
// kernel, so the profile's `pre_us` of that operator is a measurement rather than an
// intercept extrapolated from large shapes. Derived from the calibration points, which the
// predictor releases after load: it keeps this summary (Predictor::measured_dispatch()).
#pragma once

#include <map>
#include <set>
#include <string>

#include "pm2lat/device_spec.h"
#include "pm2lat/profile.h"

namespace pm2lat {

struct MeasuredDispatch {
  const DeviceSpec* spec = nullptr;      // the GPU the profile measured
  std::map<std::string, double> pre_us;  // op key -> measured dispatch (µs)
};

// The shortest roofline time of a call-timed profile's calibration calls, per operator: noted
// from the GEMM and vector points the profile holds (again as other tables are read: the
// predictor never holds both at once).
using SmallestCalls = std::map<std::string, double>;
void note_smallest_calls(const Profile& profile, const DeviceSpec& spec, SmallestCalls& smallest);

// The operators with a calibration call too small to be kernel-bound (`smallest`, as noted
// above): the only ones whose call floor and dispatch a table pins down.
std::set<std::string> ops_with_small_calls(const SmallestCalls& smallest);
// The same for a profile that holds all its points. Empty for a kernel-timed profile.
std::set<std::string> ops_with_small_calls(const Profile& profile, const DeviceSpec& spec);

// The operators whose dispatch `profile` measured, with their `pre_us`: those with a
// calibration call too small to be kernel-bound (`smallest`, as noted above). Empty for a
// kernel-timed profile.
std::map<std::string, double> measured_dispatch(const Profile& profile,
                                                const SmallestCalls& smallest);

}  // namespace pm2lat
