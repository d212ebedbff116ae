// Device time of back-to-back launches: `launches` calls captured into one CUDA graph, then
// per repetition (optionally) a scrub of L2, a busy kernel, the start event, the graph, the
// end event. The busy kernel keeps the GPU occupied while the host records the start event
// and launches the graph, so the start event fires when the GPU reaches the graph and the
// elapsed time is device time only. A repetition whose start event had already fired when the
// graph was queued (the host was slower than the busy kernel) is redone behind a longer busy
// kernel. Median over the repetitions, per launch.
#pragma once

#include <cuda.h>

#include <functional>

#include "driver/calibration_module.h"
#include "driver/cuda_driver_api.h"
#include "pm2lat/calibrate/run/calibration_task.h"
#include "pm2lat/calibrate/run/measurement.h"

namespace pm2lat::calibrate::run::driver {

class GraphTimer {
 public:
  GraphTimer(const CudaDriverApi& api, CUstream stream, const CalibrationModule& kernels,
             int sm_count);
  ~GraphTimer();
  GraphTimer(const GraphTimer&) = delete;
  GraphTimer& operator=(const GraphTimer&) = delete;

  // Evicts L2 before each repetition by writing `bytes` at `buf` (0 bytes: no scrub).
  void set_scrub(CUdeviceptr buf, std::size_t bytes) {
    scrub_buf_ = buf;
    scrub_bytes_ = bytes;
  }

  // enqueue(i) issues launch i (0 <= i < policy.launches) on the stream.
  TimingSample time(const TimingPolicy& policy, const std::function<void(int)>& enqueue,
                    bool scrub);

  // Events around one call each, no busy kernel: what a program timing a single call sees.
  double single_call_us(int reps, const std::function<void()>& enqueue);

 private:
  double elapsed_us();

  const CudaDriverApi& api_;
  CUstream stream_;
  const CalibrationModule& kernels_;
  int sm_count_;
  CUevent start_ = nullptr, end_ = nullptr;
  CUdeviceptr scrub_buf_ = 0;
  std::size_t scrub_bytes_ = 0;
  unsigned salt_ = 0;
  double busy_us_;
};

}  // namespace pm2lat::calibrate::run::driver
