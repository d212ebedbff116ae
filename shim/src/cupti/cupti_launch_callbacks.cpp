#include "cupti/cupti_launch_callbacks.h"  // cupti.h brings generated_cuda_meta.h (no include guard)

#include <cstring>

#include "launch_path/handle_kinds.h"
#include "launch_path/launch_path_state.h"
#include "launch_path/launch_recorder.h"
#include "launch_path/thread_state.h"

namespace pm2lat::shim {

namespace {

template <typename Params>
LaunchCall call_from_params(const Params* p, LaunchApi api, const char* name) {
  LaunchCall c;
  c.api = api;
  c.handle = reinterpret_cast<std::uint64_t>(p->f);
  c.grid[0] = p->gridDimX;
  c.grid[1] = p->gridDimY;
  c.grid[2] = p->gridDimZ;
  c.block[0] = p->blockDimX;
  c.block[1] = p->blockDimY;
  c.block[2] = p->blockDimZ;
  c.smem = p->sharedMemBytes;
  c.stream = reinterpret_cast<std::uint64_t>(p->hStream);
  c.params = p->kernelParams;
  c.name_hint = name;
  return c;
}

template <typename Params>
LaunchCall call_from_ex(const Params* p, LaunchApi api, const char* name) {
  LaunchCall c;
  c.api = api;
  c.handle = reinterpret_cast<std::uint64_t>(p->f);
  read_launch_config(p->config, c);
  c.params = p->kernelParams;
  c.extra = p->extra;
  c.name_hint = name;
  return c;
}

void push_in_flight(LaunchSlot* s) {
  ThreadState& ts = thread_state();
  if (ts.n_in_flight < kMaxInFlight) ts.in_flight[ts.n_in_flight] = s;
  ++ts.n_in_flight;
}

void pop_in_flight() {
  ThreadState& ts = thread_state();
  if (ts.n_in_flight > 0) --ts.n_in_flight;
}

LaunchSlot* top_in_flight() {
  ThreadState& ts = thread_state();
  if (ts.n_in_flight == 0 || ts.n_in_flight > kMaxInFlight) return nullptr;
  return ts.in_flight[ts.n_in_flight - 1];
}

LaunchSlot* begin_launch(CUpti_CallbackId cbid, const CUpti_CallbackData* cb) {
  const std::uint32_t corr = cb->correlationId;
  const std::uint16_t flags = slot_flags::kFromCallback;
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
      return begin_kernel_slot(
          call_from_params(static_cast<const cuLaunchKernel_params*>(cb->functionParams),
                           LaunchApi::kCuLaunchKernel, cb->symbolName),
          corr, flags);
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
      return begin_kernel_slot(
          call_from_params(static_cast<const cuLaunchKernel_ptsz_params*>(cb->functionParams),
                           LaunchApi::kCuLaunchKernelPtsz, cb->symbolName),
          corr, flags);
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
      return begin_kernel_slot(
          call_from_ex(static_cast<const cuLaunchKernelEx_params*>(cb->functionParams),
                       LaunchApi::kCuLaunchKernelEx, cb->symbolName),
          corr, flags);
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
      return begin_kernel_slot(
          call_from_ex(static_cast<const cuLaunchKernelEx_ptsz_params*>(cb->functionParams),
                       LaunchApi::kCuLaunchKernelExPtsz, cb->symbolName),
          corr, flags);
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel: {
      LaunchCall c =
          call_from_params(static_cast<const cuLaunchCooperativeKernel_params*>(cb->functionParams),
                           LaunchApi::kCuLaunchCooperativeKernel, cb->symbolName);
      c.cooperative = true;
      return begin_kernel_slot(c, corr, flags);
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz: {
      LaunchCall c = call_from_params(
          static_cast<const cuLaunchCooperativeKernel_ptsz_params*>(cb->functionParams),
          LaunchApi::kCuLaunchCooperativeKernelPtsz, cb->symbolName);
      c.cooperative = true;
      return begin_kernel_slot(c, corr, flags);
    }
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz: {
      LaunchSlot* s = begin_event_slot(SlotKind::kGraphLaunch);
      if (s == nullptr) return nullptr;
      if (cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch) {
        const auto* p = static_cast<const cuGraphLaunch_params*>(cb->functionParams);
        s->graph_exec = reinterpret_cast<std::uint64_t>(p->hGraph);
        s->stream = reinterpret_cast<std::uint64_t>(p->hStream);
        s->api = LaunchApi::kCuGraphLaunch;
      } else {
        const auto* p = static_cast<const cuGraphLaunch_ptsz_params*>(cb->functionParams);
        s->graph_exec = reinterpret_cast<std::uint64_t>(p->hGraphExec);
        s->stream = reinterpret_cast<std::uint64_t>(p->hStream);
        s->api = LaunchApi::kCuGraphLaunchPtsz;
      }
      s->correlation_id = corr;
      s->flags = flags;
      return s;
    }
    default: return nullptr;
  }
}

// The calls that hand out kernel handles: the kind of each (handle_kinds.h).
bool note_handle_kind(CUpti_CallbackId cbid, const CUpti_CallbackData* cb) {
  std::uint64_t handle = 0;
  HandleKind kind = HandleKind::kUnknown;
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuModuleGetFunction: {
      const auto* p = static_cast<const cuModuleGetFunction_params*>(cb->functionParams);
      if (p->hfunc != nullptr) handle = reinterpret_cast<std::uint64_t>(*p->hfunc);
      kind = HandleKind::kFunction;
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuKernelGetFunction: {
      const auto* p = static_cast<const cuKernelGetFunction_params*>(cb->functionParams);
      if (p->pFunc != nullptr) handle = reinterpret_cast<std::uint64_t>(*p->pFunc);
      kind = HandleKind::kFunction;
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLibraryGetKernel: {
      const auto* p = static_cast<const cuLibraryGetKernel_params*>(cb->functionParams);
      if (p->pKernel != nullptr) handle = reinterpret_cast<std::uint64_t>(*p->pKernel);
      kind = HandleKind::kKernel;
      break;
    }
    default: return false;
  }
  const auto* ret = static_cast<const CUresult*>(cb->functionReturnValue);
  if (cb->callbackSite == CUPTI_API_EXIT && ret != nullptr && *ret == CUDA_SUCCESS) {
    HandleKinds::instance().note(handle, kind);
  }
  return true;
}

void on_driver_api(CUpti_CallbackId cbid, const CUpti_CallbackData* cb) {
  if (note_handle_kind(cbid, cb)) return;
  if (cb->callbackSite == CUPTI_API_ENTER) {
    LaunchSlot* s = begin_launch(cbid, cb);
    if (cb->correlationData != nullptr) *cb->correlationData = reinterpret_cast<std::uint64_t>(s);
    push_in_flight(s);
    return;
  }
  auto* s = cb->correlationData ? reinterpret_cast<LaunchSlot*>(*cb->correlationData) : nullptr;
  pop_in_flight();
  const auto* ret = static_cast<const CUresult*>(cb->functionReturnValue);
  commit_slot(s, ret ? static_cast<std::int32_t>(*ret) : 0);
}

void on_resource(const CuptiApi* api, CUpti_CallbackId cbid, const CUpti_ResourceData* rd) {
  const auto* g = static_cast<const CUpti_GraphData*>(rd->resourceDescriptor);
  if (g == nullptr || api == nullptr) return;
  std::uint64_t node_id = 0;
  switch (cbid) {
    case CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED: {
      // Fired inside the launch that stream capture turned into this node.
      LaunchSlot* s = top_in_flight();
      if (s == nullptr || s->kind != SlotKind::kKernel ||
          g->nodeType != CU_GRAPH_NODE_TYPE_KERNEL) {
        return;
      }
      std::uint32_t graph_id = 0;
      if (api->get_graph_node_id(g->node, &node_id) != CUPTI_SUCCESS) return;
      api->get_graph_id(g->graph, &graph_id);
      s->graph_node = node_id;
      s->graph = graph_id;
      s->flags |= slot_flags::kCaptured;
      return;
    }
    case CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED: {
      std::uint64_t original_id = 0;
      if (api->get_graph_node_id(g->node, &node_id) != CUPTI_SUCCESS ||
          api->get_graph_node_id(g->originalNode, &original_id) != CUPTI_SUCCESS) {
        return;
      }
      LaunchSlot* s = begin_event_slot(SlotKind::kGraphNodeCloned);
      if (s == nullptr) return;
      s->graph_node = original_id;
      s->graph_exec = node_id;
      s->flags = slot_flags::kFromCallback;
      commit_slot(s, 0);
      return;
    }
    case CUPTI_CBID_RESOURCE_GRAPHNODE_DESTROY_STARTING: {
      if (api->get_graph_node_id(g->node, &node_id) != CUPTI_SUCCESS) return;
      LaunchSlot* s = begin_event_slot(SlotKind::kGraphNodeDestroyed);
      if (s == nullptr) return;
      s->graph_node = node_id;
      s->flags = slot_flags::kFromCallback;
      commit_slot(s, 0);
      return;
    }
    default: return;
  }
}

}  // namespace

CuptiCallbacks& CuptiCallbacks::instance() {
  static CuptiCallbacks* c = new CuptiCallbacks();  // never destroyed: CUPTI may call at exit
  return *c;
}

void CUPTIAPI CuptiCallbacks::on_callback(void* userdata, CUpti_CallbackDomain domain,
                                          CUpti_CallbackId cbid, const void* data) {
  const ThreadState& ts = thread_state();
  LaunchPathState& lp = launch_path_state();
  if (ts.internal || data == nullptr || !lp.ready() ||
      lp.metadata.load(std::memory_order_relaxed) != MetadataSource::kCuptiCallbacks) {
    return;
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    on_driver_api(cbid, static_cast<const CUpti_CallbackData*>(data));
  } else if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    on_resource(static_cast<const CuptiApi*>(userdata), cbid,
                static_cast<const CUpti_ResourceData*>(data));
  }
}

void CuptiCallbacks::unsubscribe() noexcept {
  if (api_ != nullptr && subscriber_ != nullptr) api_->unsubscribe(subscriber_);
  subscriber_ = nullptr;
}

SubscribeResult CuptiCallbacks::subscribe(const CuptiApi* api, std::string* holder,
                                          std::string* reason) {
  CUpti_SubscriberHandle sub = nullptr;
  CUptiResult r;
  if (api->subscribe_v2 != nullptr) {
    char old_name[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN] = {};
    CUpti_SubscriberParams params{};
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = "pm2lat";
    params.oldSubscriberName = old_name;
    params.oldSubscriberSize = sizeof(old_name);
    r = api->subscribe_v2(&sub, &CuptiCallbacks::on_callback, const_cast<CuptiApi*>(api), &params);
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) *holder = old_name;
  } else {
    r = api->subscribe(&sub, &CuptiCallbacks::on_callback, const_cast<CuptiApi*>(api));
  }
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) return SubscribeResult::kSlotTaken;
  if (r != CUPTI_SUCCESS) {
    *reason = "cuptiSubscribe: " + api->result_string(r);
    return SubscribeResult::kFailed;
  }
  api_ = api;
  subscriber_ = sub;
  for (CUpti_CallbackId cbid :
       {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
        CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuModuleGetFunction, CUPTI_DRIVER_TRACE_CBID_cuKernelGetFunction,
        CUPTI_DRIVER_TRACE_CBID_cuLibraryGetKernel}) {
    api->enable_callback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
  }
  for (CUpti_CallbackId cbid :
       {CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED,
        CUPTI_CBID_RESOURCE_GRAPHNODE_DESTROY_STARTING}) {
    api->enable_callback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, cbid);
  }
  return SubscribeResult::kSubscribed;
}

}  // namespace pm2lat::shim
