#include "pm2lat/calibrate/borrowed_dispatch.h"

#include "pm2lat/median.h"

namespace pm2lat::calibrate {
namespace {

// The other tables' timed dispatch of `op` (a dispatch of 0 is an intercept clamped at zero,
// not a measurement).
std::vector<double> timed_elsewhere(const std::vector<TableOverheads>& tables, std::size_t target,
                                    const std::string& op) {
  std::vector<double> out;
  for (std::size_t i = 0; i < tables.size(); ++i) {
    if (i == target || !tables[i].timed.contains(op)) continue;
    const auto it = tables[i].overheads.find(op);
    if (it != tables[i].overheads.end() && it->second.pre_us > 0) out.push_back(it->second.pre_us);
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
    if (it == own.overheads.end() || it->second.pre_us <= 0) continue;
    const auto others = timed_elsewhere(tables, target, op);
    if (!others.empty()) ratios.push_back(it->second.pre_us / median(others));
  }
  const double host_scale = ratios.empty() ? 1.0 : median(ratios);
  std::map<std::string, double> out;
  for (const auto& [op, o] : own.overheads) {
    if (own.timed.contains(op) && o.pre_us > 0) continue;  // its own measurement
    const auto others = timed_elsewhere(tables, target, op);
    if (!others.empty()) out[op] = median(others) * host_scale;
  }
  return out;
}

}  // namespace pm2lat::calibrate
