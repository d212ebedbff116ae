#include "pm2lat/reports/eval/host_dispatch.h"

#include <algorithm>
#include <vector>

#include "pm2lat/median.h"

namespace pm2lat::reports {

HostDispatch::HostDispatch(const Predictor& predictor, TargetId target) {
  const Target& t = predictor.target(target);
  std::map<std::string, std::vector<double>> pool;
  const HostDispatchTable& tables = predictor.host_dispatch();
  for (std::size_t i = 0; i < tables.size(); ++i) {
    const bool own = tables.device(i) == t.spec->name && !t.spec_scaled;
    for (const auto& [op, c] : tables.measured(i)) {
      pool[op].push_back(c.pre_us);
      if (own) own_[op] = c.pre_us;
    }
  }
  for (auto& [op, v] : pool) pooled_[op] = median(v);
  std::vector<double> ratios;
  for (const auto& [op, us] : own_) ratios.push_back(us / pooled_.at(op));
  if (!ratios.empty()) host_scale_ = median(ratios);
  std::vector<double> all;
  for (const auto& [op, us] : pooled_) all.push_back(launch_us(op));
  for (const auto& [op, us] : own_) {
    if (!pooled_.contains(op)) all.push_back(us);
  }
  typical_us_ = all.empty() ? 0.0 : median(all);
}

double HostDispatch::launch_us(const std::string& op_key) const {
  if (auto it = own_.find(op_key); it != own_.end()) return it->second;
  if (auto it = pooled_.find(op_key); it != pooled_.end()) return it->second * host_scale_;
  return typical_us_;
}

}  // namespace pm2lat::reports
