// Classification once per distinct kernel name: traces and runs repeat the same few hundred
// kernels thousands of times, and classification parses the name.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>

#include "pm2lat/kernel_class.h"

namespace pm2lat::reports {

class KernelClassCache {
 public:
  const KernelClass& classify(const std::string& name);
  std::size_t size() const noexcept { return classes_.size(); }

 private:
  std::unordered_map<std::string, KernelClass> classes_;
};

}  // namespace pm2lat::reports
