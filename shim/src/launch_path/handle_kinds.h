// Which kind of driver handle a value is: a CUfunction or a CUkernel. cuLaunchKernel takes
// either (a CUkernel cast to CUfunction), but cuFuncGet* are documented for CUfunction and
// cuKernelGet* for CUkernel only. In CUPTI callback mode the kind is learnt from the calls that
// hand the handles out (cuModuleGetFunction, cuKernelGetFunction: CUfunction;
// cuLibraryGetKernel: CUkernel), so that a handle's first launch asks the driver only what is
// documented for it, and nothing about handles of unknown kind (CUPTI names them anyway).
#pragma once

#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace pm2lat::shim {

enum class HandleKind : std::uint8_t { kUnknown = 0, kFunction, kKernel };

class HandleKinds {
 public:
  // Beyond this many handles the table starts again (their kinds become unknown).
  static constexpr std::size_t kMaxHandles = std::size_t(1) << 20;

  static HandleKinds& instance();

  // Where a handle is handed out (not the launch path).
  void note(std::uint64_t handle, HandleKind kind);
  // On a handle's first launch.
  HandleKind kind_of(std::uint64_t handle) const;

  void lock_for_fork() noexcept { mu_.lock(); }
  void unlock_after_fork() noexcept { mu_.unlock(); }
  void reset_lock_after_fork() noexcept;

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::uint64_t, HandleKind> kinds_;
};

}  // namespace pm2lat::shim
