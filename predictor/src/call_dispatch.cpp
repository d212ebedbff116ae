#include "pm2lat/call_dispatch.h"

#include <algorithm>
#include <cmath>

#include "pm2lat/median.h"

namespace pm2lat {
namespace {

// A call whose kernel would take less than this at the GPU's peak rate is timing its
// dispatch, not its kernel: the tables' empty-kernel calls floor at 7-30 µs.
constexpr double kSmallCallUs = 2.0;
// A call's kernel time is its time minus the dispatch before the kernel, never under this:
// the floor only keeps the logarithm of a residual finite for calls at their floor.
constexpr double kShortestKernelInCallUs = 0.5;

// The operators whose dispatch `p` measured: those with a calibration call too small to be
// kernel-bound and a `pre_us`.
std::map<std::string, CallOverhead> measured_dispatch(const Profile& p,
                                                      const SmallestCalls& smallest) {
  std::map<std::string, CallOverhead> out;
  if (p.basis != TimeBasis::kCall) return out;
  for (const std::string& op : ops_with_small_calls(smallest)) {
    const auto it = p.call_overhead.find(op);
    if (it != p.call_overhead.end() && it->second.pre_us > 0) out.emplace(op, it->second);
  }
  return out;
}

}  // namespace

CalibrationResiduals calibration_residuals(const Profile& profile, const std::string& op,
                                           const std::set<std::string>& traffic_floor,
                                           double measured_us, double kernel_us) {
  CalibrationResiduals r;
  if (profile.basis != TimeBasis::kCall) {
    r.kernel = std::log(measured_us / kernel_us);
    return r;
  }
  const CallOverhead& o = profile.overhead_for(op);
  // A floor of the table's own traffic holds none of its calls.
  const bool floor_is_traffic = traffic_floor.contains(op);
  r.call = std::log(measured_us / table_call_us(o, floor_is_traffic, kernel_us));
  if (floor_is_traffic || measured_us >= kCallAboveFloor * o.floor_us)
    r.kernel = std::log(std::max(kShortestKernelInCallUs, measured_us - o.pre_us) / kernel_us);
  return r;
}

void note_smallest_calls(const Profile& p, const DeviceSpec& spec, SmallestCalls& smallest) {
  if (p.basis != TimeBasis::kCall) return;
  auto note = [&](const std::string& op, double roofline_us) {
    auto [it, added] = smallest.emplace(op, roofline_us);
    if (!added) it->second = std::min(it->second, roofline_us);
  };
  const double flop_per_us = std::max(1.0, spec.peak_flop_per_us(DType::kFp32));
  const double bytes_per_us = std::max(1.0, spec.bytes_per_us());
  for (const GemmPoint& g : p.gemm_points) {
    note(g.op, 2.0 * static_cast<double>(g.batch) * static_cast<double>(g.m) *
                   static_cast<double>(g.n) * static_cast<double>(g.k) / flop_per_us);
  }
  for (const VectorPoint& v : p.vector_points) {
    if (v.fit < 0 || static_cast<std::size_t>(v.fit) >= p.vector_fits.size()) continue;
    note(p.vector_fits[static_cast<std::size_t>(v.fit)].op, v.bytes / bytes_per_us);
  }
}

std::set<std::string> ops_with_small_calls(const SmallestCalls& smallest) {
  std::set<std::string> out;
  for (const auto& [op, roofline_us] : smallest) {
    if (roofline_us < kSmallCallUs) out.insert(op);
  }
  return out;
}

std::set<std::string> ops_with_small_calls(const Profile& p, const DeviceSpec& spec) {
  SmallestCalls smallest;
  note_smallest_calls(p, spec, smallest);
  return ops_with_small_calls(smallest);
}

std::set<std::string> traffic_floor_ops(const Profile& profile,
                                        const std::set<std::string>& small_call_ops) {
  std::set<std::string> out;
  if (profile.basis != TimeBasis::kCall) return out;
  for (const auto& [op, o] : profile.call_overhead) {
    if (op != "*" && !small_call_ops.contains(op)) out.insert(op);
  }
  return out;
}

DispatchMedians::DispatchMedians(const MeasuredDispatchByProfile& measured,
                                 std::optional<std::size_t> skip) {
  std::map<std::string, std::vector<double>> floor, pre;
  std::vector<double> table_floor, table_pre;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    if (i == skip || measured[i].empty()) continue;
    std::vector<double> op_floor, op_pre;
    for (const auto& [op, c] : measured[i]) {
      floor[op].push_back(c.floor_us);
      pre[op].push_back(c.pre_us);
      op_floor.push_back(c.floor_us);
      op_pre.push_back(c.pre_us);
    }
    table_floor.push_back(median(op_floor));
    table_pre.push_back(median(op_pre));
  }
  for (const auto& [op, f] : floor) by_op_[op] = {median(f), median(pre.at(op))};
  if (!table_floor.empty()) by_op_[""] = {median(table_floor), median(table_pre)};
}

const CallOverhead* DispatchMedians::of(const std::string& op) const {
  if (auto it = by_op_.find(op); it != by_op_.end()) return &it->second;
  if (auto it = by_op_.find(""); it != by_op_.end()) return &it->second;
  return nullptr;
}

HostDispatchTable::HostDispatchTable(const std::vector<Profile>& profiles,
                                     const std::vector<SmallestCalls>& smallest) {
  measured_.resize(profiles.size());
  devices_.reserve(profiles.size());
  for (std::size_t i = 0; i < profiles.size(); ++i) {
    const Profile& p = profiles[i];
    devices_.push_back(p.device);
    if (i >= smallest.size()) continue;
    measured_[i] = measured_dispatch(p, smallest[i]);
    for (const auto& [op, c] : measured_[i]) own_[p.device][op] = c;
  }
  medians_ = DispatchMedians(measured_);
}

const std::map<std::string, CallOverhead>& HostDispatchTable::measured(std::size_t i) const {
  static const std::map<std::string, CallOverhead> kNone;
  return i < measured_.size() ? measured_[i] : kNone;
}

DispatchMedians HostDispatchTable::medians_without(std::size_t skip) const {
  return DispatchMedians(measured_, skip);
}

const CallOverhead* HostDispatchTable::on(const std::string& device, const std::string& op) const {
  if (auto d = own_.find(device); d != own_.end()) {
    if (auto it = d->second.find(op); it != d->second.end()) return &it->second;
  }
  return medians_.of(op);
}

}  // namespace pm2lat
