#include "pm2lat/reports/eval/host_dispatch.h"

#include <algorithm>
#include <vector>

#include "pm2lat/median.h"

namespace pm2lat::reports {
namespace {

// A call whose kernel would take less than this at the GPU's peak rate is timing its
// dispatch, not its kernel: the tables' empty-kernel calls floor at 7-30 µs.
constexpr double kSmallCallUs = 2.0;

// The operators whose dispatch `p` measured: those with a calibration call too small to be
// kernel-bound.
std::map<std::string, double> measured_dispatch(const Profile& p, const DeviceSpec& spec) {
  std::map<std::string, double> smallest;  // op -> shortest roofline time of its calls
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
  std::map<std::string, double> out;
  for (const auto& [op, o] : p.call_overhead) {
    const auto it = smallest.find(op);
    if (it != smallest.end() && it->second < kSmallCallUs && o.pre_us > 0) out[op] = o.pre_us;
  }
  return out;
}

}  // namespace

HostDispatch::HostDispatch(const Predictor& predictor, TargetId target) {
  const Target& t = predictor.target(target);
  std::map<std::string, std::vector<double>> pool;
  for (const Profile& p : predictor.profiles()) {
    if (p.basis != TimeBasis::kCall) continue;
    const DeviceSpec* spec = predictor.catalogue().find(p.device);
    if (spec == nullptr) continue;
    const auto measured = measured_dispatch(p, *spec);
    for (const auto& [op, us] : measured) pool[op].push_back(us);
    if (spec == t.spec && !t.spec_scaled) {
      for (const auto& [op, us] : measured) own_[op] = us;
    }
  }
  for (auto& [op, v] : pool) pooled_[op] = median(v);
  std::vector<double> ratios;
  for (const auto& [op, us] : own_) ratios.push_back(us / pooled_.at(op));
  if (!ratios.empty()) host_scale_ = median(ratios);
  std::vector<double> all;
  for (const auto& [op, us] : pooled_) all.push_back(launch_us(op));
  for (const auto& [op, us] : own_) {
    if (!pooled_.count(op)) all.push_back(us);
  }
  typical_us_ = all.empty() ? 0.0 : median(all);
}

double HostDispatch::launch_us(const std::string& op_key) const {
  if (auto it = own_.find(op_key); it != own_.end()) return it->second;
  if (auto it = pooled_.find(op_key); it != pooled_.end()) return it->second * host_scale_;
  return typical_us_;
}

}  // namespace pm2lat::reports
