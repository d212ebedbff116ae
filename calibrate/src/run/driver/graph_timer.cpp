#include "driver/graph_timer.h"

#include <algorithm>
#include <vector>

#include "pm2lat/median.h"

namespace pm2lat::calibrate::run::driver {
namespace {

// Long enough for the host to record an event and launch a graph behind it; grown when not.
constexpr double kBusyUs = 50;
constexpr double kMaxBusyUs = 20000;

}  // namespace

GraphTimer::GraphTimer(const CudaDriverApi& api, CUstream stream, const CalibrationModule& kernels,
                       int sm_count)
    : api_(api), stream_(stream), kernels_(kernels), sm_count_(sm_count), busy_us_(kBusyUs) {
  api_.check(api_.event_create(&start_, CU_EVENT_DEFAULT), "cuEventCreate");
  api_.check(api_.event_create(&end_, CU_EVENT_DEFAULT), "cuEventCreate");
}

GraphTimer::~GraphTimer() {
  if (start_ != nullptr) api_.event_destroy(start_);
  if (end_ != nullptr) api_.event_destroy(end_);
}

double GraphTimer::elapsed_us() {
  api_.check(api_.event_synchronize(end_), "cuEventSynchronize");
  float ms = 0;
  api_.check(api_.event_elapsed_time(&ms, start_, end_), "cuEventElapsedTime");
  return static_cast<double>(ms) * 1e3;
}

TimingSample GraphTimer::time(const TimingPolicy& policy, const std::function<void(int)>& enqueue,
                              bool scrub) {
  const int launches = std::max(1, policy.launches);
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  api_.check(api_.stream_begin_capture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
             "cuStreamBeginCapture");
  try {
    for (int i = 0; i < launches; ++i) enqueue(i);
  } catch (...) {
    api_.stream_end_capture(stream_, &graph);
    if (graph != nullptr) api_.graph_destroy(graph);
    throw;
  }
  api_.check(api_.stream_end_capture(stream_, &graph), "cuStreamEndCapture");
  const CUresult inst = api_.graph_instantiate(&exec, graph, 0);
  if (inst != CUDA_SUCCESS) {
    api_.graph_destroy(graph);
    api_.check(inst, "cuGraphInstantiateWithFlags");
  }
  std::vector<double> per_launch;
  const int reps = std::max(1, policy.reps);
  int redone = 0;
  try {
    for (int r = 0; static_cast<int>(per_launch.size()) < reps;) {
      if (scrub && scrub_bytes_ > 0) kernels_.scrub(stream_, scrub_buf_, scrub_bytes_, ++salt_);
      kernels_.busy(stream_, busy_us_, sm_count_);
      api_.check(api_.event_record(start_, stream_), "cuEventRecord");
      api_.check(api_.graph_launch(exec, stream_), "cuGraphLaunch");
      const bool late = api_.event_query(start_) == CUDA_SUCCESS;  // the GPU idled before the graph
      api_.check(api_.event_record(end_, stream_), "cuEventRecord");
      const double us = elapsed_us() / launches;
      if (r++ < policy.warmup) continue;
      if (late && redone < 2 * reps) {
        ++redone;
        busy_us_ = std::min(kMaxBusyUs, 2 * busy_us_);
        continue;
      }
      per_launch.push_back(us);
      if (!late) busy_us_ = std::max(kBusyUs, 0.9 * busy_us_);
    }
  } catch (...) {
    api_.graph_exec_destroy(exec);
    api_.graph_destroy(graph);
    throw;
  }
  api_.graph_exec_destroy(exec);
  api_.graph_destroy(graph);
  TimingSample t;
  t.launches = launches;
  t.reps = static_cast<std::int32_t>(per_launch.size());
  t.median_us = median(per_launch);
  t.min_us = *std::min_element(per_launch.begin(), per_launch.end());
  t.max_us = *std::max_element(per_launch.begin(), per_launch.end());
  return t;
}

double GraphTimer::single_call_us(int reps, const std::function<void()>& enqueue) {
  std::vector<double> v;
  api_.check(api_.stream_synchronize(stream_), "cuStreamSynchronize");
  for (int r = 0; r < reps; ++r) {
    api_.check(api_.event_record(start_, stream_), "cuEventRecord");
    enqueue();
    api_.check(api_.event_record(end_, stream_), "cuEventRecord");
    v.push_back(elapsed_us());
  }
  return median(v);
}

}  // namespace pm2lat::calibrate::run::driver
