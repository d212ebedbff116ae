#include "pm2lat/profile.h"

namespace pm2lat {

const CallOverhead& Profile::overhead_for(const std::string& op) const {
  static const CallOverhead kNone{};
  if (auto it = call_overhead.find(op); it != call_overhead.end()) return it->second;
  if (auto it = call_overhead.find("*"); it != call_overhead.end()) return it->second;
  return kNone;
}

int Profile::find_gemm_config(const std::string& config) const {
  for (std::size_t i = 0; i < gemm_configs.size(); ++i) {
    if (gemm_configs[i].config == config) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace pm2lat
