// Which kernels a library call launched, with their geometry and device time: CUPTI's
// activity records (CONCURRENT_KERNEL, which does not serialise kernels), enabled only around
// the calls being identified so that timed repetitions run without instrumentation.
// cuBLASLt launches its kernels itself; CUPTI is how their names reach us.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pm2lat/calibrate/run/measurement.h"

namespace pm2lat::calibrate::run::driver {

class CuptiKernelTrace {
 public:
  // Loads CUPTI and registers the activity buffers. Throws BackendError when CUPTI is missing
  // or another tool (a profiler) already owns it.
  static std::unique_ptr<CuptiKernelTrace> open(const std::string& library);
  ~CuptiKernelTrace();

  std::string version() const;
  // Kernels executed between start() and stop(), in start-time order. The caller
  // synchronises the device before stop().
  void start();
  std::vector<KernelObservation> stop();

  struct Api;  // the resolved CUPTI entry points (the buffer callbacks use them too)

 private:
  CuptiKernelTrace() = default;
  std::unique_ptr<Api> api_;
};

}  // namespace pm2lat::calibrate::run::driver
