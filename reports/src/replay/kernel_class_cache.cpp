#include "pm2lat/reports/replay/kernel_class_cache.h"

#include "pm2lat/classifier.h"

namespace pm2lat::reports {

const KernelClass& KernelClassCache::classify(const std::string& name) {
  auto it = classes_.find(name);
  if (it == classes_.end()) it = classes_.emplace(name, classify_kernel(name)).first;
  return it->second;
}

}  // namespace pm2lat::reports
