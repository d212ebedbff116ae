#include "launch_path/handle_kinds.h"

#include <new>

namespace pm2lat::shim {

HandleKinds& HandleKinds::instance() {
  static HandleKinds* kinds = new HandleKinds();  // never destroyed: used until exit
  return *kinds;
}

void HandleKinds::note(std::uint64_t handle, HandleKind kind) {
  if (handle == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (kinds_.size() >= kMaxHandles) kinds_.clear();
  kinds_[handle] = kind;
}

HandleKind HandleKinds::kind_of(std::uint64_t handle) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = kinds_.find(handle);
  return it == kinds_.end() ? HandleKind::kUnknown : it->second;
}

void HandleKinds::reset_lock_after_fork() noexcept { new (&mu_) std::mutex(); }

}  // namespace pm2lat::shim
