// The fixed-size record the launch path writes into a per-thread ring: everything the worker
// needs to build a kernel record later, as plain data (no pointers it would have to chase,
// no allocation). Also carries the few non-launch events the worker must see in launch
// order (graph instantiation, destruction, node clones).
#pragma once

#include <cstdint>
#include <type_traits>

#include "pm2lat/op_context.h"

namespace pm2lat::shim {

enum class SlotKind : std::uint8_t {
  kKernel = 0,
  kGraphLaunch,         // graph_exec + stream
  kGraphInstantiate,    // graph -> graph_exec
  kGraphExecDestroy,    // graph_exec
  kGraphDestroy,        // graph
  kGraphNodeCloned,     // graph_node (original) -> graph_exec (used as the clone id)
  kGraphNodeDestroyed,  // graph_node
  kLibraryCall,         // op: a library call's context, before the kernels it launches
};

// The API a launch came through: the driver entry point, and, when a runtime call led to it,
// the runtime entry point (LaunchSlot::runtime_api).
enum class LaunchApi : std::uint8_t {
  kUnknown = 0,
  kCuLaunchKernel,
  kCuLaunchKernelPtsz,
  kCuLaunchKernelEx,
  kCuLaunchKernelExPtsz,
  kCuLaunchCooperativeKernel,
  kCuLaunchCooperativeKernelPtsz,
  kCuGraphLaunch,
  kCuGraphLaunchPtsz,
  kCudaLaunchKernel,
  kCudaLaunchKernelPtsz,
  kCudaLaunchKernelExC,
  kCudaLaunchKernelExCPtsz,
  kCudaLaunchKernelInternal,      // __cudaLaunchKernel (CUDA 13 <<<>>>)
  kCudaLaunchKernelInternalPtsz,  // __cudaLaunchKernel_ptsz
};

const char* to_string(LaunchApi api) noexcept;
bool is_per_thread_stream(LaunchApi api) noexcept;

// Where a library call context came from and which entry point made it.
enum class LibrarySource : std::uint8_t { kNone = 0, kCublas, kCublasLt, kCudnn };
enum class LibraryApi : std::uint8_t {
  kNone = 0,
  kCublasLtMatmul,
  kCublasGemmEx,
  kCublasGemmEx64,
  kCublasGemmStridedBatchedEx,
  kCublasGemmStridedBatchedEx64,
  kCublasGemmBatchedEx,
  kCublasGemmBatchedEx64,
  kCublasSgemm,
  kCublasHgemm,
  kCublasSgemmStridedBatched,
  kCudnnConvolutionForward,
  kCudnnBackendExecute,
};

const char* to_string(LibrarySource s) noexcept;
const char* to_string(LibraryApi a) noexcept;

// A library call's context as plain data; the worker turns it into an OpContext.
struct OpPod {
  std::uint64_t call_id = 0;  // 0 = no library call
  OpKind kind = OpKind::kUnknown;
  LibrarySource source = LibrarySource::kNone;
  LibraryApi api = LibraryApi::kNone;
  GemmShape gemm;
  ConvShape conv;
};
static_assert(std::is_trivially_copyable_v<OpPod>);

namespace slot_flags {
inline constexpr std::uint16_t kCaptured = 1u << 0;     // recorded into a graph, not run
inline constexpr std::uint16_t kRuntimeOnly = 1u << 1;  // seen by a runtime hook only
inline constexpr std::uint16_t kFirstLaunch = 1u << 2;  // first launch of this handle
inline constexpr std::uint16_t kEventsTimed = 1u << 3;  // events recorded around it
inline constexpr std::uint16_t kCooperative = 1u << 4;
inline constexpr std::uint16_t kFromCallback = 1u << 5;         // recorded by the CUPTI callback
inline constexpr std::uint16_t kExternalCorrelation = 1u << 6;  // seq pushed to CUPTI
}  // namespace slot_flags

inline constexpr int kMaxSlotArgs = 8;

// The external correlation id pushed around a launch whose slot could not be reserved (a full
// ring): its kernel record is then known to come from a hooked launch that was dropped, not
// from a path the hooks miss.
inline constexpr std::uint64_t kDroppedLaunchSeq = ~std::uint64_t{0};

struct LaunchSlot {
  std::uint64_t seq;
  std::uint64_t host_ts_ns;
  std::uint64_t handle;  // CUfunction / CUkernel / host stub, as launched
  std::uint64_t stream;
  std::uint64_t graph;       // CUgraph, or the CUPTI graph id
  std::uint64_t graph_node;  // CUgraphNode, or the CUPTI node id (kFromCallback)
  std::uint64_t graph_exec;  // CUgraphExec (or the clone's node id for kGraphNodeCloned)
  std::uint32_t name_id;
  std::uint32_t correlation_id;  // CUPTI correlation id (callback mode), else 0
  std::uint32_t grid[3];
  std::uint32_t block[3];
  std::uint32_t cluster[3];
  std::uint32_t smem;        // dynamic + static
  std::uint16_t regs;        // registers per thread (at most 255)
  std::uint16_t event_pair;  // the CUDA event pair timing it (kEventsTimed)
  std::int32_t result;       // CUresult / cudaError_t of the real call
  std::uint16_t flags;
  SlotKind kind;
  LaunchApi api;
  LaunchApi runtime_api;
  std::uint8_t n_args;
  std::uint8_t arg_is_8byte;  // bit i: args[i] came from an 8-byte parameter
  std::uint8_t padding;
  // The library call the kernel was launched in (0 = none). Its context travels once, in a
  // kLibraryCall slot ahead of the kernels, so kernel slots stay small.
  std::uint64_t call_id;
  union {
    std::int64_t args[kMaxSlotArgs];  // kKernel
    OpPod op;                         // kLibraryCall
  };

  LaunchSlot() noexcept {}  // slots live in raw ring memory; every field is set when filled
};
static_assert(std::is_trivially_copyable_v<LaunchSlot>);

}  // namespace pm2lat::shim
