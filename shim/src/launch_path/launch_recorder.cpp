#include "launch_path/launch_recorder.h"

#include <cstring>

#include "driver_api.h"
#include "launch_path/clock.h"
#include "launch_path/handle_kinds.h"
#include "launch_path/launch_path_state.h"
#include "launch_path/string_table.h"
#include "launch_path/thread_ring.h"
#include "launch_path/thread_state.h"
#include "pm2lat/hash.h"

namespace pm2lat::shim {

LaunchPathState& launch_path_state() noexcept {
  static LaunchPathState state;
  return state;
}

namespace {

// Used when the cache cannot take a new entry: correct, just resolved again next time.
thread_local KernelInfo t_uncached_info;

// What to ask the driver about a handle. Hook mode cannot know a handle's kind: it asks
// cuFuncGetName and, if refused, cuKernelGetName. A launch seen by a CUPTI callback asks only
// what is documented for the handle's kind, when that is known (handle_kinds.h), and nothing
// otherwise: CUPTI gives the name, and registers and shared memory with the measurement.
HandleKind kind_to_query(std::uint64_t handle, const DriverApi* api, bool from_callback,
                         const char** name) noexcept {
  if (from_callback) return HandleKinds::instance().kind_of(handle);
  const char* n = nullptr;
  if (api->func_get_name != nullptr &&
      // NOLINTNEXTLINE(performance-no-int-to-ptr): handles are kept as integer keys
      api->func_get_name(&n, reinterpret_cast<CUfunction>(handle)) == CUDA_SUCCESS && n) {
    if (*name == nullptr) *name = n;
    return HandleKind::kFunction;
  }
  if (api->kernel_get_name != nullptr &&
      // NOLINTNEXTLINE(performance-no-int-to-ptr): handles are kept as integer keys
      api->kernel_get_name(&n, reinterpret_cast<CUkernel>(handle)) == CUDA_SUCCESS && n) {
    if (*name == nullptr) *name = n;
    return HandleKind::kKernel;
  }
  return HandleKind::kFunction;  // a driver without names: attributes still work
}

KernelFacts resolve(std::uint64_t handle, const char* name_hint, bool host_stub,
                    bool from_callback) noexcept {
  KernelFacts info;
  const DriverApi* api = host_stub ? nullptr : driver_api();
  const char* name = name_hint;
  // Handles are kept as integer keys; the driver is asked with the type it expects.
  // NOLINTBEGIN(performance-no-int-to-ptr)
  auto f = reinterpret_cast<CUfunction>(handle);
  auto k = reinterpret_cast<CUkernel>(handle);
  // NOLINTEND(performance-no-int-to-ptr)
  if (api != nullptr) {
    const HandleKind kind = kind_to_query(handle, api, from_callback, &name);
    const bool is_kernel = kind == HandleKind::kKernel;
    if (name == nullptr && from_callback) {
      const char* n = nullptr;
      if (kind == HandleKind::kFunction && api->func_get_name && api->func_get_name(&n, f) == 0)
        name = n;
      if (kind == HandleKind::kKernel && api->kernel_get_name && api->kernel_get_name(&n, k) == 0)
        name = n;
    }
    int value = 0;
    CUdevice dev = 0;
    if (kind == HandleKind::kFunction && api->func_get_attribute != nullptr) {
      if (api->func_get_attribute(&value, CU_FUNC_ATTRIBUTE_NUM_REGS, f) == CUDA_SUCCESS) {
        info.registers = static_cast<std::uint32_t>(value);
      }
      if (api->func_get_attribute(&value, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f) == CUDA_SUCCESS) {
        info.static_smem = static_cast<std::uint32_t>(value);
      }
    } else if (is_kernel && api->kernel_get_attribute != nullptr &&
               api->ctx_get_device != nullptr && api->ctx_get_device(&dev) == CUDA_SUCCESS) {
      if (api->kernel_get_attribute(&value, CU_FUNC_ATTRIBUTE_NUM_REGS, k, dev) == CUDA_SUCCESS) {
        info.registers = static_cast<std::uint32_t>(value);
      }
      if (api->kernel_get_attribute(&value, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, k, dev) ==
          CUDA_SUCCESS) {
        info.static_smem = static_cast<std::uint32_t>(value);
      }
    }
    // The first parameters' layout: no parameter count exists in CUDA 13.0, so ask until
    // the driver says there is no such parameter.
    for (int i = 0; i < kMaxCachedParams && kind != HandleKind::kUnknown; ++i) {
      std::size_t offset = 0, size = 0;
      CUresult r = CUDA_ERROR_NOT_SUPPORTED;
      if (is_kernel && api->kernel_get_param_info != nullptr) {
        r = api->kernel_get_param_info(k, std::size_t(i), &offset, &size);
      } else if (!is_kernel && api->func_get_param_info != nullptr) {
        r = api->func_get_param_info(f, std::size_t(i), &offset, &size);
      }
      if (r != CUDA_SUCCESS || offset > 0xffff || size > 0xff) break;
      info.param_offset[i] = static_cast<std::uint16_t>(offset);
      info.param_size[i] = static_cast<std::uint8_t>(size);
      info.n_params = static_cast<std::uint8_t>(i + 1);
    }
  }
  info.name_id = name ? StringTable::instance().intern(name) : StringTable::kUnknown;
  return info;
}

// Copies the scalar (4- and 8-byte) parameters among the first described ones.
void copy_args(const KernelFacts& info, const LaunchCall& c, LaunchSlot* s) noexcept {
  s->n_args = 0;
  s->arg_is_8byte = 0;
  if (info.n_params == 0) return;
  const char* buffer = nullptr;
  if (c.params == nullptr) {
    if (c.extra == nullptr) return;
    // extra = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, END}
    for (int i = 0; i < 8 && c.extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
      if (c.extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
        buffer = static_cast<const char*>(c.extra[i + 1]);
    }
    if (buffer == nullptr) return;
  }
  for (int i = 0; i < info.n_params && s->n_args < kMaxSlotArgs; ++i) {
    const std::uint8_t size = info.param_size[i];
    if (size != 4 && size != 8) continue;
    const void* src = c.params ? c.params[i] : buffer + info.param_offset[i];
    if (src == nullptr) continue;
    std::int64_t v = 0;
    if (size == 4) {
      std::int32_t v32;
      std::memcpy(&v32, src, 4);
      v = v32;
    } else {
      std::memcpy(&v, src, 8);
      s->arg_is_8byte |= static_cast<std::uint8_t>(1u << s->n_args);
    }
    s->args[s->n_args++] = v;
  }
}

void fill_common(ThreadRing* ring, LaunchSlot* s, SlotKind kind) noexcept {
  s->kind = kind;
  s->seq = launch_path_state().next_seq.fetch_add(1, std::memory_order_relaxed);
  ring->mark_open(s->seq);
  s->host_ts_ns = realtime_ns();
  s->handle = 0;
  s->stream = 0;
  s->graph = 0;
  s->graph_node = 0;
  s->graph_exec = 0;
  s->name_id = 0;
  s->correlation_id = 0;
  s->smem = 0;
  s->regs = 0;
  s->event_pair = 0;
  s->result = 0;
  s->flags = 0;
  s->api = LaunchApi::kUnknown;
  s->runtime_api = LaunchApi::kUnknown;
  s->n_args = 0;
  s->arg_is_8byte = 0;
  s->device = 0;
  s->call_id = 0;
}

}  // namespace

void read_launch_config(const CUlaunchConfig* config, LaunchCall& call) noexcept {
  if (config == nullptr) return;
  call.grid[0] = config->gridDimX;
  call.grid[1] = config->gridDimY;
  call.grid[2] = config->gridDimZ;
  call.block[0] = config->blockDimX;
  call.block[1] = config->blockDimY;
  call.block[2] = config->blockDimZ;
  call.smem = config->sharedMemBytes;
  call.stream = reinterpret_cast<std::uint64_t>(config->hStream);
  for (unsigned i = 0; i < config->numAttrs && config->attrs != nullptr; ++i) {
    const CUlaunchAttribute& a = config->attrs[i];
    if (a.id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
      call.cluster[0] = a.value.clusterDim.x ? a.value.clusterDim.x : 1;
      call.cluster[1] = a.value.clusterDim.y ? a.value.clusterDim.y : 1;
      call.cluster[2] = a.value.clusterDim.z ? a.value.clusterDim.z : 1;
    } else if (a.id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE) {
      call.cooperative = a.value.cooperative != 0;
    }
  }
}

const KernelInfo* kernel_info(std::uint64_t handle, const char* name_hint, bool host_stub,
                              bool from_callback, bool* first) noexcept {
  HandleCache& cache = HandleCache::instance();
  if (KernelInfo* info = cache.find(handle)) [[likely]] {
    *first = false;
    return info;
  }
  *first = true;
  const KernelFacts resolved = resolve(handle, name_hint, host_stub, from_callback);
  if (KernelInfo* info = cache.insert(handle, resolved)) return info;
  static_cast<KernelFacts&>(t_uncached_info) = resolved;
  return &t_uncached_info;
}

LaunchSlot* begin_kernel_slot(const LaunchCall& c, std::uint32_t correlation_id,
                              std::uint16_t extra_flags) noexcept {
  ThreadRing* ring = current_thread_ring();
  if (ring == nullptr) return nullptr;
  LaunchSlot* s = ring->try_reserve();
  if (s == nullptr) return nullptr;
  fill_common(ring, s, SlotKind::kKernel);
  bool first = false;
  const KernelInfo* info = kernel_info(c.handle, c.name_hint, c.host_stub,
                                       (extra_flags & slot_flags::kFromCallback) != 0, &first);
  s->handle = c.handle;
  s->stream = c.stream;
  s->name_id = info->name_id;
  s->regs = static_cast<std::uint16_t>(info->registers);
  s->smem = c.smem + info->static_smem;
  std::memcpy(s->grid, c.grid, sizeof(s->grid));
  std::memcpy(s->block, c.block, sizeof(s->block));
  std::memcpy(s->cluster, c.cluster, sizeof(s->cluster));
  s->correlation_id = correlation_id;
  s->api = c.api;
  std::uint16_t flags = extra_flags;
  if (first) flags |= slot_flags::kFirstLaunch;
  if (c.cooperative) flags |= slot_flags::kCooperative;
  ThreadState& ts = thread_state();
  if (ts.runtime.active && !ts.runtime.consumed) {
    s->runtime_api = ts.runtime.api;
    ts.runtime.consumed = true;
  }
  s->call_id = ts.library.depth > 0 ? ts.library.op.call_id : 0;
  s->flags = flags;
  copy_args(*info, c, s);
  return s;
}

LaunchSlot* begin_event_slot(SlotKind kind) noexcept {
  ThreadRing* ring = current_thread_ring();
  if (ring == nullptr) return nullptr;
  LaunchSlot* s = ring->try_reserve();
  if (s == nullptr) return nullptr;
  fill_common(ring, s, kind);
  return s;
}

void commit_slot(LaunchSlot* slot, std::int32_t result) noexcept {
  if (slot == nullptr) return;
  slot->result = result;
  if (ThreadRing* ring = thread_state().ring) ring->publish();
}

std::uint64_t geometry_digest(std::uint32_t name_id, const std::uint32_t grid[3],
                              const std::uint32_t block[3], std::uint32_t smem) noexcept {
  // FNV-1a's step over whole words rather than bytes: eight steps instead of 64 on the
  // launch path, for a key of fixed size.
  std::uint64_t h = pm2lat::kFnvOffsetBasis;
  auto mix = [&h](std::uint64_t v) {
    h ^= v;
    h *= pm2lat::kFnvPrime;
  };
  mix(name_id);
  for (int i = 0; i < 3; ++i) {
    mix(grid[i]);
    mix(block[i]);
  }
  mix(smem);
  return h | 1;  // never 0, which means "nothing published"
}

}  // namespace pm2lat::shim
