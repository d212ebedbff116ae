#include "launch_path/driver_hooks.h"

#include "cupti/cupti_api.h"
#include "cupti/nvtx_emitter.h"
#include "driver_api.h"
#include "launch_path/event_timer.h"
#include "launch_path/handle_cache.h"
#include "launch_path/launch_path_state.h"
#include "launch_path/launch_recorder.h"
#include "launch_path/thread_ring.h"
#include "launch_path/thread_state.h"
#include "runtime.h"

namespace pm2lat::shim::hooks {

namespace {

// True when this launch should be recorded by the hooks; starts the shim if CUDA was
// initialised before it could see it.
bool hooks_record_now() noexcept {
  LaunchPathState& lp = launch_path_state();
  const ThreadState& ts = thread_state();
  if (ts.hook_depth != 0 || ts.internal) return false;
  if (lp.state.load(std::memory_order_acquire) == RuntimeState::kUninitialised) [[unlikely]] {
    Runtime::instance().ensure_started();
  }
  if (lp.hooks_record()) return true;
  if (!lp.ready()) lp.passed_through.fetch_add(1, std::memory_order_relaxed);
  return false;
}

CUstream effective_stream(LaunchApi api, CUstream s) noexcept {
  // Stream 0 means the per-thread default stream for the _ptsz variants.
  return (s == nullptr && is_per_thread_stream(api)) ? CU_STREAM_PER_THREAD : s;
}

bool stream_is_capturing(CUstream s) noexcept {
  const DriverApi* api = driver_api();
  if (api == nullptr || api->stream_is_capturing == nullptr) return false;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  // An error (e.g. CUDA_ERROR_STREAM_CAPTURE_IMPLICIT on the legacy stream) reads as "not
  // capturing": the launch itself will then fail the same way.
  if (api->stream_is_capturing(s, &status) != CUDA_SUCCESS) return false;
  return status != CU_STREAM_CAPTURE_STATUS_NONE;
}

// After a launch into a capturing stream: the node it became is the stream's only
// dependency now.
void record_capture_node(LaunchSlot* s, CUstream stream) noexcept {
  s->flags |= slot_flags::kCaptured;
  const DriverApi* api = driver_api();
  if (api == nullptr) return;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  cuuint64_t id = 0;
  CUgraph graph = nullptr;
  const CUgraphNode* deps = nullptr;
  const CUgraphEdgeData* edges = nullptr;
  size_t n = 0;
  CUresult r = CUDA_ERROR_NOT_SUPPORTED;
  if (api->stream_get_capture_info != nullptr) {
    r = api->stream_get_capture_info(stream, &status, &id, &graph, &deps, &edges, &n);
  } else if (api->stream_get_capture_info_v2 != nullptr) {  // drivers before 12.3
    r = api->stream_get_capture_info_v2(stream, &status, &id, &graph, &deps, &n);
  }
  if (r != CUDA_SUCCESS) return;
  if (status == CU_STREAM_CAPTURE_STATUS_ACTIVE && n == 1 && deps != nullptr) {
    s->graph = reinterpret_cast<std::uint64_t>(graph);
    s->graph_node = reinterpret_cast<std::uint64_t>(deps[0]);
  }
}

// The common body of every kernel launch interposer.
template <typename CallReal>
CUresult record_launch(const LaunchCall& call, CallReal&& call_real) noexcept {
  if (!hooks_record_now()) return call_real();
  LaunchPathState& lp = launch_path_state();
  ThreadState& ts = thread_state();
  ++ts.hook_depth;
  const CUstream stream = effective_stream(call.api, reinterpret_cast<CUstream>(call.stream));
  const bool capturing =
      lp.captures_active.load(std::memory_order_relaxed) > 0 && stream_is_capturing(stream);
  LaunchSlot* s = begin_kernel_slot(call, 0, 0);
  const CuptiApi* cupti = lp.external_correlation.load(std::memory_order_relaxed)
                              ? Runtime::instance().cupti()
                              : nullptr;
  bool pushed = false;
  if (cupti != nullptr) {
    pushed = cupti->push_external_correlation(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2,
                                              s ? s->seq : kDroppedLaunchSeq) == CUPTI_SUCCESS;
    if (pushed && s) s->flags |= slot_flags::kExternalCorrelation;
  }
  bool timed = false;
  bool nvtx = false;
  if (s != nullptr) {
    if (!capturing && lp.timing.load(std::memory_order_relaxed) == TimingMode::kEvents) {
      timed = EventTimer::before(ts.ring, s, stream);
    }
    if (lp.nvtx.load(std::memory_order_relaxed)) {
      NvtxEmitter::push(HandleCache::instance().find(call.handle),
                        geometry_digest(s->name_id, s->grid, s->block, s->smem));
      nvtx = true;
    }
  }
  const CUresult r = call_real();
  if (nvtx) NvtxEmitter::pop();
  if (timed) EventTimer::after(ts.ring, s, stream);
  if (pushed) {
    std::uint64_t last = 0;
    cupti->pop_external_correlation(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &last);
  }
  if (s != nullptr && capturing && r == CUDA_SUCCESS) record_capture_node(s, stream);
  commit_slot(s, static_cast<std::int32_t>(r));
  --ts.hook_depth;
  return r;
}

LaunchCall make_call(LaunchApi api, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                     unsigned bx, unsigned by, unsigned bz, unsigned smem, CUstream stream,
                     void** params, void** extra) noexcept {
  LaunchCall c;
  c.api = api;
  c.handle = reinterpret_cast<std::uint64_t>(f);
  c.grid[0] = gx;
  c.grid[1] = gy;
  c.grid[2] = gz;
  c.block[0] = bx;
  c.block[1] = by;
  c.block[2] = bz;
  c.smem = smem;
  c.stream = reinterpret_cast<std::uint64_t>(stream);
  c.params = params;
  c.extra = extra;
  return c;
}

// Graph bookkeeping slots for the hook-driven mode (the callback mode gets the same facts
// from CUPTI resource callbacks).
void post_graph_event(SlotKind kind, std::uint64_t graph, std::uint64_t exec) noexcept {
  if (!launch_path_state().hooks_record() || thread_state().internal) return;
  LaunchSlot* s = begin_event_slot(kind);
  if (s == nullptr) return;
  s->graph = graph;
  s->graph_exec = exec;
  commit_slot(s, 0);
}

}  // namespace

CUresult init(PFN_cuInit_v2000 real, unsigned int flags) noexcept {
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult r = real(flags);
  if (r == CUDA_SUCCESS && !thread_state().internal) Runtime::instance().on_cuda_initialised();
  return r;
}

CUresult launch_kernel(PFN_cuLaunchKernel_v4000 real, LaunchApi api, CUfunction f, unsigned int gx,
                       unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by,
                       unsigned int bz, unsigned int smem, CUstream stream, void** params,
                       void** extra) noexcept {
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return record_launch(make_call(api, f, gx, gy, gz, bx, by, bz, smem, stream, params, extra), [&] {
    return real(f, gx, gy, gz, bx, by, bz, smem, stream, params, extra);
  });
}

CUresult launch_kernel_ex(PFN_cuLaunchKernelEx_v11060 real, LaunchApi api,
                          const CUlaunchConfig* config, CUfunction f, void** params,
                          void** extra) noexcept {
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  LaunchCall c;
  c.api = api;
  c.handle = reinterpret_cast<std::uint64_t>(f);
  c.params = params;
  c.extra = extra;
  read_launch_config(config, c);
  return record_launch(c, [&] { return real(config, f, params, extra); });
}

CUresult launch_cooperative(PFN_cuLaunchCooperativeKernel_v9000 real, LaunchApi api, CUfunction f,
                            unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                            unsigned int by, unsigned int bz, unsigned int smem, CUstream stream,
                            void** params) noexcept {
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  LaunchCall c = make_call(api, f, gx, gy, gz, bx, by, bz, smem, stream, params, nullptr);
  c.cooperative = true;
  return record_launch(c, [&] { return real(f, gx, gy, gz, bx, by, bz, smem, stream, params); });
}

CUresult graph_launch(PFN_cuGraphLaunch_v10000 real, LaunchApi api, CUgraphExec exec,
                      CUstream stream) noexcept {
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  if (!hooks_record_now()) return real(exec, stream);
  ThreadState& ts = thread_state();
  ++ts.hook_depth;
  LaunchSlot* s = begin_event_slot(SlotKind::kGraphLaunch);
  if (s != nullptr) {
    s->graph_exec = reinterpret_cast<std::uint64_t>(exec);
    s->stream = reinterpret_cast<std::uint64_t>(stream);
    s->api = api;
  }
  const CuptiApi* cupti = launch_path_state().external_correlation.load(std::memory_order_relaxed)
                              ? Runtime::instance().cupti()
                              : nullptr;
  bool pushed = false;
  if (cupti != nullptr) {
    pushed = cupti->push_external_correlation(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2,
                                              s ? s->seq : kDroppedLaunchSeq) == CUPTI_SUCCESS;
    if (pushed && s) s->flags |= slot_flags::kExternalCorrelation;
  }
  const CUresult r = real(exec, stream);
  if (pushed) {
    std::uint64_t last = 0;
    cupti->pop_external_correlation(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &last);
  }
  commit_slot(s, static_cast<std::int32_t>(r));
  --ts.hook_depth;
  return r;
}

CUresult graph_instantiate_with_flags(PFN_cuGraphInstantiateWithFlags_v11040 real,
                                      CUgraphExec* exec, CUgraph graph,
                                      unsigned long long flags) noexcept {
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult r = real(exec, graph, flags);
  if (r == CUDA_SUCCESS && exec != nullptr) {
    post_graph_event(SlotKind::kGraphInstantiate, reinterpret_cast<std::uint64_t>(graph),
                     reinterpret_cast<std::uint64_t>(*exec));
  }
  return r;
}

CUresult graph_instantiate_with_params(PFN_cuGraphInstantiateWithParams_v12000 real,
                                       CUgraphExec* exec, CUgraph graph,
                                       CUDA_GRAPH_INSTANTIATE_PARAMS* params) noexcept {
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult r = real(exec, graph, params);
  if (r == CUDA_SUCCESS && exec != nullptr) {
    post_graph_event(SlotKind::kGraphInstantiate, reinterpret_cast<std::uint64_t>(graph),
                     reinterpret_cast<std::uint64_t>(*exec));
  }
  return r;
}

CUresult graph_exec_destroy(PFN_cuGraphExecDestroy_v10000 real, CUgraphExec exec) noexcept {
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  // Before the call: once destroyed, the handle may be reused by the next instantiation.
  post_graph_event(SlotKind::kGraphExecDestroy, 0, reinterpret_cast<std::uint64_t>(exec));
  return real(exec);
}

CUresult graph_destroy(PFN_cuGraphDestroy_v10000 real, CUgraph graph) noexcept {
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  post_graph_event(SlotKind::kGraphDestroy, reinterpret_cast<std::uint64_t>(graph), 0);
  return real(graph);
}

CUresult begin_capture(PFN_cuStreamBeginCapture_v10010 real, CUstream stream,
                       CUstreamCaptureMode mode) noexcept {
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult r = real(stream, mode);
  if (r == CUDA_SUCCESS)
    launch_path_state().captures_active.fetch_add(1, std::memory_order_relaxed);
  return r;
}

CUresult begin_capture_to_graph(PFN_cuStreamBeginCaptureToGraph_v12030 real, CUstream stream,
                                CUgraph graph, const CUgraphNode* deps,
                                const CUgraphEdgeData* edges, size_t n,
                                CUstreamCaptureMode mode) noexcept {
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult r = real(stream, graph, deps, edges, n, mode);
  if (r == CUDA_SUCCESS)
    launch_path_state().captures_active.fetch_add(1, std::memory_order_relaxed);
  return r;
}

CUresult end_capture(PFN_cuStreamEndCapture_v10000 real, CUstream stream, CUgraph* graph) noexcept {
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult r = real(stream, graph);
  // These results end the capture too (the graph is discarded).
  if (r == CUDA_SUCCESS || r == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED ||
      r == CUDA_ERROR_STREAM_CAPTURE_UNJOINED || r == CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD) {
    std::atomic<std::int32_t>& n = launch_path_state().captures_active;
    std::int32_t cur = n.load(std::memory_order_relaxed);
    while (cur > 0 && !n.compare_exchange_weak(cur, cur - 1, std::memory_order_relaxed)) {}
  }
  return r;
}

CUresult module_unload(PFN_cuModuleUnload_v2000 real, CUmodule module) noexcept {
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult r = real(module);
  // Handles of the unloaded module may come back for other kernels.
  if (r == CUDA_SUCCESS) HandleCache::instance().invalidate_all();
  return r;
}

CUresult library_unload(PFN_cuLibraryUnload_v12000 real, CUlibrary library) noexcept {
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult r = real(library);
  if (r == CUDA_SUCCESS) HandleCache::instance().invalidate_all();
  return r;
}

}  // namespace pm2lat::shim::hooks
