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

// The operators of `profile` whose call floor is their table's shortest calls' own traffic, not
// a floor of small calls: those with an overhead of their own and no calibration call too small
// to be kernel-bound (`small_call_ops`, ops_with_small_calls above). Calibration's floor is the
// 2nd percentile of an operator's calls, which on a table of ~50 calls of large tensors is its
// second-shortest one: it bounds no other call (NeuSight's L4 softmax: an 84 MB call's 365 us,
// where its 50 MB call took 88 us). A profile's empty-kernel launch ("*", standing in for an
// operator without an overhead of its own) is a floor of small calls.
std::set<std::string> traffic_floor_ops(const Profile& profile,
                                        const std::set<std::string>& small_call_ops);
// A call whose kernel takes `kernel_us` under overhead `o`: CallOverhead::call_us, but without
// the floor where the floor is traffic (traffic_floor_ops).
inline double table_call_us(const CallOverhead& o, bool floor_is_traffic, double kernel_us) {
  return floor_is_traffic ? o.pre_us + kernel_us : o.call_us(kernel_us);
}

// The operators whose dispatch `profile` measured, with their `pre_us`: those with a
// calibration call too small to be kernel-bound (`smallest`, as noted above). Empty for a
// kernel-timed profile.
std::map<std::string, double> measured_dispatch(const Profile& profile,
                                                const SmallestCalls& smallest);

}  // namespace pm2lat
