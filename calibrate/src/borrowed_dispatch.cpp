#include "pm2lat/calibrate/borrowed_dispatch.h"

#include "pm2lat/median.h"
#include "pm2lat/models/roofline_model.h"

namespace pm2lat::calibrate {
namespace {

// Rounding slack when telling a clamped intercept from a measured one (µs).
constexpr double kClampToleranceUs = 0.01;

// Whether an estimated dispatch is a measurement: the builder clamps its intercept to
// [0, floor - an empty kernel], and a value at either end says only that the intercept fell
// outside (NeuSight's layer-norm on the A100-40GB, T4 and P4: its kernel-bound calls
// extrapolate above the floor of its small ones).
bool measured(const CallOverhead& o) {
  return o.pre_us > 0 && o.pre_us < o.floor_us - kMinimumKernelUs - kClampToleranceUs;
}

// The other tables' timed dispatch of `op`.
std::vector<double> timed_elsewhere(const std::vector<TableOverheads>& tables, std::size_t target,
                                    const std::string& op) {
  std::vector<double> out;
  for (std::size_t i = 0; i < tables.size(); ++i) {
    if (i == target || !tables[i].timed.contains(op)) continue;
    const auto it = tables[i].overheads.find(op);
    if (it != tables[i].overheads.end() && measured(it->second)) out.push_back(it->second.pre_us);
  }
  return out;
}

}  // namespace

std::map<std::string, double> borrowed_dispatch_us(const std::vector<TableOverheads>& tables,
                                                   std::size_t target) {
  const TableOverheads& own = tables.at(target);
  // The target's host against the others', on the operators both time.
  std::vector<double> ratios;
  for (const std::string& op : own.timed) {
    const auto it = own.overheads.find(op);
    if (it == own.overheads.end() || !measured(it->second)) continue;
    const auto others = timed_elsewhere(tables, target, op);
    if (!others.empty()) ratios.push_back(it->second.pre_us / median(others));
  }
  const double host_scale = ratios.empty() ? 1.0 : median(ratios);
  std::map<std::string, double> out;
  for (const auto& [op, o] : own.overheads) {
    if (!own.gemm.contains(op)) continue;
    if (own.timed.contains(op) && o.pre_us > 0) continue;  // its own measurement
    const auto others = timed_elsewhere(tables, target, op);
    if (!others.empty()) out[op] = median(others) * host_scale;
  }
  return out;
}

}  // namespace pm2lat::calibrate
