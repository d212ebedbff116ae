// Which operators' host dispatch a call-timed profile measured: a call whose kernel would take
// less than a couple of microseconds at the GPU's peak rate times its dispatch, not its
// kernel, so the profile's `pre_us` of that operator is a measurement rather than an
// intercept extrapolated from large shapes. Derived from the calibration points, which the
// predictor releases after load: it keeps this summary (Predictor::host_dispatch()).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "pm2lat/device_spec.h"
#include "pm2lat/profile.h"

namespace pm2lat {

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

// Calls within this factor of their floor say nothing about the kernel behind them.
inline constexpr double kCallAboveFloor = 1.5;

// What one calibration point says of a model that times its kernel at `kernel_us`, as log
// residuals (measured over modelled): `call` against the whole call as its table timed it (a
// call-timed profile's points only), and `kernel` against the kernel alone: a kernel-timed
// point's time, or a call-timed one's less the dispatch before its kernel, where the call is
// above its floor or the floor is the table's own traffic (traffic_floor_ops). Absent where
// the point says nothing of it.
struct CalibrationResiduals {
  std::optional<double> call;
  std::optional<double> kernel;
};
CalibrationResiduals calibration_residuals(const Profile& profile, const std::string& op,
                                           const std::set<std::string>& traffic_floor,
                                           double measured_us, double kernel_us);

// Each call-timed table's measured dispatch with its floor, per operator: the operators with a
// calibration call too small to be kernel-bound (`smallest`, as noted above) and a `pre_us`;
// parallel to the profiles it was read from, empty for a kernel-timed one.
using MeasuredDispatchByProfile = std::vector<std::map<std::string, CallOverhead>>;

// Per operator, the median host dispatch (floor and pre) of the tables that measured it; for an
// operator none measured, the median over tables of each one's median operator.
class DispatchMedians {
 public:
  DispatchMedians() = default;
  // Over the tables of `measured`, table `skip` left out.
  explicit DispatchMedians(const MeasuredDispatchByProfile& measured,
                           std::optional<std::size_t> skip = std::nullopt);
  // nullptr when no table measured any dispatch.
  const CallOverhead* of(const std::string& op) const;

 private:
  std::map<std::string, CallOverhead> by_op_;  // "" -> any operator
};

// The host dispatch of a call whose fit another GPU's table made. Dispatch is the host's and
// the framework's, not the GPU's: NeuSight's tables put the same operator's floor at 26 us on
// the A100-40GB, T4 and P4 hosts, 32 on the V100's and 42 on the P100's, in no order of the
// GPUs' specs, so the most similar GPU lends its fits, not its host (a P4 priced with its donor
// P100's host was 1.7x too slow on every small call; with the tables' median, 1.1x). The
// per-operator fits take it; GEMM calls keep their table's dispatch (a `linear` floor is more
// than a host's dispatch; predictor/MODELS.md, "Dispatch on a GPU without a table").
class HostDispatchTable {
 public:
  HostDispatchTable() = default;
  // From the call-timed `profiles` (`smallest` parallel to them), each read once.
  HostDispatchTable(const std::vector<Profile>& profiles,
                    const std::vector<SmallestCalls>& smallest);

  // One table per profile it was built from, in their order.
  std::size_t size() const noexcept { return measured_.size(); }
  // The GPU profile `i` measured (its canonical catalogue name).
  const std::string& device(std::size_t i) const { return devices_.at(i); }
  // What profile `i`'s table measured (empty for a kernel-timed one).
  const std::map<std::string, CallOverhead>& measured(std::size_t i) const;
  // The tables' medians with profile `skip` left out.
  DispatchMedians medians_without(std::size_t skip) const;
  // `device`'s own table's where it measured `op`'s dispatch, else every table's median.
  const CallOverhead* on(const std::string& device, const std::string& op) const;

 private:
  std::vector<std::string> devices_;  // parallel to measured_
  MeasuredDispatchByProfile measured_;
  DispatchMedians medians_;
  std::map<std::string, std::map<std::string, CallOverhead>> own_;  // device -> op -> measured
};

}  // namespace pm2lat
