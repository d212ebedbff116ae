// A fake libcupti.so.13: the Callback API (one subscriber slot, driver and resource
// domains) and the Activity API (client-supplied buffers filled with CUpti_ActivityKernel10
// and CUpti_ActivityExternalCorrelation records, delivered on flush or by a periodic
// flusher thread), fed by the fake driver's private tool channel. Signatures come from the
// CUDA 13.0 CUPTI headers.
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "fake_tool_interface.h"

namespace {

struct Buffer {
  std::uint8_t* data = nullptr;
  std::size_t size = 0;
  std::size_t used = 0;
};

struct Subscriber {
  CUpti_CallbackFunc callback = nullptr;
  void* userdata = nullptr;
  char name[64] = {};
  std::set<std::uint64_t> enabled;  // (domain << 32) | cbid
};

struct State {
  std::mutex mu;
  std::mutex delivery_mu;  // one delivery at a time, never under `mu`
  Subscriber* subscriber = nullptr;
  CUpti_BuffersCallbackRequestFunc request = nullptr;
  CUpti_BuffersCallbackCompleteFunc complete = nullptr;
  std::set<int> kinds;  // enabled activity kinds
  Buffer current;
  std::deque<Buffer> completed;
  std::size_t dropped = 0;
  bool attached = false;
  std::uint32_t flush_period_ms = 0;
  bool flusher_running = false;
  std::condition_variable flusher_cv;
};

State* g_state = new State();
thread_local std::vector<std::uint64_t> t_external[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE];

State& st() { return *g_state; }

void reset_in_child() { g_state = new State(); }

const bool g_atfork_registered = [] {
  pthread_atfork(nullptr, nullptr, reset_in_child);
  return true;
}();

bool is_launch_cbid(int cbid) {
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz: return true;
    default: return false;
  }
}

// Appends one record to the current buffer, asking the client for a new buffer when it is
// full. Caller holds `mu`.
template <typename Record>
void append_locked(State& s, const Record& r) {
  constexpr std::size_t kSize = (sizeof(Record) + 7) / 8 * 8;
  if (s.current.data == nullptr || s.current.used + kSize > s.current.size) {
    if (s.current.data != nullptr) {
      // A full buffer is handed over promptly, as CUPTI's own thread does.
      s.completed.push_back(s.current);
      s.flusher_cv.notify_all();
    }
    s.current = Buffer{};
    if (s.request == nullptr) {
      s.dropped++;
      return;
    }
    std::uint8_t* data = nullptr;
    std::size_t size = 0;
    std::size_t max_records = 0;
    s.request(&data, &size, &max_records);
    if (data == nullptr || size < kSize) {
      s.dropped++;
      return;
    }
    s.current = Buffer{data, size, 0};
  }
  std::memcpy(s.current.data + s.current.used, &r, sizeof(Record));
  s.current.used += kSize;
}

void deliver_completed(bool include_current) {
  std::lock_guard<std::mutex> delivery(st().delivery_mu);
  std::deque<Buffer> ready;
  CUpti_BuffersCallbackCompleteFunc complete = nullptr;
  {
    std::lock_guard<std::mutex> lock(st().mu);
    if (include_current && st().current.data != nullptr && st().current.used > 0) {
      st().completed.push_back(st().current);
      st().current = Buffer{};
    }
    ready.swap(st().completed);
    complete = st().complete;
  }
  for (const Buffer& b : ready) {
    if (complete != nullptr) complete(nullptr, 0, b.data, b.size, b.used);
  }
}

void on_api(const FakeApiEvent* e) {
  State& s = st();
  CUpti_CallbackFunc cb = nullptr;
  void* userdata = nullptr;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (e->site == 0 && is_launch_cbid(e->cbid) &&
        s.kinds.contains(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)) {
      for (int kind = 0; kind < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE; ++kind) {
        if (t_external[kind].empty()) continue;
        CUpti_ActivityExternalCorrelation r{};
        r.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
        r.externalKind = CUpti_ExternalCorrelationKind(kind);
        r.externalId = t_external[kind].back();
        r.correlationId = e->correlation_id;
        append_locked(s, r);
      }
    }
    if (s.subscriber != nullptr &&
        s.subscriber->enabled.contains((std::uint64_t(CUPTI_CB_DOMAIN_DRIVER_API) << 32) |
                                       std::uint32_t(e->cbid))) {
      cb = s.subscriber->callback;
      userdata = s.subscriber->userdata;
    }
  }
  if (cb == nullptr) return;
  CUpti_CallbackData data{};
  data.callbackSite = e->site == 0 ? CUPTI_API_ENTER : CUPTI_API_EXIT;
  data.functionName = e->function_name;
  data.functionParams = e->params;
  data.functionReturnValue = e->return_value;
  data.symbolName = e->symbol_name;
  data.context = e->context;
  data.contextUid = e->context_uid;
  data.correlationData = e->correlation_data;
  data.correlationId = e->correlation_id;
  cb(userdata, CUPTI_CB_DOMAIN_DRIVER_API, CUpti_CallbackId(e->cbid), &data);
}

void on_kernel(const FakeKernelExecution* e) {
  State& s = st();
  std::lock_guard<std::mutex> lock(s.mu);
  const bool concurrent = s.kinds.contains(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (!concurrent && !s.kinds.contains(CUPTI_ACTIVITY_KIND_KERNEL)) return;
  CUpti_ActivityKernel10 r{};
  r.kind = concurrent ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL : CUPTI_ACTIVITY_KIND_KERNEL;
  r.registersPerThread = e->registers;
  r.start = e->start_ns;
  r.end = e->end_ns;
  r.completed = e->end_ns;
  r.deviceId = e->device;
  r.contextId = e->context_id;
  r.streamId = e->stream_id;
  r.gridX = std::int32_t(e->grid[0]);
  r.gridY = std::int32_t(e->grid[1]);
  r.gridZ = std::int32_t(e->grid[2]);
  r.blockX = std::int32_t(e->block[0]);
  r.blockY = std::int32_t(e->block[1]);
  r.blockZ = std::int32_t(e->block[2]);
  r.staticSharedMemory = std::int32_t(e->static_smem);
  r.dynamicSharedMemory = std::int32_t(e->dynamic_smem);
  r.correlationId = e->correlation_id;
  r.name = e->name;
  r.launchType = e->cooperative == 2   ? CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_MULTI_DEVICE
                 : e->cooperative == 1 ? CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE
                                       : CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
  r.graphNodeId = e->graph_node_id;
  r.graphId = e->graph_id;
  r.clusterX = e->cluster[0];
  r.clusterY = e->cluster[1];
  r.clusterZ = e->cluster[2];
  append_locked(s, r);
}

void on_graph_event(const FakeGraphEvent* e) {
  State& s = st();
  CUpti_CallbackFunc cb = nullptr;
  void* userdata = nullptr;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.subscriber == nullptr ||
        !s.subscriber->enabled.contains((std::uint64_t(CUPTI_CB_DOMAIN_RESOURCE) << 32) |
                                        std::uint32_t(e->cbid))) {
      return;
    }
    cb = s.subscriber->callback;
    userdata = s.subscriber->userdata;
  }
  CUpti_GraphData graph{e->graph,     e->original_graph, e->node,      e->original_node,
                        e->node_type, nullptr,           e->graph_exec};
  CUpti_ResourceData data{};
  data.context = e->context;
  data.resourceDescriptor = &graph;
  cb(userdata, CUPTI_CB_DOMAIN_RESOURCE, CUpti_CallbackId(e->cbid), &data);
}

// The fields a MEMCPY and a MEMSET record share, from the device's execution.
template <typename Record>
void fill_transfer(Record& r, CUpti_ActivityKind kind, const FakeTransferExecution& e) {
  r.kind = kind;
  r.bytes = e.bytes;
  r.start = e.start_ns;
  r.end = e.end_ns;
  r.deviceId = e.device;
  r.contextId = e.context_id;
  r.streamId = e.stream_id;
  r.correlationId = e.correlation_id;
}

// A copy or memset the device ran: a MEMCPY or MEMSET record when that kind is enabled, as
// CUPTI writes them (the current versions of the records).
void on_transfer(const FakeTransferExecution* e) {
  State& s = st();
  std::lock_guard<std::mutex> lock(s.mu);
  if (e->memset != 0) {
    if (!s.kinds.contains(CUPTI_ACTIVITY_KIND_MEMSET)) return;
    CUpti_ActivityMemset4 r{};
    fill_transfer(r, CUPTI_ACTIVITY_KIND_MEMSET, *e);
    r.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    append_locked(s, r);
    return;
  }
  if (!s.kinds.contains(CUPTI_ACTIVITY_KIND_MEMCPY)) return;
  CUpti_ActivityMemcpy6 r{};
  fill_transfer(r, CUPTI_ACTIVITY_KIND_MEMCPY, *e);
  r.copyKind = e->copy_kind;
  append_locked(s, r);
}

const FakeToolCallbacks kTool{on_api, on_kernel, on_graph_event, on_transfer};

using AttachFn = int (*)(const FakeToolCallbacks*);
using NodeIdFn = std::uint64_t (*)(CUgraphNode);
using GraphIdFn = std::uint32_t (*)(CUgraph);

void* driver() {
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) h = dlopen("libcuda.so.1", RTLD_NOW);
  return h;
}

CUptiResult ensure_attached() {
  {
    std::lock_guard<std::mutex> lock(st().mu);
    if (st().attached) return CUPTI_SUCCESS;
  }
  void* h = driver();
  auto attach = h ? reinterpret_cast<AttachFn>(dlsym(h, "fakecuda_attach_tool")) : nullptr;
  if (attach == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  attach(&kTool);
  std::lock_guard<std::mutex> lock(st().mu);
  st().attached = true;
  return CUPTI_SUCCESS;
}

// Delivers full buffers as soon as they complete, and the partly filled one every period.
void flusher_loop() {
  for (;;) {
    bool period_elapsed = false;
    {
      std::unique_lock<std::mutex> lock(st().mu);
      const std::uint32_t period = st().flush_period_ms;
      if (period == 0) {
        st().flusher_running = false;
        return;
      }
      period_elapsed = !st().flusher_cv.wait_for(lock, std::chrono::milliseconds(period), [] {
        return !st().completed.empty() || st().flush_period_ms == 0;
      });
    }
    deliver_completed(period_elapsed);
  }
}

}  // namespace

extern "C" {

CUptiResult cuptiGetVersion(uint32_t* version) {
  if (version == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *version = CUPTI_API_VERSION;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiGetResultString(CUptiResult result, const char** str) {
  if (str == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *str = result == CUPTI_SUCCESS ? "CUPTI_SUCCESS"
         : result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
             ? "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"
             : "CUPTI_ERROR (fake)";
  return CUPTI_SUCCESS;
}

CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                              void* userdata, CUpti_SubscriberParams* params) {
  if (subscriber == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  if (std::getenv("FAKE_CUPTI_FAIL_INIT") != nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  if (CUptiResult r = ensure_attached(); r != CUPTI_SUCCESS) return r;
  std::lock_guard<std::mutex> lock(st().mu);
  if (st().subscriber != nullptr) {
    if (params != nullptr && params->oldSubscriberName != nullptr &&
        params->oldSubscriberSize > 0) {
      std::snprintf(params->oldSubscriberName, params->oldSubscriberSize, "%s",
                    st().subscriber->name);
    }
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  }
  auto* s = new Subscriber();
  s->callback = callback;
  s->userdata = userdata;
  if (params != nullptr && params->subscriberName != nullptr) {
    std::snprintf(s->name, sizeof(s->name), "%s", params->subscriberName);
  }
  st().subscriber = s;
  *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(s);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                           void* userdata) {
  return cuptiSubscribe_v2(subscriber, callback, userdata, nullptr);
}

CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber) {
  std::lock_guard<std::mutex> lock(st().mu);
  if (subscriber == nullptr || reinterpret_cast<Subscriber*>(subscriber) != st().subscriber) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  delete st().subscriber;
  st().subscriber = nullptr;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  std::lock_guard<std::mutex> lock(st().mu);
  auto* s = reinterpret_cast<Subscriber*>(subscriber);
  if (s == nullptr || s != st().subscriber) return CUPTI_ERROR_INVALID_PARAMETER;
  const std::uint64_t key = (std::uint64_t(domain) << 32) | cbid;
  if (enable) {
    s->enabled.insert(key);
  } else {
    s->enabled.erase(key);
  }
  return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
                              CUpti_CallbackDomain domain) {
  // Enough for the tests: the resource domain's callback ids are small.
  for (CUpti_CallbackId cbid = 1; cbid < 1024; ++cbid) {
    cuptiEnableCallback(enable, subscriber, domain, cbid);
  }
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc funcBufferRequested,
                                           CUpti_BuffersCallbackCompleteFunc funcBufferCompleted) {
  if (funcBufferRequested == nullptr || funcBufferCompleted == nullptr) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  if (CUptiResult r = ensure_attached(); r != CUPTI_SUCCESS) return r;
  std::lock_guard<std::mutex> lock(st().mu);
  st().request = funcBufferRequested;
  st().complete = funcBufferCompleted;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind) {
  if (CUptiResult r = ensure_attached(); r != CUPTI_SUCCESS) return r;
  std::lock_guard<std::mutex> lock(st().mu);
  st().kinds.insert(kind);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind) {
  std::lock_guard<std::mutex> lock(st().mu);
  st().kinds.erase(kind);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId, uint8_t) { return CUPTI_SUCCESS; }

CUptiResult cuptiActivityEnableLaunchAttributes(uint8_t) { return CUPTI_SUCCESS; }

CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute, size_t* valueSize, void* value) {
  if (valueSize == nullptr || value == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityFlushAll(uint32_t) {
  deliver_completed(true);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityFlushPeriod(uint32_t time) {
  std::lock_guard<std::mutex> lock(st().mu);
  st().flush_period_ms = time;
  if (time != 0 && !st().flusher_running) {
    st().flusher_running = true;
    std::thread(flusher_loop).detach();
  }
  st().flusher_cv.notify_all();
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNextRecord(uint8_t* buffer, size_t validBufferSizeBytes,
                                       CUpti_Activity** record) {
  if (buffer == nullptr || record == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  std::size_t offset = 0;
  if (*record != nullptr) {
    auto* current = reinterpret_cast<std::uint8_t*>(*record);
    std::size_t size = 0;
    switch ((*record)->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: size = sizeof(CUpti_ActivityKernel10); break;
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
        size = sizeof(CUpti_ActivityExternalCorrelation);
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY: size = sizeof(CUpti_ActivityMemcpy6); break;
      case CUPTI_ACTIVITY_KIND_MEMSET: size = sizeof(CUpti_ActivityMemset4); break;
      default: return CUPTI_ERROR_INVALID_KIND;
    }
    offset = std::size_t(current - buffer) + (size + 7) / 8 * 8;
  }
  if (offset + sizeof(CUpti_Activity) > validBufferSizeBytes) {
    return CUPTI_ERROR_MAX_LIMIT_REACHED;
  }
  *record = reinterpret_cast<CUpti_Activity*>(buffer + offset);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
  if (dropped == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  std::lock_guard<std::mutex> lock(st().mu);
  *dropped = st().dropped;
  st().dropped = 0;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                   uint64_t id) {
  if (kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID ||
      kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  t_external[kind].push_back(id);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                  uint64_t* lastId) {
  if (kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID ||
      kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE || t_external[kind].empty()) {
    return CUPTI_ERROR_QUEUE_EMPTY;
  }
  if (lastId != nullptr) *lastId = t_external[kind].back();
  t_external[kind].pop_back();
  return CUPTI_SUCCESS;
}

CUptiResult cuptiGetGraphNodeId(CUgraphNode node, uint64_t* nodeId) {
  void* h = driver();
  auto fn = h ? reinterpret_cast<NodeIdFn>(dlsym(h, "fakecuda_graph_node_id")) : nullptr;
  if (fn == nullptr || nodeId == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *nodeId = fn(node);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiGetGraphId(CUgraph graph, uint32_t* pId) {
  void* h = driver();
  auto fn = h ? reinterpret_cast<GraphIdFn>(dlsym(h, "fakecuda_graph_id")) : nullptr;
  if (fn == nullptr || pId == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *pId = fn(graph);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiGetTimestamp(uint64_t* timestamp) {
  if (timestamp == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  *timestamp = std::uint64_t(ts.tv_sec) * 1'000'000'000ull + std::uint64_t(ts.tv_nsec);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiFinalize(void) {
  void* h = driver();
  auto attach = h ? reinterpret_cast<AttachFn>(dlsym(h, "fakecuda_attach_tool")) : nullptr;
  if (attach) attach(nullptr);
  std::lock_guard<std::mutex> lock(st().mu);
  st().attached = false;
  st().kinds.clear();
  delete st().subscriber;
  st().subscriber = nullptr;
  st().flush_period_ms = 0;
  st().flusher_cv.notify_all();
  return CUPTI_SUCCESS;
}

}  // extern "C"
